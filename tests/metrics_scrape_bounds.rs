//! `/metrics` as a scraper and an attacker see it (issue 27, point 11): what `serve` answers a
//! plain GET passes Prometheus's own linter (`promtool check metrics`, Debian's `prometheus`),
//! Prometheus still gets OpenMetrics when it asks for it, and a tenant that creates 2,000
//! RestoreJobs adds the per-restore series of only the capped number of them, the rest counted
//! in `restorewatch_restores_not_exported`, the one restore with a finding kept whatever its age.

mod monitoring_support;

use monitoring_support::{get, require, sim_with, start_serve, wait_until};
use restorewatch::model::Kind;
use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

/// `promtool check metrics` on `exposition`: its complaints, empty when it passes.
fn promtool_problems(exposition: &str) -> String {
    require("promtool", "prometheus");
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(exposition.as_bytes())
        .expect("exposition written");
    let out = child.wait_with_output().expect("promtool ends");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() && said.trim().is_empty() {
        String::new()
    } else {
        format!("exit {:?}: {said}", out.status.code())
    }
}

/// A GET with an `Accept` header: the status line, the headers and the body.
fn get_accepting(addr: &str, path: &str, accept: &str) -> (String, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    write!(
        s,
        "GET {path} HTTP/1.0\r\nHost: {addr}\r\nAccept: {accept}\r\n\r\n"
    )
    .expect("request");
    let mut raw = String::new();
    s.read_to_string(&mut raw).expect("answer");
    let (head, body) = raw.split_once("\r\n\r\n").expect("HTTP answer");
    (head.to_ascii_lowercase(), body.to_string())
}

fn series<'a>(exposition: &'a str, family: &str) -> Vec<&'a str> {
    exposition
        .lines()
        .filter(|l| {
            l.strip_prefix(family)
                .is_some_and(|r| r.starts_with('{') || r.starts_with(' '))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scrape_passes_promtool_and_prometheus_still_gets_openmetrics() {
    let dir = tempfile::tempdir().expect("tmp");
    let sim = sim_with(&["vm-orig-deleted-leak"], 1000.0).await;
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc, None).expect("kubeconfig");
    let (_serve, addr) = start_serve(&kc, &[]);
    let a = addr.clone();
    // As `curl` asks: the text format.
    let text = tokio::task::spawn_blocking(move || {
        wait_until("a scrape with findings", || {
            get(&a, "/metrics")
                .filter(|(c, b)| *c == 200 && b.contains("restorewatch_findings{"))
                .map(|(_, b)| b)
        })
    })
    .await
    .expect("join");
    assert!(text.contains("process_cpu_seconds_total"), "{text}");
    assert_eq!(promtool_problems(&text), "", "promtool on:\n{text}");

    // As Prometheus asks: OpenMetrics, which its own parser reads.
    let prometheus_accept = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;\
        version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
    let (head, om) =
        tokio::task::spawn_blocking(move || get_accepting(&addr, "/metrics", prometheus_accept))
            .await
            .expect("join");
    assert!(head.contains("application/openmetrics-text"), "{head}");
    assert!(om.trim_end().ends_with("# EOF"), "{om}");
    assert!(om.contains("# TYPE process_cpu_seconds counter"), "{om}");
    sim.shutdown().await;
}

fn restore_job(ns: &str, i: usize, failed: bool) -> serde_json::Value {
    let info = Kind::RestoreJob.info();
    // Created one second apart: restore 0 is the oldest.
    let created = jiff::Timestamp::from_second(1_795_000_000 + i as i64).expect("time");
    let status = if failed {
        json!({"phase": "Failed", "message": "restic exited 1",
               "startedAt": created.to_string(), "completedAt": created.to_string()})
    } else {
        json!({"phase": "Succeeded", "startedAt": created.to_string(),
               "completedAt": created.to_string()})
    };
    json!({"apiVersion": info.api_version(), "kind": info.api_kind,
           "metadata": {"name": format!("flood-{i:04}"), "namespace": ns,
                        "uid": format!("00000000-0000-4000-8000-{i:012}"),
                        "creationTimestamp": created.to_string()},
           "spec": {"backupRef": {"name": "b1"}},
           "status": status})
}

/// What `restorewatch_restores_not_exported` says for `ns`, once the scrape shows `flood`
/// restores in all.
fn wait_capped(addr: &str, ns: &str) -> String {
    let want = format!("restorewatch_restores_not_exported{{namespace=\"{ns}\"}}");
    wait_until("the flooded namespace in /metrics", || {
        get(addr, "/metrics")
            .filter(|(c, b)| *c == 200 && b.contains(&want))
            .map(|(_, b)| b)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_with_2000_restore_jobs_adds_only_the_capped_series() {
    const FLOOD: usize = 2_000;
    let dir = tempfile::tempdir().expect("tmp");
    let sim = sim_with(&[], 1000.0).await;
    for ns in ["tenant-flood", "tenant-quiet"] {
        sim.store()
            .put(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
            .expect("namespace");
    }
    // The oldest one failed: the one a person must see, however many come after it.
    for i in 0..FLOOD {
        sim.store()
            .put(restore_job("tenant-flood", i, i == 0))
            .expect("RestoreJob");
    }
    for i in 0..3 {
        sim.store()
            .put(restore_job("tenant-quiet", i, false))
            .expect("RestoreJob");
    }
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc, None).expect("kubeconfig");

    for (cap, extra) in [(50, vec![]), (10, vec!["--restores-per-namespace", "10"])] {
        let (_serve, addr) = start_serve(&kc, &extra);
        let text = tokio::task::spawn_blocking(move || {
            wait_until("every RestoreJob listed", || {
                let t = wait_capped(&addr, "tenant-flood");
                let seen = series(&t, "restorewatch_restore_info").len()
                    + t.lines()
                        .find(|l| {
                            l.starts_with(
                                "restorewatch_restores_not_exported{namespace=\"tenant-flood\"}",
                            )
                        })
                        .and_then(|l| l.rsplit(' ').next()?.parse::<usize>().ok())
                        .unwrap_or(0);
                (seen == FLOOD + 3).then_some(t)
            })
        })
        .await
        .expect("join");
        let flood_info: Vec<_> = series(&text, "restorewatch_restore_info")
            .into_iter()
            .filter(|l| l.contains("namespace=\"tenant-flood\""))
            .collect();
        assert_eq!(flood_info.len(), cap, "{cap}: restore_info of the flood");
        assert!(
            text.contains(&format!(
                "restorewatch_restores_not_exported{{namespace=\"tenant-flood\"}} {}",
                FLOOD - cap
            )),
            "{cap}: the dropped count"
        );
        assert!(
            text.contains("restorewatch_restores_not_exported{namespace=\"tenant-quiet\"} 0"),
            "{cap}: a namespace under the cap loses nothing"
        );
        assert_eq!(
            series(&text, "restorewatch_restore_info")
                .iter()
                .filter(|l| l.contains("namespace=\"tenant-quiet\""))
                .count(),
            3
        );
        assert!(
            flood_info
                .iter()
                .any(|l| l.contains("restore=\"flood-0000\"")),
            "{cap}: the failed restore is kept though it is the oldest"
        );
        assert!(
            series(&text, "restorewatch_findings")
                .iter()
                .any(|l| l.contains("code=\"restore-failed\"") && l.contains("flood-0000")),
            "{cap}: its finding is exported"
        );
        // Every per-restore family holds at most the cap's restores of the flood.
        for family in [
            "restorewatch_restore_step",
            "restorewatch_restore_duration_seconds",
            "restorewatch_findings",
            "restorewatch_finding_info",
        ] {
            let restores: std::collections::BTreeSet<&str> = series(&text, family)
                .into_iter()
                .filter(|l| l.contains("namespace=\"tenant-flood\""))
                .filter_map(|l| l.split("restore=\"").nth(1)?.split('"').next())
                .collect();
            assert!(
                restores.len() <= cap,
                "{family}: {} restores",
                restores.len()
            );
        }
        let all = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .count();
        println!("cap {cap}: {all} series for {} RestoreJobs", FLOOD + 3);
        assert!(all < 40 * cap + 500, "{all} series");
        assert_eq!(promtool_problems(&text), "", "promtool");
    }
    sim.shutdown().await;
}
