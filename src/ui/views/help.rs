//! `?`: generated from the keymap and the command table, so it cannot disagree with them.

use super::super::act;
use super::super::app::App;
use super::super::keys::{Action, COMMANDS, ScreenKind};
use super::common;
use super::layout;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// The screen help was opened from: its keys come first.
fn origin(app: &App) -> ScreenKind {
    app.stack.last().map_or(ScreenKind::Restores, |s| s.kind())
}

pub fn lines(app: &App) -> Vec<Line<'static>> {
    let t = app.theme();
    let km = app.keymap();
    let mut v = vec![Line::styled("Keys", t.title(true))];
    for b in &km.bindings {
        if matches!(b.action, Action::Actions | Action::Mark) && !act::offered(app) {
            continue;
        }
        let here = b.screens.contains(&origin(app));
        let screens: Vec<&str> = b.screens.iter().map(|s| s.label()).collect();
        let where_ = if b.screens.len() >= 7 {
            "everywhere".to_string()
        } else {
            screens.join(", ")
        };
        v.push(Line::from(vec![
            Span::styled(
                format!("  {:<16}", b.keys_label()),
                if here { t.key() } else { t.text_dim() },
            ),
            Span::styled(format!("{:<56}", b.description), t.text()),
            Span::styled(where_, t.text_dim()),
        ]));
    }
    v.push(Line::from(vec![
        Span::styled("  mouse           ", t.key()),
        Span::styled("click selects a row or a pane, the wheel scrolls", t.text()),
    ]));
    v.push(Line::raw(""));
    v.push(Line::styled(
        "Commands (: then tab completes)",
        t.title(true),
    ));
    for (c, d) in COMMANDS {
        v.push(Line::from(vec![
            Span::styled(format!("  :{c:<15}"), t.key()),
            Span::styled(d.to_string(), t.text()),
        ]));
    }
    v.push(Line::raw(""));
    v.push(Line::styled("Glyphs", t.title(true)));
    v.push(Line::styled(
        "  steps ✓ done  ▶ active  · pending  ✗ failed  – skipped;  header ✓ synced  ↻ resyncing  ✗ failed  … syncing",
        t.text(),
    ));
    v
}

pub fn line_count(app: &App) -> usize {
    lines(app).len()
}

pub fn draw(f: &mut Frame, app: &App, body: Rect, scroll: usize) {
    let t = app.theme();
    f.render_widget(common::block(t, "help", None, "", true), body);
    let area = layout::inner(body);
    let h = usize::from(area.height);
    let all = lines(app);
    let scroll = scroll.min(all.len().saturating_sub(h));
    let shown: Vec<Line> = all.into_iter().skip(scroll).take(h).collect();
    f.render_widget(Paragraph::new(shown), area);
}
