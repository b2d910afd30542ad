//! The record of every write: a JSON line per step in `$XDG_STATE_HOME/restorewatch/audit.jsonl`
//! and a Kubernetes Event on the RestoreJob, so the next operator sees who changed what.

use super::plan::RestoreRef;
use jiff::Timestamp;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Clone, Serialize)]
pub struct AuditLine {
    pub time: String,
    /// The kubeconfig's user entry: a name on this machine, not proof of who wrote.
    pub user: String,
    /// Who the API server authenticated the writes as.
    pub authenticated: Identity,
    pub context: String,
    /// The API server's URL, without userinfo: with `kube_system_uid`, which cluster was
    /// written to (context names are local aliases; two kubeconfigs may name theirs alike).
    pub server: String,
    /// The UID of the cluster's `kube-system` namespace, made when the cluster was: `None` when
    /// it could not be read.
    pub kube_system_uid: Option<String>,
    /// The UID of the RestoreJob the action was about (empty when none exists, e.g. an `-orig`
    /// PVC left by a deleted one): what ties the line to that restore and no namesake.
    pub restore_uid: String,
    pub action: String,
    pub target: String,
    pub operation: String,
    pub precondition: String,
    pub outcome: String,
}

/// The identity the API server gives the client's credentials (SelfSubjectReview), or why it
/// is not known. Unknown is recorded as unknown: a kubeconfig user name is never passed off as it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Identity {
    Known { user: String, groups: Vec<String> },
    Unknown { unknown: String },
}

/// The UID of the cluster's `kube-system` namespace: an identity of the cluster that a server
/// URL (a tunnel, a load balancer) is not. `None` when it cannot be read.
pub async fn kube_system_uid(client: &kube::Client) -> Option<String> {
    use k8s_openapi::api::core::v1::Namespace;
    let api: kube::Api<Namespace> = kube::Api::all(client.clone());
    match api.get_opt("kube-system").await {
        Ok(ns) => ns.and_then(|n| n.metadata.uid),
        Err(e) => {
            tracing::info!(
                "the kube-system namespace is not readable ({}): the audit records the server alone",
                crate::cluster::errors::describe(&e)
            );
            None
        }
    }
}

/// Asks the server who the client is (`kubectl auth whoami`).
pub async fn authenticated_identity(client: &kube::Client) -> Identity {
    use k8s_openapi::api::authentication::v1::SelfSubjectReview;
    let api: kube::Api<SelfSubjectReview> = kube::Api::all(client.clone());
    match api
        .create(&Default::default(), &SelfSubjectReview::default())
        .await
    {
        Ok(review) => {
            let info = review.status.and_then(|s| s.user_info);
            match info.and_then(|i| Some((i.username.filter(|u| !u.is_empty())?, i.groups))) {
                Some((user, groups)) => Identity::Known {
                    user,
                    groups: groups.unwrap_or_default(),
                },
                None => Identity::Unknown {
                    unknown: "the SelfSubjectReview named no user".into(),
                },
            }
        }
        Err(e) => Identity::Unknown {
            unknown: format!(
                "the SelfSubjectReview failed: {}",
                crate::cluster::errors::describe(&e)
            ),
        },
    }
}

/// One record, one line: serde_json leaves U+2028, U+2029 and U+0085 raw (valid JSON), but
/// readers that split lines on them (JavaScript, Python's `splitlines`, editors) would cut the
/// record there, so they are written as escapes.
fn to_line(line: &AuditLine) -> serde_json::Result<String> {
    let text = serde_json::to_string(line)?;
    let mut out = String::with_capacity(text.len() + 1);
    for c in text.chars() {
        match c {
            '\u{2028}' | '\u{2029}' | '\u{85}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\n');
    Ok(out)
}

/// `$XDG_STATE_HOME/restorewatch`, else `~/.local/state/restorewatch`.
pub fn state_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("XDG_STATE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("restorewatch");
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    home.join(".local/state/restorewatch")
}

pub fn audit_path() -> PathBuf {
    state_dir().join("audit.jsonl")
}

pub fn append(path: &std::path::Path, line: &AuditLine) -> std::io::Result<()> {
    // 0600 in a 0700 folder: the audit names users, clusters and objects.
    let opened = crate::private_file::open_append(path)?;
    if let Some(n) = opened.notice {
        tracing::warn!("{n}");
    }
    let mut f = opened.file;
    let text = to_line(line).map_err(std::io::Error::other)?;
    f.write_all(text.as_bytes())
}

/// A Normal (or Warning, when a step failed) Event on the RestoreJob, reason `RestorewatchAction`.
pub async fn event(
    client: &kube::Client,
    restore: &RestoreRef,
    message: &str,
    warning: bool,
) -> anyhow::Result<()> {
    use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
    let now = Timestamp::now();
    let ev = Event {
        metadata: ObjectMeta {
            generate_name: Some(format!("{}.restorewatch-", restore.name)),
            namespace: Some(restore.namespace.clone()),
            ..Default::default()
        },
        involved_object: ObjectReference {
            api_version: Some("backups.cozystack.io/v1alpha1".into()),
            kind: Some("RestoreJob".into()),
            name: Some(restore.name.clone()),
            namespace: Some(restore.namespace.clone()),
            uid: Some(restore.uid.clone()),
            ..Default::default()
        },
        reason: Some("RestorewatchAction".into()),
        message: Some(message.chars().take(1024).collect()),
        type_: Some(if warning { "Warning" } else { "Normal" }.into()),
        source: Some(EventSource {
            component: Some("restorewatch".into()),
            ..Default::default()
        }),
        first_timestamp: Some(Time(now)),
        last_timestamp: Some(Time(now)),
        event_time: Some(MicroTime(now)),
        reporting_component: Some("restorewatch".into()),
        reporting_instance: Some(hostname()),
        action: Some("Repair".into()),
        count: Some(1),
        ..Default::default()
    };
    let api: kube::Api<Event> = kube::Api::namespaced(client.clone(), &restore.namespace);
    api.create(&super::write::post_params(), &ev).await?;
    Ok(())
}

fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "restorewatch".into())
}
