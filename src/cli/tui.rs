//! The dashboard command (the default when no subcommand is given).

use crate::analysis::Settings;
use crate::args::ClusterArgs;
use crate::config::{self, Config};
use crate::ui::keys::Keymap;
use crate::ui::theme::Theme;
use crate::ui::{UiOptions, run_tui};
use anyhow::Context;
use clap::Args;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, Args, Default)]
pub struct TuiArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Show no actions at all
    #[arg(long)]
    pub readonly: bool,
    /// Colour theme: default, light, high-contrast, solarized-dark, or a path to a .toml file
    #[arg(long, value_name = "NAME|FILE")]
    pub theme: Option<String>,
    /// Open the dashboard on kubectl dumps instead of a cluster (read-only)
    #[arg(long = "snapshot", value_name = "FILE")]
    pub snapshots: Vec<PathBuf>,
    /// With --snapshot: judge ages, stalls and deadlines as of this time (RFC3339), e.g. when
    /// the dump was taken
    #[arg(long, value_name = "RFC3339", requires = "snapshots", value_parser = crate::args::parse_time)]
    pub now: Option<jiff::Timestamp>,
    /// With --snapshot: refuse a file (or stdin) larger than this, e.g. 4GiB [default: 1GiB]
    #[arg(long, value_name = "SIZE", requires = "snapshots", value_parser = crate::cluster::input::parse_size)]
    pub max_input: Option<u64>,
}

/// Everything about a session that does not depend on where the data comes from.
pub fn ui_options(args: &TuiArgs, config: &Config) -> anyhow::Result<UiOptions> {
    let color = Theme::color_allowed();
    let theme = match args.theme.as_ref().or(config.theme.as_ref()) {
        Some(spec) => Theme::load(spec, config::config_dir().as_deref(), color)?,
        None => Theme::builtin(color),
    };
    let keymap = Keymap::with_overrides(&config.key_overrides())
        .map_err(|e| anyhow::anyhow!("config: {e}"))?;
    Ok(UiOptions {
        readonly: args.readonly || config.readonly.unwrap_or(false),
        // Only a live session has a client to act through (`run_live` sets it).
        actions: None,
        theme,
        keymap,
        source_label: None,
        namespace: args.cluster.namespace.clone(),
        log_path: None,
        notice: None,
        tz: jiff::tz::TimeZone::system(),
        clock_offset: jiff::SignedDuration::ZERO,
        connecting_to: None,
        context: None,
        contexts: Vec::new(),
        reports_dir: None,
    })
}

pub async fn run(args: TuiArgs) -> anyhow::Result<i32> {
    let config = Config::load()?;
    let mut opts = ui_options(&args, &config)?;
    if !std::io::stdout().is_terminal() {
        anyhow::bail!("the dashboard needs a terminal; use `restorewatch check` for scripts");
    }
    // A log that cannot be opened must not stop the dashboard; it only loses the log.
    opts.log_path = crate::logging::init().ok();
    let mut settings = Settings::default();
    if let Some(d) = config.stall_after().context("config")? {
        settings.stall_after = d;
    }
    if args.snapshots.is_empty() {
        return run_live(&args, opts, settings).await;
    }
    let (snapshot, problems) = crate::cluster::static_source::load_files_limited(
        &args.snapshots,
        args.max_input
            .unwrap_or(crate::cluster::input::DEFAULT_MAX_INPUT),
    )?;
    for p in &problems {
        tracing::warn!("{p}");
    }
    if !problems.is_empty() {
        opts.notice = Some(format!(
            "{} document(s) could not be read; they are listed on exit and in the log",
            problems.len()
        ));
    }
    tracing::info!(files = ?args.snapshots, objects = snapshot.objects.total(), "snapshot loaded");
    // Dumps are not a cluster: with no client, `a` says actions are unavailable and why.
    opts.actions = None;
    let offset = args
        .now
        .map(|t| t.duration_since(jiff::Timestamp::now()))
        .unwrap_or(jiff::SignedDuration::ZERO);
    opts.clock_offset = offset;
    let frames =
        crate::pipeline::still::spawn_at(snapshot, settings, Duration::from_secs(1), offset);
    run_tui(frames, opts).await?;
    if !problems.is_empty() {
        crate::say_err!(
            "restorewatch: {} document(s) could not be read:",
            problems.len()
        );
        for p in &problems {
            crate::say_err!("  {p}");
        }
    }
    Ok(super::exit::OK)
}

/// The dashboard on a cluster: the live watch layer hands over frames; the UI never waits on
/// the API. Unless `--readonly`, the action worker gets the same client, and the user and
/// context for the audit. `:ctx` reconnects through the same `Connector`.
async fn run_live(args: &TuiArgs, mut opts: UiOptions, settings: Settings) -> anyhow::Result<i32> {
    let connector = crate::ui::context::Connector {
        kubeconfig: args.cluster.kubeconfig.clone(),
        namespace: if args.cluster.all_namespaces {
            None
        } else {
            args.cluster.namespace.clone()
        },
        settings,
        readonly: opts.readonly,
        timeouts: args.cluster.timeouts(),
    };
    // The terminal is not the dashboard's yet: a Ctrl-C reaches restorewatch but not an exec
    // credential plugin (its own process group), so the signal ends the wait, and the dropped
    // wait the plugin.
    let session = tokio::select! {
        s = connector.connect(args.cluster.context.as_deref()) => s?,
        signo = crate::cluster::exec_plugin::termination_signal() => {
            return Err(crate::ui::run::EndedBySignal(signo).into());
        }
    };
    // A kubeconfig that reads once reads again; if not, `:ctx` only offers no completion.
    opts.contexts = connector.contexts().unwrap_or_default();
    opts.context = Some(session.context.clone());
    opts.connecting_to = Some(format!("{} (context {})", session.server, session.context));
    opts.actions = session.backend.clone();
    crate::ui::run::run_tui_live(session, connector, opts).await?;
    Ok(super::exit::OK)
}
