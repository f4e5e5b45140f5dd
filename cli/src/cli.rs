//! The command line's grammar (clap). No behaviour lives here.

use clap::{Args, Parser, Subcommand};

/// counterfoil: sequential business numbers on MySQL/MariaDB and PostgreSQL, never issued twice.
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
    /// mysql://user:pass@host:port/db, or mysql://user:pass@localhost/db?socket=/path/to/sock;
    /// several, comma-separated, for a cluster's nodes; for every command but
    /// `audit`, `adopt` and `export --format documents` also
    /// postgres://user:pass@host:port/db (or postgresql://user@localhost/db?host=/socket/dir).
    /// A URL with a password belongs in DATABASE_URL: on the command line
    /// other users see it (ps) and the shell's history keeps it (a warning says so)
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
    /// Accept a node list of independent servers (not one Galera cluster,
    /// Group Replication group or PostgreSQL primary with its standbys).
    /// Each is its own counter, so failing over between them hands numbers
    /// out twice: for failover tests between throwaway servers only.
    #[arg(long, global = true)]
    pub unsafe_allow_independent_nodes: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create, move, allocate from and inspect series.
    #[command(subcommand)]
    Series(SeriesCommand),
    /// Read-only audit of a site's invoice posts: per series count, lowest,
    /// highest, duplicates, gaps, malformed titles; server and schema hazards.
    /// Exit 0 clean, 1 findings, 2 error.
    Audit(SiteArgs),
    /// Adopt a site: create the Counterfoil tables, set each series to its
    /// highest number, record every existing invoice in the registry. Prints
    /// its plan and changes nothing without --execute.
    Adopt(AdoptArgs),
    /// Check the invariants on a live site. Exit 1 with a listing on any violation.
    Verify(VerifyArgs),
    /// N concurrent connections allocating from one series for a while:
    /// allocations/s, p50/p99 latency, and the duplicate and gap check.
    Stress(StressArgs),
    /// Air waybill numbers: validate, stock blocks, issue in order, void, status, report.
    #[command(subcommand)]
    Awb(AwbCommand),
    /// WooCommerce: the paid orders of this period without an invoice
    /// number, listed or numbered by the site (its REST route).
    #[command(subcommand)]
    Woocommerce(WooCommerceCommand),
    /// The registry as CSV or JSON Lines (read-only, streamed): scope_key, number,
    /// rendered, status, reason, gateway, transaction_id, amount, currency, post_id,
    /// created_at, updated_at. Spreadsheet-safe CSV.
    Export(ExportArgs),
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// One series.
    #[arg(long)]
    pub scope: Option<String>,
    /// The series of one year (keys ending in :YYYY).
    #[arg(long)]
    pub year: Option<u32>,
    /// Numbers handed out on or after this day (YYYY-MM-DD, UTC).
    #[arg(long)]
    pub from: Option<String>,
    /// Numbers handed out on or before this day (YYYY-MM-DD, UTC).
    #[arg(long)]
    pub to: Option<String>,
    /// Only this status: reserved, creating, issued, unconfirmed or void.
    #[arg(long)]
    pub status: Option<String>,
    /// csv or jsonl (the registry), or documents (the e-invoices of the
    /// invoices and credit notes issued in the period, into --output: a
    /// new folder, or a file ending in .zip).
    #[arg(long, default_value = "csv")]
    pub format: String,
    /// Write to this file instead of stdout (documents: a folder or a .zip).
    #[arg(long)]
    pub output: Option<String>,
    /// With --format documents: which files each document gets.
    #[arg(long, default_value = "ubl,cii,pdf")]
    pub document_formats: String,
}

#[derive(Debug, Subcommand)]
pub enum AwbCommand {
    /// Check numbers (157-40121012, 157-4012 1012, 15740121012); exit 1 if any is invalid.
    Validate {
        /// The numbers.
        #[arg(required = true)]
        numbers: Vec<String>,
    },
    /// Add a block from the airline to a pool (first and last validated; refused whole on any problem).
    /// Prints the plan without --execute.
    ImportBlock {
        /// The pool (created for the block's airline prefix if missing).
        #[arg(long)]
        pool: String,
        /// First number of the block.
        #[arg(long)]
        first: String,
        /// Last number of the block.
        #[arg(long)]
        last: String,
        /// Last day the numbers may be issued (YYYY-MM-DD).
        #[arg(long)]
        valid_to: Option<String>,
        /// Do it.
        #[arg(long)]
        execute: bool,
    },
    /// Assign the lowest ready number of a pool to a shipment.
    Issue {
        /// The pool.
        #[arg(long)]
        pool: String,
        /// The shipment reference.
        #[arg(long)]
        shipment: String,
    },
    /// Move a number to another state (through the transition table).
    Transition {
        /// The number.
        number: String,
        /// ready, assigned, issued, executed, voided or cancelled.
        #[arg(long)]
        to: String,
        /// The shipment, for assigned.
        #[arg(long)]
        shipment: Option<String>,
        /// Why, for voided and cancelled.
        #[arg(long)]
        reason: Option<String>,
        /// Only if the number is still assigned to this shipment (else nothing happens).
        #[arg(long)]
        expect_shipment: Option<String>,
    },
    /// Void a number, with a reason.
    Void {
        /// The number.
        number: String,
        /// Why.
        #[arg(long)]
        reason: String,
    },
    /// Take a number out of circulation (or back with --unfreeze); its state is unchanged.
    Freeze {
        /// The number.
        number: String,
        /// Put it back.
        #[arg(long)]
        unfreeze: bool,
    },
    /// Show a number's pool, state, shipment and expiry.
    Status {
        /// The number.
        number: String,
    },
    /// Count a pool's numbers per state, frozen, expired and available.
    Report {
        /// The pool.
        #[arg(long)]
        pool: String,
    },
}

/// Which posts hold invoice numbers, and how to read them.
#[derive(Debug, Args, Clone)]
pub struct SiteArgs {
    /// Post type of the invoices.
    #[arg(long, default_value = "invoice")]
    pub post_type: String,
    /// Template the titles were rendered with.
    #[arg(long, default_value = "{year}-{seq:04}")]
    pub format: String,
    /// How a title's series is chosen: author-year (author and year, the
    /// plugin's rule), year, or single:KEY.
    #[arg(long, default_value = "author-year")]
    pub scope_rule: String,
}

#[derive(Debug, Args)]
pub struct AdoptArgs {
    #[command(flatten)]
    pub site: SiteArgs,
    /// Do it (without this flag adopt only prints its plan).
    #[arg(long)]
    pub execute: bool,
    /// What to do with later duplicates: `record` them as findings (history
    /// untouched), or `renumber` them (new number; the old title kept in post
    /// meta; old → new recorded).
    #[arg(long, default_value = "record", value_parser = ["record", "renumber"])]
    pub resolve_duplicates: String,
    /// Adopt even though some titles are malformed (they are listed, not adopted).
    #[arg(long)]
    pub skip_malformed: bool,
    /// Where the numbers are: `posts` (invoice post titles), or
    /// `wp-overnight` (WP Overnight's PDF Invoices for WooCommerce: its number
    /// stores, yearly ones too, and each order's plain number from
    /// `_wcpdf_invoice_number_data`; `_wcpdf_invoice_number` holds the
    /// formatted one).
    #[arg(long, default_value = "posts", value_parser = ["posts", "wp-overnight"])]
    pub from: String,
    /// With `--from wp-overnight`: the issuer whose series the orders'
    /// numbers join (the plugin's WooCommerce issuer; 0, the shop, by default).
    #[arg(long, default_value_t = 0)]
    pub issuer: u64,
    /// Registry rows written per statement.
    #[arg(long, default_value_t = 500, hide = true)]
    pub batch_size: usize,
    /// Pause between series (to spare a busy server); never inside a series'
    /// transaction, which holds the series' row.
    #[arg(long, default_value_t = 0)]
    pub pause_ms: u64,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub site: SiteArgs,
    /// A number reserved longer than this (minutes) is a finding: its invoice
    /// was never completed.
    #[arg(long, default_value_t = 15)]
    pub reserved_grace_minutes: u64,
    /// Print each series' chain head (position, number, hash) as JSON lines,
    /// to keep with the month's export; exit 1 if a chain does not hold.
    #[arg(long)]
    pub heads: bool,
    /// A file of heads printed earlier by --heads: each must still be in its
    /// chain (nothing cut off or rewritten since).
    #[arg(long, value_name = "FILE")]
    pub against: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct StressArgs {
    /// The series (it must exist).
    pub scope: String,
    /// Concurrent connections.
    #[arg(long, default_value_t = 8)]
    pub connections: usize,
    /// How long, in seconds.
    #[arg(long, default_value_t = 5.0)]
    pub seconds: f64,
}

#[derive(Debug, Subcommand)]
pub enum SeriesCommand {
    /// Create a series whose first number is --start (creates the table if missing),
    /// or, with --plan continue, right after the issuer's latest earlier year
    /// (`42:2027` continues `42:2026`). An existing series is reported and left unchanged.
    Init {
        /// The series' scope key, e.g. 42:2019.
        scope: String,
        /// The first number to hand out (1 or more); under --plan continue,
        /// the first number when there is no earlier year to continue.
        #[arg(long, default_value = "1", allow_hyphen_values = true)]
        start: String,
        /// create: start at --start; continue: after the previous year's last number.
        #[arg(long, default_value = "create", value_parser = ["create", "continue"])]
        plan: String,
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

#[derive(Debug, Subcommand)]
pub enum WooCommerceCommand {
    /// List this numbering period's paid orders without an invoice number
    /// (exit 1 when there are some); --execute has the site number them.
    /// The application password of --user is read from
    /// COUNTERFOIL_WP_APP_PASSWORD.
    Backfill(WooCommerceBackfillArgs),
}

#[derive(Debug, Args)]
pub struct WooCommerceBackfillArgs {
    /// The site's address (https://shop.example).
    #[arg(long)]
    pub site: String,
    /// A user with the manage_woocommerce capability.
    #[arg(long)]
    pub user: String,
    /// Number them (without this flag only the list is printed).
    #[arg(long)]
    pub execute: bool,
    /// Accept an http:// site (a local test site: the password travels in clear).
    #[arg(long)]
    pub allow_http: bool,
    /// Seconds the whole call may take.
    #[arg(long, default_value_t = 300)]
    pub timeout_s: u64,
}
