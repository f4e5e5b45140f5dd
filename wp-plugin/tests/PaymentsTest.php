<?php
use PHPUnit\Framework\TestCase;

/** One invoice per payment; a failure after the commit is completed by the retry. */
final class PaymentsTest extends TestCase {
	private function payment( $u, $txn, $extra = array() ) {
		return array_merge(
			array(
				'gateway'        => 'stripe',
				'transaction_id' => $txn,
				'user_id'        => $u,
				'year'           => 2026,
				'amount'         => '19.99',
				'currency'       => 'EUR',
			),
			$extra
		);
	}

	public function test_one_invoice_per_payment_and_the_same_number_on_repeat() {
		$u = Counterfoil_Test::user();
		initialize_invoice_sequence( $u, 2026, 100 );
		$first = counterfoil_create_invoice_for_payment( $this->payment( $u, "pay-$u-1" ) );
		$this->assertInstanceOf( WP_Post::class, $first );
		$this->assertSame( '2026-0100', $first->post_title );
		$this->assertSame( 'counterfoil_invoice', $first->post_type );
		$again = counterfoil_create_invoice_for_payment( $this->payment( $u, "pay-$u-1" ) );
		$this->assertSame( $first->ID, $again->ID );
		$second = counterfoil_create_invoice_for_payment( $this->payment( $u, "pay-$u-2" ) );
		$this->assertSame( '2026-0101', $second->post_title );
		$this->assertSame( "$u:2026", get_post_meta( $second->ID, '_counterfoil_scope_key', true ) );
		$posts = get_posts( array( 'post_type' => 'counterfoil_invoice', 'meta_key' => '_counterfoil_transaction_id', 'meta_value' => "pay-$u-1", 'numberposts' => -1 ) );
		$this->assertCount( 1, $posts );
		$this->assertSame( array(), Counterfoil_Test::registry_holes( "$u:2026" ) );
	}

	public function test_the_action_creates_the_invoice() {
		$u = Counterfoil_Test::user();
		initialize_invoice_sequence( $u, 2026, 1 );
		do_action( 'counterfoil_payment_received', $this->payment( $u, "act-$u" ) );
		$rows = Counterfoil_Test::rows( "SELECT status FROM wp_counterfoil_numbers WHERE scope_key = '$u:2026'" );
		$this->assertSame( array( array( 'status' => 'issued' ) ), $rows );
	}

	public function test_a_failure_after_the_commit_is_completed_by_the_retry_with_the_same_number() {
		$u = Counterfoil_Test::user();
		initialize_invoice_sequence( $u, 2026, 5 );
		$fail_once = function () {
			static $failed = false;
			if ( ! $failed ) {
				$failed = true;
				throw new RuntimeException( 'injected failure' );
			}
		};
		add_action( 'counterfoil_before_invoice_post', $fail_once );
		try {
			$first = counterfoil_create_invoice_for_payment( $this->payment( $u, "fail-$u" ) );
			$this->assertInstanceOf( WP_Error::class, $first );
			$this->assertSame( 'counterfoil_incomplete', $first->get_error_code() );
			$this->assertSame( 503, $first->get_error_data()['status'] );
			$this->assertStringContainsString( '2026-0005', $first->get_error_message() );
			// The number is reserved for the payment; no post exists.
			$this->assertSame(
				array( array( 'number' => '5', 'status' => 'reserved', 'post_id' => null ) ),
				Counterfoil_Test::rows( "SELECT number, status, post_id FROM wp_counterfoil_numbers WHERE scope_key = '$u:2026'" )
			);
			$this->assertCount( 0, get_posts( array( 'post_type' => 'counterfoil_invoice', 'meta_key' => '_counterfoil_transaction_id', 'meta_value' => "fail-$u" ) ) );
			// Another payment meanwhile takes the next number.
			$other = counterfoil_create_invoice_for_payment( $this->payment( $u, "other-$u" ) );
			$this->assertSame( '2026-0006', $other->post_title );
			// The retry completes the same number.
			$retry = counterfoil_create_invoice_for_payment( $this->payment( $u, "fail-$u" ) );
			$this->assertInstanceOf( WP_Post::class, $retry );
			$this->assertSame( '2026-0005', $retry->post_title );
		} finally {
			remove_action( 'counterfoil_before_invoice_post', $fail_once );
		}
		$this->assertSame( array(), Counterfoil_Test::registry_holes( "$u:2026" ) );
		$statuses = array_column( Counterfoil_Test::rows( "SELECT status FROM wp_counterfoil_numbers WHERE scope_key = '$u:2026'" ), 'status' );
		$this->assertSame( array( 'issued', 'issued' ), $statuses );
	}

	public function test_invalid_payments_are_400_and_write_nothing() {
		global $wpdb;
		$u = Counterfoil_Test::user();
		initialize_invoice_sequence( $u, 2026, 1 );
		$before = $wpdb->get_var( 'SELECT COUNT(*) FROM wp_counterfoil_payments' );
		foreach ( array(
			array( 'gateway' => 'stripe' ),
			$this->payment( $u, 't', array( 'user_id' => "1 OR 1=1" ) ),
			$this->payment( $u, 't', array( 'gateway' => "x'; DROP TABLE wp_posts; --" ) ),
			$this->payment( $u, 't', array( 'amount' => "1; DELETE" ) ),
			$this->payment( $u, 't', array( 'currency' => 'euro' ) ),
			$this->payment( $u, 't', array( 'year' => 0 ) ),
			$this->payment( $u, '' ),
		) as $i => $bad ) {
			$r = counterfoil_create_invoice_for_payment( $bad );
			$this->assertInstanceOf( WP_Error::class, $r, "case $i" );
			$this->assertSame( 400, $r->get_error_data()['status'], "case $i: " . $r->get_error_message() );
		}
		$this->assertSame( $before, $wpdb->get_var( 'SELECT COUNT(*) FROM wp_counterfoil_payments' ) );
	}

	public function test_void_needs_a_reason() {
		$u = Counterfoil_Test::user();
		initialize_invoice_sequence( $u, 2026, 1 );
		allocate_invoice_number( $u, 2026 );
		$this->assertInstanceOf( WP_Error::class, counterfoil_void_number( "$u:2026", 1, '  ' ) );
		$this->assertTrue( counterfoil_void_number( "$u:2026", 1, 'printed with a typo, replaced by 2' ) );
		$this->assertSame(
			array( array( 'status' => 'void', 'reason' => 'printed with a typo, replaced by 2' ) ),
			Counterfoil_Test::rows( "SELECT status, reason FROM wp_counterfoil_numbers WHERE scope_key = '$u:2026'" )
		);
		$this->assertInstanceOf( WP_Error::class, counterfoil_void_number( "$u:2026", 1, 'again' ) );
	}
}
