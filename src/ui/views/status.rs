//! The bottom line: the filter or command being typed, else the last message, else hints.

use super::super::act;
use super::super::app::{App, Mode, StatusKind};
use super::super::format;
use super::super::keys::Action;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

pub fn draw(f: &mut Frame, app: &App, area: Rect) {
    if area.height == 0 {
        return;
    }
    let t = app.theme();
    let line = match &app.mode {
        Mode::Filter => Line::from(vec![
            Span::styled(format!("/{}▏", app.filter()), t.filter()),
            Span::styled("  enter keeps  esc clears", t.text_dim()),
        ]),
        Mode::Command(cl) => {
            let mut v = vec![Span::styled(format!(":{}▏", cl.text), t.filter())];
            if let Some((cands, i)) = &cl.completion
                && cands.len() > 1
            {
                for (n, c) in cands.iter().enumerate() {
                    let style = if n == *i { t.key() } else { t.text_dim() };
                    v.push(Span::styled(format!("  {}", c.trim()), style));
                }
            } else {
                v.push(Span::styled(
                    "  tab completes  enter runs  esc cancels",
                    t.text_dim(),
                ));
            }
            Line::from(v)
        }
        Mode::Normal => match &app.status {
            Some(s) => Line::styled(
                s.text.clone(),
                match s.kind {
                    StatusKind::Error => t.text_danger(),
                    StatusKind::Info => t.text_info(),
                },
            ),
            None => hints(app, area.width),
        },
    };
    super::common::draw_lines(f, &[line], area);
}

/// Hints that fit the width: the less needed ones go first on a narrow terminal, so `help`
/// and `quit` always stay.
fn hints(app: &App, width: u16) -> Line<'static> {
    let t = app.theme();
    let km = app.keymap();
    let screen = app.screen.kind();
    let wanted = [
        (Action::Open, "open"),
        (Action::Back, "back"),
        (Action::NextPane, "pane"),
        (Action::Filter, "filter"),
        (Action::Yaml, "yaml"),
        (Action::Actions, "actions"),
        (Action::Mark, "mark"),
        (Action::Command, "cmd"),
        (
            Action::Freeze,
            if app.frozen { "unfreeze" } else { "freeze" },
        ),
        (Action::Help, "help"),
        (Action::Quit, "quit"),
    ];
    let mut shown: Vec<(Action, String, &str)> = wanted
        .into_iter()
        .filter(|(a, _)| !matches!(a, Action::Actions | Action::Mark) || act::offered(app))
        .filter(|(a, _)| km.for_screen(screen).any(|b| b.action == *a))
        .map(|(a, label)| (a, km.key_label(a), label))
        .collect();
    let len = |v: &[(Action, String, &str)]| {
        v.iter()
            .map(|(_, k, l)| format::width(k) + format::width(l) + 5)
            .sum::<usize>()
    };
    for drop in [
        Action::Mark,
        Action::Command,
        Action::Freeze,
        Action::Filter,
        Action::Yaml,
        Action::Back,
        Action::NextPane,
    ] {
        if len(&shown) <= usize::from(width) {
            break;
        }
        shown.retain(|(a, ..)| *a != drop);
    }
    let mut spans = Vec::new();
    for (_, key, label) in shown {
        spans.push(Span::styled(format!("<{key}>"), t.key()));
        spans.push(Span::styled(format!(" {label}  "), t.hint()));
    }
    Line::from(spans)
}
