<?php
/**
 * REST: POST /wp-json/counterfoil/v1/stripe, Stripe's own signed webhook
 * events, straight to the site (Checkout, Payment Links, PaymentIntents).
 *
 * Authentication: the `Stripe-Signature` header, `t=<unix>,v1=<hex>[,v1=…]`,
 * each v1 an HMAC-SHA256 of "{t}.{raw body}" with the endpoint's signing
 * secret (`whsec_…`); any matching v1 is accepted (Stripe sends several while
 * a secret is rolled), and `t` must be within 5 minutes of the server's clock.
 *
 * Only this shop's live payments are numbered: a test-mode event
 * (`livemode` false) and an event of another account (Connect's `account`,
 * unless it is the one in `counterfoil_stripe_account`) are answered 200 and
 * ignored, and so is a PaymentIntent this shop did not mark. A site that
 * opts in (`counterfoil_stripe_test_mode`) numbers test-mode events in test
 * series of their own (`test:{issuer}:{year}`, credit notes
 * `test:{issuer}:cn:{year}`) under the gateway name `stripe_test`: they
 * never take a live number and never meet a live payment.
 *
 * Live and test endpoints have secrets of their own: the live one
 * (`counterfoil_stripe_secret`, or COUNTERFOIL_STRIPE_SECRET) and the test
 * one (`counterfoil_stripe_test_secret`, or COUNTERFOIL_STRIPE_TEST_SECRET).
 * An event's `livemode` is believed only with its own secret: a live event
 * signed with the test secret (which test set-ups share widely) is refused
 * (401 `counterfoil_mode_mismatch`), and so is a test event signed with the
 * live secret on a site that numbers test events.
 *
 * Events:
 * - `checkout.session.completed` when its `payment_status` is `paid`, and
 *   `checkout.session.async_payment_succeeded`, for a session in `payment`
 *   mode: a payment;
 * - `payment_intent.succeeded` for an intent that carries
 *   `metadata.counterfoil_user_id` (not a Stripe Billing invoice's): a
 *   payment; any other intent (Billing, Dashboard, Terminal, other sites on
 *   the account) is ignored, unless its session recorded it already (then
 *   the answer names that invoice);
 *   both keyed by the PaymentIntent id, so a session and its intent make one
 *   invoice; the amount from the smallest currency unit by the currency's
 *   exponent (the core's rule, tests/vectors/minor_units.json); the issuer
 *   from `metadata.counterfoil_user_id`, else the site's default issuer, else
 *   the issuer of the payment already recorded for that intent;
 * - `refund.created`, `refund.updated`, `refund.failed`,
 *   `charge.refund.updated` and `charge.refunded` of a payment this site
 *   recorded (any other is ignored, `not_invoiced`): each refund is recorded
 *   beside the payment ({prefix}counterfoil_refunds, its latest status), a
 *   refund that succeeded gets a credit note (its own number in the
 *   issuer's credit-note series, once per refund id, named in the answer),
 *   and `counterfoil_payment_refunded` fires once per change of the
 *   refunded total (the succeeded refunds: one that fails or is reversed
 *   stops counting); the invoice and its number never change;
 * - anything else: 200, ignored (Stripe stops delivering it).
 *
 * Answers: as the payments route (201, 200 a repeat, 409, 503 + Retry-After),
 * plus 400 a body that is not an event, a malformed header or invalid event
 * data; 401 no v1 matches or `t` is outside the tolerance; 503 no signing
 * secret (Stripe delivers again for three days); 202 a paid session with no
 * issuer while the site has no default issuer: recorded without a number,
 * listed with the waiting payments, and numbered as soon as a default issuer
 * is set — nothing is lost when Stripe's retries end.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * Stripe webhook endpoint.
 */
final class Counterfoil_Stripe {
	const ROUTE          = '/stripe';
	const GATEWAY        = 'stripe';
	const TOLERANCE      = 300;
	const MAX_BODY       = 262144;
	/** The live endpoint's signing secret (unless COUNTERFOIL_STRIPE_SECRET defines it). */
	const SECRET_OPTION  = 'counterfoil_stripe_secret';
	/** The test endpoint's signing secret (test-mode events only). */
	const TEST_SECRET_OPTION = 'counterfoil_stripe_test_secret';
	/** The issuer of a Stripe payment that names none (metadata.counterfoil_user_id). */
	const ISSUER_OPTION  = 'counterfoil_stripe_default_issuer';
	/** A Connect platform's own account id (acct_…): events that name another account are not this shop's and are ignored; unset, every event naming an account is ignored. */
	const ACCOUNT_OPTION = 'counterfoil_stripe_account';
	/** Whether test-mode events are numbered (in test series); off by default. */
	const TEST_MODE_OPTION = 'counterfoil_stripe_test_mode';
	/** The gateway name of test-mode payments and refunds. */
	const TEST_GATEWAY = 'stripe_test';
	/** What a test series' key starts with: `test:{issuer}:{year}`. */
	const TEST_SERIES = Counterfoil_Invoices::TEST_SERIES;

	/**
	 * Hooked on counterfoil_document_sales_order_reference: a Stripe
	 * payment's id (live or test) is Stripe's, no sales order of the shop's.
	 *
	 * @param string $reference The transaction id.
	 * @param string $gateway   The gateway.
	 * @return string
	 */
	public static function no_sales_order_reference( $reference, $gateway ) {
		return in_array( $gateway, array( self::GATEWAY, self::TEST_GATEWAY ), true ) ? '' : $reference;
	}

	/**
	 * The books of the event being handled (set by receive()): `stripe` and
	 * the live series, or — a test-mode event on a site that opted in —
	 * `stripe_test` and the test series, which never mix with live ones.
	 *
	 * @var string
	 */
	private static $gateway = self::GATEWAY;
	/** @var string The series prefix of the event being handled ('' or TEST_SERIES). */
	private static $series = '';
	/** @var string|null Which secret signed the request: 'live', 'test' (verify_signature()). */
	private static $signed_with = null;
	const MARKER         = 'counterfoil_user_id';
	/** The placeholder series of payments that name no issuer yet (`…:{year}`). */
	const UNASSIGNED     = 'stripe-no-issuer';
	const PAID_EVENTS    = array( 'checkout.session.completed', 'checkout.session.async_payment_succeeded', 'payment_intent.succeeded' );
	const REFUND_EVENTS  = array( 'charge.refunded', 'refund.created', 'refund.updated', 'refund.failed', 'charge.refund.updated' );
	/** A refund's states, in the order a later one overrides an earlier one at the same second. */
	const REFUND_STATES  = array( 'pending', 'requires_action', 'succeeded', 'failed', 'canceled' );

	/** Registers the route. */
	public static function register_routes() {
		register_rest_route(
			Counterfoil_Rest::NAMESPACE_V1,
			self::ROUTE,
			array(
				'methods'             => 'POST',
				'callback'            => array( __CLASS__, 'receive' ),
				'permission_callback' => array( __CLASS__, 'verify_signature' ),
			)
		);
	}

	/** The URL to paste into Stripe (Developers → Webhooks → Add endpoint). */
	public static function endpoint_url() {
		return rest_url( Counterfoil_Rest::NAMESPACE_V1 . self::ROUTE );
	}

	/** The live endpoint's signing secret: the COUNTERFOIL_STRIPE_SECRET constant, else the option. */
	public static function secret() {
		if ( self::secret_from_constant() ) {
			return (string) COUNTERFOIL_STRIPE_SECRET;
		}
		return (string) get_option( self::SECRET_OPTION, '' );
	}

	/** Whether the live secret comes from the COUNTERFOIL_STRIPE_SECRET constant. */
	public static function secret_from_constant() {
		return defined( 'COUNTERFOIL_STRIPE_SECRET' ) && COUNTERFOIL_STRIPE_SECRET;
	}

	/** The test endpoint's signing secret: the COUNTERFOIL_STRIPE_TEST_SECRET constant, else the option. */
	public static function test_secret() {
		if ( self::test_secret_from_constant() ) {
			return (string) COUNTERFOIL_STRIPE_TEST_SECRET;
		}
		return (string) get_option( self::TEST_SECRET_OPTION, '' );
	}

	/** Whether the test secret comes from the COUNTERFOIL_STRIPE_TEST_SECRET constant. */
	public static function test_secret_from_constant() {
		return defined( 'COUNTERFOIL_STRIPE_TEST_SECRET' ) && COUNTERFOIL_STRIPE_TEST_SECRET;
	}

	/** Whether $secret looks like a Stripe signing secret. */
	public static function is_secret( $secret ) {
		return is_string( $secret ) && (bool) preg_match( '/^whsec_[A-Za-z0-9]{8,200}$/', $secret );
	}

	/** The issuer of payments without `metadata.counterfoil_user_id`, or null. */
	public static function default_issuer() {
		$issuer = get_option( self::ISSUER_OPTION, '' );
		return ( '' === $issuer || null === $issuer ) ? null : (int) $issuer;
	}

	/**
	 * The parts of a Stripe-Signature header: the timestamp and every v1
	 * signature, or null when either is missing or malformed.
	 *
	 * @param string $header Header value.
	 * @return array|null [timestamp, string[] signatures].
	 */
	public static function parse_header( $header ) {
		$timestamp  = null;
		$signatures = array();
		foreach ( explode( ',', (string) $header ) as $part ) {
			$pair = explode( '=', trim( $part ), 2 );
			if ( 2 !== count( $pair ) ) {
				continue;
			}
			if ( 't' === $pair[0] && null === $timestamp ) {
				$timestamp = $pair[1];
			} elseif ( 'v1' === $pair[0] && preg_match( '/^[0-9a-f]{64}$/', $pair[1] ) ) {
				$signatures[] = $pair[1];
			}
		}
		if ( null === $timestamp || ! preg_match( '/^[0-9]{1,12}$/', $timestamp ) || array() === $signatures ) {
			return null;
		}
		return array( (int) $timestamp, $signatures );
	}

	/**
	 * permission_callback: the body's size, a configured secret (503: the
	 * site is not set up yet, Stripe delivers again), a well-formed header
	 * (400), a fresh timestamp and a v1 matching the live or the test secret
	 * (401); which one matched is kept for receive(), which believes the
	 * event's `livemode` only with its own secret.
	 *
	 * @param WP_REST_Request $request Request.
	 * @return true|WP_Error
	 */
	public static function verify_signature( $request ) {
		$body = $request->get_body();
		if ( strlen( $body ) > self::MAX_BODY ) {
			return new WP_Error( 'counterfoil_too_large', __( 'The body is larger than 256 KiB.', 'counterfoil' ), array( 'status' => 400 ) );
		}
		self::$signed_with = null;
		$secrets           = array_filter(
			array(
				'live' => self::secret(),
				'test' => self::test_secret(),
			)
		);
		if ( array() === $secrets ) {
			Counterfoil_Log::once( 'stripe:no-secret', 'a Stripe event arrived but no Stripe signing secret is set (Settings → Invoice numbers)' );
			return new WP_Error( 'counterfoil_not_configured', __( 'The Stripe endpoint is not configured yet.', 'counterfoil' ), array( 'status' => 503 ) );
		}
		$parsed = self::parse_header( (string) $request->get_header( 'stripe_signature' ) );
		if ( null === $parsed ) {
			return new WP_Error( 'counterfoil_bad_signature_header', __( 'The Stripe-Signature header is missing or malformed.', 'counterfoil' ), array( 'status' => 400 ) );
		}
		list( $timestamp, $signatures ) = $parsed;
		foreach ( $secrets as $mode => $secret ) {
			$expected = hash_hmac( 'sha256', $timestamp . '.' . $body, $secret );
			$matches  = false;
			foreach ( $signatures as $signature ) {
				$matches = hash_equals( $expected, $signature ) || $matches;
			}
			if ( $matches && null === self::$signed_with ) {
				self::$signed_with = $mode;
			}
		}
		if ( null === self::$signed_with || abs( time() - $timestamp ) > self::TOLERANCE ) {
			self::$signed_with = null;
			return new WP_Error( 'counterfoil_unauthorized', __( 'No signature matches this site\'s Stripe signing secrets, or the timestamp is more than 5 minutes off.', 'counterfoil' ), array( 'status' => 401 ) );
		}
		return true;
	}

	/**
	 * Handles one verified Stripe event (the body Stripe sends, signed with
	 * the Stripe-Signature header). Payments: checkout.session.completed,
	 * checkout.session.async_payment_succeeded, payment_intent.succeeded;
	 * refunds: charge.refunded, refund.created, refund.updated,
	 * refund.failed, charge.refund.updated. Response: as the payment
	 * webhook's (201, 200 a repeat) with event_id and event_type; 200 for
	 * an event that is not this shop's to number (test mode, another
	 * account, no metadata); 202 a paid session without an issuer, kept
	 * until one is set; 400 a malformed header, 401 no matching signature,
	 * 503 retry later (Stripe delivers again for three days).
	 *
	 * @param WP_REST_Request $request Request.
	 * @return WP_REST_Response|WP_Error
	 */
	public static function receive( $request ) {
		$event  = json_decode( $request->get_body(), true );
		$object = is_array( $event ) && isset( $event['data']['object'] ) && is_array( $event['data']['object'] ) ? $event['data']['object'] : null;
		if ( null === $object || ! isset( $event['type'] ) || ! is_string( $event['type'] ) ) {
			return self::bad( __( 'The body is not a Stripe event.', 'counterfoil' ) );
		}
		$type = $event['type'];
		$test = empty( $event['livemode'] );
		// `livemode` is believed only with its own endpoint's secret: a live
		// event signed with the test secret would take live numbers for
		// whoever holds a test set-up's secret.
		if ( ( ! $test && 'live' !== self::$signed_with ) || ( $test && 'test' !== self::$signed_with && get_option( self::TEST_MODE_OPTION ) ) ) {
			return new WP_Error(
				'counterfoil_mode_mismatch',
				$test
					? __( 'A test-mode event must be signed with the test endpoint\'s signing secret.', 'counterfoil' )
					: __( 'A live event must be signed with the live endpoint\'s signing secret.', 'counterfoil' ),
				array( 'status' => 401 )
			);
		}
		self::$gateway = $test ? self::TEST_GATEWAY : self::GATEWAY;
		self::$series  = $test ? self::TEST_SERIES : '';
		$not_ours      = self::not_this_books( $event );
		if ( null !== $not_ours ) {
			return self::ignored( $type, $not_ours );
		}
		if ( in_array( $type, self::REFUND_EVENTS, true ) ) {
			return self::refund( $type, $object, $event );
		}
		if ( ! in_array( $type, self::PAID_EVENTS, true ) ) {
			return self::ignored( $type, 'event_type' );
		}
		$is_session = 'payment_intent.succeeded' !== $type;
		if ( $is_session && ( ! isset( $object['mode'] ) || 'payment' !== $object['mode'] ) ) {
			// Subscription and setup sessions: Stripe Billing invoices them.
			return self::ignored( $type, 'not_payment_mode' );
		}
		if ( $is_session && ( ! isset( $object['payment_status'] ) || 'paid' !== $object['payment_status'] ) ) {
			return self::ignored( $type, 'unpaid' );
		}
		$intent = $is_session ? self::id_of( isset( $object['payment_intent'] ) ? $object['payment_intent'] : null ) : self::id_of( $object );
		if ( null === $intent ) {
			// A session without a PaymentIntent (a subscription's): its
			// invoices come from Stripe Billing, not from this endpoint.
			return self::ignored( $type, 'no_payment_intent' );
		}
		if ( ! $is_session && ! self::carries_marker( $object ) ) {
			// Every PaymentIntent of the account comes here: Billing's
			// invoices and renewals, Dashboard and Terminal payments, other
			// sites and apps. Only an intent this shop marked is numbered;
			// the intent of one of our Checkout sessions (Checkout does not
			// copy the session's metadata) is numbered by its session, and
			// when that came first this event is told the same invoice.
			if ( ! Counterfoil_Invoices::payment_row( self::$gateway, $intent ) ) {
				if ( function_exists( 'error_log' ) && defined( 'WP_DEBUG' ) && WP_DEBUG ) {
					error_log( sprintf( 'counterfoil: Stripe %s %s ignored: not marked by this shop (metadata.%s)', $type, $intent, self::MARKER ) ); // phpcs:ignore WordPress.PHP.DevelopmentFunctions.error_log_error_log -- with WP_DEBUG only: why a Stripe event was not numbered.
				}
				return self::ignored( $type, 'not_ours' );
			}
		}
		$minor = $is_session
			? ( isset( $object['amount_total'] ) ? $object['amount_total'] : null )
			: ( isset( $object['amount_received'] ) ? $object['amount_received'] : null );
		try {
			list( $amount, $currency ) = Counterfoil_Rules::amount_from_minor_units( $minor, isset( $object['currency'] ) ? $object['currency'] : null );
		} catch ( InvalidArgumentException $e ) {
			return self::bad( $e->getMessage() );
		}
		$issuer = self::issuer( $object, $intent );
		if ( is_wp_error( $issuer ) && 'counterfoil_stripe_no_issuer' === $issuer->get_error_code() ) {
			if ( '' !== self::$series ) {
				// A test payment names no issuer: nothing real waits.
				return self::ignored( $type, 'test_mode_no_issuer' );
			}
			return self::wait_for_issuer( $intent, $amount, $currency, $event, $type );
		}
		if ( is_wp_error( $issuer ) ) {
			return Counterfoil_Rest::respond( $issuer, array() );
		}
		$payment = array(
			'gateway'        => self::$gateway,
			'transaction_id' => $intent,
			'user_id'        => $issuer,
			'amount'         => $amount,
			'currency'       => $currency,
		);
		if ( $is_session ) {
			// The buyer of the e-invoice, as Checkout collected it.
			Counterfoil_Documents::remember_details(
				self::$gateway,
				$intent,
				array(
					'buyer' => self::buyer_of( $object ),
					'lines' => null,
				)
			);
		}
		$resp = Counterfoil_Rest::respond( Counterfoil_Invoices::for_payment( $payment, self::$series ), $payment );
		$data = $resp->get_data();
		if ( is_array( $data ) ) {
			$data['event_id']   = isset( $event['id'] ) ? (string) $event['id'] : '';
			$data['event_type'] = $type;
			$resp->set_data( $data );
		}
		return $resp;
	}

	/**
	 * The e-invoice's buyer from a Checkout Session's `customer_details`
	 * (name, address, e-mail, the first VAT id among `tax_ids`), in the party
	 * shape, or null when it names nobody.
	 *
	 * @param array $session The session.
	 * @return array|null
	 */
	public static function buyer_of( array $session ) {
		$c = isset( $session['customer_details'] ) && is_array( $session['customer_details'] ) ? $session['customer_details'] : array();
		if ( empty( $c['name'] ) || ! is_string( $c['name'] ) ) {
			return null;
		}
		$a     = isset( $c['address'] ) && is_array( $c['address'] ) ? $c['address'] : array();
		$text  = function ( $v ) {
			return is_string( $v ) && '' !== trim( $v ) ? substr( trim( $v ), 0, 255 ) : null;
		};
		$buyer = array(
			'name'     => $text( $c['name'] ),
			'street'   => $text( trim( ( isset( $a['line1'] ) ? (string) $a['line1'] : '' ) . ' ' . ( isset( $a['line2'] ) ? (string) $a['line2'] : '' ) ) ),
			'city'     => $text( isset( $a['city'] ) ? $a['city'] : null ),
			'postcode' => $text( isset( $a['postal_code'] ) ? $a['postal_code'] : null ),
			'country'  => $text( isset( $a['country'] ) ? strtoupper( (string) $a['country'] ) : null ),
			'email'    => $text( isset( $c['email'] ) ? $c['email'] : null ),
		);
		foreach ( isset( $c['tax_ids'] ) && is_array( $c['tax_ids'] ) ? $c['tax_ids'] : array() as $tax_id ) {
			if ( is_array( $tax_id ) && isset( $tax_id['type'], $tax_id['value'] ) && in_array( $tax_id['type'], array( 'eu_vat', 'gb_vat', 'ch_vat', 'no_vat' ), true ) ) {
				$buyer['vat_id'] = $text( $tax_id['value'] );
				break;
			}
		}
		if ( null !== $buyer['email'] ) {
			$buyer['electronic_address']        = $buyer['email'];
			$buyer['electronic_address_scheme'] = 'EM';
		}
		return array_filter(
			$buyer,
			function ( $v ) {
				return null !== $v;
			}
		);
	}

	/**
	 * The issuer of a payment: its `metadata.counterfoil_user_id`; else the
	 * issuer already recorded for this intent (the other event of the same
	 * payment carried it); else the site's default issuer; else a 503 that
	 * asks the owner to set one (Stripe delivers again meanwhile).
	 *
	 * @param array  $object The session or intent.
	 * @param string $intent PaymentIntent id.
	 * @return int|WP_Error
	 */
	private static function issuer( array $object, $intent ) {
		$meta = isset( $object['metadata']['counterfoil_user_id'] ) ? $object['metadata']['counterfoil_user_id'] : null;
		if ( null !== $meta && '' !== $meta ) {
			if ( ! is_string( $meta ) || ! preg_match( '/^[0-9]{1,18}$/', $meta ) ) {
				return new WP_Error( 'counterfoil_invalid_payment', __( 'metadata.counterfoil_user_id must be a user id: digits only.', 'counterfoil' ), array( 'status' => 400 ) );
			}
			return (int) $meta;
		}
		$recorded = Counterfoil_Invoices::payment_row( self::$gateway, $intent );
		$owner    = $recorded ? Counterfoil_Invoices::issuer_of( (string) $recorded->scope_key ) : null;
		if ( null !== $owner && ctype_digit( $owner ) ) {
			return (int) $owner;
		}
		$default = self::default_issuer();
		if ( null !== $default ) {
			return $default;
		}
		return new WP_Error(
			'counterfoil_stripe_no_issuer',
			__( 'The payment names no issuer (metadata.counterfoil_user_id) and the site has no default Stripe issuer (Settings → Invoice numbers). Stripe delivers it again; set one.', 'counterfoil' ),
			array(
				'status'      => 503,
				'retry_after' => 600,
				'detail'      => 'a Stripe payment arrived without metadata.counterfoil_user_id and no default Stripe issuer is set',
				'cause'       => 'stripe-no-issuer',
			)
		);
	}

	/**
	 * A Stripe refund's own lines for its credit note: the refund's metadata
	 * `counterfoil_lines`, a JSON list in the payment's line shape (as the
	 * refunds webhook's `lines`; Stripe keeps a metadata value to 500
	 * characters), kept under the refund's id (the first delivery's). Lines
	 * that are not what they must be are logged and left out: the credit
	 * note then states its invoice's VAT as without them (or is refused
	 * naming BG-25), never a Stripe delivery refused for them.
	 *
	 * @param array $refund Stripe's refund object.
	 */
	private static function remember_refund_lines( array $refund ) {
		$id   = self::id_of( $refund );
		$json = isset( $refund['metadata']['counterfoil_lines'] ) && is_string( $refund['metadata']['counterfoil_lines'] ) ? $refund['metadata']['counterfoil_lines'] : null;
		if ( null === $id || null === $json ) {
			return;
		}
		$details = Counterfoil_Documents::details_of( array( 'lines' => json_decode( $json, true ) ) );
		if ( is_wp_error( $details ) || empty( $details['lines'] ) ) {
			Counterfoil_Log::once( 'stripe-refund-lines:' . $id, sprintf( 'Stripe refund %s: its metadata counterfoil_lines are not lines (%s): left out', $id, is_wp_error( $details ) ? $details->get_error_message() : 'none' ) );
			return;
		}
		Counterfoil_Documents::remember_details( self::$gateway, Counterfoil_Documents::refund_key( $id ), $details );
	}

	/**
	 * A refund event of a payment this site recorded (any other is ignored,
	 * `not_invoiced`): each refund is recorded beside its payment, one row
	 * per refund id with its latest status (the event created last wins; at
	 * the same second the later state: pending, requires_action, succeeded,
	 * failed, canceled), and every refund that stands as succeeded gets its
	 * credit note (Counterfoil_Credit_Notes: once per refund id). A
	 * `charge.refunded` without its refunds listed (API versions from
	 * 2022-11-15 leave them out) records the charge's refunded total; its
	 * credit notes come with the refund.* events. The refunded total is the
	 * sum of the succeeded refunds (a refund that fails or is reversed stops
	 * counting); `counterfoil_payment_refunded` fires when it changes.
	 *
	 * @param string $type   The event's type.
	 * @param array  $object The charge or the refund.
	 * @param array  $event  The event.
	 * @return WP_REST_Response
	 */
	private static function refund( $type, array $object, array $event ) {
		$is_refund = isset( $object['object'] ) && 'refund' === $object['object'];
		$intent    = self::id_of( isset( $object['payment_intent'] ) ? $object['payment_intent'] : null );
		$charge    = $is_refund ? self::id_of( isset( $object['charge'] ) ? $object['charge'] : null ) : self::id_of( $object );
		if ( null === $intent || null === $charge ) {
			return self::ignored( $type, 'no_payment_intent' );
		}
		$payment = Counterfoil_Invoices::payment_row( self::$gateway, $intent );
		if ( ! $payment ) {
			// A charge this site never recorded (Billing, Dashboard, another
			// site on the account): nothing to refund here, no action.
			return self::ignored( $type, 'not_invoiced' );
		}
		if ( $is_refund ) {
			$refunds = array( $object );
		} elseif ( isset( $object['refunds']['data'] ) && is_array( $object['refunds']['data'] ) ) {
			$refunds = $object['refunds']['data'];
		} else {
			$refunds = null;
		}
		$as_of = isset( $event['created'] ) && is_int( $event['created'] ) && $event['created'] > 0 ? $event['created'] : time();
		foreach ( (array) $refunds as $refund ) {
			self::remember_refund_lines( is_array( $refund ) ? $refund : array() );
		}
		try {
			// One delivery at a time per payment: the payment row's lock is
			// held while the refunded total is read, the refund rows are
			// written and the total is read again, so a change is seen (and
			// announced) by exactly one delivery however many arrive at once.
			// On a connection that never reconnects, so a lost connection
			// cannot leave rows written outside the lock.
			list( $before, $rows, $after ) = Counterfoil_Wpdb_Transaction::run(
				function ( wpdb $db ) use ( $intent, $refunds, $object, $charge, $as_of ) {
					self::lock_payment( $db, $intent );
					$rows   = array();
					$before = self::refunded_minor( $db, $intent );
					if ( null === $refunds ) {
						$minor  = isset( $object['amount_refunded'] ) ? $object['amount_refunded'] : null;
						$rows[] = self::refund_row( $db, $intent, $charge, 'charge_total', $minor, isset( $object['currency'] ) ? $object['currency'] : null, $as_of );
					}
					foreach ( (array) $refunds as $refund ) {
						$id = is_array( $refund ) ? self::id_of( $refund ) : null;
						if ( null === $id || ! isset( $refund['status'] ) || ! in_array( $refund['status'], self::REFUND_STATES, true ) ) {
							throw new InvalidArgumentException( __( 'A refund without an id or a known status.', 'counterfoil' ) ); // phpcs:ignore WordPress.Security.EscapeOutput.ExceptionNotEscaped -- the message is text (the log, a JSON answer or a WP_Error), escaped where a page prints it.
						}
						$rows[] = self::refund_row( $db, $intent, $id, $refund['status'], isset( $refund['amount'] ) ? $refund['amount'] : null, isset( $refund['currency'] ) ? $refund['currency'] : null, $as_of ) + array( 'reason' => isset( $refund['reason'] ) && is_string( $refund['reason'] ) ? $refund['reason'] : '' );
					}
					return array( $before, $rows, self::refunded_minor( $db, $intent ) );
				}
			);
		} catch ( InvalidArgumentException $e ) {
			return self::bad( $e->getMessage() );
		} catch ( RuntimeException $e ) {
			return Counterfoil_Rest::respond(
				new WP_Error(
					'counterfoil_unavailable',
					__( 'The refund could not be recorded now; Stripe delivers it again.', 'counterfoil' ),
					array(
						'status'      => 503,
						'retry_after' => 60,
						'detail'      => 'recording a Stripe refund failed: ' . $e->getMessage(),
						'cause'       => 'stripe-refund',
					)
				),
				array()
			);
		}
		$credit_notes = array();
		foreach ( $rows as $row ) {
			if ( 'succeeded' !== $row['status_now'] ) {
				if ( in_array( $row['status_now'], array( 'failed', 'canceled' ), true ) && self::has_credit_note( $row['ref'] ) ) {
					Counterfoil_Log::once( 'stripe:reversed:' . $row['ref'], sprintf( 'Stripe refund %s of %s is %s after its credit note was issued: the credit note stands (it is immutable); invoice the amount again if it is owed', $row['ref'], $intent, $row['status_now'] ) );
				}
				continue;
			}
			$note = Counterfoil_Credit_Notes::for_refund(
				array(
					'gateway'        => self::$gateway,
					'refund_id'      => $row['ref'],
					'transaction_id' => $intent,
					'amount'         => $row['amount_now'],
					'currency'       => $row['currency'],
					'reason'         => isset( $row['reason'] ) ? $row['reason'] : '',
				)
			);
			if ( is_wp_error( $note ) ) {
				$data = $note->get_error_data();
				if ( isset( $data['status'] ) && (int) $data['status'] >= 500 ) {
					return Counterfoil_Rest::respond( $note, array() );
				}
				// Refused for good (more than is left, a void invoice): no
				// retry makes it right; the owner reads why in the log.
				Counterfoil_Log::once( 'stripe:credit-note:' . $row['ref'], sprintf( 'no credit note for Stripe refund %s of %s: %s', $row['ref'], $intent, $note->get_error_message() ) );
				$credit_notes[] = array(
					'refund_id' => $row['ref'],
					'refused'   => $note->get_error_code(),
					'message'   => $note->get_error_message(),
				);
				continue;
			}
			$credit_notes[] = array(
				'refund_id'   => $row['ref'],
				'credit_note' => $note['number'],
				'amount'      => $note['amount'],
				'refers_to'   => $note['refers_to'],
				'created'     => $note['created'],
			);
		}
		$currency = $rows ? $rows[0]['currency'] : (string) $payment->currency;
		$paid     = null === $payment->amount ? null : Counterfoil_Rules::minor_units( (string) $payment->amount, (string) $payment->currency );
		$refund   = array(
			'gateway'         => self::$gateway,
			'transaction_id'  => $intent,
			'charge'          => $charge,
			'amount_refunded' => Counterfoil_Rules::amount_from_minor_units( $after, $currency )[0],
			'currency'        => strtoupper( $currency ),
			'fully_refunded'  => null !== $paid && $after >= $paid,
			'invoice_id'      => null !== $payment->post_id ? (int) $payment->post_id : null,
			'scope_key'       => (string) $payment->scope_key,
			'sequence'        => null !== $payment->number ? (int) $payment->number : null,
		);
		$changed = $after !== $before;
		if ( $changed ) {
			/**
			 * A payment's refunded total changed: it grew (a refund
			 * succeeded) or shrank (a refund failed or was reversed). Fires
			 * once per change: a redelivered or older event does not fire it
			 * again. The invoice and its number never change; a refund's
			 * credit note is announced by counterfoil_credit_note_created.
			 *
			 * @param array $refund gateway, transaction_id, charge, amount_refunded
			 *                      (the total of the succeeded refunds), currency,
			 *                      fully_refunded, invoice_id / scope_key / sequence.
			 */
			do_action( 'counterfoil_payment_refunded', $refund );
		}
		return new WP_REST_Response(
			array(
				'event_id'     => isset( $event['id'] ) ? (string) $event['id'] : '',
				'event_type'   => $type,
				'refund'       => $refund,
				'changed'      => $changed,
				'credit_notes' => $credit_notes,
			),
			200
		);
	}

	/**
	 * Records one refund (or a charge's refunded total) unless a later event
	 * recorded it already, and reads back what stands.
	 *
	 * @return array ref, status_now, amount_now, currency.
	 * @throws InvalidArgumentException Bad amount, currency or id.
	 * @throws RuntimeException The database refused.
	 */
	private static function refund_row( wpdb $wpdb, $intent, $ref, $status, $minor, $currency, $as_of ) {
		list( $amount, $code ) = Counterfoil_Rules::amount_from_minor_units( $minor, $currency );
		Counterfoil_Rules::payment_ref( self::$gateway, $ref );
		if ( strlen( $ref ) > 191 ) {
			throw new InvalidArgumentException( 'invalid argument `refund`: the id is longer than 191 bytes' );
		}
		$t    = Counterfoil_Schema::tables();
		$now  = current_time( 'mysql', true );
		// Every assignment reads the old as_of and status (assignments run
		// left to right: status and as_of move last), so a row changes only
		// for a later event, or one of the same second with a later state.
		$later = $wpdb->prepare( "(%d > as_of OR (%d = as_of AND FIELD(%s, 'charge_total', 'pending', 'requires_action', 'succeeded', 'failed', 'canceled') >= FIELD(status, 'charge_total', 'pending', 'requires_action', 'succeeded', 'failed', 'canceled')))", $as_of, $as_of, $status );
		// phpcs:disable WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name from Counterfoil_Schema::tables(); $later prepared above.
		$ok    = $wpdb->query( // phpcs:ignore WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- our own tables, which no WordPress API reads or writes.
			$wpdb->prepare(
				"INSERT INTO {$t['refunds']} (gateway, transaction_id, refund_ref, amount_minor, amount, currency, fully, status, as_of, created_at, updated_at)
				VALUES (%s, %s, %s, %d, %s, %s, 0, %s, %d, %s, %s)
				ON DUPLICATE KEY UPDATE
					updated_at = IF({$later}, VALUES(updated_at), updated_at),
					amount_minor = IF({$later}, VALUES(amount_minor), amount_minor),
					amount = IF({$later}, VALUES(amount), amount),
					currency = IF({$later}, VALUES(currency), currency),
					status = IF({$later}, VALUES(status), status),
					as_of = IF({$later}, VALUES(as_of), as_of)",
				self::$gateway,
				$intent,
				$ref,
				$minor,
				$amount,
				$code,
				$status,
				$as_of,
				$now,
				$now
			)
		);
		// phpcs:enable WordPress.DB.PreparedSQL.InterpolatedNotPrepared
		if ( false === $ok ) {
			throw new RuntimeException( $wpdb->last_error ); // phpcs:ignore WordPress.Security.EscapeOutput.ExceptionNotEscaped -- the message is text (the log, a JSON answer or a WP_Error), escaped where a page prints it.
		}
		$row = $wpdb->get_row( $wpdb->prepare( "SELECT status, amount, currency FROM {$t['refunds']} WHERE gateway = %s AND transaction_id = %s AND refund_ref = %s", self::$gateway, $intent, $ref ) ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared, WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- table name from Counterfoil_Schema::tables() (the prefix and a fixed name). Our own tables, which no WordPress API reads or writes.
		if ( ! $row ) {
			throw new RuntimeException( 'the refund row is gone' );
		}
		return array(
			'ref'        => $ref,
			'status_now' => (string) $row->status,
			'amount_now' => (string) $row->amount,
			'currency'   => (string) $row->currency,
		);
	}

	/**
	 * Locks the payment row of $intent in the transaction open on $wpdb (it
	 * exists: refund() answered `not_invoiced` otherwise).
	 *
	 * @param wpdb   $wpdb   The transaction's connection (Counterfoil_Wpdb_Transaction).
	 * @param string $intent PaymentIntent id.
	 * @throws RuntimeException When the database refuses (the caller rolls back).
	 */
	private static function lock_payment( wpdb $wpdb, $intent ) {
		$t      = Counterfoil_Schema::tables();
		$locked = $wpdb->get_var( $wpdb->prepare( "SELECT id FROM {$t['payments']} WHERE gateway = %s AND transaction_id = %s FOR UPDATE", self::$gateway, $intent ) ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared, WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- table name from Counterfoil_Schema::tables() (the prefix and a fixed name). Our own tables, which no WordPress API reads or writes.
		if ( null === $locked ) {
			throw new RuntimeException( '' !== $wpdb->last_error ? $wpdb->last_error : 'the payment row is gone' ); // phpcs:ignore WordPress.Security.EscapeOutput.ExceptionNotEscaped -- the message is text (the log, a JSON answer or a WP_Error), escaped where a page prints it.
		}
	}

	/**
	 * A payment's refunded total in smallest units: the sum of its succeeded
	 * refunds; while no refund is known one by one, its charge's total.
	 *
	 * @param string $intent PaymentIntent id.
	 * @return int
	 */
	private static function refunded_minor( wpdb $wpdb, $intent ) {
		$t    = Counterfoil_Schema::tables();
		$rows = $wpdb->get_results( $wpdb->prepare( "SELECT status, amount_minor FROM {$t['refunds']} WHERE gateway = %s AND transaction_id = %s", self::$gateway, $intent ) ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared, WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- table name from Counterfoil_Schema::tables() (the prefix and a fixed name). Our own tables, which no WordPress API reads or writes.
		$sum  = 0;
		$max  = 0;
		$each = false;
		foreach ( $rows as $row ) {
			if ( 'charge_total' === $row->status ) {
				$max = max( $max, (int) $row->amount_minor );
				continue;
			}
			$each = true;
			if ( 'succeeded' === $row->status ) {
				$sum += (int) $row->amount_minor;
			}
		}
		return $each ? $sum : $max;
	}

	/** Whether a refund id has its credit note's row. */
	private static function has_credit_note( $ref ) {
		global $wpdb;
		$t = Counterfoil_Schema::tables();
		return (bool) $wpdb->get_var( $wpdb->prepare( "SELECT 1 FROM {$t['payments']} WHERE gateway = %s AND transaction_id = %s AND refers_scope IS NOT NULL", self::$gateway, $ref ) ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared, WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- table name from Counterfoil_Schema::tables() (the prefix and a fixed name). Our own tables, which no WordPress API reads or writes.
	}

	/**
	 * A paid session of this shop that names no issuer while the site has no
	 * default one: recorded without a number (listed with the waiting
	 * payments, counted in Site Health) and answered 202, so Stripe stops
	 * delivering it and nothing is lost after its three days of retries;
	 * setting a default issuer numbers it (assign_waiting()).
	 *
	 * @return WP_REST_Response|WP_Error
	 */
	private static function wait_for_issuer( $intent, $amount, $currency, array $event, $type ) {
		$now     = counterfoil_local_period();
		$payment = array(
			'gateway'        => self::$gateway,
			'transaction_id' => $intent,
			'amount'         => $amount,
			'currency'       => $currency,
		);
		$held = Counterfoil_Invoices::hold_without_issuer( self::UNASSIGNED . ':' . $now[0], $payment );
		if ( is_wp_error( $held ) ) {
			return Counterfoil_Rest::respond( $held, $payment );
		}
		return new WP_REST_Response(
			array(
				'waiting'        => 'no_issuer',
				'message'        => __( 'The payment is recorded and waits for an issuer: set a default Stripe issuer (Settings → Invoice numbers) and it gets its number.', 'counterfoil' ),
				'gateway'        => self::$gateway,
				'transaction_id' => $intent,
				'event_id'       => isset( $event['id'] ) ? (string) $event['id'] : '',
				'event_type'     => $type,
			),
			202
		);
	}

	/**
	 * Numbers the payments that waited for an issuer, once the site's
	 * default issuer is set (hooked on the option's update).
	 *
	 * @param mixed $old   Previous value (or the option name, on add).
	 * @param mixed $value New value.
	 */
	public static function default_issuer_set( $old, $value ) {
		unset( $old );
		$issuer = is_scalar( $value ) ? (string) $value : '';
		if ( '' === $issuer || ! ctype_digit( $issuer ) ) {
			return;
		}
		$done = Counterfoil_Invoices::assign_waiting( self::UNASSIGNED, (int) $issuer );
		foreach ( $done['failed'] as $message ) {
			error_log( 'counterfoil: a Stripe payment waiting for an issuer was not numbered: ' . $message ); // phpcs:ignore WordPress.PHP.DevelopmentFunctions.error_log_error_log -- a payment left waiting: the site owner must know why.
		}
	}

	/**
	 * Why an event does not belong to this site's live books, or null when
	 * it does: a test-mode event (`livemode` false) never takes a live
	 * number; an event of another account (Connect: `account` other than
	 * the one set in `counterfoil_stripe_account`) is not this shop's.
	 *
	 * @param array $event The event.
	 * @return string|null
	 */
	private static function not_this_books( array $event ) {
		if ( empty( $event['livemode'] ) && ! get_option( self::TEST_MODE_OPTION ) ) {
			return 'test_mode';
		}
		$account = isset( $event['account'] ) && is_string( $event['account'] ) ? $event['account'] : '';
		if ( '' !== $account && (string) get_option( self::ACCOUNT_OPTION, '' ) !== $account ) {
			return 'other_account';
		}
		return null;
	}

	/**
	 * Whether a PaymentIntent was marked by this shop: it carries
	 * `metadata.counterfoil_user_id` and is not a Stripe Billing invoice's.
	 *
	 * @param array $intent The PaymentIntent.
	 * @return bool
	 */
	private static function carries_marker( array $intent ) {
		if ( ! empty( $intent['invoice'] ) ) {
			return false;
		}
		return isset( $intent['metadata'][ self::MARKER ] ) && '' !== $intent['metadata'][ self::MARKER ];
	}

	/** The id of an expanded object or an id string, or null. */
	private static function id_of( $value ) {
		if ( is_array( $value ) ) {
			$value = isset( $value['id'] ) ? $value['id'] : null;
		}
		return is_string( $value ) && '' !== $value ? $value : null;
	}

	/** 200 for an event this endpoint does not act on. */
	private static function ignored( $type, $why ) {
		return new WP_REST_Response(
			array(
				'ignored'    => $why,
				'event_type' => $type,
			),
			200
		);
	}

	/** 400 for event data this endpoint cannot use. */
	private static function bad( $message ) {
		return new WP_REST_Response(
			array(
				'code'    => 'counterfoil_invalid_event',
				'message' => $message,
			),
			400
		);
	}
}
