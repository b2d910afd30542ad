//! `--retake-stolen N`: each timed series of writes taken on a machine the hypervisor is not
//! taking time from, for every reader alike. On this kind of machine stolen time comes in
//! bursts of a minute or more (`core_wait`); a series that meets one measures the host, and
//! which reader's series it lands on decides a 200-write p99 verdict. With N > 0 the bench
//! waits, bounded, until the machine has gone `QUIET` without stolen time before each series,
//! and takes a series again, up to N times, when any of its slowest writes met stolen time.
//! Every series set aside stays in the results with its p99, so the table says what was
//! retaken and why; with N = 0 (the default) nothing waits and nothing is retaken.

use super::core_wait::Held;
use super::writes::WriteTimes;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use tokio::time::Instant;

/// How often `/proc/stat` is read while waiting.
const POLL: Duration = Duration::from_millis(250);
/// How long the machine must go without stolen time before a series starts: `STILL_POLLS`
/// reads of `/proc/stat`, `POLL` apart, without a tick.
const STILL_POLLS: u32 = 20;
const QUIET: Duration = POLL.saturating_mul(STILL_POLLS);
/// The longest wait for `QUIET` before a series: past it, the series is taken anyway and the
/// results say the machine was not quiet.
const BOUND: Duration = Duration::from_secs(90);

/// A series set aside because its slowest writes met stolen time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SetAside {
    pub p99_ms: f64,
    /// Of its slowest writes, how many met stolen time, of how many where it was read.
    pub stolen_in_slowest: (usize, usize),
    /// Its writes the reader got, and those it never did (`writes::WRITE_TIMEOUT`).
    #[serde(default)]
    pub seen: usize,
    #[serde(default)]
    pub lost: usize,
    #[serde(default)]
    pub p50_ms: f64,
}

/// What retaking did for one reader's series.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Retakes {
    /// At most this many retakes were allowed (0: none, and no waiting).
    pub allowed: usize,
    /// The series set aside, in the order taken.
    #[serde(default)]
    pub set_aside: Vec<SetAside>,
    /// Before each series taken, seconds waited for `QUIET`, and whether the machine got there
    /// within `BOUND` (`None`: stolen time could not be read).
    #[serde(default)]
    pub waits: Vec<Option<(f64, bool)>>,
}

impl Retakes {
    /// "retaken 1x (p99 9.6 ms, stolen time in 2 of its 3 slowest writes); waits for 5 s
    /// without stolen time: 12 s, 0 s"; "-" when retaking was off.
    pub fn describe(&self) -> String {
        if self.allowed == 0 {
            return "-".into();
        }
        let taken = if self.set_aside.is_empty() {
            "kept as first taken".to_string()
        } else {
            let each: Vec<String> = self
                .set_aside
                .iter()
                .map(|s| {
                    format!(
                        "p50 / p99 {:.1} / {:.1} ms, {} of {} writes seen, stolen time in {} of its {} slowest",
                        s.p50_ms,
                        s.p99_ms,
                        s.seen,
                        s.seen + s.lost,
                        s.stolen_in_slowest.0,
                        s.stolen_in_slowest.1
                    )
                })
                .collect();
            format!("retaken {}x ({})", self.set_aside.len(), each.join("; "))
        };
        let waits: Vec<String> = self
            .waits
            .iter()
            .map(|w| match w {
                Some((s, true)) => format!("{s:.0} s"),
                Some((s, false)) => format!("{s:.0} s (never quiet)"),
                None => "stolen time not read".into(),
            })
            .collect();
        format!(
            "{taken}; waits for {} s without stolen time: {}",
            QUIET.as_secs(),
            waits.join(", ")
        )
    }
}

/// `Some((met, read))` when any of `held`'s slowest writes met stolen time.
fn stolen_in_slowest(held: &Held) -> Option<(usize, usize)> {
    held.stolen_in_slowest().filter(|(met, _)| *met > 0)
}

/// Waits until `ticks` (the machine's stolen time so far) has not moved for `still_polls`
/// reads in a row, `poll` apart, or `bound` has passed: (seconds waited, whether it got
/// quiet); `None` as soon as a read fails.
pub async fn until_unstolen(
    mut ticks: impl FnMut() -> Option<u64>,
    still_polls: u32,
    poll: Duration,
    bound: Duration,
) -> Option<(f64, bool)> {
    let start = Instant::now();
    let mut last = ticks()?;
    let mut still = 0;
    loop {
        let waited = start.elapsed();
        if still >= still_polls {
            return Some((waited.as_secs_f64(), true));
        }
        if waited >= bound {
            return Some((waited.as_secs_f64(), false));
        }
        tokio::time::sleep(poll).await;
        let now = ticks()?;
        if now == last {
            still += 1;
        } else {
            last = now;
            still = 0;
        }
    }
}

/// The tag of attempt `n` of a series tagged `tag`: a retake writes values no PVC holds yet
/// (a value it already holds is no change, and no watch would deliver it).
pub fn tag_of(tag: &str, attempt: usize) -> String {
    if attempt == 0 {
        tag.to_string()
    } else {
        format!("{tag}retake{attempt}-")
    }
}

/// The series of one reader, taken as `--retake-stolen` says: before each,
/// `Retaking::next_attempt` (the wait, when retaking is on); after it, `Retaking::keep`.
/// A loop of the caller's rather than a closure of this module's, since a series borrows the
/// reader's receiver mutably.
pub struct Retaking {
    what: String,
    attempt: usize,
    retakes: Retakes,
    still_polls: u32,
    bound: Duration,
}

impl Retaking {
    /// `allowed` retakes of `what`'s series (named in the progress lines on stderr).
    pub fn new(allowed: usize, what: &str) -> Retaking {
        Retaking {
            what: what.to_string(),
            attempt: 0,
            retakes: Retakes {
                allowed,
                ..Retakes::default()
            },
            still_polls: STILL_POLLS,
            bound: BOUND,
        }
    }

    /// Waits for a quiet machine when retaking is on; the attempt the next series is.
    pub async fn next_attempt(&mut self) -> usize {
        if self.retakes.allowed > 0 {
            eprintln!(
                "bench: {}: waiting up to {} s for {} s without stolen time",
                self.what,
                self.bound.as_secs(),
                QUIET.as_secs()
            );
            let waited = until_unstolen(
                super::core_wait::stolen_ticks_now,
                self.still_polls,
                POLL,
                self.bound,
            )
            .await;
            self.retakes.waits.push(waited);
        }
        self.attempt
    }

    /// The series just taken: `Some` to keep it, `None` when it is set aside and taken again.
    pub fn keep(&mut self, w: WriteTimes) -> Option<WriteTimes> {
        match stolen_in_slowest(&w.held) {
            Some(met) if self.attempt < self.retakes.allowed => {
                eprintln!(
                    "bench: {}: p99 {:.1} ms set aside, stolen time in {} of its {} slowest writes; taking it again",
                    self.what, w.p99_ms, met.0, met.1
                );
                self.retakes.set_aside.push(SetAside {
                    p99_ms: w.p99_ms,
                    stolen_in_slowest: met,
                    seen: w.seen,
                    lost: w.lost,
                    p50_ms: w.p50_ms,
                });
                self.attempt += 1;
                None
            }
            _ => Some(w),
        }
    }

    pub fn retakes(self) -> Retakes {
        self.retakes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::core_wait::{SlowWrite, Spent};

    fn times(p99: f64, stolen: &[f64]) -> WriteTimes {
        WriteTimes {
            p99_ms: p99,
            p50_ms: 1.5,
            seen: 198,
            lost: 2,
            held: Held {
                slowest: stolen
                    .iter()
                    .map(|s| SlowWrite {
                        ms: p99,
                        spent: Spent {
                            stolen_ms: Some(*s),
                            ..Spent::default()
                        },
                    })
                    .collect(),
                ..Held::default()
            },
            ..WriteTimes::default()
        }
    }

    /// Takes the series in turn as the bench's readers do: (the kept one, what retaking did,
    /// the attempts asked for).
    async fn take(allowed: usize, series: Vec<WriteTimes>) -> (WriteTimes, Retakes, Vec<usize>) {
        // No quiet needed: the tests judge what is kept, not how long the machine was quiet.
        let mut retaking = Retaking {
            still_polls: 0,
            ..Retaking::new(allowed, "t")
        };
        let mut asked = Vec::new();
        let mut series = series.into_iter();
        let kept = loop {
            asked.push(retaking.next_attempt().await);
            let w = series.next().expect("the test gives enough series");
            if let Some(w) = retaking.keep(w) {
                break w;
            }
        };
        (kept, retaking.retakes(), asked)
    }

    #[tokio::test]
    async fn off_takes_one_series_and_waits_for_nothing() {
        let (w, r, asked) = take(0, vec![times(9.0, &[10.0, 10.0, 0.0])]).await;
        assert_eq!(w.p99_ms, 9.0);
        assert_eq!(asked, vec![0]);
        assert!(r.waits.is_empty() && r.set_aside.is_empty());
        assert_eq!(r.describe(), "-");
    }

    #[tokio::test]
    async fn a_series_whose_slowest_writes_met_stolen_time_is_set_aside_and_retaken() {
        let first = times(9.6, &[10.0, 0.0, 10.0]);
        let second = times(3.1, &[0.0, 0.0, 0.0]);
        let (w, r, asked) = take(2, vec![first, second]).await;
        assert_eq!(
            w.p99_ms, 3.1,
            "the series kept is the one without stolen time"
        );
        assert_eq!(asked, vec![0, 1], "the retake is its own attempt");
        assert_eq!(
            r.set_aside,
            vec![SetAside {
                p99_ms: 9.6,
                stolen_in_slowest: (2, 3),
                seen: 198,
                lost: 2,
                p50_ms: 1.5,
            }],
            "a series set aside keeps its counts: its lost writes are not dropped"
        );
        assert_eq!(r.waits.len(), 2, "a wait before every series taken");
        let said = r.describe();
        assert!(
            said.starts_with(
                "retaken 1x (p50 / p99 1.5 / 9.6 ms, 198 of 200 writes seen, stolen time in 2 of its 3 slowest)"
            ),
            "{said}"
        );
    }

    #[tokio::test]
    async fn retakes_stop_at_the_allowance_and_the_kept_series_says_it_met_stolen_time() {
        let stolen = || times(8.0, &[10.0, 10.0, 10.0]);
        let (w, r, asked) = take(1, vec![stolen(), stolen(), stolen()]).await;
        assert_eq!(asked, vec![0, 1], "one retake allowed, one taken");
        assert_eq!(r.set_aside.len(), 1);
        assert_eq!(
            w.held.stolen_in_slowest(),
            Some((3, 3)),
            "the series kept past the allowance is the last taken, stolen time and all"
        );
    }

    #[tokio::test]
    async fn unknown_stolen_time_is_no_reason_to_retake() {
        let unread = WriteTimes {
            p99_ms: 4.0,
            held: Held {
                slowest: vec![SlowWrite {
                    ms: 4.0,
                    spent: Spent::default(),
                }],
                ..Held::default()
            },
            ..WriteTimes::default()
        };
        let (_, r, asked) = take(3, vec![unread]).await;
        assert_eq!(asked, vec![0]);
        assert!(r.set_aside.is_empty());
    }

    /// Every value a series writes (`{tag}{i}`, as `writes::timed` and `kubectl` build them)
    /// is one no other attempt, nor another reader's series on the same annotation (the
    /// dashboard's "", `serve`'s "serve-", the paired series' "k"), ever writes: a value a PVC
    /// already holds is no change, and its write would be lost.
    #[test]
    fn a_retake_writes_values_no_other_series_writes() {
        use std::collections::HashSet;
        let mut all: HashSet<String> = HashSet::new();
        let mut written = 0;
        for tag in ["", "serve-", "k"] {
            for attempt in 0..4 {
                let t = tag_of(tag, attempt);
                for i in 0..1200 {
                    all.insert(format!("{t}{i}"));
                    written += 1;
                }
            }
        }
        assert_eq!(all.len(), written, "some value is written by two series");
        assert_eq!(tag_of("serve-", 0), "serve-", "attempt 0 writes as before");
    }

    #[tokio::test]
    async fn the_wait_ends_after_enough_reads_in_a_row_without_a_tick() {
        // Stolen time moves on the first three reads after the first, then stays.
        let seq = [5u64, 6, 7, 9];
        let mut reads = 0usize;
        let got = until_unstolen(
            || {
                reads += 1;
                Some(seq.get(reads - 1).copied().unwrap_or(9))
            },
            4,
            Duration::from_millis(1),
            Duration::from_secs(60),
        )
        .await;
        assert_eq!(got.map(|g| g.1), Some(true));
        assert_eq!(
            reads, 8,
            "the first read, three that moved, four still ones"
        );
    }

    #[tokio::test]
    async fn the_wait_gives_up_at_its_bound_and_says_so() {
        let mut t = 0u64;
        let got = until_unstolen(
            || {
                t += 1;
                Some(t)
            },
            2,
            Duration::from_millis(1),
            Duration::from_millis(20),
        )
        .await;
        assert_eq!(got.map(|g| g.1), Some(false), "never quiet");
    }

    #[tokio::test]
    async fn unreadable_stolen_time_ends_the_wait_as_unknown() {
        assert_eq!(
            until_unstolen(|| None, 2, Duration::ZERO, Duration::from_secs(60)).await,
            None
        );
        let mut reads = 0;
        let failing_later = until_unstolen(
            || {
                reads += 1;
                (reads < 3).then_some(1)
            },
            10,
            Duration::ZERO,
            Duration::from_secs(60),
        )
        .await;
        assert_eq!(failing_later, None);
    }

    #[test]
    fn waits_say_when_the_machine_never_went_quiet_or_could_not_be_read() {
        let r = Retakes {
            allowed: 1,
            set_aside: vec![],
            waits: vec![Some((90.2, false)), None],
        };
        assert_eq!(
            r.describe(),
            "kept as first taken; waits for 5 s without stolen time: 90 s (never quiet), stolen time not read"
        );
    }
}
