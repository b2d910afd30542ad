//! The action dialog's state and its pure transitions: what `a` offers for the selection, the
//! plan the operator reviews, the typed confirmation, then the progress and the result.
//!
//! The dialog holds the `Plan` value it shows; confirming sends exactly that value to the
//! worker (gitui's `process_confirmed_action`, kdash's `Modal{on_confirm}`). The default is
//! "no": Esc cancels, and Enter confirms only once the typed text equals the target's name.

use super::action_worker::WorkerRequest;
use super::consent::{Answer, Consent, LeaveConsent, StillRunning, Unproven};
use super::offer::{Consents, request};
use super::typed_field;
use crate::actions::execute::{Outcome, StepEvent};
use crate::actions::rbac::Denied;
use crate::actions::{Op, Plan, Refusal, Target, plan};
use crate::analysis::ActionKind;
use crate::cluster::Snapshot;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::TextArea;

/// One action on one target, and why it is offered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub action: ActionKind,
    pub target: Target,
    /// The finding that suggests it (`rename-half-done`); `None` when offered by the registry.
    pub because: Option<String>,
}

/// What planning a choice on the frame's snapshot gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Planned {
    Plan(Box<Plan>),
    Refused(Refusal),
    /// reclaim-orig with no recorded policy: the operator picks one before anything is planned.
    NeedsPolicy {
        class_policy: Option<String>,
    },
    /// reclaim-orig on what may be the only good copy of the disk: refused unless the operator
    /// types the consent naming it first.
    OnlyCopy(Unproven),
    /// restart-restore while the old RestoreJob still runs: refused unless the operator types
    /// the consent naming it, to leave it running.
    LeaveRunning(StillRunning),
}

impl Planned {
    /// A short word for the menu.
    pub fn summary(&self) -> String {
        match self {
            Planned::Plan(p) if p.ops.is_empty() && !p.waits.is_empty() => {
                "nothing to write: waits for the PV controller's bind".into()
            }
            Planned::Plan(p) if p.ops.is_empty() => "nothing to do".into(),
            Planned::Plan(p) => format!(
                "{} write{}",
                p.ops.len(),
                if p.ops.len() == 1 { "" } else { "s" }
            ),
            Planned::Refused(r) => format!("refused: {}", r.reason),
            Planned::NeedsPolicy { .. } => "asks for the reclaim policy".into(),
            Planned::OnlyCopy(_) => "may be the only copy: asks for a typed consent".into(),
            Planned::LeaveRunning(s) => format!(
                "RestoreJob {} is {}: asks for a typed consent to leave it running",
                s.name, s.phase
            ),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MenuEntry {
    pub choice: Choice,
    pub planned: Planned,
}

/// Several actions apply: the operator picks one (Enter only opens its plan).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Menu {
    /// What the actions are for (`RestoreJob tenant-a/restore-test`).
    pub about: String,
    pub entries: Vec<MenuEntry>,
    pub selected: usize,
}

/// The answer of the SelfSubjectAccessReviews for the plan's writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Perms {
    Checking,
    Allowed,
    Denied(Vec<Denied>),
    /// The check itself failed: the server will decide at the write.
    Unknown(String),
}

impl Perms {
    pub fn may_confirm(&self) -> bool {
        matches!(self, Perms::Allowed | Perms::Unknown(_))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepState {
    Pending,
    Running,
    Done,
    /// A precondition failed; the executor re-reads and re-plans.
    Conflict,
    /// The action completed without this write: someone (or an earlier run) already made it.
    NotNeeded,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepLine {
    pub op: Op,
    pub state: StepState,
    /// The conflict's message.
    pub note: Option<String>,
}

impl StepLine {
    /// Every step of `plan`, none started: what the progress list shows as a plan begins.
    pub fn all_pending(plan: &Plan) -> Vec<StepLine> {
        plan.ops
            .iter()
            .map(|op| StepLine {
                op: op.clone(),
                state: StepState::Pending,
                note: None,
            })
            .collect()
    }
}

// The dialog is boxed whole inside `Modal`, so the size of its biggest stage costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Stage {
    Refused(Refusal),
    /// The `-orig` PVC may hold the only good copy: the operator types the consent naming it
    /// to go on to the plan (which is then confirmed by name like any other).
    ConfirmDiscard(Consent),
    /// The old RestoreJob still runs: the operator types the consent naming it to restore
    /// again anyway (the plan is then confirmed by name like any other).
    ConfirmLeave(LeaveConsent),
    ChoosePolicy {
        class_policy: Option<String>,
        /// Delete is selected (else Retain).
        delete: bool,
    },
    Review {
        plan: Plan,
        perms: Perms,
        input: TextArea<'static>,
        /// Enter was pressed with a name that does not match.
        mismatch: bool,
    },
    Running {
        plan: Plan,
        steps: Vec<StepLine>,
        /// The writes are done and the PV controller's bind is awaited: what, for how long.
        waiting: Option<String>,
    },
    Finished {
        plan: Plan,
        steps: Vec<StepLine>,
        outcome: Outcome,
    },
}

#[derive(Debug, Clone)]
pub struct Dialog {
    /// Ties worker answers to this dialog.
    pub id: u64,
    pub choice: Choice,
    pub stage: Stage,
    /// First line of the plan text shown (↑/↓ scroll it).
    pub scroll: u16,
    /// What the operator typed consent to (discard the only copy, leave the old restore
    /// running): every plan of this dialog is made with it.
    pub consents: Consents,
    /// What could not be recorded (the audit log, the Event): said in the dialog and the
    /// status line, never dropped.
    pub problems: Vec<String>,
}

impl Dialog {
    pub fn plan(&self) -> Option<&Plan> {
        match &self.stage {
            Stage::Review { plan, .. }
            | Stage::Running { plan, .. }
            | Stage::Finished { plan, .. } => Some(plan),
            Stage::Refused(_)
            | Stage::ChoosePolicy { .. }
            | Stage::ConfirmDiscard(_)
            | Stage::ConfirmLeave(_) => None,
        }
    }

    /// The text typed into the confirmation field.
    pub fn typed(&self) -> Option<String> {
        match &self.stage {
            Stage::Review { input, .. } => Some(typed_field::text(input)),
            Stage::ConfirmDiscard(c) => Some(c.typed()),
            Stage::ConfirmLeave(c) => Some(c.typed()),
            _ => None,
        }
    }
}

/// What a key did to the dialog, for `update` to act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    None,
    /// Close the dialog; the message goes to the status line.
    Close(String),
    /// Plan again with this policy (reclaim-orig).
    PlanWithPolicy(String),
    /// The consent to discard the only copy was typed: plan again with it.
    PlanDiscarding,
    /// The consent to leave the old RestoreJob running was typed: plan again with it.
    PlanLeaving,
    Send(WorkerRequest),
    /// Tell the operator something without closing.
    Say(String),
}

const NAME_HERE: &str = "type the name here";

fn confirm_field() -> TextArea<'static> {
    typed_field::new(NAME_HERE)
}

/// A dialog on what planning gave; a plan with writes also asks the worker for permissions.
pub fn open(id: u64, choice: Choice, planned: Planned) -> (Dialog, Option<WorkerRequest>) {
    let (stage, req) = match planned {
        Planned::Refused(r) => (Stage::Refused(r), None),
        Planned::NeedsPolicy { class_policy } => (
            Stage::ChoosePolicy {
                // The class's policy is the likely original; without one, keep the data.
                delete: class_policy.as_deref() == Some("Delete"),
                class_policy,
            },
            None,
        ),
        Planned::OnlyCopy(u) => (
            Stage::ConfirmDiscard(Consent::new(u, "type the words here")),
            None,
        ),
        Planned::LeaveRunning(s) => (Stage::ConfirmLeave(LeaveConsent::new(s)), None),
        Planned::Plan(p) => review(id, *p),
    };
    (
        Dialog {
            id,
            choice,
            stage,
            scroll: 0,
            consents: Consents::NONE,
            problems: Vec::new(),
        },
        req,
    )
}

/// After the consent to discard: what planning with it gave (a plan, a policy to choose, or
/// a refusal for another reason).
pub fn after_discard(d: &mut Dialog, planned: Planned) -> Option<WorkerRequest> {
    d.consents.discard_only_copy = true;
    after_consent(d, planned)
}

/// After the consent to leave the old RestoreJob running: what planning with it gave.
pub fn after_leave(d: &mut Dialog, planned: Planned) -> Option<WorkerRequest> {
    d.consents.leave_running = true;
    after_consent(d, planned)
}

/// A consent was typed: the plan made with it, or the refusal that stands anyway (a consent
/// asked again here would be a loop; it is said as the refusal instead).
fn after_consent(d: &mut Dialog, planned: Planned) -> Option<WorkerRequest> {
    let (stage, req) = match planned {
        Planned::Plan(p) => review(d.id, *p),
        Planned::NeedsPolicy { class_policy } => (
            Stage::ChoosePolicy {
                delete: class_policy.as_deref() == Some("Delete"),
                class_policy,
            },
            None,
        ),
        Planned::Refused(r) => (Stage::Refused(r), None),
        Planned::OnlyCopy(u) => (
            Stage::Refused(Refusal {
                reason: u.left_out(),
                reads: Vec::new(),
            }),
            None,
        ),
        Planned::LeaveRunning(s) => (
            Stage::Refused(Refusal {
                reason: s.refusal,
                reads: Vec::new(),
            }),
            None,
        ),
    };
    d.stage = stage;
    d.scroll = 0;
    req
}

fn review(id: u64, plan: Plan) -> (Stage, Option<WorkerRequest>) {
    let (perms, req) = if plan.ops.is_empty() {
        (Perms::Allowed, None)
    } else {
        (
            Perms::Checking,
            Some(WorkerRequest::Check {
                id,
                ops: plan.ops.clone(),
            }),
        )
    };
    (
        Stage::Review {
            plan,
            perms,
            input: confirm_field(),
            mismatch: false,
        },
        req,
    )
}

/// After the policy choice: plan with it. A refusal now is shown like any other.
pub fn replan_with_policy(
    d: &mut Dialog,
    snap: &Snapshot,
    policy: String,
) -> Option<WorkerRequest> {
    match plan(snap, &request(&d.choice, Some(policy), d.consents)) {
        Ok(p) => {
            let (stage, req) = review(d.id, p);
            d.stage = stage;
            req
        }
        Err(r) => {
            d.stage = Stage::Refused(r);
            None
        }
    }
}

// ---- keys -----------------------------------------------------------------------------------

const SCROLL_PAGE: u16 = 10;

fn scroll(d: &mut Dialog, k: &KeyEvent) -> bool {
    match k.code {
        KeyCode::Up => d.scroll = d.scroll.saturating_sub(1),
        KeyCode::Down => d.scroll = d.scroll.saturating_add(1),
        KeyCode::PageUp => d.scroll = d.scroll.saturating_sub(SCROLL_PAGE),
        KeyCode::PageDown => d.scroll = d.scroll.saturating_add(SCROLL_PAGE),
        _ => return false,
    }
    true
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MenuKey {
    Stay,
    Close,
    Open(usize),
}

/// Keys on the menu: move, open an entry (its plan, not the action), or close.
pub fn menu_key(m: &mut Menu, k: &KeyEvent) -> MenuKey {
    let n = m.entries.len();
    match k.code {
        KeyCode::Esc | KeyCode::Char('q') => return MenuKey::Close,
        KeyCode::Up | KeyCode::Char('k') => m.selected = m.selected.saturating_sub(1),
        KeyCode::Down | KeyCode::Char('j') => {
            m.selected = (m.selected + 1).min(n.saturating_sub(1));
        }
        KeyCode::Enter if n > 0 => return MenuKey::Open(m.selected),
        KeyCode::Char(c @ '1'..='9') => {
            let i = c as usize - '1' as usize;
            if i < n {
                m.selected = i;
                return MenuKey::Open(i);
            }
        }
        _ => {}
    }
    MenuKey::Stay
}

/// Keys on the dialog.
pub fn dialog_key(d: &mut Dialog, k: &KeyEvent) -> Effect {
    let esc = k.code == KeyCode::Esc;
    let enter = k.code == KeyCode::Enter
        || (k.modifiers.contains(KeyModifiers::CONTROL)
            && matches!(k.code, KeyCode::Char('m' | 'j')));
    match &mut d.stage {
        Stage::Running { .. } => {
            if esc || enter {
                return Effect::Say(
                    "the action is running: its result follows (the executor stops only between writes)".into(),
                );
            }
            scroll(d, k);
            Effect::None
        }
        Stage::Refused(_) => {
            if esc || enter || k.code == KeyCode::Char('q') {
                return Effect::Close(String::new());
            }
            scroll(d, k);
            Effect::None
        }
        Stage::Finished { outcome, .. } => {
            if esc || enter || k.code == KeyCode::Char('q') {
                return Effect::Close(outcome_line(outcome));
            }
            scroll(d, k);
            Effect::None
        }
        Stage::ConfirmDiscard(_) => {
            if esc {
                return Effect::Close("cancelled: nothing was written".into());
            }
            if !enter && scroll(d, k) {
                return Effect::None;
            }
            let Stage::ConfirmDiscard(c) = &mut d.stage else {
                return Effect::None;
            };
            match c.key(k, enter) {
                Answer::Given => Effect::PlanDiscarding,
                Answer::Editing => Effect::None,
                Answer::Empty | Answer::Wrong => Effect::Say(format!(
                    "type \"{}\" exactly to discard it (esc keeps the copy)",
                    c.unproven.phrase()
                )),
            }
        }
        Stage::ConfirmLeave(_) => {
            if esc {
                return Effect::Close("cancelled: nothing was written".into());
            }
            if !enter && scroll(d, k) {
                return Effect::None;
            }
            let Stage::ConfirmLeave(c) = &mut d.stage else {
                return Effect::None;
            };
            match c.key(k, enter) {
                Answer::Given => Effect::PlanLeaving,
                Answer::Editing => Effect::None,
                Answer::Empty | Answer::Wrong => Effect::Say(format!(
                    "type \"{}\" exactly to restore again while it runs (esc waits for it)",
                    c.still.phrase()
                )),
            }
        }
        Stage::ChoosePolicy { delete, .. } => match k.code {
            KeyCode::Esc => Effect::Close("cancelled: nothing was written".into()),
            KeyCode::Up | KeyCode::Down | KeyCode::Tab | KeyCode::Char('j' | 'k') => {
                *delete = !*delete;
                Effect::None
            }
            KeyCode::Char('d' | 'D') => {
                *delete = true;
                Effect::None
            }
            KeyCode::Char('r' | 'R') => {
                *delete = false;
                Effect::None
            }
            // Enter only picks the policy to plan with; the plan is confirmed later by name.
            KeyCode::Enter => {
                Effect::PlanWithPolicy(if *delete { "Delete" } else { "Retain" }.into())
            }
            _ => Effect::None,
        },
        Stage::Review { .. } => {
            if esc {
                return Effect::Close("cancelled: nothing was written".into());
            }
            if enter {
                return confirm(d);
            }
            if scroll(d, k) {
                return Effect::None;
            }
            if let Stage::Review {
                plan,
                perms,
                input,
                mismatch,
            } = &mut d.stage
                && !plan.ops.is_empty()
                && perms.may_confirm()
            {
                typed_field::edit(input, k, NAME_HERE);
                *mismatch = false;
            }
            Effect::None
        }
    }
}

/// Enter on the review: confirms only when the typed text is exactly the target's name and
/// the writes are allowed. Whatever else, nothing happens but a hint.
fn confirm(d: &mut Dialog) -> Effect {
    let id = d.id;
    let Stage::Review {
        plan,
        perms,
        input,
        mismatch,
    } = &mut d.stage
    else {
        return Effect::None;
    };
    if plan.ops.is_empty() && plan.waits.is_empty() {
        return Effect::Close(format!("{}: nothing to do", plan.request.action));
    }
    // Nothing to write, only the PV controller's bind to wait for: no name to type.
    let waits_only = plan.ops.is_empty();
    match perms {
        Perms::Denied(_) => return Effect::Say("forbidden: this action cannot run".into()),
        Perms::Checking => {
            return Effect::Say("still checking permissions: confirm once they are known".into());
        }
        Perms::Allowed | Perms::Unknown(_) => {}
    }
    let typed = input.lines().join("");
    if !waits_only && typed != plan.confirm_name() {
        *mismatch = true;
        return Effect::Say(format!(
            "type {} exactly to confirm (esc cancels)",
            plan.confirm_name()
        ));
    }
    let plan = plan.clone();
    let steps = StepLine::all_pending(&plan);
    d.stage = Stage::Running {
        plan: plan.clone(),
        steps,
        waiting: None,
    };
    d.scroll = 0;
    Effect::Send(WorkerRequest::Execute {
        id,
        plan: Box::new(plan),
    })
}

// ---- worker answers -------------------------------------------------------------------------

pub fn on_checked(d: &mut Dialog, result: Result<Vec<Denied>, String>) {
    if let Stage::Review { perms, .. } = &mut d.stage
        && *perms == Perms::Checking
    {
        *perms = match result {
            Ok(denied) if denied.is_empty() => Perms::Allowed,
            Ok(denied) => Perms::Denied(denied),
            Err(e) => Perms::Unknown(e),
        };
    }
}

pub fn on_step(d: &mut Dialog, event: StepEvent) {
    if let StepEvent::RecordFailed(msg) = &event {
        // Whatever the stage: a record that could not be made is always said.
        d.problems.push(msg.clone());
        return;
    }
    let Stage::Running { steps, waiting, .. } = &mut d.stage else {
        return;
    };
    apply_step(steps, waiting, event);
}

/// Folds one executor event into a progress list (the single dialog's and each PVC's of the
/// bulk dialog): a wait replaces the waiting line, a step updates its own line.
pub fn apply_step(steps: &mut Vec<StepLine>, waiting: &mut Option<String>, event: StepEvent) {
    let (op, state, note) = match event {
        StepEvent::Waiting { pvc, waited_secs } => {
            *waiting = Some(format!(
                "waiting for the PV controller to bind {pvc} ({waited_secs} s; it binds on its resync, up to ~15 s)"
            ));
            return;
        }
        StepEvent::RecordFailed(_) | StepEvent::Rejudged(..) => return,
        StepEvent::Start(op) => (op, StepState::Running, None),
        StepEvent::Done(op) => (op, StepState::Done, None),
        StepEvent::Conflict(op, msg) => (op, StepState::Conflict, Some(msg)),
    };
    // The executor re-plans, so the op may carry UIDs filled in since: match by step identity.
    match steps
        .iter_mut()
        .find(|s| s.state != StepState::Done && s.op.same_step(&op))
    {
        Some(s) => {
            s.op = op;
            s.state = state;
            if note.is_some() || state == StepState::Done {
                s.note = note;
            }
        }
        None => steps.push(StepLine { op, state, note }),
    }
}

pub fn on_done(d: &mut Dialog, outcome: Outcome) {
    let Stage::Running { plan, steps, .. } = &mut d.stage else {
        return;
    };
    let mut steps = std::mem::take(steps);
    if matches!(outcome, Outcome::Completed { .. } | Outcome::Unbound { .. }) {
        for s in &mut steps {
            if s.state != StepState::Done {
                s.state = StepState::NotNeeded;
            }
        }
    }
    d.stage = Stage::Finished {
        plan: plan.clone(),
        steps,
        outcome,
    };
}

/// The result in a line (dialog and status line).
pub fn outcome_line(o: &Outcome) -> String {
    let w = |n: usize| format!("{n} write{}", if n == 1 { "" } else { "s" });
    match o {
        Outcome::Completed { writes: 0 } => "completed: nothing needed writing".into(),
        Outcome::Completed { writes } => format!("completed: {}", w(*writes)),
        Outcome::Interrupted { writes } => {
            format!("interrupted after {}: re-run resumes", w(*writes))
        }
        Outcome::Stopped { writes, reason } => {
            format!("stopped after {}: {reason}", w(*writes))
        }
        Outcome::Unbound {
            writes,
            pending,
            waited_secs,
        } => format!(
            "completed: {}, but the PV controller had not bound {} after {waited_secs} s: check it (a re-run writes nothing and waits again)",
            w(*writes),
            pending.join(", ")
        ),
    }
}
