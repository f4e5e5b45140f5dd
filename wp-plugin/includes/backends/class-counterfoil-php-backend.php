<?php
/**
 * The pure-PHP backend, for hosts that cannot load the counterfoil extension.
 * It sends the same SQL as the Rust core (same text; the values the core
 * binds are written into it, escaped by the connection, so that it can be
 * sent asynchronously)
 * and keeps the same rules (docs/design.md §1–2):
 *
 * - the number is read from the UPDATE's own result (mysqli insert_id), only
 *   when exactly one row changed; an unknown series is an error, never a number;
 * - the durability check: innodb_flush_log_at_trx_commit = 0 is refused
 *   (unless COUNTERFOIL_UNSAFE_ALLOW_FLUSH_LOG_0 is defined true), 2 is logged,
 *   any other value or none refused: the server check and the session
 *   statement are the core's, by tests/vectors/mysql_session.json;
 * - bounded, jittered retries of 1213, 1205, 1317, 3101, 1047 (another node) and
 *   lost connections, each with a fresh transaction and a fresh number;
 * - at connect, wrong credentials or database (1044, 1045, 1049, 1698) stop at
 *   once; any other refusal tries the next node of COUNTERFOIL_DB_NODES; a
 *   Galera node gets causal reads (wsrep_sync_wait = 1);
 * - on a Galera node (a cluster where every node writes) a number a
 *   transaction took is told only once its row was read back after the
 *   COMMIT (the core's commit confirmation): a COMMIT answered OK whose write
 *   set the cluster aborted tells no number;
 * - one deadline per call (filter counterfoil_timeout_ms, 5 s): each connect
 *   and each statement gets only what is left of it. Statements run
 *   asynchronously and are awaited with mysqli_poll() for exactly the time
 *   left; mysqli connects in whole seconds, so a connect gets the whole
 *   seconds left (at most counterfoil_connect_timeout_ms: 3 s, or half the
 *   deadline if less) and none is
 *   started with less than one second left: a call ends by its deadline,
 *   sometimes up to a second before it, never after;
 * - failing back: after moving to a later node of COUNTERFOIL_DB_NODES it
 *   tries the earlier ones again (one-second probe) every 30 s
 *   (filter counterfoil_fail_back_after_ms), as the core does.
 *
 * It uses its own mysqli connection, opened with WordPress's DB_* settings
 * (parsed by $wpdb, with MYSQL_CLIENT_FLAGS), not $wpdb's handle (hence
 * mysqli used directly, where the coding standards expect $wpdb): $wpdb silently reconnects after a
 * lost connection and re-runs the failed statement outside its transaction,
 * which could record a payment without its number.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

// phpcs:disable WordPress.Security.EscapeOutput.ExceptionNotEscaped -- an exception's message is text, not HTML: it goes to the log, a REST answer (JSON) or a WP_Error, and every page that prints one escapes it there.

use Counterfoil\DatabaseUnavailableException;
use Counterfoil\InvalidArgumentException;
use Counterfoil\OverflowException;
use Counterfoil\SeriesNotFoundException;
use Counterfoil\TimeoutException;

/**
 * Pure-PHP backend.
 */
final class Counterfoil_Php_Backend implements Counterfoil_Backend {
	use Counterfoil_Php_Backend_Credit_Notes;

	const MAX_ATTEMPTS = 5;
	const ER_DUP_ENTRY = 1062;

	/**
	 * In the one-trip packet, the positions of the allocation (its OK
	 * packet carries the number), of the payment row's INSERT (a 1062 there
	 * is a repeat) and of the chain entry
	 * (counterfoil_core::mysql::sql::ONE_TRIP_*; VectorsTest checks them).
	 */
	const ONE_TRIP_ALLOCATION  = 1;
	const ONE_TRIP_PAYMENT_ROW = 3;
	const ONE_TRIP_CHAIN_ENTRY = 4;
	/** Time a one-trip packet leaves after its worst wait: a whole second to reconnect, and slack. */
	const RETRY_RESERVE_MS = 1100;
	/** In the recorded allocation's packet, the chain entry (no payment row before it). */
	const ONE_TRIP_RECORDED_CHAIN_ENTRY = 3;
	/**
	 * Errors after which nothing of the try remains, retried afresh (the
	 * core's Error::is_retryable): 1213 deadlock or Galera certification
	 * conflict, 1205 lock wait timeout, 1317 interrupted, 3101 Group
	 * Replication's rollback at commit.
	 */
	const RETRIED_AFRESH = array( 1213, 1205, 1317, 3101 );
	/** What a new connection shows before it allocates (the core's vetting::SERVER_CHECK_SQL). */
	const SERVER_CHECK_SQL = "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('innodb_flush_log_at_trx_commit', 'wsrep_on', 'read_only', 'super_read_only', 'group_replication_group_name', 'group_replication_single_primary_mode')";
	/**
	 * The session's own settings (the core's vetting::session_sql): autocommit
	 * on (a server whose sessions start with it off, by my.cnf or
	 * init_connect, would leave a plain allocation's transaction open, and its
	 * idle timeout would roll back numbers already handed out), and a lock
	 * wait no longer than the call's deadline in whole seconds, the server's
	 * own when shorter (a call that gave up at its deadline would otherwise
	 * leave its statement waiting on the server, holding the series row).
	 *
	 * @param int $timeout_ms The call's deadline.
	 * @return string
	 */
	public static function session_sql( $timeout_ms ) {
		$seconds = max( 1, (int) ceil( $timeout_ms / 1000 ) );
		return "SET SESSION autocommit = 1, innodb_lock_wait_timeout = LEAST(@@GLOBAL.innodb_lock_wait_timeout, $seconds)";
	}
	/** Galera readiness and the cluster's identity, asked only of a cluster node (the core's vetting::GALERA_READY_SQL). */
	const GALERA_READY_SQL = "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_ready', 'wsrep_cluster_state_uuid')";
	/** Causal reads on a Galera node (the core's vetting::GALERA_CAUSAL_READS_SQL). */
	const GALERA_CAUSAL_READS_SQL = 'SET SESSION wsrep_sync_wait = 1';

	/**
	 * The rows of SERVER_CHECK_SQL judged, as the core's
	 * vetting::judge_server (tests/vectors/mysql_session.json holds both to
	 * one rule): names in any case; a setting is on when it is ON (any case)
	 * or 1; innodb_flush_log_at_trx_commit must be reported as a number
	 * (0–255): 1 full, 2 safe against a server crash only, 0 refused unless
	 * allowed, anything else refused; a Group Replication member that does
	 * not say it has one primary is taken as multi-primary.
	 *
	 * @param array $rows         [name, value] pairs.
	 * @param bool  $allow_unsafe Whether innodb_flush_log_at_trx_commit = 0 is accepted.
	 * @return array durability (full, server_crash_only, unsafe), galera, read_only (the setting or null),
	 *               group (or null), multi_writer; or refused (unsafe_durability, unreported_durability) and setting.
	 */
	public static function judge_server( array $rows, $allow_unsafe ) {
		$vars = array();
		foreach ( $rows as $row ) {
			$name = strtolower( (string) $row[0] );
			if ( ! isset( $vars[ $name ] ) ) {
				$vars[ $name ] = (string) $row[1];
			}
		}
		$on        = function ( $name ) use ( $vars ) {
			return isset( $vars[ $name ] ) && ( 'ON' === strtoupper( $vars[ $name ] ) || '1' === $vars[ $name ] );
		};
		$read_only = null;
		foreach ( array( 'read_only', 'super_read_only' ) as $name ) {
			if ( null === $read_only && $on( $name ) ) {
				$read_only = $name;
			}
		}
		$group   = isset( $vars['group_replication_group_name'] ) ? trim( $vars['group_replication_group_name'] ) : '';
		$group   = '' === $group ? null : $group;
		$setting = isset( $vars['innodb_flush_log_at_trx_commit'] ) && preg_match( '/^\+?[0-9]+$/D', $vars['innodb_flush_log_at_trx_commit'] ) && (int) ltrim( $vars['innodb_flush_log_at_trx_commit'], '+' ) <= 255
			? (int) ltrim( $vars['innodb_flush_log_at_trx_commit'], '+' ) : null;
		if ( null === $setting ) {
			return array(
				'refused' => 'unreported_durability',
				'setting' => null,
			);
		}
		if ( 1 !== $setting && 2 !== $setting && ! ( 0 === $setting && $allow_unsafe ) ) {
			return array(
				'refused' => 'unsafe_durability',
				'setting' => $setting,
			);
		}
		return array(
			'durability'   => 1 === $setting ? 'full' : ( 2 === $setting ? 'server_crash_only' : 'unsafe' ),
			'galera'       => $on( 'wsrep_on' ),
			'read_only'    => $read_only,
			'group'        => $group,
			'multi_writer' => $on( 'wsrep_on' ) || ( null !== $group && ! $on( 'group_replication_single_primary_mode' ) ),
		);
	}

	/**
	 * A Galera node's rows of GALERA_READY_SQL judged, as the core's
	 * vetting::judge_ready: ready when wsrep_ready is ON (any case); its
	 * cluster named by its state uuid, when it reports one.
	 *
	 * @param array $rows [name, value] pairs.
	 * @return array ready (bool), cluster (the identity, or null).
	 */
	public static function judge_ready( array $rows ) {
		$status = array();
		foreach ( $rows as $row ) {
			$name = strtolower( (string) $row[0] );
			if ( ! isset( $status[ $name ] ) ) {
				$status[ $name ] = (string) $row[1];
			}
		}
		$uuid = isset( $status['wsrep_cluster_state_uuid'] ) ? trim( $status['wsrep_cluster_state_uuid'] ) : '';
		return array(
			'ready'   => isset( $status['wsrep_ready'] ) && 'ON' === strtoupper( $status['wsrep_ready'] ),
			'cluster' => '' === $uuid ? null : 'Galera cluster ' . $uuid,
		);
	}
	/** Errors at connect that no other node cures (the core's codes::is_configuration_error). */
	const CONFIGURATION_ERRORS = array( 1044, 1045, 1049, 1698 );
	/** The server a claim was taken on (counterfoil_core::schema::CLAIM_NODE). */
	const CLAIM_NODE = "LEFT(CONCAT(@@hostname, ':', @@port, ':', @@server_id), 64)";

	/**
	 * Every statement this backend sends while numbering, by the core's name
	 * (counterfoil_core::schema::numbering_statements), with `{sequences}`,
	 * `{numbers}`, `{payments}` and `{claim_node}` for the prefixed tables and
	 * CLAIM_NODE. VectorsTest compares statements('wp_') with
	 * tests/vectors/mysql_statements.json, the core's own text.
	 */
	const SQL = array(
		'series.initialize'                   => 'INSERT INTO {sequences} (scope_key, current_value, start_value) VALUES (?, ?, ?)',
		'series.advance'                      => 'UPDATE {sequences} SET current_value = GREATEST(current_value, ?) WHERE scope_key = ?',
		'series.allocate'                     => 'UPDATE {sequences} SET current_value = LAST_INSERT_ID(current_value + ?) WHERE scope_key = ?',
		'series.allocate_open'                => 'UPDATE {sequences} SET current_value = LAST_INSERT_ID(current_value + ?) WHERE scope_key = ? AND closed_by IS NULL',
		'series.successor'                    => 'SELECT closed_by FROM {sequences} WHERE scope_key = ?',
		'series.lock_series'                  => 'SELECT current_value, closed_by FROM {sequences} WHERE scope_key = ? FOR UPDATE',
		'series.close'                        => 'UPDATE {sequences} SET closed_by = ? WHERE scope_key = ? AND closed_by IS NULL',
		'series.current'                      => 'SELECT current_value, start_value FROM {sequences} WHERE scope_key = ?',
		'series.list_like'                    => 'SELECT scope_key, current_value FROM {sequences} WHERE scope_key LIKE ?',
		'registry.insert_number'              => 'INSERT INTO {numbers} (scope_key, number, status, source, gateway, transaction_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(), UTC_TIMESTAMP())',
		'registry.insert_unconfirmed_by_call' => "INSERT INTO {numbers} (scope_key, number, status, source, claim, created_at, updated_at) VALUES (?, ?, 'unconfirmed', ?, ?, UTC_TIMESTAMP(), UTC_TIMESTAMP())",
		'registry.insert_keyed_by_call'       => "INSERT INTO {numbers} (scope_key, number, status, source, claim, request_key, created_at, updated_at) VALUES (?, ?, 'unconfirmed', ?, ?, ?, UTC_TIMESTAMP(), UTC_TIMESTAMP())",
		'registry.confirm_by_call'            => "UPDATE {numbers} SET status = 'issued', updated_at = UTC_TIMESTAMP() WHERE scope_key = ? AND number = ? AND claim = ? AND status = 'unconfirmed'",
		'registry.void_unanswered'            => "UPDATE {numbers} SET status = 'void', reason = ?, updated_at = UTC_TIMESTAMP() WHERE scope_key = ? AND number = ? AND status IN ('issued', 'unconfirmed') AND claim = ?",
		'registry.find_by_request'            => 'SELECT number, status, claim FROM {numbers} WHERE scope_key = ? AND request_key = ?',
		'registry.unconfirmed_of_call'        => 'SELECT number FROM {numbers} WHERE scope_key = ? AND claim = ? AND status = \'unconfirmed\' ORDER BY number FOR UPDATE',
		'registry.insert_payment'             => 'INSERT INTO {payments} (gateway, transaction_id, scope_key, amount, currency, period, created_at) VALUES (?, ?, ?, ?, ?, ?, UTC_TIMESTAMP())',
		'registry.insert_held_payment'        => 'INSERT INTO {payments} (gateway, transaction_id, scope_key, amount, currency, period, created_at) VALUES (?, ?, ?, ?, ?, ?, UTC_TIMESTAMP())',
		'registry.set_payment_number'         => 'UPDATE {payments} SET number = ?, scope_key = ? WHERE id = ?',
		'registry.find_payment'               => 'SELECT p.scope_key, p.number, n.status, COALESCE(n.post_id, p.post_id), p.period, p.amount, p.currency FROM {payments} p LEFT JOIN {numbers} n ON n.scope_key = p.scope_key AND n.number = p.number WHERE p.gateway = ? AND p.transaction_id = ?',
		'registry.lock_payment'               => 'SELECT id, scope_key, number, period, amount, currency FROM {payments} WHERE gateway = ? AND transaction_id = ? FOR UPDATE',
		'registry.claim_number'               => "UPDATE {numbers} SET status = 'creating', claim = ?, claim_connection = CONNECTION_ID(), claim_node = {claim_node}, claimed_at = UTC_TIMESTAMP(), updated_at = UTC_TIMESTAMP() WHERE scope_key = ? AND number = ? AND (status = 'reserved' OR (status = 'creating' AND (claimed_at < UTC_TIMESTAMP() - INTERVAL ? SECOND OR (claim_node = {claim_node} AND NOT EXISTS (SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = claim_connection)))))",
		'registry.number_state'               => 'SELECT status, post_id, claim FROM {numbers} WHERE scope_key = ? AND number = ?',
		'registry.issue_claimed'              => "UPDATE {numbers} SET status = 'issued', post_id = ?, claim = NULL, claim_connection = NULL, claim_node = NULL, claimed_at = NULL, updated_at = UTC_TIMESTAMP() WHERE scope_key = ? AND number = ? AND status = 'creating' AND claim = ?",
		'registry.set_payment_post'           => 'UPDATE {payments} SET post_id = ? WHERE gateway = ? AND transaction_id = ?',
		'registry.release_claim'              => "UPDATE {numbers} SET status = 'reserved', claim = NULL, claim_connection = NULL, claim_node = NULL, claimed_at = NULL, updated_at = UTC_TIMESTAMP() WHERE scope_key = ? AND number = ? AND status = 'creating' AND claim = ?",
		'chain.head'                          => 'SELECT chain_seq, chain_head FROM {sequences} WHERE scope_key = ? FOR UPDATE',
		'chain.append'                        => 'INSERT INTO {chain} (scope_key, seq, number, event, gateway, transaction_id, amount, currency, post_id, reason, event_at, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
		'chain.move_head'                     => 'UPDATE {sequences} SET chain_seq = ?, chain_head = ?, chain_from = COALESCE(chain_from, ?) WHERE scope_key = ? AND chain_seq = ?',
		// The one-trip payment flow's packet (issue 30): its statements,
		// joined by ";\n" in statements(); see record_in_one_trip().
		'registry.payment_one_trip'           => array(
			'START TRANSACTION',
			'UPDATE {sequences} SET current_value = LAST_INSERT_ID(@cf_number := current_value + 1), chain_seq = (@cf_seq := chain_seq + 1), chain_head = (@cf_hash := SHA2(CONCAT(%chain_before_prev%, (@cf_prev := COALESCE(chain_head, \'0000000000000000000000000000000000000000000000000000000000000000\')), %chain_before_number%, LENGTH(@cf_number), \':\', @cf_number, %chain_after_number%), 256)), chain_from = COALESCE(chain_from, @cf_number) WHERE scope_key = %scope% AND closed_by IS NULL',
			'INSERT INTO {numbers} (scope_key, number, status, source, gateway, transaction_id, created_at, updated_at) VALUES (%scope%, IF(ROW_COUNT() = 1, @cf_number, NULL), \'reserved\', \'payment\', %gateway%, %txn%, UTC_TIMESTAMP(), UTC_TIMESTAMP())',
			'INSERT INTO {payments} (gateway, transaction_id, scope_key, number, amount, currency, period, created_at) VALUES (%gateway%, %txn%, %scope%, @cf_number, %amount%, %currency%, %period%, UTC_TIMESTAMP())',
			'INSERT INTO {chain} (scope_key, seq, number, event, gateway, transaction_id, amount, currency, post_id, reason, event_at, prev_hash, hash) VALUES (%scope%, @cf_seq, @cf_number, \'issued\', %gateway%, %txn%, %amount%, %currency%, NULL, NULL, %at%, @cf_prev, IF(ROW_COUNT() = 1, @cf_hash, NULL))',
			'COMMIT',
		),
		// The recorded allocation's packet: see allocate_recorded().
		'registry.recorded_one_trip'          => array(
			'START TRANSACTION',
			'UPDATE {sequences} SET current_value = LAST_INSERT_ID(@cf_number := current_value + 1), chain_seq = (@cf_seq := chain_seq + 1), chain_head = (@cf_hash := SHA2(CONCAT(%chain_before_prev%, (@cf_prev := COALESCE(chain_head, \'0000000000000000000000000000000000000000000000000000000000000000\')), %chain_before_number%, LENGTH(@cf_number), \':\', @cf_number, %chain_after_number%), 256)), chain_from = COALESCE(chain_from, @cf_number) WHERE scope_key = %scope% AND closed_by IS NULL',
			'INSERT INTO {numbers} (scope_key, number, status, source, claim, request_key, created_at, updated_at) VALUES (%scope%, IF(ROW_COUNT() = 1, @cf_number, NULL), \'unconfirmed\', %source%, %call%, %request_key%, UTC_TIMESTAMP(), UTC_TIMESTAMP())',
			'INSERT INTO {chain} (scope_key, seq, number, event, gateway, transaction_id, amount, currency, post_id, reason, event_at, prev_hash, hash) VALUES (%scope%, @cf_seq, @cf_number, \'issued\', NULL, NULL, NULL, NULL, NULL, NULL, %at%, @cf_prev, IF(ROW_COUNT() = 1, @cf_hash, NULL))',
			'COMMIT',
		),
		// A held payment's completion: see complete_in_one_trip().
		'registry.complete_one_trip'          => array(
			'START TRANSACTION',
			'UPDATE {sequences} SET current_value = LAST_INSERT_ID(@cf_number := current_value + 1), chain_seq = (@cf_seq := chain_seq + 1), chain_head = (@cf_hash := SHA2(CONCAT(%chain_before_prev%, (@cf_prev := COALESCE(chain_head, \'0000000000000000000000000000000000000000000000000000000000000000\')), %chain_before_number%, LENGTH(@cf_number), \':\', @cf_number, %chain_after_number%), 256)), chain_from = COALESCE(chain_from, @cf_number) WHERE scope_key = %scope% AND closed_by IS NULL',
			'UPDATE {payments} SET number = IF(ROW_COUNT() = 1, @cf_number, NULL) WHERE gateway = %gateway% AND transaction_id = %txn% AND number IS NULL AND scope_key = %scope% AND amount <=> %amount% AND currency <=> %currency%',
			'INSERT INTO {numbers} (scope_key, number, status, source, gateway, transaction_id, created_at, updated_at) VALUES (%scope%, IF(ROW_COUNT() = 1, @cf_number, NULL), \'reserved\', \'payment\', %gateway%, %txn%, UTC_TIMESTAMP(), UTC_TIMESTAMP())',
			'INSERT INTO {chain} (scope_key, seq, number, event, gateway, transaction_id, amount, currency, post_id, reason, event_at, prev_hash, hash) VALUES (%scope%, @cf_seq, @cf_number, \'issued\', %gateway%, %txn%, %amount%, %currency%, NULL, NULL, %at%, @cf_prev, IF(ROW_COUNT() = 1, @cf_hash, NULL))',
			'COMMIT',
		),
	);

	/**
	 * SQL for $prefix: the statements this backend sends, by name.
	 *
	 * @param string $prefix Table prefix (letters, digits, _).
	 * @return string[]
	 */
	public static function statements( $prefix ) {
		$names = array(
			'{sequences}'  => "`{$prefix}invoice_sequences`",
			'{numbers}'    => "`{$prefix}counterfoil_numbers`",
			'{payments}'   => "`{$prefix}counterfoil_payments`",
			'{chain}'      => "`{$prefix}counterfoil_chain`",
			'{claim_node}' => self::CLAIM_NODE,
		);
		return array_map(
			function ( $sql ) use ( $names ) {
				return strtr( is_array( $sql ) ? implode( ";\n", $sql ) : $sql, $names );
			},
			self::SQL
		);
	}

	/** @var string[] This prefix's statements (statements()). */
	private $sql;

	/** @var string */
	private $prefix;
	/** @var string */
	private $format;
	/** @var int */
	private $timeout_ms;
	/** @var int */
	private $connect_timeout_ms;
	/** @var int */
	private $fail_back_after_ms;
	/** @var bool Statements sent asynchronously and awaited with mysqli_poll(). */
	private $async;

	/** @var bool A payment's first delivery sent in one round trip. */
	private $one_trip;

	/** @var int The connection's read timeout, in seconds (MYSQLI_OPT_READ_TIMEOUT). */
	private $read_timeout_s = 0;
	/**
	 * @var bool The connection is to a node of a cluster where every node
	 * writes and conflicts abort transactions from outside (a Galera node, a
	 * Group Replication member in multi-primary mode): no one-trip packets
	 * there. Set only by a connection whose checks all passed.
	 */
	private $multi_writer = false;
	/** @var float|null The current call's deadline (microtime), null between calls. */
	private $deadline;
	/** @var mysqli|null */
	private $db;
	/** @var int Index in counterfoil_db_nodes() of the open connection's node. */
	private $node = 0;
	/** @var float|null Since when the connection is on a later node. */
	private $on_later_node_since;
	/** @var string|null The cluster identity of the first node of a list vetted. */
	private $cluster;
	/** @var array Counters for tests and monitoring. */
	public $stats = array(
		'connects'       => 0,
		'retries'        => 0,
		'one_trip'       => 0,
		'confirmed'      => 0,
		'unconfirmed'    => 0,
		'skipped'        => 0,
		'skipped_reason' => null,
	);

	/**
	 * @param string $table_prefix $wpdb->prefix.
	 * @param string $format       Number template.
	 */
	public function __construct( $table_prefix, $format ) {
		if ( ! preg_match( '/^[A-Za-z0-9_]{0,32}$/', $table_prefix ) ) {
			throw new InvalidArgumentException( 'invalid argument `table_prefix`: only letters, digits and _ are allowed' );
		}
		Counterfoil_Rules::parse_format( $format );
		$this->prefix     = $table_prefix;
		$this->sql        = self::statements( $table_prefix );
		$this->format     = $format;
		/**
		 * The deadline of each database call, in milliseconds (default 5000).
		 *
		 * @param int $timeout_ms Milliseconds.
		 */
		$this->timeout_ms         = max( 1, (int) apply_filters( 'counterfoil_timeout_ms', 5000 ) );
		// At most half the deadline by default, so that a dark first node
		// leaves the next one at least a whole second (mysqli's unit).
		/**
		 * The pure-PHP backend's connect timeout, in milliseconds (whole seconds
		 * for mysqli; at most the call's deadline).
		 *
		 * @param int $connect_timeout_ms Milliseconds.
		 */
		$this->connect_timeout_ms = min( $this->timeout_ms, max( 1000, (int) apply_filters( 'counterfoil_connect_timeout_ms', min( 3000, intdiv( $this->timeout_ms, 2 ) ) ) ) );
		/**
		 * With a node list: how long to stay on a later node before trying the
		 * earlier ones again, in milliseconds (default 30000).
		 *
		 * @param int $fail_back_after_ms Milliseconds.
		 */
		$this->fail_back_after_ms = max( 0, (int) apply_filters( 'counterfoil_fail_back_after_ms', 30000 ) );
		// Off only where mysqli_poll() does not work (PHP compiled to
		// WebAssembly): statements then wait at most the read timeout, in
		// whole seconds.
		/**
		 * Whether the pure-PHP backend waits for its statements asynchronously
		 * (so a frozen server is abandoned at the deadline). Default true.
		 *
		 * @param bool $async True to wait asynchronously.
		 */
		$this->async = (bool) apply_filters( 'counterfoil_async_statements', true );
		/**
		 * Whether a payment's first delivery, a held payment's completion
		 * and a recorded allocation's first try are sent in one round trip
		 * (mysqli multi_query; the
		 * core's one_trip_payments), so the series' lock is held only while
		 * the server works. Off: the flow of several statements (the
		 * benchmarks' baseline).
		 *
		 * @param bool $one_trip Default true.
		 */
		$this->one_trip = (bool) apply_filters( 'counterfoil_one_trip_payments', true );
	}

	public function name() {
		return 'php';
	}

	private function sequences() {
		return "`{$this->prefix}invoice_sequences`";
	}

	private function numbers() {
		return "`{$this->prefix}counterfoil_numbers`";
	}

	private function payments() {
		return "`{$this->prefix}counterfoil_payments`";
	}

	public function initialize( $scope, $start ) {
		Counterfoil_Rules::scope_key( $scope );
		$counter = Counterfoil_Rules::counter_for_start( $start );
		return $this->attempt(
			function () use ( $scope, $counter, $start ) {
				$r = $this->execute( $this->sql['series.initialize'], 'sii', array( $scope, $counter, $start ) );
				if ( self::ER_DUP_ENTRY === $r['errno'] ) {
					return false;
				}
				$this->check( $r );
				return true;
			}
		);
	}

	public function initialize_planned( $scope, $plan, $start ) {
		Counterfoil_Rules::scope_key( $scope );
		Counterfoil_Rules::plan( $plan );
		Counterfoil_Rules::counter_for_start( $start );
		$previous = null;
		$mine     = Counterfoil_Rules::issuer_and_period( $scope );
		if ( 'continue' === $plan && null !== $mine ) {
			$pattern  = addcslashes( $mine[0], '\\%_' ) . ':%';
			$rows     = $this->attempt(
				function () use ( $pattern ) {
					return $this->select( $this->sql['series.list_like'], 's', array( $pattern ) );
				}
			);
			$found    = Counterfoil_Rules::previous_series( $scope, array_map( function ( $r ) { return array( $r[0], (int) $r[1] ); }, $rows ) );
			$previous = null === $found ? null : $found[0];
		}
		if ( null === $previous ) {
			$first = Counterfoil_Rules::start_for_new_series( $plan, $start, null );
			return array(
				'start'   => $first,
				'created' => null === $first ? false : $this->initialize( $scope, $first ),
			);
		}
		// As the core: one transaction under the previous series' row lock
		// (no allocation of it in flight), the new series at its counter + 1,
		// the previous series closed in favour of the new one.
		return $this->attempt(
			function () use ( $scope, $start, $previous ) {
				return $this->transaction(
					function () use ( $scope, $start, $previous ) {
						$rows = $this->select( $this->sql['series.lock_series'], 's', array( $previous ) );
						if ( ! $rows ) {
							throw new DatabaseUnavailableException( "unexpected answer from the database: series `$previous` disappeared while `$scope` was made from it" );
						}
						Counterfoil_Rules::may_continue( $previous, $rows[0][1], $scope );
						$first   = Counterfoil_Rules::start_for_new_series( 'continue', $start, (int) $rows[0][0] );
						$counter = Counterfoil_Rules::counter_for_start( $first );
						$r       = $this->execute( $this->sql['series.initialize'], 'sii', array( $scope, $counter, $first ) );
						if ( self::ER_DUP_ENTRY === $r['errno'] ) {
							return array(
								'start'   => $first,
								'created' => false,
							);
						}
						$this->check( $r );
						if ( null === $rows[0][1] ) {
							$r = $this->check( $this->execute( $this->sql['series.close'], 'ss', array( $scope, $previous ) ) );
							if ( 1 !== $r['affected'] ) {
								throw new DatabaseUnavailableException( "unexpected answer from the database: closing the previous series changed {$r['affected']} rows, not one; nothing was kept" );
							}
						}
						return array(
							'start'   => $first,
							'created' => true,
						);
					}
				);
			}
		);
	}

	public function hold_payment( $scope, $gateway, $transaction_id, $amount, $currency, $year, $month ) {
		Counterfoil_Rules::scope_key( $scope );
		Counterfoil_Rules::payment_ref( $gateway, $transaction_id );
		Counterfoil_Rules::amount( $amount );
		Counterfoil_Rules::currency( $currency );
		$period = self::period( $year, $month );
		return $this->attempt(
			function () use ( $scope, $gateway, $transaction_id, $amount, $currency, $period ) {
				$r = $this->execute(
					$this->sql['registry.insert_held_payment'],
					'ssssss',
					array( $gateway, $transaction_id, $scope, $amount, $currency, $period )
				);
				if ( self::ER_DUP_ENTRY === $r['errno'] ) {
					$found = $this->find_payment( $gateway, $transaction_id );
					return null === $found ? array( 'status' => 'held', 'created' => false ) : $found;
				}
				$this->check( $r );
				return array(
					'status'  => 'held',
					'created' => true,
				);
			}
		);
	}

	/** A period as stored with a held payment: YYYY-MM (the core's Period rules). */
	private static function period( $year, $month ) {
		if ( ! is_int( $year ) || $year < 1 || $year > 9999 ) {
			throw new InvalidArgumentException( sprintf( 'invalid number format: year %s is outside 1..=9999 (at byte 0)', var_export( $year, true ) ) ); // phpcs:ignore WordPress.PHP.DevelopmentFunctions.error_log_var_export -- the value shown in an exception's message (a string quoted, a number bare), not debug output.
		}
		if ( ! is_int( $month ) || $month < 1 || $month > 12 ) {
			throw new InvalidArgumentException( sprintf( 'invalid number format: month %s is outside 1..=12 (at byte 0)', var_export( $month, true ) ) ); // phpcs:ignore WordPress.PHP.DevelopmentFunctions.error_log_var_export -- the value shown in an exception's message (a string quoted, a number bare), not debug output.
		}
		return sprintf( '%04d-%02d', $year, $month );
	}

	public function advance( $scope, $next ) {
		Counterfoil_Rules::scope_key( $scope );
		$counter = Counterfoil_Rules::counter_for_next( $next );
		return $this->attempt(
			function () use ( $scope, $counter ) {
				$r = $this->check( $this->execute( $this->sql['series.advance'], 'is', array( $counter, $scope ) ) );
				if ( 1 === $r['affected'] ) {
					return true;
				}
				$this->read_current( $scope ); // Throws SeriesNotFoundException when missing.
				return false;
			}
		);
	}

	/**
	 * Allocates and records a number in one transaction, as the core: the
	 * row is written unconfirmed and marked issued once the COMMIT was
	 * answered; a try whose COMMIT lost its answer may have committed, and
	 * the retry voids that number (if its row exists) with the reason
	 * Counterfoil_Rules::UNANSWERED_REASON before taking its own.
	 */
	public function allocate_recorded( $scope, $source, $request_key = null ) {
		Counterfoil_Rules::scope_key( $scope );
		Counterfoil_Rules::source( $source );
		if ( null !== $request_key ) {
			Counterfoil_Rules::request_key( $request_key );
		}
		// This call's mark on its registry rows: a retry voids only rows
		// with it, never a number another call issued after a rollback. (A
		// keyed call finds its own committed row by its key instead.)
		$call       = 'call-' . bin2hex( random_bytes( 16 ) );
		$committing = array();
		// A try sent the call's packet in one trip and its answer did not
		// arrive: it may have committed a number no try knows.
		$unanswered = false;
		return $this->attempt(
			function () use ( $scope, $source, $call, $request_key, &$committing, &$unanswered ) {
				if ( ! $committing && ! $unanswered ) {
					$unanswered = true;
					$number     = $this->recorded_in_one_trip( $scope, $source, $call, $request_key );
					$unanswered = false;
					if ( null !== $number ) {
						if ( $this->confirms_commits() ) {
							$this->confirm_taken( $scope, $number, $call );
						} else {
							$this->confirm_recorded( $scope, $number, $call );
						}
						return $number;
					}
				}
				try {
					$taken = $this->transaction(
						function () use ( $scope, $source, $call, $request_key, &$committing, $unanswered ) {
							if ( null !== $request_key ) {
								$found = $this->by_request_key( $scope, $request_key );
								if ( null !== $found ) {
									return $found;
								}
							} else {
								$numbers = $committing;
								if ( $unanswered ) {
									// A locking read: sees a packet that committed; one
									// still running is waited for under REPEATABLE READ
									// only (the core's flows::recorded doc), else its
									// number stays unconfirmed, never handed out again.
									foreach ( $this->select( $this->sql['registry.unconfirmed_of_call'], 'ss', array( $scope, $call ) ) as $row ) {
										if ( ! in_array( (int) $row[0], $numbers, true ) ) {
											$numbers[] = (int) $row[0];
										}
									}
								}
								foreach ( $numbers as $lost ) {
									$r = $this->check( $this->execute( $this->sql['registry.void_unanswered'], 'ssis', array( Counterfoil_Rules::UNANSWERED_REASON, $scope, $lost, $call ) ) );
									if ( 1 === $r['affected'] ) {
										$this->chain_append( Counterfoil_Chain::void( $scope, $lost, Counterfoil_Rules::UNANSWERED_REASON ) );
									}
								}
							}
							$number = $this->allocate_open_in( $scope, 1 );
							$r      = null === $request_key
								? $this->execute( $this->sql['registry.insert_unconfirmed_by_call'], 'siss', array( $scope, $number, $source, $call ) )
								: $this->execute( $this->sql['registry.insert_keyed_by_call'], 'sisss', array( $scope, $number, $source, $call, $request_key ) );
							if ( null !== $request_key && self::ER_DUP_ENTRY === $r['errno'] ) {
								// The same key at the same moment: answered after the rollback.
								throw new Counterfoil_Same_Request( $number );
							}
							$this->check_registry_insert( $r, $scope, $number );
							$this->chain_append( Counterfoil_Chain::issued( $scope, $number ) );
							$committing[] = $number;
							return array( $number, $call, true );
						}
					);
				} catch ( Counterfoil_Same_Request $e ) {
					$taken = $this->by_request_key( $scope, $request_key );
					if ( null === $taken ) {
						$this->check_registry_insert( array( 'errno' => self::ER_DUP_ENTRY ), $scope, $e->number );
					}
				}
				list( $number, $mark ) = $taken;
				if ( isset( $taken[2] ) && $this->confirms_commits() ) {
					$this->confirm_taken( $scope, $number, $mark );
					return $number;
				}
				$this->confirm_recorded( $scope, $number, $mark );
				return $number;
			}
		);
	}

	/**
	 * The COMMIT was answered (or a repeat found its number): the caller has
	 * the number. As the core: idempotent, and a failure leaves it
	 * unconfirmed.
	 */
	private function confirm_recorded( $scope, $number, $mark ) {
		try {
			$this->execute( $this->sql['registry.confirm_by_call'], 'sis', array( $scope, $number, $mark ) );
		} catch ( Counterfoil_Retryable $e ) {
			unset( $e ); // Lost on the way: the number stays unconfirmed; the caller has it.
		}
	}

	/**
	 * A number this try's transaction took, on a node of a cluster where
	 * every node writes (the core's flows::recorded::told): marked issued,
	 * and told only when the marking found its unconfirmed row. A COMMIT
	 * answered OK whose write set the cluster aborted left no row: its
	 * number is not told. A lost statement is retried by attempt(), and the
	 * retry voids the number as unanswered.
	 *
	 * @throws DatabaseUnavailableException When the row is not there.
	 */
	private function confirm_taken( $scope, $number, $mark ) {
		++$this->stats['confirmed'];
		$r = $this->check( $this->execute( $this->sql['registry.confirm_by_call'], 'sis', array( $scope, $number, $mark ) ) );
		if ( 1 !== $r['affected'] ) {
			++$this->stats['unconfirmed'];
			throw new DatabaseUnavailableException( sprintf( 'allocate_recorded: the database answered the COMMIT, but the work was not found when read back on the same node (number %d of `%s` has no unconfirmed row of this call); the number was not handed out; the outcome is unknown (a number may have been skipped, never repeated): try again', $number, $scope ) );
		}
	}

	/**
	 * A recorded allocation's first try in one round trip (the core's
	 * RecordedStatements::record_in_one_trip, the same packet:
	 * tests/vectors/one_trip_packets.json): the number, committed with its
	 * registry row `unconfirmed`; null when the flow of several statements
	 * decides (the series missing or closed, the request key taken, …;
	 * nothing changed).
	 *
	 * @return int|null
	 */
	private function recorded_in_one_trip( $scope, $source, $call, $request_key ) {
		if ( ! $this->packet_fits() ) {
			return null;
		}
		$text           = self::one_trip_recorded_packet( $this->sql['registry.recorded_one_trip'], $scope, $source, $call, $request_key, gmdate( 'Y-m-d H:i:s' ) );
		list( $number ) = $this->send_one_trip( $text, 'recorded', self::ONE_TRIP_RECORDED_CHAIN_ENTRY, null, array( 'call', $scope, $call ) );
		return $number;
	}

	/**
	 * The number a request key took in a series, as [number, the call's
	 * mark], or null (the core's payment::repeat_of_request: a voided number
	 * is never handed out again).
	 */
	private function by_request_key( $scope, $request_key ) {
		$rows = $this->select( $this->sql['registry.find_by_request'], 'ss', array( $scope, $request_key ) );
		if ( ! $rows ) {
			return null;
		}
		list( $number, $status, $mark ) = $rows[0];
		if ( ! Counterfoil_Rules::repeat_returns( $status ) ) {
			throw new DatabaseUnavailableException( "unexpected answer from the database: request key `$request_key` took number $number of series `$scope`, which is now `$status`; it is not handed out again" );
		}
		return array( (int) $number, (string) $mark );
	}

	public function record_payment( $scope, $gateway, $transaction_id, $amount, $currency, $year = null, $month = null ) {
		Counterfoil_Rules::scope_key( $scope );
		Counterfoil_Rules::payment_ref( $gateway, $transaction_id );
		Counterfoil_Rules::amount( $amount );
		Counterfoil_Rules::currency( $currency );
		if ( ( null === $year ) !== ( null === $month ) ) {
			throw new InvalidArgumentException( 'invalid argument `month`: give the period\'s year and month together' );
		}
		$period = null === $year ? null : self::period( $year, $month );
		return $this->attempt(
			function () use ( $scope, $gateway, $transaction_id, $amount, $currency, $period ) {
				$done = $this->record_in_one_trip( $scope, $gateway, $transaction_id, $amount, $currency, $period );
				if ( is_array( $done ) ) {
					return $this->confirmed_payment( $gateway, $transaction_id, $done );
				}
				if ( 'repeat' === $done ) {
					return $this->recorded_before( $gateway, $transaction_id );
				}
				$this->check( $this->execute( 'START TRANSACTION' ) );
				$r = $this->execute(
					$this->sql['registry.insert_payment'],
					'ssssss',
					array( $gateway, $transaction_id, $scope, $amount, $currency, $period )
				);
				if ( self::ER_DUP_ENTRY === $r['errno'] ) {
					// Delivered before: that delivery committed its number, or
					// was held for its series (then this one numbers it).
					$this->check( $this->execute( 'ROLLBACK' ) );
					return $this->recorded_before( $gateway, $transaction_id );
				}
				try {
					$this->check( $r );
					$record = $this->number_payment( $r['insert_id'], $scope, array( $gateway, $transaction_id, $amount, $currency ), $period );
					$this->check( $this->execute( 'COMMIT' ) );
				} catch ( Throwable $e ) {
					$this->rollback_quietly();
					throw $e;
				}
				return $this->confirmed_payment( $gateway, $transaction_id, $record );
			}
		);
	}

	/**
	 * A payment's first delivery in one round trip (the core's
	 * flows::payments::record_in_one_trip, the same packet:
	 * tests/vectors/one_trip_packets.json): the statements of
	 * registry.payment_one_trip sent as one mysqli multi_query, ending in
	 * COMMIT. A packet that stopped part-way is rolled back before anything
	 * else. Sent only with at least the read timeout left of the call's
	 * deadline and a second more (packet_fits()), else the flow of several
	 * statements runs.
	 *
	 * @return array|string The payment's record; 'repeat' (recorded before,
	 *                      nothing changed); 'several' (not in one trip:
	 *                      the series missing or closed, …; nothing changed).
	 */
	private function record_in_one_trip( $scope, $gateway, $transaction_id, $amount, $currency, $period ) {
		if ( ! $this->packet_fits() ) {
			return 'several';
		}
		$text                        = self::one_trip_packet( $this->sql['registry.payment_one_trip'], $scope, $gateway, $transaction_id, $amount, $currency, $period, gmdate( 'Y-m-d H:i:s' ) );
		list( $number, $at, $errno ) = $this->send_one_trip( $text, 'payment', self::ONE_TRIP_CHAIN_ENTRY, self::ONE_TRIP_PAYMENT_ROW, array( 'payment', $scope, $gateway, $transaction_id ) );
		if ( null !== $number ) {
			return self::reserved_record( $scope, $number, $period );
		}
		return self::ONE_TRIP_PAYMENT_ROW === $at && self::ER_DUP_ENTRY === $errno ? 'repeat' : 'several';
	}

	/**
	 * A held payment's completion in one round trip (the core's
	 * complete_in_one_trip, the same packet: registry.complete_one_trip
	 * filled as the payment's, with the held row's series, amount and
	 * currency): its record, or null when the flow of several statements
	 * decides (numbered meanwhile, the series missing or closed, …; nothing
	 * changed).
	 *
	 * @return array|null
	 */
	private function complete_in_one_trip( $scope, $gateway, $transaction_id, $amount, $currency, $period ) {
		if ( ! $this->packet_fits() ) {
			return null;
		}
		$text           = self::one_trip_packet( $this->sql['registry.complete_one_trip'], $scope, $gateway, $transaction_id, $amount, $currency, $period, gmdate( 'Y-m-d H:i:s' ) );
		list( $number ) = $this->send_one_trip( $text, 'completion', self::ONE_TRIP_CHAIN_ENTRY, null, array( 'payment', $scope, $gateway, $transaction_id ) );
		return null === $number ? null : self::reserved_record( $scope, $number, $period );
	}

	/**
	 * Sends the one-trip packet $text (a transaction ending in COMMIT; the
	 * core's MysqlStatements::send_one_trip): [the number it took, position,
	 * 0] when it committed; else, its transaction rolled back first, [null,
	 * the position and errno it stopped at] for a 1062 at $repeat_at (the
	 * payment recorded before) or a refusal the flow of several statements
	 * names (hands_over() up to $last); any other failure is thrown.
	 *
	 * @param string   $text      The filled packet.
	 * @param string   $name      What it is, for an unexpected answer.
	 * @param int      $last      The last position whose refusal hands over.
	 * @param int|null $repeat_at The position where a 1062 is a repeat.
	 * @param array    $owner     Whose number it is (packet_number()).
	 * @return array
	 */
	private function send_one_trip( $text, $name, $last, $repeat_at, array $owner ) {
		list( $at, $errno, $error, $ids ) = $this->send_packet( $text );
		$number = 0 === $errno ? $this->packet_number( $ids, $owner ) : null;
		if ( null !== $number ) {
			++$this->stats['one_trip'];
			return array( $number, $at, 0 );
		}
		// Stopped part-way (or answered without its number): the
		// transaction is open; roll it back first.
		$this->rollback_quietly();
		if ( ( $repeat_at === $at && self::ER_DUP_ENTRY === $errno ) || self::hands_over( $at, $errno, $last ) ) {
			return array( null, $at, $errno );
		}
		if ( 0 === $errno ) {
			throw new DatabaseUnavailableException( "unexpected answer from the database: the one-trip $name packet committed but its allocation answered no number" );
		}
		$this->check( $this->failure( $errno, $error ) );
		return array( null, $at, $errno ); // Not reached: check() throws on an error.
	}

	/**
	 * A payment this call numbered (the core's PaymentRecord::reserved):
	 * $number of $scope, reserved for it, received in $period.
	 *
	 * @return array
	 */
	private static function reserved_record( $scope, $number, $period ) {
		return array(
			'scope_key' => $scope,
			'number'    => $number,
			'created'   => true,
			'status'    => 'reserved',
			'post_id'   => null,
			'period'    => $period,
		);
	}

	/**
	 * Whether a one-trip packet may be sent now: it is on, and the time left
	 * of the call holds the packet's worst wait (multi_query cannot be
	 * awaited with mysqli_poll(): a frozen server costs the whole read
	 * timeout) and then a whole second more, so that the call can still
	 * reconnect and try again within its deadline (mysqli's connect timeout
	 * is in whole seconds). Otherwise the several statements, each awaited
	 * for exactly the time left, use the whole budget.
	 */
	private function packet_fits() {
		return $this->one_trip && ! $this->multi_writer && $this->remaining_ms() >= 1000 * max( 1, $this->read_timeout_s ) + self::RETRY_RESERVE_MS;
	}

	/**
	 * The number a one-trip packet that committed took (the core's
	 * number_of_packet): its allocation's OK packet carries it; when that
	 * says 0 (a trigger on the series' table that runs a statement resets
	 * it), the packet's own user variable, trusted only when the rows the
	 * packet wrote hold it for $owner: a user variable outlives its packet
	 * on a persistent connection, and one left by an earlier packet is
	 * another payment's number. Null when neither has it.
	 *
	 * @param int[] $ids   Each statement's insert id (send_packet()).
	 * @param array $owner ['payment', series, gateway, transaction id]: the
	 *                     payment row and its registry row hold the number;
	 *                     ['call', series, call mark]: the registry holds it
	 *                     unconfirmed with the call's mark.
	 * @return int|null
	 */
	private function packet_number( array $ids, array $owner ) {
		if ( ! empty( $ids[ self::ONE_TRIP_ALLOCATION ] ) ) {
			return $ids[ self::ONE_TRIP_ALLOCATION ];
		}
		$rows = $this->select( 'SELECT @cf_number' );
		if ( ! isset( $rows[0][0] ) || (int) $rows[0][0] <= 0 ) {
			return null;
		}
		$number = (int) $rows[0][0];
		if ( 'payment' === $owner[0] ) {
			$found = $this->select( $this->sql['registry.find_payment'], 'ss', array( $owner[2], $owner[3] ) );
			$holds = $found && $owner[1] === $found[0][0] && null !== $found[0][1] && $number === (int) $found[0][1] && null !== $found[0][2];
		} else {
			$found = $this->select( $this->sql['registry.unconfirmed_of_call'], 'ss', array( $owner[1], $owner[2] ) );
			$holds = in_array( $number, array_map( 'intval', array_column( $found, 0 ) ), true );
		}
		return $holds ? $number : null;
	}

	/**
	 * Sends a multi-statement packet and reads every answer: [position of
	 * the statement that failed (or of the last one), errno, error, each
	 * statement's insert id from its own OK packet (0 where it set none)].
	 *
	 * @param string $text The packet.
	 * @return array
	 */
	private function send_packet( $text ) {
		$at  = 0;
		$ids = array();
		try {
			if ( ! $this->db->multi_query( $text ) ) { // phpcs:ignore WordPress.DB.RestrictedClasses,WordPress.DB.PreparedSQL -- own connection (class doc); every value a hex literal (one_trip_packet()).
				return array( 0, (int) $this->db->errno, $this->db->error, $ids );
			}
			while ( true ) {
				$ids[ $at ] = (int) $this->db->insert_id;
				$result     = $this->db->store_result();
				if ( $result instanceof mysqli_result ) {
					$result->free();
				}
				if ( ! $this->db->more_results() ) {
					return array( $at, 0, '', $ids );
				}
				++$at;
				if ( ! $this->db->next_result() ) {
					return array( $at, (int) $this->db->errno, $this->db->error, $ids );
				}
			}
		} catch ( mysqli_sql_exception $e ) {
			return array( $at, (int) $e->getCode(), $e->getMessage(), $ids );
		}
	}

	/**
	 * The one-trip packet $template (registry.payment_one_trip) filled with a
	 * payment's values, as the core fills it
	 * (counterfoil_core::mysql::sql::one_trip_payment_packet): every value a
	 * hex literal, so none can end a string or start a statement.
	 *
	 * @return string
	 */
	public static function one_trip_packet( $template, $scope, $gateway, $transaction_id, $amount, $currency, $period, $at ) {
		$entry = Counterfoil_Chain::issued( $scope, 0, $gateway, $transaction_id, $amount, $currency );
		return strtr(
			$template,
			self::chain_slots( $entry, $at ) + array(
				'%gateway%'  => self::text_literal( $gateway ),
				'%txn%'      => self::text_literal( $transaction_id ),
				'%scope%'    => self::text_literal( $scope ),
				'%amount%'   => self::text_literal( $amount ),
				'%currency%' => self::text_literal( $currency ),
				'%period%'   => self::text_literal( $period ),
				'%at%'       => self::text_literal( $at ),
			)
		);
	}

	/**
	 * The recorded allocation's one-trip packet $template
	 * (registry.recorded_one_trip) filled as the core fills it
	 * (counterfoil_core::mysql::sql::one_trip_recorded_packet;
	 * tests/vectors/one_trip_packets.json).
	 */
	public static function one_trip_recorded_packet( $template, $scope, $source, $call, $request_key, $at ) {
		return strtr(
			$template,
			self::chain_slots( Counterfoil_Chain::issued( $scope, 0 ), $at ) + array(
				'%scope%'       => self::text_literal( $scope ),
				'%source%'      => self::text_literal( $source ),
				'%call%'        => self::text_literal( $call ),
				'%request_key%' => self::text_literal( $request_key ),
				'%at%'          => self::text_literal( $at ),
			)
		);
	}

	/**
	 * A one-trip packet's chain slots: the canonical input of $entry at $at
	 * around the previous hash and the number, as binary literals.
	 */
	private static function chain_slots( array $entry, $at ) {
		$entry['at'] = $at;
		list( $before_prev, $before_number, $after_number ) = Counterfoil_Rules::chain_canonical_parts( $entry );
		return array(
			'%chain_before_prev%'   => self::bytes_literal( $before_prev ),
			'%chain_before_number%' => self::bytes_literal( $before_number ),
			'%chain_after_number%'  => self::bytes_literal( $after_number ),
		);
	}

	/**
	 * Whether a one-trip packet stopped at $at by a refusal the flow of
	 * several statements names exactly (the core's dialect hands_over):
	 * 1048, 1062 or 1690 from the allocation up to the statement $last.
	 */
	private static function hands_over( $at, $errno, $last ) {
		return $at >= self::ONE_TRIP_ALLOCATION && $at <= $last && in_array( $errno, array( 1048, 1062, 1690 ), true );
	}

	/** `X'…'`: a value's bytes as a binary string literal. */
	private static function bytes_literal( $value ) {
		return "X'" . strtoupper( bin2hex( (string) $value ) ) . "'";
	}

	/** A text value for a utf8mb4 column: `_utf8mb4 X'…'`, or NULL. */
	private static function text_literal( $value ) {
		return null === $value ? 'NULL' : '_utf8mb4 ' . self::bytes_literal( $value );
	}

	/**
	 * Numbers a recorded payment inside the caller's transaction: the
	 * allocation, the registry row (reserved for the payment), the payment
	 * row's number, and the number's chain entry with the payment's facts.
	 *
	 * @param int    $payment_id The payment row.
	 * @param string $scope      Its series.
	 * @param array  $facts      [gateway, transaction id, amount, currency].
	 * @param string $period     Its period, as stored.
	 * @return array The payment's record, as record_payment() returns it.
	 */
	private function number_payment( $payment_id, $scope, array $facts, $period ) {
		list( $gateway, $transaction_id, $amount, $currency ) = $facts;
		// A closed series' payment is numbered by the series that continues it.
		list( $scope, $number ) = $this->allocate_for_payment( $scope );
		$this->record_number( $scope, $number, 'reserved', 'payment', $gateway, $transaction_id );
		$r = $this->check( $this->execute( $this->sql['registry.set_payment_number'], 'isi', array( $number, $scope, $payment_id ) ) );
		if ( 1 !== $r['affected'] ) {
			// As the core's payment::exactly_one_row: the transaction rolls back.
			throw new DatabaseUnavailableException( "unexpected answer from the database: the payment's number changed {$r['affected']} rows, not one; nothing was kept" );
		}
		$this->chain_append( Counterfoil_Chain::issued( $scope, $number, $gateway, $transaction_id, $amount, $currency ) );
		return self::reserved_record( $scope, $number, $period );
	}

	/**
	 * Gives a held payment its number, in one transaction under the payment
	 * row's lock, from the series chosen when it arrived. A series that still
	 * does not exist throws SeriesNotFoundException and changes nothing.
	 */
	private function complete_held( $gateway, $transaction_id ) {
		// (The flow of several statements; recorded_before() tries the
		// one-trip packet first.)
		$done = $this->transaction(
			function () use ( $gateway, $transaction_id ) {
				$rows = $this->select( $this->sql['registry.lock_payment'], 'ss', array( $gateway, $transaction_id ) );
				if ( ! $rows ) {
					throw new DatabaseUnavailableException( "unexpected answer from the database: payment $gateway/$transaction_id disappeared" );
				}
				list( $id, $scope, $number, $period, $amount, $currency ) = $rows[0];
				if ( null !== $number ) {
					return array( $this->find_payment( $gateway, $transaction_id ), false ); // Numbered meanwhile.
				}
				return array( $this->number_payment( (int) $id, $scope, array( $gateway, $transaction_id, $amount, $currency ), $period ), true );
			}
		);
		list( $record, $taken ) = $done;
		return $taken ? $this->confirmed_payment( $gateway, $transaction_id, $record ) : $record;
	}

	/**
	 * The number a transaction of this call just committed, told only when
	 * it holds (the core's flows::payments::confirmed): on a node of a
	 * cluster where every node writes (Galera), the payment row is read back
	 * on the same connection and must carry $record's number in its series.
	 * A COMMIT answered OK whose write set the cluster aborted left no such
	 * row: its number is not told (DatabaseUnavailableException, not
	 * retried here; the gateway delivers again). A read that fails is
	 * retried by attempt() like any lost statement: the retry finds the row
	 * or records the payment anew.
	 *
	 * @param string $gateway        Gateway.
	 * @param string $transaction_id Transaction id.
	 * @param array  $record         What the transaction answered.
	 * @return array $record.
	 * @throws DatabaseUnavailableException When the read does not find it.
	 */
	private function confirmed_payment( $gateway, $transaction_id, array $record ) {
		if ( ! $this->confirms_commits() ) {
			return $record;
		}
		++$this->stats['confirmed'];
		$rows = $this->select( $this->sql['registry.find_payment'], 'ss', array( $gateway, $transaction_id ) );
		if ( $rows && (string) $rows[0][0] === (string) $record['scope_key'] && null !== $rows[0][1] && (int) $rows[0][1] === (int) $record['number'] ) {
			return $record;
		}
		++$this->stats['unconfirmed'];
		$found = $rows ? sprintf( 'series `%s`, number %s', $rows[0][0], null === $rows[0][1] ? 'none' : $rows[0][1] ) : 'no payment row';
		throw new DatabaseUnavailableException( sprintf( 'record_payment: the database answered the COMMIT, but the work was not found when read back on the same node (payment %s/%s was told number %d of `%s`; read back: %s); the number was not handed out; the outcome is unknown (a number may have been skipped, never repeated): try again', $gateway, $transaction_id, $record['number'], $record['scope_key'], $found ) );
	}

	/**
	 * Whether a numbering transaction's COMMIT is read back before its
	 * number is told (the core's ConfirmCommits): by default on a node of a
	 * cluster where every node writes.
	 *
	 * @return bool
	 */
	private function confirms_commits() {
		/**
		 * When the pure-PHP backend reads a numbering transaction back after
		 * its COMMIT before telling its number (the core's
		 * StoreConfig::confirm_commits): 'clusters' (the default: on a node
		 * of a cluster where every node writes, Galera), 'always' (on every
		 * server: a proxy in between that may answer for the server), or
		 * 'never' (a benchmark's baseline only: a COMMIT answered OK whose
		 * write set the cluster aborted would tell a number the cluster does
		 * not hold).
		 *
		 * @param string $when 'clusters', 'always' or 'never'.
		 */
		$when = apply_filters( 'counterfoil_confirm_commits', 'clusters' );
		return 'always' === $when || ( 'never' !== $when && $this->multi_writer );
	}

	public function writer_host() {
		$hosts = counterfoil_db_nodes();
		if ( count( $hosts ) < 2 ) {
			return (string) $hosts[0];
		}
		// Connected (with the fail-back rule) by attempt(), as any call.
		return $this->attempt(
			function () use ( $hosts ) {
				return (string) $hosts[ $this->node ];
			}
		);
	}

	public function claim_number( $scope, $number, $claim, $stale_seconds ) {
		Counterfoil_Rules::scope_key( $scope );
		Counterfoil_Rules::claim_id( $claim );
		return $this->attempt(
			function () use ( $scope, $number, $claim, $stale_seconds ) {
				$r = $this->check( $this->execute( $this->sql['registry.claim_number'], 'ssii', array( $claim, $scope, $number, $stale_seconds ) ) );
				if ( 1 === $r['affected'] ) {
					return array( 'status' => 'claimed', 'post_id' => null );
				}
				$rows = $this->select( $this->sql['registry.number_state'], 'si', array( $scope, $number ) );
				if ( ! $rows ) {
					throw new DatabaseUnavailableException( sprintf( 'unexpected answer from the database: number %d of series `%s` is not in the registry', $number, $scope ) );
				}
				list( $status, $post_id, $holder ) = $rows[0];
				if ( 'issued' === $status && null !== $post_id ) {
					return array( 'status' => 'issued', 'post_id' => (int) $post_id );
				}
				if ( 'void' === $status ) {
					return array( 'status' => 'void', 'post_id' => null );
				}
				if ( 'creating' === $status ) {
					return array( 'status' => $holder === $claim ? 'claimed' : 'busy', 'post_id' => null );
				}
				throw new DatabaseUnavailableException( sprintf( 'unexpected answer from the database: number %d of series `%s` is `%s` without an invoice', $number, $scope, $status ) );
			}
		);
	}

	public function issue_claimed( $scope, $number, $claim, $post_id, $gateway, $transaction_id ) {
		Counterfoil_Rules::scope_key( $scope );
		Counterfoil_Rules::claim_id( $claim );
		return $this->attempt(
			function () use ( $scope, $number, $claim, $post_id, $gateway, $transaction_id ) {
				return $this->transaction(
					function () use ( $scope, $number, $claim, $post_id, $gateway, $transaction_id ) {
						$r = $this->check( $this->execute( $this->sql['registry.issue_claimed'], 'isis', array( $post_id, $scope, $number, $claim ) ) );
						if ( 1 !== $r['affected'] ) {
							// Lost, or issued by this call's earlier try whose
							// COMMIT answer was lost (the core's payment::issued_to).
							$state = $this->select( $this->sql['registry.number_state'], 'si', array( $scope, $number ) );
							if ( ! $state || ! Counterfoil_Rules::issued_to( $state[0][0], $state[0][1], $post_id ) ) {
								return false;
							}
						}
						if ( null !== $gateway && null !== $transaction_id ) {
							$this->check( $this->execute( $this->sql['registry.set_payment_post'], 'iss', array( $post_id, $gateway, $transaction_id ) ) );
						}
						return true;
					}
				);
			}
		);
	}

	public function release_claim( $scope, $number, $claim ) {
		Counterfoil_Rules::scope_key( $scope );
		Counterfoil_Rules::claim_id( $claim );
		return $this->attempt(
			function () use ( $scope, $number, $claim ) {
				$r = $this->check( $this->execute( $this->sql['registry.release_claim'], 'sis', array( $scope, $number, $claim ) ) );
				return 1 === $r['affected'];
			}
		);
	}

	public function current( $scope ) {
		Counterfoil_Rules::scope_key( $scope );
		return $this->attempt(
			function () use ( $scope ) {
				return $this->read_current( $scope );
			}
		);
	}

	public function format( $number, $year, $month ) {
		if ( $number < 0 ) {
			throw new InvalidArgumentException( sprintf( 'number must not be negative, got %d', $number ) );
		}
		return Counterfoil_Rules::render( $this->format, $number, $year, $month );
	}

	/**
	 * Renders $number with $template under period rule $rule.
	 *
	 * @param string $template Number template.
	 * @param int    $number   Number.
	 * @param int    $year     Year.
	 * @param int    $month    Month.
	 * @param string $rule     Period rule.
	 * @return string
	 */
	public function render( $template, $number, $year, $month, $rule = 'calendar-year' ) {
		if ( $number < 0 ) {
			throw new InvalidArgumentException( sprintf( 'number must not be negative, got %d', $number ) );
		}
		return Counterfoil_Rules::render( $template, $number, $year, $month, Counterfoil_Rules::period_rule( $rule ) );
	}

	/**
	 * The allocation statement: the new counter from its own result, only
	 * when exactly one row changed.
	 *
	 * @param string $scope     Scope key.
	 * @param int    $count     Numbers.
	 * @param bool   $only_open The core's allocate_open: a closed series changes no row.
	 * @return int
	 */
	private function allocate_in( $scope, $count, $only_open = false ) {
		$r = $this->execute( $this->sql[ $only_open ? 'series.allocate_open' : 'series.allocate' ], 'is', array( $count, $scope ) );
		if ( 1690 === $r['errno'] ) {
			throw new OverflowException( sprintf( 'series `%s` cannot hand out %d more number(s) without passing 18446744073709551615; the counter was left unchanged; start a new series', $scope, $count ) );
		}
		$this->check( $r );
		if ( 0 === $r['affected'] ) {
			throw new SeriesNotFoundException( sprintf( 'series `%s` does not exist; create it with initialize(scope, start) first', $scope ) );
		}
		if ( 1 !== $r['affected'] || ! is_int( $r['insert_id'] ) || $r['insert_id'] < $count ) {
			throw new DatabaseUnavailableException( sprintf( 'unexpected answer from the database: allocation changed %d rows and returned %s', $r['affected'], var_export( $r['insert_id'], true ) ) ); // phpcs:ignore WordPress.PHP.DevelopmentFunctions.error_log_var_export -- the value shown in an exception's message (a string quoted, a number bare), not debug output.
		}
		return $r['insert_id'];
	}

	/**
	 * allocate_in() of an open series (the core's allocate_open): a closed
	 * series hands out nothing and throws SeriesClosedException naming its
	 * successor.
	 *
	 * @param string $scope Scope key.
	 * @param int    $count Numbers.
	 * @return int
	 */
	private function allocate_open_in( $scope, $count ) {
		$tries = 0;
		for ( ;; ) {
			try {
				return $this->allocate_in( $scope, $count, true );
			} catch ( SeriesNotFoundException $e ) {
				list( $row, $successor ) = $this->successor( $scope );
				if ( ! Counterfoil_Rules::allocate_again( $row, $successor, $tries ) ) {
					throw Counterfoil_Rules::closed_or_missing( $scope, $row, $successor );
				}
			}
		}
	}

	/**
	 * The payment's allocation from $scope, or, when it is closed, from the
	 * series that continues it (Counterfoil_Rules::forward_to).
	 *
	 * @return array [scope key, number].
	 */
	private function allocate_for_payment( $scope ) {
		$hops  = 0;
		$tries = 0;
		for ( ;; ) {
			try {
				return array( $scope, $this->allocate_in( $scope, 1, true ) );
			} catch ( SeriesNotFoundException $e ) {
				list( $row, $successor ) = $this->successor( $scope );
				if ( ! Counterfoil_Rules::allocate_again( $row, $successor, $tries ) ) {
					$scope = Counterfoil_Rules::forward_to( $scope, $row, $successor, $hops );
				}
			}
		}
	}

	/**
	 * Whether $scope's row exists, and its closed_by (the series that
	 * continues it, or null while it is open).
	 *
	 * @return array [bool, string|null].
	 */
	private function successor( $scope ) {
		$rows = $this->select( $this->sql['series.successor'], 's', array( $scope ) );
		return array( (bool) $rows, $rows ? $rows[0][0] : null );
	}

	private function record_number( $scope, $number, $status, $source, $gateway, $transaction_id ) {
		$r = $this->execute(
			$this->sql['registry.insert_number'],
			'sissss',
			array( $scope, $number, $status, $source, $gateway, $transaction_id )
		);
		$this->check_registry_insert( $r, $scope, $number );
	}

	/**
	 * Appends an entry to its series' chain, inside the caller's
	 * transaction (Counterfoil_Chain's invariants; the core's
	 * flows::chain::append).
	 *
	 * @param array $entry The entry.
	 */
	private function chain_append( array $entry ) {
		$scope = $entry['scope_key'];
		$head  = $this->select( $this->sql['chain.head'], 's', array( $scope ) );
		if ( ! $head ) {
			throw new SeriesNotFoundException( "series `$scope` does not exist" );
		}
		list( $row, $move ) = Counterfoil_Chain::placed( $head[0], $entry );
		$r                  = $this->execute( $this->sql['chain.append'], Counterfoil_Chain::APPEND_TYPES, $row );
		if ( self::ER_DUP_ENTRY === $r['errno'] ) {
			throw Counterfoil_Chain::moved( $scope, $move[0] );
		}
		$this->check( $r );
		$r = $this->check( $this->execute( $this->sql['chain.move_head'], Counterfoil_Chain::MOVE_TYPES, $move ) );
		if ( 1 !== $r['affected'] ) {
			throw Counterfoil_Chain::moved( $scope, $move[0] );
		}
	}

	/** A registry INSERT's result; a duplicate is the readable alarm of rule 7. */
	private function check_registry_insert( array $r, $scope, $number ) {
		if ( self::ER_DUP_ENTRY === $r['errno'] ) {
			throw new DatabaseUnavailableException( sprintf( 'number %d of series `%s` is already in the registry: the counter is behind the numbers already issued (lowered by hand or restored from an old backup?); nothing was issued; run `counterfoil verify` and advance the series past its highest number', $number, $scope ) );
		}
		$this->check( $r );
	}

	/** A recorded payment with its number, or null when it is held for its series. */
	private function find_payment( $gateway, $transaction_id ) {
		$rows = $this->select(
			$this->sql['registry.find_payment'],
			'ss',
			array( $gateway, $transaction_id )
		);
		return $this->payment_found( $rows, $gateway, $transaction_id );
	}

	/**
	 * A payment an earlier delivery recorded (the core's
	 * flows::payments::recorded_before): its record, or, held for its
	 * series, numbered now: in one round trip first (complete_in_one_trip(),
	 * from the values just read), else, or when that cannot settle it,
	 * complete_held().
	 *
	 * @return array The payment's record.
	 */
	private function recorded_before( $gateway, $transaction_id ) {
		$rows = $this->select( $this->sql['registry.find_payment'], 'ss', array( $gateway, $transaction_id ) );
		if ( $rows && null === $rows[0][1] ) {
			list( $scope, , , , $period, $amount, $currency ) = $rows[0];
			$done = $this->complete_in_one_trip( $scope, $gateway, $transaction_id, $amount, $currency, $period );
			return null === $done ? $this->complete_held( $gateway, $transaction_id ) : $this->confirmed_payment( $gateway, $transaction_id, $done );
		}
		return $this->payment_found( $rows, $gateway, $transaction_id );
	}

	/**
	 * The record of registry.find_payment's $rows; null when the payment is
	 * held for its series.
	 *
	 * @return array|null
	 */
	private function payment_found( $rows, $gateway, $transaction_id ) {
		if ( $rows && null === $rows[0][1] ) {
			return null;
		}
		if ( ! $rows || null === $rows[0][2] ) {
			throw new DatabaseUnavailableException( "unexpected answer from the database: payment $gateway/$transaction_id is recorded without a registered number" );
		}
		return array(
			'scope_key' => $rows[0][0],
			'number'    => (int) $rows[0][1],
			'created'   => false,
			'status'    => $rows[0][2],
			'post_id'   => null === $rows[0][3] ? null : (int) $rows[0][3],
			'period'    => $rows[0][4],
		);
	}

	private function read_current( $scope ) {
		$rows = $this->select( $this->sql['series.current'], 's', array( $scope ) );
		if ( ! $rows ) {
			throw new SeriesNotFoundException( sprintf( 'series `%s` does not exist; create it with initialize(scope, start) first', $scope ) );
		}
		return (int) $rows[0][0];
	}

	/**
	 * Runs $work in a transaction: COMMIT on success, ROLLBACK on any failure.
	 *
	 * @param callable $work Work.
	 * @return mixed
	 */
	private function transaction( callable $work ) {
		$this->check( $this->execute( 'START TRANSACTION' ) );
		try {
			$result = $work();
			$this->check( $this->execute( 'COMMIT' ) );
			return $result;
		} catch ( Throwable $e ) {
			$this->rollback_quietly();
			throw $e;
		}
	}

	private function rollback_quietly() {
		if ( $this->db ) {
			try {
				$this->db->query( 'ROLLBACK' );
			} catch ( Throwable $ignored ) {
				$this->disconnect();
			}
		}
	}

	/**
	 * Runs $once with bounded, jittered retries of retryable failures.
	 *
	 * @param callable $once One try.
	 * @return mixed
	 */
	private function attempt( callable $once ) {
		$this->deadline = microtime( true ) + $this->timeout_ms / 1000;
		try {
			for ( $try = 1; ; $try++ ) {
				try {
					$this->connect();
					return $once();
				} catch ( Counterfoil_Retryable $e ) {
					if ( ! $e->retryable() || $try >= self::MAX_ATTEMPTS ) {
						throw $e->final_exception();
					}
					++$this->stats['retries'];
					$ceiling = min( 250000, 5000 * ( 1 << ( $try - 1 ) ) );
					$pause   = random_int( 0, $ceiling );
					if ( $this->remaining_ms() <= $pause / 1000 ) {
						throw new TimeoutException( sprintf( 'the call did not finish within %d ms (%d tries; last: %s); the database is slow or unreachable; the outcome is unknown (a number may have been skipped, never repeated)', $this->timeout_ms, $try, $e->getMessage() ) );
					}
					usleep( $pause );
				}
			}
		} finally {
			$this->deadline = null;
		}
	}

	/** Milliseconds left of the current call's deadline (the whole budget outside a call). */
	private function remaining_ms() {
		if ( null === $this->deadline ) {
			return (float) $this->timeout_ms;
		}
		return ( $this->deadline - microtime( true ) ) * 1000;
	}

	/** The timeout of a call that ran out of time with its outcome unknown. */
	private function out_of_time( $what ) {
		return new Counterfoil_Retryable( new TimeoutException( sprintf( '%s did not finish within the call\'s deadline of %d ms; the database is slow or unreachable; the outcome is unknown (a number may have been skipped, never repeated)', $what, $this->timeout_ms ) ), false );
	}

	/**
	 * Opens the connection if needed: to the first host of
	 * COUNTERFOIL_DB_NODES (an array of DB_HOST-style hosts, for a Galera
	 * cluster: the first healthy one is the writer) or DB_HOST, skipping a
	 * node that is not ready (wsrep_ready), then checks durability.
	 */
	private function connect() {
		$hosts = counterfoil_db_nodes();
		if ( $this->db ) {
			$this->fail_back( $hosts );
			return;
		}
		$last = null;
		foreach ( $hosts as $index => $host ) {
			// Whole seconds only (mysqli): never start a connect that the
			// deadline cannot hold.
			$seconds = (int) floor( min( $this->connect_timeout_ms, $this->remaining_ms() ) / 1000 );
			if ( $seconds < 1 ) {
				throw $this->out_of_time( $last ? 'connecting (' . $last->getMessage() . ')' : 'connecting' );
			}
			try {
				$this->connect_host( (string) $host, $seconds );
				$this->node                = $index;
				$this->on_later_node_since = $index > 0 ? microtime( true ) : null;
				return;
			} catch ( Counterfoil_Retryable $e ) {
				// Skipped like a down node: down, not ready, or read-only.
				++$this->stats['skipped'];
				$this->stats['skipped_reason'] = 'node ' . ( $index + 1 ) . ': ' . $e->final_exception()->getMessage();
				if ( 1 === $this->stats['skipped'] ) {
					// Once per process, and not through Counterfoil_Log: its
					// transients need $wpdb, whose server may be the one down.
					error_log( 'counterfoil: node skipped: ' . $this->stats['skipped_reason'] ); // phpcs:ignore WordPress.PHP.DevelopmentFunctions.error_log_error_log -- a failover the site owner should know of.
				}
				$last = $e;
			}
		}
		throw $last;
	}

	/**
	 * On a later node for long enough: tries the earlier ones again with a
	 * one-second connect, keeping the open connection if none answers yet.
	 *
	 * @param string[] $hosts The node list.
	 */
	private function fail_back( array $hosts ) {
		if ( null === $this->on_later_node_since || ( microtime( true ) - $this->on_later_node_since ) * 1000 < $this->fail_back_after_ms ) {
			return;
		}
		$current = $this->db;
		for ( $index = 0; $index < $this->node && $this->remaining_ms() >= 2000; $index++ ) {
			try {
				$this->db = null;
				$this->connect_host( (string) $hosts[ $index ], 1 );
				try {
					$current->close();
				} catch ( Throwable $ignored ) {
					unset( $ignored );
				}
				$this->node                = $index;
				$this->on_later_node_since = null;
				return;
			} catch ( Counterfoil_Retryable $e ) {
				unset( $e );
			} catch ( Throwable $e ) {
				// A node that refuses us by policy: stay where we are.
				unset( $e );
			}
		}
		$this->db                  = $current;
		$this->on_later_node_since = microtime( true );
	}

	/**
	 * Opens and checks a connection to one node.
	 *
	 * @param string $db_host DB_HOST-style host.
	 * @param int    $seconds Connect (and handshake) timeout.
	 */
	private function connect_host( $db_host, $seconds ) {
		global $wpdb;
		$parsed = $wpdb->parse_db_host( $db_host );
		if ( ! $parsed ) {
			throw new InvalidArgumentException( 'invalid argument `DB_HOST`: cannot parse ' . $db_host );
		}
		list( $host, $port, $socket, $is_ipv6 ) = $parsed;
		if ( $is_ipv6 && extension_loaded( 'mysqlnd' ) ) {
			$host = "[$host]";
		}
		$db = mysqli_init(); // phpcs:ignore WordPress.DB.RestrictedFunctions.mysql_mysqli_init -- our own connection: $wpdb reconnects silently and re-runs statements outside their transaction (see the class doc).
		$db->options( MYSQLI_OPT_CONNECT_TIMEOUT, $seconds );
		// Covers the server's greeting; statements are awaited with
		// mysqli_poll() for the time left of their call.
		$db->options( MYSQLI_OPT_READ_TIMEOUT, $seconds );
		$db->options( MYSQLI_OPT_INT_AND_FLOAT_NATIVE, true );
		try {
			$flags = self::client_flags( defined( 'MYSQL_CLIENT_FLAGS' ) ? (int) MYSQL_CLIENT_FLAGS : 0 );
			$ok    = @$db->real_connect( $host, DB_USER, DB_PASSWORD, DB_NAME, $port ? (int) $port : null, $socket, $flags ); // phpcs:ignore WordPress.PHP.NoSilencedErrors -- the error is read from connect_error below.
		} catch ( mysqli_sql_exception $e ) {
			$ok = false;
		}
		if ( ! $ok ) {
			$errno = (int) $db->connect_errno;
			$error = new DatabaseUnavailableException( 'database unavailable: cannot connect: ' . $db->connect_error, $errno );
			// As the core: wrong credentials or database are the same on every
			// node and at every retry; any other refusal (too many connections,
			// a blocked host, a user's limit, a node not ready) tries the next node.
			if ( in_array( $errno, self::CONFIGURATION_ERRORS, true ) ) {
				throw $error;
			}
			throw new Counterfoil_Retryable( $error );
		}
		$db->set_charset( 'utf8mb4' );
		++$this->stats['connects'];
		// The probe runs on $this->db (select() reads it), and every other
		// field it decides is set only once every check has passed: a node
		// that answers but is refused (not ready, read-only, …) leaves the
		// backend as it was, so fail_back() can put its connection back with
		// the fields that belong to it.
		$this->db = $db;
		try {
			list( $multi_writer, $cluster ) = $this->probe( $db_host );
		} catch ( Throwable $e ) {
			// Refused, or lost while probed: never kept half-checked.
			$this->disconnect();
			throw $e;
		}
		// Every check passed: this connection's facts become the backend's.
		$this->read_timeout_s = $seconds;
		$this->multi_writer   = $multi_writer;
		if ( null !== $cluster ) {
			$this->cluster = $cluster;
		}
	}

	/**
	 * The checks of a new connection (on $this->db): the writer rule,
	 * readiness, durability and the session's settings, as the core's
	 * vetting. Changes no field of the backend: connect_host() sets them
	 * from what this returns once it returned.
	 *
	 * @param string $db_host DB_HOST-style host, for messages.
	 * @return array [whether the node is a multi-writer cluster's, the cluster identity to keep or null].
	 */
	private function probe( $db_host ) {
		$cluster = null;
		$vars    = array();
		foreach ( $this->select( self::SERVER_CHECK_SQL ) as $row ) {
			$vars[] = array( $row[0], $row[1] );
		}
		// The server's verdict first, as the core's (vetting::judge_server):
		// a server refused by its durability is refused on every node.
		$check = self::judge_server( $vars, defined( 'COUNTERFOIL_UNSAFE_ALLOW_FLUSH_LOG_0' ) && COUNTERFOIL_UNSAFE_ALLOW_FLUSH_LOG_0 );
		if ( isset( $check['refused'] ) ) {
			throw new DatabaseUnavailableException(
				'unsafe_durability' === $check['refused']
					? 'refusing to use this server: innodb_flush_log_at_trx_commit = ' . $check['setting'] . ', so a server crash can roll the counter back and issue numbers twice; set it to 1 (SET GLOBAL innodb_flush_log_at_trx_commit = 1 and in my.cnf), or define COUNTERFOIL_UNSAFE_ALLOW_FLUSH_LOG_0'
					: 'refusing to use this server: it did not report innodb_flush_log_at_trx_commit, so its durability is unknown'
			);
		}
		if ( 'server_crash_only' === $check['durability'] ) {
			Counterfoil_Log::once( 'durability:2', 'innodb_flush_log_at_trx_commit = 2: numbers survive a server crash but not an OS crash or power loss; set it to 1 for full durability' );
		}
		$identity     = null;
		$multi_writer = $check['multi_writer'];
		if ( $check['galera'] ) {
			$ready = self::judge_ready( $this->select( self::GALERA_READY_SQL ) );
			if ( ! $ready['ready'] ) {
				throw new Counterfoil_Retryable( new DatabaseUnavailableException( "database unavailable: cannot connect: $db_host is not ready (wsrep_ready)" ) );
			}
			$identity = $ready['cluster'];
			// Causal reads, as the core: without them current() on this node
			// could return a counter older than a number handed out elsewhere.
			$this->check( $this->execute( self::GALERA_CAUSAL_READS_SQL ) );
			// No one-trip packets on a Galera node (packet_fits()): a
			// transaction aborted by a conflicting write set while a
			// statement of a multi_query runs gets no error there; the
			// packet runs on, its later statements committing alone, and
			// answers success (the Galera suite saw numbers handed out
			// twice). Sent one by one, each statement gets the 1213.
		}
		// The writer rule, as the core's vetting::judge_writer: a writable
		// primary (judged by its role: a user with SUPER writes on a
		// read-only server), and in a list of several, a member of one cluster.
		if ( null !== $check['read_only'] ) {
			throw new Counterfoil_Retryable( new DatabaseUnavailableException( "database unavailable: cannot connect: $db_host is read-only ({$check['read_only']} = ON): not a writable primary" ) );
		}
		if ( null === $identity && null !== $check['group'] ) {
			$identity = 'Group Replication group ' . $check['group'];
		}
		$count = count( counterfoil_db_nodes() );
		if ( $count > 1 && ! counterfoil_allow_independent_nodes() ) {
			if ( null === $identity ) {
				throw new DatabaseUnavailableException( "refusing the node list: it names $count servers, and $db_host is neither a Galera node nor a Group Replication member: independent servers in one list are independent counters, and failing over between them hands the same numbers out again; list one server, or the nodes of one cluster" );
			}
			if ( null !== $this->cluster && $this->cluster !== $identity ) {
				throw new DatabaseUnavailableException( "refusing the node list: $db_host belongs to $identity, the list's other nodes to {$this->cluster}: two clusters are two counters" );
			}
			$cluster = $identity;
		}
		// Autocommit on and lock waits bounded by the deadline (session_sql());
		// a server that will not let us is refused.
		$this->check( $this->execute( self::session_sql( $this->timeout_ms ) ) );
		return array( $multi_writer, $cluster );
	}

	/**
	 * The client flags WordPress uses (MYSQL_CLIENT_FLAGS: TLS among them),
	 * as wpdb passes them, less CLIENT_FOUND_ROWS: with it ROW_COUNT() and
	 * affected rows report rows matched, not changed, and the one-trip
	 * packets' guards (IF(ROW_COUNT() = 1, …)) and the allocation's
	 * exactly-one-row rule read it as changed. The core's connections say
	 * client_found_rows(false) alike.
	 *
	 * @param int $flags MYSQL_CLIENT_FLAGS.
	 * @return int
	 */
	public static function client_flags( $flags ) {
		return $flags & ~MYSQLI_CLIENT_FOUND_ROWS;
	}

	private function disconnect() {
		if ( $this->db ) {
			try {
				$this->db->close();
			} catch ( Throwable $ignored ) {
				unset( $ignored );
			}
		}
		$this->db = null;
	}

	/**
	 * Executes one statement; never throws for a server error (the caller
	 * decides), but turns connection losses and timeouts into retries. The
	 * statement runs asynchronously and is awaited for the time left of the
	 * call's deadline: past it the connection is dropped (the statement may
	 * still complete on the server: the outcome is unknown).
	 *
	 * @param string $sql    SQL with ? placeholders.
	 * @param string $types  Types of the values: i (integer) or s (string).
	 * @param array  $params Values.
	 * @return array errno, error, affected, insert_id, rows.
	 */
	private function execute( $sql, $types = '', array $params = array() ) {
		$text    = $this->with_values( $sql, $types, $params );
		try {
			if ( ! $this->async ) {
				$result = $this->result_of( $this->db->query( $text ) ); // phpcs:ignore WordPress.DB.RestrictedClasses,WordPress.DB.PreparedSQL -- own connection (class doc); values escaped by with_values().
				return $result['errno'] ? $this->failure( $result['errno'], $result['error'] ) : $result;
			}
			$sent = $this->db->query( $text, MYSQLI_ASYNC ); // phpcs:ignore WordPress.DB.RestrictedClasses,WordPress.DB.PreparedSQL -- own connection (class doc); values escaped by with_values().
			if ( false === $sent ) {
				return $this->failure( $this->db->errno, $this->db->error );
			}
			$left = $this->remaining_ms();
			if ( $left <= 0 ) {
				$this->disconnect();
				throw $this->out_of_time( 'the statement' );
			}
			$read   = array( $this->db );
			$error  = array( $this->db );
			$reject = array();
			$micros = (int) ceil( $left * 1000 );
			$ready  = mysqli_poll( $read, $error, $reject, intdiv( $micros, 1000000 ), $micros % 1000000 ); // phpcs:ignore WordPress.DB.RestrictedFunctions.mysql_mysqli_poll -- own connection (class doc): awaits the asynchronous statement for exactly the time left; $wpdb has no asynchronous query.
			if ( ! $ready ) {
				$this->disconnect();
				throw $this->out_of_time( 'the statement' );
			}
			$result = $this->result_of( $this->db->reap_async_query() );
		} catch ( mysqli_sql_exception $e ) {
			return $this->failure( $e->getCode(), $e->getMessage() );
		}
		if ( $result['errno'] ) {
			return $this->failure( $result['errno'], $result['error'] );
		}
		return $result;
	}

	/**
	 * A statement's answer as an array.
	 *
	 * @param mysqli_result|bool $ok What query() or reap_async_query() returned.
	 * @return array errno, error, affected, insert_id, rows.
	 */
	private function result_of( $ok ) {
		return array(
			'errno'     => $ok ? 0 : $this->db->errno,
			'error'     => $ok ? '' : $this->db->error,
			'affected'  => $this->db->affected_rows,
			'insert_id' => $this->db->insert_id,
			'rows'      => $ok instanceof mysqli_result ? $ok->fetch_all( MYSQLI_NUM ) : null,
		);
	}

	/**
	 * The statement with its values written in: integers as integers,
	 * strings quoted and escaped by the connection (its character set is
	 * utf8mb4), null as NULL.
	 *
	 * @param string $sql    SQL with one ? per value and no other ?.
	 * @param string $types  i or s per value.
	 * @param array  $params Values.
	 * @return string
	 */
	private function with_values( $sql, $types, array $params ) {
		$parts = explode( '?', $sql );
		if ( count( $parts ) !== strlen( $types ) + 1 || count( $params ) !== strlen( $types ) ) {
			throw new LogicException( 'placeholders, types and values differ in number: ' . $sql );
		}
		$text = $parts[0];
		foreach ( array_values( $params ) as $i => $value ) {
			if ( null === $value ) {
				$literal = 'NULL';
			} elseif ( 'i' === $types[ $i ] ) {
				$literal = is_int( $value ) ? (string) $value : (string) (int) $value;
			} else {
				$literal = "'" . $this->db->real_escape_string( (string) $value ) . "'";
			}
			$text .= $literal . $parts[ $i + 1 ];
		}
		return $text;
	}

	/**
	 * A failed statement: retryable ones become Counterfoil_Retryable (after
	 * dropping a broken connection); others are returned for the caller.
	 */
	private function failure( $errno, $error ) {
		$errno = (int) $errno;
		if ( in_array( $errno, array( 2006, 2013, 2055, 1927, 1053 ), true ) ) {
			$this->disconnect();
			if ( $this->remaining_ms() <= 0 ) {
				throw $this->out_of_time( 'the statement' );
			}
			throw new Counterfoil_Retryable( new DatabaseUnavailableException( "database unavailable: connection lost: $error", $errno ) );
		}
		if ( 1047 === $errno ) {
			// The node left the cluster's primary component: drop it; the
			// retry connects to the first ready node of the list.
			$this->disconnect();
			throw new Counterfoil_Retryable( new DatabaseUnavailableException( "database error $errno: $error", $errno ) );
		}
		if ( in_array( $errno, self::RETRIED_AFRESH, true ) ) {
			// Deadlock or certification conflict (1213 on Galera, 3101 on
			// Group Replication), lock wait timeout, or a statement
			// interrupted (a brute-force abort on Percona XtraDB Cluster):
			// nothing of this try remains; try again afresh.
			$this->rollback_quietly();
			throw new Counterfoil_Retryable( new DatabaseUnavailableException( "database error $errno: $error", $errno ) );
		}
		return array(
			'errno'     => $errno,
			'error'     => $error,
			'affected'  => -1,
			'insert_id' => 0,
			'rows'      => null,
		);
	}

	/** Throws for a failed statement. */
	private function check( array $r ) {
		if ( $r['errno'] ) {
			throw new DatabaseUnavailableException( "database error {$r['errno']}: {$r['error']}", $r['errno'] );
		}
		return $r;
	}

	private function select( $sql, $types = '', array $params = array() ) {
		return $this->check( $this->execute( $sql, $types, $params ) )['rows'];
	}
}
