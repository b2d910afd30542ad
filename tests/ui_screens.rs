//! Every screen at 120x40 and 80x24 on fixed data, as text snapshots; plus the sizes and names
//! that must never break the drawing.

mod common;

use common::ui_data::{self, app};
use common::{press, render, typ};
use crossterm::event::KeyCode;
use restorewatch::cluster::{KindHealth, SyncState};
use restorewatch::model::Kind;
use restorewatch::ui::app::App;
use restorewatch::ui::{Msg, update};

const SIZES: [(u16, u16); 2] = [(120, 40), (80, 24)];

fn each_size(name: &str, setup: impl Fn(&mut App)) {
    for (w, h) in SIZES {
        let mut a = app(w, h);
        setup(&mut a);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), render(&a));
    }
}

fn open_restore_test(a: &mut App) {
    // restore-test is the first row.
    press(a, KeyCode::Enter);
}

#[test]
fn restores_list() {
    each_size("restores", |_| {});
}

#[test]
fn detail_steps() {
    each_size("detail_steps", open_restore_test);
}

#[test]
fn detail_disks() {
    each_size("detail_disks", |a| {
        open_restore_test(a);
        press(a, KeyCode::Tab);
    });
}

#[test]
fn detail_events() {
    each_size("detail_events", |a| {
        open_restore_test(a);
        press(a, KeyCode::Tab);
        press(a, KeyCode::Tab);
    });
}

#[test]
fn detail_findings() {
    each_size("detail_findings", |a| {
        open_restore_test(a);
        press(a, KeyCode::BackTab);
        press(a, KeyCode::BackTab);
    });
}

/// Report 003's restore, on its history: the chart's write, then the driver's revert of the
/// serverName with both values and the manager, then the WAL check failing.
#[test]
fn detail_history() {
    each_size("detail_history", |a| {
        press(a, KeyCode::Char('j'));
        press(a, KeyCode::Char('h'));
        // It opens on the newest line; three up is the revert, shown in full below.
        for _ in 0..3 {
            press(a, KeyCode::Char('k'));
        }
    });
}

/// `Tab` walks to the history too; a restore whose objects carry no managedFields (a dump
/// taken without `--show-managed-fields`) still has its Events there.
#[test]
fn detail_history_by_tab() {
    each_size("detail_history_events", |a| {
        open_restore_test(a);
        for _ in 0..4 {
            press(a, KeyCode::Tab);
        }
    });
}

#[test]
fn detail_postgres() {
    each_size("detail_postgres", |a| {
        press(a, KeyCode::Char('j'));
        press(a, KeyCode::Enter);
        press(a, KeyCode::Tab);
    });
}

/// Report 003's restore: its steps look fine, yet the two findings say what is wrong, why and
/// what to do, on the first screen.
#[test]
fn detail_postgres_opens_on_its_findings() {
    each_size("detail_postgres_steps", |a| {
        press(a, KeyCode::Char('j'));
        press(a, KeyCode::Enter);
    });
}

#[test]
fn sorted_tables_show_their_order_in_the_header() {
    each_size("restores_by_name", |a| press(a, KeyCode::Char('N')));
    each_size("restores_by_age_reversed", |a| {
        press(a, KeyCode::Char('A'));
        press(a, KeyCode::Char('A'));
    });
    each_size("orig_by_size", |a| {
        press(a, KeyCode::Char(':'));
        typ(a, "orig");
        press(a, KeyCode::Enter);
        press(a, KeyCode::Char('Z'));
    });
}

#[test]
fn detail_download_gauge() {
    each_size("detail_download", |a| {
        press(a, KeyCode::Char('G'));
        press(a, KeyCode::Enter);
    });
}

#[test]
fn findings_list() {
    each_size("findings", |a| {
        press(a, KeyCode::Char(':'));
        typ(a, "findings");
        press(a, KeyCode::Enter);
    });
}

#[test]
fn orig_list() {
    each_size("orig", |a| {
        press(a, KeyCode::Char(':'));
        typ(a, "orig");
        press(a, KeyCode::Enter);
    });
}

#[test]
fn events_list() {
    each_size("events", |a| {
        press(a, KeyCode::Char(':'));
        typ(a, "events");
        press(a, KeyCode::Enter);
    });
}

#[test]
fn yaml_view() {
    each_size("yaml", |a| press(a, KeyCode::Char('y')));
}

#[test]
fn help_screen() {
    each_size("help", |a| press(a, KeyCode::Char('?')));
}

#[test]
fn filter_and_command_line() {
    each_size("filter_typing", |a| {
        press(a, KeyCode::Char('/'));
        typ(a, "pg");
    });
    each_size("command_completion", |a| {
        press(a, KeyCode::Char(':'));
        typ(a, "ns ");
        press(a, KeyCode::Tab);
    });
}

#[test]
fn frozen_header() {
    each_size("frozen", |a| {
        press(a, KeyCode::Char('f'));
        update(a, Msg::Frame(Some(ui_data::frame(4))));
    });
}

#[test]
fn empty_states_say_why() {
    each_size("empty_syncing", |a| update(a, Msg::Frame(None)));
    each_size("empty_no_restores", |a| {
        let mut r = ui_data::report();
        std::sync::Arc::make_mut(&mut r.restores).clear();
        r.findings = Default::default();
        std::sync::Arc::make_mut(&mut r.orig_pvcs).clear();
        update(
            a,
            Msg::Frame(Some(ui_data::frame_with(2, ui_data::snapshot(), r))),
        );
    });
    each_size("empty_watch_down", |a| {
        let mut s = ui_data::snapshot();
        s.health.insert(
            Kind::RestoreJob,
            KindHealth {
                state: SyncState::Failed {
                    since: ui_data::ago(7),
                    error: "connection refused".into(),
                },
                last_event: Some(ui_data::ago(7)),
            },
        );
        let mut r = ui_data::report();
        std::sync::Arc::make_mut(&mut r.restores).clear();
        update(a, Msg::Frame(Some(ui_data::frame_with(2, s, r))));
    });
}

#[test]
fn stale_rows_show_their_age() {
    each_size("stale_rows", |a| {
        let mut s = ui_data::snapshot();
        s.health.insert(
            Kind::RestoreJob,
            KindHealth {
                state: SyncState::Resyncing {
                    since: ui_data::ago(3),
                    error: "watch stream closed".into(),
                },
                last_event: Some(ui_data::ago(3)),
            },
        );
        update(
            a,
            Msg::Frame(Some(ui_data::frame_with(2, s, ui_data::report()))),
        );
    });
}

/// Every screen and pane, reached by keys, at a size given by the test.
fn all_screens(w: u16, h: u16) -> Vec<App> {
    let mut v = Vec::new();
    let base = app(w, h);
    v.push(base.clone());
    for cmd in ["findings", "orig", "events", "help"] {
        let mut a = base.clone();
        press(&mut a, KeyCode::Char(':'));
        typ(&mut a, cmd);
        press(&mut a, KeyCode::Enter);
        v.push(a);
    }
    for row in 0..3 {
        for pane in 0..4 {
            let mut a = base.clone();
            for _ in 0..row {
                press(&mut a, KeyCode::Char('j'));
            }
            press(&mut a, KeyCode::Enter);
            for _ in 0..pane {
                press(&mut a, KeyCode::Tab);
            }
            v.push(a.clone());
            press(&mut a, KeyCode::Char('y'));
            v.push(a);
        }
    }
    let mut a = base.clone();
    press(&mut a, KeyCode::Char('y'));
    v.push(a);
    v
}

#[test]
fn tiny_terminals_do_not_panic() {
    for (w, h) in [(20, 5), (1, 1), (0, 0), (10, 3), (40, 8)] {
        for a in all_screens(w, h) {
            let _ = render(&a);
        }
    }
}

#[test]
fn huge_names_are_cut_with_an_ellipsis() {
    let long = "x".repeat(300);
    let mut r = ui_data::report();
    std::sync::Arc::make_mut(&mut std::sync::Arc::make_mut(&mut r.restores)[0])
        .id
        .name = long.clone();
    std::sync::Arc::make_mut(&mut std::sync::Arc::make_mut(&mut r.restores)[0])
        .id
        .namespace = format!("ns-{long}");
    std::sync::Arc::make_mut(&mut std::sync::Arc::make_mut(&mut r.restores)[0]).disks[1].disk =
        long.clone();
    let mut findings: Vec<_> = r.findings.iter().cloned().collect();
    let first = std::sync::Arc::make_mut(&mut findings[0]);
    first.restore = Some(r.restores[0].id.clone());
    first.message = long.clone();
    r.findings = std::sync::Arc::new(findings.into());
    std::sync::Arc::make_mut(&mut std::sync::Arc::make_mut(&mut r.orig_pvcs)[0])
        .pvc
        .name = long.clone();
    for (w, h) in SIZES {
        let mut a = app(w, h);
        update(
            &mut a,
            Msg::Frame(Some(ui_data::frame_with(2, ui_data::snapshot(), r.clone()))),
        );
        let screen = render(&a);
        assert!(
            screen.contains("xxx…"),
            "restores list at {w}x{h}:\n{screen}"
        );
        for s in all_screens(w, h) {
            let mut s = s;
            update(
                &mut s,
                Msg::Frame(Some(ui_data::frame_with(2, ui_data::snapshot(), r.clone()))),
            );
            let text = render(&s);
            for line in text.lines() {
                assert!(
                    line.chars().count() <= usize::from(w),
                    "line wider than the screen"
                );
            }
        }
        press(&mut a, KeyCode::Char(':'));
        typ(&mut a, "findings");
        press(&mut a, KeyCode::Enter);
        assert!(render(&a).contains("xxx…"), "findings at {w}x{h}");
    }
}

/// `:ctx`: the header while the new context connects, then the new context before it syncs.
#[test]
fn context_switch_headers() {
    let on_context = |a: &mut App| {
        a.opts.context = Some("prod-eu".into());
        a.opts.contexts = vec!["prod-eu".into(), "staging".into()];
    };
    each_size("ctx_completion", |a| {
        on_context(a);
        press(a, KeyCode::Char(':'));
        typ(a, "ctx ");
        press(a, KeyCode::Tab);
    });
    each_size("ctx_connecting", |a| {
        on_context(a);
        press(a, KeyCode::Char(':'));
        typ(a, "ctx staging");
        press(a, KeyCode::Enter);
    });
    each_size("ctx_switched_syncing", |a| {
        on_context(a);
        press(a, KeyCode::Char(':'));
        typ(a, "ctx staging");
        press(a, KeyCode::Enter);
        update(
            a,
            Msg::ContextSwitched {
                context: "staging".into(),
                result: Ok(None),
            },
        );
        update(a, Msg::Frame(None));
    });
}
