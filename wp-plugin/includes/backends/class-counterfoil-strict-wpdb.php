<?php
/**
 * A wpdb that never reconnects, and never ends the request when it cannot
 * connect (bail and dead_db are wpdb's answers; ours is an error).
 *
 * One class of its own (it was in class-counterfoil-wpdb-transaction.php).
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * A wpdb that never reconnects, and never ends the request when it cannot
 * connect (bail and dead_db are wpdb's answers; ours is an error).
 */
final class Counterfoil_Strict_Wpdb extends wpdb {
	/**
	 * Connects without bailing out.
	 *
	 * @param bool $allow_bail Ignored: never bails.
	 * @return bool
	 */
	public function db_connect( $allow_bail = true ) {
		unset( $allow_bail );
		return parent::db_connect( false );
	}

	/**
	 * A lost connection stays lost: the statement that met it fails.
	 *
	 * @param bool $allow_bail Ignored.
	 * @return false
	 */
	public function check_connection( $allow_bail = true ) {
		unset( $allow_bail );
		return false;
	}
}
