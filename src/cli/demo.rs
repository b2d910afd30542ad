//! `restorewatch demo`: the real dashboard on a simulated Cozystack cluster. The emulator runs
//! in-process, plays restore scenarios over time, and the dashboard watches it through the
//! same kube client and watch layer it uses on a real cluster.

use super::tui::{TuiArgs, ui_options};
use crate::analysis::Settings;
use crate::config::Config;
use crate::sim::{Scenario, Sim, SimConfig};
use clap::Args;
use std::io::IsTerminal;

/// Played when no `--scenario` is given: healthy and broken VM and Postgres restores at once,
/// two of them waiting for the operator's repair.
pub const DEFAULT_SCENARIOS: &[&str] = &[
    "vm-healthy",
    "pg-healthy",
    "demo-rename-half-done",
    "demo-servername-reverted",
    "vm-rename-cache-race",
    "vm-reused-restore-name",
    "vm-orig-deleted-leak",
    "pg-deadline-near",
];

/// A built-in scenario moved into a namespace of its own (named after it, so the namespace
/// column says what is being shown) with UIDs and PV names of its own, so that several can
/// play side by side. Files given by path are played as written.
pub fn isolated(name: &str, slot: usize) -> anyhow::Result<Scenario> {
    let Some((_, text)) = crate::sim::scenario::BUILTIN
        .iter()
        .find(|(f, _)| f.strip_suffix(".yaml") == Some(name))
    else {
        return Scenario::load(name);
    };
    let ns: String = name.chars().take(63).collect();
    // Every built-in scenario spells its UUIDs ...-4000-8000-...: a slot number there keeps
    // them valid UUIDs and makes PV names and uid references unique per scenario.
    let text = text
        .replace("tenant-a", &ns)
        .replace("tenant-b", &ns)
        .replace("-4000-8000-", &format!("-4000-8{:03x}-", slot % 0x1000));
    Scenario::parse(&text).map_err(|e| anyhow::anyhow!("built-in scenario {name}: {e:#}"))
}

#[derive(Debug, Clone, Args)]
#[command(
    after_help = "The simulated cluster lives only as long as the demo. `restorewatch sim list` names the \
scenarios; `restorewatch sim serve --scenario NAME` serves one to kubectl and to `restorewatch --kubeconfig`."
)]
pub struct DemoArgs {
    /// Scenario to play: a built-in name (see `restorewatch sim list`) or a file; repeatable
    #[arg(long = "scenario", value_name = "NAME|FILE")]
    pub scenarios: Vec<String>,
    /// Play the scenarios this many times faster
    #[arg(long, default_value_t = 1.0, value_name = "X")]
    pub speed: f64,
    /// Show no actions
    #[arg(long)]
    pub readonly: bool,
    /// Colour theme: a name or a path to a .toml file
    #[arg(long, value_name = "NAME|FILE")]
    pub theme: Option<String>,
}

pub async fn run(args: DemoArgs) -> anyhow::Result<i32> {
    if !std::io::stdout().is_terminal() {
        anyhow::bail!(
            "the demo needs a terminal; for scripts use `restorewatch sim serve` and `restorewatch check`"
        );
    }
    if !(args.speed.is_finite() && args.speed > 0.0) {
        anyhow::bail!("--speed must be a positive number");
    }
    let names: Vec<String> = if args.scenarios.is_empty() {
        DEFAULT_SCENARIOS.iter().map(|s| s.to_string()).collect()
    } else {
        args.scenarios.clone()
    };
    let scenarios = names
        .iter()
        .enumerate()
        .map(|(i, n)| isolated(n, i + 1))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let config = Config::load()?;
    let tui_args = TuiArgs {
        readonly: args.readonly,
        theme: args.theme.clone(),
        ..TuiArgs::default()
    };
    let mut opts = ui_options(&tui_args, &config)?;
    opts.log_path = crate::logging::init().ok();
    let sim = Sim::start(SimConfig::default()).await?;
    let runs: Vec<_> = scenarios
        .into_iter()
        .map(|s| sim.play(s, args.speed))
        .collect();
    opts.source_label = Some(format!(
        "demo: simulated cluster playing {}",
        names.join(", ")
    ));
    let mut settings = Settings::default();
    if let Some(d) = config.stall_after()? {
        settings.stall_after = d;
    }
    if !args.readonly {
        opts.actions = Some(crate::ui::ActionBackend {
            client: sim.client()?,
            user: "demo-operator".into(),
            context: "restorewatch-demo".into(),
            server: sim.url(),
        });
    }
    let source = crate::pipeline::live::start(
        sim.client()?,
        crate::pipeline::live::LiveOptions {
            namespace: None,
            context: "restorewatch-demo".into(),
            cluster: sim.url(),
            settings,
        },
    );
    let result = crate::ui::run_tui(source.frames.clone(), opts).await;
    drop(source);
    for r in &runs {
        r.abort();
    }
    sim.shutdown().await;
    result.map(|()| super::exit::OK)
}
