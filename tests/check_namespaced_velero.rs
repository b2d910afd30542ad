//! `check -n NS` reads the Velero objects of NS's restores where they live (Velero's namespace
//! `cozy-velero`), by label, as a user whose RBAC grants only that: the namespace's kinds in NS,
//! the cluster-scoped kinds, and Velero Restores, DataDownloads and Backups in `cozy-velero`. A succeeded
//! restore then shows its Velero step done and its download, as an unscoped `check` does; a
//! user who may not read them is told so, never shown a restore whose Velero side is "pending".

mod common;
#[path = "preflight_support/mod.rs"]
mod preflight_support;

use preflight_support::Cluster;
use restorewatch::model::KINDS;
use restorewatch::sim::Rule;
use serde_json::Value;

const NOW: &str = "2026-11-20T10:30:00Z";
const NS: &str = "tenant-a";

fn rule(verbs: &[&str], resources: &[&str], namespaces: &[&str]) -> Rule {
    Rule {
        verbs: verbs.iter().map(|s| s.to_string()).collect(),
        resources: resources.iter().map(|s| s.to_string()).collect(),
        namespaces: namespaces.iter().map(|s| s.to_string()).collect(),
    }
}

/// What a tenant's operator is granted: its namespace, the cluster-scoped kinds, and (when
/// `velero`) the Velero objects in Velero's namespace, nothing else.
fn tenant_rules(velero: bool) -> Vec<Rule> {
    let read = ["get", "list", "watch"];
    let cluster_scoped: Vec<&str> = KINDS
        .iter()
        .filter(|k| !k.namespaced)
        .map(|k| k.plural)
        .collect();
    let own: Vec<&str> = KINDS
        .iter()
        .filter(|k| k.namespaced && k.group != "velero.io")
        .map(|k| k.plural)
        .collect();
    let mut rules = vec![rule(&read, &own, &[NS]), rule(&read, &cluster_scoped, &[])];
    if velero {
        rules.push(rule(
            &read,
            &["restores", "datadownloads", "backups"],
            &["cozy-velero"],
        ));
    }
    rules
}

/// A succeeded in-place restore of tenant-a (both disks downloaded), and the same restore of
/// another tenant, whose Velero objects sit beside it in `cozy-velero`.
async fn cluster(rules: Vec<Rule>) -> Cluster {
    cluster_with(rules, |_| {}).await
}

/// `cluster`, each of tenant-a's objects changed by `edit` before it is loaded.
async fn cluster_with(rules: Vec<Rule>, edit: impl Fn(&mut Value)) -> Cluster {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/healthy/vm-postfix-succeeded.yaml");
    let text = std::fs::read_to_string(&path).expect("fixture");
    let c = Cluster::start_as(rules, Vec::new()).await;
    c.sim.set_controller_manager(false);
    for mut v in restorewatch::cluster::files::load_values(text.as_bytes(), "fixture").values {
        edit(&mut v);
        c.sim.store().load(v).expect("loads");
    }
    // Another tenant's Velero objects beside them (its other objects would share PV names).
    let other = text.replace("tenant-a", "tenant-z");
    for v in restorewatch::cluster::files::load_values(other.as_bytes(), "fixture").values {
        if v["metadata"]["namespace"] == "cozy-velero" {
            // Its own Restore, with its own UID (the copy's text kept tenant-a's).
            let mut v = v;
            let uid = "00000000-0000-4000-8000-00000000000z";
            if v["kind"] == "Restore" {
                v["metadata"]["uid"] = uid.into();
            } else if v["kind"] == "DataDownload" {
                v["metadata"]["labels"]["velero.io/restore-uid"] = uid.into();
                v["metadata"]["ownerReferences"][0]["uid"] = uid.into();
            }
            c.sim.store().load(v).expect("loads");
        }
    }
    c
}

fn restore(doc: &Value) -> &Value {
    doc["restores"]
        .as_array()
        .and_then(|a| a.iter().find(|r| r["name"] == "restore-test"))
        .unwrap_or_else(|| panic!("no restore-test: {doc:#}"))
}

fn step<'a>(r: &'a Value, id: &str) -> &'a Value {
    r["steps"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["id"] == id))
        .unwrap_or_else(|| panic!("no step {id}: {r:#}"))
}

#[tokio::test]
async fn check_of_one_namespace_reads_its_restores_velero_objects_by_label() {
    let c = cluster(tenant_rules(true)).await;
    let (code, out, err) = c
        .run(&["check", "-n", NS, "--now", NOW, "-o", "json"], None)
        .await;
    assert_eq!(code, 0, "{out}{err}");
    let doc: Value = serde_json::from_str(&out).expect("JSON");
    let r = restore(&doc);
    assert_eq!(r["namespace"], NS);
    assert_eq!(step(r, "velero-restore")["state"], "done", "{r:#}");
    let dl = step(r, "data-download");
    assert_eq!(dl["state"], "done", "{r:#}");
    assert!(
        dl["detail"].as_str().unwrap_or_default().contains("2/2")
            || dl["detail"]
                .as_str()
                .unwrap_or_default()
                .contains("Completed"),
        "the downloads are named: {dl:#}"
    );
    assert_eq!(step(r, "verify")["state"], "done", "{r:#}");
    let codes: Vec<&str> = doc["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["code"].as_str())
        .collect();
    assert!(
        !codes.contains(&"disk-not-restored"),
        "nothing is lost: {codes:?}"
    );
    c.stop().await;
}

#[tokio::test]
async fn a_user_who_may_not_read_velero_s_namespace_is_told_so() {
    let c = cluster(tenant_rules(false)).await;
    let (code, out, err) = c.run(&["check", "-n", NS, "--now", NOW], None).await;
    assert_eq!(code, 2, "unreadable kinds are an error: {out}{err}");
    let said = format!("{out}{err}");
    assert!(said.contains("restores"), "{said}");
    assert!(said.contains("datadownloads"), "{said}");
    c.stop().await;
}

/// The dashboard on one namespace watches the same: its restores' Velero Restores by label and
/// their DataDownloads by the Restores' UIDs, none of another tenant's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_on_one_namespace_watches_its_restores_velero_objects() {
    let c = cluster(tenant_rules(true)).await;
    let client = c.sim.client_with_token("limited").expect("client");
    let mut opts = common::live_options();
    opts.namespace = Some(NS.into());
    let source = restorewatch::pipeline::live::start(client, opts);
    let mut frames = source.frames.clone();
    let done = |f: &restorewatch::pipeline::Frame| {
        f.report.restores.iter().any(|r| {
            r.id.name == "restore-test"
                && ["velero-restore", "data-download"].iter().all(|id| {
                    r.steps
                        .iter()
                        .any(|s| s.id.as_str() == *id && s.state.as_str() == "done")
                })
        })
    };
    let frame = common::wait_frame(
        &mut frames,
        30,
        "the Velero step and the downloads done",
        done,
        |f| format!("{:?}", f.map(|f| (&f.report.restores, &f.snapshot.health))),
    )
    .await;
    let velero: Vec<String> = frame
        .snapshot
        .velero_restores
        .iter()
        .map(|r| r.meta.name.to_string())
        .chain(
            frame
                .snapshot
                .data_downloads
                .iter()
                .map(|d| d.meta.name.to_string()),
        )
        .collect();
    assert!(
        !velero.is_empty() && velero.iter().all(|n| n.starts_with("tenant-a.")),
        "only tenant-a's Velero objects: {velero:?}"
    );
    drop(source);
    c.stop().await;
}

/// A Velero Restore without the RestoreJob-namespace label (relabelled, or made by hand) is
/// still the restore's by its name (`tenant-a.restore-test-…`): the unscoped analysis takes
/// it, and so does `check -n`, which reads those named for its namespace beside the labelled.
#[tokio::test]
async fn check_of_one_namespace_reads_its_restores_velero_restore_without_the_namespace_label() {
    let c = cluster_with(tenant_rules(true), |v| {
        if v["kind"] == "Restore"
            && let Some(labels) = v["metadata"]["labels"].as_object_mut()
        {
            labels.remove("backups.cozystack.io/owned-by.BackupJobNamespace");
        }
    })
    .await;
    let (code, out, err) = c
        .run(&["check", "-n", NS, "--now", NOW, "-o", "json"], None)
        .await;
    assert_eq!(code, 0, "{out}{err}");
    let doc: Value = serde_json::from_str(&out).expect("JSON");
    let r = restore(&doc);
    assert_eq!(step(r, "velero-restore")["state"], "done", "{r:#}");
    assert_eq!(step(r, "data-download")["state"], "done", "{r:#}");
    c.stop().await;
}
