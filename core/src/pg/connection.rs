//! The PostgreSQL store's connection: the one loop of both engines
//! (`crate::flows::call`) given this store's connection, its node list
//! (failover and fail-back through `crate::writer`), its vetting (durability,
//! writable primary, one system), its server-side budget, and the end of
//! every transaction.
//!
//! Invariants: a connection is used only after it was vetted; a try that
//! opened a transaction and did not answer a value has it ended by an
//! awaited ROLLBACK, or its connection closed, before the call goes on.

use super::*;

impl PgStore {
    /// Runs one operation under the one loop of both engines
    /// (`flows::call::run`: retries, reconnects, failover, fail-back and the
    /// deadline).
    pub(super) async fn run<T, F>(&mut self, operation: &'static str, mut attempt: F) -> Result<T>
    where
        F: for<'c> FnMut(&'c mut PgConn, &'c PgSql) -> PgAttempt<'c, T> + Send,
        T: Send,
    {
        crate::flows::call::run(self, operation, "", move |conn, sql, _| attempt(conn, sql)).await
    }

    /// After a try (and before a call): if a transaction was opened and its
    /// end was not confirmed, make sure it is over before the call goes on — a
    /// ROLLBACK awaited within the time left (harmless when it ended), or
    /// the connection closed.
    pub(super) async fn end_transaction(&mut self, until: Instant) {
        let Some(conn) = self.client.as_mut() else {
            return;
        };
        if !conn.began {
            return;
        }
        conn.began = false;
        let left = until.saturating_duration_since(Instant::now());
        let ended = matches!(
            tokio::time::timeout(left, conn.client.batch_execute("ROLLBACK")).await,
            Ok(Ok(()))
        );
        if !ended {
            log::warn!("closing a connection whose transaction was not seen to end");
            self.stats.discarded += 1;
            if let Some(conn) = self.client.take() {
                conn.discard(DISCARD_BOUND).await;
            }
        }
    }

    /// Sets the server's `statement_timeout` and `lock_timeout` to the time
    /// left when it differs from the session's by more than a tenth (so the
    /// first try of a call on a settled session costs no round trip). On a
    /// primary whose commits wait for a synchronous standby only
    /// `lock_timeout` is set: a `statement_timeout` that fires while a
    /// COMMIT waits for the standby makes PostgreSQL acknowledge the commit
    /// as done ("canceling wait for synchronous replication"), although the
    /// standby may never get it — a number that a failover hands out again.
    pub(super) async fn set_budget(&mut self, until: Instant) -> Result<()> {
        let left = until
            .saturating_duration_since(Instant::now())
            .as_millis()
            .max(1) as u64;
        if self.session_timeout_ms.abs_diff(left) * 10 <= left {
            return Ok(());
        }
        let client = self.client.as_mut().expect("connected");
        let budget = if self.waits_for_standby {
            format!("SET lock_timeout = {left}")
        } else {
            format!("SET statement_timeout = {left}; SET lock_timeout = {left}")
        };
        match client.batch_execute(&budget).await {
            Ok(()) => {
                self.session_timeout_ms = left;
                Ok(())
            }
            Err(e) => {
                let f = classify(e, false);
                if f.connection_broken {
                    self.client = None;
                }
                Err(f.error)
            }
        }
    }

    /// Makes sure a checked connection is open: to the first node of the list
    /// that accepts it and passes the durability check.
    pub(super) async fn connection(&mut self, until: Instant) -> Result<()> {
        if let Some(c) = &self.client {
            if !c.is_closed() {
                // Failed over a while ago: try the preferred nodes again,
                // briefly, as the MySQL store does; keep the open connection
                // if none of them answers yet.
                let left = until.saturating_duration_since(Instant::now());
                let Some((earlier, probe)) = self.writer.fail_back_probe(&self.config, left) else {
                    return Ok(());
                };
                for node in earlier {
                    if let Ok((client, driver)) = self.connect_node(node, probe).await {
                        if let Some(old) = self.client.take() {
                            old.discard(DISCARD_BOUND).await;
                        }
                        self.open(node, client, driver);
                        log::info!("failed back to node {}", node + 1);
                        return Ok(());
                    }
                }
                self.writer.stayed();
                return Ok(());
            }
            self.client = None;
        }
        let mut last = None;
        for node in 0..self.nodes.len() {
            let left = until.saturating_duration_since(Instant::now());
            match self
                .connect_node(node, self.config.connect_timeout.min(left))
                .await
            {
                Ok((client, driver)) => {
                    self.open(node, client, driver);
                    return Ok(());
                }
                Err(e @ Error::UnsafeSetting { .. })
                | Err(e @ Error::UnsafeReplication { .. })
                | Err(e @ Error::Config(_)) => return Err(e),
                Err(e) => {
                    self.writer.skipped(node, &e);
                    last = Some(e);
                }
            }
        }
        Err(last.unwrap_or_else(|| Error::Config("no database node configured".into())))
    }

    /// Keeps a new connection to `node` as the store's.
    fn open(&mut self, node: usize, client: Client, driver: tokio::task::JoinHandle<()>) {
        self.client = Some(PgConn {
            client,
            prepared: Default::default(),
            driver,
            began: false,
        });
        self.writer.connected(node);
    }

    pub(super) async fn connect_node(
        &mut self,
        node: usize,
        timeout: Duration,
    ) -> Result<(Client, tokio::task::JoinHandle<()>)> {
        let connecting = self.nodes[node].connect(NoTls);
        let (client, connection) = match tokio::time::timeout(timeout, connecting).await {
            Ok(Ok(pair)) => pair,
            Ok(Err(e)) => return Err(classify(e, false).error),
            Err(_) => {
                return Err(Error::Unavailable {
                    reason: format!("connect did not finish within {} ms", timeout.as_millis()),
                    may_have_run: false,
                })
            }
        };
        let driver = tokio::spawn(async move {
            if let Err(e) = connection.await {
                log::debug!("postgres connection ended: {e}");
            }
        });
        self.stats.connects += 1;
        let budget = self.config.deadline.as_millis().max(1);
        let settings = client
            .query_one(
                "SELECT current_setting('fsync'), current_setting('synchronous_commit'), \
                 current_setting('synchronous_standby_names'), pg_backend_pid(), \
                 pg_is_in_recovery(), (SELECT system_identifier::text FROM pg_control_system()), \
                 (SELECT count(*) FROM pg_stat_replication)",
                &[],
            )
            .await
            .map_err(|e| classify(e, false).error)?;
        // The writer rule (docs/design.md §9): a standby is skipped like a down
        // node; every node of a list is one primary's cluster.
        if settings.get::<_, bool>(4) {
            return Err(Error::Unavailable {
                reason: format!(
                    "cannot connect: node {} is a standby (pg_is_in_recovery() = true): not a writable primary",
                    node + 1
                ),
                may_have_run: false,
            });
        }
        let system: String = settings.get(5);
        let identity = (self.nodes.len() > 1).then(|| format!("PostgreSQL system {system}"));
        self.writer.admit(node, identity, self.config.node_list)?;
        let (fsync, sync_commit, standbys): (String, String, String) =
            (settings.get(0), settings.get(1), settings.get(2));
        self.backend_pid = u32::try_from(settings.get::<_, i32>(3)).ok();
        let unsafe_allowed = self.config.durability != DurabilityPolicy::Require;
        for (setting, value) in [("fsync", &fsync), ("synchronous_commit", &sync_commit)] {
            if value.eq_ignore_ascii_case("off") {
                if !unsafe_allowed {
                    return Err(Error::UnsafeSetting {
                        setting,
                        value: value.clone(),
                    });
                }
                log::warn!("{setting} = off accepted under the unsafe override: a crash can hand numbers out twice");
                self.durability = Some(Durability::Unsafe);
            }
        }
        if !fsync.eq_ignore_ascii_case("off") && !sync_commit.eq_ignore_ascii_case("off") {
            self.durability = Some(Durability::Full);
        }
        let waits = replication::commit_waits_for_standby(&standbys, &sync_commit);
        let wal_senders = u64::try_from(settings.get::<_, i64>(6)).unwrap_or(0);
        if self.nodes.len() > 1 && self.config.node_list == NodeListPolicy::OneCluster {
            // A node list is a primary and the standbys it fails over to
            // (docs/design.md §8): an acknowledged number must be on a
            // standby before the answer, or a promotion can repeat it.
            if let Some((setting, value)) =
                replication::unsafe_for_failover(&standbys, &sync_commit, wal_senders)
            {
                if !unsafe_allowed {
                    return Err(Error::UnsafeReplication { setting, value });
                }
                log::warn!("{setting} = '{value}' on the primary accepted under the unsafe override: a failover can hand numbers out twice");
                self.durability = Some(Durability::ServerCrashOnly);
            }
        } else if sync_commit.eq_ignore_ascii_case("local") && !standbys.trim().is_empty() {
            log::warn!(
                "synchronous_commit = local with synchronous standbys ({standbys}): a failover to a standby can lose acknowledged numbers"
            );
            self.durability = Some(Durability::ServerCrashOnly);
        }
        self.waits_for_standby = waits;
        // The server's own backstop against a transaction left idle (a
        // process frozen in the middle of one): no call of ours keeps one
        // open past its deadline, so the server may end it a little later.
        let idle = budget.saturating_mul(2).max(1000);
        let statement_budget = if waits { 0 } else { budget };
        client
            .batch_execute(&format!(
                "SET statement_timeout = {statement_budget}; SET lock_timeout = {budget}; \
                 SET idle_in_transaction_session_timeout = {idle}"
            ))
            .await
            .map_err(|e| classify(e, false).error)?;
        self.session_timeout_ms = budget as u64;
        Ok((client, driver))
    }
}

impl crate::flows::call::CallSite for PgStore {
    type Conn = PgConn;
    type Sql = PgSql;
    type Failure = tokio_postgres::Error;
    type Statements<'c> = dialect::PgStatements<'c>;

    fn config(&self) -> &StoreConfig {
        &self.config
    }

    fn stats_mut(&mut self) -> &mut StoreStats {
        &mut self.stats
    }

    async fn before_call(&mut self, until: Instant) {
        // A transaction of an earlier call that panicked.
        self.end_transaction(until).await;
    }

    async fn ready(&mut self, until: Instant) -> Result<()> {
        self.connection(until).await?;
        self.set_budget(until).await?;
        self.client.as_mut().expect("connected above").began = false;
        Ok(())
    }

    fn parts(&mut self) -> (&mut PgConn, &PgSql) {
        (self.client.as_mut().expect("ready() connected"), &self.sql)
    }

    async fn after_try(&mut self, _answered: bool, until: Instant) {
        // A transaction whose end was not confirmed (the try failed, or
        // was cut short) is ended now, or its connection closed.
        self.end_transaction(until).await;
    }

    fn failed(&mut self, failure: tokio_postgres::Error) -> Error {
        let f = classify(failure, true);
        if f.connection_broken {
            self.client = None;
        }
        f.error
    }

    async fn abandon(&mut self) {
        if let Some(conn) = self.client.take() {
            conn.discard(DISCARD_BOUND).await;
        }
    }

    async fn ensure_schema(&mut self) -> Result<()> {
        PgStore::ensure_schema(self).await
    }

    fn statements<'c>(conn: &'c mut PgConn, sql: &'c PgSql) -> dialect::PgStatements<'c> {
        dialect::PgStatements { conn, sql }
    }
}
