<?php
/**
 * WooCommerce: every paid order its invoice, every refund its credit note,
 * with no code on the shop's side.
 *
 * Invariants:
 * - an order is numbered through the payment flow (Counterfoil_Invoices)
 *   under the key (gateway `woocommerce`, the order's id): the payment's
 *   callbacks, the customer's return page, a status set by hand and the PDF
 *   plugin asking for a number, repeated or at once, all find one invoice;
 * - paid means `woocommerce_payment_complete` or a status in
 *   wc_get_is_paid_statuses(); the period is the order's paid date by the
 *   site's clock (now, for an order numbered before it is paid);
 * - order data is read and written only through WooCommerce's CRUD
 *   (wc_get_order(), get_meta(), update_meta_data(), save_meta_data()), so
 *   both order storages work (HPOS and posts);
 * - a numbering that fails never unpays an order: the order is marked
 *   pending (meta and a note) and the number retried through Action
 *   Scheduler, with a growing delay, until it succeeds; a refusal that a
 *   retry cannot change (a bad amount, a reused id) is a note, not a retry;
 * - a refund of an invoiced order gets one credit note, keyed by the
 *   refund's id, never more than what is left of the invoice; a refund of an
 *   order that was never numbered makes none;
 * - nothing here allocates: numbers come from the backend only.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * The WooCommerce integration.
 */
final class Counterfoil_WooCommerce {
	/** The gateway name of orders in the payments table (reserved on the webhook). */
	const GATEWAY = 'woocommerce';
	/** The order's invoice number, as issued. */
	const META_NUMBER = '_counterfoil_invoice_number';
	/** The order's invoice post id. */
	const META_POST = '_counterfoil_invoice_id';
	/** Set while the order's number waits for a retry (the last error's code). */
	const META_PENDING = '_counterfoil_invoice_pending';
	/** How many retries the order's number has taken. */
	const META_ATTEMPTS = '_counterfoil_invoice_attempts';
	/** A refund's credit-note number, as issued. */
	const META_CREDIT_NOTE = '_counterfoil_credit_note_number';
	/** A refund's credit-note post id. */
	const META_CREDIT_NOTE_POST = '_counterfoil_credit_note_id';
	/** When Counterfoil took over numbering the shop's orders (Unix time): orders paid before are numbered only on request. */
	const SINCE_OPTION = 'counterfoil_woocommerce_since';
	/** The issuer of orders (a user id; 0, the default, is the shop itself). */
	const ISSUER_OPTION = 'counterfoil_woocommerce_issuer';
	/** Action Scheduler hooks and group. */
	const RETRY_HOOK        = 'counterfoil_woocommerce_number_order';
	const REFUND_RETRY_HOOK = 'counterfoil_woocommerce_credit_refund';
	const GROUP             = 'counterfoil';
	/** The first retry's delay, doubled at each attempt up to MAX_DELAY. */
	const FIRST_DELAY = 30;
	const MAX_DELAY   = 3600;

	/** @var bool Whether a retry (an Action Scheduler action) is running. */
	private static $in_retry = false;

	/**
	 * @var array This request's answer per order id: one payment fires
	 * several hooks (the paid status, payment_complete), and a numbering
	 * that failed is not tried again in the same request (its retry is
	 * queued), so a payment waits at most one deadline.
	 */
	private static $answered = array();

	/**
	 * Hooks in when WooCommerce is active (called on plugins_loaded).
	 */
	public static function init() {
		// Declared whether or not WooCommerce loads after us.
		add_action( 'before_woocommerce_init', array( __CLASS__, 'declare_compatibility' ) );
		if ( ! self::active() ) {
			return;
		}
		self::since();
		// Before WooCommerce's own e-mails (priority 10 on the transition
		// actions), so that the customer's e-mail carries the number.
		foreach ( self::paid_statuses() as $status ) {
			add_action( 'woocommerce_order_status_' . $status, array( __CLASS__, 'on_paid_status' ), 5, 2 );
		}
		add_action( 'woocommerce_payment_complete', array( __CLASS__, 'on_payment_complete' ), 5, 1 );
		// A payment completed again on an order already paid (the other of a
		// webhook and a return page): it finds the invoice, or waits for the
		// one being made, so that it too ends with the number on the order.
		foreach ( self::paid_statuses() as $status ) {
			add_action( 'woocommerce_payment_complete_order_status_' . $status, array( __CLASS__, 'on_payment_complete' ), 5, 1 );
		}
		add_action( 'woocommerce_order_refunded', array( __CLASS__, 'on_refunded' ), 10, 2 );
		add_action( self::RETRY_HOOK, array( __CLASS__, 'retry_order' ), 10, 1 );
		add_action( self::REFUND_RETRY_HOOK, array( __CLASS__, 'retry_refund' ), 10, 2 );
		Counterfoil_WooCommerce_Display::init();
		Counterfoil_WooCommerce_Pdf::init();
		Counterfoil_WooCommerce_Documents::init();
		Counterfoil_WooCommerce_Backfill::init();
		add_filter( 'site_status_tests', array( 'Counterfoil_WooCommerce_Backfill', 'site_health_tests' ) );
	}

	/**
	 * When Counterfoil took over numbering the shop's orders (Unix time),
	 * recorded the first time it is asked (on the first request with
	 * WooCommerce active after activation or the upgrade that brought it).
	 *
	 * @return int
	 */
	public static function since() {
		$since = get_option( self::SINCE_OPTION, '' );
		if ( '' === $since || ! is_numeric( $since ) ) {
			$since = time();
			add_option( self::SINCE_OPTION, $since, '', false );
			$since = (int) get_option( self::SINCE_OPTION, $since );
		}
		return (int) $since;
	}

	/**
	 * Whether an order was paid (or, unpaid, created) before Counterfoil
	 * took over: numbered only on request (the backfill, the bulk action),
	 * never by a later status change.
	 *
	 * @param WC_Order $order Order.
	 * @return bool
	 */
	public static function before_takeover( $order ) {
		$paid = $order->get_date_paid();
		$when = $paid ? $paid : ( is_callable( array( $order, 'get_date_created' ) ) ? $order->get_date_created() : null );
		return $when && (int) $when->getTimestamp() < self::since();
	}

	/** Whether WooCommerce is loaded. */
	public static function active() {
		return class_exists( 'WooCommerce' ) && function_exists( 'wc_get_order' );
	}

	/** Declares compatibility with WooCommerce's order tables (HPOS). */
	public static function declare_compatibility() {
		if ( class_exists( '\Automattic\WooCommerce\Utilities\FeaturesUtil' ) ) {
			\Automattic\WooCommerce\Utilities\FeaturesUtil::declare_compatibility( 'custom_order_tables', COUNTERFOIL_FILE, true );
		}
	}

	/** The paid statuses, without WooCommerce's `wc-` prefix. */
	public static function paid_statuses() {
		return function_exists( 'wc_get_is_paid_statuses' ) ? (array) wc_get_is_paid_statuses() : array( 'processing', 'completed' );
	}

	/**
	 * The issuer of an order: the setting (default 0, the shop), then the
	 * `counterfoil_woocommerce_issuer` filter (a marketplace's vendor).
	 *
	 * @param WC_Order $order Order.
	 * @return int
	 */
	public static function issuer( $order ) {
		$issuer = (int) get_option( self::ISSUER_OPTION, 0 );
		/**
		 * The issuer (a user id, 0 or more) whose series numbers an order.
		 *
		 * @param int      $issuer The site's setting.
		 * @param WC_Order $order  The order.
		 */
		return (int) apply_filters( 'counterfoil_woocommerce_issuer', $issuer, $order );
	}

	/** Hooked on woocommerce_order_status_{paid status}. */
	public static function on_paid_status( $order_id, $order = null ) {
		self::number_order( is_object( $order ) ? $order : $order_id );
	}

	/** Hooked on woocommerce_payment_complete. */
	public static function on_payment_complete( $order_id ) {
		self::number_order( $order_id );
	}

	/**
	 * The order's invoice number as issued, or '' (read from the order):
	 * Counterfoil's, else the one WP Overnight's PDF plugin gave it before
	 * Counterfoil numbered orders (adopted: `counterfoil adopt --from
	 * wp-overnight`), which the order keeps.
	 *
	 * @param WC_Order $order Order.
	 * @return string
	 */
	public static function number_of( $order ) {
		$ours = self::counterfoil_number_of( $order );
		return '' !== $ours ? $ours : self::earlier_number_of( $order );
	}

	/** The number Counterfoil wrote on the order, or ''. */
	private static function counterfoil_number_of( $order ) {
		return is_object( $order ) ? (string) $order->get_meta( self::META_NUMBER, true ) : '';
	}

	/**
	 * The invoice number WP Overnight's PDF plugin gave the order before
	 * Counterfoil did (its formatted number, else its number), or ''.
	 *
	 * @param WC_Order $order Order.
	 * @return string
	 */
	public static function earlier_number_of( $order ) {
		if ( ! is_object( $order ) || '' !== self::counterfoil_number_of( $order ) ) {
			return '';
		}
		$data = $order->get_meta( '_wcpdf_invoice_number_data', true );
		if ( is_array( $data ) && isset( $data['formatted_number'] ) && '' !== (string) $data['formatted_number'] ) {
			return (string) $data['formatted_number'];
		}
		return (string) $order->get_meta( '_wcpdf_invoice_number', true );
	}

	/**
	 * Whether the order is paid (its status, or a paid date).
	 *
	 * @param WC_Order $order Order.
	 * @return bool
	 */
	public static function is_paid( $order ) {
		return in_array( $order->get_status(), self::paid_statuses(), true ) || null !== $order->get_date_paid();
	}

	/**
	 * The order's payment as the payment flow takes it.
	 *
	 * @param WC_Order $order Order.
	 * @return array|WP_Error
	 */
	public static function payment_of( $order ) {
		$currency = strtoupper( (string) $order->get_currency() );
		$amount   = self::amount( $order->get_total(), $currency );
		if ( is_wp_error( $amount ) ) {
			return $amount;
		}
		return array(
			'gateway'        => self::GATEWAY,
			'transaction_id' => (string) $order->get_id(),
			'user_id'        => self::issuer( $order ),
			'amount'         => $amount,
			'currency'       => $currency,
		);
	}

	/**
	 * A WooCommerce amount (a decimal string or a number) as the payment
	 * flow takes it: trailing zeros beyond the currency's smallest unit
	 * dropped ("1500.00" JPY is "1500"); anything else is refused.
	 *
	 * @param mixed  $value    Amount.
	 * @param string $currency Currency.
	 * @return string|WP_Error
	 */
	public static function amount( $value, $currency ) {
		$text = is_string( $value ) ? trim( $value ) : ( is_int( $value ) ? (string) $value : sprintf( '%.6F', (float) $value ) );
		if ( false !== strpos( $text, '.' ) ) {
			$text = rtrim( rtrim( $text, '0' ), '.' );
		}
		try {
			$minor = Counterfoil_Rules::minor_units( $text, $currency );
			return Counterfoil_Rules::amount_from_minor_units( $minor, $currency )[0];
		} catch ( InvalidArgumentException $e ) {
			return new WP_Error( 'counterfoil_woocommerce_amount', $e->getMessage(), array( 'status' => 400 ) );
		}
	}

	/**
	 * Numbers an order (once: a repeat finds its invoice). A failure that a
	 * retry can mend leaves the order paid, marks it pending and schedules
	 * the retry.
	 *
	 * @param int|WC_Order $order   Order or its id.
	 * @param bool         $unpaid  Whether an order not paid yet may be
	 *                              numbered (the shop makes its PDF first).
	 * @return array|WP_Error|null The payment flow's answer (number, post,
	 *                             sequence, scope_key, created), an error,
	 *                             or null when the order is not one to number.
	 */
	public static function number_order( $order, $unpaid = false ) {
		$order = is_object( $order ) ? $order : wc_get_order( (int) $order );
		if ( ! $order || ! is_a( $order, 'WC_Order' ) || 'shop_order' !== $order->get_type() ) {
			return null;
		}
		if ( ! $unpaid && ! self::is_paid( $order ) ) {
			return null;
		}
		$earlier = self::earlier_number_of( $order );
		if ( '' !== $earlier ) {
			// Numbered by WP Overnight before Counterfoil: it keeps that
			// number and takes none of ours (an issued invoice never changes).
			return array(
				'number'  => $earlier,
				'post'    => null,
				'created' => false,
				'earlier' => true,
			);
		}
		$id = (int) $order->get_id();
		if ( isset( self::$answered[ $id ] ) && ! self::$in_retry ) {
			if ( is_array( self::$answered[ $id ] ) ) {
				self::remember( $order, self::$answered[ $id ], true );
			}
			return self::$answered[ $id ];
		}
		$payment = self::payment_of( $order );
		$result  = is_wp_error( $payment ) ? $payment : Counterfoil_Invoices::for_payment( $payment, '', self::paid_time( $order ) );
		self::$answered[ $id ] = $result;
		if ( is_wp_error( $result ) ) {
			self::failed( $order, $result );
			return $result;
		}
		self::remember( $order, $result );
		return $result;
	}

	/**
	 * When the order was paid (Unix time), or null (not yet: now decides).
	 *
	 * @param WC_Order $order Order.
	 * @return int|null
	 */
	private static function paid_time( $order ) {
		$paid = $order->get_date_paid();
		return $paid ? (int) $paid->getTimestamp() : null;
	}

	/**
	 * Writes the number on the order (the very object a hook passed, so that
	 * WooCommerce's e-mails sent from it see the number).
	 *
	 * @param WC_Order $order  Order.
	 * @param array    $result The payment flow's answer.
	 * @param bool     $replay Whether this request wrote it already (on
	 *                         another copy of the order): no second note.
	 */
	private static function remember( $order, array $result, $replay = false ) {
		$number = (string) $result['number'];
		if ( self::counterfoil_number_of( $order ) === $number && '' === (string) $order->get_meta( self::META_PENDING, true ) ) {
			return;
		}
		$order->update_meta_data( self::META_NUMBER, $number );
		$order->update_meta_data( self::META_POST, (int) $result['post']->ID );
		$order->delete_meta_data( self::META_PENDING );
		$order->delete_meta_data( self::META_ATTEMPTS );
		$order->save_meta_data();
		if ( ! empty( $result['created'] ) && ! $replay ) {
			/* translators: %s: invoice number */
			$order->add_order_note( sprintf( __( 'Invoice number %s issued by Counterfoil.', 'counterfoil' ), $number ) );
		}
		/**
		 * An order has its invoice number (every time it is written on the order).
		 *
		 * @param WC_Order $order  The order.
		 * @param string   $number The number as issued.
		 * @param int      $post   The invoice's post id.
		 */
		do_action( 'counterfoil_woocommerce_numbered', $order, $number, (int) $result['post']->ID );
	}

	/**
	 * Whether an error is one a later try can mend (503: the database busy
	 * or down, a series missing or numbering paused): retried; anything else
	 * (400, 409) is the shop's to look at.
	 */
	private static function retryable( WP_Error $error ) {
		$data = $error->get_error_data();
		return is_array( $data ) && isset( $data['status'] ) && (int) $data['status'] >= 500;
	}

	/**
	 * Marks the order pending and schedules the retry (or notes a refusal).
	 *
	 * @param WC_Order $order Order.
	 * @param WP_Error $error Why.
	 */
	private static function failed( $order, WP_Error $error ) {
		$code  = $error->get_error_code();
		$retry = self::retryable( $error );
		Counterfoil_Log::once( 'woocommerce-number:' . $code, sprintf( 'order %d: %s: %s', $order->get_id(), $code, $error->get_error_message() ) );
		$first = '' === (string) $order->get_meta( self::META_PENDING, true );
		try {
			$order->update_meta_data( self::META_PENDING, $code );
			$order->save_meta_data();
			if ( $first ) {
				$order->add_order_note(
					$retry
						/* translators: %s: the reason */
						? sprintf( __( 'Invoice number pending: %s Counterfoil retries it until it succeeds.', 'counterfoil' ), $error->get_error_message() )
						/* translators: %s: the reason */
						: sprintf( __( 'No invoice number: %s', 'counterfoil' ), $error->get_error_message() )
				);
			}
		} catch ( Throwable $e ) {
			// The order's own database failed too: the retry below (or the
			// backfill, Site Health) finds the order by its paid status.
			Counterfoil_Log::once( 'woocommerce-mark-pending', sprintf( 'order %d: could not mark pending: %s', $order->get_id(), $e->getMessage() ) );
		}
		if ( $retry ) {
			self::schedule( self::RETRY_HOOK, array( (int) $order->get_id() ), self::attempts( $order ) );
		}
	}

	/** The retries taken so far (counted on the order). */
	private static function attempts( $order ) {
		return (int) $order->get_meta( self::META_ATTEMPTS, true );
	}

	/**
	 * Schedules a retry through Action Scheduler (once per order or refund):
	 * at once for the first, then with a doubling delay.
	 *
	 * @param string $hook     Hook.
	 * @param array  $args     Its arguments.
	 * @param int    $attempts Retries so far.
	 */
	private static function schedule( $hook, array $args, $attempts ) {
		if ( ! function_exists( 'as_schedule_single_action' ) ) {
			return;
		}
		// Action Scheduler counts the running action as scheduled: a retry
		// schedules its successor without asking.
		if ( ! self::$in_retry && ( function_exists( 'as_has_scheduled_action' ) ? as_has_scheduled_action( $hook, $args, self::GROUP ) : as_next_scheduled_action( $hook, $args, self::GROUP ) ) ) {
			return;
		}
		if ( 0 === $attempts ) {
			as_enqueue_async_action( $hook, $args, self::GROUP );
			return;
		}
		$delay = min( self::MAX_DELAY, self::FIRST_DELAY * ( 2 ** min( 10, $attempts - 1 ) ) );
		as_schedule_single_action( time() + $delay, $hook, $args, self::GROUP );
	}

	/**
	 * Action Scheduler's retry of an order's number.
	 *
	 * @param int $order_id Order.
	 */
	public static function retry_order( $order_id ) {
		$order = wc_get_order( (int) $order_id );
		if ( ! $order || '' !== self::number_of( $order ) ) {
			return;
		}
		$order->update_meta_data( self::META_ATTEMPTS, self::attempts( $order ) + 1 );
		$order->save_meta_data();
		self::$in_retry = true;
		try {
			self::number_order( $order );
		} finally {
			self::$in_retry = false;
		}
	}

	/**
	 * Hooked on woocommerce_order_refunded: the refund's credit note.
	 *
	 * @param int $order_id  Order.
	 * @param int $refund_id Refund.
	 * @return array|WP_Error|null
	 */
	public static function on_refunded( $order_id, $refund_id ) {
		return self::credit_refund( (int) $order_id, (int) $refund_id, 0 );
	}

	/**
	 * Action Scheduler's retry of a refund's credit note.
	 *
	 * @param int $order_id  Order.
	 * @param int $refund_id Refund.
	 */
	public static function retry_refund( $order_id, $refund_id ) {
		$refund = wc_get_order( (int) $refund_id );
		$tries  = $refund ? (int) $refund->get_meta( self::META_ATTEMPTS, true ) + 1 : 1;
		if ( $refund ) {
			$refund->update_meta_data( self::META_ATTEMPTS, $tries );
			$refund->save_meta_data();
		}
		self::$in_retry = true;
		try {
			self::credit_refund( (int) $order_id, (int) $refund_id, $tries );
		} finally {
			self::$in_retry = false;
		}
	}

	/**
	 * The credit note of a refund of an invoiced order (once per refund id).
	 * A refund of an order that was paid but whose number is still pending
	 * waits for it (retried); a refund of an order never numbered makes none.
	 *
	 * @return array|WP_Error|null
	 */
	private static function credit_refund( $order_id, $refund_id, $attempts ) {
		$order  = wc_get_order( $order_id );
		$refund = wc_get_order( $refund_id );
		if ( ! $order || ! $refund || 'shop_order' !== $order->get_type() ) {
			return null;
		}
		if ( '' !== (string) $refund->get_meta( self::META_CREDIT_NOTE, true ) ) {
			return null;
		}
		if ( '' === self::number_of( $order ) ) {
			if ( self::is_paid( $order ) || '' !== (string) $order->get_meta( self::META_PENDING, true ) ) {
				// Its invoice is on the way: the credit note follows it.
				self::schedule( self::REFUND_RETRY_HOOK, array( $order_id, $refund_id ), max( 1, $attempts ) );
			}
			return null;
		}
		$amount = self::amount( $refund->get_amount(), strtoupper( (string) $order->get_currency() ) );
		$result = is_wp_error( $amount ) ? $amount : Counterfoil_Credit_Notes::for_refund(
			array(
				'gateway'        => self::GATEWAY,
				'refund_id'      => (string) $refund_id,
				'transaction_id' => (string) $order_id,
				'amount'         => $amount,
				'reason'         => substr( (string) $refund->get_reason(), 0, 255 ),
			)
		);
		if ( is_wp_error( $result ) ) {
			Counterfoil_Log::once( 'woocommerce-refund:' . $result->get_error_code(), sprintf( 'refund %d of order %d: %s: %s', $refund_id, $order_id, $result->get_error_code(), $result->get_error_message() ) );
			if ( self::retryable( $result ) ) {
				self::schedule( self::REFUND_RETRY_HOOK, array( $order_id, $refund_id ), $attempts );
			} else {
				/* translators: 1: refund id, 2: the reason */
				$order->add_order_note( sprintf( __( 'No credit note for refund #%1$d: %2$s', 'counterfoil' ), $refund_id, $result->get_error_message() ) );
			}
			return $result;
		}
		$refund->update_meta_data( self::META_CREDIT_NOTE, (string) $result['number'] );
		$refund->update_meta_data( self::META_CREDIT_NOTE_POST, (int) $result['post']->ID );
		$refund->delete_meta_data( self::META_ATTEMPTS );
		$refund->save_meta_data();
		if ( ! empty( $result['created'] ) ) {
			/* translators: 1: credit note number, 2: refund id, 3: invoice number */
			$order->add_order_note( sprintf( __( 'Credit note %1$s issued by Counterfoil for refund #%2$d of invoice %3$s.', 'counterfoil' ), $result['number'], $refund_id, $result['refers_to'] ) );
		}
		return $result;
	}
}
