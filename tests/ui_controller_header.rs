//! The dashboard header says which backup controller the cluster runs, as the evidence shows it:
//! what a taken `-orig` name leads to depends on it.

mod common;

use common::render;
use common::ui_data::{self, app};
use restorewatch::analysis::controller::{ControllerGeneration, Evidence, Generation};
use restorewatch::ui::{Msg, update};

fn header_with(g: ControllerGeneration, width: u16) -> String {
    let mut a = app(width, 24);
    let mut report = ui_data::report();
    report.controller = g;
    let frame = ui_data::frame_with(2, ui_data::snapshot(), report);
    update(&mut a, Msg::Frame(Some(frame)));
    render(&a).lines().next().unwrap_or_default().to_string()
}

#[test]
fn the_header_names_the_generation_with_its_evidence_and_unknown_when_there_is_none() {
    let guarded = ControllerGeneration {
        generation: Generation::Guarded,
        evidence: vec![Evidence {
            says: Generation::Guarded,
            what: "RestoreJob a/b failed naming -orig PVC x-orig-1a2b".into(),
            at: None,
        }],
    };
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
        ControllerGeneration {
            generation: Generation::Unguarded,
            evidence: vec![Evidence {
                says: Generation::Unguarded,
                what: "x".repeat(200),
                at: None,
            }],
        },
        80,
    );
    assert!(
        line.contains("ctl: unguarded") && line.ends_with("12:00:00"),
        "{line}"
    );
    assert!(!line.contains("xxx"), "{line}");
}
