//! Private PostgreSQL 15 servers for tests (Debian's `postgresql`).
//!
//! Invariants: a server lives in `target/harness/pg-<name>-<pid>-<n>/` with
//! its own data directory, socket directory and TCP port on 127.0.0.1; it is
//! initialised with `initdb` and run as the `postgres` user (PostgreSQL
//! refuses root) directly as a child of the harness, so it is stopped by its
//! own pid (SIGTERM: smart shutdown → fast after 30 s, then SIGKILL), never
//! by name, and dies with the test process (PDEATHSIG). The machine's own
//! cluster (port 5432) is never touched.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::mariadb::{block_on, spawn_bound_to_harness};

/// Debian keeps the server binaries here (not on PATH).
pub const BIN: &str = "/usr/lib/postgresql/15/bin";
/// The role the harness creates for tests (`cf`/`cf`, superuser).
pub const USER: &str = "cf";

static SEQ: AtomicU32 = AtomicU32::new(0);

/// One private server.
pub struct Postgres {
    dir: PathBuf,
    port: u16,
    settings: Vec<String>,
    child: Mutex<Option<Child>>,
}

/// The uid and gid of the `postgres` user.
fn postgres_ids() -> Result<(u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd")?;
    let line = passwd
        .lines()
        .find(|l| l.starts_with("postgres:"))
        .context("no postgres user (apt-get install postgresql)")?;
    let f: Vec<&str> = line.split(':').collect();
    Ok((f[2].parse()?, f[3].parse()?))
}

fn as_postgres(program: &str) -> Result<Command> {
    let (uid, gid) = postgres_ids()?;
    let mut c = Command::new(Path::new(BIN).join(program));
    c.uid(uid)
        .gid(gid)
        .env_remove("PGDATA")
        .env("LC_ALL", "C.UTF-8");
    Ok(c)
}

impl Postgres {
    /// The server shared by all tests of this test process.
    pub fn shared() -> &'static Postgres {
        static SHARED: OnceLock<Postgres> = OnceLock::new();
        SHARED.get_or_init(|| Postgres::start("shared").expect("start the shared PostgreSQL"))
    }

    /// Starts a server with the durable defaults (`fsync = on`,
    /// `synchronous_commit = on`).
    pub fn start(name: &str) -> Result<Self> {
        Self::start_with(name, &[])
    }

    /// A fresh directory under `target/harness/` owned by `postgres`.
    fn fresh_dir(name: &str) -> Result<PathBuf> {
        let dir = crate::target_dir().join("harness").join(format!(
            "pg-{name}-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::SeqCst)
        ));
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        std::fs::create_dir_all(dir.join("sock"))?;
        let status = Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(&dir)
            .status()?;
        if !status.success() {
            bail!("chown {} to postgres failed", dir.display());
        }
        Ok(dir)
    }

    fn free_port() -> Result<u16> {
        Ok(std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port())
    }

    /// Starts a primary and a streaming standby of it (`pg_basebackup -R`),
    /// the standby synchronous (`synchronous_standby_names = '*'`) when
    /// `synchronous`; returns once the primary reports the standby
    /// streaming (as `sync` when synchronous).
    pub fn start_cluster(name: &str, synchronous: bool) -> Result<(Postgres, Postgres)> {
        let primary = Self::start(&format!("{name}-primary"))?;
        let standby = Self::standby_of(&primary, &format!("{name}-standby"))?;
        if synchronous {
            primary.configure("synchronous_standby_names", "'*'")?;
        }
        let want = if synchronous { "sync" } else { "async" };
        let started = Instant::now();
        loop {
            let state = Self::scalar(
                &primary.socket_url_as("postgres", "postgres"),
                "SELECT sync_state FROM pg_stat_replication WHERE state = 'streaming'",
            )?;
            if state.as_deref() == Some(want) {
                return Ok((primary, standby));
            }
            if started.elapsed() > Duration::from_secs(60) {
                bail!("the standby is not streaming as {want}: {state:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Starts a streaming standby of `primary`: a base backup with the
    /// recovery settings (`-R`), on its own port and socket.
    pub fn standby_of(primary: &Postgres, name: &str) -> Result<Self> {
        let dir = Self::fresh_dir(name)?;
        let backup = as_postgres("pg_basebackup")?
            .arg("-D")
            .arg(dir.join("data"))
            .args(["-h", "127.0.0.1", "-p", &primary.port.to_string()])
            .args([
                "-U",
                "postgres",
                "-R",
                "-X",
                "stream",
                "-c",
                "fast",
                "--no-sync",
            ])
            .output()
            .context("run pg_basebackup")?;
        if !backup.status.success() {
            bail!(
                "pg_basebackup failed: {}",
                String::from_utf8_lossy(&backup.stderr)
            );
        }
        let server = Postgres {
            port: Self::free_port()?,
            dir,
            settings: vec![format!("cluster_name={name}")],
            child: Mutex::new(None),
        };
        server.boot()?;
        Ok(server)
    }

    /// Waits until database `db` exists here (a standby replays its
    /// creation after the primary's commit was acknowledged).
    pub fn wait_for_database(&self, db: &str) -> Result<()> {
        let started = Instant::now();
        let sql = format!("SELECT count(*) FROM pg_database WHERE datname = '{db}'");
        while Self::scalar(&self.socket_url_as("postgres", "postgres"), &sql)?.as_deref()
            != Some("1")
        {
            if started.elapsed() > Duration::from_secs(30) {
                bail!("database {db} was not replayed within 30 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// `ALTER SYSTEM SET name = value` and a reload (one statement each:
    /// ALTER SYSTEM refuses a transaction block).
    pub fn configure(&self, name: &str, value: &str) -> Result<()> {
        self.exec_as_postgres("postgres", &format!("ALTER SYSTEM SET {name} = {value}"))?;
        self.exec_as_postgres("postgres", "SELECT pg_reload_conf()")
    }

    /// Promotes a standby to primary and waits until it accepts writes.
    pub fn promote(&self) -> Result<()> {
        self.exec_as_postgres("postgres", "SELECT pg_promote(true, 60)")?;
        let started = Instant::now();
        while Self::scalar(
            &self.socket_url_as("postgres", "postgres"),
            "SELECT pg_is_in_recovery()",
        )?
        .as_deref()
            != Some("f")
        {
            if started.elapsed() > Duration::from_secs(60) {
                bail!("the standby was not promoted within 60 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// A machine's crash: SIGKILL to the postmaster and every backend at
    /// once (none of them answers a client again), then waits for it.
    pub fn crash_host(&self) -> Result<()> {
        self.each_process(libc::SIGKILL)?;
        if let Some(mut child) = self.child.lock().unwrap().take() {
            let _ = child.wait();
        }
        Ok(())
    }

    /// `pg_ctl stop -m immediate`: SIGQUIT to the postmaster, which ends
    /// every backend without a checkpoint; waits for it.
    pub fn stop_immediate(&self) -> Result<()> {
        let Some(mut child) = self.child.lock().unwrap().take() else {
            return Ok(());
        };
        // SAFETY: a signal to our own child.
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(child.id() as i32, libc::SIGQUIT);
        }
        child.wait()?;
        Ok(())
    }

    /// Starts a server with extra settings (`("fsync", "off")`, …).
    pub fn start_with(name: &str, settings: &[(&str, &str)]) -> Result<Self> {
        let dir = Self::fresh_dir(name)?;
        let init = as_postgres("initdb")?
            .arg("-D")
            .arg(dir.join("data"))
            .args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
            .output()
            .context("run initdb (apt-get install postgresql)")?;
        if !init.status.success() {
            bail!("initdb failed: {}", String::from_utf8_lossy(&init.stderr));
        }
        let server = Postgres {
            port: Self::free_port()?,
            dir,
            settings: settings.iter().map(|(k, v)| format!("{k}={v}")).collect(),
            child: Mutex::new(None),
        };
        server.boot()?;
        server.exec_as_postgres(
            "postgres",
            &format!("CREATE ROLE {USER} LOGIN SUPERUSER PASSWORD 'cf'"),
        )?;
        Ok(server)
    }

    fn boot(&self) -> Result<()> {
        let mut cmd = as_postgres("postgres")?;
        cmd.arg("-D")
            .arg(self.dir.join("data"))
            .arg("-k")
            .arg(self.dir.join("sock"))
            .args(["-p", &self.port.to_string()])
            .args(["-c", "listen_addresses=127.0.0.1"])
            .args(["-c", "max_connections=200"])
            .args(["-c", "shared_buffers=64MB"]);
        for s in &self.settings {
            cmd.args(["-c", s]);
        }
        let log = std::fs::File::create(self.dir.join("postgres.log"))?;
        cmd.stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        let child = spawn_bound_to_harness(cmd)?;
        *self.child.lock().unwrap() = Some(child);
        let started = Instant::now();
        loop {
            if self.try_connect().is_ok() {
                return Ok(());
            }
            if let Some(status) = self
                .child
                .lock()
                .unwrap()
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                bail!("postgres exited ({status}): {}", self.log_tail());
            }
            if started.elapsed() > Duration::from_secs(60) {
                bail!("postgres did not answer within 60 s: {}", self.log_tail());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn try_connect(&self) -> Result<()> {
        let url = self.socket_url_as("postgres", "postgres");
        block_on(async {
            let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await?;
            let task = tokio::spawn(conn);
            client.simple_query("SELECT 1").await?;
            drop(client);
            let _ = task.await;
            anyhow::Ok(())
        })
    }

    /// The server's log so far.
    pub fn log(&self) -> Result<String> {
        Ok(std::fs::read_to_string(self.dir.join("postgres.log"))?)
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.dir.join("postgres.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// The TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's pid, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.lock().unwrap().as_ref().map(Child::id)
    }

    /// The socket directory.
    pub fn socket_dir(&self) -> PathBuf {
        self.dir.join("sock")
    }

    /// `postgres://cf:cf@127.0.0.1:PORT/db` (TCP).
    pub fn url(&self, db: &str) -> String {
        format!("postgres://{USER}:cf@127.0.0.1:{}/{db}", self.port)
    }

    /// The same over the Unix socket (`?host=/path`).
    pub fn socket_url(&self, db: &str) -> String {
        self.socket_url_as(USER, db)
    }

    fn socket_url_as(&self, user: &str, db: &str) -> String {
        format!(
            "postgresql://{user}@localhost:{}/{db}?host={}",
            self.port,
            self.socket_dir().display()
        )
    }

    /// Creates a fresh, empty database for one test and returns its TCP URL.
    pub fn fresh_database(&self, label: &str) -> Result<String> {
        let safe: String = label
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
        let db = format!("t_{safe}_{}", SEQ.fetch_add(1, Ordering::SeqCst));
        self.exec("postgres", &format!("DROP DATABASE IF EXISTS {db}"))?;
        self.exec("postgres", &format!("CREATE DATABASE {db}"))?;
        Ok(self.url(&db))
    }

    /// Runs statements (simple query protocol) on database `db` as `cf`.
    pub fn exec(&self, db: &str, sql: &str) -> Result<()> {
        Self::exec_url(&self.url(db), sql)
    }

    fn exec_as_postgres(&self, db: &str, sql: &str) -> Result<()> {
        Self::exec_url(&self.socket_url_as("postgres", db), sql)
    }

    fn exec_url(url: &str, sql: &str) -> Result<()> {
        block_on(async {
            let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
            let task = tokio::spawn(conn);
            client.batch_execute(sql).await?;
            drop(client);
            let _ = task.await;
            anyhow::Ok(())
        })
    }

    /// The first column of the first row of `sql`, as text.
    pub fn scalar(url: &str, sql: &str) -> Result<Option<String>> {
        block_on(async {
            let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
            let task = tokio::spawn(conn);
            let rows = client.simple_query(sql).await?;
            let value = rows.into_iter().find_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(r) => Some(r.get(0).map(str::to_owned)),
                _ => None,
            });
            drop(client);
            let _ = task.await;
            anyhow::Ok(value.flatten())
        })
    }

    /// The first column of the first row of `sql` on a harness `url`, read
    /// with the database's own client (`psql`), not through any Rust driver:
    /// what checkers read to judge the code under test.
    pub fn client_scalar(url: &str, sql: &str) -> Result<String> {
        Ok(Self::client_rows(url, sql)?
            .into_iter()
            .next()
            .map(|row| row.join("|"))
            .unwrap_or_default())
    }

    /// Every row of `sql` on a harness `url`, read with `psql` (as
    /// [`Postgres::client_scalar`]): each row's `|`-separated values as text.
    pub fn client_rows(url: &str, sql: &str) -> Result<Vec<Vec<String>>> {
        let single = url.split('?').next().unwrap_or(url);
        let out = std::process::Command::new(format!("{BIN}/psql"))
            .args(["--no-psqlrc", "--tuples-only", "--no-align", "--quiet"])
            .arg(format!("--dbname={single}"))
            .arg(format!("--command={sql}"))
            .output()
            .context("run psql")?;
        if !out.status.success() {
            bail!("psql: {sql}: {}", String::from_utf8_lossy(&out.stderr));
        }
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.is_empty())
            .map(|l| l.split('|').map(str::to_owned).collect())
            .collect())
    }

    /// Freezes the postmaster and every backend (SIGSTOP to each process of
    /// the server: backends are its children, not threads).
    pub fn pause(&self) -> Result<()> {
        self.each_process(libc::SIGSTOP)
    }

    /// Thaws a paused server.
    pub fn resume(&self) -> Result<()> {
        self.each_process(libc::SIGCONT)
    }

    fn each_process(&self, sig: i32) -> Result<()> {
        let pid = self.pid().context("postgres is not running")?;
        let mut pids = vec![pid];
        for entry in std::fs::read_dir("/proc")?.flatten() {
            let Ok(p) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|s| s.parse::<u32>().ok());
            if ppid == Some(pid) {
                pids.push(p);
            }
        }
        for p in pids {
            // SAFETY: kill(2) on the server's own processes.
            #[allow(unsafe_code)]
            unsafe {
                libc::kill(p as i32, sig);
            }
        }
        Ok(())
    }

    /// kill -9 of the postmaster (a crash; its backends exit when they
    /// notice) and waits for it.
    pub fn crash(&self) -> Result<()> {
        if let Some(mut child) = self.child.lock().unwrap().take() {
            child.kill()?;
            child.wait()?;
        }
        // Orphaned backends hold the shared memory until they exit.
        std::thread::sleep(Duration::from_millis(300));
        Ok(())
    }

    /// Stops the server (fast shutdown) and waits for it.
    pub fn stop(&self) -> Result<()> {
        let Some(mut child) = self.child.lock().unwrap().take() else {
            return Ok(());
        };
        // SAFETY: signals to our own child.
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(child.id() as i32, libc::SIGCONT);
            libc::kill(child.id() as i32, libc::SIGINT);
        }
        let started = Instant::now();
        while child.try_wait()?.is_none() {
            if started.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.wait();
        Ok(())
    }

    /// Starts the server again on the same data directory and port (after
    /// `stop` or `crash`; recovery replays the WAL).
    pub fn restart(&self) -> Result<()> {
        if self.child.lock().unwrap().is_some() {
            self.stop()?;
        }
        let started = Instant::now();
        loop {
            match self.boot() {
                Ok(()) => return Ok(()),
                // After a crash the old backends may still hold the lock.
                Err(e) if started.elapsed() < Duration::from_secs(30) => {
                    let _ = e;
                    std::thread::sleep(Duration::from_millis(200));
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self.resume();
        let _ = self.stop();
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// After a fault under the payment flow (gateway `fault`, series `scope`,
/// table prefix `wp_`): delivers again every payment whose call got no
/// answer, then checks the books on `url`: every payment recorded once with
/// one distinct number, the registry covering 1..counter (a number exists
/// only with its registry row), no number used without its payment, and
/// every payment that was told a number stored with that number, its
/// registry row naming it (reserved or issued, never void).
pub fn redeliver_and_check_payments(url: &str, scope: &str, ops: &[crate::history::Op]) {
    use counterfoil_core::{PaymentRef, ScopeKey, Store, StoreConfig};
    let scope = ScopeKey::new(scope).unwrap();
    let retried: Vec<&str> = ops
        .iter()
        .filter(|o| !matches!(o.completion, crate::history::Completion::Ok(..)))
        .map(|o| o.label.as_str())
        .collect();
    block_on(async {
        let mut s = Store::connect(StoreConfig::new(url)).await.unwrap();
        for txn in &retried {
            s.record_payment(&scope, &PaymentRef::new("fault", txn).unwrap(), None, None)
                .await
                .unwrap();
        }
    });
    let num = |sql: &str| -> u64 { Postgres::client_scalar(url, sql).unwrap().parse().unwrap() };
    let payments = ops.len() as u64;
    assert_eq!(
        num("SELECT COUNT(*) FROM wp_counterfoil_payments"),
        payments
    );
    assert_eq!(
        num("SELECT COUNT(DISTINCT number) FROM wp_counterfoil_payments WHERE number IS NOT NULL"),
        payments,
        "one distinct number per payment"
    );
    let counter = num("SELECT current_value FROM wp_invoice_sequences");
    assert_eq!(
        num("SELECT COUNT(*) FROM wp_counterfoil_numbers"),
        counter,
        "the registry covers 1..counter: a number exists only with its row"
    );
    assert_eq!(counter, payments, "no number used without its payment");
    // Told = stored: every payment answered with a number holds that number,
    // and its registry row names that payment and is not void (counts alone
    // would pass a payment stored with another payment's number).
    let stored: std::collections::BTreeMap<String, (u64, String, String)> = Postgres::client_rows(
        url,
        "SELECT p.transaction_id, p.number, COALESCE(n.status, 'none'), COALESCE(n.transaction_id, '') \
         FROM wp_counterfoil_payments p LEFT JOIN wp_counterfoil_numbers n \
         ON n.scope_key = p.scope_key AND n.number = p.number WHERE p.gateway = 'fault'",
    )
    .unwrap()
    .into_iter()
    .map(|r| (r[0].clone(), (r[1].parse().unwrap(), r[2].clone(), r[3].clone())))
    .collect();
    for o in ops {
        if let crate::history::Completion::Ok(told, _) = o.completion {
            let (number, status, txn) = stored
                .get(&o.label)
                .unwrap_or_else(|| panic!("payment {} was told {told} and is not stored", o.label));
            assert_eq!(
                *number, told,
                "payment {} was told {told}, stored {number}",
                o.label
            );
            assert!(
                matches!(status.as_str(), "reserved" | "issued") && txn == &o.label,
                "payment {}: its number {told}'s registry row is {status} for {txn:?}",
                o.label
            );
        }
    }
}
