//! Live source: one watcher per kind feeding one store task, which applies changes, keeps each
//! kind's health, and hands the snapshot on with what changed (`SourceUpdate`). Nothing polls,
//! and nothing here analyses: `pipeline` turns the updates into analysed frames.

use super::client::{Timeouts, api_resource, status_code};
use super::controller_image::{self, ControllerImage};
use super::errors::{Endpoint, Failure, classify, describe_at, fmt_duration};
use super::raw_object::RawObject;
use super::velero_scope;
use super::watch_log::{Line, WatchLog};
use super::{KindHealth, ObjKey, Snapshot, SourceInfo, SyncState};
use crate::model::changes::Changes;
use crate::model::{AnyObject, KINDS, Kind, KindInfo, parse_watched};
use crate::text::one_line;
use futures::StreamExt;
use jiff::Timestamp;
use kube::api::Api;
use kube::runtime::watcher::{self, Event};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Reconnect delays after a failed watch: doubling from MIN to MAX; a 403 waits longest.
const BACKOFF_MIN: Duration = Duration::from_millis(500);
const BACKOFF_MAX: Duration = Duration::from_secs(30);
const BACKOFF_FORBIDDEN: Duration = Duration::from_secs(300);

/// What to watch and what to call it.
#[derive(Debug, Clone, Default)]
pub struct SourceOptions {
    /// `None`: every namespace.
    pub namespace: Option<String>,
    pub context: String,
    pub cluster: String,
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
    /// The backup controller's image as last read (`None`: no evidence), and whether it is the
    /// fallback Deployment's (`ControllerImage::is_fallback`).
    ControllerImage(Option<String>, bool),
    /// A scoped view's read of the generation's evidence in every namespace.
    BeyondScope(Option<Arc<Snapshot>>),
}

impl Change {
    /// Whether this changes what the snapshot holds of `kind` or knows of its watch.
    fn concerns(&self, kind: Kind) -> bool {
        match self {
            Change::Resync(k)
            | Change::Replace(k, _)
            | Change::Delete(k, _)
            | Change::Error(k, _)
            | Change::NotInstalled(k)
            | Change::Forbidden(k, _) => *k == kind,
            Change::Upsert(o) => o.kind() == kind,
            Change::ControllerImage(..) | Change::BeyondScope(_) => false,
        }
    }
}

/// Handles to the running source; dropping it stops every task.
pub struct WatchSource {
    /// One update per batch of changes; none until something changed.
    pub updates: mpsc::Receiver<SourceUpdate>,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for WatchSource {
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

/// Watches every kind. The client should come from `client::watch_client`, whose read timeout
/// is what notices a server that went silent.
pub fn start_watching(
    client: kube::Client,
    opts: SourceOptions,
    watch: WatchOptions,
) -> WatchSource {
    let (tx, rx) = mpsc::channel::<Change>(4096);
    let watch = Arc::new(watch);
    let scope = opts.namespace.as_deref();
    // Scoped to a namespace, the DataDownloads follow the UIDs of its Velero Restores.
    let (uids_tx, uids_rx) = tokio::sync::watch::channel(DownloadScope::Unknown);
    let mut tasks: Vec<JoinHandle<()>> = KINDS
        .iter()
        .map(|info| {
            if velero_scope::by_restore_uids(info.kind, scope) {
                tokio::spawn(watch_downloads(
                    client.clone(),
                    info,
                    uids_rx.clone(),
                    tx.clone(),
                    Arc::clone(&watch),
                ))
            } else {
                tokio::spawn(watch_kind(
                    client.clone(),
                    info,
                    velero_scope::read_in(info.kind, scope),
                    tx.clone(),
                    Arc::clone(&watch),
                ))
            }
        })
        .collect();
    tasks.push(tokio::spawn(read_controller_image(
        client.clone(),
        tx.clone(),
        Arc::clone(&watch),
    )));
    if scope.is_some() {
        tasks.push(tokio::spawn(read_beyond_scope(
            client.clone(),
            tx.clone(),
            Arc::clone(&watch),
        )));
    }
    drop(tx);
    let (update_tx, update_rx) = mpsc::channel(1);
    let source = SourceInfo::Live {
        context: opts.context.clone(),
        cluster: opts.cluster.clone(),
    };
    tasks.push(tokio::spawn(store_task(
        rx,
        update_tx,
        source,
        opts.namespace.clone(),
        scope.is_some().then_some(uids_tx),
    )));
    WatchSource {
        updates: update_rx,
        tasks,
    }
}

/// The backup controller's image: one GET at start and one every `REREAD_EVERY`, never a
/// watch (a context switch starts a new source, so it reads again at once). A refusal or a
/// failure is no evidence, said in the log when it starts or stops, and never stops anything.
async fn read_controller_image(
    client: kube::Client,
    tx: mpsc::Sender<Change>,
    watch: Arc<WatchOptions>,
) {
    let mut said: Option<String> = None;
    loop {
        let read = controller_image::read(
            &client,
            watch.endpoint.as_ref(),
            Some(
                watch
                    .timeouts
                    .request
                    .unwrap_or(controller_image::REREAD_EVERY / 20),
            ),
        )
        .await;
        let why = match &read {
            ControllerImage::Unreadable(e) => Some(e.clone()),
            _ => None,
        };
        if why != said {
            match &why {
                Some(e) => tracing::info!(
                    "the backup controller's Deployment cannot be read (its image is no evidence of the controller's generation): {}",
                    one_line(e)
                ),
                None if said.is_some() => {
                    tracing::info!("the backup controller's Deployment is readable again")
                }
                None => {}
            }
            said = why;
        }
        let image = read.image().map(str::to_string);
        if tx
            .send(Change::ControllerImage(image, read.is_fallback()))
            .await
            .is_err()
        {
            return;
        }
        tokio::time::sleep(controller_image::REREAD_EVERY).await;
    }
}

/// For a view scoped to one namespace, the controller's generation is judged as an unscoped
/// view judges it (`beyond_scope`): read at start and as often as the image, never watched.
async fn read_beyond_scope(
    client: kube::Client,
    tx: mpsc::Sender<Change>,
    watch: Arc<WatchOptions>,
) {
    let mut said = false;
    loop {
        let limit = watch
            .timeouts
            .request
            .unwrap_or(controller_image::REREAD_EVERY / 20);
        let read = match super::beyond_scope::read(&client, Some(limit)).await {
            Ok(b) => Some(b),
            Err(e) => {
                if !said {
                    tracing::info!(
                        "the controller's generation is judged from the watched namespace alone: {}",
                        one_line(&e)
                    );
                    said = true;
                }
                None
            }
        };
        if tx.send(Change::BeyondScope(read)).await.is_err() {
            return;
        }
        tokio::time::sleep(controller_image::REREAD_EVERY).await;
    }
}

fn to_object(info: &KindInfo, obj: RawObject) -> Option<AnyObject> {
    let mut value = obj.value;
    if let Some(o) = value.as_object_mut() {
        // Watch events carry apiVersion/kind, but list items may not: set them from the table.
        o.insert("apiVersion".into(), info.api_version().into());
        o.insert("kind".into(), info.api_kind.into());
    }
    parse_watched(value).ok()
}

fn key_of(obj: &RawObject) -> ObjKey {
    ObjKey::new(
        obj.metadata.namespace.clone().unwrap_or_default(),
        obj.metadata.name.clone().unwrap_or_default(),
    )
}

/// Listed Events buffered between two trims to their bound (`snapshot::bound_events`).
const EVENTS_TRIM_STEP: usize = 2_000;

/// What a scoped view knows of its Velero Restores, for the DataDownloads' watch.
#[derive(Debug, Clone, PartialEq, Eq)]
enum DownloadScope {
    /// The Restores are not listed yet (or not now): the DataDownloads stay unknown.
    Unknown,
    /// Velero is not installed.
    NotInstalled,
    /// The Restores cannot be read: neither can their DataDownloads be told apart.
    Forbidden(String),
    /// The UIDs of the namespace's Restores, as last listed.
    Uids(std::collections::BTreeSet<String>),
}

impl DownloadScope {
    /// From the snapshot: the Restores' UIDs once their kind is listed.
    fn of(s: &Snapshot) -> Option<DownloadScope> {
        match s.health.get(&Kind::VeleroRestore).map(|h| &h.state) {
            Some(SyncState::Synced) => Some(DownloadScope::Uids(velero_scope::restore_uids(s))),
            Some(SyncState::NotInstalled) => Some(DownloadScope::NotInstalled),
            Some(SyncState::Forbidden { error }) => Some(DownloadScope::Forbidden(error.clone())),
            // Relisting or down: keep watching what was selected last.
            _ => None,
        }
    }
}

/// The DataDownloads of a scoped view's Velero Restores: a watch selecting their UIDs, begun
/// again (a fresh list) whenever the set changes; none to watch without a Restore.
async fn watch_downloads(
    client: kube::Client,
    info: &'static KindInfo,
    mut uids: tokio::sync::watch::Receiver<DownloadScope>,
    tx: mpsc::Sender<Change>,
    watch: Arc<WatchOptions>,
) {
    loop {
        let now = uids.borrow_and_update().clone();
        let mut running: Vec<JoinHandle<()>> = Vec::new();
        let sent = match now {
            DownloadScope::Unknown => Ok(()),
            DownloadScope::NotInstalled => tx.send(Change::NotInstalled(info.kind)).await,
            DownloadScope::Forbidden(e) => {
                let why = format!(
                    "the DataDownloads of this namespace's restores are found through their Velero Restores, which cannot be read: {e}"
                );
                tx.send(Change::Forbidden(info.kind, why)).await
            }
            DownloadScope::Uids(set) => {
                let selectors = velero_scope::downloads_selectors(&set);
                match selectors.as_slice() {
                    // No Restore of this namespace: no DataDownload of theirs either.
                    [] => tx.send(Change::Replace(info.kind, Vec::new())).await,
                    // One selector covers them (UIDS_PER_SELECTOR restores per namespace).
                    [labels, ..] => {
                        if selectors.len() > 1 {
                            tracing::warn!(
                                "{} Velero Restores in one namespace: only the DataDownloads of the first {} are watched",
                                set.len(),
                                velero_scope::UIDS_PER_SELECTOR
                            );
                        }
                        let at = velero_scope::ReadIn {
                            namespace: Some(crate::model::names::VELERO_NAMESPACE.to_string()),
                            labels: Some(labels.clone()),
                        };
                        running.push(tokio::spawn(watch_kind(
                            client.clone(),
                            info,
                            at,
                            tx.clone(),
                            Arc::clone(&watch),
                        )));
                        Ok(())
                    }
                }
            }
        };
        if sent.is_err() {
            return;
        }
        let changed = uids.changed().await;
        for t in running {
            t.abort();
        }
        if changed.is_err() {
            return;
        }
    }
}

async fn watch_kind(
    client: kube::Client,
    info: &'static KindInfo,
    at: velero_scope::ReadIn,
    tx: mpsc::Sender<Change>,
    watch: Arc<WatchOptions>,
) {
    let ar = api_resource(info);
    let api: Api<RawObject> = match (&at.namespace, info.namespaced) {
        (Some(ns), true) => Api::namespaced_with(client, ns, &ar),
        _ => Api::all_with(client, &ar),
    };
    // The server ends each watch after this; the watch client's read timeout (this plus a
    // margin) ends one that went silent.
    let secs = u32::try_from(watch.timeouts.watch.as_secs().max(1)).unwrap_or(u32::MAX);
    let mut config = watcher::Config::default().page_size(250).timeout(secs);
    if info.kind == Kind::Event {
        // Only the restore's own events are read; all events of a busy cluster are many.
        config = config.fields("involvedObject.kind=RestoreJob");
    }
    if let Some(labels) = &at.labels {
        config = config.labels(labels);
    }
    // After an error the stream is rebuilt (a fresh LIST) rather than resumed: a resumed watch
    // on a quiet kind sends nothing, so nothing would ever tell that it is healthy again; the
    // relist ends in InitDone and also catches what was missed meanwhile.
    let mut backoff = BACKOFF_MIN;
    let mut health_log = WatchLog::default();
    loop {
        let mut stream = watcher::watcher(api.clone(), config.clone()).boxed();
        let mut buffer: Vec<AnyObject> = Vec::new();
        let mut trim_at = EVENTS_TRIM_STEP;
        let mut failure: Option<(Option<u16>, String)> = None;
        // While listing, each page answers within --request-timeout like `check`'s lists; the
        // watch client's own read timeout is the (much longer) idle limit of a watch.
        let mut listing = true;
        loop {
            let next = match watch.timeouts.request.filter(|_| listing) {
                Some(limit) => match tokio::time::timeout(limit, stream.next()).await {
                    Ok(next) => next,
                    Err(_) => {
                        failure = Some((None, list_timed_out(&watch, limit)));
                        break;
                    }
                },
                None => stream.next().await,
            };
            let Some(item) = next else { break };
            let change = match item {
                Ok(Event::Init) => {
                    listing = true;
                    buffer.clear();
                    trim_at = EVENTS_TRIM_STEP;
                    Change::Resync(info.kind)
                }
                Ok(Event::InitApply(o)) => {
                    if let Some(obj) = to_object(info, o) {
                        buffer.push(obj);
                    }
                    // Events are bounded while they are listed, not only once stored: a
                    // relist in a flood would hold every one of them first.
                    if info.kind == Kind::Event && buffer.len() >= trim_at {
                        buffer = crate::model::snapshot::bound_events(std::mem::take(&mut buffer));
                        trim_at = buffer.len() * 2 + EVENTS_TRIM_STEP;
                    }
                    continue;
                }
                Ok(Event::InitDone) => {
                    listing = false;
                    backoff = BACKOFF_MIN;
                    if let Some(line) = health_log.listed(Timestamp::now()) {
                        log_health(info, &watch, line);
                    }
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
        if code != Some(404)
            && let Some(line) = health_log.failed(Timestamp::now(), &error)
        {
            log_health(info, &watch, line);
        }
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

/// One line of a watch's health in the log (see `watch_log` for when).
fn log_health(info: &KindInfo, watch: &WatchOptions, line: Line) {
    let resource = info.resource_name();
    let server = watch
        .endpoint
        .as_ref()
        .map_or("the API server", |a| a.server.as_str());
    let what = format!("watch of {resource} on {server}");
    match line {
        Line::Down { since, error } => {
            tracing::warn!("{what} is down since {since}: {}", one_line(&error))
        }
        Line::StillDown {
            since,
            error,
            failures,
        } => tracing::warn!(
            "{what} is still down since {since} (failed attempts: {failures}): {}",
            one_line(&error)
        ),
        Line::Back { after, failures } => tracing::info!(
            "{what} is back after {} down (failed attempts: {failures})",
            fmt_duration(Duration::try_from(after).unwrap_or_default())
        ),
    }
}

fn list_timed_out(watch: &WatchOptions, limit: Duration) -> String {
    let server = watch
        .endpoint
        .as_ref()
        .map_or("the API server", |a| a.server.as_str());
    format!(
        "no answer to the list from {server} within {} (--request-timeout)",
        fmt_duration(limit)
    )
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

/// The newest snapshot and what changed since the one handed out before it.
#[derive(Debug, Clone)]
pub struct SourceUpdate {
    pub snapshot: Arc<Snapshot>,
    pub changes: Changes,
}

/// Applies watch changes to the snapshot and hands it over with what changed. While the
/// consumer is busy, changes keep folding into one pending update, so it never falls behind by
/// more than one picture, and a change that arrives after a quiet period goes out at once.
async fn store_task(
    mut rx: mpsc::Receiver<Change>,
    updates: mpsc::Sender<SourceUpdate>,
    source: SourceInfo,
    scope: Option<String>,
    uids: Option<tokio::sync::watch::Sender<DownloadScope>>,
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
    let mut pending: Option<Changes> = None;
    loop {
        tokio::select! {
            change = rx.recv() => {
                let Some(change) = change else { return };
                let s = Arc::make_mut(&mut snap);
                let changes = pending.get_or_insert_with(Changes::default);
                // The Restores' UIDs are gathered again only when they can have changed: on a
                // cluster of 1,000 restores that was a set of 1,000 strings per changed PVC.
                let mut restores_moved = change.concerns(Kind::VeleroRestore);
                apply(s, change, changes);
                // Drain whatever else is queued: one update per batch.
                while let Ok(more) = rx.try_recv() {
                    restores_moved |= more.concerns(Kind::VeleroRestore);
                    apply(s, more, changes);
                }
                // A reread that found the same image changed nothing: nothing to hand on.
                if pending.as_ref().is_some_and(Changes::is_empty) {
                    pending = None;
                }
                if let Some(tx) = &uids
                    && restores_moved
                    && let Some(now) = DownloadScope::of(&snap)
                {
                    tx.send_if_modified(|was| {
                        let changed = *was != now;
                        *was = now;
                        changed
                    });
                }
            }
            permit = updates.reserve(), if pending.is_some() => {
                let Ok(permit) = permit else { return };
                if let Some(changes) = pending.take() {
                    permit.send(SourceUpdate { snapshot: Arc::clone(&snap), changes });
                }
            }
        }
    }
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

fn apply(s: &mut Snapshot, change: Change, changes: &mut Changes) {
    let now = Timestamp::now();
    match change {
        Change::Resync(kind) => {
            changes.health = true;
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
            s.objects.replace(kind, objs);
            // The list's own buffers are gone now: give their pages back.
            crate::malloc_tuning::release_free();
            set_state(s, kind, SyncState::Synced);
            changes.kind(kind);
            changes.health = true;
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
            changes.object(kind, ObjKey::new(m.namespace.clone(), m.name.clone()));
            super::changes::track(&s.objects, &mut obj, now);
            s.objects.insert(obj);
            changes.health |= mark_live(s, kind, now);
        }
        Change::Delete(kind, key) => {
            remember_deletion(s, kind, &key, now);
            s.objects.remove(kind, &key);
            changes.health |= mark_live(s, kind, now);
            changes.object(kind, key);
        }
        Change::Error(kind, error) => {
            changes.health = true;
            set_state(s, kind, SyncState::Resyncing { since: now, error })
        }
        Change::NotInstalled(kind) => {
            changes.health = true;
            set_state(s, kind, SyncState::NotInstalled)
        }
        Change::Forbidden(kind, error) => {
            changes.health = true;
            set_state(s, kind, SyncState::Forbidden { error })
        }
        Change::BeyondScope(read) => {
            // Replaced whole; a read that found the same evidence changes nothing visible, but
            // the generation is judged again (cheap: a few objects).
            if s.beyond_scope.is_some() || read.is_some() {
                s.beyond_scope = read;
                changes.health = true;
            }
        }
        Change::ControllerImage(image, fallback) => {
            if s.controller_image != image || s.controller_image_fallback != fallback {
                s.controller_image = image;
                s.controller_image_fallback = fallback;
                // The generation is cluster-wide and findings are phrased for it: every
                // namespace's findings may read differently.
                changes.health = true;
            }
        }
    }
}

/// Keeps a tombstone of an object about to leave the store (not of Events: they expire by the
/// hundred and say nothing about why an object is gone).
fn remember_deletion(s: &mut Snapshot, kind: Kind, key: &ObjKey, now: Timestamp) {
    if kind == Kind::Event {
        return;
    }
    if let Some(m) = s.objects.meta(kind, key) {
        let t = crate::model::tombstones::Tombstone::of(kind, key.clone(), m, now);
        s.tombstones.push(t);
    }
}

/// Returns whether the kind's state changed (not only its last event time).
fn mark_live(s: &mut Snapshot, kind: Kind, now: Timestamp) -> bool {
    let mut changed = false;
    if let Some(h) = s.health.get_mut(&kind) {
        if !matches!(h.state, SyncState::Synced) {
            h.state = SyncState::Synced;
            changed = true;
        }
        h.last_event = Some(now);
    }
    changed
}
