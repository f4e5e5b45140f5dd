<?php
use PHPUnit\Framework\TestCase;

/**
 * The tamper-evident chain on the PHP side (Counterfoil_Chain): every number
 * handed out and every void is an entry of its series' chain, written with
 * it (through the backend under test, and the books' void); Site Health
 * walks the chains a batch at a time and names the first edit.
 */
final class ChainTest extends TestCase {
	protected function tearDown(): void {
		delete_option( Counterfoil_Chain::CHECKED_OPTION );
	}

	/** A new issuer's series with $n invoices: [scope, transaction ids]. */
	private function series( $n ) {
		$u    = Counterfoil_Test::user();
		$txns = array();
		$post = null;
		for ( $i = 0; $i < $n; $i++ ) {
			$txns[] = 'pi_chain_' . $u . '_' . $i;
			$post   = counterfoil_create_invoice_for_payment(
				array(
					'gateway'        => 'stripe',
					'transaction_id' => end( $txns ),
					'user_id'        => $u,
					'amount'         => ( 10 + $i ) . '.00',
					'currency'       => 'EUR',
				)
			);
			$this->assertInstanceOf( WP_Post::class, $post );
		}
		return array( get_post_meta( $post->ID, '_counterfoil_scope_key', true ), $txns );
	}

	private static function entries( $scope ) {
		global $wpdb;
		return $wpdb->get_results( $wpdb->prepare( "SELECT seq, number, event, gateway, transaction_id, amount, currency, reason FROM {$wpdb->prefix}counterfoil_chain WHERE scope_key = %s ORDER BY seq", $scope ), ARRAY_A );
	}

	/** Site Health walked to the end: no break, nothing left. */
	private static function walk_to_the_end() {
		for ( $i = 0; $i < 10000; $i++ ) {
			$r = Counterfoil_Chain::check_some( 500 );
			if ( null !== $r['broken'] || 0 === $r['behind'] ) {
				return $r;
			}
		}
		return $r;
	}

	public function test_numbers_and_voids_are_chained_with_their_facts() {
		list( $scope, $txns ) = $this->series( 3 );
		$this->assertTrue( counterfoil_void_number( $scope, 2, 'customer cancelled' ) );
		$e = self::entries( $scope );
		$this->assertCount( 4, $e );
		$this->assertSame( array( '1', '2', '3', '4' ), array_column( $e, 'seq' ) );
		$this->assertSame( array( 'issued', 'issued', 'issued', 'void' ), array_column( $e, 'event' ) );
		$this->assertSame( array( 'stripe', $txns[0], '10.00', 'EUR' ), array( $e[0]['gateway'], $e[0]['transaction_id'], $e[0]['amount'], $e[0]['currency'] ) );
		$this->assertSame( array( '2', 'customer cancelled', null ), array( $e[3]['number'], $e[3]['reason'], $e[3]['amount'] ) );
		// A void that changes nothing writes no entry.
		$this->assertInstanceOf( WP_Error::class, counterfoil_void_number( $scope, 2, 'again' ) );
		$this->assertCount( 4, self::entries( $scope ) );
	}

	/**
	 * The void's connection is killed (KILL CONNECTION, from another
	 * connection) just before its chain entry is written: the void and its
	 * chain entry commit together or not at all. On $wpdb's connection the
	 * chain entry was written again on a new connection (wpdb reconnects
	 * after a 2006 and runs the statement anew, outside the transaction) and
	 * committed with the head's move, while the void itself was rolled back
	 * with the killed connection: a void entry for a number still issued.
	 */
	public function test_a_void_whose_connection_is_killed_is_all_or_nothing() {
		global $wpdb;
		list( $scope ) = $this->series( 2 );
		$head_before   = $wpdb->get_row( $wpdb->prepare( "SELECT chain_seq, chain_head FROM {$wpdb->prefix}invoice_sequences WHERE scope_key = %s", $scope ), ARRAY_N );
		$chain         = "INSERT INTO `{$wpdb->prefix}counterfoil_chain`";
		$killed        = array();
		$kill          = function ( $query ) use ( $chain, &$killed ) {
			if ( $killed || 0 !== strpos( $query, $chain ) ) {
				return $query;
			}
			$parsed = $GLOBALS['wpdb']->parse_db_host( DB_HOST );
			$killer = mysqli_connect( $parsed[0], DB_USER, DB_PASSWORD, DB_NAME, $parsed[1] ? (int) $parsed[1] : 3306 );
			// The void's transaction holds the series row's lock.
			// (Of this site's database: the server is shared with other tests.)
			$ids = $killer->query( 'SELECT t.trx_mysql_thread_id FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id WHERE p.DB = DATABASE() AND t.trx_mysql_thread_id <> CONNECTION_ID()' )->fetch_all();
			foreach ( $ids as $id ) {
				$killer->query( 'KILL CONNECTION ' . (int) $id[0] );
				$killed[] = (int) $id[0];
			}
			for ( $i = 0; $i < 100 && $killer->query( 'SELECT 1 FROM information_schema.PROCESSLIST WHERE ID IN (' . implode( ',', array_merge( array( 0 ), $killed ) ) . ')' )->num_rows; $i++ ) {
				usleep( 20000 );
			}
			$killer->close();
			return $query;
		};
		add_filter( 'query', $kill );
		try {
			$r = counterfoil_void_number( $scope, 2, 'killed mid-void' );
		} finally {
			remove_filter( 'query', $kill );
		}
		$this->assertCount( 1, $killed, 'one transaction was open and killed' );
		$status = $wpdb->get_var( $wpdb->prepare( "SELECT status FROM {$wpdb->prefix}counterfoil_numbers WHERE scope_key = %s AND number = 2", $scope ) );
		$this->assertSame( array( 'issued', 'issued' ), array_column( self::entries( $scope ), 'event' ), "no void entry without its void (the number is $status)" );
		$this->assertSame( 'issued', $status, 'the void did not commit' );
		$this->assertInstanceOf( WP_Error::class, $r );
		$this->assertSame( 'counterfoil_unavailable', $r->get_error_code() );
		$this->assertSame( $head_before, $wpdb->get_row( $wpdb->prepare( "SELECT chain_seq, chain_head FROM {$wpdb->prefix}invoice_sequences WHERE scope_key = %s", $scope ), ARRAY_N ), 'the head did not move' );
		// Tried again, it commits whole.
		$this->assertTrue( counterfoil_void_number( $scope, 2, 'killed mid-void' ) );
		$this->assertSame( array( 'issued', 'issued', 'void' ), array_column( self::entries( $scope ), 'event' ) );
		$this->assertNull( self::walk_to_the_end()['broken'] );
	}

	/**
	 * A payment's first delivery goes in one round trip (issue 30), the
	 * server computing its chain entry's hash: the entries hold when walked.
	 * On the pure-PHP backend the count of one-trip deliveries shows it.
	 */
	public function test_first_deliveries_go_in_one_trip_and_their_entries_hold() {
		$backend = counterfoil_backend();
		$before  = 'php' === $backend->name() ? $backend->stats['one_trip'] : null;
		list( $scope, $txns ) = $this->series( 3 );
		if ( null !== $before ) {
			$this->assertSame( $before + 3, $backend->stats['one_trip'] );
		}
		$e = self::entries( $scope );
		$this->assertSame( array( '1', '2', '3' ), array_column( $e, 'number' ) );
		$this->assertSame( $txns, array_column( $e, 'transaction_id' ) );
		$r = self::walk_to_the_end();
		$this->assertNull( $r['broken'], wp_json_encode( $r ) );
	}

	/**
	 * A recorded allocation's first try goes in one trip (the twin counts
	 * it); a request key taken before, and a series that does not exist,
	 * stop the packet and go the way of several statements, which answers
	 * them as before; every number is chained and issued.
	 */
	public function test_recorded_allocations_go_in_one_trip_and_hand_over_what_they_cannot_settle() {
		global $wpdb;
		$backend = counterfoil_backend();
		$scope   = Counterfoil_Test::user() . ':2031';
		$backend->initialize( $scope, 1 );
		$before = 'php' === $backend->name() ? $backend->stats['one_trip'] : null;
		$this->assertSame( 1, $backend->allocate_recorded( $scope, 'api' ) );
		$this->assertSame( 2, $backend->allocate_recorded( $scope, 'api', 'order-9' ) );
		// The same key again: the packet stops at the key, the several
		// statements find the number it took.
		$this->assertSame( 2, $backend->allocate_recorded( $scope, 'api', 'order-9' ) );
		if ( null !== $before ) {
			$this->assertSame( $before + 2, $backend->stats['one_trip'] );
		}
		try {
			$backend->allocate_recorded( $scope . '-missing', 'api' );
			$this->fail( 'a missing series' );
		} catch ( Counterfoil\SeriesNotFoundException $e ) {
			$this->assertStringContainsString( 'missing', $e->getMessage() );
		}
		$this->assertSame( array( '1', '2' ), array_column( self::entries( $scope ), 'number' ) );
		$this->assertSame(
			array( 'issued', 'issued' ),
			$wpdb->get_col( $wpdb->prepare( "SELECT status FROM {$wpdb->prefix}counterfoil_numbers WHERE scope_key = %s ORDER BY number", $scope ) )
		);
		$this->assertNull( self::walk_to_the_end()['broken'] );
	}

	public function test_site_health_walks_a_batch_at_a_time_and_names_the_first_edit() {
		global $wpdb;
		list( $scope ) = $this->series( 3 );
		$first         = Counterfoil_Chain::check_some( 1 );
		$this->assertSame( 1, $first['checked'] );
		$this->assertGreaterThan( 0, $first['behind'] );
		$r = self::walk_to_the_end();
		$this->assertNull( $r['broken'] );
		$this->assertSame( 'good', Counterfoil_Chain::test_chain()['status'] );
		$kept = get_option( Counterfoil_Chain::CHECKED_OPTION )['series'];
		$this->assertSame( 3, $kept[ $scope ][0] );

		// A new entry edited behind the books' back: found on the next visit.
		$this->assertTrue( counterfoil_void_number( $scope, 1, 'duplicate order' ) );
		$wpdb->query( $wpdb->prepare( "UPDATE {$wpdb->prefix}counterfoil_chain SET reason = 'nothing to see' WHERE scope_key = %s AND seq = 4", $scope ) );
		$r = self::walk_to_the_end();
		$this->assertSame( "series $scope: the chain breaks at number 1 (position 4): it no longer gives its hash: it was edited", $r['broken'] );
		$health = Counterfoil_Chain::test_chain();
		$this->assertSame( 'critical', $health['status'] );
		$this->assertStringContainsString( 'counterfoil verify', $health['description'] );
		$wpdb->query( $wpdb->prepare( "UPDATE {$wpdb->prefix}counterfoil_chain SET reason = 'duplicate order' WHERE scope_key = %s AND seq = 4", $scope ) );
		$this->assertNull( self::walk_to_the_end()['broken'] );

		// An entry checked before, rewritten: the kept point tells.
		$hash = $wpdb->get_var( $wpdb->prepare( "SELECT hash FROM {$wpdb->prefix}counterfoil_chain WHERE scope_key = %s AND seq = 4", $scope ) );
		$wpdb->query( $wpdb->prepare( "UPDATE {$wpdb->prefix}counterfoil_chain SET hash = REPEAT('a', 64) WHERE scope_key = %s AND seq = 4", $scope ) );
		$this->assertSame( "series $scope: the entry at position 4, checked before, was rewritten or removed", Counterfoil_Chain::check_some()['broken'] );
		$wpdb->query( $wpdb->prepare( "UPDATE {$wpdb->prefix}counterfoil_chain SET hash = %s WHERE scope_key = %s AND seq = 4", $hash, $scope ) );

		// An edit behind the kept point: unseen until the next pass, which
		// starts a day after the last one began.
		$wpdb->query( $wpdb->prepare( "UPDATE {$wpdb->prefix}counterfoil_chain SET amount = '0.01' WHERE scope_key = %s AND seq = 2", $scope ) );
		$this->assertNull( self::walk_to_the_end()['broken'] );
		$state          = get_option( Counterfoil_Chain::CHECKED_OPTION );
		$state['since'] = time() - 2 * DAY_IN_SECONDS;
		update_option( Counterfoil_Chain::CHECKED_OPTION, $state, false );
		Counterfoil_Chain::check_some();
		$this->assertSame( "series $scope: the chain breaks at number 2 (position 2): it no longer gives its hash: it was edited", self::walk_to_the_end()['broken'] );
		$wpdb->query( $wpdb->prepare( "UPDATE {$wpdb->prefix}counterfoil_chain SET amount = '11.00' WHERE scope_key = %s AND seq = 2", $scope ) );
		$this->assertNull( self::walk_to_the_end()['broken'] );
	}
}
