//! PURE analysis: Snapshot -> Report. No I/O, no clock, no async.
