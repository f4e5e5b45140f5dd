<?php
/**
 * The series (Settings → Invoice numbers) as a WP_List_Table: scope key, next
 * number, issued / reserved / void counts.
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
