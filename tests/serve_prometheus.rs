//! `restorewatch serve` scraped by a real Prometheus (Debian's `prometheus` package): the
//! binary watches the emulator playing the serverName-reverted demo; Prometheus loads the
//! shipped alert rules (with `for:` shortened) and we read its HTTP API. The finding appears,
//! its alert fires with the finding's message, the repair makes the series go away, and a
//! broken watch shows as `restorewatch_watch_up 0` with the findings marked stale.

mod monitoring_support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use monitoring_support::{
    Killed, free_port, get, instant_query as prom_query, require, run_action, sim_with,
    start_serve, wait_until,
};
use serde_json::Value;

/// The shipped rules, with every `for:` cut to 2s so that the test sees alerts fire.
fn fast_rules(dir: &Path) -> PathBuf {
    let shipped =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/prometheus/restorewatch-rules.yaml");
    let text = std::fs::read_to_string(&shipped).expect("shipped rules");
    let fast: String = text
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("for:") {
                let indent = &l[..l.len() - l.trim_start().len()];
                format!("{indent}for: 2s\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    assert!(fast.contains("for: 2s"), "the rules have for: clauses");
    let out = dir.join("rules.yaml");
    std::fs::write(&out, fast).expect("write rules");
    out
}

fn start_prometheus(dir: &Path, target: &str) -> (Killed, String) {
    require("prometheus", "prometheus");
    let rules = fast_rules(dir);
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             rule_files:\n  - {}\n\
             scrape_configs:\n  - job_name: restorewatch\n    static_configs:\n      - targets: ['{target}']\n",
            rules.display()
        ),
    )
    .expect("write config");
    let addr = format!("127.0.0.1:{}", free_port());
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address={addr}"))
        .stdout(Stdio::null())
        .stderr(Stdio::from(
            std::fs::File::create(dir.join("prometheus.log")).expect("log"),
        ))
        .spawn()
        .expect("prometheus starts");
    let child = Killed(child);
    wait_until("Prometheus ready", || {
        get(&addr, "/-/ready").filter(|(c, _)| *c == 200)
    });
    (child, addr)
}

fn finding_series(prom: &str, code: &str) -> Vec<Value> {
    prom_query(prom, &format!("restorewatch_findings{{code=\"{code}\"}}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_sees_findings_alerts_repairs_and_watch_faults() {
    let dir = tempfile::tempdir().expect("tmp");
    let sim = sim_with(&["demo-servername-reverted", "vm-orig-deleted-leak"], 20.0).await;
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc, None).expect("kubeconfig");
    let (_serve, serve_addr) = start_serve(&kc, &[]);
    let (_prom, prom) = start_prometheus(dir.path(), &serve_addr);

    // The restore waits for its repair: the finding is scraped...
    let series = tokio::task::spawn_blocking({
        let prom = prom.clone();
        move || {
            wait_until("servername-reverted scraped", || {
                let s = finding_series(&prom, "servername-reverted");
                (!s.is_empty()).then_some(s)
            })
        }
    })
    .await
    .expect("join");
    let m = &series[0]["metric"];
    assert_eq!(m["severity"], "error");
    assert_eq!(m["namespace"], "tenant-b");
    assert_eq!(m["restore"], "restore-pg1");
    assert_eq!(m["stale"], "false");

    // ...and pages, its description carrying the finding's message.
    let alert = tokio::task::spawn_blocking({
        let prom = prom.clone();
        move || {
            wait_until("RestoreDataAtRisk firing", || {
                let (_, body) = get(&prom, "/api/v1/alerts")?;
                let v: Value = serde_json::from_str(&body).ok()?;
                v.pointer("/data/alerts")?
                    .as_array()?
                    .iter()
                    .find(|a| {
                        a["labels"]["alertname"] == "RestoreDataAtRisk"
                            && a["labels"]["code"] == "servername-reverted"
                            && a["state"] == "firing"
                    })
                    .cloned()
            })
        }
    })
    .await
    .expect("join");
    let description = alert["annotations"]["description"].as_str().unwrap_or("");
    assert!(description.contains("newServerName"), "{description}");
    assert!(description.contains("Remedy:"), "{description}");
    assert_eq!(
        alert["annotations"]["runbook_url"],
        "docs/findings.md#servername-reverted"
    );

    // The repair, through the real CLI: the series goes away at the next scrapes.
    let restore = format!(
        "{}/{}",
        m["namespace"].as_str().unwrap_or(""),
        m["restore"].as_str().unwrap_or("")
    );
    run_action(
        &kc,
        &dir.path().join("state"),
        &["fix-servername", "--restore", &restore],
    );
    tokio::task::spawn_blocking({
        let prom = prom.clone();
        move || {
            wait_until("servername-reverted gone", || {
                finding_series(&prom, "servername-reverted")
                    .is_empty()
                    .then_some(())
            })
        }
    })
    .await
    .expect("join");

    // Every watch cut and every relist refused: the watches are down, and what is still
    // reported is marked stale (the leak scenario's findings stay).
    sim.faults().set_error_rate(1.0);
    sim.faults().drop_watches();
    tokio::task::spawn_blocking({
        let prom = prom.clone();
        move || {
            wait_until("watches down and findings stale", || {
                let down = prom_query(&prom, "restorewatch_watch_up == 0");
                let stale = prom_query(&prom, "restorewatch_findings{stale=\"true\"}");
                (down.len() > 1 && !stale.is_empty()).then_some(())
            })
        }
    })
    .await
    .expect("join");
    sim.faults().clear();
    sim.shutdown().await;
}

/// Our own endpoints, straight: /readyz before and after the first sync, /report is the check
/// document, writes are refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endpoints_answer_and_refuse_writes() {
    let dir = tempfile::tempdir().expect("tmp");
    let sim = sim_with(&["vm-orig-deleted-leak"], 1000.0).await;
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc, None).expect("kubeconfig");
    let (_serve, addr) = start_serve(&kc, &[]);
    let addr2 = addr.clone();
    tokio::task::spawn_blocking(move || {
        wait_until("ready", || {
            get(&addr2, "/readyz").filter(|(c, _)| *c == 200)
        })
    })
    .await
    .expect("join");
    let (code, health) = get(&addr, "/healthz").expect("healthz");
    assert_eq!((code, health.as_str()), (200, "ok\n"));
    let (code, report) = get(&addr, "/report").expect("report");
    assert_eq!(code, 200);
    let report: Value = serde_json::from_str(&report).expect("report is JSON");
    assert!(report["restores"].is_array() && report["findings"].is_array());
    let (code, metrics) = get(&addr, "/metrics").expect("metrics");
    assert_eq!(code, 200);
    assert!(
        metrics.contains("restorewatch_build_info{version=\""),
        "{metrics}"
    );
    assert!(metrics.contains("restorewatch_ready 1"), "{metrics}");
    // A client that does not ask for OpenMetrics (this GET, curl, promtool) gets the text
    // format; Prometheus asks for OpenMetrics and gets it (tests/metrics_scrape_bounds.rs).
    assert!(!metrics.contains("# EOF"), "{metrics}");
    assert!(
        metrics.contains("# TYPE process_cpu_seconds_total counter"),
        "{metrics}"
    );

    let mut s = TcpStream::connect(&addr).expect("connect");
    write!(s, "POST /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n").expect("write");
    let mut raw = String::new();
    s.read_to_string(&mut raw).expect("read");
    assert!(
        raw.starts_with("HTTP/1.0 405") || raw.starts_with("HTTP/1.1 405"),
        "{raw}"
    );
    sim.shutdown().await;
}
