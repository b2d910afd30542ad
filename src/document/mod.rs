//! Documents built from an analysed picture, for people and scripts: the `check -o json`
//! document (also `serve`'s `/report`) and the postmortem story of one restore
//! (`restorewatch report`, the dashboard's export). Pure: a `Report`, the
//! `Snapshot` it came from and the audit lines read by the caller go in, a value comes out;
//! rendering (Markdown, JSON) is apart from building. Stands on `analysis` and `model` only,
//! so the CLI, `serve` and the dashboard can all use it without reaching into each other.

pub mod audit_record;
pub mod check_json;
pub mod markdown;
pub mod story;
mod story_disks;
pub mod story_markdown;
mod story_timeline;
pub mod verdict;
