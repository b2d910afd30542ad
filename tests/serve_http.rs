//! `serve`'s HTTP side against hostile or careless clients, in process over real sockets: what
//! it echoes is safe to print, clients that never read cannot multiply its memory or hold it
//! forever, and connections are bounded.

mod common;

use restorewatch::analysis::{Code, Finding, ObjRef, Report, RestoreId, Severity};
use restorewatch::cluster::Snapshot;
use restorewatch::model::Kind;
use restorewatch::pipeline::Frame;
use restorewatch::serve::http::{self, Limits, State};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

async fn start(state: Arc<State>) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(http::serve(listener, state));
    addr
}

fn state(frame: Option<Arc<Frame>>, limits: Limits) -> Arc<State> {
    let (tx, frames) = tokio::sync::watch::channel(frame);
    // The sender may go: the receiver keeps the last frame.
    drop(tx);
    Arc::new(State::new(
        frames,
        "docs/findings.md".into(),
        "test".into(),
        limits,
    ))
}

fn empty_state() -> Arc<State> {
    state(None, Limits::default())
}

/// A frame whose report is tens of megabytes: far more than the sockets' buffers hold, so a
/// client that does not read keeps the server's write waiting.
fn big_frame() -> Arc<Frame> {
    let message = "m".repeat(1500);
    let findings = (0..20_000)
        .map(|i| {
            Arc::new(Finding {
                code: Code::RenameHalfDone,
                severity: Severity::Error,
                restore: Some(RestoreId {
                    namespace: "tenant-a".into(),
                    name: format!("restore-{i}"),
                }),
                objects: vec![ObjRef::new(
                    Kind::PersistentVolumeClaim,
                    "tenant-a",
                    format!("vm-disk-{i}"),
                )],
                message: message.clone(),
                remedy: "resume-rename".into(),
                action: None,
                stale: false,
            })
        })
        .collect::<restorewatch::analysis::FindingList>()
        .into();
    Arc::new(Frame {
        seq: 1,
        snapshot: Arc::new(Snapshot::default()),
        report: Arc::new(Report {
            findings,
            ..Report::default()
        }),
        analyzed_at: jiff::Timestamp::now(),
    })
}

/// A server holding `big_frame`, with these limits.
async fn big_server(max_connections: usize, write_timeout: Duration) -> (Arc<State>, SocketAddr) {
    let state = state(
        Some(big_frame()),
        Limits {
            max_connections,
            write_timeout,
        },
    );
    (state.clone(), start(state).await)
}

/// A client that asks for `path` over a kept-alive connection, reads the status line (so the
/// request was answered) and then nothing more.
fn non_reading_client(addr: SocketAddr, path: &str) -> (TcpStream, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").expect("write");
    let mut status = [0u8; 12];
    s.read_exact(&mut status).expect("a status line");
    (s, String::from_utf8_lossy(&status).into_owned())
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Waits (at most a minute) for the server to hold `n` connections.
async fn wait_open(state: &State, n: usize) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while state.open_connections() != n {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} connections open, waiting for {n}",
            state.open_connections()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Sends raw request bytes and reads the whole answer (HTTP/1.0: the server closes).
fn exchange(addr: std::net::SocketAddr, request: &[u8]) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    s.write_all(request).expect("write");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read");
    raw
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_404_does_not_echo_control_characters_of_the_path() {
    let addr = start(empty_state()).await;
    // U+009B (CSI) in UTF-8, then the rest of an SGR sequence, and an ESC percent-decoded by
    // nobody: a terminal showing this body raw would act on the first.
    let raw = tokio::task::spawn_blocking(move || {
        exchange(addr, b"GET /x\xc2\x9b31mred HTTP/1.0\r\n\r\n")
    })
    .await
    .expect("join");
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").expect("a response");
    assert!(head.contains(" 404 "), "{head}");
    assert!(
        !body
            .trim_end_matches('\n')
            .chars()
            .any(restorewatch::text::is_terminal_control),
        "no raw control character: {body:?}"
    );
    assert!(body.contains("\\x9b31mred"), "shown escaped: {body:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forty_clients_that_never_read_share_one_report_body() {
    let (state, addr) = big_server(64, Duration::from_secs(600)).await;
    let rss_before = rss_kib();
    let (clients, full) = tokio::task::spawn_blocking(move || {
        let clients: Vec<(TcpStream, String)> = (0..40)
            .map(|_| non_reading_client(addr, "/report"))
            .collect();
        let full = exchange(addr, b"GET /report HTTP/1.0\r\n\r\n");
        (clients, full)
    })
    .await
    .expect("join");
    assert!(clients.iter().all(|(_, status)| status == "HTTP/1.1 200"));
    let text = String::from_utf8_lossy(&full);
    let (_, body) = text.split_once("\r\n\r\n").expect("a response");
    assert!(
        body.len() > 20 << 20,
        "a large report: {} bytes",
        body.len()
    );
    eprintln!(
        "41 requests of a {} MiB report: {} MiB built, RSS {} -> {} MiB",
        body.len() >> 20,
        state.bodies.bytes_built() >> 20,
        rss_before >> 10,
        rss_kib() >> 10
    );
    assert_eq!(
        state.bodies.bytes_built(),
        body.len() as u64,
        "one body built for 41 requests of one frame"
    );
    drop(clients);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_is_dropped_after_the_write_timeout() {
    let (state, addr) = big_server(4, Duration::from_secs(1)).await;
    let (mut client, status) =
        tokio::task::spawn_blocking(move || non_reading_client(addr, "/report"))
            .await
            .expect("join");
    assert_eq!(status, "HTTP/1.1 200");
    wait_open(&state, 0).await;
    // What it can still read is what the sockets had buffered: not the whole answer.
    let got = tokio::task::spawn_blocking(move || {
        let mut rest = Vec::new();
        let _ = client.read_to_end(&mut rest);
        rest.len()
    })
    .await
    .expect("join");
    assert!(got < 20 << 20, "cut short: {got} bytes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_past_the_limit_get_a_503_until_one_ends() {
    let (state, addr) = big_server(4, Duration::from_secs(600)).await;
    let clients = tokio::task::spawn_blocking(move || {
        (0..4)
            .map(|_| non_reading_client(addr, "/report").0)
            .collect::<Vec<_>>()
    })
    .await
    .expect("join");
    wait_open(&state, 4).await;
    let busy =
        tokio::task::spawn_blocking(move || exchange(addr, b"GET /healthz HTTP/1.0\r\n\r\n"))
            .await
            .expect("join");
    let busy = String::from_utf8_lossy(&busy).into_owned();
    assert!(
        busy.starts_with("HTTP/1.1 503") && busy.contains("busy: 4 connections open"),
        "{busy}"
    );
    drop(clients);
    wait_open(&state, 0).await;
    let ok = tokio::task::spawn_blocking(move || exchange(addr, b"GET /healthz HTTP/1.0\r\n\r\n"))
        .await
        .expect("join");
    assert!(String::from_utf8_lossy(&ok).starts_with("HTTP/1.0 200"));
}
