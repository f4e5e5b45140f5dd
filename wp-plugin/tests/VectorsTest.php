<?php
use PHPUnit\Framework\TestCase;

/** The shared vectors (tests/vectors/) on the pure-PHP rules. */
final class VectorsTest extends TestCase {
	private static function load( $name ) {
		return json_decode( file_get_contents( getenv( 'COUNTERFOIL_VECTORS' ) . '/' . $name ), true, 512, JSON_BIGINT_AS_STRING );
	}

	public function test_scope_keys() {
		foreach ( self::load( 'scope_keys.json' ) as $case ) {
			$key   = isset( $case['key'] ) ? $case['key'] : str_repeat( $case['key_repeat'][0], $case['key_repeat'][1] );
			$error = Counterfoil_Rules::scope_key_error( $key );
			if ( isset( $case['error'] ) ) {
				$this->assertNotNull( $error, json_encode( $case ) );
				$this->assertSame( $case['error'], $error[0], json_encode( $case ) );
			} else {
				$this->assertNull( $error, json_encode( $case ) );
			}
		}
	}

	public function test_user_year_scopes() {
		foreach ( self::load( 'user_year_scopes.json' ) as $case ) {
			if ( is_string( $case['user_id'] ) ) {
				continue; // Above PHP_INT_MAX: not a PHP int.
			}
			try {
				$key = Counterfoil_Rules::user_year_scope( $case['user_id'], $case['year'] );
				$this->assertArrayHasKey( 'key', $case, json_encode( $case ) );
				$this->assertSame( $case['key'], $key );
			} catch ( Counterfoil\InvalidArgumentException $e ) {
				$this->assertSame( 'year_out_of_range', $case['error'] );
			}
		}
	}

	public function test_formats() {
		foreach ( self::load( 'formats.json' ) as $case ) {
			$t = $case['template'];
			if ( isset( $case['expect'] ) ) {
				$rule = isset( $case['rule'] ) ? Counterfoil_Rules::period_rule( $case['rule'] ) : null;
				$this->assertSame( $case['expect'], Counterfoil_Rules::render( $t, $case['number'], $case['year'], $case['month'], $rule ), $t );
				continue;
			}
			$error = Counterfoil_Rules::format_error( $t );
			if ( null === $error ) {
				// Render-time errors: year or month out of range.
				try {
					Counterfoil_Rules::render( $t, $case['number'], $case['year'], $case['month'] );
					$this->fail( "no error for $t" );
				} catch ( Counterfoil\InvalidArgumentException $e ) {
					$this->assertStringContainsString( 'year_out_of_range' === $case['error'] ? 'year' : 'month', $e->getMessage() );
				}
				continue;
			}
			$this->assertSame( $case['error'], $error[0], $t );
			$this->assertSame( $case['at'], $error[1], $t );
		}
	}

	public function test_series_rules() {
		$rules = self::load( 'series_rules.json' );
		$this->assertSame( Counterfoil_Rules::MAX_BATCH, $rules['max_batch'] );
		foreach ( array( 'start' => 'counter_for_start', 'next' => 'counter_for_next' ) as $key => $fn ) {
			foreach ( $rules[ $key ] as $case ) {
				$value = is_string( $case['value'] ) ? PHP_INT_MAX : $case['value'];
				if ( is_string( $case['value'] ) ) {
					continue; // u64 above PHP_INT_MAX.
				}
				if ( isset( $case['error'] ) ) {
					try {
						Counterfoil_Rules::$fn( $value );
						$this->fail( "$key $value accepted" );
					} catch ( Counterfoil\InvalidArgumentException $e ) {
						$this->assertStringContainsString( 'invalid argument', $e->getMessage() );
					}
				} else {
					$this->assertSame( $case['counter'], Counterfoil_Rules::$fn( $value ) );
				}
			}
		}
		foreach ( $rules['typed'] as $case ) {
			if ( isset( $case['value'] ) && is_string( $case['value'] ) ) {
				continue; // u64 above PHP_INT_MAX: refused by PHP, covered by the core.
			}
			try {
				$got = Counterfoil_Rules::parse_typed_number( 'next', $case['text'] );
				$this->assertArrayHasKey( 'value', $case, json_encode( $case ) . " accepted as $got" );
				$this->assertSame( $case['value'], $got );
			} catch ( Counterfoil\InvalidArgumentException $e ) {
				$this->assertArrayHasKey( 'error', $case, json_encode( $case ) . ': ' . $e->getMessage() );
			}
		}
		foreach ( $rules['batch'] as $case ) {
			try {
				Counterfoil_Rules::check_batch( $case['count'] );
				$this->assertArrayHasKey( 'range', $case );
			} catch ( Counterfoil\InvalidArgumentException $e ) {
				$this->assertArrayHasKey( 'error', $case );
			}
		}
	}

	public function test_series_plans() {
		$plans = self::load( 'series_plans.json' );
		$ran   = 0;
		foreach ( $plans['start'] as $case ) {
			if ( is_string( $case['previous'] ) || ( isset( $case['expect'] ) && is_string( $case['expect'] ) ) ) {
				continue; // u64 above PHP_INT_MAX: not a PHP int.
			}
			try {
				$got = Counterfoil_Rules::start_for_new_series( $case['plan'], $case['start'], $case['previous'] );
				$this->assertArrayNotHasKey( 'error', $case, json_encode( $case ) );
				$this->assertSame( $case['expect'], $got, json_encode( $case ) );
			} catch ( Counterfoil\InvalidArgumentException $e ) {
				$this->assertSame( 'invalid_argument', $case['error'] ?? null, json_encode( $case ) . ' ' . $e->getMessage() );
			} catch ( Counterfoil\OverflowException $e ) {
				$this->assertSame( 'overflow', $case['error'] ?? null, json_encode( $case ) );
			}
			++$ran;
		}
		foreach ( $plans['previous'] as $case ) {
			$this->assertSame( $case['expect'], Counterfoil_Rules::previous_series( $case['scope'], $case['existing'] ), json_encode( $case ) );
			++$ran;
		}
		foreach ( $plans['closed'] as $case ) {
			$hops = $case['hops'];
			try {
				$next = Counterfoil_Rules::forward_to( $case['scope'], $case['row'], $case['successor'], $hops );
				$this->assertSame( $case['expect']['forward'] ?? null, $next, json_encode( $case ) );
				$this->assertSame( $case['hops'] + 1, $hops );
			} catch ( Counterfoil\SeriesNotFoundException $e ) {
				$this->assertSame( 'series_not_found', $case['expect']['error'] ?? null, json_encode( $case ) );
			} catch ( Counterfoil\SeriesClosedException $e ) {
				$this->assertSame( 'series_closed', $case['expect']['error'] ?? null, json_encode( $case ) );
			} catch ( Counterfoil\DatabaseUnavailableException $e ) {
				$this->assertSame( 'unexpected', $case['expect']['error'] ?? null, json_encode( $case ) );
			}
			++$ran;
		}
		foreach ( $plans['continue_once'] as $case ) {
			try {
				Counterfoil_Rules::may_continue( $case['previous'], $case['closed_by'], $case['scope'] );
				$this->assertTrue( $case['ok'], json_encode( $case ) );
			} catch ( Counterfoil\SeriesClosedException $e ) {
				$this->assertFalse( $case['ok'], json_encode( $case ) );
			}
			++$ran;
		}
		$this->assertGreaterThan( 26, $ran );
	}

	public function test_export_encodings() {
		$v = self::load( 'export.json' );
		$this->assertSame( $v['columns'], Counterfoil_Rules::EXPORT_COLUMNS );
		foreach ( $v['cells'] as $case ) {
			$this->assertSame( $case['csv'], Counterfoil_Rules::csv_cell( $case['value'] ), json_encode( $case ) );
		}
		foreach ( $v['lines'] as $case ) {
			$this->assertSame( $case['csv'], Counterfoil_Rules::csv_line( $case['values'] ) );
			$this->assertSame( $case['jsonl'], Counterfoil_Rules::jsonl_line( $case['values'] ) );
			$selected = $case['values'];
			array_splice( $selected, 12, 1 ); // What a query selects: no kind.
			$this->assertSame( $case['values'], Counterfoil_Rules::export_row( $selected ) );
		}
	}

	public function test_minor_units() {
		$ran = 0;
		foreach ( self::load( 'minor_units.json' ) as $case ) {
			try {
				$got = Counterfoil_Rules::amount_from_minor_units( $case['minor'], $case['currency'] );
				$this->assertArrayNotHasKey( 'error', $case, json_encode( $case ) );
				$this->assertSame( array( $case['amount'], $case['code'] ), $got, json_encode( $case ) );
			} catch ( InvalidArgumentException $e ) {
				$this->assertArrayHasKey( 'error', $case, $e->getMessage() );
				$this->assertStringContainsString( '`' . $case['error'] . '`', $e->getMessage(), json_encode( $case ) );
			}
			++$ran;
		}
		$this->assertGreaterThan( 20, $ran );
	}

	/** An argument error's name, as the twin's message carries it. */
	private function assertRefusedAs( $name, InvalidArgumentException $e, $case ) {
		$this->assertStringContainsString( '`' . $name . '`', $e->getMessage(), json_encode( $case ) );
	}

	public function test_credit_notes() {
		$v   = self::load( 'credit_notes.json' );
		$ran = 0;
		foreach ( $v['series'] as $case ) {
			$scope = isset( $case['scope'] ) ? $case['scope'] : str_repeat( $case['scope_repeat'][0], $case['scope_repeat'][1] );
			try {
				$got = Counterfoil_Rules::credit_note_series( $scope, $case['year'], isset( $case['month'] ) ? $case['month'] : null );
				$this->assertArrayNotHasKey( 'error', $case, json_encode( $case ) );
				if ( isset( $case['series'] ) ) {
					$this->assertSame( $case['series'], $got );
				} else {
					$this->assertSame( $case['series_length'], strlen( $got ) );
				}
			} catch ( InvalidArgumentException $e ) {
				$this->assertArrayHasKey( 'error', $case, $e->getMessage() );
				$this->assertRefusedAs( $case['error'], $e, $case );
			}
			++$ran;
		}
		foreach ( $v['kinds'] as $case ) {
			$this->assertSame( $case['kind'], Counterfoil_Rules::kind_of( $case['scope'] ), json_encode( $case ) );
			++$ran;
		}
		foreach ( $v['minor_units'] as $case ) {
			try {
				$got = Counterfoil_Rules::minor_units( $case['amount'], $case['currency'] );
				$this->assertArrayNotHasKey( 'error', $case, json_encode( $case ) );
				$this->assertSame( $case['minor'], $got, json_encode( $case ) );
			} catch ( InvalidArgumentException $e ) {
				$this->assertArrayHasKey( 'error', $case, $e->getMessage() );
				$this->assertRefusedAs( $case['error'], $e, $case );
			}
			++$ran;
		}
		foreach ( $v['amounts'] as $case ) {
			try {
				$got = Counterfoil_Rules::credit_note_amount( $case['invoice'], $case['credited'], $case['requested'] );
				$this->assertArrayNotHasKey( 'error', $case, json_encode( $case ) );
				$this->assertSame( $case['amount'], $got, json_encode( $case ) );
			} catch ( InvalidArgumentException $e ) {
				$this->assertArrayHasKey( 'error', $case, $e->getMessage() );
				$this->assertRefusedAs( $case['error'], $e, $case );
			}
			++$ran;
		}
		$this->assertGreaterThan( 40, $ran );
	}

	public function test_periods() {
		$v = self::load( 'periods.json' );
		foreach ( $v['rules'] as $case ) {
			try {
				$rule = Counterfoil_Rules::period_rule( $case['text'] );
				$this->assertArrayNotHasKey( 'error', $case, json_encode( $case ) );
				$this->assertSame( $case['rule'], Counterfoil_Rules::period_rule_text( $rule ) );
			} catch ( InvalidArgumentException $e ) {
				$this->assertArrayHasKey( 'error', $case, $e->getMessage() );
				$this->assertStringContainsString( '`' . $case['error'] . '`', $e->getMessage() );
			}
		}
		foreach ( $v['days'] as $case ) {
			$rule = Counterfoil_Rules::period_rule( $case['rule'] );
			try {
				$key = Counterfoil_Rules::period_of( $rule, $case['date'][0], $case['date'][1], $case['date'][2] );
				$this->assertArrayNotHasKey( 'error', $case, json_encode( $case ) );
				$this->assertSame( $case['period'], Counterfoil_Rules::period_label( $key ), json_encode( $case ) );
				$this->assertSame( $case['next'], Counterfoil_Rules::period_label( Counterfoil_Rules::period_next( $key ) ) );
				$this->assertSame( $case['fy'], Counterfoil_Rules::fiscal_label( $rule, $key[0] ) );
				$this->assertSame( $case['fy_end'], Counterfoil_Rules::fiscal_end( $rule, $key[0] ) );
			} catch ( InvalidArgumentException $e ) {
				$this->assertArrayHasKey( 'error', $case, $e->getMessage() );
				$this->assertStringContainsString( '`' . $case['error'] . '`', $e->getMessage(), json_encode( $case ) );
			}
		}
		$this->assertGreaterThanOrEqual( 20, count( $v['days'] ) );
	}

	public function test_chain_entries() {
		$v = self::load( 'chain.json' );
		$this->assertSame( Counterfoil_Rules::CHAIN_GENESIS, $v['genesis'] );
		$this->assertSame( Counterfoil_Rules::CHAIN_FIELDS, $v['fields'] );
		$prev = Counterfoil_Rules::CHAIN_GENESIS;
		foreach ( $v['cases'] as $case ) {
			$this->assertSame( $prev, $case['prev'], 'the cases are one chain' );
			$this->assertSame( $case['canonical'], Counterfoil_Rules::chain_canonical( $case['prev'], $case['event'] ) );
			$this->assertSame( $case['hash'], Counterfoil_Rules::chain_hash( $case['prev'], $case['event'] ) );
			$prev = $case['hash'];
		}
		$this->assertGreaterThanOrEqual( 5, count( $v['cases'] ) );
	}

	public function test_number_states() {
		$cases = self::load( 'number_states.json' );
		$this->assertGreaterThanOrEqual( 6, count( $cases['repeat_of_request'] ) );
		foreach ( $cases['repeat_of_request'] as $case ) {
			$this->assertSame( $case['handed_out'], Counterfoil_Rules::repeat_returns( $case['status'] ), json_encode( $case ) );
		}
		foreach ( $cases['issued_to'] as $case ) {
			$this->assertSame( $case['ours'], Counterfoil_Rules::issued_to( $case['status'], $case['issued_post'], $case['post'] ), json_encode( $case ) );
		}
	}

	public function test_recorded_values() {
		$cases = self::load( 'recorded_values.json' );
		$this->assertGreaterThanOrEqual( 30, count( $cases ) );
		foreach ( $cases as $case ) {
			$value = isset( $case['value_repeat'] ) ? str_repeat( $case['value_repeat'][0], $case['value_repeat'][1] ) : $case['value'];
			try {
				call_user_func( array( 'Counterfoil_Rules', $case['field'] ), $value );
				$this->assertArrayNotHasKey( 'error', $case, json_encode( $case ) );
			} catch ( Counterfoil\InvalidArgumentException $e ) {
				$this->assertArrayHasKey( 'error', $case, json_encode( $case ) . ' ' . $e->getMessage() );
				$this->assertStringContainsString( '`' . $case['error'] . '`', $e->getMessage() );
			}
		}
	}

	public function test_payment_refs() {
		foreach ( self::load( 'payment_refs.json' ) as $case ) {
			$txn = isset( $case['transaction_id'] ) ? $case['transaction_id'] : str_repeat( $case['transaction_id_repeat'][0], $case['transaction_id_repeat'][1] );
			try {
				Counterfoil_Rules::payment_ref( $case['gateway'], $txn );
				$this->assertArrayNotHasKey( 'error', $case, json_encode( $case ) );
			} catch ( Counterfoil\InvalidArgumentException $e ) {
				$this->assertArrayHasKey( 'error', $case, json_encode( $case ) . ' ' . $e->getMessage() );
				$this->assertStringContainsString( '`' . $case['error'] . '`', $e->getMessage() );
			}
		}
	}

	/**
	 * The twin sends the core's statements as they are: each of its
	 * statements equals the core's text of the same name
	 * (tests/vectors/mysql_statements.json, kept equal to the core by
	 * core/tests/vectors.rs), and it has every one the core sends while
	 * numbering.
	 */
	public function test_mysql_statements() {
		$core = self::load( 'mysql_statements.json' );
		$twin = Counterfoil_Php_Backend::statements( 'wp_' );
		$this->assertGreaterThanOrEqual( 25, count( $core ) );
		foreach ( $twin as $name => $sql ) {
			$this->assertArrayHasKey( $name, $core, "the twin's statement $name is not the core's" );
			$this->assertSame( $core[ $name ], $sql, $name );
		}
		$this->assertSame( array_keys( $core ), array_intersect( array_keys( $core ), array_keys( $twin ) ), 'statements of the core that the twin lacks' );
	}

	/**
	 * The twin's credit-note statements are the core's text
	 * (tests/vectors/credit_note_statements.json, kept equal to the core by
	 * core/tests/credit_note_statements.rs), every one of them.
	 */
	public function test_credit_note_statements() {
		$core = self::load( 'credit_note_statements.json' );
		$twin = Counterfoil_Php_Backend::credit_note_statements( 'wp_' );
		ksort( $core );
		ksort( $twin );
		$this->assertCount( 5, $core );
		$this->assertSame( $core, $twin );
	}

	/**
	 * The PDF's labels the plugin translates are the core's, key for key and
	 * in its English words (tests/vectors/pdf_labels.json, written by
	 * core/tests/einvoice_pdf.rs), so every label reaches the translators
	 * and a translation reaches the page; in English, none is sent.
	 */
	public function test_pdf_labels() {
		$core = array();
		foreach ( self::load( 'pdf_labels.json' ) as $label ) {
			$core[ $label['key'] ] = $label['en'];
		}
		$ours = array();
		foreach ( Counterfoil_Documents::pdf_label_texts() as $key => $texts ) {
			$ours[ $key ] = $texts[0];
			$this->assertSame( $texts[0], $texts[1], "$key: the English site's text is the English text" );
		}
		$this->assertGreaterThan( 50, count( $core ) );
		$this->assertSame( $core, $ours );
		$this->assertSame( array(), Counterfoil_Documents::pdf_labels() );
	}

	/**
	 * The session statement and the server check, as the core's
	 * (tests/vectors/mysql_session.json, passed by core/src/mysql/vetting.rs):
	 * the same statements, and the same verdict on what a server reports.
	 */
	public function test_mysql_session() {
		$v = self::load( 'mysql_session.json' );
		$this->assertSame( $v['server_check_sql'], Counterfoil_Php_Backend::SERVER_CHECK_SQL );
		$this->assertSame( $v['galera_ready_sql'], Counterfoil_Php_Backend::GALERA_READY_SQL );
		$this->assertSame( $v['galera_causal_reads_sql'], Counterfoil_Php_Backend::GALERA_CAUSAL_READS_SQL );
		foreach ( $v['session'] as $case ) {
			$this->assertSame( $case['sql'], Counterfoil_Php_Backend::session_sql( $case['deadline_ms'] ), json_encode( $case ) );
		}
		foreach ( $v['server'] as $case ) {
			$got = Counterfoil_Php_Backend::judge_server( $case['vars'], ! empty( $case['unsafe_allowed'] ) );
			if ( isset( $case['error'] ) ) {
				$want = array(
					'refused' => $case['error'],
					'setting' => isset( $case['setting'] ) ? $case['setting'] : null,
				);
				$this->assertSame( $want, $got, json_encode( $case ) );
			} else {
				$this->assertSame( $case['expect'], $got, json_encode( $case ) );
			}
		}
		foreach ( $v['ready'] as $case ) {
			$got  = Counterfoil_Php_Backend::judge_ready( $case['rows'] );
			$want = $case['ready'] ? array( 'ready' => true, 'cluster' => $case['cluster'] ) : array( 'ready' => false );
			$this->assertSame( $want, $case['ready'] ? $got : array( 'ready' => $got['ready'] ), json_encode( $case ) );
		}
		$this->assertGreaterThanOrEqual( 20, count( $v['server'] ) );
	}

	/** The recorded allocation's one-trip packet, filled as the core fills it (tests/vectors/one_trip_packets.json). */
	public function test_one_trip_recorded_packets() {
		$template = Counterfoil_Php_Backend::statements( 'wp_' )['registry.recorded_one_trip'];
		$cases    = self::load( 'one_trip_packets.json' )['recorded_cases'];
		$this->assertGreaterThanOrEqual( 2, count( $cases ) );
		foreach ( $cases as $case ) {
			$this->assertSame(
				$case['packet'],
				Counterfoil_Php_Backend::one_trip_recorded_packet( $template, $case['scope'], $case['source'], $case['call'], $case['request_key'], $case['at'] ),
				$case['scope']
			);
		}
		$statements = explode( ";\n", $template );
		$this->assertStringStartsWith( 'UPDATE `wp_invoice_sequences` SET current_value', $statements[ Counterfoil_Php_Backend::ONE_TRIP_ALLOCATION ] );
		$this->assertStringStartsWith( 'INSERT INTO `wp_counterfoil_chain`', $statements[ Counterfoil_Php_Backend::ONE_TRIP_RECORDED_CHAIN_ENTRY ] );
	}

	/** The one-trip payment packet, filled as the core fills it (tests/vectors/one_trip_packets.json). */
	public function test_one_trip_packets() {
		$template = Counterfoil_Php_Backend::statements( 'wp_' )['registry.payment_one_trip'];
		$cases    = self::load( 'one_trip_packets.json' )['cases'];
		$this->assertGreaterThanOrEqual( 3, count( $cases ) );
		foreach ( $cases as $case ) {
			$this->assertSame(
				$case['packet'],
				Counterfoil_Php_Backend::one_trip_packet( $template, $case['scope'], $case['gateway'], $case['txn'], $case['amount'], $case['currency'], $case['period'], $case['at'] ),
				$case['scope']
			);
		}
		$statements = explode( ";\n", $template );
		$this->assertStringStartsWith( 'INSERT INTO `wp_counterfoil_payments`', $statements[ Counterfoil_Php_Backend::ONE_TRIP_PAYMENT_ROW ] );
		$this->assertStringStartsWith( 'UPDATE `wp_invoice_sequences` SET current_value', $statements[ Counterfoil_Php_Backend::ONE_TRIP_ALLOCATION ] );
		$this->assertStringStartsWith( 'INSERT INTO `wp_counterfoil_chain`', $statements[ Counterfoil_Php_Backend::ONE_TRIP_CHAIN_ENTRY ] );
	}

	/** The e-invoices: the same refusals and, byte for byte, the same UBL and CII as the core. */
	public function test_einvoice() {
		$documents = 0;
		foreach ( self::load( 'einvoice.json' ) as $case ) {
			$name = $case['name'];
			try {
				$doc = Counterfoil_Einvoice::document( $case['document'] );
			} catch ( Counterfoil_Einvoice_Refusal $e ) {
				$this->assertArrayHasKey( 'error', $case, "$name: refused: " . $e->getMessage() );
				$this->assertSame( $case['error'], $e->term, $name );
				continue;
			}
			$this->assertArrayNotHasKey( 'error', $case, "$name: built, expected a refusal naming " . ( $case['error'] ?? '' ) );
			foreach ( $case['totals'] as $key => $want ) {
				$this->assertSame( $want, Counterfoil_Einvoice::str( $doc['totals'][ $key ] ), "$name: $key" );
			}
			$dir = getenv( 'COUNTERFOIL_VECTORS' ) . '/einvoice/';
			$ubl = Counterfoil_Einvoice::ubl( $doc );
			$cii = Counterfoil_Einvoice::cii( $doc );
			// The seller's account as the way to pay only where something is
			// to be paid by transfer (as core/tests/einvoice_vectors.rs): an
			// invoice with an amount due, or a transfer (30, 58) given as its
			// means; never a paid invoice or a credit note.
			$means  = isset( $case['document']['payment_means'] ) ? $case['document']['payment_means'] : null;
			$to_pay = 'credit_note' !== ( $case['document']['kind'] ?? null )
				&& ( null === $means ? $doc['totals']['due'][0] > 0 : in_array( $means, array( '30', '58' ), true ) );
			$this->assertSame( array( $to_pay, $to_pay ), array( str_contains( $ubl, '<cac:PayeeFinancialAccount>' ), str_contains( $cii, '<ram:IBANID>' ) ), "$name: the IBAN as the means to pay" );
			$this->assertSame( file_get_contents( $dir . $name . '.ubl.xml' ), $ubl, "$name.ubl.xml" );
			$this->assertSame( file_get_contents( $dir . $name . '.cii.xml' ), $cii, "$name.cii.xml" );
			$documents += 2;
		}
		$this->assertGreaterThanOrEqual( 20, $documents );
	}
}
