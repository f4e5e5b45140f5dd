//! Several OS processes released at one start line.
//!
//! Invariants: no worker starts its real work before every worker has
//! reported ready (connected); each worker prints `start <ns>` and `end <ns>`
//! (wall clock) around its work, so [`Overlap::all_overlapped`] can prove that
//! the processes really ran at the same time; a worker still running after the
//! timeout is killed by pid and the run fails.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};

/// Environment variable naming the start-line directory.
pub const START_DIR_ENV: &str = "COUNTERFOIL_START_DIR";

/// What one worker left behind.
#[derive(Debug)]
pub struct Finished {
    /// Its exit status.
    pub status: ExitStatus,
    /// Everything it printed on stdout.
    pub stdout: String,
    /// Everything it printed on stderr.
    pub stderr: String,
}

impl Finished {
    fn stamp(&self, tag: &str) -> Option<u128> {
        self.stdout
            .lines()
            .find_map(|l| l.strip_prefix(tag)?.trim().parse().ok())
    }
}

/// When the workers ran.
#[derive(Debug)]
pub struct Overlap {
    /// Latest start of any worker (ns since the epoch).
    pub last_start: u128,
    /// Earliest end of any worker.
    pub first_end: u128,
}

impl Overlap {
    /// True when every worker had started before any worker finished.
    pub fn all_overlapped(&self) -> bool {
        self.last_start < self.first_end
    }
}

/// Reads the `start`/`end` stamps of every worker.
pub fn overlap(finished: &[Finished]) -> Result<Overlap> {
    let mut last_start = 0;
    let mut first_end = u128::MAX;
    for f in finished {
        last_start = last_start.max(f.stamp("start ").context("worker printed no start")?);
        first_end = first_end.min(f.stamp("end ").context("worker printed no end")?);
    }
    Ok(Overlap {
        last_start,
        first_end,
    })
}

type Reader = std::thread::JoinHandle<std::io::Result<String>>;

/// Workers released at one start line and still running.
pub struct Running {
    dir: PathBuf,
    children: Vec<Child>,
    readers: Vec<(Reader, Reader)>,
    started: Instant,
}

/// Starts `commands` together: each is started, connects, waits at the start
/// line; when all are ready they are released at once.
pub fn start_together(commands: Vec<Command>) -> Result<Running> {
    start_together_then(commands, || Ok(()))
}

/// As [`start_together`], running `before_go` once every worker is at the
/// start line and before they are released (a fake clock set then, say).
pub fn start_together_then(
    commands: Vec<Command>,
    before_go: impl FnOnce() -> Result<()>,
) -> Result<Running> {
    let dir = crate::target_dir().join("harness").join(format!(
        "start-{}-{}",
        std::process::id(),
        now_ns()
    ));
    std::fs::create_dir_all(&dir)?;
    let mut children: Vec<Child> = Vec::new();
    for mut cmd in commands {
        cmd.env(START_DIR_ENV, &dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        children.push(cmd.spawn().context("spawn worker")?);
    }
    let n = children.len();
    let started = Instant::now();
    let mut readers = Vec::new();
    for child in &mut children {
        let mut out = child.stdout.take().expect("piped");
        let mut err = child.stderr.take().expect("piped");
        readers.push((
            std::thread::spawn(move || {
                let mut s = String::new();
                std::io::Read::read_to_string(&mut out, &mut s).map(|_| s)
            }),
            std::thread::spawn(move || {
                let mut s = String::new();
                std::io::Read::read_to_string(&mut err, &mut s).map(|_| s)
            }),
        ));
    }
    let mut running = Running {
        dir,
        children,
        readers,
        started,
    };
    loop {
        let ready = std::fs::read_dir(&running.dir)?
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("ready."))
            .count();
        if ready >= n {
            break;
        }
        let exited = running
            .children
            .iter_mut()
            .find_map(|c| c.try_wait().ok().flatten());
        if exited.is_some() || started.elapsed() > Duration::from_secs(60) {
            let why = match exited {
                Some(st) => format!("a worker exited with {st} before the start line"),
                None => format!("only {ready} of {n} workers reached the start line in 60 s"),
            };
            let stderr: Vec<String> = running
                .finish(Duration::from_secs(5))
                .map(|f| f.into_iter().map(|f| f.stderr).collect())
                .unwrap_or_default();
            bail!("{why}: {}", stderr.join("\n"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    before_go()?;
    std::fs::write(running.dir.join("go"), b"go")?;
    Ok(running)
}

impl Running {
    /// Asks the workers to stop (they poll [`should_stop`]), then collects them.
    pub fn stop(self, timeout: Duration) -> Result<Vec<Finished>> {
        std::fs::write(self.dir.join("stop"), b"stop")?;
        self.finish(timeout)
    }

    /// Waits for every worker (killing those still running after `timeout`
    /// from the start) and collects what they printed.
    pub fn finish(mut self, timeout: Duration) -> Result<Vec<Finished>> {
        let mut statuses = Vec::new();
        for c in &mut self.children {
            statuses.push(wait_or_kill(c, self.started, timeout)?);
        }
        let mut finished = Vec::new();
        for ((o, e), status) in self.readers.into_iter().zip(statuses) {
            finished.push(Finished {
                status,
                stdout: o.join().expect("reader")?,
                stderr: e.join().expect("reader")?,
            });
        }
        let _ = std::fs::remove_dir_all(&self.dir);
        Ok(finished)
    }
}

/// Runs `commands` together ([`start_together`]) until they all exit.
pub fn run_together(commands: Vec<Command>, timeout: Duration) -> Result<Vec<Finished>> {
    start_together(commands)?.finish(timeout)
}

/// [`run_together`], then fails unless every worker exited 0 and all of them
/// ran at the same time (the proof that a concurrency test overlapped).
pub fn run_overlapping(commands: Vec<Command>, timeout: Duration) -> Result<Vec<Finished>> {
    run_overlapping_then(commands, timeout, || Ok(()))
}

/// As [`run_overlapping`], running `before_go` at the start line
/// ([`start_together_then`]).
pub fn run_overlapping_then(
    commands: Vec<Command>,
    timeout: Duration,
    before_go: impl FnOnce() -> Result<()>,
) -> Result<Vec<Finished>> {
    let finished = start_together_then(commands, before_go)?.finish(timeout)?;
    for f in &finished {
        if !f.status.success() {
            bail!("a worker failed ({}): {}", f.status, f.stderr);
        }
    }
    let o = overlap(&finished)?;
    if !o.all_overlapped() {
        bail!("the workers did not run at the same time: {o:?}");
    }
    Ok(finished)
}

fn wait_or_kill(c: &mut Child, started: Instant, timeout: Duration) -> Result<ExitStatus> {
    loop {
        if let Some(st) = c.try_wait()? {
            return Ok(st);
        }
        if started.elapsed() > timeout {
            let _ = c.kill();
            let _ = c.wait();
            bail!("worker {} still running after {timeout:?}: killed", c.id());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Worker side: report ready, then wait for the release (no-op when the
/// worker was not started by [`run_together`]).
pub fn wait_at_start_line() -> Result<()> {
    let Some(dir) = std::env::var_os(START_DIR_ENV).map(PathBuf::from) else {
        return Ok(());
    };
    std::fs::write(dir.join(format!("ready.{}", std::process::id())), b"")?;
    let waited = Instant::now();
    while !Path::new(&dir.join("go")).exists() {
        if waited.elapsed() > Duration::from_secs(120) {
            bail!("never released from the start line");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}

/// Worker side: whether the harness asked the workers to stop
/// ([`Running::stop`]); false when not started by the harness.
pub fn should_stop() -> bool {
    std::env::var_os(START_DIR_ENV)
        .map(|d| PathBuf::from(d).join("stop").exists())
        .unwrap_or(false)
}

/// Nanoseconds since the epoch.
pub fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_nanos()
}
