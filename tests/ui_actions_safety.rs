//! The action dialog where an action could lose or hide data: the typed consent before
//! discarding what may be the only copy of a disk, a finished rename that only waits for the PV
//! controller's bind (and shows that it waits), and a record (the Event) that could not be made,
//! said in the dialog and the status line.

#[path = "actions_support/mod.rs"]
mod actions_support;
mod common;

use common::action_data::{self, RENAME};
use common::{press, render, typ};
use crossterm::event::KeyCode;
use restorewatch::actions::Plan;
use restorewatch::actions::execute::{Outcome, StepEvent};
use restorewatch::analysis::ActionKind;
use restorewatch::ui::action_worker::WorkerRequest;
use restorewatch::ui::app::{App, Modal};
use restorewatch::ui::dialog::{Dialog, Menu, Planned, Stage};
use restorewatch::ui::{Msg, update};
use serde_json::json;

fn dialog(a: &App) -> &Dialog {
    match &a.modal {
        Some(Modal::Action(d)) => d,
        other => panic!("no action dialog open: {other:?}"),
    }
}

fn menu(a: &App) -> &Menu {
    match &a.modal {
        Some(Modal::Menu(m)) => m,
        other => panic!("no action menu open: {other:?}"),
    }
}

fn shown_plan(a: &App) -> Plan {
    dialog(a).plan().expect("a plan on screen").clone()
}

fn status(a: &App) -> String {
    a.status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default()
}

fn goto(a: &mut App, cmd: &str) {
    press(a, KeyCode::Char(':'));
    typ(a, cmd);
    press(a, KeyCode::Enter);
}

/// The rename-half-done finding's dialog, permissions granted.
fn rename_review(w: u16, h: u16) -> App {
    let mut a = action_data::app(RENAME, w, h);
    goto(&mut a, "findings");
    press(&mut a, KeyCode::Char('a'));
    let id = dialog(&a).id;
    a.outbox.clear();
    update(
        &mut a,
        Msg::ActionChecked {
            id,
            result: Ok(vec![]),
        },
    );
    a
}

fn confirm(a: &mut App) -> Plan {
    let plan = shown_plan(a);
    typ(a, plan.confirm_name());
    press(a, KeyCode::Enter);
    plan
}

// ---- the only copy, the late bind, a record that failed -------------------------------------

/// A failed restore whose -orig PVC (Bound to its Retain PV, Delete recorded) may hold the
/// only good copy of the disk.
fn only_copy_app() -> App {
    use actions_support::*;
    let mut objs = base_objects("Failed");
    objs.extend([
        restored_pvc(),
        pv(
            "Retain",
            ORIG,
            "0e000000-0000-4000-8000-000000000005",
            Some("Delete"),
        ),
        orig_pvc(
            "0e000000-0000-4000-8000-000000000005",
            Some(RJ_UID),
            "Bound",
        ),
    ]);
    action_data::app_on(objs, "2026-11-21T10:00:00Z", 120, 40)
}

fn open_reclaim(a: &mut App) {
    goto(a, "orig");
    press(a, KeyCode::Char('a'));
    if let Some(Modal::Menu(m)) = &a.modal {
        assert_eq!(m.entries[0].choice.action, ActionKind::ReclaimOrig);
        assert!(
            matches!(m.entries[0].planned, Planned::OnlyCopy { .. }),
            "{:?}",
            m.entries[0].planned
        );
        press(a, KeyCode::Enter);
    }
    assert_eq!(dialog(a).choice.action, ActionKind::ReclaimOrig);
}

/// The consent the dialog asks for: it names the PVC it discards.
const CONSENT: &str = "discard vm-disk-data-orig-de3e";

#[test]
fn reclaiming_what_may_be_the_only_copy_needs_a_typed_consent_then_the_name() {
    let mut a = only_copy_app();
    open_reclaim(&mut a);
    assert!(
        matches!(dialog(&a).stage, Stage::ConfirmDiscard(_)),
        "the consent comes first: {:?}",
        dialog(&a).stage
    );
    // Enter alone, or the name instead of the phrase, goes nowhere.
    press(&mut a, KeyCode::Enter);
    typ(&mut a, "vm-disk-data-orig-de3e");
    press(&mut a, KeyCode::Enter);
    assert!(matches!(
        &dialog(&a).stage,
        Stage::ConfirmDiscard(c) if c.mismatch
    ));
    assert!(a.outbox.is_empty(), "{:?}", a.outbox);
    // The phrase opens the plan, made with the consent; the name still confirms it.
    let mut a = only_copy_app();
    open_reclaim(&mut a);
    typ(&mut a, CONSENT);
    press(&mut a, KeyCode::Enter);
    let plan = shown_plan(&a);
    assert!(plan.request.discard_only_copy, "{:?}", plan.request);
    assert!(
        render(&a).contains("discard what may be the only good copy"),
        "{}",
        render(&a)
    );
    assert!(
        plan.notes
            .iter()
            .any(|n| n.contains("discarding it as asked")),
        "{:?}",
        plan.notes
    );
    let id = dialog(&a).id;
    a.outbox.clear();
    update(
        &mut a,
        Msg::ActionChecked {
            id,
            result: Ok(vec![]),
        },
    );
    press(&mut a, KeyCode::Enter);
    assert!(a.outbox.is_empty(), "Enter without the name does nothing");
    let confirmed = confirm(&mut a);
    match a.outbox.as_slice() {
        [WorkerRequest::Execute { plan, .. }] => {
            assert_eq!(**plan, confirmed);
            assert!(plan.request.discard_only_copy);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_consent_names_the_pvc_and_what_is_unknown_and_a_generic_phrase_does_not_consent() {
    let mut a = only_copy_app();
    open_reclaim(&mut a);
    let screen = render(&a);
    // What is unknown (the proof's missing piece) and what the typed words discard.
    assert!(
        screen.contains(
            "restored copy not proven: RestoreJob restore-test that made this copy is Failed, not Succeeded"
        ),
        "{screen}"
    );
    assert!(screen.contains(&format!("type {CONSENT}")), "{screen}");
    // The phrase that once consented for any PVC names none: it consents to nothing.
    typ(&mut a, "discard the only copy");
    press(&mut a, KeyCode::Enter);
    assert!(matches!(
        &dialog(&a).stage,
        Stage::ConfirmDiscard(c) if c.mismatch
    ));
    assert!(dialog(&a).plan().is_none());
    assert!(a.outbox.is_empty(), "{:?}", a.outbox);
    assert!(status(&a).contains(CONSENT), "{}", status(&a));
    // Another PVC's name does not consent to this one either.
    for _ in 0.."discard the only copy".len() {
        press(&mut a, KeyCode::Backspace);
    }
    typ(&mut a, "discard vm-disk-system-orig-de3e");
    press(&mut a, KeyCode::Enter);
    assert!(dialog(&a).plan().is_none());
    for _ in 0.."discard vm-disk-system-orig-de3e".len() {
        press(&mut a, KeyCode::Backspace);
    }
    typ(&mut a, CONSENT);
    press(&mut a, KeyCode::Enter);
    assert!(shown_plan(&a).request.discard_only_copy);
}

#[test]
fn the_consent_dialog_at_both_sizes() {
    for (w, h) in [(120, 40), (80, 24)] {
        let mut a = only_copy_app();
        update(&mut a, Msg::Resize(w, h));
        open_reclaim(&mut a);
        typ(&mut a, "discard vm");
        insta::assert_snapshot!(format!("reclaim_consent_{w}x{h}"), render(&a));
    }
}

#[test]
fn esc_keeps_the_only_copy() {
    let mut a = only_copy_app();
    open_reclaim(&mut a);
    typ(&mut a, CONSENT);
    press(&mut a, KeyCode::Esc);
    assert!(a.modal.is_none());
    assert!(a.outbox.is_empty());
    assert!(status(&a).contains("nothing was written"), "{}", status(&a));
}

/// A rename the restore finished whose -orig PVC the PV controller has not bound yet.
fn awaiting_bind_app() -> App {
    use actions_support::*;
    let mut objs = base_objects("Running");
    objs.extend([
        pv(
            "Retain",
            ORIG,
            "0e000000-0000-4000-8000-000000000005",
            Some("Delete"),
        ),
        orig_pvc(
            "0e000000-0000-4000-8000-000000000005",
            Some(RJ_UID),
            "Pending",
        ),
    ]);
    action_data::app_on(objs, "2026-11-20T10:01:00Z", 120, 40)
}

#[test]
fn a_rename_awaiting_the_bind_waits_without_a_typed_name_and_shows_that_it_waits() {
    let mut a = awaiting_bind_app();
    goto(&mut a, "restores");
    press(&mut a, KeyCode::Char('a'));
    let i = menu(&a)
        .entries
        .iter()
        .position(|e| e.choice.action == ActionKind::ResumeRename)
        .expect("resume-rename offered");
    press(&mut a, KeyCode::Char(char::from(b'1' + i as u8)));
    let plan = shown_plan(&a);
    assert!(plan.ops.is_empty() && plan.waits.len() == 1, "{plan:?}");
    assert!(
        render(&a).contains("waits (a bounded time)"),
        "{}",
        render(&a)
    );
    a.outbox.clear();
    press(&mut a, KeyCode::Enter);
    let id = dialog(&a).id;
    assert!(
        matches!(a.outbox.as_slice(), [WorkerRequest::Execute { .. }]),
        "{:?}",
        a.outbox
    );
    update(
        &mut a,
        Msg::ActionStep {
            id,
            event: StepEvent::Waiting {
                pvc: "tenant-a/vm-disk-data-orig-de3e".into(),
                waited_secs: 4,
            },
        },
    );
    let screen = render(&a);
    assert!(
        screen.contains("waiting for the PV controller to bind") && screen.contains("(4 s"),
        "{screen}"
    );
    update(
        &mut a,
        Msg::ActionDone {
            id,
            outcome: Outcome::Completed { writes: 0 },
        },
    );
    assert!(matches!(dialog(&a).stage, Stage::Finished { .. }));
}

#[test]
fn an_event_that_could_not_be_recorded_is_said_in_the_status_line_and_the_dialog() {
    let mut a = rename_review(120, 40);
    confirm(&mut a);
    let id = dialog(&a).id;
    let problem = "the Event on RestoreJob tenant-a/restore-test was not recorded: events is forbidden (403 Forbidden)";
    update(
        &mut a,
        Msg::ActionStep {
            id,
            event: StepEvent::RecordFailed(problem.into()),
        },
    );
    assert!(status(&a).contains(problem), "{}", status(&a));
    update(
        &mut a,
        Msg::ActionDone {
            id,
            outcome: Outcome::Completed { writes: 2 },
        },
    );
    assert!(
        status(&a).contains("completed") && status(&a).contains("was not recorded"),
        "{}",
        status(&a)
    );
    assert!(render(&a).contains("not recorded"), "{}", render(&a));
}

#[test]
fn after_the_consent_an_unrecorded_policy_is_asked_with_the_class_policy_preselected() {
    use actions_support::*;
    let mut objs = base_objects("Failed");
    let mut orig = orig_pvc("0e000000-0000-4000-8000-000000000005", None, "Bound");
    orig["metadata"]["creationTimestamp"] = json!("2026-11-20T10:00:40Z");
    objs.extend([
        restored_pvc(),
        pv("Retain", ORIG, "0e000000-0000-4000-8000-000000000005", None),
        orig,
    ]);
    let mut a = action_data::app_on(objs, "2026-11-21T10:00:00Z", 120, 40);
    open_reclaim(&mut a);
    typ(&mut a, CONSENT);
    press(&mut a, KeyCode::Enter);
    match &dialog(&a).stage {
        Stage::ChoosePolicy {
            class_policy,
            delete,
        } => {
            assert_eq!(class_policy.as_deref(), Some("Delete"));
            assert!(*delete, "the StorageClass's policy is preselected");
        }
        s => panic!("{s:?}"),
    }
    press(&mut a, KeyCode::Enter);
    let plan = shown_plan(&a);
    assert_eq!(plan.request.policy.as_deref(), Some("Delete"));
    assert!(plan.request.discard_only_copy, "the consent is kept");
}

#[test]
fn a_on_one_disk_keeps_just_that_disk_when_another_has_a_foreign_orig_name() {
    use restorewatch::ui::app::{Pane, Screen};
    use restorewatch::ui::select::{self, ChainRow};
    let mut a = action_data::app_on(
        actions_support::two_disks(),
        "2026-11-20T10:01:00Z",
        120,
        40,
    );
    goto(&mut a, "restores");
    press(&mut a, KeyCode::Enter);
    for _ in 0..4 {
        if matches!(&a.screen, Screen::Detail(d) if d.pane == Pane::Disks) {
            break;
        }
        press(&mut a, KeyCode::Tab);
    }
    let Screen::Detail(d) = &a.screen else {
        panic!("the restore's detail is open")
    };
    assert_eq!(d.pane, Pane::Disks);
    let r = select::detail(&a, &d.id).expect("the restore");
    let row = select::chain_rows(r)
        .iter()
        .position(|c| matches!(c, ChainRow::Disk(c) if c.disk == "vm-disk-data"))
        .expect("a row for the data disk");
    for _ in 0..row {
        press(&mut a, KeyCode::Char('j'));
    }
    press(&mut a, KeyCode::Char('a'));
    let m = menu(&a);
    assert!(
        m.about.contains("disk tenant-a/vm-disk-data"),
        "{}",
        m.about
    );
    let disk = m
        .entries
        .iter()
        .find(|e| {
            e.choice.action == ActionKind::ResumeRename && e.choice.target.name() == "vm-disk-data"
        })
        .expect("resume-rename on the disk");
    assert!(
        matches!(&disk.planned, Planned::Plan(p) if p.ops.len() == 5),
        "{:?}",
        disk.planned
    );
    let whole = m
        .entries
        .iter()
        .find(|e| {
            e.choice.action == ActionKind::ResumeRename && e.choice.target.name() == "restore-test"
        })
        .expect("resume-rename on the restore");
    assert!(
        matches!(&whole.planned, Planned::Refused(r) if r.reason.contains("vm-disk-system-orig-de3e")),
        "{:?}",
        whole.planned
    );
}
