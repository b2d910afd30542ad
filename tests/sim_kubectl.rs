//! kubectl against the emulator: its semantics must not be only our own assumptions. kubectl
//! must be installed; a missing kubectl fails these tests.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use restorewatch::model::Kind;
use restorewatch::sim::{Policy, Sim, SimConfig, SimHandle};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(20);

struct Kubectl {
    _dir: tempfile::TempDir,
    kubeconfig: PathBuf,
    cache: PathBuf,
}

impl Kubectl {
    fn new(sim: &SimHandle, token: Option<&str>) -> Kubectl {
        let dir = tempfile::tempdir().expect("temp dir");
        let kubeconfig = dir.path().join("kubeconfig");
        sim.write_kubeconfig(&kubeconfig, token)
            .expect("kubeconfig written");
        let cache = dir.path().join("cache");
        Kubectl {
            _dir: dir,
            kubeconfig,
            cache,
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new("kubectl");
        c.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(&self.cache)
            .args(args);
        c
    }

    /// Runs kubectl off the async runtime (the emulator serves on it meanwhile).
    async fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut cmd = self.command(args);
        let input = stdin.map(str::to_string);
        let shown = args.join(" ");
        tokio::task::spawn_blocking(move || {
            cmd.stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
            let mut child = cmd.spawn().unwrap_or_else(|e| {
                panic!("cannot run kubectl (it must be installed at /usr/bin/kubectl): {e}")
            });
            if let (Some(text), Some(mut pipe)) = (input, child.stdin.take()) {
                pipe.write_all(text.as_bytes()).expect("kubectl stdin");
            }
            child.wait_with_output().expect("kubectl output")
        })
        .await
        .unwrap_or_else(|e| panic!("kubectl {shown}: {e}"))
    }

    async fn ok(&self, args: &[&str], stdin: Option<&str>) -> String {
        let out = self.run(args, stdin).await;
        assert!(
            out.status.success(),
            "kubectl {} failed: {}\n{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

async fn start(config: SimConfig) -> SimHandle {
    Sim::start(config).await.expect("emulator starts")
}

const NS_AND_PVC: &str = r#"
apiVersion: v1
kind: Namespace
metadata:
  name: tenant-a
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: p1
  namespace: tenant-a
  labels: {app: demo}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
"#;

fn pvc_manifest(name: &str, tier: &str) -> String {
    format!(
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: {name}\n  namespace: tenant-a\n  labels: {{tier: {tier}}}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {{requests: {{storage: 2Gi}}}}\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_create_get_apply_patch_delete() {
    let sim = start(SimConfig::default()).await;
    let k = Kubectl::new(&sim, None);
    let out = k.ok(&["create", "-f", "-"], Some(NS_AND_PVC)).await;
    assert!(out.contains("persistentvolumeclaim/p1 created"), "{out}");

    // Table output, all namespaces.
    let table = k.ok(&["get", "pvc", "-A"], None).await;
    let mut lines = table.lines();
    let header = lines.next().unwrap_or("");
    for col in [
        "NAMESPACE",
        "NAME",
        "STATUS",
        "VOLUME",
        "CAPACITY",
        "ACCESS MODES",
        "STORAGECLASS",
        "AGE",
    ] {
        assert!(header.contains(col), "header lacks {col}: {table}");
    }
    let row: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
    assert_eq!(
        row.get(..3),
        Some(&["tenant-a", "p1", "Pending"][..]),
        "{table}"
    );

    // JSON output: a List with typed items.
    let list: Value = serde_json::from_str(
        &k.ok(&["get", "pvc", "-n", "tenant-a", "-o", "json"], None)
            .await,
    )
    .unwrap();
    assert_eq!(list["kind"], "List");
    assert_eq!(list["items"][0]["kind"], "PersistentVolumeClaim");
    assert_eq!(list["items"][0]["spec"]["volumeMode"], "Filesystem");
    let one: Value = serde_json::from_str(
        &k.ok(&["get", "pvc", "p1", "-n", "tenant-a", "-o", "json"], None)
            .await,
    )
    .unwrap();
    assert_eq!(
        one["metadata"]["finalizers"],
        json!(["kubernetes.io/pvc-protection"])
    );

    // Client-side apply, twice; the second run changes a label.
    let out = k
        .ok(&["apply", "-f", "-"], Some(&pvc_manifest("p2", "one")))
        .await;
    assert!(out.contains("persistentvolumeclaim/p2 created"), "{out}");
    let out = k
        .ok(&["apply", "-f", "-"], Some(&pvc_manifest("p2", "two")))
        .await;
    assert!(out.contains("persistentvolumeclaim/p2 configured"), "{out}");
    let p2 = sim
        .store()
        .get(Kind::PersistentVolumeClaim, "tenant-a", "p2")
        .expect("p2 stored");
    assert_eq!(p2["metadata"]["labels"]["tier"], "two");
    assert!(
        p2["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .is_string()
    );
    let out = k
        .ok(&["apply", "-f", "-"], Some(&pvc_manifest("p2", "two")))
        .await;
    assert!(out.contains("persistentvolumeclaim/p2 unchanged"), "{out}");

    // Patches.
    k.ok(
        &[
            "patch",
            "pvc",
            "p1",
            "-n",
            "tenant-a",
            "--type",
            "merge",
            "-p",
            r#"{"metadata":{"labels":{"m":"1"}}}"#,
        ],
        None,
    )
    .await;
    k.ok(&["patch", "pvc", "p1", "-n", "tenant-a", "--type", "json", "-p", r#"[{"op":"test","path":"/metadata/labels/m","value":"1"},{"op":"add","path":"/metadata/labels/j","value":"2"}]"#], None).await;
    k.ok(
        &[
            "patch",
            "pvc",
            "p1",
            "-n",
            "tenant-a",
            "-p",
            r#"{"metadata":{"labels":{"s":"3"}}}"#,
        ],
        None,
    )
    .await;
    let p1 = sim
        .store()
        .get(Kind::PersistentVolumeClaim, "tenant-a", "p1")
        .unwrap();
    assert_eq!(
        p1["metadata"]["labels"],
        json!({"app": "demo", "m": "1", "j": "2", "s": "3"})
    );
    let failed = k
        .run(
            &[
                "patch",
                "pvc",
                "p1",
                "-n",
                "tenant-a",
                "--type",
                "json",
                "-p",
                r#"[{"op":"test","path":"/metadata/labels/m","value":"9"}]"#,
            ],
            None,
        )
        .await;
    assert!(!failed.status.success());
    assert!(
        String::from_utf8_lossy(&failed.stderr)
            .contains("the server rejected our request due to an error in our request")
    );

    // CRDs by short and full names.
    sim.store()
        .put(json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob",
                    "metadata": {"name": "r1", "namespace": "tenant-a"}, "status": {"phase": "Running"}}))
        .unwrap();
    let rj = k
        .ok(
            &["get", "restorejobs.backups.cozystack.io", "-n", "tenant-a"],
            None,
        )
        .await;
    assert!(rj.contains("r1") && rj.contains("Running"), "{rj}");

    // Delete waits for the object to go (the controller manager removes pvc-protection).
    let out = k
        .ok(
            &["delete", "pvc", "p1", "-n", "tenant-a", "--timeout=15s"],
            None,
        )
        .await;
    assert!(
        out.contains("persistentvolumeclaim \"p1\" deleted"),
        "{out}"
    );
    assert!(
        sim.store()
            .get(Kind::PersistentVolumeClaim, "tenant-a", "p1")
            .is_none()
    );
    let missing = k.run(&["get", "pvc", "p1", "-n", "tenant-a"], None).await;
    assert!(
        String::from_utf8_lossy(&missing.stderr)
            .contains("persistentvolumeclaims \"p1\" not found")
    );

    assert_eq!(
        k.ok(&["auth", "can-i", "delete", "pvc", "-n", "tenant-a"], None)
            .await
            .trim(),
        "yes"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_watch_sees_a_change() {
    let sim = start(SimConfig::default()).await;
    let k = Kubectl::new(&sim, None);
    k.ok(&["create", "-f", "-"], Some(NS_AND_PVC)).await;
    let mut child = k
        .command(&["get", "pvc", "-n", "tenant-a", "-w"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl must be installed");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let wait_line = |want: &str| -> Result<String, String> {
        let deadline = std::time::Instant::now() + WAIT;
        let mut seen = Vec::new();
        while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
            match rx.recv_timeout(left) {
                Ok(l) if l.contains(want) => return Ok(l),
                Ok(l) => seen.push(l),
                Err(_) => break,
            }
        }
        Err(format!(
            "kubectl get -w printed no line with {want:?}; saw {seen:?}"
        ))
    };
    let first = tokio::task::block_in_place(|| wait_line("p1"));
    sim.store()
        .patch_status(
            Kind::PersistentVolumeClaim,
            "tenant-a",
            "p1",
            &json!({"phase": "Bound"}),
        )
        .unwrap();
    let change = tokio::task::block_in_place(|| wait_line("Bound"));
    let _ = child.kill();
    let _ = child.wait();
    first.unwrap();
    let line = change.unwrap();
    assert!(line.starts_with("p1"), "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_auth_with_a_readonly_policy() {
    // client-go reads credentials only for TLS servers, so kubectl talks to the emulator
    // anonymously; the anonymous policy is what limits it.
    let sim = start(SimConfig {
        anonymous: Some(Policy::builtin("readonly").unwrap()),
        ..SimConfig::default()
    })
    .await;
    sim.store()
        .put(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tenant-a"}}))
        .unwrap();
    let k = Kubectl::new(&sim, None);
    assert_eq!(
        k.ok(&["auth", "can-i", "list", "pvc", "-n", "tenant-a"], None)
            .await
            .trim(),
        "yes"
    );
    let no = k
        .run(&["auth", "can-i", "delete", "pvc", "-n", "tenant-a"], None)
        .await;
    assert_eq!(String::from_utf8_lossy(&no.stdout).trim(), "no");
    assert!(!no.status.success());
    let denied = k
        .run(&["create", "-f", "-"], Some(&pvc_manifest("p1", "x")))
        .await;
    let err = String::from_utf8_lossy(&denied.stderr);
    assert!(
        err.contains("persistentvolumeclaims is forbidden: User \"system:anonymous\" cannot create resource \"persistentvolumeclaims\" in API group \"\" in the namespace \"tenant-a\""),
        "{err}"
    );
    // `kubectl auth whoami` (SelfSubjectReview): the identity the token policy gives.
    let who = k.ok(&["auth", "whoami", "-o", "json"], None).await;
    let who: Value = serde_json::from_str(&who).expect("a SelfSubjectReview");
    assert_eq!(who["kind"], "SelfSubjectReview", "{who}");
    assert_eq!(who["status"]["userInfo"]["username"], "system:anonymous");
}

fn managers(obj: &Value) -> Vec<(String, String, String)> {
    obj.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|e| {
            let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            (s("manager"), s("operation"), s("subresource"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_shows_managed_fields_of_report_003s_managers() {
    let sim = start(SimConfig::default()).await;
    let run = sim.play(
        restorewatch::sim::Scenario::load("pg-servername-reverted").unwrap(),
        20.0,
    );
    let status = tokio::time::timeout(WAIT, run.finished())
        .await
        .expect("plays");
    assert!(status.errors.is_empty(), "{:?}", status.errors);
    let k = Kubectl::new(&sim, None);
    let get = [
        "get",
        "clusters.postgresql.cnpg.io",
        "-n",
        "tenant-b",
        "postgres-pg1",
        "-o",
        "json",
    ];
    let hidden: Value = serde_json::from_str(&k.ok(&get, None).await).unwrap();
    assert!(
        hidden.pointer("/metadata/managedFields").is_none(),
        "kubectl hides them by default"
    );
    let mut shown = get.to_vec();
    shown.push("--show-managed-fields");
    let cluster: Value = serde_json::from_str(&k.ok(&shown, None).await).unwrap();
    assert_eq!(
        managers(&cluster),
        vec![
            ("helm-controller".into(), "Apply".into(), "".into()),
            (
                "cozystack-cnpg-backup-driver".into(),
                "Apply".into(),
                "".into()
            ),
            ("manager".into(), "Update".into(), "status".into()),
        ]
    );
    assert_eq!(
        cluster.pointer("/metadata/managedFields/1/fieldsV1/f:spec/f:plugins"),
        Some(&json!({}))
    );
    // kubectl's own writes carry its field managers.
    k.ok(&["create", "-f", "-"], Some(NS_AND_PVC)).await;
    k.ok(
        &[
            "patch",
            "pvc",
            "p1",
            "-n",
            "tenant-a",
            "--type",
            "merge",
            "-p",
            r#"{"metadata":{"labels":{"tier":"gold"}}}"#,
        ],
        None,
    )
    .await;
    let pvc: Value = serde_json::from_str(
        &k.ok(
            &[
                "get",
                "pvc",
                "p1",
                "-n",
                "tenant-a",
                "-o",
                "json",
                "--show-managed-fields",
            ],
            None,
        )
        .await,
    )
    .unwrap();
    assert_eq!(
        managers(&pvc),
        vec![
            ("kubectl-create".into(), "Update".into(), "".into()),
            ("kubectl-patch".into(), "Update".into(), "".into()),
        ]
    );
    assert_eq!(
        pvc.pointer("/metadata/managedFields/1/fieldsV1"),
        Some(&json!({"f:metadata": {"f:labels": {"f:tier": {}}}}))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_sees_the_garbage_collector_and_the_binder() {
    let sim = start(SimConfig::default()).await;
    let k = Kubectl::new(&sim, None);
    k.ok(&["create", "-f", "-"], Some(NS_AND_PVC)).await;
    let dv = k
        .ok(
            &["create", "-o", "json", "-f", "-"],
            Some("apiVersion: cdi.kubevirt.io/v1beta1\nkind: DataVolume\nmetadata: {name: vm-disk-data, namespace: tenant-a}\nspec: {source: {blank: {}}}\n"),
        )
        .await;
    let dv_uid = serde_json::from_str::<Value>(&dv).unwrap()["metadata"]["uid"]
        .as_str()
        .unwrap()
        .to_string();
    let owned = |name: &str| {
        format!(
            "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: {name}\n  namespace: tenant-a\n  ownerReferences: [{{apiVersion: cdi.kubevirt.io/v1beta1, kind: DataVolume, name: vm-disk-data, uid: {dv_uid}, controller: true}}]\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {{requests: {{storage: 1Gi}}}}\n"
        )
    };
    k.ok(&["create", "-f", "-"], Some(&owned("kept"))).await;
    k.ok(
        &[
            "delete",
            "datavolume",
            "vm-disk-data",
            "-n",
            "tenant-a",
            "--cascade=orphan",
        ],
        None,
    )
    .await;
    sim.controllers_idle().await;
    let kept: Value = serde_json::from_str(
        &k.ok(
            &["get", "pvc", "kept", "-n", "tenant-a", "-o", "json"],
            None,
        )
        .await,
    )
    .unwrap();
    assert!(
        kept.pointer("/metadata/ownerReferences").is_none(),
        "{kept}"
    );
    // A PVC created with an owner that does not exist is collected.
    k.ok(&["create", "-f", "-"], Some(&owned("collected")))
        .await;
    sim.controllers_idle().await;
    let gone = k
        .run(&["get", "pvc", "collected", "-n", "tenant-a"], None)
        .await;
    assert!(!gone.status.success());
    assert!(
        String::from_utf8_lossy(&gone.stderr)
            .contains("persistentvolumeclaims \"collected\" not found"),
        "{}",
        String::from_utf8_lossy(&gone.stderr)
    );
    // The binder: a claim created before its pre-bound PV is Bound once the PV exists.
    k.ok(&["create", "-f", "-"], Some(&pvc_manifest("data", "x")))
        .await;
    k.ok(
        &[
            "patch",
            "pvc",
            "data",
            "-n",
            "tenant-a",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"volumeName":"pv-data"}}"#,
        ],
        None,
    )
    .await;
    let uid = k
        .ok(
            &[
                "get",
                "pvc",
                "data",
                "-n",
                "tenant-a",
                "-o",
                "jsonpath={.metadata.uid}",
            ],
            None,
        )
        .await;
    let pv = format!(
        "apiVersion: v1\nkind: PersistentVolume\nmetadata: {{name: pv-data}}\nspec:\n  accessModes: [ReadWriteOnce]\n  capacity: {{storage: 2Gi}}\n  csi: {{driver: d, volumeHandle: pv-data}}\n  claimRef: {{apiVersion: v1, kind: PersistentVolumeClaim, namespace: tenant-a, name: data, uid: {uid}}}\n"
    );
    k.ok(&["create", "-f", "-"], Some(&pv)).await;
    sim.controllers_idle().await;
    let table = k.ok(&["get", "pvc", "data", "-n", "tenant-a"], None).await;
    assert!(
        table
            .lines()
            .nth(1)
            .is_some_and(|l| l.contains("Bound") && l.contains("pv-data")),
        "{table}"
    );
    let pvs = k.ok(&["get", "pv", "pv-data"], None).await;
    assert!(pvs.contains("Bound"), "{pvs}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_apply_server_side_records_apply_and_reports_conflicts() {
    let sim = start(SimConfig::default()).await;
    let k = Kubectl::new(&sim, None);
    k.ok(&["create", "namespace", "tenant-a"], None).await;
    k.ok(
        &["apply", "--server-side", "-f", "-"],
        Some(&pvc_manifest("p1", "gold")),
    )
    .await;
    let pvc: Value = serde_json::from_str(
        &k.ok(
            &[
                "get",
                "pvc",
                "p1",
                "-n",
                "tenant-a",
                "-o",
                "json",
                "--show-managed-fields",
            ],
            None,
        )
        .await,
    )
    .unwrap();
    assert_eq!(
        managers(&pvc),
        vec![("kubectl".into(), "Apply".into(), "".into())]
    );
    assert_eq!(pvc["metadata"]["labels"]["tier"], "gold");
    let other = k
        .run(
            &[
                "apply",
                "--server-side",
                "--field-manager",
                "someone-else",
                "-f",
                "-",
            ],
            Some(&pvc_manifest("p1", "silver")),
        )
        .await;
    assert!(!other.status.success());
    let err = String::from_utf8_lossy(&other.stderr);
    assert!(err.contains("conflict with \"kubectl\""), "{err}");
    assert!(err.contains(".metadata.labels.tier"), "{err}");
    k.ok(
        &[
            "apply",
            "--server-side",
            "--force-conflicts",
            "--field-manager",
            "someone-else",
            "-f",
            "-",
        ],
        Some(&pvc_manifest("p1", "silver")),
    )
    .await;
    let tier = k
        .ok(
            &[
                "get",
                "pvc",
                "p1",
                "-n",
                "tenant-a",
                "-o",
                "jsonpath={.metadata.labels.tier}",
            ],
            None,
        )
        .await;
    assert_eq!(tier, "silver");
}

// What a long-running watcher meets on a real kube-apiserver (apiserver-behaviour.md and the
// watch cache): bookmarks once per interval with the current version, lists paged at the
// client's limit with a consistent snapshot, watches closed at their timeout.

/// kubectl's output, and whether it ended by itself within `limit` (it is killed otherwise: a
/// watch the server never closes must fail the test, not hang it).
async fn bounded(k: &Kubectl, args: &[&str], limit: Duration) -> (Output, bool) {
    let mut cmd = k.command(args);
    let shown = args.join(" ");
    tokio::task::spawn_blocking(move || {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run kubectl {shown}: {e}"));
        // Drain both pipes meanwhile: a full pipe would stall kubectl and look like a hang.
        let mut out = child.stdout.take().expect("stdout");
        let mut err = child.stderr.take().expect("stderr");
        let out_t = std::thread::spawn(move || {
            let mut b = Vec::new();
            let _ = std::io::Read::read_to_end(&mut out, &mut b);
            b
        });
        let err_t = std::thread::spawn(move || {
            let mut b = Vec::new();
            let _ = std::io::Read::read_to_end(&mut err, &mut b);
            b
        });
        let deadline = std::time::Instant::now() + limit;
        let mut ended = true;
        let status = loop {
            if let Some(s) = child.try_wait().expect("kubectl status") {
                break s;
            }
            if std::time::Instant::now() >= deadline {
                ended = false;
                let _ = child.kill();
                break child.wait().expect("kubectl status");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let output = Output {
            status,
            stdout: out_t.join().expect("stdout reader"),
            stderr: err_t.join().expect("stderr reader"),
        };
        (output, ended)
    })
    .await
    .expect("kubectl runner")
}

fn pvc(ns: &str, name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    })
}

/// The lines of a raw watch as (type, name or "", resourceVersion).
fn watch_lines(stdout: &[u8]) -> Vec<(String, String, u64)> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("not a watch event: {l}: {e}"));
            let meta = &v["object"]["metadata"];
            (
                v["type"].as_str().unwrap_or_default().to_string(),
                meta["name"].as_str().unwrap_or_default().to_string(),
                meta["resourceVersion"]
                    .as_str()
                    .and_then(|r| r.parse().ok())
                    .unwrap_or_else(|| panic!("no resourceVersion: {l}")),
            )
        })
        .collect()
}

const RAW_WATCH: &str = "/api/v1/persistentvolumeclaims?watch=1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_raw_watch_gets_bookmarks_at_the_interval_with_the_current_version() {
    let sim = start(SimConfig {
        bookmark_interval: Duration::from_secs(1),
        // Only the test writes PVCs: each event in the stream is one the test expects.
        controller_manager: false,
        ..SimConfig::default()
    })
    .await;
    let k = Kubectl::new(&sim, None);
    sim.store().put(pvc("tenant-a", "p1")).expect("p1");
    // A 6 s watch: bookmarks due at 1, 2, 3 and 4 s (the last one also the one 2 s before the
    // timeout), then the server closes it; p2 is written in between.
    let url = format!("{RAW_WATCH}&allowWatchBookmarks=true&timeoutSeconds=6");
    let args = ["get", "--raw", &url];
    let ((out, ended), ()) = tokio::join!(bounded(&k, &args, WAIT), async {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        sim.store().put(pvc("tenant-a", "p2")).expect("p2");
    });
    assert!(
        ended && out.status.success(),
        "the server ends the watch at timeoutSeconds: {out:?}"
    );
    let lines = watch_lines(&out.stdout);
    let events: Vec<&str> = lines
        .iter()
        .filter(|l| l.0 != "BOOKMARK")
        .map(|l| l.1.as_str())
        .collect();
    assert_eq!(events, ["p1", "p2"], "{lines:?}");
    let bookmarks: Vec<u64> = lines
        .iter()
        .filter(|l| l.0 == "BOOKMARK")
        .map(|l| l.2)
        .collect();
    assert!(
        (2..=5).contains(&bookmarks.len()),
        "about one bookmark a second over 6 s, none after the 4th: {lines:?}"
    );
    // Each bookmark carries the version of everything sent before it (never behind an event),
    // and the versions never go back.
    let mut seen = 0;
    for (typ, _, rv) in &lines {
        if typ == "BOOKMARK" {
            assert!(
                *rv >= seen,
                "a bookmark behind an event it follows: {lines:?}"
            );
        }
        seen = seen.max(*rv);
    }
    let p2 = lines.iter().find(|l| l.1 == "p2").map_or(0, |l| l.2);
    let last = bookmarks.last().copied().unwrap_or(0);
    assert!(
        last >= p2 && last <= sim.store().current_rv(),
        "the last bookmark (at 4 s) carries the version after p2 (written at 1.5 s): {lines:?}"
    );

    // Without allowWatchBookmarks: the same stream, no bookmark.
    let url = format!("{RAW_WATCH}&timeoutSeconds=3");
    let (out, ended) = bounded(&k, &["get", "--raw", &url], WAIT).await;
    assert!(ended && out.status.success(), "{out:?}");
    let lines = watch_lines(&out.stdout);
    assert_eq!(lines.len(), 2, "p1 and p2, nothing else: {lines:?}");
    assert!(lines.iter().all(|l| l.0 == "ADDED"), "{lines:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_watches_end_at_their_timeout_or_the_servers_default() {
    let sim = start(SimConfig {
        // Stands for kube-apiserver's 30 min: a watch without timeoutSeconds ends after 2-4 s.
        min_request_timeout: Duration::from_secs(2),
        controller_manager: false,
        ..SimConfig::default()
    })
    .await;
    let k = Kubectl::new(&sim, None);
    sim.store().put(pvc("tenant-a", "p1")).expect("p1");
    for url in [
        format!("{RAW_WATCH}&timeoutSeconds=2"),
        // 0 is "the server's default", not "end at once".
        format!("{RAW_WATCH}&timeoutSeconds=0"),
        RAW_WATCH.to_string(),
    ] {
        let (out, ended) = bounded(&k, &["get", "--raw", &url], WAIT).await;
        assert!(ended && out.status.success(), "{url}: {out:?}");
        let lines = watch_lines(&out.stdout);
        assert_eq!(
            lines.len(),
            1,
            "{url}: the ADDED p1 before the end: {lines:?}"
        );
    }
    // `kubectl get -w` asks for no timeout: the server's default ends it, and kubectl with it.
    let (out, ended) = bounded(&k, &["get", "pvc", "-A", "-w"], WAIT).await;
    assert!(ended && out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("p1"),
        "{out:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_pages_lists_at_its_chunk_size_and_gets_the_real_errors_for_bad_tokens() {
    let sim = start(SimConfig {
        controller_manager: false,
        ..SimConfig::default()
    })
    .await;
    let k = Kubectl::new(&sim, None);
    let mut want = Vec::new();
    for (ns, n) in [("tenant-a", 4), ("tenant-b", 3)] {
        for i in 0..n {
            let name = format!("p{i}");
            sim.store().put(pvc(ns, &name)).expect("pvc");
            want.push(format!("{ns} {name}"));
        }
    }
    let out = k
        .run(
            &[
                "get",
                "pvc",
                "-A",
                "--chunk-size=2",
                "-v=6",
                "--no-headers",
                "-o",
                "custom-columns=NS:.metadata.namespace,NAME:.metadata.name",
            ],
            None,
        )
        .await;
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    let gets: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("verb=\"GET\"") && l.contains("/persistentvolumeclaims?"))
        .collect();
    assert_eq!(gets.len(), 4, "7 PVCs in pages of 2: {log}");
    assert!(
        gets.iter()
            .all(|l| l.contains("limit=2") && l.contains("200 OK")),
        "{log}"
    );
    assert_eq!(
        gets.iter().filter(|l| l.contains("continue=")).count(),
        3,
        "every page after the first continues the list: {log}"
    );
    let mut printed: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    printed.sort();
    assert_eq!(printed, want, "every PVC exactly once");

    // A continued page is read at the first page's version: what was written in between does
    // not show, what was deleted still does, as in etcd.
    let k = &k;
    let page = |url: String| async move { k.run(&["get", "--raw", &url, "-v=6"], None).await };
    let first = page("/api/v1/persistentvolumeclaims?limit=4".into()).await;
    let first: Value = serde_json::from_slice(&first.stdout).expect("a PVC list");
    let token = first["metadata"]["continue"]
        .as_str()
        .expect("a continue token")
        .to_string();
    assert_eq!(first["metadata"]["remainingItemCount"], json!(3));
    sim.store()
        .remove(Kind::PersistentVolumeClaim, "tenant-b", "p2", true)
        .expect("deleted");
    sim.store().put(pvc("tenant-b", "p9")).expect("created");
    let rest = page(format!(
        "/api/v1/persistentvolumeclaims?limit=4&continue={token}"
    ))
    .await;
    let rest: Value = serde_json::from_slice(&rest.stdout).expect("the rest of the list");
    let names: Vec<&str> = rest["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|o| o["metadata"]["name"].as_str())
        .collect();
    assert_eq!(names, ["p0", "p1", "p2"], "tenant-b as it was: {rest}");
    assert_eq!(
        rest["metadata"]["resourceVersion"],
        first["metadata"]["resourceVersion"]
    );

    // Garbage: 400, in the real server's words.
    let bad = page("/api/v1/persistentvolumeclaims?limit=2&continue=garbage!".into()).await;
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success(), "{err}");
    assert!(err.contains("400 Bad Request"), "{err}");
    assert!(
        err.contains("(BadRequest): invalid continue token: continue key is not valid"),
        "{err}"
    );
    // A token whose version was compacted away (etcd's compaction, here the emulator's): 410.
    sim.store().compact();
    let old = page(format!(
        "/api/v1/persistentvolumeclaims?limit=4&continue={token}"
    ))
    .await;
    let err = String::from_utf8_lossy(&old.stderr);
    assert!(!old.status.success(), "{err}");
    assert!(err.contains("410 Gone"), "{err}");
    assert!(
        err.contains("(Expired): The provided continue parameter is too old to display a consistent list result"),
        "{err}"
    );
}
