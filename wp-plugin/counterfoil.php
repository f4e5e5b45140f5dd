<?php
/**
 * Plugin Name:       Counterfoil
 * Plugin URI:        https://example.invalid/counterfoil
 * Description:       Sequential invoice numbers that are never issued twice: one invoice per payment, every number accounted for.
 * Version:           0.4.0
 * Requires at least: 6.1
 * Requires PHP:      8.0
 * Author:            The Counterfoil team
 * License:           GPL-2.0-or-later
 * WC requires at least: 7.9
 * WC tested up to:   10.0
 * Text Domain:       counterfoil
 * Domain Path:       /languages
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

define( 'COUNTERFOIL_VERSION', '0.4.0' );
define( 'COUNTERFOIL_FILE', __FILE__ );

if ( ! extension_loaded( 'mysqli' ) ) {
	add_action(
		'admin_notices',
		function () {
			echo '<div class="notice notice-error"><p>' . esc_html__( 'Counterfoil needs the PHP mysqli extension; it is not active.', 'counterfoil' ) . '</p></div>';
		}
	);
	return;
}

require_once __DIR__ . '/includes/class-counterfoil-autoloader.php';
Counterfoil_Autoloader::register();
require_once __DIR__ . '/includes/functions.php';

register_activation_hook( __FILE__, 'counterfoil_activate' );
register_deactivation_hook( __FILE__, 'counterfoil_deactivate' );
add_action( 'wp_initialize_site', 'counterfoil_initialize_site', 200 );
add_filter( 'wpmu_drop_tables', 'counterfoil_drop_site_tables', 10, 2 );

add_action( 'plugins_loaded', array( 'Counterfoil_Schema', 'maybe_upgrade' ) );
// With the extension loaded, its global allocate_invoice_number() reads the
// process settings: configure them (DB_*, $wpdb->prefix, format, registry)
// before any other plugin can call it. A backend that cannot be built is an
// admin notice and 503s on the webhook, never a fatal error for the site.
add_action( 'plugins_loaded', 'counterfoil_boot_backend', 0 );
add_action( 'switch_blog', 'counterfoil_follow_site' );
add_action( 'admin_notices', 'counterfoil_backend_notice' );
Counterfoil_Invoice_Type::init();
add_action( 'init', 'counterfoil_load_textdomain' );
add_action( 'rest_api_init', array( 'Counterfoil_Rest', 'register_routes' ) );
add_action( 'rest_api_init', array( 'Counterfoil_Stripe', 'register_routes' ) );
add_filter( 'counterfoil_document_sales_order_reference', array( 'Counterfoil_Stripe', 'no_sales_order_reference' ), 10, 2 );
add_action( 'update_option_' . Counterfoil_Stripe::ISSUER_OPTION, array( 'Counterfoil_Stripe', 'default_issuer_set' ), 10, 2 );
add_action( 'add_option_' . Counterfoil_Stripe::ISSUER_OPTION, array( 'Counterfoil_Stripe', 'default_issuer_set' ), 10, 2 );
add_action( 'counterfoil_payment_received', 'counterfoil_create_invoice_for_payment', 10, 1 );
Counterfoil_Series_Life::init();
Counterfoil_Site_Identity::init();
Counterfoil_Chain::init();
Counterfoil_Documents::init_always();
// WooCommerce may load after this plugin: hooked in once every plugin is loaded.
add_action( 'plugins_loaded', array( 'Counterfoil_WooCommerce', 'init' ), 20 );
if ( is_admin() ) {
	Counterfoil_Admin::init();
	Counterfoil_Credit_Note_Admin::init();
	Counterfoil_Books::init();
	Counterfoil_Documents::init();
	Counterfoil_Invoice_Screen::init();
}
