<?php
/**
 * WooCommerce and e-invoices: an order's buyer is its billing address, and
 * the customer's order e-mails carry the invoice's UBL when one can be made.
 *
 * Invariants: read through WooCommerce's CRUD only; the buyer is added to
 * the document input only when the payment carried none and the order is
 * the invoice's (gateway `woocommerce`, transaction the order's id); an
 * e-mail never fails for want of a document — it goes without the file,
 * and the reason is logged once; the attachment is written to a private
 * temporary file that is removed when the request ends.
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

	/** @var string[] Files to remove at shutdown. */
	private static $temporary = array();

	/** Hooks. */
	public static function init() {
		add_filter( 'counterfoil_document_input', array( __CLASS__, 'input' ), 5, 2 );
		add_filter( 'woocommerce_email_attachments', array( __CLASS__, 'attachments' ), 10, 3 );
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
	 * Hooked on counterfoil_document_input: an order's buyer, when the
	 * payment carried none.
	 *
	 * @param array   $input Document input.
	 * @param WP_Post $post  Invoice or credit note.
	 * @return array
	 */
	public static function input( $input, $post ) {
		if ( ! empty( $input['buyer'] ) || ! ( $post instanceof WP_Post ) ) {
			return $input;
		}
		$order = self::order_of( $post );
		if ( $order ) {
			$input['buyer'] = self::buyer_of( $order );
		}
		return $input;
	}

	/**
	 * Hooked on woocommerce_email_attachments: the invoice's UBL on the
	 * customer's order e-mails.
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
		$ubl = Counterfoil_Documents::document( $post, 'ubl' );
		if ( is_wp_error( $ubl ) ) {
			Counterfoil_Log::once( 'woocommerce-email-document:' . $ubl->get_error_code(), sprintf( 'order %d: no e-invoice on its e-mail: %s', $order->get_id(), $ubl->get_error_message() ) );
			return $attachments;
		}
		$dir  = trailingslashit( get_temp_dir() ) . 'counterfoil-' . wp_generate_password( 12, false );
		$file = $dir . '/' . sanitize_file_name( get_the_title( $post ) ) . '-ubl.xml';
		if ( ! wp_mkdir_p( $dir ) || false === file_put_contents( $file, $ubl ) ) { // phpcs:ignore WordPress.WP.AlternativeFunctions.file_system_operations_file_put_contents -- a private temporary file.
			return $attachments;
		}
		if ( empty( self::$temporary ) ) {
			add_action( 'shutdown', array( __CLASS__, 'remove_temporary' ) );
		}
		self::$temporary[] = $file;
		$attachments       = (array) $attachments;
		$attachments[]     = $file;
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
