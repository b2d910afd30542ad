//! apps/v1 Deployments, served for one purpose: restorewatch's GET of the backup controller's
//! Deployment (its image is evidence of the controller's generation). A GET of one by name and
//! a list of a namespace's, authorized like every other request, answered as a real server
//! answers (the object, a 404 `NotFound` or a 403 `Forbidden` Status). Nothing else: no
//! writes, no watch, not in discovery (kubectl sees no apps group, as before), no controller.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use hyper::{Method, Response};
use serde_json::{Value, json};

use crate::sim::auth::Caller;
use crate::sim::server::{Body, error_response, json_response};
use crate::sim::status::ApiError;

const GROUP: &str = "apps";
const PLURAL: &str = "deployments";

/// The Deployments loaded by a test or a scenario, by namespace and name.
#[derive(Debug, Clone, Default)]
pub struct Deployments(Arc<Mutex<BTreeMap<(String, String), Value>>>);

impl Deployments {
    /// Loads one (its `metadata.namespace` and `metadata.name` address it); replaces one of
    /// the same name.
    pub fn put(&self, mut obj: Value) -> Result<(), String> {
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or("a Deployment needs metadata.name")?
            .to_string();
        let ns = obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or("a Deployment needs metadata.namespace")?
            .to_string();
        obj["apiVersion"] = json!("apps/v1");
        obj["kind"] = json!("Deployment");
        self.lock().insert((ns, name), obj);
        Ok(())
    }

    pub fn remove(&self, namespace: &str, name: &str) -> Option<Value> {
        self.lock()
            .remove(&(namespace.to_string(), name.to_string()))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<(String, String), Value>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// `GET /apis/apps/v1/namespaces/NS/deployments[/NAME]`.
pub fn serve(
    all: &Deployments,
    caller: &Caller<'_>,
    method: &Method,
    namespace: &str,
    name: Option<&str>,
) -> Response<Body> {
    if method != Method::GET {
        return error_response(&ApiError::method_not_allowed());
    }
    let verb = if name.is_some() { "get" } else { "list" };
    if !caller.allows(verb, PLURAL, Some(namespace)) {
        return error_response(&ApiError::forbidden_in(
            GROUP,
            PLURAL,
            name.unwrap_or(""),
            caller.user(),
            verb,
            namespace,
        ));
    }
    let map = all.lock();
    match name {
        Some(n) => match map.get(&(namespace.to_string(), n.to_string())) {
            Some(d) => json_response(200, d),
            None => error_response(&ApiError::not_found_in(GROUP, PLURAL, n)),
        },
        None => {
            let items: Vec<&Value> = map
                .iter()
                .filter(|((ns, _), _)| ns == namespace)
                .map(|(_, d)| d)
                .collect();
            json_response(
                200,
                &json!({"kind": "DeploymentList", "apiVersion": "apps/v1",
                        "metadata": {"resourceVersion": "1"}, "items": items}),
            )
        }
    }
}
