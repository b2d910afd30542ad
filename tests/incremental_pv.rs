//! A PV change reaches every claim that names it in `spec.volumeName`, also one in a namespace
//! its own claimRef does not name: the PV controller's "already bound to a different claim"
//! case. The incremental analyser finds those claims through an index, not a scan of every
//! PVC; this holds it equal to a full `analyze` there.

use restorewatch::analysis::{Settings, analyze};
use restorewatch::cluster::files::load_bytes;
use restorewatch::cluster::{ObjKey, Snapshot, SyncState};
use restorewatch::model::Kind;
use restorewatch::pipeline::{Analyzer, Changes};
use std::sync::Arc;

const FIXTURE: &str = "tests/fixtures/rename-half-done/near-miss-waiting-for-bind.yaml";
const PV: &str = "pvc-14c923ac-8199-4792-ad2a-ab35489c1f65";

fn snapshot(text: &str, now: jiff::Timestamp) -> Snapshot {
    let mut snap = Snapshot::default();
    snap.mark_every_kind(SyncState::Synced, Some(now));
    for o in load_bytes(text.as_bytes(), FIXTURE).objects {
        snap.objects.insert(o);
    }
    snap
}

#[test]
fn a_pv_claimed_from_another_namespace_still_redoes_the_claim_that_names_it() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    let text = std::fs::read_to_string(path).expect("fixture");
    // The PV's claimRef names a claim in another namespace, before and after the change, so
    // only the tenant's PVC (its volumeName) ties the PV to the tenant's restore.
    let claim = "      name: vm-disk-system-orig-de3e\n      namespace: tenant-a\n";
    assert!(text.contains(claim), "the fixture still has the claimRef");
    let elsewhere = text.replace(
        claim,
        "      name: vm-disk-system-orig-de3e\n      namespace: tenant-elsewhere\n",
    );
    let before = elsewhere.clone();
    let policy = "persistentVolumeReclaimPolicy: Retain";
    assert!(elsewhere.contains(policy));
    // The change: the same PV, now with another reclaim policy (what the rename writes).
    let pv_at = elsewhere.find(PV).expect("the PV");
    let (head, tail) = elsewhere.split_at(pv_at);
    let after = format!(
        "{head}{}",
        tail.replacen(policy, "persistentVolumeReclaimPolicy: Delete", 1)
    );
    assert_ne!(before, after);

    let now: jiff::Timestamp = "2026-09-21T10:05:00Z".parse().unwrap();
    let settings = Settings::default();
    let old = Arc::new(snapshot(&before, now));
    let new = Arc::new(snapshot(&after, now));
    let mut a = Analyzer::new(Arc::clone(&old), settings.clone(), now);
    let stale = Arc::clone(a.report());
    let mut changes = Changes::default();
    changes.object(
        Kind::PersistentVolume,
        ObjKey::new(String::new(), PV.to_string()),
    );
    let inc = a.apply(Arc::clone(&new), &changes);
    let full = analyze(&new, &settings, now);
    // The change is visible to the tenant's restore at all (else the test proves nothing)...
    assert_ne!(*stale, full, "the PV change alters the tenant's report");
    // ...and the incremental report has it.
    assert!(*inc == full, "incremental: {inc:#?}\nfull: {full:#?}");
}
