//! Names and annotation keys the Cozystack backup controller derives, reproduced exactly: a
//! one-character difference here would send restorewatch looking at the wrong PVC.

use sha2::{Digest, Sha256};

/// Annotation carrying the UID of the RestoreJob that created an `-orig` PVC (controller after
/// the fix of the foreign-`-orig` report; absent on older clusters).
pub const ANN_RESTORE_JOB_UID: &str = "backups.cozystack.io/restore-job-uid";
/// Annotation recording a PV's reclaim policy from before the rename switched it to `Retain`.
pub const ANN_ORIGINAL_RECLAIM_POLICY: &str = "backups.cozystack.io/original-reclaim-policy";
/// Annotation restorewatch's `restart-restore` puts on the RestoreJob it creates: the UID of the
/// RestoreJob it restarts, so that a rerun finds the restart done instead of making another.
pub const ANN_RESTARTED_FROM: &str = "restorewatch.io/restarted-from";
/// Labels the controller puts on objects it creates for a RestoreJob. Their VALUES are the
/// RestoreJob's name and namespace, despite the key's wording.
pub const LABEL_OWNED_BY_NAME: &str = "backups.cozystack.io/owned-by.BackupJobName";
pub const LABEL_OWNED_BY_NAMESPACE: &str = "backups.cozystack.io/owned-by.BackupJobNamespace";
pub const LABEL_VELERO_RESTORE_UID: &str = "velero.io/restore-uid";
pub const LABEL_VELERO_RESTORE_NAME: &str = "velero.io/restore-name";
pub const LABEL_CNPG_CLUSTER: &str = "cnpg.io/cluster";
/// The bench's write marker on a watched PVC: read back to time a write to its frame.
pub const ANN_BENCH_SEQ: &str = "bench.restorewatch.io/seq";
/// The only label keys restorewatch reads. `Meta` keeps just these (the object text keeps
/// every label for the YAML view): a real object carries a dozen labels and annotations,
/// and thousands of objects of copies of values nobody reads is most of what metadata costs.
pub const READ_LABELS: &[&str] = &[
    LABEL_OWNED_BY_NAME,
    LABEL_OWNED_BY_NAMESPACE,
    LABEL_VELERO_RESTORE_UID,
    LABEL_VELERO_RESTORE_NAME,
    LABEL_CNPG_CLUSTER,
];
/// The only annotation keys restorewatch reads; see `READ_LABELS`.
pub const READ_ANNOTATIONS: &[&str] = &[
    ANN_RESTORE_JOB_UID,
    ANN_ORIGINAL_RECLAIM_POLICY,
    ANN_BENCH_SEQ,
    ANN_RESTARTED_FROM,
];
pub const BARMAN_PLUGIN: &str = "barman-cloud.cloudnative-pg.io";
pub const VELERO_NAMESPACE: &str = "cozy-velero";
pub const CNPG_HEALTHY: &str = "Cluster in healthy state";
/// The longest name a PVC may have (a DNS subdomain).
pub const MAX_NAME_LEN: usize = 253;

/// First 4 lowercase hex characters of SHA-256 of the RestoreJob's name (not namespace, not
/// UID): what the controller appends to `-orig` names.
pub fn short_hash(restore_job_name: &str) -> String {
    let digest = Sha256::digest(restore_job_name.as_bytes());
    format!("{:02x}{:02x}", digest[0], digest[1])
}

/// `<pvc>-orig-<shortHash(restore job name)>`, never truncated (as the controller does).
pub fn orig_pvc_name(pvc: &str, restore_job_name: &str) -> String {
    format!("{pvc}-orig-{}", short_hash(restore_job_name))
}

/// Splits `<pvc>-orig-<hash>` into the PVC name and the hash when the name has that shape.
pub fn parse_orig_name(name: &str) -> Option<(&str, &str)> {
    let (base, hash) = name.rsplit_once("-orig-")?;
    let is_hash = hash.len() == 4
        && hash
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    (is_hash && !base.is_empty()).then_some((base, hash))
}

pub fn vm_instance_release(app: &str) -> String {
    format!("vm-instance-{app}")
}
pub fn vm_disk_name(disk: &str) -> String {
    format!("vm-disk-{disk}")
}
pub fn postgres_release(app: &str) -> String {
    format!("postgres-{app}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_hash_matches_the_controller() {
        assert_eq!(short_hash("restore-test"), "de3e");
        assert_eq!(short_hash("rj"), "8604");
        assert_eq!(short_hash("restore-in-place-test"), "9491");
    }

    #[test]
    fn orig_names_round_trip() {
        let n = orig_pvc_name("vm-disk-data", "restore-test");
        assert_eq!(n, "vm-disk-data-orig-de3e");
        assert_eq!(parse_orig_name(&n), Some(("vm-disk-data", "de3e")));
        assert_eq!(parse_orig_name("vm-disk-data-orig-XYZ1"), None);
        assert_eq!(parse_orig_name("vm-disk-data"), None);
        assert_eq!(parse_orig_name("-orig-abcd"), None);
    }
}
