//! The `-orig` screen for reclaiming at scale: totals, marks with `Space`, and the bulk dialog
//! (every PVC's own plan, one typed confirmation, the only-copy consent, then each PVC run in
//! turn by the worker and its result). Plans come from real object sets, so they are the plans
//! `actions::plan` makes.

mod common;

use common::bulk_data::{self, NOW};
use common::{press, render, typ};
use crossterm::event::KeyCode;
use restorewatch::actions::Target;
use restorewatch::actions::execute::{Outcome, StepEvent};
use restorewatch::ui::action_worker::WorkerRequest;
use restorewatch::ui::app::{Actions, App, Modal};
use restorewatch::ui::bulk::{Bulk, Run, Stage, Verdict};
use restorewatch::ui::dialog::Perms;
use restorewatch::ui::{Msg, update};

fn app(w: u16, h: u16) -> App {
    let mut a = common::action_data::app_on(bulk_data::objects(), NOW, w, h);
    press(&mut a, KeyCode::Char(':'));
    typ(&mut a, "orig");
    press(&mut a, KeyCode::Enter);
    a
}

fn bulk(a: &App) -> &Bulk {
    match &a.modal {
        Some(Modal::Bulk(b)) => b,
        other => panic!("no bulk dialog open: {other:?}"),
    }
}

fn status(a: &App) -> String {
    a.status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default()
}

fn pvc(name: &str) -> Target {
    Target::Pvc {
        namespace: bulk_data::NS.into(),
        name: name.into(),
    }
}

/// Marks every `-orig` PVC of tenant-a (the table is sorted by namespace, then name).
fn mark_all(a: &mut App) {
    for _ in bulk_data::DISKS {
        press(a, KeyCode::Char(' '));
        press(a, KeyCode::Char('j'));
    }
}

fn granted(a: &mut App) {
    let id = bulk(a).id;
    update(
        a,
        Msg::ActionChecked {
            id,
            result: Ok(vec![]),
        },
    );
}

fn execute_requests(a: &mut App) -> Vec<(u64, Target)> {
    std::mem::take(&mut a.outbox)
        .into_iter()
        .filter_map(|r| match r {
            WorkerRequest::Execute { id, plan } => Some((id, plan.request.target.clone())),
            WorkerRequest::Check { .. }
            | WorkerRequest::Preflight { .. }
            | WorkerRequest::Fetch { .. } => None,
        })
        .collect()
}

#[test]
fn the_totals_count_what_is_shown_and_group_why_the_rest_is_blocked() {
    let a = app(120, 40);
    let s = render(&a);
    // 6 PVCs of 10+5+2+20+8+4 GiB; data, sys and web can go now (sys without a recorded
    // policy); db is mounted, logs may be the only copy, tenant-b's restore still runs.
    assert!(s.contains("6 PVCs · 49.0GiB"), "{s}");
    assert!(
        s.contains("reclaimable now 3 (38.0GiB, 1 unrecorded)"),
        "{s}"
    );
    assert!(
        s.contains("blocked 3 (11.0GiB): running 1, mounted 1, only copy 1"),
        "{s}"
    );
    // Narrower, the same figures in fewer words.
    let mut narrow = app(80, 24);
    update(&mut narrow, Msg::Resize(80, 24));
    let n = render(&narrow);
    assert!(
        n.contains("6 · 49.0GiB │ now 3 · 38.0GiB │ blocked 3: running 1, mounted 1, only copy 1"),
        "{n}"
    );
    // The filter narrows the totals with the rows.
    let mut a = a;
    press(&mut a, KeyCode::Char('/'));
    typ(&mut a, "tenant-b");
    press(&mut a, KeyCode::Enter);
    let s = render(&a);
    assert!(s.contains("1 PVC · 4.0GiB"), "{s}");
    assert!(s.contains("reclaimable now 0 (0B)"), "{s}");
}

#[test]
fn space_marks_and_unmarks_and_the_title_counts_the_marks() {
    let mut a = app(120, 40);
    press(&mut a, KeyCode::Char(' '));
    press(&mut a, KeyCode::Char('j'));
    press(&mut a, KeyCode::Char(' '));
    let s = render(&a);
    assert!(s.contains("● 2 marked · -orig PVCs[6]"), "{s}");
    assert!(s.contains("● vm-disk-data-orig-de3e"), "{s}");
    assert!(s.contains("● vm-disk-db-orig-de3e"), "{s}");
    assert!(!s.contains("● vm-disk-logs-orig-de3e"), "{s}");
    press(&mut a, KeyCode::Char(' '));
    let s = render(&a);
    assert!(s.contains("● 1 marked · -orig PVCs[6]"), "{s}");
    assert!(!s.contains("● vm-disk-db-orig-de3e"), "{s}");
}

#[test]
fn space_is_in_the_help_from_the_keymap_and_hidden_when_read_only() {
    let mut a = app(120, 40);
    press(&mut a, KeyCode::Char('?'));
    let s = render(&a);
    assert!(
        s.contains("space") && s.contains("mark/unmark the -orig PVC; a reclaims every marked one"),
        "{s}"
    );
    let mut a = app(120, 40);
    a.actions = Actions::ReadOnly;
    press(&mut a, KeyCode::Char(' '));
    assert!(a.marks.is_empty());
    assert!(status(&a).contains("read-only"), "{}", status(&a));
    press(&mut a, KeyCode::Char('?'));
    let s = render(&a);
    assert!(!s.contains("mark/unmark the -orig PVC"), "{s}");
}

#[test]
fn each_marked_pvc_is_planned_as_it_would_be_alone() {
    let mut a = app(120, 40);
    mark_all(&mut a);
    press(&mut a, KeyCode::Char('a'));
    let b = bulk(&a);
    let names = bulk_data::origs();
    let targets: Vec<Target> = b.items.iter().map(|i| i.target.clone()).collect();
    assert_eq!(targets, names.iter().map(|n| pvc(n)).collect::<Vec<_>>());
    let v = |i: usize| &b.items[i].verdict;
    assert!(
        matches!(v(0), Verdict::Run(p) if p.ops.len() == 2),
        "{:?}",
        v(0)
    );
    assert!(
        matches!(v(1), Verdict::Refused(r) if r.contains("forensics")),
        "{:?}",
        v(1)
    );
    assert!(
        matches!(v(2), Verdict::OnlyCopy { unproven, plan }
            if unproven.pvc == "vm-disk-logs-orig-de3e"
                && unproven.proof.contains(LOGS_MISSING)
                && plan.request.discard_only_copy),
        "{:?}",
        v(2)
    );
    // No recorded policy: refused from the batch, reclaimed alone with its policy chosen.
    assert!(
        matches!(v(3), Verdict::Refused(r) if r.contains("reclaim it alone")),
        "{:?}",
        v(3)
    );
    assert!(matches!(v(4), Verdict::Run(_)), "{:?}", v(4));
    // An only copy asks for the consent first; nothing is asked of the cluster yet.
    assert!(matches!(b.stage, Stage::Consent { .. }));
    assert!(a.outbox.is_empty());
}

#[test]
fn one_typed_confirmation_runs_each_plan_in_turn_and_the_refused_stay_listed() {
    let mut a = app(120, 40);
    mark_all(&mut a);
    press(&mut a, KeyCode::Char('a'));
    // Enter on an empty consent leaves the only copy out.
    press(&mut a, KeyCode::Enter);
    let b = bulk(&a);
    assert!(!b.items[2].consented);
    assert!(matches!(
        b.stage,
        Stage::Review {
            perms: Perms::Checking,
            ..
        }
    ));
    assert_eq!(b.phrase(), "reclaim 2");
    let check = std::mem::take(&mut a.outbox);
    assert!(
        matches!(&check[..], [WorkerRequest::Check { ops, .. }] if ops.len() == 4),
        "{check:?}"
    );
    granted(&mut a);
    // Enter alone, or the wrong phrase, runs nothing.
    press(&mut a, KeyCode::Enter);
    typ(&mut a, "reclaim 5");
    press(&mut a, KeyCode::Enter);
    assert!(execute_requests(&mut a).is_empty());
    assert!(
        status(&a).contains("type reclaim 2 exactly"),
        "{}",
        status(&a)
    );
    for _ in 0.."reclaim 5".len() {
        press(&mut a, KeyCode::Backspace);
    }
    typ(&mut a, "reclaim 2");
    press(&mut a, KeyCode::Enter);
    // One PVC at a time: the second goes to the worker only when the first is done.
    let first = execute_requests(&mut a);
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].1, pvc("vm-disk-data-orig-de3e"));
    let (id, _) = first[0].clone();
    let op = match &bulk(&a).items[0].verdict {
        Verdict::Run(p) => p.ops[0].clone(),
        v => panic!("{v:?}"),
    };
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
            event: StepEvent::Done(op),
        },
    );
    assert!(execute_requests(&mut a).is_empty());
    update(
        &mut a,
        Msg::ActionDone {
            id,
            outcome: Outcome::Completed { writes: 2 },
        },
    );
    let second = execute_requests(&mut a);
    assert_eq!(second.len(), 1);
    assert_eq!(second[0].1, pvc("vm-disk-web-orig-de3e"));
    update(
        &mut a,
        Msg::ActionDone {
            id: second[0].0,
            outcome: Outcome::Stopped {
                writes: 0,
                reason: "refused on a fresh read: mounted by pod late".into(),
            },
        },
    );
    let b = bulk(&a);
    assert!(matches!(b.stage, Stage::Finished));
    assert_eq!(b.tally(), (1, 4, 0));
    assert!(matches!(b.items[0].run, Run::Done { .. }));
    let s = render(&a);
    assert!(
        s.contains("1 reclaimed · 4 refused or stopped · 0 to go"),
        "{s}"
    );
    assert!(s.contains("mounted by pod late"), "{s}");
    assert!(s.contains("left out, no consent typed for it"), "{s}");
    press(&mut a, KeyCode::Esc);
    assert!(a.modal.is_none());
    assert!(a.marks.is_empty(), "the marks go with the finished run");
    assert_eq!(status(&a), "bulk reclaim: 1 reclaimed, 4 refused");
}

#[test]
fn the_consent_naming_the_pvc_includes_it_and_the_generic_phrase_includes_nothing() {
    let mut a = app(120, 40);
    mark_all(&mut a);
    press(&mut a, KeyCode::Char('a'));
    for wrong in ["discard", "discard the only copy"] {
        typ(&mut a, wrong);
        press(&mut a, KeyCode::Enter);
        assert!(
            matches!(&bulk(&a).stage, Stage::Consent { consent, .. } if consent.mismatch),
            "{wrong}: {:?}",
            bulk(&a).stage
        );
        for _ in 0..wrong.len() {
            press(&mut a, KeyCode::Backspace);
        }
    }
    assert!(
        status(&a).contains("discard vm-disk-logs-orig-de3e"),
        "{}",
        status(&a)
    );
    typ(&mut a, "discard vm-disk-logs-orig-de3e");
    press(&mut a, KeyCode::Enter);
    let b = bulk(&a);
    assert!(b.items[2].consented);
    assert_eq!(b.phrase(), "reclaim 3");
    let plan = b.items[2].plan().expect("the only copy's plan");
    assert!(plan.request.discard_only_copy);
    // Esc cancels and keeps the marks.
    press(&mut a, KeyCode::Esc);
    assert!(a.modal.is_none());
    assert_eq!(a.marks.len(), 5);
    assert!(execute_requests(&mut a).is_empty());
}

/// `bulk_data` without the data disk's DataDownload: vm-disk-data-orig-de3e and
/// vm-disk-logs-orig-de3e both may be the only copy, each for its own missing piece.
fn two_unproven(w: u16, h: u16) -> App {
    let objs = bulk_data::objects()
        .into_iter()
        .filter(|o| {
            !(o["kind"] == "DataDownload"
                && o["metadata"]["name"] == "tenant-a.restore-test-fk8s8-data")
        })
        .collect();
    let mut a = common::action_data::app_on(objs, NOW, w, h);
    press(&mut a, KeyCode::Char(':'));
    typ(&mut a, "orig");
    press(&mut a, KeyCode::Enter);
    a
}

const DATA_MISSING: &str = "no DataDownload for vm-disk-data";
const LOGS_MISSING: &str = "the restored vm-disk-logs does not exist";

#[test]
fn each_unproven_pvc_is_consented_one_by_one_and_the_other_is_left_out_named() {
    let mut a = two_unproven(120, 40);
    mark_all(&mut a);
    press(&mut a, KeyCode::Char('a'));
    // The first unproven PVC: its consent names it and what is unknown about it.
    let s = render(&a);
    assert!(s.contains("type discard vm-disk-data-orig-de3e"), "{s}");
    assert!(s.contains(DATA_MISSING), "{s}");
    assert!(a.outbox.is_empty(), "{:?}", a.outbox);
    // Enter on the empty field leaves data out and asks about the next one: logs.
    press(&mut a, KeyCode::Enter);
    assert!(
        matches!(bulk(&a).stage, Stage::Consent { .. }),
        "each unproven PVC gets its own consent: {:?}",
        bulk(&a).stage
    );
    let s = render(&a);
    assert!(s.contains("type discard vm-disk-logs-orig-de3e"), "{s}");
    assert!(s.contains(LOGS_MISSING), "{s}");
    // Another PVC's words do not consent to this one.
    typ(&mut a, "discard vm-disk-data-orig-de3e");
    press(&mut a, KeyCode::Enter);
    assert!(matches!(
        &bulk(&a).stage,
        Stage::Consent { consent, .. } if consent.mismatch
    ));
    for _ in 0.."discard vm-disk-data-orig-de3e".len() {
        press(&mut a, KeyCode::Backspace);
    }
    typ(&mut a, "discard vm-disk-logs-orig-de3e");
    press(&mut a, KeyCode::Enter);
    // logs (by its consent) and web run; data is left out, its missing piece named.
    assert!(
        matches!(bulk(&a).stage, Stage::Review { .. }),
        "{:?}",
        bulk(&a).stage
    );
    assert_eq!(bulk(&a).phrase(), "reclaim 2");
    let s = render(&a);
    assert!(s.contains("vm-disk-data-orig-de3e refused"), "{s}");
    assert!(s.contains(DATA_MISSING), "{s}");
    let left_out = bulk(&a).items[0].refusal().unwrap_or_default();
    assert!(
        left_out.contains("no consent typed") && left_out.contains(DATA_MISSING),
        "{left_out}"
    );
    a.outbox.clear();
    granted(&mut a);
    typ(&mut a, "reclaim 2");
    press(&mut a, KeyCode::Enter);
    let run: Vec<_> = std::mem::take(&mut a.outbox)
        .into_iter()
        .filter_map(|r| match r {
            WorkerRequest::Execute { id, plan } => Some((id, plan)),
            WorkerRequest::Check { .. }
            | WorkerRequest::Preflight { .. }
            | WorkerRequest::Fetch { .. } => None,
        })
        .collect();
    assert_eq!(run.len(), 1, "one PVC at a time");
    let (id, plan) = &run[0];
    assert_eq!(plan.request.target, pvc("vm-disk-logs-orig-de3e"));
    assert!(
        plan.request.discard_only_copy,
        "the consented PVC is planned with the consent"
    );
    completed(&mut a, *id);
    let run = execute_requests(&mut a);
    assert_eq!(run.len(), 1);
    assert_eq!(run[0].1, pvc("vm-disk-web-orig-de3e"));
    completed(&mut a, run[0].0);
    assert!(matches!(bulk(&a).stage, Stage::Finished));
    assert!(execute_requests(&mut a).is_empty(), "data never runs");
    let s = render(&a);
    assert!(
        s.contains("2 reclaimed · 3 refused or stopped · 0 to go"),
        "{s}"
    );
    assert!(
        s.contains(DATA_MISSING),
        "the result names what is unknown: {s}"
    );
}

#[test]
fn without_marks_a_opens_the_single_dialog_as_before() {
    let mut a = app(120, 40);
    press(&mut a, KeyCode::Char('a'));
    assert!(
        matches!(a.modal, Some(Modal::Action(_) | Modal::Menu(_))),
        "{:?}",
        a.modal
    );
}

// ---- snapshots --------------------------------------------------------------------------

fn screens(w: u16, h: u16) -> Vec<(&'static str, String)> {
    let mut v = Vec::new();
    let mut a = app(w, h);
    press(&mut a, KeyCode::Char(' '));
    press(&mut a, KeyCode::Char('j'));
    press(&mut a, KeyCode::Char('j'));
    press(&mut a, KeyCode::Char(' '));
    press(&mut a, KeyCode::Char('j'));
    press(&mut a, KeyCode::Char('j'));
    press(&mut a, KeyCode::Char(' '));
    press(&mut a, KeyCode::Char('j'));
    press(&mut a, KeyCode::Char(' '));
    v.push(("orig_marked", render(&a)));
    press(&mut a, KeyCode::Char('a'));
    v.push(("bulk_consent", render(&a)));
    press(&mut a, KeyCode::Enter);
    granted(&mut a);
    typ(&mut a, "reclaim 2");
    v.push(("bulk_plan", render(&a)));
    press(&mut a, KeyCode::Enter);
    let (id, _) = execute_requests(&mut a)[0].clone();
    let op = match &bulk(&a).items[0].verdict {
        Verdict::Run(p) => p.ops[0].clone(),
        v => panic!("{v:?}"),
    };
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
            event: StepEvent::Done(op),
        },
    );
    v.push(("bulk_progress", render(&a)));
    update(
        &mut a,
        Msg::ActionDone {
            id,
            outcome: Outcome::Completed { writes: 2 },
        },
    );
    complete_next(&mut a);
    v.push(("bulk_results", render(&a)));
    v
}

/// The worker's answer for the PVC just sent to it: completed, two writes.
fn complete_next(a: &mut App) {
    let (id, _) = execute_requests(a)[0].clone();
    completed(a, id);
}

fn completed(a: &mut App, id: u64) {
    update(
        a,
        Msg::ActionDone {
            id,
            outcome: Outcome::Completed { writes: 2 },
        },
    );
}

/// The walk over two unproven PVCs: the second asked about after the first was left out,
/// then the results with the one left out named.
fn walk_screens(w: u16, h: u16) -> Vec<(&'static str, String)> {
    let mut v = Vec::new();
    let mut a = two_unproven(w, h);
    mark_all(&mut a);
    press(&mut a, KeyCode::Char('a'));
    press(&mut a, KeyCode::Esc);
    typ(&mut a, "discard vm-disk-logs");
    v.push(("bulk_consent_second", render(&a)));
    typ(&mut a, "-orig-de3e");
    press(&mut a, KeyCode::Enter);
    granted(&mut a);
    typ(&mut a, "reclaim 2");
    v.push(("bulk_consent_plan", render(&a)));
    press(&mut a, KeyCode::Enter);
    complete_next(&mut a);
    complete_next(&mut a);
    v.push(("bulk_consent_results", render(&a)));
    v
}

#[test]
fn bulk_screens_at_both_sizes() {
    for (w, h) in [(120, 40), (80, 24)] {
        for (name, screen) in screens(w, h).into_iter().chain(walk_screens(w, h)) {
            insta::assert_snapshot!(format!("{name}_{w}x{h}"), screen);
        }
    }
}
