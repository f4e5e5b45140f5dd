//! A realistic legacy site: invoice posts in a real WordPress schema, numbered
//! the racy way (`SELECT MAX()+1`, then `INSERT`) by concurrent writers, so it
//! holds real duplicates; then a few deleted (gaps) and, optionally, a few
//! malformed titles. Titles are `2026-NNNN`, authors are the series.

use anyhow::Result;
use mysql_async::prelude::Queryable;

const INSERT_POST: &str = "INSERT INTO wp_posts (post_author, post_date, post_date_gmt, post_content, post_title, \
    post_excerpt, post_status, comment_status, ping_status, post_name, to_ping, pinged, post_modified, \
    post_modified_gmt, post_content_filtered, post_type, guid) VALUES (?, NOW(), UTC_TIMESTAMP(), '', ?, '', \
    'publish', 'closed', 'closed', '', '', '', NOW(), UTC_TIMESTAMP(), '', 'invoice', '')";

/// Fills `url`'s wp_posts: `writers` concurrent connections each create
/// `per_writer` invoices with MAX()+1 numbering, round-robin over `authors`.
pub async fn generate(
    url: &str,
    authors: &[u64],
    writers: usize,
    per_writer: usize,
    malformed: bool,
) -> Result<()> {
    let mut tasks = Vec::new();
    for w in 0..writers {
        let url = url.to_owned();
        let authors = authors.to_vec();
        tasks.push(tokio::spawn(async move {
            let mut conn = mysql_async::Conn::new(mysql_async::Opts::from_url(&url)?).await?;
            for i in 0..per_writer {
                let author = authors[(w + i) % authors.len()];
                let next: Option<u64> = conn
                    .exec_first(
                        "SELECT COALESCE(MAX(CAST(SUBSTRING(post_title, 6) AS UNSIGNED)), 0) + 1 FROM wp_posts \
                         WHERE post_type = 'invoice' AND post_author = ? AND post_title LIKE '2026-%'",
                        (author,),
                    )
                    .await?;
                let title = format!("2026-{:04}", next.unwrap_or(1));
                conn.exec_drop(INSERT_POST, (author, title)).await?;
            }
            conn.disconnect().await?;
            anyhow::Ok(())
        }));
    }
    for t in tasks {
        t.await??;
    }
    let mut conn = mysql_async::Conn::new(mysql_async::Opts::from_url(url)?).await?;
    // Gaps: some invoices deleted (every 37th, not the highest).
    conn.query_drop(
        "DELETE p FROM wp_posts p JOIN (SELECT ID FROM wp_posts WHERE post_type = 'invoice' AND MOD(ID, 37) = 5 \
         AND ID < (SELECT MAX(ID) - 10 FROM wp_posts)) d ON d.ID = p.ID",
    )
    .await?;
    if malformed {
        for title in ["INV 17", "2026-12a", "2026-012", "", "2026-0003 "] {
            conn.exec_drop(INSERT_POST, (authors[0], title)).await?;
        }
    }
    conn.disconnect().await?;
    Ok(())
}
