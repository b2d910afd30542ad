//! `a` and the action dialog's part of `update`: what the selection offers, opening the menu
//! or the dialog, its keys, and the worker's answers. Requests to the API only leave through
//! `App::outbox`.

use super::action_worker::WorkerRequest;
use super::app::{Actions, App, Modal, Pane, Screen};
use super::dialog::{self, Choice, Effect, MenuKey};
use super::keys::ScreenKind;
use super::offer;
use super::select::{self, ChainRow};
use crate::actions::execute::{Outcome, StepEvent};
use crate::actions::rbac::Denied;
use crossterm::event::KeyEvent;

/// What `a` is about on the current screen.
enum Subject {
    One(Choice),
    Many { about: String, choices: Vec<Choice> },
    Nothing(String),
}

fn restore_subject(app: &App, r: &crate::analysis::RestoreView) -> Subject {
    let Some(f) = &app.shown else {
        return Subject::Nothing("no data yet".into());
    };
    Subject::Many {
        about: format!("RestoreJob {}", r.id),
        choices: offer::for_restore(&f.report, r),
    }
}

fn finding_subject(f: Option<&crate::analysis::Finding>) -> Subject {
    match f.map(offer::for_finding) {
        Some(Ok(c)) => Subject::One(c),
        Some(Err(why)) => Subject::Nothing(why),
        None => Subject::Nothing("no finding selected".into()),
    }
}

fn pvc_subject(ns: &str, name: &str) -> Subject {
    Subject::Many {
        about: format!("PVC {ns}/{name}"),
        choices: offer::for_pvc(ns, name),
    }
}

fn disk_subject(app: &App, r: &crate::analysis::RestoreView, disk: &str) -> Subject {
    let Some(f) = &app.shown else {
        return Subject::Nothing("no data yet".into());
    };
    let mut choices = offer::for_pvc(&r.id.namespace, disk);
    choices.extend(offer::for_restore(&f.report, r));
    Subject::Many {
        about: format!("disk {}/{disk} of RestoreJob {}", r.id.namespace, r.id.name),
        choices,
    }
}

fn subject(app: &App) -> Subject {
    let sel = |k| app.list_selection(k).selected;
    match &app.screen {
        Screen::Restores => match select::restores(app).get(sel(ScreenKind::Restores)) {
            Some(r) => restore_subject(app, r),
            None => Subject::Nothing("no restore selected".into()),
        },
        Screen::Findings => finding_subject(
            select::findings(app)
                .get(sel(ScreenKind::Findings))
                .copied(),
        ),
        Screen::Orig => match select::origs(app).get(sel(ScreenKind::Orig)) {
            Some(o) => pvc_subject(&o.namespace, &o.pvc.name),
            None => Subject::Nothing("no -orig PVC selected".into()),
        },
        Screen::Detail(d) => {
            let Some(r) = select::detail(app, &d.id) else {
                return Subject::Nothing(format!("restore {} is not in the current data", d.id));
            };
            let i = d.sel[d.pane.index()].selected;
            match d.pane {
                Pane::Findings => match select::restore_findings(app, r).get(i) {
                    Some(f) if f.action.is_some() => finding_subject(Some(f)),
                    _ => restore_subject(app, r),
                },
                Pane::Disks => match select::chain_rows(r).get(i) {
                    Some(ChainRow::Orig(c)) if c.orig.is_some() => {
                        pvc_subject(&r.id.namespace, &c.orig_name)
                    }
                    // One disk: keep just it (a foreign -orig name on another disk does not
                    // stop this one), then what applies to the whole restore.
                    Some(ChainRow::Disk(c) | ChainRow::Orig(c))
                        if r.driver == crate::analysis::Driver::Velero =>
                    {
                        disk_subject(app, r, &c.disk)
                    }
                    _ => restore_subject(app, r),
                },
                Pane::Steps | Pane::Events | Pane::History => restore_subject(app, r),
            }
        }
        Screen::Events
        | Screen::Yaml(_)
        | Screen::Help { .. }
        | Screen::Backups
        | Screen::Preflight(_) => {
            Subject::Nothing("no actions here: select a restore, a finding or an -orig PVC".into())
        }
    }
}

/// The marked `-orig` PVCs still in the data and in scope, in the table's order.
pub fn marked(app: &App) -> Vec<crate::actions::Target> {
    let Some(f) = &app.shown else {
        return Vec::new();
    };
    let mut v: Vec<&crate::analysis::OrigPvcView> = f
        .report
        .orig_pvcs
        .iter()
        .filter(|o| app.in_scope(&o.namespace))
        .filter(|o| {
            app.marks
                .contains(&(o.namespace.clone(), o.pvc.name.clone()))
        })
        .map(|o| &**o)
        .collect();
    v.sort_by(|a, b| (&a.namespace, &a.pvc.name).cmp(&(&b.namespace, &b.pvc.name)));
    v.into_iter()
        .map(|o| crate::actions::Target::Pvc {
            namespace: o.namespace.clone(),
            name: o.pvc.name.clone(),
        })
        .collect()
}

/// `Space` on the `-orig` screen: mark or unmark the PVC under the cursor.
pub fn on_mark(app: &mut App) {
    if let Some(why) = app.actions_unavailable() {
        app.set_status(why);
        return;
    }
    let Some(key) = select::origs(app)
        .get(app.list_selection(ScreenKind::Orig).selected)
        .map(|o| (o.namespace.clone(), o.pvc.name.clone()))
    else {
        app.set_status("no -orig PVC selected");
        return;
    };
    if !app.marks.remove(&key) {
        app.marks.insert(key);
    }
}

/// `a` on the `-orig` screen with marks: one dialog reclaims them all.
fn open_bulk(app: &mut App, frame: &crate::pipeline::Frame) {
    let targets = marked(app);
    let id = app.next_id;
    app.next_id += super::bulk::ids_needed(targets.len());
    let (b, req) = super::bulk::open(id, &frame.snapshot, &frame.report, targets);
    app.outbox.extend(req);
    app.modal = Some(Modal::Bulk(Box::new(b)));
}

/// `a`: the actions that apply to the selection, planned on the frame on screen.
pub fn on_actions_key(app: &mut App) {
    if let Some(why) = app.actions_unavailable() {
        app.set_status(why);
        return;
    }
    let Some(frame) = app.shown.clone() else {
        app.set_status("no data yet: nothing to act on");
        return;
    };
    if app.screen == Screen::Backups {
        super::backup_preflight::on_actions_key(app);
        return;
    }
    if app.screen == Screen::Orig && !marked(app).is_empty() {
        open_bulk(app, &frame);
        return;
    }
    let (snap, report) = (&frame.snapshot, &frame.report);
    match subject(app) {
        Subject::Nothing(why) => app.set_status(why),
        Subject::One(c) => {
            let planned = offer::plan_choice(snap, report, &c);
            open_dialog(app, c, planned);
        }
        Subject::Many { about, choices } => {
            if choices.is_empty() {
                app.set_status(format!("no action applies to {about}"));
                return;
            }
            let mut menu = offer::menu(snap, report, about, choices);
            if menu.entries.len() == 1 {
                let e = menu.entries.remove(0);
                open_dialog(app, e.choice, e.planned);
            } else {
                app.modal = Some(Modal::Menu(menu));
            }
        }
    }
}

fn open_dialog(app: &mut App, choice: Choice, planned: dialog::Planned) {
    let id = app.next_id;
    app.next_id += 1;
    let (d, req) = dialog::open(id, choice, planned);
    app.outbox.extend(req);
    app.modal = Some(Modal::Action(Box::new(d)));
}

/// A key while the menu or the dialog is open.
pub fn on_modal_key(app: &mut App, k: KeyEvent) {
    match app.modal.as_mut() {
        None => {}
        Some(Modal::Bulk(b)) => {
            let (effect, req) = super::bulk::key(b, &k);
            let finished = matches!(b.stage, super::bulk::Stage::Finished);
            app.outbox.extend(req);
            match effect {
                Effect::Close(text) => {
                    app.modal = None;
                    // What ran is done with: the reclaimed are gone, the refused are listed in
                    // the result the operator just read.
                    if finished {
                        app.marks.clear();
                    }
                    app.set_status(text);
                }
                Effect::Say(text) => app.set_status(text),
                _ => {}
            }
        }
        Some(Modal::Menu(m)) => match dialog::menu_key(m, &k) {
            MenuKey::Stay => {}
            MenuKey::Close => app.modal = None,
            MenuKey::Open(i) => {
                if let Some(e) = m.entries.get(i).cloned() {
                    open_dialog(app, e.choice, e.planned);
                }
            }
        },
        Some(Modal::Action(d)) => match dialog::dialog_key(d, &k) {
            Effect::None => {}
            Effect::Say(text) => app.set_status(text),
            Effect::Close(text) => {
                app.modal = None;
                if text.is_empty() {
                    app.status = None;
                } else {
                    app.set_status(text);
                }
            }
            Effect::Send(req) => {
                app.status = None;
                app.outbox.push(req);
            }
            Effect::PlanDiscarding => {
                let Some(frame) = app.shown.clone() else {
                    return;
                };
                if let Some(Modal::Action(d)) = app.modal.as_mut() {
                    let consents = offer::Consents {
                        discard_only_copy: true,
                        ..d.consents
                    };
                    let planned =
                        offer::plan_with(&frame.snapshot, &frame.report, &d.choice, consents);
                    let req = dialog::after_discard(d, planned);
                    app.outbox.extend(req);
                }
            }
            Effect::PlanLeaving => {
                let Some(frame) = app.shown.clone() else {
                    return;
                };
                if let Some(Modal::Action(d)) = app.modal.as_mut() {
                    let consents = offer::Consents {
                        leave_running: true,
                        ..d.consents
                    };
                    let planned =
                        offer::plan_with(&frame.snapshot, &frame.report, &d.choice, consents);
                    let req = dialog::after_leave(d, planned);
                    app.outbox.extend(req);
                }
            }
            Effect::PlanWithPolicy(policy) => {
                let Some(frame) = app.shown.clone() else {
                    return;
                };
                if let Some(Modal::Action(d)) = app.modal.as_mut() {
                    let req = dialog::replan_with_policy(d, &frame.snapshot, policy);
                    app.outbox.extend(req);
                }
            }
        },
    }
}

/// The mouse wheel over an open dialog scrolls it (or moves the menu's cursor).
pub fn on_modal_scroll(app: &mut App, delta: isize) {
    match app.modal.as_mut() {
        Some(Modal::Menu(m)) => {
            let last = m.entries.len().saturating_sub(1) as isize;
            m.selected = (m.selected as isize + delta.signum()).clamp(0, last) as usize;
        }
        Some(Modal::Action(d)) => {
            let s = i64::from(d.scroll) + delta as i64;
            d.scroll = s.clamp(0, i64::from(u16::MAX)) as u16;
        }
        Some(Modal::Bulk(b)) => {
            let s = i64::from(b.scroll) + delta as i64;
            b.scroll = s.clamp(0, i64::from(u16::MAX)) as u16;
        }
        None => {}
    }
}

fn dialog_with(app: &mut App, id: u64) -> Option<&mut dialog::Dialog> {
    match app.modal.as_mut() {
        Some(Modal::Action(d)) if d.id == id => Some(d),
        _ => None,
    }
}

fn bulk_with(app: &mut App, id: u64) -> Option<&mut super::bulk::Bulk> {
    match app.modal.as_mut() {
        Some(Modal::Bulk(b)) if b.owns(id) => Some(b),
        _ => None,
    }
}

pub fn on_checked(app: &mut App, id: u64, result: Result<Vec<Denied>, String>) {
    if let Some(b) = bulk_with(app, id) {
        super::bulk::on_checked(b, id, result);
        return;
    }
    if let Some(d) = dialog_with(app, id) {
        dialog::on_checked(d, result);
    }
}

pub fn on_step(app: &mut App, id: u64, event: StepEvent) {
    if let StepEvent::RecordFailed(msg) = &event {
        // Said at once in the status line too, dialog or not.
        app.set_status(msg.clone());
    }
    if let Some(b) = bulk_with(app, id) {
        super::bulk::on_step(b, id, event);
        return;
    }
    if let Some(d) = dialog_with(app, id) {
        dialog::on_step(d, event);
    }
}

pub fn on_done(app: &mut App, id: u64, outcome: Outcome) {
    let line = dialog::outcome_line(&outcome);
    if let Some(b) = bulk_with(app, id) {
        let target = b
            .items
            .get((id - b.id).saturating_sub(1) as usize)
            .map(|i| i.target.to_string())
            .unwrap_or_default();
        let next = super::bulk::on_done(b, id, outcome);
        let (ok, no, left) = b.tally();
        app.outbox.extend(next);
        app.set_status(format!(
            "reclaim-orig {target}: {line} ({ok} reclaimed, {no} refused, {left} to go)"
        ));
        return;
    }
    match dialog_with(app, id) {
        Some(d) => {
            let what = d.choice.action;
            let problems = d.problems.join("; ");
            dialog::on_done(d, outcome);
            if problems.is_empty() {
                app.set_status(format!("{what}: {line}"));
            } else {
                app.set_status(format!("{what}: {line}; {problems}"));
            }
        }
        // The dialog is gone (it cannot be closed while running, but never lose a result).
        None => app.set_status(format!("action finished: {line}")),
    }
}

/// The requests `update` left for the worker; the terminal loop sends them.
pub fn take_requests(app: &mut App) -> Vec<WorkerRequest> {
    std::mem::take(&mut app.outbox)
}

/// Whether the `a` key should be offered in help and hints.
pub fn offered(app: &App) -> bool {
    app.actions != Actions::ReadOnly
}
