//! In-place Postgres restores through the CNPG driver: steps, the serverName comparison, and
//! the findings of the stale-serverName report.

use super::codes::Code;
use super::ctx::{Ctx, human};
use super::emit::Findings;
use super::report::{ObjRef, PgView, Step, StepId, StepState};
use crate::model::names::{LABEL_CNPG_CLUSTER, postgres_release};
use crate::model::objects::{CnpgCluster, RjPhase, find_condition};
use crate::model::ownership::ClusterRole;
use crate::model::{Field, Kind, Obj};
use jiff::{SignedDuration, Timestamp};
use std::sync::Arc;

use StepState::*;

/// The CNPG driver's default restore deadline.
pub const DEFAULT_DEADLINE: SignedDuration = SignedDuration::from_mins(30);

use super::report::step;

pub struct PgOutcome {
    pub steps: Vec<Step>,
    pub view: Option<PgView>,
    pub deadline: Option<Timestamp>,
    /// Past the purge and before the deadline: the controller's clock is running.
    pub deadline_governs: bool,
}

/// The restore deadline: `restoreTimeoutSeconds` when it parses and is positive, else 30m.
/// Options that do not parse are ALL dropped by the driver, so one bad field resets this too.
pub fn deadline(ctx: &Ctx) -> Option<(Timestamp, SignedDuration)> {
    let started = ctx.started()?;
    let opts = &ctx.rj.options;
    let timeout = if opts.invalid_cnpg_fields().is_empty() {
        match opts.restore_timeout_seconds.known() {
            Some(s) if *s > 0 => SignedDuration::from_secs(*s),
            _ => DEFAULT_DEADLINE,
        }
    } else {
        DEFAULT_DEADLINE
    };
    Some((started.checked_add(timeout).ok()?, timeout))
}

/// Whether this Cluster is the one re-rendered after the purge (not the one being purged).
pub(crate) fn is_new_cluster(ctx: &Ctx, cluster: &Obj<CnpgCluster>) -> bool {
    // By evidence, never by when TargetPurged was stamped (`model::ownership::cluster_role`):
    // fix-servername asks this very question, so the finding and the repair agree.
    matches!(ctx.cluster_role(cluster), ClusterRole::Rerendered(_))
}

pub fn analyze_pg(ctx: &Ctx, out: &mut Findings) -> PgOutcome {
    let Some(app) = ctx.app() else {
        return PgOutcome {
            steps: vec![step(StepId::Validate, Active, "no target application")],
            view: None,
            deadline: None,
            deadline_governs: false,
        };
    };
    let snap = ctx.snap;
    let rj = ctx.rj;
    let cluster_name = postgres_release(app);
    let cluster = snap.clusters.get(ctx.ns, &cluster_name);
    let pg_app = snap.postgreses.get(ctx.ns, app);
    let hr = snap.helm_releases.get(ctx.ns, &cluster_name);
    let store_name = cluster
        .and_then(|c| c.plugin_object_store.clone())
        .unwrap_or_else(|| cluster_name.clone());
    let store = snap.object_stores.get(ctx.ns, &store_name);
    let recovery_store_name = cluster
        .and_then(|c| c.recovery_cluster())
        .and_then(|e| e.object_store.clone())
        .unwrap_or_else(|| format!("{cluster_name}-recovery"));
    let recovery_store = snap.object_stores.get(ctx.ns, &recovery_store_name);
    let purge_pvcs: Vec<_> = snap
        .pvcs
        .in_namespace(ctx.ns)
        .filter(|p| p.meta.label(LABEL_CNPG_CLUSTER) == Some(cluster_name.as_str()))
        .filter(|p| {
            new_cluster_uid(snap, ctx.ns, &cluster_name)
                .is_none_or(|_| p.meta.deleted.is_some() || p.meta.created < ctx.began())
        })
        .collect();
    let cnpg_pvcs = purge_pvcs.len();
    let purged = find_condition(&rj.conditions, "TargetPurged").filter(|c| c.is_true());
    let wal = find_condition(&rj.conditions, "WALArchiveReady");
    let role = cluster.map(|c| ctx.cluster_role(c));
    // The test fix-servername makes too; `role` keeps the evidence for the step's detail.
    let new_cluster = cluster.filter(|c| is_new_cluster(ctx, c));
    let dl = deadline(ctx);
    let terminal = ctx.terminal();
    let succeeded = rj.phase == RjPhase::Succeeded;
    let failed = rj.phase == RjPhase::Failed;

    let view = PgView {
        app: app.to_string(),
        cluster_name: cluster_name.clone(),
        new_server_name: pg_app.and_then(|a| a.new_server_name.clone()),
        plugin_server_name: cluster.map(|c| c.plugin_server_name.clone()),
        recovery_server_name: cluster
            .and_then(|c| c.recovery_cluster())
            .and_then(|e| e.server_name.clone()),
        cluster_uid: cluster.map(|c| c.meta.uid.to_string()),
        cluster_phase: cluster.and_then(|c| c.phase.clone()),
        cluster_deleting: cluster.is_some_and(|c| c.meta.deleted.is_some()),
        object_store: store_name.clone(),
        object_store_owner_uid: store
            .and_then(|s| s.meta.controller_owner())
            .map(|o| o.uid.to_string()),
        archive_destination: store.and_then(|s| s.destination_path.clone()),
        recovery_destination: recovery_store.and_then(|s| s.destination_path.clone()),
    };

    // Steps.
    let mut steps = Vec::with_capacity(9);
    let (validate, validated) = super::common::validate_step(ctx);
    steps.push(validate);
    let later = purged.is_some() || new_cluster.is_some() || succeeded;

    let wal_done = match wal {
        Some(c) if c.is_true() => {
            steps.push(step(
                StepId::WalArchive,
                Done,
                c.reason.clone().unwrap_or_else(|| "archive ready".into()),
            ));
            true
        }
        Some(c) if !later => {
            let detail = format!(
                "{}{}",
                c.reason.clone().unwrap_or_default(),
                c.message
                    .as_ref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default()
            );
            steps.push(step(
                StepId::WalArchive,
                if failed { Failed } else { Active },
                detail,
            ));
            false
        }
        _ if later => {
            steps.push(step(StepId::WalArchive, Done, ""));
            true
        }
        _ if validated => {
            steps.push(step(
                StepId::WalArchive,
                if failed { Failed } else { Active },
                "waiting for the backup's WAL to be archived",
            ));
            false
        }
        _ => {
            steps.push(step(StepId::WalArchive, Pending, ""));
            false
        }
    };

    let hr_suspended = hr.and_then(|h| h.is_suspended());
    let suspend_done = later || hr_suspended == Some(true);
    steps.push(if suspend_done {
        step(
            StepId::SuspendRelease,
            Done,
            format!("HelmRelease {cluster_name}"),
        )
    } else if wal_done && !failed {
        step(StepId::SuspendRelease, Active, "")
    } else {
        step(StepId::SuspendRelease, Pending, "")
    });

    let patched = pg_app.is_some_and(|a| a.bootstrap_enabled.known() == Some(&true));
    let patch_done = later || (suspend_done && patched);
    steps.push(if patch_done {
        let n = pg_app
            .and_then(|a| a.new_server_name.clone())
            .map(|n| format!("newServerName {n}"))
            .unwrap_or_else(|| "bootstrap enabled".into());
        step(StepId::PatchApp, Done, n)
    } else if suspend_done && !failed {
        step(StepId::PatchApp, Active, "")
    } else {
        step(StepId::PatchApp, Pending, "")
    });

    let purge_done = purged.is_some() || new_cluster.is_some() || succeeded;
    steps.push(if purge_done {
        step(StepId::Purge, Done, "old Cluster and PVCs deleted")
    } else if patch_done {
        let mut left = Vec::new();
        if let Some(c) = cluster {
            left.push(format!(
                "Cluster {}{}",
                c.meta.name,
                if c.meta.deleted.is_some() {
                    " (deleting)"
                } else {
                    ""
                }
            ));
        }
        if cnpg_pvcs > 0 {
            left.push(format!("{cnpg_pvcs} PVCs"));
        }
        let detail = if left.is_empty() {
            "purged; waiting for the controller".to_string()
        } else {
            format!("waiting for {} to go", left.join(" and "))
        };
        step(StepId::Purge, if failed { Failed } else { Active }, detail)
    } else {
        step(StepId::Purge, Pending, "")
    });

    let resumed = hr_suspended == Some(false);
    steps.push(if succeeded || (purge_done && resumed) {
        step(StepId::ResumeRelease, Done, "")
    } else if purge_done {
        step(
            StepId::ResumeRelease,
            if failed { Failed } else { Active },
            format!("HelmRelease {cluster_name} still suspended"),
        )
    } else {
        step(StepId::ResumeRelease, Pending, "")
    });

    let healthy = cluster.is_some_and(|c| c.is_healthy());
    steps.push(match new_cluster {
        _ if succeeded => step(StepId::Rebootstrap, Done, ""),
        Some(c) if c.is_healthy() => step(
            StepId::Rebootstrap,
            Done,
            format!("from {}", c.recovery_source.clone().unwrap_or_default()),
        ),
        Some(c) => step(
            StepId::Rebootstrap,
            if failed { Failed } else { Active },
            format!(
                "Cluster {}: {}",
                c.meta.name,
                c.phase.clone().unwrap_or_else(|| "no status yet".into())
            ),
        ),
        // Never "waiting to be rendered" while a Cluster of that name is there: say what is
        // known of it instead, also before the purge is seen to be done when the evidence for
        // the Cluster there is not enough.
        None if (purge_done && resumed) || matches!(role, Some(ClusterRole::Unknown(_))) => step(
            StepId::Rebootstrap,
            if failed { Failed } else { Active },
            not_rerendered(&cluster_name, role.as_ref()),
        ),
        None => step(StepId::Rebootstrap, Pending, ""),
    });

    steps.push(if healthy && (new_cluster.is_some() || succeeded) {
        step(StepId::Healthy, Done, crate::model::names::CNPG_HEALTHY)
    } else if succeeded {
        step(StepId::Healthy, Done, "")
    } else if new_cluster.is_some() {
        // Not reached yet while the Cluster re-bootstraps: pending, with the clock it races.
        let left = dl.map(|(d, _)| deadline_text(ctx, d)).unwrap_or_default();
        step(StepId::Healthy, if failed { Failed } else { Pending }, left)
    } else {
        step(StepId::Healthy, Pending, "")
    });

    steps.push(match &rj.phase {
        RjPhase::Succeeded => step(StepId::Complete, Done, "Succeeded"),
        RjPhase::Failed => step(
            StepId::Complete,
            Failed,
            rj.message.clone().unwrap_or_else(|| "Failed".into()),
        ),
        _ if healthy && new_cluster.is_some() => step(
            StepId::Complete,
            Active,
            "waiting for the controller to mark it Succeeded",
        ),
        _ => step(StepId::Complete, Pending, ""),
    });

    // Findings.
    let id = Some(&ctx.id);
    let cref = |c: &Arc<Obj<CnpgCluster>>| ObjRef::new(Kind::CnpgCluster, ctx.ns, &c.meta.name);
    if !terminal
        && let (Some(a), Some(c)) = (pg_app, new_cluster)
        && let Some(n) = a.new_server_name.as_deref()
    {
        let mismatch = match &c.plugin_server_name {
            Field::Known(s) => (s != n).then(|| s.clone()),
            Field::Invalid(raw) => Some(format!("unreadable {raw}")),
            Field::Missing => None,
        };
        if let Some(current) = mismatch {
            let readable = c.plugin_server_name.is_known();
            let f = out.push(
                snap,
                Code::ServernameReverted,
                id,
                vec![cref(c), ObjRef::new(Kind::Postgres, ctx.ns, app), ctx.rj_ref()],
                format!(
                    "Cluster {} archives under serverName {current}, but the app's bootstrap.newServerName is {n}: the WAL archive check will refuse the destination (\"Expected empty archive\") and the restore will run into its deadline",
                    c.meta.name
                ),
                if readable {
                    format!(
                        "While the restore runs, set the Cluster's barman plugin serverName to {n} (the fix-servername action does it with a test on the old value)"
                    )
                } else {
                    format!(
                        "The plugin's serverName is unreadable, so fix-servername cannot test the old value: set spec.plugins[name=barman-cloud.cloudnative-pg.io].parameters.serverName to {n} by hand (kubectl edit cluster {} -n {}) while the restore runs",
                        c.meta.name, ctx.ns
                    )
                },
            );
            if !readable {
                f.action = None;
            }
        }
    }

    if let Some(c) = cluster
        && !ctx.superseded
        && c.has_recovery
        && !c.is_healthy()
        && let (Field::Known(archive), Some(recovery)) = (
            &c.plugin_server_name,
            c.recovery_cluster().and_then(|e| e.server_name.as_deref()),
        )
        && archive == recovery
        && let (Some(a), Some(r)) = (&view.archive_destination, &view.recovery_destination)
        && a == r
    {
        out.push(
            snap,
            Code::ServernameCollision,
            id,
            vec![cref(c), ObjRef::new(Kind::ObjectStore, ctx.ns, &store_name), ObjRef::new(Kind::ObjectStore, ctx.ns, &recovery_store_name)],
            format!("Cluster {} would archive WAL as {archive} into {a}, the very prefix it recovers from: the archive check fails and the backup could be overwritten", c.meta.name),
            collision_remedy(ctx, pg_app.and_then(|a| a.new_server_name.as_deref()), new_cluster.is_some()),
        );
    }

    // The controller applies no deadline while it waits for the purge.
    if rj.phase == RjPhase::Running
        && !healthy
        && purge_done
        && let Some((at, timeout)) = dl
    {
        // Near: less than a fifth of the timeout left, in whole seconds.
        let fifth = -(-timeout.as_secs()).div_euclid(5);
        if ctx.clock.secs_left_below(at, fifth) {
            let msg = if ctx.clock.passed(at) {
                format!(
                    "the {} deadline passed {} ago and Cluster {cluster_name} is not healthy",
                    human(timeout),
                    ctx.clock.human_since(at)
                )
            } else {
                format!(
                    "{} of the {} deadline left and Cluster {cluster_name} is not healthy",
                    ctx.clock.human_until(at),
                    human(timeout)
                )
            };
            out.push(
                snap,
                Code::RestoreDeadlineNear,
                id,
                vec![ctx.rj_ref()],
                msg,
                "Look at the Cluster's status and the full-recovery job's log now; once the deadline passes the RestoreJob fails".into(),
            );
        }
    }

    if !terminal
        && hr_suspended == Some(true)
        && purged.is_none()
        && (cluster.is_some_and(|c| new_cluster.is_none_or(|n| n.meta.uid != c.meta.uid))
            || cnpg_pvcs > 0)
    {
        // The purge began when something got a deletionTimestamp; failing that, no earlier than
        // the restore's start or its WAL gate (a HelmRelease's age says nothing).
        let deletions = cluster
            .and_then(|c| c.meta.deleted)
            .into_iter()
            .chain(purge_pvcs.iter().filter_map(|p| p.meta.deleted));
        let since = deletions.min().or_else(|| {
            [
                hr.and_then(|h| h.meta.last_change),
                wal.filter(|w| w.is_true()).and_then(|w| w.last_transition),
                ctx.began(),
            ]
            .into_iter()
            .flatten()
            .max()
        });
        if ctx.older_than(since, ctx.settings.stall_after) {
            let mut objects = Vec::new();
            if let Some(c) = cluster {
                objects.push(cref(c));
            }
            objects.extend(
                purge_pvcs
                    .iter()
                    .map(|p| ObjRef::new(Kind::PersistentVolumeClaim, ctx.ns, &p.meta.name)),
            );
            objects.push(ObjRef::new(Kind::HelmRelease, ctx.ns, &cluster_name));
            out.push(
                snap,
                Code::PurgeStuck,
                id,
                objects,
                {
                    let mut left = Vec::new();
                    if let Some(c) = cluster {
                        left.push(format!("Cluster {}{}", c.meta.name, if c.meta.deleted.is_some() { " (deleting)" } else { "" }));
                    }
                    if cnpg_pvcs > 0 {
                        left.push(format!("{cnpg_pvcs} PVCs labelled cnpg.io/cluster={cluster_name}"));
                    }
                    format!(
                        "the purge has not finished after {}: {} still there",
                        since.map(|s| ctx.clock.human_since(s)).unwrap_or_default(),
                        left.join(" and ")
                    )
                },
                "Check the finalizers on the Cluster and its PVCs (kubectl get ... -o jsonpath='{.metadata.finalizers}') and what holds them".into(),
            );
        }
    }

    PgOutcome {
        steps,
        view: Some(view),
        deadline: dl.map(|(d, _)| d),
        deadline_governs: purge_done && dl.is_some_and(|(d, _)| ctx.clock.before(d)),
    }
}

/// "deadline in 4m", or once it is behind us "deadline passed 2h05m ago" (a countdown stops
/// at zero, which would read as a deadline still ahead).
fn deadline_text(ctx: &Ctx, at: Timestamp) -> String {
    if ctx.clock.passed(at) {
        format!("deadline passed {} ago", ctx.clock.human_since(at))
    } else {
        format!("deadline in {}", ctx.clock.human_until(at))
    }
}

/// What the rebootstrap step says while no Cluster is known to be the re-rendered one.
fn not_rerendered(cluster: &str, role: Option<&ClusterRole>) -> String {
    match role {
        None => format!("waiting for Cluster {cluster} to be rendered"),
        Some(ClusterRole::Unknown(why)) => {
            format!("unknown: cannot tell whether Cluster {cluster} is the re-rendered one ({why})")
        }
        Some(ClusterRole::Previous(why) | ClusterRole::Rerendered(why)) => {
            format!("Cluster {cluster} is not the re-rendered one ({why})")
        }
    }
}

/// An upgrade is advice only where the controller predates `newServerName`: with it set, the
/// collision is the serverName written back over it (report 003).
fn collision_remedy(ctx: &Ctx, new_server_name: Option<&str>, rerendered: bool) -> String {
    match new_server_name {
        None => "Restore into a copy (another application name), or upgrade Cozystack to a version that sets bootstrap.newServerName".into(),
        Some(n) if rerendered && !ctx.terminal() => format!(
            "The app already sets bootstrap.newServerName {n}: the Cluster's serverName was written back over it (report 003). Set it to {n} while the restore runs (servername-reverted, the fix-servername action)"
        ),
        Some(n) => format!(
            "The app already sets bootstrap.newServerName {n}, yet the Cluster archives under the recovery serverName (written back over it, report 003). Once this restore is over, restore again under a new RestoreJob, or into a copy"
        ),
    }
}

/// The UID of a Cluster that exists and is not being deleted: PVCs created for it are the new
/// Cluster's, not leftovers of the purge.
fn new_cluster_uid<'a>(
    snap: &'a crate::model::snapshot::Snapshot,
    ns: &str,
    name: &str,
) -> Option<&'a str> {
    snap.clusters
        .get(ns, name)
        .filter(|c| c.meta.deleted.is_none())
        .map(|c| c.meta.uid.as_str())
}
