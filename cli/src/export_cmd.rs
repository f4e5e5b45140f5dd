//! `counterfoil export`: the registry as CSV or JSON Lines, streamed (the
//! e-invoices, `--format documents`, are [`crate::export_documents`]'s).
//!
//! Invariants: the columns, filters, encodings and SQL are the core's
//! (`counterfoil_core::export`); rows are read in keyset chunks of
//! [`CHUNK`] and written as they come, so memory stays constant whatever the
//! size; progress goes to stderr, data to stdout (or `--output`); read-only.
//! On PostgreSQL (a `postgres://` URL) the registry is read with the same
//! columns and order (`ExportQuery::postgres`); the rendered number and
//! `refers_to` are empty there (no WordPress posts table).

use std::io::Write;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use counterfoil_core::export::{self, ExportFilter, ExportFormat, ExportQuery};
use counterfoil_core::{NumberStatus, TablePrefix};
use mysql_async::Value;

use crate::cli::{ExportArgs, Global};
use crate::db::{Db, Tables};
use crate::Outcome;

/// Rows per query.
const CHUNK: u64 = 50_000;

/// The cells a query selected ([`export::SELECTED`]).
type Row = Vec<Option<String>>;

pub async fn run(global: &Global, args: &ExportArgs) -> Result<Outcome> {
    if args.format == "documents" {
        return crate::export_documents::run(global, args).await;
    }
    let status = match &args.status {
        Some(s) => Some(NumberStatus::parse(s).ok_or_else(|| {
            anyhow::anyhow!(
                "invalid argument `status`: use reserved, creating, issued, unconfirmed or void"
            )
        })?),
        None => None,
    };
    let filter = ExportFilter {
        scope: args.scope.clone(),
        year: args.year,
        from: args.from.clone(),
        to: args.to.clone(),
        status,
    };
    let format = ExportFormat::parse(&args.format)?;
    let prefix = TablePrefix::new(&global.table_prefix)?;
    let tables = Tables::new(&prefix);
    let url = crate::database_url(global)?;
    let mut out: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(path).with_context(|| format!("create {path}"))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    if counterfoil_core::Engine::of_url(&url) == counterfoil_core::Engine::Postgres {
        return export_postgres(global, &url, &tables.numbers, &filter, format, out).await;
    }
    let mut db = Db::connect(&url, Duration::from_millis(global.timeout_ms)).await?;
    if !db.table_exists(&tables.numbers).await? {
        anyhow::bail!("no registry: table `{}` does not exist", tables.numbers);
    }
    let posts = db
        .table_exists(&tables.posts)
        .await?
        .then_some(tables.posts.as_str());
    let query = ExportQuery::new(&tables.numbers, posts, &filter)?;
    if format == ExportFormat::Csv {
        out.write_all(export::csv_header().as_bytes())?;
    }
    let (mut last_scope, mut last_number) = (String::new(), 0u64);
    let (mut written, started) = (0u64, Instant::now());
    loop {
        let mut params: Vec<Value> = query
            .params
            .iter()
            .map(|p| Value::from(p.as_str()))
            .collect();
        params.push(Value::from(last_scope.as_str()));
        params.push(Value::from(last_scope.as_str()));
        params.push(Value::from(last_number));
        params.push(Value::from(CHUNK));
        let rows: Vec<mysql_async::Row> = db.rows(&query.sql, params).await?;
        let n = rows.len() as u64;
        for mut r in rows {
            let row: Row = (0..export::SELECTED)
                .map(|i| r.take::<Option<String>, _>(i).flatten())
                .collect();
            last_number = row[1]
                .as_deref()
                .unwrap_or_default()
                .parse()
                .context("a registry number")?;
            last_scope = row[0].clone().unwrap_or_default();
            write_row(&mut out, format, row)?;
        }
        written += n;
        progress(global, written, started);
        if n < CHUNK {
            break;
        }
    }
    finish(global, out)
}

/// One registry row in the chosen format.
fn write_row(out: &mut Box<dyn Write>, format: ExportFormat, r: Row) -> Result<()> {
    let values = export::row(r);
    let line = match format {
        ExportFormat::Csv => export::csv_line(&values),
        ExportFormat::Jsonl => export::jsonl_line(&values),
    };
    out.write_all(line.as_bytes())?;
    Ok(())
}

fn progress(global: &Global, written: u64, started: Instant) {
    if !global.json {
        eprint!(
            "\rcounterfoil export: {written} rows ({:.0} rows/s)",
            written as f64 / started.elapsed().as_secs_f64().max(0.001)
        );
    }
}

fn finish(global: &Global, mut out: Box<dyn Write>) -> Result<Outcome> {
    out.flush()?;
    if !global.json {
        eprintln!();
    }
    Ok(Outcome::Ok)
}

/// The export on PostgreSQL: the same rows, chunks and output.
async fn export_postgres(
    global: &Global,
    url: &str,
    numbers: &str,
    filter: &ExportFilter,
    format: ExportFormat,
    mut out: Box<dyn Write>,
) -> Result<Outcome> {
    let client =
        crate::db::connect_postgres(url, Duration::from_millis(global.timeout_ms.max(1))).await?;
    if !crate::db::postgres_table_exists(&client, numbers).await? {
        anyhow::bail!("no registry: table `{numbers}` does not exist");
    }
    let query = ExportQuery::postgres(numbers, filter)?;
    if format == ExportFormat::Csv {
        out.write_all(export::csv_header().as_bytes())?;
    }
    let (mut last_scope, mut last_number) = (String::new(), "0".to_owned());
    let (mut written, started) = (0u64, Instant::now());
    let chunk = CHUNK.to_string();
    loop {
        let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = query
            .params
            .iter()
            .map(|p| p as &(dyn tokio_postgres::types::ToSql + Sync))
            .collect();
        params.push(&last_scope);
        params.push(&last_number);
        params.push(&chunk);
        let rows = client.query(&query.sql, &params).await?;
        let n = rows.len() as u64;
        let mut next = None;
        for r in rows {
            let row: Row = (0..export::SELECTED).map(|i| r.get(i)).collect();
            next = Some((
                row[0].clone().unwrap_or_default(),
                row[1].clone().unwrap_or_default(),
            ));
            write_row(&mut out, format, row)?;
        }
        if let Some((scope, number)) = next {
            last_scope = scope;
            last_number = number;
        }
        written += n;
        progress(global, written, started);
        if n < CHUNK {
            break;
        }
    }
    finish(global, out)
}
