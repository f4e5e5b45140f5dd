//! Database access of the toolkit: connections with deadlines, the WordPress
//! and Counterfoil table names, streaming invoice posts, and the hazard checks.
//!
//! Invariants: every query runs under a deadline; the only text interpolated
//! into SQL is a validated table prefix (counterfoil-core's `TablePrefix`);
//! posts are read in keyset-paginated chunks, never all at once.

use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use counterfoil_core::audit::PostRow;
use counterfoil_core::TablePrefix;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts};

/// Table names for a prefix.
#[derive(Clone, Debug)]
pub struct Tables {
    pub posts: String,
    pub postmeta: String,
    pub sequences: String,
    pub numbers: String,
    pub adopt_runs: String,
    pub adopt_findings: String,
    pub payments: String,
    pub chain: String,
    pub documents: String,
}

impl Tables {
    pub fn new(prefix: &TablePrefix) -> Self {
        let p = prefix.as_str();
        Self {
            posts: format!("{p}posts"),
            postmeta: format!("{p}postmeta"),
            sequences: format!("{p}invoice_sequences"),
            numbers: format!("{p}counterfoil_numbers"),
            adopt_runs: format!("{p}counterfoil_adopt_runs"),
            adopt_findings: format!("{p}counterfoil_adopt_findings"),
            payments: format!("{p}counterfoil_payments"),
            chain: format!("{p}counterfoil_chain"),
            documents: format!("{p}counterfoil_documents"),
        }
    }
}

/// A connection with a per-statement deadline.
pub struct Db {
    pub conn: Conn,
    pub deadline: Duration,
}

impl Db {
    pub async fn connect(url: &str, deadline: Duration) -> Result<Self> {
        let opts = Opts::from_url(url).map_err(|e| anyhow!("database URL: {e}"))?;
        let conn = tokio::time::timeout(deadline, Conn::new(opts))
            .await
            .map_err(|_| anyhow!("cannot connect within {} ms", deadline.as_millis()))?
            .map_err(|e| anyhow!("cannot connect: {e}"))?;
        Ok(Self { conn, deadline })
    }

    /// Runs a statement without result.
    pub async fn exec<P: Into<mysql_async::Params> + Send>(
        &mut self,
        sql: &str,
        params: P,
    ) -> Result<u64> {
        let deadline = self.deadline;
        let conn = &mut self.conn;
        tokio::time::timeout(deadline, conn.exec_drop(sql, params))
            .await
            .map_err(|_| anyhow!("no answer within {} ms", deadline.as_millis()))?
            .with_context(|| sql.chars().take(120).collect::<String>())?;
        Ok(self.conn.affected_rows())
    }

    /// Runs a text statement (DDL, locks) without result.
    pub async fn query_drop(&mut self, sql: &str) -> Result<()> {
        let deadline = self.deadline;
        tokio::time::timeout(deadline, self.conn.query_drop(sql))
            .await
            .map_err(|_| anyhow!("no answer within {} ms", deadline.as_millis()))?
            .with_context(|| sql.chars().take(120).collect::<String>())
    }

    /// Rows of a prepared query.
    pub async fn rows<T, P>(&mut self, sql: &str, params: P) -> Result<Vec<T>>
    where
        T: mysql_async::prelude::FromRow + Send + 'static,
        P: Into<mysql_async::Params> + Send,
    {
        let deadline = self.deadline;
        tokio::time::timeout(deadline, self.conn.exec(sql, params))
            .await
            .map_err(|_| anyhow!("no answer within {} ms", deadline.as_millis()))?
            .with_context(|| sql.chars().take(120).collect::<String>())
    }

    /// One value of a text query.
    pub async fn scalar<T: mysql_async::prelude::FromValue + Send + 'static>(
        &mut self,
        sql: &str,
    ) -> Result<Option<T>> {
        let deadline = self.deadline;
        tokio::time::timeout(deadline, self.conn.query_first(sql))
            .await
            .map_err(|_| anyhow!("no answer within {} ms", deadline.as_millis()))?
            .with_context(|| sql.to_owned())
    }

    /// Whether a table exists in the current database.
    /// Series `scope`'s counter, or None (no such series, or no sequences table yet).
    pub async fn series_current(&mut self, tables: &Tables, scope: &str) -> Result<Option<u64>> {
        if !self.table_exists(&tables.sequences).await? {
            return Ok(None);
        }
        Ok(self
            .rows::<u64, _>(
                &format!(
                    "SELECT current_value FROM `{}` WHERE scope_key = ?",
                    tables.sequences
                ),
                (scope,),
            )
            .await?
            .first()
            .copied())
    }

    /// Creates adopt's findings table if missing.
    pub async fn ensure_adopt_findings(&mut self, tables: &Tables) -> Result<()> {
        self.query_drop(&format!(
            "CREATE TABLE IF NOT EXISTS `{}` (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT, kind VARCHAR(16) NOT NULL, \
             scope_key VARCHAR(191) NOT NULL, number BIGINT UNSIGNED NOT NULL, post_id BIGINT UNSIGNED NOT NULL, \
             other_post_id BIGINT UNSIGNED NULL, new_number BIGINT UNSIGNED NULL, created_at DATETIME NOT NULL, \
             PRIMARY KEY (id), UNIQUE KEY kind_post (kind, post_id, scope_key)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin",
            tables.adopt_findings
        ))
        .await
    }

    pub async fn table_exists(&mut self, table: &str) -> Result<bool> {
        let n: Vec<u64> = self
            .rows(
                "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
                (table,),
            )
            .await?;
        Ok(n.first().copied().unwrap_or(0) > 0)
    }

    /// Whether `table` has a unique index on exactly (scope_key, number).
    pub async fn has_unique_scope_number(&mut self, table: &str) -> Result<bool> {
        let rows: Vec<(String, u64, String)> = self
            .rows(
                "SELECT INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME FROM information_schema.STATISTICS \
                 WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND NON_UNIQUE = 0 ORDER BY INDEX_NAME, SEQ_IN_INDEX",
                (table,),
            )
            .await?;
        let mut by_index: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        for (index, _, column) in rows {
            by_index.entry(index).or_default().push(column);
        }
        Ok(by_index
            .values()
            .any(|cols| cols == &["scope_key", "number"]))
    }
}

/// Reads the invoice posts in chunks of `chunk`, by ascending ID.
pub struct PostStream {
    sql: String,
    post_type: String,
    after: u64,
    chunk: u64,
    done: bool,
}

impl PostStream {
    pub fn new(tables: &Tables, post_type: &str, chunk: u64) -> Self {
        Self {
            sql: format!(
                "SELECT ID, post_author, CAST(post_date AS CHAR), post_title FROM `{}` \
                 WHERE post_type = ? AND post_status NOT IN ('trash', 'auto-draft', 'inherit') AND ID > ? \
                 ORDER BY ID LIMIT ?",
                tables.posts
            ),
            post_type: post_type.to_owned(),
            after: 0,
            chunk,
            done: false,
        }
    }

    /// The next chunk, or `None` at the end.
    pub async fn next(&mut self, db: &mut Db) -> Result<Option<Vec<PostRow>>> {
        if self.done {
            return Ok(None);
        }
        let rows: Vec<(u64, u64, String, String)> = db
            .rows(&self.sql, (self.post_type.as_str(), self.after, self.chunk))
            .await?;
        if (rows.len() as u64) < self.chunk {
            self.done = true;
        }
        if rows.is_empty() {
            return Ok(None);
        }
        self.after = rows.last().map_or(self.after, |r| r.0);
        Ok(Some(
            rows.into_iter()
                .map(|(id, author, date, title)| PostRow {
                    id,
                    author,
                    date,
                    title,
                })
                .collect(),
        ))
    }
}

/// Counts the invoice posts (for progress).
pub async fn count_posts(db: &mut Db, tables: &Tables, post_type: &str) -> Result<u64> {
    let n: Vec<u64> = db
        .rows(
            &format!(
                "SELECT COUNT(*) FROM `{}` WHERE post_type = ? AND post_status NOT IN ('trash', 'auto-draft', 'inherit')",
                tables.posts
            ),
            (post_type,),
        )
        .await?;
    Ok(n.first().copied().unwrap_or(0))
}

/// A hazard found on the server or in the schema.
#[derive(Clone, Debug)]
pub struct Hazard {
    pub code: &'static str,
    pub message: String,
}

/// The server settings that matter for numbering.
pub async fn server_hazards(db: &mut Db) -> Result<Vec<Hazard>> {
    let mut out = Vec::new();
    let flush: Option<u64> = db
        .scalar("SELECT @@GLOBAL.innodb_flush_log_at_trx_commit")
        .await?;
    match flush {
        Some(0) => out.push(Hazard {
            code: "flush_log_at_trx_commit_0",
            message: "innodb_flush_log_at_trx_commit = 0: a server crash can roll counters back and issue numbers twice; set it to 1".into(),
        }),
        Some(2) => out.push(Hazard {
            code: "flush_log_at_trx_commit_2",
            message: "innodb_flush_log_at_trx_commit = 2: numbers survive a server crash but not an OS crash or power loss".into(),
        }),
        _ => {}
    }
    let inc: Option<u64> = db
        .scalar("SELECT @@GLOBAL.auto_increment_increment")
        .await?;
    if inc.unwrap_or(1) != 1 {
        out.push(Hazard {
            code: "auto_increment_increment",
            message: format!(
                "auto_increment_increment = {}: a multi-writer setup (Galera or replication); send all allocations of a series to one writer",
                inc.unwrap_or(0)
            ),
        });
    }
    // wsrep_on exists only on Galera builds; its absence is fine.
    if let Ok(Some(on)) = db.scalar::<String>("SELECT @@GLOBAL.wsrep_on").await {
        if on == "1" || on.eq_ignore_ascii_case("on") {
            out.push(Hazard {
                code: "galera",
                message: "Galera (wsrep_on): writes to one series from several nodes conflict at commit (1213); \
                          give Counterfoil the node list so every allocation goes to one writer node, and let it retry 1213. \
                          A number is told only once its commit is read back (commit confirmation, on by default on a Galera node: \
                          a COMMIT answered OK that the cluster did not keep is an unknown outcome, never a number); \
                          a WordPress site writes its other books (voids, refunds, credit notes, e-invoice inputs) on the \
                          numbers' node only when COUNTERFOIL_DB_NODES names the nodes"
                    .into(),
            });
            let retry: Option<u64> = db
                .scalar("SELECT @@GLOBAL.wsrep_retry_autocommit")
                .await
                .unwrap_or(None);
            if retry.unwrap_or(0) == 0 {
                out.push(Hazard {
                    code: "wsrep_retry_autocommit",
                    message: "wsrep_retry_autocommit = 0: the server never re-runs an autocommit statement that lost \
                              certification; every conflict reaches the client as 1213 (Counterfoil retries it; other code may not)"
                        .into(),
                });
            }
        }
    }
    Ok(out)
}

/// Fails with a clear message when the WordPress posts table is missing.
pub async fn require_wordpress(db: &mut Db, tables: &Tables) -> Result<()> {
    if !db.table_exists(&tables.posts).await? {
        bail!(
            "table `{}` does not exist: is this a WordPress database, and is --table-prefix right?",
            tables.posts
        );
    }
    Ok(())
}

/// A PostgreSQL connection for the commands that read a registry there
/// (`export`, `verify`), opened within `timeout`.
pub async fn connect_postgres(url: &str, timeout: Duration) -> Result<tokio_postgres::Client> {
    let (client, connection) =
        tokio::time::timeout(timeout, tokio_postgres::connect(url, tokio_postgres::NoTls))
            .await
            .map_err(|_| anyhow!("database unavailable: connect did not finish in time"))?
            .map_err(|e| anyhow!("database unavailable: cannot connect: {e}"))?;
    tokio::spawn(connection);
    Ok(client)
}

/// Whether PostgreSQL has the table `name`.
pub async fn postgres_table_exists(client: &tokio_postgres::Client, name: &str) -> Result<bool> {
    let found: Option<String> = client
        .query_one("SELECT to_regclass($1)::text", &[&format!("\"{name}\"")])
        .await?
        .get(0);
    Ok(found.is_some())
}
