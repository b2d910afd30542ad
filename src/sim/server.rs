//! The HTTP/1.1 server: accepts on 127.0.0.1, authenticates, applies faults, and routes to
//! discovery or the resource handlers. Every failure becomes a `Status` body.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited, StreamBody, combinators::UnsyncBoxBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderValue, RETRY_AFTER, USER_AGENT};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::sim::auth::{Auth, Caller};
use crate::sim::discovery;
use crate::sim::faults::FaultHandle;
use crate::sim::handlers;
use crate::sim::openapi;
use crate::sim::proto;
use crate::sim::routes::{Route, parse_path, parse_query};
use crate::sim::status::ApiError;
use crate::sim::store::Store;

pub type Body = UnsyncBoxBody<Bytes, Infallible>;

/// Bodies larger than this are refused (bounded memory whatever a client sends).
const MAX_BODY: usize = 16 * 1024 * 1024;

pub struct Ctx {
    pub store: Store,
    pub auth: Auth,
    pub faults: FaultHandle,
    pub bookmark_interval: Duration,
    /// A watch without `timeoutSeconds` ends after between this and twice this.
    pub min_request_timeout: Duration,
    /// `127.0.0.1:PORT`, for `/api`'s serverAddressByClientCIDRs.
    pub address: String,
    /// Requests served, by verb (`GET /metrics`).
    pub requests: crate::sim::metrics::RequestCounts,
    /// apps/v1 Deployments (the backup controller's), outside the store: see `deployments`.
    pub deployments: crate::sim::deployments::Deployments,
}

pub fn json_response(code: u16, v: &Value) -> Response<Body> {
    // serde_json's writer, not `Display`: it writes through `fmt::Write` a piece at a time.
    match serde_json::to_vec(v) {
        Ok(body) => json_bytes_response(code, body),
        Err(e) => json_bytes_response(500, e.to_string().into_bytes()),
    }
}

/// A JSON body already serialized.
pub fn json_bytes_response(code: u16, body: Vec<u8>) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(body)).boxed_unsync());
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

pub fn error_response(e: &ApiError) -> Response<Body> {
    let mut r = json_response(e.code, &e.to_status());
    if let Some(secs) = e.retry_after
        && let Ok(v) = HeaderValue::from_str(&secs.to_string())
    {
        r.headers_mut().insert(RETRY_AFTER, v);
    }
    r
}

pub fn stream_response(rx: mpsc::Receiver<Bytes>) -> Response<Body> {
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|b| (Ok::<_, Infallible>(Frame::data(b)), rx))
    });
    let mut r = Response::new(StreamBody::new(stream).boxed_unsync());
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// Accepts connections until the task is aborted; aborting drops the `JoinSet`, which ends every
/// connection (and with them every watch stream).
pub async fn serve(listener: TcpListener, ctx: Arc<Ctx>) {
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    send_at_once(&stream);
                    let ctx = ctx.clone();
                    conns.spawn(async move {
                        let svc = service_fn(move |req| {
                            let ctx = ctx.clone();
                            async move { Ok::<_, Infallible>(handle(ctx, req).await) }
                        });
                        if let Err(e) = http1::Builder::new().serve_connection(TokioIo::new(stream), svc).await {
                            tracing::debug!("sim connection ended: {e}");
                        }
                    });
                }
                Err(e) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    tracing::warn!("sim accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
}

/// Sends each write as soon as it is made, as a real API server does (Go sets TCP_NODELAY on
/// every connection). With Nagle's algorithm a watch event written while the previous one still
/// waits for the client's delayed ACK is held back until that ACK comes: at 100k objects, writes
/// 20-50 ms apart reached the bench's watch 6-13 ms late and once 589 ms, for kubectl and
/// restorewatch alike (docs/performance.md, issue 28's sixth session).
fn send_at_once(stream: &tokio::net::TcpStream) {
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!("sim connection: TCP_NODELAY not set: {e}");
    }
}

fn header(req: &Request<Incoming>, name: hyper::header::HeaderName) -> String {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}

/// One request, already split from hyper's types.
pub struct Req {
    pub method: Method,
    pub query: std::collections::HashMap<String, String>,
    pub accept: String,
    pub content_type: String,
    /// `User-Agent`: the field manager of a write without `fieldManager`.
    pub user_agent: String,
    pub body: Bytes,
    /// Taken when the request arrived: a watch admitted before `drop_watches` is one of the
    /// "open" streams it ends, even if its stream had not started yet.
    pub drops: tokio::sync::watch::Receiver<u64>,
}

async fn handle(ctx: Arc<Ctx>, req: Request<Incoming>) -> Response<Body> {
    if req.uri().path() == crate::sim::metrics::PATH {
        return json_response(200, &ctx.requests.to_json());
    }
    let drops = ctx.faults.drop_signal();
    let route = parse_path(req.uri().path());
    tracing::debug!(method = %req.method(), uri = %req.uri(), "sim request");
    let authorization = header(&req, AUTHORIZATION);
    let accept = header(&req, ACCEPT);
    let content_type = header(&req, CONTENT_TYPE);
    let user_agent = header(&req, USER_AGENT);
    let method = req.method().clone();
    let query = parse_query(req.uri().query());
    let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            return error_response(&ApiError::bad_request(format!(
                "reading the request body: {e}"
            )));
        }
    };
    let caller = match ctx.auth.authenticate(
        Some(&authorization)
            .filter(|a| !a.is_empty())
            .map(String::as_str),
    ) {
        Some(c) => c,
        None => {
            // Without a token, discovery stays readable as on a real server
            // (system:public-info-viewer); a wrong token is refused everywhere.
            let public = authorization.is_empty()
                && !matches!(
                    route,
                    Route::Resource(_)
                        | Route::AccessReview
                        | Route::SelfReview
                        | Route::Deployment { .. }
                );
            if !public {
                return error_response(&ApiError::unauthorized());
            }
            Caller::Anyone
        }
    };
    // kubectl's typed clients send protobuf; the supported shapes are turned into JSON here.
    let (content_type, body) = if content_type.starts_with(proto::CONTENT_TYPE) {
        match proto::decode(&body) {
            Some(v) => ("application/json".to_string(), Bytes::from(v.to_string())),
            None => {
                return error_response(&ApiError::unsupported_media_type(
                    "restorewatch-sim decodes only a few protobuf bodies; send application/json",
                ));
            }
        }
    } else {
        (content_type, body)
    };
    let r = Req {
        method,
        query,
        accept,
        content_type,
        user_agent,
        body,
        drops,
    };
    let get_only = |v: Option<Value>| match (&r.method, v) {
        (&Method::GET, Some(v)) => json_response(200, &v),
        (&Method::GET, None) => error_response(&ApiError::no_route()),
        _ => error_response(&ApiError::method_not_allowed()),
    };
    match route {
        Route::Version => get_only(Some(discovery::version())),
        Route::Health => {
            let mut resp = Response::new(Full::new(Bytes::from_static(b"ok")).boxed_unsync());
            resp.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
            resp
        }
        Route::ApiVersions => get_only(Some(discovery::api_versions(&ctx.address))),
        Route::ApiGroupList => get_only(Some(discovery::api_group_list())),
        Route::ApiGroup(g) => get_only(discovery::api_group(&g)),
        Route::ResourceList { group, version } => {
            get_only(discovery::resource_list(&group, &version))
        }
        Route::OpenApiV2 => error_response(&ApiError::no_route()),
        Route::OpenApiV3Root => get_only(Some(openapi::root())),
        Route::OpenApiV3 { group, version } => get_only(openapi::group_version(&group, &version)),
        Route::AccessReview | Route::SelfReview => {
            if r.method != Method::POST {
                return error_response(&ApiError::method_not_allowed());
            }
            if let Some(e) = ctx.faults.before_request().await {
                return error_response(&e);
            }
            let access = matches!(route, Route::AccessReview);
            match serde_json::from_slice::<Value>(&r.body) {
                Ok(v) if v.is_object() && access => json_response(201, &caller.review(v)),
                Ok(v) if v.is_object() => json_response(201, &caller.who_am_i(v)),
                _ => error_response(&ApiError::bad_request(if access {
                    "expected a SelfSubjectAccessReview object"
                } else {
                    "expected a SelfSubjectReview object"
                })),
            }
        }
        Route::Resource(path) => {
            ctx.requests
                .record(&r.method, &path, &r.query, &r.user_agent);
            if let Some(e) = ctx.faults.before_request().await {
                return error_response(&e);
            }
            handlers::resource(&ctx, &caller, path, r).await
        }
        Route::Deployment { namespace, name } => {
            if let Some(e) = ctx.faults.before_request().await {
                return error_response(&e);
            }
            crate::sim::deployments::serve(
                &ctx.deployments,
                &caller,
                &r.method,
                &namespace,
                name.as_deref(),
            )
        }
        Route::NotFound => error_response(&ApiError::no_route()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_accepted_connection_sends_each_write_without_waiting_for_an_ack() {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (stream, _) = listener.accept().await.unwrap();
        // Linux leaves Nagle's algorithm on for a new socket: the emulator must turn it off.
        assert!(!stream.nodelay().unwrap());
        send_at_once(&stream);
        assert!(stream.nodelay().unwrap());
        drop(client);
    }
}
