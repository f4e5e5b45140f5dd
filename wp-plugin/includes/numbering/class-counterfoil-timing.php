<?php
/**
 * Time spent in the backend during this request, for the Server-Timing
 * header and the benchmark.
 *
 * One class of its own (it was in class-counterfoil-invoices.php).
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * Time spent in the backend during this request, for the Server-Timing
 * header and the benchmark.
 */
final class Counterfoil_Timing {
	/** @var array Seconds by name. */
	private static $spent = array();

	public static function add( $name, $seconds ) {
		self::$spent[ $name ] = ( isset( self::$spent[ $name ] ) ? self::$spent[ $name ] : 0 ) + $seconds;
	}

	public static function get( $name ) {
		return isset( self::$spent[ $name ] ) ? self::$spent[ $name ] : 0.0;
	}
}
