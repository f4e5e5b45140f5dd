<?php
/**
 * The VAT treatment of a shop's tax rates and tax classes: which EN 16931
 * VAT category (BT-151) a WooCommerce line taxed at a rate, or left
 * untaxed in a tax class, is sold under, with its exemption code (BT-121,
 * CEF's VATEX list) and the shop's own words (BT-120).
 *
 * Invariants: the rules are the shop's own statement, one a line of the
 * setting — `rate:<tax rate id> = <category> [<VATEX code>] [| <text>]` or
 * `class:<tax class slug, "standard" for the standard class> = …`; a rule
 * is saved only when it parses (category on UNCL5305's list as EN 16931
 * uses it, code on the VATEX list of the core's twin); a taxed line at a
 * rate above zero is standard-rated unless a rule says otherwise, and a
 * rule that gives such a line another category makes the line
 * unstatable (the document is refused, naming BG-25) rather than
 * contradict the VAT charged; an untaxed line without a rule takes the
 * seller's "VAT category of a payment without lines", else none (refused);
 * the document's own checks (the core's twin) judge the rest — reverse
 * charge only with the buyer's VAT id, the code of the line's category.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * The shop's VAT categories for its tax rates and classes.
 */
final class Counterfoil_Vat_Categories {
	/** The rules, parsed: "rate:<id>" or "class:<slug>" => [category, code, text]. */
	const OPTION = 'counterfoil_vat_categories';

	/**
	 * The rules as saved.
	 *
	 * @return array
	 */
	public static function rules() {
		$rules = get_option( self::OPTION, array() );
		return is_array( $rules ) ? $rules : array();
	}

	/**
	 * Parses the setting's text.
	 *
	 * @param string $text One rule a line.
	 * @return array|string The rules, or why not (naming the line).
	 */
	public static function parse( $text ) {
		$rules = array();
		foreach ( preg_split( '/\R/', (string) $text ) as $i => $line ) {
			$line = trim( $line );
			if ( '' === $line ) {
				continue;
			}
			$ok = preg_match( '/^(rate:[0-9]+|class:[a-z0-9_-]+)\s*=\s*(S|Z|E|AE|K|G|O)(?:\s+(VATEX-[A-Z0-9-]+))?\s*(?:\|\s*(.*))?\z/', $line, $m );
			if ( ! $ok ) {
				/* translators: 1: line number, 2: the line */
				return sprintf( __( 'line %1$d (%2$s) is not "rate:<id> = <category> [<VATEX code>] [| <text>]" or "class:<slug> = …" with a category S, Z, E, AE, K, G or O', 'counterfoil' ), $i + 1, $line );
			}
			$code = isset( $m[3] ) ? $m[3] : '';
			if ( '' !== $code && ! in_array( $code, Counterfoil_Einvoice::VATEX, true ) ) {
				/* translators: 1: line number, 2: the code */
				return sprintf( __( 'line %1$d: %2$s is not on CEF\'s VATEX list (BT-121)', 'counterfoil' ), $i + 1, $code );
			}
			$rules[ $m[1] ] = array( $m[2], $code, isset( $m[4] ) ? trim( $m[4] ) : '' );
		}
		return $rules;
	}

	/**
	 * The rules as the setting's text.
	 *
	 * @param array $rules Rules.
	 * @return string
	 */
	public static function text( array $rules ) {
		$lines = array();
		foreach ( $rules as $key => $rule ) {
			$lines[] = trim( $key . ' = ' . $rule[0] . ( '' !== $rule[1] ? ' ' . $rule[1] : '' ) . ( '' !== $rule[2] ? ' | ' . $rule[2] : '' ) );
		}
		return implode( "\n", $lines );
	}

	/**
	 * The VAT fields of a line: taxed at `$rate` under the tax rate
	 * `$rate_id`, or untaxed (`$rate_id` null) in the tax class `$class`.
	 *
	 * @param int|null $rate_id The tax rate charged, or null.
	 * @param string   $rate    Its percentage as a decimal string.
	 * @param string   $class   The item's tax class ('' is the standard class).
	 * @param array    $seller  The seller (default_vat_category).
	 * @return array|null vat_rate, vat_category and the exemption, or null
	 *                    when the line cannot be stated.
	 */
	public static function of_line( $rate_id, $rate, $class, array $seller ) {
		$rules = self::rules();
		$key   = null !== $rate_id ? 'rate:' . (int) $rate_id : 'class:' . ( '' === (string) $class ? 'standard' : (string) $class );
		if ( isset( $rules[ $key ] ) ) {
			list( $category, $code, $text ) = $rules[ $key ];
		} elseif ( null !== $rate_id ) {
			list( $category, $code, $text ) = array( '0' === $rate ? 'Z' : 'S', '', '' );
		} elseif ( isset( $seller['default_vat_category'] ) && '' !== $seller['default_vat_category'] ) {
			list( $category, $code, $text ) = array( (string) $seller['default_vat_category'], '', isset( $seller['default_vat_exemption'] ) ? (string) $seller['default_vat_exemption'] : '' );
		} else {
			return null;
		}
		$rated = null !== $rate_id && '0' !== $rate;
		if ( $rated !== ( 'S' === $category ) ) {
			return null; // A rule that contradicts the VAT charged.
		}
		$line = array(
			'vat_rate'     => null !== $rate_id ? $rate : '0',
			'vat_category' => $category,
		);
		if ( '' !== $code ) {
			$line['vat_exemption_code'] = $code;
		}
		if ( '' !== $text ) {
			$line['vat_exemption_reason'] = $text;
		}
		return $line;
	}

	/** The settings page's part (inside the settings form). */
	public static function settings_fields() {
		printf(
			'<p><label>%1$s<br><textarea name="vat_categories" rows="4" cols="70" class="code">%2$s</textarea></label><br><span class="description">%3$s</span></p>',
			esc_html__( 'VAT categories of tax rates and classes (e-invoices)', 'counterfoil' ),
			esc_textarea( self::text( self::rules() ) ),
			esc_html__( 'One a line: "rate:<tax rate id> = <category> [<VATEX code>] [| <exemption text>]" or "class:<tax class slug> = …" ("class:standard" for the standard class). Categories: S standard, Z zero rated, E exempt, AE reverse charge, K intra-community supply, G export, O not subject to VAT. Example: class:zero-rate = E VATEX-EU-132-1J | Exempt: cultural services', 'counterfoil' )
		);
	}

	/**
	 * Saves the setting from the settings form.
	 *
	 * @return string|null Why nothing was saved, or null.
	 */
	public static function save_settings() {
		// phpcs:ignore WordPress.Security.NonceVerification.Missing -- checked by the settings form's guard().
		if ( ! isset( $_POST['vat_categories'] ) ) {
			return null;
		}
		// phpcs:ignore WordPress.Security.NonceVerification.Missing -- checked by the settings form's guard().
		$rules = self::parse( sanitize_textarea_field( wp_unslash( $_POST['vat_categories'] ) ) );
		if ( is_string( $rules ) ) {
			/* translators: %s: what is wrong */
			return sprintf( __( 'The VAT categories were not saved: %s.', 'counterfoil' ), $rules );
		}
		update_option( self::OPTION, $rules, false );
		return null;
	}
}
