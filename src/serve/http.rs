//! The HTTP side of `serve`: four read-only endpoints over the newest frame. Every answer is
//! computed from the frame at request time, so a scrape never sees a half-updated picture.

use super::metrics::{CONTENT_TYPE, Exposition, encode_frame};
use super::readiness::Readiness;
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
use tokio::net::TcpListener;
use tokio::task::JoinSet;

pub struct State {
    pub frames: FrameRx,
    pub docs_base: String,
    /// What `/healthz` and `/readyz` name, e.g. the context and server.
    pub source: String,
}

fn response(code: StatusCode, content_type: &'static str, body: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = code;
    r.headers_mut()
        .insert(CT, HeaderValue::from_static(content_type));
    r
}

pub fn route(state: &State, method: &Method, path: &str) -> Response<Full<Bytes>> {
    const TEXT: &str = "text/plain; charset=utf-8";
    if method != Method::GET && method != Method::HEAD {
        return response(
            StatusCode::METHOD_NOT_ALLOWED,
            TEXT,
            "restorewatch serve is read-only: only GET\n".into(),
        );
    }
    let frame = state.frames.borrow().clone();
    match path {
        "/metrics" => {
            let ex = Exposition {
                docs_base: &state.docs_base,
            };
            let body = encode_frame(frame.as_deref(), jiff::Timestamp::now(), &ex);
            response(StatusCode::OK, CONTENT_TYPE, body)
        }
        "/healthz" => response(StatusCode::OK, TEXT, "ok\n".into()),
        "/readyz" => {
            let r = Readiness::of(frame.as_deref());
            let code = if r.is_ready() {
                StatusCode::OK
            } else {
                StatusCode::SERVICE_UNAVAILABLE
            };
            response(code, TEXT, format!("{}\n", r.text(&state.source)))
        }
        "/report" => {
            let r = Readiness::of(frame.as_deref());
            match frame.filter(|_| r.has_report()) {
                Some(f) => response(
                    StatusCode::OK,
                    "application/json",
                    report_body(&f.report, &r),
                ),
                // An empty report here would read as "no restore, no finding": an all-clear.
                None => response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "application/json",
                    serde_json::json!({
                        "error": r.text(&state.source),
                        "watchesDown": r.blind(),
                    })
                    .to_string(),
                ),
            }
        }
        "/" => response(
            StatusCode::OK,
            TEXT,
            "restorewatch serve: /metrics /healthz /readyz /report\n".into(),
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
    let doc = crate::cli::output::json(report);
    let down = serde_json::to_string(r.blind()).unwrap_or_else(|_| "[]".into());
    match doc.strip_prefix('{') {
        Some(rest) => format!("{{\n  \"watchesDown\": {down},{rest}"),
        None => doc,
    }
}

/// Accepts connections until the task is aborted.
pub async fn serve(listener: TcpListener, state: Arc<State>) {
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let state = state.clone();
                    conns.spawn(async move {
                        let svc = service_fn(move |req: Request<Incoming>| {
                            let state = state.clone();
                            async move {
                                Ok::<_, Infallible>(route(&state, req.method(), req.uri().path()))
                            }
                        });
                        let conn = http1::Builder::new()
                            .timer(hyper_util::rt::TokioTimer::new())
                            .header_read_timeout(Duration::from_secs(10))
                            .serve_connection(TokioIo::new(stream), svc);
                        if let Err(e) = conn.await {
                            tracing::debug!("serve connection ended: {e}");
                        }
                    });
                }
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
}
