//! Where objects come from: live watches, snapshot files, the demo. All produce a `Snapshot`.

pub mod beyond_scope;
pub mod changes;
pub mod client;
pub mod controller_image;
pub mod errors;
pub mod exec_plugin;
pub mod files;
pub mod input;
pub mod json_stream;
pub mod list_once;
pub mod live;
pub mod raw_object;
pub mod restore_scope;
pub mod static_source;
pub mod velero_scope;
pub mod watch_log;
pub mod yaml_stream;

// The snapshot lives at the ground floor (model); these keep the old paths working.
pub use crate::model::snapshot::{
    self, KindHealth, ObjKey, Snapshot, SourceInfo, Store, SyncState,
};
pub use crate::model::tombstones;
