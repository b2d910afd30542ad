//! Fault injection, set at start (`--faults SPEC`) and changed at run time through
//! `FaultHandle`: reliability tests are made of these.

use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

use crate::sim::clock::parse_duration;
use crate::sim::status::ApiError;

/// The fault settings. SPEC syntax (comma-separated, any order):
/// `drop-watch=30s` every watch stream ends after 30s; `drop-watch-after=N` after N events;
/// `expire-watch` a watch resuming from a resourceVersion gets 410 Expired;
/// `error-rate=0.05` that fraction of API requests answer 500; `throttle-rate=0.05` answer 429
/// with `Retry-After` (`retry-after=1`, seconds); `latency=50ms` added to every API request;
/// `freeze` requests are accepted but not answered until unfrozen; `seed=7` for the
/// deterministic generator deciding which requests fail.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultSpec {
    pub drop_watch_every: Option<Duration>,
    pub drop_watch_after: Option<u64>,
    pub expire_watch: bool,
    pub error_rate: f64,
    pub throttle_rate: f64,
    pub retry_after: u32,
    pub latency: Duration,
    pub freeze: bool,
    pub seed: u64,
}

impl Default for FaultSpec {
    fn default() -> Self {
        FaultSpec {
            drop_watch_every: None,
            drop_watch_after: None,
            expire_watch: false,
            error_rate: 0.0,
            throttle_rate: 0.0,
            retry_after: 1,
            latency: Duration::ZERO,
            freeze: false,
            seed: 1,
        }
    }
}

pub const FAULT_SPEC_HELP: &str = "comma-separated faults: drop-watch=DURATION (end every watch \
stream after that long), drop-watch-after=N (after N events), expire-watch (410 Expired on every \
watch resume), error-rate=F (fraction 0..1 of API requests answered 500), throttle-rate=F (429 \
with Retry-After), retry-after=SECONDS (default 1), latency=DURATION (added to each API request), \
freeze (accept requests, never answer), seed=N (which requests fail is deterministic). \
Durations: 250ms, 2s, 1m. Example: drop-watch=30s,error-rate=0.05,latency=50ms";

impl FromStr for FaultSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut spec = FaultSpec::default();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (k, v) = match item.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim())),
                None => (item, None),
            };
            fn need<'a>(k: &str, v: Option<&'a str>) -> Result<&'a str, String> {
                v.ok_or_else(|| format!("fault {k:?} needs a value"))
            }
            let dur = |v: Option<&str>| -> Result<Duration, String> {
                let v = need(k, v)?;
                parse_duration(v).ok_or_else(|| format!("fault {k:?}: bad duration {v:?}"))
            };
            let rate = |v: Option<&str>| -> Result<f64, String> {
                let v = need(k, v)?;
                match v.parse::<f64>() {
                    Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
                    _ => Err(format!(
                        "fault {k:?}: expected a fraction between 0 and 1, got {v:?}"
                    )),
                }
            };
            let int = |v: Option<&str>| -> Result<u64, String> {
                let v = need(k, v)?;
                v.parse()
                    .map_err(|_| format!("fault {k:?}: expected a number, got {v:?}"))
            };
            match k {
                "drop-watch" => spec.drop_watch_every = Some(dur(v)?),
                "drop-watch-after" => spec.drop_watch_after = Some(int(v)?),
                "expire-watch" => spec.expire_watch = true,
                "error-rate" => spec.error_rate = rate(v)?,
                "throttle-rate" => spec.throttle_rate = rate(v)?,
                "retry-after" => spec.retry_after = int(v)? as u32,
                "latency" => spec.latency = dur(v)?,
                "freeze" => spec.freeze = true,
                "seed" => spec.seed = int(v)?,
                _ => return Err(format!("unknown fault {k:?}; {FAULT_SPEC_HELP}")),
            }
        }
        Ok(spec)
    }
}

struct State {
    spec: FaultSpec,
    rng: u64,
}

/// Shared fault state; clone freely (tests hold one, the server another).
#[derive(Clone)]
pub struct FaultHandle {
    state: Arc<Mutex<State>>,
    drop_generation: Arc<watch::Sender<u64>>,
    frozen: Arc<watch::Sender<bool>>,
}

impl FaultHandle {
    pub fn new(spec: FaultSpec) -> Self {
        let frozen = spec.freeze;
        FaultHandle {
            state: Arc::new(Mutex::new(State {
                rng: spec.seed,
                spec,
            })),
            drop_generation: Arc::new(watch::channel(0).0),
            frozen: Arc::new(watch::channel(frozen).0),
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut g)
    }

    pub fn spec(&self) -> FaultSpec {
        self.with(|s| s.spec.clone())
    }

    /// Replaces every setting at once (the RNG restarts from the new seed).
    pub fn set(&self, spec: FaultSpec) {
        let freeze = spec.freeze;
        self.with(|s| {
            s.rng = spec.seed;
            s.spec = spec;
        });
        self.frozen.send_replace(freeze);
    }

    pub fn update(&self, f: impl FnOnce(&mut FaultSpec)) {
        let mut spec = self.spec();
        let seed = spec.seed;
        f(&mut spec);
        let freeze = spec.freeze;
        self.with(|s| {
            if spec.seed != seed {
                s.rng = spec.seed;
            }
            s.spec = spec;
        });
        self.frozen.send_replace(freeze);
    }

    pub fn clear(&self) {
        self.set(FaultSpec::default());
    }

    /// Ends every open watch stream now (clients see the stream end and resume).
    pub fn drop_watches(&self) {
        self.drop_generation.send_modify(|g| *g += 1);
    }

    pub fn set_error_rate(&self, rate: f64) {
        self.update(|s| s.error_rate = rate);
    }

    pub fn set_throttle_rate(&self, rate: f64) {
        self.update(|s| s.throttle_rate = rate);
    }

    pub fn set_latency(&self, latency: Duration) {
        self.update(|s| s.latency = latency);
    }

    pub fn set_expire_watch(&self, on: bool) {
        self.update(|s| s.expire_watch = on);
    }

    pub fn set_drop_watch_after(&self, events: Option<u64>) {
        self.update(|s| s.drop_watch_after = events);
    }

    pub fn freeze(&self, on: bool) {
        self.update(|s| s.freeze = on);
    }

    pub(crate) fn drop_signal(&self) -> watch::Receiver<u64> {
        self.drop_generation.subscribe()
    }

    /// Waits while frozen.
    pub(crate) async fn wait_unfrozen(&self) {
        let mut rx = self.frozen.subscribe();
        // An error means the sender is gone, i.e. the server is shutting down: stop waiting.
        let _ = rx.wait_for(|f| !*f).await;
    }

    fn next_fraction(&self) -> (f64, FaultSpec) {
        self.with(|s| {
            s.rng = s.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s.rng;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            ((z >> 11) as f64 / (1u64 << 53) as f64, s.spec.clone())
        })
    }

    /// Applied before every API request: latency, freeze, then maybe a 500 or 429.
    pub(crate) async fn before_request(&self) -> Option<ApiError> {
        let spec = self.spec();
        if spec.latency > Duration::ZERO {
            tokio::time::sleep(spec.latency).await;
        }
        self.wait_unfrozen().await;
        if spec.error_rate <= 0.0 && spec.throttle_rate <= 0.0 {
            return None;
        }
        let (x, spec) = self.next_fraction();
        if x < spec.error_rate {
            Some(ApiError::internal(
                "restorewatch-sim: injected fault (error-rate)",
            ))
        } else if x < spec.error_rate + spec.throttle_rate {
            Some(ApiError::too_many_requests(spec.retry_after))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_parses() {
        let s: FaultSpec = "drop-watch=30s, error-rate=0.05,latency=50ms,expire-watch,seed=3"
            .parse()
            .unwrap();
        assert_eq!(s.drop_watch_every, Some(Duration::from_secs(30)));
        assert_eq!(s.error_rate, 0.05);
        assert_eq!(s.latency, Duration::from_millis(50));
        assert!(s.expire_watch);
        assert_eq!(s.seed, 3);
        assert!("error-rate=2".parse::<FaultSpec>().is_err());
        assert!("bogus".parse::<FaultSpec>().is_err());
        assert_eq!("".parse::<FaultSpec>(), Ok(FaultSpec::default()));
    }
}
