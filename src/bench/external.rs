//! `restorewatch bench --kubeconfig F [--context C]`: the same measurements on an existing
//! cluster. Read-only by default: the worker only lists and watches, and kubectl only lists.
//! With `--writes-namespace NS` the bench creates one scratch PVC there (a selector no PV has,
//! so it can never bind or provision a volume), times writes on it against the dashboard and
//! `kubectl -w`, and deletes it again on every way out: success, error or Ctrl-C.

use super::kubectl::{Kubectl, KubectlResult};
use super::worker::{Target, WorkerConf, WorkerResult};
use super::{BenchArgs, RunResult, run_child, serve_cost, sys};
use anyhow::{Context, bail};
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kube::api::{Api, DeleteParams, PostParams, Preconditions};
use serde_json::json;
use std::path::Path;

/// The label every scratch PVC carries, so a leftover one is easy to find.
pub const SCRATCH_LABEL: &str = "bench.restorewatch.io/scratch";

/// A PVC this run created: deleted by UID, so a same-named object of someone else is never hit.
struct Scratch {
    namespace: String,
    name: String,
    uid: String,
}

impl Scratch {
    async fn create(client: &kube::Client, namespace: &str) -> anyhow::Result<Scratch> {
        let name = format!("restorewatch-bench-{}", std::process::id());
        let pvc: PersistentVolumeClaim = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": namespace, "labels": {SCRATCH_LABEL: "true"}},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "",
                "selector": {"matchLabels": {SCRATCH_LABEL: name}},
                "resources": {"requests": {"storage": "1Mi"}}}
        }))?;
        let api: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), namespace);
        let made = api
            .create(
                &PostParams {
                    field_manager: Some(crate::cluster::client::FIELD_MANAGER.to_string()),
                    ..PostParams::default()
                },
                &pvc,
            )
            .await
            .map_err(|e| {
                anyhow::anyhow!(
                    "creating the scratch PVC {namespace}/{name}: {}",
                    crate::cluster::errors::describe(&e)
                )
            })?;
        let uid = made.metadata.uid.context("the created PVC has no UID")?;
        eprintln!("bench: created scratch PVC {namespace}/{name}");
        Ok(Scratch {
            namespace: namespace.into(),
            name,
            uid,
        })
    }

    async fn delete(&self, client: &kube::Client) -> anyhow::Result<()> {
        let api: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), &self.namespace);
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: Some(self.uid.clone()),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        match api.delete(&self.name, &params).await {
            Ok(_) => {}
            Err(e) if super::super::cluster::client::status_code(&e) == Some(404) => {}
            Err(e) => {
                anyhow::bail!(
                    "deleting the scratch PVC {}/{}: {}; delete it by hand (label {SCRATCH_LABEL})",
                    self.namespace,
                    self.name,
                    crate::cluster::errors::describe(&e)
                );
            }
        }
        // The PVC protection finalizer keeps it a moment longer; wait so the run ends clean.
        for _ in 0..100 {
            match api.get_opt(&self.name).await {
                Ok(Some(p)) if p.metadata.uid.as_deref() == Some(self.uid.as_str()) => {
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
                _ => {
                    eprintln!(
                        "bench: deleted scratch PVC {}/{}",
                        self.namespace, self.name
                    );
                    return Ok(());
                }
            }
        }
        eprintln!(
            "bench: scratch PVC {}/{} is deleting but still there after 10 s (finalizers?)",
            self.namespace, self.name
        );
        Ok(())
    }
}

pub async fn run(args: &BenchArgs, kubeconfig: &Path) -> anyhow::Result<RunResult> {
    let target = Target::Kubeconfig {
        path: kubeconfig.to_path_buf(),
        context: args.context.clone(),
    };
    let (client, _) = target.connect().await?;
    let scratch = match &args.writes_namespace {
        Some(ns) => Some(Scratch::create(&client, ns).await?),
        None => None,
    };
    let measured = tokio::select! {
        r = measure(args, &target, &client, scratch.as_ref()) => r,
        _ = tokio::signal::ctrl_c() => Err(anyhow::anyhow!("interrupted")),
    };
    if let Some(s) = &scratch {
        let deleted = s.delete(&client).await;
        if let Err(e) = deleted {
            return match measured {
                Ok(_) => Err(e),
                Err(m) => Err(m.context(format!("{e:#}"))),
            };
        }
    }
    measured
}

async fn measure(
    args: &BenchArgs,
    target: &Target,
    client: &kube::Client,
    scratch: Option<&Scratch>,
) -> anyhow::Result<RunResult> {
    let load_before = sys::load_average();
    let mut conn = vec![
        "--kubeconfig".into(),
        args.kubeconfig.clone().unwrap_or_default().into_os_string(),
    ];
    if let Some(c) = &args.context {
        conn.extend(["--context".into(), c.into()]);
    }
    let kubectl_ok = super::kubectl_usable(args);
    // With a scratch PVC, kubectl also watches it beside the dashboard's second series.
    let beside = scratch
        .filter(|_| kubectl_ok)
        .map(|s| super::worker::Beside {
            kubectl: args.kubectl.clone(),
            conn: conn.clone(),
            field_selector: Some(format!("metadata.name={}", s.name)),
            initial: 1,
        });
    let kubectl = Kubectl {
        bin: args.kubectl.clone(),
        conn,
    };
    let list = if kubectl_ok {
        eprintln!("bench: existing cluster: kubectl get pvc,pv");
        Some(blocking(move || kubectl.list().map(|l| (l, kubectl))).await?)
    } else {
        None
    };
    let writes: Vec<(String, String)> = scratch
        .map(|s| vec![(s.namespace.clone(), s.name.clone())])
        .unwrap_or_default();
    let conf = WorkerConf {
        target: target.clone(),
        objects: 0,
        idle_secs: args.idle_secs,
        writes: if writes.is_empty() { 0 } else { args.writes },
        write_targets: writes.clone(),
        // Timed in memory on PVCs the worker holds; nothing is written for them.
        change_targets: Vec::new(),
        width: 160,
        height: 48,
        beside,
        server_pid: None,
        retake_stolen: args.retake_stolen,
    };
    eprintln!("bench: existing cluster: restorewatch");
    let rw: WorkerResult = blocking(move || run_child("worker", &conf)).await?;
    eprintln!("bench: existing cluster: restorewatch serve");
    let serve_conf = serve_cost::ServeConf {
        target: target.clone(),
        idle_secs: args.idle_secs,
        writes: if writes.is_empty() { 0 } else { args.writes },
        write_targets: writes.clone(),
        server_pid: None,
        retake_stolen: args.retake_stolen,
    };
    let serve: serve_cost::ServeResult = blocking(move || run_child("serve", &serve_conf)).await?;
    let kubectl = match list {
        Some(((list_s, list_rss), kubectl)) => {
            let mut k = KubectlResult {
                list_s,
                list_rss,
                ..KubectlResult::default()
            };
            if let Some(s) = scratch {
                eprintln!("bench: existing cluster: kubectl -w");
                let field = format!("metadata.name={}", s.name);
                let (w, retakes) = kubectl
                    .watch(
                        client,
                        Some(&field),
                        1,
                        super::writes::Series {
                            targets: &writes,
                            writes: args.writes,
                            tag: "",
                            retake_stolen: args.retake_stolen,
                            what: "kubectl -w",
                        },
                        None,
                    )
                    .await?;
                k.watch_retakes = retakes;
                k.watch_p50_ms = Some(w.p50_ms);
                k.watch_p99_ms = Some(w.p99_ms);
                k.watch_seen = w.seen;
                k.watch_p99_blocks_ms = w.p99_blocks_ms;
                k.watch_p99_interval = w.p99_interval;
                k.watch_held = w.held;
            }
            Some(k)
        }
        None => None,
    };
    Ok(RunResult {
        shape: "existing cluster".into(),
        generated: false,
        objects: rw.held_objects,
        pvcs: 0,
        restores: rw.restores,
        restorewatch: rw,
        kubectl,
        serve: Some(serve),
        load_before,
        load_after: sys::load_average(),
    })
}

/// Runs a child process's wait off the async threads, so Ctrl-C is still heard meanwhile.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> anyhow::Result<T> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r,
        Err(e) => bail!("the measuring task failed: {e}"),
    }
}
