//! What a view scoped to one namespace reads beyond it, for the one judgement that is
//! cluster-wide: the backup controller's generation. Its evidence (`analysis::controller`) is
//! in `-orig` PVCs and RestoreJobs of every namespace, so a scoped read judged from its own
//! namespace alone disagreed with an unscoped one at the same moment (preflight said `unknown`
//! where check said `unguarded`). Two lists, where RBAC allows: every RestoreJob, and the
//! metadata of every PVC (only `-orig` ones are kept). Refused or failed, the generation is
//! judged from the namespace alone, as before; nothing else waits on it.

use super::client::api_resource;
use crate::model::names::parse_orig_name;
use crate::model::snapshot::Snapshot;
use crate::model::{Kind, parse_object};
use kube::api::{Api, DynamicObject, ListParams};
use std::sync::Arc;
use std::time::Duration;

/// The RestoreJobs and `-orig` PVCs of every namespace, or why not.
pub async fn read(client: &kube::Client, limit: Option<Duration>) -> Result<Arc<Snapshot>, String> {
    let work = read_unbounded(client);
    match limit {
        Some(l) => tokio::time::timeout(l, work)
            .await
            .unwrap_or_else(|_| Err(format!("no answer within {} s", l.as_secs()))),
        None => work.await,
    }
}

async fn read_unbounded(client: &kube::Client) -> Result<Arc<Snapshot>, String> {
    let rj = Kind::RestoreJob.info();
    let rjs: Api<DynamicObject> = Api::all_with(client.clone(), &api_resource(rj));
    let pvc = Kind::PersistentVolumeClaim.info();
    let pvcs: Api<DynamicObject> = Api::all_with(client.clone(), &api_resource(pvc));
    let params = ListParams::default();
    let (rjs, pvcs) = futures::future::join(rjs.list(&params), pvcs.list_metadata(&params)).await;
    let rjs = rjs.map_err(|e| format!("RestoreJobs: {e}"))?;
    let pvcs = pvcs.map_err(|e| format!("PVC metadata: {e}"))?;
    let mut snap = Snapshot::default();
    for item in rjs.items {
        let mut v = serde_json::to_value(item).unwrap_or_default();
        v["apiVersion"] = rj.api_version().into();
        v["kind"] = rj.api_kind.into();
        if let Ok(o) = parse_object(v) {
            snap.objects.insert(o);
        }
    }
    for item in pvcs.items {
        if item
            .metadata
            .name
            .as_deref()
            .and_then(parse_orig_name)
            .is_none()
        {
            continue;
        }
        let v = serde_json::json!({
            "apiVersion": pvc.api_version(), "kind": pvc.api_kind,
            "metadata": serde_json::to_value(&item.metadata).unwrap_or_default(),
        });
        if let Ok(o) = parse_object(v) {
            snap.objects.insert(o);
        }
    }
    Ok(Arc::new(snap))
}
