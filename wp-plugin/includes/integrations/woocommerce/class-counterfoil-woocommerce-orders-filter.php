<?php
/**
 * The orders list, filtered by the invoice number, on both order storages
 * (the posts list `edit.php?post_type=shop_order` and HPOS's
 * `admin.php?page=wc-orders`): a *With / Without an invoice number*
 * dropdown beside WooCommerce's own filters, so a shop finds the orders it
 * still has to number (then *Number the invoices now*, the bulk action);
 * and on HPOS an *Invoice number* choice in WooCommerce's search filter
 * (the search's *All* already looks in the number: the Display's meta keys).
 *
 * Invariants: read only (the lists' queries get a condition, nothing is
 * written); the dropdown's value is one of VALUES or nothing, anything else
 * is ignored; conditions are added to the list's own meta query, never
 * replace it (WooCommerce's customer and created-via filters set one
 * first); the HPOS search condition is prepared and matches numbers that
 * start with the term, on the orders meta table's key/value index; the
 * HPOS list's total counts the orders shown (WooCommerce takes a list's
 * total from its count of the statuses when it sees only its own query
 * arguments: that one count is answered for the filter).
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/** The orders list's filter by invoice number. */
final class Counterfoil_WooCommerce_Orders_Filter {

	/** The query variable. */
	const VAR_NAME = 'counterfoil_invoice';

	/** Its values: the orders with a number, without one. */
	const VALUES = array( 'numbered', 'none' );

	/** HPOS's search filter for the invoice number. */
	const SEARCH_FILTER = 'counterfoil_invoice_number';

	/** The query arguments WooCommerce's HPOS list takes its total for from its count of the statuses (ListTable::prepare_items()). */
	const COUNTED_ARGS = array( 'limit', 'page', 'paginate', 'type', 'status', 'orderby', 'order' );

	/**
	 * The HPOS list's total about to be counted for the filter: the
	 * statuses and the filter's value, or null.
	 *
	 * @var array|null
	 */
	private static $total_of = null;

	/** Hooks. */
	public static function init() {
		add_action( 'restrict_manage_posts', array( __CLASS__, 'posts_dropdown' ), 20, 2 );
		add_filter( 'request', array( __CLASS__, 'posts_request' ), 20 );
		add_action( 'woocommerce_order_list_table_restrict_manage_orders', array( __CLASS__, 'orders_table_dropdown' ), 20, 2 );
		add_filter( 'woocommerce_order_list_table_prepare_items_query_args', array( __CLASS__, 'orders_table_args' ), 5 );
		add_filter( 'woocommerce_shop_order_list_table_order_count', array( __CLASS__, 'orders_table_total' ), 10, 2 );
		add_filter( 'woocommerce_hpos_admin_search_filters', array( __CLASS__, 'search_filters' ) );
		add_filter( 'woocommerce_hpos_generate_where_for_search_filter', array( __CLASS__, 'search_where' ), 10, 4 );
	}

	/**
	 * The value asked for: one of VALUES, or '' (no filter).
	 *
	 * @return string
	 */
	public static function wanted() {
		// phpcs:ignore WordPress.Security.NonceVerification.Recommended -- a list's filter in the address (a GET that reads); the value is checked against VALUES.
		$value = isset( $_GET[ self::VAR_NAME ] ) ? sanitize_key( wp_unslash( $_GET[ self::VAR_NAME ] ) ) : '';
		return in_array( $value, self::VALUES, true ) ? $value : '';
	}

	/**
	 * The meta query's clause for a value.
	 *
	 * @param string $value One of VALUES.
	 * @return array
	 */
	public static function clause( $value ) {
		return array(
			'key'     => Counterfoil_WooCommerce::META_NUMBER,
			'compare' => 'numbered' === $value ? 'EXISTS' : 'NOT EXISTS',
		);
	}

	/**
	 * Adds the clause to a meta query, keeping what it holds.
	 *
	 * @param mixed  $meta_query The list's meta query, if any.
	 * @param string $value      One of VALUES.
	 * @return array
	 */
	private static function with_clause( $meta_query, $value ) {
		$meta_query = is_array( $meta_query ) ? $meta_query : array();
		$clause     = self::clause( $value );
		if ( array() === $meta_query ) {
			return array( $clause );
		}
		return array(
			'relation' => 'AND',
			$meta_query,
			$clause,
		);
	}

	/** Prints the dropdown. */
	private static function dropdown() {
		$wanted  = self::wanted();
		$choices = array(
			''         => __( 'Any invoice number', 'counterfoil' ),
			'numbered' => __( 'With an invoice number', 'counterfoil' ),
			'none'     => __( 'Without an invoice number', 'counterfoil' ),
		);
		echo '<label class="screen-reader-text" for="counterfoil-invoice-filter">' . esc_html__( 'Filter by invoice number', 'counterfoil' ) . '</label>';
		echo '<select name="' . esc_attr( self::VAR_NAME ) . '" id="counterfoil-invoice-filter">';
		foreach ( $choices as $value => $label ) {
			echo '<option value="' . esc_attr( $value ) . '"' . selected( $wanted, $value, false ) . '>' . esc_html( $label ) . '</option>';
		}
		echo '</select>';
	}

	/**
	 * The posts list's dropdown.
	 *
	 * @param string $post_type The list's post type.
	 * @param string $which     'top' or 'bottom'.
	 */
	public static function posts_dropdown( $post_type, $which = 'top' ) {
		if ( 'shop_order' === $post_type && 'top' === $which ) {
			self::dropdown();
		}
	}

	/**
	 * The posts list's query: the clause added on the orders list.
	 *
	 * @param array $query_vars The request's query variables.
	 * @return array
	 */
	public static function posts_request( $query_vars ) {
		global $typenow;
		$value = self::wanted();
		if ( '' === $value || ! is_admin() || 'shop_order' !== $typenow ) {
			return $query_vars;
		}
		$query_vars['meta_query'] = self::with_clause( $query_vars['meta_query'] ?? array(), $value ); // phpcs:ignore WordPress.DB.SlowDBQuery.slow_db_query_meta_query -- the filter the shop asked for: the number's meta key.
		return $query_vars;
	}

	/**
	 * HPOS's dropdown (the orders list, not refunds or other order types).
	 *
	 * @param string $order_type The list's order type.
	 * @param string $which      'top' or 'bottom'.
	 */
	public static function orders_table_dropdown( $order_type, $which = 'top' ) {
		if ( 'shop_order' === $order_type && 'top' === $which ) {
			self::dropdown();
		}
	}

	/**
	 * HPOS's query: the clause added to `wc_get_orders()`'s arguments.
	 *
	 * @param array $args The list's query arguments.
	 * @return array
	 */
	public static function orders_table_args( $args ) {
		$value = self::wanted();
		$args  = (array) $args;
		if ( '' === $value || ( isset( $args['type'] ) && 'shop_order' !== $args['type'] ) ) {
			return $args;
		}
		if ( array() === array_diff( array_keys( $args ), self::COUNTED_ARGS ) ) {
			// WooCommerce will take the list's total from its count of these
			// statuses, not from this query: that count is answered once.
			self::$total_of = array( array_values( (array) ( $args['status'] ?? array() ) ), $value );
		}
		$args['meta_query'] = self::with_clause( $args['meta_query'] ?? array(), $value ); // phpcs:ignore WordPress.DB.SlowDBQuery.slow_db_query_meta_query -- the filter the shop asked for: the number's meta key.
		return $args;
	}

	/**
	 * The HPOS list's total with the filter: the orders of its statuses
	 * the filter lets through (once, for the list's own count; the status
	 * links keep WooCommerce's counts).
	 *
	 * @param int          $count    WooCommerce's count.
	 * @param string|array $statuses The statuses counted.
	 * @return int
	 */
	public static function orders_table_total( $count, $statuses ) {
		if ( null === self::$total_of || array_values( (array) $statuses ) !== self::$total_of[0] ) {
			return $count;
		}
		list( $statuses, $value ) = self::$total_of;
		self::$total_of           = null;
		$found                    = wc_get_orders(
			array(
				'type'       => 'shop_order',
				'status'     => $statuses,
				'limit'      => 1,
				'paginate'   => true,
				'return'     => 'ids',
				'meta_query' => array( self::clause( $value ) ), // phpcs:ignore WordPress.DB.SlowDBQuery.slow_db_query_meta_query -- the filter the shop asked for: the number's meta key.
			)
		);
		return is_object( $found ) && isset( $found->total ) ? (int) $found->total : $count;
	}

	/**
	 * HPOS's search filters, with the invoice number.
	 *
	 * @param array $filters Filter => label.
	 * @return array
	 */
	public static function search_filters( $filters ) {
		$filters                        = (array) $filters;
		$filters[ self::SEARCH_FILTER ] = __( 'Invoice number', 'counterfoil' );
		return $filters;
	}

	/**
	 * HPOS's search condition for the invoice number: the orders whose
	 * number starts with the term.
	 *
	 * @param string $where  The condition so far.
	 * @param string $term   The search term.
	 * @param string $filter The search filter.
	 * @param object $query  WooCommerce's OrdersTableQuery.
	 * @return string
	 */
	public static function search_where( $where, $term, $filter, $query ) {
		if ( self::SEARCH_FILTER !== $filter || ! is_object( $query ) || ! method_exists( $query, 'get_table_name' ) ) {
			return $where;
		}
		global $wpdb;
		$orders = $query->get_table_name( 'orders' );
		$meta   = $query->get_table_name( 'meta' );
		return $wpdb->prepare(
			"`$orders`.id IN ( SELECT order_id FROM `$meta` WHERE meta_key = %s AND meta_value LIKE %s )", // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- WooCommerce's own table names.
			Counterfoil_WooCommerce::META_NUMBER,
			$wpdb->esc_like( trim( (string) $term ) ) . '%'
		);
	}
}
