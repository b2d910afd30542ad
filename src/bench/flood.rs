//! `bench --event-flood`: what a flood of Events about one restore costs `restorewatch serve`,
//! measured from outside on the real command (`/proc/<pid>/status`), so that an older binary
//! (`--serve-bin`) can be measured the same way. Anyone who may create Events in a namespace
//! can do this; the shipped Deployment allows serve 384 MiB.

use crate::model::Kind;
use crate::sim::{Sim, SimConfig};
use anyhow::Context;
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Large Events first (64 KiB messages), then small ones, as in issue 18.
const LARGE: usize = 3_000;
const LARGE_BYTES: usize = 64 << 10;
/// How long serve's memory must stay flat before the flood counts as taken in.
const FLAT: Duration = Duration::from_secs(10);
const SETTLE_MAX: Duration = Duration::from_secs(180);

/// `VmRSS` and `VmHWM` of process `pid`, in MiB.
fn memory(pid: u32) -> (f64, f64) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .map_or(0.0, |kib| kib as f64 / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Waits until serve's resident memory has not moved by more than 1 MiB for `FLAT`.
async fn settle(pid: u32) {
    let start = Instant::now();
    let mut last = memory(pid).0;
    let mut flat_since = Instant::now();
    while start.elapsed() < SETTLE_MAX {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = memory(pid).0;
        if (now - last).abs() > 1.0 {
            flat_since = Instant::now();
            last = now;
        } else if flat_since.elapsed() >= FLAT {
            return;
        }
    }
}

fn event(i: usize, message: String) -> serde_json::Value {
    json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": format!("restore-1.flood{i:06}"), "namespace": "tenant-flood"},
        "involvedObject": {"kind": "RestoreJob", "namespace": "tenant-flood", "name": "restore-1"},
        "reason": "Flood", "type": "Normal", "message": message,
        "lastTimestamp": jiff::Timestamp::now().to_string(),
    })
}

pub async fn run(serve_bin: Option<PathBuf>, small: usize) -> anyhow::Result<i32> {
    let sim = Sim::start(SimConfig {
        controller_manager: false,
        ..SimConfig::default()
    })
    .await?;
    let info = Kind::RestoreJob.info();
    for obj in [
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tenant-flood"}}),
        json!({"apiVersion": info.api_version(), "kind": info.api_kind,
               "metadata": {"name": "restore-1", "namespace": "tenant-flood"},
               "spec": {"backupRef": {"name": "backup-1"}}}),
    ] {
        sim.store()
            .put(obj)
            .map_err(|e| anyhow::anyhow!("{}", e.message))?;
    }
    let dir = std::env::temp_dir().join(format!("restorewatch-flood-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let kubeconfig = dir.join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig, None)?;
    let bin = match serve_bin {
        Some(b) => b,
        None => std::env::current_exe().context("finding the running executable")?,
    };
    let mut serve = super::Reaped(
        Command::new(&bin)
            .args(["serve", "-A", "--listen", "127.0.0.1:0", "--kubeconfig"])
            .arg(&kubeconfig)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {} serve", bin.display()))?,
    );
    let pid = serve.0.id();
    let stderr = serve.0.stderr.take().context("serve's stderr")?;
    let mut lines = BufReader::new(stderr).lines();
    for line in lines.by_ref() {
        if line?.contains("listening on") {
            break;
        }
    }
    // Keep draining so serve never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    settle(pid).await;
    let before = memory(pid);
    eprintln!("bench: event flood: serve (pid {pid}) settled; flooding");
    for i in 0..LARGE + small {
        let message = if i < LARGE {
            format!("{i:07} ").repeat(LARGE_BYTES / 8)
        } else {
            format!("small event {i}")
        };
        sim.store()
            .put(event(i, message))
            .map_err(|e| anyhow::anyhow!("{}", e.message))?;
        // Let serve's watch keep up: the emulator's watch buffer holds 1,000 changes, and a
        // watch that falls further behind is ended and relisted, which measures the relist.
        if i % 20 == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    settle(pid).await;
    let after = memory(pid);
    println!(
        "event flood on {}: {LARGE} Events of {} KiB and {small} small ones about one RestoreJob",
        bin.display(),
        LARGE_BYTES >> 10
    );
    println!(
        "  before the flood: RSS {:.1} MiB, peak RSS {:.1} MiB",
        before.0, before.1
    );
    println!(
        "  after the flood:  RSS {:.1} MiB, peak RSS {:.1} MiB",
        after.0, after.1
    );
    drop(serve);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(0)
}
