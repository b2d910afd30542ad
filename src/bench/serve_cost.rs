//! What `restorewatch serve` costs, measured in its own process like the dashboard worker: the
//! same live pipeline and HTTP endpoints, no terminal. The dashboard's figures (first report,
//! memory at start, after sync, at its peak and per object held, idle CPU with nobody scraping,
//! write to published report, requests after sync), and what one `/metrics` scrape takes.

use super::sys;
use crate::analysis::Settings;
use crate::pipeline::clock_work::{self, ClockWork};
use crate::pipeline::live::{self, LiveOptions};
use crate::serve::http;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// After the first report, time for the initial lists' garbage to go before idle is measured.
const SETTLE: Duration = Duration::from_secs(2);
const SCRAPES: usize = 5;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServeConf {
    pub target: super::worker::Target,
    pub idle_secs: u64,
    /// Timed writes, as the dashboard's (none without targets).
    #[serde(default)]
    pub writes: usize,
    #[serde(default)]
    pub write_targets: Vec<(String, String)>,
    /// The emulator's process id (`worker::WorkerConf::server_pid`).
    #[serde(default)]
    pub server_pid: Option<u32>,
    /// `--retake-stolen` (`retake`).
    #[serde(default)]
    pub retake_stolen: usize,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ServeResult {
    pub first_report_s: f64,
    pub peak_rss: u64,
    pub steady_rss: u64,
    pub idle_secs: f64,
    pub idle_cpu_pct: f64,
    /// What the pipeline redid by the clock alone during the idle window.
    #[serde(default)]
    pub idle_clock: Option<ClockWork>,
    /// Median wall time of a `/metrics` scrape over loopback, and its size.
    pub scrape_ms: f64,
    pub scrape_bytes: usize,
    /// RSS before watching, and the objects held at the end: memory kept per object.
    #[serde(default)]
    pub baseline_rss: u64,
    #[serde(default)]
    pub held_objects: usize,
    /// From sending a PATCH to the published report that holds it (what a scrape then gets).
    #[serde(default)]
    pub writes_seen: usize,
    #[serde(default)]
    pub writes_lost: usize,
    #[serde(default)]
    pub write_p50_ms: f64,
    #[serde(default)]
    pub write_p99_ms: f64,
    #[serde(default)]
    pub patch_p50_ms: f64,
    #[serde(default)]
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
    /// The series set aside for stolen time (`retake`).
    #[serde(default)]
    pub write_retakes: super::retake::Retakes,
    /// LIST / WATCH requests from the first report to the end of the writes, counted by the
    /// emulator (`None` on a server without its counters).
    #[serde(default)]
    pub lists_after_sync: Option<u64>,
    #[serde(default)]
    pub watches_after_sync: Option<u64>,
    #[serde(default)]
    pub window_s: f64,
}

fn scrape(addr: std::net::SocketAddr) -> anyhow::Result<usize> {
    let mut s = std::net::TcpStream::connect(addr)?;
    write!(s, "GET /metrics HTTP/1.0\r\n\r\n")?;
    let mut body = Vec::new();
    s.read_to_end(&mut body)?;
    Ok(body.len())
}

pub async fn run(conf: ServeConf) -> anyhow::Result<ServeResult> {
    let (client, url) = conf.target.connect().await?;
    // Writes and counter reads go through their own connection, as another client's would.
    let (write_client, _) = conf.target.connect().await?;
    let baseline_rss = sys::rss().0;
    let start = Instant::now();
    let source = live::start(
        client,
        LiveOptions {
            namespace: None,
            context: "bench".into(),
            cluster: url.clone(),
            settings: Settings::default(),
        },
    );
    let mut frames = source.frames.clone();
    frames
        .wait_for(Option::is_some)
        .await
        .context("the live source ended before its first report")?;
    let first_report_s = start.elapsed().as_secs_f64();
    let sync_at = Instant::now();
    let counts0 = super::worker::request_counts(&write_client).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let state = Arc::new(http::State::new(
        source.frames.clone(),
        crate::serve::DEFAULT_DOCS_BASE.into(),
        url.clone(),
        http::Limits::default(),
    ));
    let server = tokio::spawn(http::serve(listener, state));
    let mut times = Vec::new();
    let mut bytes = 0;
    for _ in 0..SCRAPES {
        let t = Instant::now();
        bytes = tokio::task::spawn_blocking(move || scrape(addr)).await??;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    tokio::time::sleep(SETTLE).await;
    let cpu0 = sys::cpu_seconds();
    let clock0 = clock_work::so_far();
    let t0 = Instant::now();
    tokio::time::sleep(Duration::from_secs(conf.idle_secs)).await;
    let idle = t0.elapsed().as_secs_f64();
    let idle_cpu_pct = (sys::cpu_seconds() - cpu0) / idle * 100.0;
    let idle_clock = Some(clock_work::so_far().since(clock0));
    let steady_rss = sys::rss().0;
    let mut published = super::writes::published(source.frames.clone());
    let carriers = super::core_wait::Carriers::new(None, &[conf.server_pid]);
    let (w, write_retakes) = super::writes::time_writes(
        &write_client,
        super::writes::Series {
            targets: &conf.write_targets,
            writes: conf.writes,
            tag: "serve-",
            retake_stolen: conf.retake_stolen,
            what: "serve",
        },
        &mut published,
        &carriers,
        || {},
    )
    .await?;
    let counts1 = super::worker::request_counts(&write_client).await;
    let window_s = sync_at.elapsed().as_secs_f64();
    let (lists_after_sync, watches_after_sync) = match (counts0, counts1) {
        (Some((l0, w0)), Some((l1, w1))) => {
            (Some(l1.saturating_sub(l0)), Some(w1.saturating_sub(w0)))
        }
        _ => (None, None),
    };
    let peak_rss = sys::rss().1;
    let held_objects = source
        .frames
        .borrow()
        .as_ref()
        .map_or(0, |f| f.snapshot.objects.total());
    server.abort();
    drop(source);
    Ok(ServeResult {
        first_report_s,
        peak_rss,
        steady_rss,
        idle_secs: idle,
        idle_cpu_pct,
        idle_clock,
        scrape_ms: times[times.len() / 2],
        scrape_bytes: bytes,
        baseline_rss,
        held_objects,
        writes_seen: w.seen,
        writes_lost: w.lost,
        write_p50_ms: w.p50_ms,
        write_p99_ms: w.p99_ms,
        patch_p50_ms: w.patch_p50_ms,
        patch_p99_ms: w.patch_p99_ms,
        write_p99_blocks_ms: w.p99_blocks_ms,
        write_p99_interval: w.p99_interval,
        write_held: w.held,
        write_retakes,
        lists_after_sync,
        watches_after_sync,
        window_s,
    })
}
