//! `restorewatch serve` as a process, and the plain HTTP that talks to it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Upper bound of any one wait (a start, a scrape, an alert evaluation, a watch going down).
pub const WAIT: Duration = Duration::from_secs(60);

/// A child process killed when dropped, so that a failed assertion leaves nothing running.
pub struct Killed(pub Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// A GET over plain HTTP/1.0: enough for Prometheus's API and our own endpoints.
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

/// Polls `f` every 250 ms until it gives a value, for at most `WAIT`.
pub fn wait_until<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(start.elapsed() < WAIT, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// `restorewatch serve --listen 127.0.0.1:0 --kubeconfig KC ARGS...`, its stderr (where it
/// logs) written to `log`, at level `rust_log` (`None`: the default). The bound address comes
/// from the log's first line.
pub fn start_serve(
    kubeconfig: &Path,
    args: &[&str],
    log: &Path,
    rust_log: Option<&str>,
) -> (Killed, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_restorewatch"));
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--kubeconfig"])
        .arg(kubeconfig)
        .args(args)
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::from(std::fs::File::create(log).expect("log file")));
    if let Some(level) = rust_log {
        cmd.env("RUST_LOG", level);
    }
    let child = Killed(cmd.spawn().expect("serve starts"));
    let addr = wait_until("serve's address in its log", || {
        let text = std::fs::read_to_string(log).ok()?;
        let line = text.lines().find(|l| l.contains("listening on http://"))?;
        line.split("http://")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .map(str::to_string)
    });
    (child, addr)
}
