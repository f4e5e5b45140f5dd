//! PHP for tests: the built extension, PHP CLI commands, and a php-fpm pool
//! behind nginx on loopback.
//!
//! Invariants: the extension tested is the release build
//! `target/release/libcounterfoil_php.so` (or `COUNTERFOIL_PHP_EXT`), never a
//! system-installed one; php-fpm and nginx run from a directory under
//! `target/harness/` with their own config, pid files, sockets and logs, on a
//! free loopback port, and are stopped by pid when the handle drops.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::mariadb::spawn_bound_to_harness;

/// The extension under test.
pub fn extension_path() -> PathBuf {
    if let Ok(p) = std::env::var("COUNTERFOIL_PHP_EXT") {
        return p.into();
    }
    let p = crate::target_dir().join("release/libcounterfoil_php.so");
    assert!(
        p.exists(),
        "{} is missing: build it with `cargo build --release -p counterfoil-php` (./scripts/test does)",
        p.display()
    );
    p
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_owned()
}

/// `php -d extension=<built extension>`, ready for more arguments.
pub fn php() -> Command {
    let mut c = Command::new("php");
    c.arg("-d")
        .arg(format!("extension={}", extension_path().display()));
    c
}

/// A php-fpm pool (pm = static) behind nginx on 127.0.0.1.
pub struct FpmSite {
    dir: PathBuf,
    port: u16,
    fpm: Option<Child>,
    nginx: Option<Child>,
}

impl FpmSite {
    /// Serves `docroot` with `children` php-fpm workers, loading the built
    /// extension when `extension` is true; `php_ini` are extra `-d
    /// name=value` settings for php-fpm.
    pub fn start(
        name: &str,
        docroot: &Path,
        children: u32,
        extension: bool,
        php_ini: &[(&str, String)],
    ) -> Result<Self> {
        Self::start_with_env(name, docroot, children, extension, php_ini, &[])
    }

    /// As [`FpmSite::start`], with extra environment variables for php-fpm
    /// and its workers (e.g. libfaketime's `LD_PRELOAD` and `FAKETIME`).
    pub fn start_with_env(
        name: &str,
        docroot: &Path,
        children: u32,
        extension: bool,
        php_ini: &[(&str, String)],
        env: &[(&str, String)],
    ) -> Result<Self> {
        let dir = crate::target_dir().join("harness").join(format!(
            "{name}-fpm-{}-{}",
            std::process::id(),
            crate::workers::now_ns()
        ));
        std::fs::create_dir_all(dir.join("nginx-tmp"))?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let sock = dir.join("fpm.sock");
        std::fs::write(
            dir.join("php-fpm.conf"),
            format!(
                "[global]\npid = {d}/fpm.pid\nerror_log = {d}/fpm.log\ndaemonize = no\n\n\
                 [pool]\nlisten = {s}\nlisten.mode = 0666\npm = static\npm.max_children = {children}\n\
                 pm.max_requests = 0\ncatch_workers_output = yes\nclear_env = no\n",
                d = dir.display(),
                s = sock.display()
            ),
        )?;
        std::fs::write(
            dir.join("nginx.conf"),
            format!(
                "daemon off;\nmaster_process on;\nworker_processes 2;\npid {d}/nginx.pid;\n\
                 error_log {d}/nginx-error.log;\nevents {{ worker_connections 256; }}\n\
                 http {{\n  include /etc/nginx/mime.types;\n  default_type application/octet-stream;\n  access_log off;\n  client_body_temp_path {d}/nginx-tmp/body;\n\
                 fastcgi_temp_path {d}/nginx-tmp/fastcgi;\n  proxy_temp_path {d}/nginx-tmp/proxy;\n\
                 uwsgi_temp_path {d}/nginx-tmp/uwsgi;\n  scgi_temp_path {d}/nginx-tmp/scgi;\n\
                 server {{\n    listen 127.0.0.1:{port};\n    root {root};\n    index index.php;\n\
                 client_max_body_size 2m;\n\
                 location ~ \\.php$ {{\n      include /etc/nginx/fastcgi_params;\n\
                 fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;\n\
                 fastcgi_param HTTP_HOST $host:$server_port;\n\
                 fastcgi_pass unix:{s};\n    }}\n    location / {{ try_files $uri $uri/ /index.php?$args; }}\n  }}\n}}\n",
                d = dir.display(),
                root = docroot.display(),
                s = sock.display(),
            ),
        )?;
        let mut fpm = Command::new("/usr/sbin/php-fpm8.2");
        fpm.arg("-R")
            .arg("-F")
            .arg("-y")
            .arg(dir.join("php-fpm.conf"));
        if extension {
            fpm.arg("-d")
                .arg(format!("extension={}", extension_path().display()));
        }
        for (k, v) in php_ini {
            // Quoted: php.ini reads an unquoted `…=false` as an empty value.
            fpm.arg("-d").arg(format!("{k}=\"{v}\""));
        }
        fpm.envs(env.iter().map(|(k, v)| (*k, v.as_str())));
        fpm.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let fpm =
            spawn_bound_to_harness(fpm).context("start php-fpm8.2 (apt-get install php8.2-fpm)")?;
        let mut site = FpmSite {
            dir: dir.clone(),
            port,
            fpm: Some(fpm),
            nginx: None,
        };
        site.wait_for(&sock, "php-fpm socket")?;
        let mut nginx = Command::new("/usr/sbin/nginx");
        nginx
            .arg("-e")
            .arg(dir.join("nginx-error.log"))
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let nginx =
            spawn_bound_to_harness(nginx).context("start nginx (apt-get install nginx-light)")?;
        site.nginx = Some(nginx);
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if started.elapsed() > Duration::from_secs(20) {
                bail!("nginx did not listen on {port}: {}", site.logs());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(site)
    }

    fn wait_for(&mut self, path: &Path, what: &str) -> Result<()> {
        let started = Instant::now();
        while !path.exists() {
            if let Some(st) = self.fpm.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                bail!("php-fpm exited with {st}: {}", self.logs());
            }
            if started.elapsed() > Duration::from_secs(20) {
                bail!("{what} did not appear: {}", self.logs());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// The site's base URL.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The TCP port nginx listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The pids of the php-fpm master's children (the workers).
    pub fn worker_pids(&self) -> Vec<u32> {
        let Some(master) = self.fpm.as_ref().map(|c| c.id()) else {
            return Vec::new();
        };
        let children = std::fs::read_to_string(format!("/proc/{master}/task/{master}/children"))
            .unwrap_or_default();
        children
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect()
    }

    /// The logs of php-fpm and nginx (for failure messages).
    pub fn logs(&self) -> String {
        let read = |f: &str| std::fs::read_to_string(self.dir.join(f)).unwrap_or_default();
        format!(
            "--- fpm.log\n{}\n--- nginx-error.log\n{}",
            read("fpm.log"),
            read("nginx-error.log")
        )
    }

    /// Sends one HTTP/1.0 request; returns (status, body).
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<(u16, String)> {
        http(self.port, method, path, headers, body).map(|r| (r.status, r.body))
    }
}

/// An HTTP response.
#[derive(Debug)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Header lines, as sent (`Name: value`).
    pub headers: Vec<String>,
    /// Body, as text (invalid UTF-8 replaced).
    pub body: String,
    /// Body, as sent (a PDF's bytes).
    pub bytes: Vec<u8>,
}

impl Response {
    /// Values of the headers named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter_map(|h| {
                let (k, v) = h.split_once(':')?;
                k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
            })
            .collect()
    }
}

/// One HTTP/1.0 request to 127.0.0.1:`port`.
pub fn http(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Result<Response> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(60)))?;
    let mut req = format!(
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes())?;
    s.write_all(body)?;
    let mut resp = Vec::new();
    s.read_to_end(&mut resp)?;
    let text = String::from_utf8_lossy(&resp).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .with_context(|| format!("no HTTP status in {text:?}"))?;
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((text.as_str(), ""));
    let bytes = resp
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(Vec::new(), |at| resp[at + 4..].to_vec());
    Ok(Response {
        status,
        headers: head.lines().skip(1).map(str::to_owned).collect(),
        body: body.to_owned(),
        bytes,
    })
}

impl Drop for FpmSite {
    fn drop(&mut self) {
        for child in [self.nginx.take(), self.fpm.take()].into_iter().flatten() {
            let mut child = child;
            // SAFETY: SIGTERM (SIGQUIT for a graceful nginx is not needed) to our own child.
            #[allow(unsafe_code)]
            unsafe {
                libc::kill(child.id() as i32, libc::SIGTERM);
            }
            let started = Instant::now();
            while child.try_wait().ok().flatten().is_none() {
                if started.elapsed() > Duration::from_secs(10) {
                    let _ = child.kill();
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.wait();
        }
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
