//! The registry of every kind restorewatch reads or writes: one table that the model, the
//! emulator, the live watchers and kubectl-style discovery all share, so that a group, a plural
//! or a scope is spelled in exactly one place.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Kind {
    Namespace,
    PersistentVolumeClaim,
    PersistentVolume,
    StorageClass,
    Pod,
    Event,
    RestoreJob,
    Backup,
    DataVolume,
    VirtualMachine,
    VirtualMachineInstance,
    HelmRelease,
    VeleroRestore,
    DataDownload,
    VeleroBackup,
    CnpgCluster,
    CnpgBackup,
    ObjectStore,
    Postgres,
}

/// Static facts about a kind as the API server serves it.
#[derive(Debug, Clone, Copy)]
pub struct KindInfo {
    pub kind: Kind,
    /// The `kind` field of the object (`Restore`, not `VeleroRestore`).
    pub api_kind: &'static str,
    /// Empty for the core group.
    pub group: &'static str,
    pub version: &'static str,
    pub plural: &'static str,
    pub singular: &'static str,
    pub namespaced: bool,
    /// Whether `status` lives behind the `/status` subresource (create drops it, patches of
    /// the main resource ignore it).
    pub status_subresource: bool,
    pub short_names: &'static [&'static str],
    /// Human label for headers and messages ("PVC", "DataVolume").
    pub label: &'static str,
}

impl KindInfo {
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `<plural>[.<group>]`, as kubectl names a resource: unique where the kind is not
    /// (`backups.backups.cozystack.io` vs `backups.postgresql.cnpg.io`).
    pub fn resource_name(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_string()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }
}

#[allow(clippy::too_many_arguments)]
const fn info(
    kind: Kind,
    api_kind: &'static str,
    group: &'static str,
    version: &'static str,
    plural: &'static str,
    singular: &'static str,
    namespaced: bool,
    status_subresource: bool,
    short_names: &'static [&'static str],
    label: &'static str,
) -> KindInfo {
    KindInfo {
        kind,
        api_kind,
        group,
        version,
        plural,
        singular,
        namespaced,
        status_subresource,
        short_names,
        label,
    }
}

pub const KINDS: &[KindInfo] = &[
    info(
        Kind::Namespace,
        "Namespace",
        "",
        "v1",
        "namespaces",
        "namespace",
        false,
        true,
        &["ns"],
        "Namespace",
    ),
    info(
        Kind::PersistentVolumeClaim,
        "PersistentVolumeClaim",
        "",
        "v1",
        "persistentvolumeclaims",
        "persistentvolumeclaim",
        true,
        true,
        &["pvc"],
        "PVC",
    ),
    info(
        Kind::PersistentVolume,
        "PersistentVolume",
        "",
        "v1",
        "persistentvolumes",
        "persistentvolume",
        false,
        true,
        &["pv"],
        "PV",
    ),
    info(
        Kind::StorageClass,
        "StorageClass",
        "storage.k8s.io",
        "v1",
        "storageclasses",
        "storageclass",
        false,
        false,
        &["sc"],
        "StorageClass",
    ),
    info(
        Kind::Pod,
        "Pod",
        "",
        "v1",
        "pods",
        "pod",
        true,
        true,
        &["po"],
        "Pod",
    ),
    info(
        Kind::Event,
        "Event",
        "",
        "v1",
        "events",
        "event",
        true,
        false,
        &["ev"],
        "Event",
    ),
    info(
        Kind::RestoreJob,
        "RestoreJob",
        "backups.cozystack.io",
        "v1alpha1",
        "restorejobs",
        "restorejob",
        true,
        true,
        &[],
        "RestoreJob",
    ),
    info(
        Kind::Backup,
        "Backup",
        "backups.cozystack.io",
        "v1alpha1",
        "backups",
        "backup",
        true,
        false,
        &[],
        "Backup",
    ),
    info(
        Kind::DataVolume,
        "DataVolume",
        "cdi.kubevirt.io",
        "v1beta1",
        "datavolumes",
        "datavolume",
        true,
        true,
        &["dv", "dvs"],
        "DataVolume",
    ),
    info(
        Kind::VirtualMachine,
        "VirtualMachine",
        "kubevirt.io",
        "v1",
        "virtualmachines",
        "virtualmachine",
        true,
        true,
        &["vm", "vms"],
        "VM",
    ),
    info(
        Kind::VirtualMachineInstance,
        "VirtualMachineInstance",
        "kubevirt.io",
        "v1",
        "virtualmachineinstances",
        "virtualmachineinstance",
        true,
        true,
        &["vmi", "vmis"],
        "VMI",
    ),
    info(
        Kind::HelmRelease,
        "HelmRelease",
        "helm.toolkit.fluxcd.io",
        "v2",
        "helmreleases",
        "helmrelease",
        true,
        true,
        &["hr"],
        "HelmRelease",
    ),
    info(
        Kind::VeleroRestore,
        "Restore",
        "velero.io",
        "v1",
        "restores",
        "restore",
        true,
        false,
        &[],
        "Velero Restore",
    ),
    info(
        Kind::DataDownload,
        "DataDownload",
        "velero.io",
        "v2alpha1",
        "datadownloads",
        "datadownload",
        true,
        false,
        &[],
        "DataDownload",
    ),
    info(
        Kind::VeleroBackup,
        "Backup",
        "velero.io",
        "v1",
        "backups",
        "backup",
        true,
        false,
        &[],
        "Velero Backup",
    ),
    info(
        Kind::CnpgCluster,
        "Cluster",
        "postgresql.cnpg.io",
        "v1",
        "clusters",
        "cluster",
        true,
        true,
        &[],
        "CNPG Cluster",
    ),
    info(
        Kind::CnpgBackup,
        "Backup",
        "postgresql.cnpg.io",
        "v1",
        "backups",
        "backup",
        true,
        true,
        &[],
        "CNPG Backup",
    ),
    info(
        Kind::ObjectStore,
        "ObjectStore",
        "barmancloud.cnpg.io",
        "v1",
        "objectstores",
        "objectstore",
        true,
        true,
        &[],
        "ObjectStore",
    ),
    info(
        Kind::Postgres,
        "Postgres",
        "apps.cozystack.io",
        "v1alpha1",
        "postgreses",
        "postgres",
        true,
        false,
        &[],
        "Postgres",
    ),
];

impl Kind {
    pub fn info(self) -> &'static KindInfo {
        // KINDS is in enum order; the test below keeps it that way.
        &KINDS[self as usize]
    }

    pub fn all() -> impl Iterator<Item = Kind> {
        KINDS.iter().map(|k| k.kind)
    }

    /// Finds a kind from an object's `apiVersion` and `kind`. The group matters: three groups
    /// have a kind called `Backup`.
    pub fn from_api(api_version: &str, api_kind: &str) -> Option<Kind> {
        let group = api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("");
        KINDS
            .iter()
            .find(|k| k.api_kind == api_kind && k.group == group)
            .map(|k| k.kind)
    }

    pub fn from_group_plural(group: &str, plural: &str) -> Option<Kind> {
        KINDS
            .iter()
            .find(|k| k.group == group && k.plural == plural)
            .map(|k| k.kind)
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.info().api_kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_enum_order_and_lookups_round_trip() {
        for (i, k) in KINDS.iter().enumerate() {
            assert_eq!(k.kind as usize, i, "{:?} out of order", k.kind);
            assert_eq!(Kind::from_api(&k.api_version(), k.api_kind), Some(k.kind));
            assert_eq!(Kind::from_group_plural(k.group, k.plural), Some(k.kind));
        }
    }

    #[test]
    fn backup_kinds_are_told_apart_by_group() {
        assert_eq!(
            Kind::from_api("backups.cozystack.io/v1alpha1", "Backup"),
            Some(Kind::Backup)
        );
        assert_eq!(
            Kind::from_api("postgresql.cnpg.io/v1", "Backup"),
            Some(Kind::CnpgBackup)
        );
        // Read since issue 25: a restore from a Velero Backup that is gone hangs forever.
        assert_eq!(
            Kind::from_api("velero.io/v1", "Backup"),
            Some(Kind::VeleroBackup)
        );
        assert_eq!(
            Kind::from_api("v1", "PersistentVolumeClaim"),
            Some(Kind::PersistentVolumeClaim)
        );
    }
}
