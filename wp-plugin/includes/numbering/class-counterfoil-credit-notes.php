<?php
/**
 * Credit notes: a refund of an invoice documented by a number of its own.
 *
 * Invariants:
 * - one credit note per (gateway, refund id): its row in the payments table
 *   is keyed by them (the refund's id as the transaction id) and names the
 *   invoice it corrects (refers_scope, refers_number) and why (reason), so a
 *   refund delivered again, concurrently or out of order finds the same
 *   credit note, numbered and completed by the payment flow
 *   (Counterfoil_Invoices::issue): reserved, claimed, post, issued;
 * - its series is the issuer's credit-note series of the year it is issued
 *   in (the core's credit_note::series_for, `{issuer}:cn:{year}`), made by
 *   the site's plan for missing series like an invoice series; its number is
 *   rendered with `counterfoil_credit_note_format` (CN-{year}-{seq:04});
 * - the amount is more than zero and at most what is left of the invoice's
 *   amount after its earlier credit notes (the core's
 *   credit_note::credit_note_amount, in the currency's smallest unit), in
 *   the invoice's currency; the check, the credit note's row and the
 *   invoice it names are one transaction on the backend's own connection
 *   (Counterfoil_Backend::hold_credit_note: the core's
 *   flows::credit_notes, or its pure-PHP twin), under the invoice's
 *   registry row lock, never on $wpdb (which reconnects silently), so two
 *   refunds of one invoice at once never credit more than it was, and a
 *   delivery cut at any point never leaves a credit note without its
 *   invoice. A refused refund writes nothing (409); a refund of more than
 *   what is left is refused, never capped;
 * - only an issued invoice of this site is credited; a refund of a payment
 *   this site never invoiced makes none (404 not_invoiced).
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

// phpcs:disable WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- the plugin's own tables (registry, series, payments, chain), which no WordPress API reads or writes; never cached: a number's state is read live.

/**
 * Credit notes for refunds.
 */
final class Counterfoil_Credit_Notes {
	/**
	 * Issues (or finds) the credit note of a refund.
	 *
	 * @param mixed $refund gateway, refund_id; the invoice as invoice_id (its
	 *                      post) or transaction_id (the payment it was issued
	 *                      for, same gateway); optional amount (a decimal
	 *                      string, default everything left), currency
	 *                      (default the invoice's; must be the invoice's),
	 *                      reason (up to 255 characters).
	 * @return array|WP_Error post, number (as issued), sequence, scope_key,
	 *                        amount, currency, refers_to (the invoice's number
	 *                        as issued), invoice_id, created; or an error
	 *                        with an HTTP status (400 bad input, 404 no such
	 *                        invoice, 409 more than what is left or a refund
	 *                        id reused for another refund, 503 retry).
	 */
	public static function for_refund( $refund ) {
		$bad = function ( $message ) {
			return new WP_Error( 'counterfoil_invalid_refund', $message, array( 'status' => 400 ) );
		};
		if ( ! is_array( $refund ) ) {
			return $bad( __( 'The refund must be an object.', 'counterfoil' ) );
		}
		foreach ( array( 'gateway', 'refund_id' ) as $key ) {
			if ( ! isset( $refund[ $key ] ) || ! is_string( $refund[ $key ] ) ) {
				/* translators: %s: field name */
				return $bad( sprintf( __( 'The field %s is required and must be a string.', 'counterfoil' ), $key ) );
			}
		}
		try {
			Counterfoil_Rules::payment_ref( $refund['gateway'], $refund['refund_id'] );
		} catch ( InvalidArgumentException $e ) {
			return $bad( $e->getMessage() );
		}
		$reason = isset( $refund['reason'] ) ? $refund['reason'] : '';
		if ( ! is_string( $reason ) || strlen( $reason ) > 255 ) {
			return $bad( __( 'The field reason must be a string of at most 255 characters.', 'counterfoil' ) );
		}
		$amount = isset( $refund['amount'] ) ? $refund['amount'] : null;
		if ( null !== $amount && ! is_string( $amount ) ) {
			return $bad( __( 'The field amount must be a decimal string such as "19.99".', 'counterfoil' ) );
		}
		$invoice = self::invoice_of( $refund );
		if ( is_wp_error( $invoice ) ) {
			return $invoice;
		}
		$currency = isset( $refund['currency'] ) ? $refund['currency'] : $invoice['currency'];
		if ( ! is_string( $currency ) || strtoupper( $currency ) !== $invoice['currency'] ) {
			/* translators: %s: the invoice's currency */
			return $bad( sprintf( __( 'A credit note is in its invoice\'s currency, %s.', 'counterfoil' ), $invoice['currency'] ) );
		}
		try {
			if ( null !== $amount ) {
				Counterfoil_Rules::minor_units( $amount, $invoice['currency'] );
			}
		} catch ( InvalidArgumentException $e ) {
			return $bad( $e->getMessage() );
		}
		$now     = counterfoil_local_period();
		$current = counterfoil_current_period();
		try {
			$series = Counterfoil_Rules::credit_note_series( $invoice['scope_key'], $current[0], $current[1] );
			// The row, its invoice and the cap: one transaction on the
			// backend's own connection, under the invoice's row lock.
			$held = counterfoil_backend()->hold_credit_note( $series, $refund['gateway'], $refund['refund_id'], $amount, $invoice['currency'], $now[0], $now[1], $invoice['scope_key'], $invoice['number'], $invoice['amount'], $reason );
		} catch ( InvalidArgumentException $e ) {
			return $bad( $e->getMessage() );
		} catch ( Throwable $e ) {
			return self::unavailable( get_class( $e ) . ': ' . $e->getMessage(), 'credit-note-record' );
		}
		if ( 'refused' === $held['status'] ) {
			return new WP_Error( 'counterfoil_refund_exceeds', self::refusal( $invoice, (int) $held['credited'], $held['requested'] ), array( 'status' => 409 ) );
		}
		if ( 'mismatch' === $held['status'] ) {
			return new WP_Error( 'counterfoil_refund_mismatch', __( 'This refund id was already recorded for another invoice or amount; a refund is never credited twice under a reused id.', 'counterfoil' ), array( 'status' => 409 ) );
		}
		if ( 'recorded' !== $held['status'] ) {
			return new WP_Error( 'counterfoil_invoice_not_issued', __( 'The invoice is not issued (void or unfinished): it cannot be credited.', 'counterfoil' ), array( 'status' => 409 ) );
		}
		$credit = (string) $held['amount'];
		$scope  = (string) $held['scope_key'];
		// The credit note's year: its series' (a year's or a month's), else the local year.
		$owner   = Counterfoil_Rules::issuer_and_period( $scope );
		$payment = array(
			'gateway'        => $refund['gateway'],
			'transaction_id' => $refund['refund_id'],
			'user_id'        => $invoice['issuer'],
			'year'           => null === $owner ? $now[0] : $owner[1],
			'amount'         => $credit,
			'currency'       => $invoice['currency'],
		);
		$result = Counterfoil_Invoices::issue( $scope, $payment, $now, true );
		if ( is_wp_error( $result ) ) {
			return $result;
		}
		return $result + array(
			'amount'     => $credit,
			'currency'   => $invoice['currency'],
			'refers_to'  => $invoice['number_as_issued'],
			'invoice_id' => $invoice['post_id'],
		);
	}

	/**
	 * The invoice a refund corrects: by its post (invoice_id), else by the
	 * payment it was issued for (gateway, transaction_id).
	 *
	 * @param array $refund The refund.
	 * @return array|WP_Error post_id, scope_key, number, number_as_issued,
	 *                        issuer, currency, amount (decimal) and minor
	 *                        (smallest units).
	 */
	private static function invoice_of( array $refund ) {
		$post_id = 0;
		if ( isset( $refund['invoice_id'] ) ) {
			$post_id = is_int( $refund['invoice_id'] ) ? $refund['invoice_id'] : 0;
		} elseif ( isset( $refund['transaction_id'] ) && is_string( $refund['transaction_id'] ) ) {
			$paid    = Counterfoil_Invoices::payment_row( $refund['gateway'], $refund['transaction_id'] );
			$post_id = $paid && null !== $paid->post_id ? (int) $paid->post_id : 0;
		} else {
			return new WP_Error( 'counterfoil_invalid_refund', __( 'A refund names its invoice: invoice_id, or the transaction_id of the payment it refunds.', 'counterfoil' ), array( 'status' => 400 ) );
		}
		$post = $post_id ? get_post( $post_id ) : null;
		if ( ! $post && ! isset( $refund['invoice_id'] ) ) {
			$adopted = self::adopted_invoice( $refund['gateway'], $refund['transaction_id'] );
			if ( null !== $adopted ) {
				return $adopted;
			}
		}
		if ( ! $post || Counterfoil_Invoice_Type::POST_TYPE !== $post->post_type ) {
			return new WP_Error( 'counterfoil_not_invoiced', __( 'No invoice of this site matches the refund: a credit note corrects an invoice issued here.', 'counterfoil' ), array( 'status' => 404 ) );
		}
		global $wpdb;
		$t      = Counterfoil_Schema::tables();
		$scope  = (string) get_post_meta( $post_id, '_counterfoil_scope_key', true );
		$number = (int) get_post_meta( $post_id, '_counterfoil_number', true );
		$status = $wpdb->get_var( $wpdb->prepare( "SELECT status FROM {$t['numbers']} WHERE scope_key = %s AND number = %d AND post_id = %d", $scope, $number, $post_id ) ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- table name from Counterfoil_Schema::tables() (the prefix and a fixed name).
		if ( 'issued' !== $status ) {
			return new WP_Error( 'counterfoil_invoice_not_issued', __( 'The invoice is not issued (void or unfinished): it cannot be credited.', 'counterfoil' ), array( 'status' => 409 ) );
		}
		$amount   = (string) get_post_meta( $post_id, '_counterfoil_amount', true );
		$currency = (string) get_post_meta( $post_id, '_counterfoil_currency', true );
		if ( '' === $amount || '' === $currency ) {
			return new WP_Error( 'counterfoil_invoice_without_amount', __( 'The invoice records no amount and currency: there is nothing to credit against.', 'counterfoil' ), array( 'status' => 409 ) );
		}
		try {
			$minor = Counterfoil_Rules::minor_units( $amount, $currency );
		} catch ( InvalidArgumentException $e ) {
			return new WP_Error( 'counterfoil_invoice_without_amount', $e->getMessage(), array( 'status' => 409 ) );
		}
		$issuer = Counterfoil_Invoices::issuer_of( $scope );
		return array(
			'post_id'          => $post_id,
			'scope_key'        => $scope,
			'number'           => $number,
			'number_as_issued' => $post->post_title,
			'issuer'           => null !== $issuer && ctype_digit( $issuer ) ? (int) $issuer : (int) $post->post_author,
			'currency'         => strtoupper( $currency ),
			'amount'           => $amount,
			'minor'            => $minor,
		);
	}

	/**
	 * An invoice another plugin issued for the payment before Counterfoil,
	 * adopted into the registry (`counterfoil adopt`: an issued row of the
	 * payment's gateway and transaction, with no post of ours), as the
	 * filter `counterfoil_adopted_invoice` states it: the number as that
	 * plugin issued it, its date, amount and currency. Without an answer
	 * there is nothing to credit against (null).
	 *
	 * @param string $gateway     Gateway.
	 * @param string $transaction The payment's transaction id.
	 * @return array|null As invoice_of() answers, post_id 0; date (Y-m-d).
	 */
	public static function adopted_invoice( $gateway, $transaction ) {
		global $wpdb;
		$t   = Counterfoil_Schema::tables();
		$row = $wpdb->get_row( $wpdb->prepare( "SELECT scope_key, number FROM {$t['numbers']} WHERE gateway = %s AND transaction_id = %s AND status = 'issued' AND post_id IS NULL ORDER BY number LIMIT 1", $gateway, $transaction ) ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared, WordPress.DB.DirectDatabaseQuery -- table name from Counterfoil_Schema::tables() (the prefix and a fixed name); the registry is read live, never cached.
		if ( ! $row ) {
			return null;
		}
		/**
		 * An adopted invoice (issued by another plugin before Counterfoil,
		 * registered by `counterfoil adopt`) as its issuer stated it, for a
		 * credit note that names it (BT-25, BT-26): null when unknown.
		 *
		 * @param array|null $invoice     null, or number_as_issued, date (Y-m-d), amount (decimal), currency.
		 * @param string     $gateway     The payment's gateway.
		 * @param string     $transaction The payment's transaction id.
		 * @param string     $scope       The registry's series.
		 * @param int        $number      The registry's number.
		 */
		$stated = apply_filters( 'counterfoil_adopted_invoice', null, $gateway, $transaction, (string) $row->scope_key, (int) $row->number );
		if ( ! is_array( $stated ) || empty( $stated['number_as_issued'] ) || empty( $stated['amount'] ) || empty( $stated['currency'] ) ) {
			return null;
		}
		$currency = strtoupper( (string) $stated['currency'] );
		try {
			$minor = Counterfoil_Rules::minor_units( (string) $stated['amount'], $currency );
		} catch ( InvalidArgumentException $e ) {
			return null;
		}
		$issuer = Counterfoil_Invoices::issuer_of( (string) $row->scope_key );
		return array(
			'post_id'          => 0,
			'scope_key'        => (string) $row->scope_key,
			'number'           => (int) $row->number,
			'number_as_issued' => (string) $stated['number_as_issued'],
			'date'             => isset( $stated['date'] ) ? (string) $stated['date'] : '',
			'issuer'           => null !== $issuer && ctype_digit( $issuer ) ? (int) $issuer : 0,
			'currency'         => $currency,
			'amount'           => (string) $stated['amount'],
			'minor'            => $minor,
		);
	}

	/** 503: the credit note could not be recorded now (the detail goes to the log). */
	private static function unavailable( $detail, $cause ) {
		return new WP_Error(
			'counterfoil_unavailable',
			__( 'The credit note could not be recorded now; deliver the refund again.', 'counterfoil' ),
			array(
				'status'      => 503,
				'retry_after' => 5,
				'detail'      => $detail,
				'cause'       => $cause,
			)
		);
	}

	/**
	 * Why a refund was refused by the rule (credit_note_amount), in the
	 * invoice's currency: nothing left, zero, or more than what is left.
	 *
	 * @param array    $invoice   The invoice.
	 * @param int      $credited  Its credit notes' total, smallest units.
	 * @param int|null $requested The refund, smallest units.
	 * @return string
	 */
	private static function refusal( array $invoice, $credited, $requested ) {
		$money = function ( $minor ) use ( $invoice ) {
			return Counterfoil_Rules::amount_from_minor_units( max( 0, $minor ), $invoice['currency'] )[0] . ' ' . $invoice['currency'];
		};
		$left = $invoice['minor'] - $credited;
		if ( $left <= 0 ) {
			/* translators: %s: the invoice's number */
			return sprintf( __( 'Everything on invoice %s is credited already: nothing is left to credit.', 'counterfoil' ), $invoice['number_as_issued'] );
		}
		if ( 0 === $requested ) {
			return __( 'A credit note is for more than zero.', 'counterfoil' );
		}
		/* translators: 1: the refund, 2: what is left, 3: the invoice's number */
		return sprintf( __( 'A refund of %1$s is more than what is left to credit on invoice %3$s (%2$s).', 'counterfoil' ), $money( (int) $requested ), $money( $left ), $invoice['number_as_issued'] );
	}

	/** What the credit notes of invoice ($scope, $number) total, in smallest units of $currency. */
	private static function credited_in( $scope, $number, $currency ) {
		$total = 0;
		foreach ( self::of_invoice( $scope, $number ) as $row ) {
			$total += Counterfoil_Rules::minor_units( (string) $row->amount, $currency );
		}
		return $total;
	}

	/**
	 * What is left to credit of invoice ($scope, $number) of $amount
	 * $currency (the core's credit_note::remainder), as a decimal amount; null
	 * when the invoice records no amount.
	 *
	 * @return string|null
	 */
	public static function left( $scope, $number, $amount, $currency ) {
		if ( '' === (string) $amount || '' === (string) $currency ) {
			return null;
		}
		try {
			$left = Counterfoil_Rules::minor_units( (string) $amount, $currency ) - self::credited_in( $scope, $number, $currency );
			return Counterfoil_Rules::amount_from_minor_units( max( 0, $left ), $currency )[0];
		} catch ( InvalidArgumentException $e ) {
			return null;
		}
	}

	/**
	 * The credit notes of an invoice (rows: gateway, transaction_id, scope_key,
	 * number, post_id, amount, currency, reason), in order.
	 *
	 * @param string $scope  The invoice's series.
	 * @param int    $number Its number.
	 * @return array
	 */
	public static function of_invoice( $scope, $number ) {
		global $wpdb;
		$t = Counterfoil_Schema::tables();
		return $wpdb->get_results( $wpdb->prepare( "SELECT gateway, transaction_id, scope_key, number, post_id, amount, currency, reason FROM {$t['payments']} WHERE refers_scope = %s AND refers_number = %d ORDER BY id", $scope, $number ) ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- table name from Counterfoil_Schema::tables() (the prefix and a fixed name).
	}

	/**
	 * What a credit note's post says of its invoice (its meta and text), from
	 * its row: used when the payment flow creates the post.
	 *
	 * @param string $gateway   Gateway.
	 * @param string $refund_id The refund's id.
	 * @return array meta, content.
	 */
	public static function refers( $gateway, $refund_id ) {
		global $wpdb;
		$t   = Counterfoil_Schema::tables();
		$row = $wpdb->get_row( $wpdb->prepare( "SELECT refers_scope, refers_number, reason FROM {$t['payments']} WHERE gateway = %s AND transaction_id = %s", $gateway, $refund_id ) ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- table name from Counterfoil_Schema::tables() (the prefix and a fixed name).
		if ( ! $row || null === $row->refers_scope ) {
			return array(
				'meta'    => array(),
				'content' => '',
			);
		}
		$target  = $wpdb->get_row( $wpdb->prepare( "SELECT post_id, gateway, transaction_id FROM {$t['numbers']} WHERE scope_key = %s AND number = %d", $row->refers_scope, $row->refers_number ) ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- table name from Counterfoil_Schema::tables() (the prefix and a fixed name).
		$invoice = $target ? (int) $target->post_id : 0;
		$title   = $invoice ? get_the_title( $invoice ) : '';
		$meta    = array(
			'_counterfoil_refers_to'     => (string) $invoice,
			'_counterfoil_refers_scope'  => (string) $row->refers_scope,
			'_counterfoil_refers_number' => (string) $row->refers_number,
			'_counterfoil_reason'        => (string) $row->reason,
		);
		// An adopted invoice (no post of ours): its number and date as its
		// issuer stated them, kept on the credit note (BT-25, BT-26).
		$adopted = ! $invoice && $target && null !== $target->gateway ? self::adopted_invoice( (string) $target->gateway, (string) $target->transaction_id ) : null;
		if ( null !== $adopted ) {
			$title                                  = $adopted['number_as_issued'];
			$meta['_counterfoil_refers_to_number'] = $adopted['number_as_issued'];
			$meta['_counterfoil_refers_to_date']   = $adopted['date'];
		}
		return array(
			'meta'    => $meta,
			/* translators: 1: the invoice's number, 2: the reason */
			'content' => sprintf( __( 'Credit note for invoice %1$s. %2$s', 'counterfoil' ), $title, (string) $row->reason ),
		);
	}

	/**
	 * The numbers (as issued) of the documents related to $post_id: an
	 * invoice's credit notes, or the invoice a credit note corrects.
	 *
	 * @param int $post_id Post.
	 * @return string[]
	 */
	public static function related_titles( $post_id ) {
		$post = get_post( $post_id );
		if ( ! $post ) {
			return array();
		}
		if ( Counterfoil_Invoice_Type::CREDIT_NOTE_TYPE === $post->post_type ) {
			$invoice = (int) get_post_meta( $post_id, '_counterfoil_refers_to', true );
			$adopted = (string) get_post_meta( $post_id, '_counterfoil_refers_to_number', true );
			return $invoice ? array( get_the_title( $invoice ) ) : ( '' !== $adopted ? array( $adopted ) : array() );
		}
		$out = array();
		foreach ( self::of_invoice( (string) get_post_meta( $post_id, '_counterfoil_scope_key', true ), (int) get_post_meta( $post_id, '_counterfoil_number', true ) ) as $row ) {
			$out[] = $row->post_id ? get_the_title( (int) $row->post_id ) : __( '(being issued)', 'counterfoil' );
		}
		return $out;
	}
}
