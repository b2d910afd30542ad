//! The alerts proven on the software Cozystack runs (Debian's `victoria-metrics` and
//! `prometheus-alertmanager`): `restorewatch serve` watches the emulator playing a broken
//! Postgres restore (beside a healthy VM restore that kept its `-orig` disks); `vmagent` scrapes it as the
//! shipped `VMServiceScrape` says, VictoriaMetrics stores, `vmalert` evaluates the shipped
//! `VMRule` and notifies a real Alertmanager, whose webhook lands here. The data-at-risk alert
//! arrives with its summary, description and runbook link, and resolves after the repair runs
//! through `restorewatch action`.
//!
//! Shortened for the test, because minutes of waiting would prove nothing more: the scrape
//! interval (1s instead of the VMServiceScrape's 30s), every rule's `for:` (2s) and the
//! evaluation interval (1s). Everything else is as shipped.

mod monitoring_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use monitoring_support::{
    Killed, encode, free_port, get, instant_query, one, render, require, run_action, sim_with,
    spawn_logged, start_serve, wait_until,
};
use serde_json::{Value, json};

const DOCS: &str = "https://restorewatch.example/docs/findings.md";

/// The Alertmanager webhook receiver: every notification body, in arrival order.
#[derive(Clone, Default)]
struct Webhook(Arc<Mutex<Vec<Value>>>);

impl Webhook {
    fn start() -> (Webhook, String) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr").to_string();
        let hook = Webhook::default();
        let got = hook.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                if let Some(body) = read_post(conn) {
                    got.0
                        .lock()
                        .expect("lock")
                        .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
                }
            }
        });
        (hook, addr)
    }

    /// The first alert of any notification so far that `pick` accepts.
    fn find(&self, pick: impl Fn(&Value, &Value) -> bool) -> Option<Value> {
        let got = self.0.lock().expect("lock");
        got.iter()
            .find_map(|n| n["alerts"].as_array()?.iter().find(|a| pick(n, a)).cloned())
    }
}

fn read_post(conn: std::net::TcpStream) -> Option<Vec<u8>> {
    let mut reader = BufReader::new(conn.try_clone().ok()?);
    let mut len = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            len = v.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    let mut conn = conn;
    conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        .ok()?;
    Some(body)
}

/// The scrape job the VictoriaMetrics operator makes of the shipped VMServiceScrape, with the
/// Service's endpoint replaced by `target` and the interval shortened.
fn scrape_config(variant: &[Value], target: &str) -> Value {
    let scrape = one(variant, "VMServiceScrape");
    let svc = one(variant, "Service");
    let ep = &scrape["spec"]["endpoints"][0];
    assert_eq!(ep["port"], svc["spec"]["ports"][0]["name"]);
    let name = svc["metadata"]["name"].clone();
    json!({
        "scrape_configs": [{
            "job_name": format!("serviceScrape/{}/{}/0", scrape["metadata"]["namespace"].as_str().unwrap_or(""), scrape["metadata"]["name"].as_str().unwrap_or("")),
            "scrape_interval": "1s",
            "metrics_path": ep["path"],
            "scheme": ep["scheme"],
            "honor_labels": ep["honorLabels"].as_bool().unwrap_or(false),
            "static_configs": [{
                "targets": [target],
                // The target labels the operator's service discovery adds.
                "labels": {
                    "namespace": svc["metadata"]["namespace"],
                    "service": name,
                    "job": name,
                    "endpoint": ep["port"],
                },
            }],
        }]
    })
}

/// The shipped VMRule's groups with every `for:` cut to 2s.
fn fast_rules(variant: &[Value]) -> Value {
    let mut groups = one(variant, "VMRule")["spec"]["groups"].clone();
    for g in groups.as_array_mut().expect("groups") {
        for r in g["rules"].as_array_mut().expect("rules") {
            if r.get("for").is_some() {
                r["for"] = json!("2s");
            }
        }
    }
    json!({ "groups": groups })
}

/// The monitoring stack of a Cozystack cluster, on loopback.
struct Stack {
    vm: String,
    _children: Vec<Killed>,
}

fn write_json(dir: &Path, name: &str, v: &Value) -> String {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec_pretty(v).expect("json")).expect("write");
    p.display().to_string()
}

fn start_stack(dir: &Path, target: &str, hook: &str) -> Stack {
    for (bin, pkg) in [
        ("victoria-metrics", "victoria-metrics"),
        ("vmagent", "victoria-metrics"),
        ("vmalert", "victoria-metrics"),
        ("prometheus-alertmanager", "prometheus-alertmanager"),
    ] {
        require(bin, pkg);
    }
    let variant = render("victoriametrics");
    let (vm, agent, alert, am) = (
        format!("127.0.0.1:{}", free_port()),
        format!("127.0.0.1:{}", free_port()),
        format!("127.0.0.1:{}", free_port()),
        format!("127.0.0.1:{}", free_port()),
    );
    let mut children = Vec::new();
    children.push(spawn_logged(
        dir,
        "victoria-metrics",
        Command::new("victoria-metrics")
            .arg(format!("-storageDataPath={}", dir.join("vm").display()))
            .arg(format!("-httpListenAddr={vm}"))
            // Answer with the newest samples: the default hides the last 30s.
            .arg("-search.latencyOffset=0s")
            .arg("-search.disableCache"),
    ));
    let am_config = json!({
        "route": {"receiver": "hook", "group_by": ["alertname", "code", "namespace", "restore"],
                  "group_wait": "1s", "group_interval": "1s", "repeat_interval": "1h"},
        "receivers": [{"name": "hook", "webhook_configs": [{"url": format!("http://{hook}/"), "send_resolved": true}]}],
    });
    children.push(spawn_logged(
        dir,
        "alertmanager",
        Command::new("prometheus-alertmanager")
            .arg(format!(
                "--config.file={}",
                write_json(dir, "am.yml", &am_config)
            ))
            .arg(format!("--storage.path={}", dir.join("am").display()))
            .arg(format!("--web.listen-address={am}"))
            .arg("--cluster.listen-address="),
    ));
    for (what, addr, path) in [
        ("VictoriaMetrics", &vm, "/health"),
        ("Alertmanager", &am, "/-/ready"),
    ] {
        wait_until(what, || get(addr, path).filter(|(c, _)| *c == 200));
    }
    children.push(spawn_logged(
        dir,
        "vmagent",
        Command::new("vmagent")
            .arg(format!(
                "-promscrape.config={}",
                write_json(dir, "scrape.yml", &scrape_config(&variant, target))
            ))
            .arg(format!("-remoteWrite.url=http://{vm}/api/v1/write"))
            .arg(format!(
                "-remoteWrite.tmpDataPath={}",
                dir.join("vmagent").display()
            ))
            .arg(format!("-httpListenAddr={agent}")),
    ));
    children.push(spawn_logged(
        dir,
        "vmalert",
        Command::new("vmalert")
            .arg(format!(
                "-rule={}",
                write_json(dir, "rules.yml", &fast_rules(&variant))
            ))
            .arg(format!("-datasource.url=http://{vm}"))
            .arg(format!("-notifier.url=http://{am}"))
            .arg("-evaluationInterval=1s")
            .arg(format!("-httpListenAddr={alert}")),
    ));
    for (what, addr) in [("vmagent", &agent), ("vmalert", &alert)] {
        wait_until(what, || get(addr, "/health").filter(|(c, _)| *c == 200));
    }
    Stack {
        vm,
        _children: children,
    }
}

fn is_data_at_risk(a: &Value, code: &str) -> bool {
    a["labels"]["alertname"] == "RestoreDataAtRisk" && a["labels"]["code"] == code
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.expect("join")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn victoriametrics_alerts_on_a_broken_restore_and_resolves_after_the_repair() {
    let dir = tempfile::tempdir().expect("tmp");
    let sim = sim_with(&["demo-servername-reverted", "vm-healthy"], 20.0).await;
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc, None).expect("kubeconfig");
    let (_serve, serve_addr) = start_serve(&kc, &["--docs-url", DOCS]);
    let (hook, hook_addr) = Webhook::start();
    let d = dir.path().to_path_buf();
    let stack = blocking(move || start_stack(&d, &serve_addr, &hook_addr)).await;

    let h = hook.clone();
    let firing = blocking(move || {
        wait_until("RestoreDataAtRisk notified as firing", || {
            h.find(|n, a| {
                n["status"] == "firing"
                    && a["status"] == "firing"
                    && is_data_at_risk(a, "servername-reverted")
            })
        })
    })
    .await;
    // Cozystack's style, and the restore's own namespace (not restorewatch's: honorLabels).
    assert_eq!(firing["labels"]["severity"], "critical", "{firing:#}");
    assert_eq!(firing["labels"]["namespace"], "tenant-b", "{firing:#}");
    assert_eq!(firing["labels"]["restore"], "restore-pg1", "{firing:#}");
    let ann = &firing["annotations"];
    let summary = ann["summary"].as_str().unwrap_or("");
    assert!(
        summary.contains("servername-reverted") && summary.contains("tenant-b/restore-pg1"),
        "{summary}"
    );
    let description = ann["description"].as_str().unwrap_or("");
    assert!(description.contains("newServerName"), "{description}");
    assert!(description.contains("Remedy:"), "{description}");
    assert_eq!(ann["runbook_url"], format!("{DOCS}#servername-reverted"));

    check_dashboard(&stack.vm).await;
    check_lifecycle(&stack.vm).await;

    run_action(
        &kc,
        &dir.path().join("state"),
        &["fix-servername", "--restore", "tenant-b/restore-pg1"],
    );
    let h = hook.clone();
    let resolved = blocking(move || {
        wait_until("RestoreDataAtRisk notified as resolved", || {
            h.find(|_, a| a["status"] == "resolved" && is_data_at_risk(a, "servername-reverted"))
        })
    })
    .await;
    assert_eq!(resolved["labels"]["namespace"], "tenant-b");
    drop(stack);
    sim.shutdown().await;
}

/// The lifecycle families as stored: the broken Postgres restore runs (its duration grows),
/// the VM restore succeeded (a fixed duration, its Velero Restore Completed, and the time vm1
/// was last restored).
async fn check_lifecycle(vm: &str) {
    let vm = vm.to_string();
    blocking(move || {
        let one_value = |q: &str| -> Option<f64> {
            let r = instant_query(&vm, q);
            (r.len() == 1).then(|| r[0]["value"][1].as_str()?.parse().ok())?
        };
        let running = r#"restorewatch_restore_duration_seconds{namespace="tenant-b",restore="restore-pg1",driver="cnpg",result="running"}"#;
        let first = wait_until("the running restore's duration", || one_value(running));
        wait_until("the running restore's duration to grow", || {
            one_value(running).filter(|d| *d > first)
        });
        let done = r#"restorewatch_restore_duration_seconds{namespace="tenant-a",restore="restore-test",driver="velero",result="succeeded"}"#;
        let d = one_value(done).expect("the VM restore's duration");
        assert!(d > 0.0, "{d}");
        let phase = r#"restorewatch_velero_restore_phase{namespace="tenant-a",restore="restore-test",phase="Completed"}"#;
        assert_eq!(one_value(phase), Some(1.0));
        let last = r#"restorewatch_last_successful_restore_timestamp_seconds{namespace="tenant-a",kind="VMInstance",application="vm1"}"#;
        let t = one_value(last).expect("vm1's last restore");
        let now = jiff::Timestamp::now().as_second() as f64;
        assert!(t <= now && t > now - 3600.0, "{t} vs {now}");
    })
    .await;
}

/// Panels no played scenario fills at the moment the test looks, and why. Their queries are
/// still sent and must be valid.
const EMPTY_HERE: [(&str, &str); 2] = [
    (
        "Data transfer of running VM restores",
        "a DataDownload in flight is a transient state of the played scenarios; \
         tests/metrics_bounds.rs checks the families at 1,000 restores in flight",
    ),
    (
        "Findings marked stale",
        "needs a broken watch; tests/serve_prometheus.rs breaks one",
    ),
];

/// What Grafana would send for a target: its variables replaced as Grafana replaces them.
fn grafana_expr(expr: &str) -> String {
    expr.replace("$__rate_interval", "1m").replace("$job", ".*")
}

/// Every panel's every query against the VictoriaMetrics the alerts ran on: none invalid, none
/// empty while the broken restore and the leaked disk are there (but `EMPTY_HERE`).
async fn check_dashboard(vm: &str) {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/grafana/restorewatch.json"),
    )
    .expect("dashboard");
    let dashboard: Value = serde_json::from_str(&text).expect("dashboard JSON");
    let vm = vm.to_string();
    blocking(move || {
        // The lifecycle families come from the same scrape as the finding that fired; wait for
        // the slowest of them (the -orig PVC appears once the VM restore has run).
        wait_until("every panel filled", || {
            let mut empty = Vec::new();
            for p in dashboard["panels"].as_array().into_iter().flatten() {
                let title = p["title"].as_str().unwrap_or("");
                for t in p["targets"].as_array().into_iter().flatten() {
                    let expr = grafana_expr(t["expr"].as_str().unwrap_or(""));
                    let (code, body) = get(&vm, &format!("/api/v1/query?query={}", encode(&expr)))
                        .unwrap_or((0, String::new()));
                    assert_eq!(code, 200, "{title}: {expr} is refused: {body}");
                    let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
                    let filled = v["data"]["result"]
                        .as_array()
                        .is_some_and(|r| !r.is_empty());
                    if !filled && !EMPTY_HERE.iter().any(|(t, _)| *t == title) {
                        empty.push(format!("{title}: {expr}"));
                    }
                }
            }
            if !empty.is_empty() {
                eprintln!("still empty: {empty:#?}");
            }
            empty.is_empty().then_some(())
        })
    })
    .await;
}
