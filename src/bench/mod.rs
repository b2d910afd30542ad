//! `restorewatch bench`: what the live dashboard costs on a large cluster, next to kubectl.
//!
//! For each size N the orchestrator (this process) generates a cluster of N objects, starts the
//! emulator in a child process (`sim` role), times `kubectl get pvc,pv -A -o json` and
//! `kubectl get pvc -A -w` against it, and runs restorewatch's live pipeline plus the
//! dashboard's draw loop in another child (`worker` role, see `worker.rs`), so that the memory
//! and CPU read from `/proc/self` there are restorewatch's own. Requests are counted by the
//! emulator (`GET /metrics`). Children are this same executable, re-run with
//! `RESTOREWATCH_BENCH_ROLE` set, so the bench works as a subcommand or as its own binary.

pub mod r#gen;
pub mod serve_cost;
pub mod sys;
pub mod worker;

use anyhow::{Context, bail};
use clap::Args;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kube::api::{Api, Patch, PatchParams};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use worker::{WorkerConf, WorkerResult, percentile};

const ROLE_ENV: &str = "RESTOREWATCH_BENCH_ROLE";
const CONF_ENV: &str = "RESTOREWATCH_BENCH_CONF";
const RESULT_PREFIX: &str = "BENCH-RESULT ";

#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Cluster sizes to measure, in objects
    #[arg(long, value_delimiter = ',', default_value = "1000,20000,50000")]
    pub sizes: Vec<usize>,
    /// Seconds of idle (no changes) over which CPU is measured
    #[arg(long, default_value_t = 30)]
    pub idle_secs: u64,
    /// API writes timed from PATCH to redrawn frame (and to kubectl's printed line)
    #[arg(long, default_value_t = 200)]
    pub writes: usize,
    /// kubectl to compare with; the comparison is skipped when it cannot be run
    #[arg(long, default_value = "kubectl")]
    pub kubectl: String,
    /// Skip the kubectl comparison
    #[arg(long)]
    pub no_kubectl: bool,
    /// Also write the Markdown table to this file
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Also write every figure as JSON to this file
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Only write the generated cluster of the first size as a kubectl `List` (JSON) to FILE
    /// and exit: the input for timing `restorewatch check --snapshot FILE`
    #[arg(long, value_name = "FILE")]
    pub write_dump: Option<PathBuf>,
}

impl Default for BenchArgs {
    fn default() -> Self {
        BenchArgs {
            sizes: vec![1000, 20000, 50000],
            idle_secs: 30,
            writes: 200,
            kubectl: "kubectl".into(),
            no_kubectl: false,
            out: None,
            json: None,
            write_dump: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct SimConf {
    file: PathBuf,
    kubeconfig: PathBuf,
}

/// kubectl's figures for one size.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct KubectlResult {
    pub list_s: f64,
    /// Max RSS of `kubectl get pvc,pv -A -o json` (from `/usr/bin/time`), when measurable.
    pub list_rss: Option<u64>,
    pub watch_p50_ms: f64,
    pub watch_p99_ms: f64,
    pub watch_seen: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SizeResult {
    pub objects: usize,
    pub pvcs: usize,
    pub restores: usize,
    pub restorewatch: WorkerResult,
    pub kubectl: Option<KubectlResult>,
    /// `restorewatch serve` on the same cluster, in its own process.
    #[serde(default)]
    pub serve: Option<serve_cost::ServeResult>,
    pub load_before: String,
    pub load_after: String,
}

/// Entry point for the subcommand and the `restorewatch-bench` binary; the exit status.
pub async fn run(args: BenchArgs) -> anyhow::Result<i32> {
    match std::env::var(ROLE_ENV).as_deref() {
        Ok("sim") => return run_sim().await,
        Ok("serve") => {
            let conf: serve_cost::ServeConf = serde_json::from_str(&std::env::var(CONF_ENV)?)?;
            let r = serve_cost::run(conf).await?;
            println!("{RESULT_PREFIX}{}", serde_json::to_string(&r)?);
            return Ok(0);
        }
        Ok("worker") => {
            let conf: WorkerConf = serde_json::from_str(&std::env::var(CONF_ENV)?)?;
            let r = worker::run(conf).await?;
            println!("{RESULT_PREFIX}{}", serde_json::to_string(&r)?);
            return Ok(0);
        }
        _ => {}
    }
    if let Some(path) = &args.write_dump {
        let n = args.sizes.first().copied().unwrap_or(20_000);
        let world = r#gen::generate(n, jiff::Timestamp::now());
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": world.objects});
        std::fs::write(path, serde_json::to_vec(&list)?)?;
        println!("wrote {} objects to {}", n, path.display());
        return Ok(0);
    }
    let results = orchestrate(&args).await?;
    let table = render_table(&args, &results);
    println!("{table}");
    if let Some(p) = &args.out {
        std::fs::write(p, &table).with_context(|| format!("writing {}", p.display()))?;
    }
    if let Some(p) = &args.json {
        std::fs::write(p, serde_json::to_string_pretty(&results)?)
            .with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(0)
}

async fn run_sim() -> anyhow::Result<i32> {
    let conf: SimConf = serde_json::from_str(&std::env::var(CONF_ENV)?)?;
    let args = crate::sim::cli::ServeArgs {
        port: 0,
        scenarios: Vec::new(),
        loads: vec![conf.file],
        speed: 1.0,
        faults: None,
        write_kubeconfig: Some(conf.kubeconfig),
        tokens: Vec::new(),
        anonymous: None,
        // The emulator's stand-in for kube-controller-manager copies every PVC and PV once a
        // second and on every PVC/PV change (to release protection finalizers); a real API
        // server does no such work, and the bench deletes nothing, so it stays off.
        no_controller_manager: true,
        pv_resync: std::time::Duration::from_secs(15),
    };
    crate::sim::cli::run(crate::sim::cli::SimCommand::Serve(args)).await
}

/// This executable again, in another role: same arguments, the role in the environment.
fn child(role: &str, conf: &impl Serialize) -> anyhow::Result<Command> {
    let exe = std::env::current_exe().context("finding the running executable")?;
    let mut c = Command::new(exe);
    c.args(std::env::args_os().skip(1))
        .env(ROLE_ENV, role)
        .env(CONF_ENV, serde_json::to_string(conf)?)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    Ok(c)
}

/// Kills and reaps a child when dropped.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn orchestrate(args: &BenchArgs) -> anyhow::Result<Vec<SizeResult>> {
    let dir = tempfile_dir()?;
    let kubectl_ok = !args.no_kubectl
        && Command::new(&args.kubectl)
            .args(["version", "--client"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    if !args.no_kubectl && !kubectl_ok {
        eprintln!(
            "bench: {} cannot be run: no kubectl comparison",
            args.kubectl
        );
    }
    let mut out = Vec::new();
    for &n in &args.sizes {
        if n < 40 {
            bail!("--sizes: {n} is too small (at least 40 objects)");
        }
        eprintln!("bench: N={n}: generating");
        let world = r#gen::generate(n, Timestamp::now());
        let file = dir.join(format!("cluster-{n}.json"));
        {
            let f = std::fs::File::create(&file)?;
            let mut w = std::io::BufWriter::new(f);
            serde_json::to_writer(
                &mut w,
                &json!({"apiVersion": "v1", "kind": "List", "items": world.objects}),
            )?;
            w.flush()?;
        }
        let (pvcs, restores, targets) = (world.pvcs, world.restores, world.write_targets);
        let kubeconfig = dir.join(format!("sim-{n}.kubeconfig"));
        let mut sim = Reaped(
            child(
                "sim",
                &SimConf {
                    file: file.clone(),
                    kubeconfig: kubeconfig.clone(),
                },
            )?
            .spawn()
            .context("starting the emulator")?,
        );
        let url = wait_for_sim(&mut sim.0)?;
        eprintln!("bench: N={n}: emulator at {url}");
        let load_before = sys::load_average();
        let kubectl_list = if kubectl_ok {
            Some(kubectl_list(&args.kubectl, &kubeconfig)?)
        } else {
            None
        };
        eprintln!("bench: N={n}: restorewatch");
        let conf = WorkerConf {
            url: url.clone(),
            objects: n,
            idle_secs: args.idle_secs,
            writes: args.writes,
            // Writes cycle through the targets; the list travels in an environment variable
            // (128 KiB at most), so it is kept short.
            write_targets: targets
                .iter()
                .take(args.writes.clamp(1, 1000))
                .cloned()
                .collect(),
            width: 160,
            height: 48,
        };
        let rw = run_worker(&conf)?;
        eprintln!("bench: N={n}: restorewatch serve");
        let serve = run_child::<serve_cost::ServeResult>(
            "serve",
            &serve_cost::ServeConf {
                url: url.clone(),
                idle_secs: args.idle_secs,
            },
        )?;
        let kubectl = match kubectl_list {
            Some((list_s, list_rss)) => {
                eprintln!("bench: N={n}: kubectl -w");
                let (p50, p99, seen) = kubectl_watch(
                    &args.kubectl,
                    &kubeconfig,
                    &url,
                    pvcs,
                    &targets,
                    args.writes,
                )
                .await?;
                Some(KubectlResult {
                    list_s,
                    list_rss,
                    watch_p50_ms: p50,
                    watch_p99_ms: p99,
                    watch_seen: seen,
                })
            }
            None => None,
        };
        drop(sim);
        let _ = std::fs::remove_file(&file);
        out.push(SizeResult {
            objects: n,
            pvcs,
            restores,
            restorewatch: rw,
            kubectl,
            serve: Some(serve),
            load_before,
            load_after: sys::load_average(),
        });
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(out)
}

fn tempfile_dir() -> anyhow::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("restorewatch-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

/// Reads the emulator's stdout until it serves and has written the kubeconfig; the URL.
fn wait_for_sim(sim: &mut Child) -> anyhow::Result<String> {
    let stdout = sim.stdout.take().context("emulator stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let mut url = None;
    for line in lines.by_ref() {
        let line = line?;
        if let Some(u) = line.strip_prefix("restorewatch sim serving on ") {
            url = Some(u.trim().to_string());
        }
        if line.starts_with("kubeconfig written to") {
            break;
        }
    }
    // Keep draining so the emulator never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    url.context("the emulator exited before serving")
}

fn run_worker(conf: &WorkerConf) -> anyhow::Result<WorkerResult> {
    run_child("worker", conf)
}

/// Runs this executable in a measuring role and reads the result line it prints.
fn run_child<R: serde::de::DeserializeOwned>(
    role: &str,
    conf: &impl Serialize,
) -> anyhow::Result<R> {
    let out = child(role, conf)?
        .output()
        .context("running the measured process")?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(RESULT_PREFIX))
        .with_context(|| format!("the measured process gave no result ({})", out.status))?;
    Ok(serde_json::from_str(line)?)
}

/// `kubectl get pvc,pv -A -o json`, three times: median wall time and max RSS.
fn kubectl_list(kubectl: &str, kubeconfig: &Path) -> anyhow::Result<(f64, Option<u64>)> {
    let time = Path::new("/usr/bin/time");
    let mut walls = Vec::new();
    let mut rsss = Vec::new();
    for _ in 0..3 {
        let mut c = if time.exists() {
            let mut c = Command::new(time);
            c.args(["-f", "BENCH-MAXRSS %M", kubectl]);
            c
        } else {
            Command::new(kubectl)
        };
        c.arg("--kubeconfig")
            .arg(kubeconfig)
            .args(["get", "pvc,pv", "-A", "-o", "json"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let t = Instant::now();
        let out = c.output().context("running kubectl")?;
        walls.push(t.elapsed().as_secs_f64());
        if !out.status.success() {
            bail!(
                "kubectl get failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let err = String::from_utf8_lossy(&out.stderr);
        if let Some(kib) = err
            .lines()
            .find_map(|l| l.strip_prefix("BENCH-MAXRSS "))
            .and_then(|v| v.trim().parse::<u64>().ok())
        {
            rsss.push(kib * 1024);
        }
    }
    walls.sort_by(f64::total_cmp);
    rsss.sort();
    Ok((walls[1], rsss.get(rsss.len() / 2).copied()))
}

/// `kubectl get pvc -A -w`: after its initial listing, each write is timed until kubectl prints
/// the PVC's line.
async fn kubectl_watch(
    kubectl: &str,
    kubeconfig: &Path,
    url: &str,
    pvcs: usize,
    targets: &[(String, String)],
    writes: usize,
) -> anyhow::Result<(f64, f64, usize)> {
    let mut child = Reaped(
        Command::new(kubectl)
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(["get", "pvc", "-A", "-w", "--no-headers"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("starting kubectl -w")?,
    );
    let stdout = child.0.stdout.take().context("kubectl stdout")?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(Instant, String)>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    let initial = tokio::time::timeout(Duration::from_secs(600), async {
        let mut n = 0;
        while n < pvcs {
            rx.recv().await?;
            n += 1;
        }
        Some(())
    })
    .await;
    if !matches!(initial, Ok(Some(()))) {
        bail!("kubectl -w did not print the {pvcs} PVCs");
    }
    let mut config = kube::Config::new(url.parse().context("emulator URL")?);
    config.default_namespace = "default".into();
    let client = kube::Client::try_from(config)?;
    let mut lat = Vec::new();
    for i in 0..writes {
        let Some((ns, name)) = targets.get(i % targets.len().max(1)) else {
            break;
        };
        let api: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), ns);
        while rx.try_recv().is_ok() {}
        let t0 = Instant::now();
        api.patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"annotations": {"bench.restorewatch.io/kubectl-seq": i.to_string()}}}),
            ),
        )
        .await
        .map_err(|e| anyhow::anyhow!("PATCH {ns}/{name}: {}", crate::cluster::errors::describe(&e)))?;
        let seen = tokio::time::timeout(Duration::from_secs(10), async {
            while let Some((at, line)) = rx.recv().await {
                let mut cols = line.split_whitespace();
                if cols.next() == Some(ns.as_str()) && cols.next() == Some(name.as_str()) {
                    return Some(at);
                }
            }
            None
        })
        .await;
        if let Ok(Some(at)) = seen {
            lat.push(at.duration_since(t0).as_secs_f64() * 1000.0);
        }
        tokio::time::sleep(Duration::from_millis(20 + (i as u64 * 7) % 31)).await;
    }
    lat.sort_by(f64::total_cmp);
    Ok((percentile(&lat, 50.0), percentile(&lat, 99.0), lat.len()))
}

fn ratio(ours: f64, theirs: f64) -> String {
    if theirs > 0.0 && ours > 0.0 {
        if ours <= theirs {
            format!("{:.1}x less", theirs / ours)
        } else {
            format!("{:.2}x more", ours / theirs)
        }
    } else {
        "-".into()
    }
}

/// The Markdown table: one column per size.
pub fn render_table(args: &BenchArgs, results: &[SizeResult]) -> String {
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    let mut row = |name: &str, f: &dyn Fn(&SizeResult) -> String| {
        rows.push((name.to_string(), results.iter().map(f).collect()));
    };
    let m = |b: u64| format!("{:.1} MiB", sys::mib(b));
    row("objects in the cluster (PVCs / RestoreJobs)", &|r| {
        format!("{} ({} / {})", r.objects, r.pvcs, r.restores)
    });
    row("objects restorewatch holds", &|r| {
        r.restorewatch.held_objects.to_string()
    });
    row("first complete report on screen", &|r| {
        format!("{:.2} s", r.restorewatch.first_report_s)
    });
    row("kubectl get pvc,pv -A -o json (wall, median of 3)", &|r| {
        r.kubectl
            .as_ref()
            .map_or("-".into(), |k| format!("{:.2} s", k.list_s))
    });
    row("first report / kubectl list", &|r| {
        r.kubectl.as_ref().map_or("-".into(), |k| {
            format!("{:.2}x", r.restorewatch.first_report_s / k.list_s)
        })
    });
    row("peak RSS (VmHWM)", &|r| m(r.restorewatch.peak_rss));
    row("kubectl list max RSS", &|r| {
        r.kubectl
            .as_ref()
            .and_then(|k| k.list_rss)
            .map_or("-".into(), m)
    });
    row("steady RSS (after idle)", &|r| m(r.restorewatch.steady_rss));
    row("RSS at start (before watching)", &|r| {
        m(r.restorewatch.baseline_rss)
    });
    row("bytes kept per object ((steady - start) / N)", &|r| {
        let kept = r
            .restorewatch
            .steady_rss
            .saturating_sub(r.restorewatch.baseline_rss);
        format!("{:.0} B", kept as f64 / r.objects as f64)
    });
    row("idle CPU (% of one core)", &|r| {
        format!(
            "{:.2}% over {:.0} s",
            r.restorewatch.idle_cpu_pct, r.restorewatch.idle_secs
        )
    });
    row("write -> redrawn frame p50 / p99", &|r| {
        format!(
            "{:.1} / {:.1} ms ({} of {})",
            r.restorewatch.write_p50_ms,
            r.restorewatch.write_p99_ms,
            r.restorewatch.writes_seen,
            r.restorewatch.writes_seen + r.restorewatch.writes_lost
        )
    });
    row("  of which the PATCH round trip p50 / p99", &|r| {
        format!(
            "{:.1} / {:.1} ms",
            r.restorewatch.patch_p50_ms, r.restorewatch.patch_p99_ms
        )
    });
    row("kubectl get pvc -A -w: write -> line p50 / p99", &|r| {
        r.kubectl.as_ref().map_or("-".into(), |k| {
            format!(
                "{:.1} / {:.1} ms ({})",
                k.watch_p50_ms, k.watch_p99_ms, k.watch_seen
            )
        })
    });
    row("p99 vs kubectl -w", &|r| {
        r.kubectl.as_ref().map_or("-".into(), |k| {
            ratio(r.restorewatch.write_p99_ms, k.watch_p99_ms)
        })
    });
    row("LIST / WATCH requests per minute after sync", &|r| {
        format!(
            "{:.1} / {:.1} ({} / {} in {:.0} s)",
            r.restorewatch.lists_per_min,
            r.restorewatch.watches_per_min,
            r.restorewatch.lists_after_sync,
            r.restorewatch.watches_after_sync,
            r.restorewatch.window_s
        )
    });
    row("one analyze", &|r| {
        format!("{:.2} ms", r.restorewatch.analyze_ms)
    });
    row("one frame (update + full redraw, 160x48)", &|r| {
        format!("{:.2} ms", r.restorewatch.frame_ms)
    });
    row("snapshot copy (what a batch would clone)", &|r| {
        format!("{:.2} ms", r.restorewatch.snapshot_copy_ms)
    });
    let serve = |r: &SizeResult, f: &dyn Fn(&serve_cost::ServeResult) -> String| {
        r.serve.as_ref().map_or("-".into(), f)
    };
    row("serve: first report / peak RSS / steady RSS", &|r| {
        serve(r, &|s| {
            format!(
                "{:.2} s / {} / {}",
                s.first_report_s,
                m(s.peak_rss),
                m(s.steady_rss)
            )
        })
    });
    row("serve: idle CPU (nobody scraping)", &|r| {
        serve(r, &|s| {
            format!("{:.2}% over {:.0} s", s.idle_cpu_pct, s.idle_secs)
        })
    });
    row("serve: one /metrics scrape (median of 5)", &|r| {
        serve(r, &|s| {
            format!(
                "{:.1} ms, {:.0} KiB",
                s.scrape_ms,
                s.scrape_bytes as f64 / 1024.0
            )
        })
    });
    row("load average before / after", &|r| {
        format!("{} / {}", r.load_before, r.load_after)
    });
    let mut s = String::new();
    s.push_str("| N |");
    for r in results {
        s.push_str(&format!(" {} |", r.objects));
    }
    s.push_str("\n|---|");
    for _ in results {
        s.push_str("---|");
    }
    s.push('\n');
    for (name, cells) in rows {
        s.push_str(&format!("| {name} |"));
        for c in cells {
            s.push_str(&format!(" {c} |"));
        }
        s.push('\n');
    }
    s.push_str(&format!(
        "\n{} cores; idle window {} s; {} writes; restorewatch and the emulator in separate processes.\n",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        args.idle_secs,
        args.writes
    ));
    s
}
