//! Events about a restore stay bounded in the live store, however many are created: anyone who
//! may create Events in a namespace could take the dashboard and `serve` past their memory
//! limit (issue 18, point 9).

mod common;

use restorewatch::model::Kind;
use restorewatch::model::snapshot::{EVENT_BYTES_PER_OBJECT, EVENTS_PER_OBJECT};
use restorewatch::pipeline::live::start;
use restorewatch::sim::{Sim, SimConfig};
use serde_json::json;

fn event(i: usize, message: String) -> serde_json::Value {
    json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": format!("r1.{i:05}"), "namespace": "t",
                     "annotations": {"filler": "x".repeat(if i.is_multiple_of(2) { 32 << 10 } else { 0 })}},
        "involvedObject": {"kind": "RestoreJob", "namespace": "t", "name": "r1"},
        "reason": "Flood", "type": "Normal", "message": message,
        "lastTimestamp": format!("2026-11-20T10:{:02}:{:02}Z", i / 60, i % 60),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_about_a_restore_are_bounded_in_count_and_bytes() {
    let sim = Sim::start(SimConfig::default()).await.expect("emulator");
    let info = Kind::RestoreJob.info();
    for obj in [
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "t"}}),
        json!({"apiVersion": info.api_version(), "kind": info.api_kind,
               "metadata": {"name": "r1", "namespace": "t"},
               "spec": {"backupRef": {"name": "b1"}}}),
    ] {
        sim.store().put(obj).expect("put");
    }
    let source = start(sim.client().expect("client"), common::live_options());
    let mut frames = source.frames.clone();
    common::wait_frame(
        &mut frames,
        30,
        "a first frame",
        |_| true,
        |_| String::new(),
    )
    .await;

    // 300 small Events, then 100 of 64 KiB: newer each.
    for i in 0..400 {
        let message = if i < 300 {
            format!("small {i}")
        } else {
            format!("{i:05} ").repeat(64 << 10 >> 3)
        };
        sim.store().put(event(i, message)).expect("event");
    }
    let f = common::wait_frame(
        &mut frames,
        60,
        "the newest Event",
        |f| f.snapshot.events.get("t", "r1.00399").is_some(),
        |f| format!("{:?} Events", f.map(|f| f.snapshot.events.len())),
    )
    .await;

    let about: Vec<_> = f.snapshot.events.iter().collect();
    assert!(
        about.len() <= EVENTS_PER_OBJECT,
        "{} Events kept about one restore, over {EVENTS_PER_OBJECT}",
        about.len()
    );
    let bytes: usize = about
        .iter()
        .map(|e| e.message.as_deref().map_or(0, str::len))
        .sum();
    assert!(
        bytes <= EVENT_BYTES_PER_OBJECT,
        "{bytes} bytes of messages kept about one restore"
    );
    assert!(
        f.snapshot.events.get("t", "r1.00000").is_none(),
        "the oldest went first"
    );
    let newest = f
        .snapshot
        .events
        .get("t", "r1.00399")
        .expect("the newest is kept");
    let m = newest.message.as_deref().unwrap_or_default();
    assert!(
        m.len() < 4200 && m.ends_with("… (cut at 4 KiB)"),
        "a 64 KiB message is cut and says so: {} bytes, ends {:?}",
        m.len(),
        m.get(m.len().saturating_sub(30)..)
    );
    assert!(
        newest.meta.annotations.is_empty(),
        "a watched Event's annotations are not kept"
    );
    let restore = f
        .report
        .restores
        .iter()
        .find(|r| r.id.to_string().contains("r1"))
        .expect("the restore is reported");
    assert!(restore.events.len() <= EVENTS_PER_OBJECT);
    assert!(
        restore.events.iter().all(|e| e.message.len() < 4200),
        "the report carries cut messages"
    );
}
