//! `restorewatch serve` as a process, and a plain HTTP GET to read its endpoints.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A child process killed (and reaped) when the test ends, however it ends.
pub struct Killed(pub Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A GET over plain HTTP/1.0: the status code and the body.
pub fn get(addr: &str, path_and_query: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(s, "GET {path_and_query} HTTP/1.0\r\nHost: {addr}\r\n\r\n").ok()?;
    let mut raw = String::new();
    s.read_to_string(&mut raw).ok()?;
    let (head, body) = raw.split_once("\r\n\r\n")?;
    let code = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((code, body.to_string()))
}

/// A running `restorewatch serve --listen 127.0.0.1:0`: its address (from its `listening on` line) and
/// everything it wrote to stderr so far.
pub struct Serve {
    pub child: Killed,
    pub addr: String,
    pub stderr: Arc<Mutex<String>>,
}

pub fn start_serve(kubeconfig: &Path, extra: &[&str], env: &[(&str, &Path)]) -> Serve {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_restorewatch"));
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--kubeconfig"])
        .arg(kubeconfig)
        .args(extra)
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("serve starts");
    let stderr = child.stderr.take().expect("stderr");
    let mut reader = BufReader::new(stderr);
    let mut before = String::new();
    let first = loop {
        let mut line = String::new();
        let n = reader.read_line(&mut line).expect("stderr readable");
        assert!(n > 0, "serve ended before listening:\n{before}");
        before.push_str(&line);
        if line.contains("listening on http://") {
            break line;
        }
    };
    let all = Arc::new(Mutex::new(before));
    let sink = all.clone();
    // Keep reading: a full pipe would block the server's logging.
    std::thread::spawn(move || {
        let mut line = String::new();
        while reader.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
            if let Ok(mut a) = sink.lock() {
                a.push_str(&line);
            }
            line.clear();
        }
    });
    let addr = first
        .split("http://")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .to_string();
    Serve {
        child: Killed(child),
        addr,
        stderr: all,
    }
}
