//! The scenario player: the built-in scenarios parse, play at high speed and reach their
//! documented end state.

use std::time::Duration;

use restorewatch::model::Kind;
use restorewatch::model::names::{orig_pvc_name, short_hash};
use restorewatch::sim::{Scenario, Sim, SimConfig, SimHandle, Store};
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(20);

async fn play(name: &str) -> SimHandle {
    let sim = Sim::start(SimConfig::default())
        .await
        .expect("emulator starts");
    let run = sim.play(Scenario::load(name).expect("built-in scenario"), 1000.0);
    let status = tokio::time::timeout(WAIT, run.finished())
        .await
        .unwrap_or_else(|_| panic!("{name} did not finish within {WAIT:?}: {:?}", run.status()));
    assert!(status.finished);
    assert!(status.errors.is_empty(), "{name}: {:?}", status.errors);
    assert_eq!(status.steps_applied, status.steps_total);
    sim
}

fn get(store: &Store, kind: Kind, ns: &str, name: &str) -> Value {
    store
        .get(kind, ns, name)
        .unwrap_or_else(|| panic!("{kind} {ns}/{name} missing at the end state"))
}

fn s<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

/// Protection finalizers are removed shortly after the scenario ends: wait for the
/// deleted objects to be really gone.
async fn gone(store: &Store, kind: Kind, ns: &str, name: &str, uid: &str) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while store
        .get(kind, ns, name)
        .is_some_and(|o| s(&o, "/metadata/uid") == uid)
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{kind} {ns}/{name} ({uid}) still there"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn builtin_scenarios_parse_and_are_listed() {
    let all = Scenario::builtin().unwrap();
    let names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
    assert!(
        names.contains(&"vm-healthy") && names.contains(&"pg-healthy"),
        "{names:?}"
    );
    for s in &all {
        assert!(!s.description.is_empty(), "{} has no description", s.name);
    }
    assert!(Scenario::load("no-such-scenario").is_err());
    assert!(
        Scenario::parse("name: x\nsteps:\n  - at: 1s\n").is_err(),
        "a step must do something"
    );
    assert!(Scenario::parse("name: x\nsteps:\n  - {at: soon, controllerManager: true}\n").is_err());
}

#[tokio::test]
async fn vm_healthy_reaches_its_end_state() {
    let sim = play("vm-healthy").await;
    let st = sim.store();
    let ns = "tenant-a";
    let hash = short_hash("restore-test");
    assert_eq!(hash, "de3e");
    let rj = get(st, Kind::RestoreJob, ns, "restore-test");
    assert_eq!(s(&rj, "/status/phase"), "Succeeded");
    let rj_uid = s(&rj, "/metadata/uid").to_string();
    for hr in ["vm-instance-vm1", "vm-disk-system", "vm-disk-data"] {
        assert_eq!(
            get(st, Kind::HelmRelease, ns, hr).pointer("/spec/suspend"),
            Some(&Value::Bool(false)),
            "{hr}"
        );
    }
    let vm = get(st, Kind::VirtualMachine, ns, "vm-instance-vm1");
    assert_eq!(s(&vm, "/spec/runStrategy"), "Always");
    assert_eq!(s(&vm, "/status/printableStatus"), "Running");
    assert_eq!(
        s(
            &get(st, Kind::VirtualMachineInstance, ns, "vm-instance-vm1"),
            "/status/phase"
        ),
        "Running"
    );
    for (disk, old_uid) in [
        ("system", "7e570000-0000-4000-8000-000000000101"),
        ("data", "7e570000-0000-4000-8000-000000000102"),
    ] {
        let pvc = format!("vm-disk-{disk}");
        let orig = get(
            st,
            Kind::PersistentVolumeClaim,
            ns,
            &orig_pvc_name(&pvc, "restore-test"),
        );
        assert_eq!(s(&orig, "/status/phase"), "Bound");
        assert_eq!(
            s(
                &orig,
                "/metadata/annotations/backups.cozystack.io~1restore-job-uid"
            ),
            rj_uid
        );
        assert_eq!(
            s(
                &orig,
                "/metadata/annotations/backups.cozystack.io~1original-reclaim-policy"
            ),
            "Delete"
        );
        let pv = get(st, Kind::PersistentVolume, "", s(&orig, "/spec/volumeName"));
        assert_eq!(s(&pv, "/spec/persistentVolumeReclaimPolicy"), "Retain");
        assert_eq!(
            s(
                &pv,
                "/metadata/annotations/backups.cozystack.io~1original-reclaim-policy"
            ),
            "Delete"
        );
        assert_eq!(s(&pv, "/spec/claimRef/name"), s(&orig, "/metadata/name"));
        assert_eq!(s(&pv, "/spec/claimRef/uid"), s(&orig, "/metadata/uid"));
        let restored = get(st, Kind::PersistentVolumeClaim, ns, &pvc);
        assert_ne!(
            s(&restored, "/metadata/uid"),
            old_uid,
            "{pvc} is the restored one"
        );
        assert_eq!(s(&restored, "/status/phase"), "Bound");
        let dv = get(st, Kind::DataVolume, ns, &pvc);
        assert_eq!(s(&dv, "/status/claimName"), pvc);
        assert_eq!(s(&dv, "/status/phase"), "Succeeded");
    }
    let restores = st.all(Kind::VeleroRestore, &Default::default());
    assert_eq!(restores.len(), 1);
    let restore = &restores[0];
    assert_eq!(s(restore, "/metadata/namespace"), "cozy-velero");
    assert_eq!(
        s(restore, "/metadata/generateName"),
        "tenant-a.restore-test-"
    );
    assert_eq!(s(restore, "/status/phase"), "Completed");
    assert_eq!(
        s(
            restore,
            "/metadata/labels/backups.cozystack.io~1owned-by.BackupJobName"
        ),
        "restore-test"
    );
    let dds = st.all(Kind::DataDownload, &Default::default());
    let mut targets: Vec<&str> = dds.iter().map(|d| s(d, "/spec/targetVolume/pvc")).collect();
    targets.sort();
    assert_eq!(targets, ["vm-disk-data", "vm-disk-system"]);
    for dd in &dds {
        assert_eq!(s(dd, "/status/phase"), "Completed");
        assert_eq!(
            s(dd, "/metadata/labels/velero.io~1restore-uid"),
            s(restore, "/metadata/uid")
        );
        assert_eq!(
            dd.pointer("/status/progress/bytesDone"),
            dd.pointer("/status/progress/totalBytes")
        );
    }
}

#[tokio::test]
async fn pg_healthy_reaches_its_end_state() {
    let sim = play("pg-healthy").await;
    let st = sim.store();
    let ns = "tenant-b";
    let rj = get(st, Kind::RestoreJob, ns, "restore-pg1");
    assert_eq!(s(&rj, "/status/phase"), "Succeeded");
    let conds: Vec<(&str, &str)> = rj
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .map(|c| c.iter().map(|c| (s(c, "/type"), s(c, "/status"))).collect())
        .unwrap_or_default();
    for t in ["WALArchiveReady", "TargetPurged", "Ready"] {
        assert!(conds.contains(&(t, "True")), "{t} not True: {conds:?}");
    }
    let app = get(st, Kind::Postgres, ns, "pg1");
    let new_name = s(&app, "/spec/bootstrap/newServerName").to_string();
    assert!(!new_name.is_empty());
    assert_eq!(
        get(st, Kind::HelmRelease, ns, "postgres-pg1").pointer("/spec/suspend"),
        Some(&Value::Bool(false))
    );
    let cluster = get(st, Kind::CnpgCluster, ns, "postgres-pg1");
    assert_eq!(s(&cluster, "/status/phase"), "Cluster in healthy state");
    assert_eq!(
        s(&cluster, "/metadata/uid"),
        "c0de0000-0000-4000-8000-000000000102",
        "the re-rendered Cluster"
    );
    assert_eq!(
        s(&cluster, "/spec/plugins/0/name"),
        "barman-cloud.cloudnative-pg.io"
    );
    assert_eq!(
        s(&cluster, "/spec/plugins/0/parameters/serverName"),
        new_name
    );
    assert!(cluster.pointer("/spec/bootstrap/recovery").is_some());
    assert_eq!(
        s(
            &cluster,
            "/spec/externalClusters/0/plugin/parameters/serverName"
        ),
        "postgres-pg1"
    );
    let store_obj = get(st, Kind::ObjectStore, ns, "postgres-pg1");
    assert_eq!(
        s(&store_obj, "/metadata/ownerReferences/0/uid"),
        s(&cluster, "/metadata/uid")
    );
    get(st, Kind::ObjectStore, ns, "postgres-pg1-recovery");
    let backup = get(st, Kind::CnpgBackup, ns, "pg1-backup-20250101");
    assert_eq!(s(&backup, "/status/phase"), "completed");
    assert!(!s(&backup, "/status/endWal").is_empty());
    for (pvc, old_uid) in [
        ("postgres-pg1-1", "c0de0000-0000-4000-8000-000000000201"),
        ("postgres-pg1-2", "c0de0000-0000-4000-8000-000000000202"),
    ] {
        let p = get(st, Kind::PersistentVolumeClaim, ns, pvc);
        assert_ne!(
            s(&p, "/metadata/uid"),
            old_uid,
            "{pvc} was purged and recreated"
        );
        assert_eq!(s(&p, "/status/phase"), "Bound");
    }
    for (old_pv, uid) in [
        (
            "pvc-c0de0000-0000-4000-8000-000000000201",
            "c0de0000-0000-4000-8000-00000000b201",
        ),
        (
            "pvc-c0de0000-0000-4000-8000-000000000202",
            "c0de0000-0000-4000-8000-00000000b202",
        ),
    ] {
        gone(st, Kind::PersistentVolume, "", old_pv, uid).await;
        assert!(
            st.get(Kind::PersistentVolume, "", old_pv).is_none(),
            "{old_pv} deleted with its claim"
        );
    }
}

#[tokio::test]
async fn apply_all_gives_the_same_end_state_without_waiting() {
    let sim = Sim::start(SimConfig::default()).await.unwrap();
    let errors = Scenario::load("vm-healthy").unwrap().apply_all(sim.store());
    assert!(errors.is_empty(), "{errors:?}");
    let rj = get(sim.store(), Kind::RestoreJob, "tenant-a", "restore-test");
    assert_eq!(s(&rj, "/status/phase"), "Succeeded");
}

/// Every `metadata.uid` and every `ownerReferences[].uid` under `v`.
fn uids(v: &Value, own: &mut Vec<String>, owners: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(u) = m.get("uid").and_then(Value::as_str)
                && m.contains_key("name")
                && (m.contains_key("namespace") || m.contains_key("creationTimestamp"))
            {
                own.push(u.to_string());
            }
            for r in m
                .get("ownerReferences")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                owners.push(s(r, "/uid").to_string());
            }
            m.values().for_each(|x| uids(x, own, owners));
        }
        Value::Array(a) => a.iter().for_each(|x| uids(x, own, owners)),
        _ => {}
    }
}

/// With a garbage collector, an owner uid that names nothing of the scenario makes its
/// dependent vanish: every owner must be one of the scenario's objects (report 003's stale
/// ObjectStore names the purged Cluster, which the scenario starts with).
#[test]
fn scenario_owner_references_name_scenario_objects() {
    for sc in Scenario::builtin().unwrap() {
        let (mut own, mut owners) = (Vec::new(), Vec::new());
        for o in &sc.objects {
            uids(o, &mut own, &mut owners);
        }
        for step in &sc.steps {
            for v in [step.create.as_ref(), step.patch.as_ref().map(|p| &p.patch)]
                .into_iter()
                .flatten()
            {
                uids(v, &mut own, &mut owners);
            }
        }
        for o in owners {
            assert!(
                own.contains(&o),
                "{}: an ownerReference names uid {o}, which no object of the scenario has",
                sc.name
            );
        }
    }
}
