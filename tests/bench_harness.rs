//! The benchmark harness end to end at a tiny size: the emulator and the measured pipeline start
//! as child processes, the first frame is drawn, writes reach the screen, and every figure is
//! reported, for every generated shape and against an existing cluster (the emulator started as
//! its own `sim serve`). Timings are printed, never asserted (they depend on the machine).

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Output, Stdio};

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_restorewatch-bench"))
        .args(args)
        .output()
        .expect("running restorewatch-bench")
}

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("bench json")).expect("json")
}

#[test]
fn bench_runs_every_shape_end_to_end_at_a_tiny_size() {
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("bench.json");
    let table = dir.path().join("bench.md");
    let out = bench(&[
        "--shapes",
        "default,no-backup,dense-namespaces,many-events",
        "--sizes",
        "400",
        "--idle-secs",
        "1",
        "--writes",
        "10",
        "--no-kubectl",
        "--json",
        json.to_str().unwrap(),
        "--out",
        table.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bench failed: {stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    // One column per shape, in the order asked, in the figures and in the targets.
    assert!(
        stdout.contains(
            "| shape / N | default 400 | no-backup 400 | dense-namespaces 400 | many-events 400 |"
        ),
        "{stdout}"
    );
    assert!(stdout.contains(
        "| target | default 400 | no-backup 400 | dense-namespaces 400 | many-events 400 |"
    ));
    for row in [
        "first complete report on screen",
        "  of which until the pipeline published it",
        "pipeline work for one changed PVC",
        "| peak RSS at most 48 MiB |",
        "| serve: peak RSS at most 48 MiB |",
        "serve: write -> published report",
        "| analysis of one change under 1 ms (p50) |",
        "| no LIST after sync | met (0 LIST)",
        "serve: idle CPU",
    ] {
        assert!(stdout.contains(row), "{row}: {stdout}");
    }
    assert_eq!(
        std::fs::read_to_string(&table).unwrap().trim(),
        stdout.trim()
    );

    // The same table again from the JSON alone (how separate runs are put side by side).
    let again = bench(&["--render-json", json.to_str().unwrap()]);
    assert!(again.status.success());
    assert_eq!(String::from_utf8_lossy(&again.stdout).trim(), stdout.trim());

    let v = read_json(&json);
    let runs = v.as_array().expect("one result per run");
    let shapes: Vec<&str> = runs.iter().map(|r| r["shape"].as_str().unwrap()).collect();
    assert_eq!(
        shapes,
        ["default", "no-backup", "dense-namespaces", "many-events"]
    );
    for r in runs {
        assert_eq!(r["objects"], 400, "{r}");
        let rw = &r["restorewatch"];
        // The whole cluster but the events the field selector leaves on the server.
        assert!(rw["held_objects"].as_u64().unwrap() >= 300, "{r}");
        assert!(rw["restores"].as_u64().unwrap() >= 2, "{r}");
        // Every write reached a drawn frame (the timeout is 10 s per write, far above any delay).
        assert_eq!(rw["writes_seen"], 10, "{r}");
        assert_eq!(rw["writes_lost"], 0);
        assert!(rw["peak_rss"].as_u64().unwrap() > 0);
        // The pipeline published the first report no later than the draw loop drew it.
        let published = rw["first_published_s"].as_f64().unwrap();
        assert!(published > 0.0, "{r}");
        assert!(published <= rw["first_report_s"].as_f64().unwrap(), "{r}");
        // The per-change analysis was timed on changed PVCs.
        assert_eq!(rw["change_samples"], 30, "{r}");
        // No relist after the initial sync: counted by the emulator, not claimed by the client.
        assert_eq!(rw["lists_after_sync"], 0);
        assert!(r["kubectl"].is_null());
        // `serve` measured on the same cluster: it reported and answered a scrape.
        let serve = &r["serve"];
        assert!(serve["first_report_s"].as_f64().unwrap() > 0.0, "{serve}");
        assert!(serve["scrape_bytes"].as_u64().unwrap() > 100, "{serve}");
        // ... and the dashboard's figures: memory per object held, every write published,
        // no relist after sync.
        assert!(serve["held_objects"].as_u64().unwrap() >= 300, "{serve}");
        assert!(serve["baseline_rss"].as_u64().unwrap() > 0, "{serve}");
        assert_eq!(serve["writes_seen"], 10, "{serve}");
        assert_eq!(serve["lists_after_sync"], 0, "{serve}");
    }
    // The worst shape holds what it says: all its restores, 200-odd disks in each namespace.
    assert_eq!(runs[2]["restores"], 2);
    assert!(runs[2]["pvcs"].as_u64().unwrap() >= 190);
}

/// With kubectl, the dashboard's writes are timed a second time with `kubectl get pvc -A -w`
/// running beside it: each write both saw is one pair, and the table says how much later than
/// kubectl's line the dashboard drew it.
#[test]
fn bench_times_the_same_writes_with_kubectl_beside() {
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("bench.json");
    let out = bench(&[
        "--shapes",
        "default",
        "--sizes",
        "300",
        "--idle-secs",
        "1",
        "--writes",
        "8",
        "--json",
        json.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bench failed: {stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    let v = read_json(&json);
    let r = &v[0];
    // kubectl's own series, and the dashboard's, as before.
    assert_eq!(r["kubectl"]["watch_seen"], 8, "{r}");
    assert_eq!(r["restorewatch"]["writes_seen"], 8, "{r}");
    // The paired series: every write printed by kubectl and drawn by the dashboard.
    let p = &r["restorewatch"]["paired"];
    assert_eq!(p["seen"], 8, "{p}");
    for k in ["kubectl_p50_ms", "shown_p50_ms"] {
        assert!(p[k].as_f64().unwrap() > 0.0, "{k}: {p}");
    }
    assert!(p["later_p99_ms"].as_f64().unwrap() >= p["later_p50_ms"].as_f64().unwrap());
    // Each reader's three slowest writes, slowest first, with what their time held: the
    // reader's threads' time on a core is read wherever the kernel keeps it.
    let schedstat = std::fs::read_to_string("/proc/self/schedstat").is_ok();
    for held in [
        &r["restorewatch"]["write_held"],
        &r["serve"]["write_held"],
        &r["kubectl"]["watch_held"],
    ] {
        let slowest = held["slowest"].as_array().expect("slowest writes");
        assert_eq!(slowest.len(), 3, "{held}");
        let ms: Vec<f64> = slowest.iter().map(|w| w["ms"].as_f64().unwrap()).collect();
        assert!(ms.windows(2).all(|w| w[0] >= w[1]), "{held}");
        if schedstat {
            assert!(slowest.iter().all(|w| w["ran_ms"].is_number()), "{held}");
            assert!(held["median"]["waited_ms"].is_number(), "{held}");
        }
    }
    assert!(
        stdout.contains("| slowest writes, ms (the reader's threads:"),
        "{stdout}"
    );
    for row in [
        "| same writes with kubectl -w beside: kubectl / dashboard p50 / p99 |",
        "|   the dashboard after kubectl's line, write by write, p50 / p99 |",
    ] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(row))
            .unwrap_or_else(|| panic!("{row}: {stdout}"));
        assert!(
            line.ends_with(" ms (8) |") || line.ends_with(" ms |"),
            "{line}"
        );
    }
}

/// A dump (here one the bench wrote, with an unrelated kind added) is a shape of its own: served
/// as it is, counted, a column in the table, every timed write seen on its PVCs.
#[test]
fn bench_takes_a_dump_as_a_shape() {
    let dir = tempfile::tempdir().expect("temp dir");
    let dump = dir.path().join("real-like.json");
    let out = bench(&["--sizes", "300", "--write-dump", dump.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut list = read_json(&dump);
    let items = list["items"].as_array_mut().expect("items");
    let pvcs = items
        .iter()
        .filter(|o| o["kind"] == "PersistentVolumeClaim")
        .count();
    items.push(serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "unrelated", "namespace": "default"}}));
    let total = items.len();
    std::fs::write(&dump, serde_json::to_vec(&list).unwrap()).unwrap();
    let json = dir.path().join("bench.json");
    let shape = format!("dump:{}", dump.display());
    let out = bench(&[
        "--shapes",
        &shape,
        "--idle-secs",
        "1",
        "--writes",
        "5",
        "--no-kubectl",
        "--json",
        json.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bench failed: {stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("| shape / N | dump:real-like.json {total} |")),
        "{stdout}"
    );
    let v = read_json(&json);
    let run = &v[0];
    assert_eq!(run["objects"], total);
    assert_eq!(run["pvcs"], pvcs);
    assert_eq!(run["restorewatch"]["writes_seen"], 5, "{run}");
    assert_eq!(run["restorewatch"]["writes_lost"], 0);
    // The dump is the user's file: read, never removed.
    assert!(dump.exists());

    // A shape that is neither a generated one nor a dump is refused with the choices.
    let bad = bench(&["--shapes", "huge", "--no-kubectl"]);
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("dump:PATH"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

/// `restorewatch sim serve` in its own process, killed when dropped.
struct Emulator {
    child: Child,
    addr: String,
    kubeconfig: std::path::PathBuf,
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn emulator(dir: &std::path::Path, extra: &[&str]) -> Emulator {
    let dump = dir.join("cluster.json");
    let out = bench(&["--sizes", "300", "--write-dump", dump.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kubeconfig = dir.join("sim.kubeconfig");
    let mut child = Command::new(env!("CARGO_BIN_EXE_restorewatch"))
        .args(["sim", "serve", "--load"])
        .arg(&dump)
        .arg("--write-kubeconfig")
        .arg(&kubeconfig)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting sim serve");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut url = None;
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(u) = line.strip_prefix("restorewatch sim serving on ") {
            url = Some(u.trim().to_string());
        }
        if line.starts_with("kubeconfig written to") {
            break;
        }
    }
    std::thread::spawn(move || for _ in lines {});
    let url = url.expect("the emulator's URL");
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    Emulator {
        child,
        addr,
        kubeconfig,
    }
}

/// The emulator's request counters (`GET /metrics`).
fn counts(addr: &str) -> Value {
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    write!(s, "GET /metrics HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let body = text.split("\r\n\r\n").nth(1).expect("a body");
    serde_json::from_str(body).expect("metrics JSON")
}

fn scratch_pvcs(em: &Emulator) -> String {
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&em.kubeconfig)
        .args([
            "get",
            "pvc",
            "-A",
            "-l",
            "bench.restorewatch.io/scratch",
            "-o",
            "name",
        ])
        .output()
        .expect("kubectl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn bench_measures_an_existing_cluster_read_only_unless_given_a_namespace() {
    let dir = tempfile::tempdir().expect("temp dir");
    let em = emulator(dir.path(), &[]);
    let kc = em.kubeconfig.to_str().unwrap().to_string();
    let json = dir.path().join("ro.json");

    // Read-only: the server counts no write at all, from the worker, serve or kubectl.
    let writes_before = counts(&em.addr)["write"].as_u64().unwrap();
    let out = bench(&[
        "--kubeconfig",
        &kc,
        "--idle-secs",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        stdout.contains("| shape / N | existing cluster |"),
        "{stdout}"
    );
    assert_eq!(counts(&em.addr)["write"].as_u64().unwrap(), writes_before);
    let r = &read_json(&json)[0];
    let rw = &r["restorewatch"];
    assert!(rw["held_objects"].as_u64().unwrap() >= 250, "{r}");
    assert_eq!(rw["writes_seen"], 0);
    assert_eq!(rw["writes_lost"], 0);
    // The emulator exposes its counters, so LIST after sync is measured here.
    assert_eq!(rw["lists_after_sync"], 0, "{r}");
    // kubectl listed the same server, and watched nothing (nothing was written).
    assert!(r["kubectl"]["list_s"].as_f64().unwrap() > 0.0, "{r}");
    assert!(r["kubectl"]["watch_p99_ms"].is_null(), "{r}");
    assert!(rw["paired"].is_null(), "{r}");
    assert!(r["serve"]["scrape_bytes"].as_u64().unwrap() > 100);

    // With a namespace: writes on its own scratch PVC, timed for restorewatch and kubectl -w,
    // and the PVC is gone afterwards.
    let json = dir.path().join("rw.json");
    let out = bench(&[
        "--kubeconfig",
        &kc,
        "--idle-secs",
        "1",
        "--writes",
        "5",
        "--writes-namespace",
        "tenant-00000",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{}", String::from_utf8_lossy(&out.stdout));
    let r = &read_json(&json)[0];
    assert_eq!(r["restorewatch"]["writes_seen"], 5, "{r}");
    assert_eq!(r["kubectl"]["watch_seen"], 5, "{r}");
    // ... and once more with kubectl watching the scratch PVC beside the dashboard.
    assert_eq!(r["restorewatch"]["paired"]["seen"], 5, "{r}");
    assert!(counts(&em.addr)["write"].as_u64().unwrap() >= writes_before + 12);
    assert_eq!(scratch_pvcs(&em), "");

    // After an error (a namespace the emulator refuses to create in), nothing is left behind
    // and the error reaches the user.
    let out = bench(&[
        "--kubeconfig",
        &kc,
        "--idle-secs",
        "1",
        "--writes-namespace",
        "Not_A_Namespace",
    ]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("scratch PVC"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(scratch_pvcs(&em), "");
}

#[test]
fn bench_deletes_its_scratch_pvc_when_a_write_fails_after_creating_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The bench's token may create and delete PVCs but not patch them: its first timed write
    // fails with the scratch PVC already made. kubectl (no token over http) reads anonymously.
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "user: bench\nrules:\n  - verbs: [get, list, watch]\n  - verbs: [create, delete]\n    resources: [pvc]\n",
    )
    .unwrap();
    let token = format!("bench-token={}", policy.display());
    let em = emulator(dir.path(), &["--token", &token, "--anonymous", "readonly"]);
    let out = bench(&[
        "--kubeconfig",
        em.kubeconfig.to_str().unwrap(),
        "--idle-secs",
        "1",
        "--writes",
        "3",
        "--no-kubectl",
        "--writes-namespace",
        "tenant-00000",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stderr}");
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("created scratch PVC"), "{stderr}");
    assert!(stderr.contains("deleted scratch PVC"), "{stderr}");
    assert_eq!(scratch_pvcs(&em), "");
}
