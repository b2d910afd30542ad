//! A preflight as lines of text, and the RestoreJob manifest it was asked about: the CLI prints
//! them and the dashboard draws them, so both say the same thing in the same words.

use super::{OrigState, Preflight};
use crate::model::Kind;
use serde_json::{Value, json};

/// The RestoreJob `kubectl apply -f` would take to restore application `kind/app` from
/// `backup` under the name `name`.
pub fn restore_manifest(ns: &str, name: &str, kind: &str, app: &str, backup: &str) -> Value {
    json!({
        "apiVersion": Kind::RestoreJob.info().api_version(),
        "kind": "RestoreJob",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "backupRef": {"name": backup},
            "targetApplicationRef": {"apiGroup": "apps.cozystack.io", "kind": kind, "name": app},
        },
    })
}

/// The preflight, disk by disk and prediction by prediction, then the verdict and the manifest.
/// `controller_note` says why the controller's Deployment told nothing, when it could not be read.
pub fn lines(pf: &Preflight, controller_note: Option<&str>, manifest: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    let target = pf.target.as_ref().map_or("no target".to_string(), |t| {
        format!("{} {}", t.kind, t.name)
    });
    out.push(format!(
        "preflight: RestoreJob {} ({target}, {}, {}{})",
        pf.restore,
        pf.driver.as_str(),
        if pf.in_place {
            "in place"
        } else {
            "into a copy"
        },
        if pf.exists { ", exists" } else { "" }
    ));
    out.push(format!("controller: {}", pf.controller.summary()));
    if let Some(e) = controller_note {
        out.push(format!(
            "  (the backup controller's Deployment could not be read: {e})"
        ));
    }
    if !pf.disks.is_empty() {
        out.push("disks:".into());
    }
    for d in &pf.disks {
        let state = match &d.orig_state {
            OrigState::Free => "free".to_string(),
            OrigState::Ours => "already this RestoreJob's (resumes)".to_string(),
            OrigState::Taken { by, .. } => format!("TAKEN by a PVC of {by}"),
            OrigState::TooLong { length } => format!("too long ({length} characters)"),
            OrigState::Unknown => "unknown".to_string(),
        };
        let keeps = match (&d.pv, &d.capacity) {
            (Some(pv), cap) => format!(
                "; keeps PV {pv} {} (class {}: {})",
                cap.as_deref().unwrap_or("size unknown"),
                d.storage_class.as_deref().unwrap_or("none"),
                d.class_policy.as_deref().unwrap_or("policy unknown")
            ),
            (None, _) => String::new(),
        };
        out.push(format!("  {} -> {}: {state}{keeps}", d.disk, d.orig));
    }
    for p in &pf.predictions {
        let when = match (p.step, p.branches.as_slice()) {
            (None, _) => String::new(),
            (Some(s), []) => format!(" (at {s})"),
            (Some(s), b) => format!(
                " (at {s}, {} controller)",
                b.iter().map(|x| x.as_str()).collect::<Vec<_>>().join("/")
            ),
        };
        out.push(format!(
            "{:<7} {}{when}  {}",
            p.severity.as_str().to_uppercase(),
            p.code,
            p.message
        ));
        if !p.remedy.is_empty() {
            out.push(format!("        remedy: {}", p.remedy));
        }
    }
    for u in &pf.unknown {
        out.push(format!("UNKNOWN {u}"));
    }
    let verdict = match pf.exit_code() {
        0 => "nothing found that would lose or hide data",
        1 => "this restore would lose or hide data: see the errors above",
        _ => "cannot tell: see what is unknown above",
    };
    out.push(format!("verdict: {verdict}"));
    // The steps after the verdict: a screen shows the verdict without scrolling.
    if !pf.steps.is_empty() {
        out.push(format!(
            "forecast ({}):",
            if pf.branches.len() > 1 {
                "the controller's generation is unknown: every branch"
            } else {
                "the controller's generation"
            }
        ));
    }
    for s in &pf.steps {
        let branch = if pf.branches.len() > 1 {
            format!("[{}] ", s.branch.as_str())
        } else {
            String::new()
        };
        out.push(format!("  {branch}{}: {}", s.step, s.what));
    }
    if let Some(m) = manifest {
        out.push("manifest to apply (kubectl apply -f -):".into());
        out.extend(m.lines().map(str::to_string));
    }
    out
}
