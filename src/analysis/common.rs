//! Rules that hold for any restore, whatever its driver.

use super::codes::Code;
use super::ctx::Ctx;
use super::emit::Findings;
use super::report::{Driver, ObjRef, Step, StepId, StepState};
use crate::model::Kind;
use crate::model::objects::RjPhase;
use jiff::Timestamp;

pub fn validate_step(ctx: &Ctx) -> (Step, bool) {
    let rj = ctx.rj;
    let mk = |state, detail: String| super::report::step(StepId::Validate, state, detail);
    match &rj.phase {
        RjPhase::New => (
            mk(
                StepState::Active,
                "waiting for the controller to pick it up".into(),
            ),
            false,
        ),
        RjPhase::Pending => {
            let why = rj
                .conditions
                .iter()
                .find(|c| c.type_ == "Ready")
                .and_then(|c| c.reason.clone());
            (
                mk(
                    StepState::Active,
                    format!(
                        "Pending{}",
                        why.map(|w| format!(": {w}")).unwrap_or_default()
                    ),
                ),
                false,
            )
        }
        RjPhase::Failed if !rj.started_at.is_known() => (
            mk(
                StepState::Failed,
                rj.message.clone().unwrap_or_else(|| "Failed".into()),
            ),
            false,
        ),
        RjPhase::Invalid(raw) => (
            mk(StepState::Active, format!("phase unreadable: {raw}")),
            false,
        ),
        _ => (
            mk(
                StepState::Done,
                ctx.started()
                    .map(|t| format!("started {t}"))
                    .unwrap_or_else(|| "started".into()),
            ),
            true,
        ),
    }
}

/// The HelmReleases a restore suspends, by driver.
pub fn suspended_releases(ctx: &Ctx, disk_names: &[String]) -> Vec<String> {
    let Some(app) = ctx.app() else {
        return Vec::new();
    };
    if !ctx.in_place {
        return Vec::new();
    }
    match (ctx.driver, ctx.target_kind()) {
        (Driver::Cnpg, _) => vec![crate::model::names::postgres_release(app)],
        (Driver::Velero, Some("VMDisk")) => vec![crate::model::names::vm_disk_name(app)],
        (Driver::Velero, _) => std::iter::once(crate::model::names::vm_instance_release(app))
            .chain(disk_names.iter().cloned())
            .collect(),
        _ => Vec::new(),
    }
}

pub struct RestoreFacts {
    pub releases: Vec<String>,
    pub leftovers: Vec<String>,
    /// Newest change in the restore's object tree.
    pub last_change: Option<Timestamp>,
    /// Whether another non-terminal restore targets the same application.
    pub other_active_on_app: bool,
    /// The restore is in a phase its own deadline watches over.
    pub deadline_governs: bool,
}

pub fn restore_findings(ctx: &Ctx, facts: &RestoreFacts, out: &mut Findings) {
    let snap = ctx.snap;
    let id = Some(&ctx.id);
    let rj = ctx.rj;

    if rj.phase == RjPhase::Failed {
        let moved = data_only_in_orig(ctx, &facts.releases);
        let remedy = if moved.is_empty() {
            "A failed RestoreJob is never retried: fix the cause, undo what it left (resume HelmReleases, start the VM), then restore again under a new RestoreJob name: `restorewatch action restart-restore` (or `a` on the restore) picks a name whose -orig names are free and creates it only after a clean preflight".to_string()
        } else {
            format!(
                "A failed RestoreJob is never retried. The disks' data is only in {}: restore again under a new RestoreJob name first (`restorewatch action restart-restore`, or `a` on the restore), and resume the HelmReleases only once the disks hold the right data (resuming now re-creates empty disks under the original names)",
                moved.join(", ")
            )
        };
        out.push(
            snap,
            Code::RestoreFailed,
            id,
            vec![ctx.rj_ref()],
            format!(
                "{} failed: {}{}",
                rj.meta.name,
                rj.message.as_deref().unwrap_or("(no message)"),
                if facts.leftovers.is_empty() {
                    String::new()
                } else {
                    format!("; left behind: {}", facts.leftovers.join(", "))
                }
            ),
            remedy,
        );
    }

    if (ctx.terminal() || rj.meta.deleted.is_some())
        && !facts.other_active_on_app
        && !ctx.superseded
    {
        let only_in_orig = data_only_in_orig(ctx, &facts.releases);
        for r in &facts.releases {
            if let Some(hr) = snap.helm_releases.get(ctx.ns, r)
                && hr.is_suspended() == Some(true)
            {
                out.push(
                    snap,
                    Code::HelmreleaseLeftSuspended,
                    id,
                    vec![ObjRef::new(Kind::HelmRelease, ctx.ns, r), ctx.rj_ref()],
                    format!(
                        "HelmRelease {r} is still suspended although {} is {}: Flux no longer reconciles the application",
                        rj.meta.name,
                        if rj.meta.deleted.is_some() { "being deleted".to_string() } else { rj.phase.as_str().to_string() }
                    ),
                    match only_in_orig.as_slice() {
                        [] => format!("Resume it (the resume-release action, or flux resume helmrelease {r} -n {})", ctx.ns),
                        moved => format!(
                            "Do not resume it yet: the disks' data is only in {} and no PVC of the original name exists, so resuming the disks' HelmReleases makes Flux render their DataVolumes again and CDI creates new disks under the original names (empty or freshly imported), and the VM would start on them. Restore again under a new RestoreJob name first (restorewatch action restart-restore), or move the data back by hand; resume (the resume-release action) only once the disks hold the right data",
                            moved.join(", ")
                        ),
                    },
                );
            }
        }
    }

    let malformed_event = ctx.event_with("MalformedOptions");
    let bad_fields = match ctx.driver {
        Driver::Cnpg => rj.options.invalid_cnpg_fields(),
        Driver::Velero => rj.options.invalid_velero_fields(),
        Driver::Other => Vec::new(),
    };
    if malformed_event.is_some() || !bad_fields.is_empty() {
        let what = if !bad_fields.is_empty() {
            format!(
                "spec.options fields of the wrong type: {}",
                bad_fields.join(", ")
            )
        } else {
            format!(
                "MalformedOptions event: {}",
                malformed_event
                    .and_then(|e| e.message.clone())
                    .unwrap_or_default()
            )
        };
        let consequence = match ctx.driver {
            Driver::Cnpg => {
                "the CNPG driver drops ALL options: a point-in-time restore silently becomes a latest-point restore, timeouts fall back to defaults"
            }
            _ => "the Velero driver fails the restore (invalid restore options)",
        };
        out.push(snap, Code::MalformedOptions, id, vec![ctx.rj_ref()], format!("{what}; {consequence}"), "Delete this RestoreJob and create it again with well-typed options (booleans unquoted, seconds as integers, recoveryTime as a string)".into());
    }

    // A CNPG restore re-bootstrapping runs against its deadline; restore-deadline-near speaks
    // for it then. Everywhere else (the Velero path has no deadline) silence means stalled.
    if rj.phase == RjPhase::Running
        && !facts.deadline_governs
        && ctx.older_than(facts.last_change, ctx.settings.stall_after)
    {
        out.push(
            snap,
            Code::RestoreStalled,
            id,
            vec![ctx.rj_ref()],
            format!(
                "{} is Running but nothing in its objects changed for {}",
                rj.meta.name,
                facts.last_change.map(|l| ctx.clock.human_since(l)).unwrap_or_default()
            ),
            "Look at the current step and the controller's log (the backup controller in cozy-backup-controller); the Velero path has no deadline".into(),
        );
    }
}

/// The `-orig` PVCs (of this RestoreJob's name) of disks among `releases` whose original PVC is
/// gone: after a failure past the rename (dump 08: the ConfigMap refused) the data lives only
/// there, and resuming the disks' HelmReleases re-creates empty disks under the original names.
/// Empty when the PVCs could not be read.
fn data_only_in_orig(ctx: &Ctx, releases: &[String]) -> Vec<String> {
    if ctx.driver != Driver::Velero
        || !super::disks::kind_observed(ctx.snap, Kind::PersistentVolumeClaim)
    {
        return Vec::new();
    }
    releases
        .iter()
        .filter(|r| r.starts_with("vm-disk-"))
        .filter(|r| ctx.snap.pvcs.get(ctx.ns, r).is_none())
        .map(|r| crate::model::names::orig_pvc_name(r, &ctx.rj.meta.name))
        .filter(|o| ctx.snap.pvcs.get(ctx.ns, o).is_some())
        .collect()
}
