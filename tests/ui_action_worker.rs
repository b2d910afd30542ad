//! The dialog and the action worker together, against the emulator through a real
//! `kube::Client`: `a`, the permission check, the typed name, the execution of exactly the
//! plan shown, and the result, with the messages flowing as in the terminal loop.

#[path = "actions_support/mod.rs"]
mod actions_support;
mod common;

use common::action_data::{self, RENAME};
use common::{press, pump, typ};
use crossterm::event::KeyCode;
use restorewatch::actions::execute::Outcome;
use restorewatch::model::Kind;
use restorewatch::sim::{Policy, Sim, SimConfig};
use restorewatch::ui::action_worker::{self, ActionBackend};
use restorewatch::ui::app::{App, Modal};
use restorewatch::ui::dialog::{Perms, Stage};
use std::collections::HashMap;
use std::time::Duration;
use tokio::sync::mpsc;

fn stage(a: &App) -> &Stage {
    match &a.modal {
        Some(Modal::Action(d)) => &d.stage,
        other => panic!("no dialog: {other:?}"),
    }
}

#[tokio::test]
async fn the_dialog_checks_permissions_and_runs_the_confirmed_plan_on_the_cluster() {
    let state = tempfile::tempdir().expect("tempdir");
    // SAFETY: this test binary has a single test; nothing else reads the environment concurrently.
    unsafe { std::env::set_var("XDG_STATE_HOME", state.path()) };

    let mut tokens = HashMap::new();
    tokens.insert(
        "admin".to_string(),
        Policy::builtin("admin").expect("admin"),
    );
    tokens.insert(
        "viewer".to_string(),
        Policy::builtin("readonly").expect("readonly"),
    );
    // The PV controller binds the -orig PVC on its resync (300 ms here); the dialog waits.
    let sim = Sim::start(SimConfig {
        tokens,
        ..SimConfig::default().with_pv_resync(Duration::from_millis(300))
    })
    .await
    .expect("emulator");
    common::load_fixture(&sim, RENAME.0);

    // A viewer sees the plan disabled, with the verbs it lacks.
    let (out, mut rx) = mpsc::unbounded_channel();
    let viewer = action_worker::spawn(
        ActionBackend {
            client: sim.client_with_token("viewer").expect("client"),
            user: "viewer".into(),
            context: "sim".into(),
            server: "http://sim".into(),
        },
        out,
    );
    let mut a = action_data::app(RENAME, 120, 40);
    press(&mut a, KeyCode::Char(':'));
    typ(&mut a, "findings");
    press(&mut a, KeyCode::Enter);
    press(&mut a, KeyCode::Char('a'));
    pump(&mut a, &viewer, &mut rx, |a| {
        !matches!(
            stage(a),
            Stage::Review {
                perms: Perms::Checking,
                ..
            }
        )
    })
    .await;
    match stage(&a) {
        Stage::Review {
            perms: Perms::Denied(d),
            ..
        } => {
            let verbs: Vec<&str> = d.iter().map(|d| d.verb.as_str()).collect();
            assert_eq!(verbs, vec!["delete", "patch"], "{d:?}");
        }
        s => panic!("{s:?}"),
    }

    // An admin confirms by name and the worker runs exactly that plan.
    let (out, mut rx) = mpsc::unbounded_channel();
    let admin = action_worker::spawn(
        ActionBackend {
            client: sim.client_with_token("admin").expect("client"),
            user: "admin".into(),
            context: "sim".into(),
            server: "http://sim".into(),
        },
        out,
    );
    let mut a = action_data::app(RENAME, 120, 40);
    press(&mut a, KeyCode::Char(':'));
    typ(&mut a, "findings");
    press(&mut a, KeyCode::Enter);
    press(&mut a, KeyCode::Char('a'));
    pump(&mut a, &admin, &mut rx, |a| {
        !matches!(
            stage(a),
            Stage::Review {
                perms: Perms::Checking,
                ..
            }
        )
    })
    .await;
    assert!(matches!(
        stage(&a),
        Stage::Review {
            perms: Perms::Allowed,
            ..
        }
    ));
    typ(&mut a, "vm-disk-system-orig-de3e");
    press(&mut a, KeyCode::Enter);
    assert!(matches!(stage(&a), Stage::Running { .. }));
    pump(&mut a, &admin, &mut rx, |a| {
        matches!(stage(a), Stage::Finished { .. })
    })
    .await;
    match stage(&a) {
        Stage::Finished { outcome, .. } => {
            assert_eq!(outcome, &Outcome::Completed { writes: 2 }, "{outcome:?}")
        }
        s => panic!("{s:?}"),
    }
    // The PV is bound to the -orig PVC now, and the write is in the audit log.
    let pv = sim
        .store()
        .all(Kind::PersistentVolume, &Default::default())
        .into_iter()
        .find(|p| p["spec"]["claimRef"]["name"] == "vm-disk-system-orig-de3e");
    assert!(pv.is_some(), "the PV's claimRef points at the -orig PVC");
    let audit = std::fs::read_to_string(state.path().join("restorewatch/audit.jsonl"))
        .expect("audit log written");
    assert_eq!(audit.lines().count(), 2, "{audit}");
    assert!(audit.contains("\"user\":\"admin\""), "{audit}");
}
