//! The work the passage of time alone causes: the analyzer's clock moves that redid something
//! (a stall, deadline or grace period crossed, or a duration's text due to move on), and the
//! namespaces they redid.
//!
//! With nothing changing on the server this is what an idle dashboard or `serve` still does
//! besides drawing its clock, so `bench` reads it around its idle window: an idle figure is
//! then explained, not guessed at. On a real server's dump, whose restores all stalled within
//! the same two minutes, each restore's "for 5d12h" text moves on once an hour, in that same
//! window of the hour.

use std::sync::atomic::{AtomicU64, Ordering};

/// Clock moves that redid something, and the namespaces they redid.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClockWork {
    pub wakes: u64,
    pub namespaces: u64,
}

impl ClockWork {
    /// What was done between `earlier` and `self`.
    pub fn since(self, earlier: ClockWork) -> ClockWork {
        ClockWork {
            wakes: self.wakes.saturating_sub(earlier.wakes),
            namespaces: self.namespaces.saturating_sub(earlier.namespaces),
        }
    }

    /// One more clock move that redid `namespaces` namespaces.
    pub(super) fn count(&mut self, namespaces: usize) {
        self.wakes += 1;
        self.namespaces += namespaces as u64;
    }
}

// Process-wide: the dashboard and `serve` each run one live pipeline per process, and the bench
// measures each in a process of its own.
static WAKES: AtomicU64 = AtomicU64::new(0);
static NAMESPACES: AtomicU64 = AtomicU64::new(0);

/// Everything the live pipelines of this process have done by the clock alone, so far.
pub fn so_far() -> ClockWork {
    ClockWork {
        wakes: WAKES.load(Ordering::Relaxed),
        namespaces: NAMESPACES.load(Ordering::Relaxed),
    }
}

/// Adds what one analyzer did by the clock since it was last added.
pub(super) fn add(done: ClockWork) {
    WAKES.fetch_add(done.wakes, Ordering::Relaxed);
    NAMESPACES.fetch_add(done.namespaces, Ordering::Relaxed);
}
