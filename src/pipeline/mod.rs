//! From source changes to analysed frames: the one place above the sources (`cluster`) and the
//! rules (`analysis`), shared by the dashboard, `serve` and the benchmark.
//!
//! Public entry points (stable; the benchmark calls them):
//! - [`Analyzer`]: incremental analysis. `Analyzer::new(snapshot, settings, now)` analyses
//!   everything once; `Analyzer::apply(snapshot, &changes)` takes the next snapshot with the
//!   [`Changes`] that lead to it and returns the new `Arc<Report>`, redoing only the namespaces
//!   the changes touch (plus the cluster-wide findings); `apply_at` moves the clock with them.
//!   `Analyzer::tick(now)` moves the clock and redoes only the parts whose answers expired by
//!   then (`Analyzer::next_deadline`), saying whether the report changed. The report always
//!   equals `analysis::analyze(snapshot, settings, now)` at the analyzer's clock, `now` aside
//!   (property-tested).
//! - [`live::start`] / [`live::start_watching`]: the live watches of `cluster::live`, analysed
//!   into [`Frame`]s on a watch channel (the first change after a quiet period is analysed and
//!   sent at once; only a stream of changes is coalesced, to ~60 frames a second: [`pace`]).
//! - [`still::spawn`] / [`still::spawn_at`]: frames of a picture that never changes (files).
//! - [`clock_work::so_far`]: what the live pipelines of this process redid by the clock alone.

pub mod analyzer;
pub mod clock_work;
pub mod frame;
pub mod live;
pub mod pace;
pub mod still;

pub use crate::model::changes::Changes;
pub use analyzer::Analyzer;
pub use frame::{Frame, FrameRx, FrameTx};
