//! The one-line text fields the dialogs confirm with (a name, a phrase): whatever a shortcut
//! inserts as a line break is dropped, so what is compared is exactly what is seen.

use crossterm::event::KeyEvent;
use ratatui_textarea::TextArea;

pub fn new(placeholder: &str) -> TextArea<'static> {
    let mut t = TextArea::default();
    t.set_placeholder_text(placeholder.to_string());
    t.set_cursor_line_style(ratatui::style::Style::default());
    t
}

pub fn text(input: &TextArea<'static>) -> String {
    input.lines().join("")
}

/// Edits the field with the key, keeping it one line.
pub fn edit(input: &mut TextArea<'static>, k: &KeyEvent, placeholder: &str) {
    input.input(*k);
    if input.lines().len() > 1 {
        let joined = text(input);
        *input = new(placeholder);
        input.insert_str(joined);
    }
}
