<?php
use PHPUnit\Framework\TestCase;

/**
 * A series' life (docs/design.md §7): a payment whose series does not exist is
 * never refused — created under `create` and `continue`, held under `hold`
 * and completed later; the site's clock; next year's series ahead; Site
 * Health; an issued number is returned as issued.
 */
final class SeriesLifeTest extends TestCase {
	/** @var array Options restored after each test. */
	private $saved = array();
	/** @var callable|null */
	private $clock;

	protected function setUp(): void {
		foreach ( array( 'counterfoil_missing_series', 'counterfoil_new_series_start', 'counterfoil_format', 'timezone_string', 'counterfoil_period' ) as $o ) {
			$this->saved[ $o ] = get_option( $o );
		}
	}

	protected function tearDown(): void {
		foreach ( $this->saved as $o => $v ) {
			update_option( $o, $v );
		}
		if ( $this->clock ) {
			remove_filter( 'counterfoil_now', $this->clock );
		}
	}

	/** Makes the plugin's "now" a fixed Unix time. */
	private function clock_at( $unix ) {
		if ( $this->clock ) {
			remove_filter( 'counterfoil_now', $this->clock );
		}
		$this->clock = function () use ( $unix ) {
			return $unix;
		};
		add_filter( 'counterfoil_now', $this->clock );
	}

	private function payment( $u, $txn, $year = 2026 ) {
		$p = array(
			'gateway'        => 'stripe',
			'transaction_id' => $txn,
			'user_id'        => $u,
			'amount'         => '10.00',
			'currency'       => 'EUR',
		);
		if ( null !== $year ) {
			$p['year'] = $year;
		}
		return $p;
	}

	private static function series( $scope ) {
		global $wpdb;
		return $wpdb->get_row( $wpdb->prepare( 'SELECT current_value, start_value FROM wp_invoice_sequences WHERE scope_key = %s', $scope ), ARRAY_A );
	}

	/** The core's series_life::allocate_again: an open series after a zero-row allocation is allocated from again, twice at most. */
	public function testAnOpenSeriesAfterAZeroRowAllocationIsAllocatedAgainTwiceAtMost() {
		$tries = 0;
		$this->assertTrue( Counterfoil_Rules::allocate_again( true, null, $tries ) );
		$this->assertTrue( Counterfoil_Rules::allocate_again( true, null, $tries ) );
		$this->assertFalse( Counterfoil_Rules::allocate_again( true, null, $tries ), 'bounded' );
		$tries = 0;
		$this->assertFalse( Counterfoil_Rules::allocate_again( false, null, $tries ), 'missing: no retry' );
		$this->assertFalse( Counterfoil_Rules::allocate_again( true, '7:2027', $tries ), 'closed: its successor' );
		$this->assertSame( 0, $tries );
	}

	public function test_create_makes_the_new_issuers_series_at_the_configured_start() {
		update_option( 'counterfoil_missing_series', 'create' );
		$u = Counterfoil_Test::user();
		$this->assertNull( self::series( "$u:2026" ) );
		$first = Counterfoil_Invoices::for_payment( $this->payment( $u, "new-$u" ) );
		$this->assertIsArray( $first, is_wp_error( $first ) ? $first->get_error_message() : '' );
		$this->assertTrue( $first['created'] );
		$this->assertSame( 1, $first['sequence'] );
		$this->assertSame( '2026-0001', $first['number'] );
		$this->assertSame( array( 'current_value' => '1', 'start_value' => '1' ), self::series( "$u:2026" ) );
		$again = Counterfoil_Invoices::for_payment( $this->payment( $u, "new-$u" ) );
		$this->assertFalse( $again['created'] );
		$this->assertSame( $first['post']->ID, $again['post']->ID );

		update_option( 'counterfoil_new_series_start', 1000 );
		$v      = Counterfoil_Test::user();
		$second = Counterfoil_Invoices::for_payment( $this->payment( $v, "new-$v" ) );
		$this->assertSame( 1000, $second['sequence'] );
		// An existing series is never reset by the plan.
		$third = Counterfoil_Invoices::for_payment( $this->payment( $u, "new2-$u" ) );
		$this->assertSame( 2, $third['sequence'] );
		$this->assertSame( array(), Counterfoil_Test::registry_holes( "$u:2026" ) );
	}

	public function test_monthly_periods_number_per_issuer_and_month() {
		update_option( 'counterfoil_period', 'month' );
		update_option( 'counterfoil_missing_series', 'continue' );
		update_option( 'counterfoil_format', '{year}/{month}-{seq:03}' );
		update_option( 'timezone_string', 'UTC' );
		$u = Counterfoil_Test::user();
		$this->clock_at( 1802692800 ); // 2027-02-15 12:00 UTC.
		$this->assertSame( array( 2027, 2 ), counterfoil_current_period() );
		$this->assertTrue( counterfoil_next_period_is_near() );
		$feb = Counterfoil_Invoices::for_payment( $this->payment( $u, "m1-$u", null ) );
		$this->assertIsArray( $feb, is_wp_error( $feb ) ? $feb->get_error_message() : '' );
		$this->assertSame( array( "$u:2027-02", 1, '2027/02-001' ), array( $feb['scope_key'], $feb['sequence'], $feb['number'] ) );
		Counterfoil_Invoices::for_payment( $this->payment( $u, "m2-$u", null ) );
		// Next month's series, proposed ahead (the daily job's list).
		$ahead = Counterfoil_Series_Life::next_year_proposals( counterfoil_current_period(), 0, true );
		$mine  = array_values( array_filter( $ahead, function ( $p ) use ( $u ) { return "$u:2027-02" === $p['from']; } ) );
		$this->assertSame( array( "$u:2027-03", 3 ), array( $mine[0]['scope_key'], $mine[0]['start'] ) );
		// March: its series continues February's (continue), February's is closed.
		$this->clock_at( 1803988800 ); // 2027-03-02 12:00 UTC.
		$mar = Counterfoil_Invoices::for_payment( $this->payment( $u, "m3-$u", null ) );
		$this->assertSame( array( "$u:2027-03", 3, '2027/03-003' ), array( $mar['scope_key'], $mar['sequence'], $mar['number'] ) );
		global $wpdb;
		$this->assertSame( "$u:2027-03", $wpdb->get_var( $wpdb->prepare( 'SELECT closed_by FROM wp_invoice_sequences WHERE scope_key = %s', "$u:2027-02" ) ) );
		// A payment that names its year and month is numbered in that month's series (here: closed, so by its successor).
		$late = Counterfoil_Invoices::for_payment( $this->payment( $u, "m4-$u", 2027 ) + array( 'month' => 2 ) );
		$this->assertSame( array( "$u:2027-03", 4 ), array( $late['scope_key'], $late['sequence'] ) );
		$this->assertInstanceOf( WP_Error::class, Counterfoil_Invoices::for_payment( $this->payment( $u, "m5-$u", 2027 ) + array( 'month' => 13 ) ) );
		// A credit note of March's invoice is numbered in March's credit-note series.
		$note = Counterfoil_Credit_Notes::for_refund(
			array(
				'gateway'        => 'stripe',
				'refund_id'      => "re_m3-$u",
				'transaction_id' => "m3-$u",
				'amount'         => '1.00',
			)
		);
		$this->assertIsArray( $note, is_wp_error( $note ) ? $note->get_error_message() : '' );
		$this->assertSame( array( "$u:cn:2027-03", 1 ), array( $note['scope_key'], $note['sequence'] ) );
		// The books' year filter holds the months' series.
		list( $where, $params ) = Counterfoil_Books::where( array( 'scope' => '', 'year' => 2027, 'status' => '' ) );
		$scopes                 = $wpdb->get_col( $wpdb->prepare( "SELECT DISTINCT n.scope_key FROM wp_counterfoil_numbers n WHERE $where", $params ) ); // phpcs:ignore WordPress.DB.PreparedSQL -- $where from Counterfoil_Books::where(): placeholders only.
		$this->assertContains( "$u:2027-03", $scopes );
		$this->assertContains( "$u:2027-02", $scopes );
	}

	public function test_continue_starts_after_the_issuers_previous_year() {
		update_option( 'counterfoil_missing_series', 'continue' );
		$u = Counterfoil_Test::user();
		initialize_invoice_sequence( $u, 2025, 1 );
		for ( $i = 0; $i < 3; $i++ ) {
			allocate_invoice_number( $u, 2025 );
		}
		counterfoil_backend()->advance( "$u:2025", 154 ); // Last number 153.
		$r = Counterfoil_Invoices::for_payment( $this->payment( $u, "cont-$u" ) );
		$this->assertIsArray( $r, is_wp_error( $r ) ? $r->get_error_message() : '' );
		$this->assertSame( 154, $r['sequence'] );
		$this->assertSame( '2026-0154', $r['number'] );
		$this->assertSame( array( 'current_value' => '154', 'start_value' => '154' ), self::series( "$u:2026" ) );
		// 2025's series is closed now: a late payment of 2025 is numbered by
		// 2026's series (a format without the year never prints a number
		// twice), and nothing is allocated from 2025 any more.
		global $wpdb;
		$this->assertSame( "$u:2026", $wpdb->get_var( $wpdb->prepare( 'SELECT closed_by FROM wp_invoice_sequences WHERE scope_key = %s', "$u:2025" ) ) );
		$late = Counterfoil_Invoices::for_payment( $this->payment( $u, "late-$u", 2025 ) );
		$this->assertIsArray( $late, is_wp_error( $late ) ? $late->get_error_message() : '' );
		$this->assertSame( array( 155, "$u:2026" ), array( $late['sequence'], $late['scope_key'] ) );
		try {
			allocate_invoice_number( $u, 2025 );
			$this->fail( 'a closed series handed out a number' );
		} catch ( Counterfoil\SeriesClosedException $e ) {
			$this->assertStringContainsString( "`$u:2026` continues it", $e->getMessage() );
		}
		$this->assertSame( array( 'current_value' => '153', 'start_value' => '1' ), self::series( "$u:2025" ) );
		// No earlier year: the configured start.
		update_option( 'counterfoil_new_series_start', 7 );
		$v = Counterfoil_Test::user();
		$this->assertSame( 7, Counterfoil_Invoices::for_payment( $this->payment( $v, "cont-$v" ) )['sequence'] );
	}

	public function test_hold_records_the_payment_answers_503_and_completes_it_once_the_series_exists() {
		global $wpdb;
		update_option( 'counterfoil_missing_series', 'hold' );
		$u     = Counterfoil_Test::user();
		$this->clock_at( gmmktime( 12, 0, 0, 11, 15, 2026 ) );
		$first = Counterfoil_Invoices::for_payment( $this->payment( $u, "hold-$u-a" ) );
		$this->assertInstanceOf( WP_Error::class, $first );
		$this->assertSame( 'counterfoil_waiting_for_series', $first->get_error_code() );
		$this->assertSame( 503, $first->get_error_data()['status'] );
		$this->assertGreaterThan( 0, $first->get_error_data()['retry_after'] );
		$this->assertInstanceOf( WP_Error::class, Counterfoil_Invoices::for_payment( $this->payment( $u, "hold-$u-b" ) ) );
		// A repeat while the series is missing: still one row, still waiting.
		$this->assertSame( 503, Counterfoil_Invoices::for_payment( $this->payment( $u, "hold-$u-a" ) )->get_error_data()['status'] );
		$rows = Counterfoil_Test::rows( "SELECT transaction_id, scope_key, number, period FROM wp_counterfoil_payments WHERE transaction_id LIKE 'hold-$u-%' ORDER BY id" );
		$this->assertSame(
			array(
				array( 'transaction_id' => "hold-$u-a", 'scope_key' => "$u:2026", 'number' => null, 'period' => '2026-11' ),
				array( 'transaction_id' => "hold-$u-b", 'scope_key' => "$u:2026", 'number' => null, 'period' => '2026-11' ),
			),
			$rows
		);
		$this->assertNull( self::series( "$u:2026" ), 'hold creates no series' );
		$waiting = array_values( array_filter( Counterfoil_Invoices::waiting(), function ( $w ) use ( $u ) { return "$u:2026" === $w->scope_key; } ) );
		$this->assertCount( 2, $waiting );
		$this->assertSame( '0', (string) $waiting[0]->series_exists );
		$this->assertSame( 'critical', Counterfoil_Series_Life::test_waiting_payments()['status'] );
		// The button with the series still missing completes nothing.
		$done = Counterfoil_Invoices::complete_waiting();
		$this->assertGreaterThanOrEqual( 2, $done['still_waiting'] );
		$this->assertNull( $wpdb->get_var( "SELECT number FROM wp_counterfoil_payments WHERE transaction_id = 'hold-$u-a'" ) );

		// The admin creates the series; the button completes both, in order of arrival.
		$this->assertTrue( counterfoil_backend()->initialize( "$u:2026", 50 ) );
		$this->clock_at( gmmktime( 12, 0, 0, 12, 2, 2026 ) ); // Completed in December, numbered for November.
		update_option( 'counterfoil_format', '{year}-{month}-{seq:04}' );
		$done = Counterfoil_Invoices::complete_waiting();
		$this->assertSame( array(), $done['failed'] );
		$this->assertGreaterThanOrEqual( 2, $done['completed'] );
		$numbers = Counterfoil_Test::rows( "SELECT p.transaction_id, p.number, n.status, n.post_id IS NOT NULL AS has_post FROM wp_counterfoil_payments p JOIN wp_counterfoil_numbers n ON n.scope_key = p.scope_key AND n.number = p.number WHERE p.transaction_id LIKE 'hold-$u-%' ORDER BY p.id" );
		$this->assertSame(
			array(
				array( 'transaction_id' => "hold-$u-a", 'number' => '50', 'status' => 'issued', 'has_post' => '1' ),
				array( 'transaction_id' => "hold-$u-b", 'number' => '51', 'status' => 'issued', 'has_post' => '1' ),
			),
			$numbers
		);
		// A repeated delivery now answers with the invoice as issued.
		$again = Counterfoil_Invoices::for_payment( $this->payment( $u, "hold-$u-a" ) );
		$this->assertFalse( $again['created'] );
		$this->assertSame( '2026-11-0050', $again['number'] );
		$this->assertSame( array(), Counterfoil_Test::registry_holes( "$u:2026" ) );
	}

	public function test_a_repeated_delivery_completes_a_held_payment_once_its_series_exists() {
		update_option( 'counterfoil_missing_series', 'hold' );
		$u = Counterfoil_Test::user();
		$this->assertInstanceOf( WP_Error::class, Counterfoil_Invoices::for_payment( $this->payment( $u, "redeliver-$u" ) ) );
		$backend = counterfoil_backend();
		$backend->initialize( "$u:2026", 1 );
		$before = 'php' === $backend->name() ? $backend->stats['one_trip'] : null;
		$r      = Counterfoil_Invoices::for_payment( $this->payment( $u, "redeliver-$u" ) );
		$this->assertIsArray( $r, is_wp_error( $r ) ? $r->get_error_message() : '' );
		$this->assertTrue( $r['created'] );
		$this->assertSame( 1, $r['sequence'] );
		$this->assertSame( 0, (int) Counterfoil_Test::rows( "SELECT COUNT(*) AS c FROM wp_counterfoil_payments WHERE transaction_id = 'redeliver-$u' AND number IS NULL" )[0]['c'] );
		if ( null !== $before ) {
			// The delivery's packet stops at the payment row; the held
			// payment's completion goes in one trip (issue 30).
			$this->assertSame( $before + 1, $backend->stats['one_trip'], 'the completion went in one trip' );
		}
		// Its number's chain entry carries the payment's facts as held.
		$this->assertSame(
			array( array( 'number' => '1', 'event' => 'issued', 'transaction_id' => "redeliver-$u" ) ),
			Counterfoil_Test::rows( "SELECT number, event, transaction_id FROM wp_counterfoil_chain WHERE scope_key = '$u:2026'" )
		);
	}

	public function test_switching_from_hold_to_create_creates_the_held_payments_series() {
		update_option( 'counterfoil_missing_series', 'hold' );
		$u = Counterfoil_Test::user();
		$this->assertInstanceOf( WP_Error::class, Counterfoil_Invoices::for_payment( $this->payment( $u, "switch-$u", 2025 ) ) );
		update_option( 'counterfoil_missing_series', 'create' );
		// Delivered again with another year: it stays in the series it arrived for.
		$r = Counterfoil_Invoices::for_payment( $this->payment( $u, "switch-$u", 2026 ) );
		$this->assertIsArray( $r, is_wp_error( $r ) ? $r->get_error_message() : '' );
		$this->assertSame( "$u:2025", $r['scope_key'] );
		$this->assertNull( self::series( "$u:2026" ) );
	}

	public function test_the_period_is_the_sites_local_date() {
		update_option( 'counterfoil_missing_series', 'create' );
		update_option( 'timezone_string', 'Asia/Shanghai' );
		// 2026-12-31 16:30 UTC is 2027-01-01 00:30 in Shanghai.
		$this->clock_at( gmmktime( 16, 30, 0, 12, 31, 2026 ) );
		$this->assertSame( array( 2027, 1 ), counterfoil_local_period() );
		$u = Counterfoil_Test::user();
		$r = Counterfoil_Invoices::for_payment( $this->payment( $u, "tz-$u", null ) );
		$this->assertSame( "$u:2027", $r['scope_key'] );
		update_option( 'timezone_string', 'America/New_York' );
		// 2027-01-01 03:00 UTC is still 2026-12-31 22:00 in New York.
		$this->clock_at( gmmktime( 3, 0, 0, 1, 1, 2027 ) );
		update_option( 'counterfoil_format', '{year}/{month}/{seq}' );
		$r = Counterfoil_Invoices::for_payment( $this->payment( $u, "tz2-$u", null ) );
		$this->assertSame( "$u:2026", $r['scope_key'] );
		$this->assertSame( '2026/12/1', $r['number'] );
	}

	public function test_an_issued_number_is_returned_as_issued_after_the_format_changes() {
		$u = Counterfoil_Test::user();
		initialize_invoice_sequence( $u, 2026, 1 );
		$first = Counterfoil_Invoices::for_payment( $this->payment( $u, "fmt-$u" ) );
		$this->assertSame( '2026-0001', $first['number'] );
		update_option( 'counterfoil_format', 'INV-{seq:06}' );
		$again = Counterfoil_Invoices::for_payment( $this->payment( $u, "fmt-$u" ) );
		$this->assertFalse( $again['created'] );
		$this->assertSame( '2026-0001', $again['number'] );
		$this->assertSame( '2026-0001', get_post( $again['post']->ID )->post_title );
		$this->assertSame( 'INV-000002', Counterfoil_Invoices::for_payment( $this->payment( $u, "fmt2-$u" ) )['number'] );
	}

	public function test_next_years_series_ahead_and_the_daily_job() {
		update_option( 'counterfoil_missing_series', 'create' );
		update_option( 'counterfoil_new_series_start', 1 );
		update_option( 'timezone_string', 'UTC' );
		$year = 3000 + getmypid() % 1000; // A year no other test uses.
		$u    = Counterfoil_Test::user();
		$v    = Counterfoil_Test::user();
		initialize_invoice_sequence( $u, $year, 1 );
		initialize_invoice_sequence( $v, $year, 1 );
		initialize_invoice_sequence( $v, $year + 1, 500 ); // Exists: left as it is.
		$proposals = array();
		foreach ( Counterfoil_Series_Life::next_year_proposals( $year ) as $p ) {
			$proposals[ $p['scope_key'] ] = array( $p['exists'], $p['start'] );
		}
		$this->assertSame( array( false, 1 ), $proposals[ "$u:" . ( $year + 1 ) ] );
		$this->assertSame( array( true, 1 ), $proposals[ "$v:" . ( $year + 1 ) ] );
		// November: the job does nothing; Site Health says it checks in December.
		$this->clock_at( gmmktime( 12, 0, 0, 11, 30, $year ) );
		$this->assertNull( Counterfoil_Series_Life::daily() );
		$this->assertSame( 'good', Counterfoil_Series_Life::test_next_year()['status'] );
		// December under hold: Site Health is critical, and the job creates nothing.
		$this->clock_at( gmmktime( 12, 0, 0, 12, 1, $year ) );
		update_option( 'counterfoil_missing_series', 'hold' );
		$this->assertSame( 'critical', Counterfoil_Series_Life::test_next_year()['status'] );
		$this->assertNull( Counterfoil_Series_Life::daily() );
		// December under create: the job creates the missing one.
		update_option( 'counterfoil_missing_series', 'create' );
		$done = Counterfoil_Series_Life::daily();
		$this->assertContains( "$u:" . ( $year + 1 ), $done['created'] );
		$this->assertNotContains( "$v:" . ( $year + 1 ), $done['created'] );
		$this->assertSame( array( 'current_value' => '0', 'start_value' => '1' ), self::series( "$u:" . ( $year + 1 ) ) );
		$this->assertSame( array( 'current_value' => '499', 'start_value' => '500' ), self::series( "$v:" . ( $year + 1 ) ) );
		$this->assertSame( 'good', Counterfoil_Series_Life::test_next_year()['status'] );
		// Under continue the proposal is this year's last number + 1, and the job waits for the first payment.
		update_option( 'counterfoil_missing_series', 'continue' );
		allocate_invoice_number( $u, $year );
		$w = Counterfoil_Test::user();
		initialize_invoice_sequence( $w, $year, 40 );
		allocate_invoice_number( $w, $year );
		$by_key = array();
		foreach ( Counterfoil_Series_Life::next_year_proposals( $year ) as $p ) {
			$by_key[ $p['scope_key'] ] = $p['start'];
		}
		$this->assertSame( 41, $by_key[ "$w:" . ( $year + 1 ) ] );
		$this->assertNull( Counterfoil_Series_Life::daily() );
	}

	public function test_site_health_tests_are_registered_and_answer() {
		$tests = apply_filters( 'site_status_tests', array( 'direct' => array(), 'async' => array() ) );
		foreach ( array( 'durability', 'backend', 'webhook_secret', 'next_year', 'waiting_payments' ) as $name ) {
			$this->assertArrayHasKey( 'counterfoil_' . $name, $tests['direct'] );
			$result = call_user_func( $tests['direct'][ 'counterfoil_' . $name ]['test'] );
			$this->assertContains( $result['status'], array( 'good', 'recommended', 'critical' ), $name );
			$this->assertSame( 'counterfoil_' . $name, $result['test'] );
		}
		$this->assertSame( 'good', Counterfoil_Series_Life::test_durability()['status'] );
		$this->assertSame( 'good', Counterfoil_Series_Life::test_webhook_secret()['status'] );
		$this->assertStringContainsString( getenv( 'COUNTERFOIL_EXPECT_BACKEND' ) === 'extension' ? 'extension' : 'pure-PHP', Counterfoil_Series_Life::test_backend()['label'] );
	}

	public function test_the_daily_job_is_scheduled() {
		Counterfoil_Series_Life::schedule();
		$this->assertNotFalse( wp_next_scheduled( Counterfoil_Series_Life::CRON_HOOK ) );
	}
}
