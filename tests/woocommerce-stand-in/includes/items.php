<?php
/**
 * STAND-IN order items and tax rates: WC_Order_Item_Product, _Shipping and
 * _Fee with WooCommerce's setters and getters (name, quantity, total,
 * taxes), kept on the order as one meta value; WC_Tax's rates in an option.
 *
 * @package Counterfoil\Tests
 */

// phpcs:disable -- test code: a stand-in, not shipped.

defined( 'ABSPATH' ) || exit;

/** An item of an order or a refund. */
abstract class WC_Order_Item {
	protected $data = array(
		'name'     => '',
		'quantity' => 1,
		'total'    => '0',
		'taxes'    => array(
			'total'    => array(),
			'subtotal' => array(),
		),
	);

	abstract public function get_type();

	public function set_name( $name ) { $this->data['name'] = (string) $name; }
	public function get_name( $context = 'view' ) { return $this->data['name']; }
	public function set_quantity( $q ) { $this->data['quantity'] = $q; }
	public function get_quantity( $context = 'view' ) { return $this->data['quantity']; }
	public function set_total( $t ) { $this->data['total'] = wc_format_decimal( $t ); }
	public function set_subtotal( $t ) { $this->data['subtotal'] = wc_format_decimal( $t ); }
	public function get_total( $context = 'view' ) { return $this->data['total']; }
	public function set_taxes( $taxes ) {
		$this->data['taxes'] = array(
			'total'    => isset( $taxes['total'] ) ? array_map( 'wc_format_decimal', (array) $taxes['total'] ) : array(),
			'subtotal' => isset( $taxes['subtotal'] ) ? array_map( 'wc_format_decimal', (array) $taxes['subtotal'] ) : array(),
		);
	}
	public function get_taxes( $context = 'view' ) { return $this->data['taxes']; }

	/** As stored on the order. */
	public function to_row() { return array( 'type' => $this->get_type() ) + $this->data; }

	/** From a stored row. */
	public static function from_row( array $row ) {
		$classes = array(
			'line_item' => 'WC_Order_Item_Product',
			'shipping'  => 'WC_Order_Item_Shipping',
			'fee'       => 'WC_Order_Item_Fee',
		);
		$item = new $classes[ $row['type'] ]();
		unset( $row['type'] );
		$item->data = $row;
		return $item;
	}
}

/** A product line. */
class WC_Order_Item_Product extends WC_Order_Item {
	public function get_type() { return 'line_item'; }
}

/** A shipping line. */
class WC_Order_Item_Shipping extends WC_Order_Item {
	public function get_type() { return 'shipping'; }
	public function set_method_title( $t ) { $this->set_name( $t ); }
}

/** A fee line. */
class WC_Order_Item_Fee extends WC_Order_Item {
	public function get_type() { return 'fee'; }
	public function set_tax_status( $s ) {}
}

/** Tax rates, as WooCommerce's WC_Tax keeps them (here: an option). */
class WC_Tax {
	const OPTION = 'cf_stand_in_tax_rates';

	public static function _insert_tax_rate( $tax_rate ) {
		$rates        = get_option( self::OPTION, array() );
		$id           = count( $rates ) + 1;
		$rates[ $id ] = (string) $tax_rate['tax_rate'];
		update_option( self::OPTION, $rates );
		return $id;
	}

	public static function get_rate_percent_value( $key_or_rate ) {
		$rates = get_option( self::OPTION, array() );
		return floatval( $rates[ (int) $key_or_rate ] ?? 0 );
	}
}

/** As WooCommerce's wc_format_decimal() for plain numbers. */
if ( ! function_exists( 'wc_format_decimal' ) ) {
	function wc_format_decimal( $number ) {
		$s = rtrim( rtrim( number_format( (float) $number, 6, '.', '' ), '0' ), '.' );
		return '' === $s || '-0' === $s ? '0' : $s;
	}
}
