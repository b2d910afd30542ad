//! Exit codes that mean something to scripts, for every command (the CLI's and `serve`).

/// Nothing reached the `--fail-on` level.
pub const OK: i32 = 0;
/// A finding reached the `--fail-on` level.
pub const FINDINGS: i32 = 1;
/// Bad usage or unreadable input.
pub const USAGE: i32 = 2;
