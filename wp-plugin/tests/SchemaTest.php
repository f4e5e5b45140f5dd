<?php
use PHPUnit\Framework\TestCase;

/** Activation creates the tables; activating again changes nothing. */
final class SchemaTest extends TestCase {
	private static function snapshot() {
		global $wpdb;
		$out = array();
		foreach ( Counterfoil_Schema::tables() as $table ) {
			$out[ $table ] = array(
				$wpdb->get_row( "SHOW CREATE TABLE `$table`", ARRAY_N )[1],
				$wpdb->get_row( "CHECKSUM TABLE `$table`", ARRAY_N )[1],
			);
		}
		foreach ( array( 'counterfoil_schema_version', 'counterfoil_webhook_secret', 'counterfoil_format' ) as $o ) {
			$out[ $o ] = get_option( $o );
		}
		return $out;
	}

	public function test_tables_exist_with_their_unique_keys() {
		global $wpdb;
		$t = Counterfoil_Schema::tables();
		$this->assertSame( Counterfoil_Schema::VERSION, (int) get_option( Counterfoil_Schema::VERSION_OPTION ) );
		$this->assertStringContainsString( 'PRIMARY KEY (`scope_key`)', $wpdb->get_row( "SHOW CREATE TABLE {$t['sequences']}", ARRAY_N )[1] );
		$this->assertStringContainsString( 'UNIQUE KEY `scope_number` (`scope_key`,`number`)', $wpdb->get_row( "SHOW CREATE TABLE {$t['numbers']}", ARRAY_N )[1] );
		$this->assertStringContainsString( 'UNIQUE KEY `gateway_transaction` (`gateway`,`transaction_id`)', $wpdb->get_row( "SHOW CREATE TABLE {$t['payments']}", ARRAY_N )[1] );
		$this->assertGreaterThanOrEqual( 32, strlen( get_option( 'counterfoil_webhook_secret' ) ) );
	}

	public function test_activating_again_changes_nothing() {
		initialize_invoice_sequence( Counterfoil_Test::user(), 2026, 1 );
		$before = self::snapshot();
		counterfoil_activate();
		Counterfoil_Schema::install();
		$this->assertSame( $before, self::snapshot() );
	}
}
