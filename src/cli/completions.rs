//! `restorewatch completions SHELL`: shell completion scripts from the same clap definition.

use clap::CommandFactory;
use clap_complete::Shell;

pub fn run(shell: Shell) -> anyhow::Result<i32> {
    let mut cmd = super::Cli::command();
    let name = cmd.get_name().to_string();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, name, &mut script);
    super::output::emit(&String::from_utf8_lossy(&script));
    Ok(super::exit::OK)
}
