//! Writes the `counterfoil` CLI's man page and shell completions, generated
//! from its clap definitions (the same `cli.rs` the binary parses with), for
//! the Debian package (`./scripts/package`).
//!
//! Usage: `counterfoil-docs OUT_DIR` → `OUT_DIR/counterfoil.1` (and one page
//! per command, `counterfoil-series.1`, …) and
//! `OUT_DIR/completions/{counterfoil.bash,_counterfoil,counterfoil.fish}`;
//! `counterfoil-docs --markdown` → every command and flag as Markdown on
//! stdout (the CLI part of docs/reference.md, `scripts/make-reference`).

#[allow(dead_code)]
#[path = "../cli.rs"]
mod cli;

use std::path::PathBuf;

use clap::CommandFactory;
use clap_complete::Shell;

fn main() -> anyhow::Result<()> {
    if std::env::args().nth(1).as_deref() == Some("--markdown") {
        let mut out = String::new();
        markdown(&cli::Cli::command(), "counterfoil", &mut out);
        print!("{out}");
        return Ok(());
    }
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

/// The CLI's commands and flags as Markdown, for docs/reference.md: one
/// heading per command (`counterfoil series init`), its description, and a
/// table of its flags and arguments with their help.
fn markdown(cmd: &clap::Command, path: &str, out: &mut String) {
    let level = "#".repeat((path.split(' ').count() + 2).min(6));
    out.push_str(&format!("{level} `{path}`\n\n"));
    if let Some(about) = cmd.get_long_about().or(cmd.get_about()) {
        out.push_str(&format!("{}\n\n", about.to_string().trim()));
    }
    let args: Vec<&clap::Arg> = cmd
        .get_arguments()
        .filter(|a| a.get_id() != "help" && a.get_id() != "version")
        .filter(|a| path == "counterfoil" || !a.is_global_set())
        .collect();
    if !args.is_empty() {
        out.push_str("| flag or argument | what it does |\n|---|---|\n");
        for a in args {
            let name = match a.get_long() {
                Some(long) => {
                    let takes = a.get_num_args().is_some_and(|n| n.takes_values())
                        || a.get_value_names().is_some();
                    let value = a
                        .get_value_names()
                        .and_then(|v| v.first())
                        .map(|v| v.to_string())
                        .unwrap_or_else(|| a.get_id().to_string().to_uppercase());
                    if takes && !matches!(a.get_action(), clap::ArgAction::SetTrue) {
                        format!("`--{long} <{value}>`")
                    } else {
                        format!("`--{long}`")
                    }
                }
                None => format!("`<{}>`", a.get_id().to_string().to_uppercase()),
            };
            let mut help = a
                .get_long_help()
                .or(a.get_help())
                .map(|h| h.to_string())
                .unwrap_or_default()
                .replace('\n', " ")
                .replace('|', "\\|");
            let defaults: Vec<String> = a
                .get_default_values()
                .iter()
                .map(|v| v.to_string_lossy().into_owned())
                .collect();
            if !defaults.is_empty() {
                help.push_str(&format!(" (default: `{}`)", defaults.join(",")));
            }
            if let Some(env) = a.get_env() {
                help.push_str(&format!(" (environment: `{}`)", env.to_string_lossy()));
            }
            out.push_str(&format!("| {name} | {} |\n", help.trim()));
        }
        out.push('\n');
    }
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        markdown(sub, &format!("{path} {}", sub.get_name()), out);
    }
}
