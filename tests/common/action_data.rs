//! Apps on real object sets (the analysis fixtures), so that the plans the action dialog shows
//! are the ones `plan` makes from those objects.

#![allow(dead_code)]

use jiff::Timestamp;
use restorewatch::analysis::{Settings, analyze};
use restorewatch::cli::check::load_snapshot;
use restorewatch::cluster::SourceInfo;
use restorewatch::pipeline::Frame;
use restorewatch::ui::app::{Actions, App};
use restorewatch::ui::{Msg, update};
use std::path::PathBuf;
use std::sync::Arc;

/// A VM restore whose disk rename stopped after the `-orig` PVC was created.
pub const RENAME: (&str, &str) = (
    "rename-half-done/postfix-interrupted.yaml",
    "2026-11-20T10:01:30Z",
);
/// A finished restore before the fix: its `-orig` PVC has no recorded policy.
pub const UNRECORDED: (&str, &str) = (
    "reclaim-policy-unrecorded/prefix-succeeded.yaml",
    "2026-11-21T10:00:00Z",
);
/// A finished restore after the fix: policy Delete recorded, PV still Retain.
pub const RECORDED: (&str, &str) = (
    "reclaim-leak-risk/recorded-delete.yaml",
    "2026-11-20T10:30:00Z",
);
/// A running Postgres restore whose archive serverName reverted.
pub const SERVERNAME: (&str, &str) = (
    "servername-reverted/stale-cache-revert.yaml",
    "2026-11-20T10:05:00Z",
);

pub fn frame(fixture: (&str, &str)) -> Arc<Frame> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(fixture.0);
    let (mut snap, problems) = load_snapshot(&[path]).expect("fixture loads");
    assert!(problems.is_empty(), "{problems:?}");
    snap.source = SourceInfo::Live {
        context: "prod-eu".into(),
        cluster: "prod-eu".into(),
    };
    let now: Timestamp = fixture.1.parse().expect("fixture time");
    let report = analyze(&snap, &Settings::default(), now);
    Arc::new(Frame {
        seq: 1,
        snapshot: Arc::new(snap),
        report: Arc::new(report),
        analyzed_at: now,
    })
}

/// A live session (actions available) at a fixed size on a fixture.
pub fn app(fixture: (&str, &str), w: u16, h: u16) -> App {
    let f = frame(fixture);
    let mut a = App::new(super::ui_data::options(), f.analyzed_at, (w, h));
    a.actions = Actions::Live;
    update(&mut a, Msg::Frame(Some(f)));
    a
}

/// A live session on these objects (as the watch would have them) at `now`.
pub fn app_on(objs: Vec<serde_json::Value>, now: &str, w: u16, h: u16) -> App {
    let mut snap = restorewatch::cluster::Snapshot::default();
    for o in objs {
        let obj = restorewatch::model::parse_object(o).expect("object parses");
        snap.objects.insert(obj);
    }
    snap.source = SourceInfo::Live {
        context: "prod-eu".into(),
        cluster: "prod-eu".into(),
    };
    let now: Timestamp = now.parse().expect("time");
    let report = analyze(&snap, &Settings::default(), now);
    let f = Arc::new(Frame {
        seq: 1,
        snapshot: Arc::new(snap),
        report: Arc::new(report),
        analyzed_at: now,
    });
    let mut a = App::new(super::ui_data::options(), f.analyzed_at, (w, h));
    a.actions = Actions::Live;
    update(&mut a, Msg::Frame(Some(f)));
    a
}
