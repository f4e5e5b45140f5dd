<?php
use PHPUnit\Framework\TestCase;

/**
 * No live numbers from a copy of the site (Counterfoil_Site_Identity): at
 * another address or environment a payment is recorded and waits without a
 * number; an admin's confirmation resumes numbering.
 */
final class SiteIdentityTest extends TestCase {
	/** @var array The stored `home` and the recorded identity, restored after each test. */
	private $saved = array();

	protected function setUp(): void {
		$this->saved = array( self::stored_home(), get_option( Counterfoil_Site_Identity::OPTION ) );
	}

	protected function tearDown(): void {
		self::move_to( $this->saved[0] );
		update_option( Counterfoil_Site_Identity::OPTION, $this->saved[1] );
		$_POST = array();
		wp_set_current_user( 0 );
	}

	/** The address the database stores (WP_HOME, set by the harness, hides it from get_option). */
	private static function stored_home() {
		global $wpdb;
		return $wpdb->get_var( "SELECT option_value FROM {$wpdb->options} WHERE option_name = 'home'" );
	}

	/** What a host's copy tool does: the stored address rewritten. */
	private static function move_to( $home ) {
		global $wpdb;
		$wpdb->update( $wpdb->options, array( 'option_value' => $home ), array( 'option_name' => 'home' ) );
		wp_cache_delete( 'alloptions', 'options' );
	}

	/** A series' counter, or null when it does not exist. */
	private static function counter( $scope ) {
		try {
			return counterfoil_backend()->current( $scope );
		} catch ( Counterfoil\SeriesNotFoundException $e ) {
			return null;
		}
	}

	private function payment( $u, $txn ) {
		return array(
			'gateway'        => 'stripe',
			'transaction_id' => $txn,
			'user_id'        => $u,
			'amount'         => '10.00',
			'currency'       => 'EUR',
		);
	}

	private function confirm( $nonce = true ) {
		$_POST = array( 'action' => Counterfoil_Site_Identity::ACTION );
		if ( $nonce ) {
			$_POST['_wpnonce'] = wp_create_nonce( Counterfoil_Site_Identity::ACTION );
		}
		try {
			do_action( 'admin_post_' . Counterfoil_Site_Identity::ACTION );
			$this->fail( 'the handler neither redirected nor died' );
		} catch ( Counterfoil_Test_Redirect $r ) {
			return 'redirect';
		} catch ( Counterfoil_Test_Die $d ) {
			return $d->getCode();
		}
	}

	public function test_the_installed_site_is_recorded_and_numbers() {
		$this->assertNotNull( Counterfoil_Site_Identity::recorded() );
		$this->assertNull( Counterfoil_Site_Identity::paused_reason() );
	}

	public function test_a_copy_at_another_address_holds_its_payments_until_the_move_is_confirmed() {
		global $wpdb;
		$u     = Counterfoil_Test::user();
		$year  = counterfoil_local_period()[0];
		$first = counterfoil_create_invoice_for_payment( $this->payment( $u, 'pi_live_' . $u ) );
		$this->assertInstanceOf( WP_Post::class, $first );

		self::move_to( 'https://staging.example.com/shop/' );
		$why = Counterfoil_Site_Identity::paused_reason();
		$this->assertStringContainsString( 'staging.example.com/shop', (string) $why );
		$counter = self::counter( "$u:$year" );

		$held = counterfoil_create_invoice_for_payment( $this->payment( $u, 'pi_copy_' . $u ) );
		$this->assertInstanceOf( WP_Error::class, $held );
		$this->assertSame( 'counterfoil_numbering_paused', $held->get_error_code() );
		$this->assertSame( 503, $held->get_error_data()['status'] );
		// The reason (the address) is the site's own: in the error's data
		// for the log, not in the message a gateway is answered with.
		$this->assertStringNotContainsString( 'staging.example.com', $held->get_error_message() );
		$this->assertStringContainsString( 'staging.example.com/shop', $held->get_error_data()['detail'] );
		$this->assertSame( $counter, self::counter( "$u:$year" ), 'no number taken on the copy' );
		$this->assertNull( $wpdb->get_var( $wpdb->prepare( 'SELECT number FROM wp_counterfoil_payments WHERE transaction_id = %s', 'pi_copy_' . $u ) ), 'recorded, without a number' );
		$this->assertSame( '1', $wpdb->get_var( $wpdb->prepare( 'SELECT COUNT(*) FROM wp_counterfoil_payments WHERE transaction_id = %s', 'pi_copy_' . $u ) ) );
		$again = counterfoil_create_invoice_for_payment( $this->payment( $u, 'pi_live_' . $u ) );
		$this->assertSame( $first->ID, $again->ID, 'a payment numbered before keeps its invoice' );
		// Nor does a new issuer's series, nor a waiting payment's completion.
		$this->assertSame( 0, Counterfoil_Invoices::complete_waiting()['completed'] );
		$this->assertInstanceOf( WP_Error::class, counterfoil_create_invoice_for_payment( $this->payment( $u + 500000, 'pi_new_' . $u ) ) );
		$this->assertNull( self::counter( ( $u + 500000 ) . ":$year" ) );

		wp_set_current_user( get_user_by( 'login', 'admin' )->ID );
		ob_start();
		Counterfoil_Site_Identity::notice();
		$notice = ob_get_clean();
		$this->assertStringContainsString( 'counterfoil-site-paused', $notice );
		$this->assertSame( 'critical', Counterfoil_Site_Identity::test_site_identity()['status'] );

		$this->assertSame( 403, $this->confirm( false ), 'no nonce' );
		wp_set_current_user( get_user_by( 'login', 'subscriber' )->ID );
		$this->assertSame( 403, $this->confirm(), 'no capability' );
		$this->assertNotNull( Counterfoil_Site_Identity::paused_reason() );
		wp_set_current_user( get_user_by( 'login', 'admin' )->ID );
		$this->assertSame( 'redirect', $this->confirm() );
		$this->assertNull( Counterfoil_Site_Identity::paused_reason() );
		$this->assertSame( 'good', Counterfoil_Site_Identity::test_site_identity()['status'] );

		$done = counterfoil_create_invoice_for_payment( $this->payment( $u, 'pi_copy_' . $u ) );
		$this->assertInstanceOf( WP_Post::class, $done, 'numbering resumed' );
		$this->assertSame( $counter + 1, self::counter( "$u:$year" ) );
	}

	public function test_another_environment_pauses_too() {
		$recorded                = Counterfoil_Site_Identity::recorded();
		$recorded['environment'] = 'production' === wp_get_environment_type() ? 'staging' : 'production';
		update_option( Counterfoil_Site_Identity::OPTION, $recorded );
		$this->assertStringContainsString( 'environment', (string) Counterfoil_Site_Identity::paused_reason() );
		$u = Counterfoil_Test::user();
		$r = counterfoil_create_invoice_for_payment( $this->payment( $u, 'pi_env_' . $u ) );
		$this->assertSame( 'counterfoil_numbering_paused', $r->get_error_code() );
	}
}
