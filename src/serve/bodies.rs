//! The large answers (`/report`, `/metrics`), built once per frame and shared by every request
//! for it: a client that asks and reads slowly, or never, holds a reference to the one body,
//! not a copy of its own. `/metrics` carries ages, so it is rebuilt at most once a second too.

use bytes::Bytes;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Which frame a body was built for (`None`: before the first).
pub type FrameKey = Option<u64>;

type Slot<K> = Mutex<Option<(K, Bytes)>>;

#[derive(Default)]
pub struct Bodies {
    report: Slot<FrameKey>,
    metrics: Slot<(FrameKey, i64)>,
    metrics_text: Slot<(FrameKey, i64)>,
    built: AtomicU64,
}

impl Bodies {
    pub fn report(&self, frame: FrameKey, build: impl FnOnce() -> String) -> Bytes {
        self.shared(&self.report, frame, build)
    }

    /// `second`: the clock second the exposition's ages are computed for.
    pub fn metrics(&self, frame: FrameKey, second: i64, build: impl FnOnce() -> String) -> Bytes {
        self.shared(&self.metrics, (frame, second), build)
    }

    /// The same exposition in the text format, from [`Bodies::metrics`]'s.
    pub fn metrics_text(
        &self,
        frame: FrameKey,
        second: i64,
        build: impl FnOnce() -> String,
    ) -> Bytes {
        self.shared(&self.metrics_text, (frame, second), build)
    }

    /// Bytes of bodies built so far: what requests cost in memory beyond one shared copy.
    pub fn bytes_built(&self) -> u64 {
        self.built.load(Ordering::Relaxed)
    }

    fn shared<K: PartialEq>(
        &self,
        slot: &Slot<K>,
        key: K,
        build: impl FnOnce() -> String,
    ) -> Bytes {
        // Held while building, so that requests arriving together wait for one build instead
        // of each making their own.
        let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((k, body)) = &*slot
            && *k == key
        {
            return body.clone();
        }
        let body = Bytes::from(build());
        self.built.fetch_add(body.len() as u64, Ordering::Relaxed);
        *slot = Some((key, body.clone()));
        body
    }
}
