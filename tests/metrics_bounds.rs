//! What a scrape of `restorewatch serve` costs on a cluster of 1,000 restores in flight (the
//! bench generator's default shape at 100,000 objects): the series count and the body size stay
//! within the bounds the README documents, and every family of the restore lifecycle is there.
//! The exposition is computed from the real analysis of the generated objects, as `/metrics`
//! computes it from the live frame; the time it takes is printed, not asserted.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use jiff::Timestamp;
use restorewatch::analysis::{Settings, analyze};
use restorewatch::bench::r#gen as generator;
use restorewatch::cluster::{KindHealth, Snapshot, SyncState};
use restorewatch::model::{KINDS, parse_object};
use restorewatch::pipeline::frame::Frame;
use restorewatch::serve::metrics::{Cost, Exposition, encode_with};

/// The README's bounds (section "Monitoring", "Cardinality"): series per restore (info, up to
/// 9 steps, duration, 2 transfer, Velero phase, last success of its application), per finding
/// (the finding and its info), per watched resource (up and age), per namespace with `-orig`
/// PVCs (count and bytes, reclaimable or not), and the fixed ones (build, ready, 2 process).
const PER_RESTORE: usize = 15;
const PER_FINDING: usize = 2;
const PER_RESOURCE: usize = 2;
const PER_ORIG_NAMESPACE: usize = 4;
const FIXED: usize = 4;
/// The longest series line: labels are cut at 300 characters, and only `_info` series carry
/// text; everything else is names of objects (at most 253 characters each).
const MAX_LINE: usize = 2_000;
/// The documented mean, which is what decides a scrape's size.
const MEAN_LINE: usize = 250;

#[test]
fn a_thousand_restores_stay_within_the_documented_series_and_size_bounds() {
    let now = Timestamp::now();
    let world = generator::generate(100_000, now);
    let objects: Vec<_> = world
        .objects
        .into_iter()
        .filter_map(|v| parse_object(v).ok())
        .collect();
    let mut snapshot = Snapshot::from_objects(objects);
    for k in KINDS.iter() {
        snapshot.health.insert(
            k.kind,
            KindHealth {
                state: SyncState::Synced,
                last_event: Some(now),
            },
        );
    }
    let report = analyze(&snapshot, &Settings::default(), now);
    assert_eq!(report.restores.len(), 1000, "the generated cluster");
    let frame = Frame {
        seq: 1,
        snapshot: Arc::new(snapshot),
        report: Arc::new(report),
        analyzed_at: now,
    };
    let ex = Exposition {
        docs_base: "https://restorewatch.example/docs/findings.md",
        restores_per_namespace: restorewatch::serve::metrics::DEFAULT_RESTORES_PER_NAMESPACE,
    };
    let started = Instant::now();
    let text = encode_with(Some(&frame), now, &ex, Cost::default());
    let took = started.elapsed();

    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    let mut by_family: BTreeMap<&str, usize> = BTreeMap::new();
    for l in &lines {
        let name = l.split(['{', ' ']).next().unwrap_or("");
        *by_family.entry(name).or_default() += 1;
    }
    let orig_namespaces = frame
        .report
        .orig_pvcs
        .iter()
        .map(|o| o.namespace.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let bound = PER_RESTORE * frame.report.restores.len()
        + PER_FINDING * frame.report.findings.len()
        + PER_RESOURCE * KINDS.len()
        + PER_ORIG_NAMESPACE * orig_namespaces
        + FIXED;
    println!(
        "1,000 restores: {} series (bound {bound}), {} bytes ({:.0} B/series), encoded in {took:?} \
         (debug build); by family: {by_family:#?}",
        lines.len(),
        text.len(),
        text.len() as f64 / lines.len() as f64
    );
    assert!(lines.len() <= bound, "{} series > {bound}", lines.len());
    assert!(text.len() <= MEAN_LINE * bound, "{} bytes", text.len());
    let longest = lines.iter().map(|l| l.len()).max().unwrap_or(0);
    assert!(longest <= MAX_LINE, "a {longest}-byte series");

    // Every family, as a plain scrape gets it, passes Prometheus's own linter (a gauge named
    // `_total`, a counter's HELP under the wrong name: issue 27, point 11).
    let lint = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map(|mut c| {
            use std::io::Write;
            let plain = restorewatch::serve::metrics::text_format::from_openmetrics(&text);
            c.stdin
                .take()
                .expect("stdin")
                .write_all(plain.as_bytes())
                .expect("written");
            c.wait_with_output().expect("promtool ends")
        })
        .expect("promtool is required (Debian: prometheus; .ci/deps installs it)");
    assert!(
        lint.status.success(),
        "promtool: {}{}",
        String::from_utf8_lossy(&lint.stdout),
        String::from_utf8_lossy(&lint.stderr)
    );

    // The lifecycle families are there for every restore that has them.
    let running = frame.report.restores.iter().filter(|r| !r.terminal).count();
    assert_eq!(
        by_family.get("restorewatch_restore_duration_seconds"),
        Some(&running),
        "one duration per started restore"
    );
    for family in [
        "restorewatch_datadownload_bytes_done",
        "restorewatch_datadownload_bytes_expected",
        "restorewatch_velero_restore_phase",
    ] {
        assert!(
            by_family.get(family).is_some_and(|n| *n > 0 && *n <= 1000),
            "{family}: {by_family:?}"
        );
    }
}
