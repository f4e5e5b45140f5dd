//! Whether a database URL carries a password: `--database-url` puts it
//! where others read it (`ps`, `/proc/PID/cmdline`, the shell's history),
//! so the command line warns and names `DATABASE_URL` instead.
//!
//! Invariants: the password is never returned, printed or logged, only
//! whether there is one; a list of URLs (a node list, comma-separated)
//! carries one when any of its parts does; the userinfo form
//! (`user:password@host`) and a `password=` query parameter (PostgreSQL's
//! form) both count; an empty password is none.

/// Whether `url` (one URL or a comma-separated list) carries a password.
pub fn carries_password(url: &str) -> bool {
    url.split(',').any(one_carries_password)
}

fn one_carries_password(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let (before_query, query) = rest.split_once('?').unwrap_or((rest, ""));
    let userinfo = before_query.rfind('@').map(|at| &before_query[..at]);
    if userinfo
        .and_then(|u| u.split_once(':'))
        .is_some_and(|(_, password)| !password.is_empty())
    {
        return true;
    }
    query.split('&').any(|pair| {
        pair.split_once('=')
            .is_some_and(|(key, value)| key.eq_ignore_ascii_case("password") && !value.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::carries_password;

    #[test]
    fn passwords_in_every_form_and_none_where_there_is_none() {
        for with in [
            "mysql://shop:secret@127.0.0.1:3306/shop",
            "mysql://shop:secret@localhost/shop?socket=/run/mysqld/mysqld.sock",
            "mysql://a@h1/db,mysql://shop:secret@h2/db",
            "postgres://shop@db.example/shop?sslmode=require&password=secret",
            "postgresql://shop:p%40ss@db.example/shop",
        ] {
            assert!(carries_password(with), "{with}");
        }
        for without in [
            "mysql://shop@127.0.0.1/shop",
            "mysql://shop:@127.0.0.1/shop",
            "postgres://shop@localhost/shop?host=/run/postgresql",
            "mysql://127.0.0.1:3306/shop",
            "not a url",
        ] {
            assert!(!carries_password(without), "{without}");
        }
    }
}
