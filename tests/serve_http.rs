//! `serve`'s HTTP side against hostile or careless clients, in process over real sockets: what
//! it echoes is safe to print, clients that never read cannot multiply its memory or hold it
//! forever, and connections are bounded.

use restorewatch::serve::http::{self, State};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

async fn start(state: State) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(http::serve(listener, Arc::new(state)));
    addr
}

fn empty_state() -> State {
    let (_tx, frames) = tokio::sync::watch::channel(None);
    State {
        frames,
        docs_base: "docs/findings.md".into(),
        source: "test".into(),
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
