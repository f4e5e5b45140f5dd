//! `counterfoil series …`: thin adapters from the command line to
//! `counterfoil-core`. Every rule (start ≥ 1, never lower, batch bounds,
//! formats) is the core's; this module parses text and prints results.

use anyhow::{anyhow, Result};
use counterfoil_core::{
    Advanced, Durability, DurabilityPolicy, Initialized, MissingSeries, NodeListPolicy,
    NumberFormat, Period, ScopeKey, Store, StoreConfig,
};
use serde_json::json;

use crate::cli::{Global, SeriesCommand};
use crate::Outcome;

pub async fn run(global: &Global, cmd: SeriesCommand) -> Result<Outcome> {
    match cmd {
        SeriesCommand::Init { scope, start, plan } => {
            let scope = parse_scope(&scope)?;
            let start = parse_number("--start", &start)?;
            let plan = MissingSeries::parse(&plan)?;
            counterfoil_core::series::counter_for_start(start)?;
            let mut store = connect(global).await?;
            store.ensure_schema().await?;
            let planned = store.initialize_planned(&scope, plan, start).await?;
            let outcome = planned
                .outcome
                .ok_or_else(|| anyhow!("the plan created nothing"))?;
            let after = match planned.continued_from {
                Some(previous) => {
                    format!(
                        " (continuing the previous year, whose last number is {previous}; \
                         that series is closed now: its later payments take their numbers here)"
                    )
                }
                None => String::new(),
            };
            let (status, text) = match outcome {
                Initialized::Created { next } => (
                    "created",
                    format!("created series {scope}: the first number will be {next}{after}"),
                ),
                Initialized::Exists { current } => (
                    "exists",
                    format!(
                        "series {scope} already exists (current value {current}); left unchanged"
                    ),
                ),
            };
            print(
                global,
                &text,
                json!({"scope": scope.as_str(), "status": status, "plan": plan.as_str(),
                "start": planned.start, "continued_from": planned.continued_from,
                "current": store.current(&scope).await?.current}),
            );
            Ok(Outcome::Ok)
        }
        SeriesCommand::Advance { scope, next } => {
            let scope = parse_scope(&scope)?;
            let next = parse_number("--next", &next)?;
            counterfoil_core::series::counter_for_next(next)?;
            let mut store = connect(global).await?;
            let (status, current) = match store.advance(&scope, next).await? {
                Advanced::Moved { current } => ("moved", current),
                Advanced::Unchanged { current } => ("unchanged", current),
            };
            let text = if status == "moved" {
                format!("series {scope}: the next number is now {next}")
            } else {
                format!(
                    "series {scope} unchanged: its current value {current} is already at or past {}; \
                     a series never moves down (to start lower, create a new series)",
                    next - 1
                )
            };
            print(
                global,
                &text,
                json!({"scope": scope.as_str(), "status": status, "current": current}),
            );
            Ok(Outcome::Ok)
        }
        SeriesCommand::Allocate {
            scope,
            count,
            format,
            year,
            month,
        } => {
            let scope = parse_scope(&scope)?;
            let count = parse_number("--count", &count)?;
            counterfoil_core::series::check_batch(count)?;
            let format = format.as_deref().map(NumberFormat::parse).transpose()?;
            let now = Period::from_unix_seconds(unix_now())?;
            let period = Period::new(
                year.or_else(|| scope.year_hint()).unwrap_or(now.year()),
                month.unwrap_or(now.month()),
            )?;
            let mut store = connect(global).await?;
            let range = store.allocate_many(&scope, count).await?;
            let rendered: Vec<String> = range
                .clone()
                .map(|n| match &format {
                    Some(f) => f.render(n, period),
                    None => n.to_string(),
                })
                .collect();
            if global.json {
                println!(
                    "{}",
                    json!({"scope": scope.as_str(), "first": range.start(), "last": range.end(),
                           "numbers": rendered})
                );
            } else {
                println!("{}", rendered.join("\n"));
            }
            Ok(Outcome::Ok)
        }
        SeriesCommand::Show { scope } => {
            let scope = parse_scope(&scope)?;
            let mut store = connect(global).await?;
            let s = store.current(&scope).await?;
            let next = s
                .next()
                .map_or("none (exhausted)".to_string(), |n| n.to_string());
            let start = s
                .start
                .map_or("unknown (adopted)".to_string(), |n| n.to_string());
            let text = format!(
                "scope   {}\ncurrent {}\nnext    {next}\nstart   {start}",
                s.scope, s.current
            );
            print(
                global,
                &text,
                json!({"scope": s.scope, "current": s.current,
                "next": s.next(), "start": s.start}),
            );
            Ok(Outcome::Ok)
        }
    }
}

/// Opens the store of the URL's engine (`mysql://` or `postgres://`), with
/// the global deadline, prefix and durability override; warns on stderr
/// about durability it accepted.
pub async fn connect(global: &Global) -> Result<Store> {
    let url = global.database_url.clone().ok_or_else(|| {
        anyhow!(
            "no database: set DATABASE_URL=mysql://user:pass@host:port/db \
             (or postgres://…; or pass --database-url)"
        )
    })?;
    let mut config = StoreConfig::new(url)
        .table_prefix(&global.table_prefix)?
        .deadline(std::time::Duration::from_millis(global.timeout_ms.max(1)));
    if global.unsafe_allow_flush_log_0 {
        config = config.durability(DurabilityPolicy::UnsafeAllowFlushLogAtTrxCommit0);
    }
    if global.unsafe_allow_independent_nodes {
        config = config.node_list(NodeListPolicy::UnsafeAllowIndependentServers);
    }
    let store = Store::connect(config).await?;
    let postgres = store.engine() == counterfoil_core::Engine::Postgres;
    match store.durability() {
        Some(Durability::ServerCrashOnly) if postgres => eprintln!(
            "counterfoil: warning: synchronous_commit = local with synchronous standbys: a \
             failover can lose acknowledged numbers"
        ),
        Some(Durability::ServerCrashOnly) => eprintln!(
            "counterfoil: warning: innodb_flush_log_at_trx_commit = 2: numbers survive a server \
             crash but not an OS crash or power loss"
        ),
        Some(Durability::Unsafe) if postgres => eprintln!(
            "counterfoil: warning: fsync or synchronous_commit = off accepted by \
             --unsafe-allow-flush-log-0: a crash can issue numbers twice"
        ),
        Some(Durability::Unsafe) => eprintln!(
            "counterfoil: warning: innodb_flush_log_at_trx_commit = 0 accepted by \
             --unsafe-allow-flush-log-0: a server crash can issue numbers twice"
        ),
        _ => {}
    }
    Ok(store)
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn parse_scope(s: &str) -> Result<ScopeKey> {
    Ok(ScopeKey::new(s).map_err(counterfoil_core::Error::from)?)
}

/// Parses a whole number for `flag`, saying exactly what was wrong.
fn parse_number(flag: &str, s: &str) -> Result<u64> {
    let t = s.trim();
    if t.starts_with('-') && t[1..].bytes().all(|b| b.is_ascii_digit()) && t.len() > 1 {
        return Err(anyhow!("{flag} must be 1 or more, got {t}"));
    }
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(anyhow!("{flag} must be a whole number, got `{s}`"));
    }
    t.parse::<u64>()
        .map_err(|_| anyhow!("{flag} is above the largest number, 18446744073709551615: got {t}"))
}

fn print(global: &Global, text: &str, value: serde_json::Value) {
    if global.json {
        println!("{value}");
    } else {
        println!("{text}");
    }
}
