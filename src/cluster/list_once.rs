//! One LIST of every watched kind, for `check` without `--snapshot`.

use crate::cli::common::ClusterArgs;
use crate::cluster::Snapshot;

pub async fn snapshot(_args: &ClusterArgs) -> anyhow::Result<Snapshot> {
    anyhow::bail!(
        "live mode of check needs the cluster layer (arrives with the emulator); pass --snapshot FILE"
    )
}
