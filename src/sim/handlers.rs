//! Resource requests: authorization, then get / list / watch / create / update / patch / delete
//! with the semantics of `api_ops`, shaped as JSON or as a Table.

use hyper::{Method, Response};
use serde_json::{Value, json};

use crate::model::Kind;
use crate::sim::api_ops::{DeleteOptions, Deleted, Part};
use crate::sim::auth::Caller;
use crate::sim::managed::{Operation, Writer};
use crate::sim::patch::PatchKind;
use crate::sim::routes::ResourcePath;
use crate::sim::selectors::{FieldSelector, Filter, LabelSelector};
use crate::sim::server::{
    Body, Ctx, Req, error_response, json_bytes_response, json_response, stream_response,
};
use crate::sim::status::ApiError;
use crate::sim::store::PageHead;
use crate::sim::table::{IncludeObject, table, wants_table};
use crate::sim::watch::{WatchParams, WatchTask, is_watch};

fn verb(method: &Method, path: &ResourcePath, watch: bool) -> &'static str {
    match (method, path.name.is_some()) {
        (&Method::GET, _) if watch => "watch",
        (&Method::GET, true) => "get",
        (&Method::GET, false) => "list",
        (&Method::POST, _) => "create",
        (&Method::PUT, _) => "update",
        (&Method::PATCH, _) => "patch",
        (&Method::DELETE, true) => "delete",
        (&Method::DELETE, false) => "deletecollection",
        _ => "unknown",
    }
}

/// Who a write is recorded under in managedFields.
fn writer(r: &Req, apply: bool) -> Writer {
    let op = if apply {
        Operation::Apply
    } else {
        Operation::Update
    };
    Writer::from_request(
        r.query.get("fieldManager").map(String::as_str),
        &r.user_agent,
        op,
    )
}

fn list_kind(kind: Kind) -> String {
    format!("{}List", kind.info().api_kind)
}

pub async fn resource(
    ctx: &Ctx,
    caller: &Caller<'_>,
    path: ResourcePath,
    r: Req,
) -> Response<Body> {
    match resource_inner(ctx, caller, path, r).await {
        Ok(resp) => resp,
        Err(e) => error_response(&e),
    }
}

fn parse_json(body: &[u8]) -> Result<Value, ApiError> {
    serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!(
            "the body of the request could not be decoded as JSON: {e}"
        ))
    })
}

async fn resource_inner(
    ctx: &Ctx,
    caller: &Caller<'_>,
    path: ResourcePath,
    r: Req,
) -> Result<Response<Body>, ApiError> {
    let kind = path.kind;
    let info = kind.info();
    let watch = path.watch_prefix || is_watch(&r.query);
    let verb = verb(&r.method, &path, watch);
    let resource = if path.status {
        format!("{}/status", info.plural)
    } else {
        info.plural.to_string()
    };
    let ns = path.namespace.clone().unwrap_or_default();
    let name = path.name.clone().unwrap_or_default();
    if !caller.allows(verb, &resource, path.namespace.as_deref()) {
        return Err(ApiError::forbidden(
            info,
            path.status.then_some("status"),
            &name,
            caller.user(),
            verb,
            path.namespace.as_deref(),
        ));
    }
    // Honest refusal rather than a dry run that writes.
    if r.query.contains_key("dryRun") && r.method != Method::GET {
        return Err(ApiError::bad_request(
            "dryRun is not supported by restorewatch-sim",
        ));
    }
    let table_mode = wants_table(&r.accept)
        .then(|| IncludeObject::parse(r.query.get("includeObject").map(String::as_str)));
    let part = if path.status {
        Part::Status
    } else {
        Part::Main
    };
    let store = &ctx.store;
    match (&r.method, path.name.as_deref()) {
        (&Method::GET, None) => {
            let filter = Filter {
                namespace: path.namespace.clone(),
                labels: LabelSelector::parse(
                    r.query.get("labelSelector").map_or("", String::as_str),
                )?,
                fields: FieldSelector::parse(
                    kind,
                    r.query.get("fieldSelector").map_or("", String::as_str),
                )?,
            };
            if watch {
                return watch_response(ctx, kind, filter, &r, table_mode);
            }
            let limit = r.query.get("limit").and_then(|l| l.parse::<usize>().ok());
            // A continued list is read at the version its token names, never at another.
            if r.query.get("continue").is_some_and(|c| !c.is_empty())
                && r.query
                    .get("resourceVersion")
                    .is_some_and(|v| !v.is_empty() && v != "0")
            {
                return Err(ApiError::bad_request(
                    "specifying resource version is not allowed when using continue",
                ));
            }
            let cont = r.query.get("continue").map(String::as_str);
            match table_mode {
                Some(include) => {
                    let page = store.list(kind, &filter, limit, cont)?;
                    let meta = list_meta(&page.head);
                    Ok(json_response(200, &table(kind, &page.items, include, meta)))
                }
                None => {
                    let mut items = b"[".to_vec();
                    let mut written = Ok(());
                    let head = store.list_each(kind, &filter, limit, cont, |o| {
                        if items.len() > 1 {
                            items.push(b',');
                        }
                        if written.is_ok() {
                            written = serde_json::to_writer(&mut items, o);
                        }
                    })?;
                    written.map_err(|e| ApiError::internal(e.to_string()))?;
                    items.push(b']');
                    let head = json!({
                        "kind": list_kind(kind),
                        "apiVersion": info.api_version(),
                        "metadata": list_meta(&head),
                    });
                    Ok(json_bytes_response(200, with_items(&head, &items)?))
                }
            }
        }
        (&Method::GET, Some(name)) => {
            let obj = store
                .get(kind, &ns, name)
                .ok_or_else(|| ApiError::not_found(info, name))?;
            Ok(json_response(200, &shape(kind, obj, table_mode)))
        }
        (&Method::POST, None) => {
            // A namespaced kind is created under /namespaces/NS/, never on the all-namespaces path.
            if path.status || (info.namespaced && path.namespace.is_none()) {
                return Err(ApiError::method_not_allowed());
            }
            let obj = store.api_create(kind, &ns, parse_json(&r.body)?, &writer(&r, false))?;
            Ok(json_response(201, &obj))
        }
        (&Method::PUT, Some(name)) => {
            let w = writer(&r, false);
            let obj = store.api_update(kind, &ns, name, parse_json(&r.body)?, part, &w)?;
            Ok(json_response(200, &obj))
        }
        (&Method::PATCH, Some(name)) => {
            let pk = PatchKind::from_content_type(&r.content_type)
                .ok_or_else(|| ApiError::unsupported_media_type("415: Unsupported Media Type"))?;
            let w = writer(&r, pk == PatchKind::Apply);
            let obj = if pk == PatchKind::Apply {
                if r.query.get("fieldManager").is_none_or(String::is_empty) {
                    return Err(ApiError::bad_request(
                        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
                    ));
                }
                let force = r.query.get("force").is_some_and(|f| f == "true");
                store.api_apply(kind, &ns, name, &r.body, part, &w, force)?
            } else {
                store.api_patch(kind, &ns, name, pk, &r.body, part, &w)?
            };
            Ok(json_response(200, &obj))
        }
        (&Method::DELETE, Some(name)) => {
            if path.status {
                return Err(ApiError::method_not_allowed());
            }
            let mut opts = DeleteOptions::from_body(&r.body)?;
            if let Some(p) = r.query.get("propagationPolicy") {
                opts.propagation = Some(crate::sim::api_ops::Propagation::parse(p)?);
            }
            let out = store.api_delete(kind, &ns, name, &opts)?;
            let code = match out {
                Deleted::Gone(_) | Deleted::Pending(_) => 200,
            };
            Ok(json_response(code, out.body()))
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}

fn list_meta(head: &PageHead) -> Value {
    let mut meta = json!({"resourceVersion": head.resource_version.to_string()});
    if let Some(c) = &head.continue_token {
        meta["continue"] = json!(c);
    }
    if let Some(n) = head.remaining {
        meta["remainingItemCount"] = json!(n);
    }
    meta
}

/// `head` (a JSON object) with `"items":` and the already serialized `items` appended, in the
/// order a real server writes a list: kind, apiVersion, metadata, items.
fn with_items(head: &Value, items: &[u8]) -> Result<Vec<u8>, ApiError> {
    let mut out = Vec::with_capacity(items.len() + 256);
    serde_json::to_writer(&mut out, head).map_err(|e| ApiError::internal(e.to_string()))?;
    if out.pop() != Some(b'}') {
        return Err(ApiError::internal("a list's head is not a JSON object"));
    }
    out.extend_from_slice(b",\"items\":");
    out.extend_from_slice(items);
    out.push(b'}');
    Ok(out)
}

fn shape(kind: Kind, obj: Value, table_mode: Option<IncludeObject>) -> Value {
    match table_mode {
        Some(include) => {
            let rv = obj
                .pointer("/metadata/resourceVersion")
                .cloned()
                .unwrap_or(json!(""));
            table(kind, &[obj], include, json!({"resourceVersion": rv}))
        }
        None => obj,
    }
}

/// A number in [0, 1) that differs from call to call. Not the store's seeded generator: that
/// one names objects, and a watch must not change which names a seeded run gives.
fn unit_random() -> f64 {
    use std::hash::BuildHasher;
    let bits = std::collections::hash_map::RandomState::new().hash_one(0u8);
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

fn watch_response(
    ctx: &Ctx,
    kind: Kind,
    filter: Filter,
    r: &Req,
    table_mode: Option<IncludeObject>,
) -> Result<Response<Body>, ApiError> {
    let rv = r
        .query
        .get("resourceVersion")
        .map(String::as_str)
        .unwrap_or("");
    let since = match rv {
        "" | "0" => None,
        v => Some(
            v.parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {v}")))?,
        ),
    };
    // Absent or 0: the real server's default, a random time between the minimum request
    // timeout and twice that, so that watches opened together do not all end together.
    let timeout = match r
        .query
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
    {
        Some(secs) if secs > 0 => std::time::Duration::from_secs(secs),
        _ => {
            let min = ctx.min_request_timeout;
            min + min.mul_f64(unit_random())
        }
    };
    let flag = |k: &str| matches!(r.query.get(k).map(String::as_str), Some("true" | "1"));
    let params = WatchParams {
        since,
        bookmarks: flag("allowWatchBookmarks"),
        timeout: Some(timeout),
        send_initial_events: flag("sendInitialEvents"),
        table: table_mode,
    };
    let task = WatchTask {
        store: ctx.store.clone(),
        faults: ctx.faults.clone(),
        kind,
        filter,
        params,
        bookmark_interval: ctx.bookmark_interval,
        drops: r.drops.clone(),
    };
    Ok(stream_response(task.start()))
}
