//! The demo plays several scenarios in one simulated cluster: each must stay in its own
//! namespace and show exactly its own findings, as if it were alone.

use restorewatch::analysis::{Settings, Severity, analyze};
use restorewatch::args::ClusterArgs;
use restorewatch::cli::demo::{DEFAULT_SCENARIOS, isolated};
use restorewatch::cluster::list_once;
use restorewatch::sim::{Sim, SimConfig};
use std::collections::BTreeSet;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_mix_plays_side_by_side_without_cross_talk() {
    let sim = Sim::start(SimConfig::default()).await.expect("emulator");
    let scenarios: Vec<_> = DEFAULT_SCENARIOS
        .iter()
        .enumerate()
        .map(|(i, n)| isolated(n, i + 1).expect("built-in"))
        .collect();
    let runs: Vec<_> = scenarios
        .iter()
        .cloned()
        .map(|s| sim.play(s, 1000.0))
        .collect();
    for r in &runs {
        let st = tokio::time::timeout(Duration::from_secs(30), r.settled())
            .await
            .expect("every scenario settles");
        assert!(st.errors.is_empty(), "{}: {:?}", st.name, st.errors);
    }
    // Let the emulated controller manager drop the finalizers of deleted PVCs.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc, None).unwrap();
    let snap = list_once::snapshot(&ClusterArgs {
        kubeconfig: Some(kc),
        ..ClusterArgs::default()
    })
    .await
    .expect("list");
    let report = analyze(&snap, &Settings::default(), jiff::Timestamp::now());
    for (s, run) in scenarios.iter().zip(&runs) {
        let ns = s.name.as_str();
        let waiting = run.status().waiting.is_some();
        let expected: BTreeSet<&str> = if waiting {
            &s.expect_at_wait
        } else {
            &s.expect
        }
        .iter()
        .map(String::as_str)
        .collect();
        let in_ns = |f: &&std::sync::Arc<restorewatch::analysis::Finding>| {
            f.restore.as_ref().is_some_and(|r| r.namespace == ns)
                || f.objects.iter().any(|o| o.namespace == ns)
        };
        let got: BTreeSet<&str> = report
            .findings
            .iter()
            .filter(in_ns)
            .map(|f| f.code.as_str())
            .collect();
        for code in &expected {
            assert!(got.contains(code), "{ns}: expected {code}, got {got:?}");
        }
        for f in report
            .findings
            .iter()
            .filter(in_ns)
            .filter(|f| f.severity >= Severity::Warning)
        {
            assert!(
                expected.contains(f.code.as_str()),
                "{ns}: unexpected {} {}: {}",
                f.severity.as_str(),
                f.code,
                f.message
            );
        }
        assert!(
            report.restores.iter().any(|r| r.id.namespace == ns),
            "{ns} shows its restore"
        );
    }
    sim.shutdown().await;
}
