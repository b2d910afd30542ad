//! kubectl on the same server, the yardstick for every figure: the wall time and memory of
//! `kubectl get pvc,pv -A -o json`, and how soon `kubectl get pvc -A -w` prints a written change.

use super::worker::percentile;
use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// kubectl's figures for one run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct KubectlResult {
    pub list_s: f64,
    /// Max RSS of `kubectl get pvc,pv -A -o json` (from `/usr/bin/time`), when measurable.
    pub list_rss: Option<u64>,
    /// `kubectl get` of every kind the cluster holds that restorewatch reads (generated
    /// clusters): the same objects restorewatch lists, Events and custom resources included.
    #[serde(default)]
    pub list_same_s: Option<f64>,
    #[serde(default)]
    pub list_same_kinds: Option<String>,
    /// `None` when no writes were made (an existing cluster without `--writes-namespace`).
    pub watch_p50_ms: Option<f64>,
    pub watch_p99_ms: Option<f64>,
    pub watch_seen: usize,
    /// The p99 of each 200 writes (`writes::block_p99s`), with 400 writes or more.
    #[serde(default)]
    pub watch_p99_blocks_ms: Vec<f64>,
    /// Where kubectl's true p99 lies (`writes::Interval`).
    #[serde(default)]
    pub watch_p99_interval: Option<super::writes::Interval>,
    /// What kubectl's writes held (`core_wait`).
    #[serde(default)]
    pub watch_held: super::core_wait::Held,
    /// The series set aside for stolen time (`retake`).
    #[serde(default)]
    pub watch_retakes: super::retake::Retakes,
}

/// The kubectl binary and the arguments that point it at the server.
pub struct Kubectl {
    pub bin: String,
    pub conn: Vec<OsString>,
}

impl Kubectl {
    fn command(&self) -> Command {
        let mut c = Command::new(&self.bin);
        c.args(&self.conn);
        c
    }

    /// Whether this kubectl can be run at all.
    pub fn available(bin: &str) -> bool {
        Command::new(bin)
            .args(["version", "--client"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// `kubectl get pvc,pv -A -o json`, three times: median wall time and max RSS.
    pub fn list(&self) -> anyhow::Result<(f64, Option<u64>)> {
        self.list_of("pvc,pv")
    }

    /// `kubectl get RESOURCES -A -o json` (comma-separated), three times: median wall time and
    /// max RSS.
    pub fn list_of(&self, resources: &str) -> anyhow::Result<(f64, Option<u64>)> {
        let time = Path::new("/usr/bin/time");
        let mut walls = Vec::new();
        let mut rsss = Vec::new();
        for _ in 0..3 {
            let mut c = if time.exists() {
                let mut c = Command::new(time);
                c.args(["-f", "BENCH-MAXRSS %M"])
                    .arg(&self.bin)
                    .args(&self.conn);
                c
            } else {
                self.command()
            };
            c.args(["get", resources, "-A", "-o", "json"])
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

    /// The kubectl resource names (`plural.group`) of the kinds among `objects`, in the order
    /// restorewatch knows them.
    pub fn resources_of(objects: &[serde_json::Value]) -> String {
        let mut present = std::collections::BTreeSet::new();
        for o in objects {
            let (Some(api), Some(kind)) = (o["apiVersion"].as_str(), o["kind"].as_str()) else {
                continue;
            };
            if let Some(k) = crate::model::Kind::from_api(api, kind) {
                present.insert(k);
            }
        }
        present
            .into_iter()
            .map(|k| {
                let i = k.info();
                if i.group.is_empty() {
                    i.plural.to_string()
                } else {
                    format!("{}.{}", i.plural, i.group)
                }
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// `kubectl get pvc -A -w` (narrowed by `field_selector` when given): after its `initial`
    /// lines, each write is timed until kubectl prints the PVC's line: `seen`, `p50_ms`,
    /// `p99_ms` and `p99_blocks_ms` of the result are set.
    /// `server_pid`: the emulator, whose threads carry each write as kubectl's do
    /// (`core_wait`).
    /// Each series taken as `--retake-stolen` says, with a kubectl -w of its own.
    pub async fn watch(
        &self,
        client: &kube::Client,
        field_selector: Option<&str>,
        initial: usize,
        series: super::writes::Series<'_>,
        server_pid: Option<u32>,
    ) -> anyhow::Result<(super::writes::WriteTimes, super::retake::Retakes)> {
        let mut retaking = series.retaking();
        loop {
            let watching = self.start_watch(field_selector, initial).await?;
            // The wait for a quiet machine comes once kubectl has listed, right before the
            // writes, as it does for the other readers.
            let attempt = retaking.next_attempt().await;
            let tag = super::retake::tag_of(series.tag, attempt);
            let w = time_watched(
                watching,
                client,
                (series.targets, series.writes, &tag),
                server_pid,
            )
            .await?;
            if let Some(w) = retaking.keep(w) {
                return Ok((w, retaking.retakes()));
            }
        }
    }

    /// Starts `kubectl get pvc -A -w --no-headers` and waits for its `initial` lines (the
    /// listing), so that every line after is a change it was sent.
    pub async fn start_watch(
        &self,
        field_selector: Option<&str>,
        initial: usize,
    ) -> anyhow::Result<Watching> {
        let mut c = self.command();
        c.args(["get", "pvc", "-A", "-w", "--no-headers"]);
        if let Some(f) = field_selector {
            c.args(["--field-selector", f]);
        }
        let mut child = super::Reaped(
            c.stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .context("starting kubectl -w")?,
        );
        let stdout = child.0.stdout.take().context("kubectl stdout")?;
        let (tx, mut lines) = tokio::sync::mpsc::unbounded_channel::<(Instant, String)>();
        // Stamped as each line is read, on a thread of its own: what kubectl printed when.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send((Instant::now(), line)).is_err() {
                    break;
                }
            }
        });
        let listed = tokio::time::timeout(Duration::from_secs(600), async {
            let mut n = 0;
            while n < initial {
                lines.recv().await?;
                n += 1;
            }
            Some(())
        })
        .await;
        if !matches!(listed, Ok(Some(()))) {
            bail!("kubectl -w did not print the {initial} PVCs");
        }
        Ok(Watching { child, lines })
    }
}

/// A running `kubectl get pvc -A -w`, past its listing: its lines as they are printed.
pub struct Watching {
    child: super::Reaped,
    lines: tokio::sync::mpsc::UnboundedReceiver<(Instant, String)>,
}

impl Watching {
    /// kubectl's process id.
    pub fn pid(&self) -> Option<u32> {
        Some(self.child.0.id())
    }

    /// Forgets what was printed so far (before the next write is sent).
    pub fn skip_printed(&mut self) {
        while self.lines.try_recv().is_ok() {}
    }

    /// When kubectl printed the next line about PVC `ns/name`; `None` after `timeout` or if
    /// kubectl ended.
    pub async fn printed(&mut self, ns: &str, name: &str, timeout: Duration) -> Option<Instant> {
        let seen = tokio::time::timeout(timeout, async {
            while let Some((at, line)) = self.lines.recv().await {
                let mut cols = line.split_whitespace();
                if cols.next() == Some(ns) && cols.next() == Some(name) {
                    return Some(at);
                }
            }
            None
        })
        .await;
        seen.ok().flatten()
    }
}

/// One series of writes timed until `watching` (kubectl -w past its listing) prints each:
/// (targets, writes, tag) as `writes::Series` has them.
async fn time_watched(
    mut watching: Watching,
    client: &kube::Client,
    (targets, writes, tag): (&[(String, String)], usize, &str),
    server_pid: Option<u32>,
) -> anyhow::Result<super::writes::WriteTimes> {
    // This process writes and stamps kubectl's lines; kubectl reads the watch.
    let carriers = super::core_wait::Carriers::new(watching.pid(), &[None, server_pid]);
    let mut lat = Vec::new();
    let mut held = Vec::new();
    let mut lost = 0;
    for i in 0..writes {
        let Some((ns, name)) = targets.get(i % targets.len().max(1)) else {
            break;
        };
        watching.skip_printed();
        let before = super::core_wait::Sample::before(&carriers);
        let t0 = Instant::now();
        super::writes::patch_annotation(
            client,
            ns,
            name,
            "bench.restorewatch.io/kubectl-seq",
            &format!("{tag}{i}"),
        )
        .await?;
        // A write kubectl never prints in time is lost, as the other readers count theirs.
        if let Some(at) = watching
            .printed(ns, name, super::writes::WRITE_TIMEOUT)
            .await
        {
            let took = at.duration_since(t0).as_secs_f64() * 1000.0;
            let spent = super::core_wait::Sample::after(&carriers).since(&before);
            held.push((took, spent));
            lat.push(took);
        } else {
            lost += 1;
        }
        tokio::time::sleep(Duration::from_millis(20 + (i as u64 * 7) % 31)).await;
    }
    let p99_blocks_ms = super::writes::block_p99s(&lat);
    lat.sort_by(f64::total_cmp);
    Ok(super::writes::WriteTimes {
        held: super::core_wait::Held::of(&held),
        seen: lat.len(),
        lost,
        p50_ms: percentile(&lat, 50.0),
        p99_ms: percentile(&lat, 99.0),
        p99_blocks_ms,
        p99_interval: super::writes::Interval::of_p99(&lat),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::Kubectl;
    use serde_json::json;

    #[test]
    fn the_same_objects_are_named_by_plural_and_group_once_per_kind() {
        let objects = vec![
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim"}),
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim"}),
            json!({"apiVersion": "v1", "kind": "Event"}),
            json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob"}),
            // Not a kind restorewatch reads: kubectl is not asked for it either.
            json!({"apiVersion": "v1", "kind": "ConfigMap"}),
            json!({"kind": "no apiVersion"}),
        ];
        let got = Kubectl::resources_of(&objects);
        let mut names: Vec<&str> = got.split(',').collect();
        names.sort();
        assert_eq!(
            names,
            [
                "events",
                "persistentvolumeclaims",
                "restorejobs.backups.cozystack.io"
            ]
        );
    }
}
