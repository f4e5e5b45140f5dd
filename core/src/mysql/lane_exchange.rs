//! The allocation lane's hot exchange: one prepared statement executed on
//! the lane's socket and its one-packet answer read back, without the
//! driver's blocking read. The request is framed and the answer parsed by
//! `mysql_common` (the protocol code the driver itself uses); only the
//! transport is ours.
//!
//! Why: a thread blocked in `recv()` on a unix socket is woken when the
//! server *reads* the request (the kernel's write-space wake-up reaches
//! every sleeper on the socket), finds nothing, and sleeps again: two
//! context switches per number where one will do. Measured on these
//! machines (docs/benchmarks.md) that second switch cost about 10 µs of
//! CPU per allocation. Waiting in `poll(POLLIN)` is woken only by data, as
//! PHP's mysqlnd does.
//!
//! Invariants:
//! - every wait (`ppoll`) is bounded by the time left before the caller's
//!   deadline; a wait that runs out is an `io::ErrorKind::TimedOut` error
//!   and the caller closes the connection, whose state is then unknown;
//! - reads and writes never block (`MSG_DONTWAIT`); nothing is read that the
//!   answer does not contain, so the driver's own buffers stay in step;
//! - the answer is exactly one OK or ERR packet (a MariaDB progress report
//!   before it is skipped); anything else — a result set, "more results",
//!   a packet out of sequence, the server gone — is an error that closes
//!   the connection;
//! - used only on a plain connection (no TLS, no compression), where the
//!   socket carries the protocol's bytes as they are.

use std::io;
use std::os::fd::RawFd;
use std::time::Instant;

use bytes::BytesMut;
use mysql::Value;
use mysql_common::constants::{CapabilityFlags, StatusFlags};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{
    ComStmtExecuteRequestBuilder, CommonOkPacket, ErrPacket, OkPacketDeserializer,
};
use mysql_common::proto::codec::error::PacketCodecError;
use mysql_common::proto::codec::PacketCodec;
use mysql_common::proto::MySerialize;

/// What an OK packet says about the statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Done {
    pub affected_rows: u64,
    /// `None` when the packet's last-insert-id is zero.
    pub last_insert_id: Option<u64>,
}

/// Waits until `fd` is ready for `events` or `until` passes.
#[allow(unsafe_code)]
fn wait(fd: RawFd, events: libc::c_short, until: Instant) -> io::Result<()> {
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "no answer before the deadline",
            ));
        }
        let timeout = libc::timespec {
            tv_sec: left.as_secs() as libc::time_t,
            tv_nsec: left.subsec_nanos() as libc::c_long,
        };
        let mut poll = libc::pollfd {
            fd,
            events,
            revents: 0,
        };
        // SAFETY: one valid pollfd, a valid timespec, no signal mask.
        let rc = unsafe { libc::ppoll(&mut poll, 1, &timeout, std::ptr::null()) };
        match rc {
            1 => return Ok(()),
            0 => continue, // timed out: the loop's check says so
            _ => {
                let err = io::Error::last_os_error();
                if err.kind() != io::ErrorKind::Interrupted {
                    return Err(err);
                }
            }
        }
    }
}

/// Reads what has arrived on `fd` into `buf` (at least one byte, or 0 at
/// the end of the stream), waiting for it until `until`.
#[allow(unsafe_code)]
fn receive(fd: RawFd, buf: &mut [u8], until: Instant) -> io::Result<usize> {
    loop {
        wait(fd, libc::POLLIN, until)?;
        // SAFETY: `buf` is valid for `buf.len()` bytes of writes; the
        // descriptor belongs to the lane's open connection.
        let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let err = io::Error::last_os_error();
        if !matches!(
            err.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
        ) {
            return Err(err);
        }
    }
}

/// Writes all of `buf` to `fd`, waiting for room until `until`.
#[allow(unsafe_code)]
fn send_all(fd: RawFd, mut buf: &[u8], until: Instant) -> io::Result<()> {
    while !buf.is_empty() {
        // SAFETY: `buf` is valid for `buf.len()` bytes of reads; the
        // descriptor belongs to the lane's open connection.
        let n = unsafe {
            libc::send(
                fd,
                buf.as_ptr().cast(),
                buf.len(),
                libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
            )
        };
        if n >= 0 {
            buf = &buf[n as usize..];
            continue;
        }
        let err = io::Error::last_os_error();
        match err.kind() {
            io::ErrorKind::WouldBlock => wait(fd, libc::POLLOUT, until)?,
            io::ErrorKind::Interrupted => {}
            _ => return Err(err),
        }
    }
    Ok(())
}

/// A driver error from a codec error, a timeout kept as an I/O error.
fn codec_error(err: PacketCodecError) -> mysql::Error {
    match err {
        PacketCodecError::Io(e) => mysql::Error::IoError(e),
        other => mysql::Error::CodecError(other),
    }
}

fn invalid(what: &str) -> mysql::Error {
    mysql::Error::IoError(io::Error::new(io::ErrorKind::InvalidData, what))
}

/// How much one read asks for: more than any OK or ERR packet.
const READ_CHUNK: usize = 512;

/// Executes prepared statements on one connection's socket.
pub(super) struct Exchange {
    codec: PacketCodec,
    /// A request's payload, then its framed bytes.
    request: Vec<u8>,
    framed: BytesMut,
    /// Bytes read and not yet decoded, then one packet's payload.
    received: BytesMut,
    packet: Vec<u8>,
}

impl std::fmt::Debug for Exchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exchange").finish_non_exhaustive()
    }
}

/// The answer's packets are parsed as a protocol-4.1 client's (the driver
/// asks for neither session tracking nor progress reports; a progress report
/// is still recognised as one); the OK packet's fields after the status are
/// not read.
const CAPABILITIES: CapabilityFlags =
    CapabilityFlags::CLIENT_PROTOCOL_41.union(CapabilityFlags::CLIENT_PROGRESS_OBSOLETE);

impl Exchange {
    pub fn new() -> Self {
        Self {
            codec: PacketCodec::default(),
            request: Vec::with_capacity(256),
            framed: BytesMut::with_capacity(256),
            received: BytesMut::with_capacity(READ_CHUNK),
            packet: Vec::with_capacity(256),
        }
    }

    /// The next packet's payload on `fd` into `self.packet`, by `until`.
    fn next_packet(&mut self, fd: RawFd, until: Instant) -> Result<(), mysql::Error> {
        self.packet.clear();
        loop {
            if self
                .codec
                .decode(&mut self.received, &mut self.packet)
                .map_err(codec_error)?
            {
                return Ok(());
            }
            let start = self.received.len();
            self.received.resize(start + READ_CHUNK, 0);
            let n =
                receive(fd, &mut self.received[start..], until).map_err(mysql::Error::IoError)?;
            self.received.truncate(start + n);
            if n == 0 {
                return Err(mysql::Error::IoError(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection",
                )));
            }
        }
    }

    /// Executes statement `statement_id` with `params` on the socket `fd`
    /// (idle: no command of the driver's in flight), by `until`; its answer
    /// must be one OK packet.
    pub fn execute(
        &mut self,
        fd: RawFd,
        until: Instant,
        statement_id: u32,
        params: &[Value],
    ) -> Result<Done, mysql::Error> {
        let (body, as_long_data) = ComStmtExecuteRequestBuilder::new(statement_id).build(params);
        if as_long_data {
            return Err(invalid("parameters too long for one packet"));
        }
        self.request.clear();
        body.serialize(&mut self.request);
        self.codec.reset_seq_id();
        self.framed.clear();
        self.received.clear();
        self.codec
            .encode(&mut &self.request[..], &mut self.framed)
            .map_err(codec_error)?;
        send_all(fd, &self.framed, until).map_err(mysql::Error::IoError)?;
        loop {
            self.next_packet(fd, until)?;
            return match self.packet.first() {
                Some(0xff) => match ParseBuf(&self.packet).parse::<ErrPacket<'_>>(CAPABILITIES)? {
                    ErrPacket::Error(e) => Err(mysql::Error::MySqlError(e.into())),
                    ErrPacket::Progress(_) => continue,
                },
                Some(0x00) => {
                    let ok = ParseBuf(&self.packet)
                        .parse::<OkPacketDeserializer<'_, CommonOkPacket>>(CAPABILITIES)?
                        .into_inner();
                    if ok
                        .status_flags()
                        .contains(StatusFlags::SERVER_MORE_RESULTS_EXISTS)
                    {
                        return Err(invalid("more results after the statement's OK packet"));
                    }
                    Ok(Done {
                        affected_rows: ok.affected_rows(),
                        last_insert_id: ok.last_insert_id(),
                    })
                }
                _ => Err(invalid("a result set where an OK packet was expected")),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    //! The exchange against a scripted peer on a real socket pair: the
    //! answers a server can give, and the ones it must not.
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;
    use std::time::Duration;

    const STATEMENT: u32 = 7;

    fn packet(seq: u8, body: &[u8]) -> Vec<u8> {
        let len = body.len() as u32;
        let mut p = vec![len as u8, (len >> 8) as u8, (len >> 16) as u8, seq];
        p.extend_from_slice(body);
        p
    }

    fn ok(affected: u8, last_insert_id: u8, status: u16) -> Vec<u8> {
        let s = status.to_le_bytes();
        vec![0x00, affected, last_insert_id, s[0], s[1], 0, 0]
    }

    fn err(code: u16, state: &[u8; 5], message: &str) -> Vec<u8> {
        let mut b = vec![0xff];
        b.extend_from_slice(&code.to_le_bytes());
        b.push(b'#');
        b.extend_from_slice(state);
        b.extend_from_slice(message.as_bytes());
        b
    }

    /// Reads one request packet: (sequence id, payload).
    fn read_request(server: &mut UnixStream) -> (u8, Vec<u8>) {
        let mut header = [0u8; 4];
        server.read_exact(&mut header).unwrap();
        let len = header[0] as usize | (header[1] as usize) << 8 | (header[2] as usize) << 16;
        let mut body = vec![0u8; len];
        server.read_exact(&mut body).unwrap();
        (header[3], body)
    }

    /// Runs one execute against a peer that answers with `script`.
    fn against(
        deadline: Duration,
        script: impl FnOnce(&mut UnixStream) + Send + 'static,
    ) -> (Result<Done, mysql::Error>, Duration) {
        let (client, mut server) = UnixStream::pair().unwrap();
        let peer = std::thread::spawn(move || {
            let (seq, body) = read_request(&mut server);
            assert_eq!(seq, 0, "a command starts a new sequence");
            assert_eq!(body[0], 0x17, "COM_STMT_EXECUTE");
            assert_eq!(
                u32::from_le_bytes(body[1..5].try_into().unwrap()),
                STATEMENT
            );
            script(&mut server);
            server
        });
        let mut exchange = Exchange::new();
        let started = Instant::now();
        let answer = exchange.execute(
            client.as_raw_fd(),
            started + deadline,
            STATEMENT,
            &[Value::UInt(1), Value::Bytes(b"1:2019".to_vec())],
        );
        let took = started.elapsed();
        drop(peer.join().unwrap());
        (answer, took)
    }

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn an_ok_packet_gives_the_rows_and_the_number() {
        let (answer, _) = against(SECOND, |s| s.write_all(&packet(1, &ok(1, 42, 2))).unwrap());
        assert_eq!(
            answer.unwrap(),
            Done {
                affected_rows: 1,
                last_insert_id: Some(42)
            }
        );
        let (answer, _) = against(SECOND, |s| s.write_all(&packet(1, &ok(0, 0, 2))).unwrap());
        assert_eq!(
            answer.unwrap(),
            Done {
                affected_rows: 0,
                last_insert_id: None
            }
        );
    }

    #[test]
    fn an_answer_in_pieces_is_put_together() {
        let (answer, _) = against(SECOND, |s| {
            let bytes = packet(1, &ok(1, 9, 2));
            for b in bytes {
                s.write_all(&[b]).unwrap();
                std::thread::sleep(Duration::from_millis(2));
            }
        });
        assert_eq!(answer.unwrap().last_insert_id, Some(9));
    }

    #[test]
    fn an_err_packet_is_the_servers_error() {
        let (answer, _) = against(SECOND, |s| {
            s.write_all(&packet(1, &err(1146, b"42S02", "no table")))
                .unwrap()
        });
        match answer {
            Err(mysql::Error::MySqlError(e)) => {
                assert_eq!((e.code, e.state.as_str()), (1146, "42S02"));
                assert_eq!(e.message, "no table");
            }
            other => panic!("expected the server's error, got {other:?}"),
        }
    }

    #[test]
    fn a_progress_report_before_the_answer_is_skipped() {
        let (answer, _) = against(SECOND, |s| {
            let progress = [0xff, 0xff, 0xff, 1, 1, 2, 0, 0, 0, 0];
            s.write_all(&packet(1, &progress)).unwrap();
            s.write_all(&packet(2, &ok(1, 5, 2))).unwrap();
        });
        assert_eq!(answer.unwrap().last_insert_id, Some(5));
    }

    #[test]
    fn no_answer_is_a_timeout_at_the_deadline() {
        // The answer comes 2 s late: a timeout, not the answer, and given
        // up before the answer was written (a bound that proves it did not
        // wait for it, without betting on the machine's speed).
        let late = Duration::from_secs(2);
        let (answer, took) = against(Duration::from_millis(150), move |s| {
            std::thread::sleep(late);
            let _ = s.write_all(&packet(1, &ok(1, 1, 2)));
        });
        match answer {
            Err(mysql::Error::IoError(e)) => assert_eq!(e.kind(), io::ErrorKind::TimedOut),
            other => panic!("expected a timeout, got {other:?}"),
        }
        assert!(took >= Duration::from_millis(150), "{took:?}");
        assert!(took < late, "{took:?}");
    }

    #[test]
    fn a_closed_connection_is_an_io_error() {
        let (answer, _) = against(SECOND, |s| s.shutdown(std::net::Shutdown::Both).unwrap());
        match answer {
            Err(mysql::Error::IoError(e)) => {
                assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof)
            }
            other => panic!("expected the connection lost, got {other:?}"),
        }
        // Half a packet, then gone.
        let (answer, _) = against(SECOND, |s| {
            s.write_all(&packet(1, &ok(1, 1, 2))[..5]).unwrap();
            s.shutdown(std::net::Shutdown::Both).unwrap();
        });
        assert!(answer.is_err(), "{answer:?}");
    }

    #[test]
    fn anything_but_one_ok_or_err_packet_is_refused() {
        // A result set's column count.
        let (answer, _) = against(SECOND, |s| s.write_all(&packet(1, &[0x01])).unwrap());
        assert!(
            matches!(&answer, Err(mysql::Error::IoError(e)) if e.kind() == io::ErrorKind::InvalidData),
            "{answer:?}"
        );
        // An OK packet that says more results follow.
        let more = StatusFlags::SERVER_MORE_RESULTS_EXISTS.bits() | 2;
        let (answer, _) = against(SECOND, move |s| {
            s.write_all(&packet(1, &ok(1, 3, more))).unwrap()
        });
        assert!(
            matches!(&answer, Err(mysql::Error::IoError(e)) if e.kind() == io::ErrorKind::InvalidData),
            "{answer:?}"
        );
        // A packet out of sequence.
        let (answer, _) = against(SECOND, |s| s.write_all(&packet(5, &ok(1, 3, 2))).unwrap());
        assert!(
            matches!(
                &answer,
                Err(mysql::Error::CodecError(PacketCodecError::PacketsOutOfSync))
            ),
            "{answer:?}"
        );
    }

    #[test]
    fn the_request_carries_the_parameters() {
        let (client, mut server) = UnixStream::pair().unwrap();
        let peer = std::thread::spawn(move || {
            let (_, body) = read_request(&mut server);
            server.write_all(&packet(1, &ok(1, 1, 2))).unwrap();
            body
        });
        let mut exchange = Exchange::new();
        exchange
            .execute(
                client.as_raw_fd(),
                Instant::now() + SECOND,
                STATEMENT,
                &[Value::UInt(3), Value::Bytes(b"42:2026".to_vec())],
            )
            .unwrap();
        let body = peer.join().unwrap();
        assert!(
            body.windows(7).any(|w| w == b"42:2026"),
            "the scope key is sent: {body:?}"
        );
        assert!(
            body.windows(8).any(|w| w == 3u64.to_le_bytes()),
            "the count is sent as an unsigned 64-bit integer: {body:?}"
        );
    }
}
