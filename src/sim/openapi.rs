//! Just enough of `/openapi/v3` for kubectl: it reads the PATCH operation of a kind to learn
//! that the server validates fields itself (`fieldValidation`), and then skips its own
//! client-side schema validation, as it does against a real server.

use serde_json::{Value, json};

use crate::sim::discovery::kinds_in;

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

pub fn root() -> Value {
    let mut paths = serde_json::Map::new();
    let mut seen = Vec::new();
    for k in crate::model::KINDS {
        let p = gv_path(k.group, k.version);
        if !seen.contains(&p) {
            paths.insert(
                p.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash=0")}),
            );
            seen.push(p);
        }
    }
    json!({ "paths": paths })
}

pub fn group_version(group: &str, version: &str) -> Option<Value> {
    let mut paths = serde_json::Map::new();
    for k in kinds_in(group, version) {
        let base = format!("/{}", gv_path(k.group, k.version));
        let item = if k.namespaced {
            format!("{base}/namespaces/{{namespace}}/{}/{{name}}", k.plural)
        } else {
            format!("{base}/{}/{{name}}", k.plural)
        };
        let gvk = json!([{"group": k.group, "version": k.version, "kind": k.api_kind}]);
        paths.insert(
            item,
            json!({
                "patch": {
                    "x-kubernetes-action": "patch",
                    "x-kubernetes-group-version-kind": gvk[0],
                    "parameters": [
                        {"name": "dryRun", "in": "query", "schema": {"type": "string"}},
                        {"name": "fieldManager", "in": "query", "schema": {"type": "string"}},
                        {"name": "fieldValidation", "in": "query", "schema": {"type": "string"}},
                        {"name": "force", "in": "query", "schema": {"type": "boolean"}},
                    ],
                    "requestBody": {"content": {
                        "application/json-patch+json": {"schema": {"type": "object"}},
                        "application/merge-patch+json": {"schema": {"type": "object"}},
                    }},
                    "responses": {"200": {"description": "OK"}},
                },
            }),
        );
    }
    if paths.is_empty() {
        return None;
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.33.0-restorewatch-sim"},
        "paths": paths,
        "components": {"schemas": {}},
    }))
}
