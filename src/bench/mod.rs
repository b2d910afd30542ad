//! `restorewatch bench`: what the live dashboard costs on a large cluster, next to kubectl.
//!
//! Two modes. On generated clusters (`--shapes` x `--sizes`, see `gen::Shape`), for each shape
//! and size N the orchestrator (this process) generates a cluster of N objects, starts the
//! emulator in a child process (`sim` role), times `kubectl get pvc,pv -A -o json` and
//! `kubectl get pvc -A -w` against it, and runs restorewatch's live pipeline plus the
//! dashboard's draw loop in another child (`worker` role, see `worker.rs`), so that the memory
//! and CPU read from `/proc/self` there are restorewatch's own. Requests are counted by the
//! emulator (`GET /metrics`). Children are this same executable, re-run with
//! `RESTOREWATCH_BENCH_ROLE` set, so the bench works as a subcommand or as its own binary.
//! On an existing cluster (`--kubeconfig F`, see `external.rs`) the same worker measures it
//! read-only, unless `--writes-namespace` gives it a namespace for its own scratch PVC.

pub mod core_wait;
pub mod external;
pub mod flood;
pub mod r#gen;
pub mod kubectl;
pub mod per_change;
pub mod retake;
pub mod serve_cost;
/// What a process costs: used by `serve`'s own metrics too, so it lives below both.
pub use crate::procstat as sys;
pub mod table;
pub mod worker;
pub mod writes;

use anyhow::{Context, bail};
use clap::Args;
use r#gen::{Shape, ShapeArg};
use jiff::Timestamp;
use kubectl::{Kubectl, KubectlResult};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use worker::{Target, WorkerConf, WorkerResult};

pub const ROLE_ENV: &str = "RESTOREWATCH_BENCH_ROLE";
const CONF_ENV: &str = "RESTOREWATCH_BENCH_CONF";
const RESULT_PREFIX: &str = "BENCH-RESULT ";

#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Cluster sizes to measure, in objects
    #[arg(long, value_delimiter = ',', default_value = "1000,20000,50000")]
    pub sizes: Vec<usize>,
    /// Cluster shapes, each generated at every size: default, no-backup (restores whose
    /// Backup is gone), dense-namespaces (200 disks per namespace, restores without Backup),
    /// many-events (half the objects Events about the restores); or dump:PATH, a kubectl
    /// `List` in JSON (e.g. `kubectl get ... -A -o json --show-managed-fields` of a real
    /// server) served as it is, once, whatever --sizes says
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "default",
        value_name = "SHAPE"
    )]
    pub shapes: Vec<ShapeArg>,
    /// Measure this existing cluster instead of generated ones (read-only unless
    /// --writes-namespace is given)
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (default: its current context); only with --kubeconfig
    #[arg(long, value_name = "NAME", requires = "kubeconfig")]
    pub context: Option<String>,
    /// On an existing cluster, time writes on a scratch PVC the bench creates, patches and
    /// deletes in this namespace; without it nothing is written
    #[arg(long, value_name = "NS", requires = "kubeconfig")]
    pub writes_namespace: Option<String>,
    /// Seconds of idle (no changes) over which CPU is measured
    #[arg(long, default_value_t = 30)]
    pub idle_secs: u64,
    /// API writes timed from PATCH to redrawn frame (and to kubectl's printed line)
    #[arg(long, default_value_t = 200)]
    pub writes: usize,
    /// Take each timed series of writes (the dashboard's, serve's, kubectl -w's) on a machine
    /// the hypervisor is not taking time from: wait up to 90 s for 5 s without stolen time
    /// before each, and take a series again, up to N times, when any of its three slowest
    /// writes met stolen time; the table names every series set aside (Linux; 0: off)
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub retake_stolen: usize,
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
    /// Measure nothing: print the table of results earlier runs wrote with --json (repeatable;
    /// their columns side by side)
    #[arg(long, value_name = "FILE")]
    pub render_json: Vec<PathBuf>,
    /// Measure nothing else: flood one RestoreJob with 3,000 Events of 64 KiB and
    /// --flood-small small ones, and print `restorewatch serve`'s memory before and after
    #[arg(long)]
    pub event_flood: bool,
    /// With --event-flood: how many small Events follow the large ones
    #[arg(long, default_value_t = 100_000, requires = "event_flood")]
    pub flood_small: usize,
    /// With --event-flood: the restorewatch binary whose `serve` is measured (default: this
    /// one), e.g. an older build to compare with
    #[arg(long, value_name = "FILE", requires = "event_flood")]
    pub serve_bin: Option<PathBuf>,
}

impl Default for BenchArgs {
    fn default() -> Self {
        BenchArgs {
            sizes: vec![1000, 20000, 50000],
            shapes: vec![ShapeArg::Generated(Shape::Default)],
            kubeconfig: None,
            context: None,
            writes_namespace: None,
            idle_secs: 30,
            writes: 200,
            retake_stolen: 0,
            kubectl: "kubectl".into(),
            no_kubectl: false,
            out: None,
            json: None,
            write_dump: None,
            render_json: Vec::new(),
            event_flood: false,
            flood_small: 100_000,
            serve_bin: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct SimConf {
    file: PathBuf,
    kubeconfig: PathBuf,
}

/// One measured run: a generated shape at one size, or the existing cluster.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    /// The shape's name (`gen::Shape::name`), or "existing cluster".
    pub shape: String,
    /// Whether the bench generated the cluster (objects, PVCs and restores are then known).
    pub generated: bool,
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

impl RunResult {
    /// The run's column header.
    pub fn label(&self) -> String {
        if self.generated {
            format!("{} {}", self.shape, self.objects)
        } else {
            self.shape.clone()
        }
    }
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
    if args.event_flood {
        return flood::run(args.serve_bin.clone(), args.flood_small).await;
    }
    if let Some(path) = &args.write_dump {
        let n = args.sizes.first().copied().unwrap_or(20_000);
        let shape = match args.shapes.first() {
            Some(ShapeArg::Generated(s)) => *s,
            Some(ShapeArg::Dump(p)) => bail!("--write-dump: {} is a dump already", p.display()),
            None => Shape::Default,
        };
        let world = r#gen::generate_shape(shape, n, jiff::Timestamp::now());
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": world.objects});
        std::fs::write(path, serde_json::to_vec(&list)?)?;
        println!("wrote {} objects to {}", n, path.display());
        return Ok(0);
    }
    if !args.render_json.is_empty() {
        let mut results: Vec<RunResult> = Vec::new();
        for p in &args.render_json {
            let text =
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            let runs: Vec<RunResult> = serde_json::from_str(&text)
                .with_context(|| format!("{} is not a bench --json file", p.display()))?;
            results.extend(runs);
        }
        println!("{}", table::render(&results));
        return Ok(0);
    }
    let results = match &args.kubeconfig {
        Some(path) => vec![external::run(&args, path).await?],
        None => orchestrate(&args).await?,
    };
    let table = table::render(&results);
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
        // As a real server: what the dashboard meets there is what the bench measures.
        bookmark_interval: crate::sim::DEFAULT_BOOKMARK_INTERVAL,
        min_request_timeout: crate::sim::DEFAULT_MIN_REQUEST_TIMEOUT,
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
pub(crate) struct Reaped(pub(crate) Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn kubectl_usable(args: &BenchArgs) -> bool {
    if args.no_kubectl {
        return false;
    }
    let ok = Kubectl::available(&args.kubectl);
    if !ok {
        eprintln!(
            "bench: {} cannot be run: no kubectl comparison",
            args.kubectl
        );
    }
    ok
}

async fn orchestrate(args: &BenchArgs) -> anyhow::Result<Vec<RunResult>> {
    let dir = tempfile_dir()?;
    let kubectl_ok = kubectl_usable(args);
    if let Some(n) = args.sizes.iter().find(|&&n| n < 40) {
        bail!("--sizes: {n} is too small (at least 40 objects)");
    }
    let mut out = Vec::new();
    for shape in &args.shapes {
        match shape {
            ShapeArg::Generated(shape) => {
                for &n in &args.sizes {
                    let cluster = generated(&dir, *shape, n)?;
                    out.push(run_cluster(args, &dir, kubectl_ok, cluster).await?);
                }
            }
            ShapeArg::Dump(path) => {
                let cluster = r#gen::load_dump(path)?;
                out.push(run_cluster(args, &dir, kubectl_ok, cluster).await?);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(out)
}

/// A generated cluster written where the emulator loads it from.
fn generated(dir: &std::path::Path, shape: Shape, n: usize) -> anyhow::Result<r#gen::Cluster> {
    eprintln!("bench: {} N={n}: generating", shape.name());
    let world = r#gen::generate_shape(shape, n, Timestamp::now());
    let file = dir.join(format!("cluster-{}-{n}.json", shape.name()));
    {
        let f = std::fs::File::create(&file)?;
        let mut w = std::io::BufWriter::new(f);
        serde_json::to_writer(
            &mut w,
            &json!({"apiVersion": "v1", "kind": "List", "items": world.objects}),
        )?;
        w.flush()?;
    }
    Ok(r#gen::Cluster {
        name: shape.name().into(),
        same_kinds: Kubectl::resources_of(&world.objects),
        objects: n,
        pvcs: world.pvcs,
        restores: world.restores,
        write_targets: world.write_targets,
        file,
        owned: true,
    })
}

/// Untimed writes to the emulator before the first measured run.
const WARM_WRITES: usize = 20;

async fn run_cluster(
    args: &BenchArgs,
    dir: &std::path::Path,
    kubectl_ok: bool,
    cluster: r#gen::Cluster,
) -> anyhow::Result<RunResult> {
    let n = cluster.objects;
    let tag = format!("{} N={n}", cluster.name);
    let file = cluster.file.clone();
    let (pvcs, restores, targets) = (cluster.pvcs, cluster.restores, cluster.write_targets);
    let same_kinds = cluster.same_kinds;
    if targets.is_empty() {
        bail!("{tag}: the cluster holds no PVC to time writes on");
    }
    let kubeconfig = dir.join(format!("sim-{}.kubeconfig", std::process::id()));
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
    eprintln!("bench: {tag}: emulator at {url}");
    let load_before = sys::load_average();
    let kubectl = Kubectl {
        bin: args.kubectl.clone(),
        conn: vec!["--kubeconfig".into(), kubeconfig.clone().into_os_string()],
    };
    let kubectl_list = if kubectl_ok {
        let (same_s, _) = kubectl.list_of(&same_kinds)?;
        Some((kubectl.list()?, same_s))
    } else {
        None
    };
    eprintln!("bench: {tag}: restorewatch");
    // Writes cycle through the targets; the list travels in an environment variable
    // (128 KiB at most), so it is kept short.
    let short = |k: usize| targets.iter().take(k).cloned().collect::<Vec<_>>();
    let write_targets = short(args.writes.clamp(1, 1000));
    let conf = WorkerConf {
        target: Target::Url(url.clone()),
        objects: n,
        idle_secs: args.idle_secs,
        writes: args.writes,
        write_targets: write_targets.clone(),
        change_targets: short(64),
        width: 160,
        height: 48,
        beside: kubectl_ok.then(|| worker::Beside {
            kubectl: args.kubectl.clone(),
            conn: kubectl.conn.clone(),
            field_selector: None,
            initial: pvcs,
        }),
        server_pid: Some(sim.0.id()),
        retake_stolen: args.retake_stolen,
    };
    // The emulator's first PATCHes are slow (4-7 ms: its code and heap cold) and used to fall
    // on the dashboard's run, which comes first, while `serve`'s and kubectl's met a warm server.
    // Warmed here, before any measured process starts: restorewatch's own first writes after
    // its idle are still measured.
    writes::warm_server(&worker::client(&url)?, &write_targets, WARM_WRITES).await?;
    let rw = run_child::<WorkerResult>("worker", &conf)?;
    eprintln!("bench: {tag}: restorewatch serve");
    let serve = run_child::<serve_cost::ServeResult>(
        "serve",
        &serve_cost::ServeConf {
            target: Target::Url(url.clone()),
            idle_secs: args.idle_secs,
            writes: args.writes,
            write_targets,
            server_pid: Some(sim.0.id()),
            retake_stolen: args.retake_stolen,
        },
    )?;
    let kubectl = match kubectl_list {
        Some(((list_s, list_rss), same_s)) => {
            eprintln!("bench: {tag}: kubectl -w");
            let client = worker::client(&url)?;
            let (w, watch_retakes) = kubectl
                .watch(
                    &client,
                    None,
                    pvcs,
                    writes::Series {
                        targets: &targets,
                        writes: args.writes,
                        tag: "",
                        retake_stolen: args.retake_stolen,
                        what: "kubectl -w",
                    },
                    Some(sim.0.id()),
                )
                .await?;
            Some(KubectlResult {
                list_s,
                list_rss,
                list_same_s: Some(same_s),
                list_same_kinds: Some(same_kinds),
                watch_p50_ms: Some(w.p50_ms),
                watch_p99_ms: Some(w.p99_ms),
                watch_seen: w.seen,
                watch_p99_blocks_ms: w.p99_blocks_ms,
                watch_p99_interval: w.p99_interval,
                watch_held: w.held,
                watch_retakes,
            })
        }
        None => None,
    };
    drop(sim);
    if cluster.owned {
        let _ = std::fs::remove_file(&file);
    }
    Ok(RunResult {
        shape: cluster.name,
        generated: true,
        objects: n,
        pvcs,
        restores,
        restorewatch: rw,
        kubectl,
        serve: Some(serve),
        load_before,
        load_after: sys::load_average(),
    })
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

/// Runs this executable in a measuring role and reads the result line it prints.
pub(crate) fn run_child<R: serde::de::DeserializeOwned>(
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
