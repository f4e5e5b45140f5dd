<?php
/**
 * WooCommerce: paid orders without an invoice number — counted (Site Health,
 * the settings page), listed and numbered on request (the backfill: the
 * settings page's button, the REST route the CLI calls).
 *
 * Invariants:
 * - a paid order is one in a paid status (wc_get_is_paid_statuses()) with a
 *   paid date; it has no invoice number when it carries neither
 *   Counterfoil's nor WP Overnight's (Counterfoil_WooCommerce::number_of());
 * - orders are counted and found by read-only, prepared queries on the
 *   storage WooCommerce uses (HPOS: `wc_orders` by its (type, status) index,
 *   `wc_order_operational_data` by order id, `wc_orders_meta` anti-joined by
 *   its (order id, key) index; posts: `posts` by its (type, status) index,
 *   the `_date_paid` meta, `postmeta` anti-joined by post id) — never by
 *   loading every order; an order listed, reported by id or numbered is
 *   then read through the CRUD, which has the last word; nothing here
 *   writes an order but number_order();
 * - the takeover (Counterfoil_WooCommerce::since()) splits them as
 *   Counterfoil_WooCommerce::before_takeover() does: an order without a
 *   number that is not the shop's history (made and paid before the
 *   takeover) is waiting — Site Health critical, the settings page's count;
 *   history is counted for information only and numbered only on request;
 * - the screens count live on a shop with up to LIVE_MAX orders in a paid
 *   status; above, from a snapshot of the same queries made for this
 *   period and takeover: younger than SNAPSHOT_TTL it answers; older, it
 *   still answers and Action Scheduler recounts it (without Action
 *   Scheduler, the view recounts); none yet for this period and takeover
 *   (the first view, a new period, after a backfill, which drops it): the
 *   view queues the count and says the orders are being counted — never a
 *   number it has not counted, and never a count inside a view of such a
 *   shop while Action Scheduler is there;
 * - a backfill numbers any paid order of the period without a number, on
 *   request, through the same call as a payment
 *   (Counterfoil_WooCommerce::number_order()): an order numbered meanwhile
 *   keeps its number; a dry run (the default) writes nothing and lists the
 *   orders it would number, saying which predate the takeover;
 * - the period is the site's numbering period now (its first local day to
 *   now); Site Health looks at that period and the last 31 days.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * Finding and numbering paid orders that have no number.
 */
final class Counterfoil_WooCommerce_Backfill {
	/** Orders listed per query. */
	const PAGE = 200;
	/** The most orders one call lists or numbers. */
	const MAX = 1000;
	/** The most order ids Site Health names. */
	const HEALTH_LIST = 100;
	/** The most orders Site Health reads through the CRUD to confirm the query's. */
	const HEALTH_READ = 500;
	/** The admin-post action. */
	const ACTION = 'counterfoil_woocommerce_backfill';
	/** WP Overnight's number on an order (its formatted number): an order it numbered counts as numbered. */
	const WPO_NUMBER = '_wcpdf_invoice_number';
	/** WP Overnight's number's parts on an order (number, prefix, suffix, padding, formatted_number). */
	const WPO_NUMBER_DATA = '_wcpdf_invoice_number_data';
	/**
	 * Up to this many orders in a paid status, the screens count live at
	 * every view (filter `counterfoil_woocommerce_live_count_max`); above,
	 * from a snapshot (a count costs the database about one page read per
	 * order on posts storage: docs/benchmarks.md).
	 */
	const LIVE_MAX = 10000;
	/** How long a snapshot serves before it is recounted (seconds). */
	const SNAPSHOT_TTL = 600;
	/** The snapshot of the counts (not autoloaded). */
	const SNAPSHOT_OPTION = 'counterfoil_woocommerce_counts';
	/** The Action Scheduler hook that counts: a period's first count, or a stale snapshot's recount. */
	const RECOUNT_HOOK = 'counterfoil_woocommerce_recount';

	/** Hooks (admin, REST, the recount). */
	public static function init() {
		add_action( 'admin_post_' . self::ACTION, array( __CLASS__, 'handle_admin' ) );
		add_action( 'rest_api_init', array( __CLASS__, 'register_routes' ) );
		add_action( self::RECOUNT_HOOK, array( __CLASS__, 'recount' ) );
	}

	/**
	 * Now (Unix time), as the plugin takes it.
	 *
	 * @return int
	 */
	public static function now() {
		/**
		 * The time the plugin takes as now (Unix seconds); tests move it.
		 *
		 * @param int $now Unix time.
		 */
		return (int) apply_filters( 'counterfoil_now', time() );
	}

	/**
	 * The first instant (Unix time) of the site's numbering period now.
	 *
	 * @return int
	 */
	public static function period_start() {
		$rule   = counterfoil_period_rule();
		$period = counterfoil_current_period();
		if ( 'month' === $rule[0] ) {
			$first = array( $period[0], $period[1], 1 );
		} else {
			$first = array( $period[0], $rule[1], $rule[2] );
		}
		$start = new DateTimeImmutable( sprintf( '%04d-%02d-%02d 00:00:00', $first[0], $first[1], $first[2] ), wp_timezone() );
		return $start->getTimestamp();
	}

	/**
	 * Whether WooCommerce keeps its orders in its own tables (HPOS) rather
	 * than in posts.
	 *
	 * @return bool
	 */
	public static function hpos() {
		$util = '\Automattic\WooCommerce\Utilities\OrderUtil';
		return class_exists( $util ) && is_callable( array( $util, 'custom_orders_table_usage_is_enabled' ) )
			&& (bool) call_user_func( array( $util, 'custom_orders_table_usage_is_enabled' ) );
	}

	/**
	 * The query over WooCommerce's order storage of paid orders (a
	 * numbering status, paid from $since to $until, by the shop's rules a
	 * query can tell: rules_sql()) without an invoice number, as
	 * FROM … WHERE text (tables `o` the order, `d` its paid date, `n` and
	 * `w` the anti-joined numbers) and its arguments; the caller adds what
	 * it selects.
	 *
	 * HPOS: `wc_orders` through its (type, status, …) index, the paid date
	 * from `wc_order_operational_data` (unique by order), the numbers
	 * anti-joined from `wc_orders_meta` by its (order_id, meta_key, …)
	 * index. Posts: the paid date from the `_date_paid` meta (a Unix time,
	 * as wc_get_orders() queries it; '' when not paid) through the meta key's
	 * index, the order from `posts` by id, the numbers anti-joined from the
	 * sets of numbered post ids (each read through the meta key's index).
	 * Numbered: Counterfoil's or WP Overnight's number not empty, or WP
	 * Overnight's parts (a serialized array) with a formatted number that
	 * is not empty.
	 *
	 * @param int $since Unix time.
	 * @param int $until Unix time.
	 * @return array [ FROM … WHERE … with placeholders, its arguments, the
	 *               order id's column ]
	 */
	private static function unnumbered_sql( $since, $until ) {
		global $wpdb;
		$statuses = array_map(
			function ( $s ) {
				return 'wc-' . $s;
			},
			Counterfoil_WooCommerce::number_statuses()
		);
		$in       = implode( ', ', array_fill( 0, count( $statuses ), '%s' ) );
		$key      = '%' . $wpdb->esc_like( 's:16:"formatted_number";' );
		// WP Overnight's parts are numbered unless their formatted number is empty, null or false.
		$parts = "AND w.meta_value LIKE 'a:%%' AND w.meta_value LIKE %s AND w.meta_value NOT LIKE %s AND w.meta_value NOT LIKE %s AND w.meta_value NOT LIKE %s";
		$parts_args = array( $key . '%', $key . $wpdb->esc_like( 's:0:"";' ) . '%', $key . 'N;%', $key . $wpdb->esc_like( 'b:0;' ) . '%' );
		if ( self::hpos() ) {
			$orders = $wpdb->prefix . 'wc_orders';
			$data   = $wpdb->prefix . 'wc_order_operational_data';
			$meta   = $wpdb->prefix . 'wc_orders_meta';
			$sql    = "FROM {$orders} o
				INNER JOIN {$data} d ON d.order_id = o.id
				LEFT JOIN {$meta} n ON n.order_id = o.id AND n.meta_key IN (%s, %s) AND LENGTH(n.meta_value) > 0
				LEFT JOIN {$meta} w ON w.order_id = o.id AND w.meta_key = %s {$parts}
				WHERE o.type = 'shop_order' AND o.status IN ({$in})
				AND d.date_paid_gmt BETWEEN %s AND %s
				AND n.id IS NULL AND w.id IS NULL";
			$args   = array_merge(
				array( Counterfoil_WooCommerce::META_NUMBER, self::WPO_NUMBER, self::WPO_NUMBER_DATA ),
				$parts_args,
				$statuses,
				array( self::paid_arg( $since ), self::paid_arg( $until ) )
			);
			list( $rules, $rules_args ) = self::rules_sql( 'o.payment_method', 'o.total_amount' );
			return array( $sql . $rules, array_merge( $args, $rules_args ), 'o.id' );
		}
		// Posts: `postmeta` has no index by (post, key), only by post and by
		// key (WordPress's `post_id` and `meta_key`); the paid dates and the
		// numbered orders are read once through the key's index (the
		// numbered ones as sets the server keeps with an index on their post
		// id) rather than every meta row of every order through the post's —
		// forced, or a list after an order id walks the meta by post id.
		$parts = str_replace( 'w.meta_value', 'meta_value', $parts );
		$sql   = "FROM {$wpdb->postmeta} d FORCE INDEX (meta_key)
			INNER JOIN {$wpdb->posts} o ON o.ID = d.post_id
			LEFT JOIN (SELECT DISTINCT post_id FROM {$wpdb->postmeta} WHERE meta_key IN (%s, %s) AND LENGTH(meta_value) > 0) n ON n.post_id = o.ID
			LEFT JOIN (SELECT DISTINCT post_id FROM {$wpdb->postmeta} WHERE meta_key = %s {$parts}) w ON w.post_id = o.ID
			WHERE d.meta_key = '_date_paid' AND d.meta_value <> '' AND CAST(d.meta_value AS SIGNED) BETWEEN %d AND %d
			AND o.post_type = 'shop_order' AND o.post_status IN ({$in})
			AND n.post_id IS NULL AND w.post_id IS NULL";
		$args  = array_merge(
			array( Counterfoil_WooCommerce::META_NUMBER, self::WPO_NUMBER, self::WPO_NUMBER_DATA ),
			$parts_args,
			array( self::paid_arg( $since ), self::paid_arg( $until ) ),
			$statuses
		);
		list( $rules, $rules_args ) = self::rules_sql(
			"(SELECT pm.meta_value FROM {$wpdb->postmeta} pm WHERE pm.post_id = o.ID AND pm.meta_key = '_payment_method' LIMIT 1)",
			"(SELECT pm.meta_value FROM {$wpdb->postmeta} pm WHERE pm.post_id = o.ID AND pm.meta_key = '_order_total' LIMIT 1)"
		);
		return array( $sql . $rules, array_merge( $args, $rules_args ), 'o.ID' );
	}

	/**
	 * The shop's rules that a query can tell (Counterfoil_WooCommerce::by_the_rules()):
	 * no order paid by an excluded method, no free order when the shop does
	 * not invoice those; empty when neither is set, so a shop without them
	 * pays nothing for them. (Its filter is asked of each order read.)
	 *
	 * @param string $method SQL for the order's payment method.
	 * @param string $total  SQL for the order's total.
	 * @return array [ SQL (starting with AND, or ''), its arguments ]
	 */
	private static function rules_sql( $method, $total ) {
		$sql      = '';
		$args     = array();
		$excluded = Counterfoil_WooCommerce::excluded_methods();
		if ( $excluded ) {
			$sql .= " AND COALESCE({$method}, '') NOT IN (" . implode( ', ', array_fill( 0, count( $excluded ), '%s' ) ) . ')';
			$args = $excluded;
		}
		if ( ! (int) get_option( Counterfoil_WooCommerce::FREE_OPTION, 1 ) ) {
			$sql .= " AND COALESCE(CAST({$total} AS DECIMAL(26,8)), 0) <> 0";
		}
		return array( $sql, $args );
	}

	/**
	 * A time as the storage's paid date compares with it: a UTC datetime
	 * (HPOS's `date_paid_gmt`), a Unix time (posts' `_date_paid`).
	 *
	 * @param int $time Unix time.
	 * @return string|int
	 */
	private static function paid_arg( $time ) {
		return self::hpos() ? gmdate( 'Y-m-d H:i:s', (int) $time ) : (int) $time;
	}

	/**
	 * The condition, over unnumbered_sql()'s tables, that an order is the
	 * shop's history from before $takeover, as
	 * Counterfoil_WooCommerce::before_takeover() tells it of a paid order:
	 * made before it and paid before it.
	 *
	 * @param int $takeover Unix time.
	 * @return array [ SQL with placeholders, its arguments ]
	 */
	private static function before_sql( $takeover ) {
		$made = gmdate( 'Y-m-d H:i:s', (int) $takeover );
		if ( self::hpos() ) {
			return array( '(o.date_created_gmt < %s AND d.date_paid_gmt < %s)', array( $made, self::paid_arg( $takeover ) ) );
		}
		return array( '(o.post_date_gmt < %s AND CAST(d.meta_value AS SIGNED) < %d)', array( $made, self::paid_arg( $takeover ) ) );
	}

	/**
	 * How many paid orders (paid from $since to $until) have no invoice
	 * number: one indexed query, no order loaded. With $takeover, the two
	 * sides of it: the shop's history from before it (`before`: made and
	 * paid before it) and the rest (`since`).
	 *
	 * @param int      $since    Unix time.
	 * @param int      $until    Unix time.
	 * @param int|null $takeover Unix time to split at, or null.
	 * @return int|array The count, or [ 'before' => int, 'since' => int ].
	 */
	public static function count_unnumbered( $since, $until, $takeover = null ) {
		global $wpdb;
		list( $from, $args, $id ) = self::unnumbered_sql( $since, $until );
		if ( null === $takeover ) {
			// phpcs:ignore WordPress.DB.PreparedSQL.NotPrepared, WordPress.DB.PreparedSQL.InterpolatedNotPrepared, WordPress.DB.PreparedSQLPlaceholders.UnfinishedPrepare, WordPress.DB.DirectDatabaseQuery -- $from is built by unnumbered_sql() from table names and placeholders only (their values in $args), $id a fixed column; a count, read-only, not cached (it is the live state).
			return (int) $wpdb->get_var( $wpdb->prepare( "SELECT COUNT(DISTINCT {$id}) {$from}", $args ) );
		}
		list( $before, $before_args ) = self::before_sql( $takeover );
		// phpcs:ignore WordPress.DB.PreparedSQL.NotPrepared, WordPress.DB.PreparedSQL.InterpolatedNotPrepared, WordPress.DB.PreparedSQLPlaceholders.UnfinishedPrepare, WordPress.DB.DirectDatabaseQuery -- as above; $before from before_sql(): placeholders only.
		$row = $wpdb->get_row( $wpdb->prepare( "SELECT COUNT(DISTINCT CASE WHEN {$before} THEN {$id} END) AS before_count, COUNT(DISTINCT CASE WHEN NOT {$before} THEN {$id} END) AS since_count {$from}", array_merge( $before_args, $before_args, $args ) ) );
		return array(
			'before' => $row ? (int) $row->before_count : 0,
			'since'  => $row ? (int) $row->since_count : 0,
		);
	}

	/**
	 * The ids of paid orders (paid from $since to $until) without an invoice
	 * number, by the query alone: ascending, after $after, at most $limit;
	 * with $takeover only the history from before it ($side 'before') or
	 * only the rest ('since').
	 *
	 * @param int      $since    Unix time.
	 * @param int      $until    Unix time.
	 * @param int      $after    Order id to start after.
	 * @param int      $limit    The most to return.
	 * @param string   $side     '' (all), 'before' or 'since'.
	 * @param int|null $takeover Unix time (with $side).
	 * @return int[]
	 */
	public static function unnumbered_ids( $since, $until, $after = 0, $limit = self::MAX, $side = '', $takeover = null ) {
		global $wpdb;
		list( $from, $args, $id ) = self::unnumbered_sql( $since, $until );
		if ( '' !== $side && null !== $takeover ) {
			list( $before, $before_args ) = self::before_sql( $takeover );
			$from .= ( 'before' === $side ? ' AND ' : ' AND NOT ' ) . $before;
			$args  = array_merge( $args, $before_args );
		}
		// phpcs:ignore WordPress.DB.PreparedSQL.NotPrepared, WordPress.DB.PreparedSQL.InterpolatedNotPrepared, WordPress.DB.PreparedSQLPlaceholders.ReplacementsWrongNumber, WordPress.DB.DirectDatabaseQuery -- as in count_unnumbered(); the replacements in one array.
		$ids = $wpdb->get_col( $wpdb->prepare( "SELECT DISTINCT {$id} {$from} AND {$id} > %d ORDER BY {$id} ASC LIMIT %d", array_merge( $args, array( (int) $after, max( 1, (int) $limit ) ) ) ) );
		return array_map( 'intval', (array) $ids );
	}

	/**
	 * Paid orders (paid from $since to $until) that have no invoice number,
	 * found by the query and each confirmed through the CRUD.
	 *
	 * @param int   $since Unix time.
	 * @param int   $until Unix time.
	 * @param int   $max   The most to return.
	 * @param array $opts  side and takeover (as unnumbered_ids()); keep: a
	 *                     callable asked of each order (WC_Order), false
	 *                     leaves it out; read: the most orders read through
	 *                     the CRUD (0: no limit).
	 * @return int[] Order ids, oldest first.
	 */
	public static function unnumbered( $since, $until, $max = self::MAX, array $opts = array() ) {
		$opts  = array_merge(
			array(
				'side'     => '',
				'takeover' => null,
				'keep'     => null,
				'read'     => 0,
			),
			$opts
		);
		$found = array();
		$after = 0;
		$read  = 0;
		do {
			$ids = self::unnumbered_ids( $since, $until, $after, self::PAGE, $opts['side'], $opts['takeover'] );
			foreach ( $ids as $id ) {
				$after = $id;
				if ( $opts['read'] > 0 && $read >= $opts['read'] ) {
					return $found;
				}
				++$read;
				$order = wc_get_order( $id );
				if ( $order && '' === Counterfoil_WooCommerce::number_of( $order ) && ( null === $opts['keep'] || call_user_func( $opts['keep'], $order ) ) ) {
					$found[] = $id;
					if ( count( $found ) >= $max ) {
						return $found;
					}
				}
			}
		} while ( count( $ids ) === self::PAGE );
		return $found;
	}

	/**
	 * How many orders are in a paid status (all of them, any date): one
	 * query on the storage's (type, status) index alone.
	 *
	 * @return int
	 */
	public static function paid_order_count() {
		global $wpdb;
		$statuses = array_map(
			function ( $s ) {
				return 'wc-' . $s;
			},
			Counterfoil_WooCommerce::paid_statuses()
		);
		$in       = implode( ', ', array_fill( 0, count( $statuses ), '%s' ) );
		if ( self::hpos() ) {
			$orders = $wpdb->prefix . 'wc_orders';
			// phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared, WordPress.DB.PreparedSQLPlaceholders.UnfinishedPrepare, WordPress.DB.DirectDatabaseQuery -- table name from $wpdb->prefix, placeholders for the statuses ($in, one %s each); a count, read-only.
			return (int) $wpdb->get_var( $wpdb->prepare( "SELECT COUNT(*) FROM {$orders} WHERE type = 'shop_order' AND status IN ({$in})", $statuses ) );
		}
		// phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared, WordPress.DB.PreparedSQLPlaceholders.UnfinishedPrepare, WordPress.DB.DirectDatabaseQuery -- as above.
		return (int) $wpdb->get_var( $wpdb->prepare( "SELECT COUNT(*) FROM {$wpdb->posts} WHERE post_type = 'shop_order' AND post_status IN ({$in})", $statuses ) );
	}

	/**
	 * What the screens show, counted now by one scan of the query: this
	 * period's paid orders without an invoice number on each side of the
	 * takeover (`since`, `before`, as count_unnumbered() counts them), and
	 * the orders Site Health reports (`waiting`: paid in this period or the
	 * last 31 days, not history, confirmed through the CRUD — at most
	 * HEALTH_LIST, HEALTH_READ read).
	 *
	 * @return array takeover, start, at, since, before, waiting (ids), key, snapshot (false).
	 */
	public static function count_now() {
		global $wpdb;
		$now      = self::now();
		$start    = self::period_start();
		$takeover = Counterfoil_WooCommerce::since();
		list( $from, $args, $id )     = self::unnumbered_sql( min( $start, $now - 31 * DAY_IN_SECONDS ), $now );
		list( $before, $before_args ) = self::before_sql( $takeover );
		$paid  = self::hpos() ? 'd.date_paid_gmt >= %s' : 'CAST(d.meta_value AS SIGNED) >= %d';
		// One row per order ("id history in-period"), ascending: a count of
		// each side and Site Health's candidates from one pass.
		// phpcs:ignore WordPress.DB.PreparedSQL.NotPrepared, WordPress.DB.PreparedSQL.InterpolatedNotPrepared, WordPress.DB.PreparedSQLPlaceholders.UnfinishedPrepare, WordPress.DB.DirectDatabaseQuery -- as in count_unnumbered(); $paid a fixed condition with one placeholder.
		$rows  = $wpdb->get_col( $wpdb->prepare( "SELECT DISTINCT CONCAT({$id}, ' ', IF({$before}, 1, 0), ' ', IF({$paid}, 1, 0)) AS r, {$id} AS id {$from} ORDER BY {$id}", array_merge( $before_args, array( self::paid_arg( $start ) ), $args ) ) );
		$state = self::nothing_counted( $now, $start, $takeover );
		$read  = 0;
		foreach ( (array) $rows as $row ) {
			list( $order_id, $history, $in_period ) = array_map( 'intval', explode( ' ', (string) $row ) );
			if ( $in_period ) {
				$state[ $history ? 'before' : 'since' ] += 1;
			}
			if ( $history || count( $state['waiting'] ) >= self::HEALTH_LIST || $read >= self::HEALTH_READ ) {
				continue;
			}
			++$read;
			$order = wc_get_order( $order_id );
			if ( $order && '' === Counterfoil_WooCommerce::number_of( $order ) && self::expected( $order ) ) {
				$state['waiting'][] = $order_id;
			}
		}
		return $state;
	}

	/**
	 * What a snapshot answers for: the period, the takeover, the paid
	 * statuses and the storage (Site Health's 31 days move with its age).
	 *
	 * @param int $start    Period start.
	 * @param int $takeover The takeover.
	 * @return string
	 */
	private static function snapshot_key( $start, $takeover ) {
		return md5( wp_json_encode( array( (int) $start, (int) $takeover, Counterfoil_WooCommerce::paid_statuses(), self::hpos() ) ) );
	}

	/**
	 * A state with nothing counted yet, for this period and takeover.
	 *
	 * @param int $now      The time.
	 * @param int $start    The period's start.
	 * @param int $takeover When Counterfoil took over.
	 * @return array As count_now().
	 */
	private static function nothing_counted( $now, $start, $takeover ) {
		return array(
			'takeover' => $takeover,
			'start'    => $start,
			'at'       => $now,
			'since'    => 0,
			'before'   => 0,
			'waiting'  => array(),
			'key'      => self::snapshot_key( $start, $takeover ),
			'snapshot' => false,
		);
	}

	/**
	 * What the screens show: counted now on a shop with up to LIVE_MAX
	 * orders in a paid status; above, the snapshot while it is younger than
	 * SNAPSHOT_TTL — older, it still answers and a recount is queued
	 * (Action Scheduler; without it, recounted now); none yet, or made for
	 * another period or takeover: a count is queued and the answer says it
	 * is being counted (`counting` true, no counts; without Action
	 * Scheduler, counted now and kept).
	 *
	 * @return array As count_now(), `snapshot` true on a shop above LIVE_MAX;
	 *               `counting` true while a first count is queued.
	 */
	public static function counts() {
		$now  = self::now();
		$snap = get_option( self::SNAPSHOT_OPTION, array() );
		$key  = self::snapshot_key( self::period_start(), Counterfoil_WooCommerce::since() );
		if ( is_array( $snap ) && isset( $snap['key'], $snap['at'] ) && $snap['key'] === $key ) {
			if ( $now - (int) $snap['at'] > self::SNAPSHOT_TTL && ! self::queue_recount() ) {
				$snap = self::recount();
			}
			$snap['snapshot'] = true;
			return $snap;
		}
		/**
		 * Up to how many orders in a paid status Site Health and the
		 * settings page count live at every view (above: a snapshot,
		 * recounted in the background when a view finds it older than ten
		 * minutes).
		 *
		 * @param int $max Default 10,000.
		 */
		$live = (int) apply_filters( 'counterfoil_woocommerce_live_count_max', self::LIVE_MAX );
		if ( self::paid_order_count() <= $live ) {
			return self::count_now();
		}
		if ( self::queue_recount() ) {
			$state = self::nothing_counted( $now, self::period_start(), Counterfoil_WooCommerce::since() );
			return array_merge(
				$state,
				array(
					'snapshot' => true,
					'counting' => true,
				)
			);
		}
		$snap             = self::recount();
		$snap['snapshot'] = true;
		return $snap;
	}

	/**
	 * Counts now and keeps it as the snapshot (also Action Scheduler's
	 * recount).
	 *
	 * @return array As count_now().
	 */
	public static function recount() {
		$state = self::count_now();
		update_option( self::SNAPSHOT_OPTION, $state, false );
		return $state;
	}

	/**
	 * Queues a recount (once) through Action Scheduler.
	 *
	 * @return bool Whether one is queued.
	 */
	private static function queue_recount() {
		if ( ! function_exists( 'as_enqueue_async_action' ) ) {
			return false;
		}
		$queued = function_exists( 'as_has_scheduled_action' ) ? as_has_scheduled_action( self::RECOUNT_HOOK, array(), Counterfoil_WooCommerce::GROUP ) : as_next_scheduled_action( self::RECOUNT_HOOK, array(), Counterfoil_WooCommerce::GROUP );
		if ( ! $queued ) {
			as_enqueue_async_action( self::RECOUNT_HOOK, array(), Counterfoil_WooCommerce::GROUP );
		}
		return true;
	}

	/** Drops the snapshot (after a backfill: the next view counts again). */
	public static function forget() {
		delete_option( self::SNAPSHOT_OPTION );
	}

	/**
	 * The sentence saying when a snapshot was counted, or ''.
	 *
	 * @param array $state As counts().
	 * @return string
	 */
	private static function counted_at( array $state ) {
		if ( empty( $state['snapshot'] ) || ! empty( $state['counting'] ) ) {
			return '';
		}
		return sprintf(
			/* translators: %s: time */
			__( 'Counted at %s (on a shop of this size the count is kept ten minutes).', 'counterfoil' ),
			wp_date( get_option( 'time_format' ), (int) $state['at'] )
		);
	}

	/**
	 * The backfill of this period: the plan, and with $execute each order
	 * numbered (on request: also those paid before the takeover). Only the
	 * orders the shop's rules number (Counterfoil_WooCommerce::by_the_rules(),
	 * 'backfill'): an excluded payment method, a free order the shop does
	 * not invoice or an order its filter refuses is left as it is.
	 *
	 * @param bool $execute Whether to number (else a dry run).
	 * @return array since, until, takeover, orders (ids), before_takeover
	 *               (the ids of those paid before it), numbered (id =>
	 *               number), failed (id => error message), executed.
	 */
	public static function run( $execute ) {
		$since  = self::period_start();
		$until  = self::now();
		$orders = self::unnumbered(
			$since,
			$until,
			self::MAX,
			array(
				'keep' => function ( $order ) {
					return Counterfoil_WooCommerce::by_the_rules( $order, 'backfill' );
				},
			)
		);
		$before = array();
		foreach ( $orders as $id ) {
			$order = wc_get_order( $id );
			if ( $order && Counterfoil_WooCommerce::before_takeover( $order ) ) {
				$before[] = $id;
			}
		}
		$out = array(
			'since'           => $since,
			'until'           => $until,
			'takeover'        => Counterfoil_WooCommerce::since(),
			'orders'          => $orders,
			'before_takeover' => $before,
			'numbered'        => array(),
			'failed'          => array(),
			'executed'        => (bool) $execute,
		);
		if ( ! $execute ) {
			return $out;
		}
		foreach ( $orders as $id ) {
			// On request: numbered whatever its age (the second argument).
			$result = Counterfoil_WooCommerce::number_order( $id, true );
			if ( is_array( $result ) ) {
				$out['numbered'][ $id ] = (string) $result['number'];
			} else {
				$out['failed'][ $id ] = is_wp_error( $result ) ? $result->get_error_message() : __( 'not a paid order', 'counterfoil' );
			}
		}
		self::forget();
		return $out;
	}

	/** POST /counterfoil/v1/woocommerce/backfill (the CLI's `woocommerce backfill`). */
	public static function register_routes() {
		register_rest_route(
			Counterfoil_Rest::NAMESPACE_V1,
			'/woocommerce/backfill',
			array(
				'methods'             => 'POST',
				'callback'            => array( __CLASS__, 'rest_backfill' ),
				'permission_callback' => function () {
					return current_user_can( 'manage_woocommerce' );
				},
				'args'                => array(
					'execute' => array(
						'type'    => 'boolean',
						'default' => false,
					),
				),
			)
		);
	}

	/**
	 * The REST backfill: the paid orders of the current period without an
	 * invoice number — a plan, or their numbering with `execute` (boolean,
	 * default false), on request: also those paid before Counterfoil took
	 * over the shop's numbering. Response: since, until, takeover (when it
	 * took over), orders, before_takeover (those of orders paid before it),
	 * executed, numbered (order id → number), failed (order id → error);
	 * 200, or 207 when some failed (they are retried automatically). Who:
	 * manage_woocommerce, e.g. with an application password (`counterfoil
	 * woocommerce backfill`).
	 *
	 * @param WP_REST_Request $request Request.
	 * @return WP_REST_Response
	 */
	public static function rest_backfill( $request ) {
		$run = self::run( (bool) $request->get_param( 'execute' ) );
		$out = array(
			'since'           => gmdate( 'c', $run['since'] ),
			'until'           => gmdate( 'c', $run['until'] ),
			'takeover'        => gmdate( 'c', $run['takeover'] ),
			'orders'          => $run['orders'],
			'before_takeover' => $run['before_takeover'],
			'executed'        => $run['executed'],
			'numbered'        => (object) $run['numbered'],
			'failed'          => (object) $run['failed'],
		);
		return new WP_REST_Response( $out, empty( $run['failed'] ) ? 200 : 207 );
	}

	/** The settings page's form handler (capability and nonce). */
	public static function handle_admin() {
		if ( ! current_user_can( 'manage_woocommerce' ) || ! check_admin_referer( self::ACTION ) ) {
			wp_die( esc_html__( 'You are not allowed to do this.', 'counterfoil' ), 403 );
		}
		$run = self::run( true );
		$msg = sprintf(
			/* translators: 1: orders numbered, 2: how many of them were paid before Counterfoil took over, 3: orders that failed */
			__( 'Paid orders of this period without an invoice number: %1$d numbered (%2$d of them paid before Counterfoil took over), %3$d failed (retried automatically).', 'counterfoil' ),
			count( $run['numbered'] ),
			count( array_intersect( array_keys( $run['numbered'] ), $run['before_takeover'] ) ),
			count( $run['failed'] )
		);
		set_transient( 'counterfoil_notice_' . get_current_user_id(), array( empty( $run['failed'] ) ? 'success' : 'error', $msg ), 60 );
		wp_safe_redirect( admin_url( 'options-general.php?page=' . Counterfoil_Admin::SLUG ) );
		exit;
	}

	/**
	 * The settings page's WooCommerce part (inside the settings form).
	 */
	public static function settings_fields() {
		?>
		<fieldset id="counterfoil-woocommerce"><legend><strong><?php esc_html_e( 'WooCommerce', 'counterfoil' ); ?></strong></legend>
			<p><label><?php esc_html_e( 'Issuer (user id) of orders; 0 is the shop itself (series 0:{year})', 'counterfoil' ); ?>
				<input type="text" inputmode="numeric" name="woocommerce_issuer" value="<?php echo esc_attr( (string) (int) get_option( Counterfoil_WooCommerce::ISSUER_OPTION, 0 ) ); ?>"></label></p>
		</fieldset>
		<?php
	}

	/**
	 * Saves the WooCommerce part of the settings form.
	 *
	 * @return string|null Why nothing was saved, or null.
	 */
	public static function save_settings() {
		// phpcs:disable WordPress.Security.NonceVerification -- checked by the settings form's guard().
		if ( ! isset( $_POST['woocommerce_issuer'] ) ) {
			return null;
		}
		$issuer = trim( sanitize_text_field( wp_unslash( $_POST['woocommerce_issuer'] ) ) );
		// phpcs:enable
		if ( ! preg_match( '/^[0-9]{1,18}$/', $issuer ) ) {
			return __( 'The WooCommerce settings were not saved: the issuer is a user id (digits), 0 for the shop.', 'counterfoil' );
		}
		update_option( Counterfoil_WooCommerce::ISSUER_OPTION, (int) $issuer );
		return null;
	}

	/**
	 * The settings page's backfill form (after the settings form): how many
	 * paid orders of this period have no invoice number — those paid since
	 * Counterfoil took over, and, for information, the history from before
	 * — as counts() tells; the button numbers both.
	 */
	public static function backfill_form() {
		$state    = self::counts();
		$takeover = (int) $state['takeover'];
		$count    = (int) $state['since'];
		$before   = (int) $state['before'];
		$counting = ! empty( $state['counting'] );
		?>
		<h2><?php esc_html_e( 'WooCommerce orders without an invoice number', 'counterfoil' ); ?></h2>
		<p id="counterfoil-woocommerce-unnumbered">
		<?php
		if ( $counting ) {
			esc_html_e( 'This period\'s paid orders without an invoice number are being counted in the background (on a shop of this size a count takes a while): look again in a minute.', 'counterfoil' );
		} else {
			/* translators: %d: number of orders */
			echo esc_html( sprintf( _n( '%d paid order of this period has no invoice number.', '%d paid orders of this period have no invoice number.', $count, 'counterfoil' ), $count ) );
		}
		?>
		</p>
		<?php if ( '' !== self::counted_at( $state ) ) : ?>
			<p id="counterfoil-woocommerce-counted-at" class="description"><?php echo esc_html( self::counted_at( $state ) ); ?></p>
		<?php endif; ?>
		<?php if ( $before > 0 ) : ?>
			<p id="counterfoil-woocommerce-before-takeover">
			<?php
			echo esc_html(
				sprintf(
					/* translators: 1: number of orders, 2: the date and time Counterfoil took over */
					_n(
						'%1$d paid order of this period was paid before Counterfoil took over the shop\'s numbering (%2$s) and has no invoice number: Counterfoil numbers it only when asked (the button below numbers it too).',
						'%1$d paid orders of this period were paid before Counterfoil took over the shop\'s numbering (%2$s) and have no invoice number: Counterfoil numbers them only when asked (the button below numbers them too).',
						$before,
						'counterfoil'
					),
					$before,
					wp_date( get_option( 'date_format' ) . ' ' . get_option( 'time_format' ), $takeover )
				)
			);
			?>
			</p>
		<?php endif; ?>
		<?php if ( ( $counting || $count + $before > 0 ) && current_user_can( 'manage_woocommerce' ) ) : ?>
			<form method="post" action="<?php echo esc_url( admin_url( 'admin-post.php' ) ); ?>">
				<input type="hidden" name="action" value="<?php echo esc_attr( self::ACTION ); ?>">
				<?php wp_nonce_field( self::ACTION ); ?>
				<?php submit_button( __( 'Number them now', 'counterfoil' ), 'secondary', 'submit', false ); ?>
			</form>
		<?php endif; ?>
		<?php
	}

	/**
	 * Site Health: paid orders without an invoice number.
	 *
	 * @param array $tests Tests.
	 * @return array
	 */
	public static function site_health_tests( $tests ) {
		$tests['direct']['counterfoil_woocommerce'] = array(
			'label' => __( 'Paid WooCommerce orders have invoice numbers', 'counterfoil' ),
			'test'  => array( __CLASS__, 'site_health' ),
		);
		return $tests;
	}

	/**
	 * Whether Counterfoil should have numbered an order by itself: asked of
	 * Counterfoil_WooCommerce::should_number() when it is there (the
	 * shop's settings: numbering statuses, excluded payment methods, free
	 * orders, its filter), else yes.
	 *
	 * @param WC_Order $order Order.
	 * @return bool
	 */
	public static function expected( $order ) {
		if ( is_callable( array( 'Counterfoil_WooCommerce', 'should_number' ) ) ) {
			return (bool) Counterfoil_WooCommerce::should_number( $order, 'status' );
		}
		return ! Counterfoil_WooCommerce::before_takeover( $order );
	}

	/**
	 * The Site Health test's result, as counts() tells: critical when an
	 * order paid in this numbering period or the last 31 days, not the
	 * shop's history from before Counterfoil took over, has no invoice
	 * number and Counterfoil should have given it one (the query's orders
	 * confirmed through the CRUD, at most HEALTH_READ read); this period's
	 * history without a number is said for information, never critical.
	 *
	 * @return array
	 */
	public static function site_health() {
		$state    = self::counts();
		$takeover = (int) $state['takeover'];
		$orders   = array_map( 'intval', (array) $state['waiting'] );
		$before   = (int) $state['before'];
		$result   = array(
			'label'       => __( 'Paid WooCommerce orders have invoice numbers', 'counterfoil' ),
			'status'      => 'good',
			'badge'       => array(
				'label' => __( 'Invoices', 'counterfoil' ),
				'color' => 'blue',
			),
			'description' => '<p>' . esc_html__( 'Every order paid in this numbering period and the last 31 days since Counterfoil took over the shop\'s numbering has its invoice number.', 'counterfoil' ) . '</p>',
			'actions'     => '',
			'test'        => 'counterfoil_woocommerce',
		);
		$link = '<a href="' . esc_url( admin_url( 'options-general.php?page=counterfoil' ) ) . '">' . esc_html__( 'Invoice numbers settings', 'counterfoil' ) . '</a>';
		if ( ! empty( $state['counting'] ) ) {
			// Not known yet: never "good" for orders not counted.
			$result['status']      = 'recommended';
			$result['label']       = __( 'Paid WooCommerce orders without invoice numbers are being counted', 'counterfoil' );
			$result['description'] = '<p>' . esc_html__( 'Counterfoil is counting this numbering period\'s paid orders without an invoice number in the background (on a shop of this size a count takes a while): look again in a minute.', 'counterfoil' ) . '</p>';
			$result['actions']     = $link;
			return $result;
		}
		if ( $orders ) {
			$result['status']      = 'critical';
			$result['label']       = __( 'Paid WooCommerce orders are waiting for invoice numbers', 'counterfoil' );
			$result['description'] = '<p>' . esc_html(
				sprintf(
					/* translators: 1: number of orders, 2: order ids */
					__( '%1$d paid orders have no invoice number yet: %2$s. Counterfoil retries them; the settings page numbers this period\'s at once.', 'counterfoil' ),
					count( $orders ),
					implode( ', ', array_map( 'intval', $orders ) )
				)
			) . '</p>';
			$result['actions']     = $link;
		}
		if ( $before > 0 ) {
			$result['description'] .= '<p>' . esc_html(
				sprintf(
					/* translators: 1: number of orders, 2: the date and time Counterfoil took over */
					_n(
						'%1$d paid order of this numbering period was paid before Counterfoil took over the shop\'s numbering (%2$s) and has no invoice number of Counterfoil\'s: it gets one only on request (Number them now, on the settings page).',
						'%1$d paid orders of this numbering period were paid before Counterfoil took over the shop\'s numbering (%2$s) and have no invoice number of Counterfoil\'s: they get one only on request (Number them now, on the settings page).',
						$before,
						'counterfoil'
					),
					$before,
					wp_date( get_option( 'date_format' ) . ' ' . get_option( 'time_format' ), $takeover )
				)
			) . '</p>';
			$result['actions']      = $link;
		}
		if ( '' !== self::counted_at( $state ) ) {
			$result['description'] .= '<p>' . esc_html( self::counted_at( $state ) ) . '</p>';
		}
		return $result;
	}
}
