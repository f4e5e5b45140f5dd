//! Signed payment callbacks, as a payment gateway sends them to the plugin's
//! `POST /wp-json/counterfoil/v1/payments`.

use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Result;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::php::{http, Response};

/// The REST path of the webhook.
pub const PATH: &str = "/wp-json/counterfoil/v1/payments";

/// The first form of the signature, still accepted for one release:
/// `sha256=<hex HMAC-SHA256 of "{timestamp}.{body}">`.
pub fn sign(secret: &str, timestamp: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// The signature: `v2=<hex HMAC-SHA256 of
/// "{timestamp}.{METHOD}.{host}.{route}.{body}">`, the host as sent in the
/// Host header, the route the REST route (`/counterfoil/v1/payments`).
pub fn sign_v2(
    secret: &str,
    timestamp: &str,
    method: &str,
    host: &str,
    route: &str,
    body: &[u8],
) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    for part in [
        timestamp,
        &method.to_uppercase(),
        &host.to_lowercase(),
        route,
    ] {
        mac.update(part.as_bytes());
        mac.update(b".");
    }
    mac.update(body);
    format!("v2={}", hex::encode(mac.finalize().into_bytes()))
}

/// The REST route of [`PATH`].
pub const ROUTE: &str = "/counterfoil/v1/payments";

/// Unix time now.
pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Delivers `body` signed with `secret`, timestamped `age_seconds` ago.
pub fn deliver(port: u16, secret: &str, body: &[u8], age_seconds: i64) -> Result<Response> {
    let ts = (now() - age_seconds).to_string();
    // The Host header `http()` sends.
    let sig = sign_v2(
        secret,
        &ts,
        "POST",
        &format!("127.0.0.1:{port}"),
        ROUTE,
        body,
    );
    http(
        port,
        "POST",
        PATH,
        &[
            ("Content-Type", "application/json"),
            ("X-Counterfoil-Timestamp", &ts),
            ("X-Counterfoil-Signature", &sig),
        ],
        body,
    )
}
