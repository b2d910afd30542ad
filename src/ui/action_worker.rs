//! The action worker: the one task of the UI that talks to the API server. `update` never calls
//! the API; it leaves `WorkerRequest`s in `App::outbox`, the terminal loop hands them here, and
//! the answers come back as `Msg`s that wake the draw loop like any key or frame.
//!
//! Execution runs exactly the `Plan` the operator confirmed; the executor re-reads and
//! re-plans before every write and refuses any write that plan did not show.

use super::update::Msg;
use crate::actions::Plan;
use crate::actions::execute::Executor;
use crate::actions::{Op, audit, rbac};
use tokio::sync::mpsc;

/// What the cluster-facing side of the actions needs: the client and who is acting where, for
/// the audit log and the Event on the RestoreJob.
#[derive(Clone)]
pub struct ActionBackend {
    pub client: kube::Client,
    pub user: String,
    pub context: String,
    /// The API server's URL without userinfo, for the audit.
    pub server: String,
}

impl std::fmt::Debug for ActionBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActionBackend")
            .field("user", &self.user)
            .field("context", &self.context)
            .finish_non_exhaustive()
    }
}

/// Work the UI asks for. `id` ties the answer to the dialog that asked, so an answer for a
/// dialog already closed is dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkerRequest {
    /// One SelfSubjectAccessReview per distinct write of these ops.
    Check { id: u64, ops: Vec<Op> },
    /// Run the confirmed plan.
    Execute { id: u64, plan: Box<Plan> },
    /// Read fresh and predict what the controller will do with this RestoreJob manifest.
    Preflight {
        id: u64,
        manifest: serde_json::Value,
    },
    /// Read one object whole for the YAML view: the watch keeps no text of the kinds a cluster
    /// has thousands of (`model::object::text_kept_when_watched`).
    Fetch {
        id: u64,
        target: crate::analysis::ObjRef,
    },
}

/// Starts the worker; requests go in through the returned sender, answers come out as `Msg`s.
/// Each request runs as its own task, so a slow permission check never waits behind another.
pub fn spawn(backend: ActionBackend, out: mpsc::UnboundedSender<Msg>) -> WorkerTx {
    let (tx, mut rx) = mpsc::unbounded_channel::<WorkerRequest>();
    tokio::spawn(async move {
        while let Some(req) = rx.recv().await {
            let b = backend.clone();
            let out = out.clone();
            tokio::spawn(async move { handle(b, req, out).await });
        }
    });
    tx
}

pub type WorkerTx = mpsc::UnboundedSender<WorkerRequest>;

async fn handle(b: ActionBackend, req: WorkerRequest, out: mpsc::UnboundedSender<Msg>) {
    match req {
        WorkerRequest::Check { id, ops } => {
            let result = rbac::check(&b.client, &ops)
                .await
                .map_err(|e| format!("{e:#}"));
            let _ = out.send(Msg::ActionChecked { id, result });
        }
        WorkerRequest::Fetch { id, target } => {
            let result = fetch_yaml(&b.client, &target)
                .await
                .map_err(|e| format!("{e:#}"));
            let _ = out.send(Msg::Fetched { id, result });
        }
        WorkerRequest::Preflight { id, manifest } => {
            let result = super::backup_preflight::run(&b, manifest).await;
            let _ = out.send(Msg::PreflightDone { id, result });
        }
        WorkerRequest::Execute { id, plan } => {
            tracing::info!(
                action = %plan.request.action,
                target = %plan.request.target,
                writes = plan.ops.len(),
                user = %b.user,
                context = %b.context,
                "executing a confirmed action"
            );
            let ex = Executor {
                client: b.client.clone(),
                user: b.user.clone(),
                context: b.context.clone(),
                server: b.server.clone(),
                audit: Some(audit::audit_path()),
                events: true,
                max_writes: None,
                bind_wait: crate::actions::execute::BIND_WAIT,
            };
            let steps = out.clone();
            let outcome = ex
                .execute(&plan, |event| {
                    let _ = steps.send(Msg::ActionStep { id, event });
                })
                .await;
            tracing::info!(?outcome, "action finished");
            let _ = out.send(Msg::ActionDone { id, outcome });
        }
    }
}

/// The object as the YAML view shows it, read now: noise stripped and secrets redacted as the
/// stored texts are, with the resourceVersion it was read at.
async fn fetch_yaml(
    client: &kube::Client,
    target: &crate::analysis::ObjRef,
) -> anyhow::Result<super::select::Fetched> {
    use kube::api::{Api, DynamicObject};
    let info = target.kind.info();
    let ar = crate::cluster::client::api_resource(info);
    let api: Api<DynamicObject> = if info.namespaced {
        Api::namespaced_with(client.clone(), &target.namespace, &ar)
    } else {
        Api::all_with(client.clone(), &ar)
    };
    let obj = api.get(&target.name).await?;
    let resource_version = obj.metadata.resource_version.clone().unwrap_or_default();
    let mut v = serde_json::to_value(obj)?;
    if let Some(o) = v.as_object_mut() {
        o.insert("apiVersion".into(), info.api_version().into());
        o.insert("kind".into(), info.api_kind.into());
    }
    crate::model::object::strip_noise(&mut v);
    crate::model::secrets::redact_for_display(&mut v);
    Ok(super::select::Fetched {
        yaml: super::select::yaml_text(&v).map_err(anyhow::Error::msg)?,
        resource_version,
        at: jiff::Timestamp::now(),
    })
}
