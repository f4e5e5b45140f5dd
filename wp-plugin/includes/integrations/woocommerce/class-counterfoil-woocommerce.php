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
	/** The statuses that number an order (default: WooCommerce's paid statuses). */
	const STATUSES_OPTION = 'counterfoil_woocommerce_number_statuses';
	/** 1: an order reaching a numbering status unpaid (cash on delivery at processing) is invoiced at once, stating the amount due; 0 (default): when it is paid. */
	const UNPAID_OPTION = 'counterfoil_woocommerce_number_unpaid';
	/** 0: orders of no amount get no invoice; 1 (default): they do. */
	const FREE_OPTION = 'counterfoil_woocommerce_number_free';
	/** Payment methods (ids, comma-separated) whose orders get no invoice of Counterfoil's. */
	const EXCLUDED_METHODS_OPTION = 'counterfoil_woocommerce_excluded_methods';
	/** 1 (default): a paid order cancelled gets a credit note of what is left of its invoice. */
	const CREDIT_CANCELLED_OPTION = 'counterfoil_woocommerce_credit_cancelled';
	/** What the retries gave up on: a list of [kind, order id, refund id, reason, time] for the admin notice. */
	const GAVE_UP_OPTION = 'counterfoil_woocommerce_gave_up';
	/** The most retries of an order's number or a refund's credit note (about a day), then a note and an admin notice. */
	const MAX_ATTEMPTS = 30;
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
	 * @var array The orders whose number this request wrote on them and
	 * saved (order id => number): payment_complete, fired after the paid
	 * status's hook numbered the order, need not load it again.
	 */
	private static $written = array();

	/**
	 * @var WC_Order|null The order being numbered now, or the one an
	 * e-mail is being made of: its invoice's e-invoice input is read from
	 * it rather than from a copy loaded again (order_in_hand()).
	 */
	private static $in_hand = null;

	/**
	 * @var array The invoices issued in an order's paid-status transition
	 * whose e-invoice input is frozen at the transition's end (post id =>
	 * the order), unless an e-mail of the transition made a document of
	 * them first, which froze it (document_made()): once, not twice.
	 */
	private static $to_freeze = array();

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
		foreach ( self::number_statuses() as $status ) {
			add_action( 'woocommerce_order_status_' . $status, array( __CLASS__, 'on_paid_status' ), 5, 2 );
		}
		add_action( 'woocommerce_payment_complete', array( __CLASS__, 'on_payment_complete' ), 5, 1 );
		// A payment completed again on an order already paid (the other of a
		// webhook and a return page): it finds the invoice, or waits for the
		// one being made, so that it too ends with the number on the order.
		foreach ( self::paid_statuses() as $status ) {
			add_action( 'woocommerce_payment_complete_order_status_' . $status, array( __CLASS__, 'on_payment_complete' ), 5, 1 );
		}
		// The credit note before WooCommerce's refund e-mail (sent from these
		// two at priority 10), so that the e-mail can carry it; the refunded
		// action after them is the fallback.
		add_action( 'woocommerce_order_fully_refunded', array( __CLASS__, 'on_refunded' ), 5, 2 );
		add_action( 'woocommerce_order_partially_refunded', array( __CLASS__, 'on_refunded' ), 5, 2 );
		add_action( 'woocommerce_order_refunded', array( __CLASS__, 'on_refunded' ), 10, 2 );
		add_action( 'woocommerce_order_status_cancelled', array( __CLASS__, 'on_cancelled' ), 10, 2 );
		add_action( 'woocommerce_refund_deleted', array( __CLASS__, 'on_refund_deleted' ), 10, 2 );
		add_action( 'admin_notices', array( __CLASS__, 'gave_up_notice' ) );
		// WooCommerce Subscriptions copies a parent order's meta to its
		// renewals: never our number, invoice or pending marks.
		add_filter( 'wc_subscriptions_renewal_order_data', array( __CLASS__, 'without_our_meta' ) );
		add_filter( 'wcs_renewal_order_meta', array( __CLASS__, 'without_our_meta' ) );
		// The end of a status transition (after its e-mails), the payment's
		// own hook after it, and the request's end, for a transition that
		// ends otherwise: the inputs held in it are frozen (freeze_held()).
		add_action( 'woocommerce_order_status_changed', array( __CLASS__, 'freeze_held' ), PHP_INT_MAX, 0 );
		add_action( 'woocommerce_payment_complete', array( __CLASS__, 'freeze_held' ), PHP_INT_MAX, 0 );
		add_action( 'shutdown', array( __CLASS__, 'freeze_held' ), 0, 0 );
		add_action( self::RETRY_HOOK, array( __CLASS__, 'retry_order' ), 10, 1 );
		add_action( self::REFUND_RETRY_HOOK, array( __CLASS__, 'retry_refund' ), 10, 2 );
		Counterfoil_WooCommerce_Display::init();
		Counterfoil_WooCommerce_Pdf::init();
		Counterfoil_WooCommerce_Documents::init();
		Counterfoil_WooCommerce_Backfill::init();
		Counterfoil_WooCommerce_Bulk::init();
		Counterfoil_WooCommerce_Orders_Filter::init();
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
	 * Whether an order is the shop's history from before Counterfoil took
	 * over: made before it, and paid before it or not at all — numbered
	 * only on request (the backfill, the bulk action), never by a later
	 * status change. An order made before but paid since is numbered as any.
	 *
	 * @param WC_Order $order Order.
	 * @return bool
	 */
	public static function before_takeover( $order ) {
		$since   = self::since();
		$created = is_callable( array( $order, 'get_date_created' ) ) ? $order->get_date_created() : null;
		$paid    = $order->get_date_paid();
		return $created && (int) $created->getTimestamp() < $since && ( ! $paid || (int) $paid->getTimestamp() < $since );
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

	/** Hooked on woocommerce_order_status_{numbering status}. */
	public static function on_paid_status( $order_id, $order = null ) {
		self::number_order( is_object( $order ) ? $order : $order_id );
	}

	/**
	 * The statuses that number an order: the setting, else WooCommerce's
	 * paid statuses (without the `wc-` prefix).
	 *
	 * @return string[]
	 */
	public static function number_statuses() {
		$statuses = get_option( self::STATUSES_OPTION, array() );
		$statuses = is_array( $statuses ) ? array_values( array_filter( $statuses, 'is_string' ) ) : array();
		return $statuses ? $statuses : self::paid_statuses();
	}

	/**
	 * Whether a hook's event numbers the order (a status or a payment): an
	 * order taken over by Counterfoil (paid or made since it took over: an
	 * older one only on request) that the shop's rules number
	 * (by_the_rules()).
	 *
	 * @param WC_Order $order   Order.
	 * @param string   $context 'status' (a status change), 'payment' (payment_complete).
	 * @return bool
	 */
	public static function should_number( $order, $context ) {
		return ! self::before_takeover( $order ) && self::by_the_rules( $order, $context );
	}

	/**
	 * Whether the shop's rules number the order, whenever it was paid: an
	 * order of the shop (not a refund) in a numbering status, paid (unless
	 * the shop invoices unpaid orders at once), not free (unless the shop
	 * invoices those), not paid by an excluded method — and then the filter
	 * `counterfoil_woocommerce_should_number`. Asked of a hook's event
	 * (should_number()) and of each order the period's backfill would
	 * number ('backfill': paid, in a numbering status); not of an order the
	 * shop picks by hand (the orders list's bulk action).
	 *
	 * @param WC_Order $order   Order.
	 * @param string   $context 'status', 'payment' or 'backfill'.
	 * @return bool
	 */
	public static function by_the_rules( $order, $context ) {
		// A payment's own event is the payment (the order may not show its
		// paid date yet to a process that reads it mid-save).
		$paid   = 'payment' === $context || null !== $order->get_date_paid();
		$method = is_callable( array( $order, 'get_payment_method' ) ) ? (string) $order->get_payment_method() : '';
		$number = ( 'payment' === $context || in_array( $order->get_status(), self::number_statuses(), true ) )
			&& ( $paid || ( 'status' === $context && (int) get_option( self::UNPAID_OPTION, 0 ) ) )
			&& ( (int) get_option( self::FREE_OPTION, 1 ) || 0.0 !== (float) $order->get_total() )
			&& ! in_array( $method, self::excluded_methods(), true );
		/**
		 * Whether an order gets its invoice now (a status change, a payment,
		 * or the period's backfill). An order numbered once keeps its
		 * number: this is not asked again for it.
		 *
		 * @param bool     $number  Counterfoil's answer by the settings.
		 * @param WC_Order $order   The order.
		 * @param string   $context 'status', 'payment' or 'backfill'.
		 */
		return (bool) apply_filters( 'counterfoil_woocommerce_should_number', $number, $order, $context );
	}

	/**
	 * The payment methods whose orders get no invoice (the setting).
	 *
	 * @return string[]
	 */
	public static function excluded_methods() {
		return array_values( array_filter( array_map( 'trim', explode( ',', (string) get_option( self::EXCLUDED_METHODS_OPTION, '' ) ) ) ) );
	}

	/** Hooked on woocommerce_payment_complete. */
	public static function on_payment_complete( $order_id ) {
		// Numbered in this request already (the paid status's hook, fired
		// from the save just before): its number is written and saved.
		if ( ! self::$in_retry && is_scalar( $order_id ) && isset( self::$written[ (int) $order_id ] ) ) {
			return;
		}
		self::number_order( $order_id, false, 'payment' );
	}

	/**
	 * The order in hand (being numbered: the object the hook passed, as
	 * WooCommerce just saved it; or the one an e-mail is made of), when it
	 * is order $order_id, else null.
	 *
	 * @param int $order_id Order.
	 * @return WC_Order|null
	 */
	public static function order_in_hand( $order_id ) {
		return self::$in_hand && (int) self::$in_hand->get_id() === (int) $order_id ? self::$in_hand : null;
	}

	/**
	 * Freezes the e-invoice inputs held in a status transition that no
	 * e-mail made a document of (Counterfoil_Documents::freeze_at_issue(),
	 * from the order as the transition left it). Hooked at the transition's
	 * end, on woocommerce_payment_complete and on shutdown.
	 */
	public static function freeze_held() {
		while ( self::$to_freeze ) {
			$order   = reset( self::$to_freeze );
			$post_id = (int) key( self::$to_freeze );
			unset( self::$to_freeze[ $post_id ] );
			self::with_order_in_hand(
				$order,
				function () use ( $post_id ) {
					Counterfoil_Documents::freeze_at_issue( $post_id );
				}
			);
		}
	}

	/**
	 * A document was made of an invoice (an e-mail's attachment), which
	 * froze its input if it is valid: no freeze is held for it any more.
	 *
	 * @param int $post_id The invoice's post.
	 */
	public static function document_made( $post_id ) {
		unset( self::$to_freeze[ (int) $post_id ] );
	}

	/**
	 * Runs $work with $order as the order in hand (order_in_hand()): the
	 * order being numbered, or the one an e-mail is made of.
	 *
	 * @param WC_Order $order Order.
	 * @param callable $work  What to run.
	 * @return mixed What $work returns.
	 */
	public static function with_order_in_hand( $order, callable $work ) {
		$before        = self::$in_hand;
		self::$in_hand = $order;
		try {
			return $work();
		} finally {
			self::$in_hand = $before;
		}
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
	 * dropped ("1500.00" JPY is "1500"), further decimals rounded as
	 * WooCommerce rounds ("10.005" EUR is "10.01"); anything else is refused.
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
		// Decimals beyond the currency's (an extension's 10.005) are rounded
		// as WooCommerce rounds (wc_format_decimal: half away from zero).
		$places  = Counterfoil_Rules::minor_places( $currency );
		$decimal = Counterfoil_Einvoice::dec( $text );
		if ( null !== $decimal && $decimal[1] > $places ) {
			$rounded = Counterfoil_Einvoice::round( $decimal, $places );
			$text    = null === $rounded ? $text : Counterfoil_Einvoice::str( $rounded );
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
	 * @param int|WC_Order $order      Order or its id.
	 * @param bool         $on_request Whether the shop asked for it (the
	 *                                 backfill, the bulk action, its PDF
	 *                                 plugin making a document): numbered
	 *                                 whatever its status, payment or age;
	 *                                 else a hook's event, by should_number().
	 * @param string       $context    A hook's event: 'status' or 'payment'.
	 * @return array|WP_Error|null The payment flow's answer (number, post,
	 *                             sequence, scope_key, created), an error,
	 *                             or null when the order is not one to number.
	 */
	public static function number_order( $order, $on_request = false, $context = 'status' ) {
		$order = is_object( $order ) ? $order : wc_get_order( (int) $order );
		if ( ! $order || ! is_a( $order, 'WC_Order' ) || 'shop_order' !== $order->get_type() ) {
			return null;
		}
		// An order numbered once never goes through the flow again: its
		// number stands whatever happens to the order after.
		$ours = self::counterfoil_number_of( $order );
		if ( '' !== $ours && '' === (string) $order->get_meta( self::META_PENDING, true ) ) {
			return array(
				'number'  => $ours,
				'post'    => get_post( (int) $order->get_meta( self::META_POST, true ) ),
				'created' => false,
			);
		}
		if ( '' === $ours && ! $on_request && ! self::in_flow( $order ) && ! self::should_number( $order, $context ) ) {
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
		$issue   = function () use ( $payment, $order ) {
			return self::with_order_in_hand(
				$order,
				function () use ( $payment, $order ) {
					return Counterfoil_Invoices::for_payment( $payment, '', self::paid_time( $order ) );
				}
			);
		};
		if ( is_wp_error( $payment ) ) {
			$result = $payment;
		} elseif ( 'status' === $context && ! $on_request && doing_action( 'woocommerce_order_status_' . $order->get_status() ) ) {
			// In the paid status's transition, whose e-mails follow: the first
			// document made of the invoice freezes its input, and the
			// transition's end freezes it if no e-mail made one.
			list( $result, $held ) = Counterfoil_Documents::holding_freeze( $issue );
			foreach ( $held as $post_id ) {
				self::$to_freeze[ (int) $post_id ] = $order;
			}
		} else {
			$result = $issue();
		}
		self::$answered[ $id ] = $result;
		if ( is_wp_error( $result ) ) {
			self::failed( $order, $result );
			return $result;
		}
		self::remember( $order, $result );
		return $result;
	}

	/**
	 * Whether the order is already in the numbering flow (a retry pending,
	 * or this request's earlier answer): it goes on whatever the settings
	 * say now.
	 *
	 * @param WC_Order $order Order.
	 * @return bool
	 */
	private static function in_flow( $order ) {
		return isset( self::$answered[ (int) $order->get_id() ] ) || '' !== (string) $order->get_meta( self::META_PENDING, true );
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
			self::$written[ (int) $order->get_id() ] = $number;
			return;
		}
		$order->update_meta_data( self::META_NUMBER, $number );
		$order->update_meta_data( self::META_POST, (int) $result['post']->ID );
		$order->delete_meta_data( self::META_PENDING );
		$order->delete_meta_data( self::META_ATTEMPTS );
		$order->save_meta_data();
		self::$written[ (int) $order->get_id() ] = $number;
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
		if ( $retry && self::attempts( $order ) >= self::MAX_ATTEMPTS ) {
			self::give_up( 'order', $order, 0, $error->get_error_message() );
		} elseif ( $retry ) {
			self::schedule( self::RETRY_HOOK, array( (int) $order->get_id() ), self::attempts( $order ) );
		}
	}

	/**
	 * Ends a retry that will not succeed by itself: an order note and the
	 * admin notice (until an administrator dismisses it).
	 *
	 * @param string   $kind   'order' or 'refund'.
	 * @param WC_Order $order  The order.
	 * @param int      $refund The refund (for a credit note), or 0.
	 * @param string   $why    The last error.
	 */
	private static function give_up( $kind, $order, $refund, $why ) {
		$order->add_order_note(
			'order' === $kind
				/* translators: 1: retries, 2: the last error */
				? sprintf( __( 'Counterfoil stopped retrying this order\'s invoice number after %1$d tries: %2$s Number it from Settings → Invoice numbers (backfill) once the cause is mended.', 'counterfoil' ), self::MAX_ATTEMPTS, $why )
				/* translators: 1: refund id, 2: retries, 3: the last error */
				: sprintf( __( 'Counterfoil stopped retrying the credit note of refund #%1$d after %2$d tries: %3$s', 'counterfoil' ), $refund, self::MAX_ATTEMPTS, $why )
		);
		$list   = get_option( self::GAVE_UP_OPTION, array() );
		$list   = is_array( $list ) ? $list : array();
		$list[] = array( $kind, (int) $order->get_id(), (int) $refund, $why, time() );
		update_option( self::GAVE_UP_OPTION, array_slice( $list, -50 ), false );
	}

	/** Hooked on admin_notices: what the retries gave up on, for those who run the shop. */
	public static function gave_up_notice() {
		if ( ! current_user_can( 'manage_woocommerce' ) ) {
			return;
		}
		$list = get_option( self::GAVE_UP_OPTION, array() );
		if ( ! is_array( $list ) || ! $list ) {
			return;
		}
		$orders = array_unique( array_map( 'intval', array_column( $list, 1 ) ) );
		printf(
			'<div class="notice notice-error"><p>%s</p></div>',
			esc_html(
				sprintf(
					/* translators: 1: how many, 2: order ids */
					__( 'Counterfoil stopped retrying %1$d invoice numbers or credit notes (orders %2$s): each order has a note saying why.', 'counterfoil' ),
					count( $list ),
					implode( ', ', array_slice( $orders, 0, 20 ) )
				)
			)
		);
	}

	/**
	 * Hooked on the renewal data of WooCommerce Subscriptions: a renewal
	 * takes none of our meta from its parent.
	 *
	 * @param array $data Meta (key => value, or rows with meta_key).
	 * @return array
	 */
	public static function without_our_meta( $data ) {
		if ( ! is_array( $data ) ) {
			return $data;
		}
		foreach ( $data as $key => $value ) {
			$name = is_array( $value ) && isset( $value['meta_key'] ) ? (string) $value['meta_key'] : (string) $key;
			if ( 0 === strpos( $name, '_counterfoil_' ) ) {
				unset( $data[ $key ] );
			}
		}
		return $data;
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
	 * Hooked on woocommerce_order_status_cancelled: a paid order cancelled
	 * after its invoice gets a credit note of what is left of it (the
	 * setting, on by default), keyed by the order (`cancelled-<id>`): once.
	 *
	 * @param int      $order_id Order.
	 * @param WC_Order $order    The order.
	 * @return array|WP_Error|null
	 */
	public static function on_cancelled( $order_id, $order = null ) {
		$order = is_object( $order ) ? $order : wc_get_order( (int) $order_id );
		if ( ! $order || ! (int) get_option( self::CREDIT_CANCELLED_OPTION, 1 ) || '' === self::counterfoil_number_of( $order ) ) {
			return null;
		}
		$currency = strtoupper( (string) $order->get_currency() );
		$left     = self::amount( (string) ( (float) $order->get_total() - (float) $order->get_total_refunded() ), $currency );
		if ( is_wp_error( $left ) || (float) $left <= 0 ) {
			return null;
		}
		$result = Counterfoil_Credit_Notes::for_refund(
			array(
				'gateway'        => self::GATEWAY,
				'refund_id'      => 'cancelled-' . (int) $order->get_id(),
				'transaction_id' => (string) $order->get_id(),
				'amount'         => $left,
				'reason'         => __( 'Order cancelled', 'counterfoil' ),
			)
		);
		if ( is_wp_error( $result ) ) {
			/* translators: %s: the reason */
			$order->add_order_note( sprintf( __( 'No credit note for the cancellation: %s', 'counterfoil' ), $result->get_error_message() ) );
			return $result;
		}
		if ( ! empty( $result['created'] ) ) {
			/* translators: 1: credit note number, 2: invoice number */
			$order->add_order_note( sprintf( __( 'Credit note %1$s issued by Counterfoil for the cancelled order (invoice %2$s).', 'counterfoil' ), $result['number'], $result['refers_to'] ) );
		}
		return $result;
	}

	/**
	 * Hooked on woocommerce_refund_deleted: a refund deleted after its
	 * credit note was issued is reversed. An issued credit note never
	 * changes and is never unnumbered, so the amount it credited is invoiced
	 * again under a new number (transaction `reversal-<refund id>`: once),
	 * with the credit note's lines and the order's buyer, and the order says
	 * so.
	 *
	 * @param int $refund_id Refund.
	 * @param int $order_id  Order.
	 * @return array|WP_Error|null The new invoice, or why not.
	 */
	public static function on_refund_deleted( $refund_id, $order_id ) {
		$notes = get_posts(
			array(
				'post_type'   => Counterfoil_Invoice_Type::CREDIT_NOTE_TYPE,
				'post_status' => 'any',
				'fields'      => 'ids',
				'numberposts' => 1,
				'meta_query'  => array( // phpcs:ignore WordPress.DB.SlowDBQuery.slow_db_query_meta_query -- one refund's credit note, on a deletion.
					array(
						'key'   => '_counterfoil_gateway',
						'value' => self::GATEWAY,
					),
					array(
						'key'   => '_counterfoil_transaction_id',
						'value' => (string) (int) $refund_id,
					),
				),
			)
		);
		$order = wc_get_order( (int) $order_id );
		if ( ! $notes || ! $order ) {
			return null;
		}
		$credit = get_post( $notes[0] );
		$key    = 'reversal-' . (int) $refund_id;
		$input  = Counterfoil_Documents::input_for( $credit );
		Counterfoil_Documents::remember_details(
			self::GATEWAY,
			$key,
			array(
				'buyer' => Counterfoil_WooCommerce_Documents::buyer_of( $order ),
				'lines' => ! empty( $input['lines'] ) ? $input['lines'] : null,
			)
		);
		$result = Counterfoil_Invoices::for_payment(
			array(
				'gateway'        => self::GATEWAY,
				'transaction_id' => $key,
				'user_id'        => self::issuer( $order ),
				'amount'         => (string) get_post_meta( $credit->ID, '_counterfoil_amount', true ),
				'currency'       => (string) get_post_meta( $credit->ID, '_counterfoil_currency', true ),
			)
		);
		$order->add_order_note(
			is_wp_error( $result )
				/* translators: 1: refund id, 2: credit note number, 3: the reason */
				? sprintf( __( 'Refund #%1$d was deleted after its credit note %2$s was issued, and its amount could not be invoiced again: %3$s', 'counterfoil' ), (int) $refund_id, $credit->post_title, $result->get_error_message() )
				/* translators: 1: refund id, 2: credit note number, 3: the new invoice number */
				: sprintf( __( 'Refund #%1$d was deleted after its credit note %2$s was issued: the credit note stands (an issued document never changes), and its amount is invoiced again as %3$s.', 'counterfoil' ), (int) $refund_id, $credit->post_title, $result['number'] )
		);
		return $result;
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
			// Its invoice is on the way (a retry pending, or numbering now):
			// the credit note follows it, a bounded number of times. An order
			// Counterfoil never numbered (paid before it took over, refused
			// for good, not one it numbers) gets none, said once on the order.
			$coming = '' !== (string) $order->get_meta( self::META_PENDING, true )
				|| ( self::is_paid( $order ) && ! self::before_takeover( $order ) && self::should_number( $order, 'status' ) );
			if ( $coming && $attempts < self::MAX_ATTEMPTS ) {
				self::schedule( self::REFUND_RETRY_HOOK, array( $order_id, $refund_id ), max( 1, $attempts ) );
			} elseif ( $coming ) {
				self::give_up( 'refund', $order, $refund_id, __( 'the order still has no invoice number.', 'counterfoil' ) );
			} elseif ( '' === (string) $refund->get_meta( self::META_ATTEMPTS, true ) ) {
				$refund->update_meta_data( self::META_ATTEMPTS, 0 );
				$refund->save_meta_data();
				/* translators: %d: refund id */
				$order->add_order_note( sprintf( __( 'No credit note for refund #%d: the order has no invoice of Counterfoil\'s (paid before Counterfoil took over, or not one it numbers).', 'counterfoil' ), $refund_id ) );
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
				// At most 255 bytes, cut between characters.
				'reason'         => mb_strcut( (string) $refund->get_reason(), 0, 255, 'UTF-8' ),
			)
		);
		if ( is_wp_error( $result ) ) {
			Counterfoil_Log::once( 'woocommerce-refund:' . $result->get_error_code(), sprintf( 'refund %d of order %d: %s: %s', $refund_id, $order_id, $result->get_error_code(), $result->get_error_message() ) );
			if ( self::retryable( $result ) && $attempts >= self::MAX_ATTEMPTS ) {
				self::give_up( 'refund', $order, $refund_id, $result->get_error_message() );
			} elseif ( self::retryable( $result ) ) {
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
