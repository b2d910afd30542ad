//! `Status` error bodies, worded exactly as a real kube-apiserver words them
//! (`/work/shared/reference/apiserver-behaviour.md`): clients match on `reason` and `code`, and
//! operators read `message`, so both must look like the real thing.

use serde_json::{Map, Value, json};

use crate::model::kind::KindInfo;

/// An API failure on its way to becoming a `Status` body.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub code: u16,
    /// `None` for the errors the real server sends without a reason (a 500 on create).
    pub reason: Option<&'static str>,
    pub message: String,
    /// `None` omits `details` entirely; `Some(json!({}))` sends an empty object.
    pub details: Option<Value>,
    /// Seconds for a `Retry-After` header (429).
    pub retry_after: Option<u32>,
    /// `metadata.continue` of the Status: the token a 410 on an expired `continue` offers to
    /// read the rest of the list at the latest version.
    pub list_continue: Option<String>,
}

/// `persistentvolumeclaims` for the core group, `restorejobs.backups.cozystack.io` otherwise:
/// the "qualified resource" the real server puts in its messages.
pub fn qualified_resource(info: &KindInfo) -> String {
    if info.group.is_empty() {
        info.plural.to_string()
    } else {
        format!("{}.{}", info.plural, info.group)
    }
}

fn details(group: &str, kind: &str, name: &str) -> Value {
    let mut d = Map::new();
    if !name.is_empty() {
        d.insert("name".into(), json!(name));
    }
    if !group.is_empty() {
        d.insert("group".into(), json!(group));
    }
    if !kind.is_empty() {
        d.insert("kind".into(), json!(kind));
    }
    Value::Object(d)
}

impl ApiError {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason: Some(reason),
            message: message.into(),
            details: None,
            retry_after: None,
            list_continue: None,
        }
    }

    fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    pub fn not_found(info: &KindInfo, name: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", qualified_resource(info)),
        )
        .with_details(details(info.group, info.plural, name))
    }

    /// 404 for a resource outside `KINDS` (the apps/v1 Deployment the emulator serves alone).
    pub fn not_found_in(group: &str, plural: &str, name: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{plural}.{group} \"{name}\" not found"),
        )
        .with_details(details(group, plural, name))
    }

    /// 403 for a resource outside `KINDS`, worded as for the others.
    pub fn forbidden_in(
        group: &str,
        plural: &str,
        name: &str,
        user: &str,
        verb: &str,
        namespace: &str,
    ) -> Self {
        let target = if name.is_empty() {
            format!("{plural}.{group}")
        } else {
            format!("{plural}.{group} \"{name}\"")
        };
        Self::new(
            403,
            "Forbidden",
            format!(
                "{target} is forbidden: User \"{user}\" cannot {verb} resource \"{plural}\" in API group \"{group}\" in the namespace \"{namespace}\""
            ),
        )
        .with_details(details(group, plural, name))
    }

    pub fn namespace_not_found(ns: &str) -> Self {
        Self::new(404, "NotFound", format!("namespaces \"{ns}\" not found")).with_details(details(
            "",
            "namespaces",
            ns,
        ))
    }

    /// The body a real server sends for a path it does not serve.
    pub fn no_route() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
        .with_details(json!({}))
    }

    pub fn already_exists(info: &KindInfo, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", qualified_resource(info)),
        )
        .with_details(details(info.group, info.plural, name))
    }

    /// A server-side apply that would change fields other managers own.
    pub fn conflict_apply(message: String, causes: Vec<Value>) -> Self {
        Self::new(409, "Conflict", message).with_details(json!({ "causes": causes }))
    }

    pub fn conflict_modified(info: &KindInfo, name: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; \
                 please apply your changes to the latest version and try again",
                qualified_resource(info)
            ),
        )
        .with_details(details(info.group, info.plural, name))
    }

    /// Delete preconditions: the real server names the resource by its KIND here, not its
    /// plural (`registry/rest/delete.go` builds a GroupResource from the kind).
    fn precondition(info: &KindInfo, name: &str, what: &str) -> Self {
        let resource = if info.group.is_empty() {
            info.api_kind.to_string()
        } else {
            format!("{}.{}", info.api_kind, info.group)
        };
        Self::new(
            409,
            "Conflict",
            format!("Operation cannot be fulfilled on {resource} \"{name}\": {what}"),
        )
        .with_details(details(info.group, info.api_kind, name))
    }

    pub fn uid_precondition(info: &KindInfo, name: &str, wanted: &str, actual: &str) -> Self {
        Self::precondition(
            info,
            name,
            &format!(
                "the UID in the precondition ({wanted}) does not match the UID in record \
                 ({actual}). The object might have been deleted and then recreated"
            ),
        )
    }

    pub fn rv_precondition(info: &KindInfo, name: &str, wanted: &str, actual: &str) -> Self {
        Self::precondition(
            info,
            name,
            &format!(
                "the ResourceVersion in the precondition ({wanted}) does not match the \
                 ResourceVersion in record ({actual}). The object might have been modified"
            ),
        )
    }

    /// A JSON patch that does not apply (a failed `test` op included).
    pub fn patch_invalid() -> Self {
        Self::new(
            422,
            "Invalid",
            "the server rejected our request due to an error in our request",
        )
        .with_details(json!({}))
    }

    pub fn invalid(info: &KindInfo, name: &str, causes: &[(String, String)]) -> Self {
        let list: Vec<String> = causes.iter().map(|(f, m)| format!("{f}: {m}")).collect();
        let kind = if info.group.is_empty() {
            info.api_kind.to_string()
        } else {
            format!("{}.{}", info.api_kind, info.group)
        };
        let causes: Vec<Value> = causes
            .iter()
            .map(|(f, m)| json!({"reason": "FieldValueInvalid", "message": m, "field": f}))
            .collect();
        let mut d = details(info.group, info.api_kind, name);
        d["causes"] = Value::Array(causes);
        Self::new(
            422,
            "Invalid",
            // One cause is written bare, several in brackets, as the real server does.
            match list.as_slice() {
                [one] => format!("{kind} \"{name}\" is invalid: {one}"),
                _ => format!("{kind} \"{name}\" is invalid: [{}]", list.join(", ")),
            },
        )
        .with_details(d)
    }

    pub fn rv_on_create() -> Self {
        ApiError {
            code: 500,
            reason: None,
            message: "resourceVersion should not be set on objects to be created".into(),
            details: None,
            retry_after: None,
            list_continue: None,
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    pub fn unsupported_media_type(message: impl Into<String>) -> Self {
        Self::new(415, "UnsupportedMediaType", message).with_details(json!({}))
    }

    pub fn method_not_allowed() -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
        .with_details(json!({}))
    }

    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    /// `persistentvolumeclaims "x" is forbidden: User "u" cannot delete resource
    /// "persistentvolumeclaims" in API group "" in the namespace "ns"`.
    pub fn forbidden(
        info: &KindInfo,
        subresource: Option<&str>,
        name: &str,
        user: &str,
        verb: &str,
        namespace: Option<&str>,
    ) -> Self {
        let target = if name.is_empty() {
            qualified_resource(info)
        } else {
            format!("{} \"{name}\"", qualified_resource(info))
        };
        let resource = match subresource {
            Some(sub) => format!("{}/{sub}", info.plural),
            None => info.plural.to_string(),
        };
        let scope = match namespace {
            Some(ns) if !ns.is_empty() => format!("in the namespace \"{ns}\""),
            _ => "at the cluster scope".to_string(),
        };
        Self::new(
            403,
            "Forbidden",
            format!(
                "{target} is forbidden: User \"{user}\" cannot {verb} resource \"{resource}\" \
                 in API group \"{}\" {scope}",
                info.group
            ),
        )
        .with_details(details(info.group, info.plural, name))
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "InternalError", message).with_details(json!({}))
    }

    pub fn too_many_requests(retry_after: u32) -> Self {
        let mut e = Self::new(
            429,
            "TooManyRequests",
            "Too many requests, please try again later.",
        )
        .with_details(json!({"retryAfterSeconds": retry_after}));
        e.retry_after = Some(retry_after);
        e
    }

    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// A list's `continue` the server cannot decode (etcd3 store's wording).
    pub fn invalid_continue(why: &str) -> Self {
        Self::bad_request(format!("invalid continue token: {why}"))
    }

    /// A list's `continue` whose version was compacted away: the rest of that list cannot be
    /// given consistently. `next` continues it at the latest version, as the real server offers.
    pub fn continue_expired(next: String) -> Self {
        let mut e = Self::expired(
            "The provided continue parameter is too old to display a consistent list result. \
             You can start a new list without the continue parameter, or use the continue token \
             in this response to retrieve the remainder of the results. Continuing with the \
             provided token results in an inconsistent list - objects that were created, \
             modified, or deleted between the time the first chunk was returned and now may \
             show up in the list.",
        );
        e.list_continue = Some(next);
        e
    }

    pub fn to_status(&self) -> Value {
        let mut s = Map::new();
        s.insert("kind".into(), json!("Status"));
        s.insert("apiVersion".into(), json!("v1"));
        let meta = match &self.list_continue {
            Some(c) => json!({"continue": c}),
            None => json!({}),
        };
        s.insert("metadata".into(), meta);
        s.insert("status".into(), json!("Failure"));
        s.insert("message".into(), json!(self.message));
        if let Some(r) = self.reason {
            s.insert("reason".into(), json!(r));
        }
        if let Some(d) = &self.details {
            s.insert("details".into(), d.clone());
        }
        s.insert("code".into(), json!(self.code));
        Value::Object(s)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.code, self.message)
    }
}

impl std::error::Error for ApiError {}

/// The `Status` a real server answers for a delete that removed the object at once (for kinds
/// whose delete answers a Status rather than the object).
pub fn success_status(info: &KindInfo, name: &str, uid: &str) -> Value {
    let mut d = details(info.group, info.plural, name);
    d["uid"] = json!(uid);
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": d,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Kind;

    #[test]
    fn messages_match_the_reference() {
        let pvc = Kind::PersistentVolumeClaim.info();
        assert_eq!(
            ApiError::conflict_modified(pvc, "p1").message,
            "Operation cannot be fulfilled on persistentvolumeclaims \"p1\": the object has been \
             modified; please apply your changes to the latest version and try again"
        );
        assert_eq!(
            ApiError::uid_precondition(pvc, "p1", "X", "Y").message,
            "Operation cannot be fulfilled on PersistentVolumeClaim \"p1\": the UID in the \
             precondition (X) does not match the UID in record (Y). The object might have been \
             deleted and then recreated"
        );
        let s = ApiError::already_exists(pvc, "p1").to_status();
        assert_eq!(
            s["details"],
            json!({"name": "p1", "kind": "persistentvolumeclaims"})
        );
        assert_eq!(s["code"], 409);
        let rj = Kind::RestoreJob.info();
        assert_eq!(
            ApiError::forbidden(rj, None, "r", "u", "delete", Some("ns")).message,
            "restorejobs.backups.cozystack.io \"r\" is forbidden: User \"u\" cannot delete \
             resource \"restorejobs\" in API group \"backups.cozystack.io\" in the namespace \"ns\""
        );
        assert!(ApiError::rv_on_create().to_status().get("reason").is_none());
    }
}
