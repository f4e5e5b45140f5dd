<?php
/**
 * STAND-IN screens: where WooCommerce fires the hooks the integration hangs
 * on. The orders list is WordPress's own list table for `shop_order` posts
 * (WooCommerce's posts screen fires the same column hooks); the order page
 * (for `edit_shop_orders`, with its refunds' rows), the processing and
 * refund e-mails, My Account's order view and the REST order are minimal
 * pages of this stand-in, each firing WooCommerce's hook with WooCommerce's
 * arguments. An e-mail is sent as WC_Email::send() does: its attachments
 * through `woocommerce_email_attachments( array(), $id, $order, $email )`,
 * then wp_mail, then `woocommerce_email_sent( $sent, $id, $email )`.
 *
 * @package Counterfoil\Tests
 */

// phpcs:disable -- test code: a stand-in, not shipped.

defined( 'ABSPATH' ) || exit;

// The order page: wp-admin/admin.php?page=cf-stand-in-order&id=N.
add_action(
	'admin_menu',
	function () {
		// As WooCommerce's order screens: for those who edit orders (administrators, shop managers).
		add_submenu_page( null, 'Order (stand-in)', 'Order (stand-in)', 'edit_shop_orders', 'cf-stand-in-order', 'cf_stand_in_order_page' );
	}
);

function cf_stand_in_order_page() {
	$order = wc_get_order( isset( $_GET['id'] ) ? (int) $_GET['id'] : 0 );
	if ( ! $order ) {
		wp_die( 'No such order.' );
	}
	echo '<div class="wrap"><h1>Order #' . esc_html( $order->get_order_number() ) . ' details <small>(WooCommerce stand-in)</small></h1>';
	echo '<div id="order_data" class="panel"><div class="order_data_column">';
	echo '<p class="form-field form-field-wide">Status: ' . esc_html( $order->get_status() ) . '</p>';
	echo '<p class="form-field form-field-wide">Total: ' . esc_html( $order->get_total() . ' ' . $order->get_currency() ) . '</p>';
	do_action( 'woocommerce_admin_order_data_after_order_details', $order );
	echo '</div></div>';
	// The items box's refund rows (html-order-refund.php): the name cell ends with the hook.
	echo '<table class="woocommerce_order_items"><tbody id="order_refunds">';
	foreach ( $order->get_refunds() as $refund ) {
		echo '<tr class="refund" data-order_refund_id="' . esc_attr( $refund->get_id() ) . '"><td class="name">Refund #' . esc_html( $refund->get_id() );
		if ( $refund->get_reason() ) {
			echo '<p class="description">' . esc_html( $refund->get_reason() ) . '</p>';
		}
		do_action( 'woocommerce_after_order_refund_item_name', $refund );
		echo '</td><td class="line_cost">-' . esc_html( $refund->get_amount() ) . '</td></tr>';
	}
	echo '</tbody></table></div>';
}

/** WooCommerce's e-mail base class: its id and its object (the order). */
class WC_Email {
	public $id;
	public $object;
	public function __construct( $id, $object ) {
		$this->id     = $id;
		$this->object = $object;
	}
}

/** The customer's refund e-mail: its refund, and whether it is partial (its id then customer_partially_refunded_order). */
class WC_Email_Customer_Refunded_Order extends WC_Email {
	public $refund;
	public $partial_refund;
}

/** Sends an e-mail to the order's billing address as WC_Email::send() does. */
function cf_stand_in_send_email( WC_Email $email, $subject, $body ) {
	$attachments = apply_filters( 'woocommerce_email_attachments', array(), $email->id, $email->object, $email );
	$sent        = wp_mail( $email->object->get_billing_email(), $subject, $body, array( 'Content-Type: text/html; charset=UTF-8' ), $attachments );
	do_action( 'woocommerce_email_sent', $sent, $email->id, $email );
	return $sent;
}

// The customer's "processing" e-mail, sent on the transition (priority 10, as WooCommerce's).
add_action(
	'woocommerce_order_status_pending_to_processing',
	function ( $order_id, $order = null ) {
		$order = is_object( $order ) ? $order : wc_get_order( $order_id );
		ob_start();
		echo '<h1>Thank you for your order</h1><p>We have finished processing order #' . esc_html( $order->get_order_number() ) . '.</p>';
		do_action( 'woocommerce_email_order_meta', $order, false, false, null );
		echo '<p>Total: ' . esc_html( $order->get_total() . ' ' . $order->get_currency() ) . '</p>';
		$body = ob_get_clean();
		cf_stand_in_send_email( new WC_Email( 'customer_processing_order', $order ), 'Your order #' . $order->get_order_number() . ' has been received', $body );
	},
	10,
	2
);

// The customer's refund e-mail, as WC_Email_Customer_Refunded_Order::trigger()
// (WC_Emails sends it at priority 10 on the refund's action).
foreach ( array( 'woocommerce_order_fully_refunded' => false, 'woocommerce_order_partially_refunded' => true ) as $action => $partial ) {
	add_action(
		$action,
		function ( $order_id, $refund_id = null ) use ( $partial ) {
			$order                 = wc_get_order( $order_id );
			$email                 = new WC_Email_Customer_Refunded_Order( $partial ? 'customer_partially_refunded_order' : 'customer_refunded_order', $order );
			$email->partial_refund = $partial;
			$email->refund         = $refund_id ? wc_get_order( $refund_id ) : false;
			ob_start();
			echo '<h1>' . ( $partial ? 'Partial refund' : 'Order refunded' ) . ': order ' . esc_html( $order->get_order_number() ) . '</h1>';
			do_action( 'woocommerce_email_order_meta', $order, false, false, $email );
			$body = ob_get_clean();
			cf_stand_in_send_email( $email, 'Your order #' . $order->get_order_number() . ( $partial ? ' has been partially refunded' : ' has been refunded' ), $body );
		},
		10,
		2
	);
}

// My Account's order view: /?cf_stand_in_view_order=N, for the order's customer.
add_action(
	'template_redirect',
	function () {
		if ( ! isset( $_GET['cf_stand_in_view_order'] ) ) {
			return;
		}
		$order = wc_get_order( (int) $_GET['cf_stand_in_view_order'] );
		if ( ! $order || ! is_user_logged_in() || (int) $order->get_customer_id() !== get_current_user_id() ) {
			status_header( 403 );
			exit( 'Not your order.' );
		}
		echo '<!doctype html><html><head><meta charset="utf-8"><title>My account: order</title></head><body class="woocommerce-account">';
		echo '<h2>Order #' . esc_html( $order->get_order_number() ) . ' <small>(WooCommerce stand-in)</small></h2>';
		echo '<table class="woocommerce-table order_details"><tr><th>Total</th><td>' . esc_html( $order->get_total() . ' ' . $order->get_currency() ) . '</td></tr></table>';
		do_action( 'woocommerce_order_details_after_order_table', $order );
		echo '</body></html>';
		exit;
	}
);

// GET /wc/v3/orders/<id>.
add_action(
	'rest_api_init',
	function () {
		register_rest_route(
			'wc/v3',
			'/orders/(?P<id>\d+)',
			array(
				'methods'             => 'GET',
				'permission_callback' => function () {
					return current_user_can( 'manage_options' );
				},
				'callback'            => function ( $request ) {
					$order = wc_get_order( (int) $request['id'] );
					if ( ! $order ) {
						return new WP_Error( 'woocommerce_rest_shop_order_invalid_id', 'Invalid ID.', array( 'status' => 404 ) );
					}
					$response = rest_ensure_response(
						array(
							'id'       => $order->get_id(),
							'status'   => $order->get_status(),
							'currency' => $order->get_currency(),
							'total'    => $order->get_total(),
						)
					);
					return apply_filters( 'woocommerce_rest_prepare_shop_order_object', $response, $order, $request );
				},
			)
		);
	}
);
