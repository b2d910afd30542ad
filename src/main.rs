use clap::Parser;
use restorewatch::cli::{Cli, Command, exit};
use restorewatch::cluster::exec_plugin;

fn main() {
    // Before the runtime's threads exist: glibc reads the arena limit only once.
    restorewatch::malloc_tuning::apply_for_this_process();
    let cli = Cli::parse();
    let role = std::env::var_os(restorewatch::bench::ROLE_ENV);
    let follows_changes = matches!(cli.command, None | Some(Command::Serve(_)));
    let workers = restorewatch::runtime::workers(follows_changes, role.as_deref());
    restorewatch::runtime::build_or_exit(workers).block_on(run(cli));
}

async fn run(cli: Cli) {
    let result = match cli.command {
        Some(Command::Check(args)) => interruptible(restorewatch::cli::check::run(args)).await,
        Some(Command::Report(args)) => interruptible(restorewatch::cli::report::run(args)).await,
        Some(Command::Action(args)) => interruptible(restorewatch::cli::action::run(args)).await,
        Some(Command::Preflight(args)) => {
            interruptible(restorewatch::cli::preflight::run(args)).await
        }
        Some(Command::Demo(args)) => restorewatch::cli::demo::run(args).await,
        Some(Command::Serve(args)) => restorewatch::serve::run(args).await,
        Some(Command::Bench(args)) => restorewatch::bench::run(args).await,
        Some(Command::Completions { shell }) => restorewatch::cli::completions::run(shell),
        Some(Command::Sim(cmd)) => restorewatch::sim::cli::run(cmd).await,
        None => restorewatch::cli::tui::run(cli.tui).await,
    };
    let code = match result {
        Ok(code) => code,
        // The dashboard has already put the terminal back; exit as the signal would have.
        Err(ref e) if let Some(s) = e.downcast_ref::<restorewatch::ui::run::EndedBySignal>() => {
            s.exit_status()
        }
        Err(e) => {
            restorewatch::say_err!("restorewatch: {e:#}");
            exit::USAGE
        }
    };
    // No exec credential plugin outlives restorewatch, whatever path ended it.
    exec_plugin::kill_all();
    std::process::exit(code);
}

/// A command that has no signal handlers of its own: a signal ends it as it would have (exit
/// 128 + the signal), after the exec credential plugin it may be waiting for is killed (the
/// plugin runs in its own process group, which a terminal's Ctrl-C does not reach).
async fn interruptible(
    command: impl std::future::Future<Output = anyhow::Result<i32>>,
) -> anyhow::Result<i32> {
    tokio::select! {
        r = command => r,
        signo = exec_plugin::termination_signal() => Ok(128 + signo),
    }
}
