//! Events of every restore in scope, newest first.

use super::super::app::App;
use super::super::format;
use super::super::keys::ScreenKind;
use super::super::select;
use super::super::sort::SortCol;
use super::common::{self, Cell, Col, Row};
use crate::analysis::EventLine;
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};

const COLS: &[Col] = &[
    Col::new("AGE", Constraint::Length(6))
        .right()
        .sorts(SortCol::Age),
    Col::new("TYPE", Constraint::Length(7)),
    Col::new("REASON", Constraint::Max(22)),
    Col::new("RESTORE", Constraint::Max(28))
        .from(90)
        .sorts(SortCol::Restore),
    Col::new("OBJECT", Constraint::Max(36)).from(120),
    Col::new("MESSAGE", Constraint::Fill(1)),
];

pub fn event_cells(app: &App, e: &EventLine) -> Vec<Cell> {
    let t = app.theme();
    let count = if e.count > 1 {
        format!(" (x{})", e.count)
    } else {
        String::new()
    };
    vec![
        Cell::plain(format::age_since(app.now, e.time)),
        Cell::styled(
            e.type_.to_string(),
            if &*e.type_ == "Warning" {
                t.text_warning()
            } else {
                t.text()
            },
        ),
        Cell::plain(e.reason.to_string()),
        Cell::plain(String::new()),
        Cell::plain(e.about.as_ref().map_or("-".into(), |o| o.to_string())),
        Cell::plain(format!("{}{count}", e.message)),
    ]
}

pub fn draw(f: &mut Frame, app: &App, body: Rect) {
    let t = app.theme();
    let items = select::events(app);
    let a = common::table_frame(f, app, body, "events", items.len());
    if items.is_empty() {
        common::draw_empty(f, t, a.rows, common::empty_reason(app, "events"));
        return;
    }
    let style = common::rows_style(app, crate::model::Kind::Event);
    let rows: Vec<Row> = items
        .iter()
        .map(|(r, e)| {
            let mut cells = event_cells(app, e);
            cells[3] = Cell::plain(r.id.to_string());
            Row { cells, style }
        })
        .collect();
    common::draw_table(
        f,
        t,
        &a,
        COLS,
        &rows,
        app.list_selection(ScreenKind::Events),
        app.sort(ScreenKind::Events),
    );
}
