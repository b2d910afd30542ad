//! Command-line interface: argument types and one module per command. `main.rs` only parses
//! and dispatches here.

pub mod action;
pub mod check;
pub mod completions;
pub mod demo;
pub mod output;
pub mod picture;
pub mod preflight;
pub mod report;
pub mod tui;
pub mod validate;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "restorewatch",
    version,
    about = "Watch Cozystack restores, flag the states that lose data, repair them safely",
    long_about = "restorewatch watches RestoreJobs and everything a Cozystack restore touches \
(PVCs, PVs, DataVolumes, VMs, Velero Restores, DataDownloads, CNPG Clusters), shows each \
restore's progress step by step, flags conflicts and stale state with stable finding codes, and \
runs the same guarded repairs the controller runs.\n\nWithout a subcommand it opens the dashboard \
on the current kubeconfig context. Try `restorewatch demo` for a simulated cluster."
)]
pub struct Cli {
    #[command(flatten)]
    pub tui: tui::TuiArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Analyse once (a live cluster or kubectl dumps), print findings, exit 0/1/2
    Check(check::CheckArgs),
    /// The dashboard on a simulated Cozystack cluster playing restores (no cluster needed)
    Demo(demo::DemoArgs),
    /// Serve Prometheus metrics, health and the report over HTTP, headless and read-only
    Serve(crate::serve::ServeArgs),
    /// The story of one restore as a Markdown (or JSON) document for the incident ticket
    Report(report::ReportArgs),
    /// Run a guarded repair (prints the plan; executes with --yes)
    Action(action::ActionArgs),
    /// Before a restore: predict what the backup controller will do with a RestoreJob and what
    /// would go wrong, from a fresh read of the cluster
    Preflight(preflight::PreflightArgs),
    /// Measure the live dashboard on emulated clusters of N objects, next to kubectl
    Bench(crate::bench::BenchArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// The built-in Kubernetes API emulator: serve scenarios or a kubectl dump
    #[command(subcommand)]
    Sim(crate::sim::cli::SimCommand),
}

/// The exit statuses live below the CLI, shared with `serve`.
pub use crate::exit;
