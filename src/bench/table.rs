//! The bench's report: one Markdown column per run (shape x size, or the existing cluster),
//! the figures, then each of issue 12's targets with whether the run meets it.

use super::core_wait::Held;
use super::retake::Retakes;
use super::writes::Interval;
use super::{RunResult, serve_cost, sys};

fn ratio(ours: f64, theirs: f64) -> String {
    if theirs > 0.0 && ours > 0.0 {
        if ours <= theirs {
            format!("{:.1}x less", theirs / ours)
        } else {
            format!("{:.2}x more", ours / theirs)
        }
    } else {
        "-".into()
    }
}

/// The lowest and highest of `v`, and how many: "-" when empty.
fn spread(v: &[f64]) -> String {
    if v.is_empty() {
        return "-".into();
    }
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{lo:.2}-{hi:.2} ms ({})", v.len())
}

/// (steady - start) / held, in bytes.
fn per_object(steady: u64, start: u64, held: usize) -> f64 {
    steady.saturating_sub(start) as f64 / held.max(1) as f64
}

/// What the clock alone redid during idle: "none", "2 wakes, 87 namespaces", or "-" from a
/// run that did not count it.
fn clock_work(w: Option<crate::pipeline::clock_work::ClockWork>) -> String {
    match w {
        None => "-".into(),
        Some(w) if w.wakes == 0 => "none".into(),
        Some(w) => format!(
            "{} {}, {} {}",
            w.wakes,
            if w.wakes == 1 { "wake" } else { "wakes" },
            w.namespaces,
            if w.namespaces == 1 {
                "namespace"
            } else {
                "namespaces"
            }
        ),
    }
}

fn m(b: u64) -> String {
    format!("{:.1} MiB", sys::mib(b))
}

const NOT_MEASURABLE: &str = "not measurable";

type Row = (String, Vec<String>);

fn figures(results: &[RunResult]) -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::new();
    let mut row = |name: &str, f: &dyn Fn(&RunResult) -> String| {
        rows.push((name.to_string(), results.iter().map(f).collect()));
    };
    row("objects in the cluster (PVCs / RestoreJobs)", &|r| {
        if r.generated {
            format!("{} ({} / {})", r.objects, r.pvcs, r.restores)
        } else {
            "(existing cluster)".into()
        }
    });
    row("objects restorewatch holds / restores / findings", &|r| {
        let w = &r.restorewatch;
        format!("{} / {} / {}", w.held_objects, w.restores, w.findings)
    });
    row("first complete report on screen", &|r| {
        format!("{:.2} s", r.restorewatch.first_report_s)
    });
    row("  of which until the pipeline published it", &|r| {
        format!("{:.2} s", r.restorewatch.first_published_s)
    });
    row("kubectl get pvc,pv -A -o json (wall, median of 3)", &|r| {
        r.kubectl
            .as_ref()
            .map_or("-".into(), |k| format!("{:.2} s", k.list_s))
    });
    row("first report / kubectl list", &|r| {
        r.kubectl.as_ref().map_or("-".into(), |k| {
            format!("{:.2}x", r.restorewatch.first_report_s / k.list_s)
        })
    });
    row(
        "kubectl get of the same objects (every kind restorewatch reads that the cluster has)",
        &|r| {
            r.kubectl
                .as_ref()
                .and_then(|k| k.list_same_s)
                .map_or("-".into(), |s| format!("{s:.2} s"))
        },
    );
    row("first report / kubectl list of the same objects", &|r| {
        r.kubectl
            .as_ref()
            .and_then(|k| k.list_same_s)
            .map_or("-".into(), |s| {
                format!("{:.2}x", r.restorewatch.first_report_s / s)
            })
    });
    row("peak RSS (VmHWM)", &|r| m(r.restorewatch.peak_rss));
    row("kubectl list max RSS", &|r| {
        r.kubectl
            .as_ref()
            .and_then(|k| k.list_rss)
            .map_or("-".into(), m)
    });
    row("steady RSS (after idle)", &|r| m(r.restorewatch.steady_rss));
    row("RSS at start (before watching)", &|r| {
        m(r.restorewatch.baseline_rss)
    });
    row("bytes kept per object ((steady - start) / held)", &|r| {
        format!(
            "{:.0} B",
            per_object(
                r.restorewatch.steady_rss,
                r.restorewatch.baseline_rss,
                r.restorewatch.held_objects
            )
        )
    });
    row("idle CPU (% of one core)", &|r| {
        format!(
            "{:.2}% over {:.0} s",
            r.restorewatch.idle_cpu_pct, r.restorewatch.idle_secs
        )
    });
    row("  of which redone by the clock alone", &|r| {
        clock_work(r.restorewatch.idle_clock)
    });
    row("write -> redrawn frame p50 / p99", &|r| {
        let w = &r.restorewatch;
        if w.writes_seen + w.writes_lost == 0 {
            return "no writes".into();
        }
        format!(
            "{:.1} / {:.1} ms ({} of {})",
            w.write_p50_ms,
            w.write_p99_ms,
            w.writes_seen,
            w.writes_seen + w.writes_lost
        )
    });
    row("  of which the PATCH round trip p50 / p99", &|r| {
        let w = &r.restorewatch;
        if w.writes_seen == 0 {
            return "-".into();
        }
        format!("{:.1} / {:.1} ms", w.patch_p50_ms, w.patch_p99_ms)
    });
    row(
        "kubectl get pvc -A -w: write -> line p50 / p99",
        &|r| match r.kubectl.as_ref() {
            Some(k) => match (k.watch_p50_ms, k.watch_p99_ms) {
                (Some(p50), Some(p99)) => {
                    format!("{p50:.1} / {p99:.1} ms ({})", k.watch_seen)
                }
                _ => "no writes".into(),
            },
            None => "-".into(),
        },
    );
    row(
        "same writes with kubectl -w beside: kubectl / dashboard p50 / p99",
        &|r| match &r.restorewatch.paired {
            Some(p) if p.seen > 0 => format!(
                "{:.1} / {:.1} · {:.1} / {:.1} ms ({})",
                p.kubectl_p50_ms, p.kubectl_p99_ms, p.shown_p50_ms, p.shown_p99_ms, p.seen
            ),
            _ => "-".into(),
        },
    );
    row(
        "  the dashboard after kubectl's line, write by write, p50 / p99",
        &|r| match &r.restorewatch.paired {
            Some(p) if p.seen > 0 => {
                format!("{:+.2} / {:+.2} ms", p.later_p50_ms, p.later_p99_ms)
            }
            _ => "-".into(),
        },
    );
    row(
        "write p99 vs kubectl -w p99",
        &|r| match r.kubectl.as_ref().and_then(|k| k.watch_p99_ms) {
            Some(k) if r.restorewatch.writes_seen > 0 => {
                format!(
                    "{:.2}x ({})",
                    r.restorewatch.write_p99_ms / k,
                    ratio(r.restorewatch.write_p99_ms, k)
                )
            }
            _ => "-".into(),
        },
    );
    // Whether a p99 target's verdict is the readers' or their series' chance (`Interval`).
    let shown = |i: Option<Interval>| i.map_or("-".to_string(), |i| i.to_string());
    if results
        .iter()
        .any(|r| r.restorewatch.write_p99_interval.is_some())
    {
        row(
            "where each p99 lies, 95% sure from its own writes: dashboard · serve · kubectl -w",
            &|r| {
                format!(
                    "{} · {} · {}",
                    shown(r.restorewatch.write_p99_interval),
                    shown(r.serve.as_ref().and_then(|s| s.write_p99_interval)),
                    shown(r.kubectl.as_ref().and_then(|k| k.watch_p99_interval)),
                )
            },
        );
    }
    // What the slowest writes' time held: a tail made by waiting for a core, or by the
    // hypervisor, is the machine's, not the reader's code (`core_wait`).
    if results
        .iter()
        .any(|r| !r.restorewatch.write_held.slowest.is_empty())
    {
        let held = [
            "slowest writes, ms (the reader's threads: ran on a core, waited for one + the server's waits; stolen, in 10 ms steps): dashboard",
            "  serve",
            "  kubectl -w (the server's waits include the writer's)",
        ];
        per_reader(&mut row, held, &|r, reader| {
            reader_held(r, reader).map_or("-".into(), Held::describe)
        });
    }
    // With `--retake-stolen`: every series set aside, with its p99, and the waits for a quiet
    // machine, so that no retake goes unsaid.
    if results
        .iter()
        .any(|r| r.restorewatch.write_retakes.allowed > 0)
    {
        let retakes = [
            "series set aside for stolen time (--retake-stolen): dashboard",
            "  serve",
            "  kubectl -w",
        ];
        per_reader(&mut row, retakes, &|r, reader| {
            reader_retakes(r, reader).map_or("-".into(), Retakes::describe)
        });
    }
    // With 400 writes or more: how far the p99 of 200 writes (the targets' series) moves within
    // one run, for each reader.
    if results
        .iter()
        .any(|r| !r.restorewatch.write_p99_blocks_ms.is_empty())
    {
        row(
            "p99 of each 200 writes in turn, lowest-highest (blocks): dashboard · serve · kubectl -w",
            &|r| {
                format!(
                    "{} · {} · {}",
                    spread(&r.restorewatch.write_p99_blocks_ms),
                    r.serve
                        .as_ref()
                        .map_or("-".into(), |s| spread(&s.write_p99_blocks_ms)),
                    r.kubectl
                        .as_ref()
                        .map_or("-".into(), |k| spread(&k.watch_p99_blocks_ms))
                )
            },
        );
    }
    row("LIST / WATCH requests per minute after sync", &|r| {
        let w = &r.restorewatch;
        match (
            w.lists_per_min,
            w.watches_per_min,
            w.lists_after_sync,
            w.watches_after_sync,
        ) {
            (Some(lm), Some(wm), Some(l), Some(wa)) => {
                format!("{lm:.1} / {wm:.1} ({l} / {wa} in {:.0} s)", w.window_s)
            }
            _ => NOT_MEASURABLE.into(),
        }
    });
    row("one full analyze (median of 15)", &|r| {
        format!("{:.2} ms", r.restorewatch.analyze_ms)
    });
    row("pipeline work for one changed PVC p50 / p99", &|r| {
        let w = &r.restorewatch;
        format!(
            "{:.2} / {:.2} ms ({})",
            w.change_p50_ms, w.change_p99_ms, w.change_samples
        )
    });
    row(
        "each new frame during the writes: update + draw p50 / p99",
        &|r| {
            format!(
                "{:.2} / {:.2} ms",
                r.restorewatch.new_frame_p50_ms, r.restorewatch.new_frame_p99_ms
            )
        },
    );
    row("one frame (update + full redraw, 160x48)", &|r| {
        format!("{:.2} ms", r.restorewatch.frame_ms)
    });
    let serve = |r: &RunResult, f: &dyn Fn(&serve_cost::ServeResult) -> String| {
        r.serve.as_ref().map_or("-".into(), f)
    };
    row("serve: first report / peak RSS / steady RSS", &|r| {
        serve(r, &|s| {
            format!(
                "{:.2} s / {} / {}",
                s.first_report_s,
                m(s.peak_rss),
                m(s.steady_rss)
            )
        })
    });
    row("serve: RSS at start / bytes kept per object", &|r| {
        serve(r, &|s| {
            if s.held_objects == 0 {
                return "-".into();
            }
            format!(
                "{} / {:.0} B",
                m(s.baseline_rss),
                per_object(s.steady_rss, s.baseline_rss, s.held_objects)
            )
        })
    });
    row("serve: write -> published report p50 / p99", &|r| {
        serve(r, &|s| {
            if s.writes_seen + s.writes_lost == 0 {
                return "no writes".into();
            }
            format!(
                "{:.1} / {:.1} ms ({} of {}; PATCH {:.1} / {:.1} ms)",
                s.write_p50_ms,
                s.write_p99_ms,
                s.writes_seen,
                s.writes_seen + s.writes_lost,
                s.patch_p50_ms,
                s.patch_p99_ms
            )
        })
    });
    row("serve: LIST / WATCH requests after sync", &|r| {
        serve(r, &|s| match (s.lists_after_sync, s.watches_after_sync) {
            (Some(l), Some(w)) => format!("{l} / {w} in {:.0} s", s.window_s),
            _ if s.held_objects == 0 => "-".into(),
            _ => NOT_MEASURABLE.into(),
        })
    });
    row("serve: idle CPU (nobody scraping)", &|r| {
        serve(r, &|s| {
            format!("{:.2}% over {:.0} s", s.idle_cpu_pct, s.idle_secs)
        })
    });
    row("  of which redone by the clock alone", &|r| {
        serve(r, &|s| clock_work(s.idle_clock))
    });
    row("serve: one /metrics scrape (median of 5)", &|r| {
        serve(r, &|s| {
            format!(
                "{:.1} ms, {:.0} KiB",
                s.scrape_ms,
                s.scrape_bytes as f64 / 1024.0
            )
        })
    });
    row("load average before / after", &|r| {
        format!("{} / {}", r.load_before, r.load_after)
    });
    rows
}

/// One of the targets (issue 28's) for one run: the figure and whether it is met (`None`: the
/// figure could not be taken).
pub struct Verdict {
    pub target: &'static str,
    pub figure: String,
    pub met: Option<bool>,
}

/// The limits of one set of targets: issue 28's for 20k objects, and for 100k.
struct Limits {
    peak_mib: f64,
    per_object: Option<f64>,
    idle_pct: f64,
    /// Write-to-frame p99 at most this many times kubectl -w's.
    p99_of_kubectl: f64,
    /// Write-to-frame p50 at most kubectl -w's p50 plus this many ms.
    p50_over_kubectl_ms: Option<f64>,
    change_ms: Option<f64>,
    first_report: f64,
}

const AT_20K: Limits = Limits {
    peak_mib: 48.0,
    per_object: Some(1800.0),
    idle_pct: 0.20,
    p99_of_kubectl: 1.0,
    p50_over_kubectl_ms: Some(3.0),
    change_ms: Some(1.0),
    first_report: 0.2,
};

const AT_100K: Limits = Limits {
    peak_mib: 192.0,
    per_object: None,
    idle_pct: 0.25,
    p99_of_kubectl: 2.0,
    p50_over_kubectl_ms: None,
    change_ms: None,
    first_report: 0.3,
};

/// What one pipeline (the dashboard's or `serve`'s) showed, for judging either the same way.
struct Pipeline {
    peak_rss: u64,
    steady_rss: u64,
    baseline_rss: u64,
    held: usize,
    idle_pct: f64,
    writes_seen: usize,
    p50_ms: f64,
    p99_ms: f64,
    p99_interval: Option<Interval>,
    /// Of its slowest writes, how many met stolen time (`core_wait::Held`).
    stolen_in_slowest: Option<(usize, usize)>,
    /// Its series set aside for stolen time, when `--retake-stolen` was on (`retake`).
    retaken: Option<usize>,
}

/// The targets that apply at this run's size: the 100k set from 100,000 objects on, the 20k
/// set below (they are defined at 20k; smaller runs are judged by them for reference). The
/// dashboard and `serve` are held to the same memory, idle and write limits.
pub fn verdicts(r: &RunResult) -> Vec<Verdict> {
    let w = &r.restorewatch;
    let k = r.kubectl.as_ref();
    let big = r.generated && r.objects >= 100_000;
    let lim = if big { &AT_100K } else { &AT_20K };
    let (p99_t, p50_t, peak_t, per_t, idle_t, first_t) = if big {
        (
            "write-to-frame p99 within 2x kubectl -w's p99 (100k)",
            "",
            "peak RSS at most 192 MiB (100k)",
            "",
            "idle at most 0.25% of a core (100k)",
            "first report within 0.3x kubectl's list of the same objects (100k)",
        )
    } else {
        (
            "write-to-frame p99 within kubectl -w's p99",
            "write-to-frame p50 within kubectl -w's p50 + 3 ms",
            "peak RSS at most 48 MiB",
            "bytes kept per object at most 1,800",
            "idle at most 0.20% of a core",
            "first report within 0.2x kubectl's list of the same objects",
        )
    };
    // Against kubectl listing the same objects where known (generated clusters: Events and
    // custom resources too), else against its list of PVCs and PVs.
    let first = k.map(|k| w.first_report_s / k.list_same_s.unwrap_or(k.list_s));
    let mut out = Vec::new();
    let dashboard = Pipeline {
        peak_rss: w.peak_rss,
        steady_rss: w.steady_rss,
        baseline_rss: w.baseline_rss,
        held: w.held_objects,
        idle_pct: w.idle_cpu_pct,
        writes_seen: w.writes_seen,
        p50_ms: w.write_p50_ms,
        p99_ms: w.write_p99_ms,
        p99_interval: w.write_p99_interval,
        stolen_in_slowest: w.write_held.stolen_in_slowest(),
        retaken: retaken(&w.write_retakes),
    };
    let serve = r
        .serve
        .as_ref()
        .filter(|s| s.held_objects > 0)
        .map(|s| Pipeline {
            peak_rss: s.peak_rss,
            steady_rss: s.steady_rss,
            baseline_rss: s.baseline_rss,
            held: s.held_objects,
            idle_pct: s.idle_cpu_pct,
            writes_seen: s.writes_seen,
            p50_ms: s.write_p50_ms,
            p99_ms: s.write_p99_ms,
            p99_interval: s.write_p99_interval,
            stolen_in_slowest: s.write_held.stolen_in_slowest(),
            retaken: retaken(&s.write_retakes),
        });
    for (who, p) in [("", Some(&dashboard)), ("serve: ", serve.as_ref())] {
        let Some(p) = p else { continue };
        let named =
            |t: &'static str| -> &'static str { if who.is_empty() { t } else { serve_target(t) } };
        let wrote = p.writes_seen > 0;
        let p99_ratio = k
            .and_then(|k| k.watch_p99_ms)
            .filter(|_| wrote)
            .map(|kp| p.p99_ms / kp);
        let kubectl_interval = k.and_then(|k| k.watch_p99_interval);
        out.push(Verdict {
            target: named(p99_t),
            figure: p99_ratio.map_or(NOT_MEASURABLE.into(), |x| {
                format!(
                    "{x:.2}x{}{}{}",
                    p99_apart(p.p99_interval, kubectl_interval, lim.p99_of_kubectl),
                    stolen_in_tails(
                        p.stolen_in_slowest,
                        k.and_then(|k| k.watch_held.stolen_in_slowest())
                    ),
                    retaken_note(p.retaken, k.and_then(|k| retaken(&k.watch_retakes)))
                )
            }),
            met: p99_ratio.map(|x| x <= lim.p99_of_kubectl),
        });
        // Issue 21: measured from kubectl's own p50 (the server's share of a write, which no
        // client can beat); without kubectl, from zero.
        if let Some(extra) = lim.p50_over_kubectl_ms {
            let base = k.and_then(|k| k.watch_p50_ms).filter(|_| wrote);
            let limit = base.unwrap_or(0.0) + extra;
            out.push(Verdict {
                target: named(p50_t),
                figure: match (wrote, base) {
                    (false, _) => NOT_MEASURABLE.into(),
                    (true, Some(b)) => {
                        format!(
                            "{:.1} ms (limit {limit:.1} = {b:.1} + {extra:.0})",
                            p.p50_ms
                        )
                    }
                    (true, None) => format!("{:.1} ms (limit {extra:.1}: no kubectl)", p.p50_ms),
                },
                met: wrote.then_some(p.p50_ms <= limit),
            });
        }
        let peak = sys::mib(p.peak_rss);
        out.push(Verdict {
            target: named(peak_t),
            figure: format!("{peak:.1} MiB"),
            met: Some(peak <= lim.peak_mib),
        });
        if let Some(limit) = lim.per_object {
            let b = per_object(p.steady_rss, p.baseline_rss, p.held);
            out.push(Verdict {
                target: named(per_t),
                figure: format!("{b:.0} B"),
                met: Some(b <= limit),
            });
        }
        out.push(Verdict {
            target: named(idle_t),
            figure: format!("{:.2}%", p.idle_pct),
            met: Some(p.idle_pct <= lim.idle_pct),
        });
    }
    if let Some(limit) = lim.change_ms {
        out.push(Verdict {
            target: "analysis of one change under 1 ms (p50)",
            figure: format!("{:.2} ms", w.change_p50_ms),
            met: (w.change_samples > 0).then_some(w.change_p50_ms < limit),
        });
    }
    out.push(Verdict {
        target: first_t,
        figure: first.map_or(NOT_MEASURABLE.into(), |x| format!("{x:.2}x")),
        met: first.map(|x| x <= lim.first_report),
    });
    if !big {
        out.push(Verdict {
            target: "no LIST after sync",
            figure: w
                .lists_after_sync
                .map_or(NOT_MEASURABLE.into(), |l| format!("{l} LIST")),
            met: w.lists_after_sync.map(|l| l == 0),
        });
    }
    out
}

/// Whether the reader's p99 and the target's (`factor` times kubectl's) are told apart by
/// their series: the verdict is met or missed either way, and this says whether the writes
/// could have decided it. Empty when an interval is missing (a run written before them).
fn p99_apart(reader: Option<Interval>, kubectl: Option<Interval>, factor: f64) -> String {
    let (Some(r), Some(k)) = (reader, kubectl) else {
        return String::new();
    };
    let scaled = k.scaled(factor);
    let target = if factor == 1.0 {
        format!("kubectl's {k}")
    } else {
        format!("{factor}x kubectl's, {scaled}")
    };
    if r.overlaps(&scaled) {
        format!("; not told apart: 95% sure of {r}, against {target}")
    } else {
        format!("; told apart: 95% sure of {r}, against {target}")
    }
}

/// Whether the hypervisor took the machine's time during the slowest writes of the reader
/// and of kubectl: a tail the machine made, whichever reader it fell on. Empty where not read.
fn stolen_in_tails(reader: Option<(usize, usize)>, kubectl: Option<(usize, usize)>) -> String {
    match (reader, kubectl) {
        (Some((n, of)), Some((kn, kof))) => format!(
            "; time stolen from the machine in {n} of its {of} slowest writes, and in {kn} of kubectl's {kof}"
        ),
        (Some((n, of)), None) => {
            format!("; time stolen from the machine in {n} of its {of} slowest writes")
        }
        _ => String::new(),
    }
}

/// The three readers whose writes are timed, in the order of the table's rows.
#[derive(Clone, Copy)]
enum Reader {
    Dashboard,
    Serve,
    Kubectl,
}
const READERS: [Reader; 3] = [Reader::Dashboard, Reader::Serve, Reader::Kubectl];

/// A row per reader, titled `titles` in `READERS`' order, each cell `cell` of that reader.
fn per_reader(
    row: &mut impl FnMut(&str, &dyn Fn(&RunResult) -> String),
    titles: [&str; 3],
    cell: &dyn Fn(&RunResult, Reader) -> String,
) {
    for (title, reader) in titles.into_iter().zip(READERS) {
        row(title, &|r| cell(r, reader));
    }
}

/// What a reader's writes held (`core_wait`); `None` for a reader the run has not.
fn reader_held(r: &RunResult, reader: Reader) -> Option<&Held> {
    match reader {
        Reader::Dashboard => Some(&r.restorewatch.write_held),
        Reader::Serve => r.serve.as_ref().map(|s| &s.write_held),
        Reader::Kubectl => r.kubectl.as_ref().map(|k| &k.watch_held),
    }
}

/// What retaking did for a reader's series (`retake`); `None` for a reader the run has not.
fn reader_retakes(r: &RunResult, reader: Reader) -> Option<&Retakes> {
    match reader {
        Reader::Dashboard => Some(&r.restorewatch.write_retakes),
        Reader::Serve => r.serve.as_ref().map(|s| &s.write_retakes),
        Reader::Kubectl => r.kubectl.as_ref().map(|k| &k.watch_retakes),
    }
}

/// How many of a reader's series were set aside for stolen time; `None` when retaking was off.
fn retaken(r: &Retakes) -> Option<usize> {
    (r.allowed > 0).then_some(r.set_aside.len())
}

/// "; series retaken for stolen time: its 1, kubectl's 0", when `--retake-stolen` was on.
fn retaken_note(reader: Option<usize>, kubectl: Option<usize>) -> String {
    match (reader, kubectl) {
        (Some(n), Some(k)) => format!("; series retaken for stolen time: its {n}, kubectl's {k}"),
        (Some(n), None) => format!("; series retaken for stolen time: its {n}"),
        _ => String::new(),
    }
}

/// The row of a target as `serve` is held to it.
fn serve_target(t: &'static str) -> &'static str {
    match t {
        "write-to-frame p99 within kubectl -w's p99" => {
            "serve: write-to-report p99 within kubectl -w's p99"
        }
        "write-to-frame p50 within kubectl -w's p50 + 3 ms" => {
            "serve: write-to-report p50 within kubectl -w's p50 + 3 ms"
        }
        "write-to-frame p99 within 2x kubectl -w's p99 (100k)" => {
            "serve: write-to-report p99 within 2x kubectl -w's p99 (100k)"
        }
        "peak RSS at most 48 MiB" => "serve: peak RSS at most 48 MiB",
        "peak RSS at most 192 MiB (100k)" => "serve: peak RSS at most 192 MiB (100k)",
        "bytes kept per object at most 1,800" => "serve: bytes kept per object at most 1,800",
        "idle at most 0.20% of a core" => "serve: idle at most 0.20% of a core",
        "idle at most 0.25% of a core (100k)" => "serve: idle at most 0.25% of a core (100k)",
        other => other,
    }
}

fn markdown(header: &str, results: &[RunResult], rows: &[Row]) -> String {
    let mut s = format!("| {header} |");
    for r in results {
        s.push_str(&format!(" {} |", r.label()));
    }
    s.push_str("\n|---|");
    for _ in results {
        s.push_str("---|");
    }
    s.push('\n');
    for (name, cells) in rows {
        s.push_str(&format!("| {name} |"));
        for c in cells {
            s.push_str(&format!(" {c} |"));
        }
        s.push('\n');
    }
    s
}

/// The figures' table, then the targets' table (same columns).
pub fn render(results: &[RunResult]) -> String {
    let mut s = markdown("shape / N", results, &figures(results));
    let mut targets: Vec<Row> = Vec::new();
    for (i, r) in results.iter().enumerate() {
        for v in verdicts(r) {
            let cell = match v.met {
                Some(true) => format!("met ({})", v.figure),
                Some(false) => format!("**missed** ({})", v.figure),
                None => v.figure.clone(),
            };
            match targets.iter_mut().find(|(t, _)| t == v.target) {
                Some((_, cells)) => cells[i] = cell,
                None => {
                    let mut cells = vec!["-".to_string(); results.len()];
                    cells[i] = cell;
                    targets.push((v.target.to_string(), cells));
                }
            }
        }
    }
    s.push_str(
        "\nTargets (issue 28; the 20k set below 100k objects, the 100k set from 100k on; the dashboard and `serve` held to the same limits):\n\n",
    );
    s.push_str(&markdown("target", results, &targets));
    s.push_str(&format!(
        "\n{} cores; restorewatch, `serve`, the emulator and kubectl each in its own process.\n",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::kubectl::KubectlResult;
    use crate::bench::worker::WorkerResult;

    fn run(blocks: Vec<f64>) -> RunResult {
        RunResult {
            shape: "default".into(),
            generated: true,
            objects: 20000,
            pvcs: 5666,
            restores: 200,
            restorewatch: WorkerResult {
                write_p99_blocks_ms: blocks,
                ..Default::default()
            },
            kubectl: Some(KubectlResult {
                watch_p99_blocks_ms: vec![1.74, 2.85],
                ..Default::default()
            }),
            serve: None,
            load_before: "0.10".into(),
            load_after: "0.10".into(),
        }
    }

    /// A run of 400 writes or more shows how far each reader's p99 of 200 writes moved within
    /// it; a run of 200 (the targets' series) has no such row.
    #[test]
    fn the_p99_of_each_200_writes_is_shown_only_for_runs_of_two_blocks_or_more() {
        let with = render(&[run(vec![2.08, 1.99, 2.30])]);
        let line = with
            .lines()
            .find(|l| l.starts_with("| p99 of each 200 writes in turn"))
            .unwrap_or_else(|| panic!("no row: {with}"));
        assert!(
            line.ends_with("| 1.99-2.30 ms (3) · - · 1.74-2.85 ms (2) |"),
            "{line}"
        );
        let without = render(&[run(Vec::new())]);
        assert!(!without.contains("p99 of each 200 writes"), "{without}");
    }

    /// The idle figure says what, besides drawing its clock, the pipeline redid by the clock
    /// alone: a run from before it was counted shows "-", never "none".
    #[test]
    fn the_idle_rows_say_what_the_clock_alone_redid() {
        use crate::pipeline::clock_work::ClockWork;
        let line = |table: &str, name: &str| {
            table
                .lines()
                .filter(|l| l.starts_with("|   of which redone by the clock alone |"))
                .nth(if name == "serve" { 1 } else { 0 })
                .map(str::to_string)
                .unwrap_or_else(|| panic!("no {name} row: {table}"))
        };
        let mut r = run(Vec::new());
        r.serve = Some(serve_cost::ServeResult {
            held_objects: 1,
            ..Default::default()
        });
        let older = render(std::slice::from_ref(&r));
        assert_eq!(
            line(&older, "dashboard"),
            "|   of which redone by the clock alone | - |"
        );
        assert_eq!(
            line(&older, "serve"),
            "|   of which redone by the clock alone | - |"
        );
        r.restorewatch.idle_clock = Some(ClockWork {
            wakes: 2,
            namespaces: 87,
        });
        if let Some(s) = r.serve.as_mut() {
            s.idle_clock = Some(ClockWork::default());
        }
        let table = render(std::slice::from_ref(&r));
        assert_eq!(
            line(&table, "dashboard"),
            "|   of which redone by the clock alone | 2 wakes, 87 namespaces |"
        );
        assert_eq!(
            line(&table, "serve"),
            "|   of which redone by the clock alone | none |"
        );
    }

    /// The slowest writes of each reader say how long their threads ran and waited for a
    /// core: a table from before they were measured has no such rows, and an unmeasured
    /// figure is "-".
    #[test]
    fn the_slowest_writes_say_how_long_their_threads_ran_and_waited_for_a_core() {
        use crate::bench::core_wait::{Held, SlowWrite, Spent};
        let older = render(&[run(Vec::new())]);
        assert!(!older.contains("slowest writes"), "{older}");
        let slow = |ms, waited_ms| SlowWrite {
            ms,
            spent: Spent {
                ran_ms: Some(0.5),
                waited_ms,
                others_waited_ms: Some(0.3),
                stolen_ms: Some(0.0),
            },
        };
        let mut r = run(Vec::new());
        r.restorewatch.write_held = Held {
            slowest: vec![slow(8.0, Some(5.9)), slow(7.1, None)],
            median: Spent {
                ran_ms: Some(0.4),
                waited_ms: Some(0.04),
                ..Spent::default()
            },
            stolen_in: Some((3, 200)),
        };
        r.serve = Some(serve_cost::ServeResult::default());
        let table = render(std::slice::from_ref(&r));
        let rows: Vec<&str> = table
            .lines()
            .skip_while(|l| !l.starts_with("| slowest writes"))
            .take(3)
            .map(|l| l.rsplit(" | ").next().unwrap_or(l))
            .collect();
        assert_eq!(
            rows,
            [
                "8.0 (ran 0.5, waited 5.9 + 0.3, stolen 0.0) · 7.1 (ran 0.5, waited - + 0.3, stolen 0.0) ms; \
                 the median write: ran 0.4, waited 0.0 + -, stolen -; stolen time in 3 of 200 writes |",
                "- |",
                "- |",
            ]
        );
    }

    /// The figure of the dashboard's write p99 verdict.
    fn p99_figure(r: &RunResult) -> Option<String> {
        verdicts(r)
            .into_iter()
            .find(|v| v.target == "write-to-frame p99 within kubectl -w's p99")
            .map(|v| v.figure)
    }

    /// A p99 verdict says how many of each reader's slowest writes met time stolen from the
    /// machine: a tail the hypervisor made is named as such, and a run that did not read it
    /// says nothing.
    #[test]
    fn a_p99_verdict_says_whether_the_machine_stole_time_in_the_slowest_writes() {
        use crate::bench::core_wait::{SlowWrite, Spent};
        let slow = |stolen_ms| SlowWrite {
            ms: 9.0,
            spent: Spent {
                stolen_ms,
                ..Spent::default()
            },
        };
        let mut r = run(Vec::new());
        r.restorewatch.writes_seen = 200;
        r.restorewatch.write_p99_ms = 4.2;
        if let Some(k) = r.kubectl.as_mut() {
            k.watch_p99_ms = Some(2.1);
        }
        assert_eq!(p99_figure(&r).as_deref(), Some("2.00x"));
        r.restorewatch.write_held.slowest = vec![slow(Some(10.0)), slow(Some(0.0)), slow(None)];
        assert_eq!(
            p99_figure(&r).as_deref(),
            Some("2.00x; time stolen from the machine in 1 of its 2 slowest writes")
        );
        if let Some(k) = r.kubectl.as_mut() {
            k.watch_held.slowest = vec![slow(Some(0.0)); 3];
        }
        assert_eq!(
            p99_figure(&r).as_deref(),
            Some(
                "2.00x; time stolen from the machine in 1 of its 2 slowest writes, and in 0 of kubectl's 3"
            )
        );
    }

    /// With `--retake-stolen`, each reader's row names every series it set aside with its
    /// figures, and each p99 verdict, the dashboard's and `serve`'s, says how many of its own
    /// and kubectl's series were retaken; without it, neither the rows nor the note appear.
    #[test]
    fn series_set_aside_for_stolen_time_are_named_in_the_table_and_the_verdict() {
        use crate::bench::retake::{Retakes, SetAside};
        let serve_target = "serve: write-to-report p99 within kubectl -w's p99";
        let serve_figure = |r: &RunResult| {
            verdicts(r)
                .into_iter()
                .find(|v| v.target == serve_target)
                .map(|v| v.figure)
        };
        let mut r = run(Vec::new());
        r.restorewatch.writes_seen = 200;
        r.restorewatch.write_p99_ms = 2.0;
        r.serve = Some(crate::bench::serve_cost::ServeResult {
            held_objects: 400,
            writes_seen: 200,
            write_p99_ms: 3.0,
            ..Default::default()
        });
        if let Some(k) = r.kubectl.as_mut() {
            k.watch_p99_ms = Some(2.5);
        }
        assert_eq!(p99_figure(&r).as_deref(), Some("0.80x"));
        assert_eq!(serve_figure(&r).as_deref(), Some("1.20x"));
        assert!(!render(std::slice::from_ref(&r)).contains("set aside"));

        let aside = |p99_ms| SetAside {
            p99_ms,
            stolen_in_slowest: (2, 3),
            seen: 199,
            lost: 1,
            p50_ms: 1.9,
        };
        r.restorewatch.write_retakes = Retakes {
            allowed: 2,
            set_aside: vec![aside(9.6)],
            waits: vec![Some((12.4, true)), Some((0.3, true))],
        };
        if let Some(s) = r.serve.as_mut() {
            s.write_retakes = Retakes {
                allowed: 2,
                set_aside: vec![aside(7.1), aside(8.2)],
                waits: vec![Some((5.0, true)); 3],
            };
        }
        if let Some(k) = r.kubectl.as_mut() {
            k.watch_retakes = Retakes {
                allowed: 2,
                set_aside: vec![],
                waits: vec![Some((91.0, false))],
            };
        }
        assert_eq!(
            p99_figure(&r).as_deref(),
            Some("0.80x; series retaken for stolen time: its 1, kubectl's 0")
        );
        assert_eq!(
            serve_figure(&r).as_deref(),
            Some("1.20x; series retaken for stolen time: its 2, kubectl's 0")
        );
        let table = render(&[r]);
        let rows: Vec<&str> = table
            .lines()
            .skip_while(|l| !l.starts_with("| series set aside for stolen time"))
            .take(3)
            .collect();
        assert_eq!(rows.len(), 3, "{table}");
        assert!(
            rows[0].contains(
                "retaken 1x (p50 / p99 1.9 / 9.6 ms, 199 of 200 writes seen, stolen time in 2 of its 3 slowest); \
                 waits for 5 s without stolen time: 12 s, 0 s"
            ),
            "{}",
            rows[0]
        );
        assert!(
            rows[1].starts_with("|   serve | retaken 2x (p50 / p99 1.9 / 7.1 ms,")
                && rows[1].contains("; p50 / p99 1.9 / 8.2 ms,")
                && rows[1].contains("waits for 5 s without stolen time: 5 s, 5 s, 5 s"),
            "{}",
            rows[1]
        );
        assert!(
            rows[2].starts_with("|   kubectl -w | kept as first taken; waits for 5 s without stolen time: 91 s (never quiet)"),
            "{}",
            rows[2]
        );
    }

    /// A p99 verdict is met or missed on the two p99s as measured, and says whether their
    /// writes could tell them apart: 200 writes never bound a p99 from above, so a dashboard
    /// 1.33x kubectl's is "not told apart"; bounded intervals that do not meet are "told apart".
    #[test]
    fn a_p99_verdict_says_whether_its_writes_tell_the_two_apart() {
        let target = "write-to-frame p99 within kubectl -w's p99";
        let mut r = run(Vec::new());
        r.restorewatch.writes_seen = 200;
        r.restorewatch.write_p99_ms = 2.8;
        r.restorewatch.write_p99_interval = Some(Interval {
            lo_ms: 2.1,
            hi_ms: None,
        });
        let set_kubectl = |r: &mut RunResult, iv: Interval| {
            if let Some(k) = r.kubectl.as_mut() {
                k.watch_p99_ms = Some(2.1);
                k.watch_p99_interval = Some(iv);
            }
        };
        set_kubectl(
            &mut r,
            Interval {
                lo_ms: 1.9,
                hi_ms: None,
            },
        );
        let p99 = |r: &RunResult| {
            verdicts(r)
                .into_iter()
                .find(|v| v.target == target)
                .map(|v| (v.met, v.figure))
        };
        assert_eq!(
            p99(&r),
            Some((
                Some(false),
                "1.33x; not told apart: 95% sure of 2.1 ms and up, against kubectl's 1.9 ms and up"
                    .to_string()
            ))
        );
        let table = render(std::slice::from_ref(&r));
        assert!(
            table.contains(
                "| where each p99 lies, 95% sure from its own writes: dashboard · serve · kubectl -w | 2.1 ms and up · - · 1.9 ms and up |"
            ),
            "{table}"
        );
        r.restorewatch.write_p99_interval = Some(Interval {
            lo_ms: 2.6,
            hi_ms: Some(3.0),
        });
        set_kubectl(
            &mut r,
            Interval {
                lo_ms: 1.9,
                hi_ms: Some(2.3),
            },
        );
        assert_eq!(
            p99(&r),
            Some((
                Some(false),
                "1.33x; told apart: 95% sure of 2.6-3.0 ms, against kubectl's 1.9-2.3 ms"
                    .to_string()
            ))
        );
        // At 100k the target is twice kubectl's p99: its interval is scaled the same way.
        r.objects = 100_000;
        assert_eq!(
            p99(&r).map(|(_, f)| f),
            None,
            "the 20k target's name is not the 100k one's"
        );
        let big = verdicts(&r)
            .into_iter()
            .find(|v| v.target.starts_with("write-to-frame p99 within 2x"))
            .map(|v| (v.met, v.figure));
        assert_eq!(
            big,
            Some((
                Some(true),
                "1.33x; told apart: 95% sure of 2.6-3.0 ms, against 2x kubectl's, 3.8-4.6 ms"
                    .to_string()
            ))
        );
        // A run recorded before the intervals (`--render-json` of an older file): the ratio
        // alone, and no row of intervals.
        r.objects = 20000;
        r.restorewatch.write_p99_interval = None;
        assert_eq!(p99(&r).map(|(_, f)| f), Some("1.33x".to_string()));
        r.kubectl = None;
        assert!(!render(&[r]).contains("where each p99 lies"));
    }
}
