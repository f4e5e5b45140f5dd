<?php
/**
 * WP Overnight's "PDF Invoices & Packing Slips for WooCommerce": its invoice
 * carries Counterfoil's number, through the filters it offers an external
 * numbering authority (`wpo_wcpdf_external_invoice_number_enabled` and
 * `wpo_wcpdf_external_invoice_number`; before 2.0.6
 * `woocommerce_invoice_number_by_plugin` and
 * `woocommerce_generate_invoice_number`).
 *
 * Invariants:
 * - the number is the order's invoice number, allocated by whichever comes
 *   first, the payment or the shop making the PDF (the same key: never
 *   twice);
 * - the number is given as issued (a formatted string: the PDF plugin keeps
 *   it as its formatted number, the digits as its number);
 * - when no number can be had, the PDF plugin is never left to number the
 *   invoice from its own store (a second authority): it is refused with an
 *   exception, which the PDF plugin logs, and the shop tries again;
 * - other documents (packing slips, its Pro credit notes) are left alone,
 *   except that a refund's document is given the refund's credit-note
 *   number when Counterfoil issued one.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * The PDF plugin's invoice number.
 */
final class Counterfoil_WooCommerce_Pdf {
	/** Hooks (harmless when the PDF plugin is not active: nobody applies them). */
	public static function init() {
		add_filter( 'wpo_wcpdf_external_invoice_number_enabled', array( __CLASS__, 'enabled' ), 10, 2 );
		add_filter( 'wpo_wcpdf_external_invoice_number', array( __CLASS__, 'for_document' ), 10, 2 );
		add_filter( 'woocommerce_invoice_number_by_plugin', '__return_true' );
		add_filter( 'woocommerce_generate_invoice_number', array( __CLASS__, 'for_order' ), 10, 2 );
	}

	/** The document's type ('invoice', 'packing-slip', 'credit-note', …). */
	private static function type_of( $document ) {
		if ( is_object( $document ) && is_callable( array( $document, 'get_type' ) ) ) {
			return (string) $document->get_type();
		}
		return is_object( $document ) && isset( $document->type ) ? (string) $document->type : '';
	}

	/**
	 * Whether the PDF plugin takes the number from us: for its invoices.
	 *
	 * @param bool   $enabled  Earlier filters' answer.
	 * @param object $document The document.
	 * @return bool
	 */
	public static function enabled( $enabled, $document = null ) {
		return 'invoice' === self::type_of( $document ) ? true : (bool) $enabled;
	}

	/**
	 * The number of a document.
	 *
	 * @param mixed  $number   Earlier filters' number.
	 * @param object $document The document.
	 * @return mixed
	 */
	public static function for_document( $number, $document = null ) {
		$type = self::type_of( $document );
		if ( 'invoice' !== $type && 'credit-note' !== $type ) {
			return $number;
		}
		$order = is_object( $document ) && isset( $document->order ) ? $document->order : null;
		$ours  = self::for_order( null, $order );
		return null === $ours ? $number : $ours;
	}

	/**
	 * The invoice number of an order (numbering it now if the payment has
	 * not yet), or a refund's credit-note number.
	 *
	 * @param mixed    $number Earlier filters' number.
	 * @param WC_Order $order  The order (or refund).
	 * @return string|null
	 * @throws RuntimeException When the order cannot be numbered now.
	 */
	public static function for_order( $number, $order = null ) {
		if ( ! is_object( $order ) || ! is_callable( array( $order, 'get_type' ) ) ) {
			return $number;
		}
		if ( 'shop_order_refund' === $order->get_type() ) {
			$credit = (string) $order->get_meta( Counterfoil_WooCommerce::META_CREDIT_NOTE, true );
			return '' === $credit ? $number : $credit;
		}
		$known = Counterfoil_WooCommerce::number_of( $order );
		if ( '' !== $known ) {
			return $known;
		}
		$result = Counterfoil_WooCommerce::number_order( $order, true );
		if ( is_array( $result ) ) {
			return (string) $result['number'];
		}
		$why = is_wp_error( $result ) ? $result->get_error_message() : __( 'this order is not one Counterfoil numbers.', 'counterfoil' );
		/* translators: 1: order id, 2: the reason */
		throw new RuntimeException( sprintf( __( 'Counterfoil has no invoice number for order %1$d yet: %2$s', 'counterfoil' ), (int) $order->get_id(), $why ) );
	}
}
