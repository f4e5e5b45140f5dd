<?php
/**
 * WooCommerce: paid orders without an invoice number — found (Site Health,
 * the settings page, the REST route the CLI calls) and numbered (backfill).
 *
 * Invariants:
 * - orders are found through WooCommerce's CRUD (wc_get_orders() by paid
 *   status and paid date), in pages, so both order storages work;
 * - a backfill numbers through the same call as a payment
 *   (Counterfoil_WooCommerce::number_order()): an order numbered meanwhile
 *   keeps its number; a dry run (the default) writes nothing and lists the
 *   orders it would number;
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
	/** Orders read per page. */
	const PAGE = 200;
	/** The most orders one call lists or numbers. */
	const MAX = 1000;
	/** The admin-post action. */
	const ACTION = 'counterfoil_woocommerce_backfill';

	/** Hooks (admin and REST). */
	public static function init() {
		add_action( 'admin_post_' . self::ACTION, array( __CLASS__, 'handle_admin' ) );
		add_action( 'rest_api_init', array( __CLASS__, 'register_routes' ) );
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
	 * Paid orders (paid from $since to $until) that have no invoice number.
	 *
	 * @param int $since Unix time.
	 * @param int $until Unix time.
	 * @param int $max   The most to return.
	 * @return int[] Order ids, oldest first.
	 */
	public static function unnumbered( $since, $until, $max = self::MAX ) {
		$found    = array();
		$statuses = array_map(
			function ( $s ) {
				return 'wc-' . $s;
			},
			Counterfoil_WooCommerce::paid_statuses()
		);
		for ( $page = 1; count( $found ) < $max; $page++ ) {
			$ids = wc_get_orders(
				array(
					'type'      => 'shop_order',
					'status'    => $statuses,
					'date_paid' => (int) $since . '...' . (int) $until,
					'limit'     => self::PAGE,
					'page'      => $page,
					'orderby'   => 'ID',
					'order'     => 'ASC',
					'return'    => 'ids',
				)
			);
			foreach ( (array) $ids as $id ) {
				$order = wc_get_order( (int) $id );
				if ( $order && '' === Counterfoil_WooCommerce::number_of( $order ) ) {
					$found[] = (int) $id;
					if ( count( $found ) >= $max ) {
						break;
					}
				}
			}
			if ( count( (array) $ids ) < self::PAGE ) {
				break;
			}
		}
		return $found;
	}

	/**
	 * The backfill of this period: the plan, and with $execute each order
	 * numbered.
	 *
	 * @param bool $execute Whether to number (else a dry run).
	 * @return array since, until, orders (ids), numbered (id => number),
	 *               failed (id => error message), executed.
	 */
	public static function run( $execute ) {
		$since  = self::period_start();
		/**
		 * The time the plugin takes as now (Unix seconds); tests move it.
		 *
		 * @param int $now Unix time.
		 */
		$until  = (int) apply_filters( 'counterfoil_now', time() );
		$orders = self::unnumbered( $since, $until );
		$out    = array(
			'since'    => $since,
			'until'    => $until,
			'orders'   => $orders,
			'numbered' => array(),
			'failed'   => array(),
			'executed' => (bool) $execute,
		);
		if ( ! $execute ) {
			return $out;
		}
		foreach ( $orders as $id ) {
			$result = Counterfoil_WooCommerce::number_order( $id );
			if ( is_array( $result ) ) {
				$out['numbered'][ $id ] = (string) $result['number'];
			} else {
				$out['failed'][ $id ] = is_wp_error( $result ) ? $result->get_error_message() : __( 'not a paid order', 'counterfoil' );
			}
		}
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
	 * default false). Response: since, until, orders, executed, numbered
	 * (order id → number), failed (order id → error); 200, or 207 when some
	 * failed (they are retried automatically). Who: manage_woocommerce,
	 * e.g. with an application password (`counterfoil woocommerce
	 * backfill`).
	 *
	 * @param WP_REST_Request $request Request.
	 * @return WP_REST_Response
	 */
	public static function rest_backfill( $request ) {
		$run = self::run( (bool) $request->get_param( 'execute' ) );
		$out = array(
			'since'    => gmdate( 'c', $run['since'] ),
			'until'    => gmdate( 'c', $run['until'] ),
			'orders'   => $run['orders'],
			'executed' => $run['executed'],
			'numbered' => (object) $run['numbered'],
			'failed'   => (object) $run['failed'],
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
			/* translators: 1: orders numbered, 2: orders that failed */
			__( 'Paid orders of this period without an invoice number: %1$d numbered, %2$d failed (retried automatically).', 'counterfoil' ),
			count( $run['numbered'] ),
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
	 * The settings page's backfill form (after the settings form).
	 */
	public static function backfill_form() {
		$count = count( self::unnumbered( self::period_start(), time(), self::MAX ) );
		?>
		<h2><?php esc_html_e( 'WooCommerce orders without an invoice number', 'counterfoil' ); ?></h2>
		<p id="counterfoil-woocommerce-unnumbered">
		<?php
		/* translators: %d: number of orders */
		echo esc_html( sprintf( _n( '%d paid order of this period has no invoice number.', '%d paid orders of this period have no invoice number.', $count, 'counterfoil' ), $count ) );
		?>
		</p>
		<?php if ( $count > 0 && current_user_can( 'manage_woocommerce' ) ) : ?>
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
	 * The Site Health test's result.
	 *
	 * @return array
	 */
	public static function site_health() {
		$now    = time();
		$since  = min( self::period_start(), $now - 31 * DAY_IN_SECONDS );
		$orders = self::unnumbered( $since, $now, 100 );
		$result = array(
			'label'       => __( 'Paid WooCommerce orders have invoice numbers', 'counterfoil' ),
			'status'      => 'good',
			'badge'       => array(
				'label' => __( 'Invoices', 'counterfoil' ),
				'color' => 'blue',
			),
			'description' => '<p>' . esc_html__( 'Every order paid in this numbering period and the last 31 days has its invoice number.', 'counterfoil' ) . '</p>',
			'actions'     => '',
			'test'        => 'counterfoil_woocommerce',
		);
		if ( empty( $orders ) ) {
			return $result;
		}
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
		$result['actions']     = '<a href="' . esc_url( admin_url( 'options-general.php?page=counterfoil' ) ) . '">' . esc_html__( 'Invoice numbers settings', 'counterfoil' ) . '</a>';
		return $result;
	}
}
