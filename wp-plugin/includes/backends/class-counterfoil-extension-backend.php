<?php
/**
 * The backend on the counterfoil PHP extension: every rule and every
 * statement is the Rust core's. This class only passes WordPress's settings.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * Extension backend.
 */
final class Counterfoil_Extension_Backend implements Counterfoil_Backend {
	/** @var \Counterfoil\Sequences */
	private $sequences;

	/**
	 * Configures the extension with the connection WordPress uses: DB_HOST in
	 * any of its forms (host, host:port, host:/socket, [IPv6]:port), or the
	 * node list COUNTERFOIL_DB_NODES (an array of such hosts, in order of
	 * preference: a Galera cluster's writer first). A database URL set in
	 * php.ini (counterfoil.database_url, possibly a node list) is kept, not
	 * replaced by DB_HOST.
	 *
	 * @param string $table_prefix $wpdb->prefix.
	 * @param string $format       Number template.
	 */
	public function __construct( $table_prefix, $format ) {
		$options = array(
			'table_prefix' => $table_prefix,
			'format'       => $format,
			'registry'     => true,
			/**
			 * The deadline of each database call, in milliseconds (default 5000).
			 *
			 * @param int $timeout_ms Milliseconds.
			 */
			'timeout_ms'   => (int) apply_filters( 'counterfoil_timeout_ms', 5000 ),
		);
		/** This filter is documented in includes/backends/class-counterfoil-php-backend.php */
		if ( ! apply_filters( 'counterfoil_one_trip_payments', true ) ) {
			// Passed only when off: an extension older than the option
			// refuses options it does not know.
			$options['one_trip_payments'] = false;
		}
		if ( counterfoil_allow_independent_nodes() ) {
			$options['unsafe_allow_independent_nodes'] = true;
		}
		// A copy of the site: the extension's own allocate_invoice_number()
		// takes no number either (passed only when paused, so an older
		// extension is not refused an option it does not know elsewhere).
		$paused = Counterfoil_Site_Identity::paused_reason();
		if ( null !== $paused ) {
			$options['paused'] = $paused;
		}
		if ( '' === (string) ini_get( 'counterfoil.database_url' ) ) {
			$options += array(
				'user'     => DB_USER,
				'password' => DB_PASSWORD,
				'database' => DB_NAME,
			);
			$nodes = counterfoil_db_nodes();
			if ( count( $nodes ) > 1 ) {
				$options['nodes'] = implode( ',', $nodes );
			} else {
				$options['host'] = $nodes[0];
			}
		}
		\Counterfoil\configure( $options );
		$this->sequences = new \Counterfoil\Sequences();
	}

	public function writer_host() {
		if ( '' !== (string) ini_get( 'counterfoil.database_url' ) ) {
			return null; // The extension's own list: its hosts are not WordPress's.
		}
		$hosts = counterfoil_db_nodes();
		if ( count( $hosts ) < 2 ) {
			return (string) $hosts[0];
		}
		$node = $this->sequences->writerNode();
		return isset( $hosts[ $node ] ) ? (string) $hosts[ $node ] : null;
	}

	public function name() {
		return 'extension';
	}

	public function initialize( $scope, $start ) {
		return $this->sequences->initialize( $scope, $start );
	}

	public function initialize_planned( $scope, $plan, $start ) {
		return $this->sequences->initializePlanned( $scope, $plan, $start );
	}

	public function hold_payment( $scope, $gateway, $transaction_id, $amount, $currency, $year, $month ) {
		return $this->sequences->holdPayment( $scope, $gateway, $transaction_id, $amount, $currency, $year, $month );
	}

	public function hold_credit_note( $scope, $gateway, $refund_id, $amount, $currency, $year, $month, $invoice_scope, $invoice_number, $invoice_amount, $reason ) {
		return $this->sequences->holdCreditNote( $scope, $gateway, $refund_id, $amount, $currency, $year, $month, $invoice_scope, $invoice_number, $invoice_amount, $reason );
	}

	public function advance( $scope, $next ) {
		return $this->sequences->advance( $scope, $next );
	}

	public function allocate_recorded( $scope, $source, $request_key = null ) {
		return $this->sequences->allocateRecorded( $scope, $source, $request_key );
	}

	public function record_payment( $scope, $gateway, $transaction_id, $amount, $currency, $year = null, $month = null ) {
		return $this->sequences->recordPayment( $scope, $gateway, $transaction_id, $amount, $currency, $year, $month );
	}

	public function claim_number( $scope, $number, $claim, $stale_seconds ) {
		return $this->sequences->claimNumber( $scope, $number, $claim, $stale_seconds );
	}

	public function issue_claimed( $scope, $number, $claim, $post_id, $gateway, $transaction_id ) {
		return $this->sequences->issueClaimed( $scope, $number, $claim, $post_id, $gateway, $transaction_id );
	}

	public function release_claim( $scope, $number, $claim ) {
		return $this->sequences->releaseClaim( $scope, $number, $claim );
	}

	public function current( $scope ) {
		return $this->sequences->current( $scope );
	}

	public function format( $number, $year, $month ) {
		return $this->sequences->format( $number, $year, $month );
	}

	public function render( $template, $number, $year, $month, $rule = 'calendar-year' ) {
		return \Counterfoil\Sequences::render( $template, $number, $year, $month, $rule );
	}
}
