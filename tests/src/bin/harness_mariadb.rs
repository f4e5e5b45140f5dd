//! Runs one private MariaDB of the harness for scripts (the demo): starts it,
//! creates a database, writes `DATABASE_URL=…` (and the socket, port and pid)
//! to an env file, then waits for SIGTERM or SIGINT and stops the server.
//!
//! Usage: `harness-mariadb NAME DATABASE ENV_FILE`.

use anyhow::{bail, Result};
use counterfoil_tests::MariaDb;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, name, db, env_file] = args.as_slice() else {
        bail!("usage: harness-mariadb NAME DATABASE ENV_FILE");
    };
    if !db.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        bail!("database name must be letters, digits and _");
    }
    let server = MariaDb::start(name)?;
    server.exec("mysql", &format!("CREATE DATABASE IF NOT EXISTS `{db}`"))?;
    let env = format!(
        "DATABASE_URL={}\nMARIADB_SOCKET={}\nMARIADB_PORT={}\nMARIADB_PID={}\nMARIADB_DIR={}\n",
        server.url(db),
        server.socket().display(),
        server.port(),
        server.pid(),
        server.dir().display()
    );
    let tmp = format!("{env_file}.tmp");
    std::fs::write(&tmp, env)?;
    std::fs::rename(&tmp, env_file)?;
    eprintln!(
        "harness-mariadb: {name} up on 127.0.0.1:{} (pid {})",
        server.port(),
        server.pid()
    );
    counterfoil_tests::wait_for_stop_signal()?;
    drop(server);
    let _ = std::fs::remove_file(env_file);
    eprintln!("harness-mariadb: {name} stopped");
    Ok(())
}
