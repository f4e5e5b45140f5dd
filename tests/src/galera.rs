//! A 3-node MariaDB Galera cluster on loopback for tests (Debian's galera-4):
//! own datadirs, sockets and ports under `target/harness/`, the first node
//! bootstrapped with `--wsrep-new-cluster`, the others joining by rsync SST,
//! every node stopped by pid. A killed node restarts as a joiner.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use mysql_async::prelude::Queryable;

use crate::mariadb::{block_on, spawn_bound_to_harness, USER};

/// One node.
struct Node {
    dir: PathBuf,
    port: u16,
    gcomm: u16,
    child: Mutex<Option<Child>>,
}

/// The cluster.
pub struct Galera {
    dir: PathBuf,
    nodes: Vec<Node>,
}

fn free_port_block() -> Result<u16> {
    // gcomm, IST (+1) and SST (+2) ports must all be free: probe a block.
    for _ in 0..50 {
        let base = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        if base > 60_000 {
            continue;
        }
        if (1..=3).all(|i| TcpListener::bind(("127.0.0.1", base + i)).is_ok()) {
            return Ok(base);
        }
    }
    bail!("no free block of ports")
}

impl Galera {
    /// Starts three nodes and waits until all are synced.
    pub fn start(name: &str) -> Result<Self> {
        let dir = crate::target_dir()
            .join("harness")
            .join(format!("galera-{name}-{}", std::process::id()));
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        let mut nodes = Vec::new();
        for i in 0..3 {
            let ndir = dir.join(format!("node{}", i + 1));
            std::fs::create_dir_all(ndir.join("data"))?;
            std::fs::create_dir_all(ndir.join("tmp"))?;
            nodes.push(Node {
                dir: ndir,
                port: TcpListener::bind("127.0.0.1:0")?.local_addr()?.port(),
                gcomm: free_port_block()?,
                child: Mutex::new(None),
            });
        }
        let cluster = Galera { dir, nodes };
        let install = Command::new("mariadb-install-db")
            .args([
                "--no-defaults",
                &format!("--datadir={}", cluster.nodes[0].dir.join("data").display()),
                &format!("--tmpdir={}", cluster.nodes[0].dir.join("tmp").display()),
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
            ])
            .output()
            .context("mariadb-install-db")?;
        if !install.status.success() {
            bail!(
                "mariadb-install-db: {}",
                String::from_utf8_lossy(&install.stderr)
            );
        }
        // rsync SST runs its daemon as nobody: the joiners' datadirs are theirs.
        for n in &cluster.nodes[1..] {
            Command::new("chown")
                .arg("-R")
                .arg("nobody:nogroup")
                .arg(&n.dir)
                .status()?;
        }
        cluster.boot(0, true)?;
        cluster.wait_synced(0)?;
        block_on(async {
            let mut c =
                mysql_async::Conn::new(mysql_async::Opts::from_url(&cluster.root_url(0))?).await?;
            c.query_drop(format!(
                "CREATE USER '{USER}'@'%' IDENTIFIED BY 'cf'; GRANT ALL ON *.* TO '{USER}'@'%'; \
                 CREATE USER '{USER}'@'localhost' IDENTIFIED BY 'cf'; GRANT ALL ON *.* TO '{USER}'@'localhost'"
            ))
            .await?;
            c.disconnect().await?;
            anyhow::Ok(())
        })?;
        for i in 1..3 {
            cluster.boot(i, false)?;
        }
        for i in 1..3 {
            // A joiner that aborts while it joins (seen once on a loaded
            // 2-core machine: a partitioned view at start, SIGABRT) is
            // started once more: the harness's set-up, not the code under
            // test; a second failure fails the test.
            if let Err(first) = cluster.wait_synced(i) {
                eprintln!(
                    "galera: node {} did not join ({first}); starting it again",
                    i + 1
                );
                cluster.crash(i)?;
                cluster.rejoin(i)?;
            }
        }
        Ok(cluster)
    }

    fn cluster_address(&self) -> String {
        let list: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.gcomm))
            .collect();
        format!("gcomm://{}", list.join(","))
    }

    fn socket(&self, i: usize) -> PathBuf {
        self.nodes[i].dir.join("mariadbd.sock")
    }

    fn root_url(&self, i: usize) -> String {
        format!(
            "mysql://root@localhost/mysql?socket={}",
            self.socket(i).display()
        )
    }

    fn boot(&self, i: usize, bootstrap: bool) -> Result<()> {
        let n = &self.nodes[i];
        let mut cmd = Command::new("/usr/sbin/mariadbd");
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", n.dir.join("data").display()))
            .arg(format!("--tmpdir={}", n.dir.join("tmp").display()))
            .arg(format!("--socket={}", self.socket(i).display()))
            .arg(format!("--port={}", n.port))
            .arg("--bind-address=127.0.0.1")
            .arg("--user=root")
            .arg(format!("--log-error={}", n.dir.join("mariadbd.err").display()))
            .arg(format!("--pid-file={}", n.dir.join("mariadbd.pid").display()))
            .arg("--innodb-flush-log-at-trx-commit=1")
            .arg("--innodb-buffer-pool-size=64M")
            .arg("--max-connections=300")
            .arg("--skip-name-resolve")
            .arg("--wsrep-on=ON")
            .arg("--wsrep-provider=/usr/lib/galera/libgalera_smm.so")
            .arg("--wsrep-cluster-name=counterfoil")
            .arg(format!("--wsrep-cluster-address={}", self.cluster_address()))
            .arg(format!("--wsrep-node-address=127.0.0.1:{}", n.gcomm))
            .arg(format!("--wsrep-node-name=node{}", i + 1))
            .arg(format!(
                "--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:{};ist.recv_addr=127.0.0.1:{}",
                n.gcomm,
                n.gcomm + 1
            ))
            .arg(format!("--wsrep-sst-receive-address=127.0.0.1:{}", n.gcomm + 2))
            .arg("--wsrep-sst-method=rsync")
            // A failing run keeps the nodes' logs (the directory is kept
            // when the test panics): with every certification conflict and
            // brute-force abort in them, by connection id.
            .arg("--wsrep-log-conflicts=ON")
            .arg("--binlog-format=ROW")
            .arg("--innodb-autoinc-lock-mode=2")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if bootstrap {
            cmd.arg("--wsrep-new-cluster");
        }
        let child = spawn_bound_to_harness(cmd)?;
        *n.child.lock().unwrap() = Some(child);
        Ok(())
    }

    /// Waits until node `i` answers and reports wsrep_local_state = 4 (Synced).
    pub fn wait_synced(&self, i: usize) -> Result<()> {
        let started = Instant::now();
        loop {
            if let Some(st) = self.nodes[i]
                .child
                .lock()
                .unwrap()
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                bail!("node {} exited with {st}: {}", i + 1, self.log_tail(i));
            }
            let state = block_on(async {
                let opts = mysql_async::Opts::from_url(&self.root_url(i)).ok()?;
                let mut c =
                    tokio::time::timeout(Duration::from_secs(2), mysql_async::Conn::new(opts))
                        .await
                        .ok()?
                        .ok()?;
                let s: Option<(String, String)> = c
                    .query_first("SHOW STATUS LIKE 'wsrep_local_state'")
                    .await
                    .ok()?;
                let _ = c.disconnect().await;
                s.map(|(_, v)| v)
            });
            if state.as_deref() == Some("4") {
                return Ok(());
            }
            if started.elapsed() > Duration::from_secs(120) {
                bail!(
                    "node {} not synced after 120 s: {}",
                    i + 1,
                    self.log_tail(i)
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn log_tail(&self, i: usize) -> String {
        let log =
            std::fs::read_to_string(self.nodes[i].dir.join("mariadbd.err")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// `mysql://cf:cf@127.0.0.1:PORT/db` of node `i`.
    pub fn url(&self, i: usize, db: &str) -> String {
        format!(
            "mysql://{USER}:cf@127.0.0.1:{}/{db}?prefer_socket=false",
            self.nodes[i].port
        )
    }

    /// The port of node `i`.
    pub fn port(&self, i: usize) -> u16 {
        self.nodes[i].port
    }

    /// All three nodes, comma-separated, node 1 first: the store's node list.
    pub fn urls(&self, db: &str) -> String {
        (0..3)
            .map(|i| self.url(i, db))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Runs statements on node 1 as the test user.
    pub fn exec(&self, sql: &str) -> Result<()> {
        let url = self.url(0, "mysql");
        block_on(async {
            let mut c = mysql_async::Conn::new(mysql_async::Opts::from_url(&url)?).await?;
            c.query_drop(sql).await?;
            c.disconnect().await?;
            anyhow::Ok(())
        })
    }

    /// Runs statements on node `i` as root, through its socket.
    pub fn exec_on(&self, i: usize, sql: &str) -> Result<()> {
        let url = self.root_url(i);
        block_on(async {
            let mut c = mysql_async::Conn::new(mysql_async::Opts::from_url(&url)?).await?;
            c.query_drop(sql).await?;
            c.disconnect().await?;
            anyhow::Ok(())
        })
    }

    /// Where node `i` keeps its data and its error log (`mariadbd.err`).
    pub fn node_dir(&self, i: usize) -> &std::path::Path {
        &self.nodes[i].dir
    }

    /// kill -9 of node `i`.
    pub fn crash(&self, i: usize) -> Result<()> {
        if let Some(mut c) = self.nodes[i].child.lock().unwrap().take() {
            c.kill()?;
            c.wait()?;
        }
        Ok(())
    }

    /// Restarts node `i` as a joiner and waits until it is synced again.
    pub fn rejoin(&self, i: usize) -> Result<()> {
        // A state transfer by rsync writes as nobody.
        Command::new("chown")
            .arg("-R")
            .arg("nobody:nogroup")
            .arg(&self.nodes[i].dir)
            .status()?;
        self.boot(i, false)?;
        self.wait_synced(i)
    }

    /// Cuts node `i` off from the others (`gmcast.isolate=1`): it keeps
    /// answering, non-primary, and waits until it reports
    /// `wsrep_ready = OFF`.
    pub fn isolate(&self, i: usize) -> Result<()> {
        let url = self.url(i, "mysql");
        block_on(async {
            let mut c = mysql_async::Conn::new(mysql_async::Opts::from_url(&url)?).await?;
            c.query_drop("SET GLOBAL wsrep_provider_options = 'gmcast.isolate=1'")
                .await?;
            let started = Instant::now();
            loop {
                let ready: Option<(String, String)> =
                    c.query_first("SHOW STATUS LIKE 'wsrep_ready'").await?;
                if ready.is_some_and(|(_, v)| v.eq_ignore_ascii_case("OFF")) {
                    break;
                }
                if started.elapsed() > Duration::from_secs(30) {
                    bail!("node {} still ready 30 s after its isolation", i + 1);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            c.disconnect().await?;
            anyhow::Ok(())
        })
    }

    /// Waits until every running node has applied what it received
    /// (`wsrep_local_recv_queue` 0 on each, read twice in a row): between
    /// two phases of a test, so that a phase does not start with nodes still
    /// applying the last one's write sets (on 2 cores they can lag by
    /// seconds, and causal reads then wait past the calls' deadlines).
    pub fn wait_caught_up(&self) -> Result<()> {
        let started = Instant::now();
        let mut quiet = 0;
        while quiet < 2 {
            let mut queued = 0u64;
            for i in 0..self.nodes.len() {
                if self.nodes[i].child.lock().unwrap().is_none() {
                    continue;
                }
                let url = self.url(i, "mysql");
                queued += block_on(async {
                    let mut c = mysql_async::Conn::new(mysql_async::Opts::from_url(&url)?).await?;
                    let q: Option<(String, u64)> = c
                        .query_first("SHOW STATUS LIKE 'wsrep_local_recv_queue'")
                        .await?;
                    c.disconnect().await?;
                    anyhow::Ok(q.map_or(0, |(_, v)| v))
                })?;
            }
            quiet = if queued == 0 { quiet + 1 } else { 0 };
            if started.elapsed() > Duration::from_secs(60) {
                bail!("the nodes did not catch up within 60 s ({queued} write sets queued)");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    }

    /// wsrep_cluster_size seen by node `i`.
    pub fn cluster_size(&self, i: usize) -> Result<u64> {
        let url = self.url(i, "mysql");
        block_on(async {
            let mut c = mysql_async::Conn::new(mysql_async::Opts::from_url(&url)?).await?;
            let s: Option<(String, String)> = c
                .query_first("SHOW STATUS LIKE 'wsrep_cluster_size'")
                .await?;
            c.disconnect().await?;
            Ok(s.map(|(_, v)| v.parse().unwrap_or(0)).unwrap_or(0))
        })
    }
}

impl Drop for Galera {
    fn drop(&mut self) {
        for n in &self.nodes {
            if let Some(mut c) = n.child.lock().unwrap().take() {
                // SAFETY: SIGTERM to our own child.
                #[allow(unsafe_code)]
                unsafe {
                    libc::kill(c.id() as i32, libc::SIGTERM);
                }
                let t = Instant::now();
                while c.try_wait().ok().flatten().is_none() && t.elapsed() < Duration::from_secs(30)
                {
                    std::thread::sleep(Duration::from_millis(50));
                }
                let _ = c.kill();
                let _ = c.wait();
            }
        }
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
