//! The large answers (`/report`, `/metrics`), built once per frame and shared by every request
//! for it: a client that asks and reads slowly, or never, holds a reference to the one body,
//! not a copy of its own. `/metrics` carries ages, so it is rebuilt at most once a second too.
//!
//! A body is held only while some response still sends it: between requests nothing is kept
//! (the slot holds a `Weak`). On the real server's 20k objects a `/metrics` body is 1.4 MiB,
//! and the text format is made from the OpenMetrics one: holding both until the next scrape
//! was ~150 bytes per object of `serve`'s memory for answers nobody was reading (issue 28);
//! the next scrape comes seconds later and would rebuild them anyway, ages having moved.

use bytes::Bytes;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// Which frame a body was built for (`None`: before the first).
pub type FrameKey = Option<u64>;

type Slot<K> = Mutex<Option<(K, Weak<Body>)>>;

/// One built body; `Bytes` handed to responses keep it alive.
struct Body(Vec<u8>);

impl AsRef<[u8]> for Body {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// Lets `Bytes::from_owner` hold the shared body (it needs an owner that is `AsRef<[u8]>`).
struct Held(Arc<Body>);

impl AsRef<[u8]> for Held {
    fn as_ref(&self) -> &[u8] {
        &self.0.0
    }
}

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
        if let Some((k, weak)) = &*slot
            && *k == key
            && let Some(body) = weak.upgrade()
        {
            return Bytes::from_owner(Held(body));
        }
        let body = Arc::new(Body(build().into_bytes()));
        self.built.fetch_add(body.0.len() as u64, Ordering::Relaxed);
        *slot = Some((key, Arc::downgrade(&body)));
        Bytes::from_owner(Held(body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A body of 1,000 `ch`s, counting the builds in `builds`.
    fn counted<'a>(builds: &'a Cell<u32>, ch: &'a str) -> impl Fn() -> String + Copy + 'a {
        move || {
            builds.set(builds.get() + 1);
            ch.repeat(1000)
        }
    }

    #[test]
    fn requests_of_one_frame_share_the_body_while_one_is_still_being_sent() {
        let bodies = Bodies::default();
        let builds = Cell::new(0);
        let build = counted(&builds, "x");
        let first = bodies.report(Some(1), build);
        let second = bodies.report(Some(1), build);
        assert_eq!(
            builds.get(),
            1,
            "the second request shares the first's body"
        );
        assert_eq!(first.as_ptr(), second.as_ptr(), "one copy, not two");
        assert_eq!(bodies.bytes_built(), 1000);
    }

    #[test]
    fn no_body_is_held_once_every_response_that_sent_it_is_gone() {
        let bodies = Bodies::default();
        let builds = Cell::new(0);
        let build = counted(&builds, "m");
        let sent = bodies.metrics(Some(1), 7, build);
        let weak = match &*bodies.metrics.lock().unwrap_or_else(|p| p.into_inner()) {
            Some((_, w)) => w.clone(),
            None => Weak::new(),
        };
        assert!(weak.upgrade().is_some(), "held while a response holds it");
        drop(sent);
        assert!(weak.upgrade().is_none(), "freed once the response is sent");
        let again = bodies.metrics(Some(1), 7, build);
        assert_eq!(
            builds.get(),
            2,
            "built again: nothing was kept between requests"
        );
        assert_eq!(&again[..], "m".repeat(1000).as_bytes());
    }

    #[test]
    fn a_new_frame_or_second_builds_a_new_body() {
        let bodies = Bodies::default();
        let a = bodies.metrics(Some(1), 7, || "a".into());
        let b = bodies.metrics(Some(1), 8, || "b".into());
        let c = bodies.metrics(Some(2), 8, || "c".into());
        assert_eq!((&a[..], &b[..], &c[..]), (&b"a"[..], &b"b"[..], &b"c"[..]));
    }
}
