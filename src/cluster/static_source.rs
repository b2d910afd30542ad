//! A source made of snapshot files (`kubectl get -o yaml|json` dumps): the objects never
//! change, but the analysis is re-run every second so that time-based findings (stalls,
//! deadlines) move on; a new frame is sent only when the report actually changed.

use crate::analysis::{self, Report, Settings};
use crate::cluster::files::{LoadProblem, load_bytes};
use crate::cluster::{Frame, FrameRx, Snapshot, SourceInfo};
use jiff::Timestamp;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Reads every file (`-` is stdin) into one snapshot. Unreadable documents are returned as
/// problems; an unreadable file is an error.
pub fn load_files(paths: &[PathBuf]) -> anyhow::Result<(Snapshot, Vec<LoadProblem>)> {
    load_files_limited(paths, crate::cluster::input::DEFAULT_MAX_INPUT)
}

/// `load_files`, refusing any file past `max_input` bytes.
pub fn load_files_limited(
    paths: &[PathBuf],
    max_input: u64,
) -> anyhow::Result<(Snapshot, Vec<LoadProblem>)> {
    let mut objects = Vec::new();
    let mut problems = Vec::new();
    let mut names = Vec::new();
    for p in paths {
        let (bytes, origin) = crate::cluster::input::read_input(p, max_input)?;
        let origin = if p.as_os_str() == "-" {
            "-".to_string()
        } else {
            origin
        };
        let loaded = load_bytes(&bytes, &origin);
        drop(bytes);
        objects.extend(loaded.objects);
        problems.extend(loaded.problems);
        names.push(origin);
    }
    // The newest time any object shows is the best guess of when the dump was taken.
    let newest_object = objects
        .iter()
        .filter_map(|o| {
            let m = o.meta();
            m.last_change.or(m.created)
        })
        .max();
    let mut snap = Snapshot::from_objects(objects);
    snap.source = SourceInfo::Files {
        files: names,
        newest_object,
    };
    Ok((snap, problems))
}

fn without_now(r: &Report) -> Report {
    Report {
        now: None,
        ..r.clone()
    }
}

fn frame(seq: u64, snapshot: &Arc<Snapshot>, report: Report, now: Timestamp) -> Arc<Frame> {
    Arc::new(Frame {
        seq,
        snapshot: snapshot.clone(),
        report: Arc::new(report),
        analyzed_at: now,
    })
}

/// Analyses now, sends the first frame at once, then re-analyses every `every` until the
/// receiver is dropped. Needs a tokio runtime.
pub fn spawn(snapshot: Snapshot, settings: Settings, every: Duration) -> FrameRx {
    spawn_at(snapshot, settings, every, jiff::SignedDuration::ZERO)
}

/// Like `spawn`, with the analysis clock shifted by `offset` (a dump judged as of its time).
pub fn spawn_at(
    snapshot: Snapshot,
    settings: Settings,
    every: Duration,
    offset: jiff::SignedDuration,
) -> FrameRx {
    let clock = move || {
        Timestamp::now()
            .checked_add(offset)
            .unwrap_or_else(|_| Timestamp::now())
    };
    let snapshot = Arc::new(snapshot);
    let now = clock();
    let report = analysis::analyze(&snapshot, &settings, now);
    let mut last = without_now(&report);
    let (tx, rx) = tokio::sync::watch::channel(Some(frame(1, &snapshot, report, now)));
    tokio::spawn(async move {
        let mut seq = 1;
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = tx.closed() => break,
            }
            let now = clock();
            let report = analysis::analyze(&snapshot, &settings, now);
            let cmp = without_now(&report);
            if cmp != last {
                last = cmp;
                seq += 1;
                if tx.send(Some(frame(seq, &snapshot, report, now))).is_err() {
                    break;
                }
            }
        }
    });
    rx
}
