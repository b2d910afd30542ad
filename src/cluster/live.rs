//! Live source: one watcher per kind feeding one store task, which applies changes, keeps each
//! kind's health, and publishes an analysed frame at most ~30 times a second. Nothing polls:
//! without changes the only work is a re-analysis once a second, for clocks and deadlines.

use super::client::{Timeouts, api_resource, status_code};
use super::errors::{Endpoint, Failure, classify, describe_at, fmt_duration};
use super::feed::{Frame, FrameRx};
use super::{KindHealth, ObjKey, Snapshot, SourceInfo, SyncState};
use crate::analysis::{Settings, analyze};
use crate::model::{AnyObject, KINDS, Kind, KindInfo, parse_object};
use futures::StreamExt;
use jiff::Timestamp;
use kube::api::{Api, DynamicObject};
use kube::runtime::watcher::{self, Event};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

/// How often a frame may be published while changes stream in (~30 fps).
const MIN_FRAME_INTERVAL: Duration = Duration::from_millis(33);
/// Re-analysis without changes, so that stalls (10 min), watch-stale (30 s) and deadlines move
/// on. Ages on screen come from the UI's own clock, so this need not be every second: at 20k
/// objects with 200 restores in flight one analysis is ~9 ms, i.e. ~1% of a core at 1 s.
const TICK: Duration = Duration::from_secs(5);
/// Reconnect delays after a failed watch: doubling from MIN to MAX; a 403 waits longest.
const BACKOFF_MIN: Duration = Duration::from_millis(500);
const BACKOFF_MAX: Duration = Duration::from_secs(30);
const BACKOFF_FORBIDDEN: Duration = Duration::from_secs(300);

pub struct LiveOptions {
    pub namespace: Option<String>,
    pub context: String,
    pub cluster: String,
    pub settings: Settings,
}

enum Change {
    /// A relist began: the kind is (re)syncing.
    Resync(Kind),
    /// A complete list: replaces every object of the kind.
    Replace(Kind, Vec<AnyObject>),
    Upsert(Box<AnyObject>),
    Delete(Kind, ObjKey),
    Error(Kind, String),
    NotInstalled(Kind),
    Forbidden(Kind, String),
}

/// Handles to the running source; dropping it stops every task.
pub struct LiveSource {
    pub frames: FrameRx,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for LiveSource {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// How the watches run: their timeouts, and the server error messages name.
#[derive(Debug, Clone, Default)]
pub struct WatchOptions {
    pub timeouts: Timeouts,
    pub endpoint: Option<Endpoint>,
}

/// Watches with the default timeouts. The client should come from `client::watch_client`,
/// whose read timeout is what notices a server that went silent.
pub fn start(client: kube::Client, opts: LiveOptions) -> LiveSource {
    start_watching(client, opts, WatchOptions::default())
}

pub fn start_watching(client: kube::Client, opts: LiveOptions, watch: WatchOptions) -> LiveSource {
    let (tx, rx) = mpsc::channel::<Change>(4096);
    let watch = Arc::new(watch);
    let mut tasks: Vec<JoinHandle<()>> = KINDS
        .iter()
        .map(|info| {
            tokio::spawn(watch_kind(
                client.clone(),
                info,
                opts.namespace.clone(),
                tx.clone(),
                Arc::clone(&watch),
            ))
        })
        .collect();
    drop(tx);
    let (frame_tx, frame_rx) = watch::channel(None);
    let source = SourceInfo::Live {
        context: opts.context.clone(),
        cluster: opts.cluster.clone(),
    };
    let mut settings = opts.settings;
    // Live frames arrive mid-rename: give a rename in flight a few seconds before calling it
    // half done.
    if settings.rename_grace.is_zero() {
        settings.rename_grace = jiff::SignedDuration::from_secs(5);
    }
    tasks.push(tokio::spawn(store_task(
        rx,
        frame_tx,
        source,
        settings,
        opts.namespace.clone(),
    )));
    LiveSource {
        frames: frame_rx,
        tasks,
    }
}

fn to_object(info: &KindInfo, obj: DynamicObject) -> Option<AnyObject> {
    let mut v = serde_json::to_value(obj).ok()?;
    if let Some(o) = v.as_object_mut() {
        // Watch events carry apiVersion/kind, but list items may not: set them from the table.
        o.insert("apiVersion".into(), info.api_version().into());
        o.insert("kind".into(), info.api_kind.into());
    }
    parse_object(v).ok()
}

fn key_of(obj: &DynamicObject) -> ObjKey {
    ObjKey::new(
        obj.metadata.namespace.clone().unwrap_or_default(),
        obj.metadata.name.clone().unwrap_or_default(),
    )
}

async fn watch_kind(
    client: kube::Client,
    info: &'static KindInfo,
    namespace: Option<String>,
    tx: mpsc::Sender<Change>,
    watch: Arc<WatchOptions>,
) {
    let ar = api_resource(info);
    let api: Api<DynamicObject> = match (&namespace, info.namespaced) {
        (Some(ns), true) => Api::namespaced_with(client, ns, &ar),
        _ => Api::all_with(client, &ar),
    };
    // The server ends each watch after this; the watch client's read timeout (this plus a
    // margin) ends one that went silent.
    let secs = u32::try_from(watch.timeouts.watch.as_secs().max(1)).unwrap_or(u32::MAX);
    let mut config = watcher::Config::default().page_size(500).timeout(secs);
    if info.kind == Kind::Event {
        // Only the restore's own events are read; all events of a busy cluster are many.
        config = config.fields("involvedObject.kind=RestoreJob");
    }
    // After an error the stream is rebuilt (a fresh LIST) rather than resumed: a resumed watch
    // on a quiet kind sends nothing, so nothing would ever tell that it is healthy again; the
    // relist ends in InitDone and also catches what was missed meanwhile.
    let mut backoff = BACKOFF_MIN;
    loop {
        let mut stream = watcher::watcher(api.clone(), config.clone()).boxed();
        let mut buffer: Vec<AnyObject> = Vec::new();
        let mut failure: Option<(Option<u16>, String)> = None;
        while let Some(item) = stream.next().await {
            let change = match item {
                Ok(Event::Init) => {
                    buffer.clear();
                    Change::Resync(info.kind)
                }
                Ok(Event::InitApply(o)) => {
                    if let Some(obj) = to_object(info, o) {
                        buffer.push(obj);
                    }
                    continue;
                }
                Ok(Event::InitDone) => {
                    backoff = BACKOFF_MIN;
                    Change::Replace(info.kind, std::mem::take(&mut buffer))
                }
                Ok(Event::Apply(o)) => match to_object(info, o) {
                    Some(obj) => Change::Upsert(Box::new(obj)),
                    None => continue,
                },
                Ok(Event::Delete(o)) => Change::Delete(info.kind, key_of(&o)),
                Err(e) => {
                    let code = match &e {
                        watcher::Error::InitialListFailed(e)
                        | watcher::Error::WatchStartFailed(e)
                        | watcher::Error::WatchFailed(e) => status_code(e),
                        watcher::Error::WatchError(s) => Some(s.code),
                        watcher::Error::NoResourceVersion => None,
                    };
                    failure = Some((code, describe_watch_error(&e, &watch)));
                    break;
                }
            };
            if tx.send(change).await.is_err() {
                return;
            }
        }
        let (code, error) = failure.unwrap_or((None, "the watch stream ended".into()));
        let change = match code {
            // Not installed: say so once and stop; a restart picks it up if it gets installed.
            Some(404) => {
                let _ = tx.send(Change::NotInstalled(info.kind)).await;
                return;
            }
            // No access: report it, then ask again only rarely.
            Some(403) => {
                backoff = BACKOFF_FORBIDDEN;
                Change::Forbidden(info.kind, error)
            }
            _ => Change::Error(info.kind, error),
        };
        if tx.send(change).await.is_err() {
            return;
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(BACKOFF_MAX).max(BACKOFF_MIN);
    }
}

/// A watch failure in words: a silent stream says how long it was silent.
fn describe_watch_error(e: &watcher::Error, watch: &WatchOptions) -> String {
    let at = watch.endpoint.as_ref();
    let server = at.map_or("the API server", |a| a.server.as_str());
    match e {
        watcher::Error::InitialListFailed(k) if classify(k) == Failure::TimedOut => format!(
            "no answer to the list from {server} within {}",
            fmt_duration(watch.timeouts.watch_idle())
        ),
        watcher::Error::WatchStartFailed(k) | watcher::Error::WatchFailed(k)
            if classify(k) == Failure::TimedOut =>
        {
            format!(
                "the watch on {server} sent nothing (no event, no bookmark) for {}: the server stopped answering",
                fmt_duration(watch.timeouts.watch_idle())
            )
        }
        watcher::Error::InitialListFailed(k) => format!("list: {}", describe_at(k, at)),
        watcher::Error::WatchStartFailed(k) | watcher::Error::WatchFailed(k) => {
            format!("watch: {}", describe_at(k, at))
        }
        watcher::Error::WatchError(s) => {
            format!("watch: {}", super::errors::describe_status(s))
        }
        watcher::Error::NoResourceVersion => {
            "the server's list carried no resourceVersion to watch from".into()
        }
    }
}

async fn store_task(
    mut rx: mpsc::Receiver<Change>,
    frames: watch::Sender<Option<Arc<Frame>>>,
    source: SourceInfo,
    settings: Settings,
    scope: Option<String>,
) {
    let mut snap = Snapshot {
        source,
        scope,
        ..Snapshot::default()
    };
    for k in Kind::all() {
        snap.health.insert(
            k,
            KindHealth {
                state: SyncState::Syncing,
                last_event: None,
            },
        );
    }
    let mut snap = Arc::new(snap);
    let mut seq = 0u64;
    let mut dirty = false;
    let mut last_publish = tokio::time::Instant::now() - MIN_FRAME_INTERVAL;
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let deadline = last_publish + MIN_FRAME_INTERVAL;
        tokio::select! {
            change = rx.recv() => {
                let Some(change) = change else { return };
                let s = Arc::make_mut(&mut snap);
                apply(s, change);
                // Drain whatever else is queued before deciding to publish: one frame per batch.
                while let Ok(more) = rx.try_recv() {
                    apply(s, more);
                }
                dirty = true;
            }
            // Armed only when a publish can follow: while kinds are still listing, a past
            // deadline would wake this loop over and over for nothing.
            _ = tokio::time::sleep_until(deadline), if dirty && all_listed(&snap) => {}
            _ = tick.tick() => {
                // Time moves even when objects do not: stalls, deadlines, watch-stale.
                if !dirty && seq > 0 {
                    publish(&frames, &snap, &settings, &mut seq);
                    continue;
                }
            }
        }
        if dirty
            && tokio::time::Instant::now() >= last_publish + MIN_FRAME_INTERVAL
            && all_listed(&snap)
        {
            publish(&frames, &snap, &settings, &mut seq);
            last_publish = tokio::time::Instant::now();
            dirty = false;
        }
    }
}

/// The first frame waits until every kind has listed once (or is known absent), so that an
/// empty table never means "not loaded yet".
fn all_listed(snap: &Snapshot) -> bool {
    snap.health
        .values()
        .all(|h| !matches!(h.state, SyncState::Syncing))
}

fn publish(
    frames: &watch::Sender<Option<Arc<Frame>>>,
    snap: &Arc<Snapshot>,
    settings: &Settings,
    seq: &mut u64,
) {
    let now = Timestamp::now();
    let report = analyze(snap, settings, now);
    *seq += 1;
    frames.send_replace(Some(Arc::new(Frame {
        seq: *seq,
        snapshot: Arc::clone(snap),
        report: Arc::new(report),
        analyzed_at: now,
    })));
}

fn set_state(s: &mut Snapshot, kind: Kind, state: SyncState) {
    let h = s.health.entry(kind).or_insert(KindHealth {
        state: SyncState::Syncing,
        last_event: None,
    });
    // Keep the first failure time while failures continue: "down since T".
    let state = match (&h.state, state) {
        (
            SyncState::Resyncing { since, .. } | SyncState::Failed { since, .. },
            SyncState::Resyncing { error, .. },
        ) => {
            if Timestamp::now().duration_since(*since).as_secs() > 30 {
                SyncState::Failed {
                    since: *since,
                    error,
                }
            } else {
                SyncState::Resyncing {
                    since: *since,
                    error,
                }
            }
        }
        (_, st) => st,
    };
    h.state = state;
}

fn apply(s: &mut Snapshot, change: Change) {
    let now = Timestamp::now();
    match change {
        Change::Resync(kind) => {
            // A relist after a synced state keeps the old objects visible, marked as resyncing.
            let was_synced = s
                .health
                .get(&kind)
                .is_some_and(|h| h.state == SyncState::Synced);
            if was_synced {
                set_state(
                    s,
                    kind,
                    SyncState::Resyncing {
                        since: now,
                        error: "relisting".into(),
                    },
                );
            }
        }
        Change::Replace(kind, mut objs) => {
            // A relist keeps (and extends) what each object's history already holds.
            objs.iter_mut()
                .for_each(|o| super::changes::track(&s.objects, o, now));
            let keys: Vec<ObjKey> = s.objects.keys(kind).into_iter().collect();
            // What a relist no longer holds was deleted while the watch was away.
            let listed: std::collections::BTreeSet<(&str, &str)> = objs
                .iter()
                .map(|o| (o.meta().namespace.as_str(), o.meta().name.as_str()))
                .collect();
            for k in &keys {
                if !listed.contains(&(k.namespace.as_str(), k.name.as_str())) {
                    remember_deletion(s, kind, k, now);
                }
            }
            for k in keys {
                s.objects.remove(kind, &k);
            }
            for o in objs {
                s.objects.insert(o);
            }
            set_state(s, kind, SyncState::Synced);
            if let Some(h) = s.health.get_mut(&kind) {
                h.last_event = Some(now);
            }
        }
        Change::Upsert(obj) => {
            let mut obj = *obj;
            let kind = obj.kind();
            // The watch saw it change now: what stall detection needs when managedFields
            // carry no time for status writes.
            let m = obj.meta_mut();
            m.last_change = Some(m.last_change.map_or(now, |t| t.max(now)));
            super::changes::track(&s.objects, &mut obj, now);
            s.objects.insert(obj);
            mark_live(s, kind, now);
        }
        Change::Delete(kind, key) => {
            remember_deletion(s, kind, &key, now);
            s.objects.remove(kind, &key);
            mark_live(s, kind, now);
        }
        Change::Error(kind, error) => {
            set_state(s, kind, SyncState::Resyncing { since: now, error })
        }
        Change::NotInstalled(kind) => set_state(s, kind, SyncState::NotInstalled),
        Change::Forbidden(kind, error) => set_state(s, kind, SyncState::Forbidden { error }),
    }
}

/// Keeps a tombstone of an object about to leave the store (not of Events: they expire by the
/// hundred and say nothing about why an object is gone).
fn remember_deletion(s: &mut Snapshot, kind: Kind, key: &ObjKey, now: Timestamp) {
    if kind == Kind::Event {
        return;
    }
    if let Some(m) = s.objects.meta(kind, key) {
        let t = super::snapshot::Tombstone {
            kind,
            key: key.clone(),
            uid: m.uid.clone(),
            at: now,
            owners: m.owners.clone(),
        };
        s.tombstones.push(t);
    }
}

fn mark_live(s: &mut Snapshot, kind: Kind, now: Timestamp) {
    if let Some(h) = s.health.get_mut(&kind) {
        if !matches!(h.state, SyncState::Synced) {
            h.state = SyncState::Synced;
        }
        h.last_event = Some(now);
    }
}
