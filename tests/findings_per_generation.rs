//! The live findings say what a state leads to under the backup controller the cluster runs:
//! the same objects read under a guarded controller, an unguarded one and an unknown one give
//! three phrasings of one finding code. A foreign `-orig` name fails a guarded controller's
//! RestoreJob but is silently skipped by an older one; unknown says both, never a guess. The
//! generation is cluster-wide, so evidence in one namespace re-phrases another's findings in
//! the incremental analysis too.

#[path = "preflight_support/mod.rs"]
mod preflight_support;

use preflight_support::{DELETED_UID, NS, failed_rj_naming, foreign_orig, rj_manifest, vm_objects};
use restorewatch::analysis::codes::Code;
use restorewatch::analysis::controller::Generation;
use restorewatch::analysis::{Report, Settings, analyze};
use restorewatch::cluster::{ObjKey, Snapshot};
use restorewatch::model::changes::Changes;
use restorewatch::model::{Kind, parse_object};
use restorewatch::pipeline::analyzer::Analyzer;
use serde_json::{Value, json};
use std::sync::Arc;

const NOW: &str = "2026-11-20T10:05:00Z";
const OLD_IMAGE: &str = "ghcr.io/cozystack/cozystack/backup-controller:v1.6.3";

fn rj(phase: &str) -> Value {
    let mut v = rj_manifest("restore-test", json!({"keepOriginalPVC": true}));
    v["metadata"]["uid"] = json!("5c96b3b8-0000-4000-8000-000000000001");
    v["metadata"]["creationTimestamp"] = json!("2026-11-20T10:00:00Z");
    v["status"] = json!({"phase": phase, "startedAt": "2026-11-20T10:00:01Z"});
    v
}

/// A running restore of vm1 whose `-orig` name a deleted RestoreJob's PVC holds.
fn foreign_state() -> Vec<Value> {
    let mut objs = vm_objects();
    objs.push(rj("Running"));
    objs.push(foreign_orig("vm-disk-data-orig-de3e", Some(DELETED_UID)));
    objs
}

/// A restore that Succeeded without keeping the disk: the pre-restore PVC is still the one.
fn not_kept_state() -> Vec<Value> {
    let mut objs = vm_objects();
    let mut done = rj("Succeeded");
    done["status"]["completedAt"] = json!("2026-11-20T10:04:00Z");
    objs.push(done);
    objs
}

/// Guarded evidence in another namespace: a RestoreJob there failed naming a taken `-orig` PVC.
fn guarded_evidence() -> Value {
    let mut v = failed_rj_naming("other-restore", "vm-disk-x-orig-1a2b");
    v["metadata"]["namespace"] = json!("tenant-b");
    v
}

fn snapshot(objs: Vec<Value>, image: Option<&str>) -> Snapshot {
    let mut s = Snapshot::from_objects(objs.into_iter().map(|o| parse_object(o).expect("parses")));
    s.controller_image = image.map(str::to_string);
    s
}

/// The snapshot of `objs` under each generation: no evidence, the old image, a guarded failure.
fn under_each(objs: Vec<Value>) -> [(Generation, Snapshot); 3] {
    let mut guarded = objs.clone();
    guarded.push(guarded_evidence());
    [
        (Generation::Unknown, snapshot(objs.clone(), None)),
        (Generation::Unguarded, snapshot(objs, Some(OLD_IMAGE))),
        (Generation::Guarded, snapshot(guarded, None)),
    ]
}

fn report(s: &Snapshot) -> Report {
    analyze(s, &Settings::default(), NOW.parse().expect("time"))
}

fn finding(r: &Report, code: Code) -> (String, String) {
    let f = r
        .findings
        .iter()
        .find(|f| f.code == code && f.restore.as_ref().is_some_and(|id| id.namespace == NS))
        .unwrap_or_else(|| panic!("{code:?} in {:#?}", r.findings));
    (f.message.clone(), f.remedy.clone())
}

#[test]
fn a_foreign_orig_name_reads_as_a_failed_restore_a_silent_loss_or_both() {
    let mut messages = Vec::new();
    for (g, snap) in under_each(foreign_state()) {
        let r = report(&snap);
        assert_eq!(r.controller.generation, g, "{:?}", r.controller);
        let (message, remedy) = finding(&r, Code::OrigPvcForeign);
        match g {
            Generation::Guarded => {
                assert!(
                    message.contains("the controller (guarded) fails the RestoreJob before it suspends or halts anything, naming this PVC: nothing is lost"),
                    "{message}"
                );
                assert!(
                    !message.contains("current disk is lost") && !message.contains("unguarded"),
                    "{message}"
                );
                assert!(
                    remedy.starts_with("Let the controller fail this RestoreJob"),
                    "{remedy}"
                );
            }
            Generation::Unguarded => {
                assert!(
                    message.contains("the controller (unguarded) skips keeping this disk without a word and replaces it: the current disk is lost"),
                    "{message}"
                );
                assert!(!message.contains("guarded controller fails"), "{message}");
                assert!(
                    remedy.starts_with("Delete this RestoreJob before it halts the VM"),
                    "{remedy}"
                );
            }
            Generation::Unknown => {
                assert!(
                    message.contains("a guarded controller fails the RestoreJob before it halts anything; an unguarded one (not ruled out: the generation is unknown)"),
                    "{message}"
                );
                assert!(
                    remedy.starts_with("Delete this RestoreJob before it halts the VM"),
                    "{remedy}"
                );
            }
        }
        messages.push(message);
    }
    messages.dedup();
    assert_eq!(messages.len(), 3, "three phrasings: {messages:#?}");
}

#[test]
fn a_disk_not_kept_reads_as_a_silent_drop_a_contradiction_to_check_or_both() {
    let mut messages = Vec::new();
    for (g, snap) in under_each(not_kept_state()) {
        let r = report(&snap);
        assert_eq!(r.controller.generation, g, "{:?}", r.controller);
        let (message, _) = finding(&r, Code::DiskNotKept);
        let says = match g {
            Generation::Guarded => "the controller (guarded) does not drop a disk it cannot keep",
            Generation::Unguarded => {
                "the controller (unguarded) drops a disk it cannot keep with at most a Warning event"
            }
            Generation::Unknown => {
                "an unguarded controller drops a disk it cannot keep with at most a Warning event; a guarded one fails or retries instead (which one runs is unknown)"
            }
        };
        assert!(message.contains(says), "{g:?}: {message}");
        messages.push(message);
    }
    messages.dedup();
    assert_eq!(messages.len(), 3, "three phrasings: {messages:#?}");
}

#[test]
fn evidence_in_another_namespace_rephrases_a_findings_in_the_incremental_analysis() {
    let now = NOW.parse().expect("time");
    let before = Arc::new(snapshot(foreign_state(), None));
    let mut a = Analyzer::new(before, Settings::default(), now);
    let (message, _) = finding(a.report(), Code::OrigPvcForeign);
    assert!(message.contains("not ruled out"), "{message}");

    // Only tenant-b changes, yet tenant-a's finding must now read for a guarded controller,
    // exactly as a full analysis of the same objects reads.
    let mut objs = foreign_state();
    objs.push(guarded_evidence());
    let after = Arc::new(snapshot(objs, None));
    let mut changes = Changes::default();
    changes.object(
        Kind::RestoreJob,
        ObjKey::new("tenant-b".to_string(), "other-restore".to_string()),
    );
    let r = a.apply(Arc::clone(&after), &changes);
    let (message, _) = finding(&r, Code::OrigPvcForeign);
    assert!(
        message.contains("the controller (guarded) fails"),
        "{message}"
    );
    assert_eq!(
        finding(&r, Code::OrigPvcForeign),
        finding(&report(&after), Code::OrigPvcForeign)
    );
}
