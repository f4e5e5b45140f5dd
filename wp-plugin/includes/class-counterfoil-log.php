<?php
/**
 * The server log, for what a gateway must not be told: database errors,
 * hosts, hook exceptions. Each cause is written once per window
 * (LOG_WINDOW seconds), so a failing database never floods the log, and each
 * line carries the request id that the gateway's answer carries too.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * Rate-limited error log.
 */
final class Counterfoil_Log {
	const LOG_WINDOW = 300;

	/** @var string|null This request's id. */
	private static $request_id = null;

	/** This request's id (a UUID), made on first use. */
	public static function request_id() {
		if ( null === self::$request_id ) {
			self::$request_id = wp_generate_uuid4();
		}
		return self::$request_id;
	}

	/**
	 * Writes $detail to the server log unless the same $cause was written in
	 * the last LOG_WINDOW seconds.
	 *
	 * @param string $cause  What went wrong, without variable parts (e.g. an
	 *                       error class and code).
	 * @param string $detail The full message.
	 * @return bool Whether it was written.
	 */
	public static function once( $cause, $detail ) {
		$key = 'counterfoil_log_' . md5( $cause );
		if ( get_transient( $key ) ) {
			return false;
		}
		set_transient( $key, 1, self::LOG_WINDOW );
		error_log( sprintf( 'counterfoil [%s] %s: %s', self::request_id(), $cause, $detail ) ); // phpcs:ignore WordPress.PHP.DevelopmentFunctions.error_log_error_log -- a real problem for the site owner.
		return true;
	}
}
