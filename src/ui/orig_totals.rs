//! The `-orig` screen's totals: how many PVCs, how much storage, how much can be reclaimed now
//! and how much is blocked, by reason. Pure: from the rows the table shows.

use super::sort::quantity_bytes;
use crate::analysis::OrigPvcView;

/// Why an `-orig` PVC cannot be reclaimed now, grouped so that a few dozen read as a few words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Blocked {
    /// Its RestoreJob still runs: the PVC is the restore's safety copy.
    RestoreRunning,
    MountedByPod,
    OnlyCopy,
    BeingDeleted,
    Other,
}

impl Blocked {
    /// The analysis says why in a sentence; its first words tell the group.
    pub fn of(why: &str) -> Blocked {
        if why.starts_with("RestoreJob ") {
            Blocked::RestoreRunning
        } else if why.starts_with("mounted by") {
            Blocked::MountedByPod
        } else if why.contains("only copy") {
            Blocked::OnlyCopy
        } else if why.contains("being deleted") {
            Blocked::BeingDeleted
        } else {
            Blocked::Other
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Blocked::RestoreRunning => "restore running",
            Blocked::MountedByPod => "mounted",
            Blocked::OnlyCopy => "only copy",
            Blocked::BeingDeleted => "being deleted",
            Blocked::Other => "other",
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Totals {
    pub count: usize,
    pub bytes: u64,
    pub reclaimable: usize,
    pub reclaimable_bytes: u64,
    /// Of the reclaimable ones, those whose recorded policy is unknown: reclaimed one by one.
    pub unrecorded: usize,
    pub blocked: usize,
    pub blocked_bytes: u64,
    /// (reason, how many), most common first.
    pub reasons: Vec<(Blocked, usize)>,
    /// PVCs whose size is not known (not counted in the bytes).
    pub size_unknown: usize,
    /// Whose restored copy is proven (`analysis::copy_proof`), and whose is not.
    pub proven: usize,
    pub unproven: usize,
}

pub fn totals(rows: &[&OrigPvcView]) -> Totals {
    let mut t = Totals::default();
    let mut reasons: std::collections::BTreeMap<Blocked, usize> = Default::default();
    for o in rows {
        let size = o
            .size
            .as_deref()
            .and_then(quantity_bytes)
            .and_then(|b| u64::try_from(b).ok());
        if size.is_none() {
            t.size_unknown += 1;
        }
        let size = size.unwrap_or(0);
        t.count += 1;
        t.bytes = t.bytes.saturating_add(size);
        if o.proof.is_proven() {
            t.proven += 1;
        } else {
            t.unproven += 1;
        }
        match &o.reclaim {
            Ok(_) => {
                t.reclaimable += 1;
                t.reclaimable_bytes = t.reclaimable_bytes.saturating_add(size);
                let retain =
                    o.pv.as_ref().and_then(|p| p.reclaim_policy.as_deref()) == Some("Retain");
                if retain && matches!(o.reclaim, Ok(None)) {
                    t.unrecorded += 1;
                }
            }
            Err(why) => {
                t.blocked += 1;
                t.blocked_bytes = t.blocked_bytes.saturating_add(size);
                *reasons.entry(Blocked::of(why)).or_default() += 1;
            }
        }
    }
    t.reasons = reasons.into_iter().collect();
    t.reasons.sort_by_key(|(r, n)| (std::cmp::Reverse(*n), *r));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_group_by_their_first_words() {
        assert_eq!(
            Blocked::of("RestoreJob restore-test is Running"),
            Blocked::RestoreRunning
        );
        assert_eq!(
            Blocked::of("mounted by pod tenant-a/virt-launcher"),
            Blocked::MountedByPod
        );
        assert_eq!(
            Blocked::of("keep it: it is the only copy (the restore failed)"),
            Blocked::OnlyCopy
        );
        assert_eq!(Blocked::of("already being deleted"), Blocked::BeingDeleted);
        assert_eq!(Blocked::of("something new"), Blocked::Other);
    }
}
