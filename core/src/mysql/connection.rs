//! The MySQL/MariaDB store's connection: the one loop of both engines
//! (`crate::flows::call`) given this store's connection, its node list
//! (failover and fail-back through `crate::writer`), its vetting, and the
//! end of every transaction.
//!
//! Invariants: a connection is used only after it was vetted
//! (`vetting.rs`); a connection whose transaction was not seen to end is
//! closed before the next try or call.

use super::*;
use crate::error::codes;

impl SeriesStore {
    /// Runs one operation under the one loop of both engines
    /// (`flows::call::run`: retries, reconnects, failover and the deadline).
    pub(super) async fn run<T, F>(
        &mut self,
        operation: &'static str,
        key: &str,
        attempt: F,
    ) -> Result<T>
    where
        F: for<'c> FnMut(&'c mut Session, &'c Sql, &'c str) -> Attempt<'c, T> + Send,
        T: Send,
    {
        crate::flows::call::run(self, operation, key, attempt).await
    }

    /// Closes the connection if a transaction may still be open on it.
    pub(super) async fn discard_if_open(&mut self) {
        if self.conn.as_ref().is_some_and(Session::open) {
            log::warn!("closing a connection whose transaction was not seen to end");
            self.stats.discarded += 1;
            if let Some(session) = self.conn.take() {
                session.discard(DISCARD_BOUND).await;
            }
        }
    }

    /// Makes sure a checked connection is open: to the first node of the list
    /// that accepts it, is ready (a Galera node must report `wsrep_ready`)
    /// and passes the durability check. So every allocation of a series goes
    /// to one writer node, and moves to the next only when it fails.
    pub(super) async fn connection(&mut self) -> Result<()> {
        if self.conn.is_some() {
            // Failed over a while ago: try the preferred nodes again, briefly;
            // keep the current connection if none of them answers yet. (The
            // call's own deadline bounds the probes too.)
            let Some((earlier, probe)) = self
                .writer
                .fail_back_probe(&self.config, self.config.deadline)
            else {
                return Ok(());
            };
            for node in earlier {
                if let Ok((conn, multi_writer)) = self.connect_node(node, probe).await {
                    self.conn = Some(Session::new(
                        conn,
                        multi_writer,
                        self.config.confirm_commits,
                    ));
                    self.writer.connected(node);
                    return Ok(());
                }
            }
            self.writer.stayed();
            return Ok(());
        }
        let mut last = None;
        for node in 0..self.nodes.len() {
            match self.connect_node(node, self.config.connect_timeout).await {
                Ok((conn, multi_writer)) => {
                    self.conn = Some(Session::new(
                        conn,
                        multi_writer,
                        self.config.confirm_commits,
                    ));
                    self.writer.connected(node);
                    return Ok(());
                }
                // A server refusing us by policy is the same on every node.
                Err(e) if vetting::ends_node_search(&e) => return Err(e),
                Err(e) => {
                    self.writer.skipped(node, &e);
                    last = Some(e);
                }
            }
        }
        Err(last.unwrap_or_else(|| Error::Config("no database node configured".into())))
    }

    pub(super) async fn connect_node(
        &mut self,
        node: usize,
        timeout: std::time::Duration,
    ) -> Result<(Conn, bool)> {
        let mut conn =
            match tokio::time::timeout(timeout, Conn::new(self.nodes[node].clone())).await {
                Ok(Ok(conn)) => conn,
                Ok(Err(e)) => return Err(vetting::connect_failure(classify(e).error)),
                Err(_) => {
                    return Err(Error::Unavailable {
                        reason: format!("connect did not finish within {} ms", timeout.as_millis()),
                        may_have_run: false,
                    })
                }
            };
        self.stats.connects += 1;
        let vars: Vec<(String, String)> = conn
            .query(vetting::SERVER_CHECK_SQL)
            .await
            .map_err(before_any_statement)?;
        let check = vetting::judge_server(&vars, self.config.durability)?;
        let mut cluster = None;
        if check.galera {
            let rows: Vec<(String, String)> = conn
                .query(vetting::GALERA_READY_SQL)
                .await
                .map_err(before_any_statement)?;
            cluster = vetting::judge_ready(node, &rows)?;
            conn.query_drop(vetting::GALERA_CAUSAL_READS_SQL)
                .await
                .map_err(before_any_statement)?;
        }
        let policy = self.config.node_list;
        let identity = vetting::judge_writer(node, self.nodes.len(), &check, cluster, policy)?;
        self.writer.admit(node, identity, policy)?;
        // The server's own backstop against a transaction left idle (a
        // process frozen in the middle of one): no call of ours keeps one
        // open past its deadline. MariaDB only; MySQL does not know the
        // variable (1193), and relies on the store's own ending alone.
        let idle = self.config.deadline.as_secs().saturating_mul(2).max(2);
        match conn
            .query_drop(format!("SET SESSION idle_transaction_timeout = {idle}"))
            .await
        {
            Err(mysql_async::Error::Server(e)) if e.code == codes::ER_UNKNOWN_SYSTEM_VARIABLE => {}
            other => other.map_err(before_any_statement)?,
        }
        conn.query_drop(vetting::session_sql(self.config.deadline))
            .await
            .map_err(before_any_statement)?;
        self.durability = Some(check.durability);
        Ok((conn, check.multi_writer()))
    }
}

impl crate::flows::call::CallSite for SeriesStore {
    type Conn = Session;
    type Sql = Sql;
    type Failure = mysql_async::Error;
    type Statements<'c> = dialect::MysqlStatements<'c>;

    fn config(&self) -> &StoreConfig {
        &self.config
    }

    fn stats_mut(&mut self) -> &mut StoreStats {
        &mut self.stats
    }

    async fn before_call(&mut self, _until: Instant) {
        self.discard_if_open().await;
    }

    async fn ready(&mut self, _until: Instant) -> Result<()> {
        self.connection().await
    }

    fn parts(&mut self) -> (&mut Session, &Sql) {
        (self.conn.as_mut().expect("ready() connected"), &self.sql)
    }

    async fn after_try(&mut self, _answered: bool, _until: Instant) {
        self.discard_if_open().await;
    }

    fn failed(&mut self, failure: mysql_async::Error) -> Error {
        let f = classify(failure);
        if f.connection_broken {
            self.conn = None;
        }
        f.error
    }

    async fn abandon(&mut self) {
        if let Some(session) = self.conn.take() {
            session.discard(DISCARD_BOUND).await;
        }
    }

    async fn ensure_schema(&mut self) -> Result<()> {
        SeriesStore::ensure_schema(self).await
    }

    fn statements<'c>(session: &'c mut Session, sql: &'c Sql) -> dialect::MysqlStatements<'c> {
        dialect::MysqlStatements { session, sql }
    }
}

/// A failure while connecting: no statement of the caller ran.
pub(super) fn before_any_statement(e: mysql_async::Error) -> Error {
    vetting::before_any_statement(classify(e).error)
}
