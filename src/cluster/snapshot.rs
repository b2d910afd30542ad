//! The one picture of the cluster every consumer reads: objects by kind, how fresh each kind
//! is, and where the picture came from.

use crate::model::objects::*;
use crate::model::{AnyObject, Kind, Obj};
use jiff::Timestamp;
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjKey {
    /// Empty for cluster-scoped kinds.
    pub namespace: String,
    pub name: String,
}

impl ObjKey {
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        ObjKey {
            namespace: namespace.into(),
            name: name.into(),
        }
    }
    pub fn cluster(name: impl Into<String>) -> Self {
        ObjKey::new("", name)
    }
}

/// Objects of one kind, keyed by namespace and name.
#[derive(Debug, Clone)]
pub struct Store<T>(BTreeMap<ObjKey, Arc<Obj<T>>>);

impl<T> Default for Store<T> {
    fn default() -> Self {
        Store(BTreeMap::new())
    }
}

impl<T> Store<T> {
    pub fn get(&self, namespace: &str, name: &str) -> Option<&Arc<Obj<T>>> {
        // Building a key allocates; lookups happen a few hundred times per analysis at most.
        self.0.get(&ObjKey::new(namespace, name))
    }
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Obj<T>>> {
        self.0.values()
    }
    /// Objects of one namespace, in name order.
    pub fn in_namespace<'a, 'b>(
        &'a self,
        namespace: &'b str,
    ) -> impl Iterator<Item = &'a Arc<Obj<T>>> + use<'a, 'b, T> {
        self.0
            .range(ObjKey::new(namespace, "")..)
            .take_while(move |(k, _)| k.namespace == namespace)
            .map(|(_, v)| v)
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn insert(&mut self, obj: Obj<T>) {
        let key = ObjKey::new(obj.meta.namespace.clone(), obj.meta.name.clone());
        self.0.insert(key, Arc::new(obj));
    }
    pub fn remove(&mut self, key: &ObjKey) -> bool {
        self.0.remove(key).is_some()
    }
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
            pub fn insert(&mut self, obj: AnyObject) {
                match obj {
                    $(AnyObject::$variant(o) => self.$field.insert(o),)*
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
            pub fn raw(&self, kind: Kind, key: &ObjKey) -> Option<&str> {
                match kind {
                    $(Kind::$variant => self.$field.0.get(key).map(|o| &*o.raw),)*
                }
            }

            pub fn meta(&self, kind: Kind, key: &ObjKey) -> Option<&crate::model::Meta> {
                match kind {
                    $(Kind::$variant => self.$field.0.get(key).map(|o| &o.meta),)*
                }
            }

            pub fn keys(&self, kind: Kind) -> Vec<ObjKey> {
                match kind {
                    $(Kind::$variant => self.$field.0.keys().cloned().collect(),)*
                }
            }

            pub fn total(&self) -> usize {
                0 $(+ self.$field.len())*
            }
        }
    };
}

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
}

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
        }
    }
}

impl Snapshot {
    pub fn from_objects(objs: impl IntoIterator<Item = AnyObject>) -> Snapshot {
        let mut s = Snapshot::default();
        for o in objs {
            s.objects.insert(o);
        }
        s
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
