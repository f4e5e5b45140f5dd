//! Writes the `counterfoil` CLI's man page and shell completions, generated
//! from its clap definitions (the same `cli.rs` the binary parses with), for
//! the Debian package (`./scripts/package`).
//!
//! Usage: `counterfoil-docs OUT_DIR` → `OUT_DIR/counterfoil.1` (and one page
//! per command, `counterfoil-series.1`, …) and
//! `OUT_DIR/completions/{counterfoil.bash,_counterfoil,counterfoil.fish}`.

#[allow(dead_code)]
#[path = "../cli.rs"]
mod cli;

use std::path::PathBuf;

use clap::CommandFactory;
use clap_complete::Shell;

fn main() -> anyhow::Result<()> {
    let Some(out) = std::env::args().nth(1).map(PathBuf::from) else {
        anyhow::bail!("usage: counterfoil-docs OUT_DIR");
    };
    std::fs::create_dir_all(out.join("completions"))?;
    let cmd = cli::Cli::command();
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut page)?;
    std::fs::write(out.join("counterfoil.1"), page)?;
    for sub in cmd.get_subcommands() {
        // clap names are 'static; this short-lived generator leaks a few bytes.
        let name: &'static str =
            Box::leak(format!("counterfoil-{}", sub.get_name()).into_boxed_str());
        let mut rendered = Vec::new();
        clap_mangen::Man::new(sub.clone().name(name)).render(&mut rendered)?;
        std::fs::write(out.join(format!("{name}.1")), rendered)?;
    }
    for (shell, file) in [
        (Shell::Bash, "counterfoil.bash"),
        (Shell::Zsh, "_counterfoil"),
        (Shell::Fish, "counterfoil.fish"),
    ] {
        let mut buf = Vec::new();
        clap_complete::generate(shell, &mut cli::Cli::command(), "counterfoil", &mut buf);
        std::fs::write(out.join("completions").join(file), buf)?;
    }
    Ok(())
}
