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
	 * `chain.move_head` (seq, hash, scope, the seq it was at).
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
		return array( $row, array( $seq, $hash, $entry['scope_key'], $at ) );
	}

	/** The types of `chain.append`'s values, as the twin binds them. */
	const APPEND_TYPES = 'sisssssssssss';

	/** The types of `chain.move_head`'s values. */
	const MOVE_TYPES = 'issi';

	/**
	 * Appends `$entry` with WordPress's connection, inside the transaction
	 * the caller opened after reading the head with `chain.head` (the
	 * plugin's own writes: a void from the books).
	 *
	 * @param array $head  [chain_seq, chain_head] as read under the lock.
	 * @param array $entry The entry.
	 * @throws RuntimeException When the entry cannot be written; the caller rolls back.
	 */
	public static function append_with_wpdb( array $head, array $entry ) {
		global $wpdb;
		$t                  = Counterfoil_Schema::tables();
		list( $row, $move ) = self::placed( $head, $entry );
		// prepare() would write a null as '': a missing value is NULL, as hashed.
		$values = array();
		foreach ( $row as $i => $value ) {
			$values[] = null === $value ? 'NULL' : $wpdb->prepare( 1 === $i ? '%d' : '%s', $value );
		}
		$ok = $wpdb->query( "INSERT INTO {$t['chain']} (scope_key, seq, number, event, gateway, transaction_id, amount, currency, post_id, reason, event_at, prev_hash, hash) VALUES (" . implode( ', ', $values ) . ')' ); // phpcs:ignore WordPress.DB.PreparedSQL -- each value prepared above; table name from the prefix.
		if ( 1 !== $ok ) {
			throw self::moved( $entry['scope_key'], $move[0] );
		}
		$ok = $wpdb->query( $wpdb->prepare( "UPDATE {$t['sequences']} SET chain_seq = %d, chain_head = %s WHERE scope_key = %s AND chain_seq = %d", $move ) ); // phpcs:ignore WordPress.DB.PreparedSQL -- table name from the prefix.
		if ( 1 !== $ok ) {
			throw self::moved( $entry['scope_key'], $move[0] );
		}
	}

	/** The error of a chain that changed under its lock (the core's flows::chain::moved). */
	public static function moved( $scope, $seq ) {
		return new DatabaseUnavailableException( sprintf( 'unexpected answer from the database: the chain of series `%s` changed under its lock at position %d: run `counterfoil verify`', $scope, $seq ) );
	}
}
