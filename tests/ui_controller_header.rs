//! The dashboard header says which backup controller the cluster runs, as the evidence shows it:
//! what a taken `-orig` name leads to depends on it.

mod common;

use common::render;
use common::ui_data::{self, app};
use restorewatch::analysis::controller::{ControllerGeneration, Evidence, Generation, judge};
use restorewatch::ui::{Msg, update};

fn header_with(g: ControllerGeneration, width: u16) -> String {
    let mut a = app(width, 24);
    let mut report = ui_data::report();
    report.controller = g.into();
    let frame = ui_data::frame_with(2, ui_data::snapshot(), report);
    update(&mut a, Msg::Frame(Some(frame)));
    render(&a).lines().next().unwrap_or_default().to_string()
}

#[test]
fn the_header_names_the_generation_with_its_evidence_and_unknown_when_there_is_none() {
    let guarded = judge(vec![Evidence::now(
        Generation::Guarded,
        "RestoreJob a/b failed naming -orig PVC x-orig-1a2b",
    )]);
    let line = header_with(guarded, 200);
    assert!(
        line.contains(
            "controller: guarded (evidence: RestoreJob a/b failed naming -orig PVC x-orig-1a2b)"
        ),
        "{line}"
    );
    let line = header_with(ControllerGeneration::default(), 120);
    assert!(line.contains("controller: unknown"), "{line}");
    // A narrow terminal cuts the evidence, never the clock.
    let line = header_with(
        judge(vec![Evidence::now(Generation::Unguarded, "x".repeat(200))]),
        80,
    );
    assert!(
        line.contains("ctl: unguarded") && line.ends_with("12:00:00"),
        "{line}"
    );
    assert!(!line.contains("xxx"), "{line}");
}

/// A long source label (the demo's list of scenarios, a long context name) gives way: the
/// namespace, the last change and the controller's generation stay on the line, and the clock.
#[test]
fn a_long_source_label_is_cut_before_the_controller_is() {
    let mut opts = ui_data::options();
    opts.source_label = Some(format!(
        "demo: simulated cluster playing {}",
        "scenario-x, ".repeat(12)
    ));
    let mut a = restorewatch::ui::App::new(opts, ui_data::now(), (160, 24));
    update(&mut a, Msg::Frame(Some(ui_data::frame(1))));
    let line = render(&a).lines().next().unwrap_or_default().to_string();
    assert!(
        line.contains("demo: simulated cluster playing scenario-x"),
        "{line}"
    );
    assert!(line.contains('…'), "the label is cut, and says so: {line}");
    assert!(line.contains("ns: all"), "{line}");
    assert!(line.contains("controller: unknown"), "{line}");
}
