<?php
/**
 * WooCommerce: where the invoice number shows — both orders screens (HPOS
 * and posts), the order page, the customer's e-mails, My Account, order
 * search and the REST order response — and where the credit notes show:
 * each refund's row on the order page, My Account's order view, the REST
 * order.
 *
 * Invariants: read only (nothing here numbers an order or writes to it);
 * what is shown is the number as issued (the order's meta, a refund's
 * meta), "pending" for a paid order still waiting for its number, nothing
 * for an unpaid one; the documents' download links on the order page are
 * printed for shop managers (`manage_woocommerce`) only, and only the
 * order's own credit notes are listed; every value is escaped where it is
 * printed.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * The number on the order's screens and messages.
 */
final class Counterfoil_WooCommerce_Display {
	/** The orders screens' column. */
	const COLUMN = 'counterfoil_invoice';

	/** Hooks. */
	public static function init() {
		add_filter( 'manage_edit-shop_order_columns', array( __CLASS__, 'columns' ), 20 );
		add_action( 'manage_shop_order_posts_custom_column', array( __CLASS__, 'posts_column' ), 10, 2 );
		add_filter( 'woocommerce_shop_order_list_table_columns', array( __CLASS__, 'columns' ), 20 );
		add_action( 'woocommerce_shop_order_list_table_custom_column', array( __CLASS__, 'orders_table_column' ), 10, 2 );
		add_action( 'woocommerce_admin_order_data_after_order_details', array( __CLASS__, 'order_page' ) );
		add_action( 'woocommerce_after_order_refund_item_name', array( __CLASS__, 'refund_row' ) );
		add_action( 'woocommerce_email_order_meta', array( __CLASS__, 'email' ), 10, 3 );
		add_action( 'woocommerce_order_details_after_order_table', array( __CLASS__, 'customer_view' ) );
		add_filter( 'woocommerce_shop_order_search_fields', array( __CLASS__, 'search_fields' ) );
		add_filter( 'woocommerce_order_table_search_query_meta_keys', array( __CLASS__, 'search_fields' ) );
		add_filter( 'woocommerce_rest_prepare_shop_order_object', array( __CLASS__, 'rest' ), 10, 2 );
	}

	/**
	 * What an order shows: [state, text], state `issued`, `pending` or `none`.
	 *
	 * @param WC_Order $order Order.
	 * @return array
	 */
	public static function state( $order ) {
		$number = Counterfoil_WooCommerce::number_of( $order );
		if ( '' !== $number ) {
			return array( 'issued', $number );
		}
		if ( Counterfoil_WooCommerce::is_paid( $order ) || '' !== (string) $order->get_meta( Counterfoil_WooCommerce::META_PENDING, true ) ) {
			return array( 'pending', __( 'Invoice number pending', 'counterfoil' ) );
		}
		return array( 'none', '' );
	}

	/**
	 * Adds the column after the order number.
	 *
	 * @param array $columns Columns.
	 * @return array
	 */
	public static function columns( $columns ) {
		$out = array();
		foreach ( (array) $columns as $key => $label ) {
			$out[ $key ] = $label;
			if ( 'order_number' === $key ) {
				$out[ self::COLUMN ] = __( 'Invoice', 'counterfoil' );
			}
		}
		if ( ! isset( $out[ self::COLUMN ] ) ) {
			$out[ self::COLUMN ] = __( 'Invoice', 'counterfoil' );
		}
		return $out;
	}

	/** The posts screen's cell. */
	public static function posts_column( $column, $post_id ) {
		if ( self::COLUMN === $column ) {
			self::cell( wc_get_order( (int) $post_id ) );
		}
	}

	/** The order tables' (HPOS) cell. */
	public static function orders_table_column( $column, $order ) {
		if ( self::COLUMN === $column ) {
			self::cell( is_object( $order ) ? $order : wc_get_order( (int) $order ) );
		}
	}

	/** One cell. */
	private static function cell( $order ) {
		if ( ! $order ) {
			return;
		}
		list( $state, $text ) = self::state( $order );
		if ( 'none' === $state ) {
			echo '<span aria-hidden="true">–</span>';
			return;
		}
		printf( '<span class="counterfoil-invoice counterfoil-invoice-%s">%s</span>', esc_attr( $state ), esc_html( $text ) );
	}

	/** The order page, under the order's details. */
	public static function order_page( $order ) {
		list( $state, $text ) = self::state( $order );
		if ( 'none' === $state ) {
			return;
		}
		echo '<p class="form-field form-field-wide counterfoil-order-invoice"><strong>' . esc_html__( 'Invoice number:', 'counterfoil' ) . '</strong> ';
		if ( 'issued' === $state ) {
			$post = (int) $order->get_meta( Counterfoil_WooCommerce::META_POST, true );
			$link = $post ? get_edit_post_link( $post ) : '';
			echo $link ? '<a href="' . esc_url( $link ) . '">' . esc_html( $text ) . '</a>' : esc_html( $text );
			if ( $post && current_user_can( 'manage_woocommerce' ) && Counterfoil_WooCommerce_Documents::belongs_to( $post, $order ) ) {
				echo ' <span class="counterfoil-order-documents">';
				Counterfoil_WooCommerce_Documents::print_links( $order, 0, self::download_labels(), 'button button-small' );
				echo '</span>';
			}
		} else {
			echo '<span class="counterfoil-invoice-pending">' . esc_html( $text ) . '</span>';
		}
		echo '</p>';
	}

	/** The order page's download labels. */
	private static function download_labels() {
		return array(
			'pdf' => __( 'PDF', 'counterfoil' ),
			'ubl' => __( 'UBL', 'counterfoil' ),
		);
	}

	/**
	 * A refund's row on the order page (WooCommerce's
	 * `woocommerce_after_order_refund_item_name`): its credit note's number,
	 * and its downloads for shop managers.
	 *
	 * @param WC_Order_Refund $refund Refund.
	 */
	public static function refund_row( $refund ) {
		if ( ! is_object( $refund ) || ! is_callable( array( $refund, 'get_meta' ) ) ) {
			return;
		}
		$number = (string) $refund->get_meta( Counterfoil_WooCommerce::META_CREDIT_NOTE, true );
		if ( '' === $number ) {
			return;
		}
		/* translators: %s: credit note number */
		echo '<p class="counterfoil-refund-credit-note">' . esc_html( sprintf( __( 'Credit note %s', 'counterfoil' ), $number ) );
		$order = wc_get_order( (int) $refund->get_parent_id() );
		$post  = (int) $refund->get_meta( Counterfoil_WooCommerce::META_CREDIT_NOTE_POST, true );
		if ( $order && $post && current_user_can( 'manage_woocommerce' ) && Counterfoil_WooCommerce_Documents::belongs_to( $post, $order ) ) {
			echo ' ';
			Counterfoil_WooCommerce_Documents::print_links( $order, $post, self::download_labels(), 'button button-small' );
		}
		echo '</p>';
	}

	/**
	 * The customer's (and the shop's) order e-mails.
	 *
	 * @param WC_Order $order         Order.
	 * @param bool     $sent_to_admin Whether to the shop.
	 * @param bool     $plain_text    Plain text e-mail.
	 */
	public static function email( $order, $sent_to_admin = false, $plain_text = false ) {
		unset( $sent_to_admin );
		$number = Counterfoil_WooCommerce::number_of( $order );
		if ( '' === $number ) {
			return;
		}
		if ( $plain_text ) {
			/* translators: %s: invoice number */
			echo esc_html( sprintf( __( 'Invoice number: %s', 'counterfoil' ), $number ) ) . "\n\n";
			return;
		}
		echo '<p class="counterfoil-email-invoice"><strong>' . esc_html__( 'Invoice number:', 'counterfoil' ) . '</strong> ' . esc_html( $number ) . '</p>';
	}

	/** My Account's order view (and the thank-you page). */
	public static function customer_view( $order ) {
		$number = Counterfoil_WooCommerce::number_of( $order );
		if ( '' === $number ) {
			return;
		}
		echo '<section class="counterfoil-customer-invoice"><p><strong>' . esc_html__( 'Invoice number:', 'counterfoil' ) . '</strong> ' . esc_html( $number ) . '</p>';
		Counterfoil_WooCommerce_Documents::customer_links( $order );
		echo '</section>';
	}

	/**
	 * Order search by invoice number (posts and HPOS: meta keys searched).
	 *
	 * @param array $keys Meta keys.
	 * @return array
	 */
	public static function search_fields( $keys ) {
		$keys   = (array) $keys;
		$keys[] = Counterfoil_WooCommerce::META_NUMBER;
		return array_values( array_unique( $keys ) );
	}

	/**
	 * The REST order response (`/wc/v3/orders`): `counterfoil_invoice`
	 * (number, post id, state, and `credit_notes`: each refund's credit
	 * note's number, post id and refund id, the newest refund first).
	 *
	 * @param WP_REST_Response $response Response.
	 * @param WC_Order         $order    Order.
	 * @return WP_REST_Response
	 */
	public static function rest( $response, $order ) {
		if ( ! is_object( $response ) || ! is_object( $order ) ) {
			return $response;
		}
		list( $state ) = self::state( $order );
		$data          = $response->get_data();
		$data['counterfoil_invoice'] = array(
			'number'       => 'issued' === $state ? Counterfoil_WooCommerce::number_of( $order ) : null,
			'post_id'      => 'issued' === $state ? (int) $order->get_meta( Counterfoil_WooCommerce::META_POST, true ) : null,
			'state'        => $state,
			'credit_notes' => Counterfoil_WooCommerce_Documents::credit_notes_of( $order ),
		);
		$response->set_data( $data );
		return $response;
	}
}
