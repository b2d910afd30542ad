//! `restorewatch-bench`: the same benchmark as `restorewatch bench`, as its own binary, so that
//! tests and scripts can run it whatever subcommands the main binary has.

use clap::Parser;
use restorewatch::bench::{BenchArgs, run};

#[derive(Debug, Parser)]
#[command(
    name = "restorewatch-bench",
    about = "Measure the live dashboard on emulated clusters of N objects, next to kubectl"
)]
struct Cli {
    #[command(flatten)]
    args: BenchArgs,
}

fn main() {
    // Measured as the shipped binary runs: the same allocator settings, set before any thread
    // (not in the emulator's role, as `restorewatch sim` runs without them).
    restorewatch::malloc_tuning::apply_for_this_process();
    let cli = Cli::parse();
    // Its measured worker runs on the runtime the dashboard has.
    let role = std::env::var_os(restorewatch::bench::ROLE_ENV);
    let workers = restorewatch::runtime::workers(false, role.as_deref());
    restorewatch::runtime::build_or_exit(workers).block_on(run_bench(cli));
}

async fn run_bench(cli: Cli) {
    let code = match run(cli.args).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("restorewatch-bench: {e:#}");
            2
        }
    };
    std::process::exit(code);
}
