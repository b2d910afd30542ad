//! Watch streams: newline-delimited `{"type", "object"}` events, replay from a resourceVersion,
//! 410 Expired for versions the history no longer holds, bookmarks, timeouts, selectors applied
//! per event (an object leaving the selection is sent as DELETED), and the watch faults.

use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};
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

fn line(typ: &str, object: Value) -> Bytes {
    let mut s = json!({"type": typ, "object": object}).to_string();
    s.push('\n');
    Bytes::from(s)
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

pub struct WatchTask {
    pub store: Store,
    pub faults: FaultHandle,
    pub kind: Kind,
    pub filter: Filter,
    pub params: WatchParams,
    pub bookmark_interval: Duration,
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
        let start = Instant::now();
        let far = start + Duration::from_secs(365 * 24 * 3600);
        let timeout_at = self.params.timeout.map_or(far, |t| start + t);
        let drop_at = spec.drop_watch_every.map_or(far, |d| start + d);
        let end_at = timeout_at.min(drop_at);
        let mut drop_signal = self.faults.drop_signal();
        drop_signal.mark_unchanged();
        let mut bookmarks =
            tokio::time::interval_at(start + self.bookmark_interval, self.bookmark_interval);
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
                _ = bookmarks.tick(), if self.params.bookmarks && self.params.table.is_none() => {
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
