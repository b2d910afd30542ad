//! Every built-in scenario, played on the emulator and judged by the REAL live path of
//! `restorewatch check`: one LIST of every kind through a kubeconfig
//! (`cluster::list_once::snapshot`), then `analysis::analyze`. A scenario's `expect` codes must
//! all be reported at its end state (`expectAtWait` while it waits for a repair), and no
//! warning or error outside them may appear. The demo scenarios are then repaired through the
//! real actions executor and must finish healthy.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use restorewatch::actions::execute::{Executor, Outcome};
use restorewatch::actions::{ActionRequest, Target, plan};
use restorewatch::analysis::{self, ActionKind, Report, Settings, Severity};
use restorewatch::args::ClusterArgs;
use restorewatch::cluster::list_once;
use restorewatch::model::Kind;
use restorewatch::sim::{Scenario, ScenarioRun, Sim, SimConfig, SimHandle, Store};
use serde_json::Value;

/// Scenarios play this many times faster than written.
const SPEED: f64 = 1000.0;
/// The demos, when a repair is run against them: slow enough that the restore does not finish
/// within the executor's confirming re-read after its last write (at 1000x the CNPG demo goes
/// from the repair to Succeeded in 7 ms, and a re-plan of fix-servername refuses a finished
/// restore).
const REPAIR_SPEED: f64 = 50.0;
/// Upper bound for any one wait in these tests (playing, settling, the executor).
const WAIT: Duration = Duration::from_secs(30);

async fn start() -> SimHandle {
    Sim::start(SimConfig {
        // The protection finalizers go as soon as nothing holds them: at 1000x, the default
        // 100ms would be a minute and a half of scenario time.
        finalizer_delay: Duration::from_millis(1),
        ..SimConfig::default()
    })
    .await
    .expect("emulator starts")
}

/// Whether the simulated controller manager still has a protection finalizer to remove (the
/// same rule as `sim::kcm`: a PV not Bound, a PVC no running pod mounts).
fn releasable_left(store: &Store) -> Vec<String> {
    let f = Default::default();
    let pods = store.all(Kind::Pod, &f);
    let mut left = Vec::new();
    for (kind, fin) in [
        (Kind::PersistentVolumeClaim, "kubernetes.io/pvc-protection"),
        (Kind::PersistentVolume, "kubernetes.io/pv-protection"),
    ] {
        for o in store.all(kind, &f) {
            let deleting = o.pointer("/metadata/deletionTimestamp").is_some();
            let has = o
                .pointer("/metadata/finalizers")
                .and_then(Value::as_array)
                .is_some_and(|l| l.iter().any(|x| x == fin));
            if !deleting || !has {
                continue;
            }
            let held = match kind {
                Kind::PersistentVolume => {
                    o.pointer("/status/phase").and_then(Value::as_str) == Some("Bound")
                }
                _ => {
                    let ns = s(&o, "/metadata/namespace");
                    let name = s(&o, "/metadata/name");
                    pods.iter().any(|p| {
                        s(p, "/metadata/namespace") == ns
                            && !matches!(s(p, "/status/phase"), "Succeeded" | "Failed")
                            && p.pointer("/spec/volumes")
                                .and_then(Value::as_array)
                                .is_some_and(|vs| {
                                    vs.iter()
                                        .any(|v| s(v, "/persistentVolumeClaim/claimName") == name)
                                })
                    })
                }
            };
            if !held {
                left.push(format!("{kind} {}", s(&o, "/metadata/name")));
            }
        }
    }
    left
}

fn s<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

/// Waits until the controller manager has removed every finalizer it is due to remove, so the
/// picture `check` takes is the settled one.
async fn settle(store: &Store, what: &str) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let left = releasable_left(store);
        if left.is_empty() {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: the controller manager did not release {left:?} within {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Plays a scenario until it finishes or blocks on a wait; fails on any step error.
async fn play_settled(sim: &SimHandle, name: &str, speed: f64) -> (Scenario, ScenarioRun) {
    let scenario = Scenario::load(name).expect("built-in scenario");
    let run = sim.play(scenario.clone(), speed);
    let status = tokio::time::timeout(WAIT, run.settled())
        .await
        .unwrap_or_else(|_| {
            panic!(
                "{name} neither finished nor waited within {WAIT:?}: {:?}",
                run.status()
            )
        });
    assert!(status.errors.is_empty(), "{name}: {:#?}", status.errors);
    settle(sim.store(), name).await;
    // The garbage collector and the PV binder have reacted to the last steps too.
    tokio::time::timeout(WAIT, sim.controllers_idle())
        .await
        .expect("the simulated controllers settle");
    (scenario, run)
}

fn kubeconfig(sim: &SimHandle, dir: &Path) -> PathBuf {
    let path = dir.join("kubeconfig");
    sim.write_kubeconfig(&path, None)
        .expect("kubeconfig written");
    path
}

/// What `restorewatch check` (without `--snapshot`) computes.
async fn check_live(kubeconfig: &Path) -> Report {
    let snap = list_once::snapshot(&ClusterArgs {
        kubeconfig: Some(kubeconfig.to_path_buf()),
        ..ClusterArgs::default()
    })
    .await
    .expect("one LIST of every kind");
    analysis::analyze(&snap, &Settings::default(), Timestamp::now())
}

fn describe(report: &Report) -> String {
    report
        .findings
        .iter()
        .map(|f| format!("  {} {}: {}", f.severity.as_str(), f.code, f.message))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `None` when the report matches: every expected code reported, nothing of warning or error
/// severity besides.
fn mismatch(report: &Report, expect: &[String]) -> Option<String> {
    let reported: BTreeSet<&str> = report.findings.iter().map(|f| f.code.as_str()).collect();
    let missing: Vec<&String> = expect
        .iter()
        .filter(|c| !reported.contains(c.as_str()))
        .collect();
    let extra: BTreeSet<&str> = report
        .findings
        .iter()
        .filter(|f| f.severity >= Severity::Warning && !expect.iter().any(|c| c == f.code.as_str()))
        .map(|f| f.code.as_str())
        .collect();
    (!missing.is_empty() || !extra.is_empty()).then(|| {
        format!(
            "expected {expect:?}; missing {missing:?}; unexpected {extra:?}; reported:\n{}",
            describe(report)
        )
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_builtin_scenario_reports_its_expected_codes() {
    let all = Scenario::builtin().expect("built-in scenarios parse");
    let mut covered = BTreeSet::new();
    let mut failures = Vec::new();
    // One play each: a scenario's verdict may not depend on how fast the player runs next to
    // the simulated controllers (those that write at the wall clock are off where a scenario
    // is back-dated, see vm-velero-restore-stuck).
    for scenario in &all {
        let sim = start().await;
        let dir = tempfile::tempdir().unwrap();
        let (scenario, run) = play_settled(&sim, &scenario.name, SPEED).await;
        let status = run.status();
        let (stage, expect) = if scenario.has_waits() {
            assert!(
                status.waiting.is_some(),
                "{}: has waits but finished without an operator: {status:?}",
                scenario.name
            );
            ("at its wait", &scenario.expect_at_wait)
        } else {
            assert!(status.finished, "{}: {status:?}", scenario.name);
            ("at its end", &scenario.expect)
        };
        covered.extend(expect.iter().cloned());
        covered.extend(scenario.expect.iter().cloned());
        let report = check_live(&kubeconfig(&sim, dir.path())).await;
        eprintln!("== {} {stage}\n{}", scenario.name, describe(&report));
        if let Some(m) = mismatch(&report, expect) {
            failures.push(format!("{} {stage}: {m}", scenario.name));
        }
        run.abort();
        sim.shutdown().await;
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
    // Every code that can arise live is shown by at least one scenario, but `watch-stale` (a
    // broken watch, not a cluster state) and `objectstore-owner-stale` (the garbage collector
    // deletes such an ObjectStore within a second, as on a real cluster: fixtures show it).
    let missing: Vec<&str> = analysis::Code::ALL
        .iter()
        .map(|c| c.as_str())
        .filter(|c| {
            !["watch-stale", "objectstore-owner-stale"].contains(c) && !covered.contains(*c)
        })
        .collect();
    assert!(missing.is_empty(), "no scenario expects {missing:?}");
}

/// A back-dated scenario ("25 minutes ago") judged the same whether the player runs ahead of the
/// simulated controllers or behind them: played slowly against controllers that react at once,
/// a controller-manager write at the wall clock (a PV released between a rename's deletion and
/// its re-point) dated vm-velero-restore-stuck as fresh and hid restore-stalled, which is what
/// a loaded machine did at 1000x now and then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_scenarios_stay_stalled_whatever_the_player_speed() {
    let all = Scenario::builtin().expect("built-in scenarios parse");
    let stalled: Vec<&Scenario> = all
        .iter()
        .filter(|s| s.expect.iter().any(|c| c == "restore-stalled"))
        .collect();
    assert!(!stalled.is_empty());
    for scenario in stalled {
        let sim = Sim::start(SimConfig {
            finalizer_delay: Duration::ZERO,
            ..SimConfig::default()
        })
        .await
        .expect("emulator starts");
        let dir = tempfile::tempdir().unwrap();
        let (_, run) = play_settled(&sim, &scenario.name, 10.0).await;
        let report = check_live(&kubeconfig(&sim, dir.path())).await;
        if let Some(m) = mismatch(&report, &scenario.expect) {
            panic!("{} played at 10x: {m}", scenario.name);
        }
        run.abort();
        sim.shutdown().await;
    }
}

/// The demo scenarios name what the repair must make true; a repaired restore finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scenario_waits_block_until_their_condition_holds() {
    let sim = start().await;
    let (_, run) = play_settled(&sim, "demo-servername-reverted", REPAIR_SPEED).await;
    let st = run.status();
    assert!(
        st.waiting
            .as_deref()
            .is_some_and(|w| w.contains("serverName")),
        "{st:?}"
    );
    assert!(!st.finished && st.steps_applied < st.steps_total);
    // A write that does not meet the condition leaves it blocked.
    sim.store()
        .patch_object(
            Kind::CnpgCluster,
            "tenant-b",
            "postgres-pg1",
            restorewatch::sim::PatchKind::Merge,
            &serde_json::json!({"metadata": {"labels": {"touched": "yes"}}}),
        )
        .unwrap();
    assert!(run.status().waiting.is_some());
    let st = repair(
        &sim,
        "tenant-b",
        "restore-pg1",
        ActionKind::FixServername,
        &run,
    )
    .await;
    assert!(st.finished && !st.timed_out, "{st:?}");
    assert_eq!(st.steps_applied, st.steps_total);
}

/// Plans the action from `check`'s own snapshot, runs it through the executor, and waits for
/// the scenario to finish.
async fn repair(
    sim: &SimHandle,
    ns: &str,
    restore: &str,
    action: ActionKind,
    run: &ScenarioRun,
) -> restorewatch::sim::ScenarioStatus {
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig(sim, dir.path());
    let snap = list_once::snapshot(&ClusterArgs {
        kubeconfig: Some(kc),
        ..ClusterArgs::default()
    })
    .await
    .expect("snapshot");
    let request = ActionRequest {
        action,
        target: Target::Restore {
            namespace: ns.into(),
            name: restore.into(),
        },
        policy: None,
        discard_only_copy: false,
        leave_running: false,
    };
    let confirmed = plan(&snap, &request)
        .unwrap_or_else(|r| panic!("{action} on {ns}/{restore} refused: {}", r.reason));
    assert!(
        !confirmed.is_done(),
        "{action}: nothing to do? {confirmed:?}"
    );
    let executor = Executor {
        client: sim.client().expect("client"),
        user: "test-operator".into(),
        context: "restorewatch-sim".into(),
        server: "http://sim".into(),
        audit: None,
        events: false,
        max_writes: None,
        bind_wait: restorewatch::actions::execute::BIND_WAIT,
    };
    let outcome = tokio::time::timeout(WAIT, executor.execute(&confirmed, |_| {}))
        .await
        .unwrap_or_else(|_| panic!("{action} did not complete within {WAIT:?}"));
    assert!(
        matches!(outcome, Outcome::Completed { writes } if writes == confirmed.ops.len()),
        "{action}: {outcome:?}, plan {:#?}",
        confirmed.ops
    );
    let st = tokio::time::timeout(WAIT, run.finished())
        .await
        .unwrap_or_else(|_| {
            panic!(
                "the scenario did not finish within {WAIT:?} after {action}: {:?}",
                run.status()
            )
        });
    assert!(st.errors.is_empty(), "{:#?}", st.errors);
    settle(sim.store(), "after the repair").await;
    tokio::time::timeout(WAIT, sim.controllers_idle())
        .await
        .expect("the simulated controllers settle");
    st
}

/// `check` after the repair: the restore Succeeded, the scenario's `expect` holds, no error.
async fn assert_repaired(sim: &SimHandle, scenario: &Scenario, ns: &str, restore: &str) {
    let dir = tempfile::tempdir().unwrap();
    let report = check_live(&kubeconfig(sim, dir.path())).await;
    let r = report
        .restores
        .iter()
        .find(|r| r.id.namespace == ns && r.id.name == restore)
        .unwrap_or_else(|| panic!("{ns}/{restore} not in the report"));
    assert_eq!(r.phase, "Succeeded", "{}", describe(&report));
    assert!(
        report.findings.iter().all(|f| f.severity < Severity::Error),
        "error findings after the repair:\n{}",
        describe(&report)
    );
    if let Some(m) = mismatch(&report, &scenario.expect) {
        panic!("{} after the repair: {m}", scenario.name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_rename_half_done_completes_after_resume_rename() {
    let sim = start().await;
    let (scenario, run) = play_settled(&sim, "demo-rename-half-done", REPAIR_SPEED).await;
    assert!(run.status().waiting.is_some(), "{:?}", run.status());
    let st = repair(
        &sim,
        "tenant-a",
        "restore-test",
        ActionKind::ResumeRename,
        &run,
    )
    .await;
    assert!(st.finished && !st.timed_out, "{st:?}");
    assert_repaired(&sim, &scenario, "tenant-a", "restore-test").await;
    // The repair is what the controller's own rename would have produced.
    let orig = sim
        .store()
        .get(
            Kind::PersistentVolumeClaim,
            "tenant-a",
            "vm-disk-data-orig-de3e",
        )
        .expect("-orig PVC");
    let pv = sim
        .store()
        .get(Kind::PersistentVolume, "", s(&orig, "/spec/volumeName"))
        .expect("its PV");
    assert_eq!(s(&pv, "/spec/claimRef/uid"), s(&orig, "/metadata/uid"));
    assert_eq!(s(&pv, "/spec/persistentVolumeReclaimPolicy"), "Retain");
    assert_eq!(s(&orig, "/status/phase"), "Bound");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_servername_reverted_completes_after_fix_servername() {
    let sim = start().await;
    let (scenario, run) = play_settled(&sim, "demo-servername-reverted", REPAIR_SPEED).await;
    assert!(run.status().waiting.is_some(), "{:?}", run.status());
    let st = repair(
        &sim,
        "tenant-b",
        "restore-pg1",
        ActionKind::FixServername,
        &run,
    )
    .await;
    assert!(st.finished && !st.timed_out, "{st:?}");
    assert_repaired(&sim, &scenario, "tenant-b", "restore-pg1").await;
}

/// Without the repair, the serverName demo runs into its deadline: the onTimeout branch fails
/// the RestoreJob as the controller does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_servername_reverted_fails_on_its_deadline_without_a_repair() {
    let sim = start().await;
    // 30 minutes of scenario time in well under a second.
    let run = sim.play(
        Scenario::load("demo-servername-reverted").unwrap(),
        100_000.0,
    );
    let st = tokio::time::timeout(WAIT, run.finished())
        .await
        .unwrap_or_else(|_| panic!("no timeout within {WAIT:?}: {:?}", run.status()));
    assert!(st.timed_out && st.errors.is_empty(), "{st:?}");
    let rj = sim
        .store()
        .get(Kind::RestoreJob, "tenant-b", "restore-pg1")
        .unwrap();
    assert_eq!(s(&rj, "/status/phase"), "Failed");
    assert!(s(&rj, "/status/message").contains("deadline"), "{rj}");
}

/// The built binary, `check --kubeconfig F -o json`, against a served scenario.
async fn run_binary(kubeconfig: &Path, extra: &[&str]) -> (i32, Value, String) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_restorewatch"));
    cmd.arg("check")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["-o", "json"])
        .args(extra)
        .env_remove("KUBECONFIG");
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .unwrap()
        .expect("restorewatch runs");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let json: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{stdout}\n{stderr}"));
    (out.status.code().unwrap_or(-1), json, stderr)
}

fn codes(json: &Value) -> Vec<String> {
    json["findings"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f["code"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_exits_1_on_an_error_finding_and_0_on_a_healthy_restore() {
    let dir = tempfile::tempdir().unwrap();

    let sim = start().await;
    play_settled(&sim, "vm-rename-cache-race", SPEED).await;
    let (code, json, stderr) = run_binary(&kubeconfig(&sim, dir.path()), &[]).await;
    assert_eq!(code, 1, "{stderr}\n{json:#}");
    let found = codes(&json);
    for c in ["rename-half-done", "disk-not-restored"] {
        assert!(found.iter().any(|f| f == c), "{c} not in {found:?}");
    }
    let rename = json["findings"]
        .as_array()
        .and_then(|a| a.iter().find(|f| f["code"] == "rename-half-done"))
        .unwrap();
    assert_eq!(rename["severity"], "error");
    assert_eq!(rename["restore"], "tenant-a/restore-test");
    // The restore Succeeded: finishing the rename now restores nothing, so resume-rename
    // (which refuses a finished restore) is not offered; the remedy says what to do instead.
    assert_eq!(rename["action"], serde_json::Value::Null);
    assert!(
        rename["remedy"]
            .as_str()
            .is_some_and(|r| r.contains("The restore is over")),
        "{rename:#}"
    );
    sim.shutdown().await;

    let sim = start().await;
    play_settled(&sim, "vm-healthy", SPEED).await;
    let (code, json, stderr) =
        run_binary(&kubeconfig(&sim, dir.path()), &["--fail-on", "error"]).await;
    assert_eq!(code, 0, "{stderr}\n{json:#}");
    let restores = json["restores"].as_array().expect("restores");
    assert!(
        restores
            .iter()
            .any(|r| r["name"] == "restore-test" && r["phase"] == "Succeeded"),
        "{json:#}"
    );
    assert!(
        codes(&json).iter().any(|c| c == "reclaim-leak-risk"),
        "{json:#}"
    );
    sim.shutdown().await;
}
