<?php
/**
 * The harness's start line for PHP test workers (tests/src/workers.rs): a
 * worker reports ready (ready.<pid> in COUNTERFOIL_START_DIR) and waits for
 * `go`, so that every worker starts its work at the same moment; its
 * `start <ns>` / `end <ns>` lines (cf_now_ns) prove that they overlapped.
 */

/** Now, in nanoseconds since the epoch (wall clock, as the Rust workers). */
function cf_now_ns() {
	list( $usec, $sec ) = explode( ' ', microtime() );
	return (int) $sec * 1000000000 + (int) round( (float) $usec * 1e9 );
}

/** Reports ready and waits for `go` (at most 120 s; without a start line, at once). */
function cf_wait_at_start_line() {
	$dir = getenv( 'COUNTERFOIL_START_DIR' );
	if ( ! $dir ) {
		return;
	}
	touch( "$dir/ready." . getmypid() );
	$waited = microtime( true );
	while ( ! file_exists( "$dir/go" ) ) {
		if ( microtime( true ) - $waited > 120 ) {
			fwrite( STDERR, "no go\n" );
			exit( 2 );
		}
		usleep( 1000 );
	}
}
