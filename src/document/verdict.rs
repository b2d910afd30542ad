//! The verdict in one sentence: what a reader of the ticket must know first.

use super::story::Line;
use super::story_disks::DiskStory;
use crate::analysis::{Code, Finding, RestoreView, Severity, StepState};

fn names(disks: &[&str]) -> Line {
    let mut l = Line::default();
    for (i, d) in disks.iter().enumerate() {
        if i > 0 {
            l = l.say(", ");
        }
        l = l.val(*d);
    }
    l
}

fn join(mut a: Line, b: Line) -> Line {
    a.0.extend(b.0);
    a
}

pub fn sentence(r: &RestoreView, findings: &[Finding], disks: &[DiskStory]) -> Line {
    let succeeded = r.phase == "Succeeded";
    let not_restored: Vec<&str> = findings
        .iter()
        .filter(|f| f.code == Code::DiskNotRestored)
        .flat_map(|f| &f.objects)
        .filter(|o| o.kind == crate::model::Kind::PersistentVolumeClaim)
        .map(|o| o.name.as_str())
        .collect();
    if succeeded && !not_restored.is_empty() {
        let what = if not_restored.len() == 1 {
            "disk "
        } else {
            "disks "
        };
        return join(
            Line::ours(format!("data lost: {what}")),
            names(&not_restored),
        )
        .say(" not restored although the RestoreJob succeeded");
    }
    let errors: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .collect();
    // The error with a repair first: it is the one to act on, the others often follow from it.
    let first = errors
        .iter()
        .find(|f| f.action.is_some())
        .or(errors.first());
    if let Some(first) = first {
        let more = match errors.len() {
            1 => String::new(),
            2 => " (and 1 more error)".into(),
            n => format!(" (and {} more errors)", n - 1),
        };
        let lead = if r.phase == "Failed" {
            "failed, and needs attention: "
        } else {
            "needs attention: "
        };
        return Line::ours(lead)
            .val(first.code.as_str())
            .say(": ")
            .prose(&first.message)
            .say(more);
    }
    if r.phase == "Failed" {
        let l = Line::ours("failed");
        return match &r.message {
            Some(m) => l.say(": ").prose(m),
            None => l,
        };
    }
    if !r.terminal {
        return match r.current_step() {
            Some(s) if s.state == StepState::Failed => Line::ours("in progress, stuck at step ")
                .val(s.id.as_str())
                .say(": ")
                .prose(&s.detail),
            Some(s) => Line::ours("in progress at step ").val(s.id.as_str()),
            None => Line::ours("in progress"),
        };
    }
    if succeeded {
        let unproven: Vec<&str> = disks
            .iter()
            .filter(|d| !d.proven)
            .map(|d| d.disk.as_str())
            .collect();
        return if disks.is_empty() {
            Line::ours("healthy: the RestoreJob succeeded and no finding is open")
        } else if unproven.is_empty() {
            Line::ours("healthy: every disk proven restored")
        } else {
            join(
                Line::ours("succeeded, but not proven restored: "),
                names(&unproven),
            )
        };
    }
    Line::ours("ended ").val(&r.phase)
}
