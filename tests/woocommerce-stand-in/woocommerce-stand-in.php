<?php
/**
 * Plugin Name: WooCommerce STAND-IN (Counterfoil tests only)
 * Description: Not WooCommerce. A stand-in for the Counterfoil test suites: only what the Counterfoil integration and its tests call, with WooCommerce's names and signatures, on WordPress posts storage. The same suites run against a real WooCommerce when COUNTERFOIL_WOOCOMMERCE names one.
 * Version: 0.0.0-stand-in
 *
 * What it implements (tests/woocommerce-stand-in/README.md):
 * - orders and refunds (`shop_order`, `shop_order_refund` posts) through
 *   WC_Order / WC_Order_Refund: totals, currency, status, paid date, meta
 *   (get_meta / update_meta_data / delete_meta_data / save_meta_data / save),
 *   notes; wc_get_order(), wc_create_order(), wc_create_refund(),
 *   wc_get_orders() (type, status, date_paid range, limit, page, return ids),
 *   wc_get_is_paid_statuses(), WC_Data_Store::load( 'order' )->search_orders();
 * - the hooks in WooCommerce's order: payment_complete() fires
 *   `woocommerce_order_status_{to}`, `…_{from}_to_{to}` (where the e-mails
 *   hang), `woocommerce_order_status_changed`, then
 *   `woocommerce_payment_complete`; a refund fires
 *   `woocommerce_refund_created` then `woocommerce_order_refunded`;
 * - Action Scheduler's API (as_enqueue_async_action, as_schedule_single_action,
 *   as_has_scheduled_action, as_next_scheduled_action,
 *   as_get_scheduled_actions, ActionScheduler::runner()->process_action()),
 *   on a table of its own;
 * - the screens the integration hangs on: the posts orders list (WordPress's
 *   own list table for `shop_order`), an order page
 *   (`woocommerce_admin_order_data_after_order_details`), the customer's
 *   processing e-mail (`woocommerce_email_order_meta`, through wp_mail) and
 *   a My Account order view (`woocommerce_order_details_after_order_table`),
 *   and `GET /wc/v3/orders/<id>` (`woocommerce_rest_prepare_shop_order_object`);
 * - the customer's refund e-mail (`customer_refunded_order`, or
 *   `customer_partially_refunded_order`) sent on
 *   `woocommerce_order_fully_refunded` / `…_partially_refunded` at priority
 *   10, each e-mail taking `woocommerce_email_attachments` with its WC_Email
 *   and firing `woocommerce_email_sent` after wp_mail, as WC_Email::send();
 *   refund rows on the order page (`woocommerce_after_order_refund_item_name`);
 * - the shop manager's role (`shop_manager`: `manage_woocommerce`,
 *   `edit_shop_orders`), and `woocommerce_order_number` on get_order_number();
 * - FeaturesUtil::declare_compatibility(), recorded; OrderUtil answers that
 *   orders are posts (no HPOS).
 *
 * @package Counterfoil\Tests
 */

// phpcs:disable -- test code: a stand-in, not shipped.

defined( 'ABSPATH' ) || exit;

require_once __DIR__ . '/includes/orders.php';
require_once __DIR__ . '/includes/action-scheduler.php';
require_once __DIR__ . '/includes/screens.php';

/** What plugins test for. */
final class WooCommerce {
	public $version = '0.0.0-stand-in';
	private static $instance;
	public static function instance() {
		return self::$instance ?: ( self::$instance = new self() );
	}
}

function WC() {
	return WooCommerce::instance();
}

register_activation_hook( __FILE__, 'cf_stand_in_install' );

/** The stand-in's tables. */
function cf_stand_in_install() {
	global $wpdb;
	// As WC_Install::create_roles(): the shop's capabilities for administrators,
	// and the shop manager's role (the capabilities the integration asks for).
	$shop_caps = array( 'manage_woocommerce', 'edit_shop_orders', 'edit_others_shop_orders', 'edit_published_shop_orders', 'edit_private_shop_orders', 'read_private_shop_orders' );
	foreach ( $shop_caps as $cap ) {
		get_role( 'administrator' )->add_cap( $cap );
	}
	if ( ! get_role( 'shop_manager' ) ) {
		add_role( 'shop_manager', 'Shop manager', array_fill_keys( array_merge( array( 'read', 'view_admin_dashboard' ), $shop_caps ), true ) );
	}
	require_once ABSPATH . 'wp-admin/includes/upgrade.php';
	dbDelta(
		"CREATE TABLE {$wpdb->prefix}cf_stand_in_actions (
			action_id bigint(20) unsigned NOT NULL AUTO_INCREMENT,
			hook varchar(191) NOT NULL,
			args varchar(191) NOT NULL,
			action_group varchar(191) NOT NULL DEFAULT '',
			scheduled_at bigint(20) NOT NULL,
			status varchar(20) NOT NULL DEFAULT 'pending',
			PRIMARY KEY  (action_id),
			KEY hook (hook)
		) {$wpdb->get_charset_collate()};"
	);
}

add_action(
	'init',
	function () {
		do_action( 'before_woocommerce_init' );
		register_post_type(
			'shop_order',
			array(
				'label'        => 'Orders (stand-in)',
				'public'       => false,
				'show_ui'      => true,
				// As WooCommerce registers it: its own capabilities, mapped.
				'capability_type' => 'shop_order',
				'map_meta_cap' => true,
				'supports'     => array( 'title', 'custom-fields' ),
			)
		);
		register_post_type( 'shop_order_refund', array( 'public' => false ) );
		foreach ( array( 'pending', 'processing', 'on-hold', 'completed', 'cancelled', 'refunded', 'failed' ) as $status ) {
			register_post_status(
				'wc-' . $status,
				array(
					'label'                     => $status,
					'public'                    => false,
					'protected'                 => true,
					'show_in_admin_all_list'    => true,
					'show_in_admin_status_list' => true,
				)
			);
		}
		do_action( 'woocommerce_init' );
	},
	0
);

// As WooCommerce's cash-on-delivery gateway (WC_Gateway_COD::
// change_payment_complete_order_status): a COD order is paid on completion,
// so at processing it has no paid date.
add_filter(
	'woocommerce_payment_complete_order_status',
	function ( $status, $order_id = 0, $order = null ) {
		return $order && 'cod' === $order->get_payment_method() ? 'completed' : $status;
	},
	10,
	3
);
