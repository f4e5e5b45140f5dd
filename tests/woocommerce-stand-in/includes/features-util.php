<?php
/**
 * STAND-IN FeaturesUtil: records what plugins declare (option
 * `cf_stand_in_declared`), as WooCommerce's FeaturesController keeps it;
 * and OrderUtil, which answers as WooCommerce does on posts storage.
 *
 * @package Counterfoil\Tests
 */

// phpcs:disable -- test code: a stand-in, not shipped.

namespace Automattic\WooCommerce\Utilities;

defined( 'ABSPATH' ) || exit;

class FeaturesUtil {
	/** @var array feature => [plugin file => compatible]. */
	public static $declared = array();

	public static function declare_compatibility( $feature_id, $plugin_file, $positive_compatibility = true ) {
		if ( ! did_action( 'before_woocommerce_init' ) || did_action( 'woocommerce_init' ) ) {
			// WooCommerce refuses a declaration made outside before_woocommerce_init.
			return false;
		}
		self::$declared[ $feature_id ][ plugin_basename( $plugin_file ) ] = (bool) $positive_compatibility;
		return true;
	}
}

/** As WooCommerce's OrderUtil on a shop whose orders are posts (the stand-in has no order tables). */
class OrderUtil {
	public static function custom_orders_table_usage_is_enabled() {
		return false;
	}
}
