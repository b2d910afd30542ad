//! Label and field selectors as the API server parses them, applied to list AND watch.

use serde_json::Value;

use crate::model::Kind;
use crate::sim::status::ApiError;

#[derive(Debug, Clone, PartialEq)]
enum LabelReq {
    Eq(String, String),
    NotEq(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct LabelSelector(Vec<LabelReq>);

/// Splits on commas that are not inside `( )`: `a in (x,y),b` is two terms.
fn split_terms(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect()
}

fn parse_set(rest: &str, term: &str) -> Result<Vec<String>, ApiError> {
    let rest = rest.trim();
    let inner = rest
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| bad_selector(term))?;
    Ok(inner
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect())
}

fn bad_selector(term: &str) -> ApiError {
    ApiError::bad_request(format!(
        "unable to parse requirement: invalid label selector \"{term}\""
    ))
}

fn valid_key(k: &str) -> bool {
    !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

impl LabelSelector {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn parse(s: &str) -> Result<Self, ApiError> {
        let mut reqs = Vec::new();
        for term in split_terms(s) {
            let req = if let Some(key) = term.strip_prefix('!') {
                LabelReq::NotExists(key.trim().to_string())
            } else if let Some((k, v)) = term.split_once("!=") {
                LabelReq::NotEq(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = term.split_once("==") {
                LabelReq::Eq(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = term.split_once('=') {
                LabelReq::Eq(k.trim().into(), v.trim().into())
            } else if let Some((k, rest)) = term.split_once(" notin ") {
                LabelReq::NotIn(k.trim().into(), parse_set(rest, term)?)
            } else if let Some((k, rest)) = term.split_once(" in ") {
                LabelReq::In(k.trim().into(), parse_set(rest, term)?)
            } else {
                LabelReq::Exists(term.to_string())
            };
            let key = match &req {
                LabelReq::Eq(k, _)
                | LabelReq::NotEq(k, _)
                | LabelReq::In(k, _)
                | LabelReq::NotIn(k, _)
                | LabelReq::Exists(k)
                | LabelReq::NotExists(k) => k,
            };
            if !valid_key(key) {
                return Err(bad_selector(term));
            }
            reqs.push(req);
        }
        Ok(LabelSelector(reqs))
    }

    pub fn matches(&self, obj: &Value) -> bool {
        if self.0.is_empty() {
            return true;
        }
        // `get`, not `pointer`: a pointer is parsed, with a `String` per step, on every call,
        // and a list asks this of every object of a kind.
        let labels = obj.get("metadata").and_then(|m| m.get("labels"));
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            LabelReq::Eq(k, v) => get(k) == Some(v.as_str()),
            LabelReq::NotEq(k, v) => get(k) != Some(v.as_str()),
            LabelReq::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            LabelReq::NotIn(k, vs) => get(k).is_none_or(|x| !vs.iter().any(|v| v == x)),
            LabelReq::Exists(k) => get(k).is_some(),
            LabelReq::NotExists(k) => get(k).is_none(),
        })
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct FieldSelector(Vec<(String, bool, String)>);

/// The JSON pointer a supported field label reads, per kind (the real server only allows a
/// fixed set per resource).
fn field_pointer(kind: Kind, field: &str) -> Option<String> {
    match field {
        "metadata.name" | "metadata.namespace" => {
            return Some(format!("/{}", field.replace('.', "/")));
        }
        _ => {}
    }
    let allowed: &[&str] = match kind {
        Kind::Event => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        Kind::Pod => &["spec.nodeName", "spec.restartPolicy", "status.phase"],
        Kind::Namespace => &["status.phase"],
        _ => &[],
    };
    if !allowed.contains(&field) {
        return None;
    }
    if field == "source" {
        return Some("/source/component".into());
    }
    Some(format!("/{}", field.replace('.', "/")))
}

impl FieldSelector {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn parse(kind: Kind, s: &str) -> Result<Self, ApiError> {
        let mut out = Vec::new();
        for term in split_terms(s) {
            let (k, eq, v) = if let Some((k, v)) = term.split_once("!=") {
                (k, false, v)
            } else if let Some((k, v)) = term.split_once("==") {
                (k, true, v)
            } else if let Some((k, v)) = term.split_once('=') {
                (k, true, v)
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{s}'; can't understand '{term}'"
                )));
            };
            let k = k.trim();
            let ptr = field_pointer(kind, k)
                .ok_or_else(|| ApiError::bad_request(format!("field label not supported: {k}")))?;
            out.push((ptr, eq, v.trim().to_string()));
        }
        Ok(FieldSelector(out))
    }

    pub fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|(ptr, eq, v)| {
            // The supported field pointers have no escaped steps (`~0`, `~1`).
            let actual = ptr
                .split('/')
                .skip(1)
                .try_fold(obj, |v, step| v.get(step))
                .and_then(Value::as_str)
                .unwrap_or("");
            (actual == v) == *eq
        })
    }
}

/// Everything that decides whether an object is in a list or a watch.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub namespace: Option<String>,
    pub labels: LabelSelector,
    pub fields: FieldSelector,
}

impl Filter {
    /// No label or field selector (a namespace is part of the path, not a selector): the
    /// real server counts `remainingItemCount` only then.
    pub fn selects_all(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }

    pub fn matches(&self, obj: &Value) -> bool {
        if let Some(ns) = &self.namespace {
            let actual = obj
                .get("metadata")
                .and_then(|m| m.get("namespace"))
                .and_then(Value::as_str)
                .unwrap_or("");
            if actual != ns {
                return false;
            }
        }
        self.labels.matches(obj) && self.fields.matches(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_selectors() {
        let o = json!({"metadata": {"labels": {"a": "1", "b": "x"}}});
        let m = |s: &str| LabelSelector::parse(s).unwrap().matches(&o);
        assert!(m("a=1"));
        assert!(m("a==1,b"));
        assert!(!m("a!=1"));
        assert!(m("a in (1, 2),b notin (y)"));
        assert!(!m("a notin (1)"));
        assert!(m("!c"));
        assert!(!m("!a"));
        assert!(m(""));
        assert!(LabelSelector::parse("a in 1").is_err());
    }

    #[test]
    fn field_selectors() {
        let ev = json!({"metadata": {"name": "e", "namespace": "n"},
                        "involvedObject": {"kind": "RestoreJob", "name": "r1"}});
        let f = FieldSelector::parse(
            Kind::Event,
            "involvedObject.kind=RestoreJob,metadata.namespace!=x",
        )
        .unwrap();
        assert!(f.matches(&ev));
        assert!(FieldSelector::parse(Kind::RestoreJob, "spec.x=1").is_err());
    }
}
