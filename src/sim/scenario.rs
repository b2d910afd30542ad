//! Scenarios: initial objects plus a timeline of changes made by the simulated controller, CDI,
//! Velero, CNPG... Files live in `scenarios/*.yaml` (embedded in the binary) or anywhere on disk;
//! `scenarios/README.md` documents the format.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, bail};
use jiff::Timestamp;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::task::AbortHandle;

use crate::model::Kind;
use crate::sim::clock::{expand_value, now_rfc3339, parse_duration};
use crate::sim::patch::PatchKind;
use crate::sim::privileged::kind_of;
use crate::sim::store::Store;

/// The scenarios compiled into the binary: (file name, text).
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "vm-healthy.yaml",
        include_str!("../../scenarios/vm-healthy.yaml"),
    ),
    (
        "pg-healthy.yaml",
        include_str!("../../scenarios/pg-healthy.yaml"),
    ),
];

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Finding codes `restorewatch check` must report at the end state.
    #[serde(default)]
    pub expect: Vec<String>,
    /// Starting value of the controller-manager flag (default: unchanged).
    #[serde(default)]
    pub controller_manager: Option<bool>,
    #[serde(default)]
    pub objects: Vec<Value>,
    #[serde(default)]
    pub steps: Vec<Step>,
}

/// Names an object.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjRef {
    pub api_version: String,
    pub kind: String,
    #[serde(default)]
    pub namespace: String,
    pub name: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PatchStep {
    #[serde(flatten)]
    pub target: ObjRef,
    /// merge (default), json, strategic.
    #[serde(default, rename = "type")]
    pub patch_type: Option<String>,
    pub patch: Value,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteStep {
    #[serde(flatten)]
    pub target: ObjRef,
    /// Remove at once, ignoring finalizers.
    #[serde(default)]
    pub force: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Involved {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    #[serde(default)]
    pub namespace: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventStep {
    pub namespace: String,
    pub involved: Involved,
    #[serde(default = "normal", rename = "type")]
    pub event_type: String,
    pub reason: String,
    #[serde(default)]
    pub message: String,
    #[serde(default = "restore_controller")]
    pub component: String,
    /// Default: `<involved name>.<counter>`.
    #[serde(default)]
    pub name: Option<String>,
}

fn normal() -> String {
    "Normal".into()
}
fn restore_controller() -> String {
    "restore-controller".into()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Step {
    /// Offset from the scenario start (`2s`, `1m`, `500ms`), divided by the speed.
    pub at: String,
    /// Who does it (documentation; shown in errors).
    #[serde(default)]
    pub actor: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
    /// Create (or replace) an object; uid, status and timestamps kept as given.
    #[serde(default)]
    pub create: Option<Value>,
    #[serde(default)]
    pub patch: Option<PatchStep>,
    /// Merge into `.status`.
    #[serde(default)]
    pub status: Option<PatchStep>,
    #[serde(default)]
    pub delete: Option<DeleteStep>,
    #[serde(default)]
    pub event: Option<EventStep>,
    /// Switch the simulated kube-controller-manager on or off.
    #[serde(default)]
    pub controller_manager: Option<bool>,
}

impl Scenario {
    /// Parses a scenario file (YAML or JSON) and checks every step does exactly one thing.
    pub fn parse(text: &str) -> anyhow::Result<Scenario> {
        let raw: Value = serde_saphyr::from_str(text).context("scenario is not valid YAML")?;
        let s: Scenario =
            serde_json::from_value(raw).context("scenario does not have the documented shape")?;
        for (i, step) in s.steps.iter().enumerate() {
            let n = [
                step.create.is_some(),
                step.patch.is_some(),
                step.status.is_some(),
                step.delete.is_some(),
                step.event.is_some(),
                step.controller_manager.is_some(),
            ]
            .iter()
            .filter(|b| **b)
            .count();
            if n != 1 {
                bail!(
                    "step {i} (at {}) must have exactly one of create, patch, status, delete, event, controllerManager",
                    step.at
                );
            }
            if parse_duration(&step.at).is_none() {
                bail!("step {i}: bad offset {:?} (use 2s, 500ms, 1m)", step.at);
            }
        }
        for (i, o) in s.objects.iter().enumerate() {
            kind_of(o).map_err(|e| anyhow::anyhow!("object {i}: {}", e.message))?;
        }
        Ok(s)
    }

    /// A built-in scenario by name (`vm-healthy`), or a file path.
    pub fn load(name_or_path: &str) -> anyhow::Result<Scenario> {
        for (file, text) in BUILTIN {
            if file.strip_suffix(".yaml") == Some(name_or_path) {
                return Scenario::parse(text)
                    .with_context(|| format!("built-in scenario {name_or_path}"));
            }
        }
        let text = std::fs::read_to_string(name_or_path).with_context(|| {
            format!("{name_or_path:?} is neither a built-in scenario (see `sim list`) nor a readable file")
        })?;
        Scenario::parse(&text).with_context(|| format!("scenario file {name_or_path}"))
    }

    /// Every built-in scenario.
    pub fn builtin() -> anyhow::Result<Vec<Scenario>> {
        BUILTIN
            .iter()
            .map(|(f, t)| Scenario::parse(t).with_context(|| format!("built-in scenario {f}")))
            .collect()
    }

    /// Applies every object and every step at once (no waiting): the end state.
    pub fn apply_all(&self, store: &Store) -> Vec<String> {
        let kcm = Arc::new(AtomicBool::new(true));
        let mut errors = apply_objects(store, &self.objects);
        for (i, step) in self.steps.iter().enumerate() {
            if let Err(e) = apply_step(store, &kcm, step) {
                errors.push(step_error(i, step, &e));
            }
        }
        errors
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScenarioStatus {
    pub name: String,
    pub steps_total: usize,
    pub steps_applied: usize,
    pub finished: bool,
    /// One line per object or step that failed to apply; playing goes on after a failure.
    pub errors: Vec<String>,
}

/// A scenario being played.
#[derive(Clone)]
pub struct ScenarioRun {
    status: Arc<Mutex<ScenarioStatus>>,
    done: watch::Receiver<bool>,
    abort: AbortHandle,
}

impl ScenarioRun {
    pub fn status(&self) -> ScenarioStatus {
        self.status
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Waits until the last step is applied (or the run is aborted).
    pub async fn finished(&self) -> ScenarioStatus {
        let mut rx = self.done.clone();
        let _ = rx.wait_for(|d| *d).await;
        self.status()
    }

    pub fn abort(&self) {
        self.abort.abort();
    }
}

fn step_error(i: usize, step: &Step, e: &anyhow::Error) -> String {
    let actor = step.actor.as_deref().unwrap_or("-");
    format!("step {i} (at {}, actor {actor}): {e:#}", step.at)
}

fn expanded(v: &Value) -> Value {
    let mut v = v.clone();
    expand_value(&mut v, Timestamp::now());
    v
}

fn apply_objects(store: &Store, objects: &[Value]) -> Vec<String> {
    let mut errors = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        if let Err(e) = store.put(expanded(o)) {
            errors.push(format!("object {i}: {}", e.message));
        }
    }
    errors
}

fn target(r: &ObjRef) -> anyhow::Result<Kind> {
    Kind::from_api(&r.api_version, &r.kind).with_context(|| {
        format!(
            "kind {} of {} is not served by the emulator",
            r.kind, r.api_version
        )
    })
}

fn apply_step(store: &Store, kcm: &Arc<AtomicBool>, step: &Step) -> anyhow::Result<()> {
    if let Some(obj) = &step.create {
        store.put(expanded(obj))?;
    } else if let Some(p) = &step.patch {
        let pk = match p.patch_type.as_deref().unwrap_or("merge") {
            "merge" => PatchKind::Merge,
            "json" => PatchKind::Json,
            "strategic" => PatchKind::Strategic,
            other => bail!("unknown patch type {other:?} (merge, json, strategic)"),
        };
        store.patch_object(
            target(&p.target)?,
            &p.target.namespace,
            &p.target.name,
            pk,
            &expanded(&p.patch),
        )?;
    } else if let Some(p) = &step.status {
        store.patch_status(
            target(&p.target)?,
            &p.target.namespace,
            &p.target.name,
            &expanded(&p.patch),
        )?;
    } else if let Some(d) = &step.delete {
        store.remove(
            target(&d.target)?,
            &d.target.namespace,
            &d.target.name,
            d.force,
        )?;
    } else if let Some(ev) = &step.event {
        store.put(event_object(store, ev)?)?;
    } else if let Some(on) = step.controller_manager {
        kcm.store(on, Ordering::Relaxed);
    }
    Ok(())
}

fn event_object(store: &Store, ev: &EventStep) -> anyhow::Result<Value> {
    let inv = &ev.involved;
    let kind = Kind::from_api(&inv.api_version, &inv.kind);
    let inv_ns = inv
        .namespace
        .clone()
        .unwrap_or_else(|| ev.namespace.clone());
    let uid = kind
        .and_then(|k| store.get(k, if k.info().namespaced { &inv_ns } else { "" }, &inv.name))
        .and_then(|o| {
            o.pointer("/metadata/uid")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_default();
    let now = now_rfc3339();
    let name = match &ev.name {
        Some(n) => n.clone(),
        None => format!("{}.{:016x}", inv.name, store.transact(|t| t.random())),
    };
    let mut involved = json!({"apiVersion": inv.api_version, "kind": inv.kind, "name": inv.name, "namespace": inv_ns});
    if !uid.is_empty() {
        involved["uid"] = json!(uid);
    }
    Ok(expanded(&json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": ev.namespace},
        "involvedObject": involved,
        "type": ev.event_type,
        "reason": ev.reason,
        "message": ev.message,
        "source": {"component": ev.component},
        "reportingComponent": ev.component,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    })))
}

/// Plays a scenario on its own task: objects at once, then each step at `at / speed`.
pub fn play(store: Store, kcm: Arc<AtomicBool>, scenario: Scenario, speed: f64) -> ScenarioRun {
    let speed = if speed.is_finite() && speed > 0.0 {
        speed
    } else {
        1.0
    };
    let status = Arc::new(Mutex::new(ScenarioStatus {
        name: scenario.name.clone(),
        steps_total: scenario.steps.len(),
        ..ScenarioStatus::default()
    }));
    let (done_tx, done_rx) = watch::channel(false);
    let st = status.clone();
    let task = tokio::spawn(async move {
        let update =
            |f: &dyn Fn(&mut ScenarioStatus)| f(&mut st.lock().unwrap_or_else(|p| p.into_inner()));
        if let Some(on) = scenario.controller_manager {
            kcm.store(on, Ordering::Relaxed);
        }
        let start = tokio::time::Instant::now();
        let errors = apply_objects(&store, &scenario.objects);
        update(&|s| s.errors.extend(errors.iter().cloned()));
        let mut steps: Vec<(Duration, usize)> = scenario
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| (parse_duration(&s.at).unwrap_or_default(), i))
            .collect();
        // Stable: steps with the same offset keep their file order.
        steps.sort_by_key(|(d, _)| *d);
        for (at, i) in steps {
            tokio::time::sleep_until(start + at.div_f64(speed)).await;
            let step = &scenario.steps[i];
            let result = apply_step(&store, &kcm, step);
            update(&|s| {
                s.steps_applied += 1;
                if let Err(e) = &result {
                    s.errors.push(step_error(i, step, e));
                }
            });
        }
        update(&|s| s.finished = true);
        let _ = done_tx.send(true);
    });
    ScenarioRun {
        status,
        done: done_rx,
        abort: task.abort_handle(),
    }
}
