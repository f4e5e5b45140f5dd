<?php
/**
 * A test worker for the Galera suite with the plugin's pure-PHP backend: one
 * PHP process in a WordPress site, calling allocate_recorded() on one series
 * until the harness says stop, printing its history in the format of the
 * Rust history-worker (tests/src/history.rs): `start <ns>`, one
 * `op <worker> <invoked> <completed> ok N N -` or `… err - <what was thrown>`
 * line per call, `count <calls>`, `end <ns>`. In mode `payment` each call
 * records a new payment (`w<WORKER>-<i>`, gateway `galera`) with
 * record_payment() instead, its transaction id the line's label.
 *
 * Usage (in the site's directory): php twin-history.php SCOPE WORKER [payment].
 * COUNTERFOIL_START_DIR holds the start line (ready.<pid>, go, stop).
 * The node list comes from the site's wp-config.php (CF_NODES there).
 *
 * The worker judges nothing: it prints the exception's class and message,
 * and the checker classifies them by its own rules (history::judge).
 */

require './wp-load.php';
require __DIR__ . '/start-line.php';

list( , $scope, $worker ) = $argv;
$payments = isset( $argv[3] ) && 'payment' === $argv[3];
$dir = getenv( 'COUNTERFOIL_START_DIR' );

$backend = counterfoil_backend();
if ( 'php' !== $backend->name() ) {
	fwrite( STDERR, "not the PHP backend\n" );
	exit( 2 );
}
// Connected before the start line, as the Rust workers.
$backend->current( $scope );
cf_wait_at_start_line();
$ops   = array();
$start = cf_now_ns();
while ( ! ( $dir && file_exists( "$dir/stop" ) ) ) {
	$invoked = cf_now_ns();
	$label   = $payments ? "w$worker-" . count( $ops ) : '-';
	try {
		$n    = $payments
			? $backend->record_payment( $scope, 'galera', $label, '1.00', 'EUR' )['number']
			: $backend->allocate_recorded( $scope, 'galera' );
		$line = "ok $n $n $label";
	} catch ( Throwable $e ) {
		$line = "err $label " . get_class( $e ) . ': ' . $e->getMessage();
	}
	$ops[] = "op $worker $invoked " . cf_now_ns() . " $line";
	if ( 0 !== strpos( $line, 'ok' ) ) {
		usleep( 20000 );
	}
}
$end = cf_now_ns();
echo "start $start\n", implode( "\n", str_replace( "\n", ' ', $ops ) ), "\ncount ", count( $ops ), "\nend $end\n";
