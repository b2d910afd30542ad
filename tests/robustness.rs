//! Nothing from the cluster may crash restorewatch: arbitrary JSON in every field of every kind
//! goes through the model, the analysis and both output formats without a panic.

use proptest::prelude::*;
use restorewatch::analysis::{Settings, analyze};
use restorewatch::cli::output;
use restorewatch::cluster::Snapshot;
use restorewatch::model::{KINDS, parse_object};
use serde_json::{Value, json};

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        "[a-zA-Z0-9._/-]{0,12}".prop_map(Value::String),
        prop_oneof![
            Just("2026-11-20T10:00:00Z"),
            Just("Retain"),
            Just("Delete"),
            Just("Bound"),
            Just("Pending"),
            Just("Running"),
            Just("Succeeded"),
            Just("Failed"),
            Just("Halted"),
            Just("Completed"),
            Just("restore-test"),
            Just("vm-disk-data"),
            Just("vm-disk-data-orig-de3e"),
            Just("tenant-a"),
            Just("barman-cloud.cloudnative-pg.io"),
        ]
        .prop_map(|s| Value::String(s.to_string())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    "[a-z]{1,8}",
                    Just("spec".to_string()),
                    Just("status".to_string()),
                    Just("phase".to_string()),
                    Just("claimRef".to_string()),
                    Just("options".to_string()),
                    Just("volumeName".to_string()),
                    Just("conditions".to_string()),
                    Just("plugins".to_string()),
                    Just("bootstrap".to_string()),
                ],
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn arb_object() -> impl Strategy<Value = Value> {
    (
        0..KINDS.len(),
        arb_json(),
        arb_json(),
        arb_json(),
        "[a-z0-9-]{1,20}",
        prop::bool::ANY,
    )
        .prop_map(|(k, spec, status, labels, name, orig)| {
            let info = &KINDS[k];
            let name = if orig {
                format!("vm-disk-{name}-orig-de3e")
            } else {
                name
            };
            json!({
                "apiVersion": info.api_version(),
                "kind": info.api_kind,
                "metadata": {"name": name, "namespace": "tenant-a", "uid": name, "labels": labels,
                              "creationTimestamp": "2026-11-20T10:00:00Z"},
                "spec": spec,
                "status": status,
                "involvedObject": {"kind": "RestoreJob", "name": "restore-test"},
            })
        })
}

/// `PROPTEST_CASES` when set (CI runs more), else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_objects_never_panic(objs in prop::collection::vec(arb_object(), 0..24)) {
        let parsed: Vec<_> = objs.into_iter().filter_map(|v| parse_object(v).ok()).collect();
        let snap = Snapshot::from_objects(parsed);
        let now = "2026-11-20T11:00:00Z".parse().unwrap();
        let report = analyze(&snap, &Settings::default(), now);
        let _ = restorewatch::document::check_json::json(&report);
        let _ = output::text(&report, false);
    }

    #[test]
    fn arbitrary_documents_never_panic_the_loader(v in arb_json()) {
        let _ = parse_object(v.clone());
        let text = serde_json::to_string(&v).unwrap();
        let _ = restorewatch::cluster::files::load_text(&text, "prop");
    }
}

#[test]
fn wrong_types_read_as_unknown_not_as_defaults() {
    let rj = parse_object(json!({
        "apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob",
        "metadata": {"name": "r", "namespace": "n"},
        "spec": {"options": {"keepOriginalPVC": "yes"}},
        "status": {"phase": 42}
    }))
    .unwrap();
    let snap = Snapshot::from_objects([rj]);
    let r = &snap.restore_jobs.get("n", "r").unwrap();
    assert!(r.options.keep_original_pvc.is_invalid());
    let report = analyze(
        &snap,
        &Settings::default(),
        "2026-11-20T11:00:00Z".parse().unwrap(),
    );
    assert_eq!(report.restores[0].phase, "unknown");
    assert_eq!(report.restores[0].keep_original_pvc, None);
}

#[test]
fn huge_names_survive_every_output() {
    let long = "x".repeat(300);
    let rj = parse_object(json!({
        "apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob",
        "metadata": {"name": long, "namespace": "n", "uid": "u", "creationTimestamp": "2026-11-20T10:00:00Z"},
        "spec": {"backupRef": {"name": "b"}, "targetApplicationRef": {"kind": "VMInstance", "name": long}},
        "status": {"phase": "Running", "startedAt": "2026-11-20T10:00:00Z"}
    }))
    .unwrap();
    let pvc = parse_object(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": format!("vm-disk-{long}"), "namespace": "n"}, "status": {"phase": "Bound"}})).unwrap();
    // The disks come from the Backup's record (never from the namespace's vm-disk-* PVCs).
    let backup = parse_object(
        json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "Backup",
        "metadata": {"name": "b", "namespace": "n"},
        "spec": {"applicationRef": {"kind": "VMInstance", "name": long},
                 "strategyRef": {"kind": "Velero", "name": "velero"}},
        "status": {"underlyingResources": {"dataVolumes": [
            {"dataVolumeName": format!("vm-disk-{long}"), "applicationName": long}]}}}),
    )
    .unwrap();
    let snap = Snapshot::from_objects([rj, pvc, backup]);
    let report = analyze(
        &snap,
        &Settings::default(),
        "2026-11-20T10:05:00Z".parse().unwrap(),
    );
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.code.as_str() == "orig-name-too-long")
    );
    assert!(output::text(&report, true).contains("orig-name-too-long"));
}
