//! Dump 08's end state on the API emulator (the RestoreJob `Failed` after renaming both disks and
//! deleting the DataVolumes: the data sits only in the `-orig` PVCs). `check` over the real
//! client warns against resuming the disks' HelmReleases; what resuming does on the emulator is
//! only the `spec.suspend` flip: it runs kube-controller-manager's binder, garbage collector and
//! protection controllers, no Flux and no CDI, so nothing there re-renders a DataVolume. On a
//! real cluster Flux renders `vm-disk-<d>` again and CDI creates a new disk under the original
//! name: that consequence is what the remedy states.

use restorewatch::sim::{Sim, SimConfig, SimHandle};
use std::path::{Path, PathBuf};
use std::process::Command;

const FAILED_AFTER_RENAME: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/helmrelease-left-suspended/failed-after-rename.yaml"
);
const NOW: &str = "2026-11-20T10:05:00Z";

async fn cluster() -> SimHandle {
    let sim = Sim::start(SimConfig::default()).await.expect("emulator");
    let text = std::fs::read_to_string(FAILED_AFTER_RENAME).expect("fixture");
    for o in restorewatch::sim::load::parse_objects(&text).expect("objects") {
        sim.store().load(o).expect("object loads");
    }
    sim
}

fn kubeconfig(sim: &SimHandle, dir: &Path) -> PathBuf {
    let path = dir.join("kubeconfig");
    sim.write_kubeconfig(&path, None).expect("kubeconfig");
    path
}

/// Runs the binary off the runtime's threads, so the emulator keeps answering.
async fn rw(kc: &Path, state: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    all.extend(["--kubeconfig".to_string(), kc.display().to_string()]);
    let state = state.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let out = Command::new(env!("CARGO_BIN_EXE_restorewatch"))
            .args(&all)
            .env("NO_COLOR", "1")
            .env("XDG_STATE_HOME", &state)
            .env_remove("KUBECONFIG")
            .output()
            .expect("the binary runs");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    })
    .await
    .expect("ran")
}

fn findings(json: &str) -> Vec<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_str(json).expect("one JSON document");
    v["findings"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_failure_past_the_rename_check_warns_against_resuming_and_the_emulator_recreates_nothing()
 {
    let sim = cluster().await;
    let dir = tempfile::tempdir().expect("tmp");
    let kc = kubeconfig(&sim, dir.path());
    let (code, out, err) = rw(&kc, dir.path(), &["check", "--now", NOW, "-o", "json"]).await;
    assert_eq!(code, 1, "an error finding (restore-failed): {out}{err}");
    let fs = findings(&out);
    let left: Vec<&serde_json::Value> = fs
        .iter()
        .filter(|f| f["code"] == "helmrelease-left-suspended")
        .collect();
    assert_eq!(left.len(), 3, "{out}");
    for f in &left {
        let remedy = f["remedy"].as_str().unwrap_or_default();
        assert!(remedy.starts_with("Do not resume it yet"), "{remedy}");
        assert!(
            remedy.contains("vm-disk-data-orig-de3e")
                && remedy.contains("vm-disk-system-orig-de3e"),
            "{remedy}"
        );
        assert!(
            remedy.contains("new disks under the original names"),
            "{remedy}"
        );
    }

    // What resuming does here: the releases resume and nothing else happens.
    let (code, out, err) = rw(
        &kc,
        dir.path(),
        &[
            "action",
            "resume-release",
            "--restore",
            "tenant-a/restore-test",
            "--yes",
        ],
    )
    .await;
    assert_eq!(code, 0, "{out}{err}");
    let (_, out, _) = rw(&kc, dir.path(), &["check", "--now", NOW, "-o", "json"]).await;
    let fs = findings(&out);
    assert!(
        !fs.iter().any(|f| f["code"] == "helmrelease-left-suspended"),
        "resumed: {out}"
    );
    let store = sim.store();
    for disk in ["vm-disk-system", "vm-disk-data"] {
        assert!(
            store
                .get(
                    restorewatch::model::Kind::PersistentVolumeClaim,
                    "tenant-a",
                    disk
                )
                .is_none(),
            "no Flux/CDI on the emulator: {disk} is not re-created"
        );
    }
    sim.shutdown().await;
}
