<?php
/**
 * No live numbers from a copy of the site.
 *
 * Hosts copy a live site with its database to a staging address; a test
 * payment or a replayed webhook there would take a real number from the
 * live series and leave a hole (or a duplicate) in the live books. So the
 * plugin records where it numbers invoices — the site's address as its
 * database stores it (the `home` option, normalised: a host's copy tool
 * rewrites it; a WP_HOME constant made from the request's host does not
 * count, or every host name of one site would be a copy), the database's
 * name and wp_get_environment_type() — and numbers only there.
 *
 * Invariants:
 * - the identity is recorded once, when the plugin's tables are installed
 *   (option counterfoil_site_identity), and changed only by an admin's
 *   confirmation ("this site moved": the current address and environment
 *   become the identity) — never by a request;
 * - while the site runs with another address or environment, numbering is
 *   paused: a payment (or a refund's credit note) is recorded without a
 *   number, held as for a missing series and answered 503 with
 *   Retry-After; an admin notice and Site Health say why; nothing takes a
 *   number of any series;
 * - after the confirmation, the held payments are completed from the
 *   settings page like any waiting payment.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * The site's recorded identity.
 */
final class Counterfoil_Site_Identity {
	/** The option holding the site's recorded identity: its address, database and environment type. */
	const OPTION = 'counterfoil_site_identity';
	const ACTION = 'counterfoil_confirm_site';

	/** Hooks. */
	public static function init() {
		add_action( 'admin_notices', array( __CLASS__, 'notice' ) );
		add_action( 'admin_post_' . self::ACTION, array( __CLASS__, 'handle_confirm' ) );
		add_filter( 'site_status_tests', array( __CLASS__, 'site_status_tests' ) );
	}

	/**
	 * Where this copy of the site runs now: its normalised address and its
	 * environment type.
	 *
	 * @return array address, environment.
	 */
	public static function current() {
		// The stored value from the autoloaded options (read once per request,
		// no query per payment), not get_option()'s, which WP_HOME replaces.
		$all   = wp_load_alloptions();
		$home  = isset( $all['home'] ) ? (string) $all['home'] : '';
		$parts = wp_parse_url( $home );
		$host  = isset( $parts['host'] ) ? strtolower( $parts['host'] ) : '';
		$port  = isset( $parts['port'] ) ? ':' . (int) $parts['port'] : '';
		$path  = isset( $parts['path'] ) ? rtrim( $parts['path'], '/' ) : '';
		return array(
			'address'     => $host . $port . $path,
			'database'    => defined( 'DB_NAME' ) ? (string) DB_NAME : '',
			'environment' => wp_get_environment_type(),
		);
	}

	/** The recorded identity, or null before the first install recorded it. */
	public static function recorded() {
		$v = get_option( self::OPTION );
		return is_array( $v ) && isset( $v['address'], $v['environment'] ) ? $v : null;
	}

	/** Records the current identity unless one is recorded (installs and upgrades). */
	public static function remember() {
		if ( null === self::recorded() ) {
			update_option( self::OPTION, self::current() + array( 'at' => time() ), true );
		}
	}

	/**
	 * Why numbering is paused on this copy, or null when it runs where it
	 * was set up.
	 *
	 * @return string|null
	 */
	public static function paused_reason() {
		$recorded = self::recorded();
		if ( null === $recorded ) {
			return null;
		}
		$now = self::current();
		if ( $now['address'] !== $recorded['address'] ) {
			/* translators: 1: the address now, 2: the recorded address */
			return sprintf( __( 'this site runs at %1$s, but its invoice numbers belong to %2$s (a copy of the site, such as a staging site?)', 'counterfoil' ), $now['address'], $recorded['address'] );
		}
		if ( isset( $recorded['database'] ) && $now['database'] !== $recorded['database'] ) {
			/* translators: 1: the database now, 2: the recorded database */
			return sprintf( __( 'this site uses database %1$s, but its invoice numbers were set up in database %2$s (a copy of the site?)', 'counterfoil' ), $now['database'], $recorded['database'] );
		}
		if ( $now['environment'] !== $recorded['environment'] ) {
			/* translators: 1: the environment now, 2: the recorded environment */
			return sprintf( __( 'this site runs as a %1$s environment, but its invoice numbers were set up in a %2$s one', 'counterfoil' ), $now['environment'], $recorded['environment'] );
		}
		return null;
	}

	/** The admin's confirmation: this site moved; numbering resumes here. */
	public static function handle_confirm() {
		Counterfoil_Admin::guard( 'confirm_site' );
		update_option( self::OPTION, self::current() + array( 'at' => time() ), true );
		set_transient( 'counterfoil_notice_' . get_current_user_id(), array( 'success', __( 'Numbering resumes at this address. Payments recorded meanwhile wait for their numbers: complete them below.', 'counterfoil' ) ), 60 );
		wp_safe_redirect( admin_url( 'options-general.php?page=' . Counterfoil_Admin::SLUG ) );
		exit;
	}

	/** admin_notices: numbering is paused, with the confirmation form. */
	public static function notice() {
		$why = self::paused_reason();
		if ( null === $why || ! current_user_can( Counterfoil_Admin::CAPABILITY ) ) {
			return;
		}
		?>
		<div class="notice notice-error" id="counterfoil-site-paused">
			<p>
				<?php
				/* translators: %s: why */
				echo esc_html( sprintf( __( 'Counterfoil does not number invoices here: %s. Payments are recorded and wait without a number, so the live books get no hole and no duplicate.', 'counterfoil' ), $why ) );
				?>
			</p>
			<form method="post" action="<?php echo esc_url( admin_url( 'admin-post.php' ) ); ?>">
				<input type="hidden" name="action" value="<?php echo esc_attr( self::ACTION ); ?>">
				<?php wp_nonce_field( self::ACTION ); ?>
				<p><?php submit_button( __( 'This site moved: number invoices here', 'counterfoil' ), 'secondary', 'submit', false ); ?>
				<?php esc_html_e( 'Only if this is now the live shop. On a copy, leave it paused.', 'counterfoil' ); ?></p>
			</form>
		</div>
		<?php
	}

	/** Site Health: whether numbering is paused on this copy. */
	public static function site_status_tests( $tests ) {
		$tests['direct']['counterfoil_site_identity'] = array(
			'label' => __( 'Counterfoil: site address', 'counterfoil' ),
			'test'  => array( __CLASS__, 'test_site_identity' ),
		);
		return $tests;
	}

	/** The Site Health result. */
	public static function test_site_identity() {
		$why = self::paused_reason();
		$ok  = null === $why;
		return array(
			'label'       => $ok ? __( 'Invoices are numbered at the address they were set up at', 'counterfoil' ) : __( 'Invoice numbering is paused: this looks like a copy of the site', 'counterfoil' ),
			'status'      => $ok ? 'good' : 'critical',
			'badge'       => array(
				'label' => __( 'Invoice numbers', 'counterfoil' ),
				'color' => $ok ? 'blue' : 'red',
			),
			/* translators: %s: why */
			'description' => '<p>' . esc_html( $ok ? __( 'Payments take numbers here.', 'counterfoil' ) : sprintf( __( 'Payments are recorded without a number: %s. If this is now the live shop, confirm it on the notice at the top of any admin page.', 'counterfoil' ), $why ) ) . '</p>',
			'actions'     => '',
			'test'        => 'counterfoil_site_identity',
		);
	}
}
