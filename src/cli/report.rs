//! `restorewatch report NS/RESTOREJOB`: the story of one restore as a document for the incident
//! ticket, from the live cluster or a dump.

use super::picture::PictureArgs;
use super::{exit, output};
use crate::analysis::RestoreId;
use crate::args::ClusterArgs;
use crate::document::audit_record::{self, AuditRecord};
use crate::document::story::{self, Sources};
use crate::document::story_markdown;
use clap::{Args, ValueEnum};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Markdown,
    Json,
}

#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Exit status: 0 when the report was written, 2 on bad usage, unreadable \
input, or no such RestoreJob.\n\nExamples:\n  restorewatch report tenant-a/restore-test > \
restore-test.md\n  restorewatch report -n tenant-a restore-test -o json\n  kubectl get \
restorejobs,backups,pvc,pv,dv,vm,vmi,hr,events -A -o yaml --show-managed-fields > dump.yaml\n  \
restorewatch report tenant-a/restore-test --snapshot dump.yaml --now 2026-11-20T10:30:00Z"
)]
pub struct ReportArgs {
    /// The RestoreJob: NAMESPACE/NAME, or NAME with -n
    #[arg(value_name = "NS/RESTOREJOB")]
    pub restore: String,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub picture: PictureArgs,
    /// Output format
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Markdown)]
    pub output: Format,
}

fn restore_id(arg: &str, namespace: Option<&str>) -> Result<RestoreId, String> {
    let id = restore_id_unchecked(arg, namespace)?;
    super::validate::namespace("the namespace", &id.namespace)?;
    super::validate::name("the RestoreJob name", &id.name)?;
    Ok(id)
}

fn restore_id_unchecked(arg: &str, namespace: Option<&str>) -> Result<RestoreId, String> {
    match (arg.split_once('/'), namespace) {
        (Some((ns, name)), _) if !ns.is_empty() && !name.is_empty() && !name.contains('/') => {
            Ok(RestoreId {
                namespace: ns.into(),
                name: name.into(),
            })
        }
        (None, Some(ns)) if !arg.is_empty() => Ok(RestoreId {
            namespace: ns.into(),
            name: arg.into(),
        }),
        (None, None) => Err(format!(
            "{arg:?}: name the namespace too, as NAMESPACE/NAME or with -n"
        )),
        _ => Err(format!("{arg:?} is not NAMESPACE/NAME")),
    }
}

/// restorewatch's audit log, when there is one; a missing log is no repair, not an error.
pub fn read_audit() -> (Vec<AuditRecord>, usize) {
    let path = crate::actions::audit::audit_path();
    match std::fs::read_to_string(&path) {
        Ok(text) => audit_record::parse(&text),
        Err(e) => {
            if e.kind() != std::io::ErrorKind::NotFound {
                crate::say_err!("restorewatch: cannot read {}: {e}", path.display());
            }
            (Vec::new(), 0)
        }
    }
}

pub async fn run(args: ReportArgs) -> anyhow::Result<i32> {
    let id = match restore_id(&args.restore, args.cluster.namespace.as_deref()) {
        Ok(id) => id,
        Err(e) => {
            crate::say_err!("restorewatch: {e}");
            return Ok(exit::USAGE);
        }
    };
    let (snap, report) = match args.picture.analysed(&args.cluster).await {
        Ok(p) => p,
        Err(code) => return Ok(code),
    };
    let (audit, bad) = read_audit();
    let sources = Sources {
        watching: false,
        audit_unreadable: bad,
        kube_system_uid: None,
    };
    let Some(story) = story::build(&report, &snap, &id, &audit, sources) else {
        crate::say_err!("restorewatch: no RestoreJob {id} in the picture");
        return Ok(exit::USAGE);
    };
    let doc = match args.output {
        Format::Markdown => story_markdown::render(&story),
        Format::Json => {
            let mut j = serde_json::to_string_pretty(&story)?;
            j.push('\n');
            j
        }
    };
    output::emit(&doc);
    Ok(exit::OK)
}

#[cfg(test)]
mod tests {
    use super::restore_id;

    #[test]
    fn a_restore_is_named_like_kubectl_names_it() {
        let id = restore_id("tenant-a/restore-1", None).expect("ns/name");
        assert_eq!(
            (id.namespace.as_str(), id.name.as_str()),
            ("tenant-a", "restore-1")
        );
        let id = restore_id("restore-1", Some("tenant-a")).expect("-n");
        assert_eq!(id.namespace, "tenant-a");
        assert!(restore_id("restore-1", None).is_err());
        assert!(restore_id("a/b/c", None).is_err());
        assert!(restore_id("/b", None).is_err());
    }
}
