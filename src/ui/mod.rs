//! The terminal UI.
