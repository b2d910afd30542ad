//! Pieces every screen uses: the table renderer, the data-health banner, the empty state that
//! says why it is empty, and the short names of kinds and states.

use super::super::app::{App, Pane, Screen, Selection};
use super::super::format;
use super::super::select;
use super::super::sort::{Sort, SortCol};
use super::super::theme::Theme;
use super::layout::TableAreas;
use crate::analysis::{RestoreView, StepState};
use crate::cluster::{SourceInfo, SyncState};
use crate::model::Kind;
use compact_str::CompactString;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

pub const TAB_SEP: &str = " │ ";
pub const TAB_SEP_WIDTH: u16 = 3;

/// A column: title, width rule, alignment, and the narrowest screen it is shown on.
pub struct Col {
    pub title: &'static str,
    pub width: Constraint,
    pub right: bool,
    pub min_screen: u16,
    /// The column `Shift`+letter sorts by, for the header's arrow.
    pub sort: Option<SortCol>,
    /// Not narrowed when the line is too short (what the row is about).
    pub keep: bool,
}

impl Col {
    pub const fn new(title: &'static str, width: Constraint) -> Col {
        Col {
            title,
            width,
            right: false,
            min_screen: 0,
            sort: None,
            keep: false,
        }
    }
    pub const fn keep(mut self) -> Col {
        self.keep = true;
        self
    }
    pub const fn sorts(mut self, col: SortCol) -> Col {
        self.sort = Some(col);
        self
    }
    /// The title with the sort arrow when the table is sorted by this column.
    fn title(&self, sort: Option<Sort>) -> String {
        match sort {
            Some(s) if self.sort == Some(s.col) => format!("{}{}", self.title, s.arrow()),
            _ => self.title.to_string(),
        }
    }
    pub const fn right(mut self) -> Col {
        self.right = true;
        self
    }
    pub const fn from(mut self, min_screen: u16) -> Col {
        self.min_screen = min_screen;
        self
    }
}

/// A cell: its text and, when it differs from the row's, its own style. The text is kept in
/// the cell itself up to 24 bytes (most names, ages, phases and badges): every visible cell is
/// read on each redraw, and a kept row's texts, each an allocation of its own, were the cold
/// memory a redraw waited on.
#[derive(Clone)]
pub struct Cell {
    pub text: CompactString,
    pub style: Option<Style>,
}

impl Cell {
    pub fn plain(text: impl Into<CompactString>) -> Cell {
        Cell {
            text: text.into(),
            style: None,
        }
    }
    pub fn styled(text: impl Into<CompactString>, style: Style) -> Cell {
        Cell {
            text: text.into(),
            style: Some(style),
        }
    }
}

/// `cols` without its last column (the stale marker) unless some row has something in it.
pub fn stale_column_if_needed<'a>(cols: &'a [Col], rows: &[Row]) -> &'a [Col] {
    let any_stale = rows
        .iter()
        .any(|r| r.cells.last().is_some_and(|c| !c.text.is_empty()));
    if any_stale || cols.is_empty() {
        cols
    } else {
        &cols[..cols.len() - 1]
    }
}

#[derive(Clone)]
pub struct Row {
    pub cells: Vec<Cell>,
    pub style: Style,
}

/// Draws column titles and the visible window of rows. Cells are cut with `…` to their
/// column, numbers right-aligned; the selected row is drawn with the cursor style on top.
pub fn draw_table(
    f: &mut Frame,
    theme: &Theme,
    areas: &TableAreas,
    cols: &[Col],
    rows: &[Row],
    sel: Selection,
    sort: Option<Sort>,
) {
    draw_table_sized(f, theme, areas, cols, rows, None, sel, sort);
}

/// The display width of each of `row`'s cells: measured once when a row is built and kept
/// with it (`widest_of`), since measuring every name of 1,000 rows on each new frame was a
/// third of the restores list's draw (issue 28, seventh session).
pub fn cell_widths(row: &Row) -> Box<[usize]> {
    row.cells.iter().map(|c| format::width(&c.text)).collect()
}

/// The widest of each cell index among rows of the given `cell_widths`: what a `Max` column of
/// `draw_table` is sized by.
pub fn widest_of<'a>(rows: impl IntoIterator<Item = &'a [usize]>) -> Vec<usize> {
    let mut widest: Vec<usize> = Vec::new();
    for row in rows {
        if widest.len() < row.len() {
            widest.resize(row.len(), 0);
        }
        for (w, c) in widest.iter_mut().zip(row) {
            *w = (*w).max(*c);
        }
    }
    widest
}

/// `widest_of` the cells of `rows`, measured now.
pub fn widest_cells(rows: &[Row]) -> Vec<usize> {
    let widths: Vec<Box<[usize]>> = rows.iter().map(cell_widths).collect();
    widest_of(widths.iter().map(|w| &**w))
}

/// `draw_table`, with the widest cells of `rows` (`widest_cells`) when already known; they
/// must be those of these rows, in the `Max` columns at least.
#[allow(clippy::too_many_arguments)]
pub fn draw_table_sized(
    f: &mut Frame,
    theme: &Theme,
    areas: &TableAreas,
    cols: &[Col],
    rows: &[Row],
    widest: Option<&[usize]>,
    sel: Selection,
    sort: Option<Sort>,
) {
    let g = TableGeometry::of(f.area().width, areas, cols, rows, widest, sort);
    let buf = f.buffer_mut();
    g.draw_titles(buf, theme, cols, areas.columns);
    let h = usize::from(areas.rows.height);
    let vis = sel.visible(rows.len(), h);
    let area = areas.rows.intersection(buf.area);
    let drawn = rows.iter().enumerate().skip(vis.offset).take(h);
    for ((n, row), y) in drawn.zip(area.top()..area.bottom()) {
        g.draw_row(buf, theme, cols, area, y, row, n == vis.selected);
    }
}

/// Where a table's columns go: which are shown, how wide each is, and their titles.
pub struct TableGeometry {
    pub shown: Vec<usize>,
    pub widths: Vec<usize>,
    pub titles: Vec<String>,
}

impl TableGeometry {
    /// The columns of `cols` shown on a screen `screen_w` wide, each as wide as its widest
    /// cell allows (a `Max` column) within the line.
    pub fn of(
        screen_w: u16,
        areas: &TableAreas,
        cols: &[Col],
        rows: &[Row],
        widest: Option<&[usize]>,
        sort: Option<Sort>,
    ) -> TableGeometry {
        let columns = areas.columns;
        let titles: Vec<String> = cols.iter().map(|c| c.title(sort)).collect();
        let shown: Vec<usize> = (0..cols.len())
            .filter(|i| screen_w >= cols[*i].min_screen)
            .collect();
        // A `Max` column is only as wide as its widest cell, so short values leave room for names.
        let mut constraints: Vec<Constraint> = shown
            .iter()
            .map(|i| match cols[*i].width {
                Constraint::Max(cap) => {
                    let cells = match widest {
                        Some(w) => w.get(*i).copied().unwrap_or(0),
                        None => rows
                            .iter()
                            .filter_map(|r| r.cells.get(*i))
                            .map(|c| format::width(&c.text))
                            .max()
                            .unwrap_or(0),
                    };
                    let widest = cells.max(format::width(&titles[*i]));
                    Constraint::Length(cap.min(u16::try_from(widest).unwrap_or(u16::MAX)))
                }
                c => c,
            })
            .collect();
        let sized: Vec<bool> = shown
            .iter()
            .map(|i| matches!(cols[*i].width, Constraint::Max(_)) && !cols[*i].keep)
            .collect();
        squeeze(&mut constraints, &sized, columns.width);
        let widths: Vec<usize> = Layout::horizontal(constraints)
            .spacing(1)
            .split(Rect::new(0, 0, columns.width, 1))
            .iter()
            .map(|r| usize::from(r.width))
            .collect();
        TableGeometry {
            shown,
            widths,
            titles,
        }
    }

    /// The column titles, each fitted to its column, in `columns`.
    pub fn draw_titles(
        &self,
        buf: &mut ratatui::buffer::Buffer,
        theme: &Theme,
        cols: &[Col],
        columns: Rect,
    ) {
        let mut spans = Vec::with_capacity(self.shown.len() * 3);
        for (n, (i, w)) in self.shown.iter().zip(&self.widths).enumerate() {
            if n > 0 {
                spans.push(Span::raw(" "));
            }
            fitted(
                &mut spans,
                &self.titles[*i],
                *w,
                cols[*i].right,
                theme.column_header(),
            );
        }
        render_rows(&[Line::from(spans)], columns, buf);
    }

    /// One row written straight into the buffer at `y`, cell after cell, as `render_rows`
    /// draws the line of its fitted cells (`fitted`, a space between them): no spans or lines
    /// are made for the rows of every redraw.
    #[allow(clippy::too_many_arguments)]
    pub fn draw_row(
        &self,
        buf: &mut ratatui::buffer::Buffer,
        theme: &Theme,
        cols: &[Col],
        area: Rect,
        y: u16,
        row: &Row,
        selected: bool,
    ) {
        // The spaces between cells belong to the cursor too.
        let line_style = if selected {
            theme.selected()
        } else {
            Style::default()
        };
        let mut out = LineWriter::new(buf, area, y, line_style);
        for (k, (i, w)) in self.shown.iter().zip(&self.widths).enumerate() {
            if k > 0 && !out.span(" ", Style::default()) {
                break;
            }
            let text = row.cells.get(*i).map_or("", |c| c.text.as_str());
            let mut style = row.cells.get(*i).and_then(|c| c.style).unwrap_or(row.style);
            if selected {
                style = style.patch(theme.selected());
            }
            if !out.fitted(text, *w, cols[*i].right, style) {
                break;
            }
        }
    }

    /// What `draw_row` draws `row` from, fed to `h`: two rows fed alike are drawn alike in
    /// the same geometry (`feed`).
    pub fn feed_row(&self, h: &mut impl std::hash::Hasher, row: &Row, selected: bool) {
        use std::hash::Hash;
        selected.hash(h);
        row.style.hash(h);
        for i in &self.shown {
            match row.cells.get(*i) {
                Some(c) => {
                    c.text.as_str().hash(h);
                    c.style.hash(h);
                }
                None => 0xffu8.hash(h),
            }
        }
    }

    /// Everything `draw_row` reads besides the row: the shown columns, their widths and
    /// alignment.
    pub fn feed(&self, h: &mut impl std::hash::Hasher, cols: &[Col]) {
        use std::hash::Hash;
        self.shown.hash(h);
        self.widths.hash(h);
        for i in &self.shown {
            cols[*i].right.hash(h);
        }
    }
}

/// `format::fit(text, w, right)` in `style`, pushed as spans: the text as it is when it fits
/// (borrowed), its padding a span of spaces in the same style, so the cells drawn are those of
/// the fitted string.
fn fitted<'a>(spans: &mut Vec<Span<'a>>, text: &'a str, w: usize, right: bool, style: Style) {
    let t = format::truncate(text, w);
    let pad = w.saturating_sub(format::width(&t));
    let pad = (pad > 0).then(|| Span::styled(format::spaces(pad), style));
    let text = (!t.is_empty()).then(|| Span::styled(t, style));
    let (first, second) = if right { (pad, text) } else { (text, pad) };
    spans.extend(first);
    spans.extend(second);
}

/// Draws `lines` exactly as `Paragraph::new(lines)` would (left-aligned, not wrapped, cut at
/// the area's edge), through `LineWriter`: the header, the status line and the tables' column
/// titles are drawn on every frame.
pub fn draw_lines(f: &mut Frame, lines: &[Line], area: Rect) {
    render_rows(lines, area, f.buffer_mut());
}

fn render_rows(lines: &[Line], area: Rect, buf: &mut ratatui::buffer::Buffer) {
    use ratatui::widgets::Widget;
    let area = area.intersection(buf.area);
    for (y, line) in (area.top()..area.bottom()).zip(lines) {
        if line
            .alignment
            .is_some_and(|a| a != ratatui::layout::Alignment::Left)
        {
            Paragraph::new(line.clone()).render(Rect::new(area.x, y, area.width, 1), buf);
            continue;
        }
        let mut out = LineWriter::new(buf, area, y, line.style);
        for span in &line.spans {
            if !out.span(&span.content, span.style) {
                break;
            }
        }
    }
}

/// Characters the tables draw themselves (the steps' glyphs, the cut's ellipsis): each one
/// cell wide, and none joins a neighbour into one grapheme, so a text of these and printable
/// ASCII is drawn a character per cell (checked against the paragraph in the tests).
const ONE_CELL_GLYPHS: &[char] = &['·', '▶', '✓', '✗', '–', '…', '│', '↻', '→', '↑', '↓'];

/// One line of a table written into the buffer span after span exactly as
/// `Paragraph::new(line)` draws it (left-aligned, not wrapped, cut at the area's edge), but a
/// span of printable ASCII (or of `ONE_CELL_GLYPHS`) a character per cell: the paragraph walks
/// the Unicode graphemes of every character, which on a 160x48 table was half of a redraw's
/// time, and each new frame and clock tick redraws it. Other spans take the paragraph's own
/// steps (its graphemes, their widths, the same cut).
struct LineWriter<'b> {
    buf: &'b mut ratatui::buffer::Buffer,
    x: u16,
    y: u16,
    max: u16,
    /// The width drawn so far: the paragraph stops at the first grapheme that does not fit.
    w: u16,
    base: Style,
}

impl<'b> LineWriter<'b> {
    /// A line at row `y` of `area` (within the buffer), in `line_style` under its spans'.
    fn new(buf: &'b mut ratatui::buffer::Buffer, area: Rect, y: u16, line_style: Style) -> Self {
        LineWriter {
            buf,
            x: area.left(),
            y,
            max: area.width,
            w: 0,
            base: Style::default().patch(line_style),
        }
    }

    /// Draws `text` in `style` (over the line's); false once the line is full (the rest of it
    /// is not drawn).
    fn span(&mut self, text: &str, style: Style) -> bool {
        use ratatui::buffer::CellWidth;
        let simple = |c: char| (' '..='~').contains(&c) || ONE_CELL_GLYPHS.contains(&c);
        if text.bytes().all(|b| (0x20..0x7f).contains(&b)) || text.chars().all(simple) {
            let style = self.base.patch(style);
            let mut chars = text.chars().peekable();
            if chars.peek().is_none() {
                return true;
            }
            if self.w >= self.max {
                return false;
            }
            // The cells left on this line, in a row of the buffer: `area` is within it.
            let start = self.buf.index_of(self.x + self.w, self.y);
            let room = usize::from(self.max - self.w);
            let Some(cells) = self.buf.content.get_mut(start..start + room) else {
                return false;
            };
            for cell in cells {
                let Some(c) = chars.next() else { break };
                // A cell drawn blank already reads as a space (ratatui's cells compare equal
                // either way): half of a table's cells are the spaces between and after texts.
                if c != ' ' || cell.symbol() != " " {
                    cell.set_char(c);
                }
                cell.set_style(style);
                self.w += 1;
            }
            return chars.next().is_none();
        }
        let span = Span::styled(text, style);
        for g in span.styled_graphemes(self.base) {
            let gw = g.symbol.cell_width();
            if gw > self.max {
                continue;
            }
            if self.w + gw > self.max {
                return false;
            }
            if gw == 0 {
                continue;
            }
            let symbol = if g.symbol.is_empty() { " " } else { g.symbol };
            self.buf[(self.x + self.w, self.y)]
                .set_symbol(symbol)
                .set_style(g.style);
            self.w += gw;
        }
        true
    }

    /// `text` fitted to `w` cells as `fitted` pushes it: the text cut to fit, padded with
    /// spaces in `style` on the right (on the left when `right`).
    fn fitted(&mut self, text: &str, w: usize, right: bool, style: Style) -> bool {
        let t = format::truncate(text, w);
        let pad = format::spaces(w.saturating_sub(format::width(&t)));
        let (first, second) = if right { (&*pad, &*t) } else { (&*t, &*pad) };
        self.span(first, style) && self.span(second, style)
    }
}

/// When fixed-width columns overflow the line, narrows the widest of the `shrinkable` ones
/// first, a column at a time, so long namespaces give way before short, telling values
/// (left to the layout, every column would be cut a little).
fn squeeze(constraints: &mut [Constraint], shrinkable: &[bool], width: u16) {
    const MIN_W: u16 = 8;
    let len = |c: &Constraint| match c {
        Constraint::Length(n) => *n,
        _ => 0,
    };
    if constraints
        .iter()
        .any(|c| !matches!(c, Constraint::Length(_)))
    {
        return;
    }
    let spacing = constraints.len().saturating_sub(1) as u16;
    let mut total: u32 = constraints.iter().map(|c| u32::from(len(c))).sum();
    let avail = u32::from(width.saturating_sub(spacing));
    while total > avail {
        let widest = (0..constraints.len())
            .filter(|i| shrinkable[*i] && len(&constraints[*i]) > MIN_W)
            .max_by_key(|i| (len(&constraints[*i]), std::cmp::Reverse(*i)));
        let Some(i) = widest else { break };
        constraints[i] = Constraint::Length(len(&constraints[i]) - 1);
        total -= 1;
    }
}

/// A bordered block with a title and an optional row counter and filter.
pub fn block<'a>(
    theme: &Theme,
    title: &str,
    count: Option<usize>,
    filter: &str,
    focused: bool,
) -> Block<'a> {
    Block::bordered()
        .border_style(theme.border(focused))
        .title(block_title(theme, title, count, filter, focused))
}

/// ` restores[12] </pg> `: a block's title, its count and its filter.
pub(super) fn block_title<'a>(
    theme: &Theme,
    title: &str,
    count: Option<usize>,
    filter: &str,
    focused: bool,
) -> Line<'a> {
    let title = crate::text::one_line(title);
    let mut spans = vec![Span::styled(format!(" {title}"), theme.title(focused))];
    if let Some(n) = count {
        spans.push(Span::styled(format!("[{n}]"), theme.counter()));
    }
    if !filter.is_empty() {
        let filter = crate::text::one_line(filter);
        spans.push(Span::styled(format!(" </{filter}>"), theme.filter()));
    }
    spans.push(Span::raw(" "));
    Line::from(spans)
}

/// What `Block::bordered().border_style(border).title(title)` draws over `area`, without the
/// block's first step: setting its own (empty) style on every cell of the area, a pass over
/// the whole table that changed nothing, on every frame. Checked cell for cell against the
/// block in the tests.
pub(super) fn draw_bordered(
    buf: &mut ratatui::buffer::Buffer,
    area: Rect,
    title: &Line,
    border: Style,
) {
    use ratatui::symbols::border::PLAIN;
    use ratatui::widgets::Widget;
    let area = area.intersection(buf.area);
    if area.is_empty() {
        return;
    }
    let (left, top) = (area.left(), area.top());
    let (right, bottom) = (area.right() - 1, area.bottom() - 1);
    let mut put = |x: u16, y: u16, symbol: &str| {
        buf[(x, y)].set_symbol(symbol).set_style(border);
    };
    for y in top..=bottom {
        put(left, y, PLAIN.vertical_left);
        put(right, y, PLAIN.vertical_right);
    }
    for x in left..=right {
        put(x, top, PLAIN.horizontal_top);
        put(x, bottom, PLAIN.horizontal_bottom);
    }
    put(right, bottom, PLAIN.bottom_right);
    put(right, top, PLAIN.top_right);
    put(left, bottom, PLAIN.bottom_left);
    put(left, top, PLAIN.top_left);
    let room = area.width.saturating_sub(2);
    if room > 0 {
        let w = u16::try_from(title.width()).unwrap_or(u16::MAX).min(room);
        title.render(Rect::new(left + 1, top, w, 1), buf);
    }
}

/// Short names for the header's per-kind health.
pub fn kind_abbrev(k: Kind) -> &'static str {
    match k {
        Kind::Namespace => "NS",
        Kind::PersistentVolumeClaim => "PVC",
        Kind::PersistentVolume => "PV",
        Kind::StorageClass => "SC",
        Kind::Pod => "Pod",
        Kind::Event => "Ev",
        Kind::RestoreJob => "RestoreJob",
        Kind::Backup => "Backup",
        Kind::DataVolume => "DV",
        Kind::VirtualMachine => "VM",
        Kind::VirtualMachineInstance => "VMI",
        Kind::HelmRelease => "HR",
        Kind::VeleroRestore => "VeleroRestore",
        Kind::DataDownload => "DD",
        Kind::VeleroBackup => "VeleroBackup",
        Kind::CnpgCluster => "PgCluster",
        Kind::CnpgBackup => "PgBackup",
        Kind::ObjectStore => "ObjStore",
        Kind::Postgres => "Postgres",
    }
}

pub fn step_glyph(s: StepState) -> &'static str {
    match s {
        StepState::Pending => "·",
        StepState::Active => "▶",
        StepState::Done => "✓",
        StepState::Failed => "✗",
        StepState::Skipped => "–",
    }
}

/// "403" from an error text when it carries an HTTP status, for the compact header.
pub fn error_code(error: &str) -> Option<&'static str> {
    ["401", "403", "404", "410", "429", "500", "503"]
        .into_iter()
        .find(|c| error.contains(c))
}

/// Where the data comes from, for the header.
pub fn source_label(app: &App) -> String {
    if app.shown.is_none()
        && let Some(server) = &app.opts.connecting_to
    {
        let waited = app.now.duration_since(app.opened_at).as_secs().max(0);
        return format!("connecting to {server}… {waited}s");
    }
    if let Some(l) = &app.opts.source_label {
        return l.clone();
    }
    let Some(frame) = &app.shown else {
        return match &app.opts.context {
            Some(c) => format!("ctx {c} (syncing…)"),
            None => "connecting…".into(),
        };
    };
    match &frame.snapshot.source {
        SourceInfo::Live { context, .. } => format!("ctx {context}"),
        SourceInfo::Files {
            files,
            newest_object,
        } => {
            let names = if files.len() > 2 {
                format!("{}, {} and {} more", files[0], files[1], files.len() - 2)
            } else {
                files.join(", ")
            };
            match newest_object {
                Some(t) => format!(
                    "snapshot of {names} taken {} ({} ago)",
                    format::datetime(*t, &app.opts.tz),
                    format::age_since(app.now, Some(*t))
                ),
                None => format!("snapshot of {names}"),
            }
        }
        SourceInfo::Demo { scenarios } if scenarios.is_empty() => "demo".into(),
        SourceInfo::Demo { scenarios } => format!("demo: {}", scenarios.join(", ")),
    }
}

/// The kinds the current table's rows rest on.
pub fn screen_kinds(screen: &Screen) -> &'static [Kind] {
    match screen {
        Screen::Restores | Screen::Detail(_) => select::RESTORE_KINDS,
        Screen::Orig => select::ORIG_KINDS,
        Screen::Events => select::EVENT_KINDS,
        Screen::Findings => &[
            Kind::RestoreJob,
            Kind::PersistentVolumeClaim,
            Kind::PersistentVolume,
        ],
        Screen::Backups => &[Kind::Backup, Kind::RestoreJob],
        Screen::Yaml(_) | Screen::Help { .. } | Screen::Preflight(_) => &[],
    }
}

fn plural(k: Kind) -> String {
    format!("{}s", k.info().label)
}

/// One sentence per degraded kind: what is wrong with the data and how old it is.
pub fn degraded_lines(app: &App, kinds: &[Kind]) -> Vec<String> {
    let Some(frame) = &app.shown else {
        return Vec::new();
    };
    select::degraded(&frame.snapshot, kinds)
        .into_iter()
        .map(|(k, s)| match s {
            SyncState::Syncing => format!("syncing {}…", plural(k)),
            SyncState::Resyncing { since, error } | SyncState::Failed { since, error } => format!(
                "{} watch down since {} (data {} old): {error}",
                k.info().label,
                format::clock(*since, &app.opts.tz),
                format::age_since(app.now, Some(*since)),
            ),
            SyncState::Forbidden { error } => format!("no access to {}: {error}", plural(k)),
            _ => String::new(),
        })
        .filter(|s| !s.is_empty())
        .collect()
}

/// The one-line warning above a table whose data may be incomplete.
pub fn table_banner(app: &App) -> Option<String> {
    let lines = degraded_lines(app, screen_kinds(&app.screen));
    (!lines.is_empty()).then(|| format!("⚠ {}: rows may be out of date", lines.join("; ")))
}

/// Why a table has no rows, never "nothing" when the data is missing.
pub fn empty_reason(app: &App, what: &str) -> Vec<String> {
    if app.shown.is_none() {
        return vec![
            "Syncing…".into(),
            "waiting for the first complete list of every watched kind".into(),
        ];
    }
    let degraded = degraded_lines(app, screen_kinds(&app.screen));
    if !degraded.is_empty() {
        let mut v = vec![format!("No {what} to show, but the data is incomplete:")];
        v.extend(degraded);
        return v;
    }
    let filter = app.filter();
    if !filter.is_empty() {
        return vec![format!(
            "No {what} match /{filter}  (esc clears the filter)"
        )];
    }
    let scope = match &app.namespace {
        Some(ns) => format!("in namespace {ns}  (:ns all shows every namespace)"),
        None => "in any namespace".into(),
    };
    vec![format!("No {what} {scope}")]
}

pub fn draw_empty(f: &mut Frame, theme: &Theme, area: Rect, lines: Vec<String>) {
    if area.height == 0 {
        return;
    }
    let top = area.height.saturating_sub(lines.len() as u16) / 2;
    let r = Rect::new(area.x, area.y + top, area.width, area.height - top);
    let lines: Vec<Line> = lines
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            let style = if i == 0 {
                theme.title(false)
            } else {
                theme.text_dim()
            };
            Line::styled(crate::text::one_line_owned(l), style).centered()
        })
        .collect();
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), r);
}

/// `stale 3m` for rows built on old data, empty otherwise.
pub fn stale_cell(app: &App, stale: bool, kinds: &[Kind]) -> String {
    if !stale {
        return String::new();
    }
    let since = app
        .shown
        .as_ref()
        .and_then(|f| select::stale_since(&f.snapshot, kinds));
    match since {
        Some(t) => format!("stale {}", format::age_since(app.now, Some(t))),
        None => "stale".into(),
    }
}

/// The detail's pane titles with their counts.
pub fn pane_tabs(app: &App, r: &RestoreView) -> Vec<(Pane, String)> {
    Pane::ALL
        .iter()
        .map(|p| {
            let name = match p {
                Pane::Steps => "Steps",
                Pane::Disks if r.postgres.is_some() => "Postgres",
                Pane::Disks => "Disks",
                Pane::Events => "Events",
                Pane::Findings => "Findings",
                Pane::History => "History",
            };
            let n = match p {
                // The Postgres pane is a comparison, not a list: no count.
                Pane::Disks if r.postgres.is_some() => return (*p, name.to_string()),
                Pane::Disks => r.disks.len(),
                _ => select::pane_len(app, r, *p),
            };
            (*p, format!("{name} {n}"))
        })
        .collect()
}

/// The frame of a table screen: its titled block (count, filter) and, when data is stale or
/// missing, the warning banner above the rows. Returns where the columns and rows go.
pub fn table_frame(
    f: &mut Frame,
    app: &App,
    body: Rect,
    title: &str,
    count: usize,
) -> super::layout::TableAreas {
    let t = app.theme();
    let a = super::layout::table_areas(app, body);
    let title = block_title(t, title, Some(count), app.filter(), true);
    draw_table_block(f.buffer_mut(), t, &a, &title, table_banner(app).as_deref());
    a
}

/// `table_frame`'s drawing: the block with its `title`, and the `banner` in its place.
pub fn draw_table_block(
    buf: &mut ratatui::buffer::Buffer,
    t: &Theme,
    a: &TableAreas,
    title: &Line,
    banner: Option<&str>,
) {
    use ratatui::widgets::Widget;
    draw_bordered(buf, a.block, title, t.border(true));
    if let (Some(b), Some(text)) = (a.banner, banner) {
        Paragraph::new(Span::styled(text, t.text_warning())).render(b, buf);
    }
}

/// The style of a table's rows: stale while the watch of the kind they rest on is not synced.
pub fn rows_style(app: &App, kind: Kind) -> Style {
    let stale = app
        .shown
        .as_ref()
        .is_some_and(|fr| fr.snapshot.is_stale(kind));
    if stale {
        app.theme().stale()
    } else {
        app.theme().text()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::text::{Line, Span};
    use ratatui::widgets::Widget;

    fn row(cells: &[&str]) -> Row {
        Row {
            cells: cells
                .iter()
                .map(|t| Cell {
                    text: (*t).into(),
                    style: None,
                })
                .collect(),
            style: Style::default(),
        }
    }

    #[test]
    fn rows_are_drawn_cell_for_cell_as_a_paragraph_draws_them() {
        use ratatui::buffer::Buffer;
        use ratatui::style::{Color, Modifier};
        let cut = Style::default().fg(Color::Red).add_modifier(Modifier::BOLD);
        let lines = vec![
            Line::from(vec![
                Span::raw("tenant-a"),
                Span::raw(" "),
                Span::styled("vm", cut),
            ]),
            // The cursor's row: the line's style under each span's.
            Line::from(vec![Span::styled("sel", cut), Span::raw(" row")])
                .style(Style::default().bg(Color::Blue)),
            Line::from(""),
            // Wider than the area: cut at its edge.
            Line::from("x".repeat(40)),
            // Not ASCII: wide characters, a combining mark, a control character.
            Line::from(vec![
                Span::raw("テナ"),
                Span::raw("e\u{301}"),
                Span::raw("a\tb"),
            ]),
            // A wide character that does not fit ends the line, as the paragraph cuts it.
            Line::from(vec![
                Span::raw("x".repeat(19)),
                Span::raw("テ"),
                Span::raw("y"),
            ]),
            Line::from(vec![Span::raw("a\u{200b}b…"), Span::styled("ok", cut)]),
            // The tables' own glyphs, drawn a character per cell, cut at the edge as the
            // paragraph cuts them; one with a combining mark after it is a grapheme of two.
            Line::from(vec![
                Span::styled("✓ done", cut),
                Span::raw(" ▶ · – ✗ │↻→↑↓"),
                Span::raw("✓\u{301}…x"),
                Span::raw("▶▶▶▶▶▶"),
            ]),
            Line::from("right").alignment(ratatui::layout::Alignment::Right),
            // More lines than the area is high: the rest is not drawn.
            Line::from("below the area"),
        ];
        let area = Rect::new(2, 1, 20, 9);
        let mut fast = Buffer::filled(Rect::new(0, 0, 24, 11), ratatui::buffer::Cell::new("·"));
        let mut para = fast.clone();
        render_rows(&lines, area, &mut fast);
        Paragraph::new(lines).render(area, &mut para);
        assert_eq!(fast, para);
    }

    #[test]
    fn a_fitted_cell_draws_the_cells_of_its_fitted_string() {
        use ratatui::buffer::Buffer;
        use ratatui::style::{Color, Modifier};
        let style = Style::default().fg(Color::Red).add_modifier(Modifier::BOLD);
        let long = "x".repeat(300);
        let texts = [
            "tenant-a",
            "restore-test",
            "",
            "テナント名前",
            "a\tb\u{1b}[31m",
            "e\u{301}x",
            "\u{202e}evil",
            "✓ done",
            "▶ copy-data-of-a-long-step · – ✗",
            long.as_str(),
        ];
        for text in texts {
            for w in [0, 1, 5, 8, 12, 40, 260] {
                for right in [false, true] {
                    let area = Rect::new(0, 0, 270, 1);
                    let mut spans = Vec::new();
                    fitted(&mut spans, text, w, right, style);
                    let mut ours = Buffer::empty(area);
                    render_rows(&[Line::from(spans)], area, &mut ours);
                    let mut want = Buffer::empty(area);
                    Paragraph::new(Span::styled(format::fit(text, w, right), style))
                        .render(area, &mut want);
                    assert_eq!(ours, want, "{text:?} in {w} cells, right: {right}");
                    // What a table row writes for the cell, straight into the buffer.
                    let mut direct = Buffer::empty(area);
                    LineWriter::new(&mut direct, area, 0, Style::default())
                        .fitted(text, w, right, style);
                    assert_eq!(direct, want, "{text:?} in {w} cells, right: {right}");
                }
            }
        }
    }

    #[test]
    fn a_tables_frame_is_drawn_cell_for_cell_as_its_block_draws_it() {
        use ratatui::buffer::Buffer;
        let theme = Theme::builtin(true);
        let base = Buffer::filled(Rect::new(0, 0, 30, 8), ratatui::buffer::Cell::new("x"));
        let titles = [
            ("restores", Some(12), ""),
            ("restores", Some(3), "tenant"),
            // Wider than the frame, wide characters at its edge.
            ("テナントの復元一覧テナントの復元一覧", None, "フィルタ"),
            ("", None, ""),
        ];
        let areas = [
            Rect::new(0, 0, 30, 8),
            Rect::new(2, 1, 20, 5),
            Rect::new(5, 2, 2, 2),
            Rect::new(5, 2, 3, 1),
            Rect::new(5, 2, 1, 4),
            Rect::new(0, 0, 0, 0),
            // Partly outside the buffer: cut to it.
            Rect::new(20, 4, 20, 10),
        ];
        for (title, count, filter) in titles {
            for area in areas {
                for focused in [true, false] {
                    let mut ours = base.clone();
                    let line = block_title(&theme, title, count, filter, focused);
                    draw_bordered(&mut ours, area, &line, theme.border(focused));
                    let mut want = base.clone();
                    block(&theme, title, count, filter, focused).render(area, &mut want);
                    assert_eq!(ours, want, "{title:?} {filter:?} in {area:?}");
                }
            }
        }
    }

    #[test]
    fn the_widest_cell_of_each_column_is_measured_on_screen_not_in_bytes() {
        let rows = [
            row(&["tenant-a", "vm-disk"]),
            // Six characters of two columns each: 12 wide, 18 bytes.
            row(&["テナント名前", "x"]),
            // A row with a cell more than the others.
            row(&["b", "y", "extra-cell"]),
        ];
        assert_eq!(widest_cells(&rows), vec![12, 7, 10]);
        assert!(widest_cells(&[]).is_empty());
    }
}
