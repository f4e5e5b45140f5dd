<?php
/**
 * The payment flow: one invoice per payment, every number accounted for.
 *
 * Order (design.md §2 rules 4, 5, 8):
 * 1. the backend records the payment row, allocates and records the number
 *    as reserved, in one transaction, and commits (a repeated delivery finds
 *    the first delivery's row and number);
 * 2. here, under a row lock on the number's registry row (SELECT … FOR
 *    UPDATE), the invoice post is created and the number marked issued, in
 *    one transaction on $wpdb. A concurrent delivery waits on that lock and
 *    then finds the invoice; a failure rolls back the post and leaves the
 *    number reserved for the payment, so a retry completes it with the same
 *    number.
 *
 * A number becomes void only through void_number(), with a reason.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * Invoices and the registry.
 */
final class Counterfoil_Invoices {
	const POST_TYPE = 'invoice';

	/** Registers the invoice post type. */
	public static function register_post_type() {
		register_post_type(
			self::POST_TYPE,
			array(
				'labels'          => array(
					'name'          => __( 'Invoices', 'counterfoil' ),
					'singular_name' => __( 'Invoice', 'counterfoil' ),
				),
				'public'          => false,
				'show_ui'         => true,
				'show_in_menu'    => true,
				'show_in_rest'    => false,
				'menu_icon'       => 'dashicons-media-spreadsheet',
				'supports'        => array( 'title' ),
				'capability_type' => 'post',
				'capabilities'    => array( 'create_posts' => 'do_not_allow' ),
				'map_meta_cap'    => true,
			)
		);
	}

	/**
	 * Validates a payment array.
	 *
	 * @param mixed $payment Payment: gateway, transaction_id, user_id, and
	 *                       optionally year, amount, currency.
	 * @return array|WP_Error The normalised payment, or a 400 error.
	 */
	public static function validate_payment( $payment ) {
		$bad = function ( $message ) {
			return new WP_Error( 'counterfoil_invalid_payment', $message, array( 'status' => 400 ) );
		};
		if ( ! is_array( $payment ) ) {
			return $bad( __( 'The payment must be an object.', 'counterfoil' ) );
		}
		foreach ( array( 'gateway', 'transaction_id' ) as $key ) {
			if ( ! isset( $payment[ $key ] ) || ! is_string( $payment[ $key ] ) ) {
				/* translators: %s: field name */
				return $bad( sprintf( __( 'The field %s is required and must be a string.', 'counterfoil' ), $key ) );
			}
		}
		// The gateway and transaction id rules are the backend's (the core's
		// PaymentRef, or Counterfoil_Rules::payment_ref): checked by
		// record_payment before it writes anything, answered with 400.
		if ( ! isset( $payment['user_id'] ) || ! is_int( $payment['user_id'] ) || $payment['user_id'] < 0 ) {
			return $bad( __( 'The field user_id is required and must be a whole number, 0 or more.', 'counterfoil' ) );
		}
		$year = isset( $payment['year'] ) ? $payment['year'] : (int) gmdate( 'Y' );
		if ( ! is_int( $year ) || $year < 1 || $year > 9999 ) {
			return $bad( __( 'The field year must be a whole number from 1 to 9999.', 'counterfoil' ) );
		}
		$amount = isset( $payment['amount'] ) ? $payment['amount'] : null;
		if ( null !== $amount && ( ! is_string( $amount ) || ! preg_match( '/^[0-9]{1,12}(\.[0-9]{1,4})?$/', $amount ) ) ) {
			return $bad( __( 'The field amount must be a decimal string such as "19.99".', 'counterfoil' ) );
		}
		$currency = isset( $payment['currency'] ) ? $payment['currency'] : null;
		if ( null !== $currency && ( ! is_string( $currency ) || ! preg_match( '/^[A-Z]{3}$/', $currency ) ) ) {
			return $bad( __( 'The field currency must be a three-letter ISO code such as "EUR".', 'counterfoil' ) );
		}
		return array(
			'gateway'        => $payment['gateway'],
			'transaction_id' => $payment['transaction_id'],
			'user_id'        => $payment['user_id'],
			'year'           => $year,
			'amount'         => $amount,
			'currency'       => $currency,
		);
	}

	/**
	 * Creates (or finds) the invoice of a payment.
	 *
	 * @param array $payment See validate_payment().
	 * @return array|WP_Error post, number (rendered), sequence, scope_key, created.
	 */
	public static function for_payment( $payment ) {
		$payment = self::validate_payment( $payment );
		if ( is_wp_error( $payment ) ) {
			return $payment;
		}
		$backend = counterfoil_backend();
		$started = microtime( true );
		try {
			$scope  = $payment['user_id'] . ':' . $payment['year'];
			$record = $backend->record_payment( $scope, $payment['gateway'], $payment['transaction_id'], $payment['amount'], $payment['currency'] );
		} catch ( Throwable $e ) {
			return self::error_from( $e, $payment );
		} finally {
			Counterfoil_Timing::add( 'allocate', microtime( true ) - $started );
		}
		$year     = (int) substr( strrchr( $record['scope_key'], ':' ), 1 );
		$rendered = $backend->format( (int) $record['number'], $year > 0 ? $year : $payment['year'], (int) gmdate( 'n' ) );
		$done     = self::complete( $record, $payment, $rendered );
		if ( is_wp_error( $done ) ) {
			return $done;
		}
		return array(
			'post'      => get_post( $done['post_id'] ),
			'number'    => $rendered,
			'sequence'  => (int) $record['number'],
			'scope_key' => $record['scope_key'],
			'created'   => $done['created'],
		);
	}

	/**
	 * Phase 2: creates the post and marks the number issued, under the
	 * registry row's lock.
	 */
	private static function complete( array $record, array $payment, $rendered ) {
		global $wpdb;
		$t = Counterfoil_Schema::tables();
		$wpdb->query( 'START TRANSACTION' );
		try {
			$row = $wpdb->get_row(
				$wpdb->prepare( "SELECT status, post_id FROM {$t['numbers']} WHERE scope_key = %s AND number = %d FOR UPDATE", $record['scope_key'], $record['number'] )
			);
			if ( ! $row ) {
				throw new RuntimeException( 'the registry row of this payment is missing: ' . $wpdb->last_error );
			}
			if ( 'issued' === $row->status && $row->post_id ) {
				$wpdb->query( 'COMMIT' );
				return array(
					'post_id' => (int) $row->post_id,
					'created' => false,
				);
			}
			if ( 'void' === $row->status ) {
				$wpdb->query( 'COMMIT' );
				return new WP_Error( 'counterfoil_void', __( 'The number of this payment was voided; no invoice is created.', 'counterfoil' ), array( 'status' => 409 ) );
			}
			/**
			 * Fires after the number is committed and before its invoice post
			 * is created. A callback that throws makes the request fail with
			 * 503; the number stays reserved and a retry completes it.
			 */
			do_action( 'counterfoil_before_invoice_post', $record, $payment );
			$user    = get_userdata( $payment['user_id'] );
			$post_id = wp_insert_post(
				apply_filters(
					'counterfoil_invoice_post_data',
					array(
						'post_type'   => self::POST_TYPE,
						'post_status' => 'publish',
						'post_title'  => $rendered,
						'post_author' => $user ? $user->ID : 0,
						'meta_input'  => array(
							'_counterfoil_scope_key'      => $record['scope_key'],
							'_counterfoil_number'         => (string) $record['number'],
							'_counterfoil_gateway'        => $payment['gateway'],
							'_counterfoil_transaction_id' => $payment['transaction_id'],
							'_counterfoil_amount'         => (string) $payment['amount'],
							'_counterfoil_currency'       => (string) $payment['currency'],
						),
					),
					$record,
					$payment
				),
				true
			);
			if ( is_wp_error( $post_id ) ) {
				throw new RuntimeException( $post_id->get_error_message() );
			}
			$ok = $wpdb->query( $wpdb->prepare( "UPDATE {$t['numbers']} SET status = 'issued', post_id = %d, updated_at = UTC_TIMESTAMP() WHERE scope_key = %s AND number = %d", $post_id, $record['scope_key'], $record['number'] ) );
			$ok = false !== $ok && false !== $wpdb->query( $wpdb->prepare( "UPDATE {$t['payments']} SET post_id = %d WHERE gateway = %s AND transaction_id = %s", $post_id, $payment['gateway'], $payment['transaction_id'] ) );
			if ( ! $ok || false === $wpdb->query( 'COMMIT' ) ) {
				throw new RuntimeException( 'could not mark the number issued: ' . $wpdb->last_error );
			}
			do_action( 'counterfoil_invoice_created', $post_id, $record, $payment );
			return array(
				'post_id' => (int) $post_id,
				'created' => true,
			);
		} catch ( Throwable $e ) {
			$wpdb->query( 'ROLLBACK' );
			clean_post_cache( 0 );
			return new WP_Error(
				'counterfoil_incomplete',
				/* translators: 1: number, 2: reason */
				sprintf( __( 'Number %1$s is reserved for this payment but its invoice could not be created yet (%2$s). Deliver the payment again to complete it.', 'counterfoil' ), $rendered, $e->getMessage() ),
				array(
					'status'      => 503,
					'retry_after' => 5,
				)
			);
		}
	}

	/**
	 * Marks a number void, with a reason. Only reserved or issued numbers.
	 *
	 * @param string $scope  Scope key.
	 * @param int    $number Number.
	 * @param string $reason Why (required).
	 * @return true|WP_Error
	 */
	public static function void_number( $scope, $number, $reason ) {
		global $wpdb;
		$reason = is_string( $reason ) ? trim( $reason ) : '';
		if ( '' === $reason || strlen( $reason ) > 255 ) {
			return new WP_Error( 'counterfoil_void_reason', __( 'A void needs a reason of 1 to 255 characters.', 'counterfoil' ), array( 'status' => 400 ) );
		}
		$t  = Counterfoil_Schema::tables();
		$ok = $wpdb->query( $wpdb->prepare( "UPDATE {$t['numbers']} SET status = 'void', reason = %s, updated_at = UTC_TIMESTAMP() WHERE scope_key = %s AND number = %d AND status IN ('reserved', 'issued')", $reason, $scope, $number ) );
		if ( 1 !== $ok ) {
			return new WP_Error( 'counterfoil_void_missing', __( 'No reserved or issued number matches.', 'counterfoil' ), array( 'status' => 404 ) );
		}
		return true;
	}

	/** A backend exception as a WP_Error with the HTTP status it deserves. */
	private static function error_from( Throwable $e, array $payment ) {
		if ( $e instanceof Counterfoil\SeriesNotFoundException ) {
			return new WP_Error(
				'counterfoil_no_series',
				/* translators: 1: user id, 2: year */
				sprintf( __( 'There is no invoice series for user %1$d and year %2$d. Create it under Settings → Invoice numbers.', 'counterfoil' ), $payment['user_id'], $payment['year'] ),
				array( 'status' => 400 )
			);
		}
		if ( $e instanceof InvalidArgumentException ) {
			return new WP_Error( 'counterfoil_invalid_payment', $e->getMessage(), array( 'status' => 400 ) );
		}
		return new WP_Error(
			'counterfoil_unavailable',
			__( 'The invoice database is busy or unavailable; deliver the payment again shortly.', 'counterfoil' ) . ' (' . $e->getMessage() . ')',
			array(
				'status'      => 503,
				'retry_after' => 5,
			)
		);
	}
}

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
