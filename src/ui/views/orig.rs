//! `-orig` PVCs: the disks kept by restores, and whether each can be reclaimed now.

use super::super::act;
use super::super::app::App;
use super::super::format;
use super::super::keys::ScreenKind;
use super::super::orig_totals;
use super::super::select;
use super::super::sort::SortCol;
use super::common::{self, Cell, Col, Row};
use crate::analysis::OrigPvcView;
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

const COLS: &[Col] = &[
    Col::new("NAMESPACE", Constraint::Max(16)).sorts(SortCol::Namespace),
    Col::new("NAME", Constraint::Max(40)).sorts(SortCol::Name),
    Col::new("SIZE", Constraint::Length(6))
        .right()
        .sorts(SortCol::Size),
    Col::new("AGE", Constraint::Length(6))
        .right()
        .sorts(SortCol::Age),
    Col::new("RESTOREJOB", Constraint::Max(24))
        .from(100)
        .sorts(SortCol::Restore),
    Col::new("RECORDED", Constraint::Length(8)).from(90),
    Col::new("PV", Constraint::Length(9)).from(110),
    Col::new("POLICY", Constraint::Length(7)),
    Col::new("RECLAIM", Constraint::Fill(1)),
    Col::new("DATA", Constraint::Length(9)),
];

fn reclaim_text(o: &OrigPvcView) -> String {
    match &o.reclaim {
        Ok(Some(p)) => format!("yes, PV back to {p}"),
        Ok(None) => "yes".into(),
        Err(why) => format!("no: {why}"),
    }
}

/// Who made the PVC: its RestoreJob, or one that is gone (a PVC such a RestoreJob left blocks
/// a new restore of the same name, and may be reclaimed).
fn made_by(app: &App, o: &OrigPvcView) -> String {
    match (&o.restore, &o.deleted_restore) {
        (Some(r), _) => format!(
            "RestoreJob {}{}",
            r.name,
            o.restore_phase
                .as_deref()
                .filter(|p| !p.is_empty())
                .map(|p| format!(" ({p})"))
                .unwrap_or_default()
        ),
        (None, Some(d)) => format!(
            "left by a deleted RestoreJob (created {}){}",
            o.pvc
                .created
                .map_or("at an unknown time".into(), |t| format::datetime(
                    t,
                    &app.opts.tz
                )),
            d.uid
                .as_deref()
                .map(|u| format!("  restore-job-uid {}", format::short_uid(u)))
                .unwrap_or_default()
        ),
        (None, None) => "unknown (no restore-job-uid, no creation time to tell)".into(),
    }
}

/// The totals of the rows shown, one line: how many, how much, what can go now, what cannot
/// and why (grouped). The most telling form that fits `width` is drawn.
fn totals_line(app: &App, items: &[&OrigPvcView], width: usize) -> Line<'static> {
    let t = app.theme();
    let s = orig_totals::totals(items);
    let b = format::bytes;
    let reasons = |short: bool| -> String {
        let v: Vec<String> = s
            .reasons
            .iter()
            .map(|(r, n)| {
                let label = match r {
                    orig_totals::Blocked::RestoreRunning if short => "running",
                    r => r.label(),
                };
                format!("{label} {n}")
            })
            .collect();
        if v.is_empty() {
            String::new()
        } else {
            format!(": {}", v.join(", "))
        }
    };
    let plural = if s.count == 1 { "" } else { "s" };
    let unrecorded = |long: bool| match (s.unrecorded, long) {
        (0, _) => String::new(),
        (n, true) => format!(", {n} without a recorded policy"),
        (n, false) => format!(", {n} unrecorded"),
    };
    let unknown = if s.size_unknown > 0 {
        format!(" │ {} of unknown size", s.size_unknown)
    } else {
        String::new()
    };
    let proof = |long: bool| {
        if long {
            format!(
                " │ restored copy proven {}, not proven {}",
                s.proven, s.unproven
            )
        } else {
            format!(" │ proven {}, not {}", s.proven, s.unproven)
        }
    };
    let forms = [
        (
            format!(" {} PVC{plural} · {} ", s.count, b(s.bytes)),
            format!(
                "│ reclaimable now {} ({}{}) ",
                s.reclaimable,
                b(s.reclaimable_bytes),
                unrecorded(true)
            ),
            format!(
                "│ blocked {} ({}){}{unknown}",
                s.blocked,
                b(s.blocked_bytes),
                reasons(false)
            ),
        ),
        (
            format!(" {} PVC{plural} · {} ", s.count, b(s.bytes)),
            format!(
                "│ reclaimable now {} ({}{}) ",
                s.reclaimable,
                b(s.reclaimable_bytes),
                unrecorded(false)
            ),
            format!(
                "│ blocked {} ({}){}{unknown}",
                s.blocked,
                b(s.blocked_bytes),
                reasons(true)
            ),
        ),
        (
            format!(" {} · {} ", s.count, b(s.bytes)),
            format!("│ now {} · {} ", s.reclaimable, b(s.reclaimable_bytes)),
            format!("│ blocked {}{}", s.blocked, reasons(true)),
        ),
    ];
    // The proof counts ride on each form where they fit, else the form goes without them.
    let forms: Vec<(String, String, String)> = forms
        .iter()
        .enumerate()
        .flat_map(|(i, (a, n, b))| {
            [
                (a.clone(), n.clone(), format!("{b}{}", proof(i == 0))),
                (a.clone(), n.clone(), b.clone()),
            ]
        })
        .collect();
    let fits = |f: &(String, String, String)| {
        format::width(&f.0) + format::width(&f.1) + format::width(&f.2) <= width
    };
    let (all, now, blocked) = forms
        .iter()
        .find(|f| fits(f))
        .unwrap_or(&forms[forms.len() - 1])
        .clone();
    Line::from(vec![
        Span::styled(all, t.title(false)),
        Span::styled(now, t.text_ok()),
        Span::styled(
            blocked,
            if s.blocked > 0 {
                t.text_warning()
            } else {
                t.text_dim()
            },
        ),
    ])
}

pub fn draw(f: &mut Frame, app: &App, body: Rect) {
    let t = app.theme();
    let items = select::origs(app);
    let marked = act::marked(app).len();
    let title = if marked == 0 {
        "-orig PVCs".to_string()
    } else {
        format!("● {marked} marked · -orig PVCs")
    };
    let a = common::table_frame(f, app, body, &title, items.len());
    // Over the table's bottom border, where it costs no row.
    if a.block.height >= 3 && a.block.width > 4 && !items.is_empty() {
        let r = a.block;
        f.render_widget(
            Paragraph::new(totals_line(app, &items, usize::from(r.width - 2))),
            Rect::new(r.x + 1, r.y + r.height - 1, r.width - 2, 1),
        );
    }
    let Some(frame) = &app.shown else {
        common::draw_empty(f, t, a.rows, common::empty_reason(app, "-orig PVCs"));
        return;
    };
    if items.is_empty() {
        common::draw_empty(f, t, a.rows, common::empty_reason(app, "-orig PVCs"));
        return;
    }
    let stale = select::ORIG_KINDS
        .iter()
        .any(|k| frame.snapshot.is_stale(*k));
    let rows: Vec<Row> = items
        .iter()
        .map(|o| {
            let pv_phase =
                o.pv.as_ref()
                    .map_or("missing".into(), |p| p.phase.display());
            let policy =
                o.pv.as_ref()
                    .map_or("-".into(), |p| p.reclaim_policy.display());
            let policy_style = (!stale
                && o.pv.as_ref().and_then(|p| p.reclaim_policy.as_deref()) == Some("Retain")
                && o.pvc.recorded_policy.as_deref() == Some("Delete"))
            .then(|| t.text_warning());
            Row {
                cells: vec![
                    Cell::plain(o.namespace.clone()),
                    match (
                        app.marks
                            .contains(&(o.namespace.clone(), o.pvc.name.clone())),
                        marked > 0,
                    ) {
                        (true, _) => Cell::styled(format!("● {}", o.pvc.name), t.text_info()),
                        (false, true) => Cell::plain(format!("  {}", o.pvc.name)),
                        (false, false) => Cell::plain(o.pvc.name.clone()),
                    },
                    Cell::plain(o.size.clone().unwrap_or_else(|| "-".into())),
                    Cell::plain(format::age_since(app.now, o.pvc.created)),
                    Cell::plain(match (&o.restore, &o.deleted_restore) {
                        (Some(r), _) => r.name.clone(),
                        (None, Some(_)) => "deleted".into(),
                        (None, None) => "unknown".into(),
                    }),
                    Cell::plain(
                        o.pvc
                            .recorded_policy
                            .clone()
                            .unwrap_or_else(|| "none".into()),
                    ),
                    Cell::plain(pv_phase),
                    Cell {
                        text: policy.into(),
                        style: policy_style,
                    },
                    Cell {
                        text: reclaim_text(o).into(),
                        style: (!stale && o.reclaim.is_ok()).then(|| t.text_ok()),
                    },
                    Cell::plain(common::stale_cell(app, stale, select::ORIG_KINDS)),
                ],
                style: if stale { t.stale() } else { t.text() },
            }
        })
        .collect();
    let cols = if stale { COLS } else { &COLS[..COLS.len() - 1] };
    let sel = app.list_selection(ScreenKind::Orig);
    common::draw_table(f, t, &a, cols, &rows, sel, app.sort(ScreenKind::Orig));
    let Some(extra) = a.extra else { return };
    let vis = sel.visible(items.len(), usize::from(a.rows.height));
    let Some(o) = items.get(vis.selected) else {
        return;
    };
    let label = |s: &'static str| Span::styled(s, t.title(false));
    let pv = o.pv.as_ref();
    let claim = pv
        .and_then(|p| p.claim.as_ref())
        .map_or("none".into(), |(n, uid)| match uid {
            Some(u) => format!("{n} (uid {})", format::short_uid(u)),
            None => n.clone(),
        });
    let lines = vec![
        Line::from(vec![
            label("pvc      "),
            Span::raw(format!(
                "{}/{}  uid {}  phase {}  restore-job-uid {}",
                o.namespace,
                o.pvc.name,
                format::short_uid(&o.pvc.uid),
                o.pvc.phase.display(),
                o.pvc
                    .restore_job_uid
                    .as_deref()
                    .map_or("none", format::short_uid),
            )),
        ]),
        Line::from(vec![label("made by  "), Span::raw(made_by(app, o))]),
        Line::from(vec![
            label("pv       "),
            Span::raw(match pv {
                Some(p) => format!(
                    "{}  {}  reclaim {}  claimRef {claim}",
                    p.name,
                    p.phase.display(),
                    p.reclaim_policy.display()
                ),
                None => "none".into(),
            }),
        ]),
        Line::from(vec![
            label("policy   "),
            Span::raw(format!(
                "recorded {}  storage class {}",
                o.pvc
                    .recorded_policy
                    .as_deref()
                    .unwrap_or("none (older controller)"),
                o.class_policy.as_deref().unwrap_or("unknown"),
            )),
        ]),
        Line::from(vec![
            label("copy     "),
            Span::styled(
                o.proof.describe(),
                if o.proof.is_proven() {
                    t.text_ok()
                } else {
                    t.text_warning()
                },
            ),
        ]),
        Line::from(vec![
            label("reclaim  "),
            Span::raw(reclaim_text(o)),
            Span::styled(
                if o.mounted_by.is_empty() {
                    String::new()
                } else {
                    format!("  mounted by {}", o.mounted_by.join(", "))
                },
                t.text_warning(),
            ),
        ]),
    ];
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(common::block(t, "-orig PVC", None, "", false)),
        extra,
    );
}
