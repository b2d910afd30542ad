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
pub mod status;
pub mod wrap;
pub mod yaml;

use super::app::{App, Screen};
use ratatui::Frame;

pub fn view(app: &App, f: &mut Frame) {
    let area = f.area();
    // What `Block::default().style(base)` over the frame does, without a lookup per cell: the
    // frame's area is its whole buffer.
    let base = app.theme().base();
    for cell in f.buffer_mut().content.iter_mut() {
        cell.set_style(base);
    }
    let a = layout::areas(area);
    header::draw(f, app, a.header);
    if a.body.height > 0 {
        match &app.screen {
            Screen::Restores => restores::draw(f, app, a.body),
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
    dialog::draw(f, app);
    super::format::scrub(f.buffer_mut());
}
