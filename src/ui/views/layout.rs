//! Where everything goes, as pure functions of the state and the terminal size. The view draws
//! into these rectangles and `update` hit-tests mouse clicks and sizes pages with the very same
//! functions, so a click always lands on the row that is drawn there.

use super::super::app::{App, Pane, Screen};
use super::super::select;
use super::common;
use ratatui::layout::Rect;

pub struct Areas {
    pub header: Rect,
    pub body: Rect,
    pub status: Rect,
}

pub fn areas(area: Rect) -> Areas {
    let header_h = if area.height >= 8 {
        2
    } else {
        area.height.min(1)
    };
    let status_h = u16::from(area.height >= 3);
    let body_h = area.height.saturating_sub(header_h + status_h);
    Areas {
        header: Rect::new(area.x, area.y, area.width, header_h),
        body: Rect::new(area.x, area.y + header_h, area.width, body_h),
        status: Rect::new(area.x, area.y + header_h + body_h, area.width, status_h),
    }
}

pub fn screen_area(app: &App) -> Rect {
    Rect::new(0, 0, app.size.0, app.size.1)
}

/// Inside a bordered block.
pub fn inner(r: Rect) -> Rect {
    Rect::new(
        r.x.saturating_add(1),
        r.y.saturating_add(1),
        r.width.saturating_sub(2),
        r.height.saturating_sub(2),
    )
}

fn take_top(r: &mut Rect, h: u16) -> Rect {
    let h = h.min(r.height);
    let top = Rect::new(r.x, r.y, r.width, h);
    r.y += h;
    r.height -= h;
    top
}

fn take_bottom(r: &mut Rect, h: u16) -> Rect {
    let h = h.min(r.height);
    r.height -= h;
    Rect::new(r.x, r.y + r.height, r.width, h)
}

/// A table screen: its bordered block, an optional warning line about the data, the column
/// titles, the rows, and an optional box describing the selected row.
pub struct TableAreas {
    pub block: Rect,
    pub banner: Option<Rect>,
    pub columns: Rect,
    pub rows: Rect,
    pub extra: Option<Rect>,
}

/// Height of the box under the findings and `-orig` tables that explains the selected row.
const EXTRA_H: u16 = 7;

pub fn table_areas(app: &App, body: Rect) -> TableAreas {
    let mut block = body;
    let wants_extra = matches!(app.screen, Screen::Findings | Screen::Orig);
    // The -orig box has one line more: what proves (or not) the restored copy.
    let extra_h = EXTRA_H + u16::from(matches!(app.screen, Screen::Orig));
    let extra = (wants_extra && body.height >= 16).then(|| take_bottom(&mut block, extra_h));
    let mut inside = inner(block);
    let banner = common::table_banner(app)
        .is_some()
        .then(|| take_top(&mut inside, 1));
    let columns = take_top(&mut inside, 1);
    TableAreas {
        block,
        banner,
        columns,
        rows: inside,
        extra,
    }
}

pub struct DetailAreas {
    pub summary: Rect,
    pub tabs: Rect,
    pub pane: Rect,
    /// The selected finding's remedy under the findings pane; the selected entry in full
    /// under the history.
    pub extra: Option<Rect>,
    /// Under the step timeline: the restore's findings in full.
    pub findings: Option<Rect>,
}

/// The fewest timeline rows kept when the findings need the space.
const MIN_STEP_ROWS: u16 = 3;

pub fn detail_areas(app: &App, body: Rect) -> DetailAreas {
    let mut inside = inner(body);
    let summary_h = match inside.height {
        0..8 => 1,
        8..14 => 2,
        _ => 3,
    };
    let summary = take_top(&mut inside, summary_h);
    let tabs = take_top(&mut inside, 1);
    let boxed = matches!(&app.screen, Screen::Detail(d) if matches!(d.pane, Pane::Findings | Pane::History));
    let extra = (boxed && inside.height >= 10).then(|| take_bottom(&mut inside, 5));
    // The steps pane shares the screen with the findings: the timeline takes what it needs
    // when both fit; else the findings come first and the timeline scrolls, keeping a few rows.
    let mut findings = None;
    if let Screen::Detail(d) = &app.screen
        && d.pane == Pane::Steps
        && let Some(r) = select::detail(app, &d.id)
    {
        let cards = super::overview::finding_cards(app, r, inside.width).len() as u16;
        let steps = (r.steps.len() as u16).max(1);
        // One blank row between the two.
        let steps_h = if steps + 1 + cards <= inside.height {
            steps
        } else {
            inside
                .height
                .saturating_sub(cards + 1)
                .max(MIN_STEP_ROWS.min(steps))
        };
        let pane = take_top(&mut inside, steps_h);
        take_top(&mut inside, 1);
        findings = Some(inside);
        inside = pane;
    }
    DetailAreas {
        summary,
        tabs,
        pane: inside,
        extra,
        findings,
    }
}

/// The rectangle the current screen's rows are drawn in.
pub fn rows_area(app: &App) -> Rect {
    let body = areas(screen_area(app)).body;
    match &app.screen {
        Screen::Restores | Screen::Findings | Screen::Orig | Screen::Events | Screen::Backups => {
            table_areas(app, body).rows
        }
        Screen::Detail(_) => detail_areas(app, body).pane,
        Screen::Yaml(_) | Screen::Help { .. } | Screen::Preflight(_) => inner(body),
    }
}

pub fn rows_height(app: &App) -> usize {
    usize::from(rows_area(app).height)
}

/// The list index drawn at a screen position, if any.
pub fn row_at(app: &App, column: u16, row: u16) -> Option<usize> {
    let r = rows_area(app);
    if column < r.x || column >= r.x + r.width || row < r.y || row >= r.y + r.height {
        return None;
    }
    let len = select::table_len(app);
    let h = usize::from(r.height);
    let sel = match &app.screen {
        Screen::Detail(d) => d.sel[d.pane.index()],
        s => app.list_selection(s.kind()),
    };
    Some(sel.visible(len, h).offset + usize::from(row - r.y))
}

/// The detail pane whose tab title is at a screen position.
pub fn pane_tab_at(app: &App, column: u16, row: u16) -> Option<Pane> {
    let Screen::Detail(d) = &app.screen else {
        return None;
    };
    let tabs = detail_areas(app, areas(screen_area(app)).body).tabs;
    if row != tabs.y || tabs.height == 0 {
        return None;
    }
    let r = select::detail(app, &d.id)?;
    let mut x = tabs.x;
    for (pane, label) in common::pane_tabs(app, r) {
        let w = super::super::format::width(&label) as u16;
        if column >= x && column < x + w {
            return Some(pane);
        }
        x += w + common::TAB_SEP_WIDTH;
    }
    None
}
