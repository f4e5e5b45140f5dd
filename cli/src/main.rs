//! `counterfoil`: the command line of Counterfoil.
//!
//! Contract: results on stdout (text, or JSON with `--json`); errors as one
//! line on stderr; exit 0 ok, 1 findings (audit/verify), 2 error. A
//! password given with `--database-url` (not `DATABASE_URL`) gets one
//! warning line on stderr first, never the password itself.

mod adopt_cmd;
mod adopt_pause;
mod adopt_wpo;
mod adopt_write;
mod audit_cmd;
mod awb_cmd;
mod chain_check;
mod chain_facts;
mod chain_merge;
mod chain_sql;
mod cli;
mod db;
mod export_cmd;
mod export_documents;
mod post_check;
mod series_cmd;
mod stress_cmd;
mod url_password;
mod verify_cmd;
mod verify_source;
mod woocommerce_cmd;

use clap::{CommandFactory, FromArgMatches};

/// How a command ended.
pub enum Outcome {
    /// Done, nothing to report (exit 0).
    Ok,
    /// Done, with findings (exit 1).
    Findings,
}

/// The database URL from --database-url or DATABASE_URL.
pub fn database_url(global: &cli::Global) -> anyhow::Result<String> {
    global.database_url.clone().ok_or_else(|| {
        anyhow::anyhow!(
            "no database: set DATABASE_URL=mysql://user:pass@host:port/db (or pass --database-url)"
        )
    })
}

fn main() {
    // As `Parser::try_parse`, keeping the matches: where the URL came from.
    let parsed = cli::Cli::command().try_get_matches().and_then(|m| {
        cli::Cli::from_arg_matches(&m)
            .map(|cli| (cli, m))
            .map_err(|e| e.format(&mut cli::Cli::command()))
    });
    let cli = match parsed {
        Ok((cli, matches)) => {
            // A password on the command line is readable by every user of
            // the machine (`ps`) and kept in the shell's history.
            let from_flag = matches.value_source("database_url")
                == Some(clap::parser::ValueSource::CommandLine);
            if from_flag
                && cli
                    .global
                    .database_url
                    .as_deref()
                    .is_some_and(url_password::carries_password)
            {
                eprintln!(
                    "counterfoil: warning: the password in --database-url can be read by other \
                     users of this machine (ps) and stays in the shell's history; pass the URL \
                     in the environment variable DATABASE_URL instead (docs/cli.md)"
                );
            }
            cli
        }
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
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("counterfoil: error: cannot start the runtime: {e}");
            std::process::exit(2);
        }
    };
    let wordpress_only = match &cli.command {
        cli::Command::Audit(_) => Some("audit"),
        cli::Command::Adopt(_) => Some("adopt"),
        _ => None,
    };
    if let (Some(command), Some(url)) = (wordpress_only, cli.global.database_url.as_deref()) {
        if counterfoil_core::Engine::of_url(url) == counterfoil_core::Engine::Postgres {
            eprintln!(
                "counterfoil: error: `counterfoil {command}` reads a WordPress site's MySQL/MariaDB \
                 database; it does not run on PostgreSQL yet (use `counterfoil series`, `stress`, \
                 `awb`, `verify` and `export` there)"
            );
            std::process::exit(2);
        }
    }
    let result = rt.block_on(async {
        match cli.command {
            cli::Command::Series(cmd) => series_cmd::run(&cli.global, cmd).await,
            cli::Command::Audit(site) => audit_cmd::run(&cli.global, &site).await,
            cli::Command::Adopt(args) if args.from == "wp-overnight" => {
                adopt_wpo::run(&cli.global, &args).await
            }
            cli::Command::Adopt(args) => adopt_cmd::run(&cli.global, &args).await,
            cli::Command::Verify(args) => verify_cmd::run(&cli.global, &args).await,
            cli::Command::Stress(args) => stress_cmd::run(&cli.global, &args).await,
            cli::Command::Awb(cmd) => awb_cmd::run(&cli.global, cmd).await,
            cli::Command::Export(args) => export_cmd::run(&cli.global, &args).await,
            cli::Command::Woocommerce(cmd) => woocommerce_cmd::run(&cli.global, cmd).await,
        }
    });
    match result {
        Ok(Outcome::Ok) => std::process::exit(0),
        Ok(Outcome::Findings) => std::process::exit(1),
        Err(e) => {
            eprintln!("counterfoil: error: {e:#}");
            std::process::exit(2);
        }
    }
}
