<?php
/**
 * The payment flow: one invoice per payment, every number accounted for.
 *
 * Order (docs/design.md §2 rules 4, 5, 8):
 * 1. the backend records the payment row, allocates and records the number
 *    as reserved, in one transaction, and commits (a repeated delivery finds
 *    the first delivery's row and number);
 * 2. here, the number is claimed on the backend's own connection
 *    (reserved → creating, committed), the invoice post is found by its slug
 *    or created, and the number marked issued with its post. A concurrent
 *    delivery finds the claim busy and waits for the invoice; a failure
 *    gives the claim back (reserved), so a retry completes it with the same
 *    number and the same post. No transaction or lock lives on $wpdb.
 *
 * A number becomes void only through void_number(), with a reason.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * Invoices and the registry.
 */
final class Counterfoil_Invoices {
	const POST_TYPE = Counterfoil_Invoice_Type::POST_TYPE;
	/** What a test-mode payment's series key starts with: `test:{issuer}:{year}` (Stripe's test mode). */
	const TEST_SERIES = 'test:';
	/** Seconds a sender is asked to wait before delivering a held payment again. */
	const HOLD_RETRY_AFTER = 300;
	/** A claim on a number older than this was left by a dead process: taken over. */
	const CLAIM_STALE_SECONDS = 120;
	/** How long a repeated delivery waits for a concurrent one's invoice. */
	const CLAIM_WAIT_SECONDS = 10;

	/**
	 * Validates a payment array.
	 *
	 * @param mixed      $payment Payment: gateway, transaction_id, user_id, and
	 *                            optionally year, amount, currency.
	 * @param array|null $now     The site's local [year, month] when the
	 *                            payment is processed (default: now).
	 * @return array|WP_Error The normalised payment, or a 400 error.
	 */
	public static function validate_payment( $payment, $now = null ) {
		$bad = function ( $message ) {
			return new WP_Error( 'counterfoil_invalid_payment', $message, array( 'status' => 400 ) );
		};
		if ( ! is_array( $payment ) ) {
			return $bad( __( 'The payment must be an object.', 'counterfoil' ) );
		}
		foreach ( array( 'gateway', 'transaction_id' ) as $key ) {
			if ( ! isset( $payment[ $key ] ) || ! is_string( $payment[ $key ] ) ) {
				/* translators: %s: field name */
				return $bad( sprintf( __( 'The field %s is required and must be a string.', 'counterfoil' ), $key ) );
			}
		}
		// The gateway and transaction id rules (the core's PaymentRef, held to
		// this twin by the shared vectors), checked here so that any refusal
		// from the backend afterwards is the site's problem (503), never 400.
		try {
			Counterfoil_Rules::payment_ref( $payment['gateway'], $payment['transaction_id'] );
		} catch ( InvalidArgumentException $e ) {
			return $bad( $e->getMessage() );
		}
		if ( ! isset( $payment['user_id'] ) || ! is_int( $payment['user_id'] ) || $payment['user_id'] < 0 ) {
			return $bad( __( 'The field user_id is required and must be a whole number, 0 or more.', 'counterfoil' ) );
		}
		$now  = null === $now ? counterfoil_local_period() : $now;
		// The series' period: the numbering period of the local day (the
		// calendar year, the year a fiscal year starts in, or the month),
		// unless the payment names its year (and month, under the monthly
		// rule: else the local month).
		$current = counterfoil_current_period();
		$year    = isset( $payment['year'] ) ? $payment['year'] : $current[0];
		if ( ! is_int( $year ) || $year < 1 || $year > 9999 ) {
			return $bad( __( 'The field year must be a whole number from 1 to 9999.', 'counterfoil' ) );
		}
		$month = null;
		if ( null !== $current[1] ) {
			$month = isset( $payment['month'] ) ? $payment['month'] : ( isset( $payment['year'] ) ? $now[1] : $current[1] );
			if ( ! is_int( $month ) || $month < 1 || $month > 12 ) {
				return $bad( __( 'The field month must be a whole number from 1 to 12.', 'counterfoil' ) );
			}
		}
		$amount = isset( $payment['amount'] ) ? $payment['amount'] : null;
		try {
			Counterfoil_Rules::amount( $amount );
		} catch ( InvalidArgumentException $e ) {
			return $bad( __( 'The field amount must be a decimal string such as "19.99".', 'counterfoil' ) );
		}
		$currency = isset( $payment['currency'] ) ? $payment['currency'] : null;
		try {
			Counterfoil_Rules::currency( $currency );
		} catch ( InvalidArgumentException $e ) {
			return $bad( __( 'The field currency must be a three-letter ISO code such as "EUR".', 'counterfoil' ) );
		}
		return array(
			'gateway'        => $payment['gateway'],
			'transaction_id' => $payment['transaction_id'],
			'user_id'        => $payment['user_id'],
			'year'           => $year,
			'period'         => Counterfoil_Rules::period_label( array( $year, $month ) ),
			'amount'         => $amount,
			'currency'       => $currency,
		);
	}

	/**
	 * Creates (or finds) the invoice of a payment. Its series is the user's
	 * for the payment's year, by default the site's local year now
	 * (wp_timezone()). A missing series is handled by the site's plan
	 * (counterfoil_missing_series_plan()): created, or the payment held.
	 *
	 * @param array    $payment See validate_payment().
	 * @param string   $series  What the series' key starts with: '' (the
	 *                          issuer's `{user}:{year}`), or `test:` (test
	 *                          payments: a series of their own).
	 * @param int|null $at      When the payment was made (Unix time), when
	 *                          it is known and earlier than now (an order's
	 *                          paid date): its local day decides the period
	 *                          and {month}; default now.
	 * @return array|WP_Error post, number (as issued: the post's title),
	 *                        sequence, scope_key, created; or an error with
	 *                        an HTTP status (503 + Retry-After while held).
	 */
	public static function for_payment( $payment, $series = '', $at = null ) {
		if ( null !== $at && is_array( $payment ) && ! isset( $payment['year'] ) ) {
			$day  = counterfoil_local_day_at( (int) $at );
			$when = Counterfoil_Rules::period_of( counterfoil_period_rule(), $day[0], $day[1], $day[2] );
			$payment['year'] = $when[0];
			if ( null !== $when[1] ) {
				$payment['month'] = $when[1];
			}
			$now = array( $day[0], $day[1] );
		} else {
			$now = counterfoil_local_period();
		}
		$payment = self::validate_payment( $payment, $now );
		if ( is_wp_error( $payment ) ) {
			return $payment;
		}
		return self::issue( $series . $payment['user_id'] . ':' . $payment['period'], $payment, $now, true );
	}

	/**
	 * Records the payment (phase 1) and creates its invoice (phase 2).
	 *
	 * @param string $scope       The series chosen for the payment.
	 * @param array  $payment     Validated payment.
	 * @param array  $now         Local [year, month].
	 * @param bool   $may_create  Whether the site's plan may create a missing series.
	 * @return array|WP_Error
	 */
	public static function issue( $scope, array $payment, array $now, $may_create ) {
		$started = microtime( true );
		try {
			$backend = counterfoil_backend();
			$record  = self::record( $backend, $scope, $payment, $now, $may_create );
		} catch ( Throwable $e ) {
			return self::error_from( $e, $payment );
		} finally {
			Counterfoil_Timing::add( 'allocate', microtime( true ) - $started );
		}
		if ( isset( $record['paused'] ) ) {
			// The reason names addresses and databases: for the site's own
			// people (the admin notice, the log), not for the sender.
			return new WP_Error(
				'counterfoil_numbering_paused',
				__( 'The payment is recorded and waits without a number: numbering is paused on this copy of the site (another address, database or environment than where its invoices are numbered). An administrator confirms the move on the site, or leaves it paused on a copy.', 'counterfoil' ),
				array(
					'status'      => 503,
					'retry_after' => self::HOLD_RETRY_AFTER,
					'held'        => true,
					'detail'      => 'numbering is paused: ' . $record['paused'],
					'cause'       => 'paused',
				)
			);
		}
		if ( isset( $record['status'] ) && 'held' === $record['status'] ) {
			return new WP_Error(
				'counterfoil_waiting_for_series',
				/* translators: %s: series */
				sprintf( __( 'The payment is recorded and waits for invoice series %s, which does not exist yet. It gets its number when the series is created (Settings → Invoice numbers); deliver it again later.', 'counterfoil' ), $scope ),
				array(
					'status'      => 503,
					'retry_after' => self::HOLD_RETRY_AFTER,
					'held'        => true,
				)
			);
		}
		// Every delivery is compared with the payment row: a repeat, and the
		// delivery that completes a held payment (recorded by an earlier one,
		// though this call gave it its number), must be the same payment, and
		// the invoice is written from the row (one indexed read).
		$first   = self::payment_row( $payment['gateway'], $payment['transaction_id'] );
		$differs = $first ? self::differs( $first, $payment ) : null;
		if ( null !== $differs ) {
			return new WP_Error(
				'counterfoil_payment_mismatch',
				/* translators: %s: the field that differs */
				sprintf( __( 'This transaction id was already recorded with another %s; a payment is never re-invoiced under a reused transaction id.', 'counterfoil' ), $differs ),
				array( 'status' => 409 )
			);
		}
		if ( $first ) {
			$payment['amount']   = null === $first->amount ? null : (string) $first->amount;
			$payment['currency'] = null === $first->currency ? null : (string) $first->currency;
		}
		$year     = Counterfoil_Rules::issuer_and_period( $record['scope_key'] );
		$period   = empty( $record['period'] ) ? null : array_map( 'intval', explode( '-', $record['period'] ) );
		$month    = null !== $period ? $period[1] : $now[1];
		$year     = null !== $year ? $year[1] : $payment['year'];
		$template = 'credit_note' === Counterfoil_Rules::kind_of( $record['scope_key'] ) ? counterfoil_credit_note_format() : counterfoil_format();
		$rendered = $backend->render( $template, (int) $record['number'], $year, $month, Counterfoil_Rules::period_rule_text( counterfoil_period_rule() ) );
		if ( 0 === strpos( $record['scope_key'], self::TEST_SERIES ) ) {
			// A test series' number never reads as a live one.
			$rendered = 'TEST-' . $rendered;
		}
		$done     = self::complete( $record, $payment, $rendered );
		if ( is_wp_error( $done ) ) {
			return $done;
		}
		$post = get_post( $done['post_id'] );
		return array(
			'post'      => $post,
			// As issued: what the invoice says, whatever the format is now.
			'number'    => $post ? $post->post_title : '',
			'sequence'  => (int) $record['number'],
			'scope_key' => $record['scope_key'],
			'created'   => $done['created'],
		);
	}

	/**
	 * Phase 1 with the site's plan for a missing series (docs/design.md §7): the
	 * series is created in its own statement (the primary key decides, so
	 * concurrent first payments never race and an existing series is never
	 * reset), then the payment is recorded as usual; under `hold`, or when no
	 * series may be created, the payment is recorded without a number.
	 *
	 * @return array The backend's record, or status 'held'.
	 */
	private static function record( Counterfoil_Backend $backend, $scope, array $payment, array $now, $may_create ) {
		// The period is the instant this delivery arrived, recorded with the
		// payment: a completion after midnight keeps it (docs/design.md §7).
		$record = function () use ( $backend, $scope, $payment, $now ) {
			return $backend->record_payment( $scope, $payment['gateway'], $payment['transaction_id'], $payment['amount'], $payment['currency'], $now[0], $now[1] );
		};
		$paused = Counterfoil_Site_Identity::paused_reason();
		if ( null !== $paused ) {
			// A copy of the site (another address or environment): no
			// number of any series is taken here. A payment numbered before
			// is answered with its number; a new one is recorded and waits.
			$first = self::payment_row( $payment['gateway'], $payment['transaction_id'] );
			if ( $first && null !== $first->number ) {
				return $record();
			}
			$held = $backend->hold_payment( $first ? (string) $first->scope_key : $scope, $payment['gateway'], $payment['transaction_id'], $payment['amount'], $payment['currency'], $now[0], $now[1] );
			if ( ! empty( $held['number'] ) ) {
				return $held; // Numbered before the pause, by a concurrent delivery.
			}
			return array(
				'status' => 'held',
				'paused' => $paused,
			);
		}
		try {
			return $record();
		} catch ( Counterfoil\SeriesNotFoundException $e ) {
			unset( $e );
		}
		// A payment held earlier waits for the series it arrived for.
		$missing = self::held_scope( $payment ) ?? $scope;
		$plan    = counterfoil_missing_series_plan();
		if ( $may_create && 'hold' !== $plan ) {
			try {
				$backend->initialize_planned( $missing, $plan, counterfoil_new_series_start() );
			} catch ( Counterfoil\SeriesClosedException $e ) {
				// The previous period's series is continued by a later one
				// already (made before this one): nothing is created, and the
				// payment is held for the site owner rather than numbered twice.
				unset( $e );
			}
			try {
				return $record();
			} catch ( Counterfoil\SeriesNotFoundException $e ) {
				unset( $e ); // Removed again at once: hold rather than lose it.
			}
		}
		return $backend->hold_payment( $missing, $payment['gateway'], $payment['transaction_id'], $payment['amount'], $payment['currency'], $now[0], $now[1] );
	}

	/**
	 * What differs between a repeated delivery and the payment as first
	 * recorded ($first, its row): 'issuer', 'amount', 'currency', or null
	 * when it is the same payment.
	 */
	private static function differs( $first, array $payment ) {
		$owner = self::issuer_of( $first->scope_key );
		if ( null !== $owner && $owner !== (string) $payment['user_id'] ) {
			return 'issuer';
		}
		if ( (string) $first->amount !== (string) $payment['amount'] ) {
			return 'amount';
		}
		if ( (string) $first->currency !== (string) $payment['currency'] ) {
			return 'currency';
		}
		return null;
	}

	/**
	 * The issuer of series $scope (`{issuer}:{year}` or `{issuer}:{yyyy-mm}`,
	 * a credit-note series `{issuer}:cn:{period}`, a test series
	 * `test:{issuer}:…`), or null for a
	 * series of another shape.
	 *
	 * @param string $scope Series.
	 * @return string|null
	 */
	public static function issuer_of( $scope ) {
		$owner = Counterfoil_Rules::issuer_and_period( (string) $scope );
		if ( null === $owner ) {
			return null;
		}
		$issuer = $owner[0];
		if ( 'credit_note' === Counterfoil_Rules::kind_of( (string) $scope ) ) {
			$issuer = substr( $issuer, 0, -3 );
		}
		if ( 0 === strpos( $issuer, self::TEST_SERIES ) ) {
			$issuer = substr( $issuer, strlen( self::TEST_SERIES ) );
		}
		return $issuer;
	}

	/**
	 * Records a payment that names no issuer yet, without a number, in the
	 * placeholder series $scope (one that no invoice series is ever called):
	 * it is listed with the waiting payments (admin screen, Site Health)
	 * until assign_waiting() gives it an issuer. A repeat changes nothing.
	 *
	 * @param string $scope   The placeholder series.
	 * @param array  $payment gateway, transaction_id, amount, currency.
	 * @return array|WP_Error The backend's answer (status 'held').
	 */
	public static function hold_without_issuer( $scope, array $payment ) {
		$now = counterfoil_local_period();
		try {
			return counterfoil_backend()->hold_payment( $scope, $payment['gateway'], $payment['transaction_id'], $payment['amount'], $payment['currency'], $now[0], $now[1] );
		} catch ( Throwable $e ) {
			return self::error_from( $e, $payment );
		}
	}

	/**
	 * Gives the payments waiting in placeholder series $placeholder (`…:{year}`)
	 * their issuer: each moves to `{issuer}:{year}` of its own period's year
	 * and is numbered and invoiced as a delivery would be (the site's plan may
	 * create the series). Only rows still without a number move.
	 *
	 * @param string $placeholder_prefix The placeholder series before `:{year}`.
	 * @param int    $issuer             The issuer.
	 * @return array completed (int), failed (list of messages).
	 */
	public static function assign_waiting( $placeholder_prefix, $issuer ) {
		global $wpdb;
		$t   = Counterfoil_Schema::tables();
		$out = array(
			'completed' => 0,
			'failed'    => array(),
		);
		$rows = $wpdb->get_results( // phpcs:ignore WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- our own tables, which no WordPress API reads or writes.
			$wpdb->prepare(
				// phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- table name from Counterfoil_Schema::tables() (the prefix and a fixed name).
				"SELECT id, gateway, transaction_id, scope_key, amount, currency, period FROM {$t['payments']}
				 WHERE number IS NULL AND scope_key LIKE %s ORDER BY id LIMIT 500",
				$wpdb->esc_like( $placeholder_prefix . ':' ) . '%'
			)
		);
		foreach ( $rows as $row ) {
			$year  = (int) substr( (string) $row->scope_key, strlen( $placeholder_prefix ) + 1 );
			$scope = $issuer . ':' . $year;
			try {
				Counterfoil_Wpdb_Transaction::on_books_node(
					function ( $db ) use ( $t, $scope, $row ) {
						$db->query( $db->prepare( "UPDATE {$t['payments']} SET scope_key = %s WHERE id = %d AND number IS NULL AND scope_key = %s", $scope, $row->id, $row->scope_key ) );
					}
				);
			} catch ( RuntimeException $e ) {
				$out['failed'][] = $row->gateway . '/' . $row->transaction_id . ': ' . $e->getMessage();
				continue; // Still waiting in its placeholder: moved on the next run.
			}
			$period  = array_map( 'intval', explode( '-', (string) $row->period ) );
			$payment = array(
				'gateway'        => $row->gateway,
				'transaction_id' => $row->transaction_id,
				'user_id'        => (int) $issuer,
				'year'           => $year,
				'amount'         => $row->amount,
				'currency'       => $row->currency,
			);
			$now    = 2 === count( $period ) && $period[0] > 0 ? $period : counterfoil_local_period();
			$result = self::issue( $scope, $payment, $now, true );
			if ( is_wp_error( $result ) ) {
				$out['failed'][] = $row->gateway . '/' . $row->transaction_id . ': ' . $result->get_error_message();
			} else {
				++$out['completed'];
			}
		}
		return $out;
	}

	/** The series a held payment waits for, or null. */
	private static function held_scope( array $payment ) {
		$row = self::payment_row( $payment['gateway'], $payment['transaction_id'] );
		return $row && null === $row->number ? (string) $row->scope_key : null;
	}

	/**
	 * A payment as recorded (scope_key, number, post_id, amount, currency),
	 * or null when (gateway, transaction id) was never recorded.
	 *
	 * @param string $gateway        Gateway.
	 * @param string $transaction_id Transaction id.
	 * @return object|null
	 */
	public static function payment_row( $gateway, $transaction_id ) {
		global $wpdb;
		$t = Counterfoil_Schema::tables();
		return $wpdb->get_row( $wpdb->prepare( "SELECT scope_key, number, post_id, amount, currency FROM {$t['payments']} WHERE gateway = %s AND transaction_id = %s", $gateway, $transaction_id ) ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared, WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- table name from Counterfoil_Schema::tables() (the prefix and a fixed name). Our own tables, which no WordPress API reads or writes.
	}

	/**
	 * The payments waiting for a series, oldest first.
	 *
	 * @param int $limit At most this many.
	 * @return array Rows: id, gateway, transaction_id, scope_key, amount, currency, period, created_at, series_exists.
	 */
	public static function waiting( $limit = 500 ) {
		global $wpdb;
		$t = Counterfoil_Schema::tables();
		// phpcs:disable WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- table names from Counterfoil_Schema::tables() (the prefix and fixed names).
		return $wpdb->get_results( // phpcs:ignore WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- our own tables, which no WordPress API reads or writes.
			$wpdb->prepare(
				"SELECT p.id, p.gateway, p.transaction_id, p.scope_key, p.amount, p.currency, p.period, p.created_at, s.scope_key IS NOT NULL AS series_exists
				 FROM {$t['payments']} p LEFT JOIN {$t['sequences']} s ON s.scope_key = p.scope_key
				 WHERE p.number IS NULL ORDER BY p.id LIMIT %d",
				$limit
			)
		);
		// phpcs:enable WordPress.DB.PreparedSQL.InterpolatedNotPrepared
	}

	/** How many payments wait for a series. */
	public static function waiting_count() {
		global $wpdb;
		$t = Counterfoil_Schema::tables();
		return (int) $wpdb->get_var( "SELECT COUNT(*) FROM {$t['payments']} WHERE number IS NULL" ); // phpcs:ignore WordPress.DB.PreparedSQL, WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- no input. Our own tables, which no WordPress API reads or writes.
	}

	/**
	 * Completes the waiting payments whose series exists now, in order of
	 * arrival: each gets its number and its invoice, as a repeated delivery
	 * would. Creates no series.
	 *
	 * @return array completed (int), still_waiting (int), failed (list of messages).
	 */
	public static function complete_waiting() {
		$out = array(
			'completed'     => 0,
			'still_waiting' => 0,
			'failed'        => array(),
		);
		foreach ( self::waiting() as $row ) {
			if ( ! (int) $row->series_exists ) {
				++$out['still_waiting'];
				continue;
			}
			$owner   = Counterfoil_Rules::issuer_and_period( $row->scope_key );
			$issuer  = self::issuer_of( $row->scope_key );
			$period  = array_map( 'intval', explode( '-', (string) $row->period ) );
			$payment = array(
				'gateway'        => $row->gateway,
				'transaction_id' => $row->transaction_id,
				'user_id'        => null !== $issuer && ctype_digit( $issuer ) ? (int) $issuer : 0,
				'year'           => null !== $owner ? $owner[1] : $period[0],
				'amount'         => $row->amount,
				'currency'       => $row->currency,
			);
			$now    = 2 === count( $period ) && $period[0] > 0 ? $period : counterfoil_local_period();
			$result = self::issue( $row->scope_key, $payment, $now, false );
			if ( is_wp_error( $result ) ) {
				$out['failed'][] = $row->gateway . '/' . $row->transaction_id . ': ' . $result->get_error_message();
			} else {
				++$out['completed'];
			}
		}
		return $out;
	}

	/**
	 * Phase 2: creates the invoice post of a reserved number, once.
	 *
	 * The number is claimed on the backend's own connection (`reserved` →
	 * `creating` with a random claim id, committed), so no lock lives on
	 * $wpdb, which silently reconnects after a lost connection. The post has
	 * a slug derived from (series, number): before inserting, the claim
	 * holder looks it up, so a retry after a crash between the insert and
	 * the "issued" mark reuses the post instead of creating a second one.
	 * A concurrent delivery finds the claim busy and waits for the invoice.
	 * A claim older than CLAIM_STALE_SECONDS (its holder died) is taken over.
	 *
	 * @return array|WP_Error post_id, created.
	 */
	private static function complete( array $record, array $payment, $rendered ) {
		$backend = counterfoil_backend();
		$scope   = $record['scope_key'];
		$number  = (int) $record['number'];
		$claim   = wp_generate_password( 32, false );
		$waited  = microtime( true );
		try {
			for ( ;; ) {
				$state = $backend->claim_number( $scope, $number, $claim, self::CLAIM_STALE_SECONDS );
				if ( 'issued' === $state['status'] ) {
					if ( ! get_post( (int) $state['post_id'] ) ) {
						return new WP_Error(
							'counterfoil_invoice_missing',
							/* translators: 1: number, 2: post id */
							sprintf( __( 'Number %1$s was issued to invoice post %2$d, which no longer exists; restore it from a backup. No other number is issued for this payment.', 'counterfoil' ), $rendered, (int) $state['post_id'] ),
							array( 'status' => 409 )
						);
					}
					return array(
						'post_id' => (int) $state['post_id'],
						'created' => false,
					);
				}
				if ( 'void' === $state['status'] ) {
					return new WP_Error( 'counterfoil_void', __( 'The number of this payment was voided; no invoice is created.', 'counterfoil' ), array( 'status' => 409 ) );
				}
				if ( 'claimed' === $state['status'] ) {
					break;
				}
				// Busy: another delivery is creating this invoice right now.
				/**
				 * Fires each time a delivery finds another one creating the
				 * invoice of its payment (the claim is busy) and waits for it
				 * (every 50 ms, up to CLAIM_WAIT_SECONDS): for monitoring, and
				 * for tests that prove two deliveries overlapped.
				 *
				 * @param string $scope  The series.
				 * @param int    $number The number being issued.
				 */
				do_action( 'counterfoil_claim_busy', $scope, $number );
				if ( microtime( true ) - $waited > self::CLAIM_WAIT_SECONDS ) {
					throw new RuntimeException( 'another delivery of this payment is still creating its invoice' );
				}
				usleep( 50000 );
			}
		} catch ( Throwable $e ) {
			return self::incomplete( $rendered, $e );
		}
		try {
			/**
			 * Fires after the number is claimed and before its invoice post
			 * is created. A callback that throws makes the request fail with
			 * 503; the number stays reserved and a retry completes it.
			 */
			do_action( 'counterfoil_before_invoice_post', $record, $payment );
			$type     = Counterfoil_Invoice_Type::type_of_series( $scope );
			$slug     = self::slug( $scope, $number );
			$post_id  = self::post_by_slug( $slug, $type );
			$inserted = false;
			$meta     = array(
				'_counterfoil_scope_key'      => $scope,
				'_counterfoil_number'         => (string) $number,
				'_counterfoil_gateway'        => $payment['gateway'],
				'_counterfoil_transaction_id' => $payment['transaction_id'],
				'_counterfoil_amount'         => (string) $payment['amount'],
				'_counterfoil_currency'       => (string) $payment['currency'],
			);
			$content  = '';
			if ( Counterfoil_Invoice_Type::CREDIT_NOTE_TYPE === $type ) {
				$refers  = Counterfoil_Credit_Notes::refers( $payment['gateway'], $payment['transaction_id'] );
				$meta   += $refers['meta'];
				$content = $refers['content'];
			}
			if ( $post_id ) {
				// An earlier try's post (it died before the "issued" mark):
				// completed with whatever of its meta that try did not write.
				self::add_missing_meta( (int) $post_id, $type, $meta );
			} else {
				$user = get_userdata( $payment['user_id'] );
				/**
				 * The invoice post about to be written for a number: change its content,
				 * author or meta (not its type, status or title: the number).
				 *
				 * @param array $postarr wp_insert_post()'s array (meta_input holds the invoice's meta).
				 * @param array $record  The backend's record (scope_key, number).
				 * @param array $payment The payment.
				 */
				$post_id = self::insert_post(
					apply_filters(
						'counterfoil_invoice_post_data',
						array(
							'post_type'    => $type,
							'post_status'  => 'publish',
							'post_title'   => $rendered,
							'post_name'    => $slug,
							'post_author'  => $user ? $user->ID : 0,
							'post_content' => $content,
							'meta_input'   => $meta,
						),
						$record,
						$payment
					)
				);
				$inserted = true;
			}
			if ( ! $backend->issue_claimed( $scope, $number, $claim, (int) $post_id, $payment['gateway'], $payment['transaction_id'] ) ) {
				// Taken over (this process looked dead): the taker issued the
				// number with the post it found or made; ours, if another, goes.
				$state = $backend->claim_number( $scope, $number, $claim, self::CLAIM_STALE_SECONDS );
				if ( $inserted && 'issued' === $state['status'] && (int) $state['post_id'] !== (int) $post_id ) {
					Counterfoil_Invoice_Type::remove_orphan( (int) $post_id );
				}
				throw new RuntimeException( 'the claim on this number was taken over before the invoice was marked issued' );
			}
		} catch ( Throwable $e ) {
			try {
				$backend->release_claim( $scope, $number, $claim );
			} catch ( Throwable $ignored ) {
				unset( $ignored ); // The claim goes stale and is taken over.
			}
			return self::incomplete( $rendered, $e );
		}
		if ( 'credit_note' === Counterfoil_Rules::kind_of( $scope ) ) {
			/**
			 * A credit note was issued for a refund: once per credit note.
			 *
			 * @param int   $post_id The credit note's post (meta
			 *                       _counterfoil_refers_to: the invoice's post).
			 * @param array $record  The backend's record (scope_key, number).
			 * @param array $payment The refund (gateway, transaction_id: the
			 *                       refund's id, amount, currency).
			 */
			do_action( 'counterfoil_credit_note_created', (int) $post_id, $record, $payment );
		} else {
			/**
			 * An invoice was issued for a payment: once per invoice, after its post
			 * and its registry row are written (a repeated delivery fires nothing).
			 * Send it, attach documents, notify: the invoice never changes after.
			 *
			 * @param int   $post_id The invoice's post (its title is the number).
			 * @param array $record  The backend's record (scope_key, number).
			 * @param array $payment The payment (gateway, transaction_id, user_id, amount, currency).
			 */
			do_action( 'counterfoil_invoice_created', (int) $post_id, $record, $payment );
		}
		return array(
			'post_id' => (int) $post_id,
			'created' => true,
		);
	}

	/**
	 * wp_insert_post() of a new invoice post, its meta (meta_input) written
	 * in one statement. WordPress writes each key of meta_input with
	 * update_post_meta(): a read of the post's meta, a read of the key and
	 * an INSERT, each autocommitted (a log flush each) — eighteen statements
	 * for an invoice's six keys. Here the first of our keys WordPress comes
	 * to, at that point of wp_insert_post() (after the post's INSERT, before
	 * its save_post and wp_insert_post actions), writes it and the keys after
	 * it in one INSERT (add_meta_at_once()); WordPress then skips them. Any
	 * other post (a slug WordPress changed, a hook's own post) is left to
	 * WordPress. No transaction lives on $wpdb: the post is one statement,
	 * its meta another, all or none; meta that could not be written throw,
	 * the claim is given back, and the retry completes the post it finds.
	 * The slug is the number's own (post_by_slug() found no post with it,
	 * and the claim keeps every other delivery from writing one), so
	 * WordPress's looks for a post with it, trashed or not, are skipped
	 * (an invoice is never trashed). Its guid, which WordPress writes with an
	 * UPDATE after the INSERT, goes with the INSERT when the permalink it
	 * would write does not depend on the post's id (pretty permalinks).
	 *
	 * @param array $postarr wp_insert_post()'s array.
	 * @return int The post's id.
	 * @throws RuntimeException When the post or its meta could not be written.
	 */
	private static function insert_post( array $postarr ) {
		$meta   = isset( $postarr['meta_input'] ) && is_array( $postarr['meta_input'] ) ? $postarr['meta_input'] : array();
		$type   = isset( $postarr['post_type'] ) ? (string) $postarr['post_type'] : '';
		$slug   = isset( $postarr['post_name'] ) ? (string) $postarr['post_name'] : '';
		$target = 0;
		if ( empty( $postarr['guid'] ) && sanitize_title( $slug ) === $slug ) {
			$postarr['guid'] = self::guid_of( $postarr );
		}
		$once = function ( $check, $object_id, $meta_key ) use ( $meta, $type, $slug, &$target ) {
			if ( null !== $check || ! array_key_exists( $meta_key, $meta ) ) {
				return $check;
			}
			if ( 0 === $target ) {
				$post = get_post( $object_id );
				if ( ! $post || $type !== $post->post_type || $slug !== $post->post_name ) {
					return $check;
				}
				$target = (int) $object_id;
				// This key and the ones after it (WordPress writes meta_input
				// in its order; one before it was another filter's).
				self::add_meta_at_once( $target, $type, array_slice( $meta, (int) array_search( $meta_key, array_keys( $meta ), true ), null, true ) );
			}
			return (int) $object_id === $target ? true : $check;
		};
		$own_slug = function ( $override, $candidate, $post_id, $status, $post_type ) use ( $type, $slug ) {
			return null === $override && $slug === $candidate && $type === $post_type ? $slug : $override;
		};
		$no_trash = function ( $add, $name ) use ( $slug ) {
			return $slug === $name ? false : $add;
		};
		add_filter( 'update_post_metadata', $once, PHP_INT_MAX, 3 );
		add_filter( 'pre_wp_unique_post_slug', $own_slug, PHP_INT_MAX, 5 );
		add_filter( 'add_trashed_suffix_to_trashed_posts', $no_trash, PHP_INT_MAX, 2 );
		try {
			$post_id = wp_insert_post( $postarr, true );
		} finally {
			remove_filter( 'update_post_metadata', $once, PHP_INT_MAX );
			remove_filter( 'pre_wp_unique_post_slug', $own_slug, PHP_INT_MAX );
			remove_filter( 'add_trashed_suffix_to_trashed_posts', $no_trash, PHP_INT_MAX );
		}
		if ( is_wp_error( $post_id ) ) {
			throw new RuntimeException( $post_id->get_error_message() ); // phpcs:ignore WordPress.Security.EscapeOutput.ExceptionNotEscaped -- the message is text (the log, a JSON answer or a WP_Error), escaped where a page prints it.
		}
		return (int) $post_id;
	}

	/**
	 * The guid wp_insert_post() would give a new post (its permalink, by
	 * get_permalink() and its filters), when that does not depend on the
	 * post's id: the permalink of the post as it will be, asked for under
	 * two ids; '' when they differ (plain permalinks name the id), and
	 * WordPress writes it after the INSERT as usual.
	 *
	 * @param array $postarr wp_insert_post()'s array.
	 * @return string
	 */
	private static function guid_of( array $postarr ) {
		$link = function ( $id ) use ( $postarr ) {
			$post = new WP_Post(
				(object) array(
					'ID'          => $id,
					'post_type'   => isset( $postarr['post_type'] ) ? (string) $postarr['post_type'] : '',
					'post_name'   => isset( $postarr['post_name'] ) ? (string) $postarr['post_name'] : '',
					'post_status' => isset( $postarr['post_status'] ) ? (string) $postarr['post_status'] : '',
					'post_date'   => current_time( 'mysql' ),
					'post_parent' => 0,
					'filter'      => 'raw',
				)
			);
			return get_permalink( $post );
		};
		$one = $link( PHP_INT_MAX );
		return is_string( $one ) && '' !== $one && $link( PHP_INT_MAX - 1 ) === $one ? $one : '';
	}

	/**
	 * Adds meta to a new post in one multi-row INSERT, as add_post_meta()
	 * would add each (WordPress's unslashing, sanitize_meta() and
	 * serializing; its add_post_metadata filter, add_post_meta and
	 * added_post_meta actions).
	 *
	 * @param int    $post_id Post.
	 * @param string $type    Its post type.
	 * @param array  $meta    Key => value.
	 * @throws RuntimeException When the INSERT did not write every row.
	 */
	private static function add_meta_at_once( $post_id, $type, array $meta ) {
		global $wpdb;
		$rows = array();
		foreach ( $meta as $key => $value ) {
			$key   = wp_unslash( (string) $key );
			$value = sanitize_meta( $key, wp_unslash( $value ), 'post', $type );
			/** This filter is documented in wp-includes/meta.php */
			if ( '' === $key || null !== apply_filters( 'add_post_metadata', null, $post_id, $key, $value, false ) ) { // phpcs:ignore WordPress.NamingConventions.PrefixAllGlobals.NonPrefixedHooknameFound -- WordPress's own meta hook, run as add_metadata() runs it.
				continue;
			}
			/** This action is documented in wp-includes/meta.php */
			do_action( 'add_post_meta', $post_id, $key, $value ); // phpcs:ignore WordPress.NamingConventions.PrefixAllGlobals.NonPrefixedHooknameFound -- WordPress's own meta hook, run as add_metadata() runs it.
			$rows[ $key ] = $value;
		}
		if ( ! $rows ) {
			return;
		}
		$values = array();
		foreach ( $rows as $key => $value ) {
			$values[] = $wpdb->prepare( '(%d, %s, %s)', $post_id, $key, maybe_serialize( $value ) );
		}
		$written = $wpdb->query( "INSERT INTO {$wpdb->postmeta} (post_id, meta_key, meta_value) VALUES " . implode( ', ', $values ) ); // phpcs:ignore WordPress.DB.PreparedSQL.NotPrepared, WordPress.DB.DirectDatabaseQuery.DirectQuery -- each row prepared above; a new post's meta in one statement (add_post_meta() is one each), its cache cleared below.
		wp_cache_delete( $post_id, 'post_meta' );
		if ( count( $rows ) !== $written ) {
			throw new RuntimeException( 'the invoice post\'s meta could not be written: ' . $wpdb->last_error ); // phpcs:ignore WordPress.Security.EscapeOutput.ExceptionNotEscaped -- the message is text (the log, a JSON answer or a WP_Error), escaped where a page prints it.
		}
		$ids = array_column( (array) $wpdb->get_results( $wpdb->prepare( "SELECT meta_id, meta_key FROM {$wpdb->postmeta} WHERE post_id = %d", $post_id ) ), 'meta_id', 'meta_key' ); // phpcs:ignore WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- the ids of the rows just written, for added_post_meta.
		foreach ( $rows as $key => $value ) {
			/** This action is documented in wp-includes/meta.php */
			do_action( 'added_post_meta', isset( $ids[ $key ] ) ? (int) $ids[ $key ] : 0, $post_id, $key, $value ); // phpcs:ignore WordPress.NamingConventions.PrefixAllGlobals.NonPrefixedHooknameFound -- WordPress's own meta hook, run as add_metadata() runs it.
		}
	}

	/**
	 * Adds to an existing invoice post the keys of $meta it lacks (an
	 * earlier try that died between the post and its meta).
	 *
	 * @param int    $post_id Post.
	 * @param string $type    Its post type.
	 * @param array  $meta    Key => value.
	 */
	private static function add_missing_meta( $post_id, $type, array $meta ) {
		$have = get_post_meta( $post_id );
		$have = is_array( $have ) ? $have : array();
		$gone = array_diff_key( $meta, $have );
		if ( $gone ) {
			self::add_meta_at_once( $post_id, $type, $gone );
		}
	}

	/** The slug of the invoice post of (series, number): unique per number. */
	private static function slug( $scope, $number ) {
		return 'cf-' . substr( md5( $scope ), 0, 16 ) . '-' . $number;
	}

	/** The post of type $type with $slug, or 0. */
	private static function post_by_slug( $slug, $type ) {
		global $wpdb;
		return (int) $wpdb->get_var( $wpdb->prepare( "SELECT ID FROM {$wpdb->posts} WHERE post_type = %s AND post_name = %s ORDER BY ID LIMIT 1", $type, $slug ) ); // phpcs:ignore WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- the invoice post by its slug, read live: a concurrent delivery may have made it a moment ago.
	}

	/** Phase 2 did not finish: 503, the number stays the payment's. */
	private static function incomplete( $rendered, Throwable $e ) {
		return new WP_Error(
			'counterfoil_incomplete',
			/* translators: %s: number */
			sprintf( __( 'Number %s is reserved for this payment but its invoice could not be created yet. Deliver the payment again to complete it.', 'counterfoil' ), $rendered ),
			array(
				'status'      => 503,
				'retry_after' => 5,
				'cause'       => get_class( $e ) . ':' . $e->getCode(),
				'detail'      => $e->getMessage(),
			)
		);
	}

	/**
	 * Marks a number void, with a reason: a reserved or issued number, or a
	 * number of the series' range that has no record (a gap).
	 *
	 * @param string $scope  Scope key.
	 * @param int    $number Number.
	 * @param string $reason Why (required).
	 * @return true|WP_Error
	 */
	public static function void_number( $scope, $number, $reason ) {
		global $wpdb;
		$invalid = Counterfoil_Rules::scope_key_error( $scope );
		if ( null !== $invalid ) {
			return new WP_Error( 'counterfoil_invalid_scope', 'invalid scope key: ' . $invalid[1], array( 'status' => 400 ) );
		}
		$reason = is_string( $reason ) ? trim( $reason ) : '';
		if ( '' === $reason || strlen( $reason ) > 255 ) {
			return new WP_Error( 'counterfoil_void_reason', __( 'A void needs a reason of 1 to 255 characters.', 'counterfoil' ), array( 'status' => 400 ) );
		}
		$t = Counterfoil_Schema::tables();
		// One transaction: the void and its chain entry, under the series
		// row's lock (Counterfoil_Chain), or neither; on a connection that
		// never reconnects (Counterfoil_Wpdb_Transaction: wpdb's own would
		// run a statement that met a lost connection again, outside the
		// transaction, and commit the chain entry without the void).
		try {
			$gap = Counterfoil_Wpdb_Transaction::run(
				function ( wpdb $db ) use ( $t, $scope, $number, $reason ) {
					$head = Counterfoil_Chain::head_with_wpdb( $scope, $db );
					if ( null === $head && '' !== $db->last_error ) {
						throw new RuntimeException( 'reading the chain head failed: ' . $db->last_error ); // phpcs:ignore WordPress.Security.EscapeOutput.ExceptionNotEscaped -- the message is text (the log, a JSON answer or a WP_Error), escaped where a page prints it.
					}
					$ok  = null === $head ? 0 : $db->query( $db->prepare( "UPDATE {$t['numbers']} SET status = 'void', reason = %s, updated_at = UTC_TIMESTAMP() WHERE scope_key = %s AND number = %d AND status IN ('reserved', 'issued')", $reason, $scope, $number ) ); // phpcs:ignore WordPress.DB.PreparedSQL -- table names from Counterfoil_Schema.
					$gap = false;
					if ( false === $ok ) {
						throw new RuntimeException( 'the void failed: ' . $db->last_error ); // phpcs:ignore WordPress.Security.EscapeOutput.ExceptionNotEscaped -- the message is text (the log, a JSON answer or a WP_Error), escaped where a page prints it.
					}
					if ( null !== $head && 1 !== $ok ) {
						// A number of the series' range that nothing records (a gap):
						// recorded as void with the reason, so that the books account for it.
						$gap = true;
						$ok  = $db->query(
							$db->prepare(
								"INSERT IGNORE INTO {$t['numbers']} (scope_key, number, status, reason, source, created_at, updated_at)
								 SELECT scope_key, %d, 'void', %s, 'gap', UTC_TIMESTAMP(), UTC_TIMESTAMP() FROM {$t['sequences']}
								 WHERE scope_key = %s AND %d BETWEEN COALESCE(start_value, 1) AND current_value", // phpcs:ignore WordPress.DB.PreparedSQL -- table names from Counterfoil_Schema.
								$number,
								$reason,
								$scope,
								$number
							)
						);
						if ( false === $ok ) {
							throw new RuntimeException( 'the void failed: ' . $db->last_error ); // phpcs:ignore WordPress.Security.EscapeOutput.ExceptionNotEscaped -- the message is text (the log, a JSON answer or a WP_Error), escaped where a page prints it.
						}
					}
					if ( 1 !== $ok ) {
						throw new Counterfoil_Void_Missing();
					}
					Counterfoil_Chain::append_with_wpdb( $head, Counterfoil_Chain::void( $scope, $number, $reason ), $db );
					return $gap;
				}
			);
		} catch ( Counterfoil_Void_Missing $e ) {
			return new WP_Error( 'counterfoil_void_missing', __( 'No reserved or issued number matches, and the number is not a gap of the series (it was never handed out, or is already void).', 'counterfoil' ), array( 'status' => 404 ) );
		} catch ( Throwable $e ) {
			return new WP_Error( 'counterfoil_unavailable', __( 'The number could not be voided; nothing changed. Try again.', 'counterfoil' ), array( 'status' => 503, 'detail' => $e->getMessage() ) );
		}
		if ( $gap ) {
			return true;
		}
		$post_id = (int) $wpdb->get_var( $wpdb->prepare( "SELECT post_id FROM {$t['numbers']} WHERE scope_key = %s AND number = %d", $scope, $number ) ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared, WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- table name from Counterfoil_Schema::tables() (the prefix and a fixed name). Our own tables, which no WordPress API reads or writes.
		Counterfoil_Invoice_Type::mark_void( $post_id, $reason );
		return true;
	}

	/**
	 * A backend exception as a WP_Error: the payment was validated before, so
	 * whatever the backend refuses is the site's problem (503, delivered
	 * again later). The message names the kind of problem; the detail (the
	 * database's words, hosts) is in the data, for the server log only.
	 */
	private static function error_from( Throwable $e, array $payment ) {
		unset( $payment );
		return new WP_Error(
			'counterfoil_unavailable',
			__( 'The invoice database is busy or unavailable; deliver the payment again shortly.', 'counterfoil' ),
			array(
				'status'      => 503,
				'retry_after' => 5,
				'cause'       => get_class( $e ) . ':' . $e->getCode(),
				'detail'      => $e->getMessage(),
			)
		);
	}
}
