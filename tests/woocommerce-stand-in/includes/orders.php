<?php
/**
 * STAND-IN orders: WC_Order and WC_Order_Refund on posts storage, with
 * WooCommerce's method names and the hooks its order fires.
 *
 * @package Counterfoil\Tests
 */

// phpcs:disable -- test code: a stand-in, not shipped.

defined( 'ABSPATH' ) || exit;

/**
 * WooCommerce's date class. WooCommerce sets its dates in the site's time
 * zone; the stand-in's are made in UTC, so the offset is the site's.
 */
class WC_DateTime extends DateTime {
	/** As WooCommerce's: the timestamp shifted by the site's UTC offset. */
	public function getOffsetTimestamp() {
		return $this->getTimestamp() + (int) wp_timezone()->getOffset( $this );
	}

	/** As WooCommerce's: a date in the site's time. */
	public function date( $format ) {
		return gmdate( $format, $this->getOffsetTimestamp() );
	}
}

require_once __DIR__ . '/features-util.php';
require_once __DIR__ . '/items.php';

/** The common part of orders and refunds. */
abstract class WC_Abstract_Order {
	protected $id = 0;
	/** @var array Props (status without wc-, total, currency, date_paid, …). */
	protected $data = array();
	/** @var array Meta to write: key => value|null (null deletes). */
	protected $meta_changes = array();
	/** @var array The status change the next save() announces. */
	protected $transition = null;
	/** @var array Meta as read when the object was loaded: key => value. */
	protected $meta = array();
	/** @var bool Whether set_date_created() was called since loading (save() writes the post's date). */
	protected $date_created_changed = false;

	public function __construct( $id = 0 ) {
		$this->id = (int) $id;
		if ( $this->id ) {
			$post = get_post( $this->id );
			$this->read_meta_data();
			$this->data = array(
				'status'         => 0 === strpos( $post->post_status, 'wc-' ) ? substr( $post->post_status, 3 ) : $post->post_status,
				'total'          => (string) ( $this->meta['_order_total'] ?? '' ),
				'currency'       => (string) ( $this->meta['_order_currency'] ?? '' ),
				'date_paid'      => (string) ( $this->meta['_date_paid'] ?? '' ),
				'date_completed' => (string) ( $this->meta['_date_completed'] ?? '' ),
				'transaction_id' => (string) ( $this->meta['_transaction_id'] ?? '' ),
				'customer_id'    => (int) ( $this->meta['_customer_user'] ?? 0 ),
				'billing_email'  => (string) ( $this->meta['_billing_email'] ?? '' ),
				'order_key'      => (string) ( $this->meta['_order_key'] ?? '' ),
				'parent_id'      => (int) $post->post_parent,
				'date_created'   => strtotime( $post->post_date_gmt . ' UTC' ),
			);
		}
	}

	/** As WooCommerce's data stores: meta read from the database, not WordPress's per-process cache. */
	protected function read_meta_data() {
		global $wpdb;
		$this->meta = array();
		foreach ( $wpdb->get_results( $wpdb->prepare( "SELECT meta_key, meta_value FROM {$wpdb->postmeta} WHERE post_id = %d ORDER BY meta_id", $this->id ) ) as $row ) {
			$this->meta[ $row->meta_key ] = maybe_unserialize( $row->meta_value );
		}
	}

	public function get_id() { return $this->id; }
	public function get_status() { return $this->data['status'] ?? 'pending'; }
	public function has_status( $status ) { return in_array( $this->get_status(), (array) $status, true ); }
	public function get_total() { return $this->data['total'] ?? '0'; }
	public function get_currency() { return $this->data['currency'] ?? 'EUR'; }
	public function get_parent_id() { return $this->data['parent_id'] ?? 0; }
	public function get_order_number() { return (string) $this->id; }

	public function get_meta( $key = '', $single = true, $context = 'view' ) {
		if ( array_key_exists( $key, $this->meta_changes ) ) {
			return null === $this->meta_changes[ $key ] ? '' : $this->meta_changes[ $key ];
		}
		return array_key_exists( $key, $this->meta ) ? $this->meta[ $key ] : '';
	}
	public function update_meta_data( $key, $value, $meta_id = 0 ) { $this->meta_changes[ $key ] = $value; }
	public function delete_meta_data( $key ) { $this->meta_changes[ $key ] = null; }
	public function save_meta_data() {
		foreach ( $this->meta_changes as $key => $value ) {
			if ( null === $value ) {
				delete_post_meta( $this->id, $key );
				unset( $this->meta[ $key ] );
			} else {
				update_post_meta( $this->id, $key, $value );
				$this->meta[ $key ] = $value;
			}
		}
		$this->meta_changes = array();
	}

	abstract public function get_type();

	/** @var WC_Order_Item[] Items added since loading, saved with the order. */
	protected $items_added = array();

	/** As WooCommerce: an item joins the order when the order is saved. */
	public function add_item( $item ) { $this->items_added[] = $item; }

	/**
	 * The order's items of the given types (line_item by default).
	 *
	 * @param string|string[] $types Types.
	 * @return WC_Order_Item[]
	 */
	public function get_items( $types = 'line_item' ) {
		$rows  = $this->get_meta( '_cf_stand_in_items' );
		$items = array_map( array( 'WC_Order_Item', 'from_row' ), is_array( $rows ) ? $rows : array() );
		$items = array_merge( $items, $this->items_added );
		return array_values(
			array_filter(
				$items,
				function ( $i ) use ( $types ) {
					return in_array( $i->get_type(), (array) $types, true );
				}
			)
		);
	}

	/** Writes the order (a post and its meta), then announces a status change. */
	public function save() {
		$post = array(
			'post_type'   => $this->get_type(),
			'post_status' => 'wc-' . $this->get_status(),
			'post_title'  => 'Order',
			'post_parent' => $this->get_parent_id(),
		);
		if ( $this->date_created_changed ) {
			// As WooCommerce's posts storage: the creation date is the post's date.
			$post['post_date_gmt'] = gmdate( 'Y-m-d H:i:s', (int) $this->data['date_created'] );
			$post['post_date']     = get_date_from_gmt( $post['post_date_gmt'] );
			$this->date_created_changed = false;
		}
		if ( $this->id ) {
			$post['ID'] = $this->id;
			wp_update_post( $post );
		} else {
			$this->id = (int) wp_insert_post( $post );
		}
		if ( 'shop_order' === $this->get_type() && empty( $this->data['order_key'] ) ) {
			// As wc_generate_order_key(): a guest's proof of their order.
			$this->data['order_key'] = 'wc_order_' . wp_generate_password( 13, false );
		}
		foreach ( array( '_order_total' => 'total', '_order_currency' => 'currency', '_date_paid' => 'date_paid', '_date_completed' => 'date_completed', '_transaction_id' => 'transaction_id', '_customer_user' => 'customer_id', '_billing_email' => 'billing_email', '_order_key' => 'order_key' ) as $meta => $prop ) {
			if ( isset( $this->data[ $prop ] ) ) {
				update_post_meta( $this->id, $meta, $this->data[ $prop ] );
			}
		}
		if ( $this->items_added ) {
			$rows = $this->get_meta( '_cf_stand_in_items' );
			$rows = is_array( $rows ) ? $rows : array();
			foreach ( $this->items_added as $item ) {
				$rows[] = $item->to_row();
			}
			$this->items_added = array();
			$this->update_meta_data( '_cf_stand_in_items', $rows );
		}
		$this->save_meta_data();
		clean_post_cache( $this->id );
		$this->status_transition();
		return $this->id;
	}

	protected function status_transition() {
	}
}

/** An order. */
class WC_Order extends WC_Abstract_Order {
	public function get_type() { return 'shop_order'; }
	/** As WC_Order::get_order_number(): the id, through `woocommerce_order_number` (sequential-number plugins). */
	public function get_order_number() { return (string) apply_filters( 'woocommerce_order_number', $this->get_id(), $this ); }
	public function get_transaction_id() { return $this->data['transaction_id'] ?? ''; }
	public function get_customer_id() { return $this->data['customer_id'] ?? 0; }
	public function get_order_key() { return $this->data['order_key'] ?? ''; }
	public function get_billing_email() { return $this->data['billing_email'] ?? ''; }
	public function __call( $name, $args ) {
		// get_/set_ billing_{field} and shipping_{field} for company, first_name,
		// last_name, address_1, address_2, city, postcode, country, and
		// payment_method(_title): meta _{name}, as WooCommerce's posts storage.
		if ( preg_match( '/^(get|set)_((?:billing|shipping)_(?:company|first_name|last_name|address_1|address_2|city|postcode|country)|payment_method|payment_method_title)$/', $name, $m ) ) {
			if ( 'get' === $m[1] ) {
				return (string) $this->get_meta( '_' . $m[2] );
			}
			$this->update_meta_data( '_' . $m[2], (string) $args[0] );
			return null;
		}
		throw new BadMethodCallException( "WC_Order stand-in: no $name" );
	}
	public function get_date_paid( $context = 'view' ) {
		$paid = $this->data['date_paid'] ?? '';
		return '' === $paid ? null : new WC_DateTime( '@' . (int) $paid );
	}
	public function set_date_paid( $time ) { $this->data['date_paid'] = (string) (int) $time; }
	public function get_date_created( $context = 'view' ) {
		$created = $this->data['date_created'] ?? '';
		return '' === $created || false === $created ? null : new WC_DateTime( '@' . (int) $created );
	}
	/** As WooCommerce: when the order was made (a Unix time), saved as the post's date. */
	public function set_date_created( $time ) {
		$this->data['date_created'] = (int) $time;
		$this->date_created_changed = true;
	}
	public function get_date_completed( $context = 'view' ) {
		$done = $this->data['date_completed'] ?? '';
		return '' === $done ? null : new WC_DateTime( '@' . (int) $done );
	}
	public function set_transaction_id( $id ) { $this->data['transaction_id'] = (string) $id; }
	public function set_total( $total ) { $this->data['total'] = (string) $total; }
	public function set_currency( $currency ) { $this->data['currency'] = (string) $currency; }
	public function set_customer_id( $id ) { $this->data['customer_id'] = (int) $id; }
	public function set_billing_email( $email ) { $this->data['billing_email'] = (string) $email; }
	public function is_paid() { return $this->has_status( wc_get_is_paid_statuses() ); }

	/** As WooCommerce: a paid status sets the paid date when there is none. */
	public function set_status( $new_status ) {
		$new_status = 0 === strpos( $new_status, 'wc-' ) ? substr( $new_status, 3 ) : $new_status;
		$old        = $this->get_status();
		$this->data['status'] = $new_status;
		if ( $old !== $new_status && $this->id ) {
			$this->transition = array( 'from' => $old, 'to' => $new_status );
		}
		// As WooCommerce's maybe_set_date_paid(): paid on reaching the
		// payment-complete status (cash on delivery filters it to completed,
		// so a processing COD order has no paid date), or completed after it.
		$complete = apply_filters( 'woocommerce_payment_complete_order_status', 'processing', $this->id, $this );
		if ( '' === ( $this->data['date_paid'] ?? '' ) && ( $new_status === $complete || ( 'processing' === $complete && 'completed' === $new_status ) ) ) {
			$this->set_date_paid( (int) apply_filters( 'cf_stand_in_now', time() ) );
		}
		if ( 'completed' === $new_status && '' === ( $this->data['date_completed'] ?? '' ) ) {
			$this->data['date_completed'] = (string) (int) apply_filters( 'cf_stand_in_now', time() );
		}
	}

	public function update_status( $new_status, $note = '' ) {
		$this->set_status( $new_status );
		$this->save();
		return true;
	}

	/** As WooCommerce's status_transition(): the hooks, in its order. */
	protected function status_transition() {
		$t = $this->transition;
		$this->transition = null;
		if ( ! $t ) {
			return;
		}
		do_action( 'woocommerce_order_status_' . $t['to'], $this->id, $this, $t );
		do_action( 'woocommerce_order_status_' . $t['from'] . '_to_' . $t['to'], $this->id, $this );
		do_action( 'woocommerce_order_status_changed', $this->id, $t['from'], $t['to'], $this );
	}

	/** As WooCommerce's payment_complete(). */
	public function payment_complete( $transaction_id = '' ) {
		do_action( 'woocommerce_pre_payment_complete', $this->id, $transaction_id );
		if ( $this->has_status( apply_filters( 'woocommerce_valid_order_statuses_for_payment_complete', array( 'on-hold', 'pending', 'failed', 'cancelled' ), $this ) ) ) {
			if ( ! empty( $transaction_id ) ) {
				$this->set_transaction_id( $transaction_id );
			}
			if ( ! $this->get_date_paid( 'edit' ) ) {
				$this->set_date_paid( (int) apply_filters( 'cf_stand_in_now', time() ) );
			}
			$this->set_status( apply_filters( 'woocommerce_payment_complete_order_status', 'processing', $this->id, $this ) );
			$this->save();
			do_action( 'woocommerce_payment_complete', $this->id, $transaction_id );
		} else {
			do_action( 'woocommerce_payment_complete_order_status_' . $this->get_status(), $this->id, $transaction_id );
		}
		return true;
	}

	/** A note (a comment, as WooCommerce keeps them). */
	public function add_order_note( $note, $is_customer_note = 0, $added_by_user = false ) {
		return wp_insert_comment(
			array(
				'comment_post_ID'  => $this->id,
				'comment_author'   => 'WooCommerce',
				'comment_content'  => $note,
				'comment_type'     => 'order_note',
				'comment_approved' => 1,
			)
		);
	}

	public function get_refunds() {
		$ids = get_posts( array( 'post_type' => 'shop_order_refund', 'post_parent' => $this->id, 'post_status' => 'any', 'fields' => 'ids', 'numberposts' => -1 ) );
		return array_map( 'wc_get_order', $ids );
	}

	public function get_total_refunded() {
		$sum = 0.0;
		foreach ( $this->get_refunds() as $refund ) {
			$sum += (float) $refund->get_amount();
		}
		return $sum;
	}

	public function get_remaining_refund_amount() {
		return (float) $this->get_total() - $this->get_total_refunded();
	}
}

/** A refund. */
class WC_Order_Refund extends WC_Abstract_Order {
	public function get_type() { return 'shop_order_refund'; }
	public function get_amount() { return (string) $this->get_meta( '_refund_amount' ); }
	public function get_reason() { return (string) $this->get_meta( '_refund_reason' ); }
	public function set_parent_id( $id ) { $this->data['parent_id'] = (int) $id; }
	public function get_status() { return 'completed'; }
	public function get_date_paid( $context = 'view' ) { return null; }
}

/** The paid statuses. */
function wc_get_is_paid_statuses() {
	return apply_filters( 'woocommerce_order_is_paid_statuses', array( 'processing', 'completed' ) );
}

/** An order or refund by id, or false. */
function wc_get_order( $the_order = false ) {
	$id   = is_object( $the_order ) ? $the_order->get_id() : (int) $the_order;
	$post = $id ? get_post( $id ) : null;
	if ( ! $post ) {
		return false;
	}
	if ( 'shop_order' === $post->post_type ) {
		return new WC_Order( $id );
	}
	if ( 'shop_order_refund' === $post->post_type ) {
		return new WC_Order_Refund( $id );
	}
	return false;
}

/** A new pending order: total, currency, customer_id. */
function wc_create_order( $args = array() ) {
	$order = new WC_Order();
	$order->set_status( $args['status'] ?? 'pending' );
	$order->set_total( $args['total'] ?? '0' );
	$order->set_currency( $args['currency'] ?? 'EUR' );
	$order->set_customer_id( $args['customer_id'] ?? 0 );
	$order->set_billing_email( $args['billing_email'] ?? 'customer@example.invalid' );
	$order->save();
	return $order;
}

/** As WooCommerce's wc_create_refund(): amount, reason, order_id. */
function wc_create_refund( $args = array() ) {
	$order = wc_get_order( $args['order_id'] ?? 0 );
	if ( ! $order ) {
		return new WP_Error( 'error', 'Invalid order ID.' );
	}
	$amount = (float) ( $args['amount'] ?? 0 );
	if ( $amount <= 0 || $amount > $order->get_remaining_refund_amount() + 0.000001 ) {
		return new WP_Error( 'error', 'Invalid refund amount.' );
	}
	$id = (int) wp_insert_post( array( 'post_type' => 'shop_order_refund', 'post_status' => 'wc-completed', 'post_parent' => $order->get_id(), 'post_title' => 'Refund' ) );
	update_post_meta( $id, '_refund_amount', (string) $args['amount'] );
	update_post_meta( $id, '_refund_reason', (string) ( $args['reason'] ?? '' ) );
	update_post_meta( $id, '_order_currency', $order->get_currency() );
	do_action( 'woocommerce_refund_created', $id, $args );
	$remaining = $order->get_remaining_refund_amount();
	if ( $remaining <= 0.000001 ) {
		$order->update_status( 'refunded' );
		do_action( 'woocommerce_order_fully_refunded', $order->get_id(), $id );
	} else {
		do_action( 'woocommerce_order_partially_refunded', $order->get_id(), $id );
	}
	do_action( 'woocommerce_order_refunded', $order->get_id(), $id );
	return wc_get_order( $id );
}

/** As wc_get_orders(), for: type, status, date_paid ("a...b"), limit, page, orderby, order, return ids. */
function wc_get_orders( $args ) {
	$query = array(
		'post_type'      => $args['type'] ?? 'shop_order',
		'post_status'    => isset( $args['status'] ) ? (array) $args['status'] : 'any',
		'posts_per_page' => $args['limit'] ?? 10,
		'paged'          => $args['page'] ?? 1,
		'orderby'        => $args['orderby'] ?? 'ID',
		'order'          => $args['order'] ?? 'DESC',
		'fields'         => 'ids',
	);
	if ( isset( $args['date_paid'] ) && preg_match( '/^(\d+)\.\.\.(\d+)$/', (string) $args['date_paid'], $m ) ) {
		$query['meta_query'] = array(
			array( 'key' => '_date_paid', 'value' => array( (int) $m[1], (int) $m[2] ), 'compare' => 'BETWEEN', 'type' => 'NUMERIC' ),
		);
	}
	$ids = get_posts( $query );
	return 'ids' === ( $args['return'] ?? 'objects' ) ? array_map( 'intval', $ids ) : array_map( 'wc_get_order', $ids );
}

/** WC_Data_Store::load( 'order' ): search_orders() by the meta keys WooCommerce searches. */
class WC_Data_Store {
	public static function load( $object_type ) {
		return new self();
	}
	public function search_orders( $term ) {
		global $wpdb;
		$fields = apply_filters( 'woocommerce_shop_order_search_fields', array( '_billing_address_index', '_shipping_address_index', '_billing_last_name', '_billing_email' ) );
		if ( empty( $fields ) ) {
			return array();
		}
		$in = implode( ',', array_fill( 0, count( $fields ), '%s' ) );
		return array_map(
			'intval',
			$wpdb->get_col(
				$wpdb->prepare( "SELECT DISTINCT p1.post_id FROM {$wpdb->postmeta} p1 WHERE p1.meta_value LIKE %s AND p1.meta_key IN ($in)", array_merge( array( '%' . $wpdb->esc_like( wc_clean( $term ) ) . '%' ), $fields ) )
			)
		);
	}
}

function wc_clean( $var ) {
	return is_array( $var ) ? array_map( 'wc_clean', $var ) : ( is_scalar( $var ) ? sanitize_text_field( $var ) : $var );
}

/**
 * Deletes a refund as WooCommerce's order screen does (WC_AJAX::delete_refund):
 * the refund goes, then `woocommerce_refund_deleted` with its id and its
 * order's.
 *
 * @param int $refund_id Refund.
 */
function cf_stand_in_delete_refund( $refund_id ) {
	$refund   = wc_get_order( $refund_id );
	$order_id = $refund ? $refund->get_parent_id() : 0;
	wp_delete_post( (int) $refund_id, true );
	do_action( 'woocommerce_refund_deleted', (int) $refund_id, (int) $order_id );
}

/**
 * An order's notes, as WooCommerce's wc_get_order_notes() returns them
 * (objects with id, content, customer_note, added_by, date_created).
 *
 * @param array $args order_id.
 * @return object[]
 */
function wc_get_order_notes( $args ) {
	$comments = get_comments(
		array(
			'post_id' => (int) ( $args['order_id'] ?? 0 ),
			'type'    => 'order_note',
			'status'  => 'approve',
		)
	);
	return array_map(
		function ( $c ) {
			return (object) array(
				'id'            => (int) $c->comment_ID,
				'content'       => $c->comment_content,
				'customer_note' => false,
				'added_by'      => $c->comment_author,
				'date_created'  => $c->comment_date_gmt,
			);
		},
		$comments
	);
}
