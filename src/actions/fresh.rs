//! Fresh reads: what a plan depends on, fetched straight from the API (never the watch cache),
//! and planning from them until the set of reads is stable.

use super::plan::{Plan, plan};
use super::write::brief;
use crate::analysis::ObjRef;
use crate::cluster::Snapshot;
use crate::cluster::client::api_resource;
use crate::model::{Kind, parse_object};
use kube::api::{Api, DynamicObject, ListParams};
use serde_json::Value;

pub(crate) fn api_for(client: &kube::Client, r: &ObjRef) -> Api<DynamicObject> {
    let info = r.kind.info();
    let ar = api_resource(info);
    if info.namespaced {
        Api::namespaced_with(client.clone(), &r.namespace, &ar)
    } else {
        Api::all_with(client.clone(), &ar)
    }
}

fn to_value(kind: Kind, obj: DynamicObject) -> Option<Value> {
    let mut v = serde_json::to_value(obj).ok()?;
    let o = v.as_object_mut()?;
    o.insert("apiVersion".into(), kind.info().api_version().into());
    o.insert("kind".into(), kind.info().api_kind.into());
    Some(v)
}

/// A snapshot of exactly what the plan reads, fetched now.
pub async fn fresh_snapshot(
    client: &kube::Client,
    reads: &[ObjRef],
    namespaces: &[String],
) -> anyhow::Result<Snapshot> {
    let mut snap = Snapshot::default();
    for r in reads.iter().filter(|r| r.name.is_empty()) {
        let list = api_for(client, r)
            .list(&ListParams::default())
            .await
            .map_err(|e| {
                anyhow::anyhow!(
                    "cannot list {} in {}: {}",
                    r.kind.info().plural,
                    r.namespace,
                    brief(&e)
                )
            })?;
        for o in list.items {
            if let Some(obj) = to_value(r.kind, o).and_then(|v| parse_object(v).ok()) {
                snap.objects.insert(obj);
            }
        }
        // Listed: an object missing from it is known to be absent (a proof may hang on that).
        mark_listed(&mut snap, r.kind);
    }
    for r in reads.iter().filter(|r| !r.name.is_empty()) {
        match api_for(client, r).get_opt(&r.name).await {
            Ok(Some(o)) => {
                if let Some(obj) = to_value(r.kind, o).and_then(|v| parse_object(v).ok()) {
                    snap.objects.insert(obj);
                }
            }
            Ok(None) => {}
            Err(e) => anyhow::bail!("cannot read {r}: {}", brief(&e)),
        }
    }
    // Lookups by hash or by mount need the namespace's RestoreJobs and Pods, the controller's
    // events about RestoreJobs (evidence of earlier attempts), and the classes.
    for ns in namespaces {
        for kind in [Kind::RestoreJob, Kind::Pod, Kind::Event] {
            let api: Api<DynamicObject> =
                Api::namespaced_with(client.clone(), ns, &api_resource(kind.info()));
            let lp = if kind == Kind::Event {
                ListParams::default().fields("involvedObject.kind=RestoreJob")
            } else {
                ListParams::default()
            };
            let list = match api.list(&lp).await {
                Ok(l) => l,
                // Events are evidence, not state: an operator who may not list them can still
                // act, and the plan treats what they would have told as unknown.
                Err(e) if kind == Kind::Event => {
                    snap.health.insert(
                        Kind::Event,
                        crate::cluster::snapshot::KindHealth {
                            state: crate::cluster::SyncState::Forbidden { error: brief(&e) },
                            last_event: None,
                        },
                    );
                    continue;
                }
                Err(e) => {
                    anyhow::bail!("cannot list {} in {ns}: {}", kind.info().plural, brief(&e))
                }
            };
            mark_listed(&mut snap, kind);
            for o in list.items {
                if let Some(obj) = to_value(kind, o).and_then(|v| parse_object(v).ok()) {
                    snap.objects.insert(obj);
                }
            }
        }
    }
    let sc: Api<DynamicObject> =
        Api::all_with(client.clone(), &api_resource(Kind::StorageClass.info()));
    if let Ok(list) = sc.list(&ListParams::default()).await {
        for o in list.items {
            if let Some(obj) = to_value(Kind::StorageClass, o).and_then(|v| parse_object(v).ok()) {
                snap.objects.insert(obj);
            }
        }
    }
    Ok(snap)
}

fn mark_listed(snap: &mut Snapshot, kind: Kind) {
    snap.health
        .entry(kind)
        .or_insert(crate::cluster::snapshot::KindHealth {
            state: crate::cluster::SyncState::Synced,
            last_event: None,
        });
}

/// Plans from fresh reads only (no watch cache): reads what the plan asks for until the set of
/// reads is stable. `Ok(Err(refusal))` when the action is refused.
pub async fn plan_fresh(
    client: &kube::Client,
    req: &super::ActionRequest,
) -> anyhow::Result<Result<Plan, super::Refusal>> {
    let namespaces = vec![req.target.namespace().to_string()];
    let mut reads: Vec<ObjRef> = Vec::new();
    // Each round can only add objects; a handful of rounds covers restore -> disks -> PVs.
    for _ in 0..8 {
        let snap = fresh_snapshot(client, &reads, &namespaces).await?;
        match plan(&snap, req) {
            Ok(p) if p.reads.iter().all(|r| reads.contains(r)) => return Ok(Ok(p)),
            Ok(p) => {
                reads.extend(p.reads);
                reads.sort();
                reads.dedup();
            }
            Err(refusal) => {
                // A refusal made before what it looked at was read is not the final word.
                if refusal.reads.iter().all(|r| reads.contains(r)) {
                    return Ok(Err(refusal));
                }
                reads.extend(refusal.reads);
                reads.sort();
                reads.dedup();
            }
        }
    }
    anyhow::bail!("the objects this action depends on keep changing; try again")
}
