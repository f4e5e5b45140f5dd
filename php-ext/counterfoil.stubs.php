<?php

// Stubs for counterfoil

namespace Counterfoil {
    /**
     * Series of sequential numbers on one database and table prefix.
     */
    class Sequences {
        /**
         * Options as for `Counterfoil\configure()`; missing ones come from
         * `configure()` or php.ini.
         *
         * @throws \Counterfoil\InvalidArgumentException for an unknown or invalid option,
         *   or when no database is configured.
         *
         * @param array|null $options
         */
        public function __construct(?array $options = null) {}

        /**
         * Makes `$next` the next number of `$scope_key` if that moves it up;
         * true when it moved, false when it was already there or beyond. A series
         * never moves down: to start lower, create a new series.
         *
         * @throws \Counterfoil\SeriesNotFoundException when the series does not exist.
         * @throws \Counterfoil\InvalidArgumentException for a bad scope key or `$next < 1`.
         * @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
         *
         * @param string $scope_key
         * @param int $next
         * @return bool
         */
        public function advance(string $scope_key, int $next): bool {}

        /**
         * Hands out the next number of `$scope_key`.
         *
         * @throws \Counterfoil\SeriesNotFoundException when the series does not exist.
         * @throws \Counterfoil\OverflowException when the series is exhausted.
         * @throws \Counterfoil\InvalidArgumentException for a bad scope key.
         * @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
         *
         * @param string $scope_key
         * @return int
         */
        public function allocate(string $scope_key): int {}

        /**
         * Hands out `$count` contiguous numbers (1 to 100000), in order.
         *
         * @throws \Counterfoil\SeriesNotFoundException when the series does not exist.
         * @throws \Counterfoil\OverflowException when the series would be exhausted.
         * @throws \Counterfoil\InvalidArgumentException for a bad scope key or count.
         * @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
         *
         * @param string $scope_key
         * @param int $count
         * @return array
         */
        public function allocateMany(string $scope_key, int $count): array {}

        /**
         * Hands out the next number of `$scope_key` and records it in the
         * registry (with `$source`), in one transaction; the number is marked
         * issued once the answer to the COMMIT arrived (else it stays
         * unconfirmed, and the books list it). With `$request_key` (1–64
         * letters, digits, `.`, `_`, `:`, `-`), a repeat of the call with the
         * same key in the same series returns the same number: after a timeout
         * or a lost connection, repeat the call to learn its fate.
         *
         * @throws \Counterfoil\SeriesNotFoundException when the series does not exist.
         * @throws \Counterfoil\SeriesClosedException when a later series continues it (the
         *   `continue` plan closed it; nothing was issued).
         * @throws \Counterfoil\DatabaseUnavailableException when the registry already holds the number
         *   (the counter is behind: nothing was issued), or the database fails.
         * @throws \Counterfoil\TimeoutException
         *
         * @param string $scope_key
         * @param string $source
         * @param string|null $request_key
         * @return int
         */
        public function allocateRecorded(string $scope_key, string $source, ?string $request_key = null): int {}

        /**
         * Claims reserved number `$number` of `$scope_key` to create its invoice
         * (committed on this process's own connection), or finds that it is
         * issued, void, or claimed by another caller; a claim older than
         * `$stale_seconds` is taken over. Returns `status` (`claimed`, `busy`,
         * `issued`, `void`) and `post_id` (for `issued`, else null).
         *
         * @throws \Counterfoil\InvalidArgumentException for a bad scope key, number or claim id.
         * @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
         *
         * @param string $scope_key
         * @param int $number
         * @param string $claim
         * @param int $stale_seconds
         * @return array
         */
        public function claimNumber(string $scope_key, int $number, string $claim, int $stale_seconds): array {}

        /**
         * This process's connection facts for this instance's database.
         *
         * @return array
         */
        public function connectionInfo(): array {}

        /**
         * Like `initialize()`, but an existing series throws.
         *
         * @throws \Counterfoil\SeriesExistsException when the series exists (left unchanged).
         * @throws \Counterfoil\InvalidArgumentException for a bad scope key or `$start < 1`.
         * @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
         *
         * @param string $scope_key
         * @param int $start
         * @return void
         */
        public function create(string $scope_key, int $start): void {}

        /**
         * The last number handed out by `$scope_key` (its start minus one
         * before the first).
         *
         * @throws \Counterfoil\SeriesNotFoundException when the series does not exist.
         * @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
         *
         * @param string $scope_key
         * @return int
         */
        public function current(string $scope_key): int {}

        /**
         * Creates the registry and payments tables (and the sequences table) if
         * they are missing.
         *
         * @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
         *
         * @return void
         */
        public function ensureRegistrySchema(): void {}

        /**
         * Creates the sequences table if it is missing (adopting the article's
         * table with its data).
         *
         * @return void
         */
        public function ensureSchema(): void {}

        /**
         * Renders `$number` with this instance's format for `$year` (and
         * `$month`, default this month, UTC).
         *
         * @throws \Counterfoil\InvalidArgumentException for a year outside 1..9999 or a month outside 1..12.
         *
         * @param int $number
         * @param int $year
         * @param int|null $month
         * @return string
         */
        public function format(int $number, int $year, ?int $month = null): string {}

        /**
         * Records the credit note of refund (`$gateway`, `$refund_id`) in the
         * credit-note series `$scope_key`, without a number yet (a later
         * `recordPayment()` of the same refund numbers it), naming invoice
         * `$invoice_number` of `$invoice_scope` (of `$invoice_amount`
         * `$currency`) and `$reason`, in one transaction under the invoice's
         * registry row lock, with the cap on what may be credited checked
         * there. `$amount` is the refund's decimal amount (null: everything
         * left); `$year` and `$month` the site's local period. Returns
         * `status`: `recorded` (with `scope_key`, `amount`, `created`),
         * `refused` (with `invoice`, `credited`, `requested`, in smallest
         * units: nothing written), `mismatch` (the refund id was recorded for
         * another invoice or amount) or `not_issued`.
         *
         * @throws \Counterfoil\InvalidArgumentException for a bad argument.
         * @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
         *
         * @param string $scope_key
         * @param string $gateway
         * @param string $refund_id
         * @param string|null $amount
         * @param string $currency
         * @param int $year
         * @param int $month
         * @param string $invoice_scope
         * @param int $invoice_number
         * @param string $invoice_amount
         * @param string $reason
         * @return array
         */
        public function holdCreditNote(string $scope_key, string $gateway, string $refund_id, ?string $amount = null, string $currency, int $year, int $month, string $invoice_scope, int $invoice_number, string $invoice_amount, string $reason): array {}

        /**
         * Records a payment whose series `$scope_key` does not exist yet,
         * without a number, with the period (the site's local `$year` and
         * `$month`) it arrived in. Once the series exists, `recordPayment()` of
         * the same payment gives it its number. Returns `['status' => 'held',
         * 'created' => bool]` (false for a repeat), or the payment's record (as
         * `recordPayment()`) when it already has its number.
         *
         * @throws \Counterfoil\InvalidArgumentException for a bad gateway, transaction id, scope key or period.
         * @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
         *
         * @param string $scope_key
         * @param string $gateway
         * @param string $transaction_id
         * @param string|null $amount
         * @param string|null $currency
         * @param int $year
         * @param int $month
         * @return array
         */
        public function holdPayment(string $scope_key, string $gateway, string $transaction_id, ?string $amount = null, ?string $currency = null, int $year, int $month): array {}

        /**
         * Creates series `$scope_key` whose first number is `$start` (creating
         * the table if missing); false when the series exists (left unchanged).
         *
         * @throws \Counterfoil\InvalidArgumentException for a bad scope key or `$start < 1`.
         * @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
         *
         * @param string $scope_key
         * @param int $start
         * @return bool
         */
        public function initialize(string $scope_key, int $start): bool {}

        /**
         * Creates series `$scope_key` under a plan (`create`: first number
         * `$start`; `continue`: right after the issuer's latest earlier year, or
         * `$start` when there is none; `hold`: creates nothing). The rule is the
         * core's. Returns `start` (the first number the plan gave, or null) and
         * `created` (false when the series existed: left unchanged).
         *
         * @throws \Counterfoil\InvalidArgumentException for a bad scope key, plan or `$start < 1`.
         * @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
         *
         * @param string $scope_key
         * @param string $plan
         * @param int $start
         * @return array
         */
        public function initializePlanned(string $scope_key, string $plan, int $start): array {}

        /**
         * Marks number `$number`, claimed by `$claim`, issued to `$post_id`, and
         * the payment (`$gateway`, `$transaction_id`, when given) with its post,
         * in one transaction. False when the claim was lost: nothing changed.
         *
         * @throws \Counterfoil\InvalidArgumentException for a bad argument.
         * @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
         *
         * @param string $scope_key
         * @param int $number
         * @param string $claim
         * @param int $post_id
         * @param string|null $gateway
         * @param string|null $transaction_id
         * @return bool
         */
        public function issueClaimed(string $scope_key, int $number, string $claim, int $post_id, ?string $gateway = null, ?string $transaction_id = null): bool {}

        /**
         * Records a payment and gives it a number of `$scope_key`, once per
         * (`$gateway`, `$transaction_id`): a repeated delivery gets the first
         * delivery's number. Returns `scope_key`, `number`, `created` (false for
         * a repeat), `status` (reserved, issued, void) and `post_id` (or null).
         *
         * @throws \Counterfoil\InvalidArgumentException for a bad gateway, transaction id or scope key.
         * A payment held by `holdPayment()` gets its number here, from the series
         * chosen when it arrived, with `created` true. `$year` and `$month`, when
         * given, are the site's local period at the instant the payment arrived,
         * recorded with it; `period` is the recorded period (null when none was).
         *
         * @throws \Counterfoil\SeriesNotFoundException when the series does not exist (nothing recorded).
         * @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
         *
         * @param string $scope_key
         * @param string $gateway
         * @param string $transaction_id
         * @param string|null $amount
         * @param string|null $currency
         * @param int|null $year
         * @param int|null $month
         * @return array
         */
        public function recordPayment(string $scope_key, string $gateway, string $transaction_id, ?string $amount = null, ?string $currency = null, ?int $year = null, ?int $month = null): array {}

        /**
         * Gives claim `$claim` on number `$number` back: reserved again. False
         * when the claim was not held.
         *
         * @throws \Counterfoil\InvalidArgumentException for a bad argument.
         * @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
         *
         * @param string $scope_key
         * @param int $number
         * @param string $claim
         * @return bool
         */
        public function releaseClaim(string $scope_key, int $number, string $claim): bool {}

        /**
         * Renders `$number` with `$template` (not this instance's format: a
         * credit note's, say) for `$year` and `$month` (default this month, UTC)
         * under period rule `$rule` (`calendar-year`, the default, or
         * `fiscal-year:MM-DD`: `{fy}` and `{fy_end}`; `$year` is then the year
         * the fiscal year starts in).
         *
         * @throws \Counterfoil\InvalidArgumentException for a template or rule that does not parse, a year outside 1..9999 or a month outside 1..12.
         *
         * @param string $template
         * @param int $number
         * @param int $year
         * @param int|null $month
         * @param string|null $rule
         * @return string
         */
        public static function render(string $template, int $number, int $year, ?int $month = null, ?string $rule = null): string {}

        /**
         * The scope key of the per-user, per-year series: `"{user_id}:{year}"`.
         *
         * @throws \Counterfoil\InvalidArgumentException for a negative user id or a year outside 1..9999.
         *
         * @param int $user_id
         * @param int $year
         * @return string
         */
        public static function scopeFor(int $user_id, int $year): string {}

        /**
         * The node of the list this process writes numbers to (0 = the first),
         * connecting first if needed by the store's own rule (the first
         * healthy node in list order; the earlier ones tried again after a
         * while on a later one). The plugin sends the site's other writes to
         * its books to that node.
         *
         * @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
         *
         * @return int
         */
        public function writerNode(): int {}
    }

    /**
     * Whether `$number` is a valid air waybill number in an accepted spelling
     * (`157-40121012`, `157-4012 1012`, `15740121012`, surrounding spaces).
     *
     * @param string $number
     * @return bool
     */
    function awb_is_valid(string $number): bool {}

    /**
     * The canonical spelling (`157-40121012`) of an air waybill number.
     *
     * @throws \Counterfoil\InvalidArgumentException saying what is wrong (length,
     *   a non-digit and where, the check digit expected and found).
     *
     * @param string $number
     * @return string
     */
    function awb_normalize(string $number): string {}

    /**
     * Sets this process's connection settings (overrides php.ini). Options:
     * `database_url`, or `host` (WordPress `DB_HOST` forms), `user`, `password`,
     * `database`; `table_prefix`, `timeout_ms`, `format`; `registry` (bool: record
     * each number of `allocate_invoice_number()` in the registry table, in the
     * allocation's transaction); `one_trip_payments` (bool, default true: a
     * payment's first delivery, a held payment's completion and a recorded
     * allocation's first try as one multi-statement packet; false: the flow of
     * several statements); `paused` (a reason: `allocate_invoice_number()`
     * takes no number and throws `DatabaseUnavailableException` with it; the
     * WordPress plugin sets it on a copy of its site; empty or absent: not
     * paused).
     *
     * @throws \Counterfoil\InvalidArgumentException for an unknown or invalid option.
     *
     * @param array $options
     * @return void
     */
    function configure(array $options): void {}

    /**
     * This process's connection to the database of the process-wide settings:
     * `pid`, `connects`, `retries`, `timeouts`, `discarded`, `connection_id`
     * (0 when none), `node`, `skipped` and `skipped_reason` (why the last node
     * passed over was skipped: down, not ready, read-only, a standby).
     *
     * @return array
     */
    function connection_info(): array {}

    /**
     * An e-invoice of a document input (JSON) as `ubl`, `cii` or `pdf`.
     *
     * @param string $input_json
     * @param string $format
     * @return string
     */
    function einvoice_document(string $input_json, string $format): string {}
}

namespace {
    /**
     * Hands out the next invoice number of `$user_id` for `$year`, rendered with
     * `counterfoil.format` (default `{year}-{seq:04}`, e.g. `2019-0002`).
     *
     * @throws \Counterfoil\SeriesNotFoundException when the series was never initialized.
     * @throws \Counterfoil\InvalidArgumentException for a negative user id or a year outside 1..9999.
     * @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
     *
     * @param int $user_id
     * @param int $year
     * @return string
     */
    function allocate_invoice_number(int $user_id, int $year): string {}

    /**
     * Creates the invoice series of `$user_id` for `$year`, whose first number
     * is `$starting_number`. Returns false (and changes nothing) when the series
     * exists.
     *
     * @throws \Counterfoil\InvalidArgumentException when `$starting_number < 1`,
     *   `$user_id < 0` or `$year` is outside 1..9999.
     * @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
     *
     * @param int $user_id
     * @param int $year
     * @param int $starting_number
     * @return bool
     */
    function initialize_invoice_sequence(int $user_id, int $year, int $starting_number): bool {}
}
