<?php
/**
 * PHPUnit bootstrap: loads a real WordPress (installed by the test harness,
 * tests/src/wordpress.rs) with the plugin active. The same suite runs with
 * the extension loaded (php -d extension=…) and without it.
 *
 * @package Counterfoil
 */

$counterfoil_wp = getenv( 'COUNTERFOIL_WP_DIR' );
if ( ! $counterfoil_wp || ! is_file( $counterfoil_wp . '/wp-load.php' ) ) {
	fwrite( STDERR, "COUNTERFOIL_WP_DIR must name an installed WordPress\n" );
	exit( 2 );
}
// As a request to the admin would have them (list tables build their links from these).
$_SERVER['HTTP_HOST']   = isset( $_SERVER['HTTP_HOST'] ) ? $_SERVER['HTTP_HOST'] : '127.0.0.1';
$_SERVER['REQUEST_URI'] = isset( $_SERVER['REQUEST_URI'] ) ? $_SERVER['REQUEST_URI'] : '/wp-admin/options-general.php?page=counterfoil';
require $counterfoil_wp . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/plugin.php';
// The admin forms and page, as admin-post.php and the settings screen load them.
require_once ABSPATH . 'wp-admin/includes/admin.php';
Counterfoil_Admin::init();
Counterfoil_Credit_Note_Admin::init();
Counterfoil_Books::init();
if ( ! is_plugin_active( 'counterfoil/counterfoil.php' ) ) {
	fwrite( STDERR, "the counterfoil plugin is not active\n" );
	exit( 2 );
}
$counterfoil_expect = getenv( 'COUNTERFOIL_EXPECT_BACKEND' );
if ( $counterfoil_expect && counterfoil_backend()->name() !== $counterfoil_expect ) {
	fwrite( STDERR, 'expected the ' . $counterfoil_expect . ' backend, got ' . counterfoil_backend()->name() . "\n" );
	exit( 2 );
}

/** wp_die() during a test. */
class Counterfoil_Test_Die extends Exception {}
/** wp_redirect() during a test. */
class Counterfoil_Test_Redirect extends Exception {}

add_filter(
	'wp_die_handler',
	function () {
		return function ( $message, $title = '', $args = array() ) {
			$status = 500;
			if ( is_int( $title ) ) {
				$status = $title;
			} elseif ( is_array( $args ) && isset( $args['response'] ) ) {
				$status = (int) $args['response'];
			} elseif ( is_int( $args ) ) {
				$status = $args;
			}
			throw new Counterfoil_Test_Die( is_string( $message ) ? $message : 'wp_die', $status );
		};
	}
);
add_filter(
	'wp_redirect',
	function ( $location ) {
		throw new Counterfoil_Test_Redirect( $location );
	}
);
add_filter( 'pre_wp_mail', '__return_false' );

/** Helpers. */
final class Counterfoil_Test {
	/** A fresh user id whose series no other test uses. */
	public static function user() {
		static $n = 0;
		return 1000 + getmypid() % 1000 * 100 + ( ++$n );
	}

	/** Rows of a query. */
	public static function rows( $sql ) {
		global $wpdb;
		return $wpdb->get_results( $sql, ARRAY_A );
	}

	/** Registry completeness of a series: numbers first..current, each once, none missing. */
	public static function registry_holes( $scope ) {
		global $wpdb;
		$t       = Counterfoil_Schema::tables();
		$series  = $wpdb->get_row( $wpdb->prepare( "SELECT current_value, start_value FROM {$t['sequences']} WHERE scope_key = %s", $scope ) );
		$numbers = array_map( 'intval', $wpdb->get_col( $wpdb->prepare( "SELECT number FROM {$t['numbers']} WHERE scope_key = %s ORDER BY number", $scope ) ) );
		$expect  = (int) $series->current_value >= (int) $series->start_value ? range( (int) $series->start_value, (int) $series->current_value ) : array();
		return array_values( array_diff( $expect, $numbers ) );
	}
}
