<?php
/**
 * A series' life on the site (docs/design.md §7): next year's series ahead of
 * time, the daily job that prepares them in December, and the Site Health
 * tests that say whether payments can be numbered.
 *
 * Invariants: series are only ever created (one INSERT each, an existing
 * series is never reset), never changed here; the start number of a new
 * series comes from the core's rule (Counterfoil_Rules::start_for_new_series
 * on the pure-PHP backend, the Rust core with the extension); periods are the
 * site's local dates (counterfoil_local_period()).
 *
 * The daily job creates next year's series from 1 December under the
 * `create` plan only: under `continue` the new year starts right after the
 * old year's last number, which is known only when the old year has ended,
 * so those series are created by their first payment (or by hand, with the
 * start the admin reviews, on the settings page). A first payment's creation
 * closes the old year's series (the core's series_life rule): its later
 * payments are numbered by the new one. A series created by hand closes
 * nothing; its start is the admin's.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * Next year's series and Site Health.
 */
final class Counterfoil_Series_Life {
	const CRON_HOOK = 'counterfoil_prepare_next_year';

	/** Hooks. */
	public static function init() {
		add_action( self::CRON_HOOK, array( __CLASS__, 'daily' ) );
		add_action( 'init', array( __CLASS__, 'schedule' ) );
		add_filter( 'site_status_tests', array( __CLASS__, 'site_status_tests' ) );
	}

	/** Schedules the daily job if it is not scheduled (activation and every load). */
	public static function schedule() {
		if ( ! wp_next_scheduled( self::CRON_HOOK ) ) {
			wp_schedule_event( time() + 60, 'daily', self::CRON_HOOK );
		}
	}

	/**
	 * Next period's series for issuers that have a series in $period (a year,
	 * or a month under the monthly rule): the key, this period's counter,
	 * whether it exists, and the start the site's plan would give it. One
	 * query (the next period's key is this key with the period replaced), in
	 * scope order.
	 *
	 * @param int|array $period      This period: a year, or [year, month or null].
	 * @param int       $limit        At most this many (0: all).
	 * @param bool      $only_missing Only those whose next period's series is missing.
	 * @return array List of arrays: scope_key, from (this year's key), current, exists, start.
	 */
	public static function next_year_proposals( $period, $limit = 0, $only_missing = false ) {
		global $wpdb;
		$labels = self::labels( $period );
		if ( null === $labels ) {
			return array();
		}
		list( $this_one, $next, $key ) = $labels;
		$t    = Counterfoil_Schema::tables();
		$sql  = "SELECT s.scope_key, s.current_value, n.scope_key IS NOT NULL AS next_exists
			FROM {$t['sequences']} s LEFT JOIN {$t['sequences']} n ON n.scope_key = CONCAT(LEFT(s.scope_key, CHAR_LENGTH(s.scope_key) - %d), %s)
			WHERE s.scope_key LIKE %s" . ( $only_missing ? ' AND n.scope_key IS NULL' : '' ) . ' ORDER BY s.scope_key' . ( $limit > 0 ? ' LIMIT ' . (int) $limit : '' );
		$rows = $wpdb->get_results( $wpdb->prepare( $sql, strlen( $this_one ), $next, '%:' . $wpdb->esc_like( $this_one ) ) ); // phpcs:ignore WordPress.DB.PreparedSQL, WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- placeholders and an int. Our own tables, which no WordPress API reads or writes.
		$plan = 'continue' === counterfoil_missing_series_plan() ? 'continue' : 'create';
		$out  = array();
		foreach ( $rows as $row ) {
			$owner = Counterfoil_Rules::issuer_and_period( $row->scope_key );
			if ( null === $owner || array( $owner[1], $owner[2] ) !== $key ) {
				continue;
			}
			$out[] = array(
				'scope_key' => $owner[0] . ':' . $next,
				'from'      => $row->scope_key,
				'current'   => (int) $row->current_value,
				'exists'    => (bool) (int) $row->next_exists,
				'start'     => Counterfoil_Rules::start_for_new_series( $plan, counterfoil_new_series_start(), (int) $row->current_value ),
			);
		}
		return $out;
	}

	/**
	 * A period (a year, or [year, month or null]) as [its label, the next
	 * period's label, the period as [year, month or null]]; null when no
	 * period follows it (9999's last).
	 *
	 * @param int|array $period The period.
	 * @return array|null
	 */
	public static function labels( $period ) {
		$key = is_array( $period ) ? array( (int) $period[0], null === $period[1] ? null : (int) $period[1] ) : array( (int) $period, null );
		$nxt = Counterfoil_Rules::period_next( $key );
		if ( $nxt[0] > 9999 ) {
			return null;
		}
		return array( Counterfoil_Rules::period_label( $key ), Counterfoil_Rules::period_label( $nxt ), $key );
	}

	/**
	 * How many issuers have a series in $year, and how many of them have
	 * none for the next year (cached for 5 minutes: one pass over the series).
	 *
	 * @param int $year This year (local).
	 * @return int[] [with a series this year, missing next year's].
	 */
	public static function next_year_counts( $period ) {
		global $wpdb;
		$labels = self::labels( $period );
		if ( null === $labels ) {
			return array( 0, 0 );
		}
		$key    = self::counts_cache( $period );
		$cached = get_transient( $key );
		if ( is_array( $cached ) ) {
			return $cached;
		}
		$t      = Counterfoil_Schema::tables();
		$row    = $wpdb->get_row( // phpcs:ignore WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- our own table, which no WordPress API reads; the answer is kept in a transient (above).
			$wpdb->prepare(
				// phpcs:disable WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name from Counterfoil_Schema::tables() (the prefix and a fixed name).
				"SELECT COUNT(*) AS issuers, COALESCE(SUM(n.scope_key IS NULL), 0) AS missing
				 FROM {$t['sequences']} s LEFT JOIN {$t['sequences']} n ON n.scope_key = CONCAT(LEFT(s.scope_key, CHAR_LENGTH(s.scope_key) - %d), %s)
				 WHERE s.scope_key LIKE %s",
				// phpcs:enable WordPress.DB.PreparedSQL.InterpolatedNotPrepared
				strlen( $labels[0] ),
				$labels[1],
				'%:' . $wpdb->esc_like( $labels[0] )
			)
		);
		$counts = array( (int) $row->issuers, (int) $row->missing );
		set_transient( $key, $counts, 5 * MINUTE_IN_SECONDS );
		return $counts;
	}

	/** The transient holding next_year_counts() of $period. */
	public static function counts_cache( $period ) {
		$labels = self::labels( $period );
		return 'counterfoil_next_year_counts_' . ( null === $labels ? 'none' : $labels[0] );
	}

	/**
	 * Creates series with the given first numbers; an existing one is left
	 * as it is.
	 *
	 * @param array $starts Scope key => first number.
	 * @return array created (keys), existed (keys), failed (key => message).
	 */
	public static function create_series( array $starts ) {
		$out = array(
			'created' => array(),
			'existed' => array(),
			'failed'  => array(),
		);
		foreach ( $starts as $scope => $start ) {
			try {
				$created = counterfoil_backend()->initialize( (string) $scope, (int) $start );
				$out[ $created ? 'created' : 'existed' ][] = (string) $scope;
			} catch ( Throwable $e ) {
				$out['failed'][ (string) $scope ] = $e->getMessage();
			}
		}
		return $out;
	}

	/**
	 * The daily job: in the 31 days before the next year (calendar or fiscal)
	 * starts, under the `create` plan, creates next
	 * year's series for every issuer with a series this year.
	 *
	 * @return array|null What create_series() did, or null when it had nothing to do.
	 */
	public static function daily() {
		$year = counterfoil_current_period();
		if ( ! counterfoil_next_period_is_near() || 'create' !== counterfoil_missing_series_plan() ) {
			return null;
		}
		$starts = array();
		foreach ( self::next_year_proposals( $year, 0, true ) as $p ) {
			$starts[ $p['scope_key'] ] = $p['start'];
		}
		$done = self::create_series( $starts );
		delete_transient( self::counts_cache( $year ) );
		update_option( 'counterfoil_next_year_prepared', array( 'at' => time(), 'created' => count( $done['created'] ), 'failed' => count( $done['failed'] ) ), false );
		return $done;
	}

	/**
	 * Site Health tests (Tools → Site Health).
	 *
	 * @param array $tests Tests.
	 * @return array
	 */
	public static function site_status_tests( $tests ) {
		foreach ( array( 'durability', 'backend', 'webhook_secret', 'next_year', 'waiting_payments' ) as $name ) {
			$tests['direct'][ 'counterfoil_' . $name ] = array(
				/* translators: %s: what is checked */
				'label' => sprintf( __( 'Counterfoil: %s', 'counterfoil' ), str_replace( '_', ' ', $name ) ),
				'test'  => array( __CLASS__, 'test_' . $name ),
			);
		}
		return $tests;
	}

	/** One Site Health result. */
	private static function result( $test, $status, $label, $description, $action = '' ) {
		return array(
			'label'       => $label,
			'status'      => $status,
			'badge'       => array(
				'label' => __( 'Invoice numbers', 'counterfoil' ),
				'color' => 'good' === $status ? 'blue' : ( 'critical' === $status ? 'red' : 'orange' ),
			),
			'description' => '<p>' . esc_html( $description ) . '</p>',
			'actions'     => $action ? '<p><a href="' . esc_url( admin_url( 'options-general.php?page=' . Counterfoil_Admin::SLUG ) ) . '">' . esc_html( $action ) . '</a></p>' : '',
			'test'        => 'counterfoil_' . $test,
		);
	}

	public static function test_durability() {
		global $wpdb;
		$row     = $wpdb->get_row( "SHOW GLOBAL VARIABLES LIKE 'innodb_flush_log_at_trx_commit'", ARRAY_N ); // phpcs:ignore WordPress.DB.PreparedSQL, WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- no input. A server setting, read live.
		$setting = $row ? (string) $row[1] : '';
		if ( '1' === $setting ) {
			return self::result( 'durability', 'good', __( 'The database keeps every invoice number through a crash', 'counterfoil' ), __( 'innodb_flush_log_at_trx_commit = 1: every number handed out is on disk before it is answered.', 'counterfoil' ) );
		}
		if ( '2' === $setting ) {
			return self::result( 'durability', 'recommended', __( 'The database may lose invoice numbers in a power loss', 'counterfoil' ), __( 'innodb_flush_log_at_trx_commit = 2: numbers survive a database crash but not an operating system crash or power loss, after which numbers could be handed out twice. Set it to 1.', 'counterfoil' ) );
		}
		/* translators: %s: the setting's value */
		return self::result( 'durability', 'critical', __( 'The database can hand out invoice numbers twice after a crash', 'counterfoil' ), sprintf( __( 'innodb_flush_log_at_trx_commit = %s: a database crash can roll the counter back. Counterfoil refuses to number invoices on this server; set it to 1.', 'counterfoil' ), '' === $setting ? '?' : $setting ) );
	}

	public static function test_backend() {
		$error = counterfoil_backend_error();
		if ( null !== $error ) {
			/* translators: %s: the reason */
			return self::result( 'backend', 'critical', __( 'Counterfoil cannot number invoices', 'counterfoil' ), sprintf( __( 'The backend cannot be built: %s. Payment callbacks are answered 503 until this is fixed.', 'counterfoil' ), $error ) );
		}
		if ( extension_loaded( 'counterfoil' ) && counterfoil_needs_tls() ) {
			return self::result( 'backend', 'recommended', __( 'Invoice numbers come from the pure-PHP backend, because WordPress connects with TLS', 'counterfoil' ), __( 'The counterfoil extension is loaded but does not speak TLS (MYSQL_CLIENT_FLAGS asks for it), so the pure-PHP backend connects as WordPress does, encrypted. Nothing is lost but a little speed.', 'counterfoil' ) );
		}
		if ( 'extension' === counterfoil_backend()->name() ) {
			return self::result( 'backend', 'good', __( 'Invoice numbers come from the counterfoil PHP extension', 'counterfoil' ), __( 'The extension (Rust core) is loaded and keeps one database connection per PHP worker.', 'counterfoil' ) );
		}
		return self::result( 'backend', 'good', __( 'Invoice numbers come from the pure-PHP backend', 'counterfoil' ), __( 'The counterfoil extension is not loaded; the pure-PHP backend keeps the same rules and connects once per request. Loading the extension makes each payment callback a little faster.', 'counterfoil' ) );
	}

	public static function test_webhook_secret() {
		if ( strlen( Counterfoil_Rest::secret() ) >= 16 ) {
			return self::result( 'webhook_secret', 'good', __( 'The payment webhook has a secret', 'counterfoil' ), __( 'Payment callbacks must be signed with it; unsigned ones are refused.', 'counterfoil' ) );
		}
		return self::result( 'webhook_secret', 'critical', __( 'The payment webhook has no secret', 'counterfoil' ), __( 'Every payment callback is refused until a secret of at least 16 characters is set.', 'counterfoil' ), __( 'Generate a secret', 'counterfoil' ) );
	}

	public static function test_next_year() {
		$year = counterfoil_current_period();
		if ( ! counterfoil_next_period_is_near() ) {
			return self::result( 'next_year', 'good', __( "Next year's invoice series are checked in the last month of the year", 'counterfoil' ), __( 'In the 31 days before the next year starts (December, or the end of the fiscal year), this test lists the issuers whose series for the coming year does not exist yet.', 'counterfoil' ) );
		}
		$missing = self::next_year_counts( $year )[1];
		if ( 0 === $missing ) {
			return self::result( 'next_year', 'good', __( "Next year's invoice series exist", 'counterfoil' ), __( 'Every issuer with a series this year has one for next year.', 'counterfoil' ) );
		}
		$plan = counterfoil_missing_series_plan();
		if ( 'hold' === $plan ) {
			/* translators: %d: count */
			return self::result( 'next_year', 'critical', __( "Next year's invoice series are missing and payments will wait", 'counterfoil' ), sprintf( _n( '%d issuer has no series for next year. Under the "hold" setting, its payments after New Year will wait without a number until the series is created.', '%d issuers have no series for next year. Under the "hold" setting, their payments after New Year will wait without a number until the series are created.', $missing, 'counterfoil' ), $missing ), __( "Create next year's series", 'counterfoil' ) );
		}
		/* translators: %d: count */
		return self::result( 'next_year', 'recommended', __( "Some of next year's invoice series do not exist yet", 'counterfoil' ), sprintf( _n( '%d issuer has no series for next year yet. It will be created by its first payment (or by the daily job under "create"); review it on the settings page if you want another first number.', '%d issuers have no series for next year yet. They will be created by their first payment (or by the daily job under "create"); review them on the settings page if you want other first numbers.', $missing, 'counterfoil' ), $missing ), __( "Review next year's series", 'counterfoil' ) );
	}

	public static function test_waiting_payments() {
		$waiting = Counterfoil_Invoices::waiting_count();
		if ( 0 === $waiting ) {
			return self::result( 'waiting_payments', 'good', __( 'No payment waits for an invoice series', 'counterfoil' ), __( 'Every recorded payment has its invoice number.', 'counterfoil' ) );
		}
		/* translators: %d: count */
		return self::result( 'waiting_payments', 'critical', __( 'Payments are waiting for an invoice series', 'counterfoil' ), sprintf( _n( '%d payment is recorded without an invoice number because its series does not exist. Create the series, then complete the waiting payments.', '%d payments are recorded without an invoice number because their series do not exist. Create the series, then complete the waiting payments.', $waiting, 'counterfoil' ), $waiting ), __( 'Payments waiting for a series', 'counterfoil' ) );
	}
}
