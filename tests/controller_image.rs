//! The backup controller's image as evidence of its generation, beyond `preflight`: one GET of
//! its Deployment in `cozy-backup-controller` (`backupstrategy-controller`, which runs the
//! restores; `backup-controller` only when that one is absent, as weaker evidence), carried into `check -o json`, the dashboard's
//! header (through the live source) and `/metrics`. An image up to v1.6.3 is an unguarded
//! controller; a newer tag, an absent Deployment or one the user may not read (403) is no
//! evidence: the generation stays unknown, and nothing else stops.

mod common;
#[path = "preflight_support/mod.rs"]
mod preflight_support;

use common::serve::{get, start_serve, wait_until};
use preflight_support::{Cluster, vm_objects};
use restorewatch::analysis::controller::Generation;
use restorewatch::cluster::controller_image::{
    BACKUP_CONTROLLER_DEPLOYMENT, BACKUP_CONTROLLER_NAMESPACE, STRATEGY_CONTROLLER_DEPLOYMENT,
};
use restorewatch::model::KINDS;
use restorewatch::sim::Rule;
use restorewatch::ui::{Msg, update};
use serde_json::{Value, json};

const OLD: &str = "ghcr.io/cozystack/cozystack/backupstrategy-controller:v1.6.3";
/// As Cozystack's chart renders it (dump 06 of the real controller): a tag and a digest.
const OLD_DIGEST: &str = "ghcr.io/cozystack/cozystack/backupstrategy-controller:v1.6.0@sha256:e8bf0521d1d1d8b90ebe66e9013010887033ba2653901799d57f2df47c9d879e";

fn deployment(name: &str, image: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": BACKUP_CONTROLLER_NAMESPACE},
        "spec": {"selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "manager", "image": image}]}}}})
}

/// Read access to every watched kind, and nothing else.
fn read_watched() -> Rule {
    Rule {
        verbs: vec!["get".into(), "list".into(), "watch".into()],
        resources: KINDS.iter().map(|k| k.plural.to_string()).collect(),
        namespaces: vec![],
    }
}

fn generation(doc: &Value) -> &str {
    doc["controller"]["generation"].as_str().unwrap_or("?")
}

fn evidence(doc: &Value) -> Vec<String> {
    doc["controller"]["evidence"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|e| e["what"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn check_json_carries_the_image_evidence_and_a_newer_absent_or_other_image_says_nothing() {
    let c = Cluster::start(vm_objects()).await;
    let deployments = c.sim.deployments();
    deployments
        .put(deployment(STRATEGY_CONTROLLER_DEPLOYMENT, OLD))
        .expect("loads");
    let doc = c.check().await;
    assert_eq!(generation(&doc), "unguarded", "{}", doc["controller"]);
    assert_eq!(
        evidence(&doc),
        vec![format!("image {OLD}: v1.6.3, before the fixes")]
    );

    // A newer tag proves nothing (which release has the fixes is not recorded).
    deployments
        .put(deployment(
            STRATEGY_CONTROLLER_DEPLOYMENT,
            "ghcr.io/cozystack/cozystack/backupstrategy-controller:v1.7.0",
        ))
        .expect("loads");
    let doc = c.check().await;
    assert_eq!(generation(&doc), "unknown", "{}", doc["controller"]);
    assert!(evidence(&doc).is_empty(), "{}", doc["controller"]);

    // The chart's form, tag and digest: still the tag's release.
    deployments
        .put(deployment(STRATEGY_CONTROLLER_DEPLOYMENT, OLD_DIGEST))
        .expect("loads");
    let doc = c.check().await;
    assert_eq!(generation(&doc), "unguarded", "{}", doc["controller"]);

    // Only the Plans controller (`backup-controller`) there: weaker evidence, said so, and
    // used only where the objects say nothing.
    deployments.remove(BACKUP_CONTROLLER_NAMESPACE, STRATEGY_CONTROLLER_DEPLOYMENT);
    deployments
        .put(deployment(
            BACKUP_CONTROLLER_DEPLOYMENT,
            "ghcr.io/cozystack/cozystack/backup-controller:v1.6.0",
        ))
        .expect("loads");
    let doc = c.check().await;
    assert_eq!(generation(&doc), "unguarded", "{}", doc["controller"]);
    assert!(
        evidence(&doc)[0].contains("Deployment backup-controller"),
        "{}",
        doc["controller"]
    );

    // No Deployment at all is a 404, no evidence and no error.
    deployments.remove(BACKUP_CONTROLLER_NAMESPACE, BACKUP_CONTROLLER_DEPLOYMENT);
    let (code, out, err) = c.run(&["check", "-o", "json"], None).await;
    assert_eq!(code, 0, "{out}{err}");
    let doc: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(generation(&doc), "unknown", "{}", doc["controller"]);
    assert!(!err.contains("deployments"), "a 404 is said nowhere: {err}");
    c.stop().await;
}

/// The fallback never outweighs the objects: an `-orig` PVC the fixed controller annotated
/// beside an old `backup-controller` image is guarded; the strategy controller's own old image
/// (the controller now) would make it unguarded.
#[tokio::test]
async fn the_plans_controllers_image_is_weaker_than_the_objects_and_the_strategy_controllers_is_not()
 {
    let mut objs = vm_objects();
    let mut rj = preflight_support::live_rj("restore-test", "Running");
    rj["metadata"]["uid"] = json!("5c96b3b8-0000-4000-8000-000000000001");
    let mut orig = preflight_support::foreign_orig(
        "vm-disk-data-orig-de3e",
        Some("5c96b3b8-0000-4000-8000-000000000001"),
    );
    orig["metadata"]["creationTimestamp"] = json!("2026-11-20T10:00:40Z");
    orig["x-writer"] = json!("backupstrategy-controller");
    objs.extend([rj, orig]);
    let c = Cluster::start(objs).await;
    let deployments = c.sim.deployments();
    deployments
        .put(deployment(
            BACKUP_CONTROLLER_DEPLOYMENT,
            "ghcr.io/cozystack/cozystack/backup-controller:v1.6.0",
        ))
        .expect("loads");
    let doc = c.check().await;
    assert_eq!(generation(&doc), "guarded", "{}", doc["controller"]);
    deployments
        .put(deployment(STRATEGY_CONTROLLER_DEPLOYMENT, OLD))
        .expect("loads");
    let doc = c.check().await;
    assert_eq!(generation(&doc), "unguarded", "{}", doc["controller"]);
    c.stop().await;
}

#[tokio::test]
async fn a_user_who_may_not_read_the_deployment_stays_unknown_and_check_runs_on() {
    let mut objs = vm_objects();
    objs.push(json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": BACKUP_CONTROLLER_NAMESPACE}}));
    let c = Cluster::start_as(vec![read_watched()], objs.clone()).await;
    c.sim
        .deployments()
        .put(deployment(STRATEGY_CONTROLLER_DEPLOYMENT, OLD))
        .expect("loads");
    let (code, out, err) = c.run(&["check", "-o", "json"], None).await;
    assert_eq!(code, 0, "a 403 on the Deployment stops nothing: {out}{err}");
    let doc: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(generation(&doc), "unknown", "{}", doc["controller"]);
    assert!(evidence(&doc).is_empty(), "{}", doc["controller"]);
    c.stop().await;

    // The near miss: the same user granted that one GET sees the old controller.
    let get_it = Rule {
        verbs: vec!["get".into()],
        resources: vec!["deployments".into()],
        namespaces: vec![BACKUP_CONTROLLER_NAMESPACE.into()],
    };
    let c = Cluster::start_as(vec![read_watched(), get_it], objs).await;
    c.sim
        .deployments()
        .put(deployment(STRATEGY_CONTROLLER_DEPLOYMENT, OLD))
        .expect("loads");
    let doc = c.check().await;
    assert_eq!(generation(&doc), "unguarded", "{}", doc["controller"]);
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_header_names_the_image_as_evidence() {
    let c = Cluster::start(vm_objects()).await;
    c.sim
        .deployments()
        .put(deployment(STRATEGY_CONTROLLER_DEPLOYMENT, OLD))
        .expect("loads");
    let source = common::watch_everything(c.sim.client().expect("client"));
    let mut frames = source.frames.clone();
    let frame = common::wait_frame(
        &mut frames,
        30,
        "the image's evidence",
        |f| f.report.controller.generation == Generation::Unguarded,
        |f| format!("{:?}", f.map(|f| &f.report.controller)),
    )
    .await;
    let mut a = common::ui_data::app(200, 24);
    update(&mut a, Msg::Frame(Some(frame)));
    let header = common::render(&a)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(
        header.contains(&format!(
            "controller: unguarded (evidence: image {OLD}: v1.6.3, before the fixes)"
        )),
        "{header}"
    );
    drop(source);
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_carry_the_image_evidence_and_a_403_leaves_the_generation_unknown() {
    let c = Cluster::start(vm_objects()).await;
    c.sim
        .deployments()
        .put(deployment(STRATEGY_CONTROLLER_DEPLOYMENT, OLD))
        .expect("loads");
    let (kc, log) = (c.kubeconfig().to_path_buf(), c.dir().join("serve.log"));
    tokio::task::spawn_blocking(move || {
        let (_serve, addr) = start_serve(&kc, &[], &log, None);
        wait_until("the controller metric with the image's evidence", || {
            let (_, m) = get(&addr, "/metrics")?;
            m.lines()
                .any(|l| {
                    l.starts_with("restorewatch_backup_controller_info{")
                        && l.contains("generation=\"unguarded\"")
                        && l.contains(&format!("evidence: image {OLD}"))
                })
                .then_some(())
        });
    })
    .await
    .expect("serve");
    c.stop().await;

    // Forbidden the Deployment: serve says so once in its log, stays ready, and the metric
    // says unknown (read after the refusal was logged, so the GET did happen).
    let c = Cluster::start_as(vec![read_watched()], vm_objects()).await;
    c.sim
        .deployments()
        .put(deployment(STRATEGY_CONTROLLER_DEPLOYMENT, OLD))
        .expect("loads");
    let (kc, log) = (c.kubeconfig().to_path_buf(), c.dir().join("serve.log"));
    tokio::task::spawn_blocking(move || {
        let (_serve, addr) = start_serve(&kc, &[], &log, Some("info"));
        wait_until("the refusal in the log", || {
            let text = std::fs::read_to_string(&log).ok()?;
            text.contains("the backup controller's Deployment cannot be read")
                .then_some(())
        });
        let metrics = wait_until("ready metrics", || {
            get(&addr, "/metrics")
                .map(|(_, m)| m)
                .filter(|m| m.contains("restorewatch_ready 1"))
        });
        let line = metrics
            .lines()
            .find(|l| l.starts_with("restorewatch_backup_controller_info{"))
            .unwrap_or_default();
        assert!(line.contains("generation=\"unknown\""), "{metrics}");
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(
            text.contains("forbidden") || text.contains("403"),
            "the log says why: {text}"
        );
    })
    .await
    .expect("serve");
    c.stop().await;
}
