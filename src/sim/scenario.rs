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
    (
        "demo-rename-half-done.yaml",
        include_str!("../../scenarios/demo-rename-half-done.yaml"),
    ),
    (
        "demo-servername-reverted.yaml",
        include_str!("../../scenarios/demo-servername-reverted.yaml"),
    ),
    (
        "pg-deadline-near.yaml",
        include_str!("../../scenarios/pg-deadline-near.yaml"),
    ),
    (
        "pg-malformed-options.yaml",
        include_str!("../../scenarios/pg-malformed-options.yaml"),
    ),
    (
        "pg-objectstore-owner-stale.yaml",
        include_str!("../../scenarios/pg-objectstore-owner-stale.yaml"),
    ),
    (
        "pg-purge-stuck.yaml",
        include_str!("../../scenarios/pg-purge-stuck.yaml"),
    ),
    (
        "pg-servername-reverted.yaml",
        include_str!("../../scenarios/pg-servername-reverted.yaml"),
    ),
    (
        "pg-system-bucket-bootstrap.yaml",
        include_str!("../../scenarios/pg-system-bucket-bootstrap.yaml"),
    ),
    (
        "vm-concurrent-hash-collision.yaml",
        include_str!("../../scenarios/vm-concurrent-hash-collision.yaml"),
    ),
    (
        "vm-halt-stuck.yaml",
        include_str!("../../scenarios/vm-halt-stuck.yaml"),
    ),
    (
        "vm-keep-original-disabled.yaml",
        include_str!("../../scenarios/vm-keep-original-disabled.yaml"),
    ),
    (
        "vm-not-halted.yaml",
        include_str!("../../scenarios/vm-not-halted.yaml"),
    ),
    (
        "vm-orig-deleted-leak.yaml",
        include_str!("../../scenarios/vm-orig-deleted-leak.yaml"),
    ),
    (
        "vm-orig-name-too-long.yaml",
        include_str!("../../scenarios/vm-orig-name-too-long.yaml"),
    ),
    (
        "vm-rename-cache-race.yaml",
        include_str!("../../scenarios/vm-rename-cache-race.yaml"),
    ),
    (
        "vm-reused-restore-name.yaml",
        include_str!("../../scenarios/vm-reused-restore-name.yaml"),
    ),
    (
        "vm-velero-restore-failed.yaml",
        include_str!("../../scenarios/vm-velero-restore-failed.yaml"),
    ),
    (
        "vm-velero-restore-stuck.yaml",
        include_str!("../../scenarios/vm-velero-restore-stuck.yaml"),
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
    /// Finding codes `check` must report while the player is blocked on its first `wait`
    /// (before the repair the wait expects): scenarios with waits only.
    #[serde(default, alias = "expect_at_wait")]
    pub expect_at_wait: Vec<String>,
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

/// Blocks the timeline until a condition holds in the store (an operator's repair, typically).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WaitStep {
    pub api_version: String,
    pub kind: String,
    #[serde(default)]
    pub namespace: String,
    pub name: String,
    /// Dot path into the object (`spec.claimRef.name`, `spec.plugins[0].parameters.serverName`,
    /// `metadata.annotations["backups.cozystack.io/restore-job-uid"]`); none = the object itself.
    #[serde(default)]
    pub path: Option<String>,
    /// The value at `path` must equal this (JSON equality).
    #[serde(default)]
    pub equals: Option<Value>,
    /// The object (or the value at `path`) must exist (`true`) or be gone (`false`).
    #[serde(default)]
    pub exists: Option<bool>,
    /// Give up after this long (scenario time, divided by the speed like `at`); default: never.
    #[serde(default)]
    pub timeout: Option<String>,
    /// Played when the wait times out (offsets from the moment it timed out); the scenario
    /// then ends: the steps after the wait are skipped.
    #[serde(default, alias = "on_timeout")]
    pub on_timeout: Vec<Step>,
}

/// One segment of a wait path.
#[derive(Debug, Clone, PartialEq)]
enum Seg {
    Key(String),
    Index(usize),
}

fn parse_path(path: &str) -> anyhow::Result<Vec<Seg>> {
    let mut segs = Vec::new();
    let mut chars = path.chars().peekable();
    let mut key = String::new();
    let bad = || anyhow::anyhow!("bad path {path:?} (use spec.a.b, a[0].b, a[\"x.y/z\"])");
    // A `.` closes a key, or follows a `[...]`; anything else around it is malformed.
    let mut after_bracket = false;
    while let Some(c) = chars.next() {
        match c {
            '.' => {
                if !key.is_empty() {
                    segs.push(Seg::Key(std::mem::take(&mut key)));
                } else if !after_bracket {
                    return Err(bad());
                }
                after_bracket = false;
            }
            '[' => {
                if !key.is_empty() {
                    segs.push(Seg::Key(std::mem::take(&mut key)));
                } else if segs.is_empty() {
                    return Err(bad());
                }
                let mut inner = String::new();
                loop {
                    match chars.next() {
                        Some(']') => break,
                        Some(x) => inner.push(x),
                        None => return Err(bad()),
                    }
                }
                let quoted =
                    |q: char| inner.len() >= 2 && inner.starts_with(q) && inner.ends_with(q);
                if quoted('"') || quoted('\'') {
                    segs.push(Seg::Key(inner[1..inner.len() - 1].to_string()));
                } else {
                    segs.push(Seg::Index(inner.trim().parse().map_err(|_| bad())?));
                }
                after_bracket = true;
            }
            _ if after_bracket => return Err(bad()),
            _ => key.push(c),
        }
    }
    if path.ends_with('.') {
        return Err(bad());
    }
    if !key.is_empty() {
        segs.push(Seg::Key(key));
    }
    if segs.is_empty() {
        return Err(bad());
    }
    Ok(segs)
}

fn lookup<'a>(obj: &'a Value, segs: &[Seg]) -> Option<&'a Value> {
    segs.iter()
        .try_fold(obj, |v, s| match s {
            Seg::Key(k) => v.get(k.as_str()),
            Seg::Index(i) => v.get(*i),
        })
        .filter(|v| !v.is_null())
}

impl WaitStep {
    fn check(&self) -> anyhow::Result<()> {
        if self.equals.is_some() && self.exists.is_some() {
            bail!("wait: give `equals` or `exists`, not both");
        }
        if self.equals.is_some() && self.path.is_none() {
            bail!("wait: `equals` needs a `path`");
        }
        if let Some(p) = &self.path {
            parse_path(p)?;
        }
        if let Some(t) = &self.timeout
            && parse_duration(t).is_none()
        {
            bail!("wait: bad timeout {t:?} (use 30s, 25m)");
        }
        if self.timeout.is_none() && !self.on_timeout.is_empty() {
            bail!("wait: `onTimeout` needs a `timeout`");
        }
        Ok(())
    }

    fn target(&self) -> ObjRef {
        ObjRef {
            api_version: self.api_version.clone(),
            kind: self.kind.clone(),
            namespace: self.namespace.clone(),
            name: self.name.clone(),
        }
    }

    /// What the wait is for, in one line (scenario status, `sim serve`).
    pub fn describe(&self) -> String {
        let obj = if self.namespace.is_empty() {
            format!("{} {}", self.kind, self.name)
        } else {
            format!("{} {}/{}", self.kind, self.namespace, self.name)
        };
        let what = match (&self.path, &self.equals, self.exists) {
            (Some(p), Some(v), _) => format!("{p} == {v}"),
            (Some(p), None, Some(false)) => format!("{p} absent"),
            (Some(p), None, _) => format!("{p} set"),
            (None, _, Some(false)) => "gone".into(),
            (None, _, _) => "exists".into(),
        };
        format!("waiting for {obj}: {what}")
    }

    /// Whether the condition holds in the store now.
    pub fn satisfied(&self, store: &Store) -> anyhow::Result<bool> {
        let kind = target(&self.target())?;
        let ns = if kind.info().namespaced {
            self.namespace.as_str()
        } else {
            ""
        };
        let obj = store.get(kind, ns, &self.name);
        let want_exists = self.exists.unwrap_or(true);
        let Some(path) = &self.path else {
            return Ok(obj.is_some() == want_exists);
        };
        let segs = parse_path(path)?;
        let value = obj.as_ref().and_then(|o| lookup(o, &segs));
        Ok(match &self.equals {
            Some(expected) => value == Some(&expanded(expected)),
            None => value.is_some() == want_exists,
        })
    }
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
    /// Block the timeline until a condition holds (see `WaitStep`).
    #[serde(default)]
    pub wait: Option<WaitStep>,
}

impl Step {
    fn check(&self, i: usize, in_branch: bool) -> anyhow::Result<()> {
        let n = [
            self.create.is_some(),
            self.patch.is_some(),
            self.status.is_some(),
            self.delete.is_some(),
            self.event.is_some(),
            self.controller_manager.is_some(),
            self.wait.is_some(),
        ]
        .iter()
        .filter(|b| **b)
        .count();
        if n != 1 {
            bail!(
                "step {i} (at {}) must have exactly one of create, patch, status, delete, event, controllerManager, wait",
                self.at
            );
        }
        if parse_duration(&self.at).is_none() {
            bail!("step {i}: bad offset {:?} (use 2s, 500ms, 1m)", self.at);
        }
        if let Some(w) = &self.wait {
            if in_branch {
                bail!("step {i}: an onTimeout branch cannot wait");
            }
            w.check()
                .with_context(|| format!("step {i} (at {})", self.at))?;
            for (j, s) in w.on_timeout.iter().enumerate() {
                s.check(j, true)
                    .with_context(|| format!("step {i} (at {}), onTimeout", self.at))?;
            }
        }
        Ok(())
    }
}

impl Scenario {
    /// Parses a scenario file (YAML or JSON) and checks every step does exactly one thing.
    pub fn parse(text: &str) -> anyhow::Result<Scenario> {
        let raw: Value = serde_saphyr::from_str(text).context("scenario is not valid YAML")?;
        let s: Scenario =
            serde_json::from_value(raw).context("scenario does not have the documented shape")?;
        let mut last_wait: Option<(usize, Duration)> = None;
        for (i, step) in s.steps.iter().enumerate() {
            step.check(i, false)?;
            let at = parse_duration(&step.at).unwrap_or_default();
            if let Some((w, wat)) = last_wait
                && at < wat
            {
                bail!(
                    "step {i} (at {}) comes after the wait of step {w} in the file but is earlier than it: steps after a wait must not have a smaller `at`",
                    step.at
                );
            }
            if step.wait.is_some() {
                last_wait = Some((i, at));
            }
        }
        if !s.expect_at_wait.is_empty() && !s.has_waits() {
            bail!("expectAtWait is given but no step waits");
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

    /// Whether a step waits for something (an operator's repair).
    pub fn has_waits(&self) -> bool {
        self.steps.iter().any(|s| s.wait.is_some())
    }

    /// Applies every object and every step at once (no waiting): the end state. A `wait` whose
    /// condition does not hold stops it there (the state an operator would repair).
    pub fn apply_all(&self, store: &Store) -> Vec<String> {
        let kcm = Arc::new(AtomicBool::new(true));
        let mut errors = apply_objects(store, &self.objects);
        for (_, i) in sorted_steps(&self.steps) {
            let step = &self.steps[i];
            if let Some(w) = &step.wait {
                match w.satisfied(store) {
                    Ok(true) => continue,
                    Ok(false) => break,
                    Err(e) => {
                        errors.push(step_error(i, step, &e));
                        break;
                    }
                }
            }
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
    /// What the player is blocked on (a `wait` step), if anything.
    pub waiting: Option<String>,
    /// A wait timed out: its onTimeout branch was played and the rest skipped.
    pub timed_out: bool,
    /// One line per object or step that failed to apply; playing goes on after a failure.
    pub errors: Vec<String>,
}

/// Where a run is: what `ScenarioRun::settled` waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RunPhase {
    Playing,
    Waiting,
    Finished,
}

/// A scenario being played.
#[derive(Clone)]
pub struct ScenarioRun {
    status: Arc<Mutex<ScenarioStatus>>,
    phase: watch::Receiver<RunPhase>,
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
        let mut rx = self.phase.clone();
        let _ = rx.wait_for(|p| *p == RunPhase::Finished).await;
        self.status()
    }

    /// Waits until the run is finished or blocked on a `wait` whose condition does not hold:
    /// the moment the cluster looks as the operator would find it.
    pub async fn settled(&self) -> ScenarioStatus {
        let mut rx = self.phase.clone();
        let _ = rx.wait_for(|p| *p != RunPhase::Playing).await;
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

/// Steps in time order; the same offset keeps the file order.
fn sorted_steps(steps: &[Step]) -> Vec<(Duration, usize)> {
    let mut v: Vec<(Duration, usize)> = steps
        .iter()
        .enumerate()
        .map(|(i, s)| (parse_duration(&s.at).unwrap_or_default(), i))
        .collect();
    v.sort_by_key(|(d, _)| *d);
    v
}

/// How often a wait re-checks its condition when no change arrives (a lagging or closed feed).
const WAIT_FALLBACK: Duration = Duration::from_millis(500);

/// Blocks until the condition holds (`true`) or the timeout passes (`false`). Re-checks on every
/// change of the waited kind, and every `WAIT_FALLBACK` in case the feed lagged.
async fn wait_until(
    store: &Store,
    w: &WaitStep,
    timeout: Option<Duration>,
) -> anyhow::Result<bool> {
    let kind = target(&w.target())?;
    // Subscribe before the first check, so no change can fall in between.
    let mut changes = store.changes(kind);
    let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
    loop {
        if w.satisfied(store)? {
            return Ok(true);
        }
        let timed_out = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = changes.recv() => {}
            _ = tokio::time::sleep(WAIT_FALLBACK) => {}
            _ = timed_out => return w.satisfied(store),
        }
    }
}

/// Plays a scenario on its own task: objects at once, then each step at `at / speed`. After a
/// `wait`, offsets count from the moment it was satisfied (minus its own `at`).
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
    let (phase_tx, phase_rx) = watch::channel(RunPhase::Playing);
    let st = status.clone();
    let task = tokio::spawn(async move {
        let update =
            |f: &dyn Fn(&mut ScenarioStatus)| f(&mut st.lock().unwrap_or_else(|p| p.into_inner()));
        if let Some(on) = scenario.controller_manager {
            kcm.store(on, Ordering::Relaxed);
        }
        let errors = apply_objects(&store, &scenario.objects);
        update(&|s| s.errors.extend(errors.iter().cloned()));
        // (moment, offset it stands for): steps run at moment + (at - offset) / speed.
        let mut anchor = (tokio::time::Instant::now(), Duration::ZERO);
        let due = |anchor: (tokio::time::Instant, Duration), at: Duration| {
            anchor.0 + at.saturating_sub(anchor.1).div_f64(speed)
        };
        'steps: for (at, i) in sorted_steps(&scenario.steps) {
            tokio::time::sleep_until(due(anchor, at)).await;
            let step = &scenario.steps[i];
            if let Some(w) = &step.wait {
                let desc = w.describe();
                let already = w.satisfied(&store).unwrap_or(false);
                if !already {
                    update(&|s| s.waiting = Some(desc.clone()));
                    let _ = phase_tx.send(RunPhase::Waiting);
                }
                let timeout = w
                    .timeout
                    .as_deref()
                    .and_then(parse_duration)
                    .map(|t| t.div_f64(speed));
                let result = wait_until(&store, w, timeout).await;
                update(&|s| s.waiting = None);
                let _ = phase_tx.send(RunPhase::Playing);
                match result {
                    Ok(true) => {
                        anchor = (tokio::time::Instant::now(), at);
                        update(&|s| s.steps_applied += 1);
                    }
                    Ok(false) => {
                        update(&|s| s.timed_out = true);
                        let branch = tokio::time::Instant::now();
                        for (bat, j) in sorted_steps(&w.on_timeout) {
                            tokio::time::sleep_until(due((branch, Duration::ZERO), bat)).await;
                            let b = &w.on_timeout[j];
                            if let Err(e) = apply_step(&store, &kcm, b) {
                                let msg = format!("onTimeout of {}", step_error(j, b, &e));
                                update(&|s| s.errors.push(msg.clone()));
                            }
                        }
                        break 'steps;
                    }
                    Err(e) => {
                        update(&|s| {
                            s.steps_applied += 1;
                            s.errors.push(step_error(i, step, &e));
                        });
                    }
                }
                continue;
            }
            let result = apply_step(&store, &kcm, step);
            update(&|s| {
                s.steps_applied += 1;
                if let Err(e) = &result {
                    s.errors.push(step_error(i, step, e));
                }
            });
        }
        update(&|s| s.finished = true);
        let _ = phase_tx.send(RunPhase::Finished);
    });
    ScenarioRun {
        status,
        phase: phase_rx,
        abort: task.abort_handle(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_paths() {
        assert_eq!(
            parse_path("spec.plugins[0].parameters.serverName").unwrap(),
            vec![
                Seg::Key("spec".into()),
                Seg::Key("plugins".into()),
                Seg::Index(0),
                Seg::Key("parameters".into()),
                Seg::Key("serverName".into()),
            ]
        );
        assert_eq!(
            parse_path(r#"metadata.annotations["backups.cozystack.io/restore-job-uid"]"#).unwrap(),
            vec![
                Seg::Key("metadata".into()),
                Seg::Key("annotations".into()),
                Seg::Key("backups.cozystack.io/restore-job-uid".into()),
            ]
        );
        for bad in ["", "a..b", ".a", "a.", "a[x]", "a[0", "a[0]b"] {
            assert!(parse_path(bad).is_err(), "{bad:?}");
        }
        let obj = json!({"spec": {"plugins": [{"parameters": {"serverName": "n"}}], "x": null}});
        let get = |p: &str| lookup(&obj, &parse_path(p).unwrap()).cloned();
        assert_eq!(
            get("spec.plugins[0].parameters.serverName"),
            Some(json!("n"))
        );
        assert_eq!(get("spec.plugins[1]"), None);
        assert_eq!(get("spec.x"), None, "null counts as absent");
    }

    #[test]
    fn wait_steps_are_checked() {
        let ok = "name: x\nsteps:\n  - {at: 1s, wait: {apiVersion: v1, kind: PersistentVolume, name: pv, path: spec.claimRef.name, equals: a, timeout: 1m, onTimeout: [{at: 0s, controllerManager: false}]}}\n  - {at: 1s, controllerManager: true}\n";
        assert!(Scenario::parse(ok).unwrap().has_waits());
        for bad in [
            // equals without a path
            "name: x\nsteps:\n  - {at: 1s, wait: {apiVersion: v1, kind: PersistentVolume, name: pv, equals: a}}\n",
            // onTimeout without timeout
            "name: x\nsteps:\n  - {at: 1s, wait: {apiVersion: v1, kind: PersistentVolume, name: pv, onTimeout: [{at: 0s, controllerManager: false}]}}\n",
            // a step after the wait in the file but before it in time
            "name: x\nsteps:\n  - {at: 2s, wait: {apiVersion: v1, kind: PersistentVolume, name: pv}}\n  - {at: 1s, controllerManager: true}\n",
            // expectAtWait without a wait
            "name: x\nexpectAtWait: [rename-half-done]\nsteps:\n  - {at: 1s, controllerManager: true}\n",
        ] {
            assert!(Scenario::parse(bad).is_err(), "{bad}");
        }
    }
}
