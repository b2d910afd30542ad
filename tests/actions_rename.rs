//! resume-rename against the emulator: never under a running VM or a finished restore, a
//! policy recorded only when it is known, the per-disk form, and the PV controller's late bind
//! waited for. A refusal is checked through kubectl to have written nothing; an allowed run by
//! its end state.

mod actions_support;

use actions_support::*;
use restorewatch::actions::execute::{Outcome, StepEvent, plan_fresh};
use restorewatch::actions::{ActionRequest, Op};
use restorewatch::analysis::ActionKind;
use restorewatch::model::Kind;
use serde_json::{Value, json};
use std::time::Duration;

fn vmi() -> Value {
    json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
        "metadata": {"name": "vm-instance-vm1", "namespace": NS, "uid": "71000000-0000-4000-8000-000000000011"},
        "status": {"phase": "Running"}})
}

fn pod(name: &str, claim: &str, phase: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
        "spec": {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": claim}}]},
        "status": {"phase": phase}})
}

fn with_phase(mut objs: Vec<Value>, phase: &str) -> Vec<Value> {
    objs[3] = rj(phase);
    objs
}

fn disk_req() -> ActionRequest {
    pvc_req(ActionKind::ResumeRename, "vm-disk-data")
}

#[tokio::test]
async fn no_rename_while_the_vm_runs_or_a_pod_mounts_the_disk() {
    // The VirtualMachineInstance still exists.
    let mut objs = rename_state("fresh");
    objs.push(vmi());
    let (sim, client) = sim_with(objs).await;
    for req in [rename_req(), disk_req()] {
        let why = refused_without_writes(&sim, &client, &req).await;
        assert!(
            why.contains("VirtualMachineInstance") && why.contains("Stop it"),
            "{why}"
        );
    }
    sim.shutdown().await;

    // The virt-launcher Pod mounts the disk by its PVC name.
    let mut objs = rename_state("orig-created");
    objs.push(pod("virt-launcher-vm1-x7k2p", "vm-disk-data", "Running"));
    let (sim, client) = sim_with(objs).await;
    let why = refused_without_writes(&sim, &client, &rename_req()).await;
    assert!(why.contains("virt-launcher-vm1-x7k2p"), "{why}");
    sim.shutdown().await;

    // A Pod on another claim bound to the same PV.
    let mut objs = rename_state("fresh");
    objs.push(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "inspect", "namespace": NS, "uid": "1a000000-0000-4000-8000-000000000012"},
        "spec": {"accessModes": ["ReadWriteOnce"], "volumeName": "pv-data"}, "status": {"phase": "Bound"}}));
    objs.push(pod("inspector", "inspect", "Running"));
    let (sim, client) = sim_with(objs).await;
    let why = refused_without_writes(&sim, &client, &rename_req()).await;
    assert!(why.contains("inspector (via inspect)"), "{why}");
    sim.shutdown().await;

    // Near miss: a finished Pod is no user; the rename goes through.
    let mut objs = rename_state("fresh");
    objs.push(pod("virt-launcher-vm1-old", "vm-disk-data", "Succeeded"));
    let (sim, client) = sim_binding(objs).await;
    let plan = plan_ok(&client, &rename_req()).await;
    let out = executor(&client, None).execute(&plan, |_| {}).await;
    assert_eq!(out, Outcome::Completed { writes: 5 });
    wait_gone(&sim, NS, "vm-disk-data").await;
    assert_kept(&sim, "finished pod", "Delete");
    sim.shutdown().await;
}

#[tokio::test]
async fn no_rename_once_the_restore_is_over_and_the_refusal_says_what_to_do() {
    for phase in ["Succeeded", "Failed"] {
        let (sim, client) = sim_with(with_phase(rename_state("orig-created"), phase)).await;
        for req in [
            rename_req(),
            disk_req(),
            pvc_req(ActionKind::ResumeRename, ORIG),
        ] {
            let why = refused_without_writes(&sim, &client, &req).await;
            assert!(why.contains(&format!("is {phase}")), "{phase}: {why}");
            assert!(
                why.contains("stop the VM")
                    && why.contains("Pending -orig PVC")
                    && why.contains("new RestoreJob name"),
                "{phase}: {why}"
            );
        }
        sim.shutdown().await;
    }
    // Near miss: a finished restore whose disks are all kept plans nothing (a rerun is a no-op).
    let (sim, client) = sim_with(with_phase(rename_state("complete"), "Succeeded")).await;
    let plan = plan_ok(&client, &rename_req()).await;
    assert!(plan.is_settled(), "{:?}", plan.ops);
    sim.shutdown().await;
}

/// A PV left Retain by an earlier keep attempt of the controller before the fix (it sets Retain
/// first), with that attempt's event on the RestoreJob.
fn after_failed_attempt(event: bool) -> Vec<Value> {
    let mut objs = base_objects("Running");
    objs.extend([original_pvc(), pv("Retain", "vm-disk-data", PVC_UID, None)]);
    if event {
        objs.push(failed_keep_event());
    }
    objs
}

fn recorded_policies(sim: &restorewatch::sim::SimHandle) -> (Option<String>, Option<String>) {
    let pv = get(sim, Kind::PersistentVolume, "", "pv-data").expect("PV");
    let orig = get(sim, Kind::PersistentVolumeClaim, NS, ORIG).expect("-orig PVC");
    let ann = |v: &Value| {
        v["metadata"]["annotations"]["backups.cozystack.io/original-reclaim-policy"]
            .as_str()
            .map(str::to_string)
    };
    (ann(&pv), ann(&orig))
}

#[tokio::test]
async fn a_retain_left_by_an_earlier_attempt_is_not_recorded_as_the_original() {
    let (sim, client) = sim_binding(after_failed_attempt(true)).await;
    let plan = plan_ok(&client, &rename_req()).await;
    assert!(
        !plan.ops.iter().any(|o| matches!(o, Op::AnnotatePv { .. })),
        "{:?}",
        plan.ops
    );
    assert!(
        plan.notes
            .iter()
            .any(|n| n.contains("policy before the rename is unknown")),
        "{:?}",
        plan.notes
    );
    let out = executor(&client, None).execute(&plan, |_| {}).await;
    assert!(matches!(out, Outcome::Completed { .. }), "{out:?}");
    wait_gone(&sim, NS, "vm-disk-data").await;
    assert_kept(&sim, "after a failed attempt", "");
    assert_eq!(
        recorded_policies(&sim),
        (None, None),
        "nothing recorded: reclaim-policy-unrecorded keeps showing"
    );
    let shown = kubectl(
        &sim,
        &[
            "get",
            "pvc",
            "-n",
            NS,
            ORIG,
            "-o",
            "jsonpath={.metadata.annotations}",
        ],
    )
    .await;
    assert!(!shown.contains("original-reclaim-policy"), "{shown}");
    sim.shutdown().await;

    // The operator who knows the policy gives it; it is recorded.
    let (sim, client) = sim_binding(after_failed_attempt(true)).await;
    let req = ActionRequest {
        policy: Some("Delete".into()),
        ..rename_req()
    };
    let plan = plan_ok(&client, &req).await;
    executor(&client, None).execute(&plan, |_| {}).await;
    wait_gone(&sim, NS, "vm-disk-data").await;
    assert_eq!(
        recorded_policies(&sim),
        (Some("Delete".into()), Some("Delete".into()))
    );
    sim.shutdown().await;

    // The same PV an hour later, its Event expired: still unknown under the Delete class
    // (issue 17: the Retain was once recorded as the original, and the volume leaked).
    let (sim, client) = sim_binding(after_failed_attempt(false)).await;
    let plan = plan_ok(&client, &rename_req()).await;
    executor(&client, None).execute(&plan, |_| {}).await;
    wait_gone(&sim, NS, "vm-disk-data").await;
    assert_eq!(recorded_policies(&sim), (None, None));
    sim.shutdown().await;

    // Near miss: a Retain class provisions Retain volumes: that is its policy, Event or not.
    let mut retain_class = after_failed_attempt(true);
    retain_class[1]["reclaimPolicy"] = json!("Retain");
    let (sim, client) = sim_binding(retain_class).await;
    let plan = plan_ok(&client, &rename_req()).await;
    executor(&client, None).execute(&plan, |_| {}).await;
    wait_gone(&sim, NS, "vm-disk-data").await;
    assert_eq!(
        recorded_policies(&sim),
        (Some("Retain".into()), Some("Retain".into()))
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn the_per_disk_form_finishes_the_rename_given_the_disk_or_its_orig_pvc() {
    for (state, target) in [
        ("fresh", "vm-disk-data"),
        ("orig-created", "vm-disk-data"),
        ("orig-created", ORIG),
        ("original-deleted", ORIG),
        ("prefix-race", ORIG),
    ] {
        let (sim, client) = sim_binding(rename_state(state)).await;
        let req = pvc_req(ActionKind::ResumeRename, target);
        let plan = plan_ok(&client, &req).await;
        assert_eq!(
            plan.restore.as_ref().map(|r| r.name.as_str()),
            Some("restore-test"),
            "{state} {target}"
        );
        let out = executor(&client, None).execute(&plan, |_| {}).await;
        assert!(
            matches!(out, Outcome::Completed { .. }),
            "{state} {target}: {out:?}"
        );
        wait_gone(&sim, NS, "vm-disk-data").await;
        assert_kept(
            &sim,
            &format!("{state} {target}"),
            if state == "prefix-race" { "" } else { "Delete" },
        );
        let shown = kubectl(
            &sim,
            &[
                "get",
                "pv",
                "pv-data",
                "-o",
                "jsonpath={.spec.claimRef.name}",
            ],
        )
        .await;
        assert_eq!(shown, ORIG, "{state} {target}");
        sim.shutdown().await;
    }
}

#[tokio::test]
async fn a_foreign_orig_name_on_one_disk_does_not_stop_keeping_the_other() {
    let (sim, client) = sim_binding(two_disks()).await;
    let why = refused_without_writes(&sim, &client, &rename_req()).await;
    assert!(
        why.contains("vm-disk-system-orig-de3e") && why.contains("--pvc"),
        "{why}"
    );
    let foreign_before = get(
        &sim,
        Kind::PersistentVolumeClaim,
        NS,
        "vm-disk-system-orig-de3e",
    );
    let plan = plan_ok(&client, &disk_req()).await;
    let out = executor(&client, None).execute(&plan, |_| {}).await;
    assert_eq!(out, Outcome::Completed { writes: 5 });
    wait_gone(&sim, NS, "vm-disk-data").await;
    assert_kept(&sim, "two disks", "Delete");
    // The other disk and the foreign PVC are untouched.
    let shown = kubectl(
        &sim,
        &[
            "get",
            "pv",
            "pv-system",
            "-o",
            "jsonpath={.spec.persistentVolumeReclaimPolicy} {.spec.claimRef.name}",
        ],
    )
    .await;
    assert_eq!(shown, "Delete vm-disk-system");
    assert_eq!(
        get(
            &sim,
            Kind::PersistentVolumeClaim,
            NS,
            "vm-disk-system-orig-de3e"
        ),
        foreign_before,
        "the foreign PVC is untouched"
    );
    let why = refused_without_writes(
        &sim,
        &client,
        &pvc_req(ActionKind::ResumeRename, "vm-disk-system"),
    )
    .await;
    assert!(why.contains("never touched"), "{why}");
    sim.shutdown().await;
}

/// What an action could have written to an object: its spec and our annotations (the PV
/// controller's bind adds its own annotations and status).
fn ours(
    sim: &restorewatch::sim::SimHandle,
    kind: Kind,
    ns: &str,
    name: &str,
) -> Option<(Value, Value, Value)> {
    get(sim, kind, ns, name).map(|v| {
        let ann = &v["metadata"]["annotations"];
        (
            v["spec"].clone(),
            ann["backups.cozystack.io/restore-job-uid"].clone(),
            ann["backups.cozystack.io/original-reclaim-policy"].clone(),
        )
    })
}

#[tokio::test]
async fn a_finished_rename_waits_for_the_pv_controller_and_says_so() {
    // The binder comes on its resync, a while later.
    let (sim, client) = awaiting_bind(Duration::from_millis(2500)).await;
    let plan = plan_ok(&client, &rename_req()).await;
    assert!(plan.ops.is_empty(), "nothing to write: {:?}", plan.ops);
    assert_eq!(plan.waits.len(), 1, "{:?}", plan.waits);
    let pv_before = ours(&sim, Kind::PersistentVolume, "", "pv-data");
    let orig_before = ours(&sim, Kind::PersistentVolumeClaim, NS, ORIG);
    let mut waited = Vec::new();
    let out = executor(&client, None)
        .execute(&plan, |e| {
            if let StepEvent::Waiting { pvc, waited_secs } = e {
                waited.push((pvc, waited_secs));
            }
        })
        .await;
    assert_eq!(out, Outcome::Completed { writes: 0 });
    assert!(
        waited.iter().any(|(p, _)| p == &format!("{NS}/{ORIG}")),
        "the wait is shown: {waited:?}"
    );
    assert!(
        waited.iter().any(|(_, s)| *s >= 1),
        "the shown wait counts seconds: {waited:?}"
    );
    let shown = kubectl(
        &sim,
        &[
            "get",
            "pvc",
            "-n",
            NS,
            ORIG,
            "-o",
            "jsonpath={.status.phase}",
        ],
    )
    .await;
    assert_eq!(shown, "Bound");
    // The action wrote nothing: the PV and the -orig PVC are as they were but for the bind.
    assert_eq!(ours(&sim, Kind::PersistentVolume, "", "pv-data"), pv_before);
    assert_eq!(
        ours(&sim, Kind::PersistentVolumeClaim, NS, ORIG),
        orig_before
    );
    // A rerun changes nothing.
    let rv = sim.store().current_rv();
    let again = plan_ok(&client, &rename_req()).await;
    assert!(again.is_settled(), "{:?} {:?}", again.ops, again.waits);
    assert_eq!(
        executor(&client, None).execute(&again, |_| {}).await,
        Outcome::Completed { writes: 0 }
    );
    assert_eq!(sim.store().current_rv(), rv);
    sim.shutdown().await;
}

#[tokio::test]
async fn the_wait_for_the_bind_is_bounded_and_writes_nothing() {
    let (sim, client) = awaiting_bind(Duration::from_secs(120)).await;
    let before = kubectl_state(&sim).await;
    let plan = plan_ok(&client, &rename_req()).await;
    let ex = restorewatch::actions::execute::Executor {
        bind_wait: Duration::from_millis(600),
        ..executor(&client, None)
    };
    match ex.execute(&plan, |_| {}).await {
        Outcome::Unbound {
            writes: 0, pending, ..
        } => assert_eq!(pending, vec![format!("{NS}/{ORIG}")]),
        other => panic!("the wait ends, saying what is still unbound: {other:?}"),
    }
    assert_eq!(kubectl_state(&sim).await, before, "nothing written");
    // Not a half-done rename: the plan has nothing to write, only the bind to wait for.
    let again = plan_fresh(&client, &rename_req()).await.unwrap().unwrap();
    assert!(again.ops.is_empty() && again.waits.len() == 1);
    sim.shutdown().await;
}
