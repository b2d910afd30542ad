//! Incremental analysis is only an optimisation: after any sequence of changes (objects of
//! every kind a restore is built on inserted, replaced and deleted across a few namespaces,
//! watches going down and up, the clock moving), `pipeline::Analyzer` gives exactly the report
//! a full `analyze` of the same snapshot at the same time gives.
//!
//! The objects come from the analysis fixtures (every finding and step state is in there), each
//! also moved to a second tenant namespace; fixtures share names (`tenant-a/restore-test` is in
//! dozens of them), so inserting one over another is an update of a restore's tree.

use proptest::prelude::*;
use restorewatch::analysis::{Settings, analyze};
use restorewatch::cluster::files::load_bytes;
use restorewatch::cluster::{KindHealth, ObjKey, Snapshot, SyncState};
use restorewatch::model::tombstones::Tombstone;
use restorewatch::model::{AnyObject, Kind};
use restorewatch::pipeline::{Analyzer, Changes};
use std::path::Path;
use std::sync::{Arc, OnceLock};

fn pool() -> &'static Vec<AnyObject> {
    static POOL: OnceLock<Vec<AnyObject>> = OnceLock::new();
    POOL.get_or_init(|| {
        let mut files = Vec::new();
        let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).expect("fixtures").flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "yaml" || x == "json") {
                    files.push(p);
                }
            }
        }
        files.sort();
        let mut objs = Vec::new();
        for f in files {
            let text = std::fs::read_to_string(&f).expect("fixture readable");
            // The same restores in a second tenant: claimRefs, Velero names and labels follow.
            for t in [text.clone(), text.replace("tenant-a", "tenant-q")] {
                objs.extend(load_bytes(t.as_bytes(), &f.display().to_string()).objects);
            }
        }
        assert!(objs.len() > 500, "fixtures hold {} objects", objs.len());
        objs
    })
}

#[derive(Debug, Clone)]
enum Op {
    /// Insert or replace pool object `i`, seen by the watch now.
    Upsert(usize),
    /// Delete the object with pool object `i`'s kind and key, if present.
    Delete(usize),
    /// A kind's watch breaks (`down`) or is synced again.
    Health(usize, bool),
    /// The clock moves on by this many seconds.
    Tick(u32),
    /// Several upserts in one batch.
    Batch(Vec<usize>),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => any::<usize>().prop_map(Op::Upsert),
        3 => any::<usize>().prop_map(Op::Delete),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(k, d)| Op::Health(k, d)),
        2 => (0u32..1200).prop_map(Op::Tick),
        1 => prop::collection::vec(any::<usize>(), 1..6).prop_map(Op::Batch),
    ]
}

fn key_of(o: &AnyObject) -> ObjKey {
    ObjKey::new(o.meta().namespace.clone(), o.meta().name.clone())
}

fn upsert(s: &mut Snapshot, i: usize, now: jiff::Timestamp, c: &mut Changes) {
    let pool = pool();
    let mut o = pool[i % pool.len()].clone();
    let m = o.meta_mut();
    m.last_change = Some(m.last_change.map_or(now, |t| t.max(now)));
    c.object(o.kind(), key_of(&o));
    s.objects.insert(o);
}

fn check(a: &Analyzer, snap: &Snapshot, settings: &Settings, step: usize, op: &Op) {
    let full = analyze(snap, settings, a.now());
    let inc = a.report();
    assert!(
        **inc == full,
        "after step {step} ({op:?}) the incremental report differs from analyze:\nincremental: {inc:#?}\nfull: {full:#?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn incremental_analysis_equals_a_full_analysis(
        initial in prop::collection::vec(any::<usize>(), 0..40),
        ops in prop::collection::vec(op(), 1..40),
    ) {
        let settings = Settings {
            rename_grace: jiff::SignedDuration::from_secs(5),
            ..Settings::default()
        };
        let mut now: jiff::Timestamp = "2026-11-20T10:03:00Z".parse().unwrap();
        let mut snap = Snapshot::default();
        for k in Kind::all() {
            snap.health.insert(k, KindHealth { state: SyncState::Synced, last_event: Some(now) });
        }
        let mut ignored = Changes::default();
        for i in initial {
            upsert(&mut snap, i, now, &mut ignored);
        }
        let mut snap = Arc::new(snap);
        let mut a = Analyzer::new(Arc::clone(&snap), settings.clone(), now);
        check(&a, &snap, &settings, 0, &Op::Tick(0));
        for (step, op) in ops.iter().enumerate() {
            let mut changes = Changes::default();
            let s = Arc::make_mut(&mut snap);
            match op {
                Op::Upsert(i) => upsert(s, *i, now, &mut changes),
                Op::Batch(is) => {
                    for i in is {
                        upsert(s, *i, now, &mut changes);
                    }
                }
                Op::Delete(i) => {
                    let pool = pool();
                    let o = &pool[i % pool.len()];
                    let (kind, key) = (o.kind(), key_of(o));
                    if let Some(m) = s.objects.meta(kind, &key) {
                        let t = Tombstone { kind, key: key.clone(), uid: m.uid.clone(), at: now, owners: m.owners.clone() };
                        s.tombstones.push(t);
                    }
                    s.objects.remove(kind, &key);
                    changes.object(kind, key);
                }
                Op::Health(k, down) => {
                    let kinds: Vec<Kind> = Kind::all().collect();
                    let kind = kinds[k % kinds.len()];
                    let state = if *down {
                        SyncState::Resyncing { since: now, error: "watch: connection reset".into() }
                    } else {
                        SyncState::Synced
                    };
                    s.health.insert(kind, KindHealth { state, last_event: Some(now) });
                    changes.health = true;
                }
                Op::Tick(secs) => {
                    now = now.checked_add(jiff::SignedDuration::from_secs(i64::from(*secs))).unwrap();
                }
            }
            if let Op::Tick(_) = op {
                a.tick(now);
            } else {
                a.apply(Arc::clone(&snap), &changes);
            }
            check(&a, &snap, &settings, step + 1, op);
        }
    }
}
