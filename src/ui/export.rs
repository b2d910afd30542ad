//! `e`: the selected restore's report (the same document as `restorewatch report`) written to
//! a private file under the state directory, and its path said in the status line. The write
//! is a small local file, done at once: there is nothing to wait for on the network.

use super::app::{App, Screen};
use super::keys::ScreenKind;
use super::select;
use crate::analysis::RestoreId;
use crate::document::audit_record;
use crate::document::story::{self, Sources};
use crate::document::story_markdown;
use crate::model::snapshot::SourceInfo;
use std::path::{Path, PathBuf};

/// `$XDG_STATE_HOME/restorewatch/reports`, beside the audit log.
pub fn default_dir() -> PathBuf {
    crate::actions::audit::state_dir().join("reports")
}

fn selected(app: &App) -> Option<RestoreId> {
    match &app.screen {
        Screen::Detail(d) => Some(d.id.clone()),
        Screen::Restores => select::restores(app)
            .get(app.list_selection(ScreenKind::Restores).selected)
            .map(|r| r.id.clone()),
        _ => None,
    }
}

/// A file name that sorts by time and says which restore: names are DNS labels, but a dump
/// may hold anything, so only `[a-z0-9-.]` is kept.
fn file_name(id: &RestoreId, at: jiff::Timestamp) -> String {
    let safe = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .take(100)
            .collect()
    };
    format!(
        "{}-{}_{}.md",
        at.strftime("%Y%m%dT%H%M%SZ"),
        safe(&id.namespace),
        safe(&id.name)
    )
}

fn write_report(app: &App, id: &RestoreId, dir: &Path) -> Result<PathBuf, String> {
    let frame = app
        .shown
        .as_ref()
        .ok_or("nothing loaded yet: no report to export")?;
    let path = crate::actions::audit::audit_path();
    let (audit, bad) = match std::fs::read_to_string(&path) {
        Ok(text) => audit_record::parse(&text),
        Err(_) => (Vec::new(), 0),
    };
    let watching = matches!(
        frame.snapshot.source,
        SourceInfo::Live { .. } | SourceInfo::Demo { .. }
    );
    let sources = Sources {
        watching,
        audit_unreadable: bad,
        kube_system_uid: None,
    };
    let story = story::build(&frame.report, &frame.snapshot, id, &audit, sources)
        .ok_or_else(|| format!("{id} is no longer in the picture"))?;
    let doc = story_markdown::render(&story);
    let name = file_name(id, app.now);
    // A new file, never an existing one: no symlink followed, nothing overwritten, no folder
    // others may write, no cut file left behind by a full disk.
    match crate::private_file::create_new(dir, &name, doc.as_bytes()) {
        Ok((file, notice)) => {
            if let Some(n) = notice {
                tracing::warn!("{n}");
            }
            Ok(file)
        }
        Err(e) => Err(format!("cannot write {}: {e}", dir.join(&name).display())),
    }
}

pub fn on_export_key(app: &mut App) {
    let Some(id) = selected(app) else {
        app.set_error("select a restore to export its report");
        return;
    };
    let dir = app.opts.reports_dir.clone().unwrap_or_else(default_dir);
    match write_report(app, &id, &dir) {
        Ok(file) => app.set_status(format!("report of {id} written to {}", file.display())),
        Err(e) => app.set_error(e),
    }
}
