//! Incremental analysis is only an optimisation: after any sequence of changes (objects of
//! every kind a restore is built on inserted, replaced and deleted across a few namespaces,
//! watches going down and up, the clock moving), `pipeline::Analyzer` gives exactly the report
//! a full `analyze` of the same snapshot at the same time gives.
//!
//! The clock moves at random and also to just before and exactly onto the analyzer's own next
//! deadline: a moved clock redoes only the parts whose deadline passed, so a deadline computed
//! even a nanosecond late (a stall, a restore's deadline, a grace period, watch-stale, the next
//! change of a "for 12m" text) leaves a report that `analyze` at that instant contradicts.
//!
//! The objects come from the analysis fixtures (every finding and step state is in there), each
//! also moved to a second tenant namespace; fixtures share names (`tenant-a/restore-test` is in
//! dozens of them), so inserting one over another is an update of a restore's tree.

use proptest::prelude::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use restorewatch::analysis::{Settings, analyze};
use restorewatch::cluster::files::load_bytes;
use restorewatch::cluster::{KindHealth, ObjKey, Snapshot, SyncState};
use restorewatch::model::tombstones::Tombstone;
use restorewatch::model::{AnyObject, Kind};
use restorewatch::pipeline::frame::Frame;
use restorewatch::pipeline::{Analyzer, Changes};
use restorewatch::ui::keys::ScreenKind;
use restorewatch::ui::sort::{Sort, SortCol};
use restorewatch::ui::{App, Msg, UiOptions, select, update, view};
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// Fixture objects, each also in a second tenant, and the files they came from (each tenant's
/// copy of a file is one group).
struct Pool {
    objects: Vec<AnyObject>,
    files: Vec<Vec<AnyObject>>,
}

fn load_pool(only: &[&str]) -> Pool {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut files = Vec::new();
    let mut dirs = vec![root.clone()];
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
    files.retain(|f| only.is_empty() || only.iter().any(|d| f.starts_with(root.join(d))));
    files.sort();
    let mut pool = Pool {
        objects: Vec::new(),
        files: Vec::new(),
    };
    for f in files {
        let text = std::fs::read_to_string(&f).expect("fixture readable");
        // The same restores in a second tenant: claimRefs, Velero names and labels follow.
        for t in [text.clone(), text.replace("tenant-a", "tenant-q")] {
            let objs = load_bytes(t.as_bytes(), &f.display().to_string()).objects;
            pool.objects.extend(objs.iter().cloned());
            pool.files.push(objs);
        }
    }
    pool
}

/// Every fixture.
fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let p = load_pool(&[]);
        assert!(
            p.objects.len() > 500,
            "fixtures hold {} objects",
            p.objects.len()
        );
        p
    })
}

/// The fixtures whose findings and steps turn on the time: stalls ("nothing changed for 12m"),
/// deadlines ("deadline in 3m", "4m of the 30m deadline left"), grace periods (a Cluster's
/// ObjectStore, an `-orig` PVC younger than `rename_grace`), a halt or purge taking too long,
/// and (by the `Health` op) watch-stale. A small pool, so whole restore trees meet often.
fn time_pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let p = load_pool(&[
            "restore-stalled",
            "restore-deadline-near",
            "purge-stuck",
            "objectstore-missing",
            "objectstore-owner-stale",
            "rename-half-done",
            "vm-halt-stuck",
            "velero-restore-stuck",
        ]);
        assert!(
            p.files.len() >= 40,
            "time fixtures: {} files",
            p.files.len()
        );
        p
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
    /// The clock moves to the analyzer's next deadline (`true`) or a nanosecond before it.
    ToDeadline(bool),
    /// The clock moves on by this many seconds unseen: the next change brings it along.
    Wait(u32),
    /// Pool object `i` created just now (its age starts at zero: grace periods run).
    Create(usize),
    /// Several upserts in one batch.
    Batch(Vec<usize>),
    /// Every object of fixture file `i` in one batch, created just now if `true`.
    File(usize, bool),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => any::<usize>().prop_map(Op::Upsert),
        3 => any::<usize>().prop_map(Op::Delete),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(k, d)| Op::Health(k, d)),
        2 => (0u32..1200).prop_map(Op::Tick),
        4 => any::<bool>().prop_map(Op::ToDeadline),
        1 => (0u32..700).prop_map(Op::Wait),
        2 => any::<usize>().prop_map(Op::Create),
        1 => prop::collection::vec(any::<usize>(), 1..6).prop_map(Op::Batch),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(i, c)| Op::File(i, c)),
    ]
}

/// Mostly whole restores arriving and the clock walking from deadline to deadline.
fn time_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<usize>(), any::<bool>()).prop_map(|(i, c)| Op::File(i, c)),
        2 => any::<usize>().prop_map(Op::Upsert),
        1 => any::<usize>().prop_map(Op::Delete),
        2 => (any::<usize>(), any::<bool>()).prop_map(|(k, d)| Op::Health(k, d)),
        2 => (0u32..900).prop_map(Op::Tick),
        8 => any::<bool>().prop_map(Op::ToDeadline),
        1 => (0u32..700).prop_map(Op::Wait),
    ]
}

fn key_of(o: &AnyObject) -> ObjKey {
    ObjKey::new(o.meta().namespace.clone(), o.meta().name.clone())
}

fn insert(
    s: &mut Snapshot,
    o: &AnyObject,
    now: jiff::Timestamp,
    created_now: bool,
    c: &mut Changes,
) {
    let mut o = o.clone();
    let m = o.meta_mut();
    m.last_change = Some(m.last_change.map_or(now, |t| t.max(now)));
    if created_now {
        m.created = Some(now);
    }
    c.object(o.kind(), key_of(&o));
    s.objects.insert(o);
}

/// The incremental report is `analyze` at the analyzer's clock; only its `now` may be older
/// (a clock move before the next deadline redoes nothing, not even that).
fn check(a: &Analyzer, snap: &Snapshot, settings: &Settings, step: usize, op: &Op) {
    let mut full = analyze(snap, settings, a.now());
    let inc = a.report();
    full.now = inc.now;
    assert!(
        **inc == full,
        "after step {step} ({op:?}) the incremental report differs from analyze:\nincremental: {inc:#?}\nfull: {full:#?}"
    );
    // The screens ask for each row's findings by the restore's position: the same as a scan.
    for (i, r) in inc.restores.iter().enumerate() {
        let by_position: Vec<&Arc<restorewatch::analysis::Finding>> =
            inc.finding_arcs_at(i).collect();
        let scanned: Vec<&Arc<restorewatch::analysis::Finding>> = inc
            .findings
            .iter()
            .filter(|f| f.restore.as_ref() == Some(&r.id))
            .collect();
        assert_eq!(
            by_position, scanned,
            "after step {step} ({op:?}): findings of {:?} by position",
            r.id
        );
        // Where the index files a restore's findings it files this very restore: the rows of
        // the dashboard are matched to their restores by that place.
        assert!(
            inc.filed_at(i).is_none() || inc.filed_checked(i).is_some(),
            "after step {step} ({op:?}): the index files another {:?} than the report lists",
            r.id
        );
    }
}

/// The restores list of a dashboard that has shown every report so far (and keeps the order
/// and rows it drew, `ui::list_memo`, from one to the next) is, cell for cell, the list a new
/// dashboard draws of the last report: the reports the analyzer shares from one change to the
/// next are the ones the memo reuses rows and keys by. Two dashboards: as opened, and one
/// whose operator changes filter, sort and namespace as the reports come (what the memo keeps
/// is kept per choice).
struct Screens {
    live: Vec<(App, Choose)>,
    seq: u64,
}

/// A short screen (the first dozen rows drawn; the order of every restore is compared apart):
/// a debug build draws every step of every case, twice per dashboard.
const SCREEN_ROWS: u16 = 20;

/// What the operator has chosen at a step: applied to the running dashboard and to the new one.
type Choose = fn(&mut App, usize);

fn as_opened(_: &mut App, _: usize) {}

fn changing(app: &mut App, step: usize) {
    let filter = if step.is_multiple_of(3) { "a" } else { "" };
    app.filters.insert(ScreenKind::Restores, filter.into());
    match step % 4 {
        0 => app.sorts.remove(&ScreenKind::Restores),
        1 => app
            .sorts
            .insert(ScreenKind::Restores, Sort::by(SortCol::Name)),
        2 => app.sorts.insert(
            ScreenKind::Restores,
            Sort {
                col: SortCol::Findings,
                reversed: true,
            },
        ),
        _ => app
            .sorts
            .insert(ScreenKind::Restores, Sort::by(SortCol::Age)),
    };
    app.namespace = (step % 5 == 4).then(|| "tenant-a".to_string());
}

impl Screens {
    fn new(now: jiff::Timestamp) -> Screens {
        let app = || App::new(UiOptions::default(), now, (160, SCREEN_ROWS));
        Screens {
            live: vec![(app(), as_opened as Choose), (app(), changing as Choose)],
            seq: 0,
        }
    }

    fn show(&mut self, a: &Analyzer, snap: &Arc<Snapshot>, step: usize, op: &Op) {
        self.seq += 1;
        let frame = Arc::new(Frame {
            seq: self.seq,
            snapshot: Arc::clone(snap),
            report: Arc::clone(a.report()),
            analyzed_at: a.now(),
        });
        let ids = |app: &App| -> Vec<String> {
            select::restores(app)
                .iter()
                .map(|r| r.id.to_string())
                .collect()
        };
        let drawn = |app: &App| {
            let mut t = Terminal::new(TestBackend::new(160, SCREEN_ROWS)).expect("a test terminal");
            t.draw(|f| view(app, f)).expect("drawn");
            t.backend().buffer().clone()
        };
        for (live, choose) in &mut self.live {
            choose(live, step);
            update(live, Msg::Frame(Some(Arc::clone(&frame))));
            update(live, Msg::Tick(a.now()));
            let mut fresh = App::new(UiOptions::default(), a.now(), (160, SCREEN_ROWS));
            choose(&mut fresh, step);
            update(&mut fresh, Msg::Frame(Some(Arc::clone(&frame))));
            update(&mut fresh, Msg::Tick(a.now()));
            assert_eq!(
                ids(live),
                ids(&fresh),
                "after step {step} ({op:?}) the running dashboard lists the restores in another order"
            );
            assert_eq!(
                drawn(live),
                drawn(&fresh),
                "after step {step} ({op:?}) the running dashboard draws another list"
            );
        }
    }
}

/// Plays `ops` on an analyzer and checks it against `analyze` after every step.
fn play(pool: &Pool, initial: Vec<usize>, ops: &[Op]) {
    let settings = Settings {
        rename_grace: jiff::SignedDuration::from_secs(5),
        ..Settings::default()
    };
    let mut now: jiff::Timestamp = "2026-11-20T10:03:00Z".parse().unwrap();
    let mut snap = Snapshot::default();
    snap.mark_every_kind(SyncState::Synced, Some(now));
    let mut ignored = Changes::default();
    let objects = &pool.objects;
    for i in initial {
        insert(
            &mut snap,
            &objects[i % objects.len()],
            now,
            false,
            &mut ignored,
        );
    }
    let mut snap = Arc::new(snap);
    let mut a = Analyzer::new(Arc::clone(&snap), settings.clone(), now);
    check(&a, &snap, &settings, 0, &Op::Tick(0));
    let mut screens = Screens::new(now);
    screens.show(&a, &snap, 0, &Op::Tick(0));
    for (step, op) in ops.iter().enumerate() {
        let mut changes = Changes::default();
        let s = Arc::make_mut(&mut snap);
        match op {
            Op::Upsert(i) => insert(s, &objects[i % objects.len()], now, false, &mut changes),
            Op::Batch(is) => {
                for i in is {
                    insert(s, &objects[i % objects.len()], now, false, &mut changes);
                }
            }
            Op::File(i, created_now) => {
                for o in &pool.files[i % pool.files.len()] {
                    insert(s, o, now, *created_now, &mut changes);
                }
            }
            Op::Delete(i) => {
                let o = &objects[i % objects.len()];
                let (kind, key) = (o.kind(), key_of(o));
                if let Some(m) = s.objects.meta(kind, &key) {
                    s.tombstones.push(Tombstone::of(kind, key.clone(), m, now));
                }
                s.objects.remove(kind, &key);
                changes.object(kind, key);
            }
            Op::Health(k, down) => {
                let kinds: Vec<Kind> = Kind::all().collect();
                let kind = kinds[k % kinds.len()];
                let state = if *down {
                    SyncState::Resyncing {
                        since: now,
                        error: "watch: connection reset".into(),
                    }
                } else {
                    SyncState::Synced
                };
                s.health.insert(
                    kind,
                    KindHealth {
                        state,
                        last_event: Some(now),
                    },
                );
                changes.health = true;
            }
            Op::Create(i) => insert(s, &objects[i % objects.len()], now, true, &mut changes),
            Op::Tick(secs) | Op::Wait(secs) => {
                now = now
                    .checked_add(jiff::SignedDuration::from_secs(i64::from(*secs)))
                    .unwrap();
            }
            Op::ToDeadline(exactly) => {
                if let Some(d) = a.next_deadline() {
                    assert!(d > a.now(), "deadline {d} not after the clock {}", a.now());
                    now = if *exactly {
                        d
                    } else {
                        d - jiff::SignedDuration::from_nanos(1)
                    };
                }
            }
        }
        match op {
            Op::Tick(_) | Op::ToDeadline(_) => {
                let before = Arc::clone(a.report());
                let changed = a.tick(now);
                let after = a.report();
                let same = before.restores == after.restores
                    && before.findings == after.findings
                    && before.orig_pvcs == after.orig_pvcs;
                assert_eq!(
                    changed,
                    !same,
                    "tick at step {} says changed={} wrongly",
                    step + 1,
                    changed
                );
            }
            Op::Wait(_) => {}
            _ => {
                a.apply_at(Arc::clone(&snap), &changes, now);
            }
        }
        check(&a, &snap, &settings, step + 1, op);
        screens.show(&a, &snap, step + 1, op);
    }
}

/// The cases each property runs: `PROPTEST_CASES` when set (CI sets more than a developer's
/// default, and a long search before a release sets many more), else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(48), ..ProptestConfig::default() })]

    #[test]
    fn incremental_analysis_equals_a_full_analysis(
        initial in prop::collection::vec(any::<usize>(), 0..40),
        ops in prop::collection::vec(op(), 1..40),
    ) {
        play(pool(), initial, &ops);
    }

    #[test]
    fn no_deadline_is_late(
        initial in prop::collection::vec(any::<usize>(), 0..10),
        ops in prop::collection::vec(time_op(), 1..60),
    ) {
        play(time_pool(), initial, &ops);
    }
}

/// A quiet cluster costs nothing until its next deadline: a clock move before it redoes nothing
/// (the very same report stays, `tick` says nothing changed, and no work is counted), and the
/// one onto a running restore's stall reports `restore-stalled`, says so, and counts one wake
/// redoing one namespace.
#[test]
fn a_quiet_running_restore_is_redone_only_when_it_stalls() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/restore-stalled/near-miss-recent.yaml");
    let text = std::fs::read_to_string(&path).expect("fixture readable");
    let mut snap = Snapshot::default();
    for o in load_bytes(text.as_bytes(), "near-miss-recent").objects {
        snap.objects.insert(o);
    }
    let now: jiff::Timestamp = "2026-11-20T10:08:00Z".parse().unwrap();
    snap.mark_every_kind(SyncState::Synced, Some(now));
    let settings = Settings::default();
    let mut a = Analyzer::new(Arc::new(snap), settings.clone(), now);
    let stalled = |a: &Analyzer| {
        a.report()
            .findings
            .iter()
            .any(|f| f.code == restorewatch::analysis::Code::RestoreStalled)
    };
    assert!(!stalled(&a), "stalled already at {now}");
    let last = a
        .report()
        .restores
        .iter()
        .find(|r| r.phase == "Running")
        .and_then(|r| r.last_change)
        .expect("a running restore with a last change");
    let stall = last + settings.stall_after;
    let deadline = a.next_deadline().expect("a running restore has a deadline");
    assert!(
        deadline <= stall + jiff::SignedDuration::from_nanos(1),
        "deadline {deadline} after the stall at {stall}"
    );

    // Up to the stall's own instant, only deadlines that change nothing visible may pass.
    let before = Arc::clone(a.report());
    assert!(!a.tick(deadline - jiff::SignedDuration::from_nanos(1)));
    assert!(
        Arc::ptr_eq(&before, a.report()),
        "a clock move before the deadline redid the report"
    );
    assert_eq!(
        a.clock_work(),
        Default::default(),
        "a clock move before the deadline was counted as work"
    );
    a.tick(stall);
    assert!(
        !stalled(&a),
        "stalled at {stall}, no longer than stall_after since {last}"
    );
    let at_stall = a.clock_work();
    assert!(
        a.tick(stall + jiff::SignedDuration::from_nanos(1)),
        "the stall was not reported as a change"
    );
    assert!(stalled(&a));
    // What the bench's idle rows read: the move onto the stall is one wake, redoing the one
    // namespace whose restore stalled.
    let onto_stall = a.clock_work().since(at_stall);
    assert_eq!((onto_stall.wakes, onto_stall.namespaces), (1, 1));
    let full = analyze(a.snapshot(), &settings, a.now());
    assert_eq!(**a.report(), full);
}

/// A change that alters no restore's analysis (an object written again as it was) keeps what
/// the report had, restore for restore and finding for finding, the same shared values: the
/// dashboard keeps a row while its restore and findings are the very same ones, so a change in
/// a namespace of several restores redraws only the rows it altered.
#[test]
fn what_a_change_did_not_alter_stays_the_same_shared_value() {
    let pool = pool();
    let now: jiff::Timestamp = "2026-11-20T10:08:00Z".parse().unwrap();
    let mut snap = Snapshot::default();
    for o in &pool.objects {
        snap.objects.insert(o.clone());
    }
    snap.mark_every_kind(SyncState::Synced, Some(now));
    let settings = Settings::default();
    let mut a = Analyzer::new(Arc::new(snap.clone()), settings.clone(), now);
    let before = Arc::clone(a.report());
    assert!(before.restores.len() > 1 && !before.findings.is_empty());
    // Every restore's own RestoreJob, written again unchanged.
    let mut changes = Changes::default();
    for r in before.restores.iter() {
        changes.object(
            Kind::RestoreJob,
            ObjKey::new(r.id.namespace.clone(), r.id.name.clone()),
        );
    }
    let after = a.apply(Arc::new(snap), &changes);
    assert!(!Arc::ptr_eq(&before, &after), "nothing was redone");
    assert_eq!(*before, *after);
    for (b, n) in before.restores.iter().zip(after.restores.iter()) {
        assert!(Arc::ptr_eq(b, n), "{:?} is a new value", b.id);
    }
    for (b, n) in before.findings.iter().zip(after.findings.iter()) {
        assert!(
            Arc::ptr_eq(b, n),
            "{} about {:?} is a new value",
            b.code,
            b.restore
        );
    }
    for i in 0..after.restores.len() {
        assert!(after.filed_at(i).is_none() || after.filed_checked(i).is_some());
    }
    // Not only each item: the lists themselves are handed on, not collected again.
    assert!(Arc::ptr_eq(&before.restores, &after.restores));
    assert!(Arc::ptr_eq(&before.findings, &after.findings));
    assert!(Arc::ptr_eq(&before.orig_pvcs, &after.orig_pvcs));
}

/// Every object of every fixture deleted on its own from its file's whole tree (its tombstone
/// kept, as the store keeps one), applied by an analyzer that had the whole tree: `f` gets the
/// object's kind and key, the file's whole snapshot, the snapshot without the object and the
/// analyzer after the deletion. Returns how many deletions it made.
fn each_deletion(
    now: jiff::Timestamp,
    mut f: impl FnMut(Kind, &ObjKey, &Arc<Snapshot>, &Arc<Snapshot>, &Analyzer),
) -> usize {
    let settings = Settings::default();
    let mut made = 0;
    for file in &pool().files {
        let mut base = Snapshot::default();
        base.mark_every_kind(SyncState::Synced, Some(now));
        for o in file {
            base.objects.insert(o.clone());
        }
        let base = Arc::new(base);
        for o in file {
            let (kind, key) = (o.kind(), key_of(o));
            let mut a = Analyzer::new(Arc::clone(&base), settings.clone(), now);
            let mut snap = (*base).clone();
            if let Some(m) = snap.objects.meta(kind, &key) {
                snap.tombstones
                    .push(Tombstone::of(kind, key.clone(), m, now));
            }
            snap.objects.remove(kind, &key);
            let mut changes = Changes::default();
            changes.object(kind, key.clone());
            let snap = Arc::new(snap);
            a.apply(Arc::clone(&snap), &changes);
            f(kind, &key, &base, &snap, &a);
            made += 1;
        }
    }
    made
}

/// The class the random search found one case of (a copy restore's DataVolume deleted in its
/// target namespace stayed in the chain): every object of every fixture, deleted on its own
/// from its restore's whole tree, leaves the incremental report equal to `analyze`. Whatever
/// the kind (PVC, PV, DataVolume, Velero Restore or DataDownload, Event, HelmRelease, ...) and
/// whichever namespace it sits in.
#[test]
fn deleting_any_one_object_of_a_restore_is_seen_as_a_full_analysis_sees_it() {
    let settings = Settings::default();
    let now: jiff::Timestamp = "2026-11-20T10:03:00Z".parse().unwrap();
    let checked = each_deletion(now, |kind, key, _, snap, a| {
        let mut full = analyze(snap, &settings, now);
        full.now = a.report().now;
        assert!(
            **a.report() == full,
            "deleting {kind:?} {}/{} leaves the incremental report unlike analyze",
            key.namespace,
            key.name
        );
    });
    assert!(checked > 500, "only {checked} deletions checked");
}

/// A change that alters a namespace's findings hands on a list merged only when read: the
/// restores screen, which finds each row's findings through the index, draws the new frame
/// without merging it (on a real server's dump the merge was 0.36 ms of such a write's way to
/// the screen), and read whole the list is the one a full analysis makes.
#[test]
fn a_changed_finding_is_drawn_without_merging_every_finding_and_read_whole_is_analyzes_list() {
    let settings = Settings::default();
    let now: jiff::Timestamp = "2026-11-20T10:03:00Z".parse().unwrap();
    let mut checked = 0;
    each_deletion(now, |kind, key, base, snap, a| {
        let report = a.report();
        let full = analyze(snap, &settings, now);
        if *full.findings == *analyze(base, &settings, now).findings {
            return;
        }
        assert!(
            !report.findings.is_merged(),
            "deleting {kind:?} {}/{} merged every finding before anyone read them",
            key.namespace,
            key.name
        );
        let mut app = App::new(UiOptions::default(), now, (160, SCREEN_ROWS));
        let frame = Arc::new(Frame {
            seq: 1,
            snapshot: Arc::clone(snap),
            report: Arc::clone(report),
            analyzed_at: a.now(),
        });
        update(&mut app, Msg::Frame(Some(frame)));
        let mut t = Terminal::new(TestBackend::new(160, SCREEN_ROWS)).expect("a test terminal");
        t.draw(|f| view(&app, f)).expect("drawn");
        assert!(
            !report.findings.is_merged(),
            "the restores screen read every finding to draw its rows"
        );
        assert_eq!(
            *report.findings, *full.findings,
            "deleting {kind:?} {}/{}: the list read whole is not analyze's",
            key.namespace, key.name
        );
        checked += 1;
    });
    assert!(checked > 20, "only {checked} changes of findings checked");
}
