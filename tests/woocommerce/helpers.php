<?php
/**
 * Must-use plugin of the WooCommerce suites (tests/src/woocommerce.rs):
 * helpers written only against WooCommerce's public API, so the same suite
 * runs on the stand-in and on a real WooCommerce.
 *
 * - cf_test_woocommerce_ready( $hpos ): after activation (real WooCommerce:
 *   its tables, the order storage, the currency);
 * - cf_test_order( $total, $currency, $customer ): a new pending order;
 * - cf_test_run_actions( $force ): runs Counterfoil's pending Action
 *   Scheduler actions (due ones, or all with $force) as WP-Cron would;
 * - every e-mail WordPress sends is written to wp-content/cf-mails/ (no mail
 *   leaves the machine).
 *
 * @package Counterfoil\Tests
 */

// phpcs:disable -- test code.

/** Makes the activated WooCommerce ready for orders. */
function cf_test_woocommerce_ready( $hpos ) {
	update_option( 'woocommerce_currency', 'EUR' );
	if ( class_exists( 'WC_Install' ) && defined( 'WC_VERSION' ) && '0.0.0-stand-in' !== WC()->version ) {
		WC_Install::install();
		if ( class_exists( '\Automattic\WooCommerce\Internal\DataStores\Orders\DataSynchronizer' ) ) {
			$sync = wc_get_container()->get( \Automattic\WooCommerce\Internal\DataStores\Orders\DataSynchronizer::class );
			$sync->create_database_tables();
		}
		WC_Install::create_pages(); // My Account, for its order view.
		update_option( 'woocommerce_custom_orders_table_enabled', $hpos ? 'yes' : 'no' );
		update_option( 'woocommerce_custom_orders_table_data_sync_enabled', 'no' );
		// The shop's first admin page after activation sends a shop manager
		// to WooCommerce's setup wizard (for 30 s): a set-up shop is past it.
		delete_transient( '_wc_activation_redirect' );
	}
}

/** A new pending order of $total $currency for user $customer (0: a guest). */
function cf_test_order( $total, $currency = 'EUR', $customer = 0 ) {
	$order = wc_create_order( array( 'customer_id' => (int) $customer ) );
	$order->set_currency( $currency );
	$order->set_billing_email( 'customer@example.invalid' );
	$order->set_billing_first_name( 'Jan' );
	$order->set_billing_last_name( 'Peeters' );
	$order->set_billing_address_1( 'Kerkstraat 2' );
	$order->set_billing_city( 'Gent' );
	$order->set_billing_postcode( '9000' );
	$order->set_billing_country( 'BE' );
	$order->set_total( $total );
	$order->save();
	return $order->get_id();
}

/**
 * Runs Counterfoil's pending actions (due now, or all with $force), as
 * Action Scheduler's runner does; returns how many ran.
 */
function cf_test_run_actions( $force = false ) {
	$ran = 0;
	foreach ( array( 'counterfoil_woocommerce_number_order', 'counterfoil_woocommerce_credit_refund' ) as $hook ) {
		$actions = as_get_scheduled_actions(
			array(
				'hook'     => $hook,
				'status'   => 'pending',
				'group'    => 'counterfoil',
				'per_page' => 500,
			)
		);
		foreach ( $actions as $id => $action ) {
			if ( ! $force && cf_test_due_in( $action ) > 0 ) {
				continue;
			}
			ActionScheduler::runner()->process_action( $id, 'counterfoil-test' );
			++$ran;
		}
	}
	return $ran;
}

/** Seconds until an action is due (an async action, which has no date: 0). */
function cf_test_due_in( $action ) {
	$date = $action->get_schedule()->get_date();
	return $date ? max( 0, $date->getTimestamp() - time() ) : 0;
}

/** Counterfoil's pending actions: "hook args-json due-in-seconds" lines. */
function cf_test_pending_actions() {
	$out = array();
	foreach ( array( 'counterfoil_woocommerce_number_order', 'counterfoil_woocommerce_credit_refund' ) as $hook ) {
		foreach ( as_get_scheduled_actions( array( 'hook' => $hook, 'status' => 'pending', 'group' => 'counterfoil', 'per_page' => 500 ) ) as $action ) {
			$out[] = $hook . ' ' . wp_json_encode( $action->get_args() ) . ' ' . cf_test_due_in( $action );
		}
	}
	return $out;
}

/**
 * Where an order shows, as paths under the site: the orders list, the order
 * page and the customer's My Account view (the stand-in's pages, or the real
 * WooCommerce's for its storage).
 */
function cf_test_screens( $order_id ) {
	$home = untrailingslashit( home_url() );
	if ( '0.0.0-stand-in' === WC()->version ) {
		return array(
			'orders'  => '/wp-admin/edit.php?post_type=shop_order',
			'order'   => '/wp-admin/admin.php?page=cf-stand-in-order&id=' . $order_id,
			'account' => '/?cf_stand_in_view_order=' . $order_id,
		);
	}
	$hpos = Automattic\WooCommerce\Utilities\OrderUtil::custom_orders_table_usage_is_enabled();
	return array(
		'orders'  => $hpos ? '/wp-admin/admin.php?page=wc-orders' : '/wp-admin/edit.php?post_type=shop_order',
		'order'   => $hpos ? '/wp-admin/admin.php?page=wc-orders&action=edit&id=' . $order_id : '/wp-admin/post.php?post=' . $order_id . '&action=edit',
		'account' => substr( wc_get_endpoint_url( 'view-order', $order_id, wc_get_page_permalink( 'myaccount' ) ), strlen( $home ) ),
	);
}

/** An order's notes, oldest first. */
function cf_test_notes( $order_id ) {
	if ( function_exists( 'wc_get_order_notes' ) && '0.0.0-stand-in' !== WC()->version ) {
		return array_reverse( array_map( function ( $n ) { return $n->content; }, wc_get_order_notes( array( 'order_id' => $order_id ) ) ) );
	}
	return array_map(
		function ( $c ) {
			return $c->comment_content;
		},
		get_comments( array( 'post_id' => $order_id, 'type' => 'order_note', 'orderby' => 'comment_ID', 'order' => 'ASC' ) )
	);
}

add_filter(
	'pre_wp_mail',
	function ( $short, $atts ) {
		$dir = WP_CONTENT_DIR . '/cf-mails';
		wp_mkdir_p( $dir );
		$stamp = microtime( true ) . '-' . getmypid();
		file_put_contents( $dir . '/' . $stamp . '.html', 'To: ' . ( is_array( $atts['to'] ) ? implode( ',', $atts['to'] ) : $atts['to'] ) . "\nSubject: " . $atts['subject'] . "\n\n" . $atts['message'] );
		// Each attachment as it was sent (they may be temporary files).
		foreach ( (array) $atts['attachments'] as $i => $file ) {
			if ( is_string( $file ) && is_file( $file ) ) {
				copy( $file, $dir . '/' . $stamp . '.attachment-' . $i . '-' . basename( $file ) );
			}
		}
		return true;
	},
	10,
	2
);

/**
 * Gives an order goods to ship, so that WooCommerce takes it as one that
 * needs processing (WC_Order::needs_processing(): a product that is not
 * virtual and downloadable), as a shop's physical order is: its paid date is
 * then set when it reaches processing. An order without such a product (an
 * item-less test order, a download) is paid only on completion. The
 * stand-in has no products and takes every order as one to ship.
 */
function cf_test_ship_goods( $order_id ) {
	if ( ! class_exists( 'WC_Product_Simple' ) ) {
		return;
	}
	$order   = wc_get_order( $order_id );
	$product = new WC_Product_Simple();
	$product->set_name( 'Lamp' );
	$product->set_regular_price( (string) $order->get_total() );
	$product->save();
	$item = new WC_Order_Item_Product();
	$item->set_product( $product );
	$item->set_quantity( 1 );
	$item->set_subtotal( (string) $order->get_total() );
	$item->set_total( (string) $order->get_total() );
	$order->add_item( $item );
	$order->save();
	delete_transient( 'wc_order_' . $order_id . '_needs_processing' );
}

/**
 * A pending order with items, on the stand-in or a real WooCommerce:
 * $items of array( type (line_item, shipping, fee), name, quantity, net
 * total, VAT percent or null, tax amount ); its total is the sum. Tax rates
 * are made once per percent.
 */
function cf_test_order_with_items( array $items, $customer = 0 ) {
	static $rates = array();
	$order = wc_get_order( cf_test_order( '0', 'EUR', $customer ) );
	$total = 0.0;
	foreach ( $items as $i ) {
		list( $type, $name, $quantity, $net, $percent, $tax ) = $i;
		$classes = array(
			'line_item' => 'WC_Order_Item_Product',
			'shipping'  => 'WC_Order_Item_Shipping',
			'fee'       => 'WC_Order_Item_Fee',
		);
		$item = new $classes[ $type ]();
		'shipping' === $type ? $item->set_method_title( $name ) : $item->set_name( $name );
		if ( 'line_item' === $type ) {
			$item->set_quantity( $quantity );
			$item->set_subtotal( $net );
		}
		$item->set_total( $net );
		if ( null !== $percent ) {
			if ( ! isset( $rates[ $percent ] ) ) {
				$rates[ $percent ] = WC_Tax::_insert_tax_rate(
					array(
						'tax_rate_country'  => '',
						'tax_rate'          => number_format( $percent, 4, '.', '' ),
						'tax_rate_name'     => 'VAT ' . $percent,
						'tax_rate_priority' => 1,
						'tax_rate_compound' => 0,
						'tax_rate_shipping' => 1,
						'tax_rate_order'    => 0,
						'tax_rate_class'    => '',
					)
				);
			}
			$item->set_taxes(
				array(
					'total'    => array( $rates[ $percent ] => $tax ),
					'subtotal' => array( $rates[ $percent ] => $tax ),
				)
			);
		}
		$order->add_item( $item );
		$total += (float) $net + (float) $tax;
	}
	$order->set_total( number_format( $total, 2, '.', '' ) );
	$order->save();
	return $order->get_id();
}

/**
 * Deletes a refund as WooCommerce's order screen does (WC_AJAX::delete_refund:
 * the refund deleted, then `woocommerce_refund_deleted`); on the stand-in,
 * its own twin of that.
 *
 * @param int $refund_id Refund.
 */
function cf_test_delete_refund( $refund_id ) {
	if ( function_exists( 'cf_stand_in_delete_refund' ) ) {
		cf_stand_in_delete_refund( $refund_id );
		return;
	}
	$refund   = wc_get_order( $refund_id );
	$order_id = $refund->get_parent_id();
	$refund->delete( true );
	do_action( 'woocommerce_refund_deleted', (int) $refund_id, (int) $order_id );
}
