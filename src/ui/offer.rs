//! What `a` offers for the selection, planned on the frame's snapshot: a finding's own action
//! on the object it names, a restore's findings' actions then the registry's restore actions,
//! a PVC's registry actions (reclaim-orig first for an `-orig` name). Pure: no API, no clock.

use super::consent::{still_running, unproven};
use super::dialog::{Choice, Menu, MenuEntry, Planned};
use crate::actions::{self, ActionRequest, Refusal, Target, plan};
use crate::analysis::{ActionKind, Finding, Report, RestoreView};
use crate::cluster::Snapshot;
use crate::model::Kind;
use crate::model::names::parse_orig_name;

// ---- what `a` offers ----------------------------------------------------------------------

fn target_for_finding(f: &Finding, action: ActionKind) -> Option<Target> {
    let spec = actions::spec(action);
    let pvc = f
        .objects
        .iter()
        .find(|o| o.kind == Kind::PersistentVolumeClaim);
    if spec.on_pvc
        && let Some(p) = pvc
    {
        return Some(Target::Pvc {
            namespace: p.namespace.to_string(),
            name: p.name.to_string(),
        });
    }
    if spec.on_restore
        && let Some(r) = &f.restore
    {
        return Some(Target::Restore {
            namespace: r.namespace.clone(),
            name: r.name.clone(),
        });
    }
    None
}

/// The action a finding names, on the object it is about.
pub fn for_finding(f: &Finding) -> Result<Choice, String> {
    let Some(action) = f.action else {
        return Err(format!(
            "{} has no repair action: see its remedy",
            f.code.as_str()
        ));
    };
    let target = target_for_finding(f, action).ok_or_else(|| {
        format!(
            "{}: cannot tell which object {action} would act on",
            f.code.as_str()
        )
    })?;
    Ok(Choice {
        action,
        target,
        because: Some(f.code.as_str().to_string()),
    })
}

fn push_unique(v: &mut Vec<Choice>, c: Choice) {
    if !v
        .iter()
        .any(|o| o.action == c.action && o.target == c.target)
    {
        v.push(c);
    }
}

/// A restore: the actions its findings name first, then every action the registry says
/// applies to a restore.
pub fn for_restore(report: &Report, r: &RestoreView) -> Vec<Choice> {
    let mut v = Vec::new();
    let mut fs: Vec<&Finding> = report.findings_for(&r.id).collect();
    fs.sort_by_key(|f| std::cmp::Reverse(f.severity));
    for f in fs {
        if let Ok(c) = for_finding(f) {
            push_unique(&mut v, c);
        }
    }
    // Only what can concern this kind of restore: no disk rename on a Postgres restore, no
    // serverName on a VM one.
    let fits = |k: ActionKind| match k {
        ActionKind::ResumeRename => r.driver == crate::analysis::Driver::Velero,
        ActionKind::FixServername => r.driver == crate::analysis::Driver::Cnpg,
        _ => true,
    };
    for spec in actions::ACTIONS
        .iter()
        .filter(|s| s.on_restore && fits(s.kind))
    {
        push_unique(
            &mut v,
            Choice {
                action: spec.kind,
                target: Target::Restore {
                    namespace: r.id.namespace.clone(),
                    name: r.id.name.clone(),
                },
                because: None,
            },
        );
    }
    v
}

/// A PVC: the registry's PVC actions; reclaim-orig first and only for an `-orig` name.
pub fn for_pvc(namespace: &str, name: &str) -> Vec<Choice> {
    let is_orig = parse_orig_name(name).is_some();
    let mut specs: Vec<_> = actions::ACTIONS
        .iter()
        .filter(|s| s.on_pvc)
        .filter(|s| is_orig || s.kind != ActionKind::ReclaimOrig)
        .collect();
    specs.sort_by_key(|s| s.kind != ActionKind::ReclaimOrig);
    specs
        .into_iter()
        .map(|s| Choice {
            action: s.kind,
            target: Target::Pvc {
                namespace: namespace.into(),
                name: name.into(),
            },
            because: None,
        })
        .collect()
}

// ---- planning (pure, on the frame's snapshot) ---------------------------------------------

fn class_policy(report: &Report, t: &Target) -> Option<String> {
    let Target::Pvc { namespace, name } = t else {
        return None;
    };
    report
        .orig_pvcs
        .iter()
        .find(|o| &o.namespace == namespace && &o.pvc.name == name)
        .and_then(|o| o.class_policy.clone())
}

/// What the operator consented to by typing it in this dialog: every plan of the dialog is
/// made with it, and nothing else turns it on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Consents {
    /// reclaim-orig: discard what may be the only good copy of the disk.
    pub discard_only_copy: bool,
    /// restart-restore: leave the old RestoreJob running.
    pub leave_running: bool,
}

impl Consents {
    pub const NONE: Consents = Consents {
        discard_only_copy: false,
        leave_running: false,
    };
    pub const DISCARD: Consents = Consents {
        discard_only_copy: true,
        leave_running: false,
    };
    pub const LEAVE: Consents = Consents {
        discard_only_copy: false,
        leave_running: true,
    };
}

pub fn request(choice: &Choice, policy: Option<String>, consents: Consents) -> ActionRequest {
    ActionRequest {
        action: choice.action,
        target: choice.target.clone(),
        policy,
        discard_only_copy: consents.discard_only_copy,
        leave_running: consents.leave_running,
    }
}

/// Plans a choice. reclaim-orig that only a policy choice would make plannable asks for it,
/// with the StorageClass's policy as the likely one; one that only the operator's consent to
/// discard the only copy would make plannable asks for that consent first, naming what is
/// unknown; where that cannot be named, the refusal stands. restart-restore refused because
/// the old RestoreJob still runs asks for the consent to leave it running when leaving it is
/// the only obstacle; when more stands in the way, the refusal says both.
pub fn plan_choice(snap: &Snapshot, report: &Report, choice: &Choice) -> Planned {
    match plan_with(snap, report, choice, Consents::NONE) {
        Planned::Refused(r) if choice.action == ActionKind::ReclaimOrig => {
            match (
                plan_with(snap, report, choice, Consents::DISCARD),
                unproven(snap, &choice.target),
            ) {
                (Planned::Refused(_), _) | (_, None) => Planned::Refused(r),
                (_, Some(u)) => Planned::OnlyCopy(u),
            }
        }
        Planned::Refused(r) => match (
            still_running(snap, choice.action, &choice.target),
            plan_with(snap, report, choice, Consents::LEAVE),
        ) {
            (Some(mut s), Planned::Plan(p)) if !p.is_settled() => {
                s.refusal = r.reason;
                Planned::LeaveRunning(s)
            }
            (Some(_), Planned::Refused(r2)) => Planned::Refused(Refusal {
                reason: format!("{}; and even left running: {}", r.reason, r2.reason),
                reads: r.reads,
            }),
            _ => Planned::Refused(r),
        },
        other => other,
    }
}

/// Plans a choice with the consents typed so far.
pub fn plan_with(snap: &Snapshot, report: &Report, choice: &Choice, consents: Consents) -> Planned {
    match plan(snap, &request(choice, None, consents)) {
        Ok(p) => Planned::Plan(Box::new(p)),
        Err(r) => {
            let with_policy = plan(snap, &request(choice, Some("Retain".into()), consents));
            if choice.action == ActionKind::ReclaimOrig && with_policy.is_ok() {
                Planned::NeedsPolicy {
                    class_policy: class_policy(report, &choice.target),
                }
            } else {
                Planned::Refused(r)
            }
        }
    }
}

pub fn menu(snap: &Snapshot, report: &Report, about: String, choices: Vec<Choice>) -> Menu {
    let mut entries: Vec<MenuEntry> = choices
        .into_iter()
        .map(|choice| MenuEntry {
            planned: plan_choice(snap, report, &choice),
            choice,
        })
        .collect();
    // What can run comes first, then what has nothing to do, then what is refused and why;
    // within each, the order of the findings (worst first) is kept.
    let rank = |p: &Planned| match p {
        Planned::Plan(p) if !p.is_settled() => 0,
        Planned::NeedsPolicy { .. } | Planned::OnlyCopy(_) => 0,
        Planned::Plan(_) => 1,
        // Refused as it is: waiting for the old restore is the normal course, so restoring
        // again beside it is not put before what can run.
        Planned::Refused(_) | Planned::LeaveRunning(_) => 2,
    };
    entries.sort_by_key(|e| rank(&e.planned));
    Menu {
        about,
        entries,
        selected: 0,
    }
}
