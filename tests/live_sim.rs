//! The live path the dashboard runs on: kube-runtime watchers over the real kube client against
//! the emulator, through the store task, into analysed frames.

mod common;

use restorewatch::analysis::{Settings, StepId, StepState};
use restorewatch::cluster::SyncState;
use restorewatch::model::Kind;
use restorewatch::pipeline::live::{LiveOptions, start};
use restorewatch::pipeline::{Frame, FrameRx};
use restorewatch::sim::{Scenario, Sim, SimConfig};
use std::sync::Arc;

/// Waits for a frame that satisfies `want`, up to `secs`; fails with what was seen last.
async fn wait_for(
    frames: &mut FrameRx,
    secs: u64,
    what: &str,
    want: impl Fn(&Frame) -> bool,
) -> Arc<Frame> {
    common::wait_frame(frames, secs, what, want, |last| {
        let phases = last.map(|f| {
            f.report
                .restores
                .iter()
                .map(|r| (r.id.to_string(), r.phase.clone()))
                .collect::<Vec<_>>()
        });
        let health = last.map(|f| {
            f.snapshot
                .health
                .iter()
                .filter(|(_, h)| h.state != SyncState::Synced)
                .map(|(k, h)| (*k, h.state.clone()))
                .collect::<Vec<_>>()
        });
        format!("last frame: {phases:?}; health: {health:?}")
    })
    .await
}

fn opts(settings: Settings) -> LiveOptions {
    LiveOptions {
        namespace: None,
        context: "test".into(),
        cluster: "sim".into(),
        settings,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_frames_follow_a_restore_through_every_step() {
    let sim = Sim::start(SimConfig::default()).await.expect("emulator");
    let run = sim.play(Scenario::load("vm-healthy").expect("built-in"), 20.0);
    let source = start(sim.client().expect("client"), opts(Settings::default()));
    let mut frames = source.frames.clone();

    // The first frame comes only once every kind has listed: never an empty table by accident.
    let first = wait_for(&mut frames, 20, "a first frame", |_| true).await;
    assert!(
        first
            .snapshot
            .health
            .values()
            .all(|h| !matches!(h.state, SyncState::Syncing))
    );

    let step_state = |f: &Frame, id: StepId| {
        f.report
            .restores
            .iter()
            .find(|r| r.id.name == "restore-test")
            .and_then(|r| r.steps.iter().find(|s| s.id == id).map(|s| s.state))
    };
    // Mid-way: a download in progress, with bytes.
    let with_bytes = |f: &Frame| {
        f.report
            .restores
            .iter()
            .find(|r| r.id.name == "restore-test")
            .is_some_and(|r| {
                r.steps.iter().any(|s| {
                    s.id == StepId::DataDownload
                        && s.state == StepState::Active
                        && s.progress.is_some_and(|p| p.total > 0 && p.done < p.total)
                })
            })
    };
    let mid = wait_for(
        &mut frames,
        60,
        "a download in progress with bytes",
        with_bytes,
    )
    .await;
    let restore = mid
        .report
        .restores
        .iter()
        .find(|r| r.id.name == "restore-test")
        .unwrap();
    assert_eq!(restore.phase, "Running");
    let dl = restore
        .steps
        .iter()
        .find(|s| s.id == StepId::DataDownload)
        .unwrap();
    assert!(
        dl.progress.is_some_and(|p| p.total > 0),
        "the download shows bytes: {dl:?}"
    );

    // The end: every step done, nothing to warn about.
    let end = wait_for(&mut frames, 60, "the restore verified", |f| {
        step_state(f, StepId::Verify) == Some(StepState::Done)
    })
    .await;
    assert!(end.seq > mid.seq);
    let restore = end
        .report
        .restores
        .iter()
        .find(|r| r.id.name == "restore-test")
        .unwrap();
    assert_eq!(restore.phase, "Succeeded");
    assert!(
        restore.steps.iter().all(|s| s.state == StepState::Done),
        "{:?}",
        restore.steps
    );
    assert!(
        end.report
            .findings
            .iter()
            .all(|f| f.severity < restorewatch::analysis::Severity::Warning),
        "{:?}",
        end.report.findings
    );
    assert!(run.finished().await.errors.is_empty());
    drop(source);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_watch_shows_stale_data_with_its_age_then_recovers() {
    let sim = Sim::start(SimConfig::default()).await.expect("emulator");
    let scenario = Scenario::load("vm-healthy").expect("built-in");
    sim.play(scenario, 1000.0).finished().await;
    let settings = Settings {
        // Raise watch-stale at once: the test must not wait 30 s.
        watch_stale_after: jiff::SignedDuration::ZERO,
        ..Settings::default()
    };
    let source = start(sim.client().expect("client"), opts(settings));
    let mut frames = source.frames.clone();
    let synced = wait_for(&mut frames, 20, "all kinds synced", |f| {
        f.snapshot
            .health
            .values()
            .all(|h| h.state == SyncState::Synced)
    })
    .await;
    let restores_before = synced.report.restores.len();
    assert!(restores_before > 0);

    // The API starts failing and every watch stream is cut.
    sim.faults().set_error_rate(1.0);
    sim.faults().drop_watches();
    // Every watch is cut at once, but each kind notices on its own: wait for the ones the
    // restores are built on.
    let stale = wait_for(
        &mut frames,
        30,
        "the RestoreJob and PVC watches marked down",
        |f| {
            f.snapshot.is_stale(Kind::RestoreJob)
                && f.snapshot.is_stale(Kind::PersistentVolumeClaim)
                && f.report
                    .findings
                    .iter()
                    .any(|x| x.code.as_str() == "watch-stale")
        },
    )
    .await;
    // The data is still there, marked stale, not wiped: "0 objects" and "API down" differ.
    assert_eq!(
        stale.report.restores.len(),
        restores_before,
        "the last known restores stay on screen"
    );
    assert!(
        stale.report.restores.iter().all(|r| r.stale),
        "restores built on a broken watch are stale"
    );

    sim.faults().clear();
    let recovered = wait_for(&mut frames, 60, "every watch healthy again", |f| {
        f.snapshot
            .health
            .values()
            .all(|h| h.state == SyncState::Synced)
            && f.report
                .findings
                .iter()
                .all(|x| x.code.as_str() != "watch-stale")
    })
    .await;
    assert_eq!(recovered.report.restores.len(), restores_before);
    assert!(recovered.report.restores.iter().all(|r| !r.stale));
    drop(source);
    sim.shutdown().await;
}

/// The ObjectStore the garbage collector takes (report 003): the live watch keeps a tombstone
/// of its deletion, and `objectstore-missing` says when it went and which owner UID it had.
/// The scenario deletes it as the garbage collector does (an emulator with its own garbage
/// collector takes it first; either way the watch sees it go).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_objectstore_is_reported_missing_with_when_and_its_owner() {
    let sim = Sim::start(SimConfig::default()).await.expect("emulator");
    let source = start(sim.client().expect("client"), opts(Settings::default()));
    let mut frames = source.frames.clone();
    wait_for(&mut frames, 20, "a first frame", |_| true).await;
    let run = sim.play(
        Scenario::load("pg-objectstore-missing").expect("built-in"),
        100.0,
    );
    let missing_of = |f: &Frame| {
        f.report
            .findings
            .iter()
            .find(|x| x.code.as_str() == "objectstore-missing")
            .cloned()
    };
    let f = wait_for(
        &mut frames,
        30,
        "objectstore-missing with its deletion",
        |f| missing_of(f).is_some_and(|m| m.message.contains("The watch saw it deleted at")),
    )
    .await;
    let missing = missing_of(&f).unwrap();
    assert!(
        missing
            .message
            .contains("Cluster postgres-pg1 UID c0de0000-0000-4000-8000-000000000101")
            && missing.message.contains("the garbage collector took it"),
        "{}",
        missing.message
    );
    assert_eq!(
        missing.restore.as_ref().map(|r| r.to_string()).as_deref(),
        Some("tenant-b/restore-pg1")
    );
    let t = f
        .snapshot
        .tombstones
        .last(Kind::ObjectStore, "tenant-b", "postgres-pg1")
        .expect("the deletion is remembered");
    assert_eq!(t.uid, "c0de0000-0000-4000-8000-000000000304");
    assert!(run.finished().await.errors.is_empty());
    drop(source);
    sim.shutdown().await;
}
