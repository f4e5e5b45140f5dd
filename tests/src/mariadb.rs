//! Private MariaDB servers for tests.
//!
//! Invariants: a server lives in `target/harness/<name>-<pid>-<n>/` with its
//! own datadir, socket and TCP port on 127.0.0.1, started with
//! `--no-defaults` so no system configuration leaks in; it is stopped by its
//! own pid (SIGTERM, then SIGKILL after 30 s), never by name; if the test
//! process dies first, the kernel sends the server SIGTERM (PDEATHSIG).

use std::io;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use mysql_async::prelude::Queryable;

/// The user the harness creates for tests (`cf`/`cf`, all privileges).
pub const USER: &str = "cf";
const PASSWORD: &str = "cf";

static SEQ: AtomicU32 = AtomicU32::new(0);

/// One private server.
pub struct MariaDb {
    name: String,
    dir: PathBuf,
    port: u16,
    extra: Vec<String>,
    child: Mutex<Option<Child>>,
}

impl MariaDb {
    /// The server shared by all tests of this test process, started on first
    /// use with durable settings. It stops when the process exits.
    pub fn shared() -> &'static MariaDb {
        static SHARED: OnceLock<MariaDb> = OnceLock::new();
        SHARED.get_or_init(|| MariaDb::start("shared").expect("start the shared MariaDB"))
    }

    /// Starts a server with durable settings (`innodb_flush_log_at_trx_commit=1`).
    pub fn start(name: &str) -> Result<Self> {
        Self::start_with(name, &[])
    }

    /// Starts a server with extra `mariadbd` options, e.g.
    /// `--innodb-flush-log-at-trx-commit=0`.
    pub fn start_with(name: &str, extra: &[&str]) -> Result<Self> {
        let dir = crate::target_dir().join("harness").join(format!(
            "{name}-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::SeqCst)
        ));
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        std::fs::create_dir_all(dir.join("tmp"))?;
        // A copy of the run's one initialised datadir (target/harness is
        // emptied at the start of each ./scripts/test run).
        let template = datadir_template()?;
        let cp = Command::new("cp")
            .arg("-a")
            .arg(&template)
            .arg(dir.join("data"))
            .status()?;
        if !cp.success() {
            bail!("copy the initialised datadir {}", template.display());
        }
        let server = MariaDb {
            name: name.to_owned(),
            dir,
            port: 0,
            extra: extra.iter().map(|s| s.to_string()).collect(),
            child: Mutex::new(None),
        };
        server.boot_fresh()
    }

    fn boot_fresh(mut self) -> Result<Self> {
        self.port = free_port()?;
        self.boot()?;
        // Root over the socket; create the test user reachable over TCP.
        let root_url = format!(
            "mysql://root@localhost/mysql?socket={}",
            self.socket().display()
        );
        block_on(async {
            let mut conn = mysql_async::Conn::new(mysql_async::Opts::from_url(&root_url)?).await?;
            conn.query_drop(format!(
                "CREATE USER '{USER}'@'%' IDENTIFIED BY '{PASSWORD}'; \
                 GRANT ALL PRIVILEGES ON *.* TO '{USER}'@'%' WITH GRANT OPTION; \
                 CREATE USER '{USER}'@'localhost' IDENTIFIED BY '{PASSWORD}'; \
                 GRANT ALL PRIVILEGES ON *.* TO '{USER}'@'localhost' WITH GRANT OPTION"
            ))
            .await?;
            conn.disconnect().await?;
            Ok::<_, anyhow::Error>(())
        })?;
        Ok(self)
    }

    /// Starts `mariadbd` on the existing datadir and waits until it answers.
    fn boot(&self) -> Result<()> {
        let mut cmd = Command::new("/usr/sbin/mariadbd");
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", self.dir.join("data").display()))
            .arg(format!("--socket={}", self.socket().display()))
            .arg(format!("--tmpdir={}", self.dir.join("tmp").display()))
            .arg(format!("--port={}", self.port))
            .arg("--bind-address=127.0.0.1")
            .arg(format!(
                "--pid-file={}",
                self.dir.join("mariadbd.pid").display()
            ))
            .arg(format!("--log-error={}", self.log_path().display()))
            .arg("--user=root")
            .arg("--innodb-flush-log-at-trx-commit=1")
            .arg("--innodb-buffer-pool-size=64M")
            .arg("--innodb-log-file-size=48M")
            .arg("--max-connections=500")
            .arg("--skip-name-resolve")
            .args(&self.extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut child = spawn_bound_to_harness(cmd)?;
        let started = Instant::now();
        loop {
            if let Some(status) = child.try_wait()? {
                bail!(
                    "mariadbd ({}) exited with {status} during start-up; log:\n{}",
                    self.name,
                    self.log_tail()
                );
            }
            if self.socket().exists() && self.answers() {
                break;
            }
            if started.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                let _ = child.wait();
                bail!(
                    "mariadbd ({}) not ready after 60 s; log:\n{}",
                    self.name,
                    self.log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        *self.child.lock().unwrap() = Some(child);
        Ok(())
    }

    /// True when the server sends its protocol greeting on the socket (a
    /// plain blocking read, so it works inside or outside a runtime).
    fn answers(&self) -> bool {
        use std::io::Read;
        let Ok(mut sock) = std::os::unix::net::UnixStream::connect(self.socket()) else {
            return false;
        };
        let _ = sock.set_read_timeout(Some(Duration::from_secs(2)));
        let mut greeting = [0u8; 5];
        // 3-byte length, sequence id 0, protocol version 10.
        sock.read_exact(&mut greeting).is_ok() && greeting[3] == 0 && greeting[4] == 10
    }

    /// The server's pid.
    pub fn pid(&self) -> u32 {
        self.child
            .lock()
            .unwrap()
            .as_ref()
            .map(|c| c.id())
            .expect("server running")
    }

    /// TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's unix socket.
    pub fn socket(&self) -> PathBuf {
        self.dir.join("mariadbd.sock")
    }

    /// The server's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `mysql://cf:cf@127.0.0.1:PORT/db` (TCP).
    pub fn url(&self, db: &str) -> String {
        format!(
            "mysql://{USER}:{PASSWORD}@127.0.0.1:{}/{db}?prefer_socket=false",
            self.port
        )
    }

    /// The same database over the unix socket.
    pub fn socket_url(&self, db: &str) -> String {
        format!(
            "mysql://{USER}:{PASSWORD}@localhost/{db}?socket={}",
            self.socket().display()
        )
    }

    /// Creates a fresh, empty database for one test and returns its TCP URL.
    pub fn fresh_database(&self, label: &str) -> Result<String> {
        let safe: String = label
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .take(40)
            .collect();
        let db = format!("t_{safe}_{}", SEQ.fetch_add(1, Ordering::SeqCst));
        self.exec(
            "mysql",
            &format!("DROP DATABASE IF EXISTS `{db}`; CREATE DATABASE `{db}`"),
        )?;
        Ok(self.url(&db))
    }

    /// The database name of a harness URL (`…/db?…` → `db`).
    pub fn database_name(url: &str) -> String {
        let path = url.rsplit('/').next().unwrap_or_default();
        path.split('?').next().unwrap_or_default().to_owned()
    }

    /// Runs statements (text protocol) on database `db`.
    pub fn exec(&self, db: &str, sql: &str) -> Result<()> {
        let url = self.url(db);
        block_on(async {
            let mut conn = mysql_async::Conn::new(mysql_async::Opts::from_url(&url)?).await?;
            conn.query_drop(sql).await?;
            conn.disconnect().await?;
            Ok(())
        })
    }

    /// Runs a query on the database of `url` and returns every value as text
    /// (`NULL` as `None`).
    pub fn query(url: &str, sql: &str) -> Result<Vec<Vec<Option<String>>>> {
        block_on(async {
            let mut conn = mysql_async::Conn::new(mysql_async::Opts::from_url(url)?).await?;
            let rows: Vec<mysql_async::Row> = conn.query(sql).await?;
            conn.disconnect().await?;
            Ok(rows
                .into_iter()
                .map(|row| {
                    row.unwrap()
                        .into_iter()
                        .map(|v| match v {
                            mysql_async::Value::NULL => None,
                            mysql_async::Value::Bytes(b) => {
                                Some(String::from_utf8_lossy(&b).into_owned())
                            }
                            other => Some(other.as_sql(true).trim_matches('\'').to_owned()),
                        })
                        .collect()
                })
                .collect())
        })
    }

    /// Runs a query on the database of a harness `url` with the database's
    /// own command-line client (`mariadb --batch`), not through any Rust
    /// driver: what checkers read to judge the code under test. Each row's
    /// tab-separated values as text (`NULL` as the text `NULL`).
    pub fn client_query(url: &str, sql: &str) -> Result<Vec<Vec<String>>> {
        let parsed = mysql_async::Opts::from_url(url)?;
        let mut c = Command::new("mariadb");
        c.args(["--batch", "--skip-column-names", "--raw", "--protocol=TCP"])
            .arg(format!("--host={}", parsed.ip_or_hostname()))
            .arg(format!("--port={}", parsed.tcp_port()))
            .arg(format!("--user={}", parsed.user().unwrap_or_default()))
            .arg(format!("--password={}", parsed.pass().unwrap_or_default()))
            .arg(format!(
                "--database={}",
                parsed.db_name().unwrap_or_default()
            ))
            .arg(format!("--execute={sql}"));
        let out = c.output().context("run the mariadb client")?;
        if !out.status.success() {
            bail!(
                "mariadb client: {sql}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.split('\t').map(str::to_owned).collect())
            .collect())
    }

    /// The first column of the first row of a query, as text.
    pub fn scalar(url: &str, sql: &str) -> Result<Option<String>> {
        Ok(Self::query(url, sql)?
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten()))
    }

    /// Sends a signal to the server.
    pub fn signal(&self, sig: i32) -> Result<()> {
        let pid = self.pid() as i32;
        // SAFETY: kill(2) on our own child's pid; no memory is involved.
        #[allow(unsafe_code)]
        let rc = unsafe { libc::kill(pid, sig) };
        if rc != 0 {
            bail!("kill({pid}, {sig}): {}", io::Error::last_os_error());
        }
        Ok(())
    }

    /// Freezes the server (SIGSTOP): it keeps its sockets but answers
    /// nothing. Returns once every thread of it is stopped (the signal is
    /// delivered asynchronously: on a loaded machine a running thread could
    /// otherwise still answer a query sent right after).
    pub fn pause(&self) -> Result<()> {
        self.signal(libc::SIGSTOP)?;
        let tasks = format!("/proc/{}/task", self.pid());
        let started = std::time::Instant::now();
        loop {
            let all_stopped = std::fs::read_dir(&tasks)?.filter_map(|e| e.ok()).all(|t| {
                std::fs::read_to_string(t.path().join("stat"))
                    .ok()
                    .and_then(|stat| {
                        // The state follows the parenthesised command name.
                        stat.rsplit_once(')')
                            .and_then(|(_, rest)| rest.split_whitespace().next().map(str::to_owned))
                    })
                    .is_none_or(|state| state == "T" || state == "t")
            });
            if all_stopped {
                return Ok(());
            }
            if started.elapsed() > std::time::Duration::from_secs(5) {
                bail!("mariadbd {} did not stop within 5 s of SIGSTOP", self.pid());
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    /// Thaws a paused server (SIGCONT).
    pub fn resume(&self) -> Result<()> {
        self.signal(libc::SIGCONT)
    }

    /// Stops the server cleanly and waits for it.
    pub fn stop(&self) -> Result<()> {
        let Some(mut child) = self.child.lock().unwrap().take() else {
            return Ok(());
        };
        // A paused server cannot shut down.
        // SAFETY: signals to our own child's pid.
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(child.id() as i32, libc::SIGCONT);
            libc::kill(child.id() as i32, libc::SIGTERM);
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

    /// Kills the server with SIGKILL (a crash) and waits for it to die.
    pub fn crash(&self) -> Result<()> {
        if let Some(mut child) = self.child.lock().unwrap().take() {
            child.kill()?;
            child.wait()?;
        }
        Ok(())
    }

    /// Starts the server again on the same datadir and port (after `stop` or `crash`).
    pub fn restart(&self) -> Result<()> {
        if self.child.lock().unwrap().is_some() {
            self.stop()?;
        }
        self.boot()
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join("mariadbd.err")
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.log_path()).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

impl Drop for MariaDb {
    fn drop(&mut self) {
        let _ = self.stop();
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Runs a future on a fresh current-thread runtime (harness calls are
/// synchronous so tests can use them anywhere).
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
        .block_on(f)
}

fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

type SpawnRequest = (Command, mpsc::Sender<io::Result<Child>>);

/// Spawns `cmd` from a harness thread that lives as long as the process, with
/// `PR_SET_PDEATHSIG = SIGTERM`: if the test process dies, so does the server.
/// (PDEATHSIG follows the spawning *thread*, hence the dedicated thread.)
pub(crate) fn spawn_bound_to_harness(cmd: Command) -> Result<Child> {
    static KEEPER: OnceLock<Mutex<mpsc::Sender<SpawnRequest>>> = OnceLock::new();
    let keeper = KEEPER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        std::thread::Builder::new()
            .name("harness-keeper".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    // SAFETY: prctl in the forked child before exec; it
                    // touches no memory of the parent.
                    #[allow(unsafe_code)]
                    unsafe {
                        cmd.pre_exec(|| {
                            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                                return Err(io::Error::last_os_error());
                            }
                            Ok(())
                        });
                    }
                    let _ = reply.send(cmd.spawn());
                }
                // Keep the thread (the servers' parent) alive until exit.
                loop {
                    std::thread::park();
                }
            })
            .expect("spawn the harness keeper thread");
        Mutex::new(tx)
    });
    let (tx, rx) = mpsc::channel();
    keeper
        .lock()
        .unwrap()
        .send((cmd, tx))
        .context("harness keeper gone")?;
    Ok(rx.recv().context("harness keeper gone")??)
}

/// Row lock waits the server has begun since it started
/// (`Innodb_row_lock_waits`), read on a connection of its own: what a test
/// holding a lock waits on to know a call is queued behind it.
pub async fn row_lock_waits(url: &str) -> u64 {
    let mut c = mysql_async::Conn::new(mysql_async::Opts::from_url(url).unwrap())
        .await
        .unwrap();
    let (_, v): (String, u64) = c
        .query_first("SHOW GLOBAL STATUS LIKE 'Innodb_row_lock_waits'")
        .await
        .unwrap()
        .unwrap();
    c.disconnect().await.unwrap();
    v
}

/// The run's initialised datadir (`mariadb-install-db` once, about 1 s;
/// each private server copies it, about 0.2 s): made on first use by
/// whichever test process needs it first, in a directory of its own, then
/// renamed into place, so concurrent processes never see half of one.
fn datadir_template() -> Result<PathBuf> {
    static MADE: Mutex<()> = Mutex::new(());
    let _one_at_a_time = MADE.lock().unwrap_or_else(|e| e.into_inner());
    let harness = crate::target_dir().join("harness");
    let template = harness.join("datadir-template");
    if template.join("mysql").exists() {
        return Ok(template);
    }
    let work = harness.join(format!("datadir-template.{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(work.join("tmp"))?;
    // Own tmpdir: concurrent bootstraps sharing /tmp collide on temporary
    // table names.
    let install = Command::new("mariadb-install-db")
        .args([
            "--no-defaults",
            &format!("--datadir={}", work.join("data").display()),
            &format!("--tmpdir={}", work.join("tmp").display()),
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
        ])
        .env("TMPDIR", work.join("tmp"))
        .output()
        .context("run mariadb-install-db (apt-get install mariadb-server)")?;
    if !install.status.success() {
        bail!(
            "mariadb-install-db failed: {}",
            String::from_utf8_lossy(&install.stderr)
        );
    }
    // Another process may have won the race: its template is as good.
    if std::fs::rename(work.join("data"), &template).is_err() && !template.join("mysql").exists() {
        bail!(
            "could not put the datadir template at {}",
            template.display()
        );
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(template)
}
