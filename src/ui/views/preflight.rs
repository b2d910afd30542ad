//! The preflight of a restore from a Backup: the same lines `restorewatch preflight` prints,
//! errors and warnings coloured, the manifest at the end; "reading…" until the worker answers.

use super::super::app::App;
use super::super::backup_preflight::PreflightState;
use super::super::theme::Theme;
use super::common;
use super::layout;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};

/// Lines to scroll through; a line longer than the screen wraps below its own.
pub fn line_count(p: &PreflightState) -> usize {
    match &p.result {
        Some(Ok(a)) => a.lines.len(),
        _ => 1,
    }
}

fn style_of(t: &Theme, line: &str) -> Style {
    if line.starts_with("ERROR") {
        t.text_danger()
    } else if line.starts_with("WARNING") || line.starts_with("UNKNOWN") {
        t.text_warning()
    } else if line.starts_with("verdict:") {
        t.text_info()
    } else {
        t.text()
    }
}

pub fn draw(f: &mut Frame, app: &App, body: Rect, p: &PreflightState) {
    let t = app.theme();
    let title = format!("preflight {} from Backup {}", p.restore, p.backup);
    f.render_widget(common::block(t, &title, None, "", true), body);
    let area = layout::inner(body);
    let answer = match &p.result {
        None => {
            let reading = format!("reading the cluster fresh for {}…", p.restore);
            return common::draw_empty(f, t, area, vec![reading]);
        }
        Some(Err(e)) => {
            return common::draw_empty(f, t, area, vec![format!("preflight failed: {e}")]);
        }
        Some(Ok(a)) => a,
    };
    let verdict = match answer.exit_code {
        0 => t.text_ok(),
        1 => t.text_danger(),
        _ => t.text_warning(),
    };
    let lines: Vec<Line> = answer
        .lines
        .iter()
        .skip(p.scroll)
        .map(|l| {
            let s = if l.starts_with("verdict:") {
                verdict
            } else {
                style_of(t, l)
            };
            Line::styled(l.as_str(), s)
        })
        .collect();
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), area);
}
