<?php
/**
 * A test worker: one PHP process refunding AMOUNT of order ORDER through
 * WooCommerce (`wc_create_refund()`, as the order page's refund button),
 * released at the harness's start line with the others; prints `start <ns>`,
 * `refund <refund id> <credit note number or ->` or `refused <message>`, and
 * `end <ns>`.
 *
 * Usage (in the site's directory): php woo-refund.php ORDER AMOUNT
 */

require './wp-load.php';
require __DIR__ . '/start-line.php';

list( , $order_id, $amount ) = $argv;

counterfoil_backend()->name();
$GLOBALS['wpdb']->get_var( 'SELECT 1' );
cf_wait_at_start_line();
echo 'start ', cf_now_ns(), "\n";
$refund = wc_create_refund(
	array(
		'order_id' => (int) $order_id,
		'amount'   => $amount,
		'reason'   => 'overlapping refunds',
	)
);
if ( is_wp_error( $refund ) ) {
	echo 'refused ', $refund->get_error_message(), "\n";
} else {
	$number = (string) wc_get_order( $refund->get_id() )->get_meta( '_counterfoil_credit_note_number', true );
	echo 'refund ', $refund->get_id(), ' ', '' === $number ? '-' : $number, "\n";
}
echo 'end ', cf_now_ns(), "\n";
