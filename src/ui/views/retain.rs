//! What the restores list last put on the screen, so that the next frame redraws only what
//! changed there: the header, the status line, the table's frame and titles, and the rows whose
//! text, style or place changed. Every other row is left as the terminal shows it.
//!
//! A frame is redrawn whole (and ratatui diffs all of it) on every other screen, under a dialog,
//! and whenever anything the kept rows are drawn from besides their own cells differs: the
//! size, the layout, the shown columns, their widths and alignment, the theme's styles. Each new frame otherwise went through
//! every cell of the screen twice (drawn into a blank buffer, then compared with the last one),
//! about a fifth of the dashboard's work for a write that changed nothing visible or one row
//! (perf, issue 28). `ui::paint` decides which of the two a frame gets and diffs the rows
//! redrawn.
//!
//! Two rows are told apart by a keyed hash of everything they are drawn from
//! (`TableGeometry::feed_row`); the key is random per process, so no name in the cluster can
//! be chosen to make a changed row pass for the one on the screen.

use super::super::theme::Theme;
use super::common::{Col, Row, TableGeometry};
use super::layout::TableAreas;
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use std::hash::{BuildHasher, Hash, Hasher, RandomState};

/// The restores table as last drawn.
struct Drawn {
    /// Everything around the rows (`TableParts::key`).
    key: u64,
    /// Each visible row's fingerprint, top to bottom; `None` where no row was drawn.
    rows: Vec<Option<u64>>,
}

pub struct Retain {
    hasher: RandomState,
    /// Off for a one-off draw (a test, an export): nothing is fingerprinted.
    enabled: bool,
    drawn: Option<Drawn>,
    /// The cells each row held before this frame redrew it, for the diff (`take_row`).
    saved: Vec<(u16, Vec<Cell>)>,
    base: Style,
}

impl Default for Retain {
    fn default() -> Self {
        Retain::new()
    }
}

impl Retain {
    pub fn new() -> Retain {
        Retain {
            hasher: RandomState::new(),
            enabled: true,
            drawn: None,
            saved: Vec::new(),
            base: Style::default(),
        }
    }

    /// Remembers nothing: for a draw that is not followed by others on the same screen.
    pub fn off() -> Retain {
        Retain {
            enabled: false,
            ..Retain::new()
        }
    }

    /// The screen shows something this does not describe: the next frame is drawn whole.
    pub fn forget(&mut self) {
        self.drawn = None;
    }

    /// Whether a table is remembered: without one a frame cannot be drawn as changes.
    pub fn remembers(&self) -> bool {
        self.drawn.is_some()
    }

    /// A frame of changes begins: rows taken are reset to `base`, as a whole redraw starts.
    pub fn begin(&mut self, base: Style) {
        self.saved.clear();
        self.base = base;
    }

    /// The rows taken in this frame, with the cells they held before it.
    pub fn take_saved(&mut self) -> Vec<(u16, Vec<Cell>)> {
        std::mem::take(&mut self.saved)
    }

    /// Row `y` is about to be redrawn: its cells are kept for the diff, then reset to what a
    /// whole redraw starts from (blank, in the base style). Once a frame.
    pub fn take_row(&mut self, buf: &mut Buffer, y: u16) {
        let area = buf.area;
        if !(area.top()..area.bottom()).contains(&y) || self.saved.iter().any(|(s, _)| *s == y) {
            return;
        }
        let from = usize::from(y - area.top()) * usize::from(area.width);
        let Some(cells) = buf.content.get_mut(from..from + usize::from(area.width)) else {
            return;
        };
        self.saved.push((y, cells.to_vec()));
        for c in cells {
            c.reset();
            c.set_style(self.base);
        }
    }

    /// `format::scrub` of the rows taken in this frame: the others were scrubbed when drawn.
    pub fn scrub_taken(&self, buf: &mut Buffer) {
        let (top, w) = (buf.area.top(), usize::from(buf.area.width));
        for (y, _) in &self.saved {
            let Some(dy) = y.checked_sub(top) else {
                continue;
            };
            let from = usize::from(dy) * w;
            if let Some(cells) = buf.content.get_mut(from..from + w) {
                super::super::format::scrub_cells(cells);
            }
        }
    }

    fn hash(&self, feed: impl FnOnce(&mut dyn Hasher)) -> u64 {
        let mut h = self.hasher.build_hasher();
        feed(&mut h);
        h.finish()
    }
}

/// A table screen as one frame draws it: what goes around the rows and the rows themselves.
pub struct TableParts<'a> {
    pub theme: &'a Theme,
    pub screen: Rect,
    pub areas: &'a TableAreas,
    pub title: &'a Line<'a>,
    pub banner: Option<&'a str>,
    pub cols: &'a [Col],
    pub geometry: &'a TableGeometry,
}

impl TableParts<'_> {
    fn key(&self, r: &Retain) -> u64 {
        r.hash(|mut h| {
            let h = &mut h;
            self.screen.hash(h);
            let a = self.areas;
            (a.block, a.banner, a.columns, a.rows, a.extra).hash(h);
            // Not the title, the banner's text or the column titles: their rows are drawn
            // again on every frame.
            self.geometry.feed(h, self.cols);
            let t = self.theme;
            (
                t.base(),
                t.border(true),
                t.column_header(),
                t.selected(),
                t.text_warning(),
            )
                .hash(h);
        })
    }

    fn draw_around(&self, buf: &mut Buffer) {
        super::common::draw_table_block(buf, self.theme, self.areas, self.title, self.banner);
        self.geometry
            .draw_titles(buf, self.theme, self.cols, self.areas.columns);
    }

    /// Draws the table: whole into a blank buffer, or with `changes_only` only what differs from
    /// the table `r` remembers, into the buffer that shows it (false then, with nothing drawn,
    /// when anything around the rows differs). Remembers what it drew.
    pub fn draw(
        &self,
        buf: &mut Buffer,
        rows: &[Row],
        sel: super::super::app::Selection,
        r: &mut Retain,
        changes_only: bool,
    ) -> bool {
        let area = self.areas.rows.intersection(buf.area);
        let h = usize::from(area.height);
        let vis = sel.visible(rows.len(), h);
        let at = |k: usize| {
            rows.get(vis.offset + k)
                .map(|row| (row, vis.offset + k == vis.selected))
        };
        if !r.enabled {
            if changes_only {
                return false;
            }
            self.draw_whole(buf, area, &at);
            return true;
        }
        let key = self.key(r);
        let prints: Vec<Option<u64>> = (0..h)
            .map(|k| {
                at(k).map(|(row, selected)| {
                    r.hash(|mut hs| self.geometry.feed_row(&mut hs, row, selected))
                })
            })
            .collect();
        if changes_only {
            let Some(drawn) = r.drawn.as_ref().filter(|d| d.key == key) else {
                return false;
            };
            let changed: Vec<usize> = (0..h)
                .filter(|k| drawn.rows.get(*k) != Some(&prints[*k]))
                .collect();
            // The rows around the table's rows are drawn again (their edges and titles); the
            // border's edges on the rows kept are drawn over with the same cells.
            let a = self.areas;
            let mut around = vec![a.block.top(), a.columns.top()];
            around.extend(a.banner.map(|b| b.top()));
            around.extend(a.block.bottom().checked_sub(1));
            for y in around {
                r.take_row(buf, y);
            }
            for k in &changed {
                if let Ok(dy) = u16::try_from(*k) {
                    r.take_row(buf, area.top() + dy);
                }
            }
            self.draw_around(buf);
            for k in changed {
                if let (Some((row, selected)), Ok(dy)) = (at(k), u16::try_from(k)) {
                    self.geometry.draw_row(
                        buf,
                        self.theme,
                        self.cols,
                        area,
                        area.top() + dy,
                        row,
                        selected,
                    );
                }
            }
        } else {
            self.draw_whole(buf, area, &at);
        }
        r.drawn = Some(Drawn { key, rows: prints });
        true
    }

    fn draw_whole<'r>(
        &self,
        buf: &mut Buffer,
        area: Rect,
        at: &impl Fn(usize) -> Option<(&'r Row, bool)>,
    ) {
        self.draw_around(buf);
        for (k, y) in (area.top()..area.bottom()).enumerate() {
            if let Some((row, selected)) = at(k) {
                self.geometry
                    .draw_row(buf, self.theme, self.cols, area, y, row, selected);
            }
        }
    }
}

/// The cells of the rows `saved` that differ from what `buf` now holds, as ratatui's diff finds
/// them (wide characters included), row by row.
pub fn changed_cells(buf: &Buffer, saved: Vec<(u16, Vec<Cell>)>) -> Vec<(u16, u16, Cell)> {
    let area = buf.area;
    let w = usize::from(area.width);
    let mut out = Vec::new();
    for (y, before) in saved {
        let row = Rect::new(area.x, y, area.width, 1);
        let Some(dy) = y.checked_sub(area.top()) else {
            continue;
        };
        let from = usize::from(dy) * w;
        let Some(now) = buf.content.get(from..from + w) else {
            continue;
        };
        let before = Buffer {
            area: row,
            content: before,
        };
        let now = Buffer {
            area: row,
            content: now.to_vec(),
        };
        out.extend(
            before
                .diff(&now)
                .into_iter()
                .map(|(x, y, c)| (x, y, c.clone())),
        );
    }
    out
}
