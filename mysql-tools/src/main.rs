//! `counterfoil`: the command line of Counterfoil.
//!
//! Contract: results on stdout (text, or JSON with `--json`); errors as one
//! line on stderr; exit 0 ok, 1 findings (audit/verify), 2 error.

mod cli;
mod series_cmd;

use clap::Parser;

/// How a command ended.
pub enum Outcome {
    /// Done, nothing to report.
    Ok,
}

fn main() {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => match e.kind() {
            clap::error::ErrorKind::DisplayHelp
            | clap::error::ErrorKind::DisplayVersion
            | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
            _ => {
                let rendered = e.to_string();
                let line = rendered.lines().next().unwrap_or("invalid arguments");
                eprintln!("counterfoil: {}", line.trim_start_matches("error: "));
                std::process::exit(2);
            }
        },
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("counterfoil: error: cannot start the runtime: {e}");
            std::process::exit(2);
        }
    };
    let result = rt.block_on(async {
        match cli.command {
            cli::Command::Series(cmd) => series_cmd::run(&cli.global, cmd).await,
        }
    });
    match result {
        Ok(Outcome::Ok) => std::process::exit(0),
        Err(e) => {
            eprintln!("counterfoil: error: {e:#}");
            std::process::exit(2);
        }
    }
}
