//! All findings, worst first, with the selected one explained below: message, remedy, the
//! objects it is about and the action restorewatch offers.

use super::super::app::App;
use super::super::keys::ScreenKind;
use super::super::select;
use super::super::sort::SortCol;
use super::super::theme::Theme;
use super::common::{self, Cell, Col, Row};
use crate::analysis::Finding;
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

const COLS: &[Col] = &[
    Col::new("SEVERITY", Constraint::Length(9)).sorts(SortCol::Findings),
    Col::new("CODE", Constraint::Max(26)).sorts(SortCol::Code),
    Col::new("RESTORE", Constraint::Max(32))
        .from(90)
        .sorts(SortCol::Restore),
    Col::new("MESSAGE", Constraint::Fill(1)),
    Col::new("DATA", Constraint::Length(9)),
];

pub fn draw(f: &mut Frame, app: &App, body: Rect) {
    let t = app.theme();
    let items = select::findings(app);
    let a = common::table_frame(f, app, body, "findings", items.len());
    let Some(frame) = &app.shown else {
        common::draw_empty(f, t, a.rows, common::empty_reason(app, "findings"));
        return;
    };
    if items.is_empty() {
        let mut why = common::empty_reason(app, "findings");
        if why.len() == 1 && app.filter().is_empty() {
            why.push("every restore in scope looks healthy".into());
        }
        common::draw_empty(f, t, a.rows, why);
        return;
    }
    let rows: Vec<Row> = items
        .iter()
        .map(|fi| {
            let stale = select::finding_stale(frame, fi);
            let kinds = select::finding_kinds(fi);
            Row {
                cells: vec![
                    Cell::styled(
                        fi.severity.as_str(),
                        if stale {
                            t.stale()
                        } else {
                            t.severity(fi.severity)
                        },
                    ),
                    Cell::plain(fi.code.as_str()),
                    Cell::plain(fi.restore.as_ref().map_or("-".into(), |r| r.to_string())),
                    Cell::plain(fi.message.clone()),
                    Cell::plain(common::stale_cell(app, stale, &kinds)),
                ],
                style: if stale { t.stale() } else { t.text() },
            }
        })
        .collect();
    let cols = common::stale_column_if_needed(COLS, &rows);
    let sel = app.list_selection(ScreenKind::Findings);
    common::draw_table(f, t, &a, cols, &rows, sel, app.sort(ScreenKind::Findings));
    if let Some(extra) = a.extra {
        let vis = sel.visible(items.len(), usize::from(a.rows.height));
        if let Some(fi) = items.get(vis.selected) {
            let stale = common::stale_cell(
                app,
                select::finding_stale(frame, fi),
                &select::finding_kinds(fi),
            );
            draw_explained(f, t, extra, fi, &stale, app.opts.readonly);
        }
    }
}

/// The full story of one finding, wrapped; shared with the restore detail.
pub fn explained_lines<'a>(
    t: &Theme,
    fi: &'a Finding,
    stale: &str,
    readonly: bool,
) -> Vec<Line<'a>> {
    let label = |s: &'static str| Span::styled(s, t.title(false));
    let mut lines = vec![
        Line::from(vec![
            Span::styled(
                format!("{} ", fi.severity.as_str()),
                t.severity(fi.severity),
            ),
            Span::styled(fi.code.as_str(), t.title(true)),
            Span::styled(format!("  {}", fi.code.title()), t.text_dim()),
            Span::styled(
                if stale.is_empty() {
                    String::new()
                } else {
                    format!("  ({stale}: may be out of date)")
                },
                t.stale(),
            ),
        ]),
        Line::from(vec![
            label("what    "),
            Span::styled(crate::text::one_line(&fi.message), t.text()),
        ]),
        Line::from(vec![
            label("remedy  "),
            Span::styled(crate::text::one_line(&fi.remedy), t.text()),
        ]),
    ];
    let action = match (fi.action, readonly) {
        (Some(a), false) => format!("{a} (press a)"),
        (Some(a), true) => format!("{a} (not in a read-only session)"),
        (None, _) => "none: see the remedy".into(),
    };
    lines.push(Line::from(vec![
        label("action  "),
        Span::styled(action, t.text()),
    ]));
    let objs: Vec<String> = fi.objects.iter().map(|o| o.to_string()).collect();
    lines.push(Line::from(vec![
        label("objects "),
        Span::styled(objs.join(", "), t.text_dim()),
    ]));
    lines
}

fn draw_explained(f: &mut Frame, t: &Theme, area: Rect, fi: &Finding, stale: &str, readonly: bool) {
    let block = common::block(t, "finding", None, "", false);
    f.render_widget(
        Paragraph::new(explained_lines(t, fi, stale, readonly))
            .wrap(Wrap { trim: false })
            .block(block),
        area,
    );
}
