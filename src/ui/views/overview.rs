//! What a restore's detail opens on: below the step timeline, every finding of the restore in
//! full (severity, code, the message and the remedy wrapped, the action offered and its key),
//! so the first screen says what is wrong, why, and what to do, without `Tab`.

use super::super::act;
use super::super::app::App;
use super::super::keys::Action;
use super::super::select;
use super::wrap::wrap;
use crate::analysis::{Finding, RestoreView, StepId};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// Where the text of a card starts, under the code (after the severity).
const INDENT: usize = 8;

/// The findings block: a title line, then one card per finding, worst first.
pub fn finding_cards(app: &App, r: &RestoreView, width: u16) -> Vec<Line<'static>> {
    let t = app.theme();
    let fs = select::restore_findings(app, r);
    let width = usize::from(width);
    if fs.is_empty() {
        // The one verdict (`document::verdict`): no finding is not "healthy" while it runs.
        let v = crate::document::verdict::of(r, fs.iter().copied());
        return vec![Line::styled(
            format!("no findings: {}", v.label()),
            t.text_ok(),
        )];
    }
    let tab = app.keymap().key_label(Action::NextPane);
    let mut v = vec![Line::from(vec![
        Span::styled(format!("Findings {}", fs.len()), t.title(true)),
        Span::styled(
            format!("  (! marks their steps; {tab}: disks, events, findings)"),
            t.text_dim(),
        ),
    ])];
    let frame = app.shown.as_ref();
    for fi in fs {
        let stale = frame.is_some_and(|fr| select::finding_stale(fr, fi));
        v.extend(card(app, r, fi, stale, width));
    }
    v
}

fn card(app: &App, r: &RestoreView, fi: &Finding, stale: bool, width: usize) -> Vec<Line<'static>> {
    let t = app.theme();
    let text = if stale { t.stale() } else { t.text() };
    let sev = if stale {
        t.stale()
    } else {
        t.severity(fi.severity)
    };
    let mut head: Vec<(String, Style)> = vec![
        (format!("{:<INDENT$}", fi.severity.as_str()), sev),
        (fi.code.as_str().to_string(), t.title(true)),
        (format!("  {}", fi.code.title()), t.text_dim()),
    ];
    let steps: Vec<&str> = select::finding_steps(r, fi)
        .into_iter()
        .map(StepId::as_str)
        .collect();
    if !steps.is_empty() {
        head.push((format!("  at {}", steps.join(", ")), t.text_dim()));
    }
    if stale {
        head.push(("  (may be out of date)".into(), t.stale()));
    }
    let mut lines = wrap(&head, width, 0, INDENT);
    lines.extend(wrap(&[(fi.message.clone(), text)], width, INDENT, INDENT));
    lines.extend(wrap(
        &[
            ("remedy ".into(), t.title(false)),
            (fi.remedy.clone(), text),
        ],
        width,
        INDENT,
        INDENT,
    ));
    lines.extend(wrap(
        &[
            ("action ".into(), t.title(false)),
            (action_text(app, fi), t.text()),
        ],
        width,
        INDENT,
        INDENT,
    ));
    lines
}

/// The action a finding offers and how to start it, or why it cannot be started here.
fn action_text(app: &App, fi: &Finding) -> String {
    let key = app.keymap().key_label(Action::Actions);
    match (fi.action, app.actions_unavailable()) {
        (Some(a), None) => format!("{a}: press {key}"),
        (Some(a), Some(_)) if !act::offered(app) => format!("{a} (not in a read-only session)"),
        (Some(a), Some(_)) => format!("{a} (needs a live cluster: this session reads files)"),
        (None, _) => "none: see the remedy".into(),
    }
}

/// Whether a finding of the restore is about this step, and the worst such finding's style.
pub fn step_mark(app: &App, r: &RestoreView, id: StepId) -> Option<Style> {
    let fs = select::restore_findings(app, r);
    let worst = fs
        .into_iter()
        .find(|f| select::finding_steps(r, f).contains(&id))?;
    Some(app.theme().severity(worst.severity))
}
