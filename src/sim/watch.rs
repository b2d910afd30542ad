//! Watch streams: newline-delimited `{"type", "object"}` events, replay from a resourceVersion,
//! 410 Expired for versions the history no longer holds, bookmarks, timeouts, selectors applied
//! per event (an object leaving the selection is sent as DELETED), and the watch faults.
//!
//! Bookmarks and timeouts follow kube-apiserver's watch cache, because a long-running watcher
//! feels both: a bookmark once per `bookmark_interval` (a minute by default, as the real server
//! sends them) and one more two seconds before the watch's deadline, so that the client resumes
//! from a fresh version; the stream ends at `timeoutSeconds`, or, when the client gives none (or
//! 0), after a random time between the minimum request timeout and twice that (30-60 minutes by
//! default), as the real server ends `kubectl get -w`.

use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc, watch};
use tokio::time::Instant;

use crate::model::Kind;
use crate::sim::faults::FaultHandle;
use crate::sim::selectors::Filter;
use crate::sim::status::ApiError;
use crate::sim::store::{Change, ChangeType, Store};
use crate::sim::table::{IncludeObject, table};

/// What the query string asked of a watch.
#[derive(Debug, Clone)]
pub struct WatchParams {
    /// `None` = "" or "0": start with the current objects as ADDED.
    pub since: Option<u64>,
    pub bookmarks: bool,
    /// When the server ends the stream: `timeoutSeconds`, or the default the handler drew.
    pub timeout: Option<Duration>,
    pub send_initial_events: bool,
    pub table: Option<IncludeObject>,
}

/// How an event looks through a filter: the real server turns "stopped matching" into DELETED
/// and "started matching" into ADDED.
pub fn filtered(change: &Change, filter: &Filter) -> Option<ChangeType> {
    let now = filter.matches(&change.object);
    match change.typ {
        ChangeType::Added | ChangeType::Deleted => now.then_some(change.typ),
        ChangeType::Modified => {
            let before = change.previous.as_ref().is_some_and(|p| filter.matches(p));
            match (before, now) {
                (true, true) => Some(ChangeType::Modified),
                (false, true) => Some(ChangeType::Added),
                (true, false) => Some(ChangeType::Deleted),
                (false, false) => None,
            }
        }
    }
}

/// One event line, `type` first as the real server writes it (a JSON map would sort it after
/// `object`).
fn line(typ: &str, object: Value) -> Bytes {
    Bytes::from(format!("{{\"type\":\"{typ}\",\"object\":{object}}}\n"))
}

pub fn error_line(err: &ApiError) -> Bytes {
    line("ERROR", err.to_status())
}

fn bookmark(kind: Kind, rv: u64, initial_end: bool) -> Bytes {
    let info = kind.info();
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    line(
        "BOOKMARK",
        json!({"kind": info.api_kind, "apiVersion": info.api_version(), "metadata": meta}),
    )
}

/// How long before its deadline a watch gets its last bookmark (the watch cache's
/// `nextBookmarkTime`): a client that resumes after the timeout then replays seconds of
/// changes, not up to a minute of them.
pub const PRE_TIMEOUT_BOOKMARK: Duration = Duration::from_secs(2);

/// When the bookmark after `from` (the watch's start or the last bookmark) is due, as the real
/// watch cache schedules it: `interval` later, but no later than `PRE_TIMEOUT_BOOKMARK` before
/// the deadline; none once that moment is not after `from` (so a watch of 2 s or less gets
/// none, and the last one comes 2 s before the end).
pub fn next_bookmark(
    from: Instant,
    interval: Duration,
    deadline: Option<Instant>,
) -> Option<Instant> {
    let periodic = from + interval;
    let Some(deadline) = deadline else {
        return Some(periodic);
    };
    let pre_timeout = deadline.checked_sub(PRE_TIMEOUT_BOOKMARK)?;
    let at = periodic.min(pre_timeout);
    (at > from).then_some(at)
}

pub struct WatchTask {
    pub store: Store,
    pub faults: FaultHandle,
    pub kind: Kind,
    pub filter: Filter,
    pub params: WatchParams,
    pub bookmark_interval: Duration,
    /// `FaultHandle::drop_signal` as of the request's arrival (see `Req::drops`).
    pub drops: watch::Receiver<u64>,
}

impl WatchTask {
    fn event(&self, change: &Change, typ: ChangeType) -> Bytes {
        let object = match self.params.table {
            Some(include) => table(
                self.kind,
                std::slice::from_ref(&change.object),
                include,
                json!({"resourceVersion": change.rv.to_string()}),
            ),
            None => change.object.clone(),
        };
        line(typ.as_str(), object)
    }

    /// Starts the stream: the receiver is the response body. Errors that a real server sends
    /// inside a 200 watch (410 Expired) come through the stream too.
    pub fn start(self) -> mpsc::Receiver<Bytes> {
        let (tx, rx) = mpsc::channel::<Bytes>(256);
        tokio::spawn(async move {
            self.run(tx).await;
        });
        rx
    }

    async fn run(self, tx: mpsc::Sender<Bytes>) {
        // The real server counts the timeout from the request, initial events included.
        let start = Instant::now();
        let spec = self.faults.spec();
        if spec.expire_watch && self.params.since.is_some() {
            let _ = tx
                .send(error_line(&ApiError::expired(
                    "too old resource version (restorewatch-sim fault: expire-watch)",
                )))
                .await;
            return;
        }
        let since = if self.params.send_initial_events {
            None
        } else {
            self.params.since
        };
        let sub = match self.store.subscribe(self.kind, since) {
            Ok(s) => s,
            Err(e) => {
                let _ = tx.send(error_line(&e)).await;
                return;
            }
        };
        let mut rx = sub.rx;
        let mut sent: u64 = 0;
        let drop_after = spec.drop_watch_after;
        for change in &sub.initial {
            if let Some(typ) = filtered(change, &self.filter) {
                if tx.send(self.event(change, typ)).await.is_err() {
                    return;
                }
                sent += 1;
                if drop_after.is_some_and(|n| sent >= n) {
                    return;
                }
            }
        }
        if self.params.send_initial_events
            && self.params.bookmarks
            && tx
                .send(bookmark(self.kind, sub.current_rv, true))
                .await
                .is_err()
        {
            return;
        }
        let far = start + Duration::from_secs(365 * 24 * 3600);
        let deadline = self.params.timeout.map(|t| start + t);
        let drop_at = spec.drop_watch_every.map_or(far, |d| start + d);
        let end_at = deadline.unwrap_or(far).min(drop_at);
        let mut drop_signal = self.drops.clone();
        let wants_bookmarks = self.params.bookmarks && self.params.table.is_none();
        let mut next_bm =
            next_bookmark(start, self.bookmark_interval, deadline).filter(|_| wants_bookmarks);
        loop {
            tokio::select! {
                msg = rx.recv() => match msg {
                    Ok(change) => {
                        if let Some(typ) = filtered(&change, &self.filter) {
                            self.faults.wait_unfrozen().await;
                            if tx.send(self.event(&change, typ)).await.is_err() {
                                return;
                            }
                            sent += 1;
                            let limit = self.faults.spec().drop_watch_after.or(drop_after);
                            if limit.is_some_and(|n| sent >= n) {
                                return;
                            }
                        }
                    }
                    // Too slow to keep up: end the stream, the client resumes (or relists on 410).
                    Err(broadcast::error::RecvError::Lagged(_)) | Err(broadcast::error::RecvError::Closed) => return,
                },
                _ = tokio::time::sleep_until(next_bm.unwrap_or(far)), if next_bm.is_some() => {
                    // Scheduled from when it was due, not from when it went out: no drift.
                    next_bm = next_bm.and_then(|due| next_bookmark(due, self.bookmark_interval, deadline));
                    // Read the version first, then flush what the channel already holds: every
                    // change up to that version is then sent before the bookmark.
                    let rv = self.store.current_rv();
                    loop {
                        match rx.try_recv() {
                            Ok(change) => {
                                if let Some(typ) = filtered(&change, &self.filter)
                                    && tx.send(self.event(&change, typ)).await.is_err()
                                {
                                    return;
                                }
                            }
                            Err(broadcast::error::TryRecvError::Empty) => break,
                            Err(_) => return,
                        }
                    }
                    if tx.send(bookmark(self.kind, rv, false)).await.is_err() {
                        return;
                    }
                }
                _ = tokio::time::sleep_until(end_at) => return,
                _ = drop_signal.changed() => return,
                _ = tx.closed() => return,
            }
        }
    }
}

/// `watch=true` or `watch=1`.
pub fn is_watch(query: &std::collections::HashMap<String, String>) -> bool {
    matches!(query.get("watch").map(String::as_str), Some("true" | "1"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every bookmark a watch gets, as offsets from its start.
    fn schedule(interval: u64, timeout: Option<u64>) -> Vec<u64> {
        let start = Instant::now();
        let deadline = timeout.map(|t| start + Duration::from_secs(t));
        let mut out = Vec::new();
        let mut next = next_bookmark(start, Duration::from_secs(interval), deadline);
        while let Some(at) = next.filter(|_| out.len() < 10) {
            out.push((at - start).as_secs());
            next = next_bookmark(at, Duration::from_secs(interval), deadline);
        }
        out
    }

    /// A watch admitted before `drop_watches` but whose stream starts after it is one of the
    /// open streams the drop ends: a client that listed, then sent its watch as the API went
    /// down, must see its stream end, as on a real server that restarts (the live test of a
    /// broken watch waited 30 s for a PVC watch that had slipped through here).
    #[tokio::test]
    async fn a_watch_admitted_before_a_drop_ends_even_if_its_stream_starts_after() {
        let faults = FaultHandle::new(crate::sim::faults::FaultSpec::default());
        let task = |drops| WatchTask {
            store: Store::new(100, 1),
            faults: faults.clone(),
            kind: Kind::PersistentVolumeClaim,
            filter: Filter::default(),
            params: WatchParams {
                since: None,
                bookmarks: false,
                timeout: Some(Duration::from_secs(60)),
                send_initial_events: false,
                table: None,
            },
            bookmark_interval: Duration::from_secs(60),
            drops,
        };
        let admitted = task(faults.drop_signal());
        faults.drop_watches();
        let mut stream = admitted.start();
        let ended = tokio::time::timeout(Duration::from_secs(5), stream.recv()).await;
        assert!(matches!(ended, Ok(None)), "the stream must end: {ended:?}");

        // A watch admitted after the drop stays open.
        let mut later = task(faults.drop_signal()).start();
        let open = tokio::time::timeout(Duration::from_millis(200), later.recv()).await;
        assert!(open.is_err(), "a later watch must stay open: {open:?}");
    }

    #[test]
    fn bookmarks_come_each_interval_and_once_more_two_seconds_before_the_timeout() {
        // restorewatch's own watches (60 s) on a real server: one bookmark, at 58 s.
        assert_eq!(schedule(60, Some(60)), [58]);
        assert_eq!(schedule(60, Some(300)), [60, 120, 180, 240, 298]);
        assert_eq!(schedule(1, Some(6)), [1, 2, 3, 4]);
        assert_eq!(schedule(5, Some(2)), Vec::<u64>::new());
        assert_eq!(schedule(60, None).len(), 10, "no deadline, no end");
    }
}
