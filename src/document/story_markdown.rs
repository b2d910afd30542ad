//! The story as Markdown for a GitHub or GitLab issue: a summary table, the steps, the
//! timeline, each disk's chain, the serverNames, the findings and what is unknown. Every value
//! and message from the cluster is written as a code span (`markdown::code` in prose,
//! `markdown::cell` in a table row): nothing it holds can become a link, an image, HTML or a
//! mention (see `markdown`).

use super::markdown::{cell, code};
use super::story::{Fact, Line, Piece, Story};
use super::story_disks::{DiskStory, PgStory, PvStory, PvcStory};
use crate::analysis::{ActionKind, Finding};
use jiff::Timestamp;
use std::fmt::Write;

/// Where a piece of cluster text lands: a table row needs its `|` escaped, prose must not
/// (the backslash would show).
#[derive(Clone, Copy)]
enum At {
    Prose,
    Cell,
}

fn put(at: At, v: &str) -> String {
    match at {
        At::Prose => code(v),
        At::Cell => cell(v),
    }
}

fn line(l: &Line, at: At) -> String {
    l.0.iter()
        .map(|p| match p {
            Piece::Ours(s) => s.clone(),
            Piece::Value(v) | Piece::Prose(v) => put(at, v),
        })
        .collect()
}

fn time(t: Option<Timestamp>) -> String {
    t.map_or_else(
        || "(no time)".into(),
        |t| t.strftime("%Y-%m-%d %H:%M:%S").to_string(),
    )
}

/// An optional value in a table cell.
fn opt(v: Option<&str>) -> String {
    v.map_or_else(|| "-".into(), cell)
}

pub fn render(s: &Story) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Restore {}\n", code(&s.restore.to_string()));
    let _ = writeln!(out, "**Verdict:** {}.\n", line(&s.verdict, At::Prose));
    summary(&mut out, s);
    steps(&mut out, s);
    timeline(&mut out, &s.timeline);
    for d in &s.disks {
        disk(&mut out, d);
    }
    if let Some(p) = &s.postgres {
        postgres(&mut out, p);
    }
    findings(&mut out, s);
    if !s.unknowns.is_empty() {
        let _ = writeln!(out, "## What could not be known\n");
        for u in &s.unknowns {
            let _ = writeln!(out, "- {}", line(u, At::Prose));
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "_Written by restorewatch from {}, as of {} UTC._",
        line(&s.source, At::Prose),
        time(s.as_of)
    );
    out
}

fn summary(out: &mut String, s: &Story) {
    let target = s.target.as_ref().map_or_else(
        || "unknown".into(),
        |t| format!("{} {}", cell(&t.kind), cell(&t.name)),
    );
    let mode = if s.in_place { "in place" } else { "to a copy" };
    let mut outcome = cell(&s.phase);
    if let Some(m) = &s.message {
        let _ = write!(outcome, ": {}", cell(m));
    }
    let open = if s.open.is_empty() {
        "none".into()
    } else {
        s.open
            .iter()
            .map(|c| cell(c))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(out, "| | |\n|---|---|");
    for (k, v) in [
        ("Restored", target),
        ("How", format!("{}, {mode}", cell(s.driver))),
        ("Outcome", outcome),
        ("RestoreJob UID", cell(&s.uid)),
        ("Created", time(s.created)),
        ("Started", time(s.started)),
        ("Completed", time(s.completed)),
        ("Open findings", open),
    ] {
        let _ = writeln!(out, "| {k} | {v} |");
    }
    out.push('\n');
}

fn steps(out: &mut String, s: &Story) {
    if s.steps.is_empty() {
        return;
    }
    let _ = writeln!(out, "## Steps\n\n| step | state | detail |\n|---|---|---|");
    for st in &s.steps {
        let detail = if st.detail.is_empty() {
            String::new()
        } else {
            cell(&st.detail)
        };
        let _ = writeln!(
            out,
            "| {} | {} | {detail} |",
            st.id.title(),
            st.state.as_str()
        );
    }
    out.push('\n');
}

fn timeline(out: &mut String, facts: &[Fact]) {
    let _ = writeln!(out, "## Timeline (UTC, oldest first)\n");
    if facts.is_empty() {
        let _ = writeln!(out, "Nothing recorded.\n");
        return;
    }
    let _ = writeln!(out, "| time | object | by | what |\n|---|---|---|---|");
    for f in facts {
        let by = match (&f.writer, &f.operation) {
            (Some(w), Some(op)) => format!("{} ({})", cell(w), cell(op)),
            (Some(w), None) => cell(w),
            _ => String::new(),
        };
        let mark = if f.warning { "⚠ " } else { "" };
        let _ = writeln!(
            out,
            "| {} | {} | {by} | {mark}{} |",
            time(f.time),
            opt(f.object.as_deref()),
            line(&f.what, At::Cell)
        );
    }
    out.push('\n');
}

fn pvc_row(out: &mut String, label: &str, p: Option<&PvcStory>, missing: &str) {
    let Some(p) = p else {
        let _ = writeln!(out, "| {label} | {missing} | | | |");
        return;
    };
    let mut notes = Vec::new();
    if let Some(v) = &p.volume {
        notes.push(format!("volume {}", cell(v)));
    }
    if p.deleting {
        notes.push("being deleted".into());
    }
    if let Some(u) = &p.restore_job_uid {
        notes.push(format!("restore-job-uid {}", cell(u)));
    }
    if let Some(r) = &p.recorded_policy {
        notes.push(format!("recorded policy {}", cell(r)));
    }
    let _ = writeln!(
        out,
        "| {label} | {} | {} | {} | {} |",
        cell(&p.name),
        cell(&p.uid),
        opt(p.phase.as_deref()),
        notes.join(", ")
    );
}

fn pv_row(out: &mut String, label: &str, p: Option<&PvStory>) {
    let Some(p) = p else {
        let _ = writeln!(out, "| {label} | - | | | |");
        return;
    };
    let mut notes = vec![format!(
        "reclaim {} (recorded: {})",
        opt(p.reclaim_policy.as_deref()),
        p.recorded_policy
            .as_deref()
            .map_or_else(|| "none".into(), cell)
    )];
    if let Some(c) = &p.claim {
        notes.push(format!(
            "claimRef {} uid {}",
            cell(c),
            opt(p.claim_uid.as_deref())
        ));
    }
    let _ = writeln!(
        out,
        "| {label} | {} | | {} | {} |",
        cell(&p.name),
        opt(p.phase.as_deref()),
        notes.join(", ")
    );
}

/// A chain row with only a name and a phase, or what its absence means.
fn named_row(
    out: &mut String,
    label: &str,
    name: Option<&str>,
    phase: Option<&str>,
    missing: &str,
) {
    let _ = match name {
        Some(n) => writeln!(out, "| {label} | {} | | {} | |", cell(n), opt(phase)),
        None => writeln!(out, "| {label} | {missing} | | | |"),
    };
}

fn disk(out: &mut String, d: &DiskStory) {
    let _ = writeln!(out, "## Disk {}\n", code(&d.disk));
    let _ = writeln!(
        out,
        "| | name | UID | phase | notes |\n|---|---|---|---|---|"
    );
    named_row(
        out,
        "DataVolume",
        d.data_volume.as_deref(),
        d.data_volume_phase.as_deref(),
        "gone",
    );
    pvc_row(out, "PVC", d.pvc.as_ref(), "gone");
    pv_row(out, "PV", d.pv.as_ref());
    let orig_missing = format!("none ({} does not exist)", cell(&d.orig_name));
    pvc_row(out, "-orig PVC", d.orig.as_ref(), &orig_missing);
    pv_row(out, "-orig PV", d.orig_pv.as_ref());
    named_row(
        out,
        "DataDownload",
        d.download.as_deref(),
        d.download_phase.as_deref(),
        "none",
    );
    out.push('\n');
    if let Some(o) = &d.orig_ownership {
        let _ = writeln!(out, "The `-orig` PVC is {}.\n", line(o, At::Prose));
    }
    let _ = writeln!(out, "**Copy:** {}.\n", line(&d.proof, At::Prose));
}

fn postgres(out: &mut String, p: &PgStory) {
    let _ = writeln!(out, "## Postgres {}\n", code(&p.app));
    let verdict = if p.server_name_matches {
        "the Cluster archives under the app's newServerName"
    } else {
        "**the Cluster's serverName is not the app's newServerName**: the restore archives into the old prefix"
    };
    let _ = writeln!(out, "{verdict}.\n\n| | value |\n|---|---|");
    for (k, v) in [
        (
            "app `spec.bootstrap.newServerName`",
            opt(p.new_server_name.as_deref()),
        ),
        (
            "Cluster barman plugin `serverName`",
            opt(p.plugin_server_name.as_deref()),
        ),
        (
            "Cluster recovery `serverName`",
            opt(p.recovery_server_name.as_deref()),
        ),
        (
            "Cluster",
            format!("{} uid {}", cell(&p.cluster), opt(p.cluster_uid.as_deref())),
        ),
        (
            "ObjectStore",
            format!(
                "{} owner uid {}",
                cell(&p.object_store),
                opt(p.object_store_owner_uid.as_deref())
            ),
        ),
        ("archive destination", opt(p.archive_destination.as_deref())),
        (
            "recovery destination",
            opt(p.recovery_destination.as_deref()),
        ),
    ] {
        let _ = writeln!(out, "| {k} | {v} |");
    }
    out.push('\n');
}

fn action_hint(f: &Finding, restore: &str) -> Option<String> {
    let a = f.action?;
    let target = if a == ActionKind::ReclaimOrig {
        let pvc = f
            .objects
            .iter()
            .find(|o| o.kind == crate::model::Kind::PersistentVolumeClaim)?;
        format!("--pvc {}/{}", pvc.namespace, pvc.name)
    } else {
        format!("--restore {restore}")
    };
    Some(code(&format!("restorewatch action {a} {target}")))
}

fn findings(out: &mut String, s: &Story) {
    let _ = writeln!(out, "## Findings\n");
    if s.findings.is_empty() {
        let _ = writeln!(out, "None open.\n");
        return;
    }
    for f in &s.findings {
        let stale = if f.stale { " (stale)" } else { "" };
        let _ = writeln!(
            out,
            "- **{}** {}{stale}: {}",
            f.severity.as_str(),
            code(f.code.as_str()),
            code(&f.message)
        );
        let _ = writeln!(out, "  - remedy: {}", code(&f.remedy));
        if let Some(a) = action_hint(f, &s.restore.to_string()) {
            let _ = writeln!(out, "  - action: {a}");
        }
        if !f.objects.is_empty() {
            let objs: Vec<String> = f.objects.iter().map(|o| code(&o.to_string())).collect();
            let _ = writeln!(out, "  - objects: {}", objs.join(", "));
        }
    }
    out.push('\n');
}
