//! The recorded allocation on PostgreSQL, as on MySQL/MariaDB: a number and
//! its registry row in one transaction, `unconfirmed` until the answer to
//! its COMMIT has arrived, with an optional request key.
//!
//! Invariants: the number exists only with its registry row; a retry voids
//! only rows carrying its own call's mark; a keyed repeat returns the number
//! its key took, never a voided one.

use super::*;

impl PgStore {
    /// Allocates one number and records it as issued by `source`, in one
    /// transaction. As on MySQL: a try whose COMMIT lost its answer may have
    /// committed; the retry voids that number (only a row carrying this
    /// call's random mark) with [`UNANSWERED_REASON`].
    pub async fn allocate_recorded(&mut self, scope: &ScopeKey, source: &str) -> Result<u64> {
        self.recorded(scope, source, None).await
    }

    /// [`PgStore::allocate_recorded`] with a request key: a repeat with the
    /// same key returns the same number (as on MySQL).
    pub async fn allocate_recorded_keyed(
        &mut self,
        scope: &ScopeKey,
        source: &str,
        request_key: &str,
    ) -> Result<u64> {
        crate::payment::check_request_key(request_key)?;
        self.recorded(scope, source, Some(request_key)).await
    }

    pub(super) async fn recorded(
        &mut self,
        scope: &ScopeKey,
        source: &str,
        request_key: Option<&str>,
    ) -> Result<u64> {
        crate::payment::check_source(source)?;
        let key = scope.as_str().to_owned();
        let source = source.to_owned();
        let request_key = request_key.map(str::to_owned);
        let call = format!("call-{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));
        let committing = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u64>::new()));
        self.run("allocate_recorded", move |client, sql| {
            let (key, source, call, request_key) = (
                key.clone(),
                source.clone(),
                call.clone(),
                request_key.clone(),
            );
            let committing = committing.clone();
            Box::pin(async move {
                let allocate = client.prepared(&sql.allocate_open).await?;
                let insert = client.prepared(&sql.insert_number).await?;
                let found_by_key =
                    |row: Option<tokio_postgres::Row>, k: &str| -> Result<Option<(u64, String)>> {
                        let Some(row) = row else { return Ok(None) };
                        let number: String = row.get(0);
                        let number = number.parse::<u64>().map_err(|_| {
                            Error::Unexpected("a stored number is not a u64".into())
                        })?;
                        let status: String = row.get(1);
                        let mark: Option<String> = row.get(2);
                        crate::payment::repeat_of_request(&key, k, number, &status)
                            .map(|n| Some((n, mark.unwrap_or_default())))
                    };
                let tx = client.begin().await?;
                if let Some(k) = &request_key {
                    let row = tx.query_opt(&sql.find_by_request, &[&key, k]).await?;
                    match found_by_key(row, k) {
                        Ok(Some((number, mark))) => {
                            tx.commit().await?;
                            return confirm(client, sql, &key, number, &mark).await;
                        }
                        Ok(None) => {}
                        Err(e) => return Ok(Err(e)),
                    }
                } else {
                    let unanswered = committing.lock().expect("not poisoned").clone();
                    for number in unanswered {
                        tx.execute(
                            &sql.void_unanswered,
                            &[&UNANSWERED_REASON, &key, &number.to_string(), &call],
                        )
                        .await?;
                    }
                }
                let number = match crate::flows::numbering::allocate_open(
                    &mut dialect::PgNumbering {
                        tx: &tx,
                        sql,
                        allocate: &allocate,
                        insert: &insert,
                        insert_payment: None,
                    },
                    &key,
                    1,
                )
                .await?
                {
                    Ok(n) => n,
                    Err(e) => return Ok(Err(e)),
                };
                let none: Option<&str> = None;
                let inserted = match &request_key {
                    None => {
                        tx.execute(
                            &insert,
                            &[
                                &key,
                                &number.to_string(),
                                &NumberStatus::Unconfirmed.as_str(),
                                &source,
                                &none,
                                &none,
                                &call,
                            ],
                        )
                        .await
                    }
                    Some(k) => {
                        tx.execute(
                            &sql.insert_keyed,
                            &[&key, &number.to_string(), &source, &call, k],
                        )
                        .await
                    }
                };
                if let Err(e) = inserted {
                    let duplicate = duplicate_or(e, &key, number);
                    drop(tx);
                    // The same key at the same moment: the other call
                    // committed first; this one rolled back and reads it.
                    if let (Ok(Err(Error::DuplicateNumber { .. })), Some(k)) =
                        (&duplicate, &request_key)
                    {
                        let row = client.query_opt(&sql.find_by_request, &[&key, k]).await?;
                        match found_by_key(row, k) {
                            Ok(Some((number, mark))) => {
                                return confirm(client, sql, &key, number, &mark).await
                            }
                            Ok(None) => {}
                            Err(e) => return Ok(Err(e)),
                        }
                    }
                    return duplicate;
                }
                committing.lock().expect("not poisoned").push(number);
                tx.commit().await?;
                confirm(client, sql, &key, number, &call).await
            })
        })
        .await
    }
}

/// Marks a call's number issued once its caller has it (see the MySQL
/// store): idempotent; a failure leaves it unconfirmed, which the books show.
pub(super) async fn confirm(
    client: &mut PgConn,
    sql: &PgSql,
    key: &str,
    number: u64,
    mark: &str,
) -> PgResult<u64> {
    if let Err(e) = client
        .execute(&sql.confirm_by_call, &[&key, &number.to_string(), &mark])
        .await
    {
        log::warn!("number {number} of `{key}` stays unconfirmed: {e}");
    }
    Ok(Ok(number))
}
