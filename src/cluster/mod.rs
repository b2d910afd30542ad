//! Where objects come from: live watches, snapshot files, the demo. All produce a `Snapshot`.

pub mod changes;
pub mod client;
pub mod errors;
pub mod files;
pub mod input;
pub mod json_stream;
pub mod list_once;
pub mod live;
pub mod snapshot;
pub mod static_source;
pub mod tombstones;
pub mod yaml_stream;

pub use snapshot::{KindHealth, ObjKey, Snapshot, SourceInfo, Store, SyncState};
pub mod feed;

pub use feed::{Frame, FrameRx, FrameTx};
