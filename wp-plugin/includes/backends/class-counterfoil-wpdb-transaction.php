<?php
/**
 * A transaction the plugin writes with WordPress's database API that cannot
 * be half committed by a lost connection.
 *
 * wpdb, when a statement finds the connection gone (2006), connects again
 * and runs that statement anew on the new connection, outside the
 * transaction it belonged to: the statements before it are rolled back with
 * the old connection, it and the ones after it commit one by one (a void's
 * chain entry and head move without the void itself). So such a transaction
 * runs on a connection of its own, opened with the site's own settings,
 * that never reconnects: a lost connection fails the statement, the caller
 * rolls back (the server already has), and nothing of the transaction
 * outlives the call.
 *
 * Invariants: run() ends every transaction it opens in COMMIT or ROLLBACK
 * and closes its connection, whatever $work does; a statement that meets a
 * lost connection returns false and is never sent again; with a node list
 * (COUNTERFOIL_DB_NODES) every write goes to the node the backend writes
 * numbers to (counterfoil_books_host()), never a second node of a cluster.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * Runs a transaction on a connection that never reconnects.
 */
final class Counterfoil_Wpdb_Transaction {
	/**
	 * Runs $work( $db ) between START TRANSACTION and COMMIT on a connection
	 * of its own ($db, a wpdb with the site's prefix). Any Throwable from
	 * $work, or a COMMIT that fails, rolls back and is thrown again.
	 *
	 * @param callable $work Receives the connection; its return value is returned.
	 * @return mixed
	 * @throws RuntimeException When the connection cannot be opened or the COMMIT fails.
	 */
	public static function run( callable $work ) {
		$db = self::connect();
		try {
			if ( false === $db->query( 'START TRANSACTION' ) ) {
				throw new RuntimeException( 'START TRANSACTION failed: ' . $db->last_error );
			}
			try {
				$result = $work( $db );
				if ( false === $db->query( 'COMMIT' ) ) {
					throw new RuntimeException( 'COMMIT failed: ' . ( '' !== $db->last_error ? $db->last_error : 'the connection was lost' ) );
				}
			} catch ( Throwable $e ) {
				$db->query( 'ROLLBACK' );
				throw $e;
			}
			return $result;
		} finally {
			$db->close();
		}
	}

	/**
	 * Runs $work( $db ) on the connection the site's books are written on,
	 * without a transaction (for a single statement, or a write and the
	 * read of what it wrote): $wpdb itself on a site without a node list;
	 * with one (COUNTERFOIL_DB_NODES), a connection of its own to the node that
	 * holds the numbers, which never reconnects and is closed after.
	 *
	 * @param callable $work Receives the connection; its return value is returned.
	 * @return mixed
	 * @throws RuntimeException When the node cannot be reached.
	 */
	public static function on_books_node( callable $work ) {
		global $wpdb;
		if ( ! counterfoil_books_elsewhere() ) {
			return $work( $wpdb );
		}
		$db = self::connect();
		try {
			return $work( $db );
		} finally {
			$db->close();
		}
	}

	/**
	 * A new connection with the site's settings (those $wpdb was built
	 * with, so a site whose wp-config.php builds it differently is
	 * followed), to the host the books are written on.
	 *
	 * @return Counterfoil_Strict_Wpdb
	 * @throws RuntimeException When it cannot connect.
	 */
	private static function connect() {
		global $wpdb;
		$db = new Counterfoil_Strict_Wpdb( $wpdb->dbuser, $wpdb->dbpassword, $wpdb->dbname, counterfoil_books_host() );
		$db->hide_errors();
		$db->suppress_errors( true );
		if ( empty( $db->dbh ) ) {
			throw new RuntimeException( 'cannot connect to the database' );
		}
		$db->set_prefix( $wpdb->base_prefix );
		if ( is_multisite() ) {
			$db->set_blog_id( get_current_blog_id() );
		}
		return $db;
	}
}
