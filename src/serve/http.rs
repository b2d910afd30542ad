//! The HTTP side of `serve`: four read-only endpoints over the newest frame. Every answer is
//! computed from one frame, so a scrape never sees a half-updated picture; the large ones are
//! built once per frame and shared (`bodies`). Connections are bounded in number and in the
//! time an answer may take to be read (`Limits`).

use super::bodies::Bodies;
use super::metrics::{CONTENT_TYPE, Exposition, encode_frame, text_format};
use super::readiness::Readiness;
use super::write_deadline::WriteDeadline;
use crate::pipeline::frame::FrameRx;
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE as CT, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// How much of the server clients can hold.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections served at once; one more is answered 503 and closed. Prometheus, a probe
    /// and a few people need a handful.
    pub max_connections: usize,
    /// How long an answer may take to be read by the client before the connection is dropped.
    pub write_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 32,
            write_timeout: Duration::from_secs(10),
        }
    }
}

pub struct State {
    pub frames: FrameRx,
    pub docs_base: String,
    /// What `/healthz` and `/readyz` name, e.g. the context and server.
    pub source: String,
    pub limits: Limits,
    pub bodies: Bodies,
    /// Held by each connection being served.
    slots: Arc<Semaphore>,
    /// `/report` answers (`serve --no-report` turns it off: it names restores, objects and
    /// their history to anyone who can reach the port).
    pub report: bool,
    /// Restores of one namespace exported with series of their own.
    pub restores_per_namespace: usize,
}

impl State {
    pub fn new(frames: FrameRx, docs_base: String, source: String, limits: Limits) -> State {
        State {
            frames,
            docs_base,
            source,
            limits,
            report: true,
            restores_per_namespace: super::metrics::DEFAULT_RESTORES_PER_NAMESPACE,
            bodies: Bodies::default(),
            slots: Arc::new(Semaphore::new(limits.max_connections)),
        }
    }

    /// Connections being served now.
    pub fn open_connections(&self) -> usize {
        self.limits.max_connections - self.slots.available_permits()
    }
}

fn response(
    code: StatusCode,
    content_type: &'static str,
    body: impl Into<Bytes>,
) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = code;
    r.headers_mut()
        .insert(CT, HeaderValue::from_static(content_type));
    r
}

fn ok_or_unavailable(ok: bool) -> StatusCode {
    if ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    }
}

/// `accept`: the request's `Accept` header, which picks the exposition format of `/metrics`.
pub fn route(
    state: &State,
    method: &Method,
    path: &str,
    accept: Option<&str>,
) -> Response<Full<Bytes>> {
    const TEXT: &str = "text/plain; charset=utf-8";
    if method != Method::GET && method != Method::HEAD {
        return response(
            StatusCode::METHOD_NOT_ALLOWED,
            TEXT,
            "restorewatch serve is read-only: only GET\n",
        );
    }
    let frame = state.frames.borrow().clone();
    let key = frame.as_ref().map(|f| f.seq);
    match path {
        "/metrics" => {
            let now = jiff::Timestamp::now();
            let openmetrics = || {
                state.bodies.metrics(key, now.as_second(), || {
                    let ex = Exposition {
                        docs_base: &state.docs_base,
                        restores_per_namespace: state.restores_per_namespace,
                    };
                    encode_frame(frame.as_deref(), now, &ex)
                })
            };
            if text_format::wants_openmetrics(accept) {
                response(StatusCode::OK, CONTENT_TYPE, openmetrics())
            } else {
                let body = state.bodies.metrics_text(key, now.as_second(), || {
                    text_format::from_openmetrics(&String::from_utf8_lossy(&openmetrics()))
                });
                response(StatusCode::OK, text_format::CONTENT_TYPE, body)
            }
        }
        "/healthz" => response(StatusCode::OK, TEXT, "ok\n"),
        "/readyz" => {
            let r = Readiness::of(frame.as_deref());
            response(
                ok_or_unavailable(r.is_ready()),
                TEXT,
                format!("{}\n", r.text(&state.source)),
            )
        }
        "/report" if !state.report => response(
            StatusCode::NOT_FOUND,
            TEXT,
            "/report is turned off (serve --no-report); /metrics, /healthz and /readyz answer\n",
        ),
        "/report" => {
            let r = Readiness::of(frame.as_deref());
            let code = ok_or_unavailable(r.has_report());
            let body = state
                .bodies
                .report(key, || match frame.filter(|_| r.has_report()) {
                    Some(f) => report_body(&f.report, &r),
                    // An empty report here would read as "no restore, no finding": an all-clear.
                    None => serde_json::json!({
                        "error": r.text(&state.source),
                        "watchesDown": r.blind(),
                    })
                    .to_string(),
                });
            response(code, "application/json", body)
        }
        "/" => response(
            StatusCode::OK,
            TEXT,
            "restorewatch serve: /metrics /healthz /readyz /report\n",
        ),
        _ => response(
            StatusCode::NOT_FOUND,
            TEXT,
            // The path is the client's: shown like any other outside text.
            format!("no such endpoint: {}\n", crate::text::one_line(path)),
        ),
    }
}

/// `check -o json`'s document plus `watchesDown`: the resources whose findings are stale and
/// since when. Spliced in front rather than re-serialised: the report may be megabytes.
fn report_body(report: &crate::analysis::Report, r: &Readiness) -> String {
    let doc = crate::document::check_json::json(report);
    let down = serde_json::to_string(r.blind()).unwrap_or_else(|_| "[]".into());
    match doc.strip_prefix('{') {
        Some(rest) => format!("{{\n  \"watchesDown\": {down},{rest}"),
        None => doc,
    }
}

/// The answers built from a whole frame (megabytes at 20k objects), as opposed to a line.
fn builds_a_body(path: &str) -> bool {
    matches!(path, "/metrics" | "/report")
}

/// Accepts connections until the task is aborted.
pub async fn serve(listener: TcpListener, state: Arc<State>) {
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => match Arc::clone(&state.slots).try_acquire_owned() {
                    Ok(slot) => {
                        let state = state.clone();
                        conns.spawn(async move {
                            serve_connection(stream, state).await;
                            drop(slot);
                        });
                    }
                    Err(_) => {
                        conns.spawn(refuse(stream, state.limits.max_connections));
                    }
                },
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
}

async fn serve_connection(stream: TcpStream, state: Arc<State>) {
    let limit = state.limits.write_timeout;
    let svc = service_fn(move |req: Request<Incoming>| {
        let state = state.clone();
        async move {
            let accept = req
                .headers()
                .get(hyper::header::ACCEPT)
                .and_then(|v| v.to_str().ok());
            let path = req.uri().path();
            if !builds_a_body(path) {
                return Ok::<_, Infallible>(route(&state, req.method(), path, accept));
            }
            // `serve` runs on one worker (`crate::runtime`), which also follows the cluster's
            // changes: a body of megabytes is built off it.
            let (method, path, accept) = (
                req.method().clone(),
                path.to_owned(),
                accept.map(str::to_owned),
            );
            let built = tokio::task::spawn_blocking(move || {
                route(&state, &method, &path, accept.as_deref())
            })
            .await;
            Ok(built.unwrap_or_else(|e| {
                tracing::error!("building an answer failed: {e}");
                response(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "text/plain; charset=utf-8",
                    "restorewatch serve could not build this answer; see its log\n",
                )
            }))
        }
    });
    let conn = http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(Duration::from_secs(10))
        // Queue the shared body rather than copy it into a buffer of each connection.
        .writev(true)
        .serve_connection(TokioIo::new(WriteDeadline::new(stream, limit)), svc);
    if let Err(e) = conn.await {
        tracing::debug!("serve connection ended: {e}");
    }
}

/// One connection too many: a short 503 (it fits the socket's buffer, so a client that does
/// not read cannot hold this either), then closed.
async fn refuse(mut stream: TcpStream, max: usize) {
    let body = format!("restorewatch serve is busy: {max} connections open; retry shortly\n");
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Retry-After: 1\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let write = async {
        stream.write_all(answer.as_bytes()).await?;
        stream.shutdown().await
    };
    if tokio::time::timeout(Duration::from_secs(1), write)
        .await
        .is_err()
    {
        tracing::debug!("a refused connection did not take its 503 in time");
    }
}
