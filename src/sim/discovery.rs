//! Discovery documents built from the kind registry: `/version`, `/api`, `/apis`, and the
//! per-group-version resource lists kubectl and kube clients read.

use serde_json::{Value, json};

use crate::model::{KINDS, KindInfo};

pub const AUTHZ_GROUP: &str = "authorization.k8s.io";
pub const AUTHN_GROUP: &str = "authentication.k8s.io";

pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "emulationMajor": "1",
        "emulationMinor": "33",
        "gitVersion": "v1.33.0-restorewatch-sim",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-01-01T00:00:00Z",
        "goVersion": "go1.24.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

pub fn api_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    })
}

/// Group -> versions, in registry order, the authorization group last.
fn groups() -> Vec<(&'static str, Vec<&'static str>)> {
    let mut out: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
    for k in KINDS.iter().filter(|k| !k.group.is_empty()) {
        match out.iter_mut().find(|(g, _)| *g == k.group) {
            Some((_, vs)) if !vs.contains(&k.version) => vs.push(k.version),
            Some(_) => {}
            None => out.push((k.group, vec![k.version])),
        }
    }
    out.push((AUTHZ_GROUP, vec!["v1"]));
    out.push((AUTHN_GROUP, vec!["v1"]));
    out
}

fn group_doc(group: &str, versions: &[&str]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    json!({
        "name": group,
        "versions": vs,
        "preferredVersion": vs.first().cloned().unwrap_or(json!({})),
    })
}

pub fn api_group_list() -> Value {
    let groups: Vec<Value> = groups().iter().map(|(g, vs)| group_doc(g, vs)).collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

pub fn api_group(group: &str) -> Option<Value> {
    groups().iter().find(|(g, _)| *g == group).map(|(g, vs)| {
        let mut d = group_doc(g, vs);
        d["kind"] = json!("APIGroup");
        d["apiVersion"] = json!("v1");
        d
    })
}

pub fn kinds_in(group: &str, version: &str) -> impl Iterator<Item = &'static KindInfo> {
    let group = group.to_string();
    let version = version.to_string();
    KINDS
        .iter()
        .filter(move |k| k.group == group && k.version == version)
}

/// `APIResourceList` for a group-version, `None` when it is not served.
pub fn resource_list(group: &str, version: &str) -> Option<Value> {
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    // The two review kinds, create-only, as a real server lists them.
    let review = match (group, version) {
        (AUTHZ_GROUP, "v1") => Some(("selfsubjectaccessreview", "SelfSubjectAccessReview")),
        (AUTHN_GROUP, "v1") => Some(("selfsubjectreview", "SelfSubjectReview")),
        _ => None,
    };
    if let Some((singular, kind)) = review {
        return Some(json!({
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": gv,
            "resources": [{
                "name": format!("{singular}s"),
                "singularName": singular,
                "namespaced": false,
                "kind": kind,
                "verbs": ["create"],
            }],
        }));
    }
    let mut resources = Vec::new();
    for k in kinds_in(group, version) {
        resources.push(json!({
            "name": k.plural,
            "singularName": k.singular,
            "namespaced": k.namespaced,
            "kind": k.api_kind,
            "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
            "shortNames": k.short_names,
        }));
        if k.status_subresource {
            resources.push(json!({
                "name": format!("{}/status", k.plural),
                "singularName": "",
                "namespaced": k.namespaced,
                "kind": k.api_kind,
                "verbs": ["get", "patch", "update"],
            }));
        }
    }
    if resources.is_empty() {
        return None;
    }
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": gv,
        "resources": resources,
    }))
}
