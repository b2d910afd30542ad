//! The dashboard command (the default when no subcommand is given).

use super::common::ClusterArgs;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Clone, Args, Default)]
pub struct TuiArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Show no actions at all
    #[arg(long)]
    pub readonly: bool,
    /// Colour theme: a name from themes/ or a path to a .toml file
    #[arg(long, value_name = "NAME|FILE")]
    pub theme: Option<String>,
    /// Open the dashboard on kubectl dumps instead of a cluster (read-only)
    #[arg(long = "snapshot", value_name = "FILE")]
    pub snapshots: Vec<PathBuf>,
}

pub async fn run(_args: TuiArgs) -> anyhow::Result<i32> {
    anyhow::bail!("the dashboard is not built yet; use `restorewatch check --snapshot FILE`")
}
