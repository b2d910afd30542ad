//! Scenarios: initial objects plus a timeline of changes made by the simulated controller, CDI,
//! Velero, CNPG... Files live in `scenarios/*.yaml` (embedded in the binary) or anywhere on disk;
//! `scenarios/README.md` documents the format.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{Context, bail};
use serde::Deserialize;
use serde_json::Value;

use crate::sim::api_ops::Propagation;
use crate::sim::clock::parse_duration;
use crate::sim::managed::Operation;
use crate::sim::privileged::kind_of;
use crate::sim::store::Store;

pub use super::player::{ScenarioRun, ScenarioStatus, play};
use super::player::{apply_objects, apply_step, expanded, sorted_steps, step_error, target};

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
        "vm-velero-backup-missing.yaml",
        include_str!("../../scenarios/vm-velero-backup-missing.yaml"),
    ),
    (
        "vm-mounted-disk-renamed.yaml",
        include_str!("../../scenarios/vm-mounted-disk-renamed.yaml"),
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
        "pg-objectstore-missing.yaml",
        include_str!("../../scenarios/pg-objectstore-missing.yaml"),
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
    (
        "vm-velero-restore-stale.yaml",
        include_str!("../../scenarios/vm-velero-restore-stale.yaml"),
    ),
    (
        "vm-orig-bind-stuck.yaml",
        include_str!("../../scenarios/vm-orig-bind-stuck.yaml"),
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
    /// `Background` (default), `Foreground` or `Orphan` (the dependents keep living: a
    /// controller deleting DataVolumes but not their PVCs).
    #[serde(default)]
    pub propagation: Option<String>,
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

    pub(super) fn target(&self) -> ObjRef {
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
    /// The field manager the write is recorded under in the object's managedFields (create,
    /// patch, status steps); none = managedFields left as they are.
    #[serde(default)]
    pub field_manager: Option<String>,
    /// `Update` (default) or `Apply`: the operation of that managedFields entry.
    #[serde(default)]
    pub operation: Option<String>,
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
        if let Some(op) = &self.operation
            && Operation::parse(op).is_none()
        {
            bail!("step {i}: operation {op:?} is not Update or Apply");
        }
        if (self.operation.is_some() || self.field_manager.is_some())
            && self.create.is_none()
            && self.patch.is_none()
            && self.status.is_none()
        {
            bail!("step {i}: fieldManager/operation apply to create, patch and status steps only");
        }
        if self.operation.is_some() && self.field_manager.is_none() {
            bail!("step {i}: operation needs a fieldManager");
        }
        if let Some(p) = self.delete.as_ref().and_then(|d| d.propagation.as_deref()) {
            Propagation::parse(p).map_err(|e| anyhow::anyhow!("step {i}: {}", e.message))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
