//! What `restorewatch serve` costs, measured in its own process like the dashboard worker: the
//! same live pipeline and HTTP endpoints, no terminal. First report, memory, idle CPU with
//! nobody scraping, and what one `/metrics` scrape takes.

use super::sys;
use crate::analysis::Settings;
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
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ServeResult {
    pub first_report_s: f64,
    pub peak_rss: u64,
    pub steady_rss: u64,
    pub idle_secs: f64,
    pub idle_cpu_pct: f64,
    /// Median wall time of a `/metrics` scrape over loopback, and its size.
    pub scrape_ms: f64,
    pub scrape_bytes: usize,
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
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let state = Arc::new(http::State {
        frames: source.frames.clone(),
        docs_base: crate::serve::DEFAULT_DOCS_BASE.into(),
        source: url.clone(),
        report: true,
    });
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
    let t0 = Instant::now();
    tokio::time::sleep(Duration::from_secs(conf.idle_secs)).await;
    let idle = t0.elapsed().as_secs_f64();
    let idle_cpu_pct = (sys::cpu_seconds() - cpu0) / idle * 100.0;
    let (steady_rss, peak_rss) = sys::rss();
    server.abort();
    drop(source);
    Ok(ServeResult {
        first_report_s,
        peak_rss,
        steady_rss,
        idle_secs: idle,
        idle_cpu_pct,
        scrape_ms: times[times.len() / 2],
        scrape_bytes: bytes,
    })
}
