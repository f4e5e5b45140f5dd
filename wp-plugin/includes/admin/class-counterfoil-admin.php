<?php
/**
 * Settings → Invoice numbers: series (next number, issued count), create a
 * series, advance a series (never lower), the number format, the webhook
 * secret, and the uninstall choice. Every form: capability manage_options
 * plus a nonce; every input validated; every output escaped.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * Admin page.
 */
final class Counterfoil_Admin {
	const SLUG       = 'counterfoil';
	/**
	 * The options the plugin keeps that no class constant names, and what
	 * each holds (docs/reference.md is generated from the code: an option
	 * without a description fails `scripts/make-reference --check`).
	 */
	const OPTIONS = array(
		'counterfoil_format'                   => 'The invoice number format (default {year}-{seq:04}; tokens {year}, {yy}, {month}, {fy}, {fy_end}, {seq:0N}).',
		'counterfoil_credit_note_format'       => 'The credit notes\' number format (default CN-{year}-{seq:04}).',
		'counterfoil_period'                   => 'The numbering period: calendar-year (default), fiscal-year:MM-DD or month.',
		'counterfoil_missing_series'           => 'What a payment whose series does not exist gets: create (default), continue (after the issuer\'s previous period) or hold (it waits until the series is created).',
		'counterfoil_new_series_start'         => 'The first number of a series the plan creates (default 1).',
		'counterfoil_delete_data_on_uninstall' => '1 to delete every invoice, number and payment when the plugin is uninstalled (default: kept).',
		'counterfoil_webhook_secret'           => 'The payment webhook\'s HMAC secret (unless COUNTERFOIL_WEBHOOK_SECRET defines it); shown on request only, deleted on uninstall.',
		'counterfoil_next_year_prepared'       => 'The period whose series the daily job last prepared ahead.',
		'counterfoil_sequences_preexisting'    => 'Set when the series table existed before the plugin (an adopted site): uninstall keeps it.',
		'counterfoil_vat_categories'           => 'The VAT category (and VATEX code and exemption text) of WooCommerce tax rates and classes on e-invoices: "rate:<id>" or "class:<slug>" => [category, code, text].',
	);
	const CAPABILITY = 'manage_options';
	/** Next year's series listed for review (the rest: one checkbox). */
	const NEXT_YEAR_ROWS = 20;

	/** Hooks. */
	public static function init() {
		add_action( 'admin_menu', array( __CLASS__, 'menu' ) );
		add_action( 'admin_enqueue_scripts', array( __CLASS__, 'enqueue' ) );
		add_filter( 'script_loader_tag', array( __CLASS__, 'module_tag' ), 10, 3 );
		foreach ( array( 'create_series', 'advance_series', 'save_settings', 'void_number', 'create_next_year', 'complete_waiting' ) as $action ) {
			add_action( 'admin_post_counterfoil_' . $action, array( __CLASS__, 'handle_' . $action ) );
		}
		add_action( 'wp_ajax_' . self::REVEAL_ACTION, array( __CLASS__, 'reveal_secret' ) );
	}

	/** The admin-ajax action that reveals the webhook secret, and its nonce's action. */
	const REVEAL_ACTION = 'counterfoil_reveal_secret';

	/**
	 * The webhook secret, on request (the settings page's "Show"): never in
	 * the page's HTML, where a cached copy, a screenshot of the source or a
	 * browser extension reading the DOM would keep it. Capability and nonce
	 * as every form; not cached; a secret from the constant is never shown.
	 */
	public static function reveal_secret() {
		if ( ! current_user_can( self::CAPABILITY ) || ! check_ajax_referer( self::REVEAL_ACTION, '_wpnonce', false ) ) {
			wp_send_json_error( array( 'message' => __( 'The page has expired, or you are not allowed to see the secret. Reload the page and try again.', 'counterfoil' ) ), 403 );
		}
		if ( Counterfoil_Rest::secret_from_constant() ) {
			wp_send_json_error( array( 'message' => __( 'The secret is set by the COUNTERFOIL_WEBHOOK_SECRET constant in wp-config.php and is not shown here.', 'counterfoil' ) ), 403 );
		}
		nocache_headers();
		wp_send_json_success( array( 'secret' => Counterfoil_Rest::secret() ) );
	}

	/** @var string[] The hook suffixes of the plugin's own admin pages. */
	private static $pages = array();

	public static function menu() {
		self::$pages[] = add_options_page(
			__( 'Invoice numbers', 'counterfoil' ),
			__( 'Invoice numbers', 'counterfoil' ),
			self::CAPABILITY,
			self::SLUG,
			array( __CLASS__, 'render' )
		);
		self::$pages[] = add_management_page(
			__( 'AWB check', 'counterfoil' ),
			__( 'AWB check', 'counterfoil' ),
			self::CAPABILITY,
			'counterfoil-awb',
			array( __CLASS__, 'render_awb_check' )
		);
	}

	/**
	 * The live checks, on the plugin's own pages only: counterfoil-admin.js
	 * (a module) with the Rust core as WebAssembly (assets/counterfoil.wasm,
	 * built from core/ by the project's scripts) and its stylesheet.
	 *
	 * @param string $hook The page's hook suffix.
	 */
	public static function enqueue( $hook ) {
		if ( ! in_array( $hook, self::$pages, true ) ) {
			return;
		}
		wp_enqueue_style( 'counterfoil-admin', plugins_url( 'assets/counterfoil-admin.css', COUNTERFOIL_FILE ), array(), COUNTERFOIL_VERSION );
		wp_enqueue_script( 'counterfoil-admin', plugins_url( 'assets/counterfoil-admin.js', COUNTERFOIL_FILE ), array(), COUNTERFOIL_VERSION, true );
	}

	/**
	 * counterfoil-admin.js is an ES module (it imports the wasm loader).
	 *
	 * @param string $tag    The script tag.
	 * @param string $handle Its handle.
	 * @param string $src    Its URL.
	 * @return string
	 */
	public static function module_tag( $tag, $handle, $src ) {
		if ( 'counterfoil-admin' !== $handle ) {
			return $tag;
		}
		return '<script type="module" src="' . esc_url( $src ) . '" id="counterfoil-admin-js"></script>' . "\n"; // phpcs:ignore WordPress.WP.EnqueuedResources.NonEnqueuedScript -- the enqueued script's own tag (script_loader_tag), made a module: wp_enqueue_script_module() needs WordPress 6.5.
	}

	/**
	 * The live checks' sentences, translated, for the script to read from a
	 * data attribute (no inline script). Placeholders as in sprintf.
	 */
	private static function live_checks() {
		$strings = array(
			'continues'    => /* translators: 1: series, 2: rendered number */ __( 'Series %1$s continues with %2$s', 'counterfoil' ),
			'first'        => /* translators: %s: rendered number */ __( 'The first number will read %s', 'counterfoil' ),
			'willContinue' => /* translators: 1: series, 2: next number */ __( 'Series %1$s will continue at %2$s.', 'counterfoil' ),
			'refused'      => /* translators: 1: series, 2: requested number, 3: next number */ __( 'Refused: series %1$s cannot go back to %2$s; its next number is already %3$s. To start again lower, create a new series.', 'counterfoil' ),
			'awbValid'     => /* translators: 1: canonical number, 2: check digit */ __( 'Valid: %1$s (check digit %2$s)', 'counterfoil' ),
			'awbCheck'     => /* translators: 1: expected digit, 2: given digit, 3: explanation */ __( 'Invalid: the check digit should be %1$s, not %2$s. %3$s', 'counterfoil' ),
			'awbInvalid'   => /* translators: %s: explanation */ __( 'Invalid: %s', 'counterfoil' ),
		);
		echo '<div id="counterfoil-i18n" hidden data-strings="' . esc_attr( wp_json_encode( $strings ) ) . '"></div>';
	}

	/** Tools → AWB check: checks an air waybill number as it is typed. */
	public static function render_awb_check() {
		if ( ! current_user_can( self::CAPABILITY ) ) {
			wp_die( esc_html__( 'You are not allowed to see this page.', 'counterfoil' ), 403 );
		}
		?>
		<div class="wrap">
			<h1><?php esc_html_e( 'AWB check', 'counterfoil' ); ?></h1>
			<p><?php esc_html_e( 'Type an air waybill number (157-40121012, 157-4012 1012 or 15740121012): it is checked as you type, in your browser.', 'counterfoil' ); ?></p>
			<p><input type="text" id="counterfoil-awb-input" class="regular-text" autocomplete="off" placeholder="157-40121012"></p>
			<p id="counterfoil-awb-result" aria-live="polite"></p>
		</div>
		<?php
		self::live_checks();
	}

	/** Refuses without the capability and a valid nonce for `counterfoil_{$action}` (403). */
	public static function guard( $action ) {
		if ( ! current_user_can( self::CAPABILITY ) ) {
			wp_die( esc_html__( 'You are not allowed to change invoice numbers.', 'counterfoil' ), 403 );
		}
		if ( ! isset( $_POST['_wpnonce'] ) || ! wp_verify_nonce( sanitize_text_field( wp_unslash( $_POST['_wpnonce'] ) ), 'counterfoil_' . $action ) ) {
			wp_die( esc_html__( 'The form has expired or was not sent from this site. Reload the page and try again.', 'counterfoil' ), 403 );
		}
	}

	/** Redirects back with a notice. */
	private static function back( $type, $message ) {
		set_transient( 'counterfoil_notice_' . get_current_user_id(), array( $type, $message ), 60 );
		wp_safe_redirect( admin_url( 'options-general.php?page=' . self::SLUG ) );
		exit;
	}

	/** A whole number from a POST field, or null. */
	private static function int_field( $name, $min, $max ) {
		if ( ! isset( $_POST[ $name ] ) ) { // phpcs:ignore WordPress.Security.NonceVerification -- checked in guard().
			return null;
		}
		try {
			// The core's rule for a typed number (the admin page's live check uses the same, through WebAssembly).
			$value = Counterfoil_Rules::parse_typed_number( $name, wp_unslash( $_POST[ $name ] ) ); // phpcs:ignore WordPress.Security.NonceVerification,WordPress.Security.ValidatedSanitizedInput.InputNotSanitized -- validated: digits only.
		} catch ( Counterfoil\InvalidArgumentException $e ) {
			return null;
		}
		return ( $value < $min || $value > $max ) ? null : $value;
	}

	/**
	 * The posted scope key as typed: the core's scope key rule judges it
	 * (control characters, surrounding whitespace, length), as the admin
	 * page's live check does; trimming it here would accept what the check
	 * refused.
	 *
	 * @return string
	 */
	private static function scope_field() {
		return isset( $_POST['scope_key'] ) ? (string) wp_unslash( $_POST['scope_key'] ) : ''; // phpcs:ignore WordPress.Security.NonceVerification,WordPress.Security.ValidatedSanitizedInput.InputNotSanitized -- checked in guard(); validated by the scope key rule in the backend, bound as a parameter, escaped on output.
	}

	public static function handle_create_series() {
		self::guard( 'create_series' );
		$user  = self::int_field( 'user_id', 0, PHP_INT_MAX );
		$year  = self::int_field( 'year', 1, 9999 );
		$start = self::int_field( 'start', 1, PHP_INT_MAX );
		if ( null === $user || null === $year || null === $start ) {
			self::back( 'error', __( 'Give a user id (0 or more), a year (1–9999) and a starting number (1 or more).', 'counterfoil' ) );
		}
		$scope = $user . ':' . $year;
		try {
			$created = counterfoil_backend()->initialize( $scope, $start );
		} catch ( Throwable $e ) {
			self::back( 'error', $e->getMessage() );
		}
		if ( $created ) {
			/* translators: 1: scope, 2: number */
			self::back( 'success', sprintf( __( 'Series %1$s created: its first number is %2$d.', 'counterfoil' ), $scope, $start ) );
		}
		/* translators: %s: scope */
		self::back( 'error', sprintf( __( 'Series %s already exists and was left unchanged. To change where it continues, advance it.', 'counterfoil' ), $scope ) );
	}

	public static function handle_advance_series() {
		self::guard( 'advance_series' );
		$scope = self::scope_field();
		$next  = self::int_field( 'next', 1, PHP_INT_MAX );
		if ( '' === $scope || null === $next ) {
			self::back( 'error', __( 'Choose a series and give the next number (1 or more).', 'counterfoil' ) );
		}
		try {
			$backend = counterfoil_backend();
			$moved   = $backend->advance( $scope, $next );
			$current = $backend->current( $scope );
		} catch ( Throwable $e ) {
			self::back( 'error', $e->getMessage() );
		}
		if ( $moved ) {
			/* translators: 1: scope, 2: number */
			self::back( 'success', sprintf( __( 'Series %1$s: the next number is now %2$d.', 'counterfoil' ), $scope, $next ) );
		}
		self::back(
			'error',
			/* translators: 1: scope, 2: requested next number, 3: current next number */
			sprintf( __( 'Refused: series %1$s cannot go back to %2$d — its next number is already %3$d. Numbers only move up, so none is ever issued twice. To start again lower, create a new series.', 'counterfoil' ), $scope, $next, $current + 1 )
		);
	}

	public static function handle_save_settings() {
		self::guard( 'save_settings' );
		// phpcs:disable WordPress.Security.NonceVerification.Missing -- checked in guard() above.
		// As typed: the core's format rule decides (the live preview shows the
		// same text); sanitize_text_field would collapse spaces the preview showed.
		$format = isset( $_POST['format'] ) ? (string) wp_unslash( $_POST['format'] ) : ''; // phpcs:ignore WordPress.Security.ValidatedSanitizedInput.InputNotSanitized -- validated by format_error() below (no control characters), stored as an option, escaped on output.
		$error  = Counterfoil_Rules::format_error( $format );
		if ( null !== $error ) {
			/* translators: 1: problem, 2: byte offset */
			self::back( 'error', sprintf( __( 'The number format was not saved: %1$s (at character %2$d).', 'counterfoil' ), $error[2], $error[1] + 1 ) );
		}
		$plan  = isset( $_POST['missing_series'] ) ? sanitize_key( wp_unslash( $_POST['missing_series'] ) ) : '';
		$start = self::int_field( 'new_series_start', 1, PHP_INT_MAX );
		if ( ! in_array( $plan, Counterfoil_Rules::PLANS, true ) || null === $start ) {
			self::back( 'error', __( 'The settings were not saved: choose what happens when a series is missing, and give a first number of 1 or more for new series.', 'counterfoil' ) );
		}
		$period = self::period_field();
		if ( is_string( $period ) && ! is_array( $period ) ) {
			self::back( 'error', $period );
		}
		if ( null !== $period ) {
			update_option( 'counterfoil_period', Counterfoil_Rules::period_rule_text( $period ) );
		}
		update_option( 'counterfoil_missing_series', $plan );
		update_option( 'counterfoil_new_series_start', $start );
		update_option( 'counterfoil_format', $format );
		update_option( 'counterfoil_delete_data_on_uninstall', ! empty( $_POST['delete_data_on_uninstall'] ) ? 1 : 0 );
		update_option( Counterfoil_Rest::REFUSE_LEGACY_OPTION, ! empty( $_POST['webhook_refuse_legacy_signature'] ) ? 1 : 0 );
		if ( ! empty( $_POST['regenerate_secret'] ) && ! Counterfoil_Rest::secret_from_constant() ) {
			update_option( 'counterfoil_webhook_secret', wp_generate_password( 48, false ), false );
		}
		if ( isset( $_POST['credit_note_format'] ) ) {
			$cn_format = (string) wp_unslash( $_POST['credit_note_format'] ); // phpcs:ignore WordPress.Security.ValidatedSanitizedInput.InputNotSanitized -- validated by format_error(), escaped on output.
			$error     = Counterfoil_Rules::format_error( $cn_format );
			if ( null !== $error ) {
				/* translators: 1: problem, 2: byte offset */
				self::back( 'error', sprintf( __( 'The credit note format was not saved: %1$s (at character %2$d).', 'counterfoil' ), $error[2], $error[1] + 1 ) );
			}
			update_option( 'counterfoil_credit_note_format', $cn_format );
		}
		// phpcs:enable WordPress.Security.NonceVerification.Missing
		$stripe = self::save_stripe_settings();
		if ( null !== $stripe ) {
			self::back( 'error', $stripe );
		}
		$seller = Counterfoil_Documents::save_settings();
		if ( null !== $seller ) {
			self::back( 'error', $seller );
		}
		$vat = Counterfoil_Vat_Categories::save_settings();
		if ( null !== $vat ) {
			self::back( 'error', $vat );
		}
		$woocommerce = Counterfoil_WooCommerce::active() ? Counterfoil_WooCommerce_Backfill::save_settings() : null;
		if ( null !== $woocommerce ) {
			self::back( 'error', $woocommerce );
		}
		self::back( 'success', __( 'Settings saved.', 'counterfoil' ) );
	}

	/**
	 * The numbering year from the settings form: null when the form leaves it
	 * out or keeps it; the new rule; or why nothing may be saved. A rule that
	 * moves today into another year is saved only once the admin has seen
	 * what it does (the form's `period_confirm`, sent after this message):
	 * from now on payments go to the other year's series; numbers already
	 * issued are never renumbered.
	 *
	 * @return array|string|null
	 */
	private static function period_field() {
		// phpcs:disable WordPress.Security.NonceVerification -- checked in guard().
		if ( ! isset( $_POST['period_kind'] ) ) {
			return null;
		}
		$kind = sanitize_key( wp_unslash( $_POST['period_kind'] ) );
		$day  = isset( $_POST['period_start'] ) ? trim( sanitize_text_field( wp_unslash( $_POST['period_start'] ) ) ) : '';
		$ok   = ! empty( $_POST['period_confirm'] );
		// phpcs:enable
		try {
			$rule = Counterfoil_Rules::period_rule( 'fiscal-year' === $kind ? 'fiscal-year:' . $day : ( 'month' === $kind ? 'month' : 'calendar-year' ) );
		} catch ( InvalidArgumentException $e ) {
			return __( 'The settings were not saved: a fiscal year starts on a day every year has, written MM-DD (04-01, 07-01, 04-06).', 'counterfoil' );
		}
		$old = counterfoil_period_rule();
		if ( $rule === $old ) {
			return null;
		}
		$local = counterfoil_local_day();
		$then  = Counterfoil_Rules::period_label( counterfoil_current_period() );
		$now   = Counterfoil_Rules::period_label( Counterfoil_Rules::period_of( $rule, $local[0], $local[1], $local[2] ) );
		if ( $now !== $then && ! $ok ) {
			/* translators: 1: the period now, 2: the period after the change (a year, or a month as yyyy-mm), 3: the rule */
			return sprintf( __( 'Nothing was saved. With %3$s, today belongs to the period %2$s instead of %1$s: from the moment you save, payments go to the issuers\' %2$s series (…:%2$s), which the missing-series setting creates or continues; the %1$s series keep every number they issued, and nothing is renumbered. Tick "I have read what changes" and save again to go ahead.', 'counterfoil' ), $then, $now, Counterfoil_Rules::period_rule_text( $rule ) );
		}
		return $rule;
	}

	/**
	 * The Stripe part of the settings form: a new signing secret (blank keeps
	 * the current one; never shown back), clearing it, the default issuer.
	 *
	 * @return string|null Why nothing was saved, or null.
	 */
	private static function save_stripe_settings() {
		// phpcs:disable WordPress.Security.NonceVerification -- checked in guard().
		$secret = isset( $_POST['stripe_secret'] ) ? trim( (string) wp_unslash( $_POST['stripe_secret'] ) ) : ''; // phpcs:ignore WordPress.Security.ValidatedSanitizedInput.InputNotSanitized -- validated by is_secret(): whsec_ and letters/digits only.
		$test   = isset( $_POST['stripe_test_secret'] ) ? trim( (string) wp_unslash( $_POST['stripe_test_secret'] ) ) : ''; // phpcs:ignore WordPress.Security.ValidatedSanitizedInput.InputNotSanitized -- validated by is_secret().
		$clear_test = ! empty( $_POST['stripe_clear_test_secret'] );
		$issuer = isset( $_POST['stripe_default_issuer'] ) ? trim( (string) wp_unslash( $_POST['stripe_default_issuer'] ) ) : ''; // phpcs:ignore WordPress.Security.ValidatedSanitizedInput.InputNotSanitized -- digits only, checked below.
		$clear  = ! empty( $_POST['stripe_clear_secret'] );
		// phpcs:enable
		if ( '' !== $issuer && ! preg_match( '/^[0-9]{1,18}$/', $issuer ) ) {
			return __( 'The Stripe settings were not saved: the default issuer is a user id (digits), or empty for none.', 'counterfoil' );
		}
		if ( ( '' !== $secret && ! Counterfoil_Stripe::is_secret( $secret ) ) || ( '' !== $test && ! Counterfoil_Stripe::is_secret( $test ) ) ) {
			return __( 'The Stripe signing secret was not saved: it starts with whsec_ (Stripe → Developers → Webhooks → your endpoint → Signing secret).', 'counterfoil' );
		}
		if ( '' !== $secret && $secret === $test ) {
			return __( 'The Stripe settings were not saved: the live and the test endpoints have secrets of their own; the same secret in both would let a test set-up sign live events.', 'counterfoil' );
		}
		update_option( Counterfoil_Stripe::ISSUER_OPTION, '' === $issuer ? '' : (string) (int) $issuer );
		update_option( Counterfoil_Stripe::TEST_MODE_OPTION, ! empty( $_POST['stripe_test_mode'] ) ? 1 : 0 ); // phpcs:ignore WordPress.Security.NonceVerification -- checked in guard().
		if ( ! Counterfoil_Stripe::secret_from_constant() ) {
			if ( '' !== $secret ) {
				update_option( Counterfoil_Stripe::SECRET_OPTION, $secret, false );
			} elseif ( $clear ) {
				update_option( Counterfoil_Stripe::SECRET_OPTION, '', false );
			}
		}
		if ( ! Counterfoil_Stripe::test_secret_from_constant() ) {
			if ( '' !== $test ) {
				update_option( Counterfoil_Stripe::TEST_SECRET_OPTION, $test, false );
			} elseif ( $clear_test ) {
				update_option( Counterfoil_Stripe::TEST_SECRET_OPTION, '', false );
			}
		}
		return null;
	}

	public static function handle_void_number() {
		self::guard( 'void_number' );
		$scope  = self::scope_field();
		$number = self::int_field( 'number', 1, PHP_INT_MAX );
		$reason = isset( $_POST['reason'] ) ? sanitize_text_field( wp_unslash( $_POST['reason'] ) ) : ''; // phpcs:ignore WordPress.Security.NonceVerification.Missing -- checked in guard() above.
		$done   = null === $number ? new WP_Error( 'counterfoil_void_number_missing', __( 'Give the number to void.', 'counterfoil' ), array( 'status' => 400 ) ) : Counterfoil_Invoices::void_number( $scope, $number, $reason );
		if ( is_wp_error( $done ) ) {
			self::back( 'error', $done->get_error_message() );
		}
		/* translators: 1: number, 2: scope */
		self::back( 'success', sprintf( __( 'Number %1$d of series %2$s is void.', 'counterfoil' ), $number, $scope ) );
	}

	/** Creates next year's series with the start numbers the admin reviewed. */
	public static function handle_create_next_year() {
		self::guard( 'create_next_year' );
		$starts = array();
		$chosen = isset( $_POST['create'] ) && is_array( $_POST['create'] ) ? array_map( 'sanitize_text_field', wp_unslash( $_POST['create'] ) ) : array(); // phpcs:ignore WordPress.Security.NonceVerification -- checked in guard().
		$given  = isset( $_POST['start'] ) && is_array( $_POST['start'] ) ? array_map( 'sanitize_text_field', wp_unslash( $_POST['start'] ) ) : array(); // phpcs:ignore WordPress.Security.NonceVerification -- checked in guard().
		foreach ( $chosen as $scope ) {
			$raw = isset( $given[ $scope ] ) ? trim( $given[ $scope ] ) : '';
			if ( ! preg_match( '/^[0-9]{1,18}$/', $raw ) || (int) $raw < 1 ) {
				/* translators: %s: series */
				self::back( 'error', sprintf( __( 'Nothing was created: give series %s a first number of 1 or more.', 'counterfoil' ), $scope ) );
			}
			$starts[ $scope ] = (int) $raw;
		}
		if ( ! empty( $_POST['create_all_missing'] ) ) { // phpcs:ignore WordPress.Security.NonceVerification -- checked in guard().
			foreach ( Counterfoil_Series_Life::next_year_proposals( counterfoil_current_period(), 0, true ) as $p ) {
				if ( ! isset( $starts[ $p['scope_key'] ] ) ) {
					$starts[ $p['scope_key'] ] = $p['start'];
				}
			}
		}
		if ( ! $starts ) {
			self::back( 'error', __( 'Choose at least one series to create.', 'counterfoil' ) );
		}
		delete_transient( Counterfoil_Series_Life::counts_cache( counterfoil_current_period() ) );
		$done = Counterfoil_Series_Life::create_series( $starts );
		/* translators: 1: created count, 2: list, 3: existing count */
		$text = sprintf( __( 'Created %1$d series (%2$s); %3$d already existed and were left unchanged.', 'counterfoil' ), count( $done['created'] ), implode( ', ', $done['created'] ), count( $done['existed'] ) );
		foreach ( $done['failed'] as $scope => $message ) {
			$text .= ' ' . $scope . ': ' . $message;
		}
		self::back( $done['failed'] ? 'error' : 'success', $text );
	}

	/** Completes the payments waiting for a series that exists now. */
	public static function handle_complete_waiting() {
		self::guard( 'complete_waiting' );
		$done = Counterfoil_Invoices::complete_waiting();
		/* translators: 1: completed count, 2: still waiting count */
		$text = sprintf( __( 'Completed %1$d waiting payments; %2$d still wait for a series that does not exist.', 'counterfoil' ), $done['completed'], $done['still_waiting'] );
		if ( $done['failed'] ) {
			$text .= ' ' . implode( ' ', $done['failed'] );
		}
		self::back( $done['failed'] ? 'error' : 'success', $text );
	}

	/** Payments waiting for a series, with the button that completes them. */
	private static function render_waiting( $post ) {
		$waiting = Counterfoil_Invoices::waiting();
		?>
		<h2 id="counterfoil-waiting-title"><?php esc_html_e( 'Payments waiting for a series', 'counterfoil' ); ?></h2>
		<?php if ( ! $waiting ) : ?>
			<p id="counterfoil-waiting-none"><?php esc_html_e( 'No payment is waiting: every recorded payment has its number.', 'counterfoil' ); ?></p>
			<?php
			return;
		endif;
		?>
		<p><?php esc_html_e( 'These payments were recorded without a number because their series did not exist. Create the missing series (under Create a series, below), then complete them: they get their numbers in order of arrival.', 'counterfoil' ); ?></p>
		<table class="widefat striped" id="counterfoil-waiting">
			<thead><tr>
				<th><?php esc_html_e( 'Arrived', 'counterfoil' ); ?></th>
				<th><?php esc_html_e( 'Payment', 'counterfoil' ); ?></th>
				<th><?php esc_html_e( 'Amount', 'counterfoil' ); ?></th>
				<th><?php esc_html_e( 'Series', 'counterfoil' ); ?></th>
				<th><?php esc_html_e( 'Series exists', 'counterfoil' ); ?></th>
			</tr></thead>
			<tbody>
			<?php foreach ( $waiting as $w ) : ?>
				<tr data-scope="<?php echo esc_attr( $w->scope_key ); ?>">
					<td><?php echo esc_html( get_date_from_gmt( $w->created_at, 'Y-m-d H:i:s' ) ); ?></td>
					<td><?php echo esc_html( $w->gateway . ' / ' . $w->transaction_id ); ?></td>
					<td><?php echo esc_html( trim( $w->amount . ' ' . $w->currency ) ); ?></td>
					<td><?php echo esc_html( $w->scope_key ); ?></td>
					<td><?php echo (int) $w->series_exists ? esc_html__( 'yes', 'counterfoil' ) : esc_html__( 'no — create it first', 'counterfoil' ); ?></td>
				</tr>
			<?php endforeach; ?>
			</tbody>
		</table>
		<form method="post" action="<?php echo $post; // phpcs:ignore WordPress.Security.EscapeOutput -- escaped by the caller. ?>" id="counterfoil-complete-waiting">
			<input type="hidden" name="action" value="counterfoil_complete_waiting">
			<?php wp_nonce_field( 'counterfoil_complete_waiting' ); ?>
			<?php submit_button( __( 'Complete waiting payments', 'counterfoil' ), 'primary', 'submit', false ); ?>
		</form>
		<?php
	}

	/** Next year's series for every issuer with one this year, with editable first numbers. */
	private static function render_next_year( $post ) {
		$period                      = counterfoil_current_period();
		$labels                      = Counterfoil_Series_Life::labels( $period );
		list( $issuers, $missing )   = Counterfoil_Series_Life::next_year_counts( $period );
		$proposals                   = Counterfoil_Series_Life::next_year_proposals( $period, self::NEXT_YEAR_ROWS, true );
		if ( null === $labels ) {
			return;
		}
		?>
		<h2>
			<?php
			/* translators: %s: the next period (a year, or a month as yyyy-mm) */
			echo esc_html( sprintf( __( 'Series for %s, ahead of time', 'counterfoil' ), $labels[1] ) );
			?>
		</h2>
		<?php if ( ! $issuers ) : ?>
			<p><?php esc_html_e( 'No issuer has a series this year yet.', 'counterfoil' ); ?></p>
			<?php
			return;
		endif;
		?>
		<p id="counterfoil-next-year-counts">
			<?php
			/* translators: 1: issuers, 2: this period, 3: missing, 4: next period (years, or months as yyyy-mm) */
			echo esc_html( sprintf( __( '%1$d issuers have a series for %2$s; %3$d of them have none for %4$s yet.', 'counterfoil' ), $issuers, $labels[0], $missing, $labels[1] ) );
			?>
		</p>
		<?php if ( ! $proposals ) : ?>
			<?php
			return;
		endif;
		?>
		<p><?php esc_html_e( 'Create next year\'s series now to review their first numbers before they are used. Under "create" a daily job does this from 1 December. Under "continue" each first number is this year\'s last number + 1 as of now: numbers issued later this year are not counted, and a series created here does not close this year\'s, so with a format without {year} give it a start above every number this year will still issue, or let the first payment of next year create it (that closes this year\'s series: its later payments are numbered by next year\'s, and no number is printed twice).', 'counterfoil' ); ?></p>
		<form method="post" action="<?php echo $post; // phpcs:ignore WordPress.Security.EscapeOutput -- escaped by the caller. ?>" id="counterfoil-next-year">
			<input type="hidden" name="action" value="counterfoil_create_next_year">
			<?php wp_nonce_field( 'counterfoil_create_next_year' ); ?>
			<table class="widefat striped">
				<thead><tr>
					<th><?php esc_html_e( 'Create', 'counterfoil' ); ?></th>
					<th><?php esc_html_e( 'Series', 'counterfoil' ); ?></th>
					<th><?php esc_html_e( 'This year', 'counterfoil' ); ?></th>
					<th><?php esc_html_e( 'First number', 'counterfoil' ); ?></th>
				</tr></thead>
				<tbody>
				<?php foreach ( $proposals as $p ) : ?>
					<tr data-scope="<?php echo esc_attr( $p['scope_key'] ); ?>">
						<td><?php if ( ! $p['exists'] ) : ?><input type="checkbox" name="create[]" value="<?php echo esc_attr( $p['scope_key'] ); ?>" checked><?php endif; ?></td>
						<td><?php echo esc_html( $p['scope_key'] ); ?></td>
						<td>
							<?php
							/* translators: 1: series, 2: last number */
							echo esc_html( sprintf( __( '%1$s: last number %2$d', 'counterfoil' ), $p['from'], $p['current'] ) );
							?>
						</td>
						<td>
							<?php if ( $p['exists'] ) : ?>
								<?php esc_html_e( 'exists', 'counterfoil' ); ?>
							<?php else : ?>
								<input type="number" min="1" name="start[<?php echo esc_attr( $p['scope_key'] ); ?>]" value="<?php echo esc_attr( (string) $p['start'] ); ?>">
							<?php endif; ?>
						</td>
					</tr>
				<?php endforeach; ?>
				</tbody>
			</table>
			<?php if ( $missing > count( $proposals ) ) : ?>
				<p><label><input type="checkbox" name="create_all_missing" value="1">
					<?php
					/* translators: %d: count */
					echo esc_html( sprintf( __( 'Also create the other %d missing series, each at the first number its plan proposes (the list shows the first ones).', 'counterfoil' ), $missing - count( $proposals ) ) );
					?>
				</label></p>
			<?php endif; ?>
			<?php submit_button( __( "Create next year's series", 'counterfoil' ), 'secondary', 'submit', false ); ?>
		</form>
		<?php
	}

	public static function render() {
		if ( ! current_user_can( self::CAPABILITY ) ) {
			wp_die( esc_html__( 'You are not allowed to see invoice numbers.', 'counterfoil' ), 403 );
		}
		$notice = get_transient( 'counterfoil_notice_' . get_current_user_id() );
		delete_transient( 'counterfoil_notice_' . get_current_user_id() );
		$backend = null === counterfoil_backend_error() ? counterfoil_backend()->name() : 'none';
		$post    = esc_url( admin_url( 'admin-post.php' ) );
		?>
		<div class="wrap" id="counterfoil-settings">
			<h1><?php esc_html_e( 'Invoice numbers', 'counterfoil' ); ?></h1>
			<?php if ( $notice ) : ?>
				<div class="notice notice-<?php echo esc_attr( 'success' === $notice[0] ? 'success' : 'error' ); ?> counterfoil-notice"><p><?php echo esc_html( $notice[1] ); ?></p></div>
			<?php endif; ?>
			<p id="counterfoil-backend">
				<?php
				if ( 'extension' === $backend ) {
					esc_html_e( 'Backend: the counterfoil PHP extension (Rust core).', 'counterfoil' );
				} elseif ( 'none' === $backend ) {
					esc_html_e( 'Backend: unavailable (see the notice above).', 'counterfoil' );
				} else {
					esc_html_e( 'Backend: pure PHP (the counterfoil extension is not loaded on this server).', 'counterfoil' );
				}
				?>
			</p>

			<?php self::render_waiting( $post ); ?>

			<h2><?php esc_html_e( 'Series', 'counterfoil' ); ?></h2>
			<form method="get" id="counterfoil-series-search">
				<input type="hidden" name="page" value="<?php echo esc_attr( self::SLUG ); ?>">
				<?php
				$series = new Counterfoil_Series_Table();
				$series->prepare_items();
				$series->search_box( __( 'Search series or issuer', 'counterfoil' ), 'counterfoil-series' );
				?>
			</form>
			<div id="counterfoil-series"><?php $series->display(); ?></div>

			<h2><?php esc_html_e( 'Create a series', 'counterfoil' ); ?></h2>
			<form method="post" action="<?php echo $post; // phpcs:ignore WordPress.Security.EscapeOutput -- escaped above. ?>" id="counterfoil-create">
				<input type="hidden" name="action" value="counterfoil_create_series">
				<?php wp_nonce_field( 'counterfoil_create_series' ); ?>
				<label><?php esc_html_e( 'User id', 'counterfoil' ); ?> <input type="number" name="user_id" min="0" required value="<?php echo esc_attr( (string) get_current_user_id() ); ?>"></label>
				<label><?php esc_html_e( 'Year', 'counterfoil' ); ?> <input type="number" name="year" min="1" max="9999" required value="<?php echo esc_attr( (string) counterfoil_local_period()[0] ); ?>"></label>
				<label><?php esc_html_e( 'Starting number', 'counterfoil' ); ?> <input type="number" name="start" min="1" required value="1"></label>
				<?php submit_button( __( 'Create series', 'counterfoil' ), 'secondary', 'submit', false ); ?>
			</form>

			<h2><?php esc_html_e( 'Advance a series', 'counterfoil' ); ?></h2>
			<p><?php esc_html_e( 'Moves a series so that its next number is at least the one you give. A series never moves down: numbers already issued must never be issued again. To start again lower, create a new series.', 'counterfoil' ); ?></p>
			<form method="post" action="<?php echo $post; // phpcs:ignore WordPress.Security.EscapeOutput -- escaped above. ?>" id="counterfoil-advance">
				<input type="hidden" name="action" value="counterfoil_advance_series">
				<?php wp_nonce_field( 'counterfoil_advance_series' ); ?>
				<label><?php esc_html_e( 'Series', 'counterfoil' ); ?> <input type="text" name="scope_key" required placeholder="1:2026"></label>
				<label><?php esc_html_e( 'Next number', 'counterfoil' ); ?> <input type="text" inputmode="numeric" name="next" required></label>
				<?php submit_button( __( 'Advance', 'counterfoil' ), 'secondary', 'submit', false ); ?>
				<p id="counterfoil-advance-check" aria-live="polite"></p>
			</form>

			<h2 id="counterfoil-void-title"><?php esc_html_e( 'Void a number', 'counterfoil' ); ?></h2>
			<p><?php esc_html_e( 'An issued invoice is never deleted: void its number with a reason instead. The registry keeps the number as void, and the invoice list shows it.', 'counterfoil' ); ?></p>
			<form method="post" action="<?php echo $post; // phpcs:ignore WordPress.Security.EscapeOutput -- escaped above. ?>" id="counterfoil-void">
				<input type="hidden" name="action" value="counterfoil_void_number">
				<?php wp_nonce_field( 'counterfoil_void_number' ); ?>
				<?php
				// Prefilled from the invoice list's "Void with a reason…" link (display only; the form is checked on submit).
				$void_scope  = isset( $_GET['void_scope'] ) ? sanitize_text_field( wp_unslash( $_GET['void_scope'] ) ) : ''; // phpcs:ignore WordPress.Security.NonceVerification.Recommended -- only fills in the void form (the books' link); the form has its own nonce.
				$void_number = isset( $_GET['void_number'] ) ? absint( $_GET['void_number'] ) : ''; // phpcs:ignore WordPress.Security.NonceVerification.Recommended -- only fills in the void form, as above.
				?>
				<label><?php esc_html_e( 'Series', 'counterfoil' ); ?> <input type="text" name="scope_key" required value="<?php echo esc_attr( $void_scope ); ?>"></label>
				<label><?php esc_html_e( 'Number', 'counterfoil' ); ?> <input type="number" name="number" min="1" required value="<?php echo esc_attr( (string) $void_number ); ?>"></label>
				<label><?php esc_html_e( 'Reason', 'counterfoil' ); ?> <input type="text" name="reason" maxlength="255" required></label>
				<?php submit_button( __( 'Void', 'counterfoil' ), 'delete', 'submit', false ); ?>
			</form>

			<?php self::render_next_year( $post ); ?>

			<h2><?php esc_html_e( 'Settings', 'counterfoil' ); ?></h2>
			<form method="post" action="<?php echo $post; // phpcs:ignore WordPress.Security.EscapeOutput -- escaped above. ?>" id="counterfoil-settings-form">
				<input type="hidden" name="action" value="counterfoil_save_settings">
				<?php wp_nonce_field( 'counterfoil_save_settings' ); ?>
				<p><label><?php esc_html_e( 'Number format', 'counterfoil' ); ?>
					<input type="text" name="format" id="counterfoil-format" value="<?php echo esc_attr( counterfoil_format() ); ?>" data-year="<?php echo esc_attr( (string) counterfoil_current_period()[0] ); ?>" data-month="<?php echo esc_attr( (string) counterfoil_local_period()[1] ); ?>" data-fiscal-month="<?php echo esc_attr( 'fiscal-year' === counterfoil_period_rule()[0] ? (string) counterfoil_period_rule()[1] : '0' ); ?>" data-fiscal-day="<?php echo esc_attr( 'fiscal-year' === counterfoil_period_rule()[0] ? (string) counterfoil_period_rule()[2] : '0' ); ?>"></label>
					<span class="description"><?php esc_html_e( 'Tokens: {seq}, {seq:04} (at least 4 digits), {year}, {yy}, {month}.', 'counterfoil' ); ?></span></p>
				<p id="counterfoil-format-preview" aria-live="polite"></p>
				<fieldset id="counterfoil-missing-series"><legend><strong><?php esc_html_e( "When a payment's series does not exist yet", 'counterfoil' ); ?></strong></legend>
					<?php
					$labels = array(
						'create'   => __( 'Create the series at the first number below, then number the payment (recommended).', 'counterfoil' ),
						'continue' => __( "Create the series continuing the issuer's previous year (its last number + 1), then number the payment. The previous year's series is closed then: its later payments are numbered by the new one, so no number is printed twice.", 'counterfoil' ),
						'hold'     => __( 'Record the payment without a number and answer 503 (the gateway delivers it again later) until an admin creates the series; it is listed under "Payments waiting for a series".', 'counterfoil' ),
					);
					foreach ( $labels as $value => $label ) :
						?>
						<label style="display:block"><input type="radio" name="missing_series" value="<?php echo esc_attr( $value ); ?>" <?php checked( counterfoil_missing_series_plan(), $value ); ?>> <code><?php echo esc_html( $value ); ?></code> — <?php echo esc_html( $label ); ?></label>
					<?php endforeach; ?>
					<label><?php esc_html_e( 'First number of a new series', 'counterfoil' ); ?> <input type="number" name="new_series_start" min="1" required value="<?php echo esc_attr( (string) counterfoil_new_series_start() ); ?>"></label>
					<p class="description">
						<?php
						/* translators: %s: time zone name */
						echo esc_html( sprintf( __( "A payment without a year belongs to the year of the site's clock when it arrives (time zone: %s, under Settings → General).", 'counterfoil' ), wp_timezone_string() ) );
						?>
					</p>
					<?php $period = counterfoil_period_rule(); ?>
					<p><label><?php esc_html_e( 'Numbering year', 'counterfoil' ); ?>
						<select name="period_kind" id="counterfoil-period-kind">
							<option value="calendar-year" <?php selected( $period[0], 'calendar-year' ); ?>><?php esc_html_e( 'Calendar year (1 January)', 'counterfoil' ); ?></option>
							<option value="fiscal-year" <?php selected( $period[0], 'fiscal-year' ); ?>><?php esc_html_e( 'Fiscal year starting on (MM-DD)', 'counterfoil' ); ?></option>
							<option value="month" <?php selected( $period[0], 'month' ); ?>><?php esc_html_e( 'Calendar month (a series per issuer and month)', 'counterfoil' ); ?></option>
						</select></label>
						<input type="text" name="period_start" size="5" placeholder="04-01" value="<?php echo esc_attr( 'fiscal-year' === $period[0] ? sprintf( '%02d-%02d', $period[1], $period[2] ) : '' ); ?>">
						<span class="description" id="counterfoil-period-now">
						<?php
						/* translators: 1: the period's year, 2: {fy} */
						echo esc_html( sprintf( __( 'Today belongs to the year %1$s (series …:%2$s).', 'counterfoil' ), Counterfoil_Rules::fiscal_label( $period, counterfoil_current_period()[0] ), Counterfoil_Rules::period_label( counterfoil_current_period() ) ) );
						?>
						</span></p>
				</fieldset>
				<p><?php esc_html_e( 'Webhook endpoint:', 'counterfoil' ); ?> <code><?php echo esc_html( rest_url( Counterfoil_Rest::NAMESPACE_V1 . '/payments' ) ); ?></code><br>
					<?php esc_html_e( 'Webhook secret:', 'counterfoil' ); ?>
					<?php if ( Counterfoil_Rest::secret_from_constant() ) : ?>
						<span id="counterfoil-secret-constant"><?php esc_html_e( 'set by the COUNTERFOIL_WEBHOOK_SECRET constant in wp-config.php (not shown here; change it there).', 'counterfoil' ); ?></span>
						<label><input type="checkbox" name="regenerate_secret" value="1" disabled> <?php esc_html_e( 'Generate a new secret', 'counterfoil' ); ?></label></p>
					<?php else : ?>
						<input type="password" id="counterfoil-secret" class="regular-text code" readonly autocomplete="off" value="" placeholder="••••••••" data-url="<?php echo esc_url( admin_url( 'admin-ajax.php' ) ); ?>" data-nonce="<?php echo esc_attr( wp_create_nonce( self::REVEAL_ACTION ) ); ?>">
						<button type="button" class="button" id="counterfoil-secret-reveal" data-hide="<?php esc_attr_e( 'Hide', 'counterfoil' ); ?>"><?php esc_html_e( 'Show', 'counterfoil' ); ?></button>
						<label><input type="checkbox" name="regenerate_secret" value="1"> <?php esc_html_e( 'Generate a new secret', 'counterfoil' ); ?></label></p>
					<?php endif; ?>
				<p><label><input type="checkbox" name="webhook_refuse_legacy_signature" value="1" <?php checked( Counterfoil_Rest::refuses_legacy_signature() ); ?>>
					<?php esc_html_e( 'Refuse webhook calls signed in the first form (sha256=): accept v2= only. The next minor release refuses the first form by default; tick this once every sender signs with v2=.', 'counterfoil' ); ?></label></p>
				<fieldset id="counterfoil-stripe"><legend><strong><?php esc_html_e( 'Stripe', 'counterfoil' ); ?></strong></legend>
					<p><?php esc_html_e( 'Endpoint URL to add in Stripe (Developers → Webhooks), with the events checkout.session.completed, checkout.session.async_payment_succeeded, payment_intent.succeeded and charge.refunded:', 'counterfoil' ); ?>
						<code id="counterfoil-stripe-url"><?php echo esc_html( Counterfoil_Stripe::endpoint_url() ); ?></code></p>
					<p><?php esc_html_e( 'Signing secret:', 'counterfoil' ); ?>
					<?php if ( Counterfoil_Stripe::secret_from_constant() ) : ?>
						<span id="counterfoil-stripe-secret-constant"><?php esc_html_e( 'set by the COUNTERFOIL_STRIPE_SECRET constant in wp-config.php (not shown here; change it there).', 'counterfoil' ); ?></span></p>
					<?php else : ?>
						<span id="counterfoil-stripe-secret-state"><?php echo '' === Counterfoil_Stripe::secret() ? esc_html__( 'not set: Stripe events are answered 503 (and delivered again) until it is.', 'counterfoil' ) : esc_html( sprintf( /* translators: %s: last four characters of the secret */ __( 'set (…%s).', 'counterfoil' ), substr( Counterfoil_Stripe::secret(), -4 ) ) ); ?></span><br>
						<label><?php esc_html_e( 'New signing secret', 'counterfoil' ); ?> <input type="password" name="stripe_secret" class="regular-text code" autocomplete="off" value="" placeholder="whsec_…"></label>
						<label><input type="checkbox" name="stripe_clear_secret" value="1"> <?php esc_html_e( 'Remove the secret', 'counterfoil' ); ?></label></p>
					<?php endif; ?>
					<p><label><?php esc_html_e( 'Default issuer (user id) for payments without metadata.counterfoil_user_id', 'counterfoil' ); ?>
						<input type="text" inputmode="numeric" name="stripe_default_issuer" value="<?php echo esc_attr( (string) get_option( Counterfoil_Stripe::ISSUER_OPTION, '' ) ); ?>"></label></p>
					<p><label><input type="checkbox" name="stripe_test_mode" value="1" <?php checked( (int) get_option( Counterfoil_Stripe::TEST_MODE_OPTION, 0 ), 1 ); ?>>
						<?php esc_html_e( 'Number Stripe test-mode payments too, in test series of their own (test:{issuer}:{year}) that never take a live number. Off: test-mode events are acknowledged and ignored.', 'counterfoil' ); ?></label></p>
					<p><?php esc_html_e( 'Test endpoint\'s signing secret (test-mode events are believed only with it; a live event signed with it is refused):', 'counterfoil' ); ?>
					<?php if ( Counterfoil_Stripe::test_secret_from_constant() ) : ?>
						<span id="counterfoil-stripe-test-secret-constant"><?php esc_html_e( 'set by the COUNTERFOIL_STRIPE_TEST_SECRET constant in wp-config.php (not shown here; change it there).', 'counterfoil' ); ?></span></p>
					<?php else : ?>
						<span id="counterfoil-stripe-test-secret-state"><?php echo '' === Counterfoil_Stripe::test_secret() ? esc_html__( 'not set.', 'counterfoil' ) : esc_html( sprintf( /* translators: %s: last four characters of the secret */ __( 'set (…%s).', 'counterfoil' ), substr( Counterfoil_Stripe::test_secret(), -4 ) ) ); ?></span><br>
						<label><?php esc_html_e( 'New test signing secret', 'counterfoil' ); ?> <input type="password" name="stripe_test_secret" class="regular-text code" autocomplete="off" value="" placeholder="whsec_…"></label>
						<label><input type="checkbox" name="stripe_clear_test_secret" value="1"> <?php esc_html_e( 'Remove the test secret', 'counterfoil' ); ?></label></p>
					<?php endif; ?>
				</fieldset>
				<?php
				Counterfoil_Documents::settings_fields();
				if ( Counterfoil_WooCommerce::active() ) {
					Counterfoil_Vat_Categories::settings_fields();
					Counterfoil_WooCommerce_Backfill::settings_fields();
				}
				?>
				<p><label><input type="checkbox" name="period_confirm" value="1"> <?php esc_html_e( 'I have read what changes (when a new numbering year moves today into another year)', 'counterfoil' ); ?></label></p>
				<p><label><?php esc_html_e( 'Credit note number format', 'counterfoil' ); ?>
					<input type="text" name="credit_note_format" class="regular-text code" value="<?php echo esc_attr( counterfoil_credit_note_format() ); ?>"></label></p>
				<p><label><input type="checkbox" name="delete_data_on_uninstall" value="1" <?php checked( (int) get_option( 'counterfoil_delete_data_on_uninstall', 0 ), 1 ); ?>>
					<?php esc_html_e( 'Delete all invoice numbers, payments and invoices when the plugin is uninstalled (otherwise they are kept).', 'counterfoil' ); ?></label></p>
				<?php submit_button( __( 'Save settings', 'counterfoil' ) ); ?>
			</form>
			<?php
			if ( Counterfoil_WooCommerce::active() ) {
				Counterfoil_WooCommerce_Backfill::backfill_form();
			}
			?>
		</div>
		<?php
		self::live_checks();
	}
}
