//! Options shared by the commands that talk to a cluster, spelled as kubectl spells them.

use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Clone, Args, Default)]
pub struct ClusterArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (default: the current context)
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// Only this namespace
    #[arg(
        short = 'n',
        long,
        value_name = "NS",
        conflicts_with = "all_namespaces"
    )]
    pub namespace: Option<String>,
    /// All namespaces (the default)
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
}
