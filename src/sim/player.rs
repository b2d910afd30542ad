//! Playing a scenario over time: objects first, then each step at its offset (divided by the
//! speed), blocking on `wait` steps until the store shows what they wait for.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, bail};
use jiff::Timestamp;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::task::AbortHandle;

use super::scenario::*;
use crate::model::Kind;
use crate::sim::api_ops::Propagation;
use crate::sim::clock::{expand_value, now_rfc3339, parse_duration};
use crate::sim::managed::{Operation, Writer};
use crate::sim::patch::PatchKind;
use crate::sim::store::Store;

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

pub(super) fn step_error(i: usize, step: &Step, e: &anyhow::Error) -> String {
    let actor = step.actor.as_deref().unwrap_or("-");
    format!("step {i} (at {}, actor {actor}): {e:#}", step.at)
}

pub(super) fn expanded(v: &Value) -> Value {
    let mut v = v.clone();
    expand_value(&mut v, Timestamp::now());
    v
}

/// All at once (`Store::put_all`): the objects may refer to each other in any order.
pub(super) fn apply_objects(store: &Store, objects: &[Value]) -> Vec<String> {
    let results = store.put_all(objects.iter().map(expanded).collect());
    results
        .into_iter()
        .enumerate()
        .filter_map(|(i, r)| r.err().map(|e| format!("object {i}: {}", e.message)))
        .collect()
}

fn writer(step: &Step) -> Option<Writer> {
    let manager = step.field_manager.clone()?;
    let operation = step
        .operation
        .as_deref()
        .and_then(Operation::parse)
        .unwrap_or(Operation::Update);
    Some(Writer { manager, operation })
}

pub(super) fn target(r: &ObjRef) -> anyhow::Result<Kind> {
    Kind::from_api(&r.api_version, &r.kind).with_context(|| {
        format!(
            "kind {} of {} is not served by the emulator",
            r.kind, r.api_version
        )
    })
}

pub(super) fn apply_step(store: &Store, kcm: &Arc<AtomicBool>, step: &Step) -> anyhow::Result<()> {
    let writer = writer(step);
    if let Some(obj) = &step.create {
        match &writer {
            Some(w) => store.put_as(expanded(obj), w)?,
            None => store.put(expanded(obj))?,
        };
    } else if let Some(p) = &step.patch {
        let pk = match p.patch_type.as_deref().unwrap_or("merge") {
            "merge" => PatchKind::Merge,
            "json" => PatchKind::Json,
            "strategic" => PatchKind::Strategic,
            other => bail!("unknown patch type {other:?} (merge, json, strategic)"),
        };
        store.patch_object_as(
            target(&p.target)?,
            &p.target.namespace,
            &p.target.name,
            pk,
            &expanded(&p.patch),
            writer.as_ref(),
            None,
        )?;
    } else if let Some(p) = &step.status {
        store.patch_object_as(
            target(&p.target)?,
            &p.target.namespace,
            &p.target.name,
            PatchKind::Merge,
            &json!({ "status": expanded(&p.patch) }),
            writer.as_ref(),
            Some("status"),
        )?;
    } else if let Some(d) = &step.delete {
        let propagation = d
            .propagation
            .as_deref()
            .map(Propagation::parse)
            .transpose()
            .map_err(|e| anyhow::anyhow!(e.message))?;
        store.remove_with(
            target(&d.target)?,
            &d.target.namespace,
            &d.target.name,
            d.force,
            propagation,
        )?;
    } else if let Some(ev) = &step.event {
        store.put(event_object(store, ev)?)?;
    } else if let Some(on) = step.controller_manager {
        kcm.store(on, Ordering::Relaxed);
        store.nudge();
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
pub(super) fn sorted_steps(steps: &[Step]) -> Vec<(Duration, usize)> {
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
            store.nudge();
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
