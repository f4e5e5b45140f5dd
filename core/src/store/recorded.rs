//! The recorded allocation on MySQL/MariaDB: a number and its registry row
//! in one transaction, `unconfirmed` until the answer to its COMMIT has
//! arrived, with an optional request key (docs/design.md §2 rule 4, §9).
//!
//! Invariants: the number exists only with its registry row; a retry voids
//! only rows carrying its own call's mark; a keyed repeat returns the number
//! its key took, never a voided one.

use super::*;

impl SeriesStore {
    /// Hands out the next number of `scope` and records it in the registry
    /// as issued (`source`, e.g. `api`), in one transaction: the number exists
    /// only if its registry row does (docs/design.md §2 rule 4).
    ///
    /// The row is written `unconfirmed` with the call's random mark in
    /// `claim`, and marked `issued` once the answer to the COMMIT has
    /// arrived: a number whose caller may not have received it (the answer
    /// lost, the deadline first) stays `unconfirmed`, and the books list it.
    /// A try whose COMMIT lost its answer may have committed: the retry that
    /// replaces it voids that row, if it exists (recognised by the call's
    /// mark), with [`crate::payment::UNANSWERED_REASON`], so the books
    /// explain the number.
    pub async fn allocate_recorded(&mut self, scope: &ScopeKey, source: &str) -> Result<u64> {
        self.recorded(scope, source, None).await
    }

    /// [`SeriesStore::allocate_recorded`] with a request key (see
    /// [`crate::payment::check_request_key`]): the key is stored with the
    /// number under a unique key per series, so a repeat of the call with
    /// the same key — after a lost answer, a timeout, a crash — returns the
    /// same number (and marks it issued: its caller has it now), and only a
    /// key never seen takes a new one.
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
        let source = source.to_owned();
        let request_key = request_key.map(str::to_owned);
        // This call's mark on its registry rows, and the numbers of its
        // tries that reached COMMIT: a retry voids only rows with this mark,
        // never a number that another call issued after a rollback. (A
        // keyed call finds its own committed row by its key instead.)
        let call = format!("call-{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));
        let committing = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u64>::new()));
        self.run(
            "allocate_recorded",
            scope.as_str(),
            move |conn, sql, key| {
                let (source, call, request_key) =
                    (source.clone(), call.clone(), request_key.clone());
                let committing = committing.clone();
                Box::pin(async move {
                    let mut tx = Tx::begin(conn).await?;
                    let outcome = async {
                        if let Some(k) = &request_key {
                            if let Some(found) = by_request_key(&mut tx, sql, key, k).await? {
                                return Ok(found);
                            }
                        } else {
                            let unanswered = committing.lock().expect("not poisoned").clone();
                            for number in unanswered {
                                tx.exec_drop(
                                    &sql.registry.void_unanswered,
                                    (crate::payment::UNANSWERED_REASON, key, number, &call),
                                )
                                .await?;
                            }
                        }
                        let number = match crate::flows::numbering::allocate_open(
                            &mut dialect::MysqlNumbering { conn: &mut tx, sql },
                            key,
                            1,
                        )
                        .await?
                        {
                            Ok(number) => number,
                            Err(e) => return Ok(Err(e)),
                        };
                        let inserted = match &request_key {
                            None => {
                                let row = (key, number, &source, &call);
                                dialect::insert_registry_row(
                                    &mut tx,
                                    &sql.registry.insert_unconfirmed_by_call,
                                    key,
                                    number,
                                    row,
                                )
                                .await?
                            }
                            Some(k) => {
                                let row = (key, number, &source, &call, k);
                                dialect::insert_registry_row(
                                    &mut tx,
                                    &sql.registry.insert_keyed_by_call,
                                    key,
                                    number,
                                    row,
                                )
                                .await?
                            }
                        };
                        Ok(inserted.map(|()| (number, call.clone())))
                    }
                    .await;
                    if let Ok(Ok((number, _))) = &outcome {
                        committing.lock().expect("not poisoned").push(*number);
                    }
                    let (number, mark) = match tx.end(outcome).await? {
                        Ok(taken) => taken,
                        // The same key at the same moment: the other call
                        // committed first; this one rolled back and reads it.
                        Err(e @ Error::DuplicateNumber { .. }) if request_key.is_some() => {
                            let k = request_key.as_deref().unwrap_or_default();
                            match by_request_key(conn, sql, key, k).await? {
                                Some(Ok(found)) => found,
                                Some(Err(refused)) => return Ok(Err(refused)),
                                // Not the key: the registry's readable alarm.
                                None => return Ok(Err(e)),
                            }
                        }
                        Err(e) => return Ok(Err(e)),
                    };
                    // The COMMIT was answered (or a repeat found its number):
                    // this caller has the number. Marking it issued is
                    // idempotent; if this answer is lost, or the deadline
                    // ends the call first, the number stays unconfirmed,
                    // which is what the books must say.
                    if let Err(e) = conn
                        .exec_drop(&sql.registry.confirm_by_call, (key, number, &mark))
                        .await
                    {
                        log::warn!("number {number} of `{key}` stays unconfirmed: {e}");
                    }
                    Ok(Ok(number))
                })
            },
        )
        .await
    }
}

/// The number request key `k` took in series `key`, with its call's mark
/// (`None`: the key is new); a number no longer handed out is refused
/// ([`crate::payment::repeat_of_request`]).
pub(super) async fn by_request_key(
    conn: &mut Conn,
    sql: &Sql,
    key: &str,
    k: &str,
) -> std::result::Result<Option<Result<(u64, String)>>, mysql_async::Error> {
    let found: Option<(u64, String, Option<String>)> = conn
        .exec_first(&sql.registry.find_by_request, (key, k))
        .await?;
    Ok(found.map(|(number, status, mark)| {
        crate::payment::repeat_of_request(key, k, number, &status)
            .map(|n| (n, mark.unwrap_or_default()))
    }))
}
