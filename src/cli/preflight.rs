//! `restorewatch preflight`: before a RestoreJob is applied, read the cluster fresh and predict
//! what the backup controller will do with it and what would go wrong. Exit 0 nothing found that
//! loses or hides data, 1 something would, 2 cannot tell.

use super::check::Format;
use super::exit;
use crate::analysis::controller;
use crate::analysis::preflight::{Preflight, preflight, text};
use crate::args::ClusterArgs;
use crate::cluster::files::load_bytes;
use crate::cluster::list_once::Retry;
use crate::cluster::restore_scope::{ControllerImage, read_restore_scope};
use crate::model::objects::RestoreJob;
use crate::model::{AnyObject, Obj, parse_object};
use crate::{say as println, say_err as eprintln};
use clap::{ArgGroup, Args};
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, Clone, Args)]
#[command(group(ArgGroup::new("what").required(true).args(["filename", "app"])))]
#[command(
    after_help = "Exit status: 0 nothing found that loses or hides data, 1 something would, 2 cannot tell (a kind\n\
unreadable, the Backup missing) or bad usage.\n\n\
Examples:\n  restorewatch preflight -f restore.yaml\n  \
restorewatch preflight --app VMInstance/vm1 --backup vm1-backup --name restore-2 -n tenant-a -o json"
)]
pub struct PreflightArgs {
    /// The RestoreJob manifest, as `kubectl apply -f` takes it (`-` reads stdin)
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub filename: Option<PathBuf>,
    /// The application to restore, as KIND/NAME (VMInstance/vm1, Postgres/orders)
    #[arg(long, value_name = "KIND/NAME", requires_all = ["backup", "name"])]
    pub app: Option<String>,
    /// The Backup to restore from (with --app)
    #[arg(long, value_name = "NAME")]
    pub backup: Option<String>,
    /// The name of the RestoreJob to create (with --app)
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Output format
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Text)]
    pub output: Format,
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// The RestoreJob manifest `--app/--backup/--name` stand for.
pub fn manifest(
    ns: &str,
    name: &str,
    app: &str,
    backup: &str,
) -> Result<serde_json::Value, String> {
    let (kind, app_name) = app
        .split_once('/')
        .filter(|(k, n)| !k.is_empty() && !n.is_empty())
        .ok_or_else(|| format!("--app takes KIND/NAME (e.g. VMInstance/vm1), got {app:?}"))?;
    Ok(text::restore_manifest(ns, name, kind, app_name, backup))
}

/// The one RestoreJob of a manifest file, its namespace defaulted to `ns`.
fn from_file(path: &std::path::Path, ns: Option<&str>) -> Result<Arc<Obj<RestoreJob>>, String> {
    let (bytes, origin) = super::validate::read_manifest(path)?;
    let loaded = load_bytes(&bytes, &origin);
    if let Some(p) = loaded.problems.first() {
        return Err(p.to_string());
    }
    let mut jobs: Vec<AnyObject> = loaded
        .objects
        .into_iter()
        .filter(|o| matches!(o, AnyObject::RestoreJob(_)))
        .collect();
    if jobs.len() != 1 {
        return Err(format!(
            "{origin} holds {} RestoreJobs; preflight takes exactly one",
            jobs.len()
        ));
    }
    let mut job = jobs.remove(0);
    if job.meta().namespace.is_empty() {
        job.meta_mut().namespace = ns.unwrap_or("default").into();
    }
    match job {
        AnyObject::RestoreJob(rj) => Ok(rj),
        _ => Err("not a RestoreJob".into()),
    }
}

/// The proposed RestoreJob, and the manifest to print when it was built from flags.
fn proposed(args: &PreflightArgs) -> Result<(Arc<Obj<RestoreJob>>, Option<String>), String> {
    if let Some(f) = &args.filename {
        return Ok((from_file(f, args.cluster.namespace.as_deref())?, None));
    }
    let ns = args.cluster.namespace.as_deref().unwrap_or("default");
    let (Some(app), Some(backup), Some(name)) = (&args.app, &args.backup, &args.name) else {
        return Err("--app needs --backup and --name".into());
    };
    let v = manifest(ns, name, app, backup)?;
    let text = serde_json::to_string_pretty(&v).unwrap_or_default();
    match parse_object(v) {
        Ok(AnyObject::RestoreJob(rj)) => Ok((rj, Some(text))),
        _ => Err(format!("not a valid RestoreJob name: {name:?}")),
    }
}

pub async fn run(args: PreflightArgs) -> anyhow::Result<i32> {
    let (rj, manifest) = match super::validate::preflight_flags(
        args.app.as_deref(),
        args.backup.as_deref(),
        args.name.as_deref(),
    )
    .and_then(|()| proposed(&args))
    .and_then(|p| super::validate::restore_job(&p.0).map(|()| p))
    {
        Ok(p) => p,
        Err(e) => {
            eprintln!("restorewatch: {e}");
            return Ok(exit::USAGE);
        }
    };
    let conn = match crate::args::connect_or_exit(&args.cluster).await {
        Ok(c) => c,
        Err(code) => return Ok(code),
    };
    let listed = match read_restore_scope(&conn, &rj.meta.namespace, Retry::default()).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("restorewatch: {e:#}");
            return Ok(exit::USAGE);
        }
    };
    // The read carried the controller's image (one GET beside the lists) into the snapshot.
    let image = listed.controller_image.clone();
    let (generation, note) = generation_as_check(&conn, &listed.snapshot).await;
    if let Some(n) = note {
        eprintln!("restorewatch: {n}");
    }
    let pf = preflight(&listed.snapshot, &rj, generation);
    match args.output {
        Format::Json => {
            let mut doc = serde_json::to_value(&pf).unwrap_or_default();
            doc["exitCode"] = json!(pf.exit_code());
            if let Some(m) = &manifest {
                doc["manifest"] = serde_json::from_str(m).unwrap_or_default();
            }
            super::output::emit(&format!(
                "{}\n",
                serde_json::to_string_pretty(&doc).unwrap_or_default()
            ));
        }
        Format::Text => print_text(&pf, &image, manifest.as_deref()),
    }
    Ok(pf.exit_code())
}

/// The controller's generation as `check` judges it: from the evidence the whole cluster holds
/// (the `-orig` PVCs, their PVs and the RestoreJobs of every namespace, and the controller's
/// image), not only the restore's namespace, so that preflight and check name the same
/// generation at the same moment. When the cluster-wide lists are refused, the namespace's
/// evidence is used and the note says so.
pub async fn generation_as_check(
    conn: &crate::cluster::client::Connection,
    scoped: &crate::model::snapshot::Snapshot,
) -> (controller::ControllerGeneration, Option<String>) {
    use crate::cluster::list_once::list_kind;
    use crate::model::Kind;
    let mut wide = scoped.clone();
    for kind in [
        Kind::RestoreJob,
        Kind::PersistentVolumeClaim,
        Kind::PersistentVolume,
    ] {
        let info = kind.info();
        match list_kind(conn, info, None, Retry::default()).await {
            Ok(items) => {
                for item in items {
                    let mut v = serde_json::to_value(item).unwrap_or_default();
                    if let Some(o) = v.as_object_mut() {
                        o.insert("apiVersion".into(), info.api_version().into());
                        o.insert("kind".into(), info.api_kind.into());
                    }
                    if let Ok(obj) = parse_object(v) {
                        wide.objects.insert(obj);
                    }
                }
            }
            Err(e) => {
                return (
                    controller::of_snapshot(scoped),
                    Some(format!(
                        "{} of every namespace could not be listed ({}): the controller's generation is judged from the restore's namespace only",
                        info.plural,
                        crate::actions::execute::brief(&e),
                    )),
                );
            }
        }
    }
    (controller::of_snapshot(&wide), None)
}

fn print_text(pf: &Preflight, image: &ControllerImage, manifest: Option<&str>) {
    let note = match image {
        ControllerImage::Unreadable(e) => Some(e.as_str()),
        _ => None,
    };
    for line in text::lines(pf, note, manifest) {
        println!("{line}");
    }
}
