//! What each table shows: the frame's items in scope, filtered, in display order. `update` and
//! `view` both read these, so the row under the cursor is the row that `Enter` opens.

use super::app::{App, Pane, Screen};
use super::keys::ScreenKind;
use super::sort::{self, Key, SortCol};
use crate::analysis::{
    DiskChain, DownloadInfo, DvInfo, EventLine, Finding, ObjRef, OrigPvcView, PgView, PvInfo,
    PvcInfo, RestoreView, StepId,
};
use crate::cluster::{ObjKey, Snapshot, SyncState};
use crate::model::Kind;
use crate::pipeline::Frame;
use jiff::Timestamp;

fn matches(filter: &str, fields: &[&str]) -> bool {
    if filter.is_empty() {
        return true;
    }
    let f = filter.to_lowercase();
    fields.iter().any(|s| s.to_lowercase().contains(&f))
}

fn filter_of(app: &App, kind: ScreenKind) -> &str {
    app.filters.get(&kind).map(String::as_str).unwrap_or("")
}

pub fn restores(app: &App) -> Vec<&RestoreView> {
    let Some(frame) = &app.shown else {
        return Vec::new();
    };
    restore_order(app, frame)
        .into_iter()
        .filter_map(|i| frame.report.restores.get(i))
        .map(|r| &**r)
        .collect()
}

/// Positions in the shown report's restores, in the list's order (remembered per frame and
/// choice of filter, sort and namespace: see `list_memo`).
pub fn restore_order(app: &App, frame: &std::sync::Arc<Frame>) -> Vec<usize> {
    let key = super::list_memo::OrderKey {
        filter: filter_of(app, ScreenKind::Restores).to_string(),
        namespace: app.namespace.clone(),
        sort: app.sort(ScreenKind::Restores),
    };
    app.list_memo
        .order(frame, &key, |keys| compute_restore_order(app, frame, keys))
}

fn compute_restore_order(
    app: &App,
    frame: &Frame,
    keys: &mut super::list_memo::KeyCache,
) -> Vec<usize> {
    let f = filter_of(app, ScreenKind::Restores);
    // Unscoped and unfiltered (as a dashboard mostly is), no restore is read to be kept.
    let v: Vec<(usize, &RestoreView)> = frame
        .report
        .restores
        .iter()
        .map(|r| &**r)
        .enumerate()
        .filter(|(_, r)| app.namespace.is_none() || app.in_scope(&r.id.namespace))
        .filter(|(_, r)| {
            if f.is_empty() {
                return true;
            }
            let target = r.target.as_ref().map(|t| t.name.as_str()).unwrap_or("");
            let step = r.current_step().map(|s| s.id.as_str()).unwrap_or("");
            matches(
                f,
                &[
                    &r.id.namespace,
                    &r.id.name,
                    target,
                    r.driver.as_str(),
                    &r.phase,
                    step,
                ],
            )
        })
        .collect();
    // Worst news first (errors, then warnings), running before finished, then by name: info
    // findings do not reorder, so a healthy list keeps its name order.
    // Among equals, more findings at that level first.
    let worst = |i: usize| {
        let mut top = None;
        let mut count = 0;
        for s in frame
            .report
            .finding_arcs_at(i)
            .map(|x| x.severity)
            .filter(|s| *s >= crate::analysis::Severity::Warning)
        {
            match top.cmp(&Some(s)) {
                std::cmp::Ordering::Less => (top, count) = (Some(s), 1),
                std::cmp::Ordering::Equal => count += 1,
                std::cmp::Ordering::Greater => {}
            }
        }
        (top, count)
    };
    // Remembered per restore while its findings stay filed in the same place: the key scans
    // the findings.
    let mut keyed: Vec<(super::list_memo::RowKey, usize, &RestoreView)> = v
        .into_iter()
        .map(|(i, r)| {
            let key = keys.key(&frame.report, i, || {
                (std::cmp::Reverse(worst(i)), r.terminal)
            });
            (key, i, r)
        })
        .collect();
    // Stable: the report's order breaks ties.
    keyed.sort_by_key(|a| a.0);
    let mut v: Vec<(usize, &RestoreView)> = keyed.into_iter().map(|(_, i, r)| (i, r)).collect();
    // Any other column sorts this order, so equal values stay worst first.
    if let Some(s) = app.sort(ScreenKind::Restores)
        && s.col != SortCol::Findings
    {
        sort::apply(&mut v, s, |(_, r)| restore_key(r, s.col));
    } else if app.sort(ScreenKind::Restores).is_some_and(|s| s.reversed) {
        v.reverse();
    }
    v.into_iter().map(|(i, _)| i).collect()
}

fn text(s: &str) -> Option<Key> {
    Some(Key::Text(s.to_lowercase()))
}

fn time(t: Option<Timestamp>) -> Option<i128> {
    t.map(|t| t.as_nanosecond())
}

fn restore_key(r: &RestoreView, col: SortCol) -> Option<Key> {
    match col {
        SortCol::Name => text(&r.id.name),
        SortCol::Namespace => text(&format!("{}/{}", r.id.namespace, r.id.name)),
        // Ascending age is newest first: the later creation time first.
        SortCol::Age => time(r.created).map(|t| Key::Num(-t)),
        SortCol::Status => text(&r.phase),
        SortCol::Target => r.target.as_ref().and_then(|t| text(&t.name)),
        SortCol::Deadline if !r.terminal => time(r.deadline).map(Key::Num),
        _ => None,
    }
}

fn finding_in_scope(app: &App, f: &Finding) -> bool {
    match (&f.restore, f.objects.first()) {
        (Some(r), _) => app.in_scope(&r.namespace),
        (None, Some(o)) if !o.namespace.is_empty() => app.in_scope(&o.namespace),
        _ => true,
    }
}

/// Every finding in scope, worst first (stable: the report's order breaks ties).
pub fn findings(app: &App) -> Vec<&Finding> {
    let Some(frame) = &app.shown else {
        return Vec::new();
    };
    let filt = filter_of(app, ScreenKind::Findings);
    let mut v: Vec<&Finding> = frame
        .report
        .findings
        .iter()
        .filter(|f| finding_in_scope(app, f))
        .filter(|f| {
            let restore = f
                .restore
                .as_ref()
                .map(|r| r.to_string())
                .unwrap_or_default();
            let objs: Vec<String> = f.objects.iter().map(|o| o.to_string()).collect();
            matches(
                filt,
                &[
                    f.code.as_str(),
                    f.severity.as_str(),
                    &restore,
                    &f.message,
                    &objs.join(" "),
                ],
            )
        })
        .map(|f| &**f)
        .collect();
    v.sort_by_key(|f| std::cmp::Reverse(f.severity));
    match app.sort(ScreenKind::Findings) {
        Some(s) if s.col != SortCol::Findings => sort::apply(&mut v, s, |f| match s.col {
            SortCol::Code => text(f.code.as_str()),
            SortCol::Restore => f.restore.as_ref().and_then(|r| text(&r.to_string())),
            _ => None,
        }),
        Some(s) if s.reversed => v.reverse(),
        _ => {}
    }
    v
}

pub fn origs(app: &App) -> Vec<&OrigPvcView> {
    let Some(frame) = &app.shown else {
        return Vec::new();
    };
    let f = filter_of(app, ScreenKind::Orig);
    let mut v: Vec<&OrigPvcView> = frame
        .report
        .orig_pvcs
        .iter()
        .filter(|o| app.in_scope(&o.namespace))
        .filter(|o| {
            let restore = o
                .restore
                .as_ref()
                .map(|r| r.to_string())
                .unwrap_or_default();
            let why = match &o.reclaim {
                Ok(_) => "reclaimable",
                Err(e) => e.as_str(),
            };
            matches(f, &[&o.namespace, &o.pvc.name, &restore, why])
        })
        .map(|o| &**o)
        .collect();
    if let Some(s) = app.sort(ScreenKind::Orig) {
        sort::apply(&mut v, s, |o| match s.col {
            SortCol::Name => text(&o.pvc.name),
            SortCol::Namespace => text(&format!("{}/{}", o.namespace, o.pvc.name)),
            SortCol::Age => time(o.pvc.created).map(|t| Key::Num(-t)),
            SortCol::Restore => o.restore.as_ref().and_then(|r| text(&r.to_string())),
            SortCol::Size => o
                .size
                .as_deref()
                .and_then(sort::quantity_bytes)
                .map(Key::Num),
            _ => None,
        });
    }
    v
}

/// Events of every restore in scope, newest first.
pub fn events(app: &App) -> Vec<(&RestoreView, &EventLine)> {
    let Some(frame) = &app.shown else {
        return Vec::new();
    };
    let f = filter_of(app, ScreenKind::Events);
    let mut v: Vec<(&RestoreView, &EventLine)> = frame
        .report
        .restores
        .iter()
        .filter(|r| app.in_scope(&r.id.namespace))
        .flat_map(|r| r.events.iter().map(move |e| (&**r, e)))
        .filter(|(r, e)| {
            let about = e.about.as_ref().map(|o| o.to_string()).unwrap_or_default();
            matches(f, &[&r.id.name, &e.type_, &e.reason, &e.message, &about])
        })
        .collect();
    v.sort_by_key(|(_, e)| std::cmp::Reverse(e.time));
    if let Some(s) = app.sort(ScreenKind::Events) {
        sort::apply(&mut v, s, |(r, e)| match s.col {
            SortCol::Age => time(e.time).map(|t| Key::Num(-t)),
            SortCol::Restore => text(&r.id.to_string()),
            _ => None,
        });
    }
    v
}

/// Rows of the current table screen (0 elsewhere), for cursor bounds.
pub fn table_len(app: &App) -> usize {
    match &app.screen {
        Screen::Restores => restores(app).len(),
        Screen::Findings => findings(app).len(),
        Screen::Orig => origs(app).len(),
        Screen::Events => events(app).len(),
        Screen::Detail(d) => detail(app, &d.id).map_or(0, |r| pane_len(app, r, d.pane)),
        Screen::Yaml(y) => y.text.as_ref().map_or(1, |t| t.lines().count()),
        Screen::Help { .. } => super::views::help::line_count(app),
        Screen::Backups => super::backup_list::backups(app).len(),
        Screen::Preflight(p) => super::views::preflight::line_count(p),
    }
}

pub fn detail<'a>(app: &'a App, id: &crate::analysis::RestoreId) -> Option<&'a RestoreView> {
    app.shown.as_ref()?.report.restore(id)
}

pub fn restore_findings<'a>(app: &'a App, r: &'a RestoreView) -> Vec<&'a Finding> {
    let Some(frame) = &app.shown else {
        return Vec::new();
    };
    let mut v: Vec<&Finding> = frame.report.findings_for(&r.id).collect();
    v.sort_by_key(|f| std::cmp::Reverse(f.severity));
    v
}

/// The steps of `r` a finding is about, so the timeline can mark them. The catalog names no
/// step, so this is the UI's reading of FINDINGS.md: where in the restore the fact bites.
pub fn finding_steps(r: &RestoreView, f: &Finding) -> Vec<StepId> {
    use crate::analysis::Code as C;
    use StepId as S;
    let ids: &[StepId] = match f.code {
        C::OrigPvcForeign | C::RenameHalfDone | C::OrigNameTooLong | C::OrigHashCollision => {
            &[S::KeepDisks]
        }
        C::KeepOriginalDisabled => &[S::KeepDisks],
        C::DiskNotKept => &[S::KeepDisks, S::DeleteDatavolumes],
        C::DiskNotRestored => &[S::DataDownload],
        C::VmNotHalted | C::VmHaltStuck => &[S::HaltVm],
        C::VeleroRestoreStuck | C::VeleroRestoreFailed => &[S::VeleroRestore],
        C::ServernameReverted
        | C::ServernameCollision
        | C::ObjectstoreOwnerStale
        | C::SystemBucketBootstrap => &[S::Rebootstrap],
        C::RestoreDeadlineNear => &[S::Healthy],
        C::PurgeStuck => &[S::Purge],
        C::MalformedOptions | C::ConcurrentRestores => &[S::Validate],
        C::HelmreleaseLeftSuspended => &[S::SuspendReleases, S::SuspendRelease, S::ResumeRelease],
        // Where the restore stopped or stands still.
        C::RestoreFailed | C::RestoreStalled => {
            return r.current_step().map(|s| vec![s.id]).unwrap_or_default();
        }
        _ => &[],
    };
    ids.iter()
        .copied()
        .filter(|id| r.steps.iter().any(|s| s.id == *id))
        .collect()
}

/// The step the timeline opens on: the first one a finding is about, else the current one.
pub fn first_step(app: &App, r: &RestoreView) -> usize {
    let marked = restore_findings(app, r)
        .into_iter()
        .flat_map(|f| finding_steps(r, f))
        .find_map(|id| r.steps.iter().position(|s| s.id == id));
    let current = r
        .current_step()
        .and_then(|c| r.steps.iter().position(|s| s.id == c.id));
    marked.or(current).unwrap_or(0)
}

pub fn pane_len(app: &App, r: &RestoreView, pane: Pane) -> usize {
    match pane {
        Pane::Steps => r.steps.len(),
        Pane::Disks => chain_rows(r).len(),
        Pane::Events => r.events.len(),
        Pane::Findings => restore_findings(app, r).len(),
        Pane::History => r.history.len(),
    }
}

/// One line of the disks (or Postgres) pane.
#[derive(Debug, Clone, Copy)]
pub enum ChainRow<'a> {
    Disk(&'a DiskChain),
    Dv(&'a DvInfo),
    Pvc(&'a PvcInfo),
    Pv(&'a PvInfo),
    Orig(&'a DiskChain),
    OrigPv(&'a PvInfo),
    Download(&'a DownloadInfo),
    /// Postgres: the serverName comparison and the ObjectStore ownership.
    PgServerNames(&'a PgView),
    PgOwner(&'a PgView),
    PgDestinations(&'a PgView),
    Nothing,
}

pub fn chain_rows(r: &RestoreView) -> Vec<ChainRow<'_>> {
    let mut v = Vec::new();
    if let Some(pg) = &r.postgres {
        v.push(ChainRow::PgServerNames(pg));
        v.push(ChainRow::PgOwner(pg));
        v.push(ChainRow::PgDestinations(pg));
    }
    for d in &r.disks {
        v.push(ChainRow::Disk(d));
        if let Some(dv) = &d.data_volume {
            v.push(ChainRow::Dv(dv));
        }
        if let Some(p) = &d.pvc {
            v.push(ChainRow::Pvc(p));
        }
        if let Some(p) = &d.pv {
            v.push(ChainRow::Pv(p));
        }
        v.push(ChainRow::Orig(d));
        if let Some(p) = &d.orig_pv {
            v.push(ChainRow::OrigPv(p));
        }
        if let Some(dl) = &d.download {
            v.push(ChainRow::Download(dl));
        }
    }
    if v.is_empty() {
        v.push(ChainRow::Nothing);
    }
    v
}

impl ChainRow<'_> {
    /// The object `y` shows for this line.
    pub fn object(&self, ns: &str) -> Option<ObjRef> {
        match self {
            ChainRow::Disk(d) => d
                .pvc
                .as_ref()
                .map(|p| ObjRef::new(Kind::PersistentVolumeClaim, ns, &p.name)),
            ChainRow::Dv(d) => Some(ObjRef::new(Kind::DataVolume, ns, &d.name)),
            ChainRow::Pvc(p) => Some(ObjRef::new(Kind::PersistentVolumeClaim, ns, &p.name)),
            ChainRow::Pv(p) | ChainRow::OrigPv(p) => {
                Some(ObjRef::new(Kind::PersistentVolume, "", &p.name))
            }
            ChainRow::Orig(d) => d
                .orig
                .as_ref()
                .map(|p| ObjRef::new(Kind::PersistentVolumeClaim, ns, &p.name)),
            ChainRow::Download(d) => Some(ObjRef::new(Kind::DataDownload, ns, &d.name)),
            ChainRow::PgServerNames(pg) => Some(ObjRef::new(Kind::Postgres, ns, &pg.app)),
            ChainRow::PgOwner(pg) => Some(ObjRef::new(Kind::ObjectStore, ns, &pg.object_store)),
            ChainRow::PgDestinations(pg) => {
                Some(ObjRef::new(Kind::CnpgCluster, ns, &pg.cluster_name))
            }
            ChainRow::Nothing => None,
        }
    }
}

/// The object under the cursor on the current screen, for `y`.
pub fn selected_object(app: &App) -> Option<ObjRef> {
    let sel = |k| app.list_selection(k).selected;
    match &app.screen {
        Screen::Restores => restores(app)
            .get(sel(ScreenKind::Restores))
            .map(|r| restore_ref(r)),
        Screen::Findings => findings(app)
            .get(sel(ScreenKind::Findings))
            .and_then(|f| f.objects.first().cloned()),
        Screen::Orig => origs(app)
            .get(sel(ScreenKind::Orig))
            .map(|o| ObjRef::new(Kind::PersistentVolumeClaim, &o.namespace, &o.pvc.name)),
        Screen::Events => events(app)
            .get(sel(ScreenKind::Events))
            .map(|(r, e)| e.about.clone().unwrap_or_else(|| restore_ref(r))),
        Screen::Detail(d) => {
            let r = detail(app, &d.id)?;
            let i = d.sel[d.pane.index()].selected;
            match d.pane {
                Pane::Steps => Some(restore_ref(r)),
                Pane::Disks => chain_rows(r).get(i)?.object(&r.id.namespace),
                Pane::Events => Some(
                    r.events
                        .get(i)
                        .and_then(|e| e.about.clone())
                        .unwrap_or_else(|| restore_ref(r)),
                ),
                Pane::Findings => restore_findings(app, r)
                    .get(i)
                    .and_then(|f| f.objects.first().cloned()),
                Pane::History => Some(
                    r.history
                        .get(i)
                        .map_or_else(|| restore_ref(r), |h| h.object.clone()),
                ),
            }
        }
        Screen::Backups => super::backup_list::backups(app)
            .get(sel(ScreenKind::Backups))
            .map(|b| ObjRef::new(Kind::Backup, b.namespace(), b.name())),
        Screen::Yaml(_) | Screen::Help { .. } | Screen::Preflight(_) => None,
    }
}

pub fn restore_ref(r: &RestoreView) -> ObjRef {
    ObjRef::new(Kind::RestoreJob, &r.id.namespace, &r.id.name)
}

/// The object as YAML, from the raw JSON the snapshot keeps.
/// What the YAML view shows of an object from the frame: its kept text, or (for the kinds the
/// watch keeps no text of) the fields restorewatch holds, to show while the whole object is
/// read from the API server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum YamlView {
    Text(String),
    Held {
        yaml: String,
        resource_version: String,
    },
}

/// An object read whole from the API server for the YAML view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    pub yaml: String,
    pub resource_version: String,
    pub at: Timestamp,
}

pub fn yaml_view(snap: &Snapshot, target: &ObjRef) -> Result<YamlView, String> {
    let key = ObjKey::new(target.namespace.as_str(), target.name.clone());
    let obj = snap
        .objects
        .any(target.kind, &key)
        .ok_or_else(|| format!("{target} is not in the current data (deleted?)"))?;
    if obj.has_text() {
        let v: serde_json::Value =
            serde_json::from_str(&obj.raw()).map_err(|e| format!("stored JSON unreadable: {e}"))?;
        return yaml_text(&v).map(YamlView::Text);
    }
    Ok(YamlView::Held {
        yaml: yaml_text(&crate::model::held::held_json(&obj))?,
        resource_version: obj.meta().resource_version.to_string(),
    })
}

/// `yaml_view`'s text, whichever it is.
pub fn render_yaml(snap: &Snapshot, target: &ObjRef) -> Result<String, String> {
    yaml_view(snap, target).map(|v| match v {
        YamlView::Text(t) | YamlView::Held { yaml: t, .. } => t,
    })
}

/// The YAML view's text of an object's JSON, safe for the terminal.
pub fn yaml_text(v: &serde_json::Value) -> Result<String, String> {
    serde_saphyr::to_string(v)
        .map(crate::text::for_terminal_owned)
        .map_err(|e| format!("cannot render YAML: {e}"))
}

/// Kinds a row is built on whose data may be missing or old, and since when.
pub fn degraded<'a>(snap: &'a Snapshot, kinds: &[Kind]) -> Vec<(Kind, &'a SyncState)> {
    kinds
        .iter()
        .filter_map(|k| {
            let h = snap.health.get(k)?;
            h.state.is_degraded().then_some((*k, &h.state))
        })
        .collect()
}

/// Since when the oldest of these degraded kinds has been down: the age of the data.
pub fn stale_since(snap: &Snapshot, kinds: &[Kind]) -> Option<Timestamp> {
    degraded(snap, kinds)
        .into_iter()
        .filter_map(|(_, s)| match s {
            SyncState::Resyncing { since, .. } | SyncState::Failed { since, .. } => Some(*since),
            _ => None,
        })
        .min()
}

/// The kinds each kind of row rests on.
pub const RESTORE_KINDS: &[Kind] = &[Kind::RestoreJob];
pub const ORIG_KINDS: &[Kind] = &[Kind::PersistentVolumeClaim, Kind::PersistentVolume];
pub const EVENT_KINDS: &[Kind] = &[Kind::Event];

pub fn restore_stale(frame: &Frame, r: &RestoreView) -> bool {
    r.stale || frame.snapshot.is_stale(Kind::RestoreJob)
}

pub fn finding_stale(frame: &Frame, f: &Finding) -> bool {
    f.stale || f.objects.iter().any(|o| frame.snapshot.is_stale(o.kind))
}

pub fn finding_kinds(f: &Finding) -> Vec<Kind> {
    let mut v: Vec<Kind> = f.objects.iter().map(|o| o.kind).collect();
    v.sort();
    v.dedup();
    v
}
