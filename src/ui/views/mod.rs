//! One file per screen or widget; `view` picks them. Views read the state and never change it.

pub mod backups;
pub mod bulk_dialog;
pub mod chain;
pub mod common;
mod consent;
pub mod detail;
pub mod dialog;
pub mod events;
pub mod findings;
pub mod header;
pub mod help;
pub mod history;
pub mod layout;
pub mod orig;
pub mod overview;
pub mod preflight;
pub mod restores;
pub mod retain;
pub mod status;
pub mod wrap;
pub mod yaml;

use super::app::{App, Screen};
use ratatui::Frame;

pub fn view(app: &App, f: &mut Frame) {
    view_retaining(app, f, &mut retain::Retain::off());
}

/// `view` into a blank buffer, remembering in `r` what the restores list drew (`retain`).
pub fn view_retaining(app: &App, f: &mut Frame, r: &mut retain::Retain) {
    let area = f.area();
    // What `Block::default().style(base)` over the frame does, without a lookup per cell: the
    // frame's area is its whole buffer.
    let base = app.theme().base();
    for cell in f.buffer_mut().content.iter_mut() {
        cell.set_style(base);
    }
    let a = layout::areas(area);
    header::draw(f, app, a.header);
    r.forget();
    if a.body.height > 0 {
        match &app.screen {
            Screen::Restores => {
                restores::draw_retaining(f, app, a.body, r, false);
            }
            Screen::Findings => findings::draw(f, app, a.body),
            Screen::Orig => orig::draw(f, app, a.body),
            Screen::Events => events::draw(f, app, a.body),
            Screen::Detail(d) => detail::draw(f, app, a.body, d),
            Screen::Yaml(y) => yaml::draw(f, app, a.body, y),
            Screen::Help { scroll } => help::draw(f, app, a.body, *scroll),
            Screen::Backups => backups::draw(f, app, a.body),
            Screen::Preflight(p) => preflight::draw(f, app, a.body, p),
        }
    }
    status::draw(f, app, a.status);
    if app.modal.is_some() {
        // Drawn over the rows it hides.
        r.forget();
    }
    dialog::draw(f, app);
    super::format::scrub(f.buffer_mut());
}

/// Over the buffer that shows the screen `r` remembers, redraws only what changed on it: the
/// header, the status line, and the restores list's frame and changed rows (`retain`). False,
/// with nothing drawn, when the screen is not one this can tell (then it is drawn whole).
pub fn view_changes(app: &App, f: &mut Frame, r: &mut retain::Retain) -> bool {
    if app.modal.is_some() || app.screen != Screen::Restores || !r.remembers() {
        return false;
    }
    let a = layout::areas(f.area());
    if a.body.height == 0 {
        return false;
    }
    r.begin(app.theme().base());
    // First: it may refuse, and nothing may be drawn before it does.
    if !restores::draw_retaining(f, app, a.body, r, true) {
        return false;
    }
    for y in (a.header.top()..a.header.bottom()).chain(a.status.top()..a.status.bottom()) {
        r.take_row(f.buffer_mut(), y);
    }
    header::draw(f, app, a.header);
    status::draw(f, app, a.status);
    r.scrub_taken(f.buffer_mut());
    true
}
