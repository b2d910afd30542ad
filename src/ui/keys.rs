//! The one keymap: every binding (keys, action, description, screens) lives in `DEFAULTS`.
//! Key dispatch, the `?` help and config overrides all read this table, so a key can never do
//! one thing while the help says another.

use super::sort::SortCol;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::collections::BTreeMap;

/// What a key asks for, independent of which key it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    Up,
    Down,
    Top,
    Bottom,
    PageUp,
    PageDown,
    Open,
    Back,
    NextPane,
    PrevPane,
    Filter,
    Command,
    Help,
    Yaml,
    Freeze,
    Actions,
    /// Mark the `-orig` PVC under the cursor for a bulk reclaim (again unmarks).
    Mark,
    /// The restore's history pane: Events, field managers, changes seen.
    History,
    /// Write the selected restore's report to a file.
    Export,
    /// Sort the table by a column; again reverses.
    Sort(SortCol),
    Quit,
}

impl Action {
    /// The name used in `[keys]` of the config file.
    pub fn name(self) -> &'static str {
        match self {
            Action::Up => "up",
            Action::Down => "down",
            Action::Top => "top",
            Action::Bottom => "bottom",
            Action::PageUp => "page-up",
            Action::PageDown => "page-down",
            Action::Open => "open",
            Action::Back => "back",
            Action::NextPane => "next-pane",
            Action::PrevPane => "prev-pane",
            Action::Filter => "filter",
            Action::Command => "command",
            Action::Help => "help",
            Action::Yaml => "yaml",
            Action::Freeze => "freeze",
            Action::Actions => "actions",
            Action::Mark => "mark",
            Action::History => "history",
            Action::Export => "export",
            Action::Sort(c) => c.name(),
            Action::Quit => "quit",
        }
    }
}

/// The kinds of screen, for "where does this key work".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ScreenKind {
    Restores,
    Detail,
    Findings,
    Orig,
    Events,
    Yaml,
    Help,
    Backups,
    Preflight,
}

impl ScreenKind {
    pub fn label(self) -> &'static str {
        match self {
            ScreenKind::Restores => "restores",
            ScreenKind::Detail => "restore",
            ScreenKind::Findings => "findings",
            ScreenKind::Orig => "orig",
            ScreenKind::Events => "events",
            ScreenKind::Yaml => "yaml",
            ScreenKind::Help => "help",
            ScreenKind::Backups => "backups",
            ScreenKind::Preflight => "preflight",
        }
    }
}

use ScreenKind as S;
const ALL: &[ScreenKind] = &[
    S::Restores,
    S::Detail,
    S::Findings,
    S::Orig,
    S::Events,
    S::Yaml,
    S::Help,
    S::Backups,
    S::Preflight,
];
const LISTS: &[ScreenKind] = &[
    S::Restores,
    S::Findings,
    S::Orig,
    S::Events,
    S::Detail,
    S::Backups,
];

/// A key with its modifiers, as written in the config (`ctrl-c`, `G`, `pgdn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeySpec {
    pub code: KeyCode,
    pub ctrl: bool,
}

impl KeySpec {
    pub fn parse(s: &str) -> Result<KeySpec, String> {
        let (ctrl, rest) = match s.strip_prefix("ctrl-").or_else(|| s.strip_prefix("C-")) {
            Some(r) => (true, r),
            None => (false, s),
        };
        let code = match rest.to_ascii_lowercase().as_str() {
            "enter" | "return" => KeyCode::Enter,
            "esc" | "escape" => KeyCode::Esc,
            "tab" => KeyCode::Tab,
            "backtab" | "shift-tab" => KeyCode::BackTab,
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "pgup" | "pageup" => KeyCode::PageUp,
            "pgdn" | "pagedown" => KeyCode::PageDown,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "space" => KeyCode::Char(' '),
            "backspace" => KeyCode::Backspace,
            f if f.len() > 1 && f.starts_with('f') && f[1..].parse::<u8>().is_ok() => {
                KeyCode::F(f[1..].parse().unwrap_or(1))
            }
            _ => {
                let mut chars = rest.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => KeyCode::Char(c),
                    _ => return Err(format!("unknown key {s:?}")),
                }
            }
        };
        Ok(KeySpec { code, ctrl })
    }

    pub fn matches(&self, ev: &KeyEvent) -> bool {
        // SHIFT is part of the character itself (`G`), so only CONTROL is compared.
        self.code == ev.code && self.ctrl == ev.modifiers.contains(KeyModifiers::CONTROL)
    }

    pub fn label(&self) -> String {
        let k = match self.code {
            KeyCode::Enter => "enter".to_string(),
            KeyCode::Esc => "esc".into(),
            KeyCode::Tab => "tab".into(),
            KeyCode::BackTab => "shift-tab".into(),
            KeyCode::Up => "↑".into(),
            KeyCode::Down => "↓".into(),
            KeyCode::Left => "←".into(),
            KeyCode::Right => "→".into(),
            KeyCode::PageUp => "pgup".into(),
            KeyCode::PageDown => "pgdn".into(),
            KeyCode::Home => "home".into(),
            KeyCode::End => "end".into(),
            KeyCode::Backspace => "backspace".into(),
            KeyCode::F(n) => format!("f{n}"),
            KeyCode::Char(' ') => "space".into(),
            KeyCode::Char(c) => c.to_string(),
            _ => "?".into(),
        };
        if self.ctrl { format!("ctrl-{k}") } else { k }
    }
}

#[derive(Debug, Clone)]
pub struct Binding {
    pub keys: Vec<KeySpec>,
    pub action: Action,
    pub description: &'static str,
    pub screens: &'static [ScreenKind],
}

impl Binding {
    pub fn keys_label(&self) -> String {
        let labels: Vec<_> = self.keys.iter().map(KeySpec::label).collect();
        labels.join("/")
    }
}

type Default_ = (
    &'static [&'static str],
    Action,
    &'static str,
    &'static [ScreenKind],
);

/// The keymap. Order is the order of the help screen.
const DEFAULTS: &[Default_] = &[
    (&["k", "up"], Action::Up, "move up", ALL),
    (&["j", "down"], Action::Down, "move down", ALL),
    (&["g", "home"], Action::Top, "go to the top", ALL),
    (&["G", "end"], Action::Bottom, "go to the bottom", ALL),
    (&["pgup", "ctrl-b"], Action::PageUp, "page up", ALL),
    (&["pgdn", "ctrl-f"], Action::PageDown, "page down", ALL),
    (
        &["enter"],
        Action::Open,
        "open: the restore of the row; in a restore, the YAML of the line",
        &[S::Restores, S::Findings, S::Orig, S::Events, S::Detail],
    ),
    (
        &["esc"],
        Action::Back,
        "clear the filter, else go back",
        ALL,
    ),
    (
        &["tab"],
        Action::NextPane,
        "next pane: steps, disks, events, findings, history",
        &[S::Detail],
    ),
    (
        &["shift-tab"],
        Action::PrevPane,
        "previous pane",
        &[S::Detail],
    ),
    (
        &["h"],
        Action::History,
        "history of the restore: events, who wrote each object, the changes seen",
        &[S::Restores, S::Detail],
    ),
    (
        &["/"],
        Action::Filter,
        "filter the table (live, any case)",
        LISTS,
    ),
    (&[":"], Action::Command, "command line (tab completes)", ALL),
    (&["?"], Action::Help, "this help", ALL),
    (
        &["y"],
        Action::Yaml,
        "YAML of the selected object",
        &[
            S::Restores,
            S::Detail,
            S::Findings,
            S::Orig,
            S::Events,
            S::Backups,
        ],
    ),
    (
        &["f"],
        Action::Freeze,
        "freeze the view / catch up with the changes waiting",
        ALL,
    ),
    (
        &["a"],
        Action::Actions,
        "repair actions: the plan, then confirm by name",
        &[S::Restores, S::Detail, S::Findings, S::Orig, S::Backups],
    ),
    (
        &["space"],
        Action::Mark,
        "mark/unmark the -orig PVC; a reclaims every marked one",
        &[S::Orig],
    ),
    (
        &["F"],
        Action::Sort(SortCol::Findings),
        "sort worst first (default); a sort key again reverses",
        SortCol::Findings.screens(),
    ),
    (
        &["N"],
        Action::Sort(SortCol::Name),
        "sort by name",
        SortCol::Name.screens(),
    ),
    (
        &["P"],
        Action::Sort(SortCol::Namespace),
        "sort by namespace",
        SortCol::Namespace.screens(),
    ),
    (
        &["A"],
        Action::Sort(SortCol::Age),
        "sort by age, newest first",
        SortCol::Age.screens(),
    ),
    (
        &["S"],
        Action::Sort(SortCol::Status),
        "sort by phase",
        SortCol::Status.screens(),
    ),
    (
        &["T"],
        Action::Sort(SortCol::Target),
        "sort by target",
        SortCol::Target.screens(),
    ),
    (
        &["L"],
        Action::Sort(SortCol::Deadline),
        "sort by deadline, least time left first",
        SortCol::Deadline.screens(),
    ),
    (
        &["C"],
        Action::Sort(SortCol::Code),
        "sort by finding code",
        SortCol::Code.screens(),
    ),
    (
        &["R"],
        Action::Sort(SortCol::Restore),
        "sort by restore",
        SortCol::Restore.screens(),
    ),
    (
        &["Z"],
        Action::Sort(SortCol::Size),
        "sort by size, biggest first",
        SortCol::Size.screens(),
    ),
    (
        &["e"],
        Action::Export,
        "write the restore's report (Markdown) to a file",
        &[S::Restores, S::Detail],
    ),
    (&["q"], Action::Quit, "quit (also ctrl-c)", ALL),
];

/// The commands of the `:` line, for completion and help.
pub const COMMANDS: &[(&str, &str)] = &[
    ("restores", "all restores"),
    ("findings", "all findings, worst first"),
    ("orig", "-orig PVCs and whether they can be reclaimed"),
    ("events", "events of every restore"),
    (
        "backups",
        "Backups, and a preflight of a restore from one (a)",
    ),
    (
        "ns",
        "ns NAME: only this namespace; ns all: every namespace",
    ),
    (
        "ctx",
        "ctx NAME: switch to another kubeconfig context (tab completes)",
    ),
    ("help", "this help"),
    ("q", "quit"),
];

#[derive(Debug, Clone)]
pub struct Keymap {
    pub bindings: Vec<Binding>,
}

impl Default for Keymap {
    fn default() -> Self {
        let bindings = DEFAULTS
            .iter()
            .map(|(keys, action, description, screens)| Binding {
                // The defaults are literals checked by a test; a bad one is simply skipped.
                keys: keys.iter().filter_map(|k| KeySpec::parse(k).ok()).collect(),
                action: *action,
                description,
                screens,
            })
            .collect();
        Keymap { bindings }
    }
}

impl Keymap {
    /// The defaults with `[keys]` overrides applied: `action-name = "key"` or `["k1", "k2"]`
    /// replaces that action's keys. Every problem is reported, not only the first.
    pub fn with_overrides(overrides: &BTreeMap<String, Vec<String>>) -> Result<Keymap, String> {
        let mut map = Keymap::default();
        let mut errors = Vec::new();
        for (name, keys) in overrides {
            let Some(b) = map.bindings.iter_mut().find(|b| b.action.name() == name) else {
                let known: Vec<_> = DEFAULTS.iter().map(|d| d.1.name()).collect();
                errors.push(format!(
                    "[keys] {name}: no such action (one of: {})",
                    known.join(", ")
                ));
                continue;
            };
            let mut parsed = Vec::new();
            for k in keys {
                match KeySpec::parse(k) {
                    Ok(k) => parsed.push(k),
                    Err(e) => errors.push(format!("[keys] {name}: {e}")),
                }
            }
            b.keys = parsed;
        }
        if errors.is_empty() {
            Ok(map)
        } else {
            Err(errors.join("; "))
        }
    }

    pub fn action_for(&self, screen: ScreenKind, ev: &KeyEvent) -> Option<Action> {
        self.bindings
            .iter()
            .find(|b| b.screens.contains(&screen) && b.keys.iter().any(|k| k.matches(ev)))
            .map(|b| b.action)
    }

    pub fn binding(&self, action: Action) -> Option<&Binding> {
        self.bindings.iter().find(|b| b.action == action)
    }

    /// The first key of an action, for hints (`<enter> open`).
    pub fn key_label(&self, action: Action) -> String {
        self.binding(action)
            .and_then(|b| b.keys.first())
            .map(KeySpec::label)
            .unwrap_or_else(|| "-".into())
    }

    /// Bindings that work on a screen, for hints and help.
    pub fn for_screen(&self, screen: ScreenKind) -> impl Iterator<Item = &Binding> {
        self.bindings
            .iter()
            .filter(move |b| b.screens.contains(&screen))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_key_parses_and_no_key_is_bound_twice_on_a_screen() {
        for (keys, ..) in DEFAULTS {
            for k in *keys {
                assert!(KeySpec::parse(k).is_ok(), "{k}");
            }
        }
        let map = Keymap::default();
        for s in ALL {
            let mut seen: Vec<KeySpec> = Vec::new();
            for b in map.for_screen(*s) {
                for k in &b.keys {
                    assert!(!seen.contains(k), "{} bound twice on {s:?}", k.label());
                    seen.push(*k);
                }
            }
        }
    }

    #[test]
    fn overrides_replace_keys_and_unknown_names_are_reported() {
        let mut o = BTreeMap::new();
        o.insert("down".to_string(), vec!["n".to_string()]);
        let map = Keymap::with_overrides(&o).expect("valid override");
        let n = KeyEvent::new(KeyCode::Char('n'), KeyModifiers::NONE);
        let j = KeyEvent::new(KeyCode::Char('j'), KeyModifiers::NONE);
        assert_eq!(map.action_for(S::Restores, &n), Some(Action::Down));
        assert_eq!(map.action_for(S::Restores, &j), None);
        o.insert("dwon".to_string(), vec!["x".to_string()]);
        let e = Keymap::with_overrides(&o).expect_err("typo");
        assert!(e.contains("dwon"), "{e}");
    }

    #[test]
    fn shift_letters_and_ctrl_keys_match() {
        let map = Keymap::default();
        let big_g = KeyEvent::new(KeyCode::Char('G'), KeyModifiers::SHIFT);
        assert_eq!(map.action_for(S::Restores, &big_g), Some(Action::Bottom));
        let ctrl_f = KeyEvent::new(KeyCode::Char('f'), KeyModifiers::CONTROL);
        assert_eq!(map.action_for(S::Restores, &ctrl_f), Some(Action::PageDown));
        let f = KeyEvent::new(KeyCode::Char('f'), KeyModifiers::NONE);
        assert_eq!(map.action_for(S::Restores, &f), Some(Action::Freeze));
    }
}
