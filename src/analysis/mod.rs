//! PURE analysis: `analyze(&Snapshot, &Settings, now) -> Report`. No I/O, no clock, no async:
//! the same input gives the same report, which is what makes `check` on a dump repeatable and
//! the rules table-testable.

pub mod codes;
pub mod report;

pub use codes::{ActionKind, Code, Severity};
pub use report::*;

use crate::cluster::Snapshot;
use jiff::{SignedDuration, Timestamp};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// How long nothing may change before a running restore counts as stalled.
    pub stall_after: SignedDuration,
    /// A watch down for longer than this raises `watch-stale`.
    pub watch_stale_after: SignedDuration,
    /// A rename younger than this is still in progress, not half done.
    pub rename_grace: SignedDuration,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            stall_after: SignedDuration::from_mins(10),
            watch_stale_after: SignedDuration::from_secs(30),
            rename_grace: SignedDuration::from_secs(60),
        }
    }
}

pub fn analyze(_snapshot: &Snapshot, _settings: &Settings, now: Timestamp) -> Report {
    Report {
        now: Some(now),
        ..Report::default()
    }
}
