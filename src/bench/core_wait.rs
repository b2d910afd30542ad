//! Where the slowest timed writes' time went: how long the reader's threads ran on a core, how
//! long the threads that carry a write (the reader's, the emulator's, kubectl's) sat runnable
//! waiting for one, and how much CPU time the hypervisor took from the machine meanwhile. A p99 of 200 writes is their third slowest;
//! on two cores shared by the emulator, the reader and the writer, one write that waited 6 ms
//! for a core is a tail no reader's own code made, and the bench should say so rather than
//! leave a missed p99 to a guess.
//!
//! Linux only: a thread's time on a core and its run-queue wait are the first two fields of
//! `/proc/<pid>/task/<tid>/schedstat` (nanoseconds, kept with `CONFIG_SCHED_INFO`), and stolen time the eighth
//! number of `/proc/stat`'s `cpu` line (in `USER_HZ` ticks, so in steps of 10 ms). Elsewhere, or
//! where a file cannot be read, the figures are unknown (`None`) and shown as "-".

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Where a process's threads are listed: `None` for this process.
fn task_dir(pid: Option<u32>) -> PathBuf {
    match pid {
        None => PathBuf::from("/proc/self/task"),
        Some(pid) => PathBuf::from(format!("/proc/{pid}/task")),
    }
}

/// The processes whose threads carry a write: the reader (whose time on a core is its own
/// work) and the others (the server, and the writer where it is another process).
#[derive(Debug, Clone)]
pub struct Carriers {
    reader: PathBuf,
    others: Vec<PathBuf>,
}

impl Carriers {
    /// The reader (`None`: this process) and `others`, each process once.
    pub fn new(reader: Option<u32>, others: &[Option<u32>]) -> Carriers {
        let me = std::process::id();
        let id = |p: Option<u32>| p.unwrap_or(me);
        let mut seen = vec![id(reader)];
        let mut dirs = Vec::new();
        for pid in others {
            if !seen.contains(&id(*pid)) {
                seen.push(id(*pid));
                dirs.push(task_dir(*pid));
            }
        }
        Carriers {
            reader: task_dir(reader),
            others: dirs,
        }
    }
}

/// Time on a core and run-queue wait, summed over the threads of the processes listed in
/// `dirs`, in ns; `None` when a process's threads cannot be listed (not Linux, or a process
/// gone). A thread that ends between its listing and its read is left out: its time leaves
/// the sum, which `Sample::since` saturates at zero.
fn times_ns(dirs: &[PathBuf]) -> Option<Times> {
    let mut sum = Times::default();
    for dir in dirs {
        for task in std::fs::read_dir(dir).ok()?.flatten() {
            if let Ok(text) = std::fs::read_to_string(task.path().join("schedstat"))
                && let Some(t) = parse_schedstat(&text)
            {
                sum.ran = sum.ran.saturating_add(t.ran);
                sum.waited = sum.waited.saturating_add(t.waited);
            }
        }
    }
    Some(sum)
}

/// A thread's (or a sum of threads') time on a core and waiting for one, in ns.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Times {
    ran: u64,
    waited: u64,
}

/// One `schedstat` line: "<on a core ns> <waiting for one ns> <timeslices>".
fn parse_schedstat(schedstat: &str) -> Option<Times> {
    let mut cols = schedstat.split_whitespace();
    Some(Times {
        ran: cols.next()?.parse().ok()?,
        waited: cols.next()?.parse().ok()?,
    })
}

/// The machine's stolen time so far, in `USER_HZ` ticks, from `/proc/stat`'s first line:
/// "cpu user nice system idle iowait irq softirq steal guest guest_nice".
fn steal_ticks(proc_stat: &str) -> Option<u64> {
    let line = proc_stat.lines().next()?;
    let mut cols = line.split_whitespace();
    if cols.next() != Some("cpu") {
        return None;
    }
    cols.nth(7)?.parse().ok()
}

/// The machine's stolen time so far, in `USER_HZ` ticks; `None` where it cannot be read.
pub fn stolen_ticks_now() -> Option<u64> {
    std::fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|s| steal_ticks(&s))
}

/// The carriers' times and the machine's stolen ticks at one moment.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    reader: Option<Times>,
    others: Option<Times>,
    stolen_ticks: Option<u64>,
}

impl Sample {
    /// Taken before a write: the reader's times read last, so that the reads of the others
    /// are not counted as the reader's work.
    pub fn before(carriers: &Carriers) -> Sample {
        let others = times_ns(&carriers.others);
        let stolen_ticks = stolen_ticks_now();
        Sample {
            reader: times_ns(std::slice::from_ref(&carriers.reader)),
            others,
            stolen_ticks,
        }
    }

    /// Taken once a write was shown: the reader's times read first.
    pub fn after(carriers: &Carriers) -> Sample {
        let reader = times_ns(std::slice::from_ref(&carriers.reader));
        Sample {
            reader,
            others: times_ns(&carriers.others),
            stolen_ticks: stolen_ticks_now(),
        }
    }

    /// What was spent between `earlier` and this sample.
    pub fn since(&self, earlier: &Sample) -> Spent {
        let ms = |b: u64, a: u64| b.saturating_sub(a) as f64 / 1e6;
        let reader = self.reader.zip(earlier.reader);
        Spent {
            ran_ms: reader.map(|(b, a)| ms(b.ran, a.ran)),
            waited_ms: reader.map(|(b, a)| ms(b.waited, a.waited)),
            others_waited_ms: self
                .others
                .zip(earlier.others)
                .map(|(b, a)| ms(b.waited, a.waited)),
            stolen_ms: self
                .stolen_ticks
                .zip(earlier.stolen_ticks)
                .map(|(b, a)| b.saturating_sub(a) as f64 * 1000.0 / crate::procstat::USER_HZ),
        }
    }
}

/// What one write's time held besides waiting for the network. Waits are summed over threads
/// (two threads waiting 1 ms at once count 2 ms).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spent {
    /// The reader's threads on a core: its own work (for the dashboard and `serve`, the
    /// writer's too, which runs in the same process).
    pub ran_ms: Option<f64>,
    /// The reader's threads runnable but not running.
    pub waited_ms: Option<f64>,
    /// The other carriers' threads (the server; for kubectl, the writer) runnable but not
    /// running.
    pub others_waited_ms: Option<f64>,
    /// CPU time the hypervisor gave to others, machine-wide.
    pub stolen_ms: Option<f64>,
}

/// One of a series' slowest writes, and what its time held.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SlowWrite {
    pub ms: f64,
    #[serde(flatten)]
    pub spent: Spent,
}

/// How many of the slowest writes are kept: a p99 of 200 writes is their third slowest.
pub const SLOWEST: usize = 3;

/// What a series' writes held: the slowest, the median, and how many met stolen time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Held {
    /// The `SLOWEST` slowest writes, slowest first.
    pub slowest: Vec<SlowWrite>,
    /// Each figure's median over the writes that measured it.
    pub median: Spent,
    /// Writes during which the machine's stolen time moved, of the writes where it was read.
    pub stolen_in: Option<(usize, usize)>,
}

impl Held {
    /// Of `writes` (latency in ms, what it held), in any order.
    pub fn of(writes: &[(f64, Spent)]) -> Held {
        let mut slowest: Vec<SlowWrite> = writes
            .iter()
            .map(|(ms, spent)| SlowWrite {
                ms: *ms,
                spent: *spent,
            })
            .collect();
        slowest.sort_by(|a, b| b.ms.total_cmp(&a.ms));
        slowest.truncate(SLOWEST);
        let of = |f: &dyn Fn(&Spent) -> Option<f64>| {
            let mut v: Vec<f64> = writes.iter().filter_map(|(_, s)| f(s)).collect();
            v.sort_by(f64::total_cmp);
            (!v.is_empty()).then(|| super::worker::percentile(&v, 50.0))
        };
        let stolen: Vec<f64> = writes.iter().filter_map(|(_, s)| s.stolen_ms).collect();
        Held {
            slowest,
            median: Spent {
                ran_ms: of(&|s| s.ran_ms),
                waited_ms: of(&|s| s.waited_ms),
                others_waited_ms: of(&|s| s.others_waited_ms),
                stolen_ms: of(&|s| s.stolen_ms),
            },
            stolen_in: (!stolen.is_empty())
                .then(|| (stolen.iter().filter(|s| **s > 0.0).count(), stolen.len())),
        }
    }

    /// Of the slowest writes where stolen time was read, how many met some.
    pub fn stolen_in_slowest(&self) -> Option<(usize, usize)> {
        let read: Vec<f64> = self
            .slowest
            .iter()
            .filter_map(|w| w.spent.stolen_ms)
            .collect();
        (!read.is_empty()).then(|| (read.iter().filter(|s| **s > 0.0).count(), read.len()))
    }

    /// "9.6 (ran 0.5, waited 6.1 + 0.4, stolen 10.0) · ... ms; the median write: ran ...;
    /// stolen time in 4 of 200 writes", slowest first; "-" when no write was timed.
    pub fn describe(&self) -> String {
        if self.slowest.is_empty() {
            return "-".into();
        }
        let parts: Vec<String> = self
            .slowest
            .iter()
            .map(|w| format!("{:.1} ({})", w.ms, describe_spent(&w.spent)))
            .collect();
        let stolen = self
            .stolen_in
            .map_or("stolen time not read".to_string(), |(n, of)| {
                format!("stolen time in {n} of {of} writes")
            });
        format!(
            "{} ms; the median write: {}; {stolen}",
            parts.join(" · "),
            describe_spent(&self.median)
        )
    }
}

/// "ran 0.4, waited 0.2 + 1.1, stolen 0.0": a write's (or the median's) figures, "-" where
/// unknown.
fn describe_spent(s: &Spent) -> String {
    let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
    format!(
        "ran {}, waited {} + {}, stolen {}",
        f(s.ran_ms),
        f(s.waited_ms),
        f(s.others_waited_ms),
        f(s.stolen_ms)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_holds_time_on_a_core_then_waiting_and_steal_is_the_eighth_of_the_cpu_line() {
        assert_eq!(
            parse_schedstat("616115 48211 2\n"),
            Some(Times {
                ran: 616115,
                waited: 48211
            })
        );
        assert_eq!(parse_schedstat("616115\n"), None);
        let stat =
            "cpu  1541558 0 135433 5022745 5035 0 2382 26138 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n";
        assert_eq!(steal_ticks(stat), Some(26138));
        // A kernel without steal accounting has fewer columns: unknown, not zero.
        assert_eq!(steal_ticks("cpu  1 2 3 4\n"), None);
        assert_eq!(steal_ticks("intr 1 2 3 4 5 6 7 8 9\n"), None);
    }

    #[test]
    fn the_slowest_writes_come_slowest_first_with_what_they_held() {
        let held = |ran, waited, stolen| Spent {
            ran_ms: ran,
            waited_ms: waited,
            others_waited_ms: Some(0.4),
            stolen_ms: stolen,
        };
        let writes = vec![
            (2.0, held(Some(0.3), Some(0.1), Some(0.0))),
            (9.6, held(Some(0.5), Some(6.1), Some(10.0))),
            (1.5, held(Some(0.2), Some(0.0), Some(0.0))),
            (7.2, held(None, None, None)),
            (6.5, held(Some(0.4), Some(0.3), Some(0.0))),
        ];
        let h = Held::of(&writes);
        assert_eq!(
            h.slowest.iter().map(|w| w.ms).collect::<Vec<_>>(),
            vec![9.6, 7.2, 6.5]
        );
        // The median of each figure over the writes that measured it.
        assert_eq!(
            (h.median.ran_ms, h.median.waited_ms),
            (Some(0.3), Some(0.1))
        );
        assert_eq!(h.stolen_in, Some((1, 4)));
        // Of the slowest three, the one without a reading is not counted.
        assert_eq!(h.stolen_in_slowest(), Some((1, 2)));
        assert_eq!(Held::default().stolen_in_slowest(), None);
        let two = Held {
            slowest: h.slowest[..2].to_vec(),
            ..h.clone()
        };
        assert_eq!(
            two.describe(),
            "9.6 (ran 0.5, waited 6.1 + 0.4, stolen 10.0) · 7.2 (ran -, waited - + 0.4, stolen -) ms; \
             the median write: ran 0.3, waited 0.1 + 0.4, stolen 0.0; stolen time in 1 of 4 writes"
        );
        assert_eq!(Held::of(&[]), Held::default());
        assert_eq!(Held::default().describe(), "-");
    }

    /// Where the scheduler keeps a thread's times, a sample of this process is known; a
    /// process named twice is read once.
    #[test]
    fn a_sample_of_this_process_is_known_where_the_kernel_keeps_it() {
        let c = Carriers::new(None, &[None, Some(std::process::id())]);
        assert!(c.others.is_empty(), "the reader is not counted again");
        let a = Sample::before(&c);
        let spent = Sample::after(&c).since(&a);
        if std::fs::read_to_string("/proc/self/schedstat").is_ok() {
            assert!(spent.ran_ms.is_some() && spent.waited_ms.is_some());
        }
        // A process that is gone is unknown, not zero.
        let gone = Carriers::new(Some(u32::MAX), &[]);
        let spent = Sample::after(&gone).since(&Sample::before(&gone));
        assert_eq!((spent.ran_ms, spent.waited_ms), (None, None));
    }
}
