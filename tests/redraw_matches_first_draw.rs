//! The dashboard keeps what it drew (the restores list's order and rows, `ui::list_memo`) and
//! redoes only what a change touches: whatever the operator does and whatever frames arrive,
//! each screen it draws is, cell for cell and style for style, the screen a dashboard that
//! never drew before draws after the same steps.

mod common;

use common::draw;
use common::ui_data;
use crossterm::event::{KeyCode, KeyModifiers};
use restorewatch::cluster::{KindHealth, SyncState};
use restorewatch::model::Kind;
use restorewatch::pipeline::frame::Frame;
use restorewatch::ui::app::Screen;
use restorewatch::ui::theme::Theme;
use restorewatch::ui::{App, Msg, Painter, UiOptions, update, view};
use std::sync::Arc;

#[derive(Clone, Debug)]
enum Step {
    Key(KeyCode, KeyModifiers),
    Frame(Arc<Frame>),
    Tick(jiff::Timestamp),
    Resize(u16, u16),
}

/// An app in colour: the cursor row and the severities differ by style, not only by text.
fn app() -> App {
    let opts = UiOptions {
        theme: Theme::builtin(true),
        ..ui_data::options()
    };
    let mut a = App::new(opts, ui_data::now(), (160, 20));
    update(&mut a, Msg::Frame(Some(ui_data::frame(1))));
    a
}

/// `shown`'s report over a snapshot whose RestoreJobs' watch has been resyncing for `minutes`.
fn stale_since(seq: u64, shown: &Frame, minutes: i64) -> Arc<Frame> {
    let mut s = ui_data::snapshot();
    s.health.insert(
        Kind::RestoreJob,
        KindHealth {
            state: SyncState::Resyncing {
                since: ui_data::ago(minutes),
                error: "watch stream closed".into(),
            },
            last_event: Some(ui_data::ago(minutes)),
        },
    );
    ui_data::frame_with(seq, s, (*shown.report).clone())
}

fn apply(app: &mut App, step: &Step) {
    match step {
        Step::Key(code, m) => common::press_mod(app, *code, *m),
        Step::Frame(f) => update(app, Msg::Frame(Some(Arc::clone(f)))),
        Step::Tick(t) => update(app, Msg::Tick(*t)),
        Step::Resize(w, h) => update(app, Msg::Resize(*w, *h)),
    }
}

/// The first test's walk from `shown` (the app's first frame): cursor, frames whose findings
/// or application names change, the clock, sort, filter, resize, the findings screen, stale data.
fn first_walk(shown: &Arc<Frame>) -> Vec<Step> {
    let key = |c: char| Step::Key(KeyCode::Char(c), KeyModifiers::NONE);
    let shift = |c: char| Step::Key(KeyCode::Char(c), KeyModifiers::SHIFT);
    let special = |c: KeyCode| Step::Key(c, KeyModifiers::NONE);
    let next = ui_data::frame_with(
        2,
        ui_data::snapshot(),
        ui_data::without_findings_of(&shown.report, "restore-test"),
    );
    let mut steps = vec![
        // The cursor moves: the row it leaves and the one it lands on change style only.
        key('j'),
        key('j'),
        key('k'),
        key('G'),
        key('g'),
        // A restore's findings change; the other rows are what they were.
        Step::Frame(Arc::clone(&next)),
        // A restore's application gets a longer name than any other: its row alone is built
        // again, and its column widens for every row. Then the name is short again, and the
        // column narrows back.
        Step::Frame(ui_data::frame_with(
            6,
            ui_data::snapshot(),
            ui_data::with_app_of(&next.report, "restore-web", "web-frontend-with-a-long-name"),
        )),
        Step::Frame(ui_data::frame_with(
            7,
            ui_data::snapshot(),
            ui_data::with_app_of(&next.report, "restore-web", "web"),
        )),
        // The clock moves: the age cells change, the rest of each row does not.
        Step::Tick(ui_data::now() + jiff::SignedDuration::from_secs(61)),
        Step::Tick(ui_data::now() + jiff::SignedDuration::from_hours(24)),
        // Sorted: the same rows at other places.
        shift('N'),
        shift('N'),
        // Filtered: fewer rows, the ones left move up.
        key('/'),
        key('p'),
        key('g'),
        special(KeyCode::Enter),
        special(KeyCode::Esc),
        // Narrower and back: other columns, other widths.
        Step::Resize(100, 20),
        Step::Resize(160, 20),
        // The findings screen's table, a row down, and back.
        key(':'),
    ];
    steps.extend("findings".chars().map(key));
    steps.extend([
        special(KeyCode::Enter),
        key('j'),
        special(KeyCode::Esc),
        // The first frame again.
        Step::Frame(ui_data::frame(3)),
        // The same restores, stale: every row is built again, in the stale style.
        Step::Frame(stale_since(4, shown, 3)),
        // Stale since another instant, at the same clock: the rows are the same ones, their
        // "stale 1d0h" cells are not (the clock moved a day above).
        Step::Frame(stale_since(5, shown, 3 * 24 * 60)),
    ]);
    steps
}

#[test]
fn every_screen_a_running_dashboard_draws_is_the_one_a_new_dashboard_draws() {
    let mut live = app();
    let shown = live.shown.clone().expect("a frame");
    let steps = first_walk(&shown);
    let mut done = Vec::new();
    let (mut filtered, mut findings) = (false, false);
    let _ = draw(&live);
    for step in steps {
        apply(&mut live, &step);
        done.push(step);
        filtered |= restorewatch::ui::select::restores(&live).len() == 1;
        findings |= live.screen == Screen::Findings;
        let got = draw(&live);
        // A new dashboard remembers nothing: every row there is built and drawn.
        let mut fresh = app();
        for s in &done {
            apply(&mut fresh, s);
        }
        let first = draw(&fresh);
        assert_eq!(got, first, "after {:?}", done.last());
    }
    // The keys did reach the screens they are meant to.
    assert!(filtered, "the filter never narrowed the list");
    assert!(findings, "the findings screen never opened");
}

/// The frame a new one replaces is let go after the new one is drawn, not while it is drawn
/// (freeing a report walks every restore and finding it held, on the way to the screen), and
/// frames that never got drawn are not kept without bound.
#[test]
fn the_frame_before_is_let_go_once_the_next_is_drawn() {
    let mut live = app();
    let _ = draw(&live);
    let first = Arc::downgrade(live.shown.as_ref().expect("a frame"));
    update(&mut live, Msg::Frame(Some(ui_data::frame(2))));
    let _ = draw(&live);
    assert!(first.upgrade().is_some(), "let go during the draw");
    live.release_retired();
    assert!(first.upgrade().is_none(), "still held after the draw");

    let undrawn: Vec<_> = (10..30)
        .map(|seq| {
            let f = ui_data::frame(seq);
            let weak = Arc::downgrade(&f);
            update(&mut live, Msg::Frame(Some(f)));
            weak
        })
        .collect();
    let held = undrawn.iter().filter(|w| w.upgrade().is_some()).count();
    // The newest (shown) and the few retired before it, not all twenty.
    assert!((2..=6).contains(&held), "{held} of 20 frames held");
}

type TestTerminal = ratatui::Terminal<ratatui::backend::TestBackend>;

/// Two terminals of `app`'s size that have shown `app` once: one drawn by the painter, one by
/// ratatui's own `Terminal::draw` of the whole screen.
fn painted(app: &App) -> (TestTerminal, Painter, TestTerminal) {
    let (w, h) = app.size;
    let new = || TestTerminal::new(ratatui::backend::TestBackend::new(w, h)).expect("terminal");
    let (mut term, mut whole) = (new(), new());
    let mut painter = Painter::new();
    painter.paint(&mut term, app).expect("first paint");
    whole.draw(|f| view(app, f)).expect("first draw");
    (term, painter, whole)
}

/// `step` applied to the app and, for a resize, to both terminals; then the app is painted on
/// one and drawn whole by ratatui on the other. Each terminal has only seen what it was sent
/// (a `TestBackend` keeps every cell it is not sent), so the two agree cell for cell only if the
/// painter sent every cell that changed on the screen. (What the whole draw shows is the
/// screen a new dashboard draws: the first test.)
fn paint_step(
    live: &mut App,
    (term, painter, whole): &mut (TestTerminal, Painter, TestTerminal),
    step: &Step,
) {
    apply(live, step);
    if let Step::Resize(w, h) = step {
        term.backend_mut().resize(*w, *h);
        whole.backend_mut().resize(*w, *h);
    }
    painter.paint(term, live).expect("paint");
    whole.draw(|f| view(live, f)).expect("draw");
    assert_eq!(
        term.backend().buffer(),
        whole.backend().buffer(),
        "the terminal after {step:?}"
    );
}

/// The dashboard draws only the rows that changed over what the terminal shows
/// (`ui::Painter`): after every step of the first test, with dialogs and help opened and closed
/// on the way, the terminal shows, cell for cell, the screen a whole draw shows.
#[test]
fn the_terminal_painted_with_changes_only_shows_the_whole_screen() {
    let key = |c: char| Step::Key(KeyCode::Char(c), KeyModifiers::NONE);
    let special = |c: KeyCode| Step::Key(c, KeyModifiers::NONE);
    let mut live = app();
    let shown = live.shown.clone().expect("a frame");
    let mut t = painted(&live);
    let mut steps = vec![
        // Nothing changed: nothing to draw but the header and the status line.
        Step::Frame(ui_data::frame(1)),
        Step::Tick(ui_data::now()),
    ];
    steps.extend(first_walk(&shown));
    steps.extend([
        // Back on the list: the help screen over it and back, a dialog and back.
        special(KeyCode::Esc),
        key('?'),
        special(KeyCode::Esc),
        key('a'),
        Step::Frame(ui_data::frame(8)),
        special(KeyCode::Esc),
        Step::Frame(ui_data::frame(9)),
        key('j'),
        key('G'),
        key('g'),
    ]);
    for step in &steps {
        paint_step(&mut live, &mut t, step);
    }
    // Most of those frames were drawn as changes only, not whole.
    assert!(
        t.1.painted_changes() >= 12,
        "only {} of {} frames drawn as changes",
        t.1.painted_changes(),
        steps.len()
    );
}

/// The same over a long walk of steps picked at random (a fixed seed) among frames whose rows
/// differ, cursor moves, sorting, filtering, dialogs, help, ticks and resizes.
#[test]
fn a_long_random_walk_painted_with_changes_only_shows_the_whole_screen_each_time() {
    let key = |c: char| Step::Key(KeyCode::Char(c), KeyModifiers::NONE);
    let special = |c: KeyCode| Step::Key(c, KeyModifiers::NONE);
    let mut live = app();
    let shown = live.shown.clone().expect("a frame");
    let base = ui_data::without_findings_of(&shown.report, "restore-test");
    let frames = [
        ui_data::frame(1),
        ui_data::frame_with(2, ui_data::snapshot(), base.clone()),
        ui_data::frame_with(
            3,
            ui_data::snapshot(),
            ui_data::with_app_of(&base, "restore-web", "web-frontend-with-a-long-name"),
        ),
        ui_data::frame_with(
            4,
            ui_data::snapshot(),
            ui_data::with_app_of(&shown.report, "restore-test", "a\u{1b}[2Jvm"),
        ),
        // Two cells a character, and a cut that falls inside one.
        ui_data::frame_with(
            6,
            ui_data::snapshot(),
            ui_data::with_app_of(
                &shown.report,
                "restore-web",
                "データベース-web-フロントエンド-本番",
            ),
        ),
        stale_since(5, &shown, 3),
    ];
    let choices: Vec<Step> = vec![
        key('j'),
        key('k'),
        key('G'),
        key('g'),
        Step::Key(KeyCode::Char('N'), KeyModifiers::SHIFT),
        Step::Key(KeyCode::Char('A'), KeyModifiers::SHIFT),
        key('/'),
        key('w'),
        special(KeyCode::Enter),
        // Help, a dialog and the filter line are left as often as they are opened.
        special(KeyCode::Esc),
        special(KeyCode::Esc),
        special(KeyCode::Esc),
        key('?'),
        key('a'),
        Step::Tick(ui_data::now() + jiff::SignedDuration::from_secs(61)),
        Step::Tick(ui_data::now() + jiff::SignedDuration::from_hours(3)),
        Step::Resize(120, 14),
        Step::Resize(160, 20),
        Step::Resize(160, 20),
        Step::Resize(160, 20),
        // Tiny: the table's frame rows fall on the status line, or there is no body at all.
        Step::Resize(30, 5),
        Step::Resize(20, 3),
        Step::Resize(10, 2),
        Step::Resize(1, 1),
    ];
    let mut t = painted(&live);
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let n = 400;
    for _ in 0..n {
        let r = next();
        let step = if r % 3 == 0 {
            let f = &frames[(r / 3) as usize % frames.len()];
            Step::Frame(Arc::clone(f))
        } else {
            choices[(r / 3) as usize % choices.len()].clone()
        };
        paint_step(&mut live, &mut t, &step);
    }
    assert!(
        t.1.painted_changes() > n / 4,
        "only {} of {n} frames drawn as changes",
        t.1.painted_changes()
    );
}

/// The screen written by someone else (a paint that failed half-way leaves it so too): once
/// told, the painter clears it and draws it whole, rather than drawing changes over cells it no
/// longer knows.
#[test]
fn a_screen_written_by_someone_else_is_cleared_and_drawn_whole_once_the_painter_is_told() {
    let mut live = app();
    let (mut term, mut painter, _) = painted(&live);
    update(
        &mut live,
        Msg::Tick(ui_data::now() + jiff::SignedDuration::from_secs(61)),
    );
    painter.paint(&mut term, &live).expect("paint");
    let drawn_as_changes = painter.painted_changes();
    assert!(drawn_as_changes >= 1, "the tick was not drawn as changes");
    // Someone else writes over the rows.
    let junk = ratatui::buffer::Cell::new("#");
    let cells: Vec<(u16, u16, &ratatui::buffer::Cell)> =
        (0..live.size.1).map(|y| (5, y, &junk)).collect();
    ratatui::backend::Backend::draw(term.backend_mut(), cells.into_iter()).expect("junk");
    painter.forget();
    painter.paint(&mut term, &live).expect("paint");
    assert_eq!(
        painter.painted_changes(),
        drawn_as_changes,
        "drawn as changes"
    );
    assert_eq!(term.backend().buffer(), &draw(&live));
}
