//! `orig-bind-stuck`: a rename whose writes are all done, waiting for the PV controller to bind
//! the `-orig` PVC far longer than the binder's resync would take, and what holds the bind.

use super::codes::Code;
use super::ctx::Ctx;
use super::disks::{Disk, Rename};
use super::emit::Findings;
use super::report::ObjRef;
use crate::model::objects::{Pv, Pvc};
use crate::model::quantity::bytes;
use crate::model::{Kind, Obj};
use jiff::SignedDuration;

/// The PV controller retries an unbound claim on its resync, ~15 s on a real cluster: a bind
/// still missing after twenty of them is not coming by itself.
pub const BIND_STUCK_AFTER: SignedDuration = SignedDuration::from_mins(5);

pub(super) fn findings(ctx: &Ctx, disks: &[Disk], out: &mut Findings) {
    for d in disks {
        let Rename::AwaitingBind(since) = d.rename else {
            continue;
        };
        let (Some(orig), Some(pv)) = (d.orig, d.orig_pv) else {
            continue;
        };
        if !ctx.older_than(since, BIND_STUCK_AFTER) {
            continue;
        }
        let blockers = blockers(ctx, orig, pv);
        let what = if blockers.is_empty() {
            "nothing in the cluster's objects says why: the PV controller (kube-controller-manager) may not be running".to_string()
        } else {
            blockers.join("; ")
        };
        out.push(
            ctx.snap,
            Code::OrigBindStuck,
            Some(&ctx.id),
            vec![
                ObjRef::new(Kind::PersistentVolumeClaim, ctx.ns, &orig.meta.name),
                ObjRef::new(Kind::PersistentVolume, "", &pv.meta.name),
            ],
            format!(
                "{} was renamed to {} and PV {} points at it, but the PV controller has not bound it for {} (it retries every ~15 s): {what}",
                d.name,
                orig.meta.name,
                pv.meta.name,
                since.map(|s| ctx.clock.human_since(s)).unwrap_or_default()
            ),
            format!(
                "The kept data is safe on PV {} while it is Retain. Read why the bind fails (kubectl -n {} describe pvc {}; kube-controller-manager's persistentvolume-controller log) and fix that field of the -orig PVC or the PV; the binder then binds it on its next resync",
                pv.meta.name, ctx.ns, orig.meta.name
            ),
        );
    }
}

/// What keeps the PV controller from binding `orig` to `pv`: the checks it makes on a
/// pre-bound pair, then the last warning it left on the claim.
fn blockers(ctx: &Ctx, orig: &Obj<Pvc>, pv: &Obj<Pv>) -> Vec<String> {
    let mut out = Vec::new();
    if pv.meta.deleted.is_some() {
        out.push(format!("PV {} is being deleted", pv.meta.name));
    }
    if orig.meta.deleted.is_some() {
        out.push(format!("{} is being deleted", orig.meta.name));
    }
    let class = |c: &Option<std::sync::Arc<str>>| c.as_deref().unwrap_or_default().to_string();
    if class(&orig.storage_class) != class(&pv.storage_class) {
        out.push(format!(
            "storageClassName differs (PVC {:?}, PV {:?})",
            class(&orig.storage_class),
            class(&pv.storage_class)
        ));
    }
    if let (Some(want), Some(have)) = (
        orig.request.as_deref().and_then(bytes),
        pv.capacity.as_deref().and_then(bytes),
    ) && want > have
    {
        out.push(format!(
            "the PVC requests {} but the PV holds {}",
            orig.request.as_deref().unwrap_or_default(),
            pv.capacity.as_deref().unwrap_or_default()
        ));
    }
    if let Some(e) = ctx
        .snap
        .events
        .in_namespace(ctx.ns)
        .filter(|e| {
            e.involved.kind == "PersistentVolumeClaim"
                && e.involved.name == orig.meta.name
                && e.type_.as_deref() == Some("Warning")
        })
        .max_by_key(|e| e.last)
    {
        out.push(format!(
            "last warning on it: {} {}",
            e.reason.as_deref().unwrap_or_default(),
            e.message.as_deref().unwrap_or_default()
        ));
    }
    out
}
