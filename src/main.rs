use clap::Parser;
use restorewatch::cli::{Cli, Command, exit};

fn main() {
    // Before the runtime's threads exist: glibc reads the arena limit only once.
    restorewatch::malloc_tuning::apply();
    run();
}

#[tokio::main]
async fn run() {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Check(args)) => restorewatch::cli::check::run(args).await,
        Some(Command::Report(args)) => restorewatch::cli::report::run(args).await,
        Some(Command::Action(args)) => restorewatch::cli::action::run(args).await,
        Some(Command::Preflight(args)) => restorewatch::cli::preflight::run(args).await,
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
    std::process::exit(code);
}
