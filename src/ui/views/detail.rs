//! One restore: a summary with the step strip, then the pane chosen with Tab: the step
//! timeline, the disk chains (or the Postgres comparison), the events, the findings, the history.

use super::super::app::{App, DetailState, Pane, Selection};
use super::super::format::{self, truncate};
use super::super::select::{self, ChainRow};
use super::super::theme::Theme;
use super::common::{self, TAB_SEP, step_glyph};
use super::{chain, events, findings, history, layout, overview};
use crate::analysis::{DiskChain, RestoreView};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

pub fn draw(f: &mut Frame, app: &App, body: Rect, d: &DetailState) {
    let t = app.theme();
    let Some(r) = select::detail(app, &d.id) else {
        f.render_widget(
            common::block(t, &format!("restore {}", d.id), None, "", true),
            body,
        );
        let why = if app.shown.is_none() {
            vec!["Syncing…".to_string()]
        } else {
            vec![
                format!("RestoreJob {} is not in the current data", d.id),
                "it was deleted, or the data that showed it is gone (esc goes back)".into(),
            ]
        };
        common::draw_empty(f, t, layout::inner(body), why);
        return;
    };
    let stale = app
        .shown
        .as_ref()
        .is_some_and(|fr| select::restore_stale(fr, r));
    let mut title = format!("restore {}", r.id);
    if stale {
        title.push_str(&format!(
            " ({})",
            common::stale_cell(app, true, select::RESTORE_KINDS)
        ));
    }
    f.render_widget(common::block(t, &title, None, "", true), body);
    let a = layout::detail_areas(app, body);
    f.render_widget(Paragraph::new(summary(app, r, stale)), a.summary);
    f.render_widget(Paragraph::new(tabs(app, r, d.pane)), a.tabs);
    let sel = d.sel[d.pane.index()];
    let lines = pane_lines(app, r, d.pane);
    draw_lines(f, t, a.pane, lines, sel);
    if let Some(area) = a.findings {
        let cards = overview::finding_cards(app, r, area.width);
        f.render_widget(Paragraph::new(cards), area);
    }
    if let (Some(extra), Pane::History) = (a.extra, d.pane) {
        let vis = sel.visible(r.history.len(), usize::from(a.pane.height));
        if let Some(h) = r.history.get(vis.selected) {
            let lines = history::entry_lines(app, h);
            f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), extra);
        }
    } else if let Some(extra) = a.extra {
        let fs = select::restore_findings(app, r);
        let vis = sel.visible(fs.len(), usize::from(a.pane.height));
        if let (Some(fi), Some(frame)) = (fs.get(vis.selected), &app.shown) {
            let st = common::stale_cell(
                app,
                select::finding_stale(frame, fi),
                &select::finding_kinds(fi),
            );
            let mut lines = findings::explained_lines(t, fi, &st, app.opts.readonly);
            lines.remove(0);
            f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), extra);
        }
    }
}

fn summary(app: &App, r: &RestoreView, stale: bool) -> Vec<Line<'static>> {
    let t = app.theme();
    let dim = |s: &str| Span::styled(s.to_string(), t.text_dim());
    let val = |s: String| Span::styled(s, if stale { t.stale() } else { t.text() });
    let target = r
        .target
        .as_ref()
        .map_or("-".into(), |x| format!("{}/{}", x.kind, x.name));
    let phase = if r.phase.is_empty() {
        "new".to_string()
    } else {
        r.phase.clone()
    };
    let mut l1 = vec![
        val(target),
        dim("  driver "),
        val(r.driver.as_str().to_string()),
        dim(if r.in_place {
            " in place"
        } else {
            " to a copy"
        }),
        dim("  phase "),
        Span::styled(
            phase,
            match r.phase.as_str() {
                "Failed" => t.text_danger(),
                "Succeeded" => t.text_ok(),
                _ => t.text(),
            },
        ),
        dim("  age "),
        val(format::age_since(app.now, r.created)),
    ];
    if !r.terminal && r.deadline.is_some() {
        l1.push(dim("  deadline "));
        l1.push(val(format::time_left(app.now, r.deadline)));
    }
    if let Some(b) = &r.backup {
        l1.push(dim("  backup "));
        l1.push(val(b.clone()));
    }
    if let Some(k) = r.keep_original_pvc {
        l1.push(dim("  keepOriginalPVC "));
        l1.push(Span::styled(
            k.to_string(),
            if k { t.text() } else { t.text_warning() },
        ));
    }
    let mut l2 = Vec::new();
    for s in &r.steps {
        l2.push(Span::styled(step_glyph(s.state), t.step(s.state)));
    }
    if let Some(cur) = r.current_step() {
        l2.push(Span::styled(
            format!("  {} ", cur.id.as_str()),
            t.step(cur.state),
        ));
        l2.push(Span::styled(
            crate::text::one_line(&cur.detail).into_owned(),
            t.text(),
        ));
    } else if r.terminal {
        l2.push(Span::styled("  finished", t.text_ok()));
    }
    // The one verdict (`document::verdict`), the same the report and `/report` give.
    let v = crate::document::verdict::of(r, select::restore_findings(app, r));
    let mut l3 = vec![
        dim("verdict "),
        Span::styled(
            v.label(),
            if v.is_bad() {
                t.text_danger()
            } else if v == crate::document::verdict::Verdict::Healthy {
                t.text_ok()
            } else {
                t.text()
            },
        ),
        dim("  "),
    ];
    l3.extend(match &r.message {
        Some(m) => vec![
            dim("message "),
            Span::styled(crate::text::one_line(m).into_owned(), t.text()),
        ],
        None => vec![
            dim("uid "),
            val(r.uid.clone()),
            dim("  -orig suffix "),
            val(r.hash.clone()),
        ],
    });
    vec![Line::from(l1), Line::from(l2), Line::from(l3)]
}

fn tabs(app: &App, r: &RestoreView, focus: Pane) -> Line<'static> {
    let t = app.theme();
    let mut spans = Vec::new();
    for (n, (pane, label)) in common::pane_tabs(app, r).into_iter().enumerate() {
        if n > 0 {
            spans.push(Span::styled(TAB_SEP, t.text_dim()));
        }
        let style = if pane == focus {
            t.selected()
        } else {
            t.title(false)
        };
        spans.push(Span::styled(label, style));
    }
    Line::from(spans)
}

fn step_lines(app: &App, r: &RestoreView, width: u16) -> Vec<Line<'static>> {
    let t = app.theme();
    r.steps
        .iter()
        .map(|s| {
            let mark = match overview::step_mark(app, r, s.id) {
                Some(style) => Span::styled("!", style),
                None => Span::raw(" "),
            };
            let mut v = vec![
                mark,
                Span::styled(format!("{} ", step_glyph(s.state)), t.step(s.state)),
                Span::styled(format!("{:<19}", s.id.as_str()), t.step(s.state)),
            ];
            if width >= 100 {
                v.push(Span::styled(format!("{:<38}", s.id.title()), t.text_dim()));
            }
            if let Some(p) = s.progress {
                let pct = p.percent().unwrap_or(0.0);
                v.push(Span::styled(
                    format!("{} {pct:>5.1}% ", format::bar(pct, 12)),
                    t.text_info(),
                ));
            }
            v.push(Span::styled(
                crate::text::one_line(&s.detail).into_owned(),
                t.text(),
            ));
            Line::from(v)
        })
        .collect()
}

fn pane_lines(app: &App, r: &RestoreView, pane: Pane) -> Vec<Line<'static>> {
    let t = app.theme();
    match pane {
        Pane::Steps => {
            let w = app.size.0;
            let v = step_lines(app, r, w);
            if v.is_empty() {
                vec![Line::styled("no steps known yet", t.text_dim())]
            } else {
                v
            }
        }
        Pane::Disks => {
            let mut disk: Option<&DiskChain> = None;
            select::chain_rows(r)
                .iter()
                .map(|row| {
                    if let ChainRow::Disk(d) = row {
                        disk = Some(d);
                    }
                    chain::line(t, r, row, disk)
                })
                .collect()
        }
        Pane::Events => {
            if r.events.is_empty() {
                return vec![Line::styled("no events for this restore", t.text_dim())];
            }
            r.events
                .iter()
                .map(|e| {
                    let cells = events::event_cells(app, e);
                    let mut spans = Vec::new();
                    for (i, (c, w)) in cells.iter().zip([6usize, 8, 22, 0, 0, 0]).enumerate() {
                        if i == 3 || i == 4 {
                            continue;
                        }
                        let text = if w > 0 {
                            format::fit(&c.text, w, i == 0)
                        } else {
                            c.text.to_string()
                        };
                        spans.push(Span::styled(
                            format!("{text} "),
                            c.style.unwrap_or(t.text()),
                        ));
                    }
                    Line::from(spans)
                })
                .collect()
        }
        Pane::History => history::lines(app, r),
        Pane::Findings => {
            let fs = select::restore_findings(app, r);
            if fs.is_empty() {
                let v = crate::document::verdict::of(r, fs.iter().copied());
                return vec![Line::styled(
                    format!("no findings: {}", v.label()),
                    t.text_ok(),
                )];
            }
            let frame = app.shown.as_ref();
            fs.iter()
                .map(|fi| {
                    let stale = frame.is_some_and(|fr| select::finding_stale(fr, fi));
                    Line::from(vec![
                        Span::styled(
                            format!("{:<8}", fi.severity.as_str()),
                            if stale {
                                t.stale()
                            } else {
                                t.severity(fi.severity)
                            },
                        ),
                        Span::styled(format!("{:<26} ", fi.code.as_str()), t.text()),
                        Span::styled(
                            truncate(&fi.message, 300).into_owned(),
                            if stale { t.stale() } else { t.text() },
                        ),
                    ])
                })
                .collect()
        }
    }
}

/// A scrolled list of lines with the selected one in the cursor style.
fn draw_lines(f: &mut Frame, t: &Theme, area: Rect, lines: Vec<Line<'static>>, sel: Selection) {
    let h = usize::from(area.height);
    let vis = sel.visible(lines.len(), h);
    let shown: Vec<Line> = lines
        .into_iter()
        .enumerate()
        .skip(vis.offset)
        .take(h)
        .map(|(i, l)| {
            if i == vis.selected {
                let spans: Vec<Span> = l
                    .spans
                    .into_iter()
                    .map(|s| {
                        let st = s.style.patch(t.selected());
                        s.style(st)
                    })
                    .collect();
                Line::from(spans).style(t.selected())
            } else {
                l
            }
        })
        .collect();
    f.render_widget(Paragraph::new(shown), area);
}
