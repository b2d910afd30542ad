//! Keys in, state out: what an operator relies on when driving the dashboard.

mod common;

use common::ui_data::{self, app};
use common::{press, press_mod, render, typ};
use crossterm::event::{KeyCode, KeyModifiers};
use restorewatch::analysis::RestoreId;
use restorewatch::cluster::{KindHealth, SyncState};
use restorewatch::model::Kind;
use restorewatch::ui::app::{Mode, Pane, Screen};
use restorewatch::ui::keys::ScreenKind;
use restorewatch::ui::{Msg, select, update};

fn selected_restore(a: &restorewatch::ui::App) -> String {
    let i = a.list_selection(ScreenKind::Restores).selected;
    select::restores(a)[i].id.name.clone()
}

#[test]
fn j_k_g_and_big_g_move_the_cursor_within_bounds() {
    let mut a = app(120, 40);
    assert_eq!(selected_restore(&a), "restore-test");
    press(&mut a, KeyCode::Char('j'));
    assert_eq!(selected_restore(&a), "pg-restore");
    press(&mut a, KeyCode::Char('G'));
    assert_eq!(selected_restore(&a), "restore-web");
    press(&mut a, KeyCode::Down);
    assert_eq!(
        selected_restore(&a),
        "restore-web",
        "no moving past the end"
    );
    press(&mut a, KeyCode::Char('g'));
    assert_eq!(selected_restore(&a), "restore-test");
    press(&mut a, KeyCode::Up);
    assert_eq!(
        selected_restore(&a),
        "restore-test",
        "no moving before the start"
    );
    press(&mut a, KeyCode::PageDown);
    assert_eq!(selected_restore(&a), "restore-web");
}

#[test]
fn enter_opens_the_selected_restore_and_esc_goes_back() {
    let mut a = app(120, 40);
    press(&mut a, KeyCode::Char('j'));
    press(&mut a, KeyCode::Enter);
    match &a.screen {
        Screen::Detail(d) => assert_eq!(d.id.name, "pg-restore"),
        s => panic!("expected the detail, got {s:?}"),
    }
    press(&mut a, KeyCode::Esc);
    assert_eq!(a.screen, Screen::Restores);
    // The cursor is where it was.
    assert_eq!(selected_restore(&a), "pg-restore");
}

#[test]
fn tab_cycles_the_detail_panes() {
    let mut a = app(120, 40);
    press(&mut a, KeyCode::Enter);
    let pane = |a: &restorewatch::ui::App| match &a.screen {
        Screen::Detail(d) => d.pane,
        _ => panic!("not in the detail"),
    };
    assert_eq!(pane(&a), Pane::Steps);
    press(&mut a, KeyCode::Tab);
    assert_eq!(pane(&a), Pane::Disks);
    press(&mut a, KeyCode::BackTab);
    press(&mut a, KeyCode::BackTab);
    assert_eq!(pane(&a), Pane::History);
    press(&mut a, KeyCode::BackTab);
    assert_eq!(pane(&a), Pane::Findings);
}

#[test]
fn h_opens_a_restore_on_its_history_at_the_newest_line_and_y_shows_its_object() {
    let mut a = app(120, 40);
    press(&mut a, KeyCode::Char('j'));
    press(&mut a, KeyCode::Char('h'));
    let Screen::Detail(d) = &a.screen else {
        panic!("h opens the restore");
    };
    assert_eq!(d.id.name, "pg-restore");
    assert_eq!(d.pane, Pane::History);
    let len = common::ui_data::pg_history().len();
    assert_eq!(d.sel[Pane::History.index()].selected, len - 1, "newest");
    // Up to the Cluster's serverName revert: y opens that Cluster, not the RestoreJob.
    for _ in 0..3 {
        press(&mut a, KeyCode::Char('k'));
    }
    press(&mut a, KeyCode::Char('y'));
    let Screen::Yaml(y) = &a.screen else {
        panic!("y opens the YAML view");
    };
    assert_eq!(y.target.to_string(), "Cluster/tenant-b/postgres-orders");
    // In a restore, h goes to its history from any pane.
    press(&mut a, KeyCode::Esc);
    press(&mut a, KeyCode::Tab);
    press(&mut a, KeyCode::Char('h'));
    assert!(matches!(&a.screen, Screen::Detail(d) if d.pane == Pane::History));
}

#[test]
fn filter_narrows_live_ignores_case_and_esc_clears() {
    let mut a = app(120, 40);
    press(&mut a, KeyCode::Char('/'));
    assert_eq!(a.mode, Mode::Filter);
    typ(&mut a, "PG");
    assert_eq!(select::restores(&a).len(), 1);
    assert_eq!(selected_restore(&a), "pg-restore");
    press(&mut a, KeyCode::Enter);
    assert_eq!(a.mode, Mode::Normal);
    assert_eq!(select::restores(&a).len(), 1, "enter keeps the filter");
    // Keys act again in normal mode, on the filtered rows.
    press(&mut a, KeyCode::Enter);
    assert!(matches!(&a.screen, Screen::Detail(d) if d.id.name == "pg-restore"));
    press(&mut a, KeyCode::Esc);
    press(&mut a, KeyCode::Esc);
    assert_eq!(select::restores(&a).len(), 3, "esc clears the filter first");
    assert_eq!(a.screen, Screen::Restores);
    press(&mut a, KeyCode::Char('/'));
    typ(&mut a, "zzz");
    assert!(render(&a).contains("No restores match /zzz"));
    press(&mut a, KeyCode::Esc);
    assert_eq!(select::restores(&a).len(), 3);
}

#[test]
fn command_line_completes_and_switches_screens() {
    let mut a = app(120, 40);
    press(&mut a, KeyCode::Char(':'));
    typ(&mut a, "fi");
    press(&mut a, KeyCode::Tab);
    assert!(matches!(&a.mode, Mode::Command(cl) if cl.text == "findings"));
    press(&mut a, KeyCode::Enter);
    assert_eq!(a.screen, Screen::Findings);
    // Namespaces complete from the data and Tab cycles through them.
    press(&mut a, KeyCode::Char(':'));
    typ(&mut a, "ns tenant-");
    press(&mut a, KeyCode::Tab);
    assert!(matches!(&a.mode, Mode::Command(cl) if cl.text == "ns tenant-a"));
    press(&mut a, KeyCode::Tab);
    assert!(matches!(&a.mode, Mode::Command(cl) if cl.text == "ns tenant-b"));
    press(&mut a, KeyCode::Enter);
    assert_eq!(a.namespace.as_deref(), Some("tenant-b"));
    assert!(
        select::findings(&a)
            .iter()
            .all(|f| f.restore.as_ref().is_none_or(|r| r.namespace == "tenant-b"))
    );
    press(&mut a, KeyCode::Char(':'));
    typ(&mut a, "ns all");
    press(&mut a, KeyCode::Enter);
    assert_eq!(a.namespace, None);
    press(&mut a, KeyCode::Char(':'));
    typ(&mut a, "ctx staging");
    press(&mut a, KeyCode::Enter);
    let status = a
        .status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default();
    // The fixed data is not a kubeconfig context's: nothing to switch, and it says so
    // (tests/ui_context.rs switches between two emulators).
    assert!(status.contains("nothing to switch"), "{status}");
    press(&mut a, KeyCode::Char(':'));
    typ(&mut a, "bogus");
    press(&mut a, KeyCode::Enter);
    assert!(a.status.as_ref().is_some_and(|s| s.text.contains(":bogus")));
    press(&mut a, KeyCode::Char(':'));
    typ(&mut a, "q");
    press(&mut a, KeyCode::Enter);
    assert!(a.quit);
}

#[test]
fn freezing_counts_the_changes_waiting_and_unfreezing_catches_up() {
    let mut a = app(120, 40);
    press(&mut a, KeyCode::Char('f'));
    assert!(a.frozen);
    let mut r = ui_data::report();
    std::sync::Arc::make_mut(&mut r.restores).remove(0);
    for seq in 2..=4 {
        update(
            &mut a,
            Msg::Frame(Some(ui_data::frame_with(
                seq,
                ui_data::snapshot(),
                r.clone(),
            ))),
        );
    }
    assert_eq!(a.changes_waiting(), 3);
    assert_eq!(select::restores(&a).len(), 3, "the view stays as it was");
    assert!(render(&a).contains("FROZEN (+3 changes)"));
    press(&mut a, KeyCode::Char('f'));
    assert!(!a.frozen);
    assert_eq!(a.changes_waiting(), 0);
    assert_eq!(select::restores(&a).len(), 2);
    assert!(!render(&a).contains("FROZEN"));
}

#[test]
fn enter_on_a_finding_jumps_to_its_restore() {
    let mut a = app(120, 40);
    press(&mut a, KeyCode::Char(':'));
    typ(&mut a, "findings");
    press(&mut a, KeyCode::Enter);
    press(&mut a, KeyCode::Char('j'));
    press(&mut a, KeyCode::Enter);
    match &a.screen {
        Screen::Detail(d) => assert_eq!(
            d.id,
            RestoreId {
                namespace: "tenant-b".into(),
                name: "pg-restore".into()
            }
        ),
        s => panic!("expected the restore, got {s:?}"),
    }
    press(&mut a, KeyCode::Esc);
    assert_eq!(a.screen, Screen::Findings);
    // A finding about no restore says so instead of jumping somewhere.
    press(&mut a, KeyCode::Char('j'));
    press(&mut a, KeyCode::Enter);
    assert_eq!(a.screen, Screen::Findings);
    assert!(
        a.status
            .as_ref()
            .is_some_and(|s| s.text.contains("not about one restore"))
    );
}

#[test]
fn a_stale_kind_makes_rows_stale_and_says_how_old() {
    let mut a = app(120, 40);
    assert!(!render(&a).contains("stale"));
    let mut s = ui_data::snapshot();
    s.health.insert(
        Kind::RestoreJob,
        KindHealth {
            state: SyncState::Failed {
                since: ui_data::ago(5),
                error: "connection refused".into(),
            },
            last_event: None,
        },
    );
    update(
        &mut a,
        Msg::Frame(Some(ui_data::frame_with(2, s, ui_data::report()))),
    );
    let frame = a.shown.clone().expect("frame");
    assert!(
        select::restores(&a)
            .iter()
            .all(|r| select::restore_stale(&frame, r))
    );
    let screen = render(&a);
    assert!(screen.contains("stale 5m"), "{screen}");
    assert!(
        screen.contains("RestoreJob watch down since 11:55:00 (data 5m old)"),
        "{screen}"
    );
    assert!(screen.contains("RestoreJob✗5m"), "{screen}");
}

#[test]
fn y_shows_the_yaml_of_the_selection() {
    let mut a = app(120, 40);
    press(&mut a, KeyCode::Char('y'));
    match &a.screen {
        Screen::Yaml(y) => {
            let text = y.text.as_ref().expect("yaml");
            assert!(text.contains("kind: RestoreJob"), "{text}");
            assert!(text.contains("keepOriginalPVC: true"), "{text}");
        }
        s => panic!("expected yaml, got {s:?}"),
    }
    press(&mut a, KeyCode::Esc);
    // An object not in the data says so.
    press(&mut a, KeyCode::Char('j'));
    press(&mut a, KeyCode::Char('y'));
    assert!(matches!(&a.screen, Screen::Yaml(y) if y.text.is_err()));
    assert!(render(&a).contains("not in the current data"));
}

#[test]
fn mouse_click_selects_and_the_wheel_scrolls() {
    let mut a = app(120, 40);
    // Header 2 lines, border 1, column titles 1: the third row is on screen line 6.
    update(&mut a, Msg::Click { column: 10, row: 6 });
    assert_eq!(selected_restore(&a), "restore-web");
    update(
        &mut a,
        Msg::Click {
            column: 10,
            row: 30,
        },
    );
    assert_eq!(
        selected_restore(&a),
        "restore-web",
        "a click below the rows changes nothing"
    );
    update(&mut a, Msg::Scroll(-3));
    assert_eq!(selected_restore(&a), "restore-test");
    // In the detail, a click on a pane title switches to it.
    press(&mut a, KeyCode::Enter);
    let tabs_row = 2 + 1 + 3;
    update(
        &mut a,
        Msg::Click {
            column: 12,
            row: tabs_row,
        },
    );
    assert!(matches!(&a.screen, Screen::Detail(d) if d.pane == Pane::Disks));
}

#[test]
fn q_and_ctrl_c_quit_but_q_in_the_filter_is_text() {
    let mut a = app(120, 40);
    press(&mut a, KeyCode::Char('/'));
    press(&mut a, KeyCode::Char('q'));
    assert!(!a.quit);
    assert_eq!(a.filter(), "q");
    press_mod(&mut a, KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert!(a.quit);
    let mut b = app(120, 40);
    press(&mut b, KeyCode::Char('q'));
    assert!(b.quit);
}

#[test]
fn the_clock_tick_redraws_only_when_the_clock_changes() {
    let mut a = app(120, 40);
    a.dirty = false;
    update(&mut a, Msg::Tick(ui_data::now()));
    assert!(!a.dirty, "same second: nothing to draw");
    update(
        &mut a,
        Msg::Tick(ui_data::now() + jiff::SignedDuration::from_secs(1)),
    );
    assert!(a.dirty);
}

#[test]
fn help_lists_every_binding_from_the_keymap() {
    let mut a = app(120, 60);
    press(&mut a, KeyCode::Char('?'));
    let screen = render(&a);
    for b in &a.keymap().bindings {
        assert!(
            screen.contains(b.description),
            "help lacks {:?}",
            b.description
        );
    }
}

#[test]
fn resize_keeps_the_cursor_visible() {
    let mut a = app(120, 40);
    press(&mut a, KeyCode::Char('G'));
    update(&mut a, Msg::Resize(80, 6));
    let screen = render(&a);
    assert!(screen.contains("restore-web"), "{screen}");
}

#[test]
fn shift_letters_sort_the_table_and_the_same_key_again_reverses() {
    let mut a = app(120, 40);
    let names = |a: &restorewatch::ui::App| -> Vec<String> {
        select::restores(a)
            .iter()
            .map(|r| r.id.name.clone())
            .collect()
    };
    // Worst first by default: the two restores with an error, then the healthy one.
    let worst_first = ["restore-test", "pg-restore", "restore-web"];
    assert_eq!(names(&a), worst_first);
    press_mod(&mut a, KeyCode::Char('N'), KeyModifiers::SHIFT);
    assert_eq!(names(&a), ["pg-restore", "restore-test", "restore-web"]);
    assert!(render(&a).contains("NAME↑"), "the header shows the order");
    press_mod(&mut a, KeyCode::Char('N'), KeyModifiers::SHIFT);
    assert_eq!(names(&a), ["restore-web", "restore-test", "pg-restore"]);
    assert!(render(&a).contains("NAME↓"));
    // Newest first: restore-web (10m), restore-test (14m), pg-restore (26m).
    press_mod(&mut a, KeyCode::Char('A'), KeyModifiers::SHIFT);
    assert_eq!(names(&a), ["restore-web", "restore-test", "pg-restore"]);
    press_mod(&mut a, KeyCode::Char('F'), KeyModifiers::SHIFT);
    assert_eq!(names(&a), worst_first);
    assert!(render(&a).contains("FINDINGS↓"));
    // A key for a column the table does not have does nothing.
    press_mod(&mut a, KeyCode::Char('Z'), KeyModifiers::SHIFT);
    assert_eq!(names(&a), worst_first);
    // Enter opens the row under the cursor in the order shown.
    press_mod(&mut a, KeyCode::Char('N'), KeyModifiers::SHIFT);
    press_mod(&mut a, KeyCode::Char('N'), KeyModifiers::SHIFT);
    press(&mut a, KeyCode::Enter);
    match &a.screen {
        Screen::Detail(d) => assert_eq!(d.id.name, "restore-web"),
        s => panic!("expected the detail, got {s:?}"),
    }
}

#[test]
fn the_list_names_each_restores_worst_finding() {
    let a = app(120, 40);
    let s = render(&a);
    let row = |name: &str| {
        s.lines()
            .find(|l| l.contains(name))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        row("pg-restore").contains("1E 1W servername-reverted +1"),
        "{s}"
    );
    assert!(row("restore-test").contains("1E rename-half-done"), "{s}");
    assert!(!row("restore-test").contains('+'), "one finding, no +N");
}

#[test]
fn the_detail_opens_on_the_step_a_finding_is_about_with_the_findings_in_full() {
    let mut a = app(80, 24);
    press(&mut a, KeyCode::Enter);
    let Screen::Detail(d) = &a.screen else {
        panic!("not in the detail")
    };
    assert_eq!(d.pane, Pane::Steps);
    let r = select::detail(&a, &d.id).expect("restore");
    let at = d.sel[Pane::Steps.index()].selected;
    assert_eq!(r.steps[at].id.as_str(), "keep-disks");
    let s = render(&a);
    let marked = s.lines().find(|l| l.contains("!✗ keep-disks"));
    assert!(marked.is_some(), "the step is marked:\n{s}");
    for want in ["rename-half-done", "remedy", "action", "resume-rename"] {
        assert!(s.contains(want), "{want} on the first screen:\n{s}");
    }
    // The message is wrapped, not cut: its last word is on screen.
    assert!(
        s.contains("vm-disk-data\n") || s.contains(" vm-disk-data "),
        "{s}"
    );
}

/// The restores list remembers its rows between frames (the 1 s clock redraws without
/// re-formatting every restore), but a frame that changes one restore's findings redraws that
/// row, a frame that replaces a restore shows the new one, and the clock cells move on.
#[test]
fn remembered_rows_follow_every_change_of_a_frame_and_the_clock() {
    use restorewatch::analysis::Report;
    let mut app = common::ui_data::app(160, 20);
    let first = common::render(&app);
    assert!(first.contains("restore-test"), "{first}");
    // The same frame drawn again is the same screen.
    assert_eq!(common::render(&app), first);

    // Next frame: every finding of restore-test gone, the other restores shared as they were.
    let before: Report = (*app.shown.as_ref().expect("a frame").report).clone();
    let report = common::ui_data::without_findings_of(&before, "restore-test");
    let line = |screen: &str, name: &str| {
        screen
            .lines()
            .find(|l| l.contains(name))
            .map(str::to_string)
            .unwrap_or_default()
    };
    let old_line = line(&first, "restore-test");
    let other = line(&first, "pg-restore");
    assert!(!other.is_empty(), "{first}");
    let next = common::ui_data::frame_with(2, common::ui_data::snapshot(), report);
    update(&mut app, Msg::Frame(Some(next.clone())));
    let second = common::render(&app);
    // Rows taken from the frame before keep their measured widths; the columns come out as
    // wide as a dashboard that saw only this frame draws them (the badge column shrank).
    let mut fresh = common::ui_data::app(160, 20);
    update(&mut fresh, Msg::Frame(Some(next)));
    assert_eq!(second, common::render(&fresh));
    let new_line = line(&second, "restore-test");
    assert_ne!(
        new_line, old_line,
        "restore-test's row still shows its old findings"
    );
    assert!(!new_line.contains('E'), "{new_line}");
    assert_eq!(line(&second, "pg-restore"), other);

    // The clock moves a day: the AGE cells move with it although the frame did not change.
    let age_before = second.clone();
    update(
        &mut app,
        Msg::Tick(common::ui_data::now() + jiff::SignedDuration::from_hours(24)),
    );
    let third = common::render(&app);
    assert_ne!(
        line(&third, "restore-test"),
        line(&age_before, "restore-test")
    );
}

/// Only the rows on screen read the clock when it moves; a row scrolled into view afterwards
/// shows its age at the clock of that draw, not the one it was built at.
#[test]
fn a_row_scrolled_into_view_shows_its_age_at_the_current_clock() {
    // Room for one row.
    let mut app = app(160, 7);
    let names: Vec<String> = select::restores(&app)
        .iter()
        .map(|r| r.id.name.clone())
        .collect();
    assert!(names.len() >= 2, "{names:?}");
    let last = names.last().cloned().unwrap_or_default();
    let line = |screen: &str, name: &str| {
        screen
            .lines()
            .find(|l| l.split_whitespace().any(|w| w == name))
            .map(str::to_string)
    };
    let first = render(&app);
    assert!(
        line(&first, &last).is_none(),
        "{last} is off screen:\n{first}"
    );
    update(
        &mut app,
        Msg::Tick(ui_data::now() + jiff::SignedDuration::from_hours(24 * 9)),
    );
    let _ = render(&app);
    press(&mut app, KeyCode::Char('G'));
    let scrolled = render(&app);
    let row = line(&scrolled, &last).unwrap_or_else(|| panic!("{last} on screen:\n{scrolled}"));
    assert!(row.contains("9d"), "age at the moved clock: {row}");
}
