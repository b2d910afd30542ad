//! The CNPG driver's in-place restore, as the real driver wrote it in dumps `07-*` and `14-*`:
//! Running, the options decoded (one value of the wrong type: a `MalformedOptions` Warning and
//! ALL options dropped), the HelmRelease suspended and the Postgres app patched to bootstrap
//! from the backup, the Cluster and its PVCs purged (the garbage collector takes what the
//! Cluster owned), the HelmRelease resumed. What the chart renders next is not the driver's.

use super::{Branch, Run};
use crate::analysis::Settings;
use crate::analysis::ctx::Ctx;
use crate::model::names::{LABEL_CNPG_CLUSTER, postgres_release};
use crate::model::{AnyObject, Field, Kind};
use std::sync::Arc;

pub(super) fn run(run: &mut Run) -> Option<String> {
    let rj = run.rj()?;
    let settings = Settings::default();
    let (app, server_name, backup_found, invalid, recovery_time) = {
        let ctx = Ctx::new(&run.world.snap, &settings, run.world.now, &rj);
        (
            ctx.app().map(str::to_string),
            ctx.backup
                .and_then(|b| b.driver_metadata.get("cnpg.io/server-name").cloned()),
            ctx.backup.is_some(),
            rj.options.invalid_cnpg_fields(),
            rj.options.recovery_time.known().cloned(),
        )
    };
    if !backup_found {
        return Some("the Backup is not there: the controller fails the RestoreJob, and nothing else can be told".into());
    }
    let Some(app) = app else {
        return Some("the restore names no application".into());
    };
    let ns = run.ns.clone();
    let name = run.name.clone();
    if run.branch == Branch::Guarded
        && let Some(first) = super::restore_ahead(&run.world.snap, &rj)
    {
        run.fail(
            "validate",
            format!("ConcurrentRestore: RestoreJob {first} restores the same application first"),
        );
        return None;
    }
    run.running();
    // Dump 14-a: the options are decoded as one struct; one field of the wrong type drops them
    // all, and the restore goes on with the defaults.
    let recovery_time = if invalid.is_empty() {
        recovery_time
    } else {
        run.world.event(
            &ns,
            &name,
            "Warning",
            "MalformedOptions",
            &format!(
                "spec.options is not valid JSON; falling back to defaults: fields of the wrong type: {}",
                invalid.join(", ")
            ),
        );
        None
    };
    run.stage(
        "validate",
        if invalid.is_empty() {
            "the controller starts the restore (Running)".into()
        } else {
            format!(
                "Running; MalformedOptions: every option dropped ({} of the wrong type){}",
                invalid.join(", "),
                if rj.options.recovery_time.is_known() {
                    ", recoveryTime with them: a latest-point restore"
                } else {
                    ""
                }
            )
        },
    );

    let release = postgres_release(&app);
    run.world.set_suspend(&ns, &release, true);
    if let Some(pg) = run.world.snap.postgreses.get(&ns, &app).cloned() {
        let mut pg = (*pg).clone();
        pg.spec.bootstrap_enabled = Field::Known(true);
        pg.spec.old_name = Some(release.clone());
        pg.spec.server_name = Some(server_name.unwrap_or_else(|| release.clone()));
        pg.spec.recovery_time = recovery_time.clone();
        pg.meta.last_change = Some(run.world.tick());
        run.world
            .snap
            .objects
            .insert(AnyObject::Postgres(Arc::new(pg)));
    }
    run.stage(
        "suspend-releases",
        format!(
            "HelmRelease {release} suspended; Postgres {app} set to bootstrap from the backup ({})",
            match &recovery_time {
                Some(t) => format!("recoveryTime {t}"),
                None => "no recoveryTime: the latest point".into(),
            }
        ),
    );

    let cluster_uid = run
        .world
        .snap
        .clusters
        .get(&ns, &release)
        .map(|c| c.meta.uid.to_string());
    run.world.delete(Kind::CnpgCluster, &ns, &release);
    let pvcs: Vec<String> = run
        .world
        .snap
        .pvcs
        .in_namespace(&ns)
        .filter(|p| p.meta.label(LABEL_CNPG_CLUSTER) == Some(release.as_str()))
        .map(|p| p.meta.name.to_string())
        .collect();
    for p in &pvcs {
        run.world.delete(Kind::PersistentVolumeClaim, &ns, p);
    }
    // The garbage collector removes what the purged Cluster owned (dump 07-a: the archive
    // ObjectStore).
    if let Some(uid) = cluster_uid {
        let owned: Vec<String> = run
            .world
            .snap
            .object_stores
            .in_namespace(&ns)
            .filter(|s| s.meta.owners.iter().any(|o| o.uid == uid))
            .map(|s| s.meta.name.to_string())
            .collect();
        for s in owned {
            run.world.delete(Kind::ObjectStore, &ns, &s);
        }
    }
    run.world.set_suspend(&ns, &release, false);
    run.stage(
        "purge",
        format!(
            "Cluster {release} and its PVCs ({}) deleted, HelmRelease resumed",
            if pvcs.is_empty() {
                "none".to_string()
            } else {
                pvcs.join(", ")
            }
        ),
    );
    None
}
