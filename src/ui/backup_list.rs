//! The rows of `:backups`: each Backup in scope with the application it holds, when it was
//! taken, its driver and the restores from it that have not finished. Pure: frame in, rows out.

use super::app::App;
use super::keys::ScreenKind;
use crate::analysis::Driver;
use crate::model::Obj;
use crate::model::objects::Backup;
use jiff::Timestamp;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct BackupRow {
    pub backup: Arc<Obj<Backup>>,
    /// `Kind/name` of the application, `?` when the Backup does not say.
    pub app: String,
    pub taken: Option<Timestamp>,
    pub driver: Driver,
    /// RestoreJobs from this Backup that have not finished.
    pub running: Vec<String>,
}

impl BackupRow {
    pub fn namespace(&self) -> &str {
        &self.backup.meta.namespace
    }

    pub fn name(&self) -> &str {
        &self.backup.meta.name
    }
}

/// The Backups in scope and matching the filter, by namespace then name.
pub fn backups(app: &App) -> Vec<BackupRow> {
    let Some(frame) = &app.shown else {
        return Vec::new();
    };
    let objects = &frame.snapshot.objects;
    let filter = app
        .filters
        .get(&ScreenKind::Backups)
        .map(|f| f.to_lowercase())
        .unwrap_or_default();
    let mut rows: Vec<BackupRow> = objects
        .backups
        .iter()
        .filter(|b| app.in_scope(&b.meta.namespace))
        .map(|b| {
            let running = objects
                .restore_jobs
                .in_namespace(&b.meta.namespace)
                .filter(|r| r.backup_ref.as_deref() == Some(b.meta.name.as_str()))
                .filter(|r| !r.phase.is_terminal() && r.meta.deleted.is_none())
                .map(|r| r.meta.name.to_string())
                .collect();
            let target = b
                .application_ref
                .as_ref()
                .map(|a| crate::analysis::TargetRef {
                    kind: a.kind.clone(),
                    name: a.name.clone(),
                });
            BackupRow {
                app: target
                    .as_ref()
                    .map_or("?".into(), |t| format!("{}/{}", t.kind, t.name)),
                taken: b.meta.created,
                driver: crate::analysis::ctx::driver_of(Some(b), target.as_ref()),
                running,
                backup: b.clone(),
            }
        })
        .filter(|r| {
            filter.is_empty()
                || [r.namespace(), r.name(), r.app.as_str()]
                    .iter()
                    .any(|s| s.to_lowercase().contains(&filter))
        })
        .collect();
    rows.sort_by(|a, b| (a.namespace(), a.name()).cmp(&(b.namespace(), b.name())));
    rows
}
