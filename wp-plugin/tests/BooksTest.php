<?php
use PHPUnit\Framework\TestCase;

/**
 * The books: the series table pages and searches, the registry filters, the
 * gap report finds planted holes and stale reservations (and nothing on
 * clean series), a gap can be voided, the export is the registry.
 */
final class BooksTest extends TestCase {
	protected function tearDown(): void {
		$_GET = array();
		$_REQUEST = array();
	}

	/** A series of a fresh issuer in a year of its own, with $n numbers issued through payments. */
	private function series_with( $n, $year = 2026 ) {
		$u = Counterfoil_Test::user();
		initialize_invoice_sequence( $u, $year, 1 );
		for ( $i = 1; $i <= $n; $i++ ) {
			$p = counterfoil_create_invoice_for_payment( array( 'gateway' => 'stripe', 'transaction_id' => "books-$u-$i", 'user_id' => $u, 'year' => $year, 'amount' => '10.00', 'currency' => 'EUR' ) );
			$this->assertInstanceOf( WP_Post::class, $p );
		}
		return "$u:$year";
	}

	public function test_the_series_table_pages_searches_and_counts_the_visible_page() {
		$u = Counterfoil_Test::user();
		for ( $y = 2001; $y <= 2045; $y++ ) {
			initialize_invoice_sequence( $u, $y, 1 );
		}
		allocate_invoice_number( $u, 2001 );
		allocate_invoice_number( $u, 2001 );
		counterfoil_void_number( "$u:2001", 2, 'test' );
		$_GET['s'] = "$u:20";
		$table     = new Counterfoil_Series_Table();
		$table->prepare_items();
		$this->assertSame( 45, $table->get_pagination_arg( 'total_items' ) );
		$this->assertCount( 20, $table->items );
		$this->assertSame( "$u:2001", $table->items[0]->scope_key );
		$this->assertSame( array( 1, 0, 1 ), array( $table->items[0]->issued, $table->items[0]->reserved, $table->items[0]->void ) );
		$_REQUEST['paged'] = 3;
		$_GET['paged']     = 3;
		$table             = new Counterfoil_Series_Table();
		$table->prepare_items();
		$this->assertSame( array( "$u:2041", "$u:2042", "$u:2043", "$u:2044", "$u:2045" ), wp_list_pluck( $table->items, 'scope_key' ) );
		// Sorted by next number, descending: the series with numbers first.
		$_GET = array( 's' => "$u:20", 'orderby' => 'current_value', 'order' => 'desc' );
		$_REQUEST = array();
		$table    = new Counterfoil_Series_Table();
		$table->prepare_items();
		$this->assertSame( "$u:2001", $table->items[0]->scope_key );
	}

	public function test_the_series_table_finds_series_by_issuer() {
		$login = 'issuer-' . wp_generate_password( 6, false, false );
		$id    = wp_insert_user( array( 'user_login' => $login, 'user_pass' => wp_generate_password(), 'user_email' => "$login@example.invalid" ) );
		initialize_invoice_sequence( $id, 2026, 1 );
		initialize_invoice_sequence( $id, 2027, 1 );
		$_GET['s'] = $login;
		$table     = new Counterfoil_Series_Table();
		$table->prepare_items();
		$this->assertSame( array( "$id:2026", "$id:2027" ), wp_list_pluck( $table->items, 'scope_key' ) );
	}

	public function test_registry_filters() {
		$scope = $this->series_with( 3, 2031 );
		counterfoil_void_number( $scope, 2, 'wrong customer' );
		$rows = function ( array $f ) {
			$t = new Counterfoil_Registry_Table( $f + array( 'scope' => '', 'year' => 0, 'status' => '' ) );
			$t->prepare_items();
			return array_map( function ( $r ) { return $r->scope_key . '#' . $r->number . ':' . $r->status; }, $t->items );
		};
		$this->assertSame( array( "$scope#1:issued", "$scope#2:void", "$scope#3:issued" ), $rows( array( 'scope' => $scope ) ) );
		$this->assertSame( array( "$scope#2:void" ), $rows( array( 'scope' => $scope, 'status' => 'void' ) ) );
		$this->assertContains( "$scope#3:issued", $rows( array( 'year' => 2031 ) ) );
		$this->assertSame( array(), $rows( array( 'scope' => $scope, 'year' => 2030 ) ) );
	}

	public function test_the_gap_report_finds_planted_holes_and_stale_reservations_and_nothing_on_clean_series() {
		global $wpdb;
		$y     = 4000 + getmypid() % 5000; // A year no other run of this suite uses.
		$clean = $this->series_with( 3, $y );
		$this->assertSame( array(), Counterfoil_Books::gaps( array( 'scope' => $clean, 'year' => 0, 'status' => '' ) )['missing'] );
		$this->assertSame( array(), Counterfoil_Books::gaps( array( 'scope' => $clean, 'year' => 0, 'status' => '' ) )['stale'] );
		$holed = $this->series_with( 5, $y );
		// Holes: 2 and 4 lose their rows; 6..8 are handed out without a record.
		$wpdb->query( $wpdb->prepare( 'DELETE FROM wp_counterfoil_numbers WHERE scope_key = %s AND number IN (2, 4)', $holed ) );
		counterfoil_backend()->advance( $holed, 9 );
		// A stale reservation: a payment whose invoice was never completed, an hour ago.
		$wpdb->query( $wpdb->prepare( "UPDATE wp_counterfoil_numbers SET status = 'reserved', updated_at = UTC_TIMESTAMP() - INTERVAL 1 HOUR WHERE scope_key = %s AND number = 5", $holed ) );
		$g = Counterfoil_Books::gaps( array( 'scope' => $holed, 'year' => 0, 'status' => '' ) );
		$this->assertSame( array( array( $holed, 2, 2 ), array( $holed, 4, 4 ), array( $holed, 6, 8 ) ), $g['missing'] );
		$this->assertSame( array( '5' ), wp_list_pluck( $g['stale'], 'number' ) );
		// The year's report names the holed series and not the clean one.
		$year = Counterfoil_Books::gaps( array( 'scope' => '', 'year' => $y, 'status' => '' ) );
		$this->assertSame( array( $holed ), array_values( array_unique( array_column( $year['missing'], 0 ) ) ) );
		// A gap voided with a reason is accounted for; a number never handed out cannot be voided.
		$this->assertTrue( counterfoil_void_number( $holed, 7, 'lost in a failed call' ) );
		$this->assertInstanceOf( WP_Error::class, counterfoil_void_number( $holed, 99, 'never handed out' ) );
		$g = Counterfoil_Books::gaps( array( 'scope' => $holed, 'year' => 0, 'status' => '' ) );
		$this->assertSame( array( array( $holed, 2, 2 ), array( $holed, 4, 4 ), array( $holed, 6, 6 ), array( $holed, 8, 8 ) ), $g['missing'] );
	}

	public function test_the_export_is_the_registry_row_for_row() {
		global $wpdb;
		$scope = $this->series_with( 4, 2033 );
		counterfoil_void_number( $scope, 3, '=HYPERLINK("http://evil.invalid","click")' );
		$f    = array( 'scope' => $scope, 'year' => 0, 'status' => '' );
		$csv  = wp_tempnam( 'cf-export' );
		$json = wp_tempnam( 'cf-export' );
		$this->assertSame( 4, Counterfoil_Books::export( $f, '', '', 'csv', $csv ) );
		$this->assertSame( 4, Counterfoil_Books::export( $f, '', '', 'jsonl', $json ) );
		$lines = file( $json, FILE_IGNORE_NEW_LINES );
		$rows  = $wpdb->get_results( $wpdb->prepare( 'SELECT n.number, n.status, n.reason, p.post_title FROM wp_counterfoil_numbers n LEFT JOIN wp_posts p ON p.ID = n.post_id WHERE n.scope_key = %s ORDER BY n.number', $scope ) );
		$this->assertCount( count( $rows ), $lines );
		foreach ( $rows as $i => $r ) {
			$o = json_decode( $lines[ $i ], true );
			$this->assertSame( array_values( Counterfoil_Rules::EXPORT_COLUMNS ), array_keys( $o ) );
			$this->assertSame( array( (int) $r->number, $r->status, $r->reason, $r->post_title ), array( $o['number'], $o['status'], $o['reason'], $o['rendered'] ) );
		}
		$text = file_get_contents( $csv );
		$this->assertStringStartsWith( "scope_key,number,rendered,status,reason,gateway,transaction_id,amount,currency,post_id,created_at,updated_at,kind,refers_to\r\n", $text );
		$this->assertStringContainsString( '"\'=HYPERLINK(""http://evil.invalid"",""click"")"', $text, 'the formula is escaped' );
		$this->assertSame( 5, substr_count( $text, "\r\n" ) );
		unlink( $csv );
		unlink( $json );
	}

	public function test_the_dashboard_summary_counts_this_years_series() {
		$year = counterfoil_local_period()[0];
		delete_transient( 'counterfoil_year_summary_' . $year );
		$before = Counterfoil_Books::year_summary()['counts']['issued'];
		$this->series_with( 2, $year );
		delete_transient( 'counterfoil_year_summary_' . $year );
		$this->assertSame( $before + 2, Counterfoil_Books::year_summary()['counts']['issued'] );
	}
}
