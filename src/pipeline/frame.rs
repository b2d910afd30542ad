//! What a source hands the UI: an analysed picture of the cluster, replaced as a whole on every
//! change. The UI only ever reads the newest frame; it never talks to the API.

use crate::analysis::Report;
use crate::model::snapshot::Snapshot;
use jiff::Timestamp;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct Frame {
    /// Increases with every new frame; lets the UI count changes while frozen.
    pub seq: u64,
    pub snapshot: Arc<Snapshot>,
    pub report: Arc<Report>,
    /// The `now` the report was computed for.
    pub analyzed_at: Timestamp,
}

/// The newest frame; `None` until the first complete sync.
pub type FrameRx = tokio::sync::watch::Receiver<Option<Arc<Frame>>>;
pub type FrameTx = tokio::sync::watch::Sender<Option<Arc<Frame>>>;
