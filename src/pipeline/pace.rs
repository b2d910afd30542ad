//! When the next frame may go out: the pacing shared by the live pipeline (publishing
//! analysed frames) and the dashboard's draw loop (drawing them).
//!
//! A fixed gap between frames (it was 33 ms) makes a change that lands just after any frame,
//! a clock redraw included, wait the whole gap, although nothing was streaming. A budget
//! instead lets a few frames out at once after a quiet period and only slows a sustained
//! stream to `interval` a frame: the generic cell rate algorithm, one "theoretical arrival
//! time" and no counters.

use std::time::Duration;
use tokio::time::Instant;

pub struct Pacer {
    interval: Duration,
    /// How far ahead of `now` the schedule may run: the burst allowed after a quiet period.
    slack: Duration,
    /// When the schedule says the next frame is due; in the past after a quiet period.
    due: Option<Instant>,
}

impl Pacer {
    /// Sustains at most one frame per `interval`, with up to `burst` (at least one) at once.
    pub fn new(interval: Duration, burst: u32) -> Pacer {
        Pacer {
            interval,
            slack: interval.saturating_mul(burst.max(1) - 1),
            due: None,
        }
    }

    /// Frames at up to 60 a second while changes stream in, four at once after a pause: a
    /// change is drawn without waiting unless frames have gone out faster than that.
    pub fn for_frames() -> Pacer {
        Pacer::new(Duration::from_millis(16), 4)
    }

    /// The earliest instant at or after `now` at which a frame may go out.
    pub fn when(&self, now: Instant) -> Instant {
        match self.due {
            Some(due) => match due.checked_sub(self.slack) {
                Some(earliest) if earliest > now => earliest,
                _ => now,
            },
            None => now,
        }
    }

    /// Whether a frame may go out at `now`.
    pub fn ready(&self, now: Instant) -> bool {
        self.when(now) <= now
    }

    /// A frame went out at `now`.
    pub fn sent(&mut self, now: Instant) {
        let from = match self.due {
            Some(due) if due > now => due,
            _ => now,
        };
        self.due = Some(from + self.interval);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn after_a_quiet_period_a_burst_goes_out_at_once() {
        let t0 = Instant::now();
        let mut p = Pacer::new(ms(16), 4);
        for _ in 0..4 {
            assert!(p.ready(t0));
            p.sent(t0);
        }
        // The fifth in the same instant waits one interval, not the whole burst.
        assert_eq!(p.when(t0), t0 + ms(16));
    }

    #[test]
    fn a_sustained_stream_is_held_to_one_frame_per_interval() {
        let t0 = Instant::now();
        let mut p = Pacer::new(ms(16), 4);
        let mut now = t0;
        let mut sent = 0;
        // Ask for a frame every millisecond for a second.
        for _ in 0..1000 {
            if p.ready(now) {
                p.sent(now);
                sent += 1;
            }
            now += ms(1);
        }
        // 1000 ms / 16 ms, plus the burst that was allowed at the start.
        assert!((62..=66).contains(&sent), "{sent} frames in a second");
    }

    #[test]
    fn frames_spaced_wider_than_the_interval_never_wait() {
        let t0 = Instant::now();
        let mut p = Pacer::new(ms(16), 4);
        let mut now = t0;
        for i in 0..500u64 {
            assert_eq!(p.when(now), now, "frame {i} had to wait");
            p.sent(now);
            // A redraw of the clock in between the changes costs a frame of the budget too.
            if i % 10 == 0 {
                now += ms(2);
                assert!(p.ready(now));
                p.sent(now);
            }
            now += ms(20 + (i * 7) % 31);
        }
    }

    #[test]
    fn a_burst_of_one_is_a_plain_minimum_gap() {
        let t0 = Instant::now();
        let mut p = Pacer::new(ms(33), 1);
        p.sent(t0);
        assert_eq!(p.when(t0 + ms(10)), t0 + ms(33));
        assert!(p.ready(t0 + ms(33)));
    }
}
