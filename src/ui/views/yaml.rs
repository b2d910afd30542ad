//! YAML of one object, with keys, colons and values told apart, scrollable.

use super::super::app::{App, YamlFetch, YamlState};
use super::super::theme::Theme;
use super::common;
use super::layout;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Splits `  - key: value` into indent, key and value; lines without a key are all value.
pub fn highlight<'a>(t: &Theme, line: &'a str) -> Line<'a> {
    let trimmed = line.trim_start();
    let indent = &line[..line.len() - trimmed.len()];
    let (dash, rest) = match trimmed.strip_prefix("- ") {
        Some(r) => ("- ", r),
        None => ("", trimmed),
    };
    // A key is what comes before the first `: ` (or a trailing `:`), unless it is quoted text.
    let key_end = rest
        .find(": ")
        .or_else(|| rest.ends_with(':').then(|| rest.len() - 1));
    match key_end {
        Some(k) if !rest.starts_with('"') && !rest.starts_with('\'') => {
            let (key, after) = rest.split_at(k);
            let value = after.get(1..).unwrap_or("");
            Line::from(vec![
                Span::raw(indent),
                Span::styled(dash, t.yaml_colon()),
                Span::styled(key, t.yaml_key()),
                Span::styled(":", t.yaml_colon()),
                Span::styled(value, t.yaml_value()),
            ])
        }
        _ => Line::from(vec![
            Span::raw(indent),
            Span::styled(dash, t.yaml_colon()),
            Span::styled(rest, t.yaml_value()),
        ]),
    }
}

pub fn draw(f: &mut Frame, app: &App, body: Rect, y: &YamlState) {
    let t = app.theme();
    let title = format!("yaml {}{}", y.target, fetch_note(app, &y.fetch));
    f.render_widget(common::block(t, &title, None, "", true), body);
    let mut area = layout::inner(body);
    if let YamlFetch::Failed { error, .. } = &y.fetch
        && area.height > 2
    {
        // Why only the held fields are shown, above them, where it cannot be missed.
        let why = format!(
            "could not read the whole object from the API server: {}; shown: the fields restorewatch holds",
            crate::text::for_terminal(error)
        );
        let top = Rect { height: 1, ..area };
        f.render_widget(Paragraph::new(Line::styled(why, t.text_warning())), top);
        area.y += 1;
        area.height -= 1;
    }
    match &y.text {
        Err(e) => common::draw_empty(f, t, area, vec![e.clone()]),
        Ok(text) => {
            let h = usize::from(area.height);
            let total = text.lines().count();
            let scroll = y.scroll.min(total.saturating_sub(h));
            let lines: Vec<Line> = text
                .lines()
                .skip(scroll)
                .take(h)
                .map(|l| highlight(t, l))
                .collect();
            f.render_widget(Paragraph::new(lines), area);
        }
    }
}

/// What the title says of where the text comes from, for an object the watch keeps no text of.
fn fetch_note(app: &App, fetch: &YamlFetch) -> String {
    match fetch {
        YamlFetch::NotNeeded => String::new(),
        YamlFetch::Pending { .. } => {
            " · the fields restorewatch holds; reading the whole object…".into()
        }
        YamlFetch::Done(d) => format!(
            " · read from the API server at {}",
            crate::ui::format::clock(d.at, &app.opts.tz)
        ),
        YamlFetch::Failed { .. } => " · the fields restorewatch holds (read failed)".into(),
    }
}
