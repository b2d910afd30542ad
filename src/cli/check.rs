//! `restorewatch check`: analyse once and report, for scripts and on-call dumps.

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct CheckArgs {}

pub async fn run(_args: CheckArgs) -> anyhow::Result<i32> {
    Ok(super::exit::OK)
}
