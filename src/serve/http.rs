//! The HTTP side of `serve`: four read-only endpoints over the newest frame. Every answer is
//! computed from the frame at request time, so a scrape never sees a half-updated picture.

use super::metrics::{CONTENT_TYPE, Exposition, encode_frame};
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
    /// `/report` answers (`serve --no-report` turns it off: it names restores, objects and
    /// their history to anyone who can reach the port).
    pub report: bool,
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
        "/readyz" => match frame {
            Some(_) => response(StatusCode::OK, TEXT, format!("ready: {}\n", state.source)),
            None => response(
                StatusCode::SERVICE_UNAVAILABLE,
                TEXT,
                format!(
                    "not ready: still listing every watched resource of {}\n",
                    state.source
                ),
            ),
        },
        "/report" if !state.report => response(
            StatusCode::NOT_FOUND,
            TEXT,
            "/report is turned off (serve --no-report); /metrics, /healthz and /readyz answer\n"
                .into(),
        ),
        "/report" => match frame {
            Some(f) => response(
                StatusCode::OK,
                "application/json",
                crate::cli::output::json(&f.report),
            ),
            None => response(
                StatusCode::SERVICE_UNAVAILABLE,
                "application/json",
                serde_json::json!({"error": "not ready: the first complete sync has not finished"})
                    .to_string(),
            ),
        },
        "/" => response(
            StatusCode::OK,
            TEXT,
            "restorewatch serve: /metrics /healthz /readyz /report\n".into(),
        ),
        _ => response(
            StatusCode::NOT_FOUND,
            TEXT,
            format!("no such endpoint: {path}\n"),
        ),
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
