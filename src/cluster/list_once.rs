//! One LIST of every watched kind, for `check` without `--snapshot`.
//!
//! Transient failures (5xx, 429, a reset connection) are retried with backoff, within a bounded
//! time; a kind that still cannot be listed is reported as unreadable, never as "no objects":
//! its health says it never listed, so the analysis concludes nothing from its absence.

use super::client::{ConnectOptions, Connection, api_resource, connect};
use super::controller_image::{self, ControllerImage};
use super::errors::{Endpoint, Failure, classify, describe_at};
use super::velero_scope;
use super::{KindHealth, Snapshot, SourceInfo, SyncState};
use crate::model::{KINDS, Kind, KindInfo, parse_object};
use kube::api::{Api, DynamicObject, ListParams, ObjectList};
use std::time::Duration;

/// How hard to try before calling a kind unreadable.
#[derive(Debug, Clone, Copy)]
pub struct Retry {
    /// Attempts per request, the first included.
    pub attempts: u32,
    pub first_delay: Duration,
    pub max_delay: Duration,
    /// The most a server's `Retry-After` is waited for; a longer one gives up at once.
    pub max_retry_after: Duration,
}

impl Default for Retry {
    fn default() -> Self {
        Retry {
            attempts: 6,
            first_delay: Duration::from_millis(200),
            max_delay: Duration::from_secs(5),
            max_retry_after: Duration::from_secs(10),
        }
    }
}

/// A kind that could not be listed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    pub kind: Kind,
    pub error: String,
    pub forbidden: bool,
}

impl Unreadable {
    pub fn plural(&self) -> &'static str {
        self.kind.info().plural
    }
}

/// What one pass over every kind gave.
pub struct Listed {
    /// Carries the backup controller's image when it could be read.
    pub snapshot: Snapshot,
    /// What reading the backup controller's Deployment gave (why there is no image, if none).
    pub controller_image: ControllerImage,
    pub unreadable: Vec<Unreadable>,
    pub endpoint: Endpoint,
    pub context: String,
}

/// Every kind, listed once; kinds that failed are in the snapshot's health as never listed.
pub async fn snapshot(args: impl Into<ConnectOptions>) -> anyhow::Result<Snapshot> {
    Ok(list_all(args, Retry::default()).await?.snapshot)
}

pub async fn list_all(args: impl Into<ConnectOptions>, retry: Retry) -> anyhow::Result<Listed> {
    let args = args.into();
    let conn = connect(args.clone()).await?;
    list_with(&conn, args.namespace.as_deref(), retry).await
}

pub async fn list_with(
    conn: &Connection,
    namespace: Option<&str>,
    retry: Retry,
) -> anyhow::Result<Listed> {
    let mut snap = Snapshot {
        source: SourceInfo::Live {
            context: conn.context.clone(),
            cluster: conn.cluster_url.clone(),
        },
        scope: namespace.map(str::to_string),
        ..Snapshot::default()
    };
    // Scoped to a namespace, DataDownloads are read by their Restores' UIDs, once those are in.
    let lists = KINDS
        .iter()
        .filter(|info| !velero_scope::by_restore_uids(info.kind, namespace))
        .map(|info| async move { (info.kind, list_kind(conn, info, namespace, retry).await) });
    // The controller's image is read beside the lists, not after them: it never adds a wait;
    // so is, for a scoped view, the generation's evidence in the other namespaces.
    let image = controller_image::read(&conn.client, Some(&conn.endpoint), conn.timeouts.request);
    let beyond = async {
        match namespace {
            Some(_) => Some(super::beyond_scope::read(&conn.client, conn.timeouts.request).await),
            None => None,
        }
    };
    let ((mut results, image), beyond) = futures::future::join(
        futures::future::join(futures::future::join_all(lists), image),
        beyond,
    )
    .await;
    match beyond {
        Some(Ok(b)) => snap.beyond_scope = Some(b),
        Some(Err(e)) => tracing::info!(
            "the controller's generation is judged from namespace {} alone: {e}",
            namespace.unwrap_or_default()
        ),
        None => {}
    }
    if let Some(ns) = namespace {
        let restores = results
            .iter()
            .find(|(k, _)| *k == Kind::VeleroRestore)
            .map(|(_, r)| r);
        let downloads = downloads_of(conn, ns, restores, retry).await;
        results.push((Kind::DataDownload, downloads));
    }
    snap.controller_image = image.image().map(str::to_string);
    snap.controller_image_fallback = image.is_fallback();
    let mut unreadable = Vec::new();
    let now = jiff::Timestamp::now();
    for (kind, result) in results {
        let (state, last_event) = match result {
            Ok(items) => {
                for item in items {
                    let mut v = serde_json::to_value(item).unwrap_or_default();
                    if let Some(o) = v.as_object_mut() {
                        let info = kind.info();
                        o.insert("apiVersion".into(), info.api_version().into());
                        o.insert("kind".into(), info.api_kind.into());
                    }
                    if let Ok(obj) = parse_object(v) {
                        snap.objects.insert(obj);
                    }
                }
                (SyncState::Synced, Some(now))
            }
            Err(e) => {
                let error = describe_at(&e, Some(&conn.endpoint));
                match classify(&e) {
                    Failure::Api { code: 404 } => (SyncState::NotInstalled, None),
                    Failure::Api { code: 403 } => {
                        unreadable.push(Unreadable {
                            kind,
                            error: error.clone(),
                            forbidden: true,
                        });
                        (SyncState::Forbidden { error }, None)
                    }
                    _ => {
                        unreadable.push(Unreadable {
                            kind,
                            error: error.clone(),
                            forbidden: false,
                        });
                        // No `last_event`: this kind never listed, its objects are unknown.
                        (SyncState::Failed { since: now, error }, None)
                    }
                }
            }
        };
        snap.health.insert(kind, KindHealth { state, last_event });
    }
    if !unreadable.is_empty()
        && snap
            .health
            .values()
            .all(|h| !matches!(h.state, SyncState::Synced))
    {
        // Every kind failed alike (down, frozen, TLS): one line, not eighteen.
        let mut errors: Vec<&str> = unreadable.iter().map(|u| u.error.as_str()).collect();
        errors.sort();
        errors.dedup();
        anyhow::bail!(
            "cannot list anything from context {} ({}): {}",
            conn.context,
            conn.endpoint.server,
            errors.join("; ")
        );
    }
    Ok(Listed {
        snapshot: snap,
        controller_image: image,
        unreadable,
        endpoint: conn.endpoint.clone(),
        context: conn.context.clone(),
    })
}

pub(crate) async fn list_kind(
    conn: &Connection,
    info: &'static KindInfo,
    namespace: Option<&str>,
    retry: Retry,
) -> Result<Vec<DynamicObject>, kube::Error> {
    let mut items = list_in(
        conn,
        info,
        &velero_scope::read_in(info.kind, namespace),
        retry,
    )
    .await?;
    if let Some(ns) = namespace
        && info.kind == Kind::VeleroRestore
    {
        // Selected by the namespace label, a Restore without it would be missing from a
        // scoped view although the analysis attributes it (a predecessor's that restored
        // nothing): those named for this namespace are read too.
        let unlabelled = list_in(conn, info, &velero_scope::unlabelled_restores(), retry).await?;
        items.extend(unlabelled.into_iter().filter(|o| {
            o.metadata
                .name
                .as_deref()
                .is_some_and(|n| velero_scope::named_for(n, ns))
        }));
    }
    Ok(items)
}

/// One kind listed where and as `at` says (every page, with retries).
pub(crate) async fn list_in(
    conn: &Connection,
    info: &'static KindInfo,
    at: &velero_scope::ReadIn,
    retry: Retry,
) -> Result<Vec<DynamicObject>, kube::Error> {
    let ar = api_resource(info);
    let api: Api<DynamicObject> = match (&at.namespace, info.namespaced) {
        (Some(ns), true) => Api::namespaced_with(conn.client.clone(), ns, &ar),
        _ => Api::all_with(conn.client.clone(), &ar),
    };
    let mut params = ListParams::default().limit(500);
    if info.kind == Kind::Event {
        params = params.fields("involvedObject.kind=RestoreJob");
    }
    if let Some(labels) = &at.labels {
        params = params.labels(labels);
    }
    let mut items = Vec::new();
    loop {
        let list = with_retry(retry, || api.list(&params)).await?;
        let next = list.metadata.continue_.clone().filter(|c| !c.is_empty());
        items.extend(list.items);
        match next {
            Some(c) => params = params.continue_token(&c),
            None => return Ok(items),
        }
    }
}

/// The DataDownloads of namespace `ns`'s Velero Restores (as `restores` listed them): by
/// their UIDs; none without a Restore. A failure to list the Restores is the DataDownloads'
/// too: which ones are this namespace's cannot be told without them.
async fn downloads_of(
    conn: &Connection,
    ns: &str,
    restores: Option<&Result<Vec<DynamicObject>, kube::Error>>,
    retry: Retry,
) -> Result<Vec<DynamicObject>, kube::Error> {
    let restores = match restores {
        Some(Ok(r)) => r,
        Some(Err(e)) => return Err(why_downloads_unknown(e)),
        None => return Ok(Vec::new()),
    };
    let uids: std::collections::BTreeSet<String> = restores
        .iter()
        .filter_map(|r| r.metadata.uid.clone())
        .collect();
    tracing::debug!(
        namespace = ns,
        restores = uids.len(),
        "listing their DataDownloads"
    );
    let info = Kind::DataDownload.info();
    let mut out = Vec::new();
    for labels in velero_scope::downloads_selectors(&uids) {
        let at = velero_scope::ReadIn {
            namespace: Some(crate::model::names::VELERO_NAMESPACE.to_string()),
            labels: Some(labels),
        };
        out.extend(list_in(conn, info, &at, retry).await?);
    }
    Ok(out)
}

/// The Restores' failure, as the DataDownloads' (same code: a 403 stays a 403, a 404 a 404).
fn why_downloads_unknown(e: &kube::Error) -> kube::Error {
    match e {
        kube::Error::Api(s) => {
            let mut s = s.clone();
            s.message = format!(
                "the DataDownloads of this namespace's restores are found through their Velero Restores, which could not be read: {}",
                s.message
            );
            kube::Error::Api(s)
        }
        other => kube::Error::Service(other.to_string().into()),
    }
}

/// Whether a failure may pass if asked again: the server said so (429, 5xx) or the
/// connection broke. Not a timeout: a frozen server would only multiply the wait.
pub fn is_transient(e: &kube::Error) -> bool {
    match classify(e) {
        Failure::Api { code } => code == 429 || (500..=599).contains(&code),
        Failure::Reset => true,
        _ => false,
    }
}

/// How long the server asked to wait (`retryAfterSeconds` of a 429 or 503 Status).
fn retry_after(e: &kube::Error) -> Option<Duration> {
    match e {
        kube::Error::Api(s) => s
            .details
            .as_ref()
            .map(|d| d.retry_after_seconds)
            .filter(|s| *s > 0)
            .map(|s| Duration::from_secs(u64::from(s))),
        _ => None,
    }
}

async fn with_retry<F, Fut>(
    retry: Retry,
    mut request: F,
) -> Result<ObjectList<DynamicObject>, kube::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<ObjectList<DynamicObject>, kube::Error>>,
{
    let mut delay = retry.first_delay;
    let mut attempt = 1;
    loop {
        match request().await {
            Ok(v) => return Ok(v),
            Err(e) if attempt < retry.attempts && is_transient(&e) => {
                let wait = match retry_after(&e) {
                    Some(w) if w > retry.max_retry_after => return Err(e),
                    Some(w) => w,
                    None => delay,
                };
                tracing::debug!(attempt, ?wait, error = %e, "list failed; retrying");
                tokio::time::sleep(wait).await;
                delay = (delay * 2).min(retry.max_delay);
                attempt += 1;
            }
            Err(e) => return Err(e),
        }
    }
}
