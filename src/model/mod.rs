//! Typed, tolerant views of the kinds restorewatch watches.

pub mod kind;
pub mod names;

pub use kind::{KINDS, Kind, KindInfo};
