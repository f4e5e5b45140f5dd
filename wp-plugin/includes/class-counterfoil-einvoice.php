<?php
/**
 * E-invoices on the pure-PHP backend: the twin of the core's EN 16931
 * document and its UBL (Peppol BIS 3.0 when both parties are Peppol
 * participants, else plain EN 16931) and CII serializers
 * (core/src/einvoice/), held to the same bytes by the shared vectors
 * (tests/vectors/einvoice.json and einvoice/, wp-plugin/tests/VectorsTest.php).
 *
 * Invariants: every amount by EN 16931's calculation rules in exact decimals
 * ([mantissa, scale] pairs of PHP integers, 64-bit like the core's, every
 * operation checked: what does not fit is refused, never a float); a document
 * is refused, naming the business term, when it lacks what a valid one
 * requires; the same input gives the same bytes as the core's.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * A document refused: `term` names the business term (BT-1, BT-25, …).
 */
final class Counterfoil_Einvoice_Refusal extends InvalidArgumentException {
	/** @var string The business term. */
	public $term;

	/**
	 * @param string $term    Business term.
	 * @param string $message Why.
	 */
	public function __construct( $term, $message ) {
		parent::__construct( $term . ': ' . $message );
		$this->term = $term;
	}
}

/**
 * The document model and its two XML syntaxes.
 */
final class Counterfoil_Einvoice {
	const CUSTOMIZATION_ID = 'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0';
	const PROFILE_ID       = 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';
	const GUIDELINE_ID     = 'urn:cen.eu:en16931:2017';
	/**
	 * The electronic address schemes Peppol accepts (its EAS list as
	 * PEPPOL-EN16931-CL008 checks it in BIS Billing 3.0.19): the core's
	 * `peppol::PEPPOL_EAS`, held to it by the shared vectors.
	 */
	const PEPPOL_EAS = array( '0002', '0007', '0009', '0037', '0060', '0088', '0096', '0097', '0106', '0130', '0135', '0142', '0147', '0151', '0154', '0158', '0170', '0177', '0183', '0184', '0188', '0190', '0191', '0192', '0193', '0194', '0195', '0196', '0198', '0199', '0200', '0201', '0202', '0203', '0204', '0205', '0208', '0209', '0210', '0211', '0212', '0213', '0215', '0216', '0217', '0218', '0221', '0225', '0230', '0235', '0240', '9910', '9913', '9914', '9915', '9918', '9919', '9920', '9922', '9923', '9924', '9925', '9926', '9927', '9928', '9929', '9930', '9931', '9932', '9933', '9934', '9935', '9936', '9937', '9938', '9939', '9940', '9941', '9942', '9943', '9944', '9945', '9946', '9947', '9948', '9949', '9950', '9951', '9952', '9953', '9957', '9959' );
	const CATEGORIES       = array( 'S', 'Z', 'E', 'AE', 'K', 'G', 'O' );
	/** ISO 4217 currency codes as BR-CL-04 lists them (the core's codes::CURRENCIES). */
	const CURRENCIES = array( 'AED', 'AFN', 'ALL', 'AMD', 'ANG', 'AOA', 'ARS', 'AUD', 'AWG', 'AZN', 'BAM', 'BBD', 'BDT', 'BGN', 'BHD', 'BIF', 'BMD', 'BND', 'BOB', 'BOV', 'BRL', 'BSD', 'BTN', 'BWP', 'BYN', 'BZD', 'CAD', 'CDF', 'CHE', 'CHF', 'CHW', 'CLF', 'CLP', 'CNY', 'COP', 'COU', 'CRC', 'CUC', 'CUP', 'CVE', 'CZK', 'DJF', 'DKK', 'DOP', 'DZD', 'EGP', 'ERN', 'ETB', 'EUR', 'FJD', 'FKP', 'GBP', 'GEL', 'GHS', 'GIP', 'GMD', 'GNF', 'GTQ', 'GYD', 'HKD', 'HNL', 'HTG', 'HUF', 'IDR', 'ILS', 'INR', 'IQD', 'IRR', 'ISK', 'JMD', 'JOD', 'JPY', 'KES', 'KGS', 'KHR', 'KMF', 'KPW', 'KRW', 'KWD', 'KYD', 'KZT', 'LAK', 'LBP', 'LKR', 'LRD', 'LSL', 'LYD', 'MAD', 'MDL', 'MGA', 'MKD', 'MMK', 'MNT', 'MOP', 'MRO', 'MUR', 'MVR', 'MWK', 'MXN', 'MXV', 'MYR', 'MZN', 'NAD', 'NGN', 'NIO', 'NOK', 'NPR', 'NZD', 'OMR', 'PAB', 'PEN', 'PGK', 'PHP', 'PKR', 'PLN', 'PYG', 'QAR', 'RON', 'RSD', 'RUB', 'RWF', 'SAR', 'SBD', 'SCR', 'SDG', 'SEK', 'SGD', 'SHP', 'SLE', 'SOS', 'SRD', 'SSP', 'STD', 'SVC', 'SYP', 'SZL', 'THB', 'TJS', 'TMT', 'TND', 'TOP', 'TRY', 'TTD', 'TWD', 'TZS', 'UAH', 'UGX', 'USD', 'USN', 'UYI', 'UYU', 'UZS', 'VED', 'VES', 'VND', 'VUV', 'WST', 'XAF', 'XAG', 'XAU', 'XBA', 'XBB', 'XBC', 'XBD', 'XCD', 'XDR', 'XOF', 'XPD', 'XPF', 'XPT', 'XSU', 'XTS', 'XUA', 'XXX', 'YER', 'ZAR', 'ZMW', 'ZWG' );
	/** ISO 3166-1 alpha-2 (with 1A, XI) as BR-CL-14 lists them (the core's codes::COUNTRIES). */
	const COUNTRIES = array( '1A', 'AD', 'AE', 'AF', 'AG', 'AI', 'AL', 'AM', 'AO', 'AQ', 'AR', 'AS', 'AT', 'AU', 'AW', 'AX', 'AZ', 'BA', 'BB', 'BD', 'BE', 'BF', 'BG', 'BH', 'BI', 'BJ', 'BL', 'BM', 'BN', 'BO', 'BQ', 'BR', 'BS', 'BT', 'BV', 'BW', 'BY', 'BZ', 'CA', 'CC', 'CD', 'CF', 'CG', 'CH', 'CI', 'CK', 'CL', 'CM', 'CN', 'CO', 'CR', 'CU', 'CV', 'CW', 'CX', 'CY', 'CZ', 'DE', 'DJ', 'DK', 'DM', 'DO', 'DZ', 'EC', 'EE', 'EG', 'EH', 'ER', 'ES', 'ET', 'FI', 'FJ', 'FK', 'FM', 'FO', 'FR', 'GA', 'GB', 'GD', 'GE', 'GF', 'GG', 'GH', 'GI', 'GL', 'GM', 'GN', 'GP', 'GQ', 'GR', 'GS', 'GT', 'GU', 'GW', 'GY', 'HK', 'HM', 'HN', 'HR', 'HT', 'HU', 'ID', 'IE', 'IL', 'IM', 'IN', 'IO', 'IQ', 'IR', 'IS', 'IT', 'JE', 'JM', 'JO', 'JP', 'KE', 'KG', 'KH', 'KI', 'KM', 'KN', 'KP', 'KR', 'KW', 'KY', 'KZ', 'LA', 'LB', 'LC', 'LI', 'LK', 'LR', 'LS', 'LT', 'LU', 'LV', 'LY', 'MA', 'MC', 'MD', 'ME', 'MF', 'MG', 'MH', 'MK', 'ML', 'MM', 'MN', 'MO', 'MP', 'MQ', 'MR', 'MS', 'MT', 'MU', 'MV', 'MW', 'MX', 'MY', 'MZ', 'NA', 'NC', 'NE', 'NF', 'NG', 'NI', 'NL', 'NO', 'NP', 'NR', 'NU', 'NZ', 'OM', 'PA', 'PE', 'PF', 'PG', 'PH', 'PK', 'PL', 'PM', 'PN', 'PR', 'PS', 'PT', 'PW', 'PY', 'QA', 'RE', 'RO', 'RS', 'RU', 'RW', 'SA', 'SB', 'SC', 'SD', 'SE', 'SG', 'SH', 'SI', 'SJ', 'SK', 'SL', 'SM', 'SN', 'SO', 'SR', 'SS', 'ST', 'SV', 'SX', 'SY', 'SZ', 'TC', 'TD', 'TF', 'TG', 'TH', 'TJ', 'TK', 'TL', 'TM', 'TN', 'TO', 'TR', 'TT', 'TV', 'TW', 'TZ', 'UA', 'UG', 'UM', 'US', 'UY', 'UZ', 'VA', 'VC', 'VE', 'VG', 'VI', 'VN', 'VU', 'WF', 'WS', 'XI', 'YE', 'YT', 'ZA', 'ZM', 'ZW' );
	const EXEMPTION        = array(
		'E'  => 'Exempt from VAT',
		'AE' => 'Reverse charge',
		'K'  => 'Intra-community supply',
		'G'  => 'Export outside the EU',
		'O'  => 'Not subject to VAT',
	);

	// Decimals: [mantissa, scale]; null where the core's Option is None.

	/** Parses a plain decimal string (at most 9 decimals, 18 digits), or null. */
	public static function dec( $text ) {
		if ( ! is_string( $text ) || ! preg_match( '/^(-?)([0-9]+)(?:\.([0-9]+))?\z/', $text, $m ) ) {
			return null;
		}
		$fraction = isset( $m[3] ) ? $m[3] : '';
		if ( strlen( $fraction ) > 9 || strlen( $m[2] ) + strlen( $fraction ) > 18 ) {
			return null;
		}
		$mantissa = (int) ( $m[2] . $fraction );
		return array( '-' === $m[1] ? -$mantissa : $mantissa, strlen( $fraction ) );
	}

	/** 10^$n as an integer, or null. */
	private static function pow10( $n ) {
		if ( $n < 0 || $n > 18 ) {
			return null;
		}
		return (int) ( '1' . str_repeat( '0', $n ) );
	}

	/** $a × $b when it fits in an integer, or null. */
	private static function imul( $a, $b ) {
		if ( null === $a || null === $b ) {
			return null;
		}
		$r = $a * $b;
		return is_int( $r ) ? $r : null;
	}

	private static function rescaled( $d, $scale ) {
		return null === $d || $scale < $d[1] ? null : self::imul( $d[0], self::pow10( $scale - $d[1] ) );
	}

	/** The sum, or null. */
	public static function add( $a, $b ) {
		if ( null === $a || null === $b ) {
			return null;
		}
		$scale = max( $a[1], $b[1] );
		$x     = self::rescaled( $a, $scale );
		$y     = self::rescaled( $b, $scale );
		if ( null === $x || null === $y ) {
			return null;
		}
		$r = $x + $y;
		return is_int( $r ) ? array( $r, $scale ) : null;
	}

	/** The difference, or null. */
	public static function sub( $a, $b ) {
		if ( null === $b ) {
			return null;
		}
		$n = -$b[0];
		return is_int( $n ) ? self::add( $a, array( $n, $b[1] ) ) : null;
	}

	/** The exact product, or null. */
	public static function mul( $a, $b ) {
		if ( null === $a || null === $b ) {
			return null;
		}
		$m = self::imul( $a[0], $b[0] );
		return null === $m ? null : array( $m, $a[1] + $b[1] );
	}

	/** Rounded to $places, half away from zero, or null. */
	public static function round( $d, $places ) {
		if ( null === $d ) {
			return null;
		}
		if ( $d[1] <= $places ) {
			$m = self::rescaled( $d, $places );
			return null === $m ? null : array( $m, $places );
		}
		$divisor   = self::pow10( $d[1] - $places );
		$quotient  = intdiv( $d[0], $divisor );
		$remainder = abs( $d[0] % $divisor );
		if ( $remainder >= $divisor - $remainder ) {
			$quotient += $d[0] <=> 0;
		}
		return array( $quotient, $places );
	}

	/** -1, 0 or 1. */
	public static function cmp( $a, $b ) {
		$scale = max( $a[1], $b[1] );
		$x     = self::rescaled( $a, $scale );
		$y     = self::rescaled( $b, $scale );
		if ( null !== $x && null !== $y ) {
			return $x <=> $y;
		}
		return (float) self::str( $a ) <=> (float) self::str( $b );
	}

	/** Written as a plain decimal with its scale. */
	public static function str( $d ) {
		$digits = (string) abs( $d[0] );
		$sign   = $d[0] < 0 ? '-' : '';
		if ( 0 === $d[1] ) {
			return $sign . $digits;
		}
		$digits = str_pad( $digits, $d[1] + 1, '0', STR_PAD_LEFT );
		return $sign . substr( $digits, 0, -$d[1] ) . '.' . substr( $digits, -$d[1] );
	}

	/** Written without trailing zeros after the point. */
	public static function trimmed( $d ) {
		while ( $d[1] > 0 && 0 === $d[0] % 10 ) {
			$d = array( intdiv( $d[0], 10 ), $d[1] - 1 );
		}
		return self::str( $d );
	}

	// The document.

	private static function text( $v ) {
		return is_string( $v ) && '' !== trim( $v ) ? $v : null;
	}

	private static function field( array $a, $key ) {
		return isset( $a[ $key ] ) && is_string( $a[ $key ] ) ? $a[ $key ] : '';
	}

	/** Whether $s is a day YYYY-MM-DD of the calendar (the core's export::is_day). */
	private static function is_date( $s ) {
		return is_string( $s ) && preg_match( '/^([0-9]{4})-([0-9]{2})-([0-9]{2})\z/', $s, $m )
			&& checkdate( (int) $m[2], (int) $m[3], (int) $m[1] );
	}

	/**
	 * The payment terms' check (the core's terms::check): BT-9 a real day,
	 * not before the issue date, never on a credit note; an amount due
	 * needs a due date or terms (BR-CO-25).
	 *
	 * @param array    $in     Input.
	 * @param bool     $credit Whether a credit note.
	 * @param array    $due    Amount due.
	 * @param callable $refuse Throws.
	 */
	private static function check_terms( array $in, $credit, array $due, $refuse ) {
		$date  = self::text( isset( $in['due_date'] ) ? $in['due_date'] : null );
		$terms = self::text( isset( $in['payment_terms'] ) ? $in['payment_terms'] : null );
		if ( null !== $date ) {
			if ( $credit ) {
				$refuse( 'BT-9', 'payment due date is invalid: a credit note has no due date in UBL 2.1: state payment terms (BT-20)' );
			}
			if ( ! self::is_date( $date ) ) {
				$refuse( 'BT-9', "payment due date is invalid: `$date` is not a date YYYY-MM-DD" );
			}
			if ( strcmp( $date, self::field( $in, 'issue_date' ) ) < 0 ) {
				$refuse( 'BT-9', 'payment due date is invalid: ' . $date . ' is before the issue date ' . self::field( $in, 'issue_date' ) );
			}
		}
		if ( $due[0] > 0 && null === $date && null === $terms ) {
			$refuse( 'BT-9', 'payment due date is missing: BR-CO-25: an amount due for payment needs a due date (BT-9) or payment terms (BT-20)' );
		}
	}

	private static function fits( $v, $term, $what ) {
		if ( null === $v ) {
			throw new Counterfoil_Einvoice_Refusal( $term, "$what: too large to compute exactly" );
		}
		return $v;
	}

	/**
	 * Checks the input (the vectors' shape) and computes every amount.
	 *
	 * @param array $in kind, number, issue_date, currency, buyer_reference,
	 *                  paid, preceding, preceding_date, seller, buyer, lines.
	 * @return array The document: the input plus lines (with net), breakdown,
	 *               totals, places.
	 * @throws Counterfoil_Einvoice_Refusal Naming the business term.
	 */
	public static function document( array $in ) {
		$refuse = function ( $term, $why ) {
			throw new Counterfoil_Einvoice_Refusal( $term, $why );
		};
		if ( '' === trim( self::field( $in, 'number' ) ) ) {
			$refuse( 'BT-1', 'invoice number is missing (BR-02)' );
		}
		if ( ! self::is_date( self::field( $in, 'issue_date' ) ) ) {
			$refuse( 'BT-2', 'the issue date is not a date YYYY-MM-DD' );
		}
		$currency = self::field( $in, 'currency' );
		if ( ! preg_match( '/^[A-Za-z]{3}\z/', $currency ) ) {
			$refuse( 'BT-5', 'a currency is a three-letter ISO code such as EUR' );
		}
		$currency = strtoupper( $currency );
		if ( ! in_array( $currency, self::CURRENCIES, true ) ) {
			$refuse( 'BT-5', "`$currency` is not an ISO 4217 currency code (BR-CL-04)" );
		}
		$credit   = 'credit_note' === self::field( $in, 'kind' );
		if ( $credit ) {
			if ( '' === trim( self::field( $in, 'preceding' ) ) ) {
				$refuse( 'BT-25', 'a credit note names the invoice it corrects' );
			}
			if ( isset( $in['preceding_date'] ) && ! self::is_date( $in['preceding_date'] ) ) {
				$refuse( 'BT-26', 'the preceding invoice date is not a date YYYY-MM-DD' );
			}
		}
		$seller = isset( $in['seller'] ) && is_array( $in['seller'] ) ? $in['seller'] : array();
		$buyer  = isset( $in['buyer'] ) && is_array( $in['buyer'] ) ? $in['buyer'] : array();
		self::check_party( $seller, true );
		self::check_party( $buyer, false );
		$lines_in = isset( $in['lines'] ) && is_array( $in['lines'] ) ? $in['lines'] : array();
		if ( empty( $lines_in ) ) {
			$refuse( 'BG-25', 'an invoice has at least one line (BR-16)' );
		}
		$places    = in_array( $currency, Counterfoil_Rules::ZERO_DECIMAL, true ) ? 0 : 2;
		$lines     = array();
		$breakdown = array();
		foreach ( $lines_in as $l ) {
			$name     = self::field( $l, 'name' );
			$quantity = self::dec( isset( $l['quantity'] ) ? $l['quantity'] : null );
			$price    = self::dec( isset( $l['unit_price'] ) ? $l['unit_price'] : null );
			$rate     = self::dec( isset( $l['vat_rate'] ) ? $l['vat_rate'] : null );
			$category = self::field( $l, 'vat_category' );
			if ( null === $quantity || null === $price || null === $rate || ! in_array( $category, self::CATEGORIES, true ) ) {
				$refuse( 'BG-25', 'a line has quantity, unit_price and vat_rate as decimal strings and a VAT category' );
			}
			if ( '' === trim( $name ) ) {
				$refuse( 'BT-153', 'every line names its item (BR-25)' );
			}
			if ( $price[0] < 0 ) {
				$refuse( 'BT-146', 'a price is not negative (BR-27)' );
			}
			if ( 0 === $quantity[0] ) {
				$refuse( 'BT-129', 'a line bills a quantity other than zero' );
			}
			$zero = 0 === $rate[0];
			if ( 'S' === $category ? ( $zero || $rate[0] < 0 ) : ! $zero ) {
				$refuse( 'BT-152', "category $category takes " . ( 'S' === $category ? 'a rate above 0' : 'the rate 0' ) );
			}
			self::check_category_parties( $category, $seller, $buyer );
			$net = self::fits( self::round( self::mul( $quantity, $price ), 2 ), 'BT-131', 'invoice line net amount' );
			if ( 0 !== self::cmp( self::fits( self::round( $net, $places ), 'BT-131', 'invoice line net amount' ), $net ) ) {
				$refuse( 'BT-131', self::str( $net ) . " has decimals $currency does not have" );
			}
			$net   = self::round( $net, $places );
			$found = false;
			foreach ( $breakdown as &$b ) {
				if ( $b['category'] === $category && 0 === self::cmp( $b['rate'], $rate ) ) {
					$b['base'] = self::fits( self::add( $b['base'], $net ), 'BT-116', 'VAT category taxable amount' );
					$found     = true;
					break;
				}
			}
			unset( $b );
			if ( ! $found ) {
				$breakdown[] = array(
					'category' => $category,
					'rate'     => $rate,
					'base'     => $net,
					'tax'      => array( 0, 0 ),
				);
			}
			$lines[] = array(
				'name'     => $name,
				'quantity' => $quantity,
				'price'    => $price,
				'rate'     => $rate,
				'category' => $category,
				'net'      => $net,
			);
		}
		$zero = array( 0, $places );
		$vat  = $zero;
		foreach ( $breakdown as &$b ) {
			$tax = self::fits( self::round( self::mul( self::mul( $b['base'], $b['rate'] ), array( 1, 2 ) ), 2 ), 'BT-117', 'VAT category tax amount' );
			if ( 0 !== self::cmp( self::fits( self::round( $tax, $places ), 'BT-117', 'VAT category tax amount' ), $tax ) ) {
				$refuse( 'BT-117', self::str( $tax ) . " has decimals $currency does not have" );
			}
			$b['tax'] = self::round( $tax, $places );
			$vat      = self::fits( self::add( $vat, $b['tax'] ), 'BT-110', 'invoice total VAT amount' );
		}
		unset( $b );
		$sum = $zero;
		foreach ( $lines as $l ) {
			$sum = self::fits( self::add( $sum, $l['net'] ), 'BT-106', 'sum of invoice line net amounts' );
		}
		$with_vat = self::fits( self::add( $sum, $vat ), 'BT-112', 'invoice total amount with VAT' );
		$rounding = null;
		if ( isset( $in['rounding'] ) ) {
			$r = self::dec( $in['rounding'] );
			if ( null === $r ) {
				$refuse( 'BT-114', 'the rounding amount is not a decimal string such as "0.01"' );
			}
			$rounding = self::fits( self::round( $r, $places ), 'BT-114', 'rounding amount' );
			if ( $r[1] > 2 || 0 !== self::cmp( $rounding, $r ) ) {
				$refuse( 'BT-114', self::str( $r ) . " has decimals $currency amounts do not have" );
			}
		}
		// BR-CO-16: due = with VAT - paid + rounding; paid in full pays both.
		$payable = self::fits( self::add( $with_vat, null === $rounding ? $zero : $rounding ), 'BT-115', 'amount due for payment' );
		$paid    = ! empty( $in['paid'] ) ? $payable : $zero;
		$due     = self::fits( self::sub( $payable, $paid ), 'BT-115', 'amount due for payment' );
		if ( $with_vat[0] < 0 ) {
			$refuse( 'BT-112', 'a credit note states positive amounts; this total is negative' );
		}
		if ( $payable[0] < 0 ) {
			$refuse( 'BT-114', 'the amount payable (with VAT, plus the rounding) is negative' );
		}
		self::check_terms( $in, $credit, $due, $refuse );
		return array(
			'credit'          => $credit,
			'number'          => self::field( $in, 'number' ),
			'issue_date'      => self::field( $in, 'issue_date' ),
			'currency'        => $currency,
			'buyer_reference' => self::text( isset( $in['buyer_reference'] ) ? $in['buyer_reference'] : null ),
			'paid'            => ! empty( $in['paid'] ),
			'due_date'        => $credit ? null : self::text( isset( $in['due_date'] ) ? $in['due_date'] : null ),
			'payment_terms'   => self::text( isset( $in['payment_terms'] ) ? $in['payment_terms'] : null ),
			'preceding'       => self::field( $in, 'preceding' ),
			'preceding_date'  => isset( $in['preceding_date'] ) && is_string( $in['preceding_date'] ) ? $in['preceding_date'] : null,
			'seller'          => $seller,
			'buyer'           => $buyer,
			'lines'           => $lines,
			'breakdown'       => $breakdown,
			'places'          => $places,
			'totals'          => array(
				'lines'       => $sum,
				'without_vat' => $sum,
				'vat'         => $vat,
				'with_vat'    => $with_vat,
				'rounding'    => $rounding,
				'paid'        => $paid,
				'due'         => $due,
			),
		);
	}

	private static function check_party( array $p, $seller ) {
		if ( '' === trim( self::field( $p, 'name' ) ) ) {
			throw new Counterfoil_Einvoice_Refusal( $seller ? 'BT-27' : 'BT-44', 'both parties are named (BR-06 / BR-07)' );
		}
		$country = self::field( $p, 'country' );
		if ( ! in_array( $country, self::COUNTRIES, true ) ) {
			throw new Counterfoil_Einvoice_Refusal( $seller ? 'BT-40' : 'BT-55', '' === $country ? 'the country is missing' : "`$country` is not an ISO 3166-1 alpha-2 code such as BE or GB (BR-CL-14)" );
		}
		if ( ( null !== self::text( self::field( $p, 'electronic_address' ) ) ) !== ( null !== self::text( self::field( $p, 'electronic_address_scheme' ) ) ) ) {
			throw new Counterfoil_Einvoice_Refusal( $seller ? 'BT-34-1' : 'BT-49-1', 'an electronic address names its scheme (BR-62 / BR-63)' );
		}
		$vat = self::text( self::field( $p, 'vat_id' ) );
		if ( null !== $vat && 'EL' !== substr( $vat, 0, 2 ) && ! in_array( substr( $vat, 0, 2 ), self::COUNTRIES, true ) ) {
			throw new Counterfoil_Einvoice_Refusal( $seller ? 'BT-31' : 'BT-48', "BR-CO-09: `$vat` does not begin with its country's code (BE…, EL for Greece)" );
		}
		if ( $seller && null === $vat && null === self::text( self::field( $p, 'legal_id' ) ) ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-30', 'BR-CO-26: the seller is identified by a legal registration (BT-30) or a VAT identifier (BT-31)' );
		}
	}

	private static function check_category_parties( $c, array $seller, array $buyer ) {
		$seller_vat = null !== self::text( self::field( $seller, 'vat_id' ) );
		$buyer_vat  = null !== self::text( self::field( $buyer, 'vat_id' ) );
		if ( in_array( $c, array( 'S', 'Z', 'E', 'G', 'AE', 'K' ), true ) && ! $seller_vat ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-31', 'the supply names the seller\'s VAT identifier' );
		}
		if ( in_array( $c, array( 'AE', 'K' ), true ) && ! $buyer_vat ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-48', 'reverse charge and intra-community supply name the buyer\'s VAT identifier' );
		}
		if ( 'O' === $c && ( $seller_vat || $buyer_vat ) ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-31', 'a supply not subject to VAT names no VAT identifier of either party' );
		}
	}

	private static function money( array $doc, $d ) {
		return self::str( self::round( $d, $doc['places'] ) );
	}

	private static function has_k( array $doc ) {
		foreach ( $doc['breakdown'] as $b ) {
			if ( 'K' === $b['category'] ) {
				return true;
			}
		}
		return false;
	}

	/**
	 * The document as UBL 2.1 (Peppol BIS Billing 3.0 when claims_peppol(),
	 * else plain EN 16931).
	 *
	 * @param array $doc From document().
	 * @return string
	 */
	public static function ubl( array $doc ) {
		$credit = $doc['credit'];
		$cur    = array( 'currencyID' => $doc['currency'] );
		$w      = new Counterfoil_Xml_Writer();
		$w->open(
			$credit ? 'CreditNote' : 'Invoice',
			array(
				'xmlns'     => $credit ? 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2' : 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
				'xmlns:cac' => 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
				'xmlns:cbc' => 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
			)
		);
		if ( self::claims_peppol( $doc ) ) {
			$w->leaf( 'cbc:CustomizationID', self::CUSTOMIZATION_ID );
			$w->leaf( 'cbc:ProfileID', self::PROFILE_ID );
		} else {
			$w->leaf( 'cbc:CustomizationID', self::GUIDELINE_ID );
		}
		$w->leaf( 'cbc:ID', $doc['number'] );
		$w->leaf( 'cbc:IssueDate', $doc['issue_date'] );
		$w->leaf_opt( 'cbc:DueDate', $doc['due_date'] );
		$w->leaf( $credit ? 'cbc:CreditNoteTypeCode' : 'cbc:InvoiceTypeCode', $credit ? '381' : '380' );
		if ( $doc['paid'] ) {
			$w->leaf( 'cbc:Note', 'Paid' );
		}
		$w->leaf( 'cbc:DocumentCurrencyCode', $doc['currency'] );
		$w->leaf_opt( 'cbc:BuyerReference', $doc['buyer_reference'] );
		if ( $credit ) {
			$w->open( 'cac:BillingReference' )->open( 'cac:InvoiceDocumentReference' );
			$w->leaf( 'cbc:ID', $doc['preceding'] );
			$w->leaf_opt( 'cbc:IssueDate', $doc['preceding_date'] );
			$w->close()->close();
		}
		self::ubl_party( $w, 'cac:AccountingSupplierParty', $doc['seller'] );
		self::ubl_party( $w, 'cac:AccountingCustomerParty', $doc['buyer'] );
		if ( self::has_k( $doc ) ) {
			$w->open( 'cac:Delivery' );
			$w->leaf( 'cbc:ActualDeliveryDate', $doc['issue_date'] );
			$w->open( 'cac:DeliveryLocation' )->open( 'cac:Address' )->open( 'cac:Country' );
			$w->leaf( 'cbc:IdentificationCode', self::field( $doc['buyer'], 'country' ) );
			$w->close()->close()->close()->close();
		}
		$iban = self::transfer_account( $doc );
		if ( null !== $iban ) {
			$w->open( 'cac:PaymentMeans' );
			$w->leaf( 'cbc:PaymentMeansCode', '30' );
			$w->open( 'cac:PayeeFinancialAccount' );
			$w->leaf( 'cbc:ID', $iban );
			$w->close()->close();
		}
		if ( null !== $doc['payment_terms'] ) {
			$w->open( 'cac:PaymentTerms' );
			$w->leaf( 'cbc:Note', $doc['payment_terms'] );
			$w->close();
		}
		$w->open( 'cac:TaxTotal' );
		$w->leaf( 'cbc:TaxAmount', self::money( $doc, $doc['totals']['vat'] ), $cur );
		foreach ( $doc['breakdown'] as $b ) {
			$w->open( 'cac:TaxSubtotal' );
			$w->leaf( 'cbc:TaxableAmount', self::money( $doc, $b['base'] ), $cur );
			$w->leaf( 'cbc:TaxAmount', self::money( $doc, $b['tax'] ), $cur );
			self::ubl_tax_category( $w, 'cac:TaxCategory', $b['category'], self::trimmed( $b['rate'] ), true );
			$w->close();
		}
		$w->close();
		$w->open( 'cac:LegalMonetaryTotal' );
		$w->leaf( 'cbc:LineExtensionAmount', self::money( $doc, $doc['totals']['lines'] ), $cur );
		$w->leaf( 'cbc:TaxExclusiveAmount', self::money( $doc, $doc['totals']['without_vat'] ), $cur );
		$w->leaf( 'cbc:TaxInclusiveAmount', self::money( $doc, $doc['totals']['with_vat'] ), $cur );
		$w->leaf( 'cbc:PrepaidAmount', self::money( $doc, $doc['totals']['paid'] ), $cur );
		if ( null !== $doc['totals']['rounding'] ) {
			$w->leaf( 'cbc:PayableRoundingAmount', self::money( $doc, $doc['totals']['rounding'] ), $cur );
		}
		$w->leaf( 'cbc:PayableAmount', self::money( $doc, $doc['totals']['due'] ), $cur );
		$w->close();
		foreach ( $doc['lines'] as $i => $l ) {
			$w->open( $credit ? 'cac:CreditNoteLine' : 'cac:InvoiceLine' );
			$w->leaf( 'cbc:ID', (string) ( $i + 1 ) );
			$w->leaf( $credit ? 'cbc:CreditedQuantity' : 'cbc:InvoicedQuantity', self::trimmed( $l['quantity'] ), array( 'unitCode' => 'C62' ) );
			$w->leaf( 'cbc:LineExtensionAmount', self::money( $doc, $l['net'] ), $cur );
			$w->open( 'cac:Item' );
			$w->leaf( 'cbc:Name', $l['name'] );
			self::ubl_tax_category( $w, 'cac:ClassifiedTaxCategory', $l['category'], self::trimmed( $l['rate'] ), false );
			$w->close();
			$w->open( 'cac:Price' );
			$w->leaf( 'cbc:PriceAmount', self::trimmed( $l['price'] ), $cur );
			$w->close();
			$w->close();
		}
		return $w->finish();
	}

	private static function ubl_tax_category( Counterfoil_Xml_Writer $w, $element, $c, $rate, $reason ) {
		$w->open( $element );
		$w->leaf( 'cbc:ID', $c );
		if ( 'O' !== $c ) {
			$w->leaf( 'cbc:Percent', $rate );
		}
		if ( $reason ) {
			$w->leaf_opt( 'cbc:TaxExemptionReason', isset( self::EXEMPTION[ $c ] ) ? self::EXEMPTION[ $c ] : null );
		}
		$w->open( 'cac:TaxScheme' );
		$w->leaf( 'cbc:ID', 'VAT' );
		$w->close()->close();
	}

	/**
	 * The seller's account as the means to pay by credit transfer: on an
	 * invoice with an amount due only, never on a paid invoice or a credit
	 * note (the core's terms::transfer_account).
	 *
	 * @param array $doc From document().
	 * @return string|null
	 */
	private static function transfer_account( array $doc ) {
		return ! $doc['credit'] && $doc['totals']['due'][0] > 0 ? self::text( self::field( $doc['seller'], 'iban' ) ) : null;
	}

	/**
	 * Whether a party has a Peppol participant id: an electronic address
	 * under a scheme on Peppol's list (an e-mail, EM, is not).
	 *
	 * @param array $p Party.
	 * @return bool
	 */
	public static function is_peppol_participant( array $p ) {
		$scheme = self::text( self::field( $p, 'electronic_address_scheme' ) );
		return null !== self::text( self::field( $p, 'electronic_address' ) ) && in_array( $scheme, self::PEPPOL_EAS, true );
	}

	/**
	 * Whether a UBL document claims Peppol BIS Billing 3.0: both parties
	 * Peppol participants (PEPPOL-EN16931-R010, R020, CL008) and a buyer
	 * reference (R003); else it is plain EN 16931 (the core's
	 * `peppol::claims_peppol`).
	 *
	 * @param array $doc From document().
	 * @return bool
	 */
	public static function claims_peppol( array $doc ) {
		return self::is_peppol_participant( $doc['seller'] ) && self::is_peppol_participant( $doc['buyer'] ) && null !== $doc['buyer_reference'];
	}

	private static function ubl_party( Counterfoil_Xml_Writer $w, $role, array $p ) {
		$w->open( $role )->open( 'cac:Party' );
		$address = self::text( self::field( $p, 'electronic_address' ) );
		$scheme  = self::text( self::field( $p, 'electronic_address_scheme' ) );
		if ( null !== $address && null !== $scheme ) {
			$w->leaf( 'cbc:EndpointID', $address, array( 'schemeID' => $scheme ) );
		}
		$w->open( 'cac:PostalAddress' );
		$w->leaf_opt( 'cbc:StreetName', self::field( $p, 'street' ) );
		$w->leaf_opt( 'cbc:CityName', self::field( $p, 'city' ) );
		$w->leaf_opt( 'cbc:PostalZone', self::field( $p, 'postcode' ) );
		$w->open( 'cac:Country' );
		$w->leaf( 'cbc:IdentificationCode', self::field( $p, 'country' ) );
		$w->close()->close();
		$vat = self::text( self::field( $p, 'vat_id' ) );
		if ( null !== $vat ) {
			$w->open( 'cac:PartyTaxScheme' );
			$w->leaf( 'cbc:CompanyID', $vat );
			$w->open( 'cac:TaxScheme' );
			$w->leaf( 'cbc:ID', 'VAT' );
			$w->close()->close();
		}
		$w->open( 'cac:PartyLegalEntity' );
		$w->leaf( 'cbc:RegistrationName', self::field( $p, 'name' ) );
		$w->leaf_opt( 'cbc:CompanyID', self::field( $p, 'legal_id' ) );
		$w->close();
		if ( null !== self::text( self::field( $p, 'email' ) ) ) {
			$w->open( 'cac:Contact' );
			$w->leaf_opt( 'cbc:ElectronicMail', self::field( $p, 'email' ) );
			$w->close();
		}
		$w->close()->close();
	}

	/**
	 * The document as UN/CEFACT CII (EN 16931 profile).
	 *
	 * @param array $doc From document().
	 * @return string
	 */
	public static function cii( array $doc ) {
		$date102 = function ( $iso ) {
			return str_replace( '-', '', $iso );
		};
		$w       = new Counterfoil_Xml_Writer();
		$w->open(
			'rsm:CrossIndustryInvoice',
			array(
				'xmlns:rsm' => 'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100',
				'xmlns:qdt' => 'urn:un:unece:uncefact:data:standard:QualifiedDataType:100',
				'xmlns:ram' => 'urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100',
				'xmlns:udt' => 'urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100',
			)
		);
		$w->open( 'rsm:ExchangedDocumentContext' )->open( 'ram:GuidelineSpecifiedDocumentContextParameter' );
		$w->leaf( 'ram:ID', self::GUIDELINE_ID );
		$w->close()->close();
		$w->open( 'rsm:ExchangedDocument' );
		$w->leaf( 'ram:ID', $doc['number'] );
		$w->leaf( 'ram:TypeCode', $doc['credit'] ? '381' : '380' );
		$w->open( 'ram:IssueDateTime' );
		$w->leaf( 'udt:DateTimeString', $date102( $doc['issue_date'] ), array( 'format' => '102' ) );
		$w->close();
		if ( $doc['paid'] ) {
			$w->open( 'ram:IncludedNote' );
			$w->leaf( 'ram:Content', 'Paid' );
			$w->close();
		}
		$w->close();
		$w->open( 'rsm:SupplyChainTradeTransaction' );
		foreach ( $doc['lines'] as $i => $l ) {
			$w->open( 'ram:IncludedSupplyChainTradeLineItem' );
			$w->open( 'ram:AssociatedDocumentLineDocument' );
			$w->leaf( 'ram:LineID', (string) ( $i + 1 ) );
			$w->close();
			$w->open( 'ram:SpecifiedTradeProduct' );
			$w->leaf( 'ram:Name', $l['name'] );
			$w->close();
			$w->open( 'ram:SpecifiedLineTradeAgreement' )->open( 'ram:NetPriceProductTradePrice' );
			$w->leaf( 'ram:ChargeAmount', self::trimmed( $l['price'] ) );
			$w->close()->close();
			$w->open( 'ram:SpecifiedLineTradeDelivery' );
			$w->leaf( 'ram:BilledQuantity', self::trimmed( $l['quantity'] ), array( 'unitCode' => 'C62' ) );
			$w->close();
			$w->open( 'ram:SpecifiedLineTradeSettlement' );
			$w->open( 'ram:ApplicableTradeTax' );
			$w->leaf( 'ram:TypeCode', 'VAT' );
			$w->leaf( 'ram:CategoryCode', $l['category'] );
			if ( 'O' !== $l['category'] ) {
				$w->leaf( 'ram:RateApplicablePercent', self::trimmed( $l['rate'] ) );
			}
			$w->close();
			$w->open( 'ram:SpecifiedTradeSettlementLineMonetarySummation' );
			$w->leaf( 'ram:LineTotalAmount', self::money( $doc, $l['net'] ) );
			$w->close()->close()->close();
		}
		$w->open( 'ram:ApplicableHeaderTradeAgreement' );
		$w->leaf_opt( 'ram:BuyerReference', $doc['buyer_reference'] );
		self::cii_party( $w, 'ram:SellerTradeParty', $doc['seller'] );
		self::cii_party( $w, 'ram:BuyerTradeParty', $doc['buyer'] );
		$w->close();
		$w->open( 'ram:ApplicableHeaderTradeDelivery' );
		if ( self::has_k( $doc ) ) {
			$w->open( 'ram:ShipToTradeParty' )->open( 'ram:PostalTradeAddress' );
			$w->leaf( 'ram:CountryID', self::field( $doc['buyer'], 'country' ) );
			$w->close()->close();
			$w->open( 'ram:ActualDeliverySupplyChainEvent' )->open( 'ram:OccurrenceDateTime' );
			$w->leaf( 'udt:DateTimeString', $date102( $doc['issue_date'] ), array( 'format' => '102' ) );
			$w->close()->close();
		}
		$w->close();
		$w->open( 'ram:ApplicableHeaderTradeSettlement' );
		$w->leaf( 'ram:InvoiceCurrencyCode', $doc['currency'] );
		$iban = self::transfer_account( $doc );
		if ( null !== $iban ) {
			$w->open( 'ram:SpecifiedTradeSettlementPaymentMeans' );
			$w->leaf( 'ram:TypeCode', '30' );
			$w->open( 'ram:PayeePartyCreditorFinancialAccount' );
			$w->leaf( 'ram:IBANID', $iban );
			$w->close()->close();
		}
		foreach ( $doc['breakdown'] as $b ) {
			$w->open( 'ram:ApplicableTradeTax' );
			$w->leaf( 'ram:CalculatedAmount', self::money( $doc, $b['tax'] ) );
			$w->leaf( 'ram:TypeCode', 'VAT' );
			$w->leaf_opt( 'ram:ExemptionReason', isset( self::EXEMPTION[ $b['category'] ] ) ? self::EXEMPTION[ $b['category'] ] : null );
			$w->leaf( 'ram:BasisAmount', self::money( $doc, $b['base'] ) );
			$w->leaf( 'ram:CategoryCode', $b['category'] );
			if ( 'O' !== $b['category'] ) {
				$w->leaf( 'ram:RateApplicablePercent', self::trimmed( $b['rate'] ) );
			}
			$w->close();
		}
		if ( null !== $doc['due_date'] || null !== $doc['payment_terms'] ) {
			$w->open( 'ram:SpecifiedTradePaymentTerms' );
			$w->leaf_opt( 'ram:Description', $doc['payment_terms'] );
			if ( null !== $doc['due_date'] ) {
				$w->open( 'ram:DueDateDateTime' );
				$w->leaf( 'udt:DateTimeString', $date102( $doc['due_date'] ), array( 'format' => '102' ) );
				$w->close();
			}
			$w->close();
		}
		$t = $doc['totals'];
		$w->open( 'ram:SpecifiedTradeSettlementHeaderMonetarySummation' );
		$w->leaf( 'ram:LineTotalAmount', self::money( $doc, $t['lines'] ) );
		$w->leaf( 'ram:TaxBasisTotalAmount', self::money( $doc, $t['without_vat'] ) );
		$w->leaf( 'ram:TaxTotalAmount', self::money( $doc, $t['vat'] ), array( 'currencyID' => $doc['currency'] ) );
		if ( null !== $t['rounding'] ) {
			$w->leaf( 'ram:RoundingAmount', self::money( $doc, $t['rounding'] ) );
		}
		$w->leaf( 'ram:GrandTotalAmount', self::money( $doc, $t['with_vat'] ) );
		$w->leaf( 'ram:TotalPrepaidAmount', self::money( $doc, $t['paid'] ) );
		$w->leaf( 'ram:DuePayableAmount', self::money( $doc, $t['due'] ) );
		$w->close();
		if ( $doc['credit'] ) {
			$w->open( 'ram:InvoiceReferencedDocument' );
			$w->leaf( 'ram:IssuerAssignedID', $doc['preceding'] );
			if ( null !== $doc['preceding_date'] ) {
				$w->open( 'ram:FormattedIssueDateTime' );
				$w->leaf( 'qdt:DateTimeString', $date102( $doc['preceding_date'] ), array( 'format' => '102' ) );
				$w->close();
			}
			$w->close();
		}
		$w->close()->close();
		return $w->finish();
	}

	private static function cii_party( Counterfoil_Xml_Writer $w, $role, array $p ) {
		$w->open( $role );
		$w->leaf( 'ram:Name', self::field( $p, 'name' ) );
		$legal = self::text( self::field( $p, 'legal_id' ) );
		if ( null !== $legal ) {
			$w->open( 'ram:SpecifiedLegalOrganization' );
			$w->leaf( 'ram:ID', $legal );
			$w->close();
		}
		$email = self::text( self::field( $p, 'email' ) );
		if ( null !== $email ) {
			$w->open( 'ram:DefinedTradeContact' )->open( 'ram:EmailURIUniversalCommunication' );
			$w->leaf( 'ram:URIID', $email );
			$w->close()->close();
		}
		$w->open( 'ram:PostalTradeAddress' );
		$w->leaf_opt( 'ram:PostcodeCode', self::field( $p, 'postcode' ) );
		$w->leaf_opt( 'ram:LineOne', self::field( $p, 'street' ) );
		$w->leaf_opt( 'ram:CityName', self::field( $p, 'city' ) );
		$w->leaf( 'ram:CountryID', self::field( $p, 'country' ) );
		$w->close();
		$address = self::text( self::field( $p, 'electronic_address' ) );
		$scheme  = self::text( self::field( $p, 'electronic_address_scheme' ) );
		if ( null !== $address && null !== $scheme ) {
			$w->open( 'ram:URIUniversalCommunication' );
			$w->leaf( 'ram:URIID', $address, array( 'schemeID' => $scheme ) );
			$w->close();
		}
		$vat = self::text( self::field( $p, 'vat_id' ) );
		if ( null !== $vat ) {
			$w->open( 'ram:SpecifiedTaxRegistration' );
			$w->leaf( 'ram:ID', $vat, array( 'schemeID' => 'VA' ) );
			$w->close();
		}
		$w->close();
	}
}

/**
 * The XML writer of the serializers (core/src/einvoice/xml.rs's twin):
 * two-space indentation, escaped text and attributes, blank optional
 * elements left out.
 */
final class Counterfoil_Xml_Writer {
	/** @var string */
	private $out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
	/** @var string[] */
	private $open = array();

	/** Escapes text for an element or an attribute value. */
	public static function escape( $text ) {
		// Control characters, U+FFFE and U+FFFF: not characters in XML 1.0.
		$text = str_replace( array( "\xEF\xBF\xBE", "\xEF\xBF\xBF" ), '', preg_replace( '/[\x00-\x08\x0B\x0C\x0E-\x1F]/', '', (string) $text ) );
		return strtr(
			$text,
			array(
				'&'  => '&amp;',
				'<'  => '&lt;',
				'>'  => '&gt;',
				'"'  => '&quot;',
				"'"  => '&apos;',
			)
		);
	}

	private function attributes( array $attrs ) {
		$s = '';
		foreach ( $attrs as $k => $v ) {
			$s .= ' ' . $k . '="' . self::escape( $v ) . '"';
		}
		return $s;
	}

	/** Opens an element. */
	public function open( $name, array $attrs = array() ) {
		$this->out   .= str_repeat( '  ', count( $this->open ) ) . '<' . $name . $this->attributes( $attrs ) . ">\n";
		$this->open[] = $name;
		return $this;
	}

	/** Closes the innermost open element. */
	public function close() {
		$name       = array_pop( $this->open );
		$this->out .= str_repeat( '  ', count( $this->open ) ) . '</' . $name . ">\n";
		return $this;
	}

	/** An element holding text. */
	public function leaf( $name, $text, array $attrs = array() ) {
		$this->out .= str_repeat( '  ', count( $this->open ) ) . '<' . $name . $this->attributes( $attrs ) . '>' . self::escape( $text ) . '</' . $name . ">\n";
		return $this;
	}

	/** leaf() when the text is present and not blank. */
	public function leaf_opt( $name, $text ) {
		if ( is_string( $text ) && '' !== trim( $text ) ) {
			$this->leaf( $name, $text );
		}
		return $this;
	}

	/** The document, every element closed. */
	public function finish() {
		while ( ! empty( $this->open ) ) {
			$this->close();
		}
		return $this->out;
	}
}
