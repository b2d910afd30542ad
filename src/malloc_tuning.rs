//! glibc malloc's settings for a process that holds a cluster's objects for hours, set once at
//! start before any thread allocates (glibc reads the arena limit when a second thread first
//! allocates, and never again).
//!
//! Measured on a real server's 20k objects (`docs/performance.md`, issue 28): glibc's default
//! of up to 8 arenas per core lets tokio's worker threads each keep a heap of their own, and
//! memory freed in one (the initial lists, parsed on whichever thread the watch ran) is not
//! reused by another. One arena and a fixed trim threshold (glibc otherwise raises it to up to
//! 32 MiB after big frees, keeping that much freed memory) took the dashboard from 76-79 to
//! 67 MiB at its peak and `serve` from 79-83 to 70 MiB; two arenas saved little, mimalloc and
//! jemalloc (preloaded) less than this or nothing, at the cost of a C build. The price: the
//! initial lists, parsed on two threads at once, take turns in the one arena (first report on
//! 20k objects 1.4 -> 2.1 s on a quiet machine). A user's own `MALLOC_ARENA_MAX` /
//! `MALLOC_TRIM_THRESHOLD_` win.

/// Arenas at most: glibc's default is 8 per core.
pub const ARENAS: i32 = 1;
/// Freed memory above this at the top of the heap goes back to the system.
pub const TRIM_THRESHOLD: i32 = 128 * 1024;

/// Whether this process is the API emulator (`restorewatch sim ...`, or the bench's emulator
/// role), from its arguments and environment alone: the limits are for a process that holds a
/// cluster's objects, not for the server that serves them. One arena made the emulator's
/// threads queue on one lock while serving parallel lists (a 250-object page of PVCs 69 -> 20
/// ms, every kind of the generated 20k listed in parallel 3.4 -> 1.4 s), which the bench then
/// counted as restorewatch's first-report time.
pub fn is_emulator(args: &[std::ffi::OsString], bench_role: Option<&std::ffi::OsStr>) -> bool {
    let subcommand = args
        .iter()
        .skip(1)
        .find(|a| !a.to_string_lossy().starts_with('-'));
    subcommand.is_some_and(|a| a == "sim") || bench_role.is_some_and(|r| r == "sim")
}

/// Sets the limits (Linux with glibc; elsewhere nothing) unless this is the emulator
/// (`is_emulator`). Call first thing in `main`, before the async runtime starts its threads.
pub fn apply_for_this_process() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let role = std::env::var_os(crate::bench::ROLE_ENV);
    if !is_emulator(&args, role.as_deref()) {
        apply();
    }
}

/// Sets the limits (Linux with glibc; elsewhere nothing). Call first thing in `main`, before
/// the async runtime starts its threads.
pub fn apply() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let unset = |var: &str| std::env::var_os(var).is_none();
        // SAFETY: mallopt only sets allocator parameters; it is called before any other
        // thread exists, so nothing allocates concurrently.
        unsafe {
            if unset("MALLOC_ARENA_MAX") {
                libc::mallopt(libc::M_ARENA_MAX, ARENAS);
            }
            if unset("MALLOC_TRIM_THRESHOLD_") {
                libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
            }
        }
    }
}

/// Gives the pages of freed memory inside the heap back to the system (glibc's `malloc_trim`,
/// which the trim threshold alone does not do: it only returns the top of the heap). A list
/// page is parsed into short-lived JSON interleaved with the objects kept from it, so the
/// page's memory, once freed, sits in holes between kept objects: resident, counted in RSS,
/// reused only by later allocations of its size. Called once each list is stored (measured on
/// the generated 20k cluster in docs/performance.md); not after each page: a trim walks the
/// whole heap, and per page it added ~0.1-1 s to the first report at 20k for no memory the
/// bench could see (43.7 vs 43.8 MiB peak).
pub fn release_free() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory to the system; it is thread-safe.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::{OsStr, OsString};

    fn args(a: &[&str]) -> Vec<OsString> {
        a.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_emulator_is_told_apart_from_the_processes_that_hold_objects() {
        assert!(is_emulator(&args(&["restorewatch", "sim", "serve"]), None));
        assert!(is_emulator(
            &args(&["restorewatch", "-v", "sim", "serve"]),
            None
        ));
        assert!(is_emulator(
            &args(&["restorewatch", "bench"]),
            Some(OsStr::new("sim"))
        ));
        assert!(!is_emulator(
            &args(&["restorewatch", "bench"]),
            Some(OsStr::new("worker"))
        ));
        assert!(!is_emulator(
            &args(&["restorewatch", "serve", "--context", "sim"]),
            None
        ));
        assert!(!is_emulator(&args(&["restorewatch"]), None));
        assert!(!is_emulator(&args(&["restorewatch", "check", "sim"]), None));
    }
}
