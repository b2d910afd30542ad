//! Execution: before EVERY write, re-read what the plan depends on straight from the API (never
//! the watch cache), re-plan from that fresh state, check that the next write is one the
//! operator confirmed, and make it with a resourceVersion or UID precondition. A conflict means
//! "re-read and re-plan", never a blind retry; a finished action plans nothing, so a rerun
//! changes nothing, and an interrupted one resumes where it stopped.

use super::audit::{self, AuditLine, Identity};
use super::fresh::fresh_snapshot;
use super::ops::Op;
use super::plan::{Plan, plan};
use super::rejudge;
use super::verify::{broken_promises, end_reads};
use super::write::{WriteError, apply, short_name};
use crate::analysis::ObjRef;
use serde_json::Value;
use std::path::PathBuf;

pub(super) use super::fresh::api_for;
pub use super::fresh::plan_fresh;
pub use super::write::brief;

/// How many conflicts in a row before giving up: someone else keeps writing.
const MAX_CONFLICTS: usize = 5;

pub struct Executor {
    pub client: kube::Client,
    pub user: String,
    pub context: String,
    /// The API server's URL without userinfo, for the audit (see `AuditLine::server`).
    pub server: String,
    /// Where the audit lines go; `None` writes none (tests that only look at the cluster).
    pub audit: Option<PathBuf>,
    /// Also record an Event on the RestoreJob.
    pub events: bool,
    /// Stop after this many writes (tests simulate a crash after write k).
    pub max_writes: Option<usize>,
    /// How long to wait, after the last write, for the PV controller to bind an `-orig` PVC
    /// (its resync comes up to ~15 s after the claimRef points at it).
    pub bind_wait: std::time::Duration,
}

/// The default bound on the wait for the PV controller's bind: twice its resync period.
pub const BIND_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepEvent {
    /// About to write.
    Start(Op),
    Done(Op),
    /// A precondition failed; re-reading. The text is one line for the operator.
    Conflict(Op, String),
    /// Every write is done; the PV controller has not bound this PVC yet (seconds waited).
    Waiting {
        pvc: String,
        waited_secs: u64,
    },
    /// The record of the action could not be made (the audit log or the Event): it must be
    /// said, never dropped.
    RecordFailed(String),
    /// The copy proof of an `-orig` PVC held on a fresh read made straight before its delete
    /// (the proof in a line); the delete follows.
    Rejudged(Op, String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing left to do (possibly nothing was needed).
    Completed { writes: usize },
    /// Stopped on purpose after `max_writes`.
    Interrupted { writes: usize },
    /// Refused or failed; what was written before stays, and a rerun resumes.
    Stopped { writes: usize, reason: String },
    /// Every write done, but the PV controller had not bound these PVCs when the wait ended;
    /// a rerun writes nothing and waits again.
    Unbound {
        writes: usize,
        pending: Vec<String>,
        waited_secs: u64,
    },
}

impl Outcome {
    pub fn writes(&self) -> usize {
        match self {
            Outcome::Completed { writes }
            | Outcome::Interrupted { writes }
            | Outcome::Stopped { writes, .. }
            | Outcome::Unbound { writes, .. } => *writes,
        }
    }
}

/// What every audit line of one action says of who wrote and where, asked once.
pub(super) struct Recorder {
    identity: Identity,
    kube_system_uid: Option<String>,
}

impl Executor {
    /// One audit line; an error says why it could not be written.
    fn record_line(
        &self,
        plan: &Plan,
        who: &Recorder,
        operation: String,
        precondition: String,
        outcome: &str,
    ) -> Result<(), String> {
        let Some(path) = &self.audit else {
            return Ok(());
        };
        let line = AuditLine {
            time: jiff::Timestamp::now().to_string(),
            user: self.user.clone(),
            authenticated: who.identity.clone(),
            context: self.context.clone(),
            server: self.server.clone(),
            kube_system_uid: who.kube_system_uid.clone(),
            restore_uid: plan
                .restore
                .as_ref()
                .map(|r| r.uid.clone())
                .unwrap_or_default(),
            action: plan.request.action.as_str().to_string(),
            target: plan.request.target.to_string(),
            operation,
            precondition,
            outcome: outcome.to_string(),
        };
        audit::append(path, &line).map_err(|e| {
            tracing::warn!("cannot write the audit log {}: {e}", path.display());
            format!("the audit log {} was not written: {e}", path.display())
        })
    }

    fn record(
        &self,
        plan: &Plan,
        who: &Recorder,
        op: &Op,
        outcome: &str,
        on_step: &mut impl FnMut(StepEvent),
    ) {
        if let Err(e) = self.record_line(plan, who, op.describe(), op.precondition(), outcome) {
            on_step(StepEvent::RecordFailed(e));
        }
    }

    /// Sets the PV of a reclaim's policy patch back to the policy it had, on the read `fresh`
    /// (its resourceVersion the precondition). Returns the writes made and what to tell.
    async fn undo_policy(&self, fresh: &crate::cluster::Snapshot, done: &Op) -> (usize, String) {
        let Op::SetReclaimPolicy { pv, from, to } = done else {
            return (0, String::new());
        };
        let undo = Op::SetReclaimPolicy {
            pv: pv.clone(),
            from: to.clone(),
            to: from.clone(),
        };
        match apply(&self.client, fresh, &undo).await {
            Ok(()) => (
                1,
                format!("PV {pv} was set back to {from}: the volume is kept"),
            ),
            Err(e) => (
                0,
                format!(
                    "PV {pv} is left {to} and could not be set back ({}): set it to {from} before anyone deletes the PVC, or its volume goes with it",
                    match e {
                        WriteError::Conflict(m) | WriteError::Other(m) => m,
                    }
                ),
            ),
        }
    }

    /// After the last write: wait, a bounded time, for the PV controller to bind what the plan
    /// says it still owes, saying each second that it waits. Reads only.
    async fn wait_bound(
        &self,
        waits: &[ObjRef],
        writes: usize,
        on_step: &mut impl FnMut(StepEvent),
    ) -> Outcome {
        let start = std::time::Instant::now();
        let mut said: Option<u64> = None;
        loop {
            let mut pending = Vec::new();
            for w in waits {
                match api_for(&self.client, w).get_opt(&w.name).await {
                    Ok(Some(o))
                        if o.data.pointer("/status/phase").and_then(Value::as_str)
                            == Some("Bound") => {}
                    Ok(Some(_)) => pending.push(format!("{}/{}", w.namespace, w.name)),
                    Ok(None) => {
                        return Outcome::Stopped {
                            writes,
                            reason: format!(
                                "{} vanished while waiting for the PV controller to bind it",
                                short_name(w)
                            ),
                        };
                    }
                    Err(e) => {
                        return Outcome::Stopped {
                            writes,
                            reason: format!("cannot read {}: {}", short_name(w), brief(&e)),
                        };
                    }
                }
            }
            if pending.is_empty() {
                return Outcome::Completed { writes };
            }
            let waited_secs = start.elapsed().as_secs();
            if said != Some(waited_secs) {
                said = Some(waited_secs);
                for pvc in &pending {
                    on_step(StepEvent::Waiting {
                        pvc: pvc.clone(),
                        waited_secs,
                    });
                }
            }
            if start.elapsed() >= self.bind_wait {
                return Outcome::Unbound {
                    writes,
                    pending,
                    waited_secs,
                };
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    }

    /// The end state every confirmed write promised, read fresh (see `verify`): a promise
    /// broken under the action is a stop, audited, never a "done".
    async fn check_end(
        &self,
        confirmed: &Plan,
        who: &Recorder,
        writes: usize,
        namespaces: &[String],
        on_step: &mut impl FnMut(StepEvent),
    ) -> Outcome {
        let reason =
            match fresh_snapshot(&self.client, &end_reads(&confirmed.ops), namespaces).await {
                Ok(fresh) => broken_promises(&confirmed.ops, &fresh).join("; "),
                Err(e) => format!("the end state could not be read back: {e:#}"),
            };
        if reason.is_empty() {
            return Outcome::Completed { writes };
        }
        if let Err(e) = self.record_line(
            confirmed,
            who,
            "check the end state (fresh read)".into(),
            "none".into(),
            &format!("stopped: {reason}"),
        ) {
            on_step(StepEvent::RecordFailed(e));
        }
        Outcome::Stopped { writes, reason }
    }

    /// "Done" for a reclaim: the copy proof each deleted `-orig` PVC stood on still holds on a
    /// fresh read after the delete (see `rejudge`); else a stop, audited.
    #[allow(clippy::too_many_arguments)]
    async fn check_proofs(
        &self,
        confirmed: &Plan,
        who: &Recorder,
        outcome: Outcome,
        judged: &[std::sync::Arc<crate::model::Obj<crate::model::objects::Pvc>>],
        reads: &[ObjRef],
        namespaces: &[String],
        on_step: &mut impl FnMut(StepEvent),
    ) -> Outcome {
        let mut fallen = Vec::new();
        for orig in judged {
            if let Some(r) = rejudge::proof_after(&self.client, orig, reads, namespaces).await {
                fallen.push(r);
            }
        }
        if fallen.is_empty() {
            return outcome;
        }
        let writes = outcome.writes();
        let reason = fallen.join("; ");
        if let Err(e) = self.record_line(
            confirmed,
            who,
            "check the copy proof after the delete (fresh read)".into(),
            "none".into(),
            &format!("stopped: {reason}"),
        ) {
            on_step(StepEvent::RecordFailed(e));
        }
        Outcome::Stopped { writes, reason }
    }

    /// Runs the confirmed plan. `on_step` reports progress (the TUI draws it, the CLI prints it).
    pub async fn execute(&self, confirmed: &Plan, mut on_step: impl FnMut(StepEvent)) -> Outcome {
        // Asked once per action, and only when there is an audit to write it to.
        let who = match &self.audit {
            Some(_) => Recorder {
                identity: audit::authenticated_identity(&self.client).await,
                kube_system_uid: audit::kube_system_uid(&self.client).await,
            },
            None => Recorder {
                identity: Identity::Unknown {
                    unknown: "not asked (no audit log)".into(),
                },
                kube_system_uid: None,
            },
        };
        let mut writes = 0;
        let mut conflicts = 0;
        let mut reads = confirmed.reads.clone();
        let namespaces: Vec<String> = {
            let mut n: Vec<String> = reads
                .iter()
                .map(|r| r.namespace.to_string())
                .filter(|n| !n.is_empty())
                .collect();
            n.push(confirmed.request.target.namespace().to_string());
            n.sort();
            n.dedup();
            n
        };
        let mut done_steps: Vec<String> = Vec::new();
        // The `-orig` PVCs deleted on a re-judged copy proof: "done" needs that proof to hold
        // on a fresh read after the delete too.
        let mut judged: Vec<std::sync::Arc<crate::model::Obj<crate::model::objects::Pvc>>> =
            Vec::new();
        // The reclaim's PV policy patch done in this run, undone if the delete's proof falls.
        let mut policy_set: Option<Op> = None;
        // Each write is planned at most a few times; more means the server is not keeping them.
        let mut budget = confirmed.ops.len() * 3 + MAX_CONFLICTS + 8;
        let outcome = loop {
            if budget == 0 {
                break Outcome::Stopped { writes, reason: "the writes do not take effect on the server (the same step keeps coming back)".into() };
            }
            budget -= 1;

            let fresh = match fresh_snapshot(&self.client, &reads, &namespaces).await {
                Ok(s) => s,
                Err(e) => {
                    break Outcome::Stopped {
                        writes,
                        reason: format!("{e:#}"),
                    };
                }
            };
            let now = match plan(&fresh, &confirmed.request) {
                Ok(p) => p,
                Err(r) if r.reads.iter().any(|x| !reads.contains(x)) => {
                    reads.extend(r.reads);
                    reads.sort();
                    reads.dedup();
                    continue;
                }
                Err(r) => {
                    break Outcome::Stopped {
                        writes,
                        reason: format!("refused on a fresh read: {}", r.reason),
                    };
                }
            };
            let grew = now.reads.iter().any(|r| !reads.contains(r));
            if grew {
                reads.extend(now.reads.iter().cloned());
                reads.sort();
                reads.dedup();
                continue;
            }
            let Some(next) = now.ops.first() else {
                if now.waits.is_empty() {
                    break Outcome::Completed { writes };
                }
                break self.wait_bound(&now.waits, writes, &mut on_step).await;
            };
            if !confirmed.ops.iter().any(|o| o.same_step(next)) {
                break Outcome::Stopped {
                    writes,
                    reason: format!(
                        "the cluster changed since the plan was shown: it would now {}. Nothing more was written; run the action again to review the new plan",
                        next.describe()
                    ),
                };
            }
            // The crash a test simulates happens before a write, never in place of finding the job done.
            if self.max_writes.is_some_and(|m| writes >= m) {
                break Outcome::Interrupted { writes };
            }
            on_step(StepEvent::Start(next.clone()));
            let judged_now = if let Some(judge_op) =
                rejudge::judged_as(next, &confirmed.request, &confirmed.ops)
            {
                match rejudge::rejudge(
                    &self.client,
                    &confirmed.request,
                    &reads,
                    &namespaces,
                    judge_op,
                )
                .await
                {
                    Ok(j) => {
                        on_step(StepEvent::Rejudged(next.clone(), j.proof.clone()));
                        Some(j)
                    }
                    Err(reason) => {
                        // The proof fell after this run moved the PV away from Retain: the
                        // -orig PVC kept is the copy now, and its volume must not go with it.
                        let reason = match policy_set.take() {
                            Some(done) => {
                                let (undo, said) = self.undo_policy(&fresh, &done).await;
                                writes += undo;
                                format!("{reason}; {said}")
                            }
                            None => reason,
                        };
                        self.record(
                            confirmed,
                            &who,
                            next,
                            &format!("stopped: {reason}"),
                            &mut on_step,
                        );
                        break Outcome::Stopped { writes, reason };
                    }
                }
            } else {
                None
            };
            // The DELETE's preconditions name what was judged: the re-judged snapshot's.
            let judged_snapshot = judged_now.as_ref().map_or(&fresh, |j| &j.snapshot);
            let applied = apply(&self.client, judged_snapshot, next).await;
            if applied.is_ok()
                && let Some(j) = judged_now
            {
                if matches!(next, Op::SetReclaimPolicy { .. }) {
                    policy_set = Some(next.clone());
                } else {
                    judged.push(j.orig);
                }
            }
            match applied {
                Ok(()) => {
                    writes += 1;
                    conflicts = 0;
                    self.record(confirmed, &who, next, "done", &mut on_step);
                    done_steps.push(next.describe());
                    on_step(StepEvent::Done(next.clone()));
                }
                Err(WriteError::Conflict(msg)) => {
                    conflicts += 1;
                    self.record(
                        confirmed,
                        &who,
                        next,
                        &format!("conflict, re-planned: {msg}"),
                        &mut on_step,
                    );
                    on_step(StepEvent::Conflict(next.clone(), msg.clone()));
                    if conflicts >= MAX_CONFLICTS {
                        break Outcome::Stopped {
                            writes,
                            reason: format!(
                                "{MAX_CONFLICTS} conflicts in a row on {}: something else keeps writing it ({msg})",
                                next.target()
                            ),
                        };
                    }
                }
                Err(WriteError::Other(msg)) => {
                    self.record(
                        confirmed,
                        &who,
                        next,
                        &format!("failed: {msg}"),
                        &mut on_step,
                    );
                    break Outcome::Stopped {
                        writes,
                        reason: format!("{} failed: {msg}", next.describe()),
                    };
                }
            }
        };
        let outcome = match outcome {
            Outcome::Completed { writes } => {
                self.check_end(confirmed, &who, writes, &namespaces, &mut on_step)
                    .await
            }
            other => other,
        };
        // Whatever ended the loop after a judged delete (a re-plan refusing on the fallen
        // proof included): the proof read fresh says what the delete left.
        let outcome = if judged.is_empty() {
            outcome
        } else {
            self.check_proofs(
                confirmed,
                &who,
                outcome,
                &judged,
                &reads,
                &namespaces,
                &mut on_step,
            )
            .await
        };
        if self.events
            && writes > 0
            && let Some(r) = &confirmed.restore
        {
            let (msg, warn) = match &outcome {
                Outcome::Stopped { reason, .. } => (
                    format!(
                        "{} by {}: {}; then stopped: {reason}",
                        confirmed.request.action,
                        self.user,
                        done_steps.join("; ")
                    ),
                    true,
                ),
                _ => (
                    format!(
                        "{} by {}: {}",
                        confirmed.request.action,
                        self.user,
                        done_steps.join("; ")
                    ),
                    false,
                ),
            };
            if let Err(e) = audit::event(&self.client, r, &msg, warn).await {
                let why = match e.downcast_ref::<kube::Error>() {
                    Some(k) => brief(k),
                    None => format!("{e:#}"),
                };
                tracing::warn!(
                    "cannot record the Event on {}/{}: {why}",
                    r.namespace,
                    r.name
                );
                let line = format!(
                    "the Event on RestoreJob {}/{} was not recorded: {why}",
                    r.namespace, r.name
                );
                on_step(StepEvent::RecordFailed(line.clone()));
                if let Err(e) = self.record_line(
                    confirmed,
                    &who,
                    format!(
                        "record Event RestorewatchAction on RestoreJob {}/{}",
                        r.namespace, r.name
                    ),
                    "none".into(),
                    &format!("failed: {why}"),
                ) {
                    on_step(StepEvent::RecordFailed(e));
                }
            }
        }
        outcome
    }
}
