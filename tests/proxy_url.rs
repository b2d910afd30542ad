//! A kubeconfig's `proxy-url`, as kubectl reads it: `check` reaches the emulator through a
//! local HTTP CONNECT proxy (with a password) and a local SOCKS5 proxy (both written here), the
//! proxy sees the connection, and the proxy's password is printed nowhere. A SOCKS5 proxy with a
//! password is refused with a clear message: kube-rs cannot send it.

use restorewatch::sim::{Sim, SimConfig};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const PROXY_PW: &str = "PROXY-PW-secret";

/// What a proxy was asked for: `CONNECT host:port` lines, or `socks5 user host:port`.
type Seen = Arc<Mutex<Vec<String>>>;

/// A proxy on a free port: each connection is handed to `session` with the log.
async fn proxy<F, Fut>(session: F) -> (String, Seen)
where
    F: Fn(TcpStream, Seen) -> Fut + Send + Copy + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let seen: Seen = Arc::default();
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            tokio::spawn(session(client, log.clone()));
        }
    });
    (addr, seen)
}

/// An HTTP proxy: answers CONNECT, then relays bytes both ways.
async fn http_connect_session(mut client: TcpStream, log: Seen) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if client.read_exact(&mut byte).await.is_err() {
            return;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_string();
    let target = head
        .strip_prefix("CONNECT ")
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or("")
        .to_string();
    let authorized = head
        .to_ascii_lowercase()
        .contains("proxy-authorization: basic");
    log.lock()
        .unwrap()
        .push(format!("CONNECT {target} auth={authorized}"));
    let Ok(mut upstream) = TcpStream::connect(&target).await else {
        let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\n\r\n").await;
        return;
    };
    let _ = client
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .await;
    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
}

/// A SOCKS5 proxy (RFC 1928, with RFC 1929 user/password when offered) that relays bytes.
async fn socks5_session_logged(mut c: TcpStream, log: Seen) {
    let _ = socks5_session(&mut c, &log).await;
}

async fn socks5_session(c: &mut TcpStream, log: &Seen) -> std::io::Result<()> {
    let mut hello = [0u8; 2];
    c.read_exact(&mut hello).await?;
    let mut methods = vec![0u8; usize::from(hello[1])];
    c.read_exact(&mut methods).await?;
    let mut user = String::from("-");
    if methods.contains(&2) {
        c.write_all(&[5, 2]).await?;
        let mut ver_len = [0u8; 2];
        c.read_exact(&mut ver_len).await?;
        let mut name = vec![0u8; usize::from(ver_len[1])];
        c.read_exact(&mut name).await?;
        let mut plen = [0u8; 1];
        c.read_exact(&mut plen).await?;
        let mut pass = vec![0u8; usize::from(plen[0])];
        c.read_exact(&mut pass).await?;
        let ok = pass == PROXY_PW.as_bytes();
        c.write_all(&[1, if ok { 0 } else { 1 }]).await?;
        if !ok {
            return Ok(());
        }
        user = String::from_utf8_lossy(&name).to_string();
    } else {
        c.write_all(&[5, 0]).await?;
    }
    let mut req = [0u8; 4];
    c.read_exact(&mut req).await?;
    let host = match req[3] {
        1 => {
            let mut ip = [0u8; 4];
            c.read_exact(&mut ip).await?;
            std::net::Ipv4Addr::from(ip).to_string()
        }
        3 => {
            let mut len = [0u8; 1];
            c.read_exact(&mut len).await?;
            let mut name = vec![0u8; usize::from(len[0])];
            c.read_exact(&mut name).await?;
            String::from_utf8_lossy(&name).to_string()
        }
        _ => return Ok(()),
    };
    let mut port = [0u8; 2];
    c.read_exact(&mut port).await?;
    let target = format!("{host}:{}", u16::from_be_bytes(port));
    log.lock().unwrap().push(format!("socks5 {user} {target}"));
    let mut upstream = TcpStream::connect(&target).await?;
    c.write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0]).await?;
    tokio::io::copy_bidirectional(c, &mut upstream).await?;
    Ok(())
}

/// `check` with a kubeconfig for `server` through `proxy`.
async fn check_through(server: &str, proxy: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let q = |s: &str| serde_json::Value::String(s.to_string()).to_string();
    let kc = dir.path().join("kubeconfig");
    std::fs::write(
        &kc,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n    proxy-url: {}\n\
             users:\n- name: u\n  user: {{}}\ncontexts:\n- name: ctx\n  context:\n    cluster: c\n    user: u\n\
             current-context: ctx\n",
            q(server),
            q(proxy)
        ),
    )
    .unwrap();
    let state = dir.path().join("state");
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_restorewatch"))
            .args([
                "check",
                "--fail-on",
                "never",
                "--request-timeout",
                "10s",
                "--kubeconfig",
            ])
            .arg(&kc)
            .env("XDG_STATE_HOME", &state)
            .env("RUST_LOG", "debug")
            .output()
            .expect("restorewatch runs")
    })
    .await
    .unwrap()
}

fn said(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_works_through_an_http_connect_proxy_with_a_password_and_a_socks5_proxy() {
    let sim = Sim::start(SimConfig::default()).await.unwrap();
    let target = sim.url().trim_start_matches("http://").to_string();
    let (http, http_seen) = proxy(http_connect_session).await;
    let (socks, socks_seen) = proxy(socks5_session_logged).await;
    for (proxy, seen, want) in [
        (
            format!("http://me:{PROXY_PW}@{http}"),
            http_seen,
            format!("CONNECT {target} auth=true"),
        ),
        (
            format!("socks5://{socks}"),
            socks_seen,
            format!("socks5 - {target}"),
        ),
    ] {
        let out = check_through(&sim.url(), &proxy).await;
        let text = said(&out);
        assert_eq!(out.status.code(), Some(0), "{proxy}: {text}");
        assert!(!text.contains(PROXY_PW), "{text}");
        let seen = seen.lock().unwrap().clone();
        assert!(seen.contains(&want), "{proxy}: {seen:?}");
    }
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxy_that_refuses_or_is_unsupported_is_named_without_its_password() {
    let sim = Sim::start(SimConfig::default()).await.unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    for proxy in [
        format!("http://me:{PROXY_PW}@127.0.0.1:{port}"),
        format!("ftp://me:{PROXY_PW}@127.0.0.1:{port}"),
        format!("socks5://me:{PROXY_PW}@127.0.0.1:{port}"),
    ] {
        let out = check_through(&sim.url(), &proxy).await;
        let text = said(&out);
        assert_eq!(out.status.code(), Some(2), "{text}");
        assert!(!text.contains(PROXY_PW), "{proxy}: {text}");
        assert!(
            text.contains(&format!("127.0.0.1:{port}")),
            "names the proxy: {text}"
        );
    }
    sim.shutdown().await;
}
