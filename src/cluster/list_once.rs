//! One LIST of every watched kind, for `check` without `--snapshot`.

use super::client::{api_resource, connect, status_code};
use super::{KindHealth, Snapshot, SourceInfo, SyncState};
use crate::cli::common::ClusterArgs;
use crate::model::{KINDS, Kind, parse_object};
use kube::api::{Api, DynamicObject, ListParams};

pub async fn snapshot(args: &ClusterArgs) -> anyhow::Result<Snapshot> {
    let conn = connect(args).await?;
    let mut snap = Snapshot {
        source: SourceInfo::Live {
            context: conn.context.clone(),
            cluster: conn.cluster_url.clone(),
        },
        scope: args.namespace.clone(),
        ..Snapshot::default()
    };
    let lists = KINDS.iter().map(|info| {
        let client = conn.client.clone();
        let ns = args.namespace.clone();
        async move {
            let ar = api_resource(info);
            let api: Api<DynamicObject> = match (&ns, info.namespaced) {
                (Some(ns), true) => Api::namespaced_with(client, ns, &ar),
                _ => Api::all_with(client, &ar),
            };
            let mut params = ListParams::default().limit(500);
            if info.kind == Kind::Event {
                params = params.fields("involvedObject.kind=RestoreJob");
            }
            let mut items = Vec::new();
            loop {
                let page = api.list(&params).await;
                match page {
                    Ok(list) => {
                        let next = list.metadata.continue_.clone().filter(|c| !c.is_empty());
                        items.extend(list.items);
                        match next {
                            Some(c) => params = params.continue_token(&c),
                            None => break,
                        }
                    }
                    Err(e) => return (info.kind, Err(e)),
                }
            }
            (info.kind, Ok(items))
        }
    });
    let results = futures::future::join_all(lists).await;
    let mut failures = Vec::new();
    for (kind, result) in results {
        let state = match result {
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
                SyncState::Synced
            }
            Err(e) => match status_code(&e) {
                Some(404) => SyncState::NotInstalled,
                Some(403) => {
                    failures.push(format!("no access to {}", kind.info().plural));
                    SyncState::Forbidden {
                        error: e.to_string(),
                    }
                }
                _ => {
                    failures.push(format!("{}: {e}", kind.info().plural));
                    SyncState::Failed {
                        since: jiff::Timestamp::now(),
                        error: e.to_string(),
                    }
                }
            },
        };
        snap.health.insert(
            kind,
            KindHealth {
                state,
                last_event: None,
            },
        );
    }
    if !failures.is_empty()
        && snap
            .health
            .values()
            .all(|h| !matches!(h.state, SyncState::Synced))
    {
        anyhow::bail!(
            "cannot list anything from {}: {}",
            conn.context,
            failures.join("; ")
        );
    }
    for f in failures {
        crate::say_err!("restorewatch: warning: {f} (findings built on it are marked stale)");
    }
    Ok(snap)
}
