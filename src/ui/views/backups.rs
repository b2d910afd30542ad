//! `:backups`: every Backup in scope, the application it holds, when it was taken, its driver
//! and the restores from it still running. `a` runs a preflight of a restore from it.

use super::super::app::App;
use super::super::backup_list;
use super::super::format;
use super::super::keys::ScreenKind;
use super::common::{self, Cell, Col, Row};
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};

const COLS: &[Col] = &[
    Col::new("NAMESPACE", Constraint::Max(18)).from(90),
    Col::new("NAME", Constraint::Max(32)).keep(),
    Col::new("APPLICATION", Constraint::Max(28)),
    Col::new("TAKEN", Constraint::Length(6)).right(),
    Col::new("DRIVER", Constraint::Length(7)),
    Col::new("RESTORE RUNNING", Constraint::Fill(1)),
];

pub fn draw(f: &mut Frame, app: &App, body: Rect) {
    let t = app.theme();
    let items = backup_list::backups(app);
    let a = common::table_frame(f, app, body, "backups", items.len());
    if items.is_empty() {
        common::draw_empty(f, t, a.rows, common::empty_reason(app, "Backups"));
        return;
    }
    let style = common::rows_style(app, crate::model::Kind::Backup);
    let rows: Vec<Row> = items
        .iter()
        .map(|b| {
            let running = if b.running.is_empty() {
                Cell::plain("no")
            } else {
                Cell::styled(b.running.join(", "), t.text_warning())
            };
            Row {
                cells: vec![
                    Cell::plain(b.namespace()),
                    Cell::plain(b.name()),
                    Cell::plain(b.app.clone()),
                    Cell::plain(format::age_since(app.now, b.taken)),
                    Cell::plain(b.driver.as_str()),
                    running,
                ],
                style,
            }
        })
        .collect();
    common::draw_table(
        f,
        t,
        &a,
        COLS,
        &rows,
        app.list_selection(ScreenKind::Backups),
        None,
    );
}
