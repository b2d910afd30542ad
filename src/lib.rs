//! restorewatch: watch Cozystack restores, flag the states that lose data, repair them safely.
//!
//! Data flows one way: a source (`cluster`) builds a `Snapshot`, `analysis::analyze` turns it into
//! a `Report`, and the UI or `check` presents it. `actions` plan (pure) and execute (API) repairs.

pub mod actions;
pub mod analysis;
pub mod args;
pub mod bench;
pub mod cli;
pub mod cluster;
pub mod config;
pub mod document;
pub mod exit;
pub mod logging;
pub mod malloc_tuning;
pub mod model;
pub mod pipeline;
pub mod private_file;
pub mod procstat;
pub mod runtime;
pub mod serve;
pub mod sim;
pub mod text;
pub mod ui;
