<?php
/**
 * The tamper-evident chain of a series, on the PHP side: the entries the
 * twin and the plugin append (counterfoil_core::flows::chain) and the
 * incremental check Site Health runs (counterfoil_core::chain::verify).
 *
 * Invariants: an entry is appended inside the transaction of its event,
 * under the series row's lock (`chain.head` is a locking read of the
 * series' row), at the head's position + 1, and the head moved from that
 * position only; the hash is Counterfoil_Rules::chain_hash, the core's rule
 * byte for byte (tests/vectors/chain.json); an entry's time is UTC, as the
 * text it was hashed with.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

// phpcs:disable WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- the plugin's own tables (registry, series, payments, chain), which no WordPress API reads or writes; never cached: a number's state is read live.
// phpcs:disable WordPress.Security.EscapeOutput.ExceptionNotEscaped -- an exception's message is text, not HTML: it goes to the log, a REST answer (JSON) or a WP_Error, and every page that prints one escapes it there.

/**
 * Chain entries and their check.
 */
final class Counterfoil_Chain {
	/** Entries one Site Health load checks at most (its time stays bounded). */
	const CHECK_BATCH = 5000;

	/** The option holding how far the incremental check got, per series. */
	const CHECKED_OPTION = 'counterfoil_chain_checked';

	/**
	 * The entry of a number handed out (to a payment, with its facts).
	 *
	 * @return array Counterfoil_Rules::CHAIN_FIELDS => value.
	 */
	public static function issued( $scope, $number, $gateway = null, $transaction_id = null, $amount = null, $currency = null ) {
		return self::entry( $scope, $number, 'issued', $gateway, $transaction_id, $amount, $currency, null );
	}

	/**
	 * The entry of a number voided with a reason.
	 *
	 * @return array Counterfoil_Rules::CHAIN_FIELDS => value.
	 */
	public static function void( $scope, $number, $reason ) {
		return self::entry( $scope, $number, 'void', null, null, null, null, $reason );
	}

	/** An entry, now (UTC). */
	private static function entry( $scope, $number, $event, $gateway, $transaction_id, $amount, $currency, $reason ) {
		return array(
			'scope_key'      => (string) $scope,
			'number'         => (string) (int) $number,
			'event'          => $event,
			'gateway'        => null === $gateway ? null : (string) $gateway,
			'transaction_id' => null === $transaction_id ? null : (string) $transaction_id,
			'amount'         => null === $amount ? null : (string) $amount,
			'currency'       => null === $currency ? null : (string) $currency,
			'post_id'        => null,
			'reason'         => null === $reason ? null : (string) $reason,
			'at'             => gmdate( 'Y-m-d H:i:s' ),
		);
	}

	/**
	 * Where `$entry` goes after the head `chain.head` read: the values of
	 * `chain.append` (scope, seq, number, event, gateway, transaction,
	 * amount, currency, post id, reason, at, prev hash, hash) and of
	 * `chain.move_head` (seq, hash, the number if it is the chain's first
	 * issued one, scope, the seq it was at).
	 *
	 * @param array $head  [chain_seq, chain_head] as read.
	 * @param array $entry The entry.
	 * @return array [append values, move values].
	 */
	public static function placed( array $head, array $entry ) {
		$at   = (int) $head[0];
		$prev = null === $head[1] ? Counterfoil_Rules::CHAIN_GENESIS : (string) $head[1];
		$hash = Counterfoil_Rules::chain_hash( $prev, $entry );
		$seq  = $at + 1;
		$row  = array( $entry['scope_key'], $seq, $entry['number'], $entry['event'], $entry['gateway'], $entry['transaction_id'], $entry['amount'], $entry['currency'], $entry['post_id'], $entry['reason'], $entry['at'], $prev, $hash );
		$first = 'issued' === $entry['event'] ? $entry['number'] : null;
		return array( $row, array( $seq, $hash, $first, $entry['scope_key'], $at ) );
	}

	/** The types of `chain.append`'s values, as the twin binds them. */
	const APPEND_TYPES = 'sisssssssssss';

	/** The types of `chain.move_head`'s values. */
	const MOVE_TYPES = 'isisi';

	/**
	 * The head of $scope's chain under its series row's lock, with a
	 * WordPress connection (the shared statement `chain.head`), inside a
	 * transaction the caller opened on it (Counterfoil_Wpdb_Transaction).
	 *
	 * @param string $scope Series.
	 * @param wpdb   $db    The transaction's connection.
	 * @return array|null [chain_seq, chain_head], or null without a series row.
	 */
	public static function head_with_wpdb( $scope, wpdb $db ) {
		return $db->get_row( self::statement( 'chain.head', 's', array( $scope ) ), ARRAY_N ); // phpcs:ignore WordPress.DB.PreparedSQL -- bound by statement().
	}

	/**
	 * Appends `$entry` with a WordPress connection, inside the transaction
	 * the caller opened on it after reading the head with head_with_wpdb()
	 * (the plugin's own writes: a void from the books), by the shared
	 * statements `chain.append` and `chain.move_head`.
	 *
	 * @param array $head  [chain_seq, chain_head] as read under the lock.
	 * @param array $entry The entry.
	 * @param wpdb  $db    The transaction's connection.
	 * @throws RuntimeException When the entry cannot be written; the caller rolls back.
	 */
	public static function append_with_wpdb( array $head, array $entry, wpdb $db ) {
		list( $row, $move ) = self::placed( $head, $entry );
		if ( 1 !== $db->query( self::statement( 'chain.append', self::APPEND_TYPES, $row ) ) ) { // phpcs:ignore WordPress.DB.PreparedSQL -- bound by statement().
			throw self::moved( $entry['scope_key'], $move[0] );
		}
		if ( 1 !== $db->query( self::statement( 'chain.move_head', self::MOVE_TYPES, $move ) ) ) { // phpcs:ignore WordPress.DB.PreparedSQL -- bound by statement().
			throw self::moved( $entry['scope_key'], $move[0] );
		}
	}

	/**
	 * A shared statement (Counterfoil_Php_Backend::statements(), the core's
	 * text) for WordPress's connection, each `?` bound by $wpdb->prepare()
	 * as its type says (i or s); a null is NULL, as hashed (prepare() would
	 * write it as '').
	 *
	 * @param string $name   Statement name.
	 * @param string $types  i or s per value.
	 * @param array  $values Values.
	 * @return string
	 */
	private static function statement( $name, $types, array $values ) {
		global $wpdb;
		$parts = explode( '?', Counterfoil_Php_Backend::statements( $wpdb->prefix )[ $name ] );
		$sql   = $parts[0];
		foreach ( array_values( $values ) as $i => $value ) {
			$sql .= ( null === $value ? 'NULL' : ( 'i' === $types[ $i ] ? $wpdb->prepare( '%d', $value ) : $wpdb->prepare( '%s', $value ) ) ) . $parts[ $i + 1 ];
		}
		return $sql;
	}

	/** Registers the Site Health check. */
	public static function init() {
		add_filter( 'site_status_tests', array( __CLASS__, 'site_status_tests' ) );
	}

	/** Site Health: the chains, checked a batch at a time. */
	public static function site_status_tests( $tests ) {
		$tests['direct']['counterfoil_chain'] = array(
			'label' => __( 'Counterfoil: tamper-evident books', 'counterfoil' ),
			'test'  => array( __CLASS__, 'test_chain' ),
		);
		return $tests;
	}

	/**
	 * Walks the chains on from where the last check stopped, at most
	 * CHECK_BATCH entries (so a load's time stays bounded at any size): the
	 * point kept for a series must still hold its hash (nothing before it
	 * was rewritten or cut off), then each entry after it must link and give
	 * its hash (Counterfoil_Rules::chain_hash, the core's rule). What held is
	 * kept in CHECKED_OPTION; a break is reported, and nothing past it is
	 * kept, so it is reported again until the books are repaired. Once every
	 * chain was walked to its end, a new pass from the first entries starts
	 * after a day (an edit behind a kept point is found by the next pass;
	 * `counterfoil verify` walks everything at once).
	 *
	 * @param int $batch Entries to walk at most.
	 * @return array checked (entries walked now), behind (entries not yet
	 *               walked), broken (a finding, or null).
	 */
	public static function check_some( $batch = self::CHECK_BATCH ) {
		global $wpdb;
		$t       = Counterfoil_Schema::tables();
		$state   = get_option( self::CHECKED_OPTION, array() );
		$state   = is_array( $state ) && isset( $state['series'], $state['since'] ) ? $state : array(
			'series' => array(),
			'since'  => time(),
		);
		$kept    = $state['series'];
		$heads   = $wpdb->get_results( "SELECT scope_key, chain_seq FROM {$t['sequences']} WHERE chain_seq > 0 ORDER BY scope_key", ARRAY_N ); // phpcs:ignore WordPress.DB.PreparedSQL -- table name from the prefix.
		$checked = 0;
		$behind  = 0;
		$broken  = null;
		foreach ( $heads as $head ) {
			list( $scope, $to ) = array( (string) $head[0], (int) $head[1] );
			list( $at, $hash )  = isset( $kept[ $scope ] ) ? $kept[ $scope ] : array( 0, Counterfoil_Rules::CHAIN_GENESIS );
			if ( $at > 0 && $hash !== $wpdb->get_var( $wpdb->prepare( "SELECT hash FROM {$t['chain']} WHERE scope_key = %s AND seq = %d", $scope, $at ) ) ) { // phpcs:ignore WordPress.DB.PreparedSQL -- table name from the prefix.
				/* translators: 1: series, 2: position */
				$broken = sprintf( __( 'series %1$s: the entry at position %2$d, checked before, was rewritten or removed', 'counterfoil' ), $scope, $at );
				break;
			}
			$left = max( 0, $batch - $checked );
			if ( 0 === $left ) {
				$behind += $to - $at;
				continue;
			}
			$rows = $wpdb->get_results( $wpdb->prepare( "SELECT seq, number, event, gateway, transaction_id, amount, currency, post_id, reason, DATE_FORMAT(event_at, '%%Y-%%m-%%d %%H:%%i:%%s'), prev_hash, hash FROM {$t['chain']} WHERE scope_key = %s AND seq > %d ORDER BY seq LIMIT %d", $scope, $at, $left ), ARRAY_N ); // phpcs:ignore WordPress.DB.PreparedSQL -- table name from the prefix.
			foreach ( $rows as $row ) {
				$entry = array_combine( Counterfoil_Rules::CHAIN_FIELDS, array( $scope, $row[1], $row[2], $row[3], $row[4], $row[5], $row[6], $row[7], $row[8], $row[9] ) );
				$why   = null;
				if ( (int) $row[0] !== $at + 1 ) {
					$why = __( 'an entry is missing before it', 'counterfoil' );
				} elseif ( $row[10] !== $hash ) {
					$why = __( 'it does not link to the entry before it', 'counterfoil' );
				} elseif ( Counterfoil_Rules::chain_hash( $hash, $entry ) !== $row[11] ) {
					$why = __( 'it no longer gives its hash: it was edited', 'counterfoil' );
				}
				if ( null !== $why ) {
					/* translators: 1: series, 2: number, 3: position, 4: why */
					$broken = sprintf( __( 'series %1$s: the chain breaks at number %2$s (position %3$d): %4$s', 'counterfoil' ), $scope, $row[1], (int) $row[0], $why );
					break 2;
				}
				$at   = (int) $row[0];
				$hash = $row[11];
				++$checked;
			}
			$kept[ $scope ] = array( $at, $hash );
			$behind        += max( 0, $to - $at );
		}
		if ( null === $broken && 0 === $behind && time() - (int) $state['since'] > DAY_IN_SECONDS ) {
			$kept           = array();
			$state['since'] = time();
		}
		$state['series'] = $kept;
		update_option( self::CHECKED_OPTION, $state, false );
		return array(
			'checked' => $checked,
			'behind'  => $behind,
			'broken'  => $broken,
		);
	}

	/** The Site Health result. */
	public static function test_chain() {
		$r  = self::check_some();
		$ok = null === $r['broken'];
		if ( ! $ok ) {
			/* translators: %s: the first break found */
			$text = sprintf( __( 'The books were edited behind Counterfoil\'s back: %s. Run `counterfoil verify` to list every finding.', 'counterfoil' ), $r['broken'] );
		} elseif ( $r['behind'] > 0 ) {
			/* translators: 1: entries checked now, 2: entries left */
			$text = sprintf( __( '%1$d entries of the books\' chains checked on this visit; %2$d are left for the next visits.', 'counterfoil' ), $r['checked'], $r['behind'] );
		} else {
			$text = __( 'Every entry of the books\' chains holds: no issued or voided number was changed behind Counterfoil\'s back.', 'counterfoil' );
		}
		return array(
			'label'       => $ok ? __( 'The books\' chains hold', 'counterfoil' ) : __( 'The books were edited behind Counterfoil\'s back', 'counterfoil' ),
			'status'      => $ok ? 'good' : 'critical',
			'badge'       => array(
				'label' => __( 'Invoice numbers', 'counterfoil' ),
				'color' => $ok ? 'blue' : 'red',
			),
			'description' => '<p>' . esc_html( $text ) . '</p>',
			'actions'     => '',
			'test'        => 'counterfoil_chain',
		);
	}

	/** The error of a chain that changed under its lock (the core's flows::chain::moved). */
	public static function moved( $scope, $seq ) {
		return new DatabaseUnavailableException( sprintf( 'unexpected answer from the database: the chain of series `%s` changed under its lock at position %d: run `counterfoil verify`', $scope, $seq ) );
	}
}
