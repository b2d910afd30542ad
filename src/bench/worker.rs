//! The measured process: the live pipeline exactly as the dashboard runs it (`live::start`, one
//! watch per kind, the store task, `analyze`), and the dashboard's draw loop rendering every
//! frame through `ui::view` into a `TestBackend` instead of a terminal. Only restorewatch runs
//! here (the emulator and kubectl are other processes), so `/proc/self` is restorewatch's cost.

use super::sys;
use crate::analysis::{Settings, analyze};
use crate::pipeline::FrameRx;
use crate::pipeline::clock_work::{self, ClockWork};
use crate::pipeline::live::{self, LiveOptions};
use crate::ui::{App, Msg, UiOptions, update, view};
use anyhow::Context;
use jiff::Timestamp;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::{Instant, MissedTickBehavior};

/// After the first frame, time for the initial lists' garbage to go before "steady" figures.
const SETTLE: Duration = Duration::from_secs(2);
/// Changes timed through `per_change::analyse_change`.
const CHANGE_SAMPLES: usize = 30;

/// Where the measured process connects.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Target {
    /// The bench's own emulator.
    Url(String),
    /// An existing cluster (`--kubeconfig F [--context C]`).
    Kubeconfig {
        path: std::path::PathBuf,
        context: Option<String>,
    },
}

impl Target {
    /// A client and the cluster URL it talks to.
    pub async fn connect(&self) -> anyhow::Result<(kube::Client, String)> {
        match self {
            Target::Url(url) => Ok((client(url)?, url.clone())),
            Target::Kubeconfig { path, context } => {
                let kc = kube::config::Kubeconfig::read_from(path)
                    .with_context(|| format!("cannot read kubeconfig {}", path.display()))?;
                let opts = kube::config::KubeConfigOptions {
                    context: context.clone(),
                    ..Default::default()
                };
                let config = kube::Config::from_custom_kubeconfig(kc, &opts)
                    .await
                    .context("cannot use the kubeconfig's context")?;
                let url = crate::cluster::errors::server_name(&config.cluster_url.to_string());
                Ok((
                    crate::cluster::client::watch_client(
                        config,
                        &crate::cluster::client::Timeouts::default(),
                    )
                    .context("cannot build a client")?,
                    url,
                ))
            }
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkerConf {
    pub target: Target,
    pub objects: usize,
    pub idle_secs: u64,
    pub writes: usize,
    pub write_targets: Vec<(String, String)>,
    /// PVCs whose change `per_change` times (any PVCs the cluster holds).
    pub change_targets: Vec<(String, String)>,
    pub width: u16,
    pub height: u16,
    /// kubectl to run beside the dashboard for a second series of writes (`writes::Paired`);
    /// none without a kubectl comparison.
    #[serde(default)]
    pub beside: Option<Beside>,
    /// The emulator's process id, whose threads carry each write too (`core_wait`); none for
    /// a server elsewhere.
    #[serde(default)]
    pub server_pid: Option<u32>,
    /// `--retake-stolen` (`retake`).
    #[serde(default)]
    pub retake_stolen: usize,
}

/// `kubectl get pvc -A -w` with these connection arguments (`--kubeconfig F [--context C]`),
/// narrowed by `field_selector` when given, past its `initial` lines (the PVCs listed).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Beside {
    pub kubectl: String,
    pub conn: Vec<std::ffi::OsString>,
    pub field_selector: Option<String>,
    pub initial: usize,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WorkerResult {
    pub first_report_s: f64,
    /// When the pipeline had published that report: the draw loop's stamp as it takes the
    /// frame, before updating or drawing it. What the first report costs the pipeline alone,
    /// next to `serve`'s.
    #[serde(default)]
    pub first_published_s: f64,
    pub baseline_rss: u64,
    pub rss_after_sync: u64,
    pub steady_rss: u64,
    pub end_rss: u64,
    pub peak_rss: u64,
    pub idle_secs: f64,
    pub idle_cpu_pct: f64,
    /// What the pipeline redid by the clock alone during the idle window: with nothing
    /// changing, the work besides drawing the clock.
    #[serde(default)]
    pub idle_clock: Option<ClockWork>,
    pub writes_seen: usize,
    pub writes_lost: usize,
    pub write_p50_ms: f64,
    pub write_p99_ms: f64,
    pub write_max_ms: f64,
    /// The PATCH round trip alone (the emulator's share of the write latency).
    pub patch_p50_ms: f64,
    pub patch_p99_ms: f64,
    /// The p99 of each 200 writes (`writes::block_p99s`), with 400 writes or more.
    #[serde(default)]
    pub write_p99_blocks_ms: Vec<f64>,
    /// Where the true p99 lies (`writes::Interval`).
    #[serde(default)]
    pub write_p99_interval: Option<super::writes::Interval>,
    /// What the writes held (`core_wait`).
    #[serde(default)]
    pub write_held: super::core_wait::Held,
    /// The series set aside for stolen time, and the waits for a quiet machine (`retake`).
    #[serde(default)]
    pub write_retakes: super::retake::Retakes,
    pub window_s: f64,
    /// Counted by the server: `None` where it does not expose the emulator's counters (a real
    /// kube-apiserver's `/metrics` counts every client's requests, not ours).
    pub lists_after_sync: Option<u64>,
    pub watches_after_sync: Option<u64>,
    pub lists_per_min: Option<f64>,
    pub watches_per_min: Option<f64>,
    pub analyze_ms: f64,
    /// What the pipeline computes for one changed PVC (`per_change::analyse_change`): median and
    /// p99 over `change_samples` changes.
    pub change_p50_ms: f64,
    pub change_p99_ms: f64,
    pub change_samples: usize,
    pub frame_ms: f64,
    /// The draw loop's own time for each new frame during the writes: `update` with the frame,
    /// and the draw that follows (order, rows, table), p50 / p99. What the dashboard adds
    /// after the pipeline published.
    #[serde(default)]
    pub new_frame_p50_ms: f64,
    #[serde(default)]
    pub new_frame_p99_ms: f64,
    pub snapshot_copy_ms: f64,
    pub held_objects: usize,
    pub restores: usize,
    pub findings: usize,
    pub draws: u64,
    /// The second series of writes, with kubectl -w beside (after every figure above).
    #[serde(default)]
    pub paired: Option<super::writes::Paired>,
}

use super::writes::Shown as Drawn;

/// The dashboard's loop (`ui::run::run_tui`) without a terminal: frames and a 1 s clock tick
/// go through `update`, and a dirty app is drawn as `pipeline::pace::Pacer::for_frames` allows.
async fn draw_loop(
    mut frames: FrameRx,
    size: (u16, u16),
    drawn: watch::Sender<Drawn>,
    costs: std::sync::Arc<std::sync::Mutex<Vec<f64>>>,
    first_taken: tokio::sync::oneshot::Sender<Instant>,
) {
    let mut first_taken = Some(first_taken);
    let mut terminal = match Terminal::new(TestBackend::new(size.0, size.1)) {
        Ok(t) => t,
        Err(e) => match e {},
    };
    let mut app = App::new(UiOptions::default(), Timestamp::now(), size);
    let first = frames.borrow_and_update().clone();
    if first.is_some()
        && let Some(tx) = first_taken.take()
    {
        let _ = tx.send(Instant::now());
    }
    update(&mut app, Msg::Frame(first));
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut pacer = crate::pipeline::pace::Pacer::for_frames();
    let mut painter = crate::ui::Painter::new();
    let mut draw_at: Option<Instant> = None;
    let mut draws = 0u64;
    // The time spent on the newest frame so far (its `update`), while it waits to be drawn.
    let mut new_frame: Option<Duration> = None;
    loop {
        if app.dirty {
            let now = Instant::now();
            if !pacer.ready(now) {
                draw_at = Some(pacer.when(now));
            } else {
                {
                    let t = std::time::Instant::now();
                    if painter.paint(&mut terminal, &app).is_err() {
                        return;
                    }
                    if let Some(updated) = new_frame.take()
                        && let Ok(mut c) = costs.lock()
                    {
                        c.push(ms(updated + t.elapsed()));
                    }
                    app.dirty = false;
                    pacer.sent(now);
                    draw_at = None;
                    draws += 1;
                    drawn.send_replace(Drawn {
                        frame: app.shown.clone(),
                        at: Instant::now(),
                        draws,
                    });
                    // As `ui::run` does once the terminal has the frame.
                    app.release_retired();
                }
            }
        }
        tokio::select! {
            changed = frames.changed() => match changed {
                Ok(()) => {
                    let f = frames.borrow_and_update().clone();
                    if f.is_some()
                        && let Some(tx) = first_taken.take()
                    {
                        let _ = tx.send(Instant::now());
                    }
                    let t = std::time::Instant::now();
                    update(&mut app, Msg::Frame(f));
                    *new_frame.get_or_insert(Duration::ZERO) += t.elapsed();
                }
                Err(_) => return,
            },
            _ = tick.tick() => update(&mut app, Msg::Tick(Timestamp::now())),
            _ = tokio::time::sleep_until(draw_at.unwrap_or_else(Instant::now)), if draw_at.is_some() => {}
        }
    }
}

/// The emulator's LIST and WATCH counters; `None` on a server without them.
pub(super) async fn request_counts(client: &kube::Client) -> Option<(u64, u64)> {
    let c = server_counts(client).await?;
    Some((c.list, c.watch))
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub list: u64,
    pub watch: u64,
    pub get: u64,
    pub write: u64,
}

/// Every counter the emulator serves at `GET /metrics` (JSON); `None` elsewhere.
pub async fn server_counts(client: &kube::Client) -> Option<Counts> {
    let req = hyper::Request::get(crate::sim::metrics::PATH)
        .body(Vec::new())
        .ok()?;
    let text = client.request_text(req).await.ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    let n = |k: &str| v.get(k).and_then(Value::as_u64);
    Some(Counts {
        list: n("list")?,
        watch: n("watch")?,
        get: n("get")?,
        write: n("write")?,
    })
}

fn median(mut xs: Vec<f64>) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Nearest-rank percentile.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The dashboard's own watch client (`cluster::client::watch_client`): what is measured is the
/// client restorewatch runs, with its timeouts and its request layer.
pub(super) fn client(url: &str) -> anyhow::Result<kube::Client> {
    let mut config = kube::Config::new(url.parse().context("emulator URL")?);
    config.default_namespace = "default".into();
    Ok(crate::cluster::client::watch_client(
        config,
        &crate::cluster::client::Timeouts::default(),
    )?)
}

pub async fn run(conf: WorkerConf) -> anyhow::Result<WorkerResult> {
    let mut r = WorkerResult::default();
    let (watch_client, url) = conf.target.connect().await?;
    // Writes and counter reads go through their own connections, as another client would.
    let (write_client, _) = conf.target.connect().await?;
    r.baseline_rss = sys::rss().0;

    let start = Instant::now();
    let settings = Settings::default();
    let source = live::start(
        watch_client,
        LiveOptions {
            namespace: None,
            context: "bench".into(),
            cluster: url.clone(),
            settings: settings.clone(),
        },
    );
    // Stamped by the draw loop as it takes the first frame from the pipeline, before it
    // updates or draws: a task of its own waiting on the frames would be polled after the
    // draw on the dashboard's one worker, and stamp a time later than the drawn frame's.
    let (published_tx, published) = tokio::sync::oneshot::channel();
    let (drawn_tx, mut drawn) = watch::channel(Drawn {
        frame: None,
        at: start,
        draws: 0,
    });
    let costs = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let ui = tokio::spawn(draw_loop(
        source.frames.clone(),
        (conf.width, conf.height),
        drawn_tx,
        std::sync::Arc::clone(&costs),
        published_tx,
    ));

    // 1. The first complete report on screen: every kind listed, analysed and drawn.
    let first = tokio::time::timeout(Duration::from_secs(600), async {
        loop {
            if drawn.changed().await.is_err() {
                return None;
            }
            let d = drawn.borrow_and_update().clone();
            if d.frame.is_some() {
                return Some(d);
            }
        }
    })
    .await
    .context("no complete frame within 10 minutes")?
    .context("the draw loop stopped")?;
    r.first_report_s = first.at.duration_since(start).as_secs_f64();
    if let Ok(at) = published.await {
        r.first_published_s = at.duration_since(start).as_secs_f64();
    }
    let sync_at = Instant::now();
    let counts0 = request_counts(&write_client).await;
    r.rss_after_sync = sys::rss().0;

    // 2. Idle: nothing changes on the server; the pipeline wakes only at the report's next
    // deadline, and the draw loop redraws its clock each second.
    tokio::time::sleep(SETTLE).await;
    let cpu0 = sys::cpu_seconds();
    let clock0 = clock_work::so_far();
    let idle_start = Instant::now();
    tokio::time::sleep(Duration::from_secs(conf.idle_secs)).await;
    let cpu1 = sys::cpu_seconds();
    r.idle_clock = Some(clock_work::so_far().since(clock0));
    r.idle_secs = idle_start.elapsed().as_secs_f64();
    r.idle_cpu_pct = 100.0 * (cpu1 - cpu0) / r.idle_secs.max(1e-9);
    r.steady_rss = sys::rss().0;

    // 3. Writes: one PVC annotation at a time; latency = from sending the PATCH to the draw of
    // the first frame whose snapshot holds the new value.
    let carriers = super::core_wait::Carriers::new(None, &[conf.server_pid]);
    let (w, retakes) = super::writes::time_writes(
        &write_client,
        super::writes::Series {
            targets: &conf.write_targets,
            writes: conf.writes,
            tag: "",
            retake_stolen: conf.retake_stolen,
            what: "dashboard",
        },
        &mut drawn,
        &carriers,
        || {
            if let Ok(mut c) = costs.lock() {
                // The frames of the series kept are the ones its figures go with.
                c.clear();
            }
        },
    )
    .await?;
    r.write_retakes = retakes;
    r.writes_seen = w.seen;
    r.writes_lost = w.lost;
    r.write_p50_ms = w.p50_ms;
    r.write_p99_ms = w.p99_ms;
    r.write_max_ms = w.max_ms;
    r.patch_p50_ms = w.patch_p50_ms;
    r.patch_p99_ms = w.patch_p99_ms;
    r.write_p99_blocks_ms = w.p99_blocks_ms;
    r.write_p99_interval = w.p99_interval;
    r.write_held = w.held;
    if let Ok(mut c) = costs.lock() {
        c.sort_by(f64::total_cmp);
        r.new_frame_p50_ms = percentile(&c, 50.0);
        r.new_frame_p99_ms = percentile(&c, 99.0);
    }

    // 4. Requests after sync, counted by the server.
    let counts1 = request_counts(&write_client).await;
    r.window_s = sync_at.elapsed().as_secs_f64();
    if let (Some((l0, w0)), Some((l1, w1))) = (counts0, counts1) {
        r.lists_after_sync = Some(l1.saturating_sub(l0));
        r.watches_after_sync = Some(w1.saturating_sub(w0));
        r.lists_per_min = Some(l1.saturating_sub(l0) as f64 * 60.0 / r.window_s);
        r.watches_per_min = Some(w1.saturating_sub(w0) as f64 * 60.0 / r.window_s);
    }
    let (end_rss, peak) = sys::rss();
    r.end_rss = end_rss;
    r.peak_rss = peak;
    r.draws = drawn.borrow().draws;

    // 4b. The same writes again with kubectl -w beside, after every figure of this process
    // was taken: kubectl's reader thread lives here.
    if let Some(b) = &conf.beside {
        let kubectl = super::kubectl::Kubectl {
            bin: b.kubectl.clone(),
            conn: b.conn.clone(),
        };
        let mut watching = kubectl
            .start_watch(b.field_selector.as_deref(), b.initial)
            .await?;
        r.paired = Some(
            super::writes::time_writes_beside(
                &write_client,
                &conf.write_targets,
                conf.writes,
                "k",
                &mut drawn,
                &mut watching,
            )
            .await?,
        );
    }

    // 5. One analysis and one frame at this size, on the newest frame (medians of 15).
    let frame = source
        .frames
        .borrow()
        .clone()
        .context("no frame at the end")?;
    drop(source);
    ui.abort();
    let mut live_settings = settings.clone();
    live_settings.rename_grace = jiff::SignedDuration::from_secs(5);
    let snap = &frame.snapshot;
    r.held_objects = snap.objects.total();
    r.restores = frame.report.restores.len();
    r.findings = frame.report.findings.len();
    let mut a = Vec::new();
    for _ in 0..15 {
        let t = Instant::now();
        let rep = analyze(snap, &live_settings, Timestamp::now());
        a.push(ms(t.elapsed()));
        drop(rep);
    }
    r.analyze_ms = median(a);
    let change_targets = if conf.change_targets.is_empty() {
        frame
            .snapshot
            .objects
            .pvcs
            .iter()
            .take(CHANGE_SAMPLES)
            .map(|p| (p.meta.namespace.to_string(), p.meta.name.to_string()))
            .collect()
    } else {
        conf.change_targets.clone()
    };
    let mut changes =
        super::per_change::time_changes(&frame, &change_targets, &live_settings, CHANGE_SAMPLES);
    changes.sort_by(f64::total_cmp);
    r.change_samples = changes.len();
    r.change_p50_ms = percentile(&changes, 50.0);
    r.change_p99_ms = percentile(&changes, 99.0);
    let mut terminal = Terminal::new(TestBackend::new(conf.width, conf.height))?;
    let mut app = App::new(
        UiOptions::default(),
        Timestamp::now(),
        (conf.width, conf.height),
    );
    let mut f = Vec::new();
    for _ in 0..15 {
        terminal.clear()?;
        let t = Instant::now();
        update(&mut app, Msg::Frame(Some(frame.clone())));
        terminal.draw(|fr| view(&app, fr))?;
        f.push(ms(t.elapsed()));
    }
    r.frame_ms = median(f);
    let mut c = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let copy = (**snap).clone();
        c.push(ms(t.elapsed()));
        drop(copy);
    }
    r.snapshot_copy_ms = median(c);
    Ok(r)
}
