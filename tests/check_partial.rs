//! Missing data is never made into findings: `check` on a healthy cluster whose API fails a
//! share of its requests retries, and either reports the healthy state (exit 0) or says which
//! kinds it could not read (exit 2), never a finding built on a failed list (exit 1).

use restorewatch::analysis::{self, Settings};
use restorewatch::cluster::{KindHealth, Snapshot, SyncState};
use restorewatch::model::{Kind, parse_object};
use restorewatch::sim::{FaultSpec, Sim, SimConfig, SimHandle};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A VM restore in its halt step: the VMI still runs, the disks are untouched. Healthy; a
/// DataVolume list read as "no DataVolumes" makes it `vm-not-halted`.
const HALTING: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/healthy/vm-postfix-halting.yaml"
);
const NOW: &str = "2026-11-20T10:00:30Z";

async fn halting_cluster(faults: FaultSpec) -> SimHandle {
    let sim = Sim::start(SimConfig {
        faults,
        ..SimConfig::default()
    })
    .await
    .expect("emulator");
    let text = std::fs::read_to_string(HALTING).expect("fixture");
    for o in restorewatch::sim::load::parse_objects(&text).expect("objects") {
        sim.store().load(o).expect("object loads");
    }
    sim
}

fn kubeconfig(sim: &SimHandle, dir: &Path) -> PathBuf {
    let path = dir.join("kubeconfig");
    sim.write_kubeconfig(&path, None).expect("kubeconfig");
    path
}

/// Runs the binary off the runtime's threads, so the emulator keeps answering.
async fn check(args: Vec<String>) -> (i32, String, String) {
    tokio::task::spawn_blocking(move || {
        let out = Command::new(env!("CARGO_BIN_EXE_restorewatch"))
            .arg("check")
            .args(&args)
            .env("NO_COLOR", "1")
            .env_remove("KUBECONFIG")
            .output()
            .expect("the binary runs");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    })
    .await
    .expect("check ran")
}

fn args(kc: &Path, extra: &[&str]) -> Vec<String> {
    let mut v = vec![
        "--kubeconfig".to_string(),
        kc.display().to_string(),
        "--now".into(),
        NOW.into(),
        "-o".into(),
        "json".into(),
    ];
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_healthy_cluster_failing_30_percent_of_requests_never_yields_a_finding() {
    let dir = tempfile::tempdir().expect("tmp");
    for seed in 1..=6u64 {
        let sim = halting_cluster(FaultSpec {
            error_rate: 0.3,
            throttle_rate: 0.05,
            seed,
            ..FaultSpec::default()
        })
        .await;
        let kc = kubeconfig(&sim, dir.path());
        let (code, out, err) = check(args(&kc, &[])).await;
        assert!(
            code == 0 || code == 2,
            "seed {seed}: exit {code}, stdout {out}, stderr {err}"
        );
        if code == 2 {
            assert!(
                err.contains("could not read") && err.contains("--allow-partial"),
                "seed {seed}: exit 2 names the kinds and the way out: {err}"
            );
        } else {
            let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON document");
            let codes: Vec<&str> = v["findings"]
                .as_array()
                .expect("findings")
                .iter()
                .filter_map(|f| f["code"].as_str())
                .collect();
            assert!(!codes.contains(&"vm-not-halted"), "seed {seed}: {codes:?}");
        }
        sim.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kinds_that_stay_unreadable_stop_check_unless_allow_partial() {
    let dir = tempfile::tempdir().expect("tmp");
    // Every request fails: nothing can be read, and check says so and what it talked to.
    let sim = halting_cluster(FaultSpec {
        error_rate: 1.0,
        ..FaultSpec::default()
    })
    .await;
    let kc = kubeconfig(&sim, dir.path());
    let (code, out, err) = check(args(&kc, &[])).await;
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains(&sim.url()), "names the server: {err}");
    assert!(
        err.contains("injected fault") && err.contains("HTTP 500"),
        "the API error's message and code, not a Debug dump: {err}"
    );
    assert!(!err.contains("Status {"), "{err}");
    sim.shutdown().await;

    // Half the requests fail, fewer retries than needed: some kinds stay unreadable.
    // With --allow-partial the rest is analysed and nothing unreadable counts.
    for seed in 1..=4u64 {
        let sim = halting_cluster(FaultSpec {
            error_rate: 0.6,
            seed,
            ..FaultSpec::default()
        })
        .await;
        let kc = kubeconfig(&sim, dir.path());
        let (code, out, err) = check(args(&kc, &["--allow-partial"])).await;
        assert!(
            code == 0 || (code == 2 && err.contains("cannot list anything")),
            "seed {seed}: --allow-partial on a healthy cluster: exit {code}: {err}"
        );
        if code == 0 {
            let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON document");
            for f in v["findings"].as_array().expect("findings") {
                assert!(
                    f["severity"] != "error" || f["stale"] == true,
                    "seed {seed}: an error finding on a healthy cluster must rest on an unreadable kind: {f}"
                );
            }
        }
        sim.shutdown().await;
    }
}

/// The same guard in the dashboard's terms: a kind whose first list failed is unknown, and the
/// analysis concludes nothing from the absence of its objects.
#[test]
fn a_kind_that_never_listed_is_not_read_as_empty() {
    let text = std::fs::read_to_string(HALTING).expect("fixture");
    let objects: Vec<_> = restorewatch::sim::load::parse_objects(&text)
        .expect("objects")
        .into_iter()
        .filter_map(|v| parse_object(v).ok())
        .filter(|o| o.kind() != Kind::DataVolume)
        .collect();
    let now: jiff::Timestamp = NOW.parse().expect("time");
    let mut snap = Snapshot::from_objects(objects);
    for k in Kind::all() {
        snap.health.insert(
            k,
            KindHealth {
                state: SyncState::Synced,
                last_event: Some(now),
            },
        );
    }
    let failed = KindHealth {
        state: SyncState::Failed {
            since: now,
            error: "HTTP 500".into(),
        },
        last_event: None,
    };
    snap.health.insert(Kind::DataVolume, failed.clone());
    let report = analysis::analyze(&snap, &Settings::default(), now);
    let codes: Vec<&str> = report.findings.iter().map(|f| f.code.as_str()).collect();
    assert!(!codes.contains(&"vm-not-halted"), "{codes:?}");
    assert!(
        report.restores.iter().all(|r| r.stale),
        "the restore rests on the unknown kind"
    );

    // Once listed, its absence means something again: the same DataVolumes gone is a halt
    // that did not happen.
    snap.health.insert(
        Kind::DataVolume,
        KindHealth {
            state: SyncState::Synced,
            last_event: Some(now),
        },
    );
    let report = analysis::analyze(&snap, &Settings::default(), now);
    let codes: Vec<&str> = report.findings.iter().map(|f| f.code.as_str()).collect();
    assert!(codes.contains(&"vm-not-halted"), "{codes:?}");
}
