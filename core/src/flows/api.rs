//! The store's public operations, declared once: name, arguments, answer and
//! documentation, for `SeriesStore` (MySQL/MariaDB), `PgStore` (PostgreSQL)
//! and the `Store` of either engine. An engine's method runs the operation
//! of `flows::operations`; `Store`'s calls its engine's method.
//!
//! Invariants: the three types expose the same operations with the same
//! signatures and the same documentation, because each is generated from
//! the one list in [`with_operations`].

/// Calls `$callback! { $target; <the list> }` with the list of operations:
/// `#[doc] fn name(arg: Type, …) -> Answer = operation(expr, …);`.
macro_rules! with_operations {
    ($($callback:ident)::+! $target:ty) => {
        $($callback)::+! { $target;
            /// Creates the series `scope` whose first number is `start` (≥ 1).
            /// An existing series is reported and never reset.
            fn initialize(scope: &crate::scope::ScopeKey, start: u64) -> crate::series::Initialized
                = initialize(scope, start);

            /// Creates the series `scope` under a plan (docs/design.md §7): at
            /// `configured_start` (`Create`), right after the issuer's latest
            /// earlier period (`Continue`, see
            /// [`crate::series_life::previous_series`]), or not at all
            /// (`Hold`). An existing series is reported, never reset.
            ///
            /// Under `Continue` the new series is made in one transaction that
            /// holds the previous series' row lock: its first number follows
            /// the counter once no allocation of the previous series is in
            /// flight, and the previous series is closed in favour of the new
            /// one, so that it never hands out a number the new one hands out
            /// too (a format without the year prints both alike). A payment of
            /// the closed series' period is numbered by its successor.
            fn initialize_planned(
                scope: &crate::scope::ScopeKey,
                plan: crate::series_life::MissingSeries,
                configured_start: u64,
            ) -> crate::series_life::PlannedSeries = initialize_planned(scope, plan, configured_start);

            /// Moves the series so that its next number is at least `next`.
            /// Never moves it down: to start lower, create a new series.
            fn advance(scope: &crate::scope::ScopeKey, next: u64) -> crate::series::Advanced = advance(scope, next);

            /// Hands out the next number of `scope`: one statement in
            /// autocommit, the number read from that statement's own answer
            /// (docs/design.md §2 rules 1–3).
            fn allocate(scope: &crate::scope::ScopeKey) -> u64 = allocate(scope);

            /// Hands out `count` contiguous numbers (1 ..=
            /// [`crate::series::MAX_BATCH`]) in one statement.
            fn allocate_many(scope: &crate::scope::ScopeKey, count: u64) -> std::ops::RangeInclusive<u64>
                = allocate_many(scope, count);

            /// The series as stored.
            fn current(scope: &crate::scope::ScopeKey) -> crate::series::SeriesState = current(scope);

            /// Hands out the next number of `scope` and records it in the
            /// registry as issued (`source`, e.g. `api`), in one transaction:
            /// the number exists only if its registry row does (docs/design.md
            /// §2 rule 4).
            ///
            /// The row is written `unconfirmed` with the call's random mark in
            /// `claim`, and marked `issued` once the answer to the COMMIT has
            /// arrived: a number whose caller may not have received it (the
            /// answer lost, the deadline first) stays `unconfirmed`, and the
            /// books list it. A try whose COMMIT lost its answer may have
            /// committed: the retry that replaces it voids that row, if it
            /// exists (recognised by the call's mark), with
            /// [`crate::payment::UNANSWERED_REASON`], so the books explain the
            /// number.
            fn allocate_recorded(scope: &crate::scope::ScopeKey, source: &str) -> u64
                = allocate_recorded(scope, source, None);

            /// `allocate_recorded` with a request key (see
            /// [`crate::payment::check_request_key`]): the key is stored with
            /// the number under a unique key per series, so a repeat of the
            /// call with the same key — after a lost answer, a timeout, a crash
            /// — returns the same number (and marks it issued: its caller has
            /// it now), and only a key never seen takes a new one.
            fn allocate_recorded_keyed(scope: &crate::scope::ScopeKey, source: &str, request_key: &str) -> u64
                = allocate_recorded(scope, source, Some(request_key));

            /// Records a payment and gives it a number, exactly once per
            /// (gateway, transaction id): in one transaction, inserts the
            /// payment row, allocates from `scope` (or, if `scope` was closed,
            /// its successor), records the number as reserved for the
            /// payment, and commits. A payment seen before (one after another,
            /// or at the same moment) gets the number of its first delivery
            /// and changes nothing; one held for its series is numbered now.
            fn record_payment(
                scope: &crate::scope::ScopeKey,
                payment: &crate::payment::PaymentRef,
                amount: Option<&str>,
                currency: Option<&str>,
            ) -> crate::payment::PaymentRecord = record_payment(scope, payment, amount, currency, None);

            /// `record_payment`, with the period recorded: `period` is the
            /// site's local year and month at the instant the payment arrived,
            /// and every later step (the invoice's rendered number, a
            /// completion after midnight) takes year and month from it.
            fn record_payment_in(
                scope: &crate::scope::ScopeKey,
                payment: &crate::payment::PaymentRef,
                amount: Option<&str>,
                currency: Option<&str>,
                period: Option<crate::format::Period>,
            ) -> crate::payment::PaymentRecord = record_payment(scope, payment, amount, currency, period);

            /// Records a payment whose series does not exist yet, without a
            /// number (docs/design.md §7: a payment is never lost because its
            /// series is missing). `period` is the site's local year and month
            /// when it arrived. A later `record_payment` of the same payment,
            /// once the series exists, gives it its number. Once per (gateway,
            /// transaction id): a repeat reports `Waiting { created: false }`,
            /// or the number it received.
            fn hold_payment(
                scope: &crate::scope::ScopeKey,
                payment: &crate::payment::PaymentRef,
                amount: Option<&str>,
                currency: Option<&str>,
                period: crate::format::Period,
            ) -> crate::payment::Held = hold_payment(scope, payment, amount, currency, period);

            /// Records the credit note of a refund in the credit-note series
            /// `scope`, without a number yet (the payment flow numbers it,
            /// as a held payment: `record_payment` of the same refund), naming
            /// its invoice, in one transaction under the invoice's registry
            /// row lock: the amount is decided by
            /// [`crate::credit_note::credit_note_amount`] from what the
            /// invoice's credit notes total under that lock. A refund
            /// delivered again is answered from its row; a refused one writes
            /// nothing. `period` is the site's local year and month.
            fn hold_credit_note(
                scope: &crate::scope::ScopeKey,
                request: &crate::credit_note::CreditNoteRequest,
                period: crate::format::Period,
            ) -> crate::credit_note::CreditNoteHeld = hold_credit_note(scope, request, period);

            /// Claims a reserved number of `scope` to create its invoice (the
            /// payment flow's second phase). The claim is committed on this
            /// store's own connection, so it survives whatever happens to the
            /// caller's other connections; a claim older than `stale_after`,
            /// or whose holder's server session is gone, is taken over.
            /// `claim` is the caller's random id (1–40 characters).
            fn claim_number(
                scope: &crate::scope::ScopeKey,
                number: u64,
                claim: &str,
                stale_after: std::time::Duration,
            ) -> crate::payment::Claim = claim_number(scope, number, claim, stale_after);

            /// Marks a number this caller claimed as issued to `post_id`, and
            /// the payment's row with its post, in one transaction. `false`
            /// when the claim was lost (taken over as stale): nothing changed.
            fn issue_claimed(
                scope: &crate::scope::ScopeKey,
                number: u64,
                claim: &str,
                post_id: u64,
                payment: Option<&crate::payment::PaymentRef>,
            ) -> bool = issue_claimed(scope, number, claim, post_id, payment);

            /// Gives a claim back after a failure: the number is reserved
            /// again and the next delivery completes it. `false` when the
            /// claim was not held.
            fn release_claim(scope: &crate::scope::ScopeKey, number: u64, claim: &str) -> bool
                = release_claim(scope, number, claim);

            /// Imports the block `first ..= last` into pool `pool` (created
            /// for the block's airline prefix if missing): validated first,
            /// then inserted in one transaction; a number already in stock
            /// refuses the whole block.
            fn awb_import_block(
                pool: &str,
                first: &str,
                last: &str,
                valid_to: Option<&str>,
            ) -> usize = awb_import_block(pool, first, last, valid_to);

            /// Assigns the lowest ready, unexpired, unfrozen serial of `pool`
            /// to `shipment`, under a row lock: concurrent issuers get strictly
            /// increasing serials and skip no ready number.
            fn awb_issue_next(pool: &str, shipment: &str) -> crate::awb::Awb
                = awb_issue_next(pool, shipment);

            /// Moves `number` to `to` through the transition table, under its
            /// row lock. `shipment` names the new shipment for an assignment;
            /// `reason` is required for voided and cancelled; `pool`, when
            /// given, must be the number's pool; `expect_shipment`, when given,
            /// makes the call a no-op if the number is no longer assigned to it
            /// (a stale second click).
            #[allow(clippy::too_many_arguments)]
            fn awb_transition(
                number: &str,
                to: crate::awb::AwbState,
                shipment: Option<&str>,
                reason: Option<&str>,
                pool: Option<&str>,
                expect_shipment: Option<&str>,
            ) -> crate::awb_stock_rules::AwbTransition
                = awb_transition(number, to, shipment, reason, pool, expect_shipment);

            /// Freezes (or unfreezes) a number: out of circulation, state
            /// unchanged.
            fn awb_freeze(number: &str, frozen: bool) -> () = awb_freeze(number, frozen);

            /// A stock number as stored.
            fn awb_status(number: &str) -> crate::awb_stock_rules::AwbStock = awb_status(number);

            /// Counts of a pool.
            fn awb_report(pool: &str) -> crate::awb_stock_rules::PoolReport = awb_report(pool);
        }
    };
}
pub(crate) use with_operations;

/// An engine's methods: each runs its operation of `flows::operations`.
macro_rules! engine_methods {
    ($target:ty; $(
        $(#[$doc:meta])*
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $answer:ty
            = $operation:ident($($value:expr),* $(,)?);
    )*) => {
        impl $target {
            /// Builds a store and opens its connection (vetting the node:
            /// durability, a writable primary), within the deadline.
            pub async fn connect(config: crate::config::StoreConfig) -> crate::error::Result<Self> {
                let mut store = Self::lazy(config)?;
                store.ping().await?;
                Ok(store)
            }

            $(
                $(#[$doc])*
                pub async fn $name(&mut self, $($arg: $ty),*) -> crate::error::Result<$answer> {
                    crate::flows::operations::$operation(self, $($value),*).await
                }
            )*
        }
    };
}
pub(crate) use engine_methods;
