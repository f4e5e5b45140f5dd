<?php
/**
 * The registry (Invoices → Registry) as a WP_List_Table: every number in order,
 * with its status and payment.
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
