<?php
/**
 * The accountant's tables: series (Settings → Invoice numbers) and the
 * registry (Invoices → Registry), as WP_List_Table.
 *
 * Invariants: every query is paged (LIMIT/OFFSET on an index order) and
 * takes its input through $wpdb->prepare; counts per series are computed for
 * the visible page only, from the registry's (scope_key, status) index, so a
 * view never scans the whole registry; every cell is escaped.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

if ( ! class_exists( 'WP_List_Table' ) ) {
	require_once ABSPATH . 'wp-admin/includes/class-wp-list-table.php';
}

/**
 * Series: scope key, next number, issued / reserved / void counts.
 */
final class Counterfoil_Series_Table extends WP_List_Table {
	const PER_PAGE = 20;

	public function __construct() {
		parent::__construct(
			array(
				'singular' => 'counterfoil_series',
				'plural'   => 'counterfoil_series_list',
				'ajax'     => false,
				'screen'   => 'counterfoil_series',
			)
		);
	}

	public function get_columns() {
		return array(
			'scope_key' => __( 'Series (user:year)', 'counterfoil' ),
			'next'      => __( 'Next number', 'counterfoil' ),
			'issued'    => __( 'Issued', 'counterfoil' ),
			'reserved'  => __( 'Reserved', 'counterfoil' ),
			'void'      => __( 'Void', 'counterfoil' ),
			'start'     => __( 'First number', 'counterfoil' ),
			'created'   => __( 'Created (UTC)', 'counterfoil' ),
		);
	}

	protected function get_sortable_columns() {
		return array(
			'scope_key' => array( 'scope_key', false ),
			'next'      => array( 'current_value', false ),
			'created'   => array( 'created_at', false ),
		);
	}

	/** The search term, trimmed. */
	private static function search() {
		return isset( $_GET['s'] ) ? trim( sanitize_text_field( wp_unslash( $_GET['s'] ) ) ) : ''; // phpcs:ignore WordPress.Security.NonceVerification.Recommended -- a read-only view.
	}

	/**
	 * WHERE for a search: the scope key contains the term, or the series
	 * belongs to an issuer whose login, e-mail or name matches it.
	 */
	private static function where( $term ) {
		global $wpdb;
		if ( '' === $term ) {
			return array( '1=1', array() );
		}
		$parts  = array( 'scope_key LIKE %s' );
		$params = array( '%' . $wpdb->esc_like( $term ) . '%' );
		$users  = get_users(
			array(
				'search'         => '*' . $term . '*',
				'search_columns' => array( 'user_login', 'user_email', 'display_name' ),
				'fields'         => 'ID',
				'number'         => 50,
			)
		);
		foreach ( $users as $id ) {
			$parts[]  = 'scope_key LIKE %s';
			$params[] = $wpdb->esc_like( (int) $id . ':' ) . '%';
		}
		return array( '(' . implode( ' OR ', $parts ) . ')', $params );
	}

	public function prepare_items() {
		global $wpdb;
		$t       = Counterfoil_Schema::tables();
		$orderby = isset( $_GET['orderby'] ) ? sanitize_key( wp_unslash( $_GET['orderby'] ) ) : 'scope_key'; // phpcs:ignore WordPress.Security.NonceVerification.Recommended -- a read-only view's sort column, checked against a list below.
		$orderby = in_array( $orderby, array( 'scope_key', 'current_value', 'created_at' ), true ) ? $orderby : 'scope_key';
		$order   = isset( $_GET['order'] ) && 'desc' === strtolower( sanitize_key( wp_unslash( $_GET['order'] ) ) ) ? 'DESC' : 'ASC'; // phpcs:ignore WordPress.Security.NonceVerification.Recommended -- a read-only view's sort order: DESC or ASC.
		list( $where, $params ) = self::where( self::search() );
		$page  = $this->get_pagenum();
		$total = (int) $wpdb->get_var( $params ? $wpdb->prepare( "SELECT COUNT(*) FROM {$t['sequences']} WHERE $where", $params ) : "SELECT COUNT(*) FROM {$t['sequences']}" ); // phpcs:ignore WordPress.DB.PreparedSQL, WordPress.DB.PreparedSQLPlaceholders.UnfinishedPrepare, WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- $where holds placeholders only (its values in $params); the table name from Counterfoil_Schema::tables(). Our own tables, which no WordPress API reads or writes.
		$rows  = $wpdb->get_results( // phpcs:ignore WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- our own tables, which no WordPress API reads or writes.
			$wpdb->prepare( // phpcs:ignore WordPress.DB.PreparedSQLPlaceholders.ReplacementsWrongNumber -- one array of replacements: $where's values, then the limit and offset.
				"SELECT scope_key, current_value, start_value, created_at, closed_by FROM {$t['sequences']} WHERE $where ORDER BY $orderby $order, scope_key ASC LIMIT %d OFFSET %d", // phpcs:ignore WordPress.DB.PreparedSQL -- whitelisted order, placeholders; the table name from Counterfoil_Schema::tables().
				array_merge( $params, array( self::PER_PAGE, ( $page - 1 ) * self::PER_PAGE ) )
			)
		);
		// Counts for this page only, from the (scope_key, status) index.
		$counts = array();
		if ( $rows ) {
			$keys  = wp_list_pluck( $rows, 'scope_key' );
			$marks = implode( ',', array_fill( 0, count( $keys ), '%s' ) );
			foreach ( $wpdb->get_results( $wpdb->prepare( "SELECT scope_key, status, COUNT(*) AS c FROM {$t['numbers']} WHERE scope_key IN ($marks) GROUP BY scope_key, status", $keys ) ) as $c ) { // phpcs:ignore WordPress.DB.PreparedSQLPlaceholders, WordPress.DB.PreparedSQL.InterpolatedNotPrepared, WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- one %s per key in $marks; the table name from Counterfoil_Schema::tables(). Our own tables, which no WordPress API reads or writes.
				$counts[ $c->scope_key ][ $c->status ] = (int) $c->c;
			}
		}
		foreach ( $rows as $r ) {
			$c           = isset( $counts[ $r->scope_key ] ) ? $counts[ $r->scope_key ] : array();
			$r->issued   = isset( $c['issued'] ) ? $c['issued'] : 0;
			$r->reserved = ( isset( $c['reserved'] ) ? $c['reserved'] : 0 ) + ( isset( $c['creating'] ) ? $c['creating'] : 0 );
			$r->void     = isset( $c['void'] ) ? $c['void'] : 0;
		}
		$this->items           = $rows;
		$this->_column_headers = array( $this->get_columns(), array(), $this->get_sortable_columns(), 'scope_key' );
		$this->set_pagination_args(
			array(
				'total_items' => $total,
				'per_page'    => self::PER_PAGE,
			)
		);
	}

	public function single_row( $item ) {
		echo '<tr data-scope="' . esc_attr( $item->scope_key ) . '" data-current="' . esc_attr( (string) $item->current_value ) . '" data-next="' . esc_attr( (string) ( (int) $item->current_value + 1 ) ) . '">';
		$this->single_row_columns( $item );
		echo '</tr>';
	}

	protected function column_default( $item, $column ) {
		switch ( $column ) {
			case 'scope_key':
				$url = add_query_arg( array( 'post_type' => Counterfoil_Invoice_Type::POST_TYPE, 'page' => Counterfoil_Books::REGISTRY_SLUG, 'scope' => rawurlencode( $item->scope_key ) ), admin_url( 'edit.php' ) );
				return '<a href="' . esc_url( $url ) . '">' . esc_html( $item->scope_key ) . '</a>';
			case 'next':
				if ( null !== $item->closed_by ) {
					/* translators: %s: the series that continues this one */
					return esc_html( sprintf( __( 'closed: %s continues it', 'counterfoil' ), $item->closed_by ) );
				}
				return esc_html( (string) ( (int) $item->current_value + 1 ) );
			case 'start':
				return esc_html( null === $item->start_value ? '—' : (string) $item->start_value );
			case 'created':
				return esc_html( (string) $item->created_at );
			default:
				return esc_html( (string) (int) $item->$column );
		}
	}

	public function no_items() {
		esc_html_e( 'No series matches.', 'counterfoil' );
	}
}

/**
 * The registry: every number in order, with its status and payment.
 */
final class Counterfoil_Registry_Table extends WP_List_Table {
	const PER_PAGE = 50;

	/** @var array scope, year, status. */
	public $filters;

	public function __construct( array $filters ) {
		parent::__construct(
			array(
				'singular' => 'counterfoil_number',
				'plural'   => 'counterfoil_numbers',
				'ajax'     => false,
				'screen'   => 'counterfoil_registry',
			)
		);
		$this->filters = $filters;
	}

	public function get_columns() {
		return array(
			'scope_key'   => __( 'Series', 'counterfoil' ),
			'number'      => __( 'Number', 'counterfoil' ),
			'rendered'    => __( 'Invoice', 'counterfoil' ),
			'status'      => __( 'Status', 'counterfoil' ),
			'reason'      => __( 'Reason', 'counterfoil' ),
			'payment'     => __( 'Payment', 'counterfoil' ),
			'amount'      => __( 'Amount', 'counterfoil' ),
			'created_at'  => __( 'Handed out (UTC)', 'counterfoil' ),
			'updated_at'  => __( 'Last change (UTC)', 'counterfoil' ),
		);
	}

	public function prepare_items() {
		global $wpdb;
		$t                      = Counterfoil_Schema::tables();
		list( $where, $params ) = Counterfoil_Books::where( $this->filters );
		$page                   = $this->get_pagenum();
		$count_sql              = "SELECT COUNT(*) FROM {$t['numbers']} n WHERE $where";
		$count_sql              = $params ? $wpdb->prepare( $count_sql, $params ) : $count_sql; // phpcs:ignore WordPress.DB.PreparedSQL -- placeholders only.
		// One series counts on its index at once; wider filters count up to a
		// million rows, so their total (for the pages only) is kept a minute.
		// (Keyed by the filters: prepared SQL carries a per-request placeholder hash.)
		$cache = '' === $this->filters['scope'] ? 'counterfoil_registry_count_' . md5( wp_json_encode( $this->filters ) ) : '';
		$total = $cache ? get_transient( $cache ) : false;
		if ( false === $total ) {
			$total = (int) $wpdb->get_var( $count_sql ); // phpcs:ignore WordPress.DB.PreparedSQL, WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- prepared above. Our own tables, which no WordPress API reads or writes; the total of wide filters is kept a minute (above).
			if ( $cache ) {
				set_transient( $cache, $total, MINUTE_IN_SECONDS );
			}
		}
		$total = (int) $total;
		// The page's keys first, from the (scope_key, number) index alone; then their rows.
		// Registry order straight off the (scope_key, number) index: with a
		// year's LIKE the optimizer would otherwise sort a million rows.
		$hint = '' === $this->filters['status'] ? ' FORCE INDEX (scope_number)' : '';
		$keys = $wpdb->get_results( $wpdb->prepare( "SELECT n.id FROM {$t['numbers']} n$hint WHERE $where ORDER BY n.scope_key, n.number LIMIT %d OFFSET %d", array_merge( $params, array( self::PER_PAGE, ( $page - 1 ) * self::PER_PAGE ) ) ) ); // phpcs:ignore WordPress.DB.PreparedSQL, WordPress.DB.PreparedSQLPlaceholders.ReplacementsWrongNumber, WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- placeholders only, their values in one array; the table name from Counterfoil_Schema::tables(), $hint a fixed index hint. Our own tables, which no WordPress API reads or writes.
		$rows = array();
		if ( $keys ) {
			$ids  = implode( ',', array_map( 'intval', wp_list_pluck( $keys, 'id' ) ) );
			// phpcs:disable WordPress.DB.PreparedSQL -- no input: $ids integers (intval above), the table names from Counterfoil_Schema::tables() and $wpdb.
			$rows = $wpdb->get_results( // phpcs:ignore WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- our own tables, which no WordPress API reads or writes.
				"SELECT n.*, p.post_title AS rendered, pay.amount, pay.currency
				 FROM {$t['numbers']} n LEFT JOIN {$wpdb->posts} p ON p.ID = n.post_id
				 LEFT JOIN {$t['payments']} pay ON pay.gateway = n.gateway AND pay.transaction_id = n.transaction_id
				 WHERE n.id IN ($ids) ORDER BY n.scope_key, n.number"
			);
			// phpcs:enable WordPress.DB.PreparedSQL
		}
		$this->items           = $rows;
		$this->_column_headers = array( $this->get_columns(), array(), array(), 'number' );
		$this->set_pagination_args(
			array(
				'total_items' => $total,
				'per_page'    => self::PER_PAGE,
			)
		);
	}

	protected function column_default( $item, $column ) {
		switch ( $column ) {
			case 'rendered':
				if ( ! $item->post_id ) {
					return '—';
				}
				$title = '' !== (string) $item->rendered ? $item->rendered : '#' . $item->post_id;
				return '<a href="' . esc_url( add_query_arg( array( 'post_type' => Counterfoil_Invoice_Type::POST_TYPE, 's' => $title ), admin_url( 'edit.php' ) ) ) . '">' . esc_html( $title ) . '</a>';
			case 'payment':
				return $item->gateway ? esc_html( $item->gateway . ' / ' . $item->transaction_id ) : esc_html( (string) $item->source );
			case 'amount':
				return esc_html( trim( $item->amount . ' ' . $item->currency ) );
			default:
				return esc_html( (string) $item->$column );
		}
	}

	public function single_row( $item ) {
		echo '<tr data-scope="' . esc_attr( $item->scope_key ) . '" data-number="' . esc_attr( (string) $item->number ) . '" data-status="' . esc_attr( $item->status ) . '">';
		$this->single_row_columns( $item );
		echo '</tr>';
	}

	public function no_items() {
		esc_html_e( 'No number matches.', 'counterfoil' );
	}
}
