//! The action dialog, driven by keys and by the worker's answers: what `a` offers, the typed
//! confirmation that Enter alone never gives, the progress and the result. Plans come from
//! real object sets (the analysis fixtures), so they are the plans `plan` makes.

mod common;

use common::action_data::{self, RECORDED, RENAME, SERVERNAME, UNRECORDED};
use common::{press, render, typ};
use crossterm::event::KeyCode;
use restorewatch::actions::execute::{Outcome, StepEvent};
use restorewatch::actions::rbac::Denied;
use restorewatch::actions::{Plan, Target};
use restorewatch::analysis::ActionKind;
use restorewatch::ui::action_worker::WorkerRequest;
use restorewatch::ui::app::{Actions, App, Modal};
use restorewatch::ui::dialog::{Dialog, Menu, Perms, Planned, Stage, StepState};
use restorewatch::ui::{Msg, update};

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

fn denied() -> Denied {
    Denied {
        verb: "delete".into(),
        resource: "persistentvolumeclaims".into(),
        namespace: "tenant-a".into(),
        reason: "RBAC: no rule allows it".into(),
    }
}

// ---- what `a` offers --------------------------------------------------------------------

#[test]
fn a_on_a_finding_opens_its_action_on_its_object_and_asks_for_permissions() {
    let mut a = action_data::app(RENAME, 120, 40);
    goto(&mut a, "findings");
    press(&mut a, KeyCode::Char('a'));
    let d = dialog(&a);
    assert_eq!(d.choice.action, ActionKind::ResumeRename);
    assert_eq!(
        d.choice.target,
        Target::Pvc {
            namespace: "tenant-a".into(),
            name: "vm-disk-system-orig-de3e".into()
        }
    );
    assert_eq!(d.choice.because.as_deref(), Some("rename-half-done"));
    let plan = shown_plan(&a);
    assert!(!plan.ops.is_empty());
    assert!(matches!(
        &d.stage,
        Stage::Review {
            perms: Perms::Checking,
            ..
        }
    ));
    // The permission check is a request for the worker, made before anything can be confirmed.
    assert_eq!(
        a.outbox,
        vec![WorkerRequest::Check {
            id: d.id,
            ops: plan.ops.clone()
        }]
    );
    assert!(render(&a).contains("checking permissions…"));
}

#[test]
fn a_on_a_restore_lists_every_action_that_applies() {
    let mut a = action_data::app(RECORDED, 120, 40);
    press(&mut a, KeyCode::Char('a'));
    let m = menu(&a);
    let kinds: Vec<ActionKind> = m.entries.iter().map(|e| e.choice.action).collect();
    // What can run first (the findings' reclaims, one per -orig PVC, then restoring the
    // finished restore again under a new name), then what has nothing to do; a serverName
    // repair is not offered on a VM restore at all.
    assert_eq!(
        kinds,
        vec![
            ActionKind::ReclaimOrig,
            ActionKind::ReclaimOrig,
            ActionKind::RestartRestore,
            ActionKind::ResumeRename,
            ActionKind::ResumeRelease
        ]
    );
    assert!(matches!(&m.entries[3].planned, Planned::Plan(p) if p.ops.is_empty()));
    assert!(a.outbox.is_empty(), "a menu asks nothing of the cluster");
    // Enter opens the plan of the entry under the cursor; it confirms nothing.
    press(&mut a, KeyCode::Char('j'));
    press(&mut a, KeyCode::Enter);
    assert_eq!(
        dialog(&a).choice.target,
        Target::Pvc {
            namespace: "tenant-a".into(),
            name: "vm-disk-system-orig-de3e".into()
        }
    );
    assert!(matches!(a.outbox.as_slice(), [WorkerRequest::Check { .. }]));
}

#[test]
fn a_on_an_orig_pvc_offers_reclaim_orig_first() {
    let mut a = action_data::app(RECORDED, 120, 40);
    goto(&mut a, "orig");
    press(&mut a, KeyCode::Char('a'));
    let m = menu(&a);
    assert_eq!(m.entries[0].choice.action, ActionKind::ReclaimOrig);
    assert_eq!(m.selected, 0);
    assert!(
        matches!(&m.entries[0].choice.target, Target::Pvc { name, .. } if name.contains("-orig-"))
    );
    press(&mut a, KeyCode::Enter);
    assert_eq!(dialog(&a).choice.action, ActionKind::ReclaimOrig);
}

#[test]
fn readonly_and_snapshot_sessions_open_no_dialog_and_say_why() {
    let mut a = action_data::app(RENAME, 120, 40);
    a.actions = Actions::ReadOnly;
    press(&mut a, KeyCode::Char('a'));
    assert!(a.modal.is_none());
    assert!(status(&a).contains("read-only"), "{}", status(&a));
    assert!(a.outbox.is_empty());
    // No `a` in the hints or the help of a read-only session.
    assert!(!render(&a).contains("<a>"));
    press(&mut a, KeyCode::Char('?'));
    assert!(!render(&a).contains("repair actions"));

    let mut a = action_data::app(RENAME, 120, 40);
    a.actions = Actions::NoClient;
    press(&mut a, KeyCode::Char('a'));
    assert!(a.modal.is_none());
    assert!(status(&a).contains("snapshot files"), "{}", status(&a));
}

// ---- the confirmation -------------------------------------------------------------------

#[test]
fn enter_with_an_empty_or_wrong_name_does_not_confirm() {
    let mut a = rename_review(120, 40);
    press(&mut a, KeyCode::Enter);
    assert!(matches!(dialog(&a).stage, Stage::Review { .. }));
    assert!(a.outbox.is_empty());
    assert!(status(&a).contains("exactly"), "{}", status(&a));
    typ(&mut a, "vm-disk-system");
    press(&mut a, KeyCode::Enter);
    assert!(matches!(
        dialog(&a).stage,
        Stage::Review { mismatch: true, .. }
    ));
    assert!(a.outbox.is_empty());
    // A name with one character too many is still wrong.
    typ(&mut a, "-orig-de3eX");
    press(&mut a, KeyCode::Enter);
    assert!(a.outbox.is_empty());
}

#[test]
fn the_exact_name_then_enter_executes_the_plan_that_was_shown() {
    let mut a = rename_review(120, 40);
    let shown = confirm(&mut a);
    let id = dialog(&a).id;
    assert_eq!(
        a.outbox,
        vec![WorkerRequest::Execute {
            id,
            plan: Box::new(shown.clone())
        }]
    );
    assert!(matches!(&dialog(&a).stage, Stage::Running { plan, .. } if *plan == shown));
}

#[test]
fn the_confirmed_plan_is_the_one_shown_even_if_new_data_arrives() {
    let mut a = rename_review(120, 40);
    let shown = shown_plan(&a);
    // A new frame (here: a different cluster) does not change the plan under review.
    update(&mut a, Msg::Frame(Some(action_data::frame(RECORDED))));
    assert_eq!(shown_plan(&a), shown);
    typ(&mut a, shown.confirm_name());
    press(&mut a, KeyCode::Enter);
    assert!(
        matches!(a.outbox.as_slice(), [WorkerRequest::Execute { plan, .. }] if **plan == shown)
    );
}

#[test]
fn esc_cancels_and_nothing_is_sent() {
    let mut a = rename_review(120, 40);
    typ(&mut a, "vm-disk-system-orig-de3e");
    press(&mut a, KeyCode::Esc);
    assert!(a.modal.is_none());
    assert!(a.outbox.is_empty());
    assert!(status(&a).contains("cancelled"));
}

#[test]
fn confirming_waits_for_the_permission_check() {
    let mut a = action_data::app(RENAME, 120, 40);
    goto(&mut a, "findings");
    press(&mut a, KeyCode::Char('a'));
    a.outbox.clear();
    typ(&mut a, "vm-disk-system-orig-de3e");
    press(&mut a, KeyCode::Enter);
    assert!(a.outbox.is_empty());
    assert!(status(&a).contains("checking permissions"));
}

#[test]
fn a_refusal_says_why() {
    let mut a = action_data::app(RENAME, 120, 40);
    press(&mut a, KeyCode::Char('a'));
    // resume-release while the restore still runs: refused, and the menu says why.
    let pos = menu(&a)
        .entries
        .iter()
        .position(|e| e.choice.action == ActionKind::ResumeRelease)
        .expect("offered");
    let digit = char::from_digit(u32::try_from(pos + 1).unwrap(), 10).unwrap();
    press(&mut a, KeyCode::Char(digit));
    match &dialog(&a).stage {
        Stage::Refused(r) => assert!(r.reason.contains("still Running"), "{}", r.reason),
        s => panic!("{s:?}"),
    }
    assert!(a.outbox.is_empty());
    let screen = render(&a);
    assert!(
        screen.contains("refused: restore-test is still Running"),
        "{screen}"
    );
    press(&mut a, KeyCode::Enter);
    assert!(a.modal.is_none(), "enter closes a refusal");
}

#[test]
fn a_forbidden_action_is_shown_disabled_with_the_missing_verb() {
    let mut a = action_data::app(RENAME, 120, 40);
    goto(&mut a, "findings");
    press(&mut a, KeyCode::Char('a'));
    let id = dialog(&a).id;
    a.outbox.clear();
    update(
        &mut a,
        Msg::ActionChecked {
            id,
            result: Ok(vec![denied()]),
        },
    );
    assert!(matches!(
        &dialog(&a).stage,
        Stage::Review { perms: Perms::Denied(d), .. } if d.len() == 1
    ));
    let name = shown_plan(&a).confirm_name().to_string();
    typ(&mut a, &name);
    press(&mut a, KeyCode::Enter);
    assert!(a.outbox.is_empty());
    assert_eq!(
        dialog(&a).typed().as_deref(),
        Some(""),
        "no field to type into"
    );
    assert!(render(&a).contains("no delete on persistentvolumeclaims in tenant-a"));
}

#[test]
fn answers_for_another_dialog_are_ignored() {
    let mut a = rename_review(120, 40);
    let id = dialog(&a).id;
    update(
        &mut a,
        Msg::ActionChecked {
            id: id + 100,
            result: Ok(vec![denied()]),
        },
    );
    assert!(matches!(
        dialog(&a).stage,
        Stage::Review {
            perms: Perms::Allowed,
            ..
        }
    ));
}

// ---- progress and result ----------------------------------------------------------------

#[test]
fn progress_messages_update_the_steps_and_the_outcome_is_shown() {
    let mut a = rename_review(120, 40);
    let plan = confirm(&mut a);
    let id = dialog(&a).id;
    let (op0, op1) = (plan.ops[0].clone(), plan.ops[1].clone());
    let states = |a: &App| match &dialog(a).stage {
        Stage::Running { steps, .. } | Stage::Finished { steps, .. } => {
            steps.iter().map(|s| s.state).collect::<Vec<_>>()
        }
        s => panic!("{s:?}"),
    };
    assert_eq!(states(&a), vec![StepState::Pending, StepState::Pending]);
    update(
        &mut a,
        Msg::ActionStep {
            id,
            event: StepEvent::Start(op0.clone()),
        },
    );
    assert_eq!(states(&a), vec![StepState::Running, StepState::Pending]);
    update(
        &mut a,
        Msg::ActionStep {
            id,
            event: StepEvent::Done(op0),
        },
    );
    update(
        &mut a,
        Msg::ActionStep {
            id,
            event: StepEvent::Start(op1.clone()),
        },
    );
    update(
        &mut a,
        Msg::ActionStep {
            id,
            event: StepEvent::Conflict(op1.clone(), "409 Conflict".into()),
        },
    );
    assert_eq!(states(&a), vec![StepState::Done, StepState::Conflict]);
    assert!(render(&a).contains("409 Conflict"));
    // Esc does not walk away from a running action.
    press(&mut a, KeyCode::Esc);
    assert!(a.modal.is_some());
    update(
        &mut a,
        Msg::ActionStep {
            id,
            event: StepEvent::Start(op1.clone()),
        },
    );
    update(
        &mut a,
        Msg::ActionStep {
            id,
            event: StepEvent::Done(op1),
        },
    );
    update(
        &mut a,
        Msg::ActionDone {
            id,
            outcome: Outcome::Completed { writes: 2 },
        },
    );
    assert_eq!(states(&a), vec![StepState::Done, StepState::Done]);
    assert!(matches!(
        dialog(&a).stage,
        Stage::Finished {
            outcome: Outcome::Completed { writes: 2 },
            ..
        }
    ));
    assert!(render(&a).contains("completed: 2 writes"));
    press(&mut a, KeyCode::Esc);
    assert!(a.modal.is_none());
    assert!(status(&a).contains("completed: 2 writes"));
}

#[test]
fn a_stopped_action_says_why_and_that_a_rerun_resumes() {
    let mut a = rename_review(120, 40);
    let plan = confirm(&mut a);
    let id = dialog(&a).id;
    update(
        &mut a,
        Msg::ActionStep {
            id,
            event: StepEvent::Start(plan.ops[0].clone()),
        },
    );
    update(
        &mut a,
        Msg::ActionStep {
            id,
            event: StepEvent::Done(plan.ops[0].clone()),
        },
    );
    update(
        &mut a,
        Msg::ActionDone {
            id,
            outcome: Outcome::Stopped {
                writes: 1,
                reason: "the cluster changed since the plan was shown".into(),
            },
        },
    );
    let screen = render(&a);
    assert!(screen.contains("stopped after 1 write: the cluster changed"));
    assert!(screen.contains("Re-run resumes"));
}

#[test]
fn reclaim_without_a_recorded_policy_asks_for_one_first() {
    let mut a = action_data::app(UNRECORDED, 120, 40);
    goto(&mut a, "findings");
    press(&mut a, KeyCode::Char('a'));
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
    assert!(a.outbox.is_empty(), "nothing is planned before the choice");
    press(&mut a, KeyCode::Down);
    press(&mut a, KeyCode::Enter);
    let plan = shown_plan(&a);
    assert_eq!(plan.request.policy.as_deref(), Some("Retain"));
    assert!(matches!(a.outbox.as_slice(), [WorkerRequest::Check { .. }]));
    assert!(matches!(dialog(&a).stage, Stage::Review { .. }));
}

#[test]
fn fix_servername_on_a_running_postgres_restore() {
    let mut a = action_data::app(SERVERNAME, 120, 40);
    goto(&mut a, "findings");
    let i = restorewatch::ui::select::findings(&a)
        .iter()
        .position(|f| f.action == Some(ActionKind::FixServername))
        .expect("a servername finding");
    for _ in 0..i {
        press(&mut a, KeyCode::Char('j'));
    }
    press(&mut a, KeyCode::Char('a'));
    let d = dialog(&a);
    assert_eq!(d.choice.action, ActionKind::FixServername);
    assert!(matches!(d.choice.target, Target::Restore { .. }));
    assert_eq!(shown_plan(&a).ops.len(), 1);
}

// ---- screens ----------------------------------------------------------------------------

const SIZES: [(u16, u16); 2] = [(120, 40), (80, 24)];

fn each_size(name: &str, setup: impl Fn(u16, u16) -> App) {
    for (w, h) in SIZES {
        let a = setup(w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), render(&a));
    }
}

#[test]
fn screen_menu() {
    each_size("action_menu", |w, h| {
        let mut a = action_data::app(RECORDED, w, h);
        press(&mut a, KeyCode::Char('a'));
        a
    });
}

#[test]
fn screen_plan() {
    each_size("action_plan", rename_review);
}

#[test]
fn screen_confirm_partial() {
    each_size("action_confirm_partial", |w, h| {
        let mut a = rename_review(w, h);
        typ(&mut a, "vm-disk-sys");
        a
    });
}

#[test]
fn screen_progress() {
    each_size("action_progress", |w, h| {
        let mut a = rename_review(w, h);
        let plan = confirm(&mut a);
        let id = dialog(&a).id;
        update(
            &mut a,
            Msg::ActionStep {
                id,
                event: StepEvent::Start(plan.ops[0].clone()),
            },
        );
        update(
            &mut a,
            Msg::ActionStep {
                id,
                event: StepEvent::Done(plan.ops[0].clone()),
            },
        );
        update(
            &mut a,
            Msg::ActionStep {
                id,
                event: StepEvent::Start(plan.ops[1].clone()),
            },
        );
        update(
            &mut a,
            Msg::ActionStep {
                id,
                event: StepEvent::Conflict(
                    plan.ops[1].clone(),
                    "Operation cannot be fulfilled: the object has been modified (409)".into(),
                ),
            },
        );
        update(
            &mut a,
            Msg::ActionStep {
                id,
                event: StepEvent::Start(plan.ops[1].clone()),
            },
        );
        a
    });
}

#[test]
fn screen_completed() {
    each_size("action_completed", |w, h| {
        let mut a = rename_review(w, h);
        let plan = confirm(&mut a);
        let id = dialog(&a).id;
        for op in &plan.ops {
            update(
                &mut a,
                Msg::ActionStep {
                    id,
                    event: StepEvent::Start(op.clone()),
                },
            );
            update(
                &mut a,
                Msg::ActionStep {
                    id,
                    event: StepEvent::Done(op.clone()),
                },
            );
        }
        update(
            &mut a,
            Msg::ActionDone {
                id,
                outcome: Outcome::Completed {
                    writes: plan.ops.len(),
                },
            },
        );
        a
    });
}

#[test]
fn screen_stopped() {
    each_size("action_stopped", |w, h| {
        let mut a = rename_review(w, h);
        let plan = confirm(&mut a);
        let id = dialog(&a).id;
        update(
            &mut a,
            Msg::ActionStep {
                id,
                event: StepEvent::Start(plan.ops[0].clone()),
            },
        );
        update(
            &mut a,
            Msg::ActionStep {
                id,
                event: StepEvent::Done(plan.ops[0].clone()),
            },
        );
        update(
            &mut a,
            Msg::ActionDone {
                id,
                outcome: Outcome::Stopped {
                    writes: 1,
                    reason: "the cluster changed since the plan was shown: it would now delete PVC tenant-a/vm-disk-system. Nothing more was written; run the action again to review the new plan".into(),
                },
            },
        );
        a
    });
}

#[test]
fn screen_refused() {
    each_size("action_refused", |w, h| {
        let mut a = action_data::app(RENAME, w, h);
        press(&mut a, KeyCode::Char('a'));
        press(&mut a, KeyCode::Char('3'));
        a
    });
}

#[test]
fn screen_forbidden() {
    each_size("action_forbidden", |w, h| {
        let mut a = action_data::app(RENAME, w, h);
        goto(&mut a, "findings");
        press(&mut a, KeyCode::Char('a'));
        let id = dialog(&a).id;
        update(
            &mut a,
            Msg::ActionChecked {
                id,
                result: Ok(vec![denied()]),
            },
        );
        a
    });
}

#[test]
fn screen_policy_choice() {
    each_size("action_policy_choice", |w, h| {
        let mut a = action_data::app(UNRECORDED, w, h);
        goto(&mut a, "findings");
        press(&mut a, KeyCode::Char('a'));
        a
    });
}
