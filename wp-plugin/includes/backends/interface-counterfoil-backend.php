<?php
/**
 * The one backend interface, with two implementations: the counterfoil PHP
 * extension (Counterfoil_Extension_Backend) and pure PHP on $wpdb
 * (Counterfoil_Php_Backend). Both run the same test suite and pass the
 * shared vectors; both throw the Counterfoil\* exceptions.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * Allocation backend.
 */
interface Counterfoil_Backend {
	/** Short name shown in the admin: "extension" or "php". */
	public function name();

	/**
	 * Creates a series whose first number is $start; false when it exists.
	 *
	 * @param string $scope Scope key.
	 * @param int    $start First number (1 or more).
	 * @return bool
	 */
	public function initialize( $scope, $start );

	/**
	 * Creates a series under a plan (the core's rule, docs/design.md §7): create
	 * at $start; continue right after the issuer's latest earlier year (or
	 * at $start without one); hold creates nothing.
	 *
	 * @param string $scope Scope key.
	 * @param string $plan  create, continue or hold.
	 * @param int    $start Configured first number (1 or more).
	 * @return array start (int|null), created (bool: false when it existed).
	 */
	public function initialize_planned( $scope, $plan, $start );

	/**
	 * Records a payment whose series does not exist yet, without a number,
	 * with the site's local period it arrived in. record_payment() of the
	 * same payment numbers it once the series exists.
	 *
	 * @param string      $scope          Scope key.
	 * @param string      $gateway        Gateway.
	 * @param string      $transaction_id Transaction id.
	 * @param string|null $amount         Amount.
	 * @param string|null $currency       Currency.
	 * @param int         $year           Local year.
	 * @param int         $month          Local month.
	 * @return array status 'held' and created (bool), or the payment's record
	 *               (as record_payment) when it already has its number.
	 */
	public function hold_payment( $scope, $gateway, $transaction_id, $amount, $currency, $year, $month );

	/**
	 * Records the credit note of a refund in the credit-note series $scope,
	 * without a number (record_payment() of the same refund numbers it),
	 * naming its invoice, in one transaction on the backend's own connection
	 * under the invoice's registry row lock; the cap (the core's
	 * credit_note::credit_note_amount) is checked there, also for a row an
	 * earlier delivery left without its invoice. A refused refund writes
	 * nothing.
	 *
	 * @param string      $scope          The credit-note series.
	 * @param string      $gateway        Gateway.
	 * @param string      $refund_id      The refund's id.
	 * @param string|null $amount         The refund (decimal); null: everything left.
	 * @param string      $currency       The invoice's currency.
	 * @param int         $year           Local year.
	 * @param int         $month          Local month.
	 * @param string      $invoice_scope  The invoice's series.
	 * @param int         $invoice_number The invoice's number.
	 * @param string      $invoice_amount The invoice's amount (decimal).
	 * @param string      $reason         Why (at most 255 bytes).
	 * @return array status: recorded (scope_key, amount, created), refused
	 *               (invoice, credited, requested, in smallest units),
	 *               mismatch (the refund id names another invoice or amount)
	 *               or not_issued.
	 */
	public function hold_credit_note( $scope, $gateway, $refund_id, $amount, $currency, $year, $month, $invoice_scope, $invoice_number, $invoice_amount, $reason );

	/**
	 * Moves a series so that $next is its next number; false when it is
	 * already there or beyond (never moves down).
	 *
	 * @param string $scope Scope key.
	 * @param int    $next  Next number.
	 * @return bool
	 */
	public function advance( $scope, $next );

	/**
	 * Allocates the next number and records it in the registry, in one
	 * transaction; it is marked issued once the COMMIT was answered (else it
	 * stays unconfirmed). With a request key, a repeat with the same key in
	 * the same series returns the same number.
	 *
	 * @param string      $scope       Scope key.
	 * @param string      $source      Who asked (e.g. "api").
	 * @param string|null $request_key The caller's idempotency key, or null.
	 * @return int
	 */
	public function allocate_recorded( $scope, $source, $request_key = null );

	/**
	 * Records a payment and gives it a number, once per (gateway, transaction).
	 *
	 * @param string      $scope          Scope key.
	 * @param string      $gateway        Gateway.
	 * @param string      $transaction_id Transaction id.
	 * @param string|null $amount         Amount.
	 * @param string|null $currency       Currency.
	 * @param int|null    $year           Local year at the instant the payment arrived (with $month).
	 * @param int|null    $month          Local month at that instant: the period is recorded
	 *                                    with the payment, and every later step takes year and
	 *                                    month from it.
	 * @return array scope_key, number, created, status, post_id, period
	 *               (YYYY-MM as recorded with the payment, or null). A held
	 *               payment is numbered here from the series it was held for.
	 */
	public function record_payment( $scope, $gateway, $transaction_id, $amount, $currency, $year = null, $month = null );

	/**
	 * Claims a reserved number to create its invoice, on the backend's own
	 * connection (committed: no lock a reconnecting $wpdb could lose).
	 *
	 * @param string $scope         Scope key.
	 * @param int    $number        Number.
	 * @param string $claim         Random claim id (1–40 of [A-Za-z0-9_-]).
	 * @param int    $stale_seconds A claim older than this is taken over.
	 * @return array status (claimed, busy, issued, void), post_id (issued only).
	 */
	public function claim_number( $scope, $number, $claim, $stale_seconds );

	/**
	 * Marks a claimed number issued to a post, and the payment with it, in
	 * one transaction; false when the claim was lost (nothing changed).
	 *
	 * @param string      $scope          Scope key.
	 * @param int         $number         Number.
	 * @param string      $claim          Claim id.
	 * @param int         $post_id        Invoice post.
	 * @param string|null $gateway        Payment's gateway, or null.
	 * @param string|null $transaction_id Payment's transaction id, or null.
	 * @return bool
	 */
	public function issue_claimed( $scope, $number, $claim, $post_id, $gateway, $transaction_id );

	/**
	 * Gives a claim back (the number is reserved again); false when not held.
	 *
	 * @param string $scope  Scope key.
	 * @param int    $number Number.
	 * @param string $claim  Claim id.
	 * @return bool
	 */
	public function release_claim( $scope, $number, $claim );

	/**
	 * The host (in DB_HOST's forms) of the node this backend writes numbers
	 * to, connecting first if needed: the site's other writes to its books
	 * go there too (Counterfoil_Wpdb_Transaction), never to a second node
	 * of a cluster, where a transaction that another node's write set
	 * aborts can answer OK and vanish. With one host, that host; null when
	 * it cannot be named (a node list set in php.ini for the extension).
	 *
	 * @return string|null
	 */
	public function writer_host();

	/**
	 * The last number handed out by a series.
	 *
	 * @param string $scope Scope key.
	 * @return int
	 */
	public function current( $scope );

	/**
	 * Renders a number with the site's format.
	 *
	 * @param int $number Number.
	 * @param int $year   Year.
	 * @param int $month  Month.
	 * @return string
	 */
	public function format( $number, $year, $month );

	/**
	 * Renders $number with $template (the site's invoice format, or a credit
	 * note's) under the site's period rule ({fy}, {fy_end}).
	 *
	 * @param string $template Number template.
	 * @param int    $number   Number.
	 * @param int    $year     Year (the year the period starts in).
	 * @param int    $month    Month.
	 * @param string $rule     Period rule: calendar-year or fiscal-year:MM-DD.
	 * @return string
	 */
	public function render( $template, $number, $year, $month, $rule = 'calendar-year' );
}
