//! What the process itself costs, read from `/proc/self` (Linux): resident memory now and at
//! its peak, and CPU time of all threads, living and exited.

/// `VmRSS` and `VmHWM` in bytes (0 where `/proc` is unavailable).
pub fn rss() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .map_or(0, |kib| kib * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Kernel clock ticks per second for `/proc/*/stat` and `/proc/stat` times (USER_HZ: 100 on
/// every Linux architecture restorewatch builds for).
pub const USER_HZ: f64 = 100.0;

/// User plus system CPU time of the whole process, in seconds (10 ms resolution).
pub fn cpu_seconds() -> f64 {
    let text = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The command name (field 2) may contain spaces: count fields after its closing ')'.
    let after = text.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = after.split_whitespace().collect();
    // After ')': state is field 3, so utime (14) and stime (15) are at 11 and 12.
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / USER_HZ
}

pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// One-minute load average, to say how busy the machine was during a measurement.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_itself() {
        let (rss, hwm) = super::rss();
        assert!(rss > 0 && hwm >= rss);
        assert!(super::cpu_seconds() >= 0.0);
    }
}
