//! `a` on `:backups`: the preflight of a restore from the selected Backup. `update` only names
//! the RestoreJob and asks; the action worker reads the cluster fresh (never the watch cache)
//! and runs the same pure prediction as `restorewatch preflight`; the answer is drawn as the
//! same lines the CLI prints, with the manifest to apply.

use super::action_worker::{ActionBackend, WorkerRequest};
use super::app::{App, Screen};
use super::backup_list::{self, BackupRow};
use super::keys::ScreenKind;
use crate::analysis::forecast::names::fit_restore_name;
use crate::analysis::preflight::{preflight, text};
use crate::cluster::client::Connection;
use crate::cluster::list_once::Retry;
use crate::cluster::restore_scope::{ControllerImage, read_restore_scope};
use crate::model::{AnyObject, parse_object};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreflightState {
    /// Ties the worker's answer to this screen; a late answer for another is dropped.
    pub id: u64,
    /// `namespace/name` of the RestoreJob asked about.
    pub restore: String,
    pub backup: String,
    /// `None` while the worker reads.
    pub result: Option<Result<PreflightAnswer, String>>,
    pub scroll: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreflightAnswer {
    pub lines: Vec<String>,
    /// As `restorewatch preflight` exits: 0 clean, 1 would lose or hide data, 2 cannot tell.
    pub exit_code: i32,
}

/// The name proposed for a restore from `backup`: the preflight says whether it is free. It
/// fits every limit the API server and the controller put on it (63 characters: it becomes a
/// label value), cut short with a hash when the Backup's name leaves no room.
pub fn restore_name(backup: &str) -> String {
    fit_restore_name(&format!("restore-{backup}"), "")
}

/// The RestoreJob a restore from this Backup would apply, or why there is none.
pub fn proposed_manifest(row: &BackupRow) -> Result<Value, String> {
    let Some(target) = row.backup.application_ref.as_ref() else {
        return Err(format!(
            "Backup {}/{} names no application: nothing to restore into",
            row.namespace(),
            row.name()
        ));
    };
    Ok(text::restore_manifest(
        row.namespace(),
        &restore_name(row.name()),
        &target.kind,
        &target.name,
        row.name(),
    ))
}

/// `a` on `:backups`.
pub fn on_actions_key(app: &mut App) {
    let rows = backup_list::backups(app);
    let Some(row) = rows.get(app.list_selection(ScreenKind::Backups).selected) else {
        app.set_status("no Backup selected");
        return;
    };
    let manifest = match proposed_manifest(row) {
        Ok(m) => m,
        Err(why) => {
            app.set_status(why);
            return;
        }
    };
    let id = app.next_id;
    app.next_id += 1;
    let state = PreflightState {
        id,
        restore: format!("{}/{}", row.namespace(), restore_name(row.name())),
        backup: row.name().to_string(),
        result: None,
        scroll: 0,
    };
    app.outbox.push(WorkerRequest::Preflight { id, manifest });
    super::update::push(app, Screen::Preflight(Box::new(state)));
}

/// The worker's answer: shown only on the screen that asked.
pub fn on_done(app: &mut App, id: u64, result: Result<PreflightAnswer, String>) {
    match &mut app.screen {
        Screen::Preflight(p) if p.id == id => p.result = Some(result),
        _ => return,
    }
    app.dirty = true;
}

/// Run by the action worker: a fresh read of the restore's namespace, then the prediction.
pub async fn run(b: &ActionBackend, manifest: Value) -> Result<PreflightAnswer, String> {
    let text_manifest = serde_json::to_string_pretty(&manifest).unwrap_or_default();
    let rj = match parse_object(manifest) {
        Ok(AnyObject::RestoreJob(rj)) => rj,
        _ => return Err("the proposed RestoreJob does not parse".into()),
    };
    let conn = Connection {
        client: b.client.clone(),
        watch_client: b.client.clone(),
        context: b.context.clone(),
        cluster_url: String::new(),
        user: b.user.clone(),
        endpoint: Default::default(),
        timeouts: Default::default(),
    };
    let listed = read_restore_scope(&conn, &rj.meta.namespace, Retry::default())
        .await
        .map_err(|e| format!("{e:#}"))?;
    // The read carried the controller's image (one GET beside the lists) into the snapshot.
    let image = listed.controller_image.clone();
    // The generation `check` names: judged from the whole cluster's evidence.
    let (generation, _) = crate::cli::preflight::generation_as_check(&conn, &listed.snapshot).await;
    let pf = preflight(&listed.snapshot, &rj, generation);
    let note = match &image {
        ControllerImage::Unreadable(e) => Some(e.as_str()),
        _ => None,
    };
    Ok(PreflightAnswer {
        lines: text::lines(&pf, note, Some(&text_manifest)),
        exit_code: pf.exit_code(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::forecast::names::fits;

    #[test]
    fn the_proposed_name_fits_and_never_cuts_a_character() {
        assert_eq!(restore_name("vm1-backup"), "restore-vm1-backup");
        let long = "a".repeat(250);
        let name = restore_name(&long);
        assert!(name.len() <= 63 && fits(&name), "{name}");
        // Two-byte characters: a byte-wise cut would land inside one.
        let odd = restore_name(&"é".repeat(300));
        assert!(odd.len() <= 63 && fits(&odd), "{odd}");
        assert!(odd.starts_with("restore"));
    }
}
