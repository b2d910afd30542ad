//! The analysis clock: `now`, and the earliest later instant at which anything read from it
//! could read differently (`valid_until`).
//!
//! Every rule reads time through one of these questions, never through a bare `now`: each
//! answer comes with the instant it stops holding (a threshold crossed, or the next change of a
//! `human` duration's text), and the clock keeps the earliest. An analysis made at `now` is
//! then the analysis at any instant before `valid_until`, which is what lets the live pipeline
//! sleep until then instead of redoing everything on a timer. The clock is assumed to move
//! forward only; a caller whose clock went back must start over.

use super::ctx::human;
use jiff::{SignedDuration, Timestamp};
use std::cell::Cell;

pub struct Clock {
    now: Timestamp,
    until: Cell<Option<Timestamp>>,
}

const NS: SignedDuration = SignedDuration::from_nanos(1);

impl Clock {
    pub fn new(now: Timestamp) -> Clock {
        Clock {
            now,
            until: Cell::new(None),
        }
    }

    /// The earliest instant after `now` at which an answer given so far could differ; `None`
    /// when none ever will.
    pub fn valid_until(&self) -> Option<Timestamp> {
        self.until.get()
    }

    /// An answer holds while the clock is before `at`.
    fn holds_until(&self, at: Option<Timestamp>) {
        if let Some(at) = at.filter(|at| *at > self.now) {
            let earliest = self.until.get().map_or(at, |u| u.min(at));
            self.until.set(Some(earliest));
        }
    }

    /// More than `d` has passed since `t` (`now - t > d`). Once true it stays true.
    pub fn older_than(&self, t: Timestamp, d: SignedDuration) -> bool {
        let older = self.now.duration_since(t) > d;
        if !older {
            self.holds_until(add(t, d).and_then(|x| add(x, NS)));
        }
        older
    }

    /// Less than `d` has passed since `t` (`now - t < d`). Once false it stays false.
    pub fn younger_than(&self, t: Timestamp, d: SignedDuration) -> bool {
        let younger = self.now.duration_since(t) < d;
        if younger {
            self.holds_until(add(t, d));
        }
        younger
    }

    /// `at` is still ahead (`now < at`).
    pub fn before(&self, at: Timestamp) -> bool {
        let before = self.now < at;
        if before {
            self.holds_until(Some(at));
        }
        before
    }

    /// `at` is behind us (`now > at`).
    pub fn passed(&self, at: Timestamp) -> bool {
        let passed = self.now > at;
        if !passed {
            self.holds_until(add(at, NS));
        }
        passed
    }

    /// Fewer than `limit` whole seconds are left until `at` (seconds truncated toward zero, as
    /// `SignedDuration::as_secs` does). Once true it stays true.
    pub fn secs_left_below(&self, at: Timestamp, limit: i64) -> bool {
        let below = at.duration_since(self.now).as_secs() < limit;
        if !below {
            // The first instant with at most `limit - 1` seconds left: for a non-negative
            // count, less than `limit` seconds left; for a negative one, at most that many.
            let m = limit - 1;
            let change = if m >= 0 {
                sub(at, secs(m + 1)).and_then(|x| add(x, NS))
            } else {
                sub(at, secs(m))
            };
            self.holds_until(change);
        }
        below
    }

    /// `human(now - t)`: how long ago `t` was. Once the text counts minutes (from 2 minutes
    /// on) it is read at the last `AGE_GRID` instant of the wall clock, so it is up to 30 s
    /// late: every age in minutes then moves on the same two instants of a minute. Exact, the
    /// ages of 200 restores whose times came from a real clock moved on ~200 instants of every
    /// minute, and each woke the analysis and the screen (a 10 s grid still cost an idle
    /// dashboard 0.1% of a core on a real server's 200 restores).
    pub fn human_since(&self, t: Timestamp) -> String {
        let q = floor_grid(self.now);
        let at = match q {
            Some(q) if q.duration_since(t) >= secs(MINUTE_TEXT_FROM) => q,
            _ => self.now,
        };
        let d = at.duration_since(t);
        let change = add(t, next_text_up(d));
        self.holds_until(if d < secs(MINUTE_TEXT_FROM) {
            change
        } else {
            change.and_then(ceil_grid)
        });
        human(d)
    }

    /// `human(at - now)`: how long until `at`.
    pub fn human_until(&self, at: Timestamp) -> String {
        let d = at.duration_since(self.now);
        // The text holds while at least `lo` is left, that is up to and including `at - lo`.
        self.holds_until(
            last_text_down(d)
                .and_then(|lo| sub(at, lo))
                .and_then(|x| add(x, NS)),
        );
        human(d)
    }
}

/// Ages in minutes or coarser are read on this grid of the wall clock (seconds).
const AGE_GRID: i64 = 30;

/// Below this many seconds `human` counts seconds, exactly.
const MINUTE_TEXT_FROM: i64 = 120;

/// The last grid instant at or before `t`.
fn floor_grid(t: Timestamp) -> Option<Timestamp> {
    Timestamp::from_second(t.as_second().div_euclid(AGE_GRID) * AGE_GRID)
        .ok()
        .map(|g| if g > t { g - secs(AGE_GRID) } else { g })
}

/// The first grid instant at or after `t`.
fn ceil_grid(t: Timestamp) -> Option<Timestamp> {
    let g = floor_grid(t)?;
    if g == t {
        Some(g)
    } else {
        add(g, secs(AGE_GRID))
    }
}

fn secs(s: i64) -> SignedDuration {
    SignedDuration::from_secs(s)
}

fn add(t: Timestamp, d: SignedDuration) -> Option<Timestamp> {
    t.checked_add(d).ok()
}

fn sub(t: Timestamp, d: SignedDuration) -> Option<Timestamp> {
    t.checked_sub(d).ok()
}

/// The least duration after `d` whose `human` text differs from `d`'s (the text shows seconds
/// below 2 minutes, then minutes, then hours from a day on).
fn next_text_up(d: SignedDuration) -> SignedDuration {
    let s = d.as_secs();
    if d < secs(1) {
        return secs(1);
    }
    let next = if s < 120 {
        s + 1
    } else if s < 86400 {
        (s / 60 + 1) * 60
    } else {
        (s / 3600 + 1) * 3600
    };
    secs(next)
}

/// The least duration, at or below `d`, with `d`'s `human` text: below it the text differs.
/// `None` when the text is "0s", which every smaller duration also reads.
fn last_text_down(d: SignedDuration) -> Option<SignedDuration> {
    let s = d.as_secs();
    if s <= 0 {
        return None;
    }
    let lo = if s < 120 {
        s
    } else if s < 86400 {
        s / 60 * 60
    } else {
        s / 3600 * 3600
    };
    Some(secs(lo))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn t0() -> Timestamp {
        "2026-11-20T10:00:00Z".parse().unwrap()
    }

    /// What one question answers, and the deadline the clock recorded for it.
    fn ask<T>(now: Timestamp, q: &dyn Fn(&Clock) -> T) -> (T, Option<Timestamp>) {
        let c = Clock::new(now);
        let a = q(&c);
        (a, c.valid_until())
    }

    /// The deadline is exact: the answer is the same just before it (and at a few instants in
    /// between) and differs at it; with no deadline, it is the same years later.
    fn exact<T: PartialEq + std::fmt::Debug>(now: Timestamp, q: &dyn Fn(&Clock) -> T) {
        let (a, until) = ask(now, q);
        match until {
            Some(u) => {
                assert!(u > now, "deadline {u} not after {now}");
                let span = u.duration_since(now);
                for k in [1, 2, 3, 5, 8] {
                    let t = now + span / 9 * k;
                    assert_eq!(
                        ask(t, q).0,
                        a,
                        "answer moved at {t}, before the deadline {u}"
                    );
                }
                assert_eq!(
                    ask(u - NS, q).0,
                    a,
                    "answer moved just before the deadline {u}"
                );
                assert_ne!(ask(u, q).0, a, "answer unchanged at its deadline {u}");
            }
            None => {
                for years in [1, 30] {
                    let t = now + SignedDuration::from_hours(24 * 365 * years);
                    assert_eq!(ask(t, q).0, a, "no deadline, yet the answer moved by {t}");
                }
            }
        }
    }

    proptest! {
        #[test]
        fn every_question_changes_exactly_at_its_deadline(
            offset_ns in -200_000_000_000_000i64..200_000_000_000_000,
            at_ns in -200_000_000_000_000i64..200_000_000_000_000,
            d_secs in -100i64..100_000,
            limit in -50i64..5000,
        ) {
            let now = t0() + SignedDuration::from_nanos(offset_ns);
            let at = t0() + SignedDuration::from_nanos(at_ns);
            let d = secs(d_secs);
            exact(now, &|c| c.older_than(at, d));
            exact(now, &|c| c.younger_than(at, d));
            exact(now, &|c| c.before(at));
            exact(now, &|c| c.passed(at));
            exact(now, &|c| c.secs_left_below(at, limit));
            exact(now, &|c| c.human_since(at));
            exact(now, &|c| c.human_until(at));
        }
    }

    #[test]
    fn text_boundaries() {
        // Seconds up to 2 minutes, then minutes, then hours from a day.
        let now = t0();
        let cases = [
            (SignedDuration::from_millis(-1500), 1),
            (SignedDuration::from_millis(500), 1),
            (secs(7), 8),
            (secs(119), 120),
            (secs(125), 180),
            (secs(3599), 3600),
            (secs(3601), 3660),
            (secs(86399), 86400),
            (secs(86401), 86400 + 3600),
        ];
        for (ago, next) in cases {
            let at = now - ago;
            let (_, until) = ask(now, &|c| c.human_since(at));
            let exact = at + secs(next);
            // From two minutes on, a text moves on the next 30 s instant of the wall clock.
            let want = if next <= 120 {
                exact
            } else {
                ceil_grid(exact).unwrap()
            };
            assert_eq!(until, Some(want), "{ago:?} ago");
        }
        // Counting down, "0s" is the last text.
        assert_eq!(ask(now, &|c| c.human_until(now + secs(0))).1, None);
        assert_eq!(
            ask(now, &|c| c.human_until(now + secs(150))).1,
            Some(now + secs(30) + NS)
        );
    }

    #[test]
    fn ages_in_minutes_of_many_restores_move_on_a_few_instants_of_a_minute() {
        // 200 restores whose last change is spread over real seconds: their "for 12m" texts
        // must not wake the analysis 200 times a minute.
        let now = t0() + SignedDuration::from_millis(3_250);
        let mut deadlines = std::collections::BTreeSet::new();
        for i in 0..200i64 {
            let t = now - SignedDuration::from_millis(600_000 + i * 317);
            let (text, until) = ask(now, &|c| c.human_since(t));
            let until = until.unwrap();
            assert!(
                until > now && until.as_second() % AGE_GRID == 0 && until.subsec_nanosecond() == 0
            );
            // The text is the age as it was at most 30 s ago: right, or one minute behind for
            // less than 30 s after the true age moved on.
            let age = now.duration_since(t).as_secs();
            let shown: i64 = text.trim_end_matches('m').parse().unwrap();
            assert!(
                shown == age / 60 || (shown + 1 == age / 60 && age % 60 < AGE_GRID),
                "{text} for {age}s"
            );
            deadlines.insert(until);
        }
        assert!(
            deadlines.len() <= 7,
            "{} distinct wake-ups",
            deadlines.len()
        );
        // Seconds stay exact: a young fact's age moves every second.
        let young = now - secs(30);
        assert_eq!(
            ask(now, &|c| c.human_since(young)).1,
            Some(young + secs(31))
        );
    }

    #[test]
    fn the_earliest_deadline_wins_and_past_ones_are_ignored() {
        let now = t0();
        let c = Clock::new(now);
        assert!(!c.older_than(now, SignedDuration::from_mins(10)));
        assert!(c.before(now + secs(30)));
        assert!(c.older_than(now - secs(60), secs(30)));
        assert_eq!(c.valid_until(), Some(now + secs(30)));
    }
}
