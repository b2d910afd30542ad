//! restorewatch's own cost, in the names every exporter uses (`process_*`), so that the
//! dashboards and alerts people already have for them apply. Read from `/proc/self` at scrape
//! time; the one part of the exposition that is not a function of the frame.

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;

/// What the process costs at one instant (0 where `/proc` is unavailable).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cost {
    pub cpu_seconds: f64,
    pub resident_bytes: u64,
}

impl Cost {
    pub fn now() -> Cost {
        Cost {
            cpu_seconds: crate::procstat::cpu_seconds(),
            resident_bytes: crate::procstat::rss().0,
        }
    }
}

pub fn register(reg: &mut Registry, cost: Cost) {
    let cpu = Counter::<f64, AtomicU64>::default();
    cpu.inc_by(cost.cpu_seconds);
    reg.register(
        "process_cpu_seconds",
        "User and system CPU time restorewatch has used, in seconds",
        cpu,
    );
    let rss = Gauge::<i64>::default();
    rss.set(i64::try_from(cost.resident_bytes).unwrap_or(i64::MAX));
    reg.register(
        "process_resident_memory_bytes",
        "Resident memory of restorewatch, in bytes",
        rss,
    );
}
