//! Building findings: one place that fills severity, action and staleness so every rule only
//! says what it found.

use super::codes::{Code, Severity};
use super::report::{Finding, ObjRef, RestoreId};
use crate::model::snapshot::Snapshot;

#[derive(Default)]
pub struct Findings(pub Vec<Finding>);

impl Findings {
    pub fn push(
        &mut self,
        snap: &Snapshot,
        code: Code,
        restore: Option<&RestoreId>,
        objects: Vec<ObjRef>,
        message: String,
        remedy: String,
    ) -> &mut Finding {
        self.push_with(
            snap,
            code,
            code.severity(),
            restore,
            objects,
            message,
            remedy,
        )
    }

    #[allow(clippy::too_many_arguments)]
    pub fn push_with(
        &mut self,
        snap: &Snapshot,
        code: Code,
        severity: Severity,
        restore: Option<&RestoreId>,
        objects: Vec<ObjRef>,
        message: String,
        remedy: String,
    ) -> &mut Finding {
        let stale = objects.iter().any(|o| snap.is_stale(o.kind));
        // Messages quote cluster text (already redacted where it is read); this catches what
        // a rule may quote from elsewhere, since every output shows the finding's words.
        use crate::model::secret_text::redact_message;
        self.0.push(Finding {
            code,
            severity,
            restore: restore.cloned(),
            objects,
            message: redact_message(message),
            remedy: redact_message(remedy),
            action: code.action(),
            stale,
        });
        let last = self.0.len() - 1;
        &mut self.0[last]
    }
}
