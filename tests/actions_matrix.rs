//! Plan and guard agree: over every starting state of one disk's rename (PV policy, recorded
//! policy, original PVC, `-orig` PVC, where the PV's claimRef points and with which UID), either
//! the plan refuses and nothing is written, or, with nobody else writing but the PV
//! controller's bind, the execution completes and a rerun plans nothing. Never a plan that the
//! executor's own guards stop halfway.

mod actions_support;

use actions_support::*;
use restorewatch::actions::execute::{Outcome, plan_fresh};
use restorewatch::model::Kind;
use serde_json::{Value, json};

const ORIG_UID: &str = "0e000000-0000-4000-8000-000000000005";

#[derive(Debug, Clone, Copy)]
enum OrigState {
    Absent,
    OursAnnotated,
    OursUnannotated,
    OursBound,
}

#[derive(Debug, Clone, Copy)]
enum Claim {
    OriginalWithUid,
    OriginalWithoutUid,
    OrigWithUid,
    OrigWithoutUid,
    OrigOtherUid,
    None,
}

fn state(
    policy: &str,
    recorded: bool,
    original: bool,
    orig: OrigState,
    claim: Claim,
) -> Vec<Value> {
    let mut objs = base_objects("Running");
    if original {
        objs.push(original_pvc());
    }
    match orig {
        OrigState::Absent => {}
        OrigState::OursAnnotated => objs.push(orig_pvc(ORIG_UID, Some(RJ_UID), "Pending")),
        OrigState::OursUnannotated => objs.push(orig_pvc(ORIG_UID, None, "Pending")),
        OrigState::OursBound => objs.push(orig_pvc(ORIG_UID, Some(RJ_UID), "Bound")),
    }
    let mut v = pv(policy, "x", "x", recorded.then_some("Delete"));
    v["spec"]["claimRef"] = match claim {
        Claim::OriginalWithUid => json!({"namespace": NS, "name": "vm-disk-data", "uid": PVC_UID}),
        Claim::OriginalWithoutUid => json!({"namespace": NS, "name": "vm-disk-data"}),
        Claim::OrigWithUid => json!({"namespace": NS, "name": ORIG, "uid": ORIG_UID}),
        Claim::OrigWithoutUid => json!({"namespace": NS, "name": ORIG}),
        Claim::OrigOtherUid => {
            json!({"namespace": NS, "name": ORIG, "uid": "0d000000-0000-4000-8000-00000000000f"})
        }
        Claim::None => Value::Null,
    };
    objs.push(v);
    objs
}

#[tokio::test]
async fn every_starting_state_is_either_refused_before_any_write_or_finished() {
    let mut accepted = 0;
    let mut refused = 0;
    for policy in ["Delete", "Retain"] {
        for recorded in [false, true] {
            for original in [true, false] {
                for orig in [
                    OrigState::Absent,
                    OrigState::OursAnnotated,
                    OrigState::OursUnannotated,
                    OrigState::OursBound,
                ] {
                    for claim in [
                        Claim::OriginalWithUid,
                        Claim::OriginalWithoutUid,
                        Claim::OrigWithUid,
                        Claim::OrigWithoutUid,
                        Claim::OrigOtherUid,
                        Claim::None,
                    ] {
                        let label = format!(
                            "policy {policy}, recorded {recorded}, original {original}, -orig {orig:?}, claimRef {claim:?}"
                        );
                        let (sim, client) =
                            sim_with(state(policy, recorded, original, orig, claim)).await;
                        // The emulator's binder completes a bind the state leaves half done
                        // (as kube-controller-manager would) before the operator acts.
                        sim.controllers_idle().await;
                        let before = ours_state(&sim);
                        let planned = plan_fresh(&client, &rename_req()).await.expect("reads");
                        let plan = match planned {
                            Err(r) => {
                                refused += 1;
                                assert_eq!(
                                    ours_state(&sim),
                                    before,
                                    "{label}: refused ({}) but written",
                                    r.reason
                                );
                                sim.shutdown().await;
                                continue;
                            }
                            Ok(p) => p,
                        };
                        accepted += 1;
                        let _binder =
                            spawn_binder(client.clone(), std::time::Duration::from_millis(20));
                        let out = executor(&client, None).execute(&plan, |_| {}).await;
                        assert!(
                            matches!(out, Outcome::Completed { .. }),
                            "{label}: the plan {:?} was accepted, so it must finish: {out:?}",
                            plan.ops
                        );
                        // Finished means finished: a rerun plans nothing and waits for nothing.
                        let again = plan_fresh(&client, &rename_req())
                            .await
                            .expect("reads")
                            .unwrap_or_else(|r| panic!("{label}: rerun refused: {}", r.reason));
                        assert!(
                            again.is_settled(),
                            "{label}: rerun plans {:?}, waits {:?}",
                            again.ops,
                            again.waits
                        );
                        // And where there was a disk to keep, it is kept.
                        if !plan.ops.is_empty() {
                            let pv = get(&sim, Kind::PersistentVolume, "", "pv-data").unwrap();
                            let orig = get(&sim, Kind::PersistentVolumeClaim, NS, ORIG)
                                .unwrap_or_else(|| panic!("{label}: no -orig PVC"));
                            assert_eq!(pv["spec"]["claimRef"]["name"], ORIG, "{label}");
                            assert_eq!(
                                pv["spec"]["claimRef"]["uid"], orig["metadata"]["uid"],
                                "{label}"
                            );
                            assert_eq!(
                                pv["spec"]["persistentVolumeReclaimPolicy"], "Retain",
                                "{label}"
                            );
                        }
                        sim.shutdown().await;
                    }
                }
            }
        }
    }
    eprintln!("rename matrix: {accepted} accepted and finished, {refused} refused without a write");
    // The matrix holds both kinds of states (a test that could only refuse proves nothing).
    assert!(
        accepted >= 40 && refused >= 20,
        "accepted {accepted}, refused {refused}"
    );
}

fn reclaim_state(
    policy: &str,
    pv_recorded: bool,
    orig_recorded: Option<&str>,
    claim: Claim,
) -> Vec<Value> {
    let mut objs = base_objects("Succeeded");
    objs.push(restored_pvc());
    let mut orig = orig_pvc(ORIG_UID, Some(RJ_UID), "Bound");
    match orig_recorded {
        Some(r) => {
            orig["metadata"]["annotations"]["backups.cozystack.io/original-reclaim-policy"] =
                json!(r)
        }
        None => {
            if let Some(a) = orig["metadata"]["annotations"].as_object_mut() {
                a.remove("backups.cozystack.io/original-reclaim-policy");
            }
        }
    }
    objs.push(orig);
    let mut v = pv(policy, "x", "x", pv_recorded.then_some("Delete"));
    v["spec"]["claimRef"] = match claim {
        Claim::OriginalWithUid => {
            json!({"namespace": NS, "name": "vm-disk-data", "uid": "7e000000-0000-4000-8000-000000000009"})
        }
        Claim::OriginalWithoutUid => json!({"namespace": NS, "name": "vm-disk-data"}),
        Claim::OrigWithUid => json!({"namespace": NS, "name": ORIG, "uid": ORIG_UID}),
        Claim::OrigWithoutUid => json!({"namespace": NS, "name": ORIG}),
        Claim::OrigOtherUid => {
            json!({"namespace": NS, "name": ORIG, "uid": "0d000000-0000-4000-8000-00000000000f"})
        }
        Claim::None => Value::Null,
    };
    objs.push(v);
    // Its copy proven restored, so that only the PV and the claims decide.
    objs.extend(restore_proof("Completed"));
    objs
}

#[tokio::test]
async fn every_reclaim_state_is_either_refused_before_any_write_or_finished_without_a_leak() {
    let (mut accepted, mut refused) = (0, 0);
    for policy in ["Delete", "Retain"] {
        for pv_recorded in [false, true] {
            for orig_recorded in [None, Some("Delete"), Some("Retain")] {
                for claim in [
                    Claim::OriginalWithUid,
                    Claim::OriginalWithoutUid,
                    Claim::OrigWithUid,
                    Claim::OrigWithoutUid,
                    Claim::OrigOtherUid,
                    Claim::None,
                ] {
                    for asked in [None, Some("Retain"), Some("Delete")] {
                        let label = format!(
                            "PV {policy}, PV recorded {pv_recorded}, -orig recorded {orig_recorded:?}, claimRef {claim:?}, --policy {asked:?}"
                        );
                        let (sim, client) =
                            sim_with(reclaim_state(policy, pv_recorded, orig_recorded, claim))
                                .await;
                        let req = restorewatch::actions::ActionRequest {
                            policy: asked.map(str::to_string),
                            ..pvc_req(restorewatch::analysis::ActionKind::ReclaimOrig, ORIG)
                        };
                        sim.controllers_idle().await;
                        let before = ours_state(&sim);
                        let plan = match plan_fresh(&client, &req).await.expect("reads") {
                            Err(r) => {
                                refused += 1;
                                assert_eq!(
                                    ours_state(&sim),
                                    before,
                                    "{label}: refused ({}) but written",
                                    r.reason
                                );
                                sim.shutdown().await;
                                continue;
                            }
                            Ok(p) => p,
                        };
                        accepted += 1;
                        let out = executor(&client, None).execute(&plan, |_| {}).await;
                        assert!(
                            matches!(out, Outcome::Completed { .. }),
                            "{label}: the plan {:?} was accepted, so it must finish: {out:?}",
                            plan.ops
                        );
                        wait_gone(&sim, NS, ORIG).await;
                        // Its own PV never stays Retain when Delete was the recorded original.
                        let pv = get(&sim, Kind::PersistentVolume, "", "pv-data").unwrap();
                        let recorded = orig_recorded.or(pv_recorded.then_some("Delete"));
                        if matches!(claim, Claim::OrigWithUid) && recorded == Some("Delete") {
                            assert_eq!(
                                pv["spec"]["persistentVolumeReclaimPolicy"], "Delete",
                                "{label}: the volume would leak"
                            );
                        }
                        // Another claim's PV is never changed.
                        if !matches!(claim, Claim::OrigWithUid) {
                            assert_eq!(
                                pv["spec"]["persistentVolumeReclaimPolicy"], policy,
                                "{label}: another claim's PV was changed"
                            );
                        }
                        sim.shutdown().await;
                    }
                }
            }
        }
    }
    eprintln!(
        "reclaim matrix: {accepted} accepted and finished, {refused} refused without a write"
    );
    assert!(
        accepted >= 30 && refused >= 30,
        "accepted {accepted}, refused {refused}"
    );
}
