//! What the consent to discard an unproven `-orig` PVC shows, in the single dialog and in the
//! bulk one alike: which PVC it discards, what is unknown about its restored copy, what would
//! prove it, and the words that consent.

use super::super::consent::{Consent, Unproven};
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
    let mut v = vec![
        Span::styled(before.to_string(), t.text()),
        Span::styled(one_line_owned(c.unproven.phrase()), t.filter()),
        Span::styled(after.to_string(), t.text()),
    ];
    if c.mismatch {
        v.push(Span::styled(
            "  does not match: nothing done",
            t.text_danger(),
        ));
    }
    Line::from(v)
}
