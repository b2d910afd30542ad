//! Kubernetes URL paths and query strings, parsed into what the handlers act on. Anything that
//! does not parse is a 404 with the real server's body, never a panic.

use std::collections::HashMap;

use crate::model::{KINDS, Kind};
use crate::sim::discovery::{AUTHN_GROUP, AUTHZ_GROUP};

#[derive(Debug, Clone, PartialEq)]
pub enum Route {
    Version,
    Health,
    ApiVersions,
    ApiGroupList,
    ApiGroup(String),
    ResourceList {
        group: String,
        version: String,
    },
    OpenApiV2,
    OpenApiV3Root,
    OpenApiV3 {
        group: String,
        version: String,
    },
    AccessReview,
    /// `SelfSubjectReview` (`kubectl auth whoami`): who the token authenticates as.
    SelfReview,
    /// apps/v1 Deployments of a namespace (one by name, or the list): served only for the
    /// backup controller's image (`sim::deployments`), outside `KINDS` and discovery.
    Deployment {
        namespace: String,
        name: Option<String>,
    },
    Resource(ResourcePath),
    NotFound,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ResourcePath {
    pub kind: Kind,
    /// From the path; `None` for cluster-scoped kinds and all-namespace lists.
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub status: bool,
    /// The deprecated `/watch/` path prefix.
    pub watch_prefix: bool,
}

fn find_kind(group: &str, version: &str, plural: &str) -> Option<Kind> {
    KINDS
        .iter()
        .find(|k| k.group == group && k.version == version && k.plural == plural)
        .map(|k| k.kind)
}

pub fn parse_path(path: &str) -> Route {
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match segs.as_slice() {
        ["version"] => Route::Version,
        ["healthz" | "readyz" | "livez", ..] => Route::Health,
        ["api"] => Route::ApiVersions,
        ["apis"] => Route::ApiGroupList,
        ["apis", g] => Route::ApiGroup(g.to_string()),
        ["api", v] => Route::ResourceList {
            group: String::new(),
            version: v.to_string(),
        },
        ["apis", g, v] => Route::ResourceList {
            group: g.to_string(),
            version: v.to_string(),
        },
        ["openapi", "v2"] => Route::OpenApiV2,
        ["openapi", "v3"] => Route::OpenApiV3Root,
        ["openapi", "v3", "api", v] => Route::OpenApiV3 {
            group: String::new(),
            version: v.to_string(),
        },
        ["openapi", "v3", "apis", g, v] => Route::OpenApiV3 {
            group: g.to_string(),
            version: v.to_string(),
        },
        ["apis", g, "v1", "selfsubjectaccessreviews"] if *g == AUTHZ_GROUP => Route::AccessReview,
        ["apis", g, "v1", "selfsubjectreviews"] if *g == AUTHN_GROUP => Route::SelfReview,
        ["apis", "apps", "v1", "namespaces", ns, "deployments"] => Route::Deployment {
            namespace: ns.to_string(),
            name: None,
        },
        ["apis", "apps", "v1", "namespaces", ns, "deployments", name] => Route::Deployment {
            namespace: ns.to_string(),
            name: Some(name.to_string()),
        },
        ["api", v, rest @ ..] => resource(String::new(), v, rest),
        ["apis", g, v, rest @ ..] => resource(g.to_string(), v, rest),
        _ => Route::NotFound,
    }
}

fn resource(group: String, version: &str, rest: &[&str]) -> Route {
    let (watch_prefix, rest) = match rest {
        ["watch", r @ ..] => (true, r),
        r => (false, r),
    };
    let (namespace, rest): (Option<String>, &[&str]) = match rest {
        ["namespaces", ns, r @ ..]
            if r.first()
                .is_some_and(|p| find_kind(&group, version, p).is_some()) =>
        {
            (Some(ns.to_string()), r)
        }
        r => (None, r),
    };
    let (plural, name, sub) = match rest {
        [p] => (*p, None, None),
        [p, n] => (*p, Some(n.to_string()), None),
        [p, n, s] => (*p, Some(n.to_string()), Some(*s)),
        _ => return Route::NotFound,
    };
    let Some(kind) = find_kind(&group, version, plural) else {
        return Route::NotFound;
    };
    let info = kind.info();
    // A namespaced kind needs its namespace to address one object; a cluster-scoped kind
    // never sits under /namespaces/.
    if (info.namespaced && namespace.is_none() && name.is_some())
        || (!info.namespaced && namespace.is_some())
    {
        return Route::NotFound;
    }
    let status = match sub {
        None => false,
        Some("status") if info.status_subresource => true,
        Some(_) => return Route::NotFound,
    };
    Route::Resource(ResourcePath {
        kind,
        namespace,
        name,
        status,
        watch_prefix,
    })
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok());
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                        continue;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub fn parse_query(q: Option<&str>) -> HashMap<String, String> {
    q.unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (percent_decode(k), percent_decode(v)),
            None => (percent_decode(p), String::new()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        let r = parse_path("/api/v1/namespaces/a/persistentvolumeclaims/p/status");
        assert_eq!(
            r,
            Route::Resource(ResourcePath {
                kind: Kind::PersistentVolumeClaim,
                namespace: Some("a".into()),
                name: Some("p".into()),
                status: true,
                watch_prefix: false
            })
        );
        match parse_path("/api/v1/namespaces/a") {
            Route::Resource(p) => {
                assert_eq!(p.kind, Kind::Namespace);
                assert_eq!(p.name.as_deref(), Some("a"));
            }
            other => panic!("{other:?}"),
        }
        match parse_path("/api/v1/namespaces/a/status") {
            Route::Resource(p) => assert!(p.status && p.kind == Kind::Namespace),
            other => panic!("{other:?}"),
        }
        match parse_path("/apis/backups.cozystack.io/v1alpha1/restorejobs") {
            Route::Resource(p) => assert!(p.namespace.is_none() && p.name.is_none()),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            parse_path("/api/v1/persistentvolumeclaims/x"),
            Route::NotFound
        );
        assert_eq!(
            parse_path("/api/v1/namespaces/a/persistentvolumes"),
            Route::NotFound
        );
        assert_eq!(
            parse_path("/apis/velero.io/v1/namespaces/a/restores/x/scale"),
            Route::NotFound
        );
        assert_eq!(parse_path("/apis/x/y/z/w/v/u/t"), Route::NotFound);
        assert_eq!(parse_path("/"), Route::NotFound);
    }

    #[test]
    fn queries() {
        let q = parse_query(Some("labelSelector=a%3D1%2Cb+in+(x)&watch=1&x"));
        assert_eq!(q["labelSelector"], "a=1,b in (x)");
        assert_eq!(q["watch"], "1");
        assert_eq!(q["x"], "");
        assert_eq!(
            parse_query(Some("a=%zz%")).get("a").map(String::as_str),
            Some("%zz%")
        );
    }
}
