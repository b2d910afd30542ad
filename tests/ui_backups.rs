//! `:backups` and `a` on a Backup: the list an operator picks a restore source from, and the
//! preflight of a restore from it, read fresh by the action worker from the emulator through a
//! real `kube::Client` and drawn with the manifest to apply.

mod common;
#[path = "preflight_support/mod.rs"]
mod preflight_support;

use common::action_data::app_on;
use common::{press, pump, render, typ};
use crossterm::event::KeyCode;
use preflight_support::{Cluster, DELETED_UID, NS, foreign_orig, live_rj, vm_objects, vmi};
use restorewatch::model::names::orig_pvc_name;
use restorewatch::ui::action_worker::{self, ActionBackend};
use serde_json::{Value, json};
use tokio::sync::mpsc;

const NOW: &str = "2026-11-20T10:30:00Z";

fn pg_backup() -> Value {
    json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "Backup",
        "metadata": {"name": "orders-nightly", "namespace": NS, "creationTimestamp": "2026-11-19T23:00:00Z"},
        "spec": {"applicationRef": {"apiGroup": "apps.cozystack.io", "kind": "Postgres", "name": "orders"},
                 "strategyRef": {"apiGroup": "strategy.backups.cozystack.io", "kind": "CNPG", "name": "cnpg"}}})
}

fn command(a: &mut restorewatch::ui::App, cmd: &str) {
    press(a, KeyCode::Char(':'));
    typ(a, cmd);
    press(a, KeyCode::Enter);
}

/// `:backups`, `a` on the first Backup with the worker acting as `user` through `client`, until
/// the preflight's verdict is drawn; the app (to go on with) and the screen.
async fn preflight_on_screen(client: kube::Client, user: &str) -> (restorewatch::ui::App, String) {
    let (out, mut rx) = mpsc::unbounded_channel();
    let backend = ActionBackend {
        client,
        user: user.into(),
        context: "sim".into(),
        server: "http://sim".into(),
    };
    let worker = action_worker::spawn(backend, out);
    let mut a = app_on(vm_objects(), NOW, 120, 40);
    command(&mut a, "backups");
    press(&mut a, KeyCode::Char('a'));
    pump(&mut a, &worker, &mut rx, |a| render(a).contains("verdict:")).await;
    let screen = render(&a);
    (a, screen)
}

#[test]
fn backups_lists_each_backup_with_its_application_age_driver_and_running_restore() {
    let mut objs = vm_objects();
    objs.push(pg_backup());
    objs.push(live_rj("restore-3", "Running"));
    for (w, h) in [(120, 40), (80, 24)] {
        let mut a = app_on(objs.clone(), NOW, w, h);
        command(&mut a, "backups");
        let screen = render(&a);
        let vm = screen
            .lines()
            .find(|l| l.contains("vm1-backup"))
            .unwrap_or_else(|| panic!("no vm1-backup row:\n{screen}"));
        assert!(vm.contains("VMInstance/vm1"), "{vm}");
        assert!(vm.contains("velero"), "{vm}");
        assert!(
            vm.contains("restore-3"),
            "the running restore is named: {vm}"
        );
        let pg = screen
            .lines()
            .find(|l| l.contains("orders-nightly"))
            .unwrap_or_else(|| panic!("no orders-nightly row:\n{screen}"));
        assert!(pg.contains("cnpg") && pg.contains(" no"), "{pg}");
        insta::assert_snapshot!(format!("backups_{w}x{h}"), screen);
    }
}

#[tokio::test]
async fn a_on_a_backup_shows_the_fresh_preflight_of_a_restore_from_it_and_the_manifest() {
    // The cluster holds what the watch has not seen: a running VM and a predecessor's -orig PVC
    // under the name the proposed RestoreJob would use. Only a fresh read can tell.
    let orig = orig_pvc_name("vm-disk-data", "restore-vm1-backup");
    let mut live = vm_objects();
    live.push(vmi());
    live.push(foreign_orig(&orig, Some(DELETED_UID)));
    let cluster = Cluster::start_still(live).await;
    let (mut a, screen) = preflight_on_screen(cluster.sim.client().expect("client"), "admin").await;
    assert!(screen.contains("orig-pvc-foreign"), "{screen}");
    assert!(screen.contains(&orig), "{screen}");
    assert!(
        screen.contains("this restore would lose or hide data"),
        "{screen}"
    );
    insta::assert_snapshot!("backup_preflight_120x40", screen.clone());

    // The manifest to apply, under the name the preflight was about, below the forecast's
    // steps: the screen scrolls to it.
    press(&mut a, KeyCode::End);
    let screen = render(&a);
    assert!(screen.contains("manifest to apply"), "{screen}");
    assert!(
        screen.contains("\"name\": \"restore-vm1-backup\""),
        "{screen}"
    );
    assert!(screen.contains("\"name\": \"vm1-backup\""), "{screen}");

    // Esc goes back to the list, where the cursor still is.
    press(&mut a, KeyCode::Esc);
    assert!(render(&a).contains("RESTORE RUNNING"));
    cluster.stop().await;
}

#[tokio::test]
async fn a_preflight_that_cannot_read_the_pvcs_says_it_cannot_tell_instead_of_guessing() {
    let cluster = Cluster::start_without_pvcs(vm_objects()).await;
    let client = cluster.sim.client_with_token("limited").expect("client");
    let (_, screen) = preflight_on_screen(client, "limited").await;
    assert!(screen.contains("UNKNOWN"), "{screen}");
    assert!(
        screen.contains("verdict: cannot tell: see what is unknown above"),
        "{screen}"
    );
    assert!(
        !screen.contains(": free"),
        "no -orig name is called free: {screen}"
    );
    cluster.stop().await;
}
