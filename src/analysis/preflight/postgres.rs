//! The CNPG driver's in-place restore: the serverName the new Cluster will archive under, the
//! ObjectStore it archives to, the prefix it recovers from, and the deadline it runs under.

use super::Out;
use crate::analysis::codes::Severity;
use crate::analysis::ctx::Ctx;
use crate::analysis::report::ObjRef;
use crate::model::names::postgres_release;
use crate::model::{Field, Kind};

/// The controller's deadline when `restoreTimeoutSeconds` is unset or not positive.
const DEFAULT_DEADLINE_SECS: i64 = 30 * 60;

pub(super) fn forecast(ctx: &Ctx, out: &mut Out) {
    let Some(app) = ctx.app() else {
        out.unknown("the restore names no application".into());
        return;
    };
    deadline(ctx, out);
    if !out.readable(
        ctx.snap,
        &[Kind::Postgres, Kind::CnpgCluster, Kind::ObjectStore],
    ) {
        return;
    }
    let release = postgres_release(app);
    if ctx.snap.postgreses.get(ctx.ns, app).is_none() {
        out.unknown(format!(
            "Postgres {}/{app} is not there: the controller has nothing to restore into",
            ctx.ns
        ));
        return;
    }
    // system-bucket-bootstrap, objectstore-missing and objectstore-owner-stale are the
    // analysis' findings on the forecast's states.
    let cluster = ctx.snap.clusters.get(ctx.ns, &release);
    let archive = cluster.and_then(|c| c.plugin_server_name.known().cloned());
    let recovery = ctx
        .backup
        .and_then(|b| b.driver_metadata.get("cnpg.io/server-name").cloned());
    out.add(
        "new-server-name",
        Severity::Info,
        vec![ObjRef::new(Kind::Postgres, ctx.ns, app)],
        format!(
            "the controller sets spec.bootstrap.newServerName on Postgres {app} to a fresh {}-restore-<hash> name (v1.6.3 and later), and the chart renders the new Cluster's archive serverName from it; now: archive serverName {}, recovery serverName {}",
            archive.as_deref().unwrap_or(&release),
            archive.as_deref().unwrap_or("unknown (no Cluster)"),
            recovery.as_deref().unwrap_or("unknown (the Backup does not say)")
        ),
        "while it runs, check the Cluster keeps the new name: a stale read can write the old one back (servername-reverted, action fix-servername)",
    );
    prefixes(ctx, &release, archive.as_deref(), recovery.as_deref(), out);
}

fn deadline(ctx: &Ctx, out: &mut Out) {
    let dropped = !ctx.rj.options.invalid_cnpg_fields().is_empty();
    let (secs, why) = match &ctx.rj.options.restore_timeout_seconds {
        // One option of the wrong type drops them all (dump 14-a).
        _ if dropped => (
            DEFAULT_DEADLINE_SECS,
            "every option dropped, this one with them: the default",
        ),
        Field::Known(s) if *s > 0 => (*s, "restoreTimeoutSeconds"),
        Field::Known(_) => (
            DEFAULT_DEADLINE_SECS,
            "restoreTimeoutSeconds <= 0 means the default",
        ),
        Field::Missing => (DEFAULT_DEADLINE_SECS, "the default"),
        // malformed-options is the analysis' finding; the driver runs under the default.
        Field::Invalid(_) => (
            DEFAULT_DEADLINE_SECS,
            "the options do not decode: the default",
        ),
    };
    out.add(
        "restore-deadline",
        Severity::Info,
        vec![ctx.rj_ref()],
        format!(
            "the restore must bring the Cluster to a healthy state within {} of its start ({why}), or the controller fails it",
            crate::analysis::human(jiff::SignedDuration::from_secs(secs))
        ),
        "",
    );
}

/// Archiving into the prefix the restore recovers from breaks the WAL archive check.
fn prefixes(
    ctx: &Ctx,
    release: &str,
    archive: Option<&str>,
    recovery: Option<&str>,
    out: &mut Out,
) {
    let (Some(a), Some(r)) = (archive, recovery) else {
        return;
    };
    let dest = ctx
        .snap
        .object_stores
        .get(ctx.ns, release)
        .and_then(|s| s.destination_path.clone());
    let backup_dest = ctx
        .backup
        .and_then(|b| b.driver_metadata.get("cnpg.io/destination-path").cloned());
    let same_place = match (&dest, &backup_dest) {
        (Some(d), Some(b)) => d == b,
        _ => true,
    };
    if a == r && same_place {
        out.add(
            "archive-prefix-shared",
            Severity::Warning,
            vec![ObjRef::new(Kind::CnpgCluster, ctx.ns, release)],
            format!(
                "the Cluster archives under serverName {a}, the prefix this restore recovers from{}: unless the new Cluster archives under a fresh newServerName, the WAL archive check fails (Expected empty archive) and the restore runs into its deadline",
                dest.map(|d| format!(" ({d})")).unwrap_or_default()
            ),
            "while the restore runs, make sure the Cluster's serverName becomes the app's newServerName (restorewatch action fix-servername)",
        );
    }
}
