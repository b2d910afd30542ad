//! `restorewatch check`: analyse once and report, for scripts and on-call dumps.

use super::exit;
use super::output;
use super::picture::PictureArgs;
use crate::analysis::{Report, Severity};
use crate::args::ClusterArgs;
use crate::cluster::files::{LoadProblem, load_bytes};
use crate::cluster::input::{DEFAULT_MAX_INPUT, read_input};
use crate::cluster::{Snapshot, SourceInfo};
use clap::{Args, ValueEnum};
use jiff::Timestamp;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Error,
    Warning,
    Info,
    Never,
}

impl FailOn {
    fn threshold(self) -> Option<Severity> {
        match self {
            FailOn::Error => Some(Severity::Error),
            FailOn::Warning => Some(Severity::Warning),
            FailOn::Info => Some(Severity::Info),
            FailOn::Never => None,
        }
    }
}

#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Exit status: 0 when no finding reaches --fail-on, 1 when one does, 2 on bad usage, unreadable input, or a cluster (or some of its kinds) that could not be read.\n\n\
Examples:\n  kubectl get restorejobs,backups,pvc,pv,dv,vm,vmi,hr -A -o yaml > dump.yaml\n  restorewatch check --snapshot dump.yaml\n  \
restorewatch check --snapshot dump.yaml -o json --fail-on warning\n  restorewatch check            # the current kubeconfig context"
)]
pub struct CheckArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub picture: PictureArgs,
    /// Output format
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Text)]
    pub output: Format,
    /// Exit 1 when a finding reaches this severity
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
}

/// Reads the files (and stdin for `-`), reporting broken documents on stderr.
pub fn load_snapshot(paths: &[PathBuf]) -> anyhow::Result<(Snapshot, Vec<LoadProblem>)> {
    load_snapshot_limited(paths, DEFAULT_MAX_INPUT)
}

/// `load_snapshot` refusing any file past `max_input` bytes.
pub fn load_snapshot_limited(
    paths: &[PathBuf],
    max_input: u64,
) -> anyhow::Result<(Snapshot, Vec<LoadProblem>)> {
    let mut objects = Vec::new();
    let mut problems = Vec::new();
    let mut names = Vec::new();
    let mut images = Vec::new();
    for p in paths {
        let (bytes, origin) = read_input(p, max_input)?;
        let loaded = load_bytes(&bytes, &origin);
        drop(bytes);
        objects.extend(loaded.objects);
        problems.extend(loaded.problems);
        images.extend(loaded.controller_images);
        names.push(origin);
    }
    let mut snap = Snapshot::from_objects(objects);
    if let Some((image, fallback)) = crate::cluster::controller_image::from_files(&images) {
        snap.controller_image = Some(image);
        snap.controller_image_fallback = fallback;
    }
    let newest = newest_object(&snap);
    snap.source = SourceInfo::Files {
        files: names,
        newest_object: newest,
    };
    Ok((snap, problems))
}

fn newest_object(snap: &Snapshot) -> Option<Timestamp> {
    crate::model::Kind::all()
        .filter_map(|k| {
            // Only RestoreJobs and events are cheap and telling enough for "as of".
            match k {
                crate::model::Kind::RestoreJob => snap
                    .restore_jobs
                    .iter()
                    .filter_map(|o| o.meta.last_change)
                    .max(),
                crate::model::Kind::Event => snap.events.iter().filter_map(|o| o.last).max(),
                _ => None,
            }
        })
        .max()
}

/// Keeps only the namespace asked for (cluster-scoped objects stay: PVs, StorageClasses).
pub fn scope_report(report: &mut Report, namespace: Option<&str>) {
    let Some(ns) = namespace else { return };
    std::sync::Arc::make_mut(&mut report.restores).retain(|r| r.id.namespace == ns);
    std::sync::Arc::make_mut(&mut report.orig_pvcs).retain(|o| o.namespace == ns);
    let kept = report.findings.iter().filter(|f| match &f.restore {
        Some(r) => r.namespace == ns,
        None => f.objects.iter().any(|o| o.namespace == ns) || f.objects.is_empty(),
    });
    report.findings = std::sync::Arc::new(kept.cloned().collect());
    report.reindex();
}

pub async fn run(args: CheckArgs) -> anyhow::Result<i32> {
    let (_, mut report) = match args.picture.analysed(&args.cluster).await {
        Ok(p) => p,
        Err(code) => return Ok(code),
    };
    scope_report(&mut report, args.cluster.namespace.as_deref());
    match args.output {
        Format::Json => output::emit(&format!("{}\n", crate::document::check_json::json(&report))),
        Format::Text => output::emit(&output::text(&report, output::use_colour())),
    }
    Ok(exit_status(&report, args.fail_on))
}

/// The picture a one-shot command works on: the `--snapshot` files (broken documents said on
/// stderr), else one list of the live cluster; `Err` is the exit status, the reason said.
pub(super) async fn picture(
    cluster: &ClusterArgs,
    snapshots: &[PathBuf],
    max_input: Option<u64>,
    allow_partial: bool,
) -> Result<Snapshot, i32> {
    if snapshots.is_empty() {
        return live_snapshot(cluster, allow_partial).await;
    }
    match load_snapshot_limited(snapshots, max_input.unwrap_or(DEFAULT_MAX_INPUT)) {
        Ok((snap, problems)) => {
            for p in &problems {
                crate::say_err!("restorewatch: {p}");
            }
            Ok(snap)
        }
        Err(e) => {
            crate::say_err!("restorewatch: {e:#}");
            Err(exit::USAGE)
        }
    }
}

/// 1 when a finding reaches `--fail-on`. A stale finding (built on a kind that could not be
/// read) does not count: it may describe a state that is not there.
pub fn exit_status(report: &Report, fail_on: FailOn) -> i32 {
    let fails = fail_on
        .threshold()
        .is_some_and(|t| report.findings.iter().any(|f| !f.stale && f.severity >= t));
    if fails { exit::FINDINGS } else { exit::OK }
}

/// Lists the cluster once. Kinds that stay unreadable after retries stop the check (exit 2,
/// naming them) unless `--allow-partial`.
async fn live_snapshot(cluster: &ClusterArgs, allow_partial: bool) -> Result<Snapshot, i32> {
    use crate::cluster::list_once::{Retry, list_all};
    let listed = match list_all(cluster, Retry::default()).await {
        Ok(l) => l,
        Err(e) => {
            crate::say_err!("restorewatch: {e:#}");
            return Err(exit::USAGE);
        }
    };
    if listed.unreadable.is_empty() {
        return Ok(listed.snapshot);
    }
    let names: Vec<&str> = listed.unreadable.iter().map(|u| u.plural()).collect();
    for u in &listed.unreadable {
        if u.forbidden {
            crate::say_err!("restorewatch: no access to {}: {}", u.plural(), u.error);
        } else {
            crate::say_err!("restorewatch: cannot list {}: {}", u.plural(), u.error);
        }
    }
    if !allow_partial {
        crate::say_err!(
            "restorewatch: could not read {} from context {} ({}); nothing was analysed, since \
             what is missing could hide or fake a finding. Run again, or pass --allow-partial \
             to analyse the rest (findings resting on these kinds are then marked stale and do \
             not count toward --fail-on)",
            names.join(", "),
            listed.context,
            listed.endpoint.server
        );
        return Err(exit::USAGE);
    }
    crate::say_err!(
        "restorewatch: warning: analysing without {}: findings resting on them are marked stale \
         and do not count toward --fail-on",
        names.join(", ")
    );
    Ok(listed.snapshot)
}
