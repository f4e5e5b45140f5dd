<?php
use PHPUnit\Framework\TestCase;

/** Settings → Invoice numbers: capability and nonce on every form; refusals. */
final class AdminTest extends TestCase {
	protected function tearDown(): void {
		$_POST = array();
		wp_set_current_user( 0 );
	}

	private function post( $action, array $fields, $nonce = true ) {
		$_POST = $fields + array( 'action' => 'counterfoil_' . $action );
		if ( $nonce ) {
			$_POST['_wpnonce'] = wp_create_nonce( 'counterfoil_' . $action );
		}
		try {
			do_action( 'admin_post_counterfoil_' . $action );
			$this->fail( 'the handler neither redirected nor died' );
		} catch ( Counterfoil_Test_Redirect $r ) {
			$notice = get_transient( 'counterfoil_notice_' . get_current_user_id() );
			return array( 'redirect', $notice );
		} catch ( Counterfoil_Test_Die $d ) {
			return array( 'die', $d->getCode() );
		}
	}

	private function admin() {
		$admin = get_user_by( 'login', 'admin' );
		wp_set_current_user( $admin->ID );
	}

	public function test_every_form_needs_the_capability_and_a_nonce() {
		global $wpdb;
		$before = $wpdb->get_var( 'SELECT COUNT(*) FROM wp_invoice_sequences' );
		$fields = array(
			'create_series'  => array( 'user_id' => '77', 'year' => '2031', 'start' => '2' ),
			'advance_series' => array( 'scope_key' => '77:2031', 'next' => '500' ),
			'save_settings'  => array( 'format' => 'X-{seq}' ),
			'void_number'    => array( 'scope_key' => '77:2031', 'number' => '1', 'reason' => 'r' ),
		);
		foreach ( $fields as $action => $f ) {
			wp_set_current_user( get_user_by( 'login', 'subscriber' )->ID );
			$this->assertSame( array( 'die', 403 ), $this->post( $action, $f ), "$action as subscriber" );
			$this->admin();
			$this->assertSame( array( 'die', 403 ), $this->post( $action, $f, false ), "$action without nonce" );
			$_POST['_wpnonce'] = 'forged';
			$this->assertSame( array( 'die', 403 ), $this->post( $action, $f + array( '_wpnonce' => 'x' ), false ), "$action forged nonce" );
		}
		$this->assertSame( $before, $wpdb->get_var( 'SELECT COUNT(*) FROM wp_invoice_sequences' ) );
		$this->assertSame( Counterfoil_Rules::DEFAULT_FORMAT, get_option( 'counterfoil_format' ) );
	}

	public function test_create_advance_and_the_refusal_to_go_lower() {
		$this->admin();
		$u = Counterfoil_Test::user();
		list( , $notice ) = $this->post( 'create_series', array( 'user_id' => (string) $u, 'year' => '2026', 'start' => '2' ) );
		$this->assertSame( 'success', $notice[0], $notice[1] );
		list( , $notice ) = $this->post( 'create_series', array( 'user_id' => (string) $u, 'year' => '2026', 'start' => '9' ) );
		$this->assertStringContainsString( 'already exists', $notice[1] );
		list( , $notice ) = $this->post( 'advance_series', array( 'scope_key' => "$u:2026", 'next' => '200' ) );
		$this->assertSame( 'success', $notice[0], $notice[1] );
		list( , $notice ) = $this->post( 'advance_series', array( 'scope_key' => "$u:2026", 'next' => '100' ) );
		$this->assertSame( 'error', $notice[0] );
		$this->assertStringContainsString( 'Refused', $notice[1] );
		$this->assertStringContainsString( 'create a new series', $notice[1] );
		$this->assertSame( 199, counterfoil_backend()->current( "$u:2026" ) );
		list( , $notice ) = $this->post( 'create_series', array( 'user_id' => "1 OR 1=1", 'year' => '2026', 'start' => '1' ) );
		$this->assertSame( 'error', $notice[0] );
	}

	public function test_a_bad_format_is_refused_with_its_position() {
		$this->admin();
		list( , $notice ) = $this->post( 'save_settings', array( 'format' => '{year}-{sequence}' ) );
		$this->assertSame( 'error', $notice[0] );
		$this->assertStringContainsString( 'character 8', $notice[1] );
		$this->assertSame( Counterfoil_Rules::DEFAULT_FORMAT, get_option( 'counterfoil_format' ) );
	}

	public function test_the_page_escapes_and_shows_the_backend() {
		$this->admin();
		initialize_invoice_sequence( Counterfoil_Test::user(), 2026, 1 );
		counterfoil_backend()->initialize( '<script>alert(1)</script>', 1 );
		$_GET['s'] = 'alert(1)'; // The series table pages; search brings the row up.
		ob_start();
		try {
			Counterfoil_Admin::render();
		} finally {
			$html = ob_get_clean();
			unset( $_GET['s'] );
		}
		$this->assertStringNotContainsString( '<script>alert(1)</script>', $html );
		$this->assertStringContainsString( '&lt;script&gt;alert(1)&lt;/script&gt;', $html );
		$this->assertStringContainsString( 'extension' === counterfoil_backend()->name() ? 'PHP extension' : 'pure PHP', $html );
		wp_set_current_user( get_user_by( 'login', 'subscriber' )->ID );
		try {
			Counterfoil_Admin::render();
			$this->fail( 'a subscriber saw the page' );
		} catch ( Counterfoil_Test_Die $d ) {
			$this->assertSame( 403, $d->getCode() );
		}
	}

	public function test_stripe_settings_keep_the_secret_out_of_the_page() {
		$this->admin();
		$base = array( 'format' => Counterfoil_Rules::DEFAULT_FORMAT, 'missing_series' => 'create', 'new_series_start' => '1' );
		list( , $notice ) = $this->post( 'save_settings', $base + array( 'stripe_secret' => 'sk_live_notASigningSecret' ) );
		$this->assertSame( 'error', $notice[0] );
		$this->assertSame( '', Counterfoil_Stripe::secret(), 'a wrong kind of secret is not saved' );
		list( , $notice ) = $this->post( 'save_settings', $base + array( 'stripe_secret' => 'whsec_abcDEF0123456789wxyz', 'stripe_default_issuer' => '42' ) );
		$this->assertSame( 'success', $notice[0], $notice[1] );
		$this->assertSame( 'whsec_abcDEF0123456789wxyz', Counterfoil_Stripe::secret() );
		$this->assertSame( 42, Counterfoil_Stripe::default_issuer() );
		ob_start();
		Counterfoil_Admin::render();
		$page = ob_get_clean();
		$this->assertStringNotContainsString( 'whsec_abcDEF0123456789wxyz', $page, 'the secret is never shown back' );
		$this->assertStringContainsString( '…wxyz', $page );
		$this->assertStringContainsString( esc_html( rest_url( 'counterfoil/v1/stripe' ) ), $page );
		// A blank field keeps the secret; the checkbox removes it.
		list( , $notice ) = $this->post( 'save_settings', $base + array( 'stripe_secret' => '', 'stripe_default_issuer' => '' ) );
		$this->assertSame( 'whsec_abcDEF0123456789wxyz', Counterfoil_Stripe::secret() );
		$this->assertNull( Counterfoil_Stripe::default_issuer() );
		list( , $notice ) = $this->post( 'save_settings', $base + array( 'stripe_default_issuer' => '4x' ) );
		$this->assertSame( 'error', $notice[0] );
		list( , $notice ) = $this->post( 'save_settings', $base + array( 'stripe_clear_secret' => '1' ) );
		$this->assertSame( '', Counterfoil_Stripe::secret() );
	}

	public function test_stripe_signature_header_parsing() {
		$sig = str_repeat( 'a', 64 );
		$this->assertSame( array( 12345, array( $sig, str_repeat( 'b', 64 ) ) ), Counterfoil_Stripe::parse_header( "t=12345,v1=$sig,v0=zz,v1=" . str_repeat( 'b', 64 ) ) );
		$this->assertNull( Counterfoil_Stripe::parse_header( "v1=$sig" ), 'no timestamp' );
		$this->assertNull( Counterfoil_Stripe::parse_header( 't=12345,v0=' . $sig ), 'no v1' );
		$this->assertNull( Counterfoil_Stripe::parse_header( "t=12x,v1=$sig" ) );
		$this->assertNull( Counterfoil_Stripe::parse_header( '' ) );
	}

	public function test_every_rest_route_of_the_namespace_has_a_real_permission_callback() {
		$routes = rest_get_server()->get_routes( 'counterfoil/v1' );
		$this->assertNotEmpty( $routes );
		foreach ( $routes as $path => $handlers ) {
			if ( '/counterfoil/v1' === $path ) {
				continue; // The namespace index WordPress adds.
			}
			foreach ( $handlers as $h ) {
				$this->assertArrayHasKey( 'permission_callback', $h, $path );
				$this->assertIsCallable( $h['permission_callback'], $path );
				$this->assertNotSame( '__return_true', $h['permission_callback'], $path );
				$request = new WP_REST_Request( 'POST', $path );
				$this->assertInstanceOf( WP_Error::class, call_user_func( $h['permission_callback'], $request ), "$path lets an unsigned request in" );
			}
		}
	}

	public function test_a_fiscal_year_that_moves_today_is_saved_only_once_its_effect_was_shown() {
		$saved = array( get_option( 'counterfoil_period' ), get_option( 'timezone_string' ) );
		$clock = function () {
			return gmmktime( 12, 0, 0, 2, 10, 2027 ); // 10 February 2027.
		};
		add_filter( 'counterfoil_now', $clock );
		update_option( 'timezone_string', 'Asia/Kolkata' );
		update_option( 'counterfoil_period', 'calendar-year' );
		$this->admin();
		try {
			$form = array(
				'format'           => Counterfoil_Rules::DEFAULT_FORMAT,
				'missing_series'   => 'create',
				'new_series_start' => '1',
				'period_kind'      => 'fiscal-year',
				'period_start'     => '04-01',
			);
			list( , $notice ) = $this->post( 'save_settings', $form );
			$this->assertSame( 'error', $notice[0] );
			$this->assertStringContainsString( 'today belongs to the period 2026 instead of 2027', $notice[1] );
			$this->assertSame( 'calendar-year', get_option( 'counterfoil_period' ), 'nothing saved before the effect was shown' );
			list( , $notice ) = $this->post( 'save_settings', array( 'period_start' => '02-30' ) + $form + array( 'period_confirm' => '1' ) );
			$this->assertSame( 'error', $notice[0], 'no 30 February' );
			list( , $notice ) = $this->post( 'save_settings', $form + array( 'period_confirm' => '1' ) );
			$this->assertSame( 'success', $notice[0], $notice[1] );
			$this->assertSame( 'fiscal-year:04-01', get_option( 'counterfoil_period' ) );
			$u    = Counterfoil_Test::user();
			$post = counterfoil_create_invoice_for_payment(
				array(
					'gateway'        => 'stripe',
					'transaction_id' => 'pi_fy_' . $u,
					'user_id'        => $u,
				)
			);
			$this->assertSame( "$u:2026", get_post_meta( $post->ID, '_counterfoil_scope_key', true ), 'February 2027 is in the fiscal year 2026-27' );
			// {fy} and {fy_end} print the fiscal year, on either backend.
			update_option( 'counterfoil_format', 'FY{fy}/{seq:03} ({fy_end})' );
			$fy = counterfoil_create_invoice_for_payment(
				array(
					'gateway'        => 'stripe',
					'transaction_id' => 'pi_fy2_' . $u,
					'user_id'        => $u,
				)
			);
			update_option( 'counterfoil_format', Counterfoil_Rules::DEFAULT_FORMAT );
			counterfoil_backend(); // The extension's process settings take the format back.
			$this->assertSame( 'FY2026-27/002 (2027)', $fy->post_title );
			// The same rule again needs no confirmation.
			list( , $notice ) = $this->post( 'save_settings', $form );
			$this->assertSame( 'success', $notice[0], $notice[1] );
		} finally {
			remove_filter( 'counterfoil_now', $clock );
			update_option( 'counterfoil_period', $saved[0] );
			update_option( 'timezone_string', $saved[1] );
		}
	}
}

