//! The live watch keeps no text of the kinds a cluster has thousands of (PVCs, PVs,
//! DataVolumes, Pods, Events), only what the analysis judges (issue 28). Against the emulator
//! through a real `kube::Client`: the YAML view of such an object reads it whole from the API
//! server (the held fields shown meanwhile, and instead when the read fails, saying why), and
//! the history still lists a change to a judged field with its old and new value.

mod common;

use common::action_data::RENAME;
use common::ui_data::{now, options};
use common::{pump, render, wait_frame, watch_everything, worker};
use restorewatch::analysis::ObjRef;
use restorewatch::model::{AnyObject, Kind};
use restorewatch::sim::{Policy, Sim, SimConfig};
use restorewatch::ui::action_worker::WorkerRequest;
use restorewatch::ui::app::{App, Screen, YamlFetch, YamlState};
use restorewatch::ui::{Msg, update};
use std::collections::HashMap;

const PVC: &str = "vm-disk-data";
const NS: &str = "tenant-a";

async fn sim_with_fixture() -> restorewatch::sim::SimHandle {
    let mut tokens = HashMap::new();
    tokens.insert(
        "admin".to_string(),
        Policy::builtin("admin").expect("admin"),
    );
    let sim = Sim::start(SimConfig {
        tokens,
        ..SimConfig::default()
    })
    .await
    .expect("emulator");
    common::load_fixture(&sim, RENAME.0);
    sim
}

fn yaml(a: &App) -> (&str, &YamlFetch) {
    match &a.screen {
        Screen::Yaml(y) => (y.text.as_deref().expect("a text"), &y.fetch),
        s => panic!("not the YAML view: {s:?}"),
    }
}

/// The YAML view of the fixture's PVC, opened before the frame that draws it.
fn open_pvc_yaml(a: &mut App) {
    a.screen = Screen::Yaml(YamlState {
        target: ObjRef::new(Kind::PersistentVolumeClaim, NS, PVC),
        text: Err("not drawn yet".into()),
        scroll: 0,
        fetch: YamlFetch::NotNeeded,
    });
}

fn fetches(a: &App) -> usize {
    a.outbox
        .iter()
        .filter(|r| matches!(r, WorkerRequest::Fetch { .. }))
        .count()
}

#[tokio::test]
async fn the_yaml_of_a_watched_pvc_is_read_whole_and_its_held_fields_shown_if_that_fails() {
    let sim = sim_with_fixture().await;
    let mut live = watch_everything(sim.client_with_token("admin").expect("client"));
    let frame = wait_frame(
        &mut live.frames,
        30,
        "the PVC",
        |f| f.snapshot.objects.pvcs.get(NS, PVC).is_some(),
        |_| "no PVC yet".into(),
    )
    .await;
    let pvc = frame
        .snapshot
        .objects
        .pvcs
        .get(NS, PVC)
        .expect("watched")
        .clone();
    assert!(
        !AnyObject::PersistentVolumeClaim(pvc).has_text(),
        "the watch keeps no text of a PVC"
    );

    let mut a = App::new(options(), now(), (160, 40));
    update(&mut a, Msg::Frame(Some(frame.clone())));
    open_pvc_yaml(&mut a);
    update(&mut a, Msg::Frame(Some(frame.clone())));
    assert_eq!(fetches(&a), 1, "opening the view asks for the object");
    // Meanwhile: what restorewatch holds, and the title says that is what it is.
    let (text, fetch) = yaml(&a);
    assert!(matches!(fetch, YamlFetch::Pending { .. }), "{fetch:?}");
    assert!(text.contains("name: vm-disk-data"), "{text}");
    assert!(!text.contains("pvc-protection"), "finalizers are not held");
    assert!(render(&a).contains("reading the whole object"));

    let (tx, mut rx) = worker(&sim, "admin");
    pump(&mut a, &tx, &mut rx, |a| {
        matches!(yaml(a).1, YamlFetch::Done(_))
    })
    .await;
    let (text, _) = yaml(&a);
    assert!(text.contains("kubernetes.io/pvc-protection"), "{text}");
    assert!(
        text.contains("cdi.kubevirt.io/storage.contentType: kubevirt"),
        "{text}"
    );
    assert!(!text.contains("managedFields"), "{text}");
    assert!(render(&a).contains("read from the API server at"));
    // The same object in the next frame is not read again.
    update(&mut a, Msg::Frame(Some(frame.clone())));
    assert_eq!(fetches(&a), 0);
    assert!(yaml(&a).0.contains("pvc-protection"));

    // A server that refuses the read: the held fields, and why, on the screen.
    let (tx, mut rx) = worker(&sim, "stranger");
    open_pvc_yaml(&mut a);
    update(&mut a, Msg::Frame(Some(frame.clone())));
    pump(&mut a, &tx, &mut rx, |a| {
        matches!(yaml(a).1, YamlFetch::Failed { .. })
    })
    .await;
    let (text, _) = yaml(&a);
    assert!(text.contains("name: vm-disk-data"), "{text}");
    let screen = render(&a);
    assert!(
        screen.contains("could not read the whole object from the API server"),
        "{screen}"
    );
    assert!(screen.contains("read failed"), "{screen}");
    // A failed read is not retried on every frame, only once the object changes.
    update(&mut a, Msg::Frame(Some(frame)));
    assert_eq!(fetches(&a), 0);
}

#[tokio::test]
async fn a_judged_field_of_a_textless_pv_still_shows_its_change_in_the_history() {
    let sim = sim_with_fixture().await;
    let client = sim.client_with_token("admin").expect("client");
    let mut live = watch_everything(client.clone());
    let frame = wait_frame(
        &mut live.frames,
        30,
        "the PVs",
        |f| !f.snapshot.objects.pvs.is_empty(),
        |_| "no PV yet".into(),
    )
    .await;
    let pv = frame
        .snapshot
        .objects
        .pvs
        .iter()
        .find(|p| p.reclaim_policy.as_deref() == Some("Retain"))
        .or_else(|| frame.snapshot.objects.pvs.iter().next())
        .expect("a PV")
        .clone();
    let before = pv.reclaim_policy.as_deref().unwrap_or("Delete").to_string();
    let after = if before == "Retain" {
        "Delete"
    } else {
        "Retain"
    };
    let api: kube::Api<k8s_openapi::api::core::v1::PersistentVolume> = kube::Api::all(client);
    api.patch(
        &pv.meta.name,
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(
            serde_json::json!({"spec": {"persistentVolumeReclaimPolicy": after}}),
        ),
    )
    .await
    .expect("patched");
    let name = pv.meta.name.clone();
    let changed = wait_frame(
        &mut live.frames,
        30,
        "the reclaim policy change",
        |f| {
            f.snapshot.objects.pvs.get("", &name).is_some_and(|p| {
                p.meta
                    .changes
                    .iter()
                    .any(|c| &*c.path == "spec.persistentVolumeReclaimPolicy")
            })
        },
        |f| {
            format!(
                "{:?}",
                f.and_then(|f| f.snapshot.objects.pvs.get("", &name))
                    .map(|p| &p.meta.changes)
            )
        },
    )
    .await;
    let p = changed.snapshot.objects.pvs.get("", &name).expect("the PV");
    let c = p
        .meta
        .changes
        .iter()
        .find(|c| &*c.path == "spec.persistentVolumeReclaimPolicy")
        .expect("listed");
    assert_eq!(c.before.as_deref(), Some(before.as_str()));
    assert_eq!(c.after.as_deref(), Some(after));
    // Only what changed: the held form is the same on both sides otherwise.
    assert!(
        p.meta
            .changes
            .iter()
            .all(|c| c.path.starts_with("spec.persistentVolumeReclaimPolicy")
                || c.path.starts_with("metadata.")),
        "{:?}",
        p.meta.changes
    );
}
