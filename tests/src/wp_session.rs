//! A logged-in WordPress user over real HTTP: logs in through
//! `wp-login.php` like a browser (the test cookie, then the auth cookies the
//! answer sets) and sends later requests with those cookies.
//!
//! Invariants: nothing is forged — the cookies are the ones WordPress set for
//! this user's password login; every request is a real HTTP request to nginx.

use anyhow::{bail, Result};

use crate::php::{http, Response};

/// A user's session on one site.
pub struct Session {
    port: u16,
    cookies: Vec<(String, String)>,
}

impl Session {
    /// Logs `user` in with `password`.
    pub fn login(port: u16, user: &str, password: &str) -> Result<Self> {
        let form = format!(
            "log={}&pwd={}&wp-submit=Log+In&testcookie=1",
            urlencode(user),
            urlencode(password)
        );
        let r = http(
            port,
            "POST",
            "/wp-login.php",
            &[
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Cookie", "wordpress_test_cookie=WP%20Cookie%20check"),
            ],
            form.as_bytes(),
        )?;
        let cookies: Vec<(String, String)> = r
            .header("Set-Cookie")
            .iter()
            .filter_map(|c| {
                let (name, rest) = c.split_once('=')?;
                let value = rest.split(';').next()?.to_owned();
                (name.starts_with("wordpress_") && value != "deleted" && !value.is_empty())
                    .then(|| (name.to_owned(), value))
            })
            .collect();
        if !cookies
            .iter()
            .any(|(n, _)| n.starts_with("wordpress_logged_in_"))
        {
            bail!("login of {user} failed ({}): {}", r.status, r.body);
        }
        Ok(Session { port, cookies })
    }

    /// The value of the `wordpress_logged_in_…` cookie (user|expiration|token|hmac).
    pub fn logged_in_cookie(&self) -> &str {
        self.cookies
            .iter()
            .find(|(n, _)| n.starts_with("wordpress_logged_in_"))
            .map(|(_, v)| v.as_str())
            .unwrap_or_default()
    }

    /// The session token WordPress keeps for this login (in nonces).
    pub fn token(&self) -> String {
        let decoded = self.logged_in_cookie().replace("%7C", "|");
        decoded.split('|').nth(2).unwrap_or_default().to_owned()
    }

    fn cookie(&self) -> String {
        self.cookies
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// A GET request with the session's cookies.
    pub fn get(&self, path: &str) -> Result<Response> {
        http(self.port, "GET", path, &[("Cookie", &self.cookie())], b"")
    }

    /// A form POST (`application/x-www-form-urlencoded`; `fields` are
    /// encoded here) with the session's cookies.
    pub fn post_form(&self, path: &str, fields: &[(&str, &str)]) -> Result<Response> {
        let form = fields
            .iter()
            .map(|(k, v)| format!("{}={}", urlencode(k), urlencode(v)))
            .collect::<Vec<_>>()
            .join("&");
        http(
            self.port,
            "POST",
            path,
            &[
                ("Cookie", &self.cookie()),
                ("Content-Type", "application/x-www-form-urlencoded"),
            ],
            form.as_bytes(),
        )
    }
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The first link of an HTML page whose address contains every one of
/// `parts`, as a path under the site (`/wp-admin/…`, entities decoded), or
/// None.
pub fn link_path(html: &str, parts: &[&str]) -> Option<String> {
    html.split("href=\"")
        .skip(1)
        .map(|h| {
            h.split('"')
                .next()
                .unwrap_or_default()
                .replace("&amp;", "&")
                .replace("&#038;", "&")
        })
        .find(|h| parts.iter().all(|p| h.contains(p)))
        .map(|h| match h.find("/wp-admin/") {
            Some(at) => h[at..].to_owned(),
            None => h,
        })
}
