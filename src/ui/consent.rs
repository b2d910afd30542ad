//! The typed consent to discard an `-orig` PVC whose restored copy is not proven
//! (`analysis::copy_proof`). Unknown refuses unless the operator, shown what is unknown, types
//! words that name the PVC: a consent typed for one PVC never covers another, and no phrase
//! learnt by heart consents to whatever the dialog happens to hold.

use super::typed_field;
use crate::actions::Target;
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
        if !enter {
            typed_field::edit(&mut self.input, k, self.placeholder);
            self.mismatch = false;
            return Answer::Editing;
        }
        let typed = self.typed();
        if typed == self.unproven.phrase() {
            return Answer::Given;
        }
        self.mismatch = true;
        if typed.is_empty() {
            Answer::Empty
        } else {
            Answer::Wrong
        }
    }
}
