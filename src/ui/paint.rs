//! Puts the app on the terminal: the whole screen as ratatui draws it, or, on the restores list
//! when nothing around its rows changed, only the rows that did (`views::retain`).
//!
//! ratatui's `Terminal::draw` renders into a blank buffer, diffs it with the last and then
//! blanks the last. Here the buffer that was drawn last is kept as the one that shows the
//! screen (`flush` without the swap), so that a frame of changes can draw over it; a whole
//! frame swaps first, so that ratatui diffs it against the screen as before.

use super::App;
use super::views::{self, retain::Retain};
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::layout::Rect;

pub struct Painter {
    retain: Retain,
    /// The terminal's current buffer holds what the screen shows, at this size.
    on_screen: Option<Rect>,
    /// Frames drawn as changes only, not whole.
    changes: u64,
    /// Neither of ratatui's buffers is known to hold what the screen shows (a paint failed
    /// half-way, or the screen was written by someone else): the next paint clears it first.
    unknown: bool,
}

impl Default for Painter {
    fn default() -> Self {
        Painter::new()
    }
}

impl Painter {
    pub fn new() -> Painter {
        Painter {
            retain: Retain::new(),
            on_screen: None,
            changes: 0,
            unknown: false,
        }
    }

    /// How many frames were drawn as changes only.
    pub fn painted_changes(&self) -> u64 {
        self.changes
    }

    /// Draws `app` on `terminal`, only what changed when that can be told.
    pub fn paint<B: Backend>(
        &mut self,
        terminal: &mut Terminal<B>,
        app: &App,
    ) -> Result<(), B::Error> {
        terminal.autoresize()?;
        if self.unknown {
            // Blank, and so is the buffer the next whole paint is diffed against.
            terminal.clear()?;
            self.on_screen = None;
            self.unknown = false;
        }
        let area = terminal.get_frame().area();
        if self.on_screen == Some(area) && self.paint_changes(terminal, app)? {
            return Ok(());
        }
        self.paint_whole(terminal, app, area)
    }

    /// The screen was written by someone else: the next frame clears it and draws it whole.
    pub fn forget(&mut self) {
        self.on_screen = None;
        self.unknown = true;
        self.retain.forget();
    }

    fn paint_changes<B: Backend>(
        &mut self,
        terminal: &mut Terminal<B>,
        app: &App,
    ) -> Result<bool, B::Error> {
        let drawn = {
            let mut f = terminal.get_frame();
            views::view_changes(app, &mut f, &mut self.retain)
        };
        if !drawn {
            return Ok(false);
        }
        let saved = self.retain.take_saved();
        let changes = views::retain::changed_cells(terminal.current_buffer_mut(), saved);
        // Until it is on the screen, the buffer is not what the screen shows.
        self.on_screen = None;
        self.unknown = true;
        terminal
            .backend_mut()
            .draw(changes.iter().map(|(x, y, c)| (*x, *y, c)))?;
        terminal.hide_cursor()?;
        terminal.backend_mut().flush()?;
        self.on_screen = Some(terminal.get_frame().area());
        self.unknown = false;
        self.changes += 1;
        Ok(true)
    }

    fn paint_whole<B: Backend>(
        &mut self,
        terminal: &mut Terminal<B>,
        app: &App,
        area: Rect,
    ) -> Result<(), B::Error> {
        if self.on_screen == Some(area) {
            // The screen becomes the buffer diffed against; the other one, blanked, is drawn.
            terminal.swap_buffers();
        } else {
            // The first frame, or after a resize (which cleared the screen and the buffer
            // diffed against): drawn into a blank buffer.
            terminal.current_buffer_mut().reset();
        }
        self.on_screen = None;
        self.unknown = true;
        {
            let mut f = terminal.get_frame();
            views::view_retaining(app, &mut f, &mut self.retain);
        }
        terminal.flush()?;
        terminal.hide_cursor()?;
        terminal.backend_mut().flush()?;
        self.on_screen = Some(area);
        self.unknown = false;
        Ok(())
    }
}
