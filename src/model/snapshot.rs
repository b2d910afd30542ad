//! The one picture of the cluster every consumer reads: objects by kind, how fresh each kind
//! is, and where the picture came from.

use crate::model::objects::*;
use crate::model::{AnyObject, Kind, Obj};
use jiff::Timestamp;
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjKey {
    /// Empty for cluster-scoped kinds. The same copy as the object's own `meta.namespace`.
    pub namespace: crate::model::shared_str::SharedStr,
    /// The same copy as the object's own `meta.name`.
    pub name: crate::model::shared_str::SharedStr,
}

impl ObjKey {
    pub fn new(
        namespace: impl Into<crate::model::shared_str::SharedStr>,
        name: impl crate::model::shared_str::OwnStr,
    ) -> Self {
        ObjKey {
            namespace: namespace.into(),
            name: name.own_str(),
        }
    }
    pub fn cluster(name: impl crate::model::shared_str::OwnStr) -> Self {
        ObjKey::new("", name)
    }
}

/// Objects of one kind, keyed by namespace and name.
///
/// A persistent (structurally shared) map: cloning a `Store` is O(1) and a change copies only
/// the path to the changed entry, so the live source can change its snapshot while the UI still
/// holds the previous frame without copying every object's key each time. The term index is
/// kept up to date on every change the same way (a change rebuilds only the lists of its own
/// object's terms), so that a change never costs a rebuild over every object of the kind.
///
/// The term index is an ordered map too, not a hash map: imbl's hash map allocates every node
/// at its full width of 32 entries whatever it holds, and with one term per PV and PVC that was
/// ~265 bytes per term (heaptrack, generated 20k, issue 28); most terms name one object, held
/// without a list of its own (`Listed::One`).
pub struct Store<T> {
    map: imbl::OrdMap<ObjKey, Arc<Obj<T>>>,
    terms: imbl::OrdMap<Box<str>, Listed<T>>,
}

/// The objects under one term, in key order.
enum Listed<T> {
    One(Arc<Obj<T>>),
    /// Two or more.
    Many(Arc<Vec<Arc<Obj<T>>>>),
}

impl<T> Clone for Listed<T> {
    fn clone(&self) -> Self {
        match self {
            Listed::One(o) => Listed::One(Arc::clone(o)),
            Listed::Many(l) => Listed::Many(Arc::clone(l)),
        }
    }
}

impl<T> Listed<T> {
    fn as_slice(&self) -> &[Arc<Obj<T>>] {
        match self {
            Listed::One(o) => std::slice::from_ref(o),
            Listed::Many(l) => l.as_slice(),
        }
    }

    /// `obj` added, or put in place of the object of its key.
    fn with(&mut self, obj: &Arc<Obj<T>>) {
        let list = match self {
            Listed::One(o) if same_key(o, obj) => {
                *o = Arc::clone(obj);
                return;
            }
            Listed::One(o) => {
                let mut two = vec![Arc::clone(o), Arc::clone(obj)];
                two.sort_by(|a, b| key_of(a).cmp(&key_of(b)));
                *self = Listed::Many(Arc::new(two));
                return;
            }
            Listed::Many(l) => Arc::make_mut(l),
        };
        match position(list, &obj.meta.namespace, &obj.meta.name) {
            Ok(i) => list[i] = Arc::clone(obj),
            Err(i) => list.insert(i, Arc::clone(obj)),
        }
    }

    /// Without the object of `old`'s key; `false` when nothing is left.
    fn without(&mut self, old: &Obj<T>) -> bool {
        let list = match self {
            Listed::One(o) => return !same_key(o, old),
            Listed::Many(l) => Arc::make_mut(l),
        };
        if let Ok(i) = position(list, &old.meta.namespace, &old.meta.name) {
            list.remove(i);
        }
        match list.as_slice() {
            [] => false,
            [one] => {
                *self = Listed::One(Arc::clone(one));
                true
            }
            _ => true,
        }
    }
}

fn key_of<T>(o: &Obj<T>) -> (&str, &str) {
    (o.meta.namespace.as_str(), o.meta.name.as_str())
}

fn same_key<T>(a: &Obj<T>, b: &Obj<T>) -> bool {
    key_of(a) == key_of(b)
}

/// Inserts `sorted` (ascending, distinct keys) so that imbl's B-tree ends with full leaves.
/// Inserted in order, every leaf is split in half and stays half full (imbl splits at the
/// median), twice the memory the entries need: every other entry first leaves half-full
/// leaves, and the entries between them then fill each leaf without splitting it. On the
/// generated 20k cluster the PVC and PV maps went from ~86 to ~43 bytes a key (issue 28).
/// Whatever imbl's node size, the result is the same map; only its fill could differ.
fn fill<K: Ord + Clone, V: Clone>(map: &mut imbl::OrdMap<K, V>, sorted: Vec<(K, V)>) {
    let mut odd = Vec::with_capacity(sorted.len() / 2);
    for (i, kv) in sorted.into_iter().enumerate() {
        if i % 2 == 0 {
            map.insert(kv.0, kv.1);
        } else {
            odd.push(kv);
        }
    }
    for (k, v) in odd {
        map.insert(k, v);
    }
}

impl<T> Default for Store<T> {
    fn default() -> Self {
        Store {
            map: imbl::OrdMap::new(),
            terms: imbl::OrdMap::new(),
        }
    }
}

impl<T> Clone for Store<T> {
    fn clone(&self) -> Self {
        Store {
            map: self.map.clone(),
            terms: self.terms.clone(),
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Store<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Store").field(&self.map).finish()
    }
}

/// A borrowed `ObjKey`, ordered the same way: lookups without allocating a key.
struct KeyRef<'a> {
    namespace: &'a str,
    name: &'a str,
}

impl equivalent::Equivalent<ObjKey> for KeyRef<'_> {
    fn equivalent(&self, key: &ObjKey) -> bool {
        self.namespace == key.namespace && self.name == key.name
    }
}

impl equivalent::Comparable<ObjKey> for KeyRef<'_> {
    fn compare(&self, key: &ObjKey) -> std::cmp::Ordering {
        (self.namespace, self.name).cmp(&(key.namespace.as_str(), key.name.as_str()))
    }
}

impl<T> Store<T> {
    pub fn get(&self, namespace: &str, name: &str) -> Option<&Arc<Obj<T>>> {
        self.map.get(&KeyRef { namespace, name })
    }
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Obj<T>>> {
        self.map.values()
    }
    /// Objects of one namespace, in name order.
    pub fn in_namespace<'a, 'b>(
        &'a self,
        namespace: &'b str,
    ) -> impl Iterator<Item = &'a Arc<Obj<T>>> + use<'a, 'b, T> {
        self.map
            .range(
                KeyRef {
                    namespace,
                    name: "",
                }..,
            )
            .take_while(move |(k, _)| k.namespace == namespace)
            .map(|(_, v)| v)
    }
    pub fn len(&self) -> usize {
        self.map.len()
    }
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
    fn entry(&self, key: &ObjKey) -> Option<&Arc<Obj<T>>> {
        self.map.get(key)
    }
    fn keys(&self) -> impl Iterator<Item = &ObjKey> {
        self.map.keys()
    }
}

/// Secondary lookup keys of an object ("terms"), for the few questions the analysis asks of
/// every object of a kind ("which PV claims this PVC?"). Most kinds have none.
pub trait Terms {
    fn terms(&self, _out: &mut Vec<String>) {}
}

fn terms_of<T>(o: &Obj<T>) -> Vec<String>
where
    Obj<T>: Terms,
{
    let mut buf = Vec::new();
    o.terms(&mut buf);
    buf.sort();
    buf.dedup();
    buf
}

fn position<T>(list: &[Arc<Obj<T>>], namespace: &str, name: &str) -> Result<usize, usize> {
    list.binary_search_by(|o| {
        (o.meta.namespace.as_str(), o.meta.name.as_str()).cmp(&(namespace, name))
    })
}

impl<T> Store<T>
where
    Obj<T>: Terms,
{
    pub fn insert(&mut self, obj: impl Into<Arc<Obj<T>>>) {
        let obj: Arc<Obj<T>> = obj.into();
        let key = ObjKey::new(obj.meta.namespace.clone(), obj.meta.name.clone());
        if let Some(old) = self.map.insert(key, Arc::clone(&obj)) {
            self.unindex(&old);
        }
        for t in terms_of(&obj) {
            match self.terms.get_mut(t.as_str()) {
                Some(listed) => listed.with(&obj),
                None => {
                    self.terms
                        .insert(t.into_boxed_str(), Listed::One(Arc::clone(&obj)));
                }
            }
        }
    }

    /// A store holding `objs` (a kind's whole list), built at once: the same store as
    /// inserting each, in less memory (see `fill`). Of two objects with one key the later
    /// wins, as with `insert`.
    pub fn from_list(objs: Vec<Arc<Obj<T>>>) -> Self {
        let mut objs = objs;
        // Stable: among equal keys the later stays last, and is the one kept.
        objs.sort_by(|a, b| key_of(a).cmp(&key_of(b)));
        let mut kept: Vec<Arc<Obj<T>>> = Vec::with_capacity(objs.len());
        for o in objs {
            match kept.last_mut() {
                Some(last) if same_key(last, &o) => *last = o,
                _ => kept.push(o),
            }
        }
        let mut by_term: Vec<(String, Arc<Obj<T>>)> = Vec::new();
        for o in &kept {
            by_term.extend(terms_of(o).into_iter().map(|t| (t, Arc::clone(o))));
        }
        // Objects are in key order already; a stable sort keeps them so under each term.
        by_term.sort_by(|a, b| a.0.cmp(&b.0));
        let mut terms: Vec<(Box<str>, Listed<T>)> = Vec::new();
        for (t, o) in by_term {
            match terms.last_mut() {
                Some((last, listed)) if **last == *t => listed.with(&o),
                _ => terms.push((t.into_boxed_str(), Listed::One(o))),
            }
        }
        let entries = kept
            .into_iter()
            .map(|o| {
                (
                    ObjKey::new(o.meta.namespace.clone(), o.meta.name.clone()),
                    o,
                )
            })
            .collect();
        let mut store = Store::default();
        fill(&mut store.map, entries);
        fill(&mut store.terms, terms);
        store
    }

    pub fn remove(&mut self, key: &ObjKey) -> bool {
        match self.map.remove(key) {
            Some(old) => {
                self.unindex(&old);
                true
            }
            None => false,
        }
    }

    fn unindex(&mut self, old: &Obj<T>) {
        for t in terms_of(old) {
            let emptied = match self.terms.get_mut(t.as_str()) {
                Some(listed) => !listed.without(old),
                None => false,
            };
            if emptied {
                self.terms.remove(t.as_str());
            }
        }
    }

    /// Objects having `term` among their `Terms`, in key order: the same objects, in the same
    /// order, as a scan of `iter()` would find, without the scan.
    pub fn by_term(&self, term: &str) -> &[Arc<Obj<T>>] {
        self.terms.get(term).map_or(&[], Listed::as_slice)
    }

    /// `by_term`, only the objects of one namespace.
    pub fn by_term_in(&self, term: &str, namespace: &str) -> &[Arc<Obj<T>>] {
        let all = self.by_term(term);
        let from = all.partition_point(|o| o.meta.namespace.as_str() < namespace);
        let to = all.partition_point(|o| o.meta.namespace.as_str() <= namespace);
        &all[from..to]
    }
}

/// The term under which a PV is found from the PVC its `claimRef` names.
pub fn claim_term(namespace: &str, name: &str) -> String {
    format!("claim\u{0}{namespace}\u{0}{name}")
}

/// The term of every PVC named like an `-orig` PVC, and of every PV whose claimRef names one.
pub const ORIG_TERM: &str = "orig";

/// The term of every PV whose claimRef names an `-orig` PVC in `namespace`: what one
/// namespace's analysis reads of them, without going through every namespace's.
pub fn orig_claim_term(namespace: &str) -> String {
    format!("orig\u{0}{namespace}")
}

impl Terms for Obj<Pv> {
    fn terms(&self, out: &mut Vec<String>) {
        if let Some(c) = &self.claim_ref {
            out.push(claim_term(&c.namespace, &c.name));
            if crate::model::names::parse_orig_name(&c.name).is_some() {
                out.push(ORIG_TERM.to_string());
                out.push(orig_claim_term(&c.namespace));
            }
        }
    }
}

/// The term of every PVC whose `spec.volumeName` is `pv`: which claims a PV change can reach,
/// also the ones its own claimRef does not name back.
pub fn volume_term(pv: &str) -> String {
    format!("volume\u{0}{pv}")
}

impl Terms for Obj<Pvc> {
    fn terms(&self, out: &mut Vec<String>) {
        if crate::model::names::parse_orig_name(&self.meta.name).is_some() {
            out.push(ORIG_TERM.to_string());
        }
        if let Some(v) = &self.volume_name {
            out.push(volume_term(v));
        }
    }
}

/// The term under which DataDownloads are found from a Velero Restore's uid (label or owner).
pub fn restore_uid_term(uid: &str) -> String {
    format!("uid\u{0}{uid}")
}

/// The term under which DataDownloads are found from a Velero Restore's name (label).
pub fn restore_name_term(name: &str) -> String {
    format!("name\u{0}{name}")
}

/// Terms under which a Velero Restore is found from its RestoreJob: the owner label's value,
/// its `generateName`, and every prefix of its name that ends in `-` (the controller names it
/// `<namespace>.<restore job>-<suffix>`).
///
/// The owner term carries the owner-namespace label too (`None` when absent), so that
/// RestoreJobs of one name in many namespaces do not all share one term.
pub fn velero_owner_term(namespace: Option<&str>, restore_job: &str) -> String {
    match namespace {
        Some(ns) => format!("owner\u{0}{ns}\u{0}{restore_job}"),
        None => format!("owner-any\u{0}{restore_job}"),
    }
}

pub fn velero_generate_term(prefix: &str) -> String {
    format!("gen\u{0}{prefix}")
}

pub fn velero_prefix_term(prefix: &str) -> String {
    format!("prefix\u{0}{prefix}")
}

impl Terms for Obj<VeleroRestore> {
    fn terms(&self, out: &mut Vec<String>) {
        use crate::model::names::{LABEL_OWNED_BY_NAME, LABEL_OWNED_BY_NAMESPACE};
        if let Some(n) = self.meta.label(LABEL_OWNED_BY_NAME) {
            out.push(velero_owner_term(
                self.meta.label(LABEL_OWNED_BY_NAMESPACE),
                n,
            ));
        }
        if let Some(g) = &self.meta.generate_name {
            out.push(velero_generate_term(g));
        }
        let name = &self.meta.name;
        for (i, _) in name.match_indices('-') {
            out.push(velero_prefix_term(&name[..=i]));
        }
    }
}

impl Terms for Obj<DataDownload> {
    fn terms(&self, out: &mut Vec<String>) {
        use crate::model::names::{LABEL_VELERO_RESTORE_NAME, LABEL_VELERO_RESTORE_UID};
        if let Some(u) = self.meta.label(LABEL_VELERO_RESTORE_UID) {
            out.push(restore_uid_term(u));
        }
        for o in &self.meta.owners {
            out.push(restore_uid_term(&o.uid));
        }
        if let Some(n) = self.meta.label(LABEL_VELERO_RESTORE_NAME) {
            out.push(restore_name_term(n));
        }
    }
}

/// Events kept about one object (a RestoreJob): the newest this many. Anyone who may create
/// Events in a namespace can make thousands about a restore; kept whole they took `serve` past
/// its memory limit (OOM-killed, then no alerts).
pub const EVENTS_PER_OBJECT: usize = 200;
/// Bytes of Event messages kept about one object, the newest first (messages are cut at
/// `objects::EVENT_MESSAGE_MAX` already).
pub const EVENT_BYTES_PER_OBJECT: usize = 256 << 10;

/// The term under which the Events about one object are found: where the Events are, and the
/// kind and name of what they are about.
pub fn involved_term(namespace: &str, kind: &str, name: &str) -> String {
    format!("involved\u{0}{namespace}\u{0}{kind}\u{0}{name}")
}

impl Terms for Obj<Event> {
    fn terms(&self, out: &mut Vec<String>) {
        out.push(involved_term(
            &self.meta.namespace,
            &self.involved.kind,
            &self.involved.name,
        ));
    }
}

impl Store<Event> {
    /// Drops the oldest Events under `term` while there are more than `EVENTS_PER_OBJECT` or
    /// their messages hold more than `EVENT_BYTES_PER_OBJECT`.
    fn keep_newest(&mut self, term: &str) {
        loop {
            let about = self.by_term(term);
            let bytes: usize = about
                .iter()
                .map(|e| e.message.as_deref().map_or(0, str::len))
                .sum();
            if about.len() <= EVENTS_PER_OBJECT && bytes <= EVENT_BYTES_PER_OBJECT {
                return;
            }
            let Some(oldest) = about
                .iter()
                .min_by_key(|e| (e.last, e.first, e.meta.created, &e.meta.name))
            else {
                return;
            };
            let key = ObjKey::new(oldest.meta.namespace.clone(), oldest.meta.name.clone());
            self.remove(&key);
        }
    }
}

/// `objs` with its Events cut to the bound the store keeps (the newest about each object),
/// other kinds as they are: what a relist holds before it replaces the store, so that a flood
/// is not buffered whole first.
pub fn bound_events(objs: Vec<AnyObject>) -> Vec<AnyObject> {
    let mut events = Objects::default();
    let mut out = Vec::with_capacity(objs.len());
    for o in objs {
        match o {
            AnyObject::Event(_) => events.insert(o),
            other => out.push(other),
        }
    }
    out.extend(
        events
            .events
            .iter()
            .map(|e| AnyObject::Event(Arc::clone(e))),
    );
    out
}

/// How much a kind's objects can be trusted right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncState {
    /// Not listed yet.
    Syncing,
    Synced,
    /// The watch broke and is being re-established; the data is from before.
    Resyncing {
        since: Timestamp,
        error: String,
    },
    /// Repeated failures; the data is from before.
    Failed {
        since: Timestamp,
        error: String,
    },
    /// The API group is not installed on this cluster (e.g. CDI absent).
    NotInstalled,
    /// RBAC denies list/watch.
    Forbidden {
        error: String,
    },
    /// Read from a file: as fresh as the file.
    FromFile,
}

impl SyncState {
    /// Data of this kind may be missing or old: findings built on it are stale.
    pub fn is_degraded(&self) -> bool {
        matches!(
            self,
            SyncState::Syncing
                | SyncState::Resyncing { .. }
                | SyncState::Failed { .. }
                | SyncState::Forbidden { .. }
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindHealth {
    pub state: SyncState,
    /// When the watch last delivered a change (live), for "time since the last change".
    /// `Some` from the kind's first complete list on: a `Resyncing`/`Failed` kind with `None`
    /// never listed, and its objects are unknown (see `Snapshot::absence_known`).
    pub last_event: Option<Timestamp>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceInfo {
    Live {
        context: String,
        cluster: String,
    },
    Files {
        files: Vec<String>,
        newest_object: Option<Timestamp>,
    },
    Demo {
        scenarios: Vec<String>,
    },
}

macro_rules! snapshot {
    ($($field:ident : $variant:ident => $ty:ty),* $(,)?) => {
        #[derive(Debug, Clone, Default)]
        pub struct Objects {
            $(pub $field: Store<$ty>,)*
        }

        impl Objects {
            /// Stores `obj`; Events only within their bound (`EVENTS_PER_OBJECT`), the
            /// oldest about the same object dropped.
            pub fn insert(&mut self, obj: AnyObject) {
                let events_about = match &obj {
                    AnyObject::Event(e) => Some(terms_of(e)),
                    _ => None,
                };
                match obj {
                    $(AnyObject::$variant(o) => self.$field.insert(o),)*
                }
                for term in events_about.into_iter().flatten() {
                    self.events.keep_newest(&term);
                }
            }

            /// Everything of `kind` replaced by `objs` (a kind's whole list; objects of other
            /// kinds in it are ignored), built at once (`Store::from_list`); Events within
            /// their bound, as `insert` keeps them.
            pub fn replace(&mut self, kind: Kind, objs: Vec<AnyObject>) {
                match kind {
                    $(Kind::$variant => {
                        let list = objs
                            .into_iter()
                            .filter_map(|o| match o {
                                AnyObject::$variant(o) => Some(o),
                                _ => None,
                            })
                            .collect();
                        self.$field = Store::from_list(list);
                    })*
                }
                if kind == Kind::Event {
                    let over: Vec<Box<str>> = self
                        .events
                        .terms
                        .iter()
                        .filter(|(_, l)| l.as_slice().len() > 1)
                        .map(|(t, _)| t.clone())
                        .collect();
                    for t in over {
                        self.events.keep_newest(&t);
                    }
                }
            }

            pub fn remove(&mut self, kind: Kind, key: &ObjKey) -> bool {
                match kind {
                    $(Kind::$variant => self.$field.remove(key),)*
                }
            }

            pub fn len(&self, kind: Kind) -> usize {
                match kind {
                    $(Kind::$variant => self.$field.len(),)*
                }
            }

            /// The displayable JSON of any object.
            pub fn raw(&self, kind: Kind, key: &ObjKey) -> Option<String> {
                match kind {
                    $(Kind::$variant => self.$field.entry(key).map(|o| o.text()),)*
                }
            }

            /// Any object, shared.
            pub fn any(&self, kind: Kind, key: &ObjKey) -> Option<AnyObject> {
                match kind {
                    $(Kind::$variant => self.$field.entry(key).map(|o| AnyObject::$variant(Arc::clone(o))),)*
                }
            }

            pub fn meta(&self, kind: Kind, key: &ObjKey) -> Option<&crate::model::Meta> {
                match kind {
                    $(Kind::$variant => self.$field.entry(key).map(|o| &o.meta),)*
                }
            }

            pub fn keys(&self, kind: Kind) -> Vec<ObjKey> {
                match kind {
                    $(Kind::$variant => self.$field.keys().cloned().collect(),)*
                }
            }

            pub fn total(&self) -> usize {
                0 $(+ self.$field.len())*
            }
        }
    };
}

// The kinds nothing is looked up in by term.
impl Terms for Obj<Namespace> {}
impl Terms for Obj<StorageClass> {}
impl Terms for Obj<Pod> {}
/// The term of every RestoreJob whose `targetNamespace` is `namespace` and not its own: the
/// restores that read objects there from elsewhere.
pub fn target_term(namespace: &str) -> String {
    format!("target\u{0}{namespace}")
}

impl Terms for Obj<RestoreJob> {
    fn terms(&self, out: &mut Vec<String>) {
        if let crate::model::field::Field::Known(target) = &self.options.target_namespace
            && *target != self.meta.namespace
        {
            out.push(target_term(target));
        }
    }
}
impl Terms for Obj<Backup> {}
impl Terms for Obj<VeleroBackup> {}
impl Terms for Obj<DataVolume> {}
impl Terms for Obj<VirtualMachine> {}
impl Terms for Obj<Vmi> {}
impl Terms for Obj<HelmRelease> {}
impl Terms for Obj<CnpgCluster> {}
impl Terms for Obj<CnpgBackup> {}
impl Terms for Obj<ObjectStore> {}
impl Terms for Obj<PostgresApp> {}

snapshot! {
    namespaces: Namespace => Namespace,
    pvcs: PersistentVolumeClaim => Pvc,
    pvs: PersistentVolume => Pv,
    storage_classes: StorageClass => StorageClass,
    pods: Pod => Pod,
    events: Event => Event,
    restore_jobs: RestoreJob => RestoreJob,
    backups: Backup => Backup,
    data_volumes: DataVolume => DataVolume,
    vms: VirtualMachine => VirtualMachine,
    vmis: VirtualMachineInstance => Vmi,
    helm_releases: HelmRelease => HelmRelease,
    velero_restores: VeleroRestore => VeleroRestore,
    data_downloads: DataDownload => DataDownload,
    velero_backups: VeleroBackup => VeleroBackup,
    clusters: CnpgCluster => CnpgCluster,
    cnpg_backups: CnpgBackup => CnpgBackup,
    object_stores: ObjectStore => ObjectStore,
    postgreses: Postgres => PostgresApp,
}

#[derive(Debug, Clone)]
pub struct Snapshot {
    pub objects: Objects,
    /// Per-kind freshness. A kind absent here is treated as synced (files, tests).
    pub health: BTreeMap<Kind, KindHealth>,
    pub source: SourceInfo,
    /// The one namespace watched (`-n`), when not all: cluster-scoped objects (PVs) still come
    /// from everywhere, so rules must not read "absent" for other namespaces.
    pub scope: Option<String>,
    /// Deletions the live watch saw, newest last (empty for files and one-off lists).
    pub tombstones: Tombstones,
    /// The backup controller Deployment's image, when a live read could get it (RBAC allows,
    /// it exists): evidence of the controller's generation. `None` says nothing.
    pub controller_image: Option<String>,
    /// `controller_image` is the `backup-controller` Deployment's (the strategy controller's
    /// was absent): weaker evidence, used only where the objects show nothing.
    pub controller_image_fallback: bool,
    /// For a view scoped to one namespace: the RestoreJobs and `-orig` PVCs of every namespace,
    /// read only to judge the controller's generation as an unscoped view does (`None`: not
    /// read, or not readable).
    pub beyond_scope: Option<std::sync::Arc<Snapshot>>,
}

pub use super::tombstones::{Tombstone, Tombstones};

impl Default for Snapshot {
    fn default() -> Self {
        Snapshot {
            objects: Objects::default(),
            health: BTreeMap::new(),
            source: SourceInfo::Files {
                files: Vec::new(),
                newest_object: None,
            },
            scope: None,
            tombstones: Tombstones::default(),
            controller_image: None,
            controller_image_fallback: false,
            beyond_scope: None,
        }
    }
}

impl Snapshot {
    /// Every kind marked `state` as of `at`: a picture (a file, a test's) whose every list is in.
    pub fn mark_every_kind(&mut self, state: SyncState, at: Option<Timestamp>) {
        for k in Kind::all() {
            self.health.insert(
                k,
                KindHealth {
                    state: state.clone(),
                    last_event: at,
                },
            );
        }
    }

    pub fn from_objects(objs: impl IntoIterator<Item = AnyObject>) -> Snapshot {
        let mut s = Snapshot::default();
        for o in objs {
            s.objects.insert(o);
        }
        s
    }

    /// Every kind has listed once (or is known absent): before that an empty table could mean
    /// "not loaded yet", so no picture is shown.
    pub fn all_listed(&self) -> bool {
        self.health
            .values()
            .all(|h| !matches!(h.state, SyncState::Syncing))
    }

    pub fn is_stale(&self, kind: Kind) -> bool {
        self.health
            .get(&kind)
            .is_some_and(|h| h.state.is_degraded())
    }
}

impl std::ops::Deref for Snapshot {
    type Target = Objects;
    fn deref(&self) -> &Objects {
        &self.objects
    }
}

impl Snapshot {
    /// Whether having no object of `kind` (by a name) means there is none, as far as the
    /// health records go: false for a kind that never listed (still syncing, forbidden, or
    /// failing since before its first list), so that a failed list is never read as
    /// "deleted". A kind without a health entry (a file, a test) is left to the caller.
    pub fn absence_known(&self, kind: Kind) -> Option<bool> {
        let h = self.health.get(&kind)?;
        Some(match &h.state {
            SyncState::Synced | SyncState::FromFile | SyncState::NotInstalled => true,
            SyncState::Resyncing { .. } | SyncState::Failed { .. } => h.last_event.is_some(),
            SyncState::Syncing | SyncState::Forbidden { .. } => false,
        })
    }
}

/// The `i`th Event about RestoreJob `t/r1`, one second after the one before.
#[cfg(test)]
fn event_about_r1(i: usize) -> AnyObject {
    crate::model::parse_watched(serde_json::json!({"apiVersion": "v1", "kind": "Event",
        "metadata": {"name": format!("r1.{i:03}"), "namespace": "t"},
        "involvedObject": {"kind": "RestoreJob", "name": "r1"},
        "message": "m",
        "lastTimestamp": format!("2026-11-20T10:{:02}:{:02}Z", i / 60, i % 60)}))
    .expect("an Event")
}

#[cfg(test)]
mod event_bound_tests {
    use super::*;
    use serde_json::json;

    /// What a relist buffers in a flood is cut to the store's bound as it comes in.
    #[test]
    fn a_relisted_flood_keeps_the_newest_events_and_every_other_object() {
        let mut objs = vec![
            crate::model::parse_object(json!({"apiVersion": "v1", "kind": "PersistentVolume",
                "metadata": {"name": "pv-1"}}))
            .unwrap(),
        ];
        for i in 0..300 {
            objs.push(event_about_r1(i));
        }
        let kept = bound_events(objs);
        let names: Vec<String> = kept.iter().map(|o| o.meta().name.to_string()).collect();
        assert_eq!(kept.len(), EVENTS_PER_OBJECT + 1);
        assert!(names.contains(&"pv-1".to_string()));
        assert!(names.contains(&"r1.299".to_string()));
        assert!(!names.contains(&"r1.099".to_string()));
    }
}

#[cfg(test)]
mod from_list_tests {
    use super::*;
    use serde_json::json;

    fn pv(name: &str, claim: Option<(&str, &str)>, rv: &str) -> Arc<Obj<Pv>> {
        let mut v = json!({"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "resourceVersion": rv}, "spec": {}});
        if let Some((ns, n)) = claim {
            v["spec"]["claimRef"] = json!({"namespace": ns, "name": n});
        }
        match crate::model::parse_object(v) {
            Ok(AnyObject::PersistentVolume(o)) => o,
            other => panic!("not a PV: {other:?}"),
        }
    }

    fn picture(s: &Store<Pv>, terms: &[String]) -> Vec<String> {
        let mut out: Vec<String> = s
            .iter()
            .map(|o| format!("{}@{}", o.meta.name, o.meta.resource_version))
            .collect();
        for t in terms {
            let names: Vec<&str> = s.by_term(t).iter().map(|o| o.meta.name.as_str()).collect();
            out.push(format!("{t:?} -> {names:?}"));
        }
        out
    }

    /// The bulk build a relist uses is the same store as inserting each object, whatever the
    /// order, duplicates or shared terms: the analysis reads both alike.
    #[test]
    fn a_store_built_from_a_list_is_the_store_inserting_each_builds() {
        let mut objs = Vec::new();
        for i in (0..500).rev() {
            // Every third PV claims an `-orig` PVC; pairs of PVs claim the same PVC.
            let claim = format!("data-{}", i / 2);
            let orig = format!("data-orig-{i:04x}");
            let name = if i % 3 == 0 { &orig } else { &claim };
            objs.push(pv(&format!("pv-{i:04}"), Some(("t", name)), "1"));
        }
        objs.push(pv("pv-0007", None, "2")); // a later copy of one key wins
        objs.push(pv("pv-unclaimed", None, "1"));
        let mut one_by_one = Store::default();
        for o in &objs {
            one_by_one.insert(Arc::clone(o));
        }
        let built = Store::from_list(objs);
        let terms: Vec<String> = vec![
            ORIG_TERM.to_string(),
            claim_term("t", "data-5"),
            claim_term("t", "data-7"),
            claim_term("t", "data-3"),
            claim_term("t", "absent"),
        ];
        assert_eq!(picture(&built, &terms), picture(&one_by_one, &terms));
        assert_eq!(built.len(), 501);
        assert!(picture(&built, &terms).contains(&"pv-0007@2".to_string()));
        assert_eq!(built.by_term(&claim_term("t", "data-5")).len(), 2);
        assert!(
            built.by_term(&claim_term("t", "data-3")).is_empty(),
            "pv-0007 no longer claims"
        );
    }

    /// Terms that name one object keep working through every change: a second object joins,
    /// one leaves, the last leaves.
    #[test]
    fn a_term_follows_its_objects_from_one_to_many_and_back_to_none() {
        let term = claim_term("t", "data");
        let mut s = Store::from_list(vec![pv("pv-b", Some(("t", "data")), "1")]);
        s.insert(pv("pv-a", Some(("t", "data")), "1"));
        let names = |s: &Store<Pv>| -> Vec<String> {
            s.by_term(&term)
                .iter()
                .map(|o| o.meta.name.to_string())
                .collect()
        };
        assert_eq!(names(&s), ["pv-a", "pv-b"]);
        s.insert(pv("pv-b", None, "2"));
        assert_eq!(names(&s), ["pv-a"]);
        s.insert(pv("pv-a", Some(("t", "data")), "3"));
        assert_eq!(s.by_term(&term)[0].meta.resource_version, "3");
        s.remove(&ObjKey::cluster("pv-a"));
        assert!(names(&s).is_empty());
        assert!(
            s.terms.is_empty(),
            "an emptied term is dropped, not kept empty"
        );
    }

    #[test]
    fn a_relisted_kind_keeps_its_events_within_the_bound() {
        let mut objs = Vec::new();
        for i in 0..(EVENTS_PER_OBJECT + 50) {
            objs.push(event_about_r1(i));
        }
        let mut o = Objects::default();
        o.replace(Kind::Event, objs);
        assert_eq!(o.events.len(), EVENTS_PER_OBJECT);
        assert!(
            o.events.get("t", "r1.000").is_none(),
            "the oldest are dropped"
        );
        assert!(
            o.events
                .get("t", &format!("r1.{:03}", EVENTS_PER_OBJECT + 49))
                .is_some()
        );
    }
}
