//! The typed consents: to discard an `-orig` PVC whose restored copy is not proven
//! (`analysis::copy_proof`), and to restore again while the old RestoreJob still runs. Either
//! refuses unless the operator, shown what it means, types words that name the object: a
//! consent typed for one object never covers another, and no phrase learnt by heart consents
//! to whatever the dialog happens to hold.

use super::typed_field;
use crate::actions::Target;
use crate::analysis::ActionKind;
use crate::analysis::copy_proof::{copy_proof, what_proves};
use crate::cluster::Snapshot;
use crate::model::names::parse_orig_name;
use crossterm::event::KeyEvent;
use ratatui_textarea::TextArea;

/// An `-orig` PVC that may be the only copy of its disk, and what is unknown about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unproven {
    pub namespace: String,
    pub pvc: String,
    /// The disk it keeps.
    pub base: String,
    /// The proof's own text: what is missing or could not be read.
    pub proof: String,
}

impl Unproven {
    /// What the operator types to discard it.
    pub fn phrase(&self) -> String {
        format!("discard {}", self.pvc)
    }

    /// What evidence would prove the restore, so that no consent were needed.
    pub fn what_proves(&self) -> String {
        what_proves(&self.base)
    }

    /// Why it stays when the consent is not given.
    pub fn left_out(&self) -> String {
        format!(
            "left out, no consent typed for it: it may be the only copy of {}; {}",
            self.base, self.proof
        )
    }
}

/// The target's copy proof when it is not proven; `None` when it is proven, or when the
/// target is no `-orig` PVC of the snapshot (then there is nothing to name, so nothing to
/// consent to).
pub fn unproven(snap: &Snapshot, target: &Target) -> Option<Unproven> {
    let Target::Pvc { namespace, name } = target else {
        return None;
    };
    let orig = snap.pvcs.get(namespace, name)?;
    let proof = copy_proof(snap, orig);
    proof.missing()?;
    let base = parse_orig_name(name).map_or(name.as_str(), |(b, _)| b);
    Some(Unproven {
        namespace: namespace.clone(),
        pvc: name.clone(),
        base: base.to_string(),
        proof: proof.describe(),
    })
}

/// The consent field for one unproven PVC.
#[derive(Debug, Clone)]
pub struct Consent {
    pub unproven: Unproven,
    pub input: TextArea<'static>,
    /// Enter was pressed on anything but the phrase.
    pub mismatch: bool,
    placeholder: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Editing,
    /// The phrase naming this PVC was typed.
    Given,
    /// Enter on an empty field.
    Empty,
    /// Enter on other words (another PVC's phrase, a generic one).
    Wrong,
}

impl Consent {
    pub fn new(unproven: Unproven, placeholder: &'static str) -> Consent {
        Consent {
            unproven,
            input: typed_field::new(placeholder),
            mismatch: false,
            placeholder,
        }
    }

    pub fn typed(&self) -> String {
        typed_field::text(&self.input)
    }

    /// Enter answers; any other key edits the field.
    pub fn key(&mut self, k: &KeyEvent, enter: bool) -> Answer {
        let phrase = self.unproven.phrase();
        answer(
            &mut self.input,
            &mut self.mismatch,
            self.placeholder,
            &phrase,
            k,
            enter,
        )
    }
}

/// One key on a consent field: Enter compares what is typed with the phrase exactly.
fn answer(
    input: &mut TextArea<'static>,
    mismatch: &mut bool,
    placeholder: &str,
    phrase: &str,
    k: &KeyEvent,
    enter: bool,
) -> Answer {
    if !enter {
        typed_field::edit(input, k, placeholder);
        *mismatch = false;
        return Answer::Editing;
    }
    let typed = typed_field::text(input);
    if typed == phrase {
        return Answer::Given;
    }
    *mismatch = true;
    if typed.is_empty() {
        Answer::Empty
    } else {
        Answer::Wrong
    }
}

/// The RestoreJob restart-restore would restore again while it still runs, and the refusal
/// that stands unless the operator chooses to leave it running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StillRunning {
    pub namespace: String,
    pub name: String,
    /// Its phase as shown (`Running`, `not picked up yet`).
    pub phase: String,
    /// Why restart-restore refuses without the choice.
    pub refusal: String,
}

impl StillRunning {
    /// What the operator types to leave it running: names this RestoreJob, so a consent typed
    /// for one never restarts another.
    pub fn phrase(&self) -> String {
        format!("leave {} running", self.name)
    }
}

/// The RestoreJob `target` names when restart-restore would leave it running: it exists and
/// has not finished. `None` otherwise (nothing to consent to).
pub fn still_running(snap: &Snapshot, action: ActionKind, target: &Target) -> Option<StillRunning> {
    let Target::Restore { namespace, name } = target else {
        return None;
    };
    if action != ActionKind::RestartRestore {
        return None;
    }
    let rj = snap.restore_jobs.get(namespace, name)?;
    if rj.phase.is_terminal() {
        return None;
    }
    Some(StillRunning {
        namespace: namespace.clone(),
        name: name.clone(),
        phase: match rj.phase.as_str() {
            "" => "not picked up yet".into(),
            p => p.into(),
        },
        refusal: String::new(),
    })
}

/// The consent field to leave one RestoreJob running.
#[derive(Debug, Clone)]
pub struct LeaveConsent {
    pub still: StillRunning,
    pub input: TextArea<'static>,
    /// Enter was pressed on anything but the phrase.
    pub mismatch: bool,
}

const LEAVE_HERE: &str = "type the words here";

impl LeaveConsent {
    pub fn new(still: StillRunning) -> LeaveConsent {
        LeaveConsent {
            still,
            input: typed_field::new(LEAVE_HERE),
            mismatch: false,
        }
    }

    pub fn typed(&self) -> String {
        typed_field::text(&self.input)
    }

    /// Enter answers; any other key edits the field.
    pub fn key(&mut self, k: &KeyEvent, enter: bool) -> Answer {
        let phrase = self.still.phrase();
        answer(
            &mut self.input,
            &mut self.mismatch,
            LEAVE_HERE,
            &phrase,
            k,
            enter,
        )
    }
}
