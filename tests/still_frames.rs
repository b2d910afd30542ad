//! The dashboard over a dump file: nothing in the picture changes but the clock, so frames come
//! only when the analysis's next deadline passes. A restore in the dump stalls on screen when
//! its stall time comes, without a re-analysis every second in between.

use restorewatch::analysis::{Report, Settings};
use restorewatch::cluster::files::load_bytes;
use restorewatch::cluster::{Snapshot, SyncState};
use restorewatch::pipeline::{Analyzer, still};
use std::time::Duration;

const FIXTURE: &str = "tests/fixtures/restore-stalled/near-miss-recent.yaml";

fn snapshot() -> Snapshot {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    let text = std::fs::read_to_string(path).expect("fixture");
    let mut snap = Snapshot::default();
    snap.mark_every_kind(SyncState::Synced, None);
    for o in load_bytes(text.as_bytes(), FIXTURE).objects {
        snap.objects.insert(o);
    }
    snap
}

fn stalled(r: &Report) -> bool {
    r.findings
        .iter()
        .any(|f| f.code.as_str() == "restore-stalled")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dump_shows_the_stall_when_its_time_comes() {
    let settings = Settings::default();
    // When does the restore of the dump stall? Follow the analysis's own deadlines.
    let start: jiff::Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    let mut a = Analyzer::new(std::sync::Arc::new(snapshot()), settings.clone(), start);
    assert!(!stalled(a.report()), "not stalled in the far past");
    let mut stall_at = None;
    for _ in 0..10_000 {
        let Some(d) = a.next_deadline() else { break };
        a.tick(d);
        if stalled(a.report()) {
            stall_at = Some(d);
            break;
        }
    }
    let stall_at = stall_at.expect("the running restore stalls at some deadline");

    // Judge the dump as of 1.5 s before that instant.
    let now = jiff::Timestamp::now();
    let offset = stall_at.duration_since(now) - jiff::SignedDuration::from_millis(1500);
    let mut rx = still::spawn_at(snapshot(), settings, Duration::from_millis(100), offset);
    let first = rx
        .borrow_and_update()
        .clone()
        .expect("a first frame at once");
    assert!(!stalled(&first.report), "not yet stalled");
    let seen = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            rx.changed().await.expect("the still source runs");
            let f = rx.borrow_and_update().clone().expect("a frame");
            if stalled(&f.report) {
                return f;
            }
        }
    })
    .await
    .expect("restore-stalled appears once its time has come");
    assert!(seen.seq > first.seq);
    assert!(
        seen.analyzed_at >= stall_at,
        "drawn at or after the stall time"
    );
}
