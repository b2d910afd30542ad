#![allow(dead_code)]

pub mod action_data;
pub mod bulk_data;
pub mod ui_data;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use restorewatch::ui::{App, event_to_msg, update, view};

/// Draws the app at its own size and returns the screen as text, trailing spaces trimmed.
pub fn render(app: &App) -> String {
    let (w, h) = app.size;
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    t.draw(|f| view(app, f)).expect("draw");
    let buf = t.backend().buffer();
    let mut out = String::new();
    for y in 0..h {
        let mut line = String::new();
        for x in 0..w {
            line.push_str(buf[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Sends one key the way the terminal would, through the keymap.
pub fn press(app: &mut App, code: KeyCode) {
    press_mod(app, code, KeyModifiers::NONE);
}

pub fn press_mod(app: &mut App, code: KeyCode, m: KeyModifiers) {
    let ev = Event::Key(KeyEvent::new(code, m));
    if let Some(msg) = event_to_msg(app, &ev) {
        update(app, msg);
    }
}

/// Types text, one key per character.
pub fn typ(app: &mut App, s: &str) {
    for c in s.chars() {
        press(app, KeyCode::Char(c));
    }
}
