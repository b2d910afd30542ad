//! The bulk reclaim dialog: every marked `-orig` PVC with its own plan (every write, its
//! precondition) or why it is refused, the consent asked PVC by PVC for each that may be the
//! only copy, the one typed confirmation, then each PVC's progress and result as the executor
//! runs them one after the other.

use super::super::bulk::{Bulk, Item, Run, Stage, Verdict, reclaimed};
use super::super::dialog::{Perms, outcome_line};
use super::super::theme::Theme;
use super::consent;
use super::dialog::{dialog_area, frame_block, hints, layout_body, problem_lines, step_lines};
use crate::text::one_line;
use ratatui::Frame;
use ratatui::text::{Line, Span};
use ratatui::widgets::Clear;

fn title(b: &Bulk) -> String {
    let n = b.items.len();
    format!(
        "reclaim-orig · {n} marked -orig PVC{}",
        if n == 1 { "" } else { "s" }
    )
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Each distinct verb and resource of every write, for the permission line.
fn verbs(b: &Bulk) -> String {
    let mut seen: Vec<String> = Vec::new();
    for op in b.ops() {
        let s = format!("{} {}", op.verb(), op.target().kind.info().plural);
        if !seen.contains(&s) {
            seen.push(s);
        }
    }
    seen.join(", ")
}

/// One PVC in the review: its plan's writes, or why it does not run.
fn review_lines(t: &Theme, n: usize, item: &Item) -> Vec<Line<'static>> {
    let head = |mark: &str, style, what: String| {
        Line::from(vec![
            Span::styled(format!("{mark} {n:>2}. {} ", item.target), style),
            Span::styled(what, style),
        ])
    };
    let mut v = Vec::new();
    if let Some(why) = item.refusal() {
        v.push(head("✗", t.text_danger(), "refused".into()));
        v.push(Line::styled(format!("       {}", one_line(&why)), t.text()));
        return v;
    }
    let Some(plan) = item.plan().or(match &item.verdict {
        Verdict::Nothing(p) => Some(p),
        _ => None,
    }) else {
        return v;
    };
    if plan.ops.is_empty() && plan.waits.is_empty() {
        v.push(head("✓", t.text_ok(), "nothing to do".into()));
        v.push(Line::styled(
            format!("       {}", one_line(&plan.outcome)),
            t.text_dim(),
        ));
        return v;
    }
    v.push(head(
        "▸",
        t.title(false),
        format!("· {}", plural(plan.ops.len(), "write", "writes")),
    ));
    if matches!(item.verdict, Verdict::OnlyCopy { .. }) {
        v.push(Line::styled(
            "       ⚠ may be the only copy: discarded by your consent",
            t.text_danger(),
        ));
    }
    for (i, op) in plan.ops.iter().enumerate() {
        v.push(Line::from(vec![
            Span::styled(format!("       {}. ", i + 1), t.key()),
            Span::styled(op.describe(), t.text()),
        ]));
        v.push(Line::from(vec![
            Span::styled("          precondition ", t.text_dim()),
            Span::styled(op.precondition(), t.text()),
        ]));
    }
    for note in &plan.notes {
        v.push(Line::styled(
            format!("       • {}", one_line(note)),
            t.text_warning(),
        ));
    }
    v.push(Line::from(vec![
        Span::styled("       afterwards ", t.text_dim()),
        Span::styled(one_line(&plan.outcome).into_owned(), t.text()),
    ]));
    v
}

/// Where the walk over the PVCs that may be the only copy is, and what was answered so far.
fn consent_lines(t: &Theme, b: &Bulk, item: usize) -> Vec<Line<'static>> {
    let asked = b.only_copies();
    let k = asked.iter().position(|i| *i == item).unwrap_or(0) + 1;
    let mut v = vec![Line::styled(
        format!(
            "Asking {k} of {}: each marked PVC that may be the only copy of its disk goes only by its own consent",
            asked.len()
        ),
        t.text_info(),
    )];
    for i in asked.into_iter().filter(|i| *i < item) {
        let it = &b.items[i];
        v.push(if it.consented {
            Line::styled(
                format!("  ✓ {}: discarded by your consent", it.target),
                t.text_warning(),
            )
        } else {
            Line::styled(format!("  ✗ {}: left out", it.target), t.text_dim())
        });
    }
    v
}

/// One PVC while running and after: where it is, its writes, its result.
fn run_lines(t: &Theme, n: usize, item: &Item) -> Vec<Line<'static>> {
    let line = |mark: &str, style, what: String| {
        Line::from(vec![
            Span::styled(format!("{mark} {n:>2}. {} ", item.target), style),
            Span::styled(one_line(&what).into_owned(), style),
        ])
    };
    match &item.run {
        Run::Skipped => match item.refusal() {
            Some(why) => vec![line("✗", t.text_danger(), format!("refused: {why}"))],
            None => vec![line("✓", t.text_dim(), "nothing to do".into())],
        },
        Run::Pending => vec![line("·", t.text_dim(), "waiting its turn".into())],
        Run::Running { steps, waiting } => {
            let mut v = vec![line("▶", t.text_info(), "running".into())];
            v.extend(step_lines(t, steps).into_iter().map(|mut l| {
                l.spans.insert(0, Span::raw("    "));
                l
            }));
            if let Some(w) = waiting {
                v.push(Line::styled(
                    format!("      … {}", one_line(w)),
                    t.text_info(),
                ));
            }
            v
        }
        Run::Done { outcome, .. } => {
            let text = outcome_line(outcome);
            if reclaimed(outcome) {
                vec![line("✓", t.text_ok(), text)]
            } else {
                vec![line("✗", t.text_danger(), text)]
            }
        }
    }
}

pub fn draw(f: &mut Frame, t: &Theme, b: &Bulk) {
    let r = dialog_area(f.area());
    f.render_widget(Clear, r);
    let block = frame_block(t, title(b), true);
    let inner = block.inner(r);
    f.render_widget(block, r);
    if inner.height < 3 || inner.width < 10 {
        return;
    }
    let mut body = vec![Line::styled(
        "Reclaim -orig PVCs, one after the other: each by its own plan, re-read and re-planned before every write",
        t.title(true),
    )];
    match &b.stage {
        Stage::Consent { item, consent: c } => {
            body.push(Line::raw(""));
            body.extend(consent_lines(t, b, *item));
            body.extend(consent::unknown_lines(t, &c.unproven));
            body.push(Line::styled(
                "Keeping it loses nothing. Discarding it may lose its disk's data for good.",
                t.text(),
            ));
            let bottom = vec![
                consent::prompt(t, c, "To include it, type ", "; empty leaves it out."),
                hints(t, &[("enter", "answer"), ("esc", "leave it out")]),
            ];
            layout_body(f, inner, body, bottom, b.scroll, Some((&c.input, t)));
        }
        Stage::Review {
            perms,
            input,
            mismatch,
        } => {
            let run = b.runnable().len();
            let refused = b.items.iter().filter(|i| i.refusal().is_some()).count();
            body.push(Line::styled(
                format!(
                    "Will reclaim {run} of {}: {} in all; {refused} refused (listed with the reason, nothing written for them)",
                    b.items.len(),
                    plural(b.ops().len(), "write", "writes"),
                ),
                t.text_info(),
            ));
            for (n, item) in b.items.iter().enumerate() {
                body.extend(review_lines(t, n + 1, item));
            }
            let mut bottom = Vec::new();
            let mut field = None;
            if run == 0 {
                bottom.push(Line::styled(
                    "nothing to run: every marked PVC is refused or has nothing to do",
                    t.text_info(),
                ));
                bottom.push(hints(t, &[("esc", "close"), ("↑↓", "scroll")]));
            } else {
                match perms {
                    Perms::Checking => {
                        bottom.push(Line::styled(
                            "checking permissions… (a SelfSubjectAccessReview for each verb of the writes)",
                            t.text_info(),
                        ));
                        bottom.push(hints(t, &[("esc", "cancel"), ("↑↓", "scroll")]));
                    }
                    Perms::Denied(denied) => {
                        bottom.push(Line::styled(
                            "✗ forbidden: you may not make these writes, so nothing can run",
                            t.text_danger(),
                        ));
                        for dn in denied {
                            bottom.push(Line::styled(format!("  {dn}"), t.text_danger()));
                        }
                        bottom.push(hints(t, &[("esc", "close"), ("↑↓", "scroll")]));
                    }
                    Perms::Allowed | Perms::Unknown(_) => {
                        bottom.push(match perms {
                            Perms::Unknown(e) => Line::styled(
                                format!(
                                    "? permissions could not be checked ({}): the server decides at each write",
                                    one_line(e)
                                ),
                                t.text_warning(),
                            ),
                            _ => Line::styled(format!("✓ permitted: {}", verbs(b)), t.text_ok()),
                        });
                        let mut prompt = vec![
                            Span::styled("Type ", t.text()),
                            Span::styled(b.phrase(), t.filter()),
                            Span::styled(" to confirm.", t.text()),
                        ];
                        if *mismatch {
                            prompt.push(Span::styled(
                                "  does not match: nothing done",
                                t.text_danger(),
                            ));
                        }
                        bottom.push(Line::from(prompt));
                        field = Some(input);
                        bottom.push(hints(
                            t,
                            &[("enter", "run"), ("esc", "cancel"), ("↑↓", "scroll")],
                        ));
                    }
                }
            }
            layout_body(f, inner, body, bottom, b.scroll, field.map(|i| (i, t)));
        }
        Stage::Running | Stage::Finished => {
            let (ok, no, left) = b.tally();
            body.push(Line::styled(
                format!("{ok} reclaimed · {no} refused or stopped · {left} to go"),
                if matches!(b.stage, Stage::Finished) {
                    t.title(false)
                } else {
                    t.text_info()
                },
            ));
            for (n, item) in b.items.iter().enumerate() {
                body.extend(run_lines(t, n + 1, item));
            }
            body.extend(problem_lines(t, &b.problems));
            let bottom = if matches!(b.stage, Stage::Finished) {
                vec![hints(t, &[("esc", "close"), ("↑↓", "scroll")])]
            } else {
                vec![
                    Line::styled(
                        "running… one PVC at a time; a conflict re-plans, never a blind retry",
                        t.text_info(),
                    ),
                    hints(t, &[("↑↓", "scroll")]),
                ]
            };
            layout_body(f, inner, body, bottom, b.scroll, None);
        }
    }
}
