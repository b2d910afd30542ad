//! What the consent to discard an unproven `-orig` PVC shows, in the single dialog and in the
//! bulk one alike: which PVC it discards, what is unknown about its restored copy, what would
//! prove it, and the words that consent.

use super::super::consent::{Consent, LeaveConsent, StillRunning, Unproven};
use super::super::theme::Theme;
use crate::text::one_line_owned;
use ratatui::text::{Line, Span};

/// The PVC, the proof's missing piece and what would prove the restore.
pub(super) fn unknown_lines(t: &Theme, u: &Unproven) -> Vec<Line<'static>> {
    let labelled = |label: &str, text: String| {
        Line::from(vec![
            Span::styled(format!("  {label} "), t.text_dim()),
            Span::styled(one_line_owned(text), t.text()),
        ])
    };
    vec![
        Line::styled(
            one_line_owned(format!(
                "⚠ {}/{} may be the only copy of {}",
                u.namespace, u.pvc, u.base
            )),
            t.text_danger(),
        ),
        labelled("unknown:", u.proof.clone()),
        labelled("would prove it:", u.what_proves()),
    ]
}

/// `{before}<the phrase>{after}`, and whether Enter met other words.
pub(super) fn prompt(t: &Theme, c: &Consent, before: &str, after: &str) -> Line<'static> {
    phrase_prompt(t, c.unproven.phrase(), c.mismatch, before, after)
}

/// The same prompt for the consent to leave a RestoreJob running.
pub(super) fn leave_prompt(
    t: &Theme,
    c: &LeaveConsent,
    before: &str,
    after: &str,
) -> Line<'static> {
    phrase_prompt(t, c.still.phrase(), c.mismatch, before, after)
}

fn phrase_prompt(
    t: &Theme,
    phrase: String,
    mismatch: bool,
    before: &str,
    after: &str,
) -> Line<'static> {
    let mut v = vec![
        Span::styled(before.to_string(), t.text()),
        Span::styled(one_line_owned(phrase), t.filter()),
        Span::styled(after.to_string(), t.text()),
    ];
    if mismatch {
        v.push(Span::styled(
            "  does not match: nothing done",
            t.text_danger(),
        ));
    }
    Line::from(v)
}

/// The RestoreJob still running, why restart-restore refuses as it is, and what leaving it
/// running means.
pub(super) fn still_running_lines(t: &Theme, s: &StillRunning) -> Vec<Line<'static>> {
    vec![
        Line::styled(
            one_line_owned(format!(
                "⚠ RestoreJob {}/{} is still {}",
                s.namespace, s.name, s.phase
            )),
            t.text_danger(),
        ),
        Line::from(vec![
            Span::styled("  refused as it is: ", t.text_dim()),
            Span::styled(one_line_owned(s.refusal.clone()), t.text()),
        ]),
        Line::styled(
            "Leaving it running means two restores of one application at once: the controller does not lock them against each other.",
            t.text(),
        ),
    ]
}
