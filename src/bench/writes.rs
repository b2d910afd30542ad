//! Timed writes, the same for the dashboard and `serve`: one PVC annotation at a time, from
//! sending the PATCH to the first frame that holds the new value where a reader gets it (drawn
//! on the dashboard's screen; published to `serve`'s endpoints).

use super::core_wait::{Carriers, Held, Sample};
use super::retake::{Retakes, Retaking};
use super::worker::percentile;
use crate::model::names::ANN_BENCH_SEQ;
use crate::pipeline::{Frame, FrameRx};
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kube::api::{Patch, PatchParams};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// A write not shown after this counts as lost.
pub(super) const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// A frame as a reader got it, and when.
#[derive(Clone)]
pub struct Shown {
    pub frame: Option<Arc<Frame>>,
    pub at: Instant,
    pub draws: u64,
}

#[derive(Debug, Clone, Default)]
pub struct WriteTimes {
    pub seen: usize,
    pub lost: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// The PATCH round trip alone (the server's share).
    pub patch_p50_ms: f64,
    pub patch_p99_ms: f64,
    /// `block_p99s` of the writes in the order they were made.
    pub p99_blocks_ms: Vec<f64>,
    /// Where the series' true p99 lies (`Interval::of_p99`).
    pub p99_interval: Option<Interval>,
    /// What the writes held besides the work (`core_wait`).
    pub held: Held,
}

/// Confidence of `Interval`, as the chance left in each tail.
const TAIL: f64 = 0.025;

/// Where a series' true p99 lies, with 95% confidence, from the series alone: between two of
/// its own writes, taken in order (distribution-free: how many writes fall below the true p99
/// is binomial). A p99 of 200 writes is their third slowest, and the chance that all 200 fall
/// below the true p99 is 13%: no write bounds it from above, so two such p99s whose intervals
/// overlap are not told apart by their series, whichever is the larger.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub lo_ms: f64,
    /// `None`: above the slowest write (too few writes to bound it).
    pub hi_ms: Option<f64>,
}

impl Interval {
    /// The interval of the p99 of `sorted` (ascending); `None` for too few writes.
    pub fn of_p99(sorted: &[f64]) -> Option<Interval> {
        let (lo, hi) = quantile_ranks(sorted.len(), 0.99, TAIL)?;
        Some(Interval {
            lo_ms: *sorted.get(lo - 1)?,
            hi_ms: hi.and_then(|h| sorted.get(h - 1).copied()),
        })
    }

    /// `factor` times this interval: a target's, when it is a multiple of kubectl's p99.
    pub fn scaled(&self, factor: f64) -> Interval {
        Interval {
            lo_ms: self.lo_ms * factor,
            hi_ms: self.hi_ms.map(|h| h * factor),
        }
    }

    /// Whether the two share a value: neither series' p99 is then shown to be above the
    /// other's.
    pub fn overlaps(&self, other: &Interval) -> bool {
        let below = |lo: f64, hi: Option<f64>| hi.is_none_or(|h| lo <= h);
        below(self.lo_ms, other.hi_ms) && below(other.lo_ms, self.hi_ms)
    }
}

impl std::fmt::Display for Interval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.hi_ms {
            Some(hi) => write!(f, "{:.1}-{hi:.1} ms", self.lo_ms),
            None => write!(f, "{:.1} ms and up", self.lo_ms),
        }
    }
}

/// The 1-based ranks `(lo, hi)` of the order statistics of `n` samples between which their
/// `q`-quantile lies with at least `1 - 2 * tail` confidence: the count of samples below the
/// quantile is Binomial(n, q), so `lo` is the highest rank with P(count < lo) <= tail and `hi`
/// the lowest with P(count >= hi) <= tail. `hi` is `None` when even the largest sample does not
/// bound it (P(count = n) > tail); the whole is `None` when not even the smallest bounds it
/// from below.
pub fn quantile_ranks(n: usize, q: f64, tail: f64) -> Option<(usize, Option<usize>)> {
    if n == 0 || !(q > 0.0 && q < 1.0) {
        return None;
    }
    // The binomial's probabilities, from the top down in logs (q^n underflows at large n).
    let step = (1.0 - q).ln() - q.ln();
    let mut ln_p = vec![0.0; n + 1];
    ln_p[n] = n as f64 * q.ln();
    for k in (1..=n).rev() {
        ln_p[k - 1] = ln_p[k] + (k as f64).ln() - ((n - k + 1) as f64).ln() + step;
    }
    let p: Vec<f64> = ln_p.iter().map(|l| l.exp()).collect();
    let mut lo = None;
    let mut below = 0.0;
    for l in 1..=n {
        below += p[l - 1];
        if below > tail {
            break;
        }
        lo = Some(l);
    }
    let mut hi = None;
    let mut above = 0.0;
    for u in (1..=n).rev() {
        above += p[u];
        if above > tail {
            break;
        }
        hi = Some(u);
    }
    Some((lo?, hi))
}

/// Writes per block in `block_p99s`: the size of the series the targets are judged on.
pub const BLOCK: usize = 200;

/// The p99 of each `BLOCK` consecutive write latencies (in the order written), when there are
/// at least two blocks: how far one run's p99 of 200 writes moves from block to block, which
/// tells a target missed by the server's tail from one missed by the reader.
pub fn block_p99s(in_order: &[f64]) -> Vec<f64> {
    if in_order.len() < 2 * BLOCK {
        return Vec::new();
    }
    in_order
        .chunks_exact(BLOCK)
        .map(|c| {
            let mut s = c.to_vec();
            s.sort_by(f64::total_cmp);
            percentile(&s, 99.0)
        })
        .collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// `serve`'s frames, stamped when the pipeline publishes them (which is when its endpoints
/// serve them). Ends with the frames.
pub fn published(mut frames: FrameRx) -> watch::Receiver<Shown> {
    let (tx, rx) = watch::channel(Shown {
        frame: frames.borrow_and_update().clone(),
        at: Instant::now(),
        draws: 0,
    });
    tokio::spawn(async move {
        let mut n = 0;
        while frames.changed().await.is_ok() {
            n += 1;
            let frame = frames.borrow_and_update().clone();
            tx.send_replace(Shown {
                frame,
                at: Instant::now(),
                draws: n,
            });
        }
    });
    rx
}

/// Merge-PATCHes annotation `key` of PVC `ns/name` to `value`. The answer is checked but not
/// parsed: the writer runs on the same two cores as the process it times (the dashboard's
/// worker, or kubectl beside the bench), and decoding a PVC it never reads (~70 us a write,
/// issue 28's seventh session) was the writer's cost counted as the reader's. kubectl's
/// timing uses the same writer.
pub async fn patch_annotation(
    client: &kube::Client,
    ns: &str,
    name: &str,
    key: &str,
    value: &str,
) -> anyhow::Result<()> {
    use kube::Resource;
    let url = PersistentVolumeClaim::url_path(&(), Some(ns));
    let req = kube::core::Request::new(url)
        .patch(
            name,
            // On a real cluster (`--writes-namespace`) these are restorewatch's writes: its
            // managedFields entry says so, as for the actions.
            &PatchParams {
                field_manager: Some(crate::cluster::client::FIELD_MANAGER.to_string()),
                ..PatchParams::default()
            },
            &Patch::Merge(json!({"metadata": {"annotations": {key: value}}})),
        )
        .map_err(|e| anyhow::anyhow!("building the PATCH of PVC {ns}/{name}: {e}"))?;
    client.request_text(req).await.map_err(|e| {
        anyhow::anyhow!(
            "patching PVC {ns}/{name}: {}",
            crate::cluster::errors::describe(&e)
        )
    })?;
    Ok(())
}

/// `n` untimed merge-PATCHes of an annotation of its own, cycling through `targets`: the server
/// warmed before anything is timed against it.
pub async fn warm_server(
    client: &kube::Client,
    targets: &[(String, String)],
    n: usize,
) -> anyhow::Result<()> {
    for (i, (ns, name)) in targets.iter().cycle().take(n).enumerate() {
        patch_annotation(client, ns, name, ANN_BENCH_WARM, &i.to_string()).await?;
    }
    Ok(())
}

/// The annotation `warm_server` writes: not the one timed, so no timed write meets its value.
const ANN_BENCH_WARM: &str = "bench.restorewatch.io/warm";

/// A reader's timed series: `writes` of them, cycling through `targets`, with values that
/// start with `tag`, taken as `--retake-stolen` says (`retake_stolen` retakes of the reader
/// named `what`).
pub struct Series<'a> {
    pub targets: &'a [(String, String)],
    pub writes: usize,
    pub tag: &'a str,
    pub retake_stolen: usize,
    pub what: &'a str,
}

impl Series<'_> {
    /// How this series is taken: nothing waited for, nor retaken, when it writes nothing.
    pub fn retaking(&self) -> Retaking {
        let writes = self.writes > 0 && !self.targets.is_empty();
        Retaking::new(if writes { self.retake_stolen } else { 0 }, self.what)
    }
}

/// The series' merge-PATCHes of `ANN_BENCH_SEQ`, each timed until `shown` holds it; 20-50 ms
/// apart, at no fixed phase against a clock's redraw. Values start with the series' tag (a
/// retake's own, `retake::tag_of`): a value the PVC already holds (another process's run
/// before) is no change, and no watch would deliver it. `fresh` runs before each series taken,
/// so that what goes with the series' figures is the kept series' alone.
pub async fn time_writes(
    client: &kube::Client,
    series: Series<'_>,
    shown: &mut watch::Receiver<Shown>,
    carriers: &Carriers,
    mut fresh: impl FnMut(),
) -> anyhow::Result<(WriteTimes, Retakes)> {
    let mut retaking = series.retaking();
    loop {
        let attempt = retaking.next_attempt().await;
        fresh();
        let tag = super::retake::tag_of(series.tag, attempt);
        let (w, _) = timed(
            client,
            series.targets,
            series.writes,
            &tag,
            shown,
            Some(carriers),
            None,
        )
        .await?;
        if let Some(w) = retaking.keep(w) {
            return Ok((w, retaking.retakes()));
        }
    }
}

/// The same writes timed for the reader and for kubectl -w at once: on each write both saw,
/// how much later than kubectl's line the reader got it. Runs apart from each other measure
/// the server's tail as much as the readers (the PATCH round trip's own p99 moves by a third
/// between runs); on the same writes both meet the same tail.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Paired {
    /// Writes both saw.
    pub seen: usize,
    pub kubectl_p50_ms: f64,
    pub kubectl_p99_ms: f64,
    pub shown_p50_ms: f64,
    pub shown_p99_ms: f64,
    /// The reader's time minus kubectl's, write by write (negative: the reader was first).
    pub later_p50_ms: f64,
    pub later_p99_ms: f64,
}

/// `time_writes`, with `kubectl` (a `kubectl get pvc -A -w` past its listing) beside.
pub async fn time_writes_beside(
    client: &kube::Client,
    targets: &[(String, String)],
    writes: usize,
    tag: &str,
    shown: &mut watch::Receiver<Shown>,
    kubectl: &mut super::kubectl::Watching,
) -> anyhow::Result<Paired> {
    // Nothing of this series' own figures is kept but the pairs: no threads are read.
    let (_, pairs) = timed(client, targets, writes, tag, shown, None, Some(kubectl)).await?;
    let sorted = |f: &dyn Fn(&(f64, f64)) -> f64| {
        let mut v: Vec<f64> = pairs.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let (k, s, later) = (sorted(&|p| p.0), sorted(&|p| p.1), sorted(&|p| p.1 - p.0));
    Ok(Paired {
        seen: pairs.len(),
        kubectl_p50_ms: percentile(&k, 50.0),
        kubectl_p99_ms: percentile(&k, 99.0),
        shown_p50_ms: percentile(&s, 50.0),
        shown_p99_ms: percentile(&s, 99.0),
        later_p50_ms: percentile(&later, 50.0),
        later_p99_ms: percentile(&later, 99.0),
    })
}

/// The writes; with `kubectl`, also (kubectl's ms, the reader's ms) of each write both saw.
async fn timed(
    client: &kube::Client,
    targets: &[(String, String)],
    writes: usize,
    tag: &str,
    shown: &mut watch::Receiver<Shown>,
    carriers: Option<&Carriers>,
    mut kubectl: Option<&mut super::kubectl::Watching>,
) -> anyhow::Result<(WriteTimes, Vec<(f64, f64)>)> {
    let mut out = WriteTimes::default();
    let mut lat = Vec::new();
    let mut held = Vec::new();
    let mut patch = Vec::new();
    let mut pairs = Vec::new();
    for i in 0..writes {
        let Some((ns, name)) = targets.get(i % targets.len().max(1)) else {
            break;
        };
        let value = format!("{tag}{i}");
        shown.borrow_and_update();
        if let Some(k) = kubectl.as_deref_mut() {
            k.skip_printed();
        }
        // Read before the clock starts and after it stops: the reads are not in the latency.
        let before = carriers.map(Sample::before);
        let t0 = Instant::now();
        patch_annotation(client, ns, name, ANN_BENCH_SEQ, &value).await?;
        patch.push(ms(t0.elapsed()));
        let seen = tokio::time::timeout(WRITE_TIMEOUT, async {
            loop {
                {
                    let d = shown.borrow_and_update();
                    let holds = d.frame.as_ref().is_some_and(|f| {
                        f.snapshot
                            .pvcs
                            .get(ns, name)
                            .and_then(|p| p.meta.annotation(ANN_BENCH_SEQ))
                            == Some(value.as_str())
                    });
                    if holds && d.at >= t0 {
                        return Some(d.at);
                    }
                }
                if shown.changed().await.is_err() {
                    return None;
                }
            }
        })
        .await;
        let seen = match seen {
            Ok(Some(at)) => {
                let took = ms(at.duration_since(t0));
                if let (Some(c), Some(before)) = (carriers, &before) {
                    held.push((took, Sample::after(c).since(before)));
                }
                lat.push(took);
                Some(took)
            }
            _ => {
                out.lost += 1;
                None
            }
        };
        if let Some(k) = kubectl.as_deref_mut()
            && let Some(printed) = k.printed(ns, name, WRITE_TIMEOUT).await
            && let Some(seen) = seen
        {
            pairs.push((ms(printed.saturating_duration_since(t0.into_std())), seen));
        }
        tokio::time::sleep(Duration::from_millis(20 + (i as u64 * 7) % 31)).await;
    }
    out.p99_blocks_ms = block_p99s(&lat);
    out.held = Held::of(&held);
    lat.sort_by(f64::total_cmp);
    out.p99_interval = Interval::of_p99(&lat);
    out.seen = lat.len();
    out.p50_ms = percentile(&lat, 50.0);
    out.p99_ms = percentile(&lat, 99.0);
    out.max_ms = lat.last().copied().unwrap_or(0.0);
    patch.sort_by(f64::total_cmp);
    out.patch_p50_ms = percentile(&patch, 50.0);
    out.patch_p99_ms = percentile(&patch, 99.0);
    Ok((out, pairs))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of 450 writes is two blocks of 200 (the last 50 are no block): each block's p99 is
    /// its own, so a slow stretch shows in the block it fell in.
    #[test]
    fn each_block_of_200_writes_has_its_own_p99() {
        let mut lat = vec![1.0; 450];
        for l in lat.iter_mut().skip(200).take(5) {
            *l = 9.0;
        }
        assert_eq!(block_p99s(&lat), vec![1.0, 9.0]);
        // Under two blocks there is nothing to compare.
        assert!(block_p99s(&lat[..399]).is_empty());
    }

    /// The ranks bounding a quantile, against the binomial computed exactly (Python's
    /// `fractions`, outside this code): 200 writes bound their p99 from below by the sixth
    /// slowest and not at all from above; 400 by the slowest; 1,000 by the fourth slowest.
    #[test]
    fn a_p99_of_200_writes_is_bounded_from_below_only() {
        let r = |n, q| quantile_ranks(n, q, TAIL);
        assert_eq!(r(100, 0.99), Some((97, None)));
        assert_eq!(r(200, 0.99), Some((195, None)));
        assert_eq!(r(400, 0.99), Some((392, Some(400))));
        assert_eq!(r(1000, 0.99), Some((983, Some(997))));
        assert_eq!(r(2000, 0.99), Some((1971, Some(1989))));
        // The textbook case: the median of 100 lies between the 40th and 61st.
        assert_eq!(r(100, 0.5), Some((40, Some(61))));
        assert_eq!(r(11, 0.5), Some((2, Some(10))));
        assert_eq!(r(0, 0.99), None);
        // Far past where q^n underflows, the ranks still come out near n * q.
        let Some((lo, Some(hi))) = r(100_000, 0.99) else {
            panic!("100,000 writes bound their p99 on both sides");
        };
        assert!((98_900..99_000).contains(&lo) && (99_000..99_100).contains(&hi));
    }

    #[test]
    fn a_series_interval_is_read_off_its_own_writes_and_overlap_is_symmetric() {
        let writes: Vec<f64> = (1..=200).map(f64::from).collect();
        let i = Interval::of_p99(&writes).expect("200 writes");
        assert_eq!(
            i,
            Interval {
                lo_ms: 195.0,
                hi_ms: None
            }
        );
        assert_eq!(i.to_string(), "195.0 ms and up");
        let bounded = Interval {
            lo_ms: 1.5,
            hi_ms: Some(2.5),
        };
        assert_eq!(bounded.to_string(), "1.5-2.5 ms");
        // An interval open above meets every interval that reaches its lower end.
        assert!(!i.overlaps(&bounded) && !bounded.overlaps(&i));
        assert!(i.overlaps(&bounded.scaled(100.0)));
        let other = Interval {
            lo_ms: 2.4,
            hi_ms: Some(3.0),
        };
        assert!(bounded.overlaps(&other) && other.overlaps(&bounded));
        let apart = Interval {
            lo_ms: 2.6,
            hi_ms: Some(3.0),
        };
        assert!(!bounded.overlaps(&apart) && !apart.overlaps(&bounded));
        // Scaled by the 100k target's factor, kubectl's 1.5-2.5 reaches 3.0-5.0.
        assert_eq!(
            bounded.scaled(2.0),
            Interval {
                lo_ms: 3.0,
                hi_ms: Some(5.0)
            }
        );
        assert!(apart.overlaps(&bounded.scaled(2.0)));
        assert_eq!(Interval::of_p99(&[]), None);
    }
    use crate::model::Kind;
    use crate::sim::{Sim, SimConfig};

    /// The bench's writes (the warm-up and the timed ones) land on a real cluster's scratch PVC
    /// with `--writes-namespace`: each is recorded as restorewatch's, as the actions' are, not
    /// under whatever the client library calls itself. Its answer being an error is an error.
    #[tokio::test]
    async fn the_bench_writes_under_restorewatchs_field_manager() {
        let sim = Sim::start(SimConfig::default()).await.expect("emulator");
        sim.store()
            .load(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": "scratch", "namespace": "n", "uid": "u-s"},
                "spec": {"resources": {"requests": {"storage": "1Mi"}}}}))
            .expect("loads");
        let client = sim.client().expect("client");
        let targets = vec![("n".to_string(), "scratch".to_string())];
        warm_server(&client, &targets, 3).await.expect("warm-up");
        patch_annotation(&client, "n", "scratch", ANN_BENCH_SEQ, "t7")
            .await
            .expect("timed write");
        let pvc = sim
            .store()
            .get(Kind::PersistentVolumeClaim, "n", "scratch")
            .expect("the PVC");
        assert_eq!(pvc["metadata"]["annotations"][ANN_BENCH_WARM], json!("2"));
        assert_eq!(pvc["metadata"]["annotations"][ANN_BENCH_SEQ], json!("t7"));
        let managers: Vec<&str> = pvc["metadata"]["managedFields"]
            .as_array()
            .map(|a| a.iter().filter_map(|m| m["manager"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(managers, vec!["restorewatch"], "{pvc}");
        let missing = patch_annotation(&client, "n", "gone", ANN_BENCH_SEQ, "x").await;
        let err = missing
            .expect_err("a PATCH of a missing PVC fails")
            .to_string();
        assert!(err.contains("patching PVC n/gone"), "{err}");
    }
}
