//! `restorewatch sim serve` as a process: `--load` of a dump without its Namespaces, and
//! SIGTERM / SIGINT ending it (it must not ignore them, whatever it holds).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Event, Namespace};
use kube::api::{Api, PostParams};
use serde_json::json;

/// Upper bound for the process to do what it is asked; not a timing assertion.
const HANG: Duration = Duration::from_secs(20);

fn dump(dir: &std::path::Path) -> std::path::PathBuf {
    // What `kubectl get pvc,pv -A -o json` gives: no Namespace objects.
    let mut items = Vec::new();
    for i in 0..50 {
        items.push(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": format!("vm-disk-{i}"), "namespace": format!("tenant-{}", i % 3),
                         "uid": format!("0000-{i}"), "resourceVersion": format!("{}", 5000 + i)},
            "spec": {"volumeName": format!("pv-{i}")}, "status": {"phase": "Bound"}}));
        items.push(json!({"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": format!("pv-{i}"), "uid": format!("1111-{i}")},
            "spec": {"claimRef": {"namespace": format!("tenant-{}", i % 3), "name": format!("vm-disk-{i}"), "uid": format!("0000-{i}")}},
            "status": {"phase": "Bound"}}));
    }
    let path = dir.join("dump.json");
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
    std::fs::write(&path, list.to_string()).expect("dump written");
    path
}

/// Starts `sim serve --load DUMP` and returns it with its URL.
fn serve(dir: &std::path::Path) -> (Child, String) {
    serve_loading(&dump(dir), dir)
}

/// Starts `sim serve --load FILE` and returns it with its URL.
fn serve_loading(file: &std::path::Path, dir: &std::path::Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_restorewatch"))
        .args(["sim", "serve", "--load"])
        .arg(file)
        .arg("--write-kubeconfig")
        .arg(dir.join("kubeconfig"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("restorewatch runs");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
    let mut url = String::new();
    for line in lines.by_ref() {
        if let Some(u) = line.strip_prefix("restorewatch sim serving on ") {
            url = u.trim().to_string();
            break;
        }
    }
    // Keep reading: a closed pipe would fail its next line.
    std::thread::spawn(move || lines.for_each(drop));
    assert!(!url.is_empty(), "sim serve printed no URL");
    (child, url)
}

fn client(url: &str) -> kube::Client {
    let mut config = kube::Config::new(url.parse().expect("url"));
    config.default_namespace = "default".into();
    kube::Client::try_from(config).expect("client")
}

/// Sends `signal` and waits for the exit; returns its status and how long it took.
fn stop(mut child: Child, signal: &str) -> (std::process::ExitStatus, Duration) {
    let start = Instant::now();
    let sent = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return (status, start.elapsed());
        }
        if start.elapsed() > HANG {
            let _ = child.kill();
            panic!("sim serve ignored {signal} for {HANG:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test]
async fn a_loaded_dump_gets_its_namespaces_and_sigterm_ends_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let (child, url) = serve(dir.path());
    let c = client(&url);
    let nss: Api<Namespace> = Api::all(c.clone());
    for ns in ["tenant-0", "tenant-1", "tenant-2"] {
        nss.get(ns).await.expect("the dump's namespace exists");
    }
    // What failed before: an action's audit Event on a loaded dump.
    let events: Api<Event> = Api::namespaced(c, "tenant-1");
    let ev: Event = serde_json::from_value(json!({
        "metadata": {"name": "restorewatch.1"},
        "involvedObject": {"kind": "PersistentVolumeClaim", "name": "vm-disk-1", "namespace": "tenant-1"},
        "reason": "RestorewatchAction", "message": "reclaim-orig", "type": "Normal"
    }))
    .unwrap();
    events
        .create(&PostParams::default(), &ev)
        .await
        .expect("Event created");
    let (status, took) = stop(child, "-TERM");
    eprintln!("sim serve exited {status} {took:?} after SIGTERM");
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn sigint_ends_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let (child, url) = serve(dir.path());
    let nss: Api<Namespace> = Api::all(client(&url));
    nss.get("tenant-0").await.expect("serving");
    let (status, took) = stop(child, "-INT");
    eprintln!("sim serve exited {status} {took:?} after SIGINT");
    assert!(status.success(), "{status}");
}

/// A PVC as `kubectl get pvc -o yaml` prints it, indented by `pad` (inside a List's items).
fn pvc_yaml(i: usize, pad: &str) -> String {
    let mut s = String::new();
    for line in [
        "apiVersion: v1".to_string(),
        "kind: PersistentVolumeClaim".to_string(),
        "metadata:".to_string(),
        "  annotations:".to_string(),
        "    pv.kubernetes.io/bind-completed: \"yes\"".to_string(),
        "  labels:".to_string(),
        format!("    app.kubernetes.io/instance: vm-{i}"),
        format!("  name: vm-disk-{i}"),
        format!("  namespace: tenant-{}", i % 7),
        format!("  resourceVersion: \"{}\"", 9000 + i),
        format!("  uid: 0000-{i}"),
        "spec:".to_string(),
        "  accessModes:".to_string(),
        "  - ReadWriteOnce".to_string(),
        "  resources:".to_string(),
        "    requests:".to_string(),
        "      storage: 10Gi".to_string(),
        format!("  volumeName: pv-{i}"),
        "status:".to_string(),
        "  phase: Bound".to_string(),
    ] {
        s.push_str(pad);
        s.push_str(&line);
        s.push('\n');
    }
    s
}

/// Issue 18, point 13: what `check --snapshot` reads, `sim serve --load` loads: a YAML List of
/// 6,000 objects (over the YAML parser's default budget of 250,000 nodes) and a file of 1,100
/// YAML documents (over its default of 1,024), both refused before.
#[tokio::test]
async fn large_yaml_dumps_that_check_reads_load_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut list = String::from("apiVersion: v1\nitems:\n");
    for i in 0..6000 {
        let item = pvc_yaml(i, "  ");
        list.push_str("- ");
        list.push_str(&item[2..]);
    }
    list.push_str("kind: List\nmetadata:\n  resourceVersion: \"\"\n");
    let mut docs = String::new();
    for i in 0..1100 {
        docs.push_str(&pvc_yaml(i, ""));
        docs.push_str("---\n");
    }
    for (name, text, want) in [("list.yaml", list, 6000), ("docs.yaml", docs, 1100)] {
        let file = dir.path().join(name);
        std::fs::write(&file, &text).unwrap();
        let check = Command::new(env!("CARGO_BIN_EXE_restorewatch"))
            .args(["check", "-o", "json", "--fail-on", "never", "--snapshot"])
            .arg(&file)
            .output()
            .expect("check runs");
        assert!(check.status.success(), "check reads {name}: {check:?}");
        let (child, url) = serve_loading(&file, dir.path());
        let pvcs: Api<k8s_openapi::api::core::v1::PersistentVolumeClaim> = Api::all(client(&url));
        let listed = pvcs.list(&Default::default()).await.expect("list");
        assert_eq!(listed.items.len(), want, "{name}: every object loaded");
        let last: Api<k8s_openapi::api::core::v1::PersistentVolumeClaim> =
            Api::namespaced(client(&url), &format!("tenant-{}", (want - 1) % 7));
        let got = last
            .get(&format!("vm-disk-{}", want - 1))
            .await
            .expect("the last object is there");
        assert_eq!(
            got.metadata.resource_version.as_deref(),
            Some(format!("{}", 9000 + want - 1).as_str()),
            "{name}: the version as dumped"
        );
        let (status, _) = stop(child, "-TERM");
        assert!(status.success(), "{status}");
    }
}
