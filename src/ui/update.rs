//! `Event -> Msg` and `update(&mut App, Msg)`: the only place the UI state changes.

use super::action_worker::{ActionBackend, WorkerRequest};
use super::app::{
    App, CommandLine, DetailState, Mode, Pane, Screen, Selection, YamlFetch, YamlState,
};
use super::keys::{Action, ScreenKind};
use super::{act, command, format, select, views::layout};
use crate::actions::execute::{Outcome, StepEvent};
use crate::actions::rbac::Denied;
use crate::analysis::{ObjRef, RestoreId};
use crate::pipeline::Frame;
use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use jiff::Timestamp;
use std::sync::Arc;

/// How many rows one wheel notch moves.
const WHEEL_ROWS: isize = 3;
/// Screens `Esc` can go back through; older ones are forgotten.
const MAX_STACK: usize = 32;

#[derive(Debug, Clone)]
pub enum Msg {
    Action(Action),
    /// A key typed into the filter, the command line or a dialog.
    Input(KeyEvent),
    /// Ctrl-C: always quits, whatever mode.
    Quit,
    Click {
        column: u16,
        row: u16,
    },
    Scroll(isize),
    Resize(u16, u16),
    Frame(Option<Arc<Frame>>),
    Tick(Timestamp),
    /// The action worker: the permission checks of dialog `id` (the writes denied, or why the
    /// check itself failed).
    ActionChecked {
        id: u64,
        result: Result<Vec<Denied>, String>,
    },
    /// The action worker: a step of dialog `id`'s execution started, finished or conflicted.
    ActionStep {
        id: u64,
        event: StepEvent,
    },
    /// The action worker: the preflight screen `id` asked for.
    PreflightDone {
        id: u64,
        result: Result<super::backup_preflight::PreflightAnswer, String>,
    },
    /// The action worker: the object the YAML view `id` asked for, read whole, or why not.
    Fetched {
        id: u64,
        result: Result<super::select::Fetched, String>,
    },
    /// The action worker: dialog `id`'s execution ended.
    ActionDone {
        id: u64,
        outcome: Outcome,
    },
    /// `:ctx`: the new context is connected and watched (with its action client, if any), or
    /// why not. Its frames follow as `Frame`s.
    ContextSwitched {
        context: String,
        result: Result<Option<ActionBackend>, String>,
    },
}

/// Translates a terminal event for the current state; `None` for what the UI ignores (so an
/// unbound key costs no redraw).
pub fn event_to_msg(app: &App, ev: &Event) -> Option<Msg> {
    match ev {
        Event::Key(k) if k.kind != KeyEventKind::Release => {
            if k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL) {
                return Some(Msg::Quit);
            }
            if app.modal.is_some() || app.mode != Mode::Normal {
                return Some(Msg::Input(*k));
            }
            app.keymap()
                .action_for(app.screen.kind(), k)
                .map(Msg::Action)
        }
        Event::Mouse(MouseEvent {
            kind, column, row, ..
        }) => match kind {
            MouseEventKind::Down(MouseButton::Left) => Some(Msg::Click {
                column: *column,
                row: *row,
            }),
            MouseEventKind::ScrollUp => Some(Msg::Scroll(-WHEEL_ROWS)),
            MouseEventKind::ScrollDown => Some(Msg::Scroll(WHEEL_ROWS)),
            _ => None,
        },
        Event::Resize(w, h) => Some(Msg::Resize(*w, *h)),
        _ => None,
    }
}

pub fn update(app: &mut App, msg: Msg) {
    match msg {
        Msg::Frame(f) => on_frame(app, f),
        Msg::Tick(now) => {
            // Only a change of what a clock on screen says is worth a redraw.
            let before = format::clock(app.now, &app.opts.tz);
            app.now = now;
            if format::clock(now, &app.opts.tz) != before {
                app.dirty = true;
            }
        }
        Msg::Resize(w, h) => {
            app.size = (w, h);
            clamp_current(app);
            app.dirty = true;
        }
        Msg::Quit => app.quit = true,
        Msg::Action(a) => {
            app.status = None;
            on_action(app, a);
            app.dirty = true;
        }
        Msg::Input(k) => {
            on_input(app, k);
            app.dirty = true;
        }
        Msg::Scroll(d) => {
            if app.modal.is_some() {
                act::on_modal_scroll(app, d);
            } else {
                move_cursor(app, d);
            }
            app.dirty = true;
        }
        Msg::Click { column, row } => {
            if app.modal.is_none() {
                on_click(app, column, row);
            }
            app.dirty = true;
        }
        Msg::ActionChecked { id, result } => {
            act::on_checked(app, id, result);
            app.dirty = true;
        }
        Msg::ActionStep { id, event } => {
            act::on_step(app, id, event);
            app.dirty = true;
        }
        Msg::PreflightDone { id, result } => super::backup_preflight::on_done(app, id, result),
        Msg::Fetched { id, result } => {
            on_fetched(app, id, result);
            app.dirty = true;
        }
        Msg::ActionDone { id, outcome } => {
            act::on_done(app, id, outcome);
            app.dirty = true;
        }
        Msg::ContextSwitched { context, result } => {
            on_context_switched(app, context, result);
            app.dirty = true;
        }
    }
}

fn on_context_switched(
    app: &mut App,
    context: String,
    result: Result<Option<ActionBackend>, String>,
) {
    app.switching = None;
    match result {
        Ok(backend) => {
            let old = app.opts.context.replace(context.clone());
            // Nothing of the old context may be shown as the new one's: start from its
            // restores list, empty until the new watches sync.
            app.shown = None;
            app.latest = None;
            // "connecting to <server>" named the first context's server.
            app.opts.connecting_to = None;
            app.frozen = false;
            app.screen = Screen::Restores;
            app.stack.clear();
            app.lists.clear();
            app.modal = None;
            if app.opts.actions.is_some() {
                app.opts.actions = backend;
            }
            let from = old.map(|o| format!(" (was {o})")).unwrap_or_default();
            app.set_status(format!("context {context}{from}: watching"));
        }
        Err(e) => {
            let shown = app.opts.context.as_deref().unwrap_or("the current one");
            app.set_error(format!(
                "cannot switch to context {context}: {e}; still showing {shown}"
            ));
        }
    }
}

fn on_frame(app: &mut App, f: Option<Arc<Frame>>) {
    let old = std::mem::replace(&mut app.latest, f);
    app.retire(old);
    if !app.frozen {
        show_latest(app);
    }
    // Frozen: the header's count of waiting changes moved, so redraw anyway.
    app.dirty = true;
}

fn show_latest(app: &mut App) {
    let old = std::mem::replace(&mut app.shown, app.latest.clone());
    app.retire(old);
    if let Screen::Yaml(y) = &app.screen {
        let target = y.target.clone();
        refresh_yaml(app, &target);
    }
    clamp_current(app);
}

/// Renders the YAML view of `target` from the frame shown; an object whose text the watch
/// does not keep is read from the API server (again when the watch has seen it change since
/// the last read), its held fields shown meanwhile or if the read fails.
fn refresh_yaml(app: &mut App, target: &ObjRef) {
    let view = match &app.shown {
        Some(f) => select::yaml_view(&f.snapshot, target),
        None => Err("no data yet".into()),
    };
    let Screen::Yaml(y) = &mut app.screen else {
        return;
    };
    match view {
        Ok(select::YamlView::Text(text)) => {
            y.text = Ok(text);
            y.fetch = YamlFetch::NotNeeded;
        }
        Ok(select::YamlView::Held {
            yaml,
            resource_version,
        }) => {
            let current = match &y.fetch {
                YamlFetch::Done(f) => f.resource_version == resource_version,
                YamlFetch::Pending {
                    resource_version: r,
                    ..
                } => *r == resource_version,
                // Read again only once the object changed: a failing server is not asked on
                // every frame.
                YamlFetch::Failed {
                    resource_version: r,
                    ..
                } => *r == resource_version,
                YamlFetch::NotNeeded => false,
            };
            if !current {
                let id = app.next_id;
                app.next_id += 1;
                app.outbox.push(WorkerRequest::Fetch {
                    id,
                    target: target.clone(),
                });
                y.fetch = YamlFetch::Pending {
                    id,
                    resource_version,
                };
            }
            match &y.fetch {
                YamlFetch::Done(f) => y.text = Ok(f.yaml.clone()),
                _ => y.text = Ok(yaml),
            }
        }
        Err(e) => {
            y.text = Err(e);
            y.fetch = YamlFetch::NotNeeded;
        }
    }
}

fn on_fetched(app: &mut App, id: u64, result: Result<select::Fetched, String>) {
    let Screen::Yaml(y) = &mut app.screen else {
        return;
    };
    let YamlFetch::Pending {
        id: asked,
        resource_version,
    } = &y.fetch
    else {
        return;
    };
    if *asked != id {
        return;
    }
    match result {
        Ok(f) => {
            y.text = Ok(f.yaml.clone());
            y.fetch = YamlFetch::Done(f);
        }
        Err(error) => {
            y.fetch = YamlFetch::Failed {
                error,
                resource_version: resource_version.clone(),
            };
        }
    }
}

/// Keeps the cursor of the current screen on an existing, visible row.
pub(super) fn clamp_current(app: &mut App) {
    let len = select::table_len(app);
    let h = layout::rows_height(app);
    match &mut app.screen {
        Screen::Restores | Screen::Findings | Screen::Orig | Screen::Events | Screen::Backups => {
            let k = app.screen.kind();
            app.lists.entry(k).or_default().clamp(len, h);
        }
        Screen::Detail(d) => d.sel[d.pane.index()].clamp(len, h),
        Screen::Yaml(y) => y.scroll = y.scroll.min(len.saturating_sub(h)),
        Screen::Preflight(p) => p.scroll = p.scroll.min(len.saturating_sub(h)),
        Screen::Help { scroll } => *scroll = (*scroll).min(len.saturating_sub(h)),
    }
}

fn move_cursor(app: &mut App, delta: isize) {
    let len = select::table_len(app);
    match &mut app.screen {
        Screen::Restores | Screen::Findings | Screen::Orig | Screen::Events | Screen::Backups => {
            let k = app.screen.kind();
            app.lists.entry(k).or_default().move_by(delta, len);
        }
        Screen::Detail(d) => d.sel[d.pane.index()].move_by(delta, len),
        // Text screens scroll the view itself.
        Screen::Yaml(YamlState { scroll, .. }) | Screen::Help { scroll } => {
            *scroll = (*scroll as isize + delta).max(0) as usize;
        }
        Screen::Preflight(p) => p.scroll = (p.scroll as isize + delta).max(0) as usize,
    }
    clamp_current(app);
}

pub(super) fn push(app: &mut App, screen: Screen) {
    let old = std::mem::replace(&mut app.screen, screen);
    app.stack.push(old);
    if app.stack.len() > MAX_STACK {
        app.stack.remove(0);
    }
    app.mode = Mode::Normal;
    clamp_current(app);
}

/// Goes to a top-level screen, unless already there.
pub(super) fn goto(app: &mut App, screen: Screen) {
    if app.screen.kind() != screen.kind() {
        push(app, screen);
    }
}

fn open_restore(app: &mut App, id: Option<RestoreId>, what: &str) {
    open_restore_on(app, id, what, Pane::Steps);
}

fn open_restore_on(app: &mut App, id: Option<RestoreId>, what: &str, pane: Pane) {
    match id {
        Some(id) if select::detail(app, &id).is_some() => {
            // The timeline opens on the step that matters: a finding's, else the current one;
            // the history on its newest line.
            let (first, newest) = select::detail(app, &id).map_or((0, 0), |r| {
                (
                    select::first_step(app, r),
                    r.history.len().saturating_sub(1),
                )
            });
            let mut sel = [Selection::default(); Pane::ALL.len()];
            sel[Pane::Steps.index()].selected = first;
            sel[Pane::History.index()].selected = newest;
            push(app, Screen::Detail(DetailState { id, pane, sel }));
        }
        Some(id) => app.set_error(format!("restore {id} is not in the current data")),
        None => app.set_status(format!("this {what} is not about one restore")),
    }
}

fn open_yaml(app: &mut App, target: Option<ObjRef>) {
    let Some(target) = target else {
        app.set_status("nothing selected");
        return;
    };
    push(
        app,
        Screen::Yaml(YamlState {
            target: target.clone(),
            text: Err("no data yet".into()),
            scroll: 0,
            fetch: YamlFetch::NotNeeded,
        }),
    );
    refresh_yaml(app, &target);
}

fn on_action(app: &mut App, a: Action) {
    let page = layout::rows_height(app).max(1) as isize;
    match a {
        Action::Up => move_cursor(app, -1),
        Action::Down => move_cursor(app, 1),
        Action::PageUp => move_cursor(app, -page),
        Action::PageDown => move_cursor(app, page),
        Action::Top => move_cursor(app, isize::MIN / 2),
        Action::Bottom => move_cursor(app, isize::MAX / 2),
        Action::Open => on_open(app),
        Action::Back => {
            let k = app.screen.kind();
            if app.filters.get(&k).is_some_and(|f| !f.is_empty()) {
                app.filters.remove(&k);
                clamp_current(app);
            } else if let Some(prev) = app.stack.pop() {
                app.screen = prev;
                clamp_current(app);
            }
        }
        Action::NextPane | Action::PrevPane => {
            if let Screen::Detail(d) = &mut app.screen {
                d.pane = if a == Action::NextPane {
                    d.pane.next()
                } else {
                    d.pane.prev()
                };
            }
            clamp_current(app);
        }
        Action::History => match &mut app.screen {
            Screen::Detail(d) => {
                d.pane = Pane::History;
                clamp_current(app);
            }
            Screen::Restores => {
                let id = select::restores(app)
                    .get(app.list_selection(ScreenKind::Restores).selected)
                    .map(|r| r.id.clone());
                open_restore_on(app, id, "row", Pane::History);
            }
            _ => {}
        },
        Action::Filter => {
            app.mode = Mode::Filter;
            app.filters.entry(app.screen.kind()).or_default();
        }
        Action::Command => app.mode = Mode::Command(CommandLine::default()),
        Action::Help => {
            if app.screen.kind() != ScreenKind::Help {
                push(app, Screen::Help { scroll: 0 });
            }
        }
        Action::Yaml => {
            let target = select::selected_object(app);
            open_yaml(app, target);
        }
        Action::Freeze => {
            app.frozen = !app.frozen;
            if !app.frozen {
                show_latest(app);
            }
        }
        Action::Actions => act::on_actions_key(app),
        Action::Mark => act::on_mark(app),
        Action::Export => super::export::on_export_key(app),
        Action::Sort(col) => {
            let kind = app.screen.kind();
            if let Some(cur) = app.sort(kind) {
                let next = cur.pressed(col);
                app.sorts.insert(kind, next);
                // The rows moved: start from the top, as a filter does.
                reset_cursor(app);
            }
        }
        Action::Quit => app.quit = true,
    }
}

fn on_open(app: &mut App) {
    let sel = |app: &App, k| app.list_selection(k).selected;
    match &app.screen {
        Screen::Restores => {
            let id = select::restores(app)
                .get(sel(app, ScreenKind::Restores))
                .map(|r| r.id.clone());
            open_restore(app, id, "row");
        }
        Screen::Findings => {
            let found = select::findings(app)
                .get(sel(app, ScreenKind::Findings))
                .map(|f| f.restore.clone());
            if let Some(id) = found {
                open_restore(app, id, "finding");
            }
        }
        Screen::Orig => {
            let found = select::origs(app)
                .get(sel(app, ScreenKind::Orig))
                .map(|o| o.restore.clone());
            if let Some(id) = found {
                open_restore(app, id, "-orig PVC (its RestoreJob is unknown or gone)");
            }
        }
        Screen::Events => {
            let id = select::events(app)
                .get(sel(app, ScreenKind::Events))
                .map(|(r, _)| r.id.clone());
            open_restore(app, id, "event");
        }
        Screen::Detail(_) => {
            let target = select::selected_object(app);
            open_yaml(app, target);
        }
        Screen::Yaml(_) | Screen::Help { .. } | Screen::Preflight(_) | Screen::Backups => {}
    }
}

fn on_input(app: &mut App, k: KeyEvent) {
    if app.modal.is_some() {
        act::on_modal_key(app, k);
        return;
    }
    match &mut app.mode {
        Mode::Normal => {}
        Mode::Filter => {
            let kind = app.screen.kind();
            let f = app.filters.entry(kind).or_default();
            match k.code {
                KeyCode::Char(c) => f.push(c),
                KeyCode::Backspace => {
                    f.pop();
                }
                KeyCode::Enter => app.mode = Mode::Normal,
                KeyCode::Esc => {
                    app.filters.remove(&kind);
                    app.mode = Mode::Normal;
                }
                _ => return,
            }
            // The filter changed what is listed: start from the first match.
            reset_cursor(app);
        }
        Mode::Command(cl) => match k.code {
            KeyCode::Char(c) => {
                cl.text.push(c);
                cl.completion = None;
            }
            KeyCode::Backspace => {
                cl.text.pop();
                cl.completion = None;
            }
            KeyCode::Tab => {
                let cands = command::completions(app, &command::current_text(app));
                if let Mode::Command(cl) = &mut app.mode {
                    command::complete(cl, cands);
                }
            }
            KeyCode::Esc => app.mode = Mode::Normal,
            KeyCode::Enter => {
                let text = std::mem::take(&mut cl.text);
                app.mode = Mode::Normal;
                command::run(app, text.trim());
            }
            _ => {}
        },
    }
}

fn reset_cursor(app: &mut App) {
    match &mut app.screen {
        Screen::Detail(d) => d.sel[d.pane.index()] = Selection::default(),
        s => {
            let k = s.kind();
            app.lists.insert(k, Selection::default());
        }
    }
}

fn on_click(app: &mut App, column: u16, row: u16) {
    if let Some(pane) = layout::pane_tab_at(app, column, row) {
        if let Screen::Detail(d) = &mut app.screen {
            d.pane = pane;
        }
        clamp_current(app);
        return;
    }
    let Some(i) = layout::row_at(app, column, row) else {
        return;
    };
    let len = select::table_len(app);
    if i >= len {
        return;
    }
    match &mut app.screen {
        Screen::Restores | Screen::Findings | Screen::Orig | Screen::Events | Screen::Backups => {
            let k = app.screen.kind();
            app.lists.entry(k).or_default().selected = i;
        }
        Screen::Detail(d) => d.sel[d.pane.index()].selected = i,
        Screen::Yaml(_) | Screen::Help { .. } | Screen::Preflight(_) => {}
    }
    clamp_current(app);
}
