//! The benchmark harness end to end at a tiny size: the emulator and the measured pipeline start
//! as child processes, the first frame is drawn, writes reach the screen, and every figure is
//! reported. Timings are printed, never asserted (they depend on the machine).

use std::process::Command;

#[test]
fn bench_runs_end_to_end_at_a_tiny_size() {
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("bench.json");
    let table = dir.path().join("bench.md");
    let out = Command::new(env!("CARGO_BIN_EXE_restorewatch-bench"))
        .args([
            "--sizes",
            "200",
            "--idle-secs",
            "1",
            "--writes",
            "10",
            "--no-kubectl",
        ])
        .arg("--json")
        .arg(&json)
        .arg("--out")
        .arg(&table)
        .output()
        .expect("running restorewatch-bench");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bench failed: {stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(stdout.contains("| N | 200 |"), "{stdout}");
    assert!(stdout.contains("first complete report on screen"));
    assert_eq!(
        std::fs::read_to_string(&table).unwrap().trim(),
        stdout.trim()
    );

    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let r = &v[0];
    assert_eq!(r["objects"], 200);
    let rw = &r["restorewatch"];
    // The whole cluster but the events the field selector leaves on the server.
    assert!(rw["held_objects"].as_u64().unwrap() >= 190);
    assert!(rw["restores"].as_u64().unwrap() >= 2);
    // Every write reached a drawn frame (the timeout is 10 s per write, far above any delay).
    assert_eq!(rw["writes_seen"], 10);
    assert_eq!(rw["writes_lost"], 0);
    assert!(rw["peak_rss"].as_u64().unwrap() > 0);
    assert!(rw["first_report_s"].as_f64().unwrap() > 0.0);
    // No relist after the initial sync: counted by the emulator, not claimed by the client.
    assert_eq!(rw["lists_after_sync"], 0);
    assert!(r["kubectl"].is_null());
    // `serve` measured on the same cluster: it reported, answered a scrape with the findings'
    // families, and its memory was read.
    let serve = &r["serve"];
    assert!(serve["first_report_s"].as_f64().unwrap() > 0.0, "{serve}");
    assert!(serve["peak_rss"].as_u64().unwrap() > 0);
    assert!(serve["scrape_bytes"].as_u64().unwrap() > 100, "{serve}");
    assert!(stdout.contains("serve: idle CPU"), "{stdout}");
}
