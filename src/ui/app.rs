//! The whole UI state. Only `update` changes it; `view` only reads it. Frames arrive whole
//! (an `Arc`), so the state never holds a half-updated picture of the cluster.

use super::action_worker::{ActionBackend, WorkerRequest};
use super::dialog::{Dialog, Menu};
use super::keys::{Keymap, ScreenKind};
use super::sort::Sort;
use super::theme::Theme;
use crate::analysis::{ObjRef, RestoreId};
use crate::pipeline::Frame;
use jiff::Timestamp;
use jiff::tz::TimeZone;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// What the caller decides about a TUI session.
#[derive(Debug, Clone)]
pub struct UiOptions {
    /// No actions at all: `a` is not offered anywhere.
    pub readonly: bool,
    /// The live cluster actions run against; `None` (snapshot files) leaves them unavailable.
    pub actions: Option<ActionBackend>,
    pub theme: Theme,
    pub keymap: Keymap,
    /// Overrides the source shown in the header (else taken from the snapshot's `source`).
    pub source_label: Option<String>,
    /// Initial namespace scope (`-n`); `None` is all namespaces.
    pub namespace: Option<String>,
    /// Where the log goes, to tell the user after a crash.
    pub log_path: Option<PathBuf>,
    /// Shown in the status line at start (e.g. documents of a dump that could not be read).
    pub notice: Option<String>,
    /// Zone for the clock and "taken at" times.
    pub tz: TimeZone,
    /// Added to the wall clock: a dump opened `--now` its time reads as it did then.
    pub clock_offset: jiff::SignedDuration,
    /// The server a live session waits for, shown with the time waited until the first frame.
    pub connecting_to: Option<String>,
    /// The kubeconfig context shown; `None` when the data is not a context's (demo, dumps),
    /// and then `:ctx` has nothing to switch.
    pub context: Option<String>,
    /// The kubeconfig's contexts, for `:ctx` completion.
    pub contexts: Vec<String>,
    /// Where `e` writes reports; `None` is `$XDG_STATE_HOME/restorewatch/reports`.
    pub reports_dir: Option<PathBuf>,
}

impl Default for UiOptions {
    fn default() -> Self {
        UiOptions {
            readonly: true,
            actions: None,
            theme: Theme::builtin(true),
            keymap: Keymap::default(),
            source_label: None,
            namespace: None,
            log_path: None,
            connecting_to: None,
            notice: None,
            tz: TimeZone::UTC,
            clock_offset: jiff::SignedDuration::ZERO,
            context: None,
            contexts: Vec::new(),
            reports_dir: None,
        }
    }
}

/// The panes of the restore detail, in `Tab` order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pane {
    Steps,
    Disks,
    Events,
    Findings,
    History,
}

impl Pane {
    pub const ALL: [Pane; 5] = [
        Pane::Steps,
        Pane::Disks,
        Pane::Events,
        Pane::Findings,
        Pane::History,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn next(self) -> Pane {
        Pane::ALL[(self.index() + 1) % Pane::ALL.len()]
    }

    pub fn prev(self) -> Pane {
        Pane::ALL[(self.index() + Pane::ALL.len() - 1) % Pane::ALL.len()]
    }
}

/// A cursor in a list plus the first visible row, kept so that scrolling up does not jump.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Selection {
    pub selected: usize,
    pub offset: usize,
}

impl Selection {
    /// Keeps the cursor inside `len` rows and visible in a window of `height` rows.
    pub fn clamp(&mut self, len: usize, height: usize) {
        self.selected = if len == 0 {
            0
        } else {
            self.selected.min(len - 1)
        };
        let height = height.max(1);
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + height {
            self.offset = self.selected + 1 - height;
        }
        self.offset = self.offset.min(len.saturating_sub(height));
    }

    /// The window a view should draw, without changing the state.
    pub fn visible(&self, len: usize, height: usize) -> Selection {
        let mut s = *self;
        s.clamp(len, height);
        s
    }

    pub fn move_by(&mut self, delta: isize, len: usize) {
        if len == 0 {
            self.selected = 0;
            return;
        }
        let max = len as isize - 1;
        self.selected = (self.selected as isize + delta).clamp(0, max) as usize;
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetailState {
    pub id: RestoreId,
    pub pane: Pane,
    pub sel: [Selection; Pane::ALL.len()],
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlState {
    pub target: ObjRef,
    /// Rendered when opened and on every new frame, so drawing stays cheap and pure.
    pub text: Result<String, String>,
    pub scroll: usize,
    /// For an object whose text the watch does not keep: its read from the API server.
    pub fetch: YamlFetch,
}

/// The YAML view's read of an object the watch keeps no text of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum YamlFetch {
    /// The text is kept (or there is no object): nothing to read.
    NotNeeded,
    /// Asked (request `id`) for the object the watch holds at `resource_version`.
    Pending {
        id: u64,
        resource_version: String,
    },
    Done(super::select::Fetched),
    /// The read failed: the held fields are shown, with why.
    Failed {
        error: String,
        resource_version: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Screen {
    Restores,
    Findings,
    Orig,
    Events,
    Detail(DetailState),
    Yaml(YamlState),
    Help {
        scroll: usize,
    },
    Backups,
    /// What `preflight` predicts for a restore from a Backup, once the worker has read.
    Preflight(Box<super::backup_preflight::PreflightState>),
}

impl Screen {
    pub fn kind(&self) -> ScreenKind {
        match self {
            Screen::Restores => ScreenKind::Restores,
            Screen::Findings => ScreenKind::Findings,
            Screen::Orig => ScreenKind::Orig,
            Screen::Events => ScreenKind::Events,
            Screen::Detail(_) => ScreenKind::Detail,
            Screen::Yaml(_) => ScreenKind::Yaml,
            Screen::Help { .. } => ScreenKind::Help,
            Screen::Backups => ScreenKind::Backups,
            Screen::Preflight(_) => ScreenKind::Preflight,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CommandLine {
    pub text: String,
    /// Candidates of the last Tab and which one is shown, so Tab cycles.
    pub completion: Option<(Vec<String>, usize)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Normal,
    /// Typing into the current table's filter.
    Filter,
    Command(CommandLine),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatusKind {
    Info,
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusMsg {
    pub text: String,
    pub kind: StatusKind,
}

/// A dialog drawn over the screen that takes every key until closed: the action menu or the
/// action dialog. It holds exactly what the operator saw, so confirming executes that.
#[derive(Debug, Clone)]
pub enum Modal {
    Menu(Menu),
    Action(Box<Dialog>),
    /// Reclaim of the marked `-orig` PVCs.
    Bulk(Box<super::bulk::Bulk>),
}

/// Whether `a` can do anything in this session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Actions {
    /// `--readonly`: actions are hidden everywhere.
    ReadOnly,
    /// No API client (snapshot files): `a` says so.
    NoClient,
    Live,
}

#[derive(Debug, Clone)]
pub struct App {
    pub opts: UiOptions,
    /// The restores list's order and rows as last drawn (see `list_memo`).
    pub list_memo: super::list_memo::ListMemo,
    /// The frame on screen.
    pub shown: Option<Arc<Frame>>,
    /// The newest frame received; differs from `shown` only while frozen.
    pub latest: Option<Arc<Frame>>,
    /// Frames replaced since the last draw, let go after it (`release_retired`): freeing a
    /// report walks every restore and finding it held, which a new frame need not wait for.
    pub retired: Vec<Arc<Frame>>,
    pub frozen: bool,
    pub screen: Screen,
    /// Where `Esc` goes back to.
    pub stack: Vec<Screen>,
    /// Cursor of each top-level table, kept while other screens are visited.
    pub lists: BTreeMap<ScreenKind, Selection>,
    /// Filter text per table.
    pub filters: BTreeMap<ScreenKind, String>,
    /// The order chosen per table; absent is the table's default.
    pub sorts: BTreeMap<ScreenKind, Sort>,
    /// `-orig` PVCs marked with `Space` for a bulk reclaim (namespace, name).
    pub marks: std::collections::BTreeSet<(String, String)>,
    pub mode: Mode,
    pub namespace: Option<String>,
    pub status: Option<StatusMsg>,
    pub modal: Option<Modal>,
    pub actions: Actions,
    /// Requests for the action worker, taken by the terminal loop after each update; `update`
    /// itself never talks to the API.
    pub outbox: Vec<WorkerRequest>,
    /// `:ctx NAME` asked for this context; the terminal loop takes it and connects.
    pub context_request: Option<String>,
    /// The context being connected to, until it answers.
    pub switching: Option<String>,
    /// The id of the next dialog, so late answers for a closed one are dropped.
    pub next_id: u64,
    /// The clock, advanced by ticks (fixed in tests).
    pub now: Timestamp,
    /// When the session began, for "connecting to X… 12s".
    pub opened_at: Timestamp,
    /// Terminal size, for page sizes and mouse hit-testing.
    pub size: (u16, u16),
    pub quit: bool,
    /// Something visible changed since the last draw.
    pub dirty: bool,
}

/// Frames kept in `App::retired` at most: without a draw (a terminal that stopped drawing,
/// a test that never draws), older ones are let go at once.
const MAX_RETIRED: usize = 4;

impl App {
    /// Keeps `old`, replaced by a newer frame, until the next draw is done.
    pub fn retire(&mut self, old: Option<Arc<Frame>>) {
        self.retired.extend(old);
        if self.retired.len() > MAX_RETIRED {
            let extra = self.retired.len() - MAX_RETIRED;
            self.retired.drain(..extra);
        }
    }

    /// Lets go of the frames and rows the last draw replaced: called once it is on screen.
    pub fn release_retired(&mut self) {
        self.retired.clear();
        self.list_memo.release_retired();
    }

    pub fn new(opts: UiOptions, now: Timestamp, size: (u16, u16)) -> App {
        let actions = if opts.readonly {
            Actions::ReadOnly
        } else if opts.actions.is_some() {
            Actions::Live
        } else {
            Actions::NoClient
        };
        App {
            list_memo: Default::default(),
            namespace: opts.namespace.clone(),
            status: opts.notice.clone().map(|text| StatusMsg {
                text,
                kind: StatusKind::Error,
            }),
            opts,
            shown: None,
            latest: None,
            retired: Vec::new(),
            frozen: false,
            screen: Screen::Restores,
            stack: Vec::new(),
            lists: BTreeMap::new(),
            filters: BTreeMap::new(),
            sorts: BTreeMap::new(),
            marks: Default::default(),
            mode: Mode::Normal,
            modal: None,
            actions,
            outbox: Vec::new(),
            context_request: None,
            switching: None,
            next_id: 1,
            now,
            opened_at: now,
            size,
            quit: false,
            dirty: true,
        }
    }

    pub fn theme(&self) -> &Theme {
        &self.opts.theme
    }

    pub fn keymap(&self) -> &Keymap {
        &self.opts.keymap
    }

    /// Changes received while frozen and not yet shown.
    pub fn changes_waiting(&self) -> u64 {
        match (&self.shown, &self.latest) {
            (Some(s), Some(l)) => l.seq.saturating_sub(s.seq),
            (None, Some(_)) => 1,
            _ => 0,
        }
    }

    pub fn filter(&self) -> &str {
        self.filters
            .get(&self.screen.kind())
            .map(String::as_str)
            .unwrap_or("")
    }

    /// How a table is sorted: the operator's choice, else its default.
    pub fn sort(&self, kind: ScreenKind) -> Option<Sort> {
        self.sorts
            .get(&kind)
            .copied()
            .or_else(|| Sort::default_for(kind))
    }

    pub fn list_selection(&self, kind: ScreenKind) -> Selection {
        self.lists.get(&kind).copied().unwrap_or_default()
    }

    pub fn in_scope(&self, namespace: &str) -> bool {
        self.namespace.as_deref().is_none_or(|ns| ns == namespace)
    }

    pub fn set_status(&mut self, text: impl Into<String>) {
        self.status = Some(StatusMsg {
            text: text.into(),
            kind: StatusKind::Info,
        });
    }

    /// Why `a` cannot act in this session, if it cannot.
    pub fn actions_unavailable(&self) -> Option<&'static str> {
        match self.actions {
            Actions::ReadOnly => Some("read-only session (--readonly): no actions"),
            Actions::NoClient => Some(
                "actions are unavailable: this session reads snapshot files and has no API client to act through",
            ),
            Actions::Live => None,
        }
    }

    pub fn set_error(&mut self, text: impl Into<String>) {
        self.status = Some(StatusMsg {
            text: text.into(),
            kind: StatusKind::Error,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_stays_visible_and_inside_the_list() {
        let mut s = Selection {
            selected: 30,
            offset: 0,
        };
        s.clamp(50, 10);
        assert_eq!((s.selected, s.offset), (30, 21));
        s.selected = 25;
        s.clamp(50, 10);
        // Moving up inside the window does not scroll.
        assert_eq!(s.offset, 21);
        s.clamp(5, 10);
        assert_eq!((s.selected, s.offset), (4, 0));
        s.clamp(0, 10);
        assert_eq!((s.selected, s.offset), (0, 0));
    }
}
