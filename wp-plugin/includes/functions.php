<?php
/**
 * Public functions of the plugin.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

// phpcs:disable WordPress.Security.EscapeOutput.ExceptionNotEscaped -- an exception's message is text, not HTML: it goes to the log, a REST answer (JSON) or a WP_Error, and every page that prints one escapes it there.

/**
 * Activation: tables, the webhook secret, the settings — on this site, or on
 * every site of the network when activated network-wide. Running it again
 * changes nothing.
 *
 * @param bool $network_wide Network activation (multisite).
 */
function counterfoil_activate( $network_wide = false ) {
	if ( is_multisite() && $network_wide ) {
		foreach ( get_sites(
			array(
				'fields' => 'ids',
				'number' => 0,
			)
		) as $site_id ) {
			switch_to_blog( $site_id );
			counterfoil_activate_site();
			restore_current_blog();
		}
		return;
	}
	counterfoil_activate_site();
}

/** One site's tables, secret and settings. */
function counterfoil_activate_site() {
	Counterfoil_Schema::install();
	add_option( 'counterfoil_webhook_secret', wp_generate_password( 48, false ), '', false );
	add_option( 'counterfoil_format', Counterfoil_Rules::DEFAULT_FORMAT );
	add_option( 'counterfoil_delete_data_on_uninstall', 0 );
	add_option( 'counterfoil_missing_series', 'create' );
	add_option( 'counterfoil_new_series_start', 1 );
	Counterfoil_Series_Life::schedule();
}

/**
 * The site's local period now: [year, month] by the site's timezone
 * (Settings → General; wp_timezone()), never the server's UTC clock. The
 * period of a payment without an explicit year, and {month} of its number.
 *
 * @return int[] [year, month].
 */
function counterfoil_local_period() {
	return array_slice( counterfoil_local_day(), 0, 2 );
}

/**
 * The site's local day now: [year, month, day] (wp_timezone(), the
 * `counterfoil_now` filter's time).
 *
 * @return int[]
 */
function counterfoil_local_day() {
	/**
	 * The Unix time the plugin takes as "now" (tests move it).
	 *
	 * @param int $now time().
	 */
	$now = (int) apply_filters( 'counterfoil_now', time() );
	return counterfoil_local_day_at( $now );
}

/**
 * The site's local day at Unix time $time: [year, month, day] (wp_timezone()).
 *
 * @param int $time Unix time.
 * @return int[]
 */
function counterfoil_local_day_at( $time ) {
	$time = (int) $time;
	return array( (int) wp_date( 'Y', $time ), (int) wp_date( 'n', $time ), (int) wp_date( 'j', $time ) );
}

/**
 * The site's numbering period rule (option `counterfoil_period`):
 * `calendar-year` (default), `fiscal-year:MM-DD` or `month`, as
 * Counterfoil_Rules::period_rule() reads it. A rule that does not parse
 * counts as the calendar year.
 *
 * @return array [kind, month, day].
 */
function counterfoil_period_rule() {
	try {
		return Counterfoil_Rules::period_rule( get_option( 'counterfoil_period', 'calendar-year' ) );
	} catch ( InvalidArgumentException $e ) {
		return array( 'calendar-year', 1, 1 );
	}
}

/**
 * The numbering period of the site's local day now: [the year it starts in,
 * its month under the monthly rule or null] — the tail of a new payment's
 * series (`{issuer}:{year}` or `{issuer}:{yyyy-mm}`:
 * Counterfoil_Rules::period_label()).
 *
 * @return array
 */
function counterfoil_current_period() {
	$day = counterfoil_local_day();
	return Counterfoil_Rules::period_of( counterfoil_period_rule(), $day[0], $day[1], $day[2] );
}

/**
 * Whether the next numbering period starts within 31 days (December under
 * the calendar year): when next period's series are prepared and checked.
 *
 * @return bool
 */
function counterfoil_next_period_is_near() {
	$rule = counterfoil_period_rule();
	$day  = counterfoil_local_day();
	if ( 'month' === $rule[0] ) {
		return true; // The next month always starts within 31 days.
	}
	$start = counterfoil_current_period()[0] + 1;
	$next  = gmmktime( 0, 0, 0, $rule[1], $rule[2], $start );
	$today = gmmktime( 0, 0, 0, $day[1], $day[2], $day[0] );
	return ( $next - $today ) <= 31 * DAY_IN_SECONDS;
}

/**
 * What happens to a payment whose series does not exist (option
 * counterfoil_missing_series): create (default), continue or hold.
 *
 * @return string
 */
function counterfoil_missing_series_plan() {
	$plan = get_option( 'counterfoil_missing_series', 'create' );
	return in_array( $plan, Counterfoil_Rules::PLANS, true ) ? $plan : 'create';
}

/**
 * The first number of a series created by the plan (option
 * counterfoil_new_series_start, default 1); under continue, when the issuer
 * has no earlier year.
 *
 * @return int
 */
function counterfoil_new_series_start() {
	$start = (int) get_option( 'counterfoil_new_series_start', 1 );
	return $start >= 1 ? $start : 1;
}

/**
 * Multisite: a site created while the plugin is network-active gets its
 * tables and secret at once.
 *
 * @param WP_Site $site The new site.
 */
function counterfoil_initialize_site( $site ) {
	$active = (array) get_site_option( 'active_sitewide_plugins', array() );
	if ( ! isset( $active[ plugin_basename( COUNTERFOIL_FILE ) ] ) ) {
		return;
	}
	switch_to_blog( (int) $site->blog_id );
	counterfoil_activate_site();
	restore_current_blog();
}

/**
 * Multisite: a deleted site's Counterfoil tables go with its other tables,
 * every one of the schema's list (Counterfoil_Schema::droppable(): a
 * sequences table that was there before the plugin, adopted, stays).
 *
 * @param string[] $tables  Tables WordPress drops.
 * @param int      $site_id The site (switched to by WordPress).
 * @return string[]
 */
function counterfoil_drop_site_tables( $tables, $site_id ) {
	global $wpdb;
	$preexisting = 1 === (int) get_blog_option( $site_id, 'counterfoil_sequences_preexisting', 1 );
	return array_merge( (array) $tables, Counterfoil_Schema::droppable( $wpdb->get_blog_prefix( $site_id ), $preexisting ) );
}

/** Deactivation: the daily job stops; every option and table stays. */
function counterfoil_deactivate() {
	wp_clear_scheduled_hook( Counterfoil_Series_Life::CRON_HOOK );
}

function counterfoil_load_textdomain() {
	load_plugin_textdomain( 'counterfoil', false, dirname( plugin_basename( COUNTERFOIL_FILE ) ) . '/languages' );
}

/** The site's number format. */
function counterfoil_format() {
	$format = (string) get_option( 'counterfoil_format', Counterfoil_Rules::DEFAULT_FORMAT );
	return null === Counterfoil_Rules::format_error( $format ) ? $format : Counterfoil_Rules::DEFAULT_FORMAT;
}

/**
 * The credit notes' number template: the `counterfoil_credit_note_format`
 * option when it parses, else CN-{year}-{seq:04}.
 *
 * @return string
 */
function counterfoil_credit_note_format() {
	$format = (string) get_option( 'counterfoil_credit_note_format', Counterfoil_Rules::CREDIT_NOTE_TEMPLATE );
	return null === Counterfoil_Rules::format_error( $format ) ? $format : Counterfoil_Rules::CREDIT_NOTE_TEMPLATE;
}

/**
 * The database hosts the plugin's own connection may use, in order of
 * preference: COUNTERFOIL_DB_NODES (an array of DB_HOST-style hosts, for a
 * Galera cluster) or DB_HOST.
 *
 * @return string[]
 */
function counterfoil_db_nodes() {
	if ( defined( 'COUNTERFOIL_DB_NODES' ) && is_array( COUNTERFOIL_DB_NODES ) && COUNTERFOIL_DB_NODES ) {
		return array_values( array_map( 'strval', COUNTERFOIL_DB_NODES ) );
	}
	return array( (string) DB_HOST );
}

/**
 * Whether the site names the database servers that hold its numbers
 * (COUNTERFOIL_DB_NODES, even of one node): then its books are written
 * there, on a connection of their own, not on $wpdb's DB_HOST.
 *
 * @return bool
 */
function counterfoil_books_elsewhere() {
	return defined( 'COUNTERFOIL_DB_NODES' ) && is_array( COUNTERFOIL_DB_NODES ) && COUNTERFOIL_DB_NODES;
}

/**
 * The host the site's books are written on (DB_HOST's forms): with a node
 * list (COUNTERFOIL_DB_NODES), the node the backend writes numbers to
 * (Counterfoil_Backend::writer_host()), so that voids, refund rows,
 * credit-note links, frozen e-invoice inputs and the like never go to a
 * second node of a Galera cluster; else $wpdb's own host.
 *
 * @return string
 * @throws RuntimeException When the writer cannot be reached or named.
 */
function counterfoil_books_host() {
	global $wpdb;
	if ( ! counterfoil_books_elsewhere() ) {
		return (string) $wpdb->dbhost;
	}
	try {
		$host = counterfoil_backend()->writer_host();
	} catch ( Throwable $e ) {
		throw new RuntimeException( 'the node that holds the numbers cannot be reached: ' . $e->getMessage(), 0, $e );
	}
	if ( null === $host ) {
		throw new RuntimeException( 'the node that holds the numbers cannot be named (a node list in php.ini): set COUNTERFOIL_DB_NODES in wp-config.php' );
	}
	return $host;
}

/**
 * Whether a node list of independent servers is accepted
 * (COUNTERFOIL_UNSAFE_ALLOW_INDEPENDENT_NODES defined true). Only for
 * failover tests between throw-away servers: in production two servers in
 * one list are two counters, and failing over between them hands the same
 * numbers out again (docs/design.md §9).
 *
 * @return bool
 */
function counterfoil_allow_independent_nodes() {
	return defined( 'COUNTERFOIL_UNSAFE_ALLOW_INDEPENDENT_NODES' ) && COUNTERFOIL_UNSAFE_ALLOW_INDEPENDENT_NODES;
}

/**
 * Whether WordPress connects with TLS (MYSQL_CLIENT_FLAGS has
 * MYSQLI_CLIENT_SSL): the plugin's connection must too.
 *
 * @return bool
 */
function counterfoil_needs_tls() {
	return defined( 'MYSQL_CLIENT_FLAGS' ) && ( (int) MYSQL_CLIENT_FLAGS & MYSQLI_CLIENT_SSL );
}

/**
 * The active backend: the counterfoil extension when it is loaded (unless
 * COUNTERFOIL_FORCE_PHP_BACKEND is true, or WordPress connects with TLS,
 * which the extension does not speak: then the pure-PHP backend connects as
 * WordPress does), else pure PHP.
 *
 * @return Counterfoil_Backend
 */
function counterfoil_backend() {
	static $backend = null;
	static $key     = null;
	global $wpdb;
	$format = counterfoil_format();
	$now    = $wpdb->prefix . '|' . $format;
	if ( null === $backend || $key !== $now ) {
		$backend = null;
		$force   = ( defined( 'COUNTERFOIL_FORCE_PHP_BACKEND' ) && COUNTERFOIL_FORCE_PHP_BACKEND ) || counterfoil_needs_tls();
		$backend = ( extension_loaded( 'counterfoil' ) && ! $force )
			? new Counterfoil_Extension_Backend( $wpdb->prefix, $format )
			: new Counterfoil_Php_Backend( $wpdb->prefix, $format );
		$key     = $now;
	}
	return $backend;
}

/**
 * plugins_loaded: builds the backend; a failure is remembered for the admin
 * notice and the webhook's 503, and never takes the site down.
 */
function counterfoil_boot_backend() {
	counterfoil_backend_error();
}

/**
 * Why the backend cannot be built, or null when it can.
 *
 * @return string|null
 */
function counterfoil_backend_error() {
	try {
		counterfoil_backend();
		return null;
	} catch ( Throwable $e ) {
		Counterfoil_Log::once( 'backend:' . get_class( $e ), $e->getMessage() );
		return $e->getMessage();
	}
}

/**
 * switch_blog: the extension's settings are its process's, so its own
 * functions (allocate_invoice_number()) would go on numbering in the site
 * the request began with; the backend of the site switched to configures
 * them again (its table prefix, format and nodes), as the request's first
 * site did at plugins_loaded.
 */
function counterfoil_follow_site() {
	if ( extension_loaded( 'counterfoil' ) && did_action( 'plugins_loaded' ) ) {
		counterfoil_backend_error();
	}
}

/**
 * admin_notices: the backend cannot be built (to those who manage the site).
 * The reason (the database's words: host, user, database name) is shown to
 * those who manage the server's settings only (a super admin on a network,
 * an administrator of a single site); a site's own admin on a network sees
 * that it failed and a request id, the detail being in the server's log.
 */
function counterfoil_backend_notice() {
	if ( ! current_user_can( 'manage_options' ) ) {
		return;
	}
	if ( file_exists( WP_CONTENT_DIR . '/db.php' ) ) {
		echo '<div class="notice notice-warning" id="counterfoil-db-dropin"><p>' . esc_html__( 'A database drop-in (wp-content/db.php) is active. Counterfoil numbers invoices on its own connection to DB_HOST (or COUNTERFOIL_DB_NODES) while WordPress writes the invoice posts through the drop-in: make sure both reach the same database, or the registry and the invoices can part ways.', 'counterfoil' ) . '</p></div>';
	}
	$error = counterfoil_backend_error();
	if ( null !== $error ) {
		if ( ! is_super_admin() ) {
			$error = sprintf(
				/* translators: %s: a request id */
				__( 'the database could not be reached (request %s; the network\'s administrator finds the reason in the server log)', 'counterfoil' ),
				Counterfoil_Log::request_id()
			);
			error_log( sprintf( 'counterfoil [%s]: the backend cannot be built: %s', Counterfoil_Log::request_id(), counterfoil_backend_error() ) ); // phpcs:ignore WordPress.PHP.DevelopmentFunctions.error_log_error_log -- the detail kept from the page goes to the log.
		}
		/* translators: %s: the reason */
		echo '<div class="notice notice-error" id="counterfoil-backend-error"><p>' . esc_html( sprintf( __( 'Counterfoil cannot number invoices: %s. Payment callbacks are answered 503 (the gateway delivers them again) until this is fixed.', 'counterfoil' ), $error ) ) . '</p></div>';
	}
}

/**
 * Creates the invoice of a payment, once per (gateway, transaction id).
 *
 * @param array $payment gateway, transaction_id, user_id; optional year
 *                       (default this year by the site's clock), amount
 *                       ("19.99"), currency ("EUR").
 * @return WP_Post|WP_Error The invoice post (the same one for a repeated
 *                          delivery), or an error with an HTTP status in its data.
 */
function counterfoil_create_invoice_for_payment( $payment ) {
	$result = Counterfoil_Invoices::for_payment( $payment );
	return is_wp_error( $result ) ? $result : $result['post'];
}

/**
 * Issues the credit note of a refund, once per (gateway, refund id).
 *
 * @param array $refund gateway, refund_id; the invoice as transaction_id (of
 *                      the payment it was issued for) or invoice_id (its
 *                      post); optional amount ("5.00", default everything
 *                      left to credit), currency (the invoice's), reason.
 * @return WP_Post|WP_Error The credit note's post (the same one for a
 *                          repeated refund), or an error with an HTTP status
 *                          in its data (409: more than what is left).
 */
function counterfoil_create_credit_note_for_refund( $refund ) {
	$result = Counterfoil_Credit_Notes::for_refund( $refund );
	return is_wp_error( $result ) ? $result : $result['post'];
}

/**
 * The e-invoice of an invoice or credit note: UBL 2.1 (Peppol BIS 3.0 when
 * both parties are Peppol participants, else plain EN 16931),
 * UN/CEFACT CII (EN 16931) or the Factur-X PDF (with the extension), the
 * same bytes as the core writes, from the input frozen when its first
 * document was made. The seller comes from Settings → Invoice numbers
 * (filter `counterfoil_seller`), the buyer and the lines from the payment
 * and the filter `counterfoil_document_input`.
 *
 * @param int|WP_Post $invoice The invoice or credit note.
 * @param string      $format  `ubl`, `cii` or `pdf`.
 * @return string|WP_Error The document, or why not: 404 not an invoice of
 *                         this site, 400 an unknown format, 501 the PDF
 *                         without the extension, 422 naming the missing
 *                         EN 16931 business term in its data's `term`, 503
 *                         when its input could not be kept (frozen).
 */
function counterfoil_invoice_document( $invoice, $format ) {
	return Counterfoil_Documents::document( $invoice, $format );
}

/**
 * Marks a number void, with a reason.
 *
 * @param string $scope_key Series.
 * @param int    $number    Number.
 * @param string $reason    Why.
 * @return true|WP_Error
 */
function counterfoil_void_number( $scope_key, $number, $reason ) {
	return Counterfoil_Invoices::void_number( $scope_key, $number, $reason );
}

if ( ! function_exists( 'initialize_invoice_sequence' ) ) {
	/**
	 * The article's function, on the pure-PHP backend (the extension defines
	 * it when loaded). Arguments are ints, strictly, as with the extension.
	 *
	 * @param int $user_id         User.
	 * @param int $year            Year (1–9999).
	 * @param int $starting_number First number (1 or more).
	 * @return bool True when created, false when the series exists.
	 */
	function initialize_invoice_sequence( $user_id, $year, $starting_number ) { // phpcs:ignore WordPress.NamingConventions.PrefixAllGlobals.NonPrefixedFunctionFound -- the article's function, by its name (the extension defines it too; this one only when it does not).
		counterfoil_require_ints( __FUNCTION__, compact( 'user_id', 'year', 'starting_number' ) );
		return counterfoil_backend()->initialize( Counterfoil_Rules::user_year_scope( $user_id, $year ), $starting_number );
	}
}

if ( ! function_exists( 'allocate_invoice_number' ) ) {
	/**
	 * The article's function, on the pure-PHP backend: the next number of the
	 * user's series for the year, recorded in the registry, rendered.
	 *
	 * @param int $user_id User.
	 * @param int $year    Year (1–9999).
	 * @return string E.g. "2019-0002".
	 */
	function allocate_invoice_number( $user_id, $year ) { // phpcs:ignore WordPress.NamingConventions.PrefixAllGlobals.NonPrefixedFunctionFound -- the article's function, as above.
		counterfoil_require_ints( __FUNCTION__, compact( 'user_id', 'year' ) );
		$paused = Counterfoil_Site_Identity::paused_reason();
		if ( null !== $paused ) {
			// A copy of the site: no number of any series is taken here (the
			// extension's function says the same: its option `paused`).
			throw new Counterfoil\DatabaseUnavailableException( 'refused: numbering is paused: ' . $paused );
		}
		$backend = counterfoil_backend();
		$number  = $backend->allocate_recorded( Counterfoil_Rules::user_year_scope( $user_id, $year ), 'api' );
		return $backend->format( $number, $year, counterfoil_local_period()[1] );
	}
}

/**
 * TypeError for a non-int argument, as the extension does.
 *
 * @param string $function Function name.
 * @param array  $args     Arguments by name.
 */
function counterfoil_require_ints( $function, array $args ) {
	foreach ( $args as $name => $value ) {
		if ( ! is_int( $value ) ) {
			throw new TypeError( sprintf( '%s(): Argument $%s must be of type int, %s given', $function, $name, get_debug_type( $value ) ) );
		}
	}
}
