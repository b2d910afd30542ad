//! `restorewatch sim ...`: run the emulator from the command line.

use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};

use crate::sim::auth::Policy;
use crate::sim::faults::{FAULT_SPEC_HELP, FaultSpec};
use crate::sim::load::read_dump;
use crate::sim::scenario::Scenario;
use crate::sim::{Sim, SimConfig};

// Parsed once per process: the size of the `Serve` variant costs nothing worth a Box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Subcommand)]
pub enum SimCommand {
    /// Serve the Kubernetes API emulator on 127.0.0.1 until Ctrl-C or SIGTERM.
    Serve(ServeArgs),
    /// List the built-in scenarios.
    List,
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Port on 127.0.0.1 (0 = any free port).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Scenario to play: a built-in name (see `sim list`) or a file. Repeatable.
    #[arg(long = "scenario", value_name = "NAME|FILE")]
    pub scenarios: Vec<String>,
    /// Objects to load before serving: kubectl dumps (a List, single objects, multi-document
    /// YAML or JSON). uid, resourceVersion, timestamps and status are kept. Repeatable.
    #[arg(long = "load", value_name = "FILE")]
    pub loads: Vec<PathBuf>,
    /// Divides scenario step offsets (10 = ten times faster).
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    #[arg(long, value_name = "SPEC", help = FAULT_SPEC_HELP)]
    pub faults: Option<String>,
    /// Where to write the kubeconfig for the emulator (cluster and context `restorewatch-sim`);
    /// default: `$TMPDIR/restorewatch-sim-PORT.kubeconfig`.
    #[arg(long, value_name = "FILE")]
    pub write_kubeconfig: Option<PathBuf>,
    /// Require bearer tokens: TOKEN=POLICY, where POLICY is `admin`, `readonly` or a YAML file
    /// `{user: NAME, rules: [{verbs: [...], resources: [...], namespaces: [...]}]}`. The first
    /// token goes into the written kubeconfig. Repeatable.
    #[arg(long = "token", value_name = "TOKEN=POLICY")]
    pub tokens: Vec<String>,
    /// Policy for requests without a token (user `system:anonymous`): `admin`, `readonly` or
    /// a policy file. kubectl sends no token to an http:// server, so this is how kubectl is
    /// given limited rights.
    #[arg(long, value_name = "POLICY")]
    pub anonymous: Option<String>,
    /// Do not run the simulated kube-controller-manager: no protection finalizers removed, no
    /// garbage collection, no PV binding.
    #[arg(long)]
    pub no_controller_manager: bool,
    /// How long the PV binder waits before retrying a claim whose volume is bound to another
    /// claim (a real cluster's resync, ~15 s): `15s`, `500ms`.
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = parse_resync)]
    pub pv_resync: std::time::Duration,
    /// How often a watch that asks for bookmarks (`allowWatchBookmarks=true`) gets one, with
    /// the current resourceVersion; it also gets one 2 s before its `timeoutSeconds`. A real
    /// kube-apiserver sends them about once a minute.
    #[arg(long, value_name = "DURATION", default_value = "1m", value_parser = parse_duration)]
    pub bookmark_interval: std::time::Duration,
    /// A watch without `timeoutSeconds` ends after a random time between this and twice this,
    /// as with kube-apiserver's `--min-request-timeout` (1800 s by default).
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = parse_duration)]
    pub min_request_timeout: std::time::Duration,
}

fn parse_resync(s: &str) -> Result<std::time::Duration, String> {
    crate::sim::clock::parse_duration(s)
        .ok_or_else(|| format!("{s:?} is not a duration (15s, 500ms)"))
}

/// A duration that cannot be 0: a bookmark every 0 s or a watch ended at once is no server.
fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    crate::sim::clock::parse_duration(s)
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("{s:?} is not a positive duration (30s, 500ms, 1m)"))
}

fn parse_token(spec: &str) -> anyhow::Result<(String, Policy)> {
    let (token, policy) = spec
        .split_once('=')
        .filter(|(t, p)| !t.is_empty() && !p.is_empty())
        .with_context(|| format!("--token {spec:?}: expected TOKEN=POLICY"))?;
    Ok((token.to_string(), load_policy(policy)?))
}

fn load_policy(name_or_file: &str) -> anyhow::Result<Policy> {
    match Policy::builtin(name_or_file) {
        Some(p) => Ok(p),
        None => {
            let text = std::fs::read_to_string(name_or_file)
                .with_context(|| format!("reading policy file {name_or_file}"))?;
            Policy::parse(&text).with_context(|| format!("policy file {name_or_file}"))
        }
    }
}

/// Runs a `sim` subcommand; the result is the process exit status.
pub async fn run(cmd: SimCommand) -> anyhow::Result<i32> {
    match cmd {
        SimCommand::List => {
            for s in Scenario::builtin()? {
                println!("{:<24} {}", s.name, s.description);
            }
            Ok(0)
        }
        SimCommand::Serve(args) => serve(args).await,
    }
}

async fn serve(args: ServeArgs) -> anyhow::Result<i32> {
    // Listen before anything is announced: a signal sent as soon as the URL is printed must
    // end the server, not kill it half-way.
    let signals = Signals::install()?;
    let faults: FaultSpec = match &args.faults {
        Some(s) => s
            .parse()
            .map_err(|e: String| anyhow::anyhow!("--faults: {e}"))?,
        None => FaultSpec::default(),
    };
    let mut tokens = HashMap::new();
    let mut first_token = None;
    for t in &args.tokens {
        let (token, policy) = parse_token(t)?;
        first_token.get_or_insert_with(|| token.clone());
        tokens.insert(token, policy);
    }
    let anonymous = args.anonymous.as_deref().map(load_policy).transpose()?;
    let scenarios = args
        .scenarios
        .iter()
        .map(|s| Scenario::load(s))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut loaded = Vec::new();
    for path in &args.loads {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let dump = read_dump(&bytes, &path.display().to_string());
        for p in &dump.problems {
            crate::say_err!("restorewatch sim: {p}; the rest is loaded");
        }
        loaded.push((path.clone(), dump.values));
    }
    if !(args.speed.is_finite() && args.speed > 0.0) {
        bail!("--speed must be a positive number");
    }
    let sim = Sim::start(SimConfig {
        port: args.port,
        tokens,
        anonymous,
        faults,
        controller_manager: !args.no_controller_manager,
        pv_resync: args.pv_resync,
        bookmark_interval: args.bookmark_interval,
        min_request_timeout: args.min_request_timeout,
        ..SimConfig::default()
    })
    .await?;
    for (path, objs) in loaded {
        let total = objs.len();
        let mut skipped = 0;
        // Deployments are served apart from the store (only the backup controller's matters).
        let (deployments, objs): (Vec<_>, Vec<_>) = objs
            .into_iter()
            .partition(|o| o["apiVersion"] == "apps/v1" && o["kind"] == "Deployment");
        for d in deployments {
            if let Err(e) = sim.deployments().put(d) {
                skipped += 1;
                tracing::warn!("{}: skipped a Deployment: {e}", path.display());
            }
        }
        for r in sim.store().load_all(objs) {
            if let Err(e) = r {
                skipped += 1;
                tracing::warn!("{}: skipped an object: {}", path.display(), e.message);
            }
        }
        eprintln!(
            "loaded {} of {total} objects from {} ({skipped} skipped: unknown kinds or no name)",
            total - skipped,
            path.display()
        );
    }
    let orphans = sim.store().orphans();
    if !orphans.is_empty() && !args.no_controller_manager {
        eprintln!(
            "{} loaded objects name owners that are not loaded (first: {}); the garbage collector deletes them, as a real cluster would (--no-controller-manager keeps them)",
            orphans.len(),
            orphans[0]
        );
    }
    let runs: Vec<_> = scenarios
        .into_iter()
        .map(|s| {
            eprintln!("playing scenario {} at speed {}", s.name, args.speed);
            sim.play(s, args.speed)
        })
        .collect();
    for r in &runs {
        // Say when a scenario blocks on a `wait` (a demo waiting for the operator's repair).
        let r = r.clone();
        tokio::spawn(async move {
            let st = r.settled().await;
            if let Some(w) = st.waiting {
                eprintln!("scenario {}: {w}", st.name);
            }
        });
    }
    say(&format!("restorewatch sim serving on {}", sim.url()));
    let path = args.write_kubeconfig.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("restorewatch-sim-{}.kubeconfig", sim.port()))
    });
    sim.write_kubeconfig(&path, first_token.as_deref())?;
    let abs = std::path::absolute(&path).unwrap_or(path);
    say(&format!("kubeconfig written to {}", abs.display()));
    say(&format!("export KUBECONFIG={}", abs.display()));
    signals.wait().await;
    for r in &runs {
        let st = r.status();
        for e in &st.errors {
            eprintln!("scenario {}: {e}", st.name);
        }
    }
    sim.shutdown().await;
    Ok(0)
}

/// A line on stdout. A reader that went away (`sim serve | head -1`) must not end the server:
/// the write error is ignored where `println!` would panic.
fn say(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|_| out.flush());
}

/// SIGTERM and SIGINT (Ctrl-C): either ends `sim serve`.
struct Signals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
}

impl Signals {
    fn install() -> anyhow::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Signals {
                term: signal(SignalKind::terminate()).context("listening for SIGTERM")?,
                int: signal(SignalKind::interrupt()).context("listening for SIGINT")?,
            })
        }
        #[cfg(not(unix))]
        Ok(Signals {})
    }

    async fn wait(mut self) {
        #[cfg(unix)]
        tokio::select! {
            _ = self.term.recv() => {}
            _ = self.int.recv() => {}
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use std::time::Duration;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        serve: ServeArgs,
    }

    #[test]
    fn serve_defaults_to_a_real_servers_bookmarks_and_watch_timeout() {
        let d = Cmd::try_parse_from(["serve"]).expect("no flags").serve;
        assert_eq!(d.bookmark_interval, Duration::from_secs(60));
        assert_eq!(d.min_request_timeout, Duration::from_secs(1800));
        assert_eq!(d.bookmark_interval, crate::sim::DEFAULT_BOOKMARK_INTERVAL);
        assert_eq!(
            d.min_request_timeout,
            crate::sim::DEFAULT_MIN_REQUEST_TIMEOUT
        );
        let s = Cmd::try_parse_from(["serve", "--bookmark-interval", "500ms"])
            .expect("a short interval for tests")
            .serve;
        assert_eq!(s.bookmark_interval, Duration::from_millis(500));
        for bad in ["0s", "soon", "1e30s"] {
            assert!(
                Cmd::try_parse_from(["serve", "--bookmark-interval", bad]).is_err(),
                "{bad}"
            );
        }
    }
}
