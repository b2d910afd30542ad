//! Guarded repair actions. `plan` is pure: from a snapshot and a request, the exact writes with
//! their preconditions, or a refusal that says why. `execute` re-reads everything through the
//! API before each write and re-plans from that fresh state, so an action is idempotent (a
//! finished one plans nothing) and resumable (an interrupted one plans what is left).

pub mod audit;
pub mod execute;
mod fresh;
mod guard;
pub mod ops;
pub mod plan;
mod plan_rename;
mod plan_repairs;
mod plan_restart;
pub mod rbac;
mod rejudge;
mod usage;
mod verify;
mod write;

pub use ops::Op;
pub use plan::{ActionRequest, Plan, Refusal, Target, plan};

use crate::analysis::ActionKind;

/// What each action applies to and how dangerous it is: the one registry the menu, the help,
/// `--readonly` and the RBAC gate all read.
#[derive(Debug, Clone, Copy)]
pub struct ActionSpec {
    pub kind: ActionKind,
    pub title: &'static str,
    pub summary: &'static str,
    /// Applies to a restore (`--restore NS/NAME`).
    pub on_restore: bool,
    /// Applies to a PVC (`--pvc NS/NAME`).
    pub on_pvc: bool,
    /// Can destroy data if misused: always confirmed by typing the name.
    pub dangerous: bool,
}

pub const ACTIONS: &[ActionSpec] = &[
    ActionSpec {
        kind: ActionKind::ResumeRename,
        title: "Keep / finish keeping disks",
        summary: "the controller's guarded rename: record the PV policy, Retain, create the -orig PVC, delete the original only while it still claims the PV, repoint the PV",
        on_restore: true,
        on_pvc: true,
        dangerous: true,
    },
    ActionSpec {
        kind: ActionKind::ReclaimOrig,
        title: "Reclaim an -orig PVC",
        summary: "set the PV's reclaim policy back to the recorded one, then delete the -orig PVC",
        on_restore: false,
        on_pvc: true,
        dangerous: true,
    },
    ActionSpec {
        kind: ActionKind::FixServername,
        title: "Repair the archive serverName",
        summary: "JSON-patch the Cluster's barman plugin serverName to the app's newServerName, testing the old value",
        on_restore: true,
        on_pvc: false,
        dangerous: false,
    },
    ActionSpec {
        kind: ActionKind::ResumeRelease,
        title: "Resume HelmReleases",
        summary: "spec.suspend=false on the HelmReleases a finished restore left suspended",
        on_restore: true,
        on_pvc: false,
        dangerous: false,
    },
    ActionSpec {
        kind: ActionKind::RestartRestore,
        title: "Restore again under a new name",
        summary: "create a new RestoreJob with the same spec under a fresh name whose -orig names are free and whose hash collides with no running restore, once the old one has finished (or the operator chose to leave it running) and preflight of the new one is clean",
        on_restore: true,
        on_pvc: false,
        dangerous: true,
    },
];

pub fn spec(kind: ActionKind) -> &'static ActionSpec {
    // Every ActionKind has an entry; the test keeps it so.
    ACTIONS
        .iter()
        .find(|a| a.kind == kind)
        .unwrap_or(&ACTIONS[0])
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_action_is_registered_once() {
        for k in crate::analysis::ActionKind::ALL {
            assert_eq!(
                super::ACTIONS.iter().filter(|a| a.kind == *k).count(),
                1,
                "{k}"
            );
        }
    }
}
