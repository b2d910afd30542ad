//! Remedies fit the state: a finding never offers an action that the action itself would
//! refuse in that state. For every fixture of `tests/fixtures` and every built-in scenario's end
//! state, each finding's offered action is planned exactly as the dashboard's `a` key plans it
//! (`ui::offer::for_finding`, then `ui::offer::plan_choice` against the same snapshot) and must
//! not be refused. A reclaim-orig that only waits for the operator's policy choice is offered,
//! not refused (the dialog asks for the policy).

use jiff::Timestamp;
use restorewatch::analysis::{Report, Settings, analyze};
use restorewatch::args::ClusterArgs;
use restorewatch::cli::check::load_snapshot;
use restorewatch::cluster::{Snapshot, list_once};
use restorewatch::sim::{Scenario, Sim, SimConfig};
use restorewatch::ui::dialog::Planned;
use restorewatch::ui::offer::{for_finding, plan_choice};
use std::path::Path;
use std::time::Duration;

/// Every finding with an action, and what planning it said, when it did not fit.
fn unfit_offers(label: &str, snap: &Snapshot, report: &Report) -> Vec<String> {
    let mut bad = Vec::new();
    for f in report.findings.iter().filter(|f| f.action.is_some()) {
        let what = format!("{label}: {} offers {:?}", f.code, f.action);
        match for_finding(f) {
            Err(e) => bad.push(format!("{what} on no object it can act on: {e}")),
            Ok(choice) => {
                if let Planned::Refused(r) = plan_choice(snap, report, &choice) {
                    bad.push(format!(
                        "{what} on {}, which refuses: {} (remedy: {})",
                        choice.target, r.reason, f.remedy
                    ));
                }
            }
        }
    }
    bad
}

#[derive(serde::Deserialize)]
struct Expectations {
    case: Vec<Case>,
}

#[derive(serde::Deserialize)]
struct Case {
    file: String,
    now: String,
}

#[test]
fn every_fixture_offers_only_actions_that_would_run() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let text = std::fs::read_to_string(dir.join("expectations.toml")).expect("expectations");
    let exp: Expectations = toml::from_str(&text).expect("expectations parse");
    let mut bad = Vec::new();
    let mut offered = 0;
    for case in &exp.case {
        let (snap, _) = load_snapshot(&[dir.join(&case.file)]).expect("fixture loads");
        let now: Timestamp = case.now.parse().expect("now");
        let report = analyze(&snap, &Settings::default(), now);
        offered += report
            .findings
            .iter()
            .filter(|f| f.action.is_some())
            .count();
        bad.extend(unfit_offers(&case.file, &snap, &report));
    }
    // The fixtures do offer repairs (otherwise this test would pass on nothing).
    assert!(
        offered >= 20,
        "only {offered} offered actions over the fixtures"
    );
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}

/// Scenarios play this many times faster than written.
const SPEED: f64 = 1000.0;
const WAIT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scenario_end_state_offers_only_actions_that_would_run() {
    let mut bad = Vec::new();
    let mut offered = 0;
    for scenario in Scenario::builtin().expect("built-in scenarios parse") {
        let sim = Sim::start(SimConfig {
            finalizer_delay: Duration::from_millis(1),
            ..SimConfig::default()
        })
        .await
        .expect("emulator starts");
        let run = sim.play(scenario.clone(), SPEED);
        tokio::time::timeout(WAIT, run.settled())
            .await
            .unwrap_or_else(|_| panic!("{} did not settle within {WAIT:?}", scenario.name));
        // Let the simulated controller manager drop the finalizers it is due to drop.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let dir = tempfile::tempdir().expect("tempdir");
        let kc = dir.path().join("kubeconfig");
        sim.write_kubeconfig(&kc, None).expect("kubeconfig");
        let snap = list_once::snapshot(&ClusterArgs {
            kubeconfig: Some(kc),
            ..ClusterArgs::default()
        })
        .await
        .expect("one LIST of every kind");
        let report = analyze(&snap, &Settings::default(), Timestamp::now());
        offered += report
            .findings
            .iter()
            .filter(|f| f.action.is_some())
            .count();
        bad.extend(unfit_offers(&scenario.name, &snap, &report));
        run.abort();
        sim.shutdown().await;
    }
    assert!(
        offered >= 5,
        "only {offered} offered actions over the scenarios"
    );
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}
