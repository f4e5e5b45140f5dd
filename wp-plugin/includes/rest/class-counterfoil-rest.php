<?php
/**
 * REST: POST /wp-json/counterfoil/v1/payments, for payment gateways, and
 * POST /wp-json/counterfoil/v1/refunds, a refund's credit note (body:
 * gateway, refund_id, the invoice as transaction_id — the payment's — or
 * invoice_id, optional amount, currency, reason; see
 * Counterfoil_Credit_Notes::for_refund). Both are signed alike.
 *
 * Authentication: an HMAC-SHA256 with the site's webhook secret of
 * "{timestamp}.{METHOD}.{host}.{route}.{raw body}" (the request's method,
 * its Host header in lower case, the REST route such as
 * `/counterfoil/v1/payments`), sent as `X-Counterfoil-Signature:
 * v2=<hex>`, and the Unix time as `X-Counterfoil-Timestamp`, which must be
 * within 5 minutes of the server's clock (an older or replayed request is
 * refused). Binding the method, host and route means a delivery cannot be
 * replayed to another site or route that shares the secret. The first form,
 * `sha256=<hex>` of "{timestamp}.{raw body}", is still accepted in this
 * release, with a notice in the log, unless the site refuses it
 * (REFUSE_LEGACY_OPTION, Settings → Invoice numbers): then a first-form
 * signature that is valid is answered 401 `counterfoil_legacy_signature`,
 * saying to sign with v2= (an invalid one gets the answer every bad
 * signature gets, so a prober learns nothing). The next minor release
 * refuses it by default.
 *
 * Answers: 201 created; 200 a repeated delivery, with the first answer's
 * invoice; 400 invalid input or a body over 64 KiB (checked before the
 * HMAC); 401 bad or stale signature (one message for every cause); 409 a
 * reused transaction id with another issuer, amount or currency, or a voided
 * number; 503 with Retry-After when the database is locked or unavailable,
 * the payment waits for its series, or no secret is configured. A 5xx body
 * says what to do and carries a request id; the detail is in the server log.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * REST routes.
 */
final class Counterfoil_Rest {
	const NAMESPACE_V1  = 'counterfoil/v1';
	const MAX_BODY      = 65536;
	const MAX_CLOCK_SKEW = 300;
	/** 1: the webhook refuses the first signature form (sha256=), accepting v2= only (default 0 in this release; the next minor release refuses it by default). */
	const REFUSE_LEGACY_OPTION = 'counterfoil_webhook_refuse_legacy_signature';

	/** Whether this site refuses the first signature form (sha256=). */
	public static function refuses_legacy_signature() {
		return 1 === (int) get_option( self::REFUSE_LEGACY_OPTION, 0 );
	}

	/** Registers the routes. */
	public static function register_routes() {
		register_rest_route(
			self::NAMESPACE_V1,
			'/payments',
			array(
				'methods'             => 'POST',
				'callback'            => array( __CLASS__, 'create_payment' ),
				'permission_callback' => array( __CLASS__, 'verify_signature' ),
			)
		);
		register_rest_route(
			self::NAMESPACE_V1,
			'/refunds',
			array(
				'methods'             => 'POST',
				'callback'            => array( __CLASS__, 'create_refund' ),
				'permission_callback' => array( __CLASS__, 'verify_signature' ),
			)
		);
	}

	/**
	 * Issues the credit note of a refund. Request: a signed JSON object —
	 * gateway, refund_id, transaction_id (the payment refunded) or
	 * invoice_id, amount, optional reason, optional lines (the refund's own
	 * lines for its credit note, the payment's line shape). Response: the credit note's
	 * number, amount and the invoice it corrects; 201 issued, 200 a
	 * repeated delivery (the same credit note), 400 bad input, 401 bad
	 * signature, 404 no invoice of this site matches, 409 more than what is
	 * left of the invoice or a reused refund id, 503 retry later.
	 *
	 * @param WP_REST_Request $request Request.
	 * @return WP_REST_Response
	 */
	public static function create_refund( $request ) {
		$refund = json_decode( $request->get_body(), true );
		if ( ! is_array( $refund ) ) {
			return self::respond( new WP_Error( 'counterfoil_invalid_json', __( 'The body must be a JSON object.', 'counterfoil' ), array( 'status' => 400 ) ), array() );
		}
		// A gateway's refund comes from the gateway that took the payment:
		// an invoice named by its post must have been paid through it (by
		// transaction id, the lookup itself matches the gateway). The
		// books' own credit notes (Counterfoil_Credit_Note_Admin) are not
		// refunds of a gateway and do not come this way.
		if ( isset( $refund['invoice_id'] ) && is_int( $refund['invoice_id'] ) ) {
			$paid_with = (string) get_post_meta( $refund['invoice_id'], '_counterfoil_gateway', true );
			$gateway   = isset( $refund['gateway'] ) && is_string( $refund['gateway'] ) ? $refund['gateway'] : '';
			if ( '' !== $paid_with && $paid_with !== $gateway ) {
				return self::respond( new WP_Error( 'counterfoil_refund_gateway_mismatch', __( 'The refund\'s gateway is not the one the invoice was paid through.', 'counterfoil' ), array( 'status' => 409 ) ), $refund );
			}
		}
		// The refund's own lines for its credit note: checked before
		// anything is recorded, kept under the refund's id (the first
		// delivery's); a refund carries no buyer (its invoice's is used).
		if ( isset( $refund['lines'] ) ) {
			$details = Counterfoil_Documents::details_of( array( 'lines' => $refund['lines'] ) );
			if ( is_wp_error( $details ) ) {
				return self::respond( $details, $refund );
			}
			if ( isset( $refund['gateway'], $refund['refund_id'] ) && is_string( $refund['gateway'] ) && is_string( $refund['refund_id'] ) ) {
				try {
					Counterfoil_Rules::payment_ref( $refund['gateway'], $refund['refund_id'] );
					if ( strlen( Counterfoil_Documents::refund_key( $refund['refund_id'] ) ) > 191 ) {
						return self::respond( new WP_Error( 'counterfoil_invalid_refund', __( 'A refund that carries lines has a refund_id of at most 184 bytes.', 'counterfoil' ), array( 'status' => 400 ) ), $refund );
					}
					Counterfoil_Documents::remember_details( $refund['gateway'], Counterfoil_Documents::refund_key( $refund['refund_id'] ), $details );
				} catch ( InvalidArgumentException $e ) {
					unset( $e ); // for_refund() answers 400 below.
				}
			}
		}
		return self::respond_credit_note( Counterfoil_Credit_Notes::for_refund( $refund ), $refund );
	}

	/**
	 * The answer to a refund: the credit note's number, its amount and the
	 * invoice it corrects (201 created, 200 a repeat), or the error's.
	 *
	 * @param array|WP_Error $result Counterfoil_Credit_Notes::for_refund()'s answer.
	 * @param array          $refund The refund (gateway, refund_id).
	 * @return WP_REST_Response
	 */
	public static function respond_credit_note( $result, array $refund ) {
		if ( is_wp_error( $result ) ) {
			return self::respond( $result, $refund );
		}
		return new WP_REST_Response(
			array(
				'credit_note_id' => $result['post']->ID,
				'credit_note'    => $result['number'],
				'sequence'       => $result['sequence'],
				'scope_key'      => $result['scope_key'],
				'amount'         => $result['amount'],
				'currency'       => $result['currency'],
				'refers_to'      => $result['refers_to'],
				'invoice_id'     => $result['invoice_id'],
				'gateway'        => $refund['gateway'],
				'refund_id'      => $refund['refund_id'],
				'repeated'       => ! $result['created'],
			),
			$result['created'] ? 201 : 200
		);
	}

	/**
	 * The webhook secret: the COUNTERFOIL_WEBHOOK_SECRET constant, else the
	 * option generated at activation.
	 */
	public static function secret() {
		if ( self::secret_from_constant() ) {
			return (string) COUNTERFOIL_WEBHOOK_SECRET;
		}
		return (string) get_option( 'counterfoil_webhook_secret', '' );
	}

	/** Whether the secret comes from the COUNTERFOIL_WEBHOOK_SECRET constant. */
	public static function secret_from_constant() {
		return defined( 'COUNTERFOIL_WEBHOOK_SECRET' ) && COUNTERFOIL_WEBHOOK_SECRET;
	}

	/**
	 * The first form of the signature (deprecated: accepted in this release
	 * only): over the timestamp and the body alone.
	 *
	 * @param string $timestamp Unix time, as sent.
	 * @param string $body      Raw body.
	 * @param string $secret    Secret.
	 * @return string
	 */
	public static function sign( $timestamp, $body, $secret ) {
		return 'sha256=' . hash_hmac( 'sha256', $timestamp . '.' . $body, $secret );
	}

	/**
	 * The signature a sender must send: over the timestamp, the method, the
	 * host, the route and the body.
	 *
	 * @param string $timestamp Unix time, as sent.
	 * @param string $method    HTTP method (POST).
	 * @param string $host      The Host header (case does not matter).
	 * @param string $route     The REST route, e.g. /counterfoil/v1/payments.
	 * @param string $body      Raw body.
	 * @param string $secret    Secret.
	 * @return string
	 */
	public static function sign_v2( $timestamp, $method, $host, $route, $body, $secret ) {
		return 'v2=' . hash_hmac( 'sha256', implode( '.', array( $timestamp, strtoupper( $method ), strtolower( $host ), $route, $body ) ), $secret );
	}

	/**
	 * permission_callback: a body of at most MAX_BODY bytes (checked before
	 * any HMAC is computed), a configured secret (503 otherwise: the site is
	 * not ready, the gateway delivers again), and a valid, fresh signature.
	 * Every signature failure gets the same answer, so that nothing tells a
	 * prober which part was wrong.
	 *
	 * @param WP_REST_Request $request Request.
	 * @return true|WP_Error
	 */
	public static function verify_signature( $request ) {
		if ( strlen( $request->get_body() ) > self::MAX_BODY ) {
			return new WP_Error( 'counterfoil_too_large', __( 'The body is larger than 64 KiB.', 'counterfoil' ), array( 'status' => 400 ) );
		}
		$secret = self::secret();
		if ( '' === $secret ) {
			Counterfoil_Log::once( 'webhook:no-secret', 'a payment callback arrived but no webhook secret is set (Settings → Invoice numbers)' );
			return new WP_Error( 'counterfoil_not_configured', __( 'The payment webhook is not configured yet.', 'counterfoil' ), array( 'status' => 503 ) );
		}
		$timestamp = (string) $request->get_header( 'x_counterfoil_timestamp' );
		$signature = (string) $request->get_header( 'x_counterfoil_signature' );
		$old_form  = 0 === strpos( $signature, 'sha256=' );
		$expected  = $old_form
			? self::sign( $timestamp, $request->get_body(), $secret )
			: self::sign_v2( $timestamp, $request->get_method(), (string) $request->get_header( 'host' ), $request->get_route(), $request->get_body(), $secret );
		$valid     = '' !== $signature
			&& preg_match( '/^[0-9]{1,12}$/', $timestamp )
			&& abs( time() - (int) $timestamp ) <= self::MAX_CLOCK_SKEW
			&& hash_equals( $expected, $signature );
		if ( $valid && $old_form && self::refuses_legacy_signature() ) {
			// The sender knows the secret (the signature is valid): it is
			// told what to change; nobody else learns anything from this.
			Counterfoil_Log::once( 'webhook:sha256-refused', 'a payment callback signed in the first form (sha256=) was refused, as the site asks (counterfoil_webhook_refuse_legacy_signature): the sender must sign with v2= over the timestamp, method, host, route and body (docs/wordpress.md)' );
			return new WP_Error( 'counterfoil_legacy_signature', __( 'This site refuses the first signature form (sha256=). Sign with v2=: an HMAC-SHA256 of "{timestamp}.{METHOD}.{host}.{route}.{raw body}" with the webhook secret.', 'counterfoil' ), array( 'status' => 401 ) );
		}
		if ( $valid && $old_form ) {
			Counterfoil_Log::once( 'webhook:sha256', 'a payment callback was signed in the first form (sha256=, over the timestamp and body only), which the next minor release refuses by default (and this site refuses with counterfoil_webhook_refuse_legacy_signature on): sign with v2= over the timestamp, method, host, route and body (docs/wordpress.md)' );
		}
		if ( ! $valid ) {
			return new WP_Error( 'counterfoil_unauthorized', __( 'The request is not signed with this site\'s webhook secret, or its timestamp is more than 5 minutes off.', 'counterfoil' ), array( 'status' => 401 ) );
		}
		return true;
	}

	/**
	 * A payment that names a gateway whose payments reach the site through
	 * an integration of its own, which verifies them: `stripe` and
	 * `stripe_test` while the Stripe endpoint is set up (a signing secret),
	 * `woocommerce` always. On this webhook such a name would let a bridge
	 * take the key (gateway, transaction id) of a payment the integration
	 * numbers: 400, nothing recorded.
	 *
	 * @param array $payment The payment.
	 * @return WP_Error|null
	 */
	private static function reserved_gateway( array $payment ) {
		$gateway  = isset( $payment['gateway'] ) && is_string( $payment['gateway'] ) ? $payment['gateway'] : '';
		$reserved = array( 'woocommerce' );
		if ( '' !== Counterfoil_Stripe::secret() || '' !== Counterfoil_Stripe::test_secret() ) {
			$reserved[] = Counterfoil_Stripe::GATEWAY;
			$reserved[] = Counterfoil_Stripe::TEST_GATEWAY;
		}
		if ( ! in_array( $gateway, $reserved, true ) ) {
			return null;
		}
		/* translators: %s: the gateway name */
		return new WP_Error( 'counterfoil_reserved_gateway', sprintf( __( 'The gateway name `%s` belongs to an integration that receives its own payments on this site; use another name for payments sent to this webhook.', 'counterfoil' ), $gateway ), array( 'status' => 400 ) );
	}

	/**
	 * Creates the invoice of a payment. Request: a JSON object — gateway
	 * (`[a-z0-9_-]`), transaction_id, user_id (the issuer; 0 the shop),
	 * amount (a decimal string), currency (ISO 4217), optional year, buyer
	 * and lines (the e-invoice's, docs/einvoice.md) — signed with the
	 * headers X-Counterfoil-Timestamp and X-Counterfoil-Signature (v2=).
	 * Response: invoice_id, number, sequence, scope_key, gateway,
	 * transaction_id, repeated, backend; 201 created, 200 the same payment
	 * again (the first delivery's invoice), 400 bad input
	 * (counterfoil_invalid_json, counterfoil_invalid_payment,
	 * counterfoil_reserved_gateway), 401 bad signature, 409 a reused
	 * transaction id or a voided number, 503 with Retry-After when the
	 * database is busy, the payment waits for its series or numbering is
	 * paused on a copy (code and message in the body, and a request id).
	 *
	 * @param WP_REST_Request $request Request.
	 * @return WP_REST_Response|WP_Error
	 */
	public static function create_payment( $request ) {
		$started = microtime( true );
		$payment = json_decode( $request->get_body(), true );
		if ( ! is_array( $payment ) ) {
			return new WP_Error( 'counterfoil_invalid_json', __( 'The body must be a JSON object.', 'counterfoil' ), array( 'status' => 400 ) );
		}
		$reserved = self::reserved_gateway( $payment );
		if ( null !== $reserved ) {
			return self::respond( $reserved, $payment );
		}
		// The buyer and the lines for the e-invoice: checked before anything
		// is recorded, kept (the first delivery's) before the number.
		$details = Counterfoil_Documents::details_of( $payment );
		if ( is_wp_error( $details ) ) {
			return self::respond( $details, $payment );
		}
		if ( isset( $payment['gateway'], $payment['transaction_id'] ) && is_string( $payment['gateway'] ) && is_string( $payment['transaction_id'] ) ) {
			try {
				Counterfoil_Rules::payment_ref( $payment['gateway'], $payment['transaction_id'] );
				Counterfoil_Documents::remember_details( $payment['gateway'], $payment['transaction_id'], $details );
			} catch ( InvalidArgumentException $e ) {
				unset( $e ); // for_payment() answers 400 below.
			}
		}
		$result = Counterfoil_Invoices::for_payment( $payment );
		$resp   = self::respond( $result, $payment );
		if ( is_wp_error( $result ) ) {
			return $resp;
		}
		$total = microtime( true ) - ( isset( $_SERVER['REQUEST_TIME_FLOAT'] ) ? (float) $_SERVER['REQUEST_TIME_FLOAT'] : $started );
		$resp->header( 'Server-Timing', sprintf( 'allocate;dur=%.3f, total;dur=%.3f', Counterfoil_Timing::get( 'allocate' ) * 1000, $total * 1000 ) );
		return $resp;
	}

	/**
	 * The answer to a payment delivery (ours or a gateway's own webhook):
	 * 201 created, 200 a repeat with the first delivery's invoice, or the
	 * error's status; a 5xx says what to do and carries a request id (the
	 * detail goes to the server log, once per cause), with Retry-After when
	 * the error names one.
	 *
	 * @param array|WP_Error $result  Counterfoil_Invoices::for_payment()'s answer.
	 * @param array          $payment The payment (gateway, transaction_id).
	 * @return WP_REST_Response
	 */
	public static function respond( $result, array $payment ) {
		if ( is_wp_error( $result ) ) {
			$data   = $result->get_error_data();
			$status = isset( $data['status'] ) ? (int) $data['status'] : 500;
			$body   = array(
				'code'    => $result->get_error_code(),
				'message' => $result->get_error_message(),
			);
			if ( $status >= 500 ) {
				// The gateway learns what to do and a request id; the detail
				// (the database's words, hosts, a hook's exception) goes to
				// the server log, once per cause.
				$body['request_id'] = Counterfoil_Log::request_id();
				if ( ! empty( $data['detail'] ) ) {
					Counterfoil_Log::once( $result->get_error_code() . '|' . ( isset( $data['cause'] ) ? $data['cause'] : '' ), $data['detail'] );
				}
			}
			$resp = new WP_REST_Response( $body, $status );
			if ( ! empty( $data['retry_after'] ) ) {
				$resp->header( 'Retry-After', (string) (int) $data['retry_after'] );
			}
			return $resp;
		}
		return new WP_REST_Response(
			array(
				'invoice_id'     => $result['post']->ID,
				'number'         => $result['number'],
				'sequence'       => $result['sequence'],
				'scope_key'      => $result['scope_key'],
				'gateway'        => $payment['gateway'],
				'transaction_id' => $payment['transaction_id'],
				'repeated'       => ! $result['created'],
				'backend'        => counterfoil_backend()->name(), // Built: it answered above.
			),
			$result['created'] ? 201 : 200
		);
	}
}
