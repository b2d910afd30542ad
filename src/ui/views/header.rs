//! The header: where the data comes from, the namespace scope, how healthy each kind's watch
//! is, how long since anything changed, the clock, and the frozen badge.

use super::super::app::App;
use super::super::format;
use super::common::{self, error_code, kind_abbrev, source_label};
use crate::cluster::SyncState;
use jiff::Timestamp;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

/// The newest change the data shows: a watch event or a change in a restore's objects.
pub fn last_change(app: &App) -> Option<Timestamp> {
    let frame = app.shown.as_ref()?;
    let watch = frame.snapshot.health.values().filter_map(|h| h.last_event);
    let restores = frame.report.restores.iter().filter_map(|r| r.last_change);
    watch.chain(restores).max()
}

/// The source label is never cut below this many columns.
const MIN_SOURCE: usize = 24;

pub fn draw(f: &mut Frame, app: &App, area: Rect) {
    if area.height == 0 {
        return;
    }
    let t = app.theme();
    let mut right = Vec::new();
    if app.frozen {
        right.push(Span::styled(
            format!(" FROZEN (+{} changes) ", app.changes_waiting()),
            t.frozen(),
        ));
        right.push(Span::raw(" "));
    }
    right.push(Span::styled(format::clock(app.now, &app.opts.tz), t.text()));
    let right = Line::from(right);
    let right_w = right.width() as u16;

    let ns = app.namespace.as_deref().unwrap_or("all");
    let mut left = vec![
        Span::styled("restorewatch", t.logo()),
        Span::styled(" │ ", t.text_dim()),
    ];
    let mut rest = Vec::new();
    if let Some(next) = &app.switching {
        rest.push(Span::styled(
            format!(" → connecting to {next}…"),
            t.text_warning(),
        ));
    }
    rest.extend([
        Span::styled(" │ ", t.text_dim()),
        Span::styled(format!("ns: {ns}"), t.text()),
    ]);
    if app.opts.readonly {
        rest.push(Span::styled(" │ ", t.text_dim()));
        rest.push(Span::styled("read-only", t.text_dim()));
    }
    if let Some(changed) = last_change(app) {
        rest.push(Span::styled(" │ ", t.text_dim()));
        rest.push(Span::styled(
            format!("changed {} ago", format::age_since(app.now, Some(changed))),
            t.text(),
        ));
    }
    let left_w = area.width.saturating_sub(right_w + 1);
    // The source gives way first: a long context or demo label must not push the namespace,
    // the last change and the controller's generation off the line (the shortest controller
    // form, "controller: unknown", is kept room for).
    let controller_room = if app.shown.is_some() {
        " │ controller: unknown".chars().count()
    } else {
        0
    };
    let keep =
        Line::from(left.clone()).width() + Line::from(rest.clone()).width() + controller_room;
    let source = source_label(app);
    let room = usize::from(left_w).saturating_sub(keep).max(MIN_SOURCE);
    left.push(Span::styled(
        format::truncate(&source, room).into_owned(),
        t.text(),
    ));
    left.extend(rest);
    if let Some(frame) = &app.shown {
        left.push(Span::styled(" │ ", t.text_dim()));
        let room = usize::from(left_w).saturating_sub(Line::from(left.clone()).width());
        left.push(controller_span(app, &frame.report.controller, room));
    }
    common::draw_lines(f, &[Line::from(left)], Rect::new(area.x, area.y, left_w, 1));
    if area.width > right_w {
        common::draw_lines(
            f,
            &[right],
            Rect::new(area.x + area.width - right_w, area.y, right_w, 1),
        );
    }
    if area.height >= 2 {
        common::draw_lines(
            f,
            &[health_line(app)],
            Rect::new(area.x, area.y + 1, area.width, 1),
        );
    }
}

/// `controller: guarded (evidence: …)`: what a taken `-orig` name leads to depends on it. The
/// longest form that fits in `room` columns: the evidence goes first, the verdict last.
fn controller_span(
    app: &App,
    g: &crate::analysis::controller::ControllerGeneration,
    room: usize,
) -> Span<'static> {
    use crate::analysis::controller::Generation;
    let t = app.theme();
    let style = match g.generation {
        Generation::Guarded => t.text_ok(),
        Generation::Unguarded => t.text_warning(),
        Generation::Unknown => t.text_dim(),
    };
    let verdict = g.generation.as_str();
    let forms = [
        format!("controller: {}", g.summary()),
        format!("controller: {verdict}"),
        format!("ctl: {verdict}"),
    ];
    let start = usize::from(g.generation == Generation::Unknown);
    let text = forms[start..]
        .iter()
        .find(|f| f.chars().count() <= room)
        .unwrap_or(&forms[2])
        .clone();
    Span::styled(crate::text::one_line_owned(text), style)
}

/// `PVC✓ PV✓ DV✗403 VMI…`: troubles first, so a narrow terminal still shows them.
fn health_line(app: &App) -> Line<'static> {
    let t = app.theme();
    let Some(frame) = &app.shown else {
        return Line::styled("waiting for the first sync…", t.text_dim());
    };
    let health = &frame.snapshot.health;
    if health.is_empty() || health.values().all(|h| h.state == SyncState::FromFile) {
        let n = frame.snapshot.objects.total();
        return Line::styled(
            format!("{n} objects read from files; nothing is watched"),
            t.text_dim(),
        );
    }
    let mut bad = Vec::new();
    let mut good = Vec::new();
    let mut absent = Vec::new();
    for (k, h) in health {
        let name = kind_abbrev(*k);
        match &h.state {
            SyncState::Synced | SyncState::FromFile => {
                good.push(Span::styled(format!("{name}✓"), t.text_ok()));
            }
            SyncState::Syncing => bad.push(Span::styled(format!("{name}…"), t.text_dim())),
            SyncState::Resyncing { since, .. } => bad.push(Span::styled(
                format!("{name}↻{}", format::age_since(app.now, Some(*since))),
                t.text_warning(),
            )),
            SyncState::Failed { since, error } => {
                let why = error_code(error)
                    .map(str::to_string)
                    .unwrap_or_else(|| format::age_since(app.now, Some(*since)));
                bad.push(Span::styled(format!("{name}✗{why}"), t.text_danger()));
            }
            SyncState::Forbidden { .. } => {
                bad.push(Span::styled(format!("{name}✗403"), t.text_danger()));
            }
            SyncState::NotInstalled => absent.push(name),
        }
    }
    let mut spans = Vec::new();
    for s in bad.into_iter().chain(good) {
        spans.push(s);
        spans.push(Span::raw(" "));
    }
    if !absent.is_empty() {
        spans.push(Span::styled(
            format!("not installed: {}", absent.join(" ")),
            t.text_dim(),
        ));
    }
    Line::from(spans)
}
