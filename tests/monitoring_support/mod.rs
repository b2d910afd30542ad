//! What the tests that put `restorewatch serve` under a real monitoring stack share: child
//! processes that die with the test, plain HTTP, waiting without timing assertions, `serve`
//! itself on the emulator, and the query API that Prometheus and VictoriaMetrics both answer.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use restorewatch::sim::{Scenario, Sim, SimConfig, SimHandle};
use serde_json::Value;

/// Upper bound of any one wait (a daemon's start, a scrape, an alert evaluation, a
/// notification). Generous: these machines are shared, and a bound is not a timing assertion.
pub const WAIT: Duration = Duration::from_secs(120);

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

/// The test fails, not skips, when a tool of the monitoring stack is missing.
pub fn require(binary: &str, package: &str) {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {binary}")])
        .output()
        .expect("sh");
    assert!(
        found.status.success(),
        "{binary} is required for this test (Debian: apt-get install {package}; .ci/run installs it)"
    );
}

/// A GET over plain HTTP/1.0: enough for the monitoring APIs and our own endpoints.
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

/// Percent-encoding of a query parameter.
pub fn encode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// `/api/v1/query` of Prometheus or VictoriaMetrics: the result vector, empty on any error.
pub fn instant_query(server: &str, q: &str) -> Vec<Value> {
    let Some((200, body)) = get(server, &format!("/api/v1/query?query={}", encode(q))) else {
        return Vec::new();
    };
    let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    v.pointer("/data/result")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

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

/// A daemon with its output in `<dir>/<name>.log` (read it when a test fails).
pub fn spawn_logged(dir: &Path, name: &str, cmd: &mut Command) -> Killed {
    let log = std::fs::File::create(dir.join(format!("{name}.log"))).expect("log");
    let err = log.try_clone().expect("log");
    Killed(
        cmd.stdout(Stdio::from(log))
            .stderr(Stdio::from(err))
            .spawn()
            .unwrap_or_else(|e| panic!("{name} starts: {e}")),
    )
}

/// `restorewatch serve --listen 127.0.0.1:0 [extra]`; the bound address comes from its first
/// line.
pub fn start_serve(kubeconfig: &Path, extra: &[&str]) -> (Killed, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_restorewatch"))
        .args(["serve", "--listen", "127.0.0.1:0", "--kubeconfig"])
        .arg(kubeconfig)
        .args(extra)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("serve starts");
    let stderr = child.stderr.take().expect("stderr");
    let mut reader = BufReader::new(stderr);
    let mut line = String::new();
    reader.read_line(&mut line).expect("first line");
    // Keep reading: a full pipe would block the server's logging.
    std::thread::spawn(move || {
        let mut rest = String::new();
        while reader.read_line(&mut rest).map(|n| n > 0).unwrap_or(false) {
            eprint!("serve: {rest}");
            rest.clear();
        }
    });
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    (Killed(child), addr)
}

pub async fn sim_with(scenarios: &[&str], speed: f64) -> SimHandle {
    let sim = Sim::start(SimConfig::default()).await.expect("emulator");
    for s in scenarios {
        let _run = sim.play(Scenario::load(s).expect("scenario"), speed);
    }
    sim
}

/// Runs `cmd`, which must exist (`missing` says how to get it) and succeed.
pub fn succeed(cmd: &mut Command, missing: &str) -> std::process::Output {
    let out = cmd.output().expect(missing);
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `restorewatch action <args> --yes --kubeconfig <kc>`, which must succeed.
pub fn run_action(kubeconfig: &Path, state: &Path, args: &[&str]) {
    succeed(
        Command::new(env!("CARGO_BIN_EXE_restorewatch"))
            .arg("action")
            .args(args)
            .args(["--yes", "--kubeconfig"])
            .arg(kubeconfig)
            .env("XDG_STATE_HOME", state),
        "action runs",
    );
}

/// The strings of a YAML/JSON list (what is not a string is left out).
pub fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// `kubectl kustomize deploy/kubernetes/<variant>`: what `kubectl apply -k` would send.
pub fn render(variant: &str) -> Vec<Value> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/kubernetes");
    let out = succeed(
        Command::new("kubectl")
            .arg("kustomize")
            .arg(dir.join(variant)),
        "kubectl is required (it renders the kustomizations)",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    serde_saphyr::from_multiple::<Value>(&text).expect("kustomize prints YAML")
}

pub fn one<'a>(docs: &'a [Value], kind: &str) -> &'a Value {
    let found: Vec<&Value> = docs.iter().filter(|d| d["kind"] == kind).collect();
    assert_eq!(found.len(), 1, "exactly one {kind}");
    found[0]
}
