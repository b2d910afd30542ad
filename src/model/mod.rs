//! Typed, tolerant views of the kinds restorewatch watches.

pub mod changes;
pub mod field;
pub mod held;
pub mod history;
pub mod inline_str;
pub mod json;
pub mod k8s_names;
pub mod kind;
pub mod meta;
pub mod names;
pub mod object;
pub mod objects;
pub mod ownership;
pub mod packed;
pub mod quantity;
pub mod secret_text;
pub mod secrets;
pub mod shared_str;
pub mod snapshot;
pub mod strmap;
pub mod tombstones;

pub use field::Field;
pub use kind::{KINDS, Kind, KindInfo};
pub use meta::{Meta, OwnerRef};
pub use object::{AnyObject, Obj, ParseError, parse_object, parse_watched};
