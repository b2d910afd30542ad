//! The restores list: one row per RestoreJob in scope, worst news visible at a glance.

use super::super::app::App;
use super::super::format;
use super::super::keys::ScreenKind;
use super::super::select;
use super::super::sort::SortCol;
use super::common::{self, Cell, Col, Row, TableGeometry, step_glyph};
use super::layout;
use super::retain::{Retain, TableParts};
use crate::analysis::{Finding, RestoreView, Severity};
use crate::ui::list_memo::{BuiltRow, Source};
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};

const COLS: &[Col] = &[
    Col::new("NAMESPACE", Constraint::Max(24)).sorts(SortCol::Namespace),
    Col::new("NAME", Constraint::Max(48)).sorts(SortCol::Name),
    Col::new("TARGET", Constraint::Max(40))
        .from(100)
        .sorts(SortCol::Target),
    Col::new("DRIVER", Constraint::Length(6)).from(110),
    // Narrow screens keep the finding instead: the step's glyph tells failed from done.
    Col::new("PHASE", Constraint::Length(9))
        .from(90)
        .sorts(SortCol::Status),
    Col::new("STEP", Constraint::Max(20)),
    Col::new("AGE", Constraint::Length(6))
        .right()
        .sorts(SortCol::Age),
    Col::new("DEADLINE", Constraint::Length(9))
        .right()
        .from(90)
        .sorts(SortCol::Deadline),
    Col::new("FINDINGS", Constraint::Max(40))
        .keep()
        .sorts(SortCol::Findings),
    Col::new("DATA", Constraint::Length(9)),
];

/// `2E 1W orig-pvc-foreign +2`: the counts by severity, worst first, then the code of the
/// most severe finding and how many others there are, so the list names the problem.
/// `findings` must come worst first (the report's order within a restore).
pub fn badges<'a>(findings: impl Iterator<Item = &'a Finding>) -> (String, Option<Severity>) {
    let (mut e, mut w, mut i) = (0, 0, 0);
    let mut worst: Option<&Finding> = None;
    for f in findings {
        match f.severity {
            Severity::Error => e += 1,
            Severity::Warning => w += 1,
            Severity::Info => i += 1,
        }
        // The first of the highest severity: ties keep the report's order.
        if worst.is_none_or(|x| f.severity > x.severity) {
            worst = Some(f);
        }
    }
    let mut parts = Vec::new();
    for (n, s) in [(e, "E"), (w, "W"), (i, "I")] {
        if n > 0 {
            parts.push(format!("{n}{s}"));
        }
    }
    if let Some(top) = worst {
        let others = e + w + i - 1;
        parts.push(if others > 0 {
            format!("{} +{others}", top.code.as_str())
        } else {
            top.code.as_str().to_string()
        });
    }
    (parts.join(" "), worst.map(|f| f.severity))
}

fn row(app: &App, r: &RestoreView) -> Row {
    let t = app.theme();
    let Some(frame) = &app.shown else {
        return Row {
            cells: Vec::new(),
            style: t.text(),
        };
    };
    let stale = select::restore_stale(frame, r);
    let style = if stale { t.stale() } else { t.text() };
    let keep = |s| if stale { None } else { Some(s) };
    let target = r
        .target
        .as_ref()
        .map(|t| format!("{}/{}", t.kind, t.name))
        .unwrap_or_else(|| "-".into());
    let (step, step_style) = match r.current_step() {
        Some(s) => (
            format!("{} {}", step_glyph(s.state), s.id.as_str()),
            keep(t.step(s.state)),
        ),
        None if r.terminal => ("✓ done".to_string(), keep(t.text_ok())),
        None => ("-".to_string(), None),
    };
    let phase = if r.phase.is_empty() {
        "new".to_string()
    } else {
        r.phase.clone()
    };
    let phase_style = match r.phase.as_str() {
        "Failed" => keep(t.text_danger()),
        "Succeeded" => keep(t.text_ok()),
        _ => None,
    };
    let (badge, worst) = badges(frame.report.findings_for(&r.id));
    let mut row = Row {
        cells: vec![
            Cell::plain(r.id.namespace.clone()),
            Cell::plain(r.id.name.clone()),
            Cell::plain(target),
            Cell::plain(r.driver.as_str()),
            Cell {
                text: phase.into(),
                style: phase_style,
            },
            Cell {
                text: step.into(),
                style: step_style,
            },
            Cell::plain(String::new()),
            Cell::plain(String::new()),
            Cell {
                text: badge.into(),
                style: worst.and_then(|s| keep(t.severity(s))),
            },
            Cell::plain(String::new()),
        ],
        style,
    };
    clock_cells(app, r, &mut row);
    row
}

/// Where the cells that read the clock are in a row.
const AGE: usize = 6;
const DEADLINE: usize = 7;
const STALE: usize = 9;

/// Redoes the cells of `row` that read the clock: the rest of a row only changes with a frame.
fn clock_cells(app: &App, r: &RestoreView, row: &mut Row) {
    let stale = app
        .shown
        .as_ref()
        .is_some_and(|frame| select::restore_stale(frame, r));
    let texts = [
        (AGE, format::age_since(app.now, r.created)),
        (
            DEADLINE,
            if r.terminal {
                "-".to_string()
            } else {
                format::time_left(app.now, r.deadline)
            },
        ),
        (STALE, common::stale_cell(app, stale, select::RESTORE_KINDS)),
    ];
    for (i, text) in texts {
        if let Some(c) = row.cells.get_mut(i) {
            c.text = text.into();
        }
    }
}

/// Draws the list into `body`, remembering what it drew in `r`; with `changes_only`, drawing
/// only what changed since (`Retain`), or nothing and false when that cannot be told.
pub fn draw_retaining(
    f: &mut Frame,
    app: &App,
    body: Rect,
    r: &mut Retain,
    changes_only: bool,
) -> bool {
    let t = app.theme();
    let Some(frame) = &app.shown else {
        if changes_only {
            return false;
        }
        r.forget();
        let a = common::table_frame(f, app, body, "restores", 0);
        common::draw_empty(f, t, a.rows, common::empty_reason(app, "restores"));
        return true;
    };
    let order = select::restore_order(app, frame);
    if order.is_empty() {
        if changes_only {
            return false;
        }
        r.forget();
        let a = common::table_frame(f, app, body, "restores", order.len());
        common::draw_empty(f, t, a.rows, common::empty_reason(app, "restores"));
        return true;
    }
    let a = layout::table_areas(app, body);
    let title = common::block_title(t, "restores", Some(order.len()), app.filter(), true);
    let banner = common::table_banner(app);
    let screen = f.area();
    let sel = app.list_selection(ScreenKind::Restores);
    let sort = app.sort(ScreenKind::Restores);
    let mut draw = |f: &mut Frame, rows: &[Row], widest: Option<&[usize]>| {
        let cols = common::stale_column_if_needed(COLS, rows);
        let geometry = TableGeometry::of(screen.width, &a, cols, rows, widest, sort);
        let parts = TableParts {
            theme: t,
            screen,
            areas: &a,
            title: &title,
            banner: banner.as_deref(),
            cols,
            geometry: &geometry,
        };
        parts.draw(f.buffer_mut(), rows, sel, r, changes_only)
    };
    let restore = |i: usize| frame.report.restores.get(i).map(|r| &**r);
    let stale_kind = frame.snapshot.is_stale(crate::model::Kind::RestoreJob);
    // A row is rebuilt only when its restore, its findings or its staleness changed.
    let make = |i: usize, r: &std::sync::Arc<crate::analysis::RestoreView>| {
        BuiltRow::new(Source::new(&frame.report, i, r, stale_kind), row(app, r))
    };
    // The rows `draw_table` draws: only their clock cells are read.
    let height = usize::from(a.rows.height);
    let vis = sel.visible(order.len(), height);
    let visible = vis.offset..vis.offset.saturating_add(height);
    let refresh = |i: usize, row: &mut Row| {
        if let Some(r) = restore(i) {
            clock_cells(app, r, row);
        }
    };
    let clock = (
        app.now,
        select::stale_since(&frame.snapshot, select::RESTORE_KINDS),
    );
    match app.list_memo.with_rows(
        frame,
        &order,
        visible,
        clock,
        stale_kind,
        make,
        refresh,
        |rows, widest| draw(f, rows, Some(widest)),
    ) {
        Some(drawn) => drawn,
        None => {
            let rows: Vec<Row> = order
                .iter()
                .filter_map(|&i| restore(i))
                .map(|r| row(app, r))
                .collect();
            draw(f, &rows, None)
        }
    }
}
