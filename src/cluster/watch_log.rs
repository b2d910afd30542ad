//! What the log says about one watch: a line when it goes down, one when it is back, and in
//! between a reminder at most every `REMIND`. A server that is gone makes each watch fail
//! several times a second at first; logging each failure buries the one fact that matters
//! (which resource, which server, since when, and that it recovered). Pure: the caller gives
//! the clock and writes the lines.

use jiff::{SignedDuration, Timestamp};

/// Between two reminders that a watch is still down.
pub const REMIND: SignedDuration = SignedDuration::from_mins(5);
/// A watch that goes down again this soon after its last line is flapping: its next down
/// line waits until this has passed (and its recovery is not logged if its fall was not).
pub const FLAP: SignedDuration = SignedDuration::from_mins(1);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    Down {
        since: Timestamp,
        error: String,
    },
    StillDown {
        since: Timestamp,
        error: String,
        failures: u32,
    },
    Back {
        after: SignedDuration,
        failures: u32,
    },
}

#[derive(Debug, Clone)]
struct Down {
    since: Timestamp,
    failures: u32,
    announced: bool,
}

/// One watch's log state.
#[derive(Debug, Clone, Default)]
pub struct WatchLog {
    down: Option<Down>,
    last_line: Option<Timestamp>,
}

impl WatchLog {
    fn quiet_for(&self, now: Timestamp, d: SignedDuration) -> bool {
        self.last_line.is_none_or(|t| now.duration_since(t) >= d)
    }

    /// A failed list or watch; the line to log, if any.
    pub fn failed(&mut self, now: Timestamp, error: &str) -> Option<Line> {
        let flapping = !self.quiet_for(now, FLAP);
        let remind = self.quiet_for(now, REMIND);
        let down = self.down.get_or_insert(Down {
            since: now,
            failures: 0,
            announced: false,
        });
        down.failures += 1;
        let line = if !down.announced {
            (!flapping).then(|| {
                down.announced = true;
                Line::Down {
                    since: down.since,
                    error: error.to_string(),
                }
            })
        } else {
            remind.then(|| Line::StillDown {
                since: down.since,
                error: error.to_string(),
                failures: down.failures,
            })
        };
        if line.is_some() {
            self.last_line = Some(now);
        }
        line
    }

    /// A complete list: the watch is up.
    pub fn listed(&mut self, now: Timestamp) -> Option<Line> {
        let down = self.down.take()?;
        down.announced.then(|| {
            self.last_line = Some(now);
            Line::Back {
                after: now.duration_since(down.since),
                failures: down.failures,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(secs: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + secs).expect("time")
    }

    #[test]
    fn a_long_outage_is_one_line_down_a_few_reminders_and_one_line_back() {
        let mut log = WatchLog::default();
        let mut lines = Vec::new();
        // Three failures a second for twelve minutes.
        for ms in (0..12 * 60 * 1000).step_by(333) {
            let now = t(0) + SignedDuration::from_millis(ms);
            lines.extend(log.failed(now, "connection refused"));
        }
        lines.extend(log.listed(t(12 * 60)));
        assert_eq!(
            lines.first(),
            Some(&Line::Down {
                since: t(0),
                error: "connection refused".into()
            })
        );
        let reminders = lines
            .iter()
            .filter(|l| matches!(l, Line::StillDown { since, .. } if *since == t(0)))
            .count();
        assert_eq!(reminders, 2, "{lines:#?}");
        assert!(
            matches!(lines.last(), Some(Line::Back { after, failures })
                if *after == SignedDuration::from_mins(12) && *failures > 2000),
            "{lines:#?}"
        );
        assert_eq!(lines.len(), 4);
    }

    #[test]
    fn a_flapping_watch_logs_at_most_one_fall_and_rise_a_minute() {
        let mut log = WatchLog::default();
        let mut lines = 0;
        // Down for one second every ten, for ten minutes.
        for i in 0..60 {
            lines += usize::from(log.failed(t(i * 10), "reset").is_some());
            lines += usize::from(log.listed(t(i * 10 + 1)).is_some());
        }
        assert!(lines <= 2 * 10 + 2, "{lines} lines");
        assert!(lines >= 2, "the flapping is said at all");
    }

    #[test]
    fn a_fall_not_logged_has_no_recovery_logged_and_a_later_fall_is() {
        let mut log = WatchLog::default();
        assert!(log.failed(t(0), "a").is_some());
        assert!(log.listed(t(1)).is_some());
        assert_eq!(
            log.failed(t(2), "b"),
            None,
            "within a minute of the last line"
        );
        assert_eq!(log.listed(t(3)), None);
        // Down again and staying down: said once the minute has passed.
        assert_eq!(log.failed(t(30), "c"), None);
        assert_eq!(
            log.failed(t(62), "c"),
            Some(Line::Down {
                since: t(30),
                error: "c".into()
            })
        );
    }
}
