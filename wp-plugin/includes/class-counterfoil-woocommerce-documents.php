<?php
/**
 * WooCommerce and e-invoices: an order's buyer is its billing address and
 * its lines are its items, shipping and fees (a refund's: its own items,
 * or one line for the amount at the order's single VAT rate); the
 * customer's order e-mails carry the invoice's PDF (Factur-X, when the
 * extension is loaded) and its UBL when they can be made; the customer
 * downloads them from the order's page in My Account.
 *
 * Invariants: read through WooCommerce's CRUD only; the buyer is added to
 * the document input only when the payment carried none and the order is
 * the invoice's (gateway `woocommerce`, transaction the order's id); each
 * line is stated at the VAT rate WooCommerce charged on it (category S),
 * an untaxed one under the seller's default category, and a line with two
 * taxes (compound rates) is not stated at all — the document is refused
 * rather than wrong, never given a line under another VAT treatment; each
 * line states the VAT WooCommerce charged on it (its own rounding per
 * line, within what EN 16931 allows, instead of a rounding amount); the
 * payment is stated as it is: paid only when WooCommerce recorded the
 * payment (a paid date: cash on delivery, bank transfer and on-hold orders
 * have none), else the whole amount due with payment terms and a due date
 * from the settings (BR-CO-25); the means by the order's payment method
 * (card 48, PayPal 68, bank transfer 58 to the seller's IBAN, cash on
 * delivery 10, cheque 20; none when the method is unknown: filter
 * `counterfoil_woocommerce_payment_means`), never the seller's IBAN on a
 * card; the order's number is the sales order reference (BT-14), never the
 * buyer's reference (BT-10), which comes from the order's own meta with the
 * buyer's purchase order (BT-13); the shipping address is the deliver-to
 * address (BG-15) and the completion date the supply date (BT-72); an
 * e-mail never fails for want of a document — it goes without the file,
 * and the reason is logged once; the attachments are written to a private
 * temporary directory that is removed when the request ends; a customer
 * downloads only their own order's invoice — logged in as its customer
 * with the link's nonce, or a guest holding the order's key (WooCommerce's
 * own proof for a guest's order page).
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * An order's e-invoice.
 */
final class Counterfoil_WooCommerce_Documents {
	/** The customer e-mails that carry the invoice. */
	const EMAILS = array( 'customer_processing_order', 'customer_completed_order', 'customer_invoice' );

	/** The admin-post action of a customer's download. */
	const ACTION = 'counterfoil_order_document';
	/** What a customer downloads. */
	const CUSTOMER_FORMATS = array( 'pdf', 'ubl' );

	/** The means of payment (UNCL4461) of WooCommerce's own and common payment methods. */
	const PAYMENT_MEANS = array(
		'bacs'                     => '58',
		'cheque'                   => '20',
		'cod'                      => '10',
		'stripe'                   => '48',
		'stripe_cc'                => '48',
		'woocommerce_payments'     => '48',
		'ppcp-credit-card-gateway' => '48',
		'ppcp-gateway'             => '68',
		'paypal'                   => '68',
	);
	/** Order meta a checkout field may fill: the buyer's reference (BT-10), such as a Leitweg-ID. */
	const BUYER_REFERENCE_META = '_counterfoil_buyer_reference';
	/** Order meta a checkout field may fill: the buyer's purchase order (BT-13). */
	const PURCHASE_ORDER_META = '_counterfoil_purchase_order';

	/** @var string[] Files to remove at shutdown. */
	private static $temporary = array();

	/** Hooks. */
	public static function init() {
		add_filter( 'counterfoil_document_input', array( __CLASS__, 'input' ), 5, 2 );
		add_filter( 'woocommerce_email_attachments', array( __CLASS__, 'attachments' ), 10, 3 );
		add_action( 'admin_post_' . self::ACTION, array( __CLASS__, 'handle_download' ) );
		add_action( 'admin_post_nopriv_' . self::ACTION, array( __CLASS__, 'handle_download' ) );
	}

	/**
	 * The formats an order's invoice can be had in on this site.
	 *
	 * @return string[]
	 */
	private static function formats() {
		return Counterfoil_Documents::pdf_available() ? self::CUSTOMER_FORMATS : array( 'ubl' );
	}

	/**
	 * The customer's download link of an order's invoice.
	 *
	 * @param WC_Order $order  Order.
	 * @param string   $format pdf or ubl.
	 * @return string
	 */
	public static function customer_url( $order, $format ) {
		$args = array(
			'action' => self::ACTION,
			'order'  => $order->get_id(),
			'format' => $format,
		);
		if ( ! is_user_logged_in() ) {
			$args['key'] = $order->get_order_key();
			return add_query_arg( $args, admin_url( 'admin-post.php' ) );
		}
		return wp_nonce_url( add_query_arg( $args, admin_url( 'admin-post.php' ) ), self::ACTION . '_' . $order->get_id() );
	}

	/**
	 * My Account's order view: the invoice's downloads.
	 *
	 * @param WC_Order $order Order.
	 */
	public static function customer_links( $order ) {
		$post = (int) $order->get_meta( Counterfoil_WooCommerce::META_POST, true );
		if ( ! $post || is_wp_error( Counterfoil_Documents::document( $post, 'ubl' ) ) ) {
			return;
		}
		$labels = array(
			'pdf' => __( 'Download the invoice (PDF)', 'counterfoil' ),
			'ubl' => __( 'E-invoice (UBL)', 'counterfoil' ),
		);
		echo '<p class="counterfoil-customer-documents">';
		foreach ( self::formats() as $format ) {
			printf( '<a class="woocommerce-button button" href="%1$s">%2$s</a> ', esc_url( self::customer_url( $order, $format ) ), esc_html( $labels[ $format ] ) );
		}
		echo '</p>';
	}

	/** Sends a customer their order's invoice (their own order only). */
	public static function handle_download() {
		// phpcs:disable WordPress.Security.NonceVerification.Recommended -- a logged-in customer's nonce is checked below; a guest proves the order by its key.
		$id     = isset( $_GET['order'] ) ? absint( $_GET['order'] ) : 0;
		$format = isset( $_GET['format'] ) ? sanitize_key( wp_unslash( $_GET['format'] ) ) : '';
		$key    = isset( $_GET['key'] ) ? sanitize_text_field( wp_unslash( $_GET['key'] ) ) : '';
		// phpcs:enable
		$order   = $id ? wc_get_order( $id ) : null;
		$refused = function () {
			wp_die( esc_html__( 'You are not allowed to download this invoice.', 'counterfoil' ), 403 );
		};
		if ( ! $order || 'shop_order' !== $order->get_type() || ! in_array( $format, self::formats(), true ) ) {
			$refused();
		}
		if ( is_user_logged_in() ) {
			if ( (int) $order->get_customer_id() !== get_current_user_id() || ! wp_verify_nonce( isset( $_GET['_wpnonce'] ) ? sanitize_key( wp_unslash( $_GET['_wpnonce'] ) ) : '', self::ACTION . '_' . $id ) ) {
				$refused();
			}
		} elseif ( '' === $key || 0 !== (int) $order->get_customer_id() || ! hash_equals( (string) $order->get_order_key(), $key ) ) {
			$refused();
		}
		$post  = (int) $order->get_meta( Counterfoil_WooCommerce::META_POST, true );
		$bytes = $post ? Counterfoil_Documents::document( $post, $format ) : new WP_Error( 'counterfoil_document_not_found', '', array( 'status' => 404 ) );
		if ( is_wp_error( $bytes ) ) {
			wp_die( esc_html__( 'This order has no invoice to download yet.', 'counterfoil' ), 404 );
		}
		Counterfoil_Documents::send( $bytes, get_the_title( $post ), $format );
	}

	/**
	 * The order of an invoice post, or null.
	 *
	 * @param WP_Post $post Invoice or credit note.
	 * @return WC_Order|null
	 */
	private static function order_of( WP_Post $post ) {
		$invoice = $post;
		if ( Counterfoil_Invoice_Type::CREDIT_NOTE_TYPE === $post->post_type ) {
			$invoice = get_post( (int) get_post_meta( $post->ID, '_counterfoil_refers_to', true ) );
		}
		if ( ! $invoice || Counterfoil_WooCommerce::GATEWAY !== get_post_meta( $invoice->ID, '_counterfoil_gateway', true ) ) {
			return null;
		}
		$order = wc_get_order( (int) get_post_meta( $invoice->ID, '_counterfoil_transaction_id', true ) );
		return $order && 'shop_order' === $order->get_type() ? $order : null;
	}

	/**
	 * The buyer of an order: its billing address (the party shape).
	 *
	 * @param WC_Order $order Order.
	 * @return array
	 */
	public static function buyer_of( $order ) {
		$name  = trim( $order->get_billing_company() );
		$name  = '' !== $name ? $name : trim( $order->get_billing_first_name() . ' ' . $order->get_billing_last_name() );
		$buyer = array(
			'name'     => $name,
			'street'   => trim( $order->get_billing_address_1() . ' ' . $order->get_billing_address_2() ),
			'city'     => $order->get_billing_city(),
			'postcode' => $order->get_billing_postcode(),
			'country'  => strtoupper( (string) $order->get_billing_country() ),
			'email'    => $order->get_billing_email(),
		);
		if ( '' !== (string) $buyer['email'] ) {
			$buyer['electronic_address']        = $buyer['email'];
			$buyer['electronic_address_scheme'] = 'EM';
		}
		/**
		 * The buyer of an order's e-invoice (add a VAT id kept by another plugin).
		 *
		 * @param array    $buyer The billing address in the party shape.
		 * @param WC_Order $order The order.
		 */
		$buyer = apply_filters( 'counterfoil_woocommerce_buyer', $buyer, $order );
		return array_filter(
			(array) $buyer,
			function ( $v ) {
				return is_string( $v ) && '' !== trim( $v );
			}
		);
	}

	/**
	 * A decimal string of a WooCommerce amount or rate (absolute value).
	 *
	 * @param mixed $v Amount.
	 * @return string
	 */
	private static function decimal( $v ) {
		$s = rtrim( rtrim( number_format( abs( (float) $v ), 6, '.', '' ), '0' ), '.' );
		return '' === $s ? '0' : $s;
	}

	/**
	 * The lines of an order or a refund: its items, shipping and fees, or
	 * null when it has none or one cannot be stated (two taxes on a line;
	 * an untaxed line and no default category in the settings).
	 *
	 * @param WC_Abstract_Order $order  Order or refund.
	 * @param array             $seller The seller (default_vat_category).
	 * @return array|null
	 */
	public static function lines_of( $order, array $seller ) {
		$items = $order->get_items( array( 'line_item', 'shipping', 'fee' ) );
		if ( empty( $items ) ) {
			return null;
		}
		$lines = array();
		foreach ( $items as $item ) {
			$taxes = $item->get_taxes();
			$taxed = array_filter(
				isset( $taxes['total'] ) && is_array( $taxes['total'] ) ? $taxes['total'] : array(),
				function ( $t ) {
					return '' !== $t && 0.0 !== (float) $t;
				}
			);
			if ( count( $taxed ) > 1 ) {
				return null;
			}
			$rate_id = 1 === count( $taxed ) ? (int) key( $taxed ) : null;
			$vat     = Counterfoil_Vat_Categories::of_line(
				$rate_id,
				null !== $rate_id ? self::decimal( self::rate_charged( $order, $rate_id ) ) : '0',
				is_callable( array( $item, 'get_tax_class' ) ) ? (string) $item->get_tax_class() : '',
				$seller
			);
			if ( null === $vat ) {
				return null;
			}
			$total    = (float) $item->get_total();
			$quantity = 'line_item' === $item->get_type() ? abs( (float) $item->get_quantity() ) : 1.0;
			$name     = (string) $item->get_name();
			if ( 'shipping' === $item->get_type() ) {
				/* translators: %s: the shipping method */
				$name = sprintf( __( 'Shipping: %s', 'counterfoil' ), $name );
			}
			// A price that divides exactly (to 6 decimals) keeps the quantity; else one line of the whole.
			$price = $quantity > 0 ? self::decimal( $total / $quantity ) : '';
			if ( $quantity <= 0 || abs( (float) $price * $quantity - abs( $total ) ) > 0.0000005 || floor( $quantity ) !== $quantity ) {
				/* translators: 1: quantity, 2: item */
				$name     = $quantity > 1 ? sprintf( __( '%1$s × %2$s', 'counterfoil' ), self::decimal( $quantity ), $name ) : $name;
				$quantity = 1.0;
				$price    = self::decimal( $total );
			}
			// A refund states positive amounts; a discount fee on an order is a negative quantity.
			$negative = $total < 0 && 'shop_order_refund' !== $order->get_type();
			$line     = array(
				'name'       => '' === trim( $name ) ? __( 'Item', 'counterfoil' ) : $name,
				'quantity'   => ( $negative ? '-' : '' ) . self::decimal( $quantity ),
				'unit_price' => $price,
			) + $vat;
			// The VAT WooCommerce charged on this line, as it rounded it
			// (a discount's VAT is negative, as its quantity).
			if ( 1 === count( $taxed ) ) {
				$line['vat_amount'] = ( $negative ? '-' : '' ) . self::decimal( reset( $taxed ) );
			}
			if ( 'line_item' === $item->get_type() && is_callable( array( $item, 'get_product' ) ) ) {
				$product = $item->get_product();
				if ( $product && '' !== (string) $product->get_sku() ) {
					$line['seller_item_id'] = (string) $product->get_sku();
				}
				$gtin = $product && is_callable( array( $product, 'get_global_unique_id' ) ) ? (string) $product->get_global_unique_id() : '';
				if ( '' !== $gtin && Counterfoil_Einvoice::is_gtin( $gtin ) ) {
					$line['gtin'] = $gtin;
				}
			}
			$lines[] = $line;
		}
		return $lines;
	}

	/**
	 * The rate a tax was charged at: the order's own tax item's (the rate
	 * as charged, WooCommerce 3.7+), else the tax table's.
	 *
	 * @param WC_Abstract_Order $order Order or refund.
	 * @param int               $id    Tax rate id.
	 * @return float|string
	 */
	private static function rate_charged( $order, $id ) {
		$source = 'shop_order_refund' === $order->get_type() && $order->get_parent_id() ? wc_get_order( $order->get_parent_id() ) : $order;
		foreach ( $source ? $source->get_items( 'tax' ) : array() as $tax ) {
			if ( is_callable( array( $tax, 'get_rate_percent' ) ) && (int) $tax->get_rate_id() === $id && null !== $tax->get_rate_percent() ) {
				return $tax->get_rate_percent();
			}
		}
		return WC_Tax::get_rate_percent_value( $id );
	}

	/**
	 * What an order's invoice states of its payment: paid only when
	 * WooCommerce recorded it (a paid date), else the whole amount due with
	 * the seller's payment terms and a due date; the means by the payment
	 * method.
	 *
	 * @param WC_Order $order      The order.
	 * @param array    $seller     The seller (payment_terms, payment_days).
	 * @param string   $issue_date The invoice's issue date.
	 * @return array The input's payment fields.
	 */
	public static function payment_state_of( $order, array $seller, $issue_date ) {
		$method = is_callable( array( $order, 'get_payment_method' ) ) ? (string) $order->get_payment_method() : '';
		$means  = isset( self::PAYMENT_MEANS[ $method ] ) ? self::PAYMENT_MEANS[ $method ] : '';
		if ( '58' === $means && empty( $seller['iban'] ) ) {
			$means = '';
		}
		/**
		 * The means of payment (UNCL4461 code: 48 card, 58 SEPA transfer, 10
		 * cash …) an order's invoice states; empty states none.
		 *
		 * @param string   $means  The code for the order's payment method, or ''.
		 * @param string   $method The payment method's id.
		 * @param WC_Order $order  The order.
		 */
		$means = (string) apply_filters( 'counterfoil_woocommerce_payment_means', $means, $method, $order );
		$out   = array( 'paid' => null !== $order->get_date_paid() );
		if ( '' !== $means ) {
			$out['payment_means'] = $means;
		}
		if ( $out['paid'] ) {
			return $out;
		}
		$days = isset( $seller['payment_days'] ) && ctype_digit( (string) $seller['payment_days'] ) ? (int) $seller['payment_days'] : 14;
		if ( 'cod' === $method ) {
			$out['payment_terms'] = __( 'Cash on delivery: payable to the courier on delivery.', 'counterfoil' );
			return $out;
		}
		$due = DateTimeImmutable::createFromFormat( '!Y-m-d', (string) $issue_date );
		if ( $due ) {
			$out['due_date'] = $due->modify( '+' . $days . ' days' )->format( 'Y-m-d' );
		}
		$out['payment_terms'] = ! empty( $seller['payment_terms'] )
			? (string) $seller['payment_terms']
			/* translators: %d: days */
			: sprintf( __( 'Payable within %d days of the invoice date.', 'counterfoil' ), $days );
		return $out;
	}

	/**
	 * An order's references and delivery: its number as the sales order
	 * (BT-14), the buyer's reference and purchase order from its meta
	 * (BT-10, BT-13), the shipping address (BG-15) and completion date (BT-72).
	 *
	 * @param WC_Order $order The order.
	 * @return array The input's fields (buyer_reference null: none).
	 */
	public static function references_of( $order ) {
		$out = array(
			'buyer_reference'       => null,
			'sales_order_reference' => (string) $order->get_order_number(),
		);
		foreach ( array( 'buyer_reference' => self::BUYER_REFERENCE_META, 'order_reference' => self::PURCHASE_ORDER_META ) as $key => $meta ) {
			$value = trim( (string) $order->get_meta( $meta ) );
			if ( '' !== $value ) {
				$out[ $key ] = $value;
			}
		}
		$country = is_callable( array( $order, 'get_shipping_country' ) ) ? strtoupper( (string) $order->get_shipping_country() ) : '';
		if ( '' !== $country ) {
			$name              = trim( (string) $order->get_shipping_company() );
			$name              = '' !== $name ? $name : trim( $order->get_shipping_first_name() . ' ' . $order->get_shipping_last_name() );
			$out['deliver_to'] = array_filter(
				array(
					'name'     => $name,
					'street'   => trim( $order->get_shipping_address_1() . ' ' . $order->get_shipping_address_2() ),
					'city'     => (string) $order->get_shipping_city(),
					'postcode' => (string) $order->get_shipping_postcode(),
					'country'  => $country,
				),
				'strlen'
			);
		}
		$completed = is_callable( array( $order, 'get_date_completed' ) ) ? $order->get_date_completed() : null;
		if ( $completed ) {
			$out['supply_date'] = $completed->date( 'Y-m-d' );
		}
		return $out;
	}

	/**
	 * A refund without items: one line for its amount at the order's one
	 * VAT rate (null when the order's lines have more than one).
	 *
	 * @param WC_Order $order  The order.
	 * @param string   $amount The refund's amount with VAT.
	 * @param array    $seller The seller.
	 * @return array|null
	 */
	private static function refund_line( $order, $amount, array $seller ) {
		$lines = self::lines_of( $order, $seller );
		if ( null === $lines ) {
			return null;
		}
		$rates = array();
		foreach ( $lines as $l ) {
			$rates[ $l['vat_category'] . ' ' . $l['vat_rate'] ] = $l;
		}
		if ( 1 !== count( $rates ) ) {
			return null;
		}
		$one = reset( $rates );
		return array(
			array(
				/* translators: %d: the order */
				'name'         => sprintf( __( 'Refund of order #%d', 'counterfoil' ), $order->get_id() ),
				'quantity'     => '1',
				'unit_price'   => number_format( (float) $amount / ( 1 + (float) $one['vat_rate'] / 100 ), 2, '.', '' ),
				'vat_rate'     => $one['vat_rate'],
				'vat_category' => $one['vat_category'],
			) + array_intersect_key( $one, array_flip( array( 'vat_exemption_code', 'vat_exemption_reason' ) ) ),
		);
	}

	/**
	 * Hooked on counterfoil_document_input: an order's buyer, when the
	 * payment carried none, and its lines (a refund's for a credit note).
	 *
	 * @param array   $input Document input.
	 * @param WP_Post $post  Invoice or credit note.
	 * @return array
	 */
	public static function input( $input, $post ) {
		if ( ! ( $post instanceof WP_Post ) ) {
			return $input;
		}
		$order = self::order_of( $post );
		if ( ! $order ) {
			return $input;
		}
		if ( empty( $input['buyer'] ) ) {
			$input['buyer'] = self::buyer_of( $order );
		}
		$seller = isset( $input['seller'] ) && is_array( $input['seller'] ) ? $input['seller'] : array();
		$input  = array_merge( $input, self::references_of( $order ) );
		if ( null === $input['buyer_reference'] ) {
			unset( $input['buyer_reference'] );
		}
		if ( Counterfoil_Invoice_Type::CREDIT_NOTE_TYPE !== $post->post_type ) {
			$input = array_merge( $input, self::payment_state_of( $order, $seller, (string) $input['issue_date'] ) );
		}
		if ( Counterfoil_Invoice_Type::CREDIT_NOTE_TYPE === $post->post_type ) {
			$refund = wc_get_order( (int) get_post_meta( $post->ID, '_counterfoil_transaction_id', true ) );
			$lines  = null;
			if ( $refund && 'shop_order_refund' === $refund->get_type() ) {
				$lines = self::lines_of( $refund, $seller );
				$lines = null === $lines ? self::refund_line( $order, (string) get_post_meta( $post->ID, '_counterfoil_amount', true ), $seller ) : $lines;
			}
		} else {
			$lines = self::lines_of( $order, $seller );
		}
		// Lines that cannot be stated leave none: the document is refused
		// naming BG-25, never made of a default line under another VAT
		// treatment. An order without items is a payment without lines: the
		// seller's default line for payments without lines, as any other.
		$source = Counterfoil_Invoice_Type::CREDIT_NOTE_TYPE === $post->post_type && isset( $refund ) && $refund ? $refund : $order;
		if ( null !== $lines ) {
			$input['lines'] = $lines;
		} elseif ( array() !== $source->get_items( array( 'line_item', 'shipping', 'fee' ) ) ) {
			$input['lines'] = array();
		}
		return $input;
	}

	/**
	 * Hooked on woocommerce_email_attachments: the invoice's PDF (with the
	 * extension) and UBL on the customer's order e-mails.
	 *
	 * @param array  $attachments Files.
	 * @param string $email_id    The e-mail.
	 * @param mixed  $order       The order (or another object).
	 * @return array
	 */
	public static function attachments( $attachments, $email_id, $order = null ) {
		if ( ! in_array( $email_id, self::EMAILS, true ) || ! is_object( $order ) || ! is_a( $order, 'WC_Order' ) ) {
			return $attachments;
		}
		$post = (int) $order->get_meta( Counterfoil_WooCommerce::META_POST, true );
		if ( ! $post ) {
			return $attachments;
		}
		$attachments = (array) $attachments;
		$dir         = trailingslashit( get_temp_dir() ) . 'counterfoil-' . wp_generate_password( 12, false );
		foreach ( self::formats() as $format ) {
			$bytes = Counterfoil_Documents::document( $post, $format );
			if ( is_wp_error( $bytes ) ) {
				Counterfoil_Log::once( 'woocommerce-email-document:' . $bytes->get_error_code(), sprintf( 'order %d: no e-invoice on its e-mail: %s', $order->get_id(), $bytes->get_error_message() ) );
				return $attachments;
			}
			$file = $dir . '/' . sanitize_file_name( get_the_title( $post ) ) . Counterfoil_Documents::FORMATS[ $format ][1];
			if ( ! wp_mkdir_p( $dir ) || false === file_put_contents( $file, $bytes ) ) { // phpcs:ignore WordPress.WP.AlternativeFunctions.file_system_operations_file_put_contents -- a private temporary file.
				return $attachments;
			}
			if ( empty( self::$temporary ) ) {
				add_action( 'shutdown', array( __CLASS__, 'remove_temporary' ) );
			}
			self::$temporary[] = $file;
			$attachments[]     = $file;
		}
		return $attachments;
	}

	/** Removes the attachments' temporary files. */
	public static function remove_temporary() {
		foreach ( self::$temporary as $file ) {
			wp_delete_file( $file );
			@rmdir( dirname( $file ) ); // phpcs:ignore WordPress.PHP.NoSilencedErrors.Discouraged,WordPress.WP.AlternativeFunctions.file_system_operations_rmdir -- its own empty directory.
		}
		self::$temporary = array();
	}
}
