<?php
/**
 * A test worker: one PHP process in a WordPress site with WooCommerce (the
 * stand-in or a real one) completing the payment of orders, as a gateway's
 * webhook or the customer's return page does: `payment_complete()` on the
 * order as loaded. With LOAD=early each order is loaded before the start
 * line (every worker holds the order as still unpaid, the race of a webhook
 * and a return page); with LOAD=late just before its call. Released at the
 * harness's start line (tests/src/workers.rs); prints `start <ns>`, one line
 * per order (`ok <order> <invoice number read back from the order>` or
 * `none <order>`) and `end <ns>`; and `busy <order>` each time the plugin's
 * `counterfoil_claim_busy` fires in this process: another delivery of the
 * order's payment was creating its invoice when this one came for it (the
 * proof that the workers met on the order, not merely ran at the same time).
 * With CF_LINGER_MS set, a delivery that holds the claim lingers that long
 * before it writes the invoice post, so that the others arrive while it
 * holds it.
 *
 * Usage (in the site's directory): php woo-pay.php LOAD SEED ORDER_ID…
 */

require './wp-load.php';
require __DIR__ . '/start-line.php';

$load   = $argv[1];
$seed   = (int) $argv[2];
$orders = array_map( 'intval', array_slice( $argv, 3 ) );
// Each worker its own order of the orders.
mt_srand( $seed );
shuffle( $orders );

counterfoil_backend()->name();
$GLOBALS['wpdb']->get_var( 'SELECT 1' );
$loaded = array();
if ( 'early' === $load ) {
	foreach ( $orders as $id ) {
		$loaded[ $id ] = wc_get_order( $id );
	}
}
$current = 0;
add_action(
	'counterfoil_claim_busy',
	function () use ( &$current ) {
		echo "busy $current\n";
	}
);
$linger = (int) getenv( 'CF_LINGER_MS' );
if ( $linger > 0 ) {
	add_action(
		'counterfoil_before_invoice_post',
		function () use ( $linger ) {
			usleep( $linger * 1000 );
		}
	);
}
cf_wait_at_start_line();
echo 'start ', cf_now_ns(), "\n";
foreach ( $orders as $id ) {
	$current = $id;
	$order   = isset( $loaded[ $id ] ) ? $loaded[ $id ] : wc_get_order( $id );
	$order->payment_complete( "txn-$id" );
	$number = (string) wc_get_order( $id )->get_meta( '_counterfoil_invoice_number', true );
	if ( '' === $number ) {
		$fresh = wc_get_order( $id );
		echo "none $id ", $fresh->get_status(), ' ', (string) $fresh->get_meta( '_counterfoil_invoice_pending', true ), "\n";
	} else {
		echo "ok $id $number\n";
	}
}
echo 'end ', cf_now_ns(), "\n";
