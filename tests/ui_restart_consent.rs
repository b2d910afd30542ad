//! restart-restore in the dashboard while the old RestoreJob still runs: refused as it is, the
//! dialog asks for a typed consent that names the old RestoreJob (`leave NAME running`), and
//! only that phrase opens the plan, made with the choice and confirmed by name like any other.

mod common;
#[path = "preflight_support/mod.rs"]
mod preflight_support;

use common::action_data;
use common::{press, render, typ};
use crossterm::event::KeyCode;
use restorewatch::analysis::ActionKind;
use restorewatch::ui::action_worker::WorkerRequest;
use restorewatch::ui::app::{App, Modal};
use restorewatch::ui::dialog::{Dialog, Planned, Stage};
use restorewatch::ui::{Msg, update};
use serde_json::json;

const PHRASE: &str = "leave restore-test running";

fn dialog(a: &App) -> &Dialog {
    match &a.modal {
        Some(Modal::Action(d)) => d,
        other => panic!("no action dialog open: {other:?}"),
    }
}

fn status(a: &App) -> String {
    a.status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default()
}

/// The VM of the preflight tests, restored by `restore-test`, which is still Running.
fn running_app(w: u16, h: u16) -> App {
    let mut objs = preflight_support::vm_objects();
    let mut rj = preflight_support::rj_manifest("restore-test", json!({"keepOriginalPVC": true}));
    rj["metadata"]["uid"] = json!("5c96b3b8-0000-4000-8000-000000000001");
    rj["metadata"]["creationTimestamp"] = json!("2026-11-20T10:00:00Z");
    rj["status"] = json!({"phase": "Running", "startedAt": "2026-11-20T10:00:01Z"});
    objs.push(rj);
    action_data::app_on(objs, "2026-11-20T10:05:00Z", w, h)
}

/// `a` on the restore, then the restart-restore entry of the menu.
fn open_restart(a: &mut App) {
    press(a, KeyCode::Char('a'));
    let Some(Modal::Menu(m)) = &a.modal else {
        panic!("a menu: {:?}", a.modal);
    };
    let i = m
        .entries
        .iter()
        .position(|e| e.choice.action == ActionKind::RestartRestore)
        .expect("restart-restore is offered");
    match &m.entries[i].planned {
        Planned::LeaveRunning(s) => {
            assert_eq!(s.name, "restore-test");
            assert!(s.refusal.contains("is Running"), "{}", s.refusal);
        }
        other => panic!("asks for the consent to leave it running: {other:?}"),
    }
    let key = char::from_digit(i as u32 + 1, 10).expect("a digit");
    press(a, KeyCode::Char(key));
    assert_eq!(dialog(a).choice.action, ActionKind::RestartRestore);
}

fn clear(a: &mut App, typed: &str) {
    for _ in typed.chars() {
        press(a, KeyCode::Backspace);
    }
}

#[test]
fn restarting_a_running_restore_asks_for_the_words_naming_it_and_nothing_else_consents() {
    let mut a = running_app(120, 40);
    open_restart(&mut a);
    assert!(
        matches!(dialog(&a).stage, Stage::ConfirmLeave(_)),
        "the consent comes first: {:?}",
        dialog(&a).stage
    );
    let screen = render(&a);
    assert!(
        screen.contains("RestoreJob tenant-a/restore-test is still Running"),
        "{screen}"
    );
    assert!(screen.contains(&format!("type {PHRASE}")), "{screen}");
    assert!(
        screen.contains("two restores of one application at once"),
        "{screen}"
    );
    // Enter alone, the bare name, another RestoreJob's phrase: no plan, nothing asked of the
    // cluster, and the status line says the words.
    for wrong in ["", "restore-test", "leave restore-other running"] {
        typ(&mut a, wrong);
        press(&mut a, KeyCode::Enter);
        assert!(
            matches!(&dialog(&a).stage, Stage::ConfirmLeave(c) if c.mismatch),
            "{wrong:?}: {:?}",
            dialog(&a).stage
        );
        assert!(dialog(&a).plan().is_none(), "{wrong:?}");
        assert!(a.outbox.is_empty(), "{wrong:?}: {:?}", a.outbox);
        assert!(status(&a).contains(PHRASE), "{}", status(&a));
        clear(&mut a, wrong);
    }
    // The phrase opens the plan, made with the choice, saying what it means.
    typ(&mut a, PHRASE);
    press(&mut a, KeyCode::Enter);
    let plan = dialog(&a).plan().expect("a plan on screen").clone();
    assert!(plan.request.leave_running, "{:?}", plan.request);
    assert!(
        plan.notes.iter().any(|n| n.contains(
            "you chose to leave RestoreJob restore-test running (Running): two restores of VMInstance vm1 will run at once"
        )),
        "{:?}",
        plan.notes
    );
    assert!(
        render(&a).contains("⚠ you chose to leave RestoreJob tenant-a/restore-test running"),
        "{}",
        render(&a)
    );
    // Permissions, then the name (not the phrase) confirms; what runs is the plan shown.
    let id = dialog(&a).id;
    assert!(matches!(a.outbox.as_slice(), [WorkerRequest::Check { .. }]));
    a.outbox.clear();
    update(
        &mut a,
        Msg::ActionChecked {
            id,
            result: Ok(vec![]),
        },
    );
    typ(&mut a, PHRASE);
    press(&mut a, KeyCode::Enter);
    assert!(a.outbox.is_empty(), "the phrase does not confirm the plan");
    clear(&mut a, PHRASE);
    typ(&mut a, plan.confirm_name());
    press(&mut a, KeyCode::Enter);
    match a.outbox.as_slice() {
        [WorkerRequest::Execute { plan: sent, .. }] => {
            assert_eq!(**sent, plan);
            assert!(sent.request.leave_running);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn esc_on_the_consent_waits_for_the_old_restore_and_writes_nothing() {
    let mut a = running_app(80, 24);
    open_restart(&mut a);
    // At the small size too, the words to type are on screen.
    assert!(render(&a).contains(PHRASE), "{}", render(&a));
    press(&mut a, KeyCode::Esc);
    assert!(a.modal.is_none());
    assert!(a.outbox.is_empty(), "{:?}", a.outbox);
    assert_eq!(status(&a), "cancelled: nothing was written");
}
