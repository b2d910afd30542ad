//! Optional bearer-token authentication with a small RBAC-like policy per token, so tests can
//! see the exact 401/403 bodies and `SelfSubjectAccessReview` answers a real cluster gives.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::model::KINDS;

/// One allow rule: every verb in `verbs` on every resource in `resources` (plurals, short names,
/// `plural/status`, or `*`) in the listed namespaces (empty or `*` = all, cluster scope included).
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Rule {
    pub verbs: Vec<String>,
    #[serde(default = "star")]
    pub resources: Vec<String>,
    #[serde(default)]
    pub namespaces: Vec<String>,
}

fn star() -> Vec<String> {
    vec!["*".into()]
}

/// What a token may do; `user` is the name in 403 messages.
#[derive(Debug, Clone, Deserialize, PartialEq, Default)]
pub struct Policy {
    #[serde(default)]
    pub user: String,
    #[serde(default)]
    pub rules: Vec<Rule>,
}

/// Turns short names and singulars into the plural a rule is matched against.
fn normalise(resource: &str) -> String {
    let (base, sub) = match resource.split_once('/') {
        Some((b, s)) => (b, Some(s)),
        None => (resource, None),
    };
    let plural = KINDS
        .iter()
        .find(|k| k.plural == base || k.singular == base || k.short_names.contains(&base))
        .map(|k| k.plural)
        .unwrap_or(base);
    match sub {
        Some(s) => format!("{plural}/{s}"),
        None => plural.to_string(),
    }
}

impl Rule {
    fn allows(&self, verb: &str, resource: &str, namespace: Option<&str>) -> bool {
        let verb_ok = self.verbs.iter().any(|v| v == "*" || v == verb);
        let res_ok = self.resources.iter().any(|r| {
            let r = normalise(r);
            r == "*"
                || r == resource
                || (r.ends_with("/*") && resource.starts_with(&r[..r.len() - 1]))
        });
        let ns_ok = self.namespaces.is_empty()
            || self.namespaces.iter().any(|n| n == "*")
            || namespace.is_some_and(|ns| self.namespaces.iter().any(|n| n == ns));
        verb_ok && res_ok && ns_ok
    }
}

impl Policy {
    /// `admin` (everything) and `readonly` (get, list, watch) need no file.
    pub fn builtin(name: &str) -> Option<Policy> {
        let verbs: Vec<String> = match name {
            "admin" => vec!["*".into()],
            "readonly" => ["get", "list", "watch"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            _ => return None,
        };
        Some(Policy {
            user: name.to_string(),
            rules: vec![Rule {
                verbs,
                resources: star(),
                namespaces: vec![],
            }],
        })
    }

    /// Parses a policy file (YAML or JSON).
    pub fn parse(text: &str) -> anyhow::Result<Policy> {
        Ok(serde_saphyr::from_str(text)?)
    }

    /// The index of the first rule that allows the request.
    pub fn allowing_rule(
        &self,
        verb: &str,
        resource: &str,
        namespace: Option<&str>,
    ) -> Option<usize> {
        self.rules
            .iter()
            .position(|r| r.allows(verb, resource, namespace))
    }
}

/// No tokens configured = authentication off (every request is allowed, as `system:admin`).
/// `anonymous` is the policy of requests without a token when authentication is on (kubectl
/// never sends a token to an `http://` server: client-go reads credentials only for TLS).
#[derive(Debug, Clone, Default)]
pub struct Auth {
    tokens: HashMap<String, Policy>,
    anonymous: Option<Policy>,
}

/// Who is asking.
#[derive(Debug, Clone)]
pub enum Caller<'a> {
    Anyone,
    User(&'a Policy),
}

impl Auth {
    pub fn new(tokens: HashMap<String, Policy>, anonymous: Option<Policy>) -> Self {
        let tokens = tokens
            .into_iter()
            .map(|(t, mut p)| {
                if p.user.is_empty() {
                    p.user = t.clone();
                }
                (t, p)
            })
            .collect();
        let anonymous = anonymous.map(|mut p| {
            p.user = "system:anonymous".into();
            p
        });
        Auth { tokens, anonymous }
    }

    pub fn enabled(&self) -> bool {
        !self.tokens.is_empty() || self.anonymous.is_some()
    }

    /// `None` = 401.
    pub fn authenticate(&self, authorization: Option<&str>) -> Option<Caller<'_>> {
        if !self.enabled() {
            return Some(Caller::Anyone);
        }
        let Some(authorization) = authorization else {
            return self.anonymous.as_ref().map(Caller::User);
        };
        let token = authorization.strip_prefix("Bearer ")?.trim();
        self.tokens.get(token).map(Caller::User)
    }
}

impl Caller<'_> {
    pub fn user(&self) -> &str {
        match self {
            Caller::Anyone => "system:admin",
            Caller::User(p) => &p.user,
        }
    }

    pub fn allows(&self, verb: &str, resource: &str, namespace: Option<&str>) -> bool {
        match self {
            Caller::Anyone => true,
            Caller::User(p) => p.allowing_rule(verb, resource, namespace).is_some(),
        }
    }

    /// Answers a `SelfSubjectReview` body: the same object with the caller's `userInfo`.
    pub fn who_am_i(&self, mut body: Value) -> Value {
        let groups = match self {
            Caller::Anyone => json!(["system:masters", "system:authenticated"]),
            Caller::User(p) if p.user == "system:anonymous" => json!(["system:unauthenticated"]),
            Caller::User(_) => json!(["system:authenticated"]),
        };
        if let Some(o) = body.as_object_mut() {
            o.insert(
                "status".into(),
                json!({"userInfo": {"username": self.user(), "groups": groups}}),
            );
            o.entry("metadata").or_insert_with(|| json!({}));
            o.insert("apiVersion".into(), json!("authentication.k8s.io/v1"));
            o.insert("kind".into(), json!("SelfSubjectReview"));
        }
        body
    }

    /// Answers a `SelfSubjectAccessReview` body: the same object with `status` filled in.
    pub fn review(&self, mut body: Value) -> Value {
        let attrs = body.pointer("/spec/resourceAttributes").cloned();
        let (allowed, reason) = match (&attrs, self) {
            (_, Caller::Anyone) => (true, "restorewatch-sim: authentication is off".to_string()),
            (None, Caller::User(_)) => (
                true,
                "restorewatch-sim: non-resource requests are allowed".into(),
            ),
            (Some(a), Caller::User(p)) => {
                let s = |k: &str| a.get(k).and_then(Value::as_str).unwrap_or("");
                let mut resource = normalise(s("resource"));
                if !s("subresource").is_empty() {
                    resource = format!("{resource}/{}", s("subresource"));
                }
                let ns = Some(s("namespace")).filter(|n| !n.is_empty());
                match p.allowing_rule(s("verb"), &resource, ns) {
                    Some(i) => (
                        true,
                        format!(
                            "restorewatch-sim: allowed by rule {i} of user \"{}\"",
                            p.user
                        ),
                    ),
                    None => (false, String::new()),
                }
            }
        };
        let mut status = json!({ "allowed": allowed });
        if !reason.is_empty() {
            status["reason"] = json!(reason);
        }
        if let Some(o) = body.as_object_mut() {
            o.insert("status".into(), status);
            o.entry("metadata").or_insert_with(|| json!({}));
            o.insert("apiVersion".into(), json!("authorization.k8s.io/v1"));
            o.insert("kind".into(), json!("SelfSubjectAccessReview"));
        }
        body
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies() {
        let p = Policy::parse(
            "user: bob\nrules:\n  - verbs: [get, list]\n    resources: [pvc]\n    namespaces: [a]\n",
        )
        .unwrap();
        assert!(
            p.allowing_rule("get", "persistentvolumeclaims", Some("a"))
                .is_some()
        );
        assert!(
            p.allowing_rule("delete", "persistentvolumeclaims", Some("a"))
                .is_none()
        );
        assert!(
            p.allowing_rule("get", "persistentvolumeclaims", Some("b"))
                .is_none()
        );
        assert!(
            p.allowing_rule("get", "persistentvolumeclaims", None)
                .is_none()
        );
        let ro = Policy::builtin("readonly").unwrap();
        assert!(ro.allowing_rule("watch", "restorejobs", None).is_some());
        assert!(
            ro.allowing_rule("patch", "restorejobs/status", Some("x"))
                .is_none()
        );
    }
}
