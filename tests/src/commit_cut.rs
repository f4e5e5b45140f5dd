//! A TCP proxy in front of a MariaDB server that loses the answer to a
//! COMMIT, the one moment whose outcome a client cannot know.
//!
//! When armed, it forwards the next `COMMIT` (a COM_QUERY packet, alone or
//! among the statements of one packet) to the server, waits for the
//! server's last answer to that packet (an OK packet without "more results"
//! or an error: every statement of it has run, the COMMIT included), drops
//! the whole answer and closes the client's connection: the client sees a
//! lost connection after sending COMMIT, and the commit has happened.
//! Every other byte is forwarded unchanged. A packet holding a COMMIT must
//! not return rows (its answers are OK packets, which this reads).
//! Clients must connect over TCP (no TLS; `prefer_socket=false` for
//! mysql_async).
//!
//! Armed to lie ([`CommitCut::arm_lie`]), it sends the next `COMMIT` to the
//! server as `ROLLBACK` and forwards the server's answer, an OK packet like
//! the COMMIT's: the client is told its transaction committed, and nothing
//! of it exists — what a Galera node has been seen to do with a transaction
//! another node's write set aborted after its last statement (MDEV-24775's
//! family; docs/galera.md).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use anyhow::Result;

use crate::mariadb::MariaDb;
use crate::wordpress::WordPress;

/// The proxy; it runs until dropped.
pub struct CommitCut {
    port: u16,
    armed: Arc<AtomicUsize>,
    lies: Arc<AtomicUsize>,
    /// The text of every COM_QUERY and COM_STMT_PREPARE sent through it.
    queries: Arc<std::sync::Mutex<Vec<String>>>,
    cuts: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl CommitCut {
    /// Listens on a free loopback port, forwarding to 127.0.0.1:`upstream`.
    pub fn start(upstream: u16) -> Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let armed = Arc::new(AtomicUsize::new(0));
        let lies = Arc::new(AtomicUsize::new(0));
        let cuts = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let queries = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (a, l, c, s) = (armed.clone(), lies.clone(), cuts.clone(), stop.clone());
        let q = queries.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                    continue;
                };
                let (a, l, c, q) = (a.clone(), l.clone(), c.clone(), q.clone());
                std::thread::spawn(move || relay(client, server, a, l, c, q));
            }
        });
        Ok(Self {
            port,
            armed,
            lies,
            queries,
            cuts,
            stop,
        })
    }

    /// The port clients connect to.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The next `n` COMMITs (on any connection) lose their answer.
    pub fn arm(&self, n: usize) {
        self.armed.store(n, Ordering::SeqCst);
    }

    /// The next `n` COMMITs (on any connection) are sent as ROLLBACK, and
    /// the client gets the server's OK: told committed, nothing kept.
    pub fn arm_lie(&self, n: usize) {
        self.lies.store(n, Ordering::SeqCst);
    }

    /// How many armed lies are still to be told (0: each was told).
    pub fn lies_left(&self) -> usize {
        self.lies.load(Ordering::SeqCst)
    }

    /// The statements sent through the proxy so far (COM_QUERY and
    /// COM_STMT_PREPARE texts) that contain `needle`.
    pub fn statements_with(&self, needle: &str) -> Vec<String> {
        self.queries
            .lock()
            .unwrap()
            .iter()
            .filter(|q| q.contains(needle))
            .cloned()
            .collect()
    }

    /// How many answers were dropped so far.
    pub fn cuts(&self) -> usize {
        self.cuts.load(Ordering::SeqCst)
    }
}

impl Drop for CommitCut {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so that it sees the stop flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// A fresh database behind a [`CommitCut`] proxy: (database URL, proxy,
/// the URL through the proxy).
pub fn database_behind_a_proxy(label: &str) -> (String, CommitCut, String) {
    let url = MariaDb::shared().fresh_database(label).unwrap();
    let db = MariaDb::database_name(&url);
    let proxy = CommitCut::start(MariaDb::shared().port()).unwrap();
    let via_proxy = format!(
        "mysql://cf:cf@127.0.0.1:{}/{db}?prefer_socket=false",
        proxy.port()
    );
    (url, proxy, via_proxy)
}

/// A WordPress site (series 1:2026 from 1) whose plugin connection goes
/// through a [`CommitCut`] proxy; WordPress's own does not.
pub fn site_behind_a_proxy(name: &str) -> (WordPress, CommitCut) {
    let wp = WordPress::install(MariaDb::shared(), name, None).unwrap();
    wp.eval(false, "initialize_invoice_sequence(1, 2026, 1);")
        .unwrap();
    let proxy = CommitCut::start(MariaDb::shared().port()).unwrap();
    wp.config_set(
        "COUNTERFOIL_DB_NODES",
        &format!("array('127.0.0.1:{}')", proxy.port()),
    );
    (wp, proxy)
}

/// Whether a MySQL packet payload is a COM_QUERY that commits: "COMMIT",
/// or a multi-statement packet with a COMMIT among its statements (the
/// one-trip payment flow), whose whole answer is then lost.
fn is_commit(payload: &[u8]) -> bool {
    payload.first() == Some(&0x03)
        && String::from_utf8_lossy(&payload[1..])
            .split(';')
            .any(|statement| statement.trim().eq_ignore_ascii_case("COMMIT"))
}

/// Whether `bytes` (whole server packets from the start of an answer) hold
/// the answer's last packet: an error, or an OK packet whose status lacks
/// `SERVER_MORE_RESULTS_EXISTS`.
fn holds_last_answer(bytes: &[u8]) -> bool {
    let mut at = 0;
    while bytes.len() >= at + 4 {
        let len = usize::from(bytes[at])
            | usize::from(bytes[at + 1]) << 8
            | usize::from(bytes[at + 2]) << 16;
        let Some(payload) = bytes.get(at + 4..at + 4 + len) else {
            return false;
        };
        match payload.first() {
            Some(0xFF) => return true,
            Some(0x00) => {
                // affected rows and last insert id (length-encoded), then
                // the status flags.
                let mut p = 1;
                for _ in 0..2 {
                    p += match payload.get(p) {
                        Some(0xFC) => 3,
                        Some(0xFD) => 4,
                        Some(0xFE) => 9,
                        _ => 1,
                    };
                }
                let flags = payload
                    .get(p..p + 2)
                    .map_or(0, |f| u16::from_le_bytes([f[0], f[1]]));
                if flags & 0x0008 == 0 {
                    return true;
                }
            }
            _ => {}
        }
        at += 4 + len;
    }
    false
}

/// The packet `packet` (header and payload) with each `COMMIT` statement
/// of its COM_QUERY turned into `ROLLBACK`, its length header rewritten.
fn as_rollback(packet: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(&packet[5..]);
    let statements: Vec<String> = text
        .split(';')
        .map(|s| {
            if s.trim().eq_ignore_ascii_case("COMMIT") {
                s.replace("COMMIT", "ROLLBACK")
                    .replace("commit", "ROLLBACK")
            } else {
                s.to_owned()
            }
        })
        .collect();
    let mut payload = vec![0x03];
    payload.extend_from_slice(statements.join(";").as_bytes());
    let len = payload.len();
    let mut out = vec![len as u8, (len >> 8) as u8, (len >> 16) as u8, packet[3]];
    out.extend_from_slice(&payload);
    out
}

fn relay(
    client: TcpStream,
    server: TcpStream,
    armed: Arc<AtomicUsize>,
    lies: Arc<AtomicUsize>,
    cuts: Arc<AtomicUsize>,
    queries: Arc<std::sync::Mutex<Vec<String>>>,
) {
    let cut_next_answer = Arc::new(AtomicBool::new(false));
    let (Ok(mut from_client), Ok(mut to_server)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    let flag = cut_next_answer.clone();
    let upstream = std::thread::spawn(move || {
        // Client → server, a whole packet at a time.
        let mut buf = Vec::new();
        let mut chunk = [0u8; 16384];
        loop {
            let n = match from_client.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            buf.extend_from_slice(&chunk[..n]);
            while buf.len() >= 4 {
                let len =
                    usize::from(buf[0]) | usize::from(buf[1]) << 8 | usize::from(buf[2]) << 16;
                if buf.len() < 4 + len {
                    break;
                }
                let mut packet: Vec<u8> = buf.drain(..4 + len).collect();
                if matches!(packet.get(4), Some(0x03 | 0x16)) {
                    let text = String::from_utf8_lossy(&packet[5..]).into_owned();
                    queries.lock().unwrap().push(text);
                }
                if is_commit(&packet[4..])
                    && lies
                        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |l| l.checked_sub(1))
                        .is_ok()
                {
                    packet = as_rollback(&packet);
                } else if is_commit(&packet[4..])
                    && armed
                        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |a| a.checked_sub(1))
                        .is_ok()
                {
                    flag.store(true, Ordering::SeqCst);
                }
                if to_server.write_all(&packet).is_err() {
                    return;
                }
            }
        }
        let _ = to_server.shutdown(Shutdown::Write);
    });
    // Server → client.
    let (mut from_server, mut to_client) = (server, client);
    let mut chunk = [0u8; 16384];
    let mut held = Vec::new();
    loop {
        let n = match from_server.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if cut_next_answer.load(Ordering::SeqCst) {
            // The answer to the packet holding the COMMIT: held back until
            // its last answer has come (the COMMIT has run), then lost.
            held.extend_from_slice(&chunk[..n]);
            if holds_last_answer(&held) {
                cuts.fetch_add(1, Ordering::SeqCst);
                break;
            }
            continue;
        }
        if to_client.write_all(&chunk[..n]).is_err() {
            break;
        }
    }
    let _ = to_client.shutdown(Shutdown::Both);
    let _ = from_server.shutdown(Shutdown::Both);
    let _ = upstream.join();
}
