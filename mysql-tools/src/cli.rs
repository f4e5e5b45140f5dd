//! The command line's grammar (clap). No behaviour lives here.

use clap::{Args, Parser, Subcommand};

/// counterfoil: sequential business numbers on MySQL/MariaDB, never issued twice.
#[derive(Debug, Parser)]
#[command(name = "counterfoil", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Debug, Args)]
pub struct Global {
    /// mysql://user:pass@host:port/db, or mysql://user:pass@localhost/db?socket=/path/to/sock
    #[arg(long, env = "DATABASE_URL", global = true, hide_env_values = true)]
    pub database_url: Option<String>,
    /// Prefix of the Counterfoil tables (WordPress's $wpdb->prefix).
    #[arg(long, default_value = "wp_", global = true)]
    pub table_prefix: String,
    /// Deadline of each database call, in milliseconds.
    #[arg(long, default_value_t = 5000, global = true)]
    pub timeout_ms: u64,
    /// Print JSON (one object per line) instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    /// Accept a server with innodb_flush_log_at_trx_commit = 0. A crash of
    /// such a server can issue numbers twice: for throwaway test servers only.
    #[arg(long, global = true)]
    pub unsafe_allow_flush_log_0: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create, move, allocate from and inspect series.
    #[command(subcommand)]
    Series(SeriesCommand),
}

#[derive(Debug, Subcommand)]
pub enum SeriesCommand {
    /// Create a series whose first number is --start (creates the table if missing).
    /// An existing series is reported and left unchanged.
    Init {
        /// The series' scope key, e.g. 42:2019.
        scope: String,
        /// The first number to hand out (1 or more).
        #[arg(long, allow_hyphen_values = true)]
        start: String,
    },
    /// Move a series so that its next number is at least --next. Never moves down.
    Advance {
        /// The series' scope key.
        scope: String,
        /// The next number to hand out (1 or more).
        #[arg(long, allow_hyphen_values = true)]
        next: String,
    },
    /// Hand out the next number (or --count contiguous numbers) and print them.
    Allocate {
        /// The series' scope key.
        scope: String,
        /// How many contiguous numbers to take (1 to 100000).
        #[arg(long, default_value = "1", allow_hyphen_values = true)]
        count: String,
        /// Render each number with this template, e.g. '{year}-{seq:04}'.
        #[arg(long)]
        format: Option<String>,
        /// Year for {year}/{yy} (default: the scope's `:YYYY` suffix, else this year).
        #[arg(long)]
        year: Option<u32>,
        /// Month for {month} (default: this month).
        #[arg(long)]
        month: Option<u32>,
    },
    /// Print a series: current value, next number, first number.
    Show {
        /// The series' scope key.
        scope: String,
    },
}
