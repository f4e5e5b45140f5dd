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
	 * Moves a series so that $next is its next number; false when it is
	 * already there or beyond (never moves down).
	 *
	 * @param string $scope Scope key.
	 * @param int    $next  Next number.
	 * @return bool
	 */
	public function advance( $scope, $next );

	/**
	 * Allocates the next number and records it as issued in the registry, in
	 * one transaction.
	 *
	 * @param string $scope  Scope key.
	 * @param string $source Who asked (e.g. "api").
	 * @return int
	 */
	public function allocate_recorded( $scope, $source );

	/**
	 * Records a payment and gives it a number, once per (gateway, transaction).
	 *
	 * @param string      $scope          Scope key.
	 * @param string      $gateway        Gateway.
	 * @param string      $transaction_id Transaction id.
	 * @param string|null $amount         Amount.
	 * @param string|null $currency       Currency.
	 * @return array scope_key, number, created, status, post_id.
	 */
	public function record_payment( $scope, $gateway, $transaction_id, $amount, $currency );

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
}
