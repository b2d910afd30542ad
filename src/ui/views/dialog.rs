//! The action menu and the action dialog, drawn over the screen: the plan step by step (what
//! each write does, its precondition, what it protects; notes; the outcome), the permissions,
//! the field where the target's name is typed, then the progress and the result.

use super::super::app::{App, Modal};
use super::super::dialog::{Dialog, Menu, Perms, Planned, Stage, StepLine, StepState};
use super::super::theme::Theme;
use super::consent;
use crate::actions::execute::Outcome;
use crate::actions::{self, Plan};
use crate::analysis;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

const MAX_W: u16 = 110;

fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// The dialog covers the body, leaving the header and the status line (where hints and
/// mismatches are said) visible.
pub(super) fn dialog_area(area: Rect) -> Rect {
    let w = area.width.saturating_sub(2).min(MAX_W);
    let (top, h) = if area.height >= 8 {
        (2, area.height - 3)
    } else {
        (0, area.height)
    };
    let x = area.x + (area.width - w) / 2;
    Rect::new(x, area.y + top, w, h)
}

pub(super) fn frame_block<'a>(t: &Theme, title: String, danger: bool) -> Block<'a> {
    Block::default()
        .borders(Borders::ALL)
        .border_style(if danger {
            t.text_danger()
        } else {
            t.border(true)
        })
        .title(Span::styled(format!(" {title} "), t.title(true)))
        .style(t.base())
}

pub fn draw(f: &mut Frame, app: &App) {
    let Some(modal) = &app.modal else { return };
    let t = app.theme();
    match modal {
        Modal::Menu(m) => draw_menu(f, t, m),
        Modal::Action(d) => draw_dialog(f, t, d),
        Modal::Bulk(b) => super::bulk_dialog::draw(f, t, b),
    }
}

pub(super) fn hints(t: &Theme, items: &[(&str, &str)]) -> Line<'static> {
    let mut spans = Vec::new();
    for (k, label) in items {
        spans.push(Span::styled(format!("<{k}>"), t.key()));
        spans.push(Span::styled(format!(" {label}  "), t.hint()));
    }
    Line::from(spans)
}

fn draw_menu(f: &mut Frame, t: &Theme, m: &Menu) {
    let area = f.area();
    let h = (m.entries.len() as u16 * 2 + 4).min(area.height.saturating_sub(4));
    let w = area.width.saturating_sub(4).min(MAX_W);
    let r = centered(area, w, h);
    f.render_widget(Clear, r);
    let block = frame_block(t, format!("actions · {}", m.about), false);
    let inner = block.inner(r);
    f.render_widget(block, r);
    let wide = inner.width >= 100;
    let mut lines = Vec::new();
    for (i, e) in m.entries.iter().enumerate() {
        let spec = actions::spec(e.choice.action);
        let usable = !matches!(e.planned, Planned::Refused(_));
        let sel = i == m.selected;
        let base = if sel {
            t.selected()
        } else if usable {
            t.text()
        } else {
            t.text_dim()
        };
        let status_style = match &e.planned {
            Planned::Refused(_) => t.text_dim(),
            Planned::Plan(p) if p.ops.is_empty() => t.text_dim(),
            _ => t.text_warning(),
        };
        let mut spans = vec![
            Span::styled(
                format!("{} {} ", i + 1, if sel { "▶" } else { " " }),
                if sel { t.selected() } else { t.key() },
            ),
            Span::styled(format!("{:<16}", e.choice.action.as_str()), base),
        ];
        if wide {
            spans.push(Span::styled(format!("{:<30} ", spec.title), base));
        }
        spans.push(Span::styled(e.planned.summary(), status_style));
        if let Some(b) = &e.choice.because {
            spans.push(Span::styled(format!("  [finding {b}]"), t.text_warning()));
        }
        lines.push(Line::from(spans));
        lines.push(Line::styled(
            format!("      on {}: {}", e.choice.target, spec.summary),
            t.text_dim(),
        ));
    }
    let body_h = inner.height.saturating_sub(1);
    // Keep the cursor's entry visible.
    let first = (m.selected as u16 * 2 + 2).saturating_sub(body_h);
    f.render_widget(
        Paragraph::new(lines).scroll((first, 0)),
        Rect::new(inner.x, inner.y, inner.width, body_h),
    );
    f.render_widget(
        Paragraph::new(hints(
            t,
            &[
                ("enter", "review the plan"),
                ("1-9", "pick"),
                ("↑↓", "move"),
                ("esc", "cancel"),
            ],
        )),
        Rect::new(inner.x, inner.y + body_h, inner.width, 1),
    );
}

fn dialog_title(d: &Dialog) -> String {
    format!("{} · {}", d.choice.action.as_str(), d.choice.target)
}

fn draw_dialog(f: &mut Frame, t: &Theme, d: &Dialog) {
    let r = dialog_area(f.area());
    f.render_widget(Clear, r);
    let spec = actions::spec(d.choice.action);
    let block = frame_block(t, dialog_title(d), spec.dangerous);
    let inner = block.inner(r);
    f.render_widget(block, r);
    if inner.height < 3 || inner.width < 10 {
        return;
    }
    let mut first = vec![Span::styled(spec.title.to_string(), t.title(true))];
    if let Some(b) = &d.choice.because {
        first.push(Span::styled(
            format!("  (offered by finding {b})"),
            t.text_dim(),
        ));
    }
    let mut head = vec![Line::from(first)];
    // On a small terminal the plan matters more than the action's summary.
    if inner.height >= 24 {
        head.push(Line::styled(spec.summary.to_string(), t.text_dim()));
    }
    match &d.stage {
        Stage::Refused(r) => {
            let mut body = head;
            body.push(Line::raw(""));
            body.push(Line::from(vec![
                Span::styled("✗ refused: ", t.text_danger()),
                Span::styled(crate::text::one_line(&r.reason).into_owned(), t.text()),
            ]));
            body.push(Line::styled("Nothing was written.", t.text_dim()));
            let bottom = vec![hints(t, &[("esc", "close")])];
            layout_body(f, inner, body, bottom, d.scroll, None);
        }
        Stage::ConfirmDiscard(c) => {
            let mut body = head;
            body.push(Line::raw(""));
            body.extend(consent::unknown_lines(t, &c.unproven));
            body.push(Line::styled(
                "Keeping it loses nothing. Discarding it may lose the disk's data for good.",
                t.text(),
            ));
            let bottom = vec![
                consent::prompt(
                    t,
                    c,
                    "To discard it anyway, type ",
                    " (then the plan is confirmed by name).",
                ),
                hints(t, &[("enter", "go on"), ("esc", "keep the copy")]),
            ];
            layout_body(f, inner, body, bottom, d.scroll, Some((&c.input, t)));
        }
        Stage::ConfirmLeave(c) => {
            let mut body = head;
            body.push(Line::raw(""));
            body.extend(consent::still_running_lines(t, &c.still));
            let bottom = vec![
                consent::leave_prompt(
                    t,
                    c,
                    "To restore again while it runs, type ",
                    " (then the plan is confirmed by name).",
                ),
                hints(t, &[("enter", "go on"), ("esc", "wait for it")]),
            ];
            layout_body(f, inner, body, bottom, d.scroll, Some((&c.input, t)));
        }
        Stage::ChoosePolicy {
            class_policy,
            delete,
        } => {
            let mut body = head;
            body.push(Line::raw(""));
            body.extend(policy_lines(t, class_policy.as_deref(), *delete));
            let bottom = vec![hints(
                t,
                &[
                    ("↑↓", "choose"),
                    ("enter", "plan with this policy"),
                    ("esc", "cancel"),
                ],
            )];
            layout_body(f, inner, body, bottom, d.scroll, None);
        }
        Stage::Review {
            plan,
            perms,
            input,
            mismatch,
        } => {
            let mut body = head;
            if let Some(p) = &plan.request.policy {
                body.push(Line::styled(
                    format!("reclaim policy chosen: {p}"),
                    t.text_info(),
                ));
            }
            if plan.request.discard_only_copy {
                body.push(Line::styled(
                    "⚠ you chose to discard what may be the only good copy of the disk",
                    t.text_danger(),
                ));
            }
            if plan.request.leave_running {
                body.push(Line::styled(
                    format!(
                        "⚠ you chose to leave {} running: two restores of one application at once",
                        plan.request.target
                    ),
                    t.text_danger(),
                ));
            }
            body.push(Line::raw(""));
            let mut bottom = Vec::new();
            let mut field = None;
            if plan.ops.is_empty() && !plan.waits.is_empty() {
                body.extend(plan_lines(t, plan));
                bottom.push(Line::styled(
                    "nothing to write: enter waits (a bounded time) for the PV controller's bind",
                    t.text_info(),
                ));
                bottom.push(hints(
                    t,
                    &[("enter", "wait for the bind"), ("esc", "close")],
                ));
            } else if plan.ops.is_empty() {
                body.extend(plan_lines(t, plan));
                bottom.push(hints(t, &[("esc", "close")]));
            } else {
                match perms {
                    Perms::Checking => {
                        body.push(Line::styled(
                            format!(
                                "checking permissions… (a SelfSubjectAccessReview for each of the {} writes' verbs)",
                                plan.ops.len()
                            ),
                            t.text_info(),
                        ));
                        bottom.push(hints(t, &[("esc", "cancel")]));
                    }
                    Perms::Denied(denied) => {
                        body.extend(plan_lines(t, plan));
                        bottom.push(Line::styled(
                            "✗ forbidden: you may not make these writes, so the action is disabled",
                            t.text_danger(),
                        ));
                        for dn in denied {
                            bottom.push(Line::styled(format!("  {dn}"), t.text_danger()));
                        }
                        bottom.push(hints(t, &[("esc", "close"), ("↑↓", "scroll")]));
                    }
                    Perms::Allowed | Perms::Unknown(_) => {
                        body.extend(plan_lines(t, plan));
                        bottom.push(match perms {
                            Perms::Unknown(e) => Line::styled(
                                format!("? permissions could not be checked ({e}): the server decides at each write"),
                                t.text_warning(),
                            ),
                            _ => Line::styled(
                                format!("✓ permitted: {}", verbs(plan)),
                                t.text_ok(),
                            ),
                        });
                        let mut prompt = vec![
                            Span::styled("Type ", t.text()),
                            Span::styled(plan.confirm_name().to_string(), t.filter()),
                            Span::styled(" to confirm.", t.text()),
                        ];
                        if *mismatch {
                            prompt.push(Span::styled(
                                "  the name does not match: nothing done",
                                t.text_danger(),
                            ));
                        }
                        bottom.push(Line::from(prompt));
                        field = Some(input);
                        bottom.push(hints(
                            t,
                            &[
                                ("enter", "run (only with the exact name)"),
                                ("esc", "cancel"),
                                ("↑↓", "scroll"),
                            ],
                        ));
                    }
                }
            }
            layout_body(f, inner, body, bottom, d.scroll, field.map(|i| (i, t)));
        }
        Stage::Running {
            plan,
            steps,
            waiting,
        } => {
            let mut body = head;
            body.push(Line::raw(""));
            body.push(Line::styled(
                if plan.ops.is_empty() {
                    format!("Waiting on {} (nothing to write)", plan.request.target)
                } else {
                    format!("Running on {} (confirmed by name)", plan.request.target)
                },
                t.title(false),
            ));
            body.extend(step_lines(t, steps));
            if let Some(w) = waiting {
                body.push(Line::styled(
                    format!(" … {}", crate::text::one_line(w)),
                    t.text_info(),
                ));
            }
            body.extend(problem_lines(t, &d.problems));
            let bottom = vec![
                Line::styled(
                    "running… a conflict re-reads and re-plans, never a blind retry",
                    t.text_info(),
                ),
                hints(t, &[("↑↓", "scroll")]),
            ];
            layout_body(f, inner, body, bottom, d.scroll, None);
        }
        Stage::Finished {
            plan,
            steps,
            outcome,
        } => {
            let mut body = head;
            body.push(Line::raw(""));
            body.push(Line::styled(
                format!("Ran on {}", plan.request.target),
                t.title(false),
            ));
            body.extend(step_lines(t, steps));
            body.push(Line::raw(""));
            body.extend(outcome_lines(t, plan, outcome));
            body.extend(problem_lines(t, &d.problems));
            let bottom = vec![hints(t, &[("esc", "close"), ("↑↓", "scroll")])];
            layout_body(f, inner, body, bottom, d.scroll, None);
        }
    }
}

/// The scrolling text on top, the fixed lines at the bottom, and the name field just above
/// the last (hint) line when there is one.
pub(super) fn layout_body(
    f: &mut Frame,
    inner: Rect,
    body: Vec<Line<'static>>,
    bottom: Vec<Line<'static>>,
    scroll: u16,
    field: Option<(&ratatui_textarea::TextArea<'static>, &Theme)>,
) {
    let field_h: u16 = if field.is_some() { 3 } else { 0 };
    let bottom_h = (bottom.len() as u16 + field_h).min(inner.height.saturating_sub(1));
    let body_h = inner.height - bottom_h;
    let body_rect = Rect::new(inner.x, inner.y, inner.width, body_h);
    let scroll = scroll.min(body.len().saturating_sub(1) as u16);
    f.render_widget(
        Paragraph::new(body)
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0)),
        body_rect,
    );
    let mut y = inner.y + body_h;
    let n = bottom.len();
    for (i, line) in bottom.into_iter().enumerate() {
        if i + 1 == n
            && let Some((input, t)) = field
        {
            let w = inner.width.min(60);
            let rect = Rect::new(inner.x, y, w, field_h.min(inner.y + inner.height - y));
            let mut ta = input.clone();
            ta.set_block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_style(t.border(true)),
            );
            ta.set_style(t.text());
            ta.set_cursor_style(t.selected());
            ta.set_placeholder_style(t.text_dim());
            f.render_widget(&ta, rect);
            y += rect.height;
        }
        if y >= inner.y + inner.height {
            break;
        }
        f.render_widget(Paragraph::new(line), Rect::new(inner.x, y, inner.width, 1));
        y += 1;
    }
}

pub(super) fn verbs(plan: &Plan) -> String {
    let mut v: Vec<String> = plan
        .ops
        .iter()
        .map(|o| format!("{} {}", o.verb(), o.target().kind.info().plural))
        .collect();
    v.dedup();
    let mut seen = Vec::new();
    for s in v {
        if !seen.contains(&s) {
            seen.push(s);
        }
    }
    seen.join(", ")
}

fn plan_lines(t: &Theme, plan: &Plan) -> Vec<Line<'static>> {
    let mut v = Vec::new();
    if plan.ops.is_empty() {
        v.push(Line::from(vec![
            Span::styled("✓ nothing to do: ", t.text_ok()),
            Span::styled(plan.outcome.clone(), t.text()),
        ]));
    } else {
        let n = plan.ops.len();
        v.push(Line::styled(
            format!(
                "Plan: {n} write{}, in this order; each is re-read and re-planned just before it is made",
                if n == 1 { "" } else { "s" }
            ),
            t.title(false),
        ));
        for (i, op) in plan.ops.iter().enumerate() {
            v.push(Line::from(vec![
                Span::styled(format!(" {:>2}. ", i + 1), t.key()),
                Span::styled(op.describe(), t.text()),
            ]));
            v.push(Line::from(vec![
                Span::styled("     precondition  ", t.text_dim()),
                Span::styled(op.precondition(), t.text()),
            ]));
            v.push(Line::from(vec![
                Span::styled("     protects      ", t.text_dim()),
                Span::styled(op.protects(), t.text()),
            ]));
        }
    }
    if !plan.notes.is_empty() {
        v.push(Line::raw(""));
        v.push(Line::styled("Notes", t.title(false)));
        for n in &plan.notes {
            v.push(Line::styled(format!("  • {n}"), t.text_warning()));
        }
    }
    if !plan.ops.is_empty() {
        v.push(Line::raw(""));
        v.push(Line::from(vec![
            Span::styled("Afterwards: ", t.title(false)),
            Span::styled(plan.outcome.clone(), t.text()),
        ]));
    }
    v
}

fn policy_lines(t: &Theme, class_policy: Option<&str>, delete: bool) -> Vec<Line<'static>> {
    let mut v = vec![
        Line::styled(
            "No original reclaim policy was recorded (a controller before the fix kept this disk).",
            t.text_warning(),
        ),
        Line::styled(
            "Choose the policy to set back on its PV before the -orig PVC is deleted:",
            t.text(),
        ),
        Line::raw(""),
    ];
    let options = [
        (
            "Delete",
            true,
            "the provisioner deletes the volume and its data once the PVC is gone",
        ),
        (
            "Retain",
            false,
            "the volume stays Released with its data; delete it by hand later",
        ),
    ];
    for (name, is_delete, what) in options {
        let sel = is_delete == delete;
        let mut spans = vec![
            Span::styled(
                format!(
                    " {} ({}) {name:<7}",
                    if sel { "▶" } else { " " },
                    if sel { "•" } else { " " }
                ),
                if sel { t.selected() } else { t.text() },
            ),
            Span::styled(format!(" {what}"), t.text()),
        ];
        if class_policy == Some(name) {
            spans.push(Span::styled(
                "  ← its StorageClass's: the likely one",
                t.text_info(),
            ));
        }
        v.push(Line::from(spans));
    }
    if class_policy.is_none() {
        v.push(Line::styled(
            "  (the StorageClass is unknown or gone: Retain is preselected because it keeps the data)",
            t.text_dim(),
        ));
    }
    v.push(Line::raw(""));
    v.push(Line::styled(
        "Nothing is written yet: the next screen shows the plan and asks for the name.",
        t.text_dim(),
    ));
    v
}

fn step_style(t: &Theme, s: StepState) -> (&'static str, &'static str, Style) {
    use analysis::StepState as A;
    match s {
        StepState::Pending => ("·", "pending", t.step(A::Pending)),
        StepState::Running => ("▶", "running", t.step(A::Active)),
        StepState::Done => ("✓", "done", t.step(A::Done)),
        StepState::Conflict => (
            "↻",
            "conflict: re-reading and re-planning",
            t.text_warning(),
        ),
        StepState::NotNeeded => ("–", "not needed (already so)", t.step(A::Skipped)),
    }
}

pub(super) fn problem_lines(t: &Theme, problems: &[String]) -> Vec<Line<'static>> {
    problems
        .iter()
        .map(|p| {
            Line::styled(
                format!("✗ not recorded: {}", crate::text::one_line(p)),
                t.text_danger(),
            )
        })
        .collect()
}

pub(super) fn step_lines(t: &Theme, steps: &[StepLine]) -> Vec<Line<'static>> {
    let mut v = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let (glyph, word, style) = step_style(t, s.state);
        v.push(Line::from(vec![
            Span::styled(format!(" {glyph} {:>2}. ", i + 1), style),
            Span::styled(s.op.describe(), t.text()),
            Span::styled(format!("  {word}"), style),
        ]));
        if let Some(n) = &s.note {
            v.push(Line::styled(
                format!("        ↻ conflict, re-read and re-planned: {n}"),
                t.text_warning(),
            ));
        }
    }
    v
}

fn outcome_lines(t: &Theme, plan: &Plan, o: &Outcome) -> Vec<Line<'static>> {
    let line = super::super::dialog::outcome_line(o);
    match o {
        Outcome::Completed { .. } => vec![
            Line::styled(format!("✓ {line}"), t.text_ok()),
            Line::from(vec![
                Span::styled("Afterwards: ", t.title(false)),
                Span::styled(plan.outcome.clone(), t.text()),
            ]),
        ],
        Outcome::Unbound { .. } => vec![
            Line::styled(format!("! {line}"), t.text_warning()),
            Line::from(vec![
                Span::styled("Afterwards: ", t.title(false)),
                Span::styled(plan.outcome.clone(), t.text()),
            ]),
        ],
        Outcome::Interrupted { .. } | Outcome::Stopped { .. } => vec![
            Line::styled(format!("✗ {line}"), t.text_danger()),
            Line::styled(
                "What was written stays. Re-run resumes: press a again to review the plan from the cluster's current state.",
                t.text(),
            ),
        ],
    }
}
