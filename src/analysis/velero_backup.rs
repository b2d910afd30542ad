//! `velero-backup-missing`: the Velero Backup a restore reads (the Backup's
//! `driverMetadata["velero.io/backup-name"]`) is gone or past its `status.expiration`. Velero
//! then answers `FailedValidation`, which the controller takes for "in progress" forever,
//! after it has suspended, halted, renamed and deleted. Unknown (no finding) when Velero's
//! Backups could not be read, unless Velero itself said it did not find it.

use super::codes::Code;
use super::ctx::Ctx;
use super::emit::Findings;
use super::report::ObjRef;
use crate::model::Kind;
use crate::model::names::VELERO_NAMESPACE;
use crate::model::snapshot::Snapshot;

const BACKUP_NAME_KEY: &str = "velero.io/backup-name";

/// What became of the Velero Backup a restore names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Present,
    Missing(&'static str),
    Expired(jiff::Timestamp),
    Unknown,
}

/// Whether the snapshot holds Velero's Backups in Velero's namespace: a live list that synced
/// (a view scoped to one namespace reads them there too: `cluster::velero_scope`), or a file
/// that holds at least one (a dump that lists none of the kind says nothing about it: kubectl
/// was not asked for it).
fn backups_readable(snap: &Snapshot) -> bool {
    match snap.absence_known(Kind::VeleroBackup) {
        Some(known) => known,
        None => snap.objects.len(Kind::VeleroBackup) > 0,
    }
}

fn state(ctx: &Ctx, name: &str) -> State {
    let snap = ctx.snap;
    if let Some(b) = snap.velero_backups.get(VELERO_NAMESPACE, name) {
        return match b.expiration {
            Some(at) if ctx.clock.older_than(at, jiff::SignedDuration::ZERO) => State::Expired(at),
            _ => State::Present,
        };
    }
    // Velero's own answer: it read its Backups and did not find this one.
    let velero_said = ctx.velero.is_some_and(|v| {
        v.is_rejected()
            && v.validation_errors
                .iter()
                .any(|e| e.contains("not found") && super::ctx::mentions(e, name))
    });
    if velero_said {
        State::Missing("Velero's validation did not find it")
    } else if backups_readable(snap) {
        State::Missing("no such Backup in Velero's namespace")
    } else {
        State::Unknown
    }
}

pub(super) fn findings(ctx: &Ctx, out: &mut Findings) {
    if ctx.terminal() || ctx.stale_velero.is_some() {
        return;
    }
    let Some(backup) = ctx.backup else {
        return;
    };
    let Some(name) = backup.driver_metadata.get(BACKUP_NAME_KEY) else {
        return;
    };
    let what = match state(ctx, name) {
        State::Present | State::Unknown => return,
        State::Missing(why) => format!("does not exist ({why})"),
        State::Expired(at) => {
            format!("expired at {at} (its TTL): Velero deletes it and refuses to restore from it")
        }
    };
    let when = if ctx.velero.is_some() {
        "Velero answers FailedValidation and the controller waits for it forever, with the application already taken apart"
    } else {
        "the Velero Restore will fail validation, and the controller waits for it forever after suspending, halting, renaming the disks and deleting the DataVolumes"
    };
    out.push(
        ctx.snap,
        Code::VeleroBackupMissing,
        Some(&ctx.id),
        vec![
            ObjRef::new(Kind::Backup, ctx.ns, &backup.meta.name),
            ObjRef::new(Kind::VeleroBackup, VELERO_NAMESPACE, name),
            ctx.rj_ref(),
        ],
        format!(
            "Backup {} restores from Velero Backup {VELERO_NAMESPACE}/{name}, which {what}: {when}",
            backup.meta.name
        ),
        format!(
            "Restore from another Backup whose Velero Backup exists (kubectl -n {VELERO_NAMESPACE} get backups.velero.io); if {} has not halted the VM yet, delete it now",
            ctx.rj.meta.name
        ),
    );
}
