//! One line per object of a disk's chain (DataVolume -> PVC -> PV, `-orig` PVC -> its PV, the
//! DataDownload), or the Postgres serverName and ownership comparison. Values that contradict
//! each other are drawn in the danger style: that contradiction is usually the finding.

use super::super::format::{self, short_uid, truncate};
use super::super::select::ChainRow;
use super::super::theme::Theme;
use crate::analysis::{DiskChain, Ownership, PgView, PvInfo, PvcInfo, RestoreView};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// Names longer than this are cut so the values after them stay on screen.
const NAME_W: usize = 48;

fn label(t: &Theme, s: &str) -> Span<'static> {
    Span::styled(format!("    {s:<13}"), t.text_dim())
}

fn name(t: &Theme, s: &str) -> Span<'static> {
    Span::styled(format!("{} ", truncate(s, NAME_W)), t.text())
}

fn kv(t: &Theme, k: &str, v: String, style: Style) -> Vec<Span<'static>> {
    vec![
        Span::styled(format!(" {k} "), t.text_dim()),
        Span::styled(v, style),
    ]
}

fn pvc_line(t: &Theme, what: &str, p: &PvcInfo) -> Vec<Span<'static>> {
    let mut v = vec![label(t, what), name(t, &p.name)];
    let phase_style = match p.phase.as_deref() {
        Some("Bound") => t.text_ok(),
        Some("Pending") | Some("Lost") => t.text_danger(),
        _ => t.text(),
    };
    v.push(Span::styled(p.phase.display(), phase_style));
    if p.deleting {
        v.push(Span::styled(" (deleting)", t.text_warning()));
    }
    v
}

fn pvc_tail(t: &Theme, p: &PvcInfo) -> Vec<Span<'static>> {
    let mut v = kv(t, "uid", short_uid(&p.uid).to_string(), t.text());
    v.extend(kv(
        t,
        "→",
        p.volume.clone().unwrap_or_else(|| "no PV".into()),
        t.text(),
    ));
    v
}

/// A PV and whether its claimRef points at the PVC that should hold it (`expected`): a
/// mismatch is marked `✗` so it shows without colour too.
fn pv_line(
    t: &Theme,
    what: &str,
    ns: &str,
    expected: Option<&PvcInfo>,
    p: &PvInfo,
) -> Vec<Span<'static>> {
    let mut v = vec![
        label(t, what),
        name(t, &p.name),
        Span::styled(p.phase.display(), t.text()),
    ];
    let policy_style = if p.reclaim_policy.as_deref() == Some("Retain")
        && p.recorded_policy.as_deref() == Some("Delete")
    {
        t.text_warning()
    } else {
        t.text()
    };
    v.push(Span::styled(
        format!(" {}", p.reclaim_policy.display()),
        policy_style,
    ));
    let (claim, claim_style) = match &p.claim {
        None => ("✗ none".to_string(), t.text_warning()),
        Some((n, uid)) => {
            let ok = expected.is_none_or(|e| {
                *n == format!("{ns}/{}", e.name) && uid.as_deref().is_none_or(|u| u == e.uid)
            });
            let uid = uid
                .as_deref()
                .map_or(String::new(), |u| format!(" ({})", short_uid(u)));
            if ok {
                (format!("{n}{uid}"), t.text())
            } else {
                (format!("✗ {n}{uid}"), t.text_danger())
            }
        }
    };
    v.extend(kv(t, "claimRef", claim, claim_style));
    v.extend(kv(
        t,
        "recorded",
        p.recorded_policy.clone().unwrap_or_else(|| "none".into()),
        t.text(),
    ));
    v
}

fn orig_line(t: &Theme, r: &RestoreView, d: &DiskChain) -> Vec<Span<'static>> {
    let Some(o) = &d.orig else {
        return vec![
            label(t, "-orig PVC"),
            name(t, &d.orig_name),
            Span::styled("not created", t.text_dim()),
        ];
    };
    let mut v = pvc_line(t, "-orig PVC", o);
    // The ownership verdict first: it decides whether anything may touch this PVC.
    let (verdict, style) = match &d.orig_ownership {
        Some(Ownership::Ours { annotated: true }) => ("ours".to_string(), t.text_ok()),
        Some(Ownership::Ours { annotated: false }) => {
            ("ours (by creation time)".to_string(), t.text_ok())
        }
        Some(Ownership::Foreign { other_uid }) => (
            match other_uid {
                Some(u) => format!("✗ FOREIGN (RestoreJob {})", short_uid(u)),
                None => "✗ FOREIGN (older than this RestoreJob)".into(),
            },
            t.text_danger(),
        ),
        Some(Ownership::Unknown) | None => ("owner unknown".to_string(), t.text_warning()),
    };
    v.push(Span::styled(format!(" {verdict}"), style));
    let (uid, uid_style) = match &o.restore_job_uid {
        Some(u) if *u == r.uid => (short_uid(u).to_string(), t.text()),
        Some(u) => (format!("✗ {}", short_uid(u)), t.text_danger()),
        None => ("none".to_string(), t.text_dim()),
    };
    v.extend(kv(t, "restore-job-uid", uid, uid_style));
    v.extend(kv(
        t,
        "recorded",
        o.recorded_policy.clone().unwrap_or_else(|| "none".into()),
        t.text(),
    ));
    v.extend(pvc_tail(t, o));
    v
}

fn pg_lines(t: &Theme, row: &ChainRow, pg: &PgView) -> Vec<Span<'static>> {
    match row {
        ChainRow::PgServerNames(_) => {
            let new = pg.new_server_name.clone();
            let plugin = pg.plugin_server_name.as_ref().map(|f| f.display());
            let plugin_bad = match (&new, &pg.plugin_server_name) {
                (Some(n), Some(p)) => p.as_deref() != Some(n.as_str()),
                _ => false,
            };
            let collision = pg.recovery_server_name.is_some()
                && pg.recovery_server_name.as_deref()
                    == pg.plugin_server_name.as_ref().and_then(|f| f.as_deref())
                && pg.archive_destination == pg.recovery_destination;
            let mut v = vec![label(t, "serverName")];
            v.extend(kv(
                t,
                "newServerName",
                new.unwrap_or_else(|| "-".into()),
                t.text(),
            ));
            v.extend(kv(
                t,
                "plugin",
                plugin.unwrap_or_else(|| "-".into()),
                if plugin_bad || collision {
                    t.text_danger()
                } else {
                    t.text_ok()
                },
            ));
            v.extend(kv(
                t,
                "recovery",
                pg.recovery_server_name
                    .clone()
                    .unwrap_or_else(|| "-".into()),
                if collision { t.text_danger() } else { t.text() },
            ));
            if plugin_bad {
                v.push(Span::styled("  ≠ newServerName", t.text_danger()));
            }
            if collision {
                v.push(Span::styled("  archive = recovery", t.text_danger()));
            }
            v
        }
        ChainRow::PgOwner(_) => {
            let owner = pg.object_store_owner_uid.clone();
            let cluster = pg.cluster_uid.clone();
            let (verdict, style) = match (&owner, &cluster) {
                (Some(o), Some(c)) if o == c => ("owner is the live Cluster", t.text_ok()),
                (Some(_), Some(_)) => ("owner is NOT the live Cluster", t.text_danger()),
                (Some(_), None) => ("owner Cluster is gone", t.text_danger()),
                (None, _) => ("no owner", t.text_dim()),
            };
            let mut v = vec![label(t, "ObjectStore"), name(t, &pg.object_store)];
            v.extend(kv(
                t,
                "owner uid",
                owner.as_deref().map_or("none", short_uid).to_string(),
                style,
            ));
            v.extend(kv(
                t,
                "Cluster uid",
                cluster.as_deref().map_or("none", short_uid).to_string(),
                t.text(),
            ));
            v.push(Span::styled(format!("  {verdict}"), style));
            v
        }
        _ => {
            let mut v = vec![label(t, "Cluster"), name(t, &pg.cluster_name)];
            v.push(Span::styled(
                pg.cluster_phase.clone().unwrap_or_else(|| "-".into()),
                t.text(),
            ));
            if pg.cluster_deleting {
                v.push(Span::styled(" (deleting)", t.text_warning()));
            }
            v.extend(kv(
                t,
                "archive",
                pg.archive_destination.clone().unwrap_or_else(|| "-".into()),
                t.text(),
            ));
            v.extend(kv(
                t,
                "recovery",
                pg.recovery_destination
                    .clone()
                    .unwrap_or_else(|| "-".into()),
                t.text(),
            ));
            v
        }
    }
}

/// Draws one chain row. `disk` is the disk the row belongs to (for cross-checks).
pub fn line(t: &Theme, r: &RestoreView, row: &ChainRow, disk: Option<&DiskChain>) -> Line<'static> {
    let ns = r.id.namespace.as_str();
    let spans = match (row, disk) {
        (ChainRow::Disk(d), _) => vec![
            Span::styled(format!("▾ {}", truncate(&d.disk, NAME_W)), t.title(true)),
            Span::styled(
                format!("   keeps as {}", truncate(&d.orig_name, NAME_W + 12)),
                t.text_dim(),
            ),
        ],
        (ChainRow::Dv(dv), _) => {
            let mut v = vec![
                label(t, "DataVolume"),
                name(t, &dv.name),
                Span::styled(dv.phase.display(), t.text()),
            ];
            if let Some(p) = &dv.progress {
                v.push(Span::styled(format!(" {p}"), t.text()));
            }
            v
        }
        (ChainRow::Pvc(p), _) => {
            let mut v = pvc_line(t, "PVC", p);
            v.extend(pvc_tail(t, p));
            v
        }
        (ChainRow::Pv(p), Some(d)) => pv_line(t, "PV", ns, d.pvc.as_ref(), p),
        (ChainRow::OrigPv(p), Some(d)) => pv_line(t, "-orig PV", ns, d.orig.as_ref(), p),
        (ChainRow::Orig(d), _) => orig_line(t, r, d),
        (ChainRow::Download(dl), _) => {
            let mut v = vec![
                label(t, "DataDownload"),
                name(t, &dl.name),
                Span::styled(dl.phase.display(), t.text()),
            ];
            if let Some(p) = dl.progress {
                let pct = p.percent().unwrap_or(0.0);
                v.push(Span::styled(
                    format!("  {} ", format::bar(pct, 20)),
                    t.text_info(),
                ));
                v.push(Span::styled(
                    format!(
                        "{pct:>5.1}%  {} / {}",
                        format::bytes(p.done),
                        format::bytes(p.total)
                    ),
                    t.text(),
                ));
            }
            v
        }
        (ChainRow::PgServerNames(pg) | ChainRow::PgOwner(pg) | ChainRow::PgDestinations(pg), _) => {
            pg_lines(t, row, pg)
        }
        (ChainRow::Pv(_) | ChainRow::OrigPv(_), None) | (ChainRow::Nothing, _) => {
            vec![Span::styled(
                "no disks known for this restore",
                t.text_dim(),
            )]
        }
    };
    Line::from(spans)
}
