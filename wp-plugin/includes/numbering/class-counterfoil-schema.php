<?php
/**
 * The plugin's tables, created and upgraded with dbDelta under an integer
 * schema version option, on activation and on load when the version differs
 * (activation hooks do not run on updates).
 *
 * - {prefix}invoice_sequences: the article's table (scope_key, current_value)
 *   plus start_value, created_at and closed_by (the series that continues a
 *   closed one). An existing article table is adopted:
 *   dbDelta only adds the missing columns; its rows are untouched.
 * - {prefix}counterfoil_numbers: the registry, one row per allocated number,
 *   unique per (scope_key, number), status reserved / issued / void + reason.
 * - {prefix}counterfoil_payments: one row per (gateway, transaction_id), unique,
 *   with the number it received (NULL while it is held for a missing series,
 *   with the local period it arrived in); a credit note's row (its
 *   transaction id the refund's) names the invoice it corrects.
 *
 * Versions: 1 the tables; 2 payments.period (payments held for a series);
 * 3 the post type counterfoil_invoice (our `invoice` posts migrated), its
 * capabilities, whether the sequences table was there before us, and the
 * registry's claim columns (status `creating`: an invoice being created);
 * 4 the books' indexes on the registry (counts per series, stale
 * reservations, dates) and on payments (those held for a series);
 * 5 {prefix}counterfoil_refunds: refunds reported by a gateway (Stripe's
 * charge.refunded), one row per (gateway, transaction_id, refund_ref) with
 * the largest refunded amount seen; plugin-only (the core has no refunds);
 * 6 the registry's claim_node and request_key; 7 invoice_sequences.closed_by
 * (a series closed when the `continue` plan makes its successor); 8 credit
 * notes: payments.refers_scope/refers_number/reason (a credit note's row names
 * the invoice it corrects, its series and number, and why), and refunds become one row
 * per refund (refund_ref the refund's id) with its status and the time of
 * the event that last changed it (`as_of`): a later event wins, so a
 * refund that fails or is reversed stops counting; a `charge.refunded`
 * without its refunds listed keeps one row per charge (refund_ref the
 * charge's id, status `charge_total`); 9 the site's identity recorded
 * (Counterfoil_Site_Identity: a copy of the site numbers nothing); 10 the
 * tamper-evident chain: {prefix}counterfoil_chain (every event of a
 * number's life, chained per series with SHA-256) and the head of each
 * series' chain on its row (invoice_sequences.chain_seq, chain_head, and
 * chain_from: the first number the chain issued; numbers below it predate
 * the chain); 11 {prefix}counterfoil_details: the buyer and the lines a
 * payment carried for its e-invoice, once per (gateway, transaction id),
 * plugin-only; 12 {prefix}counterfoil_documents: each invoice's and credit
 * note's e-invoice input as first made (JSON), so its documents never
 * change after and `counterfoil export --format documents` writes the same
 * bytes, plugin-only.
 *
 * The definitions of the first three and the chain equal counterfoil-core's
 * (core/src/mysql/sql.rs); a test compares SHOW CREATE TABLE of both.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * Schema installer.
 */
final class Counterfoil_Schema {
	const VERSION        = 12;
	/** The option holding the installed schema version (upgrades run when it is lower than VERSION). */
	const VERSION_OPTION = 'counterfoil_schema_version';

	/** Installs or upgrades when the stored version differs. */
	public static function maybe_upgrade() {
		if ( (int) get_option( self::VERSION_OPTION ) !== self::VERSION ) {
			self::install();
		}
	}

	/** Creates or upgrades the tables; safe to run again. */
	public static function install() {
		global $wpdb;
		require_once ABSPATH . 'wp-admin/includes/upgrade.php';
		// A named lock so two requests never run the upgrade at once (lock
		// names are server-wide: the database is part of the name).
		$name = 'counterfoil_schema:' . DB_NAME . '.' . $wpdb->prefix;
		$lock = $wpdb->get_var( $wpdb->prepare( 'SELECT GET_LOCK(%s, 10)', $name ) ); // phpcs:ignore WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- a named lock around the schema upgrade: no WordPress API takes one.
		try {
			self::remember_preexisting_sequences();
			$before = (int) get_option( self::VERSION_OPTION );
			dbDelta( self::statements( $wpdb->prefix ) );
			if ( $before >= 5 && $before < 8 ) {
				// Before version 8 every refund row was a charge's refunded
				// total (refund_ref the charge's id), not one refund.
				$wpdb->query( "UPDATE `{$wpdb->prefix}counterfoil_refunds` SET status = 'charge_total'" ); // phpcs:ignore WordPress.DB -- fixed name.
			}
			Counterfoil_Invoice_Type::migrate_old_posts();
			Counterfoil_Invoice_Type::grant();
			Counterfoil_Site_Identity::remember();
			update_option( self::VERSION_OPTION, self::VERSION, true );
		} finally {
			if ( '1' === (string) $lock ) {
				$wpdb->query( $wpdb->prepare( 'SELECT RELEASE_LOCK(%s)', $name ) ); // phpcs:ignore WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- the lock taken above.
			}
		}
	}

	/**
	 * Records once whether the sequences table was there before the plugin
	 * created it (the article's table, adopted): uninstall never drops it
	 * then. On an upgrade from before this was recorded, rows without a
	 * start value (adopted ones) say it was.
	 */
	private static function remember_preexisting_sequences() {
		global $wpdb;
		if ( false !== get_option( 'counterfoil_sequences_preexisting' ) ) {
			return;
		}
		$table  = self::tables()['sequences'];
		$exists = $table === $wpdb->get_var( $wpdb->prepare( 'SHOW TABLES LIKE %s', $wpdb->esc_like( $table ) ) ); // phpcs:ignore WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- whether the table is there now, before the upgrade.
		$ours   = (int) get_option( self::VERSION_OPTION ) > 0;
		if ( $exists && $ours ) {
			$exists = (int) $wpdb->get_var( "SELECT COUNT(*) FROM `{$table}` WHERE start_value IS NULL" ) > 0; // phpcs:ignore WordPress.DB.PreparedSQL, WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- table name from the prefix; read once, at the upgrade.
		}
		add_option( 'counterfoil_sequences_preexisting', $exists ? 1 : 0, '', false );
	}

	/**
	 * The CREATE TABLE statements, in dbDelta's format.
	 *
	 * @param string $prefix Table prefix.
	 * @return string[]
	 */
	public static function statements( $prefix ) {
		$charset = 'DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin';
		$t       = self::tables( $prefix );
		return array(
			"CREATE TABLE {$t['sequences']} (
  scope_key varchar(191) NOT NULL,
  current_value bigint(20) unsigned NOT NULL,
  start_value bigint(20) unsigned NULL,
  created_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP,
  closed_by varchar(191) NULL,
  chain_seq bigint(20) unsigned NOT NULL DEFAULT 0,
  chain_head char(64) NULL,
  chain_from bigint(20) unsigned NULL,
  PRIMARY KEY  (scope_key)
) ENGINE=InnoDB $charset;",
			"CREATE TABLE {$t['numbers']} (
  id bigint(20) unsigned NOT NULL AUTO_INCREMENT,
  scope_key varchar(191) NOT NULL,
  number bigint(20) unsigned NOT NULL,
  status varchar(16) NOT NULL,
  reason varchar(255) NULL,
  source varchar(32) NOT NULL,
  post_id bigint(20) unsigned NULL,
  gateway varchar(32) NULL,
  transaction_id varchar(191) NULL,
  claim varchar(40) NULL,
  claim_connection bigint(20) unsigned NULL,
  claim_node varchar(64) NULL,
  claimed_at datetime NULL,
  request_key varchar(64) NULL,
  created_at datetime NOT NULL,
  updated_at datetime NOT NULL,
  PRIMARY KEY  (id),
  UNIQUE KEY scope_number (scope_key,number),
  UNIQUE KEY scope_request (scope_key,request_key),
  KEY post_id (post_id),
  KEY scope_status (scope_key,status),
  KEY status_updated (status,updated_at),
  KEY created_at (created_at)
) ENGINE=InnoDB $charset;",
			"CREATE TABLE {$t['payments']} (
  id bigint(20) unsigned NOT NULL AUTO_INCREMENT,
  gateway varchar(32) NOT NULL,
  transaction_id varchar(191) NOT NULL,
  scope_key varchar(191) NOT NULL,
  number bigint(20) unsigned NULL,
  post_id bigint(20) unsigned NULL,
  amount varchar(32) NULL,
  currency varchar(3) NULL,
  period char(7) NULL,
  created_at datetime NOT NULL,
  refers_scope varchar(191) NULL,
  refers_number bigint(20) unsigned NULL,
  reason varchar(255) NULL,
  PRIMARY KEY  (id),
  UNIQUE KEY gateway_transaction (gateway,transaction_id),
  KEY scope_number (scope_key,number),
  KEY number_id (number,id),
  KEY refers (refers_scope,refers_number)
) ENGINE=InnoDB $charset;",
			"CREATE TABLE {$t['refunds']} (
  id bigint(20) unsigned NOT NULL AUTO_INCREMENT,
  gateway varchar(32) NOT NULL,
  transaction_id varchar(191) NOT NULL,
  refund_ref varchar(191) NOT NULL,
  amount_minor bigint(20) unsigned NOT NULL,
  amount varchar(32) NOT NULL,
  currency varchar(3) NOT NULL,
  fully tinyint(1) NOT NULL DEFAULT 0,
  status varchar(24) NOT NULL DEFAULT 'succeeded',
  as_of bigint(20) unsigned NOT NULL DEFAULT 0,
  created_at datetime NOT NULL,
  updated_at datetime NOT NULL,
  PRIMARY KEY  (id),
  UNIQUE KEY payment_refund (gateway,transaction_id,refund_ref)
) ENGINE=InnoDB $charset;",
			"CREATE TABLE {$t['details']} (
  gateway varchar(32) NOT NULL,
  transaction_id varchar(191) NOT NULL,
  buyer longtext NULL,
  line_items longtext NULL,
  created_at datetime NOT NULL,
  PRIMARY KEY  (gateway,transaction_id)
) ENGINE=InnoDB $charset;",
			"CREATE TABLE {$t['documents']} (
  post_id bigint(20) unsigned NOT NULL,
  number varchar(191) NOT NULL,
  kind varchar(16) NOT NULL,
  issue_date date NOT NULL,
  input longtext NOT NULL,
  created_at datetime NOT NULL,
  PRIMARY KEY  (post_id),
  KEY issue_date (issue_date)
) ENGINE=InnoDB $charset;",
			"CREATE TABLE {$t['chain']} (
  scope_key varchar(191) NOT NULL,
  seq bigint(20) unsigned NOT NULL,
  number bigint(20) unsigned NOT NULL,
  event varchar(16) NOT NULL,
  gateway varchar(32) NULL,
  transaction_id varchar(191) NULL,
  amount varchar(32) NULL,
  currency varchar(3) NULL,
  post_id bigint(20) unsigned NULL,
  reason varchar(255) NULL,
  event_at datetime NOT NULL,
  prev_hash char(64) NOT NULL,
  hash char(64) NOT NULL,
  PRIMARY KEY  (scope_key,seq),
  KEY scope_number (scope_key,number,event)
) ENGINE=InnoDB $charset;",
		);
	}

	/**
	 * Table names: the one list of the plugin's tables. statements() creates
	 * these names, and uninstall and a deleted network site drop them
	 * (droppable()), so a table added here is created and dropped alike.
	 *
	 * @param string|null $prefix Table prefix (default $wpdb->prefix; a
	 *                            network site's: $wpdb->get_blog_prefix()).
	 * @return array sequences, numbers, payments, refunds, chain, details, documents.
	 */
	public static function tables( $prefix = null ) {
		global $wpdb;
		$prefix = null === $prefix ? $wpdb->prefix : (string) $prefix;
		return array(
			'sequences' => $prefix . 'invoice_sequences',
			'numbers'   => $prefix . 'counterfoil_numbers',
			'payments'  => $prefix . 'counterfoil_payments',
			'refunds'   => $prefix . 'counterfoil_refunds',
			'chain'     => $prefix . 'counterfoil_chain',
			'details'   => $prefix . 'counterfoil_details',
			'documents' => $prefix . 'counterfoil_documents',
		);
	}

	/**
	 * The tables that go when a site's data goes (uninstall with deletion,
	 * a deleted network site): every table of tables(), but the sequences
	 * table when it was there before the plugin (the article's, adopted).
	 *
	 * @param string $prefix                Table prefix.
	 * @param bool   $sequences_preexisting Whether the sequences table predates the plugin.
	 * @return string[]
	 */
	public static function droppable( $prefix, $sequences_preexisting ) {
		$tables = self::tables( $prefix );
		if ( $sequences_preexisting ) {
			unset( $tables['sequences'] );
		}
		return array_values( $tables );
	}
}
