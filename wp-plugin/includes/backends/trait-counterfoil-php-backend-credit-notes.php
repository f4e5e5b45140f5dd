<?php
/**
 * The pure-PHP backend's credit notes: the twin of the core's
 * flows::credit_notes, used by Counterfoil_Php_Backend (it runs on that
 * backend's own mysqli connection, its calls' deadline and retries).
 *
 * Invariants (as the core's):
 * - one transaction on the backend's own connection, never $wpdb's (which
 *   reconnects silently, dropping what a transaction or a lock held);
 * - its first statement locks the invoice's registry row (SELECT … FOR
 *   UPDATE); the other reads come after it, as plain reads, so they see
 *   every credit note committed by the lock's earlier holders;
 * - a credit note's row is inserted with the invoice it names in one
 *   statement; a row an older delivery left without it is named only if
 *   the cap allows its amount;
 * - the amount is decided by Counterfoil_Rules::credit_note_amount (the
 *   core's credit_note::credit_note_amount); a refused refund writes nothing;
 * - the statements are the core's text (self::CREDIT_NOTE_SQL,
 *   tests/vectors/credit_note_statements.json).
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

// phpcs:disable WordPress.Security.EscapeOutput.ExceptionNotEscaped -- an exception's message is text, not HTML: it goes to the log, a REST answer (JSON) or a WP_Error, and every page that prints one escapes it there.

use Counterfoil\DatabaseUnavailableException;
use Counterfoil\InvalidArgumentException;

/**
 * Credit notes on the pure-PHP backend.
 */
trait Counterfoil_Php_Backend_Credit_Notes {
	/**
	 * The credit-note statements, by the core's name
	 * (counterfoil_core::mysql::sql_credit::CreditNoteSql::named), with
	 * `{numbers}` and `{payments}` for the prefixed tables.
	 *
	 * @param string $prefix Table prefix (letters, digits, _).
	 * @return string[]
	 */
	public static function credit_note_statements( $prefix ) {
		$names = array(
			'{numbers}'  => "`{$prefix}counterfoil_numbers`",
			'{payments}' => "`{$prefix}counterfoil_payments`",
		);
		$sql   = array(
			'credit_note.lock_invoice'       => 'SELECT status FROM {numbers} WHERE scope_key = ? AND number = ? FOR UPDATE',
			'credit_note.refund_row'         => 'SELECT scope_key, amount, refers_scope, refers_number FROM {payments} WHERE gateway = ? AND transaction_id = ?',
			'credit_note.credited'           => 'SELECT amount FROM {payments} WHERE refers_scope = ? AND refers_number = ?',
			'credit_note.insert_credit_note' => 'INSERT INTO {payments} (gateway, transaction_id, scope_key, amount, currency, period, created_at, refers_scope, refers_number, reason) VALUES (?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(), ?, ?, ?)',
			'credit_note.link_credit_note'   => 'UPDATE {payments} SET refers_scope = ?, refers_number = ?, reason = ? WHERE gateway = ? AND transaction_id = ? AND refers_scope IS NULL',
		);
		return array_map(
			function ( $text ) use ( $names ) {
				return strtr( $text, $names );
			},
			$sql
		);
	}

	/**
	 * Records the credit note of refund ($gateway, $refund_id) in the
	 * credit-note series $scope, without a number (record_payment() of the
	 * same refund numbers it), naming invoice $invoice_number of
	 * $invoice_scope (of $invoice_amount $currency), in one transaction
	 * under the invoice's registry row lock, the cap checked there.
	 *
	 * @param string      $scope          The credit-note series.
	 * @param string      $gateway        Gateway.
	 * @param string      $refund_id      The refund's id.
	 * @param string|null $amount         The refund (decimal), null: everything left.
	 * @param string      $currency       The invoice's currency.
	 * @param int         $year           Site's local year.
	 * @param int         $month          Site's local month.
	 * @param string      $invoice_scope  The invoice's series.
	 * @param int         $invoice_number Its number.
	 * @param string      $invoice_amount Its amount (decimal).
	 * @param string      $reason         Why (at most 255 bytes).
	 * @return array status: recorded (scope_key, amount, created), refused
	 *               (invoice, credited, requested: smallest units),
	 *               mismatch or not_issued.
	 */
	public function hold_credit_note( $scope, $gateway, $refund_id, $amount, $currency, $year, $month, $invoice_scope, $invoice_number, $invoice_amount, $reason ) {
		Counterfoil_Rules::scope_key( $scope );
		if ( 'credit_note' !== Counterfoil_Rules::kind_of( $scope ) ) {
			throw new InvalidArgumentException( sprintf( 'invalid argument `scope`: `%s` is not a credit-note series', $scope ) );
		}
		Counterfoil_Rules::payment_ref( $gateway, $refund_id );
		Counterfoil_Rules::scope_key( $invoice_scope );
		if ( ! is_string( $currency ) || ! preg_match( '/^[A-Za-z]{3}$/D', $currency ) ) {
			throw new InvalidArgumentException( 'invalid argument `currency`: a currency is a three-letter ISO code such as EUR' );
		}
		$currency = strtoupper( $currency );
		if ( ! is_string( $reason ) || strlen( $reason ) > 255 ) {
			throw new InvalidArgumentException( 'invalid argument `reason`: at most 255 bytes' );
		}
		if ( 'credit_note' === Counterfoil_Rules::kind_of( $invoice_scope ) ) {
			throw new InvalidArgumentException( sprintf( 'invalid argument `scope`: `%s` is a credit-note series; a credit note corrects an invoice', $invoice_scope ) );
		}
		if ( ! is_int( $invoice_number ) || $invoice_number < 0 ) {
			throw new InvalidArgumentException( 'invalid argument `invoice_number`: a number is 0 or more' );
		}
		$requested = null === $amount ? null : Counterfoil_Rules::minor_units( $amount, $currency );
		$invoice   = Counterfoil_Rules::minor_units( $invoice_amount, $currency );
		$period    = self::period( $year, $month );
		$sql       = self::credit_note_statements( $this->prefix );
		return $this->attempt(
			function () use ( $sql, $scope, $gateway, $refund_id, $requested, $currency, $period, $invoice_scope, $invoice_number, $invoice, $reason ) {
				return $this->transaction(
					function () use ( $sql, $scope, $gateway, $refund_id, $requested, $currency, $period, $invoice_scope, $invoice_number, $invoice, $reason ) {
						$status = $this->select( $sql['credit_note.lock_invoice'], 'si', array( $invoice_scope, $invoice_number ) );
						if ( ! $status || 'issued' !== $status[0][0] ) {
							return array( 'status' => 'not_issued' );
						}
						$row      = $this->select( $sql['credit_note.refund_row'], 'ss', array( $gateway, $refund_id ) );
						$credited = 0;
						foreach ( $this->select( $sql['credit_note.credited'], 'si', array( $invoice_scope, $invoice_number ) ) as $note ) {
							if ( null !== $note[0] ) {
								try {
									$credited += Counterfoil_Rules::minor_units( $note[0], $currency );
								} catch ( InvalidArgumentException $e ) {
									throw new DatabaseUnavailableException( "unexpected answer from the database: a stored credit note's amount `{$note[0]}`: " . $e->getMessage() );
								}
							}
						}
						$refused = array(
							'status'    => 'refused',
							'invoice'   => $invoice,
							'credited'  => $credited,
							'requested' => $requested,
						);
						$mismatch = array( 'status' => 'mismatch' );
						if ( ! $row ) {
							try {
								$minor = Counterfoil_Rules::credit_note_amount( $invoice, $credited, $requested );
							} catch ( InvalidArgumentException $e ) {
								return $refused;
							}
							$credit = Counterfoil_Rules::amount_from_minor_units( $minor, $currency )[0];
							$r      = $this->execute(
								$sql['credit_note.insert_credit_note'],
								'sssssssis',
								array( $gateway, $refund_id, $scope, $credit, $currency, $period, $invoice_scope, $invoice_number, $reason )
							);
							if ( self::ER_DUP_ENTRY === $r['errno'] ) {
								// Another delivery of this refund, naming another
								// invoice, recorded it meanwhile.
								return $mismatch;
							}
							$this->check( $r );
							return array(
								'status'    => 'recorded',
								'scope_key' => $scope,
								'amount'    => $credit,
								'created'   => true,
							);
						}
						list( $row_scope, $row_amount, $refers_scope, $refers_number ) = $row[0];
						if ( null === $row_amount ) {
							return $mismatch;
						}
						try {
							$row_minor = Counterfoil_Rules::minor_units( $row_amount, $currency );
						} catch ( InvalidArgumentException $e ) {
							return $mismatch;
						}
						if ( null !== $requested && $requested !== $row_minor ) {
							return $mismatch;
						}
						$recorded = array(
							'status'    => 'recorded',
							'scope_key' => $row_scope,
							'amount'    => $row_amount,
							'created'   => false,
						);
						if ( null !== $refers_scope && null !== $refers_number ) {
							return $refers_scope === $invoice_scope && (int) $refers_number === $invoice_number ? $recorded : $mismatch;
						}
						if ( null !== $refers_scope || 'credit_note' !== Counterfoil_Rules::kind_of( $row_scope ) ) {
							return $mismatch;
						}
						// Left without its invoice by a delivery from before
						// issue 46: named now, only if what is left allows it.
						try {
							Counterfoil_Rules::credit_note_amount( $invoice, $credited, $row_minor );
						} catch ( InvalidArgumentException $e ) {
							return $refused;
						}
						$linked = $this->check( $this->execute( $sql['credit_note.link_credit_note'], 'sisss', array( $invoice_scope, $invoice_number, $reason, $gateway, $refund_id ) ) );
						if ( 1 !== $linked['affected'] ) {
							return $mismatch;
						}
						return array( 'created' => true ) + $recorded;
					}
				);
			}
		);
	}
}
