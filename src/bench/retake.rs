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

/// How long the machine must go without stolen time before a series starts.
const QUIET: Duration = Duration::from_secs(5);
/// The longest wait for `QUIET` before a series: past it, the series is taken anyway and the
/// results say the machine was not quiet.
const BOUND: Duration = Duration::from_secs(90);
/// How often `/proc/stat` is read while waiting.
const POLL: Duration = Duration::from_millis(250);

/// A series set aside because its slowest writes met stolen time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SetAside {
    pub p99_ms: f64,
    /// Of its slowest writes, how many met stolen time, of how many where it was read.
    pub stolen_in_slowest: (usize, usize),
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
                        "p99 {:.1} ms, stolen time in {} of its {} slowest writes",
                        s.p99_ms, s.stolen_in_slowest.0, s.stolen_in_slowest.1
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

/// Waits until the machine has gone `quiet` without stolen time, or `bound` has passed:
/// (seconds waited, whether it got quiet); `None` at once where stolen time cannot be read.
pub async fn until_unstolen(quiet: Duration, bound: Duration) -> Option<(f64, bool)> {
    let start = Instant::now();
    let mut last = super::core_wait::stolen_ticks_now()?;
    let mut still_since = start;
    loop {
        let now = Instant::now();
        if now.duration_since(still_since) >= quiet {
            return Some((now.duration_since(start).as_secs_f64(), true));
        }
        if now.duration_since(start) >= bound {
            return Some((now.duration_since(start).as_secs_f64(), false));
        }
        tokio::time::sleep(POLL).await;
        let ticks = super::core_wait::stolen_ticks_now()?;
        if ticks != last {
            last = ticks;
            still_since = Instant::now();
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
    quiet: Duration,
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
            quiet: QUIET,
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
                self.quiet.as_secs()
            );
            let waited = until_unstolen(self.quiet, self.bound).await;
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
            quiet: Duration::ZERO,
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
                stolen_in_slowest: (2, 3)
            }]
        );
        assert_eq!(r.waits.len(), 2, "a wait before every series taken");
        let said = r.describe();
        assert!(
            said.starts_with("retaken 1x (p99 9.6 ms, stolen time in 2 of its 3 slowest writes)"),
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

    #[test]
    fn a_retake_writes_values_of_its_own() {
        assert_eq!(tag_of("serve-", 0), "serve-");
        assert_eq!(tag_of("serve-", 2), "serve-retake2-");
        assert_ne!(tag_of("", 1), tag_of("", 0));
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
