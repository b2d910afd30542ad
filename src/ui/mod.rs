//! The terminal UI, Elm style: terminal events become `Msg`s, `update(&mut App, Msg)` is the
//! only place state changes, and `view(&App, &mut Frame)` draws without changing anything.
//! Frames of analysed cluster state arrive through a `watch` channel and replace the old one
//! whole, so the UI never waits on the network; the action worker answers through messages too.

pub mod act;
pub mod action_worker;
pub mod app;
pub mod backup_list;
pub mod backup_preflight;
pub mod bulk;
pub mod command;
pub mod consent;
pub mod context;
pub mod dialog;
pub mod export;
pub mod format;
pub mod keys;
pub mod list_memo;
pub mod offer;
pub mod orig_totals;
pub mod paint;
pub mod run;
pub mod select;
pub mod sort;
pub mod terminal_input;
pub mod theme;
pub mod typed_field;
pub mod update;
pub mod views;

pub use action_worker::ActionBackend;
pub use app::{App, UiOptions};
pub use paint::Painter;
pub use run::run_tui;
pub use update::{Msg, event_to_msg, update};
pub use views::view;
