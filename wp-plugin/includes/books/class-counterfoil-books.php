<?php
/**
 * What the accountant opens: the registry screen with its filters, the gap
 * report and the export; the invoice list's columns, filters, search and
 * numeric order; the dashboard widget.
 *
 * Invariants: read-only except the export (which writes nothing either) and
 * the void of a missing number (through Counterfoil_Invoices, with a
 * reason); every screen and action checks the capability, every form a
 * nonce; the export streams in keyset chunks (constant memory) with the
 * core's columns and encodings (Counterfoil_Rules::EXPORT_COLUMNS, csv_line,
 * jsonl_line — held to the core by the shared vectors).
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * The books.
 */
final class Counterfoil_Books {
	const REGISTRY_SLUG  = 'counterfoil-registry';
	const STALE_MINUTES  = 15;
	const EXPORT_CHUNK   = 2000;
	const MAX_GAP_SERIES = 100;
	/** Registry rows read per query by the gap report (bounded memory). */
	const GAP_CHUNK = 10000;
	/** Most ranges the gap report lists. */
	const MAX_GAP_RANGES = 1000;

	/** Hooks. */
	public static function init() {
		add_action( 'admin_menu', array( __CLASS__, 'menu' ) );
		add_action( 'admin_post_counterfoil_export', array( __CLASS__, 'handle_export' ) );
		add_action( 'wp_dashboard_setup', array( __CLASS__, 'dashboard' ) );
		foreach ( array( Counterfoil_Invoice_Type::POST_TYPE, Counterfoil_Invoice_Type::CREDIT_NOTE_TYPE ) as $type ) {
			add_filter( 'manage_' . $type . '_posts_columns', array( __CLASS__, 'invoice_columns' ), 20 );
			add_action( 'manage_' . $type . '_posts_custom_column', array( __CLASS__, 'invoice_column' ), 10, 2 );
			add_filter( 'manage_edit-' . $type . '_sortable_columns', array( __CLASS__, 'invoice_sortable' ) );
		}
		add_action( 'restrict_manage_posts', array( __CLASS__, 'invoice_filters' ) );
		add_filter( 'posts_clauses', array( __CLASS__, 'invoice_clauses' ), 10, 2 );
		add_filter( 'posts_search', array( __CLASS__, 'invoice_search' ), 10, 2 );
	}

	/** Whether $query is the invoice list's own query. */
	private static function is_invoice_list( $query ) {
		return is_admin() && $query->is_main_query() && Counterfoil_Invoice_Type::is_ours( $query->get( 'post_type' ) );
	}

	/**
	 * The invoice list searches by number and transaction id (in
	 * invoice_clauses), not WordPress's title/excerpt/content search.
	 *
	 * @param string   $search The search SQL.
	 * @param WP_Query $query  The query.
	 * @return string
	 */
	public static function invoice_search( $search, $query ) {
		return self::is_invoice_list( $query ) ? '' : $search;
	}

	public static function menu() {
		add_submenu_page(
			'edit.php?post_type=' . Counterfoil_Invoice_Type::POST_TYPE,
			__( 'Registry of numbers', 'counterfoil' ),
			__( 'Registry', 'counterfoil' ),
			Counterfoil_Admin::CAPABILITY,
			self::REGISTRY_SLUG,
			array( __CLASS__, 'render_registry' )
		);
	}

	/** The registry filters from the request: scope, year, status. */
	public static function filters( array $source ) {
		$status = isset( $source['status'] ) ? sanitize_key( wp_unslash( $source['status'] ) ) : '';
		$year   = isset( $source['year'] ) ? absint( $source['year'] ) : 0;
		return array(
			'scope'  => isset( $source['scope'] ) ? trim( sanitize_text_field( wp_unslash( $source['scope'] ) ) ) : '',
			'year'   => $year >= 1 && $year <= 9999 ? $year : 0,
			'status' => in_array( $status, array( 'reserved', 'creating', 'issued', 'void', 'unconfirmed' ), true ) ? $status : '',
		);
	}

	/**
	 * WHERE and parameters for the filters (the registry screen and the export).
	 *
	 * @param array  $f     scope, year, status ('' or 0 for none).
	 * @param string $alias The table's alias in the query.
	 * @return array [sql, params]
	 */
	public static function where( array $f, $alias = 'n' ) {
		global $wpdb;
		$parts  = array();
		$params = array();
		if ( '' !== $f['scope'] ) {
			$parts[]  = "$alias.scope_key = %s";
			$params[] = $f['scope'];
		}
		if ( $f['year'] ) {
			// A year's series (…:2026) and, under the monthly rule, its months' (…:2026-03).
			$parts[]  = "($alias.scope_key LIKE %s OR $alias.scope_key LIKE %s)";
			$params[] = '%:' . $wpdb->esc_like( sprintf( '%04d', $f['year'] ) );
			$params[] = '%:' . $wpdb->esc_like( sprintf( '%04d', $f['year'] ) ) . '-__';
		}
		if ( ! empty( $f['status'] ) ) {
			$parts[]  = "$alias.status = %s";
			$params[] = $f['status'];
		}
		return array( $parts ? implode( ' AND ', $parts ) : '1=1', $params );
	}

	/** Invoices → Registry. */
	public static function render_registry() {
		if ( ! current_user_can( Counterfoil_Admin::CAPABILITY ) ) {
			wp_die( esc_html__( 'You are not allowed to see the registry.', 'counterfoil' ), 403 );
		}
		$f     = self::filters( $_GET ); // phpcs:ignore WordPress.Security.NonceVerification.Recommended -- a read-only view.
		$table = new Counterfoil_Registry_Table( $f );
		$table->prepare_items();
		$base = admin_url( 'edit.php' );
		?>
		<div class="wrap" id="counterfoil-registry">
			<h1><?php esc_html_e( 'Registry of numbers', 'counterfoil' ); ?></h1>
			<p><?php esc_html_e( 'Every number handed out, in order: issued with its invoice, reserved for a payment whose invoice is being created, or void with a reason.', 'counterfoil' ); ?></p>
			<form method="get" action="<?php echo esc_url( $base ); ?>" id="counterfoil-registry-filters">
				<input type="hidden" name="post_type" value="<?php echo esc_attr( Counterfoil_Invoice_Type::POST_TYPE ); ?>">
				<input type="hidden" name="page" value="<?php echo esc_attr( self::REGISTRY_SLUG ); ?>">
				<label><?php esc_html_e( 'Series', 'counterfoil' ); ?> <input type="text" name="scope" value="<?php echo esc_attr( $f['scope'] ); ?>" placeholder="42:2026"></label>
				<label><?php esc_html_e( 'Year', 'counterfoil' ); ?> <input type="number" name="year" min="1" max="9999" value="<?php echo esc_attr( $f['year'] ? (string) $f['year'] : '' ); ?>"></label>
				<label><?php esc_html_e( 'Status', 'counterfoil' ); ?>
					<select name="status">
						<option value=""><?php esc_html_e( 'any', 'counterfoil' ); ?></option>
						<?php foreach ( array( 'issued', 'reserved', 'creating', 'unconfirmed', 'void' ) as $s ) : ?>
							<option value="<?php echo esc_attr( $s ); ?>" <?php selected( $f['status'], $s ); ?>><?php echo esc_html( $s ); ?></option>
						<?php endforeach; ?>
					</select></label>
				<?php submit_button( __( 'Filter', 'counterfoil' ), 'secondary', 'filter', false ); ?>
				<label><input type="checkbox" name="gaps" value="1" <?php checked( ! empty( $_GET['gaps'] ) ); // phpcs:ignore WordPress.Security.NonceVerification.Recommended -- a read-only view's option. ?>> <?php esc_html_e( 'with the gap report', 'counterfoil' ); ?></label>
			</form>
			<?php
			if ( ! empty( $_GET['gaps'] ) ) { // phpcs:ignore WordPress.Security.NonceVerification.Recommended -- a read-only view's option.
				self::render_gaps( $f );
			}
			$table->display();
			?>
			<h2><?php esc_html_e( 'Export', 'counterfoil' ); ?></h2>
			<form method="post" action="<?php echo esc_url( admin_url( 'admin-post.php' ) ); ?>" id="counterfoil-export">
				<input type="hidden" name="action" value="counterfoil_export">
				<?php wp_nonce_field( 'counterfoil_export' ); ?>
				<input type="hidden" name="scope" value="<?php echo esc_attr( $f['scope'] ); ?>">
				<input type="hidden" name="year" value="<?php echo esc_attr( $f['year'] ? (string) $f['year'] : '' ); ?>">
				<input type="hidden" name="status" value="<?php echo esc_attr( $f['status'] ); ?>">
				<label><?php esc_html_e( 'From', 'counterfoil' ); ?> <input type="date" name="from"></label>
				<label><?php esc_html_e( 'To', 'counterfoil' ); ?> <input type="date" name="to"></label>
				<select name="format"><option value="csv">CSV</option><option value="jsonl">JSON Lines</option></select>
				<?php submit_button( __( 'Export these numbers', 'counterfoil' ), 'primary', 'submit', false ); ?>
				<p class="description"><?php esc_html_e( 'Columns: scope_key, number, rendered, status, reason, gateway, transaction_id, amount, currency, post_id, created_at, updated_at, kind (invoice or credit_note), refers_to (the invoice a credit note corrects). Dates in UTC. Cells that a spreadsheet would run as a formula are escaped.', 'counterfoil' ); ?></p>
			</form>
		</div>
		<?php
	}

	/**
	 * The gap report: numbers in a series' range start..current without a
	 * registry row, and numbers reserved for longer than STALE_MINUTES.
	 *
	 * @param array $f Filters (series, year).
	 * @return array missing: list of [scope, from, to] (at most MAX_GAP_RANGES;
	 *               cut: true when more exist); stale: rows; limited: true
	 *               when more than MAX_GAP_SERIES series have gaps.
	 */
	public static function gaps( array $f ) {
		global $wpdb;
		$t                      = Counterfoil_Schema::tables();
		$series                 = array( 'status' => '' ) + $f;
		list( $where, $params ) = self::where( $series, 's' );
		$params[]               = self::MAX_GAP_SERIES;
		// Series whose registry holds fewer rows than numbers handed out
		// (counted on the (scope_key, status) index).
		// phpcs:disable WordPress.DB.PreparedSQL -- placeholders only ($where's values in $params); the table names from Counterfoil_Schema::tables().
		$short   = $wpdb->get_results( // phpcs:ignore WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- our own tables, which no WordPress API reads or writes.
			$wpdb->prepare(
				"SELECT s.scope_key, COALESCE(s.start_value, 1) AS first, s.current_value AS last,
				        (SELECT COUNT(*) FROM {$t['numbers']} n WHERE n.scope_key = s.scope_key AND n.number BETWEEN COALESCE(s.start_value, 1) AND s.current_value) AS recorded
				 FROM {$t['sequences']} s WHERE $where
				 HAVING recorded < last - first + 1 ORDER BY s.scope_key LIMIT %d",
				$params
			)
		);
		// phpcs:enable WordPress.DB.PreparedSQL
		// Each short series is walked in keyset chunks of GAP_CHUNK numbers
		// (on the (scope_key, number) index), each chunk released before the
		// next: memory stays bounded at a million numbers in one series.
		$missing = array();
		$cut     = false;
		foreach ( $short as $s ) {
			$expect = (int) $s->first;
			$last   = (int) $s->last;
			do {
				$have = $wpdb->get_col( $wpdb->prepare( "SELECT number FROM {$t['numbers']} WHERE scope_key = %s AND number >= %d AND number <= %d ORDER BY number LIMIT %d", $s->scope_key, $expect, $last, self::GAP_CHUNK ) ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared, WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- table name from Counterfoil_Schema::tables() (the prefix and a fixed name). Our own tables, which no WordPress API reads or writes.
				$wpdb->flush();
				foreach ( $have as $n ) {
					$n = (int) $n;
					if ( $n > $expect ) {
						$missing[] = array( $s->scope_key, $expect, $n - 1 );
					}
					$expect = $n + 1;
				}
				$cut = count( $missing ) >= self::MAX_GAP_RANGES;
			} while ( count( $have ) === self::GAP_CHUNK && ! $cut );
			unset( $have );
			if ( ! $cut && $expect <= $last ) {
				$missing[] = array( $s->scope_key, $expect, $last );
			}
			if ( count( $missing ) >= self::MAX_GAP_RANGES ) {
				$cut     = true;
				$missing = array_slice( $missing, 0, self::MAX_GAP_RANGES );
				break;
			}
		}
		list( $in_series, $stale_params ) = self::where( $series, 'n' );
		array_unshift( $stale_params, self::STALE_MINUTES );
		$stale = $wpdb->get_results( $wpdb->prepare( "SELECT n.scope_key, n.number, n.status, n.gateway, n.transaction_id, n.claim, n.updated_at FROM {$t['numbers']} n WHERE n.status IN ('reserved', 'creating', 'unconfirmed') AND n.updated_at < UTC_TIMESTAMP() - INTERVAL %d MINUTE AND $in_series ORDER BY n.updated_at LIMIT 200", $stale_params ) ); // phpcs:ignore WordPress.DB.PreparedSQL, WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- placeholders only. Our own tables, which no WordPress API reads or writes.
		return array(
			'missing' => $missing,
			'stale'   => $stale,
			'limited' => count( $short ) >= self::MAX_GAP_SERIES,
			'cut'     => $cut,
		);
	}

	private static function render_gaps( array $f ) {
		$g = self::gaps( $f );
		?>
		<div id="counterfoil-gaps" class="card" style="max-width:none">
			<h2><?php esc_html_e( 'Gap report', 'counterfoil' ); ?></h2>
			<?php if ( ! $g['missing'] && ! $g['stale'] ) : ?>
				<p id="counterfoil-gaps-none"><?php esc_html_e( 'No gap: every number of these series is issued, void with a reason, or reserved for a payment that is being completed right now.', 'counterfoil' ); ?></p>
			<?php endif; ?>
			<?php if ( $g['missing'] ) : ?>
				<h3><?php esc_html_e( 'Numbers without a record', 'counterfoil' ); ?></h3>
				<p><?php esc_html_e( 'These numbers were handed out but nothing records what became of them: a call whose outcome was unknown (a lost connection, a deadline), or code that allocates outside Counterfoil. None of them was issued twice. Void each with a reason (for example "lost in a failed call") so that the books account for it.', 'counterfoil' ); ?></p>
				<ul class="counterfoil-missing">
					<?php foreach ( $g['missing'] as $m ) : ?>
						<li data-scope="<?php echo esc_attr( $m[0] ); ?>" data-from="<?php echo esc_attr( (string) $m[1] ); ?>" data-to="<?php echo esc_attr( (string) $m[2] ); ?>">
							<?php
							echo esc_html( $m[1] === $m[2] ? sprintf( '%s: %d', $m[0], $m[1] ) : sprintf( '%s: %d–%d', $m[0], $m[1], $m[2] ) );
							$void = add_query_arg( array( 'page' => Counterfoil_Admin::SLUG, 'void_scope' => rawurlencode( $m[0] ), 'void_number' => $m[1] ), admin_url( 'options-general.php' ) ) . '#counterfoil-void';
							?>
							— <a href="<?php echo esc_url( $void ); ?>"><?php esc_html_e( 'void with a reason…', 'counterfoil' ); ?></a>
						</li>
					<?php endforeach; ?>
				</ul>
				<?php if ( $g['limited'] ) : ?>
					<p><?php esc_html_e( 'Only the first 100 series with gaps are listed; filter by series or year to see the others.', 'counterfoil' ); ?></p>
				<?php endif; ?>
				<?php if ( $g['cut'] ) : ?>
					<p id="counterfoil-gaps-cut"><?php esc_html_e( 'Only the first 1,000 gaps are listed; void them, or filter by series, to see the rest.', 'counterfoil' ); ?></p>
				<?php endif; ?>
			<?php endif; ?>
			<?php
			$unconfirmed = array_values( array_filter( $g['stale'], fn ( $r ) => 'unconfirmed' === $r->status ) );
			$g['stale']  = array_values( array_filter( $g['stale'], fn ( $r ) => 'unconfirmed' !== $r->status ) );
			?>
			<?php if ( $unconfirmed ) : ?>
				<h3><?php esc_html_e( 'Unconfirmed', 'counterfoil' ); ?></h3>
				<p><?php esc_html_e( 'These numbers were taken by a call that never got the database\'s answer (a lost connection, or its deadline): the caller may not have received them. If one was used, find it by its call mark; otherwise void it with a reason.', 'counterfoil' ); ?></p>
				<ul class="counterfoil-unconfirmed">
					<?php foreach ( $unconfirmed as $u ) : ?>
						<li data-scope="<?php echo esc_attr( $u->scope_key ); ?>" data-number="<?php echo esc_attr( (string) $u->number ); ?>"><?php echo esc_html( sprintf( '%s: %d (since %s UTC, call %s)', $u->scope_key, $u->number, $u->updated_at, $u->claim ) ); ?></li>
					<?php endforeach; ?>
				</ul>
			<?php endif; ?>
			<?php if ( $g['stale'] ) : ?>
				<h3><?php esc_html_e( 'Reserved for too long', 'counterfoil' ); ?></h3>
				<p><?php esc_html_e( 'These numbers belong to a payment whose invoice was never completed. Delivering the payment again completes it with the same number (most gateways retry on their own); if the payment was refunded or never happened, void the number with a reason.', 'counterfoil' ); ?></p>
				<ul class="counterfoil-stale">
					<?php foreach ( $g['stale'] as $s ) : ?>
						<li data-scope="<?php echo esc_attr( $s->scope_key ); ?>" data-number="<?php echo esc_attr( (string) $s->number ); ?>"><?php echo esc_html( sprintf( '%s: %d (%s since %s UTC, payment %s / %s)', $s->scope_key, $s->number, $s->status, $s->updated_at, $s->gateway, $s->transaction_id ) ); ?></li>
					<?php endforeach; ?>
				</ul>
			<?php endif; ?>
		</div>
		<?php
	}

	/** admin-post: streams the export (capability + nonce). */
	public static function handle_export() {
		if ( ! current_user_can( Counterfoil_Admin::CAPABILITY ) ) {
			wp_die( esc_html__( 'You are not allowed to export invoice numbers.', 'counterfoil' ), 403 );
		}
		if ( ! isset( $_POST['_wpnonce'] ) || ! wp_verify_nonce( sanitize_text_field( wp_unslash( $_POST['_wpnonce'] ) ), 'counterfoil_export' ) ) {
			wp_die( esc_html__( 'The form has expired or was not sent from this site. Reload the page and try again.', 'counterfoil' ), 403 );
		}
		$f      = self::filters( $_POST );
		$format = isset( $_POST['format'] ) && 'jsonl' === $_POST['format'] ? 'jsonl' : 'csv';
		$dates  = array();
		foreach ( array( 'from', 'to' ) as $d ) {
			$v = isset( $_POST[ $d ] ) ? sanitize_text_field( wp_unslash( $_POST[ $d ] ) ) : '';
			if ( '' !== $v && ! preg_match( '/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/', $v ) ) {
				wp_die( esc_html__( 'Dates are of the form YYYY-MM-DD.', 'counterfoil' ), 400 );
			}
			$dates[ $d ] = $v;
		}
		nocache_headers();
		header( 'Content-Type: ' . ( 'csv' === $format ? 'text/csv' : 'application/x-ndjson' ) . '; charset=utf-8' );
		header( 'Content-Disposition: attachment; filename="counterfoil-registry.' . $format . '"' );
		while ( ob_get_level() > 0 ) {
			ob_end_flush();
		}
		self::export( $f, $dates['from'], $dates['to'], $format, 'php://output' );
		exit;
	}

	/**
	 * Writes the export to $target in keyset chunks.
	 *
	 * @param array  $f      scope, year, status.
	 * @param string $from   YYYY-MM-DD or ''.
	 * @param string $to     YYYY-MM-DD or ''.
	 * @param string $format csv or jsonl.
	 * @param string $target A writable stream URL.
	 * @return int Rows written.
	 */
	public static function export( array $f, $from, $to, $format, $target ) {
		global $wpdb;
		$t                      = Counterfoil_Schema::tables();
		list( $where, $params ) = self::where( $f );
		if ( '' !== $from ) {
			$where   .= ' AND n.created_at >= %s';
			$params[] = $from . ' 00:00:00';
		}
		if ( '' !== $to ) {
			$where   .= ' AND n.created_at <= %s';
			$params[] = $to . ' 23:59:59';
		}
		$out = fopen( $target, 'wb' ); // phpcs:ignore WordPress.WP.AlternativeFunctions.file_system_operations_fopen -- a stream (php://output for the download), written in chunks as the rows are read: WP_Filesystem writes whole strings only.
		if ( 'csv' === $format ) {
			fwrite( $out, Counterfoil_Rules::csv_line( Counterfoil_Rules::EXPORT_COLUMNS ) ); // phpcs:ignore WordPress.WP.AlternativeFunctions.file_system_operations_fwrite -- the stream opened above.
		}
		$last  = array( '', 0 );
		$count = 0;
		do {
			// phpcs:disable WordPress.DB.PreparedSQL, WordPress.DB.PreparedSQLPlaceholders.ReplacementsWrongNumber -- placeholders only, their values in one array; the table names from Counterfoil_Schema::tables() and $wpdb.
			$rows = $wpdb->get_results( // phpcs:ignore WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- our own tables, which no WordPress API reads or writes.
				$wpdb->prepare(
					"SELECT n.scope_key, CAST(n.number AS CHAR) AS number, p.post_title, n.status, n.reason, n.gateway, n.transaction_id, pay.amount, pay.currency, CAST(n.post_id AS CHAR) AS post_id, CAST(n.created_at AS CHAR) AS created_at, CAST(n.updated_at AS CHAR) AS updated_at, rp.post_title AS refers_to
					 FROM {$t['numbers']} n LEFT JOIN {$wpdb->posts} p ON p.ID = n.post_id
					 LEFT JOIN {$t['payments']} pay ON pay.gateway = n.gateway AND pay.transaction_id = n.transaction_id
					 LEFT JOIN {$t['numbers']} rn ON rn.scope_key = pay.refers_scope AND rn.number = pay.refers_number
					 LEFT JOIN {$wpdb->posts} rp ON rp.ID = rn.post_id
					 WHERE $where AND (n.scope_key > %s OR (n.scope_key = %s AND n.number > %d))
					 ORDER BY n.scope_key, n.number LIMIT %d",
					array_merge( $params, array( $last[0], $last[0], $last[1], self::EXPORT_CHUNK ) )
				),
				ARRAY_N
			);
			// phpcs:enable WordPress.DB.PreparedSQL, WordPress.DB.PreparedSQLPlaceholders.ReplacementsWrongNumber
			foreach ( $rows as $r ) {
				$r = Counterfoil_Rules::export_row( $r );
				fwrite( $out, 'csv' === $format ? Counterfoil_Rules::csv_line( $r ) : Counterfoil_Rules::jsonl_line( $r ) ); // phpcs:ignore WordPress.WP.AlternativeFunctions.file_system_operations_fwrite -- the stream opened above.
				$last = array( $r[0], (int) $r[1] );
			}
			$count += count( $rows );
			if ( 'php://output' === $target ) {
				flush();
			}
		} while ( count( $rows ) === self::EXPORT_CHUNK );
		fclose( $out ); // phpcs:ignore WordPress.WP.AlternativeFunctions.file_system_operations_fclose -- the stream opened above.
		return $count;
	}

	/** The dashboard widget, for those who may see the books. */
	public static function dashboard() {
		if ( current_user_can( Counterfoil_Admin::CAPABILITY ) ) {
			wp_add_dashboard_widget( 'counterfoil_books', __( 'Invoice numbers this year', 'counterfoil' ), array( __CLASS__, 'render_dashboard' ) );
		}
	}

	/**
	 * This year's counts by status (the series of this year, by the site's
	 * clock), cached for 5 minutes and dated, and the stale reservations.
	 *
	 * @return array year, counts (status => n), stale, at (Unix time).
	 */
	public static function year_summary() {
		global $wpdb;
		$year   = counterfoil_current_period()[0];
		$key    = 'counterfoil_year_summary_' . $year;
		$cached = get_transient( $key );
		if ( is_array( $cached ) ) {
			return $cached;
		}
		$t      = Counterfoil_Schema::tables();
		$counts = array(
			'issued'   => 0,
			'void'     => 0,
			'reserved' => 0,
		);
		foreach ( $wpdb->get_results( $wpdb->prepare( "SELECT status, COUNT(*) AS c FROM {$t['numbers']} WHERE scope_key LIKE %s GROUP BY status", '%:' . $year ) ) as $r ) { // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared, WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- table name from Counterfoil_Schema::tables() (the prefix and a fixed name). Our own tables, which no WordPress API reads or writes.
			$status            = 'creating' === $r->status ? 'reserved' : $r->status;
			$counts[ $status ] = ( isset( $counts[ $status ] ) ? $counts[ $status ] : 0 ) + (int) $r->c;
		}
		$stale   = (int) $wpdb->get_var( $wpdb->prepare( "SELECT COUNT(*) FROM {$t['numbers']} WHERE status IN ('reserved', 'creating', 'unconfirmed') AND updated_at < UTC_TIMESTAMP() - INTERVAL %d MINUTE", self::STALE_MINUTES ) ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared, WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- table name from Counterfoil_Schema::tables() (the prefix and a fixed name). Our own tables, which no WordPress API reads or writes.
		$summary = array(
			'year'   => $year,
			'counts' => $counts,
			'stale'  => $stale,
			'at'     => time(),
		);
		set_transient( $key, $summary, 5 * MINUTE_IN_SECONDS );
		return $summary;
	}

	public static function render_dashboard() {
		$s   = self::year_summary();
		$url = add_query_arg( array( 'post_type' => Counterfoil_Invoice_Type::POST_TYPE, 'page' => self::REGISTRY_SLUG, 'year' => $s['year'], 'gaps' => 1 ), admin_url( 'edit.php' ) );
		?>
		<ul id="counterfoil-dashboard">
			<?php /* translators: 1: count, 2: year */ ?>
			<li><?php echo esc_html( sprintf( __( '%1$d issued in %2$d\'s series', 'counterfoil' ), $s['counts']['issued'], $s['year'] ) ); ?></li>
			<?php /* translators: %d: count */ ?>
			<li><?php echo esc_html( sprintf( __( '%d void with a reason', 'counterfoil' ), $s['counts']['void'] ) ); ?></li>
			<?php /* translators: %d: count */ ?>
			<li><?php echo esc_html( sprintf( __( '%d reserved (invoice being created)', 'counterfoil' ), $s['counts']['reserved'] ) ); ?></li>
			<?php if ( $s['stale'] ) : ?>
				<?php /* translators: %d: count */ ?>
				<li class="counterfoil-refused"><?php echo esc_html( sprintf( __( '%d reserved for too long: see the gap report', 'counterfoil' ), $s['stale'] ) ); ?></li>
			<?php endif; ?>
		</ul>
		<p>
			<a href="<?php echo esc_url( $url ); ?>"><?php esc_html_e( 'Registry and gap report', 'counterfoil' ); ?></a>
			<?php /* translators: %s: time */ ?>
			<span class="description"><?php echo esc_html( sprintf( __( '(counted at %s)', 'counterfoil' ), wp_date( get_option( 'time_format' ), $s['at'] ) ) ); ?></span>
		</p>
		<?php
	}

	/** Invoice list columns: number, issuer, amount, payment, status. */
	public static function invoice_columns( $columns ) {
		$out = array(
			'cb'                 => isset( $columns['cb'] ) ? $columns['cb'] : '',
			'title'              => __( 'Number', 'counterfoil' ),
			'counterfoil_issuer' => __( 'Issuer', 'counterfoil' ),
			'counterfoil_amount' => __( 'Amount', 'counterfoil' ),
			'counterfoil_paid'   => __( 'Payment', 'counterfoil' ),
			'counterfoil_status' => __( 'Status', 'counterfoil' ),
			// Counterfoil_Invoice_Type prints it: an invoice's credit notes, a credit note's invoice.
			'counterfoil_related' => __( 'Credit notes / corrects', 'counterfoil' ),
			'date'               => isset( $columns['date'] ) ? $columns['date'] : __( 'Date', 'counterfoil' ),
		);
		return array_filter( $out, 'strlen' );
	}

	public static function invoice_column( $column, $post_id ) {
		switch ( $column ) {
			case 'counterfoil_issuer':
				$scope = (string) get_post_meta( $post_id, '_counterfoil_scope_key', true );
				$owner = Counterfoil_Invoices::issuer_of( $scope );
				$user  = null !== $owner && ctype_digit( $owner ) ? get_userdata( (int) $owner ) : false;
				echo esc_html( $user ? $user->display_name . ' (' . $scope . ')' : $scope );
				break;
			case 'counterfoil_amount':
				echo esc_html( trim( get_post_meta( $post_id, '_counterfoil_amount', true ) . ' ' . get_post_meta( $post_id, '_counterfoil_currency', true ) ) );
				break;
			case 'counterfoil_paid':
				echo esc_html( get_post_meta( $post_id, '_counterfoil_gateway', true ) . ' / ' . get_post_meta( $post_id, '_counterfoil_transaction_id', true ) );
				break;
		}
	}

	public static function invoice_sortable( $columns ) {
		$columns['title'] = array( 'counterfoil_number', false );
		return $columns;
	}

	/** The invoice list's filters: series, year, status. */
	public static function invoice_filters( $post_type ) {
		if ( ! Counterfoil_Invoice_Type::is_ours( $post_type ) ) {
			return;
		}
		$f = self::filters( $_GET ); // phpcs:ignore WordPress.Security.NonceVerification.Recommended -- a read-only view.
		?>
		<input type="text" name="scope" value="<?php echo esc_attr( $f['scope'] ); ?>" placeholder="<?php esc_attr_e( 'Series', 'counterfoil' ); ?>" size="10">
		<input type="number" name="year" min="1" max="9999" value="<?php echo esc_attr( $f['year'] ? (string) $f['year'] : '' ); ?>" placeholder="<?php esc_attr_e( 'Year', 'counterfoil' ); ?>" style="width:6em">
		<select name="status">
			<option value=""><?php esc_html_e( 'Any status', 'counterfoil' ); ?></option>
			<option value="issued" <?php selected( $f['status'], 'issued' ); ?>><?php esc_html_e( 'issued', 'counterfoil' ); ?></option>
			<option value="void" <?php selected( $f['status'], 'void' ); ?>><?php esc_html_e( 'void', 'counterfoil' ); ?></option>
		</select>
		<?php
	}

	/**
	 * The invoice list's query: joined to the registry by post id; ordered
	 * by series and number (numerically: 2026-10000 after 2026-9999) unless
	 * another order is asked for; filtered by series, year and status;
	 * searched by number (title) or transaction id.
	 *
	 * @param array    $clauses SQL clauses.
	 * @param WP_Query $query   The query.
	 * @return array
	 */
	public static function invoice_clauses( $clauses, $query ) {
		global $wpdb;
		if ( ! self::is_invoice_list( $query ) ) {
			return $clauses;
		}
		$t                  = Counterfoil_Schema::tables();
		$clauses['join']   .= " LEFT JOIN {$t['numbers']} cfn ON cfn.post_id = {$wpdb->posts}.ID";
		$f                  = self::filters( $_GET ); // phpcs:ignore WordPress.Security.NonceVerification.Recommended -- a read-only view's filters, bound by prepare() below.
		if ( '' !== $f['scope'] ) {
			$clauses['where'] .= $wpdb->prepare( ' AND cfn.scope_key = %s', $f['scope'] );
		}
		if ( $f['year'] ) {
			$clauses['where'] .= $wpdb->prepare( ' AND (cfn.scope_key LIKE %s OR cfn.scope_key LIKE %s)', '%:' . sprintf( '%04d', $f['year'] ), '%:' . sprintf( '%04d', $f['year'] ) . '-__' );
		}
		if ( '' !== $f['status'] ) {
			$clauses['where'] .= $wpdb->prepare( ' AND cfn.status = %s', $f['status'] );
		}
		$search = (string) $query->get( 's' );
		if ( '' !== $search ) {
			// The number as printed, or the payment's transaction id.
			$clauses['where'] .= $wpdb->prepare( " AND ({$wpdb->posts}.post_title LIKE %s OR cfn.transaction_id = %s)", '%' . $wpdb->esc_like( $search ) . '%', $search );
		}
		$orderby = (string) $query->get( 'orderby' );
		if ( '' === $orderby || 'counterfoil_number' === $orderby || 'menu_order title' === $orderby ) {
			// Register order (ascending) unless the column header asked otherwise.
			$asked              = isset( $_GET['order'] ) ? sanitize_key( wp_unslash( $_GET['order'] ) ) : 'asc'; // phpcs:ignore WordPress.Security.NonceVerification.Recommended -- a read-only view's sort order: DESC or ASC.
			$order              = 'desc' === $asked ? 'DESC' : 'ASC';
			$clauses['orderby'] = "cfn.scope_key $order, cfn.number $order";
		}
		return $clauses;
	}
}
