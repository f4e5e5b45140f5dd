//! `Counterfoil\Sequences`: the namespaced API on any scope key.

use counterfoil_core::credit_note::{CreditNoteHeld, CreditNoteRequest};
use counterfoil_core::{
    Advanced, Claim, Error, Held, Initialized, MissingSeries, NumberFormat, PaymentRecord,
    PaymentRef, Period, ScopeKey,
};
use ext_php_rs::boxed::ZBox;
use ext_php_rs::prelude::*;
use ext_php_rs::types::ZendHashTable;

use crate::convert::{small, to_php_int, unsigned};
use crate::exceptions::to_php;
use crate::process;
use crate::settings::{self, Settings};

/// Series of sequential numbers on one database and table prefix.
#[php_class]
#[php(name = "Counterfoil\\Sequences")]
pub struct Sequences {
    settings: Settings,
}

fn scope(key: &str) -> PhpResult<ScopeKey> {
    ScopeKey::new(key).map_err(|e| to_php(e.into()))
}

/// This month (UTC), for `{month}`.
pub fn current_month() -> u32 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    Period::from_unix_seconds(secs).map_or(1, |p| p.month())
}

fn build_error(e: ext_php_rs::error::Error) -> PhpException {
    crate::exceptions::invalid_argument(format!("cannot build the result: {e}"))
}

/// The period of PHP's `$year` and `$month` (1..=9999, 1..=12).
fn period_of(year: i64, month: i64) -> PhpResult<Period> {
    Period::new(small("year", year)?, small("month", month)?).map_err(|e| to_php(e.into()))
}

/// A payment record as the PHP array `recordPayment()` returns: `scope_key`,
/// `number`, `created`, `status`, `post_id`, `period` (`YYYY-MM` or null).
fn record_array(r: &PaymentRecord) -> PhpResult<ZBox<ZendHashTable>> {
    let number = to_php_int(&r.scope, r.number)?;
    let mut out = ZendHashTable::new();
    out.insert("scope_key", r.scope.as_str())
        .map_err(build_error)?;
    out.insert("number", number).map_err(build_error)?;
    out.insert("created", r.created).map_err(build_error)?;
    out.insert("status", r.status.as_str())
        .map_err(build_error)?;
    out.insert("post_id", r.post_id.map(|p| p as i64))
        .map_err(build_error)?;
    out.insert("period", r.period.map(|p| p.to_string()))
        .map_err(build_error)?;
    Ok(out)
}

/// Connection facts for tests and monitoring: `pid`, `connects`, `retries`,
/// `timeouts`, `discarded` (connections closed because a transaction on them
/// was not seen to end), `connection_id` (0 when none), `node` (-1 when
/// none), `skipped` (nodes passed over) and `skipped_reason` (the last
/// reason, or null).
pub fn info(settings: &Settings) -> PhpResult<ZBox<ZendHashTable>> {
    let facts = process::stats(settings);
    let stats = facts.stats;
    let mut out = ZendHashTable::new();
    for (key, value) in [
        ("pid", i64::from(facts.pid)),
        ("connects", stats.connects as i64),
        ("retries", stats.retries as i64),
        ("timeouts", stats.timeouts as i64),
        ("discarded", stats.discarded as i64),
        ("connection_id", i64::from(facts.connection_id.unwrap_or(0))),
        // Which node of the list the connection goes to (0 = the first; -1 = none).
        ("node", facts.node.map_or(-1, |n| n as i64)),
        ("skipped", facts.skipped as i64),
    ] {
        out.insert(key, value).map_err(build_error)?;
    }
    out.insert("skipped_reason", facts.skip_reason)
        .map_err(build_error)?;
    Ok(out)
}

#[php_impl]
impl Sequences {
    /// Options as for `Counterfoil\configure()`; missing ones come from
    /// `configure()` or php.ini.
    ///
    /// @throws \Counterfoil\InvalidArgumentException for an unknown or invalid option,
    ///   or when no database is configured.
    pub fn __construct(options: Option<&ZendHashTable>) -> PhpResult<Self> {
        let base = settings::current()?;
        let settings = match options {
            Some(o) => base.settings.with_options(o)?,
            None => base.settings.clone(),
        };
        settings.store_config()?;
        settings.number_format()?;
        Ok(Self { settings })
    }

    /// Creates the sequences table if it is missing (adopting the article's
    /// table with its data).
    pub fn ensure_schema(&self) -> PhpResult<()> {
        process::with_store(&self.settings, |s| Box::pin(s.ensure_schema()))
    }

    /// Creates series `$scope_key` whose first number is `$start` (creating
    /// the table if missing); false when the series exists (left unchanged).
    ///
    /// @throws \Counterfoil\InvalidArgumentException for a bad scope key or `$start < 1`.
    /// @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
    #[php(name = "initialize")]
    pub fn initialize_series(&self, scope_key: String, start: i64) -> PhpResult<bool> {
        let key = scope(&scope_key)?;
        let start = unsigned("start", start)?;
        counterfoil_core::series::counter_for_start(start).map_err(to_php)?;
        let outcome = process::with_store(&self.settings, |s| {
            Box::pin(async move {
                s.ensure_schema().await?;
                s.initialize(&key, start).await
            })
        })?;
        Ok(matches!(outcome, Initialized::Created { .. }))
    }

    /// Creates series `$scope_key` under a plan (`create`: first number
    /// `$start`; `continue`: right after the issuer's latest earlier year, or
    /// `$start` when there is none; `hold`: creates nothing). The rule is the
    /// core's. Returns `start` (the first number the plan gave, or null) and
    /// `created` (false when the series existed: left unchanged).
    ///
    /// @throws \Counterfoil\InvalidArgumentException for a bad scope key, plan or `$start < 1`.
    /// @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
    pub fn initialize_planned(
        &self,
        scope_key: String,
        plan: String,
        start: i64,
    ) -> PhpResult<ZBox<ZendHashTable>> {
        let key = scope(&scope_key)?;
        let start = unsigned("start", start)?;
        let plan = MissingSeries::parse(&plan).map_err(to_php)?;
        let planned = process::with_store(&self.settings, |s| {
            Box::pin(async move {
                s.ensure_schema().await?;
                s.initialize_planned(&key, plan, start).await
            })
        })?;
        let mut out = ZendHashTable::new();
        let start = planned
            .start
            .map(|n| to_php_int(&scope_key, n))
            .transpose()?;
        out.insert("start", start).map_err(build_error)?;
        out.insert(
            "created",
            matches!(planned.outcome, Some(Initialized::Created { .. })),
        )
        .map_err(build_error)?;
        Ok(out)
    }

    /// Like `initialize()`, but an existing series throws.
    ///
    /// @throws \Counterfoil\SeriesExistsException when the series exists (left unchanged).
    /// @throws \Counterfoil\InvalidArgumentException for a bad scope key or `$start < 1`.
    /// @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
    pub fn create(&self, scope_key: String, start: i64) -> PhpResult<()> {
        let key = scope(&scope_key)?;
        let start = unsigned("start", start)?;
        counterfoil_core::series::counter_for_start(start).map_err(to_php)?;
        process::with_store(&self.settings, |s| {
            Box::pin(async move {
                s.ensure_schema().await?;
                match s.initialize(&key, start).await? {
                    Initialized::Created { .. } => Ok(()),
                    Initialized::Exists { current } => Err(Error::SeriesExists {
                        scope: key.as_str().to_owned(),
                        current,
                    }),
                }
            })
        })
    }

    /// Makes `$next` the next number of `$scope_key` if that moves it up;
    /// true when it moved, false when it was already there or beyond. A series
    /// never moves down: to start lower, create a new series.
    ///
    /// @throws \Counterfoil\SeriesNotFoundException when the series does not exist.
    /// @throws \Counterfoil\InvalidArgumentException for a bad scope key or `$next < 1`.
    /// @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
    pub fn advance(&self, scope_key: String, next: i64) -> PhpResult<bool> {
        let key = scope(&scope_key)?;
        let next = unsigned("next", next)?;
        let outcome = process::with_store(&self.settings, move |s| {
            Box::pin(async move { s.advance(&key, next).await })
        })?;
        Ok(matches!(outcome, Advanced::Moved { .. }))
    }

    /// Hands out the next number of `$scope_key`.
    ///
    /// @throws \Counterfoil\SeriesNotFoundException when the series does not exist.
    /// @throws \Counterfoil\OverflowException when the series is exhausted.
    /// @throws \Counterfoil\InvalidArgumentException for a bad scope key.
    /// @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
    pub fn allocate(&self, scope_key: String) -> PhpResult<i64> {
        let key = scope(&scope_key)?;
        let n = *process::allocate(&self.settings, &key, 1)?.end();
        to_php_int(&scope_key, n)
    }

    /// Hands out `$count` contiguous numbers (1 to 100000), in order.
    ///
    /// @throws \Counterfoil\SeriesNotFoundException when the series does not exist.
    /// @throws \Counterfoil\OverflowException when the series would be exhausted.
    /// @throws \Counterfoil\InvalidArgumentException for a bad scope key or count.
    /// @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
    pub fn allocate_many(&self, scope_key: String, count: i64) -> PhpResult<Vec<i64>> {
        let key = scope(&scope_key)?;
        let count = unsigned("count", count)?;
        let range = process::allocate(&self.settings, &key, count)?;
        to_php_int(&scope_key, *range.end())?;
        Ok(range.map(|n| n as i64).collect())
    }

    /// The last number handed out by `$scope_key` (its start minus one
    /// before the first).
    ///
    /// @throws \Counterfoil\SeriesNotFoundException when the series does not exist.
    /// @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
    pub fn current(&self, scope_key: String) -> PhpResult<i64> {
        let key = scope(&scope_key)?;
        let state = process::current(&self.settings, &key)?;
        to_php_int(&scope_key, state.current)
    }

    /// Renders `$number` with this instance's format for `$year` (and
    /// `$month`, default this month, UTC).
    ///
    /// @throws \Counterfoil\InvalidArgumentException for a year outside 1..9999 or a month outside 1..12.
    pub fn format(&self, number: i64, year: i64, month: Option<i64>) -> PhpResult<String> {
        let number = unsigned("number", number)?;
        let month = match month {
            Some(m) => small("month", m)?,
            None => current_month(),
        };
        let period = Period::new(small("year", year)?, month).map_err(|e| to_php(e.into()))?;
        Ok(self.settings.number_format()?.render(number, period))
    }

    /// Renders `$number` with `$template` (not this instance's format: a
    /// credit note's, say) for `$year` and `$month` (default this month, UTC)
    /// under period rule `$rule` (`calendar-year`, the default, or
    /// `fiscal-year:MM-DD`: `{fy}` and `{fy_end}`; `$year` is then the year
    /// the fiscal year starts in).
    ///
    /// @throws \Counterfoil\InvalidArgumentException for a template or rule that does not parse, a year outside 1..9999 or a month outside 1..12.
    pub fn render(
        template: &str,
        number: i64,
        year: i64,
        month: Option<i64>,
        rule: Option<String>,
    ) -> PhpResult<String> {
        let number = unsigned("number", number)?;
        let month = match month {
            Some(m) => small("month", m)?,
            None => current_month(),
        };
        let period = Period::new(small("year", year)?, month).map_err(|e| to_php(e.into()))?;
        let format = NumberFormat::parse(template).map_err(|e| to_php(e.into()))?;
        let rule =
            counterfoil_core::fiscal::PeriodRule::parse(rule.as_deref().unwrap_or("calendar-year"))
                .map_err(to_php)?;
        Ok(format.render(number, period.with_rule(rule)))
    }

    /// The scope key of the per-user, per-year series: `"{user_id}:{year}"`.
    ///
    /// @throws \Counterfoil\InvalidArgumentException for a negative user id or a year outside 1..9999.
    pub fn scope_for(user_id: i64, year: i64) -> PhpResult<String> {
        let key = ScopeKey::for_user_year(unsigned("user_id", user_id)?, small("year", year)?)
            .map_err(|e| to_php(e.into()))?;
        Ok(key.as_str().to_owned())
    }

    /// Creates the registry and payments tables (and the sequences table) if
    /// they are missing.
    ///
    /// @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
    pub fn ensure_registry_schema(&self) -> PhpResult<()> {
        process::with_store(&self.settings, |s| Box::pin(s.ensure_registry_schema()))
    }

    /// Hands out the next number of `$scope_key` and records it in the
    /// registry (with `$source`), in one transaction; the number is marked
    /// issued once the answer to the COMMIT arrived (else it stays
    /// unconfirmed, and the books list it). With `$request_key` (1–64
    /// letters, digits, `.`, `_`, `:`, `-`), a repeat of the call with the
    /// same key in the same series returns the same number: after a timeout
    /// or a lost connection, repeat the call to learn its fate.
    ///
    /// @throws \Counterfoil\SeriesNotFoundException when the series does not exist.
    /// @throws \Counterfoil\SeriesClosedException when a later series continues it (the
    ///   `continue` plan closed it; nothing was issued).
    /// @throws \Counterfoil\DatabaseUnavailableException when the registry already holds the number
    ///   (the counter is behind: nothing was issued), or the database fails.
    /// @throws \Counterfoil\TimeoutException
    pub fn allocate_recorded(
        &self,
        scope_key: String,
        source: String,
        request_key: Option<String>,
    ) -> PhpResult<i64> {
        let key = scope(&scope_key)?;
        let n = process::with_store(&self.settings, move |s| {
            Box::pin(async move {
                match request_key {
                    None => s.allocate_recorded(&key, &source).await,
                    Some(k) => s.allocate_recorded_keyed(&key, &source, &k).await,
                }
            })
        })?;
        to_php_int(&scope_key, n)
    }

    /// Records a payment and gives it a number of `$scope_key`, once per
    /// (`$gateway`, `$transaction_id`): a repeated delivery gets the first
    /// delivery's number. Returns `scope_key`, `number`, `created` (false for
    /// a repeat), `status` (reserved, issued, void) and `post_id` (or null).
    ///
    /// @throws \Counterfoil\InvalidArgumentException for a bad gateway, transaction id or scope key.
    /// A payment held by `holdPayment()` gets its number here, from the series
    /// chosen when it arrived, with `created` true. `$year` and `$month`, when
    /// given, are the site's local period at the instant the payment arrived,
    /// recorded with it; `period` is the recorded period (null when none was).
    ///
    /// @throws \Counterfoil\SeriesNotFoundException when the series does not exist (nothing recorded).
    /// @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
    #[allow(clippy::too_many_arguments)]
    pub fn record_payment(
        &self,
        scope_key: String,
        gateway: String,
        transaction_id: String,
        amount: Option<String>,
        currency: Option<String>,
        year: Option<i64>,
        month: Option<i64>,
    ) -> PhpResult<ZBox<ZendHashTable>> {
        let key = scope(&scope_key)?;
        let payment = PaymentRef::new(&gateway, &transaction_id).map_err(to_php)?;
        let period = match (year, month) {
            (None, None) => None,
            (Some(year), Some(month)) => Some(period_of(year, month)?),
            _ => {
                return Err(crate::exceptions::invalid_argument(
                    "invalid argument `month`: give the period's year and month together".into(),
                ))
            }
        };
        let r = process::with_store(&self.settings, move |s| {
            Box::pin(async move {
                s.record_payment_in(
                    &key,
                    &payment,
                    amount.as_deref(),
                    currency.as_deref(),
                    period,
                )
                .await
            })
        })?;
        record_array(&r)
    }

    /// Records a payment whose series `$scope_key` does not exist yet,
    /// without a number, with the period (the site's local `$year` and
    /// `$month`) it arrived in. Once the series exists, `recordPayment()` of
    /// the same payment gives it its number. Returns `['status' => 'held',
    /// 'created' => bool]` (false for a repeat), or the payment's record (as
    /// `recordPayment()`) when it already has its number.
    ///
    /// @throws \Counterfoil\InvalidArgumentException for a bad gateway, transaction id, scope key or period.
    /// @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
    #[allow(clippy::too_many_arguments)]
    pub fn hold_payment(
        &self,
        scope_key: String,
        gateway: String,
        transaction_id: String,
        amount: Option<String>,
        currency: Option<String>,
        year: i64,
        month: i64,
    ) -> PhpResult<ZBox<ZendHashTable>> {
        let key = scope(&scope_key)?;
        let payment = PaymentRef::new(&gateway, &transaction_id).map_err(to_php)?;
        let period = period_of(year, month)?;
        let held = process::with_store(&self.settings, move |s| {
            Box::pin(async move {
                s.hold_payment(
                    &key,
                    &payment,
                    amount.as_deref(),
                    currency.as_deref(),
                    period,
                )
                .await
            })
        })?;
        match held {
            Held::Waiting { created } => {
                let mut out = ZendHashTable::new();
                out.insert("status", "held").map_err(build_error)?;
                out.insert("created", created).map_err(build_error)?;
                Ok(out)
            }
            Held::Numbered(r) => record_array(&r),
        }
    }

    /// Records the credit note of refund (`$gateway`, `$refund_id`) in the
    /// credit-note series `$scope_key`, without a number yet (a later
    /// `recordPayment()` of the same refund numbers it), naming invoice
    /// `$invoice_number` of `$invoice_scope` (of `$invoice_amount`
    /// `$currency`) and `$reason`, in one transaction under the invoice's
    /// registry row lock, with the cap on what may be credited checked
    /// there. `$amount` is the refund's decimal amount (null: everything
    /// left); `$year` and `$month` the site's local period. Returns
    /// `status`: `recorded` (with `scope_key`, `amount`, `created`),
    /// `refused` (with `invoice`, `credited`, `requested`, in smallest
    /// units: nothing written), `mismatch` (the refund id was recorded for
    /// another invoice or amount) or `not_issued`.
    ///
    /// @throws \Counterfoil\InvalidArgumentException for a bad argument.
    /// @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
    #[allow(clippy::too_many_arguments)]
    pub fn hold_credit_note(
        &self,
        scope_key: String,
        gateway: String,
        refund_id: String,
        amount: Option<String>,
        currency: String,
        year: i64,
        month: i64,
        invoice_scope: String,
        invoice_number: i64,
        invoice_amount: String,
        reason: String,
    ) -> PhpResult<ZBox<ZendHashTable>> {
        let key = scope(&scope_key)?;
        let request = CreditNoteRequest::new(
            PaymentRef::new(&gateway, &refund_id).map_err(to_php)?,
            amount.as_deref(),
            &currency,
            scope(&invoice_scope)?,
            unsigned("invoice_number", invoice_number)?,
            &invoice_amount,
            &reason,
        )
        .map_err(to_php)?;
        let period = period_of(year, month)?;
        let held = process::with_store(&self.settings, move |s| {
            Box::pin(async move { s.hold_credit_note(&key, &request, period).await })
        })?;
        let mut out = ZendHashTable::new();
        let minor = |v: u64| to_php_int(&invoice_scope, v);
        match held {
            CreditNoteHeld::Recorded {
                scope,
                amount,
                created,
            } => {
                out.insert("status", "recorded").map_err(build_error)?;
                out.insert("scope_key", scope.as_str())
                    .map_err(build_error)?;
                out.insert("amount", amount.as_str()).map_err(build_error)?;
                out.insert("created", created).map_err(build_error)?;
            }
            CreditNoteHeld::Refused {
                invoice_minor,
                credited_minor,
                requested_minor,
            } => {
                out.insert("status", "refused").map_err(build_error)?;
                out.insert("invoice", minor(invoice_minor)?)
                    .map_err(build_error)?;
                out.insert("credited", minor(credited_minor)?)
                    .map_err(build_error)?;
                out.insert("requested", requested_minor.map(minor).transpose()?)
                    .map_err(build_error)?;
            }
            CreditNoteHeld::Mismatch => {
                out.insert("status", "mismatch").map_err(build_error)?;
            }
            CreditNoteHeld::NotIssued => {
                out.insert("status", "not_issued").map_err(build_error)?;
            }
        }
        Ok(out)
    }

    /// Claims reserved number `$number` of `$scope_key` to create its invoice
    /// (committed on this process's own connection), or finds that it is
    /// issued, void, or claimed by another caller; a claim older than
    /// `$stale_seconds` is taken over. Returns `status` (`claimed`, `busy`,
    /// `issued`, `void`) and `post_id` (for `issued`, else null).
    ///
    /// @throws \Counterfoil\InvalidArgumentException for a bad scope key, number or claim id.
    /// @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
    pub fn claim_number(
        &self,
        scope_key: String,
        number: i64,
        claim: String,
        stale_seconds: i64,
    ) -> PhpResult<ZBox<ZendHashTable>> {
        let key = scope(&scope_key)?;
        let number = unsigned("number", number)?;
        let stale = std::time::Duration::from_secs(unsigned("stale_seconds", stale_seconds)?);
        let c = process::with_store(&self.settings, move |s| {
            Box::pin(async move { s.claim_number(&key, number, &claim, stale).await })
        })?;
        let (status, post_id) = match c {
            Claim::Claimed => ("claimed", None),
            Claim::Busy => ("busy", None),
            Claim::Issued { post_id } => ("issued", Some(post_id as i64)),
            Claim::Void => ("void", None),
        };
        let mut out = ZendHashTable::new();
        out.insert("status", status).map_err(build_error)?;
        out.insert("post_id", post_id).map_err(build_error)?;
        Ok(out)
    }

    /// Marks number `$number`, claimed by `$claim`, issued to `$post_id`, and
    /// the payment (`$gateway`, `$transaction_id`, when given) with its post,
    /// in one transaction. False when the claim was lost: nothing changed.
    ///
    /// @throws \Counterfoil\InvalidArgumentException for a bad argument.
    /// @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
    pub fn issue_claimed(
        &self,
        scope_key: String,
        number: i64,
        claim: String,
        post_id: i64,
        gateway: Option<String>,
        transaction_id: Option<String>,
    ) -> PhpResult<bool> {
        let key = scope(&scope_key)?;
        let number = unsigned("number", number)?;
        let post_id = unsigned("post_id", post_id)?;
        let payment = match (gateway, transaction_id) {
            (Some(g), Some(t)) => Some(PaymentRef::new(&g, &t).map_err(to_php)?),
            _ => None,
        };
        process::with_store(&self.settings, move |s| {
            Box::pin(async move {
                s.issue_claimed(&key, number, &claim, post_id, payment.as_ref())
                    .await
            })
        })
    }

    /// Gives claim `$claim` on number `$number` back: reserved again. False
    /// when the claim was not held.
    ///
    /// @throws \Counterfoil\InvalidArgumentException for a bad argument.
    /// @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
    pub fn release_claim(&self, scope_key: String, number: i64, claim: String) -> PhpResult<bool> {
        let key = scope(&scope_key)?;
        let number = unsigned("number", number)?;
        process::with_store(&self.settings, move |s| {
            Box::pin(async move { s.release_claim(&key, number, &claim).await })
        })
    }

    /// The node of the list this process writes numbers to (0 = the first),
    /// connecting first if needed by the store's own rule (the first
    /// healthy node in list order; the earlier ones tried again after a
    /// while on a later one). The plugin sends the site's other writes to
    /// its books to that node.
    ///
    /// @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
    pub fn writer_node(&self) -> PhpResult<i64> {
        process::with_store(&self.settings, move |s| {
            Box::pin(async move { s.ping().await.map(|()| s.node().map_or(0, |n| n as i64)) })
        })
    }

    /// This process's connection facts for this instance's database.
    pub fn connection_info(&self) -> PhpResult<ZBox<ZendHashTable>> {
        info(&self.settings)
    }
}
