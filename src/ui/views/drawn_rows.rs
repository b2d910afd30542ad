//! The cells each table row was last drawn as, by its place on screen: a row whose text,
//! styles, column widths and the cells under it are what they were is copied back, not laid
//! out and drawn again.
//!
//! Every frame redraws the whole screen (ratatui draws immediate-mode into a cleared buffer),
//! and a new frame or a clock tick changes one row or none: on a 160x48 restores list, laying
//! out and drawing the ~40 unchanged rows (cutting each cell to its column, spans, a cell at a
//! time) was most of a new frame's draw (issue 28, eighth session). A copy is exact, not a
//! guess: what a row draws is a function of the line it draws and of the cells it draws over,
//! and both are compared in full before the copy.

use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::Rect;
use ratatui::style::Style;
use std::cell::RefCell;
use std::collections::HashMap;

/// One cell of a row as it is laid out: its text before cutting, style, column width and
/// alignment.
#[derive(Clone, PartialEq, Debug)]
pub struct Part<'a> {
    pub text: &'a str,
    pub style: Style,
    pub width: usize,
    pub right: bool,
}

#[derive(Clone, PartialEq)]
struct OwnedPart {
    text: String,
    style: Style,
    width: usize,
    right: bool,
}

impl OwnedPart {
    fn is(&self, p: &Part) -> bool {
        self.text == p.text
            && self.style == p.style
            && self.width == p.width
            && self.right == p.right
    }
}

#[derive(Clone)]
struct Drawn {
    parts: Vec<OwnedPart>,
    line_style: Option<Style>,
    /// The cells of the line before the row was drawn over them (the base style, whatever an
    /// earlier layer put there).
    under: Vec<Cell>,
    /// The same cells after.
    cells: Vec<Cell>,
}

/// Positions remembered at most; a resize or many tables start over.
const MAX_LINES: usize = 512;

/// One per `App`, by the place (x, y, width) of each row's line; interior mutability because
/// drawing reads the app immutably.
#[derive(Clone, Default)]
pub struct DrawnRows(RefCell<HashMap<(u16, u16, u16), Drawn>>);

impl std::fmt::Debug for DrawnRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.try_borrow().map_or(0, |m| m.len());
        write!(f, "DrawnRows({n} lines)")
    }
}

impl DrawnRows {
    /// Forgets every remembered row: the next draw draws each one.
    pub fn forget(&self) {
        self.0.borrow_mut().clear();
    }

    /// Draws one row into `line` (one line high) of `buf`: copied from the last draw at this
    /// place when `parts`, `line_style` and the cells under it are the same, else drawn by
    /// `draw` and remembered.
    pub fn draw_row(
        &self,
        buf: &mut Buffer,
        line: Rect,
        parts: &[Part],
        line_style: Option<Style>,
        draw: impl FnOnce(&mut Buffer, Rect),
    ) {
        let line = line.intersection(buf.area);
        let Some(range) = cells_of(buf, line) else {
            draw(buf, line);
            return;
        };
        let key = (line.x, line.y, line.width);
        let mut drawn = self.0.borrow_mut();
        if let Some(d) = drawn.get(&key)
            && d.line_style == line_style
            && d.parts.len() == parts.len()
            && d.parts.iter().zip(parts).all(|(a, b)| a.is(b))
            && buf.content[range.clone()] == d.under[..]
        {
            buf.content[range].clone_from_slice(&d.cells);
            return;
        }
        let under = buf.content[range.clone()].to_vec();
        draw(buf, line);
        if drawn.len() >= MAX_LINES {
            drawn.clear();
        }
        drawn.insert(
            key,
            Drawn {
                parts: parts
                    .iter()
                    .map(|p| OwnedPart {
                        text: p.text.to_string(),
                        style: p.style,
                        width: p.width,
                        right: p.right,
                    })
                    .collect(),
                line_style,
                under,
                cells: buf.content[range].to_vec(),
            },
        );
    }
}

/// The indexes in `buf.content` of the one-line `line`, which lies within the buffer.
fn cells_of(buf: &Buffer, line: Rect) -> Option<std::ops::Range<usize>> {
    if line.height != 1 || line.width == 0 {
        return None;
    }
    let start = (usize::from(line.y - buf.area.y)) * usize::from(buf.area.width)
        + usize::from(line.x - buf.area.x);
    let end = start + usize::from(line.width);
    (end <= buf.content.len()).then_some(start..end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::Color;

    fn part(text: &str) -> Part<'_> {
        Part {
            text,
            style: Style::default(),
            width: 10,
            right: false,
        }
    }

    /// Draws `text` at the line's start, as a row would.
    fn write(text: &str) -> impl FnOnce(&mut Buffer, Rect) + '_ {
        move |buf: &mut Buffer, at: Rect| {
            buf.set_string(at.x, at.y, text, Style::default().fg(Color::Red));
        }
    }

    /// Draws a row and says whether it was drawn (not copied).
    fn drawn(
        rows: &DrawnRows,
        buf: &mut Buffer,
        at: Rect,
        text: &str,
        style: Option<Style>,
    ) -> bool {
        let mut called = false;
        rows.draw_row(buf, at, &[part(text)], style, |b, a| {
            called = true;
            write(text)(b, a);
        });
        called
    }

    #[test]
    fn an_unchanged_row_is_copied_as_it_was_drawn() {
        let rows = DrawnRows::default();
        let area = Rect::new(0, 0, 12, 3);
        let at = Rect::new(1, 1, 10, 1);
        let mut first = Buffer::empty(area);
        assert!(drawn(&rows, &mut first, at, "vm-disk", None));
        let mut second = Buffer::empty(area);
        assert!(
            !drawn(&rows, &mut second, at, "vm-disk", None),
            "drawn again"
        );
        assert_eq!(second, first);
    }

    #[test]
    fn a_row_with_other_text_style_or_place_is_drawn_again() {
        let rows = DrawnRows::default();
        let area = Rect::new(0, 0, 12, 3);
        let at = Rect::new(1, 1, 10, 1);
        let mut buf = Buffer::empty(area);
        assert!(drawn(&rows, &mut buf, at, "vm-disk", None));
        let mut buf = Buffer::empty(area);
        assert!(drawn(&rows, &mut buf, at, "vm-disk-2", None));
        let selected = Some(Style::default().bg(Color::Blue));
        let mut buf = Buffer::empty(area);
        assert!(drawn(&rows, &mut buf, at, "vm-disk-2", selected));
        // Another line: nothing remembered there yet.
        let mut buf = Buffer::empty(area);
        assert!(drawn(
            &rows,
            &mut buf,
            Rect::new(1, 2, 10, 1),
            "vm-disk-2",
            selected
        ));
        let mut buf = Buffer::empty(area);
        assert!(!drawn(&rows, &mut buf, at, "vm-disk-2", selected));
    }

    #[test]
    fn a_row_over_other_cells_is_drawn_over_them_not_copied_with_the_old_ones() {
        let rows = DrawnRows::default();
        let area = Rect::new(0, 0, 12, 3);
        let at = Rect::new(1, 1, 10, 1);
        let mut plain = Buffer::empty(area);
        assert!(drawn(&rows, &mut plain, at, "vm", None));
        // The same row over another background (a stale screen's, a theme's): the cells the
        // row leaves alone must keep the new background.
        let green = Style::default().bg(Color::Green);
        let mut buf = Buffer::empty(area);
        buf.set_style(area, green);
        assert!(drawn(&rows, &mut buf, at, "vm", None));
        let mut expected = Buffer::empty(area);
        expected.set_style(area, green);
        write("vm")(&mut expected, at);
        assert_eq!(buf, expected);
    }

    #[test]
    fn a_line_outside_the_buffer_draws_nothing_and_remembers_nothing() {
        let rows = DrawnRows::default();
        let area = Rect::new(0, 0, 12, 3);
        let mut buf = Buffer::empty(area);
        let before = buf.clone();
        rows.draw_row(
            &mut buf,
            Rect::new(0, 5, 10, 1),
            &[part("x")],
            None,
            |b, a| {
                // What a row's drawing gets: an empty line, on which it draws nothing.
                assert!(a.is_empty(), "{a:?}");
                assert_eq!(b.area, area);
            },
        );
        assert_eq!(buf, before);
        assert!(rows.0.borrow().is_empty());
    }
}
