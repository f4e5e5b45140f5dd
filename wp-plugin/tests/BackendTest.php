<?php
use PHPUnit\Framework\TestCase;

/**
 * The article's functions and the backend interface, on whichever backend is
 * active (the suite runs once with the extension, once without).
 */
final class BackendTest extends TestCase {
	public function test_the_articles_semantics() {
		$u = Counterfoil_Test::user();
		$this->assertTrue( initialize_invoice_sequence( $u, 2019, 2 ) );
		$this->assertSame( '2019-0002', allocate_invoice_number( $u, 2019 ) );
		$this->assertSame( '2019-0003', allocate_invoice_number( $u, 2019 ) );
		$this->assertFalse( initialize_invoice_sequence( $u, 2019, 2 ) );
		$b = counterfoil_backend();
		$this->assertSame( 3, $b->current( "$u:2019" ) );
		$this->assertTrue( $b->advance( "$u:2019", 200 ) );
		$this->assertSame( '2019-0200', allocate_invoice_number( $u, 2019 ) );
		$this->assertFalse( $b->advance( "$u:2019", 50 ) );
		$this->assertSame( '2019-0201', allocate_invoice_number( $u, 2019 ) );
		// Every number handed out is in the registry as issued.
		$rows = Counterfoil_Test::rows( "SELECT number, status, source FROM wp_counterfoil_numbers WHERE scope_key = '$u:2019' ORDER BY number" );
		$this->assertSame( array( '2', '3', '200', '201' ), array_column( $rows, 'number' ) );
		$this->assertSame( array( 'issued' ), array_values( array_unique( array_column( $rows, 'status' ) ) ) );
	}

	public function test_unknown_series_after_a_successful_allocation() {
		$u = Counterfoil_Test::user();
		initialize_invoice_sequence( $u, 2024, 1000 );
		$this->assertSame( '2024-1000', allocate_invoice_number( $u, 2024 ) );
		try {
			allocate_invoice_number( $u, 2025 );
			$this->fail( 'nothing thrown' );
		} catch ( Counterfoil\SeriesNotFoundException $e ) {
			$this->assertInstanceOf( RuntimeException::class, $e );
		}
		$this->assertSame( '2024-1001', allocate_invoice_number( $u, 2024 ) );
	}

	public function test_bad_input_throws_and_writes_nothing() {
		global $wpdb;
		$count = function () use ( $wpdb ) {
			return (int) $wpdb->get_var( 'SELECT COUNT(*) FROM wp_invoice_sequences' ) . '/' . (int) $wpdb->get_var( 'SELECT COUNT(*) FROM wp_counterfoil_numbers' );
		};
		$before = $count();
		foreach ( array(
			array( fn () => initialize_invoice_sequence( 1, 2019, 0 ), Counterfoil\InvalidArgumentException::class ),
			array( fn () => initialize_invoice_sequence( -1, 2019, 1 ), Counterfoil\InvalidArgumentException::class ),
			array( fn () => initialize_invoice_sequence( 1, 10000, 1 ), Counterfoil\InvalidArgumentException::class ),
			array( fn () => allocate_invoice_number( 1, 0 ), Counterfoil\InvalidArgumentException::class ),
			array( fn () => initialize_invoice_sequence( '1', 2019, 1 ), TypeError::class ),
			array( fn () => allocate_invoice_number( 1, '2019' ), TypeError::class ),
			array( fn () => counterfoil_backend()->initialize( "a\nb", 1 ), Counterfoil\InvalidArgumentException::class ),
			array( fn () => counterfoil_backend()->initialize( str_repeat( 'x', 192 ), 1 ), Counterfoil\InvalidArgumentException::class ),
			array( fn () => counterfoil_backend()->advance( 'nope', 0 ), Counterfoil\InvalidArgumentException::class ),
			array( fn () => counterfoil_backend()->record_payment( '1:2019', 'Bad Gateway', 't', null, null ), Counterfoil\InvalidArgumentException::class ),
			array( fn () => counterfoil_backend()->record_payment( '1:2019', 'stripe', " t", null, null ), Counterfoil\InvalidArgumentException::class ),
			// Checked before anything is sent (issue [seams] item 1): never a
			// database error from inside the transaction.
			array( fn () => counterfoil_backend()->allocate_recorded( '1:2019', str_repeat( 'x', 300 ) ), Counterfoil\InvalidArgumentException::class ),
			array( fn () => counterfoil_backend()->allocate_recorded( '1:2019', '' ), Counterfoil\InvalidArgumentException::class ),
			array( fn () => counterfoil_backend()->record_payment( '1:2019', 'stripe', 't', str_repeat( '1', 40 ), 'EUR' ), Counterfoil\InvalidArgumentException::class ),
			array( fn () => counterfoil_backend()->record_payment( '1:2019', 'stripe', 't', '10.00', 'EURO' ), Counterfoil\InvalidArgumentException::class ),
			array( fn () => counterfoil_backend()->hold_payment( '1:2019', 'stripe', 't', '-5', 'EUR', 2019, 1 ), Counterfoil\InvalidArgumentException::class ),
		) as $i => list( $call, $class ) ) {
			try {
				$call();
				$this->fail( "case $i: nothing thrown" );
			} catch ( Throwable $e ) {
				$this->assertInstanceOf( $class, $e, "case $i: " . $e->getMessage() );
			}
		}
		$this->assertSame( $before, $count() );
	}

	public function test_allocation_outside_wordpress_tables_keeps_the_registry_complete() {
		$u = Counterfoil_Test::user();
		initialize_invoice_sequence( $u, 2030, 7 );
		for ( $i = 0; $i < 5; $i++ ) {
			allocate_invoice_number( $u, 2030 );
		}
		$this->assertSame( array(), Counterfoil_Test::registry_holes( "$u:2030" ) );
	}
}
