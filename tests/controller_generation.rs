//! Which backup controller the cluster runs, told from evidence only, as `check -o json` reports
//! it from the live emulator: each piece of evidence, and the near misses that are not evidence
//! (a person's or restorewatch's own write, no objects at all).

mod preflight_support;

use preflight_support::*;
use restorewatch::actions::execute::{Executor, plan_fresh};
use restorewatch::actions::{ActionRequest, Target};
use restorewatch::analysis::ActionKind;
use serde_json::{Value, json};

const RJ_UID: &str = "5c96b3b8-0000-4000-8000-000000000001";

fn running_rj() -> Value {
    let mut rj = live_rj("restore-test", "Running");
    rj["metadata"]["uid"] = json!(RJ_UID);
    rj
}

/// The `-orig` PVC of `restore-test`'s disk, made after it by `writer` (a field manager).
fn orig_by(writer: &str, annotated: bool) -> Value {
    let mut v = foreign_orig("vm-disk-data-orig-de3e", annotated.then_some(RJ_UID));
    v["metadata"]["creationTimestamp"] = json!("2026-11-20T10:00:40Z");
    v["x-writer"] = json!(writer);
    v
}

async fn generation(objs: Vec<Value>) -> Value {
    let sim = Cluster::start(objs).await;
    let doc = sim.check().await;
    sim.stop().await;
    doc["controller"].clone()
}

#[tokio::test]
async fn without_evidence_the_generation_is_unknown() {
    let g = generation(vm_objects()).await;
    assert_eq!(g["generation"], "unknown", "{g:#}");
    assert_eq!(g["evidence"], json!([]));
}

#[tokio::test]
async fn an_orig_pvc_the_controller_annotated_shows_a_guarded_controller_and_one_a_person_made_does_not()
 {
    let mut objs = vm_objects();
    objs.extend([running_rj(), orig_by("backup-controller", true)]);
    let g = generation(objs).await;
    assert_eq!(g["generation"], "guarded", "{g:#}");
    let what = g["evidence"][0]["what"].as_str().unwrap();
    assert!(
        what.contains(
            "vm-disk-data-orig-de3e carries restore-job-uid (written by backup-controller)"
        ),
        "{what}"
    );

    let mut objs = vm_objects();
    objs.extend([running_rj(), orig_by("kubectl-create", true)]);
    let g = generation(objs).await;
    assert_eq!(
        g["generation"], "unknown",
        "a person's copy proves nothing: {g:#}"
    );
}

#[tokio::test]
async fn restorewatchs_own_rename_is_not_taken_for_the_controllers() {
    let mut objs = vm_objects();
    objs.push(running_rj());
    let sim = Cluster::start(objs).await;
    let client = sim.sim.client().expect("client");
    let req = ActionRequest::new(
        ActionKind::ResumeRename,
        Target::Restore {
            namespace: NS.into(),
            name: "restore-test".into(),
        },
    );
    let plan = plan_fresh(&client, &req)
        .await
        .expect("reads")
        .expect("the rename is planned");
    let ex = Executor {
        client: client.clone(),
        user: "test".into(),
        context: "sim".into(),
        server: "http://sim".into(),
        audit: None,
        events: false,
        max_writes: None,
        bind_wait: std::time::Duration::ZERO,
    };
    let outcome = ex.execute(&plan, |_| {}).await;
    assert!(outcome.writes() >= 3, "the rename wrote: {outcome:?}");
    let annotated = sim
        .sim
        .store()
        .get(
            restorewatch::model::Kind::PersistentVolumeClaim,
            NS,
            "vm-disk-data-orig-de3e",
        )
        .expect("the -orig PVC exists");
    assert_eq!(
        annotated["metadata"]["annotations"]["backups.cozystack.io/restore-job-uid"],
        RJ_UID
    );
    let g = sim.check().await["controller"].clone();
    assert_eq!(g["generation"], "unknown", "{g:#}");
    sim.stop().await;
}

#[tokio::test]
async fn a_recorded_reclaim_policy_written_by_the_controller_shows_a_guarded_controller() {
    let mut objs = vm_objects();
    let mut pv = objs[5].clone();
    pv["metadata"]["name"] = json!("pv-kept");
    pv["metadata"]["annotations"] =
        json!({"backups.cozystack.io/original-reclaim-policy": "Delete"});
    pv["spec"]["persistentVolumeReclaimPolicy"] = json!("Retain");
    pv["spec"]["claimRef"]["name"] = json!("vm-disk-data-orig-de3e");
    pv["x-writer"] = json!("backup-controller");
    objs.push(pv);
    let g = generation(objs).await;
    assert_eq!(g["generation"], "guarded", "{g:#}");
    assert!(
        g["evidence"][0]["what"]
            .as_str()
            .unwrap()
            .contains("PV pv-kept carries original-reclaim-policy"),
        "{g:#}"
    );
}

#[tokio::test]
async fn a_restore_failed_on_a_taken_orig_name_shows_a_guarded_controller() {
    let mut objs = vm_objects();
    objs.push(failed_rj_naming("old-restore", "vm-disk-data-orig-1a2b"));
    let g = generation(objs).await;
    assert_eq!(g["generation"], "guarded", "{g:#}");

    // Near miss: a restore failed for another reason names no -orig PVC.
    let mut objs = vm_objects();
    let mut rj = failed_rj_naming("old-restore", "x");
    rj["status"]["message"] = json!("Velero Restore failed with phase: PartiallyFailed");
    objs.push(rj);
    let g = generation(objs).await;
    assert_eq!(g["generation"], "unknown", "{g:#}");
}

#[tokio::test]
async fn an_orig_pvc_the_controller_made_without_the_uid_shows_an_unguarded_one_until_an_upgrade() {
    let mut objs = vm_objects();
    objs.extend([running_rj(), orig_by("backup-controller", false)]);
    let g = generation(objs.clone()).await;
    assert_eq!(g["generation"], "unguarded", "{g:#}");
    assert!(
        g["evidence"][0]["what"].as_str().unwrap().contains(
            "made by backup-controller for RestoreJob restore-test, has no restore-job-uid"
        ),
        "{g:#}"
    );
    // A later failure only the fixed controller makes: upgraded since.
    let mut later = failed_rj_naming("new-restore", "vm-disk-data-orig-1a2b");
    later["status"]["completedAt"] = json!("2026-11-25T10:00:00Z");
    objs.push(later);
    let g = generation(objs).await;
    assert_eq!(g["generation"], "guarded", "{g:#}");
}

#[tokio::test]
async fn the_pv_controllers_annotations_beside_restorewatchs_are_not_the_controllers() {
    // As a real server records an -orig PVC restorewatch made and the PV controller then bound:
    // the UID annotation is restorewatch's, the PV controller owns its own annotation.
    let mut orig = foreign_orig("vm-disk-data-orig-de3e", Some(RJ_UID));
    orig["metadata"]["managedFields"] = json!([
        {"manager": "restorewatch", "operation": "Update", "time": "2026-11-20T10:00:40Z",
         "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:annotations": {
             "f:backups.cozystack.io/restore-job-uid": {}}}, "f:spec": {"f:volumeName": {}}}},
        {"manager": "kube-controller-manager", "operation": "Update", "time": "2026-11-20T10:00:55Z",
         "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:annotations": {
             "f:pv.kubernetes.io/bind-completed": {}}}}}
    ]);
    let mut objs = vm_objects();
    objs.extend([running_rj(), orig.clone()]);
    let sim = Cluster::start_still(objs).await;
    let g = sim.check().await["controller"].clone();
    assert_eq!(g["generation"], "unknown", "{g:#}");
    sim.stop().await;

    // Near miss: the same PVC with the UID annotation written by the backup controller.
    orig["metadata"]["managedFields"][0]["manager"] = json!("backup-controller");
    let mut objs = vm_objects();
    objs.extend([running_rj(), orig]);
    let sim = Cluster::start_still(objs).await;
    let g = sim.check().await["controller"].clone();
    assert_eq!(g["generation"], "guarded", "{g:#}");
    sim.stop().await;
}

/// An old restore's `-orig` PVC the real (unguarded) controller made, as a real server records
/// it: manager `backupstrategy-controller`, no `restore-job-uid`.
fn unguarded_leftover() -> Vec<Value> {
    let mut old_rj = live_rj("old-restore", "Succeeded");
    old_rj["metadata"]["creationTimestamp"] = json!("2026-10-01T09:00:00Z");
    let hash = restorewatch::model::names::short_hash("old-restore");
    let mut orig = foreign_orig(&format!("vm-disk-data-orig-{hash}"), None);
    orig["x-writer"] = json!("backupstrategy-controller");
    vec![old_rj, orig]
}

/// Every write of a repair is recorded under manager `restorewatch` (never `unknown`, which
/// a real server records for a request with neither fieldManager nor User-Agent), and every
/// request the binary makes (lists, the Deployment's GET, reads before writes, writes) names
/// itself `restorewatch/<version>`.
#[tokio::test]
async fn restorewatchs_writes_are_recorded_under_its_own_field_manager() {
    let mut objs = vm_objects();
    objs.push(running_rj());
    let sim = Cluster::start(objs).await;
    let (code, out, err) = sim
        .run(
            &[
                "action",
                "resume-rename",
                "--restore",
                "tenant-a/restore-test",
                "--yes",
            ],
            None,
        )
        .await;
    assert_eq!(code, 0, "{out}{err}");
    let store = sim.sim.store();
    let orig = store
        .get(
            restorewatch::model::Kind::PersistentVolumeClaim,
            NS,
            "vm-disk-data-orig-de3e",
        )
        .expect("the -orig PVC was made");
    let pv = store
        .get(restorewatch::model::Kind::PersistentVolume, "", "pv-data")
        .expect("the PV");
    for (what, obj) in [("-orig PVC", &orig), ("PV", &pv)] {
        let managers: Vec<&str> = obj["metadata"]["managedFields"]
            .as_array()
            .map(|a| a.iter().filter_map(|m| m["manager"].as_str()).collect())
            .unwrap_or_default();
        assert!(
            managers.contains(&"restorewatch"),
            "{what}: managers {managers:?}"
        );
        assert!(
            !managers.iter().any(|m| *m == "unknown" || m.is_empty()),
            "{what}: managers {managers:?}"
        );
    }
    let metrics: Value = reqwest_free_get(&sim.sim.url()).await;
    let agents = metrics["userAgents"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        agents,
        vec![json!(format!("restorewatch/{}", env!("CARGO_PKG_VERSION")))],
        "every request names restorewatch: {metrics}"
    );
    sim.stop().await;
}

/// `GET /metrics` of the emulator (its request counters), over a plain socket.
async fn reqwest_free_get(url: &str) -> Value {
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    tokio::task::spawn_blocking(move || {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(&addr).expect("connect");
        write!(s, "GET /metrics HTTP/1.0\r\nHost: {addr}\r\n\r\n").expect("request");
        let mut text = String::new();
        s.read_to_string(&mut text).expect("answer");
        let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
        serde_json::from_str(body).expect("JSON")
    })
    .await
    .expect("task")
}

/// The real run's state 03-b: on a cluster whose controller is unguarded, restorewatch's repair
/// writes the same `restore-job-uid` annotations the fixed controller would; they are not the
/// controller's, and the generation stays `unguarded` (under `guarded`, `orig-pvc-foreign`
/// would tell the operator nothing is lost).
#[tokio::test]
async fn a_repair_on_an_unguarded_cluster_leaves_it_unguarded() {
    let mut objs = vm_objects();
    objs.push(running_rj());
    objs.extend(unguarded_leftover());
    let sim = Cluster::start(objs).await;
    let g = sim.check().await["controller"].clone();
    assert_eq!(g["generation"], "unguarded", "before the repair: {g:#}");
    let (code, out, err) = sim
        .run(
            &[
                "action",
                "resume-rename",
                "--restore",
                "tenant-a/restore-test",
                "--yes",
            ],
            None,
        )
        .await;
    assert_eq!(code, 0, "{out}{err}");
    let orig = sim
        .sim
        .store()
        .get(
            restorewatch::model::Kind::PersistentVolumeClaim,
            NS,
            "vm-disk-data-orig-de3e",
        )
        .expect("the repair made the -orig PVC");
    assert_eq!(
        orig["metadata"]["annotations"]["backups.cozystack.io/restore-job-uid"],
        RJ_UID
    );
    let g = sim.check().await["controller"].clone();
    assert_eq!(g["generation"], "unguarded", "after the repair: {g:#}");
    sim.stop().await;
}

/// A `-orig` PVC the unguarded controller made and restorewatch annotated later (dumps 03-b,
/// 04-b): still the old controller's work, whoever added the annotation since.
#[tokio::test]
async fn an_annotation_added_by_a_repair_does_not_hide_the_controller_that_made_the_pvc() {
    let mut orig = foreign_orig("vm-disk-data-orig-de3e", None);
    orig["metadata"]["creationTimestamp"] = json!("2026-11-20T10:00:40Z");
    orig["metadata"]["managedFields"] = json!([
        {"manager": "backupstrategy-controller", "operation": "Update", "time": "2026-11-20T10:00:40Z",
         "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:accessModes": {}, "f:volumeName": {}}}},
        {"manager": "unknown", "operation": "Update", "time": "2026-11-20T10:05:00Z",
         "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:annotations": {
             "f:backups.cozystack.io/restore-job-uid": {}}}}}
    ]);
    orig["metadata"]["annotations"] = json!({"backups.cozystack.io/restore-job-uid": RJ_UID});
    let mut objs = vm_objects();
    objs.extend([running_rj(), orig]);
    let sim = Cluster::start_still(objs).await;
    let g = sim.check().await["controller"].clone();
    assert_eq!(g["generation"], "unguarded", "{g:#}");
    assert!(
        g["evidence"][0]["what"]
            .as_str()
            .unwrap_or_default()
            .contains("added since by unknown"),
        "{g:#}"
    );
    sim.stop().await;
}

/// One generation at one moment, whatever the view: the evidence sits in another namespace
/// (an old restore's `-orig` PVC the unguarded controller made there), and `check`, `check -n`
/// of the application's namespace and `preflight` there all say `unguarded` (scoped reads
/// judged from their own namespace alone and said `unknown`).
#[tokio::test]
async fn check_check_n_and_preflight_read_one_generation() {
    let sim = Cluster::start(evidence_elsewhere()).await;
    let all = sim.check().await["controller"].clone();
    assert_eq!(all["generation"], "unguarded", "{all:#}");
    let (_, out, err) = sim.run(&["check", "-n", NS, "-o", "json"], None).await;
    let scoped: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    assert_eq!(scoped["controller"], all, "check -n {NS}");
    let (_, pf) = sim.preflight_app("restore-new").await;
    assert_eq!(pf["controller"], all, "preflight in {NS}");
    sim.stop().await;
}

/// The application in tenant-a; the only evidence in another namespace: an old restore's
/// `-orig` PVC the unguarded controller made there.
fn evidence_elsewhere() -> Vec<Value> {
    let mut objs = vm_objects();
    let mut old_rj = live_rj("old-restore", "Succeeded");
    old_rj["metadata"]["namespace"] = json!("tenant-old");
    old_rj["metadata"]["creationTimestamp"] = json!("2026-10-01T09:00:00Z");
    let hash = restorewatch::model::names::short_hash("old-restore");
    let mut orig = foreign_orig(&format!("vm-disk-data-orig-{hash}"), None);
    orig["metadata"]["namespace"] = json!("tenant-old");
    orig["x-writer"] = json!("backupstrategy-controller");
    objs.extend([
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tenant-old"}}),
        old_rj,
        orig,
    ]);
    objs
}

/// The dashboard on one namespace judges it as `check` does: its header's generation comes
/// from the same evidence, read beyond the namespace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_on_one_namespace_reads_the_same_generation() {
    let sim = Cluster::start(evidence_elsewhere()).await;
    let opts = restorewatch::pipeline::live::LiveOptions {
        namespace: Some(NS.into()),
        context: "test".into(),
        cluster: "sim".into(),
        settings: restorewatch::analysis::Settings::default(),
    };
    let source = restorewatch::pipeline::live::start(sim.sim.client().expect("client"), opts);
    let mut frames = source.frames.clone();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let seen = frames.borrow_and_update().clone();
        if let Some(f) = &seen
            && f.report.controller.generation.as_str() == "unguarded"
        {
            break;
        }
        let what = seen.map(|f| f.report.controller.summary());
        tokio::time::timeout_at(deadline, frames.changed())
            .await
            .unwrap_or_else(|_| panic!("the header's generation stayed {what:?}"))
            .expect("frames");
    }
    drop(source);
    sim.stop().await;
}
