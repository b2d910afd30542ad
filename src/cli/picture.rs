//! What a one-shot command (`check`, `report`) looks at and how it judges it: dump files or one
//! list of the cluster, the time and the stall threshold. One set of options for both, so that
//! a dump reads the same through either.

use super::check::picture;
use crate::analysis::{self, Report, Settings};
use crate::args::{ClusterArgs, parse_duration, parse_time};
use crate::cluster::Snapshot;
use crate::cluster::input::parse_size;
use clap::Args;
use jiff::{SignedDuration, Timestamp};
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct PictureArgs {
    /// kubectl output to analyse instead of a cluster (a List, an object, multi-document YAML
    /// or JSON; repeatable; `-` reads stdin)
    #[arg(long = "snapshot", value_name = "FILE")]
    pub snapshots: Vec<PathBuf>,
    /// The time to judge ages and deadlines against (RFC3339; default: now)
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    pub now: Option<Timestamp>,
    /// How long a restore may show no change before it counts as stalled (e.g. 10m, 90s, 1h)
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    pub stall_after: SignedDuration,
    /// When some kinds cannot be listed (after retries), analyse the rest instead of exiting
    /// 2: findings resting on an unreadable kind are marked stale and do not count toward
    /// --fail-on
    #[arg(long)]
    pub allow_partial: bool,
    /// Refuse a --snapshot file (or stdin) larger than this, e.g. 4GiB, 500MiB [default: 1GiB]
    #[arg(long, value_name = "SIZE", value_parser = parse_size, env = "RESTOREWATCH_MAX_INPUT")]
    pub max_input: Option<u64>,
}

impl PictureArgs {
    /// The picture and its analysis; `Err` is the exit status, the reason already said.
    pub async fn analysed(&self, cluster: &ClusterArgs) -> Result<(Snapshot, Report), i32> {
        let snap = picture(cluster, &self.snapshots, self.max_input, self.allow_partial).await?;
        let settings = Settings {
            stall_after: self.stall_after,
            ..Settings::default()
        };
        let now = self.now.unwrap_or_else(Timestamp::now);
        let report = analysis::analyze(&snap, &settings, now);
        Ok((snap, report))
    }
}
