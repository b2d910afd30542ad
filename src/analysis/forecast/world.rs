//! The controller's writes applied to a copy of the snapshot: each function is one write the
//! real controller (or, where named, Velero or the garbage collector) makes, with the fields the
//! analysis reads set as the recorded runs show them. Objects not read by the analysis (the
//! resource-modifier ConfigMap) are left out.

use crate::model::objects::{ClaimRef, RjPhase};
use crate::model::snapshot::{ObjKey, Snapshot};
use crate::model::{AnyObject, Field, Kind, Obj, parse_object};
use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};
use std::sync::Arc;

/// A copy of the cluster the model writes into, with its own clock: each write is one second
/// after the previous one, so that "created before / after" reads as it would on a cluster.
#[derive(Clone)]
pub struct World {
    pub snap: Snapshot,
    pub now: Timestamp,
    seq: u32,
}

fn stamp(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn with_annotations<'a>(
    meta: &crate::model::Meta,
    add: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> crate::model::strmap::StrMap {
    let mut all: Vec<(String, String)> = meta
        .annotations
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    for (k, v) in add {
        all.retain(|(x, _)| x != k);
        all.push((k.to_string(), v.to_string()));
    }
    all.into_iter().collect()
}

impl World {
    pub fn new(snap: &Snapshot, start: Timestamp) -> World {
        World {
            snap: snap.clone(),
            now: start,
            seq: 0,
        }
    }

    /// The next second: every write happens at its own instant.
    pub fn tick(&mut self) -> Timestamp {
        self.now += SignedDuration::from_secs(1);
        self.now
    }

    /// A made-up UID, distinct per object of the forecast (a created object's UID is the
    /// server's; only its identity matters to the analysis).
    fn uid(&mut self, what: &str) -> String {
        self.seq += 1;
        format!("forecast-{what}-{}", self.seq)
    }

    fn insert_json(&mut self, v: Value) {
        if let Ok(o) = parse_object(v) {
            self.snap.objects.insert(o);
        }
    }

    fn insert(&mut self, o: AnyObject) {
        self.snap.objects.insert(o);
    }

    fn remove(&mut self, kind: Kind, ns: &str, name: &str) -> bool {
        self.snap.objects.remove(kind, &ObjKey::new(ns, name))
    }

    /// The RestoreJob as the API server stores it on create: a UID and a creation time.
    pub fn create_restore_job(&mut self, rj: &Obj<crate::model::objects::RestoreJob>) -> String {
        let t = self.tick();
        let mut rj = rj.clone();
        if rj.meta.uid.is_empty() {
            rj.meta.uid = self.uid("restorejob").into();
        }
        rj.meta.created = Some(t);
        rj.meta.last_change = Some(t);
        rj.meta.deleted = None;
        rj.spec.phase = RjPhase::New;
        rj.spec.started_at = Field::Missing;
        rj.spec.completed_at = Field::Missing;
        rj.spec.message = None;
        rj.spec.conditions.clear();
        let uid = rj.meta.uid.to_string();
        self.insert(AnyObject::RestoreJob(Arc::new(rj)));
        uid
    }

    /// `status.phase` (and `startedAt` on the first move to Running, `completedAt` on a
    /// terminal phase, `message` when given).
    pub fn set_phase(&mut self, ns: &str, name: &str, phase: RjPhase, message: Option<String>) {
        let t = self.tick();
        let Some(rj) = self.snap.restore_jobs.get(ns, name) else {
            return;
        };
        let mut rj = (**rj).clone();
        if !rj.spec.started_at.is_known() && phase != RjPhase::New {
            rj.spec.started_at = Field::Known(t);
        }
        if phase.is_terminal() {
            rj.spec.completed_at = Field::Known(t);
        }
        rj.spec.phase = phase;
        if message.is_some() {
            rj.spec.message = message;
        }
        rj.meta.last_change = Some(t);
        self.insert(AnyObject::RestoreJob(Arc::new(rj)));
    }

    /// An Event from `restore-controller` about the RestoreJob.
    pub fn event(&mut self, ns: &str, rj: &str, type_: &str, reason: &str, message: &str) {
        let t = self.tick();
        let uid = self.uid("event");
        self.insert_json(json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": format!("{rj}.{uid}"), "namespace": ns, "uid": uid,
                "creationTimestamp": stamp(t)},
            "involvedObject": {"kind": "RestoreJob", "namespace": ns, "name": rj,
                "apiVersion": Kind::RestoreJob.info().api_version()},
            "type": type_, "reason": reason, "message": message,
            "firstTimestamp": stamp(t), "lastTimestamp": stamp(t), "count": 1,
            "source": {"component": "restore-controller"},
        }));
    }

    /// `spec.suspend` of a HelmRelease, when it exists.
    pub fn set_suspend(&mut self, ns: &str, name: &str, suspend: bool) -> bool {
        let t = self.tick();
        let Some(hr) = self.snap.helm_releases.get(ns, name) else {
            return false;
        };
        let mut hr = (**hr).clone();
        hr.spec.suspend = Field::Known(suspend);
        hr.meta.last_change = Some(t);
        self.insert(AnyObject::HelmRelease(Arc::new(hr)));
        true
    }

    pub fn set_run_strategy(&mut self, ns: &str, vm: &str, strategy: &str) -> bool {
        let t = self.tick();
        let Some(v) = self.snap.vms.get(ns, vm) else {
            return false;
        };
        let mut v = (**v).clone();
        v.spec.run_strategy = Field::Known(strategy.to_string());
        v.meta.last_change = Some(t);
        self.insert(AnyObject::VirtualMachine(Arc::new(v)));
        true
    }

    /// KubeVirt stops the VM: its VMI goes, and with it the launcher Pod's hold on the disks.
    pub fn vm_stopped(&mut self, ns: &str, vm: &str) {
        self.tick();
        self.remove(Kind::VirtualMachineInstance, ns, vm);
        let launcher = format!("virt-launcher-{vm}-");
        let pods: Vec<String> = self
            .snap
            .pods
            .in_namespace(ns)
            .filter(|p| p.meta.name.starts_with(&launcher))
            .map(|p| p.meta.name.to_string())
            .collect();
        for p in pods {
            self.remove(Kind::Pod, ns, &p);
        }
    }

    /// A Pod that is not finished, not being deleted, and mounts `pvc`.
    pub fn mounted_by(&self, ns: &str, pvc: &str) -> Option<String> {
        self.snap
            .pods
            .in_namespace(ns)
            .find(|p| {
                p.meta.deleted.is_none()
                    && !matches!(p.phase.as_deref(), Some("Succeeded" | "Failed"))
                    && p.claims.iter().any(|c| c == pvc)
            })
            .map(|p| p.meta.name.to_string())
    }

    /// The PV's reclaim policy (and, for a guarded controller, the recorded previous one).
    pub fn retain_pv(&mut self, pv: &str, record: bool) {
        let t = self.tick();
        let Some(p) = self.snap.pvs.get("", pv) else {
            return;
        };
        let mut p = (**p).clone();
        if record
            && p.meta
                .annotation(crate::model::names::ANN_ORIGINAL_RECLAIM_POLICY)
                .is_none()
            && let Some(old) = p.reclaim_policy.known()
        {
            let old = old.clone();
            p.meta.annotations = with_annotations(
                &p.meta,
                [(crate::model::names::ANN_ORIGINAL_RECLAIM_POLICY, &*old)],
            );
        }
        p.spec.reclaim_policy = Field::Known("Retain".into());
        p.meta.last_change = Some(t);
        self.insert(AnyObject::PersistentVolume(Arc::new(p)));
    }

    /// `renamePVC`'s create of the `-orig` PVC: the original's storage fields and its volume;
    /// with the guard annotations for a guarded controller. Returns its UID.
    pub fn create_orig(
        &mut self,
        ns: &str,
        original: &str,
        orig: &str,
        guard: Option<(&str, Option<&str>)>,
    ) -> Option<String> {
        let t = self.tick();
        let src = self.snap.pvcs.get(ns, original)?.clone();
        let uid = self.uid("orig-pvc");
        let mut ann = serde_json::Map::new();
        if let Some((rj_uid, policy)) = guard {
            ann.insert(
                crate::model::names::ANN_RESTORE_JOB_UID.into(),
                json!(rj_uid),
            );
            if let Some(p) = policy {
                ann.insert(
                    crate::model::names::ANN_ORIGINAL_RECLAIM_POLICY.into(),
                    json!(p),
                );
            }
        }
        let mut spec = serde_json::Map::new();
        spec.insert("accessModes".into(), json!(src.access_modes));
        if let Some(r) = &src.request {
            spec.insert("resources".into(), json!({"requests": {"storage": r}}));
        }
        if let Some(c) = &src.storage_class {
            spec.insert("storageClassName".into(), json!(c));
        }
        if let Some(m) = &src.volume_mode {
            spec.insert("volumeMode".into(), json!(m));
        }
        if let Some(v) = &src.volume_name {
            spec.insert("volumeName".into(), json!(v));
        }
        // The PV binder binds it within seconds of the claimRef naming it (dumps 01-b -> 01-c);
        // the forecast shows it settled, as the analysis would see it a moment later.
        let mut status = json!({"phase": "Bound"});
        if let Some(c) = src.size() {
            status["capacity"] = json!({"storage": c});
        }
        self.insert_json(json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": orig, "namespace": ns, "uid": uid,
                "creationTimestamp": stamp(t), "annotations": ann},
            "spec": spec,
            "status": status,
        }));
        Some(uid)
    }

    /// Deletes a PVC: gone at once, unless a running Pod mounts it (pvc-protection keeps it
    /// `Terminating`, and once its PV names another claim, `Lost`: dump 12b).
    pub fn delete_pvc(&mut self, ns: &str, name: &str) {
        let t = self.tick();
        if self.mounted_by(ns, name).is_none() {
            self.remove(Kind::PersistentVolumeClaim, ns, name);
            return;
        }
        let Some(p) = self.snap.pvcs.get(ns, name) else {
            return;
        };
        let mut p = (**p).clone();
        p.meta.deleted = Some(t);
        p.spec.phase = Field::Known("Lost".into());
        p.meta.last_change = Some(t);
        self.insert(AnyObject::PersistentVolumeClaim(Arc::new(p)));
    }

    pub fn point_pv(&mut self, pv: &str, ns: &str, claim: &str, uid: &str) {
        let t = self.tick();
        let Some(p) = self.snap.pvs.get("", pv) else {
            return;
        };
        let mut p = (**p).clone();
        p.spec.claim_ref = Some(ClaimRef {
            namespace: ns.to_string(),
            name: claim.to_string(),
            uid: Some(uid.to_string()),
        });
        p.spec.phase = Field::Known("Bound".into());
        p.meta.last_change = Some(t);
        self.insert(AnyObject::PersistentVolume(Arc::new(p)));
    }

    pub fn delete(&mut self, kind: Kind, ns: &str, name: &str) -> bool {
        self.tick();
        self.remove(kind, ns, name)
    }

    /// The Velero Restore the controller creates (`generateName` as the API server shortens
    /// it: 58 characters, then 5 random ones), owner labels set. Returns its name and UID.
    pub fn create_velero_restore(
        &mut self,
        ns: &str,
        rj: &str,
        backup_name: Option<&str>,
    ) -> (String, String) {
        let t = self.tick();
        let gen_name = format!("{ns}.{rj}-");
        let base: String = gen_name.chars().take(58).collect();
        let name = format!("{base}fcst0");
        let uid = self.uid("velero-restore");
        self.insert_json(json!({
            "apiVersion": Kind::VeleroRestore.info().api_version(),
            "kind": Kind::VeleroRestore.info().api_kind,
            "metadata": {"name": name, "namespace": crate::model::names::VELERO_NAMESPACE,
                "generateName": gen_name, "uid": uid, "creationTimestamp": stamp(t),
                "labels": {
                    crate::model::names::LABEL_OWNED_BY_NAME: rj,
                    crate::model::names::LABEL_OWNED_BY_NAMESPACE: ns,
                }},
            "spec": {"backupName": backup_name.unwrap_or_default()},
        }));
        (name, uid)
    }

    /// Velero plays the Restore to `Completed`: every disk whose PVC no longer exists is
    /// created again, bound to a new volume and filled by a `Completed` DataDownload; an
    /// existing PVC is skipped (Velero's rule: no overwrite). Returns the skipped disks.
    pub fn velero_completes(
        &mut self,
        ns: &str,
        restore: (&str, &str),
        disks: &[String],
        releases: &[String],
        vm: Option<&str>,
    ) -> Vec<String> {
        let (rname, ruid) = restore;
        let mut skipped = Vec::new();
        for d in disks {
            if self.snap.pvcs.get(ns, d).is_some() {
                skipped.push(d.clone());
                continue;
            }
            let t = self.tick();
            let pv = format!("pvc-forecast-{}", self.uid("pv"));
            let pvc_uid = self.uid("restored-pvc");
            let pv_uid = self.uid("pv");
            let dd_uid = self.uid("dd");
            let dd_name = format!("{rname}-{}", self.seq);
            let dv_uid = self.uid("dv");
            self.insert_json(json!({
                "apiVersion": "v1", "kind": "PersistentVolume",
                "metadata": {"name": pv, "uid": pv_uid, "creationTimestamp": stamp(t)},
                "spec": {"persistentVolumeReclaimPolicy": "Delete",
                    "claimRef": {"namespace": ns, "name": d, "uid": pvc_uid}},
                "status": {"phase": "Bound"},
            }));
            self.insert_json(json!({
                "apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": d, "namespace": ns, "uid": pvc_uid,
                    "creationTimestamp": stamp(t),
                    "labels": {crate::model::names::LABEL_VELERO_RESTORE_NAME: rname}},
                "spec": {"volumeName": pv},
                "status": {"phase": "Bound"},
            }));
            self.insert_json(json!({
                "apiVersion": Kind::DataDownload.info().api_version(),
                "kind": Kind::DataDownload.info().api_kind,
                "metadata": {"name": dd_name, "namespace": crate::model::names::VELERO_NAMESPACE,
                    "uid": dd_uid, "creationTimestamp": stamp(t),
                    "labels": {crate::model::names::LABEL_VELERO_RESTORE_UID: ruid,
                        crate::model::names::LABEL_VELERO_RESTORE_NAME: rname}},
                "spec": {"targetVolume": {"pvc": d, "namespace": ns, "pv": ""}},
                "status": {"phase": "Completed", "completionTimestamp": stamp(t)},
            }));
            self.insert_json(json!({
                "apiVersion": Kind::DataVolume.info().api_version(),
                "kind": Kind::DataVolume.info().api_kind,
                "metadata": {"name": d, "namespace": ns, "uid": dv_uid,
                    "creationTimestamp": stamp(t)},
                "status": {"phase": "Succeeded", "claimName": d},
            }));
        }
        for r in releases {
            self.set_suspend(ns, r, false);
        }
        if let Some(vm) = vm {
            self.set_run_strategy(ns, vm, "Always");
        }
        let t = self.tick();
        if let Some(r) = self
            .snap
            .velero_restores
            .get(crate::model::names::VELERO_NAMESPACE, rname)
        {
            let mut r = (**r).clone();
            r.spec.phase = Field::Known("Completed".into());
            r.spec.warnings = Some(skipped.len() as i64);
            r.meta.last_change = Some(t);
            self.insert(AnyObject::VeleroRestore(Arc::new(r)));
        }
        skipped
    }
}
