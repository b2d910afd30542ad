//! Reclaiming several `-orig` PVCs in one dialog: each marked PVC gets its own plan from
//! `actions::plan` (the single dialog's planning), the operator reviews every write of every
//! PVC and types one confirmation, then each PVC's confirmed plan goes to the same executor
//! in turn (fresh read, preconditions, re-plan before every write), one after the other, each
//! result shown as it comes. Pure: the worker is reached only through the requests returned.
//!
//! Two cases the single dialog resolves by asking:
//! - What may be the only good copy is asked about PVC by PVC, as in the single dialog: each
//!   is included only by the consent that names it, typed for it alone (one consent for the
//!   batch would discard copies the operator never looked at); left out, it is listed as
//!   refused with what is unknown about it.
//! - An `-orig` PVC with no recorded reclaim policy is refused from the batch: one policy for
//!   many PVCs would be a guess for each of them, and a wrong `Delete` destroys a volume its
//!   owner meant to keep while a wrong `Retain` only leaks it. Reclaimed alone, each shows its
//!   own StorageClass's policy and the operator chooses it for that volume.

use super::action_worker::WorkerRequest;
use super::consent::{Answer, Consent, Unproven};
use super::dialog::{Choice, Effect, Perms, Planned, StepLine, StepState};
use super::offer;
use super::typed_field;
use crate::actions::execute::{Outcome, StepEvent};
use crate::actions::rbac::Denied;
use crate::actions::{Plan, Target};
use crate::analysis::{ActionKind, Report};
use crate::cluster::Snapshot;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::TextArea;

/// What planning one marked PVC gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Writes (or the PV controller's bind) to run.
    Run(Box<Plan>),
    /// Nothing to write: already reclaimed, or nothing left to do.
    Nothing(Box<Plan>),
    /// May be the only good copy: runs (with this plan, made with the consent) only if the
    /// operator typed the consent naming it.
    OnlyCopy {
        unproven: Unproven,
        plan: Box<Plan>,
    },
    Refused(String),
}

/// Where a PVC's execution is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Run {
    /// Not part of the run (refused, left out, nothing to do).
    Skipped,
    Pending,
    Running {
        steps: Vec<StepLine>,
        waiting: Option<String>,
    },
    Done {
        steps: Vec<StepLine>,
        outcome: Outcome,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub target: Target,
    pub verdict: Verdict,
    /// The operator typed the consent naming this PVC (only an `OnlyCopy` asks for one).
    pub consented: bool,
    pub run: Run,
}

impl Item {
    /// The plan this item runs.
    pub fn plan(&self) -> Option<&Plan> {
        match &self.verdict {
            Verdict::Run(p) => Some(p),
            Verdict::OnlyCopy { plan, .. } if self.consented => Some(plan),
            _ => None,
        }
    }

    /// Why it is not reclaimed, when it is not part of the run.
    pub fn refusal(&self) -> Option<String> {
        match &self.verdict {
            Verdict::Refused(r) => Some(r.clone()),
            Verdict::OnlyCopy { unproven, .. } if !self.consented => Some(unproven.left_out()),
            _ => None,
        }
    }
}

// The dialog is boxed whole inside `Modal`.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Stage {
    /// Item `item` may be the only copy: type the consent naming it to include it, or Enter
    /// on an empty field (or Esc) to leave it out; then the next one is asked about.
    Consent {
        item: usize,
        consent: Consent,
    },
    Review {
        perms: Perms,
        input: TextArea<'static>,
        mismatch: bool,
    },
    Running,
    Finished,
}

#[derive(Debug, Clone)]
pub struct Bulk {
    /// Ties the permission check to this dialog; item `i` runs under `id + 1 + i`.
    pub id: u64,
    pub items: Vec<Item>,
    pub stage: Stage,
    pub scroll: u16,
    /// What could not be recorded (the audit log, an Event): said, never dropped.
    pub problems: Vec<String>,
}

const PHRASE_HERE: &str = "type the phrase here";
const EMPTY_LEAVES_OUT: &str = "empty leaves it out";

/// How many ids a bulk dialog of `n` PVCs takes from `App::next_id`.
pub fn ids_needed(n: usize) -> u64 {
    n as u64 + 1
}

/// Plans one marked PVC as the single dialog would, deciding its questions for the batch.
pub fn verdict(snap: &Snapshot, report: &Report, target: &Target) -> Verdict {
    let choice = Choice {
        action: ActionKind::ReclaimOrig,
        target: target.clone(),
        because: None,
    };
    let no_policy = |class: Option<String>| {
        format!(
            "no reclaim policy recorded (its StorageClass says {}): reclaim it alone, where its policy is chosen for this volume",
            class.as_deref().unwrap_or("nothing")
        )
    };
    match offer::plan_choice(snap, report, &choice) {
        Planned::Plan(p) if p.is_settled() => Verdict::Nothing(p),
        Planned::Plan(p) => Verdict::Run(p),
        Planned::Refused(r) => Verdict::Refused(r.reason),
        Planned::NeedsPolicy { class_policy } => Verdict::Refused(no_policy(class_policy)),
        // Only reclaim-orig is bulk: this is the planner's word, never a consent asked here.
        Planned::LeaveRunning(s) => Verdict::Refused(s.refusal),
        Planned::OnlyCopy(unproven) => {
            match offer::plan_with(snap, report, &choice, offer::Consents::DISCARD) {
                Planned::Plan(plan) => Verdict::OnlyCopy { unproven, plan },
                Planned::NeedsPolicy { class_policy } => Verdict::Refused(format!(
                    "it may be the only copy of {} ({}), and {}",
                    unproven.base,
                    unproven.proof,
                    no_policy(class_policy)
                )),
                Planned::Refused(r) => Verdict::Refused(r.reason),
                Planned::OnlyCopy(u) => Verdict::Refused(u.left_out()),
                Planned::LeaveRunning(s) => Verdict::Refused(s.refusal),
            }
        }
    }
}

/// The dialog on the marked PVCs, planned on the frame's snapshot.
pub fn open(
    id: u64,
    snap: &Snapshot,
    report: &Report,
    targets: Vec<Target>,
) -> (Bulk, Option<WorkerRequest>) {
    let items: Vec<Item> = targets
        .into_iter()
        .map(|target| Item {
            verdict: verdict(snap, report, &target),
            target,
            consented: false,
            run: Run::Skipped,
        })
        .collect();
    let mut b = Bulk {
        id,
        items,
        stage: Stage::Running,
        scroll: 0,
        problems: Vec::new(),
    };
    let req = ask_from(&mut b, 0);
    (b, req)
}

/// Asks about the first unproven PVC from item `from` on; with none left, on to the review.
fn ask_from(b: &mut Bulk, from: usize) -> Option<WorkerRequest> {
    let next = b
        .items
        .iter()
        .enumerate()
        .skip(from)
        .find_map(|(i, it)| match &it.verdict {
            Verdict::OnlyCopy { unproven, .. } => Some((i, unproven.clone())),
            _ => None,
        });
    match next {
        Some((item, u)) => {
            b.stage = Stage::Consent {
                item,
                consent: Consent::new(u, EMPTY_LEAVES_OUT),
            };
            b.scroll = 0;
            None
        }
        None => review(b),
    }
}

impl Bulk {
    pub fn item_id(&self, i: usize) -> u64 {
        self.id + 1 + i as u64
    }

    /// Whether an answer of the worker with this id is for this dialog.
    pub fn owns(&self, id: u64) -> bool {
        id >= self.id && id <= self.id + self.items.len() as u64
    }

    /// The items that may be the only copy, each asked about on its own.
    pub fn only_copies(&self) -> Vec<usize> {
        (0..self.items.len())
            .filter(|i| matches!(self.items[*i].verdict, Verdict::OnlyCopy { .. }))
            .collect()
    }

    /// The PVCs that will run: with writes to make or a bind to wait for.
    pub fn runnable(&self) -> Vec<usize> {
        (0..self.items.len())
            .filter(|i| self.items[*i].plan().is_some())
            .collect()
    }

    /// What the operator types to confirm.
    pub fn phrase(&self) -> String {
        format!("reclaim {}", self.runnable().len())
    }

    /// Every write of every PVC that will run, for the permission check.
    pub fn ops(&self) -> Vec<crate::actions::Op> {
        self.items
            .iter()
            .filter_map(Item::plan)
            .flat_map(|p| p.ops.iter().cloned())
            .collect()
    }

    pub fn typed(&self) -> Option<String> {
        match &self.stage {
            Stage::Consent { consent, .. } => Some(consent.typed()),
            Stage::Review { input, .. } => Some(typed_field::text(input)),
            _ => None,
        }
    }

    /// (reclaimed, refused or stopped, still to run) so far.
    pub fn tally(&self) -> (usize, usize, usize) {
        let mut t = (0, 0, 0);
        for i in &self.items {
            match &i.run {
                Run::Done { outcome, .. } if reclaimed(outcome) => t.0 += 1,
                Run::Done { .. } => t.1 += 1,
                Run::Skipped if i.refusal().is_some() => t.1 += 1,
                Run::Skipped => {}
                Run::Pending | Run::Running { .. } => t.2 += 1,
            }
        }
        t
    }
}

/// An outcome that left the PVC reclaimed.
pub fn reclaimed(o: &Outcome) -> bool {
    matches!(o, Outcome::Completed { .. } | Outcome::Unbound { .. })
}

fn review(b: &mut Bulk) -> Option<WorkerRequest> {
    let ops = b.ops();
    let (perms, req) = if ops.is_empty() {
        (Perms::Allowed, None)
    } else {
        (
            Perms::Checking,
            Some(WorkerRequest::Check { id: b.id, ops }),
        )
    };
    b.stage = Stage::Review {
        perms,
        input: typed_field::new(PHRASE_HERE),
        mismatch: false,
    };
    b.scroll = 0;
    req
}

fn scroll(b: &mut Bulk, k: &KeyEvent) -> bool {
    match k.code {
        KeyCode::Up => b.scroll = b.scroll.saturating_sub(1),
        KeyCode::Down => b.scroll = b.scroll.saturating_add(1),
        KeyCode::PageUp => b.scroll = b.scroll.saturating_sub(10),
        KeyCode::PageDown => b.scroll = b.scroll.saturating_add(10),
        _ => return false,
    }
    true
}

/// A key on the bulk dialog. `Effect::Send` starts the first PVC's execution.
pub fn key(b: &mut Bulk, k: &KeyEvent) -> (Effect, Option<WorkerRequest>) {
    let esc = k.code == KeyCode::Esc;
    let enter = k.code == KeyCode::Enter
        || (k.modifiers.contains(KeyModifiers::CONTROL)
            && matches!(k.code, KeyCode::Char('m' | 'j')));
    let cancelled = || Effect::Close("cancelled: nothing was written".into());
    match &mut b.stage {
        Stage::Running => {
            if esc || enter {
                return (
                    Effect::Say(
                        "the reclaim is running: each PVC's result follows (the executor stops only between writes)".into(),
                    ),
                    None,
                );
            }
            scroll(b, k);
            (Effect::None, None)
        }
        Stage::Finished => {
            if esc || enter || k.code == KeyCode::Char('q') {
                let (ok, no, _) = b.tally();
                return (
                    Effect::Close(format!("bulk reclaim: {ok} reclaimed, {no} refused")),
                    None,
                );
            }
            scroll(b, k);
            (Effect::None, None)
        }
        Stage::Consent { item, .. } => {
            let item = *item;
            if !esc && !enter && scroll(b, k) {
                return (Effect::None, None);
            }
            let Stage::Consent { consent, .. } = &mut b.stage else {
                return (Effect::None, None);
            };
            // Esc leaves this one out, as an empty field does: keeping a copy never needs care.
            let answer = if esc {
                Answer::Empty
            } else {
                consent.key(k, enter)
            };
            match answer {
                Answer::Editing => (Effect::None, None),
                Answer::Wrong => {
                    let phrase = consent.unproven.phrase();
                    (
                        Effect::Say(format!(
                            "type \"{phrase}\" exactly to include it, or empty the field to leave it out"
                        )),
                        None,
                    )
                }
                Answer::Given | Answer::Empty => {
                    b.items[item].consented = answer == Answer::Given;
                    (Effect::None, ask_from(b, item + 1))
                }
            }
        }
        Stage::Review { .. } => {
            if esc {
                return (cancelled(), None);
            }
            if enter {
                return confirm(b);
            }
            if !scroll(b, k)
                && let Stage::Review {
                    perms,
                    input,
                    mismatch,
                } = &mut b.stage
                && perms.may_confirm()
            {
                typed_field::edit(input, k, PHRASE_HERE);
                *mismatch = false;
            }
            (Effect::None, None)
        }
    }
}

fn confirm(b: &mut Bulk) -> (Effect, Option<WorkerRequest>) {
    let runnable = b.runnable();
    if runnable.is_empty() {
        return (
            Effect::Close("bulk reclaim: nothing to run (every marked PVC is refused or has nothing to do); nothing was written".into()),
            None,
        );
    }
    let phrase = b.phrase();
    let Stage::Review {
        perms,
        input,
        mismatch,
    } = &mut b.stage
    else {
        return (Effect::None, None);
    };
    match perms {
        Perms::Denied(_) => {
            return (
                Effect::Say("forbidden: these writes are not allowed, so nothing can run".into()),
                None,
            );
        }
        Perms::Checking => {
            return (
                Effect::Say("still checking permissions: confirm once they are known".into()),
                None,
            );
        }
        Perms::Allowed | Perms::Unknown(_) => {}
    }
    if input.lines().join("") != phrase {
        *mismatch = true;
        return (
            Effect::Say(format!("type {phrase} exactly to confirm (esc cancels)")),
            None,
        );
    }
    for i in &runnable {
        b.items[*i].run = Run::Pending;
    }
    b.stage = Stage::Running;
    b.scroll = 0;
    let req = start_next(b);
    (Effect::None, req)
}

/// The next pending PVC goes to the worker; none left finishes the dialog.
fn start_next(b: &mut Bulk) -> Option<WorkerRequest> {
    let Some(i) = b.items.iter().position(|i| i.run == Run::Pending) else {
        b.stage = Stage::Finished;
        return None;
    };
    let plan = b.items[i].plan()?.clone();
    let steps = StepLine::all_pending(&plan);
    b.items[i].run = Run::Running {
        steps,
        waiting: None,
    };
    Some(WorkerRequest::Execute {
        id: b.item_id(i),
        plan: Box::new(plan),
    })
}

fn index_of(b: &Bulk, id: u64) -> Option<usize> {
    (0..b.items.len()).find(|i| b.item_id(*i) == id)
}

pub fn on_checked(b: &mut Bulk, id: u64, result: Result<Vec<Denied>, String>) {
    if id != b.id {
        return;
    }
    if let Stage::Review { perms, .. } = &mut b.stage
        && *perms == Perms::Checking
    {
        *perms = match result {
            Ok(d) if d.is_empty() => Perms::Allowed,
            Ok(d) => Perms::Denied(d),
            Err(e) => Perms::Unknown(e),
        };
    }
}

pub fn on_step(b: &mut Bulk, id: u64, event: StepEvent) {
    if let StepEvent::RecordFailed(msg) = &event {
        b.problems.push(msg.clone());
        return;
    }
    let Some(i) = index_of(b, id) else { return };
    let Run::Running { steps, waiting } = &mut b.items[i].run else {
        return;
    };
    super::dialog::apply_step(steps, waiting, event);
}

/// A PVC's execution ended: record it and start the next one.
pub fn on_done(b: &mut Bulk, id: u64, outcome: Outcome) -> Option<WorkerRequest> {
    let i = index_of(b, id)?;
    let Run::Running { steps, .. } = &mut b.items[i].run else {
        return None;
    };
    let mut steps = std::mem::take(steps);
    if reclaimed(&outcome) {
        for s in &mut steps {
            if s.state != StepState::Done {
                s.state = StepState::NotNeeded;
            }
        }
    }
    b.items[i].run = Run::Done { steps, outcome };
    start_next(b)
}
