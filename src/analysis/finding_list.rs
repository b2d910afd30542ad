//! A report's findings, merged into report order when first read.
//!
//! The live pipeline assembles a report after every change. When a namespace's findings
//! changed, the report's list was merged again from every namespace's findings: on a real
//! server's dump, 1,393 findings, each a reference count moved on a cold cache line, 0.36 ms of
//! the write's way to the screen on every change that altered a finding (issue 28, fifteenth
//! session). The restores screen never reads that list (it finds a restore's findings through
//! the index), so an assembled report keeps the namespaces' runs and merges them the first
//! time the whole list is read: by the findings screen, `serve`'s scrape, `check`'s output.

use super::report::{Finding, Shared};
use super::report_order;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// Each list's own number, which the report's index keeps to tell that it was built with
/// this very list (`ReportIndex::fits`): a new list is a new number, whatever its length.
static NEXT_STAMP: AtomicU64 = AtomicU64::new(1);

fn next_stamp() -> u64 {
    NEXT_STAMP.fetch_add(1, Ordering::Relaxed)
}

/// The findings in report order (`report_order`), each once. Reads as a `Vec` (`Deref`).
pub struct FindingList {
    stamp: u64,
    /// Each in report order; merged with `global` as `report_order::merge` does.
    runs: Vec<Shared<Finding>>,
    global: Vec<Arc<Finding>>,
    merged: OnceLock<Vec<Arc<Finding>>>,
}

impl FindingList {
    /// The list `report_order::merge` makes of `runs` and `global`, merged when first read.
    pub fn merged_later(runs: Vec<Shared<Finding>>, global: Vec<Arc<Finding>>) -> FindingList {
        FindingList {
            stamp: next_stamp(),
            runs,
            global,
            merged: OnceLock::new(),
        }
    }

    /// The list's own number (see `NEXT_STAMP`).
    pub fn stamp(&self) -> u64 {
        self.stamp
    }

    /// Whether the list has been merged (read whole) yet.
    pub fn is_merged(&self) -> bool {
        self.merged.get().is_some()
    }

    pub fn as_vec(&self) -> &Vec<Arc<Finding>> {
        self.merged.get_or_init(|| {
            let runs: Vec<&[Arc<Finding>]> = self.runs.iter().map(|r| r.as_slice()).collect();
            report_order::merge(&runs, &self.global)
        })
    }
}

impl std::ops::Deref for FindingList {
    type Target = Vec<Arc<Finding>>;

    fn deref(&self) -> &Vec<Arc<Finding>> {
        self.as_vec()
    }
}

impl From<Vec<Arc<Finding>>> for FindingList {
    /// A list already in report order.
    fn from(findings: Vec<Arc<Finding>>) -> FindingList {
        FindingList {
            stamp: next_stamp(),
            runs: Vec::new(),
            global: Vec::new(),
            merged: OnceLock::from(findings),
        }
    }
}

impl FromIterator<Arc<Finding>> for FindingList {
    fn from_iter<I: IntoIterator<Item = Arc<Finding>>>(iter: I) -> FindingList {
        FindingList::from(iter.into_iter().collect::<Vec<_>>())
    }
}

impl Default for FindingList {
    fn default() -> FindingList {
        FindingList::from(Vec::new())
    }
}

impl Clone for FindingList {
    /// A copy to change (`Arc::make_mut`): a list of its own, with its own number.
    fn clone(&self) -> FindingList {
        FindingList::from(self.as_vec().clone())
    }
}

impl PartialEq for FindingList {
    fn eq(&self, other: &FindingList) -> bool {
        self.as_vec() == other.as_vec()
    }
}

impl Eq for FindingList {}

impl std::fmt::Debug for FindingList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_vec().iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::codes::{Code, Severity};
    use crate::analysis::report::RestoreId;

    fn finding(ns: &str, restore: &str, severity: Severity, message: &str) -> Arc<Finding> {
        Arc::new(Finding {
            code: Code::OrigPvcForeign,
            severity,
            restore: Some(RestoreId {
                namespace: ns.into(),
                name: restore.into(),
            }),
            objects: Vec::new(),
            message: message.into(),
            remedy: String::new(),
            action: None,
            stale: false,
        })
    }

    /// Read whole, the list is what the merge of its runs is, and only then is it merged; a
    /// copy made to change it is a list of its own.
    #[test]
    fn the_runs_are_merged_when_first_read_and_as_the_merge_makes_them() {
        let a = Arc::new(vec![
            finding("a", "r1", Severity::Error, "a1"),
            finding("a", "r1", Severity::Info, "a2"),
        ]);
        let b = Arc::new(vec![finding("b", "r2", Severity::Warning, "b1")]);
        let global = vec![finding("a", "r1", Severity::Warning, "g1")];
        let everything = a.iter().chain(b.iter()).chain(&global).cloned().collect();
        let expected = report_order::sorted(everything);
        let list = FindingList::merged_later(vec![Arc::clone(&a), Arc::clone(&b)], global);
        assert!(!list.is_merged());
        assert_eq!(list.len(), 4);
        assert!(list.is_merged());
        assert_eq!(*list, expected);
        let copy = list.clone();
        assert_eq!(copy, list);
        assert_ne!(copy.stamp(), list.stamp());
    }
}
