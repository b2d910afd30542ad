//! The bulk reclaim against the emulator through a real `kube::Client`: the `-orig` screen's
//! marks, the one dialog, its typed confirmation and the action worker running each PVC's plan
//! in turn. Every PVC must end exactly as when reclaim-orig runs on it alone (on a second
//! emulator with the same objects), and a refused one is checked through kubectl to have been
//! written nothing.

#[path = "actions_support/mod.rs"]
mod actions_support;
mod common;

use actions_support::{executor, kubectl, ours_state, wait_gone};
use common::bulk_data::{self, NOW};
use common::{press, pump, typ, worker};
use crossterm::event::KeyCode;
use restorewatch::actions::execute::{Outcome, plan_fresh};
use restorewatch::actions::{ActionRequest, Target};
use restorewatch::analysis::ActionKind;
use restorewatch::sim::{Policy, Sim, SimConfig, SimHandle};

use restorewatch::ui::app::{App, Modal};
use restorewatch::ui::bulk::{Bulk, Run, Stage};
use restorewatch::ui::dialog::Perms;

async fn sim() -> SimHandle {
    sim_with(SimConfig::default()).await
}

/// With bearer tokens: `admin` may do everything, `viewer` only read.
async fn sim_with_tokens() -> SimHandle {
    let mut tokens = std::collections::HashMap::new();
    tokens.insert(
        "admin".to_string(),
        Policy::builtin("admin").expect("admin"),
    );
    tokens.insert(
        "viewer".to_string(),
        Policy::builtin("readonly").expect("readonly"),
    );
    sim_with(SimConfig {
        tokens,
        ..SimConfig::default()
    })
    .await
}

async fn sim_with(config: SimConfig) -> SimHandle {
    let sim = Sim::start(config).await.expect("emulator");
    for o in bulk_data::objects() {
        sim.store().load(o).expect("object loads");
    }
    sim
}

fn bulk(a: &App) -> &Bulk {
    match &a.modal {
        Some(Modal::Bulk(b)) => b,
        other => panic!("no bulk dialog: {other:?}"),
    }
}

/// Every `-orig` PVC of the data, both namespaces.
fn targets() -> Vec<Target> {
    let mut v: Vec<Target> = bulk_data::origs()
        .into_iter()
        .map(|name| Target::Pvc {
            namespace: bulk_data::NS.into(),
            name,
        })
        .collect();
    v.push(Target::Pvc {
        namespace: "tenant-b".into(),
        name: "vm-disk-app-orig-8604".into(),
    });
    v
}

/// What kubectl shows of a PVC and its PV: resourceVersions and policy, or that it is gone.
async fn shown(sim: &SimHandle, t: &Target) -> String {
    let pvcs = kubectl(sim, &["get", "pvc", "-n", t.namespace(), "-o", "name"]).await;
    if !pvcs
        .lines()
        .any(|l| l == format!("persistentvolumeclaim/{}", t.name()))
    {
        return "gone".into();
    }
    let pvc = kubectl(
        sim,
        &[
            "get",
            "pvc",
            t.name(),
            "-n",
            t.namespace(),
            "-o",
            "jsonpath={.metadata.resourceVersion} {.metadata.deletionTimestamp} {.spec.volumeName}",
        ],
    )
    .await;
    let pv_name = pvc
        .split_whitespace()
        .last()
        .unwrap_or_default()
        .to_string();
    let pv = kubectl(
        sim,
        &[
            "get",
            "pv",
            &pv_name,
            "-o",
            "jsonpath={.metadata.resourceVersion} {.spec.persistentVolumeReclaimPolicy} {.metadata.annotations}",
        ],
    )
    .await;
    format!("pvc {pvc} | pv {pv}")
}

/// reclaim-orig on each PVC alone, as the single dialog or `restorewatch action` runs it:
/// planned from fresh reads, executed if planned. `true` where it reclaimed.
async fn alone(sim: &SimHandle, discard: bool) -> Vec<bool> {
    let client = sim.client().expect("client");
    let mut v = Vec::new();
    for t in targets() {
        let mut req = ActionRequest::new(ActionKind::ReclaimOrig, t.clone());
        req.discard_only_copy = discard;
        match plan_fresh(&client, &req).await.expect("reads work") {
            Ok(p) => {
                let out = executor(&client, None).execute(&p, |_| {}).await;
                assert!(matches!(out, Outcome::Completed { .. }), "{t}: {out:?}");
                wait_gone(sim, t.namespace(), t.name()).await;
                v.push(true);
            }
            Err(_) => v.push(false),
        }
    }
    v
}

/// The same through the dashboard: `:orig`, Space on every row, `a`, the consent (or not),
/// the typed confirmation, and the worker running each PVC in turn.
async fn in_bulk(sim: &SimHandle, consent: bool) -> (Vec<bool>, App) {
    let (worker, mut rx) = worker(sim, "");
    let mut a = common::action_data::app_on(bulk_data::objects(), NOW, 120, 40);
    press(&mut a, KeyCode::Char(':'));
    typ(&mut a, "orig");
    press(&mut a, KeyCode::Enter);
    for _ in targets() {
        press(&mut a, KeyCode::Char(' '));
        press(&mut a, KeyCode::Char('j'));
    }
    press(&mut a, KeyCode::Char('a'));
    assert!(matches!(bulk(&a).stage, Stage::Consent { .. }));
    // The one PVC that may be the only copy (logs) is asked about by name.
    if consent {
        typ(&mut a, "discard vm-disk-logs-orig-de3e");
    }
    press(&mut a, KeyCode::Enter);
    pump(&mut a, &worker, &mut rx, |a| {
        !matches!(
            bulk(a).stage,
            Stage::Review {
                perms: Perms::Checking,
                ..
            }
        )
    })
    .await;
    assert!(matches!(
        bulk(&a).stage,
        Stage::Review {
            perms: Perms::Allowed,
            ..
        }
    ));
    let phrase = bulk(&a).phrase();
    typ(&mut a, &phrase);
    press(&mut a, KeyCode::Enter);
    pump(&mut a, &worker, &mut rx, |a| {
        matches!(bulk(a).stage, Stage::Finished)
    })
    .await;
    let b = bulk(&a);
    let mut done = Vec::new();
    for (i, t) in b.items.iter().zip(targets()) {
        assert_eq!(i.target, t);
        let ok = match &i.run {
            Run::Done { outcome, .. } => {
                assert!(
                    matches!(outcome, Outcome::Completed { .. }),
                    "{t}: {outcome:?}"
                );
                true
            }
            Run::Skipped => {
                assert!(i.refusal().is_some(), "{t} not run and not refused");
                false
            }
            other => panic!("{t}: {other:?}"),
        };
        if ok {
            wait_gone(sim, t.namespace(), t.name()).await;
        }
        done.push(ok);
    }
    (done, a)
}

/// A user who may not write: the one permission check for every write of the batch denies it,
/// the dialog names the missing verbs, and the typed phrase runs nothing.
async fn forbidden_for_a_viewer(sim: &SimHandle) {
    let (viewer, mut rx) = worker(sim, "viewer");
    let mut a = common::action_data::app_on(bulk_data::objects(), NOW, 120, 40);
    press(&mut a, KeyCode::Char(':'));
    typ(&mut a, "orig");
    press(&mut a, KeyCode::Enter);
    press(&mut a, KeyCode::Char(' '));
    press(&mut a, KeyCode::Char('a'));
    pump(&mut a, &viewer, &mut rx, |a| {
        !matches!(
            bulk(a).stage,
            Stage::Review {
                perms: Perms::Checking,
                ..
            }
        )
    })
    .await;
    match &bulk(&a).stage {
        Stage::Review {
            perms: Perms::Denied(d),
            ..
        } => {
            let verbs: Vec<&str> = d.iter().map(|d| d.verb.as_str()).collect();
            assert_eq!(verbs, vec!["patch", "delete"], "{d:?}");
        }
        s => panic!("{s:?}"),
    }
    typ(&mut a, "reclaim 1");
    press(&mut a, KeyCode::Enter);
    assert!(
        a.outbox.is_empty(),
        "nothing goes to the worker: {:?}",
        a.outbox
    );
    assert!(matches!(bulk(&a).stage, Stage::Review { .. }));
}

#[tokio::test]
async fn a_bulk_reclaim_ends_each_pvc_as_reclaiming_it_alone_and_writes_nothing_for_the_refused() {
    let state = tempfile::tempdir().expect("tempdir");
    // SAFETY: this binary has this one test; nothing else reads the environment meanwhile.
    unsafe { std::env::set_var("XDG_STATE_HOME", state.path()) };

    for consent in [false, true] {
        let (bulk_sim, alone_sim) = (sim().await, sim().await);
        let mut before = Vec::new();
        for t in targets() {
            before.push(shown(&bulk_sim, &t).await);
        }
        if !consent {
            let guarded = sim_with_tokens().await;
            let rv = guarded.store().current_rv();
            forbidden_for_a_viewer(&guarded).await;
            assert_eq!(
                guarded.store().current_rv(),
                rv,
                "a forbidden batch writes nothing"
            );
            guarded.shutdown().await;
        }
        let (bulk_done, a) = in_bulk(&bulk_sim, consent).await;
        let alone_done = alone(&alone_sim, consent).await;
        assert_eq!(bulk_done, alone_done, "consent {consent}");
        // data and web always; logs (the only copy) only with the consent; db (mounted), sys
        // (no recorded policy) and tenant-b's (its restore runs) never.
        assert_eq!(
            bulk_done,
            vec![true, false, consent, false, true, false],
            "consent {consent}"
        );
        // The same end state, object for object.
        assert_eq!(ours_state(&bulk_sim), ours_state(&alone_sim));
        for ((t, was), done) in targets().iter().zip(&before).zip(&bulk_done) {
            let now = shown(&bulk_sim, t).await;
            if *done {
                assert_eq!(now, "gone", "{t}");
            } else {
                // Refused: the PVC and its PV kept their resourceVersions, so nothing was written.
                assert!(was.contains(" Retain "), "{t}: {was}");
                assert_eq!(&now, was, "{t} was refused and must be untouched");
            }
        }
        // Reclaimed PVs were set back to the recorded policy before their PVC went.
        let policy = kubectl(
            &bulk_sim,
            &[
                "get",
                "pv",
                "pv-tenant-a-data",
                "-o",
                "jsonpath={.spec.persistentVolumeReclaimPolicy}",
            ],
        )
        .await;
        assert_eq!(policy, "Delete");
        // ... by restorewatch, under its own field manager.
        let pv = bulk_sim
            .store()
            .get(
                restorewatch::model::Kind::PersistentVolume,
                "",
                "pv-tenant-a-data",
            )
            .expect("the PV stays");
        let writer = pv["metadata"]["managedFields"]
            .as_array()
            .and_then(|m| {
                m.iter().find(|e| {
                    e.pointer("/fieldsV1/f:spec/f:persistentVolumeReclaimPolicy")
                        .is_some()
                })
            })
            .map(|e| e["manager"].clone());
        assert_eq!(writer, Some("restorewatch".into()), "{pv}");
        let (ok, no, left) = bulk(&a).tally();
        assert_eq!(
            (ok, no, left),
            (2 + usize::from(consent), 4 - usize::from(consent), 0)
        );
        bulk_sim.shutdown().await;
        alone_sim.shutdown().await;
    }
    // Each write of the run is in the audit log, as for a single action.
    let audit = std::fs::read_to_string(state.path().join("restorewatch/audit.jsonl"))
        .expect("audit log written");
    assert_eq!(audit.lines().count(), 2 * 2 + 3 * 2, "{audit}");
}
