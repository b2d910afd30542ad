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

/// The dashboard remembers each restore's row and place in the list between frames, and tells
/// an unchanged restore by where the report filed its findings, not by reading them: a screen
/// drawn from remembered rows must be the screen a fresh dashboard draws of the same frame,
/// whatever the change (one namespace redone, a cluster-wide finding gone and back).
#[test]
fn remembered_rows_draw_what_a_fresh_screen_draws_after_every_change() {
    use restorewatch::pipeline::Frame;
    use restorewatch::ui::{App, Msg, UiOptions, update, view};

    let now: jiff::Timestamp = "2026-11-20T10:06:00Z".parse().unwrap();
    let render = |app: &App| {
        let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(160, 30)).unwrap();
        t.draw(|f| view(app, f)).unwrap();
        let buf = t.backend().buffer();
        (0..30)
            .map(|y| (0..160).map(|x| buf[(x, y)].symbol()).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let frame = |seq: u64, snap: &Snapshot, report: Arc<Report>| {
        Arc::new(Frame {
            seq,
            snapshot: Arc::new(snap.clone()),
            report,
            analyzed_at: now,
        })
    };
    let fresh = |f: &Arc<Frame>| {
        let mut app = App::new(UiOptions::default(), now, (160, 30));
        update(&mut app, Msg::Frame(Some(Arc::clone(f))));
        render(&app)
    };

    // tenant-a's restore copies vm1 into tenant-b, where restore-test restores it in place: a
    // cluster-wide finding about each, so tenant-a's row changes when tenant-b's restore goes
    // although tenant-a itself is not redone.
    let mut snap = Snapshot::default();
    snap.mark_every_kind(SyncState::Synced, Some(now));
    let file = "concurrent-restores/copy-into-namespace-restored-in-place.yaml";
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let text = std::fs::read_to_string(root.join(file)).expect("fixture readable");
    let objs = load_bytes(text.as_bytes(), file).objects;
    for o in objs.iter().cloned() {
        snap.objects.insert(o);
    }
    let mut a = Analyzer::new(Arc::new(snap.clone()), Settings::default(), now);
    let mut app = App::new(UiOptions::default(), now, (160, 30));
    let first = frame(1, &snap, Arc::clone(a.report()));
    update(&mut app, Msg::Frame(Some(Arc::clone(&first))));
    let shown_first = render(&app);
    assert_eq!(shown_first, fresh(&first));

    // tenant-b's restore goes, then comes back.
    let rj = objs
        .iter()
        .find(|o| o.kind() == Kind::RestoreJob && o.meta().namespace == "tenant-b")
        .expect("a RestoreJob in tenant-b")
        .clone();
    let key = ObjKey::new(rj.meta().namespace.clone(), rj.meta().name.clone());
    let mut pvc = objs
        .iter()
        .find(|o| o.kind() == Kind::PersistentVolumeClaim && o.meta().namespace == "tenant-b")
        .expect("a PVC in tenant-b")
        .clone();
    pvc.meta_mut().last_change = Some(now);
    let pvc_key = ObjKey::new(pvc.meta().namespace.clone(), pvc.meta().name.clone());

    let mut screens = vec![shown_first];
    for (seq, step) in (2u64..).zip(["pvc", "delete", "back"]) {
        let mut changes = Changes::default();
        match step {
            "pvc" => {
                snap.objects.insert(pvc.clone());
                changes.object(Kind::PersistentVolumeClaim, pvc_key.clone());
            }
            "delete" => {
                snap.objects.remove(Kind::RestoreJob, &key);
                changes.object(Kind::RestoreJob, key.clone());
            }
            _ => {
                snap.objects.insert(rj.clone());
                changes.object(Kind::RestoreJob, key.clone());
            }
        }
        let report = a.apply(Arc::new(snap.clone()), &changes);
        let f = frame(seq, &snap, report);
        update(&mut app, Msg::Frame(Some(Arc::clone(&f))));
        let shown = render(&app);
        assert_eq!(shown, fresh(&f), "after {step}");
        screens.push(shown);
    }
    assert_ne!(screens[1], screens[2], "the deleted restore's list changed");
    assert_eq!(screens[1], screens[3], "and is as it was once it is back");
    let row = |screen: &str| {
        screen
            .lines()
            .find(|l| l.contains("restore-to-b"))
            .map(str::to_string)
            .unwrap_or_default()
    };
    assert!(!row(&screens[1]).is_empty(), "{}", screens[1]);
    assert_ne!(
        row(&screens[1]),
        row(&screens[2]),
        "tenant-a's row no longer counts the concurrent restore"
    );
}
