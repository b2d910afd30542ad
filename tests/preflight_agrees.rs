//! One judge (issue 25): for every RestoreJob of every fixture (`tests/fixtures`) and every
//! scenario's end state (`scenarios/`), `preflight` on the state before the RestoreJob existed
//! flags every error `check` raises on it that was knowable then.
//!
//! "Before it existed" is the same picture without the RestoreJob, the Events about it and the
//! Velero Restores (with their DataDownloads) made for it: everything else (including what the
//! controller did to the disks for it) stays, so the preflight sees at least every cause that
//! predates the RestoreJob (and may see more: flagging a superset is allowed).
//!
//! "Knowable" (`knowable` below) is an error `check` raises on the RestoreJob whose cause is
//! in the RestoreJob's own spec or in the cluster as it was before it, given the controller's
//! generation; it excludes what only later events decide (Velero failing or stalling, a watch
//! delivering late, a webhook refusing the halt, the chart or CNPG misbehaving, time passing).

use jiff::Timestamp;
use restorewatch::analysis::preflight::preflight;
use restorewatch::analysis::{Finding, Report, Settings, Severity, analyze, controller};
use restorewatch::cli::check::load_snapshot;
use restorewatch::model::names::{
    LABEL_OWNED_BY_NAME, LABEL_OWNED_BY_NAMESPACE, LABEL_VELERO_RESTORE_UID, VELERO_NAMESPACE,
};
use restorewatch::model::objects::RestoreJob;
use restorewatch::model::snapshot::{ObjKey, Snapshot};
use restorewatch::model::{AnyObject, Kind, Obj, parse_object};
use restorewatch::sim::{Scenario, Store};
use serde::Deserialize;
use std::path::Path;
use std::sync::Arc;

/// Codes whose cause is in the RestoreJob's spec or in objects older than it.
const FROM_SPEC_OR_BEFORE: &[&str] = &[
    "orig-pvc-foreign",
    "orig-name-too-long",
    "orig-hash-collision",
    "keep-original-disabled",
    "velero-restore-stale",
    "concurrent-restores",
    "system-bucket-bootstrap",
];

/// Failure messages the controller writes for causes that exist before the RestoreJob runs:
/// a name no label can carry, options that do not decode, a refusal before anything is done.
const KNOWABLE_FAILURES: &[&str] = &[
    "must be no more than 63",
    "invalid restore options",
    "ConcurrentRestore",
    "already exists and does not belong",
];

/// An error `check` raised on `rj` that `preflight` could have known before `rj` existed.
fn knowable(f: &Finding, rj: &Obj<RestoreJob>, all: &[&Finding]) -> bool {
    if f.severity != Severity::Error {
        return false;
    }
    let code = f.code.as_str();
    if FROM_SPEC_OR_BEFORE.contains(&code) {
        return true;
    }
    match code {
        // From the spec as written; a MalformedOptions Event alone is the driver's later word.
        "malformed-options" => {
            !rj.options.invalid_cnpg_fields().is_empty()
                || !rj.options.invalid_velero_fields().is_empty()
        }
        "restore-failed" => rj
            .message
            .as_deref()
            .is_some_and(|m| KNOWABLE_FAILURES.iter().any(|k| m.contains(k))),
        // A disk not kept because its -orig name was taken or too long: the cause predates.
        "disk-not-kept" => all
            .iter()
            .any(|o| matches!(o.code.as_str(), "orig-pvc-foreign" | "orig-name-too-long")),
        _ => false,
    }
}

fn before(snap: &Snapshot, rj: &Obj<RestoreJob>) -> Snapshot {
    let mut b = snap.clone();
    let ns = &rj.meta.namespace;
    b.objects
        .remove(Kind::RestoreJob, &ObjKey::new(ns, &rj.meta.name));
    let events: Vec<String> = b
        .events
        .in_namespace(ns)
        .filter(|e| e.involved.kind == "RestoreJob" && e.involved.name == rj.meta.name)
        .map(|e| e.meta.name.to_string())
        .collect();
    for e in events {
        b.objects.remove(Kind::Event, &ObjKey::new(ns, &e));
    }
    // Its own Velero Restores (owner labels, made at or after it) and their DataDownloads: left
    // in, they would read as a predecessor's.
    let own: Vec<(String, String)> = b
        .velero_restores
        .iter()
        .filter(|v| {
            v.meta.label(LABEL_OWNED_BY_NAME) == Some(rj.meta.name.as_str())
                && v.meta.label(LABEL_OWNED_BY_NAMESPACE) == Some(ns.as_str())
                && matches!((v.meta.created, rj.meta.created), (Some(v), Some(r)) if v >= r)
        })
        .map(|v| (v.meta.name.to_string(), v.meta.uid.to_string()))
        .collect();
    for (name, uid) in own {
        b.objects
            .remove(Kind::VeleroRestore, &ObjKey::new(VELERO_NAMESPACE, &name));
        let dds: Vec<String> = b
            .data_downloads
            .iter()
            .filter(|d| {
                d.meta.label(LABEL_VELERO_RESTORE_UID) == Some(uid.as_str())
                    || d.meta.owners.iter().any(|o| o.uid == uid)
            })
            .map(|d| d.meta.name.to_string())
            .collect();
        for d in dds {
            b.objects
                .remove(Kind::DataDownload, &ObjKey::new(VELERO_NAMESPACE, &d));
        }
    }
    b
}

/// The RestoreJob as a manifest would propose it: its spec, no status, no UID.
fn proposed(rj: &Obj<RestoreJob>) -> Arc<Obj<RestoreJob>> {
    let mut p = rj.clone();
    p.meta.uid = Default::default();
    p.meta.created = None;
    Arc::new(p)
}

/// Every knowable error `check` raises on each RestoreJob of `snap` that preflight misses.
fn misses(origin: &str, snap: &Snapshot, report: &Report) -> Vec<String> {
    let mut out = Vec::new();
    for rj in snap.restore_jobs.iter() {
        let id = format!("{}/{}", rj.meta.namespace, rj.meta.name);
        let on_it: Vec<&Finding> = report
            .findings
            .iter()
            .map(|f| &**f)
            .filter(|f| f.restore.as_ref().is_some_and(|r| r.to_string() == id))
            .collect();
        let wanted: Vec<&str> = on_it
            .iter()
            .filter(|f| knowable(f, rj, &on_it))
            .map(|f| f.code.as_str())
            .collect();
        if wanted.is_empty() {
            continue;
        }
        let b = before(snap, rj);
        // One generation: the one `check` judged the whole picture with.
        let pf = preflight(&b, &proposed(rj), (*report.controller).clone());
        for code in wanted {
            if !pf.predictions.iter().any(|p| p.code == code) {
                out.push(format!(
                    "{origin}: {id}: check raises {code}, preflight before it did not (it said: {:?}; unknown: {:?})",
                    pf.predictions.iter().map(|p| p.code).collect::<Vec<_>>(),
                    pf.unknown
                ));
            }
        }
    }
    out
}

#[derive(Deserialize)]
struct Expectations {
    case: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    file: String,
    now: String,
}

#[test]
fn preflight_before_each_fixture_restore_flags_what_check_later_raises() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let text = std::fs::read_to_string(dir.join("expectations.toml")).expect("expectations");
    let cases: Expectations = toml::from_str(&text).expect("expectations parse");
    let mut bad = Vec::new();
    let mut judged = 0;
    for c in cases.case {
        let Ok((snap, _)) = load_snapshot(&[dir.join(&c.file)]) else {
            continue;
        };
        let Ok(now) = c.now.parse::<Timestamp>() else {
            continue;
        };
        let report = analyze(&snap, &Settings::default(), now);
        judged += snap.restore_jobs.len();
        bad.extend(misses(&c.file, &snap, &report));
    }
    assert!(judged > 50, "only {judged} RestoreJobs judged");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn preflight_before_each_scenario_restore_flags_what_check_later_raises() {
    let mut bad = Vec::new();
    for scenario in Scenario::builtin().expect("scenarios") {
        let store = Store::new(64, 1);
        let errors = scenario.apply_all(&store);
        assert!(errors.is_empty(), "{}: {errors:?}", scenario.name);
        let objs: Vec<AnyObject> = restorewatch::model::KINDS
            .iter()
            .flat_map(|k| store.all(k.kind, &Default::default()))
            .filter_map(|v| parse_object(v).ok())
            .collect();
        let snap = Snapshot::from_objects(objs);
        let report = analyze(&snap, &Settings::default(), Timestamp::now());
        bad.extend(misses(&scenario.name, &snap, &report));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The generation both sides judge with is the one `controller::of_snapshot` gives.
#[test]
fn preflight_and_check_name_the_same_generation_for_every_fixture() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let text = std::fs::read_to_string(dir.join("expectations.toml")).expect("expectations");
    let cases: Expectations = toml::from_str(&text).expect("expectations parse");
    for c in cases.case {
        let Ok((snap, _)) = load_snapshot(&[dir.join(&c.file)]) else {
            continue;
        };
        let Ok(now) = c.now.parse::<Timestamp>() else {
            continue;
        };
        let report = analyze(&snap, &Settings::default(), now);
        for rj in snap.restore_jobs.iter() {
            let pf = preflight(&snap, rj, controller::of_snapshot(&snap));
            assert_eq!(
                pf.controller.generation, report.controller.generation,
                "{}: {}",
                c.file, rj.meta.name
            );
        }
    }
}
