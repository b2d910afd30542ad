//! A change redoes one namespace, and the report made for it shares the rest with the report
//! before: the other namespaces' index (where each restore's findings are) and the backup
//! controller's generation with its evidence are the previous report's, not rebuilt or copied
//! per change (on a real server's dump: 1,193 findings re-indexed and 400 evidence lines copied
//! for every changed PVC). Every lookup through the index answers what a scan answers.

use restorewatch::analysis::{Code, Report, RestoreId, Settings, analyze};
use restorewatch::cluster::files::load_bytes;
use restorewatch::cluster::{ObjKey, Snapshot, SyncState};
use restorewatch::model::{AnyObject, Kind};
use restorewatch::pipeline::{Analyzer, Changes};
use std::path::Path;
use std::sync::Arc;

/// Each fixture in tenant-a (as written) and again in tenant-q.
fn objects(files: &[&str]) -> Vec<AnyObject> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(root.join(f)).expect("fixture readable");
        for t in [text.clone(), text.replace("tenant-a", "tenant-q")] {
            out.extend(load_bytes(t.as_bytes(), f).objects);
        }
    }
    out
}

/// Every restore's findings through the index (by id, and by the restore's position, which
/// must answer the same), and through a scan of the report.
fn by_index_and_by_scan(r: &Report) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
    let ids: Vec<&RestoreId> = r.restores.iter().map(|v| &v.id).collect();
    let indexed: Vec<Vec<String>> = ids
        .iter()
        .map(|id| r.findings_for(id).map(|f| format!("{f:?}")).collect())
        .collect();
    let by_position: Vec<Vec<String>> = (0..ids.len())
        .map(|i| r.finding_arcs_at(i).map(|f| format!("{f:?}")).collect())
        .collect();
    assert_eq!(by_position, indexed, "by position and by id");
    let scanned = ids
        .iter()
        .map(|id| {
            r.findings
                .iter()
                .filter(|f| f.restore.as_ref() == Some(*id))
                .map(|f| format!("{f:?}"))
                .collect()
        })
        .collect();
    (indexed, scanned)
}

#[test]
fn a_change_in_one_namespace_leaves_the_others_index_and_the_controller_generation_shared() {
    let now: jiff::Timestamp = "2026-11-20T10:06:00Z".parse().unwrap();
    let mut snap = Snapshot::default();
    snap.mark_every_kind(SyncState::Synced, Some(now));
    let objs = objects(&[
        "disk-not-kept/prefix-keep-failed.yaml",
        "concurrent-restores/two-running.json",
    ]);
    for o in objs.iter().cloned() {
        snap.objects.insert(o);
    }
    let settings = Settings::default();
    let mut a = Analyzer::new(Arc::new(snap.clone()), settings.clone(), now);
    let before = Arc::clone(a.report());
    // Both tenants hold restores with findings of their own and a cluster-wide one
    // (concurrent-restores) about them.
    for ns in ["tenant-a", "tenant-q"] {
        assert!(before.index.of_namespace(ns).is_some(), "{ns} indexed");
        for code in [Code::DiskNotKept, Code::ConcurrentRestores] {
            assert!(
                before
                    .findings
                    .iter()
                    .any(|f| f.code == code
                        && f.restore.as_ref().is_some_and(|id| id.namespace == ns)),
                "{code:?} in {ns}"
            );
        }
    }
    let (indexed, scanned) = by_index_and_by_scan(&before);
    assert_eq!(indexed, scanned);

    // An annotation on one of tenant-a's PVCs.
    let mut pvc = objs
        .iter()
        .find(|o| {
            o.kind() == Kind::PersistentVolumeClaim
                && o.meta().namespace == "tenant-a"
                && !o.meta().name.contains("-orig")
        })
        .expect("a PVC in tenant-a")
        .clone();
    pvc.meta_mut().last_change = Some(now);
    let key = ObjKey::new(pvc.meta().namespace.clone(), pvc.meta().name.clone());
    snap.objects.insert(pvc);
    let mut changes = Changes::default();
    changes.object(Kind::PersistentVolumeClaim, key);
    let after = a.apply(Arc::new(snap.clone()), &changes);

    let mut full = analyze(&snap, &settings, now);
    full.now = after.now;
    assert_eq!(*after, full, "the incremental report is the full one");
    let (indexed, scanned) = by_index_and_by_scan(&after);
    assert_eq!(indexed, scanned);
    assert!(
        Arc::ptr_eq(&before.controller, &after.controller),
        "the controller generation is handed on, not copied"
    );
    assert!(
        Arc::ptr_eq(
            before.index.of_namespace("tenant-q").unwrap(),
            after.index.of_namespace("tenant-q").unwrap()
        ),
        "tenant-q's index is the one built before"
    );
    assert!(
        !Arc::ptr_eq(
            before.index.of_namespace("tenant-a").unwrap(),
            after.index.of_namespace("tenant-a").unwrap()
        ),
        "tenant-a's index is rebuilt with its part"
    );
}
