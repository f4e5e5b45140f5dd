<?php
/**
 * A test worker: one PHP process in a WordPress site asking for one credit
 * note of AMOUNT for each of COUNT invoices (the payments PREFIX0 …
 * PREFIX{COUNT-1}, in that order, as every other worker), released at the
 * harness's start line with the others (tests/src/workers.rs), printing
 * `start <ns>`, one line per refund (`ok <transaction> <sequence> <amount>`
 * or `refused <transaction> <code>`) and `end <ns>`.
 *
 * Usage (in the site's directory): php credit-notes.php PREFIX WORKER COUNT AMOUNT.
 */

require './wp-load.php';
require __DIR__ . '/start-line.php';

list( , $prefix, $worker, $count, $amount ) = $argv;

// Connected before the start line.
counterfoil_backend()->name();
$GLOBALS['wpdb']->get_var( 'SELECT 1' );
cf_wait_at_start_line();
echo 'start ', cf_now_ns(), "\n";
for ( $i = 0; $i < (int) $count; $i++ ) {
	$txn    = $prefix . $i;
	$refund = "re_{$worker}_{$i}";
	$r      = Counterfoil_Credit_Notes::for_refund(
		array(
			'gateway'        => 'stripe',
			'refund_id'      => $refund,
			'transaction_id' => $txn,
			'amount'         => $amount,
			'reason'         => 'overlapping refunds',
		)
	);
	if ( is_wp_error( $r ) ) {
		echo "refused $txn ", $r->get_error_code(), "\n";
	} else {
		echo "ok $txn {$r['sequence']} $amount\n";
	}
}
echo 'end ', cf_now_ns(), "\n";
