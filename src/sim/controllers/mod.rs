//! The parts of kube-controller-manager restorewatch's users meet, run as one task that reacts
//! to the store's changes (as the real controllers react to their informers) and never polls:
//! with nothing changing it sleeps, whatever the size of the store.
//!
//! - `protection`: removes `kubernetes.io/pvc-protection` / `pv-protection` from objects being
//!   deleted once nothing uses them;
//! - `gc`: the garbage collector: deletes objects whose owners are all gone, handles the
//!   `orphan` and `foregroundDeletion` finalizers of deletes with a propagation policy;
//! - `binder`: the PV binder: binds pre-bound PVC/PV pairs, retries a claim whose volume is
//!   bound elsewhere on its resync (with a `FailedBinding` event), releases volumes whose claim
//!   is gone.
//!
//! Each reaction is scheduled `reaction_delay` after the change that causes it and re-checks
//! the store under its lock when it runs, so a stale schedule is harmless.

pub mod binder;
pub mod gc;
pub mod protection;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{broadcast, watch};
use tokio::time::Instant;

use crate::model::Kind;
use crate::sim::api_ops::{finish_write, meta_str};
use crate::sim::clock::now_rfc3339;
use crate::sim::managed::{self, KCM, Writer};
use crate::sim::store::{Change, ChangeType, ObjKey, Store, Txn, key_of};

#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// How long a controller takes to react to a change.
    pub reaction_delay: Duration,
    /// How long the PV binder waits before it retries a claim it could not bind.
    pub pv_resync: Duration,
}

/// What the controllers still have to do: `SimHandle::controllers_idle` waits on it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    /// Every change up to this version has been seen.
    pub seen_rv: u64,
    /// Reactions scheduled, not counting the binder's resyncs (they may be far away).
    pub pending: usize,
    /// Switched off: nothing will happen.
    pub off: bool,
    /// How many times the controllers woke up: stays put while nothing changes.
    pub wakeups: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Work {
    Release(Kind, ObjKey),
    Collect(Kind, ObjKey),
    SyncClaim(ObjKey),
    /// The binder's periodic retry of a claim it could not bind.
    ResyncClaim(ObjKey),
    SyncVolume(String),
}

pub(crate) struct Controllers {
    store: Store,
    settings: Settings,
    /// Owner uid -> its dependents.
    owners: HashMap<String, HashSet<(Kind, ObjKey)>>,
    /// Claim (namespace, name) -> the PVs whose claimRef names it.
    claim_pvs: HashMap<ObjKey, HashSet<String>>,
    /// Claim uid -> name of its `FailedBinding` event (repeats count up, as the recorder does).
    binding_events: HashMap<String, String>,
    timers: BTreeMap<(Instant, u64), Work>,
    scheduled: HashMap<Work, Instant>,
    seq: u64,
}

pub(crate) fn owner_uids(obj: &Value) -> impl Iterator<Item = &str> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("uid").and_then(Value::as_str))
}

pub(crate) fn has_finalizer(obj: &Value, f: &str) -> bool {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|l| l.iter().any(|x| x == f))
}

pub(crate) fn deleting(obj: &Value) -> bool {
    !meta_str(obj, "deletionTimestamp").is_empty()
}

/// The (namespace, name) a PV's claimRef names, if any.
pub(crate) fn claim_ref_key(pv: &Value) -> Option<ObjKey> {
    let r = pv.pointer("/spec/claimRef")?;
    let name = r.get("name").and_then(Value::as_str)?;
    let ns = r.get("namespace").and_then(Value::as_str).unwrap_or("");
    Some((ns.to_string(), name.to_string()))
}

/// The claims a pod mounts.
fn pod_claims(pod: &Value) -> Vec<String> {
    pod.pointer("/spec/volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| {
            v.pointer("/persistentVolumeClaim/claimName")
                .and_then(Value::as_str)
        })
        .map(str::to_string)
        .collect()
}

/// A write by kube-controller-manager: recorded in managedFields, a no-op skipped.
pub(crate) fn kcm_write(
    txn: &mut Txn,
    kind: Kind,
    key: &ObjKey,
    current: &Value,
    mut next: Value,
    subresource: Option<&str>,
) -> Value {
    managed::record(
        current,
        &mut next,
        &Writer::update(KCM),
        subresource,
        &now_rfc3339(),
    );
    finish_write(txn, kind, key, current, next)
}

impl Controllers {
    pub(crate) fn new(store: Store, settings: Settings) -> Self {
        Controllers {
            store,
            settings,
            owners: HashMap::new(),
            claim_pvs: HashMap::new(),
            binding_events: HashMap::new(),
            timers: BTreeMap::new(),
            scheduled: HashMap::new(),
            seq: 0,
        }
    }

    fn schedule_in(&mut self, work: Work, delay: Duration) {
        let at = Instant::now() + delay;
        if self.scheduled.get(&work).is_some_and(|t| *t <= at) {
            return;
        }
        self.seq += 1;
        self.timers.insert((at, self.seq), work.clone());
        self.scheduled.insert(work, at);
    }

    fn schedule(&mut self, work: Work) {
        self.schedule_in(work, self.settings.reaction_delay);
    }

    fn next_due(&self) -> Option<Instant> {
        self.timers.keys().next().map(|k| k.0)
    }

    fn pending(&self) -> usize {
        self.scheduled
            .keys()
            .filter(|w| !matches!(w, Work::ResyncClaim(_)))
            .count()
    }

    fn index(&mut self, kind: Kind, obj: &Value, add: bool) {
        let key = key_of(obj);
        for uid in owner_uids(obj) {
            if add {
                self.owners
                    .entry(uid.to_string())
                    .or_default()
                    .insert((kind, key.clone()));
            } else if let Some(set) = self.owners.get_mut(uid) {
                set.remove(&(kind, key.clone()));
                if set.is_empty() {
                    self.owners.remove(uid);
                }
            }
        }
        if kind == Kind::PersistentVolume
            && let Some(claim) = claim_ref_key(obj)
        {
            if add {
                self.claim_pvs
                    .entry(claim)
                    .or_default()
                    .insert(key.1.clone());
            } else if let Some(set) = self.claim_pvs.get_mut(&claim) {
                set.remove(&key.1);
                if set.is_empty() {
                    self.claim_pvs.remove(&claim);
                }
            }
        }
    }

    /// What an object, as it is now, asks of the controllers.
    fn react_to(&mut self, kind: Kind, obj: &Value, added: bool) {
        let key = key_of(obj);
        if owner_uids(obj).next().is_some()
            || (deleting(obj)
                && (has_finalizer(obj, gc::ORPHAN) || has_finalizer(obj, gc::FOREGROUND)))
        {
            self.schedule(Work::Collect(kind, key.clone()));
        }
        match kind {
            Kind::PersistentVolumeClaim => {
                if deleting(obj) {
                    self.schedule(Work::Release(kind, key.clone()));
                }
                if binder::unbound(obj) {
                    self.schedule(Work::SyncClaim(key.clone()));
                }
                self.sync_volumes_of(&key);
            }
            Kind::PersistentVolume => {
                if deleting(obj) {
                    self.schedule(Work::Release(kind, key.clone()));
                }
                self.schedule(Work::SyncVolume(key.1.clone()));
                // A new PV is matched with its claim at once; a PV re-pointed later waits for
                // the claim's resync (observed on a real cluster).
                if added && let Some(claim) = claim_ref_key(obj) {
                    self.schedule(Work::SyncClaim(claim));
                }
            }
            Kind::Pod => {
                let ns = key.0.clone();
                for c in pod_claims(obj) {
                    self.schedule(Work::Release(Kind::PersistentVolumeClaim, (ns.clone(), c)));
                }
            }
            _ => {}
        }
    }

    fn sync_volumes_of(&mut self, claim: &ObjKey) {
        let pvs: Vec<String> = self
            .claim_pvs
            .get(claim)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default();
        for pv in pvs {
            self.schedule(Work::SyncVolume(pv));
        }
    }

    pub(crate) fn on_change(&mut self, c: &Change) {
        if let Some(prev) = &c.previous {
            self.index(c.kind, prev, false);
        }
        match c.typ {
            ChangeType::Deleted => {
                let key = key_of(&c.object);
                let uid = meta_str(&c.object, "uid");
                let deps: Vec<(Kind, ObjKey)> = self
                    .owners
                    .get(uid)
                    .map(|s| s.iter().cloned().collect())
                    .unwrap_or_default();
                for (k, d) in deps {
                    self.schedule(Work::Collect(k, d));
                }
                match c.kind {
                    Kind::PersistentVolumeClaim => self.sync_volumes_of(&key),
                    Kind::Pod => {
                        for claim in pod_claims(&c.object) {
                            self.schedule(Work::Release(
                                Kind::PersistentVolumeClaim,
                                (key.0.clone(), claim),
                            ));
                        }
                    }
                    _ => {}
                }
                if c.kind == Kind::PersistentVolumeClaim {
                    self.binding_events.remove(uid);
                }
            }
            ChangeType::Added | ChangeType::Modified => {
                self.index(c.kind, &c.object, true);
                if c.kind == Kind::Pod
                    && let Some(prev) = &c.previous
                {
                    for claim in pod_claims(prev) {
                        self.schedule(Work::Release(
                            Kind::PersistentVolumeClaim,
                            (key_of(prev).0, claim),
                        ));
                    }
                }
                self.react_to(c.kind, &c.object, c.typ == ChangeType::Added);
            }
        }
    }

    /// Forgets everything and re-reads the store: at the start, after falling behind the
    /// feed, and when switched back on.
    pub(crate) fn resync(&mut self) {
        self.owners.clear();
        self.claim_pvs.clear();
        self.timers.clear();
        self.scheduled.clear();
        let all: Vec<(Kind, Value)> = self.store.transact(|t| {
            Kind::all()
                .flat_map(|k| {
                    t.objects(k)
                        .map(move |o| (k, o.clone()))
                        .collect::<Vec<_>>()
                })
                .collect()
        });
        for (k, o) in &all {
            self.index(*k, o, true);
        }
        for (k, o) in &all {
            self.react_to(*k, o, true);
        }
    }

    fn run(&mut self, work: Work) {
        let settings = self.settings;
        match work {
            Work::Release(kind, key) => protection::release(&self.store, kind, &key),
            Work::Collect(kind, key) => gc::collect(&self.store, &self.owners, kind, &key),
            Work::SyncClaim(key) | Work::ResyncClaim(key) => {
                if binder::sync_claim(&self.store, &self.claim_pvs, &mut self.binding_events, &key)
                    == binder::Outcome::Retry
                {
                    self.schedule_in(Work::ResyncClaim(key), settings.pv_resync);
                }
            }
            Work::SyncVolume(name) => binder::sync_volume(&self.store, &name),
        }
    }

    fn run_due(&mut self) {
        let now = Instant::now();
        while let Some(entry) = self.timers.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let ((at, _), work) = entry.remove_entry();
            if self.scheduled.get(&work) == Some(&at) {
                self.scheduled.remove(&work);
                self.run(work);
            }
        }
    }

    fn drop_timers(&mut self) {
        self.timers.clear();
        self.scheduled.clear();
    }
}

/// Runs until aborted. `enabled` switches every controller on and off (a scenario's
/// `controllerManager` step, `SimHandle::set_controller_manager`); switched back on, they
/// re-read the store and catch up on what happened meanwhile.
pub async fn run(
    store: Store,
    enabled: Arc<AtomicBool>,
    settings: Settings,
    progress: watch::Sender<Progress>,
) {
    let (_, mut feed) = store.all_changes_since_now();
    let mut c = Controllers::new(store.clone(), settings);
    let mut stale = true;
    let mut wakeups = 0u64;
    loop {
        let on = enabled.load(Ordering::Relaxed);
        if on && stale {
            c.resync();
            stale = false;
        }
        if !on && !c.timers.is_empty() {
            c.drop_timers();
            stale = true;
        }
        // Everything up to `rv` was sent before it was read: an empty feed means all of it
        // has been seen.
        let rv = store.current_rv();
        let seen = feed.is_empty();
        progress.send_if_modified(|p| {
            let next = Progress {
                seen_rv: if seen { rv } else { p.seen_rv },
                // Changes not taken from the feed yet are work too (their reactions are not
                // scheduled yet).
                pending: c.pending() + usize::from(!seen),
                off: !on,
                wakeups,
            };
            let changed = *p != next;
            *p = next;
            changed
        });
        let next = c.next_due();
        tokio::select! {
            r = feed.recv() => {
                let mut r = r;
                loop {
                    match r {
                        Ok(change) if on => c.on_change(&change),
                        Ok(_) => stale = true,
                        Err(broadcast::error::RecvError::Lagged(_)) => stale = true,
                        Err(broadcast::error::RecvError::Closed) => return,
                    }
                    // Take what else is queued before reacting, without blocking.
                    r = match feed.try_recv() {
                        Ok(ch) => Ok(ch),
                        Err(broadcast::error::TryRecvError::Lagged(n)) => {
                            Err(broadcast::error::RecvError::Lagged(n))
                        }
                        Err(_) => break,
                    };
                }
            }
            _ = store.nudged() => {}
            _ = tokio::time::sleep_until(next.unwrap_or_else(Instant::now)), if next.is_some() => {
                if on {
                    c.run_due();
                }
            }
        }
        wakeups += 1;
    }
}
