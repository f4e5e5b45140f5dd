<?php
/**
 * The pure-PHP twin of counterfoil-core's pure rules, used by the pure-PHP
 * backend only (with the extension, the Rust core applies them). Scope keys,
 * number templates, start/next/batch arguments and payment references behave
 * exactly as the core's: both pass the shared vectors in tests/vectors/.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

// phpcs:disable WordPress.Security.EscapeOutput.ExceptionNotEscaped -- an exception's message is text, not HTML: it goes to the log, a REST answer (JSON) or a WP_Error, and every page that prints one escapes it there.

use Counterfoil\InvalidArgumentException;

/**
 * Validation and formatting rules.
 */
final class Counterfoil_Rules {
	const MAX_SCOPE_BYTES = 191;
	const MAX_BATCH       = 100000;
	const MAX_PAD         = 20;
	const DEFAULT_FORMAT  = '{year}-{seq:04}';
	/** The core's payment::UNANSWERED_REASON. */
	const UNANSWERED_REASON = 'outcome unknown: the call lost its answer while committing and was retried, which issued another number; nobody received this one';
	/**
	 * Unicode White_Space, as Rust's char::is_whitespace (PCRE's \s follows
	 * another Unicode version: it counts U+180E, which Rust does not).
	 */
	const WHITESPACE = '[\x{9}-\x{D}\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}]';

	/**
	 * Validates a scope key; returns it unchanged.
	 *
	 * @param mixed $key Candidate key.
	 * @return string
	 * @throws InvalidArgumentException With a `kind` in the code-less message prefix.
	 */
	public static function scope_key( $key ) {
		$kind = self::scope_key_error( $key );
		if ( null !== $kind ) {
			throw new InvalidArgumentException( 'invalid scope key: ' . $kind[1] );
		}
		return $key;
	}

	/**
	 * The error of a scope key, as [kind, message], or null when valid.
	 *
	 * @param mixed $key Candidate key.
	 * @return array|null
	 */
	public static function scope_key_error( $key ) {
		if ( ! is_string( $key ) || '' === $key ) {
			return array( 'empty', 'scope key is empty' );
		}
		$len = strlen( $key );
		if ( $len > self::MAX_SCOPE_BYTES ) {
			return array( 'too_long', sprintf( 'scope key is %d bytes long; the maximum is %d', $len, self::MAX_SCOPE_BYTES ) );
		}
		if ( ! preg_match( '//u', $key ) ) {
			return array( 'control_character', 'scope key is not valid UTF-8' );
		}
		if ( preg_match( '/[\x{0}-\x{1F}\x{7F}-\x{9F}]/u', $key, $m, PREG_OFFSET_CAPTURE ) ) {
			return array( 'control_character', sprintf( 'scope key holds control character U+%04X at byte %d', mb_ord( $m[0][0], 'UTF-8' ), $m[0][1] ) );
		}
		if ( preg_match( '/^' . self::WHITESPACE . '|' . self::WHITESPACE . '$/u', $key ) ) {
			return array( 'surrounding_whitespace', 'scope key starts or ends with whitespace' );
		}
		return null;
	}

	/**
	 * The per-user, per-year scope key.
	 *
	 * @param int $user_id User id (0 or more).
	 * @param int $year    1..9999.
	 * @return string
	 * @throws InvalidArgumentException When out of range.
	 */
	public static function user_year_scope( $user_id, $year ) {
		if ( $user_id < 0 ) {
			throw new InvalidArgumentException( sprintf( 'user_id must not be negative, got %d', $user_id ) );
		}
		if ( $year < 1 || $year > 9999 ) {
			throw new InvalidArgumentException( sprintf( 'invalid scope key: year %d is outside 1..=9999', $year ) );
		}
		return $user_id . ':' . $year;
	}

	/**
	 * The counter value that makes $start the first number.
	 *
	 * @param int $start First number.
	 * @return int
	 * @throws InvalidArgumentException When below 1.
	 */
	public static function counter_for_start( $start ) {
		if ( $start < 1 ) {
			throw new InvalidArgumentException( sprintf( 'invalid argument `start`: the first number must be at least 1, got %d', $start ) );
		}
		return $start - 1;
	}

	/**
	 * The counter value that makes $next the next number.
	 *
	 * @param int $next Next number.
	 * @return int
	 * @throws InvalidArgumentException When below 1.
	 */
	/**
	 * A number as a person types it (the core's series::parse_typed_number):
	 * surrounding whitespace (WHITESPACE) ignored, then ASCII digits only.
	 * Above PHP_INT_MAX (valid in the core up to u64::MAX) it is refused
	 * here: PHP's integers stop there.
	 *
	 * @param string $name Field name for the error.
	 * @param mixed  $text Typed text.
	 * @return int
	 * @throws InvalidArgumentException When not a whole number.
	 */
	public static function parse_typed_number( $name, $text ) {
		$digits = is_string( $text ) ? preg_replace( '/^' . self::WHITESPACE . '+|' . self::WHITESPACE . '+$/u', '', $text ) : null;
		if ( null === $digits || '' === $digits ) {
			throw new InvalidArgumentException( "invalid argument `$name`: no number given" );
		}
		if ( ! preg_match( '/^[0-9]+$/D', $digits ) ) {
			throw new InvalidArgumentException( "invalid argument `$name`: `$digits` is not a whole number: digits 0-9 only" );
		}
		$trimmed = ltrim( $digits, '0' );
		if ( strlen( $trimmed ) > 19 || ( 19 === strlen( $trimmed ) && strcmp( $trimmed, (string) PHP_INT_MAX ) > 0 ) ) {
			throw new InvalidArgumentException( "invalid argument `$name`: `$digits` is above " . PHP_INT_MAX . ' (the largest number PHP holds)' );
		}
		return (int) $digits;
	}

	public static function counter_for_next( $next ) {
		if ( $next < 1 ) {
			throw new InvalidArgumentException( sprintf( 'invalid argument `next`: the next number must be at least 1, got %d', $next ) );
		}
		return $next - 1;
	}

	/**
	 * Checks a batch size.
	 *
	 * @param int $count Numbers asked for.
	 * @throws InvalidArgumentException When outside 1..MAX_BATCH.
	 */
	public static function check_batch( $count ) {
		if ( $count < 1 || $count > self::MAX_BATCH ) {
			throw new InvalidArgumentException( sprintf( 'invalid argument `count`: a batch holds 1 to %d numbers, got %d', self::MAX_BATCH, $count ) );
		}
	}

	/** The plans for a payment whose series does not exist (docs/design.md §7). */
	const PLANS = array( 'create', 'continue', 'hold' );

	/**
	 * The plan of a stored name.
	 *
	 * @param mixed $plan create, continue or hold.
	 * @return string
	 * @throws InvalidArgumentException For any other name.
	 */
	public static function plan( $plan ) {
		if ( ! is_string( $plan ) || ! in_array( $plan, self::PLANS, true ) ) {
			throw new InvalidArgumentException( sprintf( 'invalid argument `plan`: unknown plan `%s`; use create, continue or hold', is_string( $plan ) ? $plan : gettype( $plan ) ) );
		}
		return $plan;
	}

	/**
	 * The issuer and year of a "{issuer}:{year}" key (a four-digit year in
	 * 1..9999), or null for keys of any other shape (a month's included).
	 *
	 * @param string $scope Scope key.
	 * @return array|null [issuer, year].
	 */
	public static function issuer_and_year( $scope ) {
		$owner = self::issuer_and_period( $scope );
		return null === $owner || null !== $owner[2] ? null : array( $owner[0], $owner[1] );
	}

	/**
	 * The issuer and numbering period of a "{issuer}:{yyyy}" or
	 * "{issuer}:{yyyy-mm}" key (counterfoil_core::series_life::issuer_and_period),
	 * or null for keys of any other shape.
	 *
	 * @param string $scope Scope key.
	 * @return array|null [issuer, year, month or null].
	 */
	public static function issuer_and_period( $scope ) {
		$at = strrpos( (string) $scope, ':' );
		if ( false === $at ) {
			return null;
		}
		$tail = substr( $scope, $at + 1 );
		if ( ! preg_match( '/^([0-9]{4})(?:-([0-9]{2}))?$/D', $tail, $m ) || (int) $m[1] < 1 ) {
			return null;
		}
		$month = isset( $m[2] ) ? (int) $m[2] : null;
		if ( null !== $month && ( $month < 1 || $month > 12 ) ) {
			return null;
		}
		return array( substr( $scope, 0, $at ), (int) $m[1], $month );
	}

	/**
	 * The series a new one continues: among $existing (scope key => current
	 * value), the same issuer's with the latest period before $scope's, of
	 * the same kind (a month continues a month, a year a year).
	 *
	 * @param string $scope    The new series.
	 * @param array  $existing List of [scope key, current value].
	 * @return array|null [scope key, current value].
	 */
	public static function previous_series( $scope, array $existing ) {
		$mine = self::issuer_and_period( $scope );
		if ( null === $mine ) {
			return null;
		}
		$best = null;
		foreach ( $existing as $row ) {
			$theirs = self::issuer_and_period( (string) $row[0] );
			if ( null === $theirs || $theirs[0] !== $mine[0] || ( null === $theirs[2] ) !== ( null === $mine[2] ) ) {
				continue;
			}
			$at = array( $theirs[1], (int) $theirs[2] );
			if ( $at < array( $mine[1], (int) $mine[2] ) && ( null === $best || $at > $best[0] ) ) {
				$best = array( $at, $row );
			}
		}
		return null === $best ? null : $best[1];
	}

	/**
	 * The first number of a new series under $plan: $start for create (and
	 * for continue without a previous series), the previous counter + 1 for
	 * continue, null for hold (nothing is created).
	 *
	 * @param string   $plan     create, continue or hold.
	 * @param int      $start    Configured first number (1 or more).
	 * @param int|null $previous The previous year's counter, or null.
	 * @return int|null
	 * @throws InvalidArgumentException|OverflowException For a bad plan or start, or no number left.
	 */
	public static function start_for_new_series( $plan, $start, $previous ) {
		self::plan( $plan );
		self::counter_for_start( $start );
		if ( 'hold' === $plan ) {
			return null;
		}
		if ( 'continue' === $plan && null !== $previous ) {
			if ( $previous >= PHP_INT_MAX ) {
				throw new Counterfoil\OverflowException( 'the previous year\'s series has no number left to continue from' );
			}
			return $previous + 1;
		}
		return $start;
	}

	/** The longest chain of closed series a payment is passed along (series_life::MAX_SUCCESSORS). */
	const MAX_SUCCESSORS = 16;

	/** How many times an allocation is sent again when its series was found open right after it changed no row (the core's series_life::MAX_REAPPEARED). */
	const MAX_REAPPEARED = 2;

	/**
	 * After a zero-row allocation, whether to allocate again (the core's
	 * series_life::allocate_again): the series reads as open, so it was
	 * created between the allocation and the read; at most MAX_REAPPEARED
	 * times, counted in $tries.
	 *
	 * @param bool        $row       Whether the series' row exists.
	 * @param string|null $successor Its closed_by.
	 * @param int         $tries     Retries so far (incremented).
	 * @return bool
	 */
	public static function allocate_again( $row, $successor, &$tries ) {
		if ( $row && null === $successor && $tries < self::MAX_REAPPEARED ) {
			++$tries;
			return true;
		}
		return false;
	}

	/**
	 * What a zero-row allocation of an open series means (the core's
	 * series_life::closed_or_missing): the series is missing ($row false),
	 * closed in favour of $successor, or open and wrong.
	 *
	 * @return Throwable The exception to throw or to pass to forward_to().
	 */
	public static function closed_or_missing( $scope, $row, $successor ) {
		if ( ! $row ) {
			return new Counterfoil\SeriesNotFoundException( sprintf( 'series `%s` does not exist; create it with initialize(scope, start) first', $scope ) );
		}
		if ( null !== $successor ) {
			return new Counterfoil\SeriesClosedException( sprintf( 'series `%s` is closed: series `%s` continues it and hands out its numbers; nothing was written', $scope, $successor ) );
		}
		return new Counterfoil\DatabaseUnavailableException( sprintf( 'unexpected answer from the database: series `%s` is open but its allocation changed no row', $scope ) );
	}

	/**
	 * After a zero-row allocation of an open series: whether a payment's
	 * allocation moves on to the closed series' successor (the core's
	 * series_life::forward_to of closed_or_missing): the successor's key,
	 * counting the step in $hops; otherwise closed_or_missing()'s exception
	 * (a closed series also once the chain is longer than MAX_SUCCESSORS).
	 *
	 * @param string      $scope     The series.
	 * @param bool        $row       Whether its row exists.
	 * @param string|null $successor Its closed_by.
	 * @param int         $hops      Steps taken so far.
	 * @return string
	 * @throws Throwable When it is not a step along the chain.
	 */
	public static function forward_to( $scope, $row, $successor, &$hops ) {
		if ( $row && null !== $successor && $hops < self::MAX_SUCCESSORS ) {
			++$hops;
			return $successor;
		}
		throw self::closed_or_missing( $scope, $row, $successor );
	}

	/**
	 * Whether $scope may be created continuing $previous, closed by
	 * $closed_by or open (the core's series_life::may_continue): a series
	 * continues only once.
	 *
	 * @throws Counterfoil\SeriesClosedException When a later series continues it already.
	 */
	public static function may_continue( $previous, $closed_by, $scope ) {
		if ( null !== $closed_by && $closed_by !== $scope ) {
			throw new Counterfoil\SeriesClosedException( sprintf( 'series `%s` is closed: series `%s` continues it and hands out its numbers; nothing was written', $previous, $closed_by ) );
		}
	}

	/** The registry export's columns, in order (the core's export::COLUMNS). */
	const EXPORT_COLUMNS = array( 'scope_key', 'number', 'rendered', 'status', 'reason', 'gateway', 'transaction_id', 'amount', 'currency', 'post_id', 'created_at', 'updated_at', 'kind', 'refers_to' );

	/**
	 * An export row from the cells a query selected (every column but
	 * `kind`, `refers_to` last): `kind` put in from the series (the core's
	 * export::row).
	 *
	 * @param array $selected Cells, scope_key first.
	 * @return array
	 */
	public static function export_row( array $selected ) {
		$refers_to = array_pop( $selected );
		$selected[] = null === $selected[0] ? null : self::kind_of( (string) $selected[0] );
		$selected[] = $refers_to;
		return $selected;
	}

	/**
	 * One CSV cell (the core's export::csv_cell): empty for null; `'` before
	 * a formula-like start (= + - @ tab CR); quoted when it holds a comma,
	 * quote or line break, or was escaped.
	 *
	 * @param string|null $value Value.
	 * @return string
	 */
	public static function csv_cell( $value ) {
		if ( null === $value ) {
			return '';
		}
		$value = (string) $value;
		$risky = '' !== $value && false !== strpos( "=+-@\t\r", $value[0] );
		$text  = $risky ? "'" . $value : $value;
		if ( $risky || strpbrk( $text, ",\"\n\r" ) !== false ) {
			return '"' . str_replace( '"', '""', $text ) . '"';
		}
		return $text;
	}

	/**
	 * A CSV line (with CRLF) of values.
	 *
	 * @param array $values Values (null for NULL).
	 * @return string
	 */
	public static function csv_line( array $values ) {
		return implode( ',', array_map( array( __CLASS__, 'csv_cell' ), $values ) ) . "\r\n";
	}

	/**
	 * A JSON Lines line (with LF) of one row, keys EXPORT_COLUMNS; number and
	 * post_id as numbers (the core's export::jsonl_line).
	 *
	 * @param array $values Values in column order.
	 * @return string
	 */
	public static function jsonl_line( array $values ) {
		$row = array();
		foreach ( self::EXPORT_COLUMNS as $i => $name ) {
			$v = isset( $values[ $i ] ) ? $values[ $i ] : null;
			if ( null !== $v && in_array( $name, array( 'number', 'post_id' ), true ) && ctype_digit( (string) $v ) ) {
				$v = (int) $v;
			}
			$row[ $name ] = $v;
		}
		return wp_json_encode( $row, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_LINE_TERMINATORS ) . "\n";
	}

	/**
	 * Checks a claim id: 1–40 ASCII letters, digits, - or _ (the core's
	 * payment::check_claim_id).
	 *
	 * @param mixed $claim Claim id.
	 * @throws InvalidArgumentException Otherwise.
	 */
	public static function claim_id( $claim ) {
		if ( ! is_string( $claim ) || ! preg_match( '/^[A-Za-z0-9_-]{1,40}$/D', $claim ) ) {
			throw new InvalidArgumentException( 'invalid argument `claim`: a claim id is 1 to 40 letters, digits, - or _' );
		}
	}

	/**
	 * Validates the source recorded with a number: 1 to 32 characters, no
	 * control character, no surrounding whitespace. The twin of
	 * counterfoil_core::payment::check_source (tests/vectors/recorded_values.json).
	 *
	 * @param mixed $source Source.
	 * @throws InvalidArgumentException Naming `source`.
	 */
	public static function source( $source ) {
		if ( ! is_string( $source ) || ! preg_match( '//u', $source ) ) {
			throw new InvalidArgumentException( 'invalid argument `source`: the source must be UTF-8 text' );
		}
		$length = preg_match_all( "/./us", $source );
		if ( 0 === $length || $length > 32 ) {
			throw new InvalidArgumentException( "invalid argument `source`: the source must be 1 to 32 characters, got $length" );
		}
		if ( preg_match( '/[\x{0}-\x{1F}\x{7F}-\x{9F}]/u', $source ) ) {
			throw new InvalidArgumentException( 'invalid argument `source`: the source holds a control character' );
		}
		if ( preg_match( '/^' . self::WHITESPACE . '|' . self::WHITESPACE . '$/u', $source ) ) {
			throw new InvalidArgumentException( 'invalid argument `source`: the source starts or ends with whitespace' );
		}
	}

	/**
	 * Validates a recorded allocation's request key: 1 to 64 ASCII letters,
	 * digits, `.`, `_`, `:` or `-`. The twin of
	 * counterfoil_core::payment::check_request_key.
	 *
	 * @param mixed $key Request key.
	 * @throws InvalidArgumentException Naming `request_key`.
	 */
	public static function request_key( $key ) {
		if ( ! is_string( $key ) || ! preg_match( '/^[A-Za-z0-9._:-]{1,64}$/D', $key ) ) {
			throw new InvalidArgumentException( 'invalid argument `request_key`: a request key is 1 to 64 letters, digits, `.`, `_`, `:` or `-`' );
		}
	}

	/**
	 * Whether a repeat of a keyed recorded allocation gets the number its key
	 * holds in state $status: an issued or unconfirmed one, never a voided
	 * one. The twin of counterfoil_core::payment::repeat_of_request
	 * (tests/vectors/number_states.json).
	 *
	 * @param string $status The row's status.
	 * @return bool
	 */
	public static function repeat_returns( $status ) {
		return in_array( $status, array( 'issued', 'unconfirmed' ), true );
	}

	/**
	 * After issuing a claimed number changed no row: whether the number is
	 * already issued to $post_id (this call's earlier try, whose answer was
	 * lost). The twin of counterfoil_core::payment::issued_to.
	 *
	 * @param string   $status      The row's status.
	 * @param int|null $issued_post The row's post id.
	 * @param int      $post_id     This call's post.
	 * @return bool
	 */
	public static function issued_to( $status, $issued_post, $post_id ) {
		return 'issued' === $status && null !== $issued_post && (int) $issued_post === (int) $post_id;
	}

	/**
	 * Validates a payment's amount as recorded: 1 to 12 digits, optionally a
	 * point and 1 to 4 decimals. The twin of counterfoil_core::payment::check_amount.
	 *
	 * @param mixed $amount Amount, or null when none is recorded.
	 * @throws InvalidArgumentException Naming `amount`.
	 */
	public static function amount( $amount ) {
		if ( null !== $amount && ( ! is_string( $amount ) || ! preg_match( '/^[0-9]{1,12}(\.[0-9]{1,4})?$/D', $amount ) ) ) {
			throw new InvalidArgumentException( 'invalid argument `amount`: an amount is a decimal string such as 19.99 (1 to 12 digits, then at most 4 decimals)' );
		}
	}

	/**
	 * Validates a payment's currency as recorded: three upper-case letters.
	 * The twin of counterfoil_core::payment::check_currency.
	 *
	 * @param mixed $currency Currency, or null when none is recorded.
	 * @throws InvalidArgumentException Naming `currency`.
	 */
	public static function currency( $currency ) {
		if ( null !== $currency && ( ! is_string( $currency ) || ! preg_match( '/^[A-Z]{3}$/D', $currency ) ) ) {
			throw new InvalidArgumentException( 'invalid argument `currency`: a currency is a three-letter upper-case ISO code such as EUR' );
		}
	}

	/**
	 * Validates a payment reference.
	 *
	 * @param mixed $gateway        Gateway name.
	 * @param mixed $transaction_id Transaction id.
	 * @throws InvalidArgumentException Naming the part at fault.
	 */
	public static function payment_ref( $gateway, $transaction_id ) {
		if ( ! is_string( $gateway ) || '' === $gateway || strlen( $gateway ) > 32 ) {
			throw new InvalidArgumentException( 'invalid argument `gateway`: the gateway name must be 1 to 32 characters' );
		}
		if ( ! preg_match( '/^[a-z0-9_-]+$/', $gateway ) ) {
			throw new InvalidArgumentException( 'invalid argument `gateway`: use a-z, 0-9, _ and -' );
		}
		if ( ! is_string( $transaction_id ) || '' === $transaction_id || strlen( $transaction_id ) > 191 ) {
			throw new InvalidArgumentException( 'invalid argument `transaction_id`: the transaction id must be 1 to 191 bytes' );
		}
		if ( ! preg_match( '//u', $transaction_id ) || preg_match( '/[\x{0}-\x{1F}\x{7F}-\x{9F}]/u', $transaction_id ) ) {
			throw new InvalidArgumentException( 'invalid argument `transaction_id`: the transaction id holds a control character' );
		}
		if ( preg_match( '/^' . self::WHITESPACE . '|' . self::WHITESPACE . '$/u', $transaction_id ) ) {
			throw new InvalidArgumentException( 'invalid argument `transaction_id`: the transaction id starts or ends with whitespace' );
		}
	}

	/** Currencies counted in whole units (counterfoil_core::money::ZERO_DECIMAL). */
	const ZERO_DECIMAL = array( 'BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA', 'PYG', 'RWF', 'UGX', 'VND', 'VUV', 'XAF', 'XOF', 'XPF' );

	/** Currencies counted in thousandths (counterfoil_core::money::THREE_DECIMAL). */
	const THREE_DECIMAL = array( 'BHD', 'JOD', 'KWD', 'OMR', 'TND' );

	/**
	 * The decimals of a currency's smallest unit (counterfoil_core::money):
	 * 0, 3 or 2.
	 *
	 * @param string $code ISO 4217 code, upper case.
	 * @return int
	 */
	public static function minor_places( $code ) {
		return in_array( $code, self::ZERO_DECIMAL, true ) ? 0 : ( in_array( $code, self::THREE_DECIMAL, true ) ? 3 : 2 );
	}

	/**
	 * An amount in a currency's smallest unit (as Stripe sends it) as the
	 * decimal string a payment records, exact: 1999 eur is ["19.99", "EUR"],
	 * 500 jpy ["500", "JPY"], 1999 kwd ["1.999", "KWD"]. The twin of
	 * counterfoil_core::money::amount_from_minor_units (tests/vectors/minor_units.json).
	 *
	 * @param mixed $minor    Whole number of smallest units, 0 or more.
	 * @param mixed $currency Three-letter code, any case.
	 * @return array [amount, CURRENCY].
	 * @throws InvalidArgumentException Naming `amount` or `currency`.
	 */
	public static function amount_from_minor_units( $minor, $currency ) {
		if ( ! is_string( $currency ) || ! preg_match( '/^[A-Za-z]{3}$/', $currency ) ) {
			throw new InvalidArgumentException( 'invalid argument `currency`: a currency is a three-letter ISO code such as EUR' );
		}
		if ( ! is_int( $minor ) || $minor < 0 ) {
			throw new InvalidArgumentException( 'invalid argument `amount`: an amount in smallest units is a whole number, 0 or more' );
		}
		$code   = strtoupper( $currency );
		$places = self::minor_places( $code );
		$digits = str_pad( (string) $minor, $places + 1, '0', STR_PAD_LEFT );
		$whole  = substr( $digits, 0, strlen( $digits ) - $places );
		if ( strlen( $whole ) > 12 ) {
			throw new InvalidArgumentException( sprintf( 'invalid argument `amount`: %d smallest units of %s is more than 12 digits before the point', $minor, $code ) );
		}
		$amount = 0 === $places ? $whole : $whole . '.' . substr( $digits, -$places );
		return array( $amount, $code );
	}

	/**
	 * A period rule (counterfoil_core::fiscal::PeriodRule::parse,
	 * tests/vectors/periods.json): `calendar-year`, `fiscal-year:MM-DD` (a
	 * day every year has; `01-01` is the calendar year) or `month`.
	 *
	 * @param mixed $text The rule.
	 * @return array [kind, month, day]: ['calendar-year', 1, 1], ['fiscal-year', m, d], ['month', 1, 1].
	 * @throws InvalidArgumentException Naming `period`.
	 */
	public static function period_rule( $text ) {
		if ( 'calendar-year' === $text || 'month' === $text ) {
			return array( $text, 1, 1 );
		}
		if ( ! is_string( $text ) || ! preg_match( '/^fiscal-year:([0-9]{2})-([0-9]{2})$/', $text, $m ) ) {
			throw new InvalidArgumentException( sprintf( 'invalid argument `period`: `%s` is not a period rule; use calendar-year, fiscal-year:MM-DD or month', is_scalar( $text ) ? $text : gettype( $text ) ) );
		}
		$month = (int) $m[1];
		$day   = (int) $m[2];
		if ( $month < 1 || $month > 12 || $day < 1 || $day > self::DAYS[ $month - 1 ] ) {
			throw new InvalidArgumentException( sprintf( 'invalid argument `period`: `%s`: no such day in every year', $text ) );
		}
		return 1 === $month && 1 === $day ? array( 'calendar-year', 1, 1 ) : array( 'fiscal-year', $month, $day );
	}

	/** Days of each month of a common year. */
	const DAYS = array( 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 );

	/** A period rule as period_rule() reads it. */
	public static function period_rule_text( array $rule ) {
		return 'fiscal-year' === $rule[0] ? sprintf( 'fiscal-year:%02d-%02d', $rule[1], $rule[2] ) : $rule[0];
	}

	/**
	 * The period of a local day under $rule (counterfoil_core::fiscal::period_of):
	 * [start year, month or null].
	 *
	 * @param array $rule  From period_rule().
	 * @param int   $year  Year.
	 * @param int   $month Month.
	 * @param int   $day   Day.
	 * @return array
	 * @throws InvalidArgumentException Naming `year` or `date`.
	 */
	public static function period_of( array $rule, $year, $month, $day ) {
		if ( $year < 1 || $year > 9999 ) {
			throw new InvalidArgumentException( sprintf( 'invalid argument `year`: year %d is outside 1..=9999', $year ) );
		}
		if ( $month < 1 || $month > 12 || $day < 1 || $day > ( 2 === $month && checkdate( 2, 29, $year ) ? 29 : self::DAYS[ $month - 1 ] ) ) {
			throw new InvalidArgumentException( sprintf( 'invalid argument `date`: %04d-%02d-%02d is not a date', $year, $month, $day ) );
		}
		if ( 'month' === $rule[0] ) {
			return array( $year, $month );
		}
		if ( 'fiscal-year' === $rule[0] ) {
			$start = ( $month > $rule[1] || ( $month === $rule[1] && $day >= $rule[2] ) ) ? $year : $year - 1;
			if ( $start < 1 ) {
				throw new InvalidArgumentException( 'invalid argument `year`: year 0 is outside 1..=9999' );
			}
			return array( $start, null );
		}
		return array( $year, null );
	}

	/** A period's name in a series' key: `2026` or `2026-04`. */
	public static function period_label( array $key ) {
		return null === $key[1] ? sprintf( '%04d', $key[0] ) : sprintf( '%04d-%02d', $key[0], $key[1] );
	}

	/** The period after $key. */
	public static function period_next( array $key ) {
		if ( null === $key[1] ) {
			return array( $key[0] + 1, null );
		}
		return 12 === $key[1] ? array( $key[0] + 1, 1 ) : array( $key[0], $key[1] + 1 );
	}

	/** `{fy}`: `2026` for a calendar year, `2026-27` for a fiscal year that spans two. */
	public static function fiscal_label( array $rule, $year ) {
		return 'fiscal-year' === $rule[0] ? sprintf( '%04d-%02d', $year, ( $year + 1 ) % 100 ) : sprintf( '%04d', $year );
	}

	/** `{fy_end}`: the year a fiscal year that starts in $year ends in. */
	public static function fiscal_end( array $rule, $year ) {
		return 'fiscal-year' === $rule[0] ? $year + 1 : $year;
	}

	/** The previous hash of a series' first chain entry (counterfoil_core::chain::GENESIS). */
	const CHAIN_GENESIS = '0000000000000000000000000000000000000000000000000000000000000000';

	/** The fields of a chain entry, in canonical order (counterfoil_core::chain::FIELDS). */
	const CHAIN_FIELDS = array( 'scope_key', 'number', 'event', 'gateway', 'transaction_id', 'amount', 'currency', 'post_id', 'reason', 'at' );

	/**
	 * A chain entry's canonical input (counterfoil_core::chain::canonical,
	 * tests/vectors/chain.json): the version line, the previous hash, then
	 * each field as `{byte length}:{value}` or `-` when missing, a line each.
	 *
	 * @param string $prev  The previous entry's hash.
	 * @param array  $entry CHAIN_FIELDS => string|int|null.
	 * @return string
	 */
	public static function chain_canonical( $prev, array $entry ) {
		$out = "counterfoil-chain-1\n" . $prev . "\n";
		foreach ( self::CHAIN_FIELDS as $field ) {
			$value = isset( $entry[ $field ] ) ? (string) $entry[ $field ] : null;
			$out  .= null === $value ? "-\n" : strlen( $value ) . ':' . $value . "\n";
		}
		return $out;
	}

	/**
	 * A chain entry's canonical input around the two values only the server
	 * knows in the one-trip payment flow (counterfoil_core::chain::canonical_parts):
	 * [before the previous hash, between it and the number, after the
	 * number]; the number's line is `{length}:{number}` and the last part
	 * starts with its newline.
	 *
	 * @param array $entry CHAIN_FIELDS => string|int|null (its number unused).
	 * @return string[]
	 */
	public static function chain_canonical_parts( array $entry ) {
		$line  = function ( $field ) use ( $entry ) {
			$value = isset( $entry[ $field ] ) ? (string) $entry[ $field ] : null;
			return null === $value ? "-\n" : strlen( $value ) . ':' . $value . "\n";
		};
		$after = '';
		foreach ( array_slice( self::CHAIN_FIELDS, 2 ) as $field ) {
			$after .= $line( $field );
		}
		return array( "counterfoil-chain-1\n", "\n" . $line( 'scope_key' ), "\n" . $after );
	}

	/** A chain entry's hash: SHA-256 of its canonical input, lower-case hex. */
	public static function chain_hash( $prev, array $entry ) {
		return hash( 'sha256', self::chain_canonical( $prev, $entry ) );
	}

	/** The default number template of credit notes (counterfoil_core::credit_note::DEFAULT_TEMPLATE). */
	const CREDIT_NOTE_TEMPLATE = 'CN-{year}-{seq:04}';

	/**
	 * What a series numbers: 'credit_note' when its key ends in `:cn`,
	 * `:cn:{yyyy}` or `:cn:{yyyy-mm}`, else 'invoice' (counterfoil_core::credit_note::kind_of,
	 * tests/vectors/credit_notes.json).
	 *
	 * @param string $scope Series.
	 * @return string
	 */
	public static function kind_of( $scope ) {
		$owner = self::issuer_and_period( (string) $scope );
		$body  = null === $owner ? (string) $scope : $owner[0];
		return ':cn' === substr( $body, -3 ) ? 'credit_note' : 'invoice';
	}

	/**
	 * The series of a credit note issued in $year (and $month, under a
	 * monthly rule) for an invoice of series $scope: `{issuer}:cn:{period}`
	 * for `{issuer}:{period}`, else `{scope}:cn`
	 * (counterfoil_core::credit_note::series_for_period).
	 *
	 * @param string   $scope Invoice series.
	 * @param int      $year  The year the credit note is issued in.
	 * @param int|null $month Its month under a monthly rule.
	 * @return string
	 * @throws InvalidArgumentException Naming `scope` or `year`, or the scope key error's kind.
	 */
	public static function credit_note_series( $scope, $year, $month = null ) {
		$error = self::scope_key_error( $scope );
		if ( null === $error && 'credit_note' === self::kind_of( $scope ) ) {
			$error = array( 'scope', sprintf( '`%s` is a credit-note series; a credit note corrects an invoice', $scope ) );
		}
		if ( null === $error && ( ! is_int( $year ) || $year < 1 || $year > 9999 || ( null !== $month && ( ! is_int( $month ) || $month < 1 || $month > 12 ) ) ) ) {
			$error = array( 'year', 'the period is outside 1..9999 or not a month' );
		}
		if ( null === $error ) {
			$owner = self::issuer_and_period( $scope );
			$key   = null === $owner ? $scope . ':cn' : $owner[0] . ':cn:' . self::period_label( array( $year, $month ) );
			$error = self::scope_key_error( $key );
		}
		if ( null !== $error ) {
			throw new InvalidArgumentException( sprintf( 'invalid argument `%s`: %s', $error[0], $error[1] ) );
		}
		return $key;
	}

	/**
	 * A decimal amount (such as "19.99") of $currency in its smallest unit,
	 * exact; more decimals than the currency has is refused
	 * (counterfoil_core::credit_note::minor_units).
	 *
	 * @param mixed $amount   Decimal string.
	 * @param mixed $currency Three-letter code, any case.
	 * @return int
	 * @throws InvalidArgumentException Naming `amount` or `currency`.
	 */
	public static function minor_units( $amount, $currency ) {
		if ( ! is_string( $currency ) || ! preg_match( '/^[A-Za-z]{3}$/', $currency ) ) {
			throw new InvalidArgumentException( 'invalid argument `currency`: a currency is a three-letter ISO code such as EUR' );
		}
		$code   = strtoupper( $currency );
		$places = self::minor_places( $code );
		if ( ! is_string( $amount ) || ! preg_match( '/^([0-9]+)(?:\.([0-9]+))?$/', $amount, $m ) ) {
			throw new InvalidArgumentException( 'invalid argument `amount`: not a decimal amount such as 19.99' );
		}
		$fraction = isset( $m[2] ) ? $m[2] : '';
		if ( strlen( $fraction ) > $places ) {
			throw new InvalidArgumentException( sprintf( 'invalid argument `amount`: `%s` has more than %d decimals, the smallest unit of %s', $amount, $places, $code ) );
		}
		if ( strlen( ltrim( $m[1], '0' ) ) > 12 ) {
			throw new InvalidArgumentException( sprintf( 'invalid argument `amount`: `%s` has more than 12 digits before the point', $amount ) );
		}
		return (int) ( $m[1] . str_pad( $fraction, $places, '0' ) );
	}

	/**
	 * The amount of a new credit note in smallest units: $requested (null:
	 * everything left), refused when zero, when nothing is left, or when more
	 * than the invoice's amount less what is credited already
	 * (counterfoil_core::credit_note::credit_note_amount).
	 *
	 * @param int      $invoice   The invoice's amount.
	 * @param int      $credited  Credit notes issued for it so far.
	 * @param int|null $requested The refund.
	 * @return int
	 * @throws InvalidArgumentException Naming `refund`.
	 */
	public static function credit_note_amount( $invoice, $credited, $requested ) {
		$left = max( 0, $invoice - $credited );
		if ( 0 === $left ) {
			throw new InvalidArgumentException( sprintf( 'invalid argument `refund`: nothing is left to credit: %d of %d is credited already', $credited, $invoice ) );
		}
		if ( null === $requested ) {
			return $left;
		}
		if ( 0 === $requested ) {
			throw new InvalidArgumentException( 'invalid argument `refund`: a credit note is for more than zero' );
		}
		if ( $requested > $left ) {
			throw new InvalidArgumentException( sprintf( 'invalid argument `refund`: %d is more than what is left to credit (%d of %d)', $requested, $left, $invoice ) );
		}
		return $requested;
	}

	/**
	 * Parses a number template into pieces.
	 *
	 * @param string $template Template such as {year}-{seq:04}.
	 * @return array List of [type, value] pieces.
	 * @throws InvalidArgumentException With the kind and byte offset.
	 */
	public static function parse_format( $template ) {
		$error = self::format_error( $template );
		if ( null !== $error ) {
			throw new InvalidArgumentException( sprintf( 'invalid number format: %s (at byte %d)', $error[2], $error[1] ) );
		}
		return self::$parsed[ $template ];
	}

	/** @var array Parsed templates by text. */
	private static $parsed = array();

	/**
	 * The first problem of a template as [kind, byte offset, message], or null.
	 *
	 * @param string $t Template.
	 * @return array|null
	 */
	public static function format_error( $t ) {
		if ( isset( self::$parsed[ $t ] ) ) {
			return null;
		}
		$pieces  = array();
		$literal = '';
		$seq     = false;
		$len     = strlen( $t );
		$i       = 0;
		while ( $i < $len ) {
			$c = $t[ $i ];
			if ( '{' === $c && $i + 1 < $len && '{' === $t[ $i + 1 ] ) {
				$literal .= '{';
				$i       += 2;
				continue;
			}
			if ( '}' === $c && $i + 1 < $len && '}' === $t[ $i + 1 ] ) {
				$literal .= '}';
				$i       += 2;
				continue;
			}
			if ( '}' === $c ) {
				return array( 'unmatched_close', $i, '`}` without `{` (write `}}` for a literal brace)' );
			}
			if ( '{' === $c ) {
				$close = strpos( $t, '}', $i );
				if ( false === $close ) {
					return array( 'unclosed', $i, '`{` is never closed' );
				}
				$body = substr( $t, $i + 1, $close - $i - 1 );
				if ( false !== strpos( $body, '{' ) ) {
					return array( 'unclosed', $i, '`{` is never closed' );
				}
				$parts = explode( ':', $body, 2 );
				$name  = $parts[0];
				$spec  = isset( $parts[1] ) ? $parts[1] : null;
				if ( '' === $name ) {
					return array( 'empty_token', $i, 'empty token `{}`' );
				}
				if ( ! in_array( $name, array( 'seq', 'year', 'yy', 'month', 'fy', 'fy_end' ), true ) ) {
					return array( 'unknown_token', $i, "unknown token `{{$name}}`; known tokens are seq, year, yy, month, fy, fy_end" );
				}
				if ( null !== $spec && 'seq' !== $name ) {
					return array( 'unexpected_spec', $i, "token `$name` takes no `:` option" );
				}
				$pad = 0;
				if ( 'seq' === $name ) {
					if ( null !== $spec ) {
						if ( ! preg_match( '/^0([0-9]{1,2})$/', $spec, $m ) || (int) $m[1] < 1 || (int) $m[1] > self::MAX_PAD ) {
							return array( 'bad_padding', $i, "padding `$spec` is not of the form 0N with N from 1 to 20 (e.g. `{seq:04}`)" );
						}
						$pad = (int) $m[1];
					}
					if ( $seq ) {
						return array( 'duplicate_seq', $i, 'the template has more than one `{seq}` token' );
					}
					$seq = true;
				}
				if ( '' !== $literal ) {
					$pieces[] = array( 'literal', $literal );
					$literal  = '';
				}
				$pieces[] = array( $name, $pad );
				$i        = $close + 1;
				continue;
			}
			$ord = ord( $c );
			// Every control character, as Rust's char::is_control: C0, DEL
			// and C1 (U+0080–U+009F: 0xC2 0x80–0x9F in UTF-8).
			if ( $ord < 0x20 || 0x7F === $ord || ( 0xC2 === $ord && $i + 1 < $len && ord( $t[ $i + 1 ] ) >= 0x80 && ord( $t[ $i + 1 ] ) <= 0x9F ) ) {
				return array( 'control_character', $i, 'control character in the template' );
			}
			$literal .= $c;
			++$i;
		}
		if ( '' !== $literal ) {
			$pieces[] = array( 'literal', $literal );
		}
		if ( ! $seq ) {
			return array( 'missing_seq', $len, 'the template has no `{seq}` token' );
		}
		self::$parsed[ $t ] = $pieces;
		return null;
	}

	/**
	 * Renders a number.
	 *
	 * @param string     $template Template.
	 * @param int|string $number   The number (a string above PHP_INT_MAX).
	 * @param int        $year     1..9999.
	 * @param int        $month    1..12.
	 * @return string
	 * @throws InvalidArgumentException For a bad template, year or month.
	 */
	public static function render( $template, $number, $year, $month, $rule = null ) {
		$rule = null === $rule ? array( 'calendar-year', 1, 1 ) : $rule;
		$pieces = self::parse_format( $template );
		if ( $year < 1 || $year > 9999 ) {
			throw new InvalidArgumentException( sprintf( 'invalid number format: year %d is outside 1..=9999 (at byte 0)', $year ) );
		}
		if ( $month < 1 || $month > 12 ) {
			throw new InvalidArgumentException( sprintf( 'invalid number format: month %d is outside 1..=12 (at byte 0)', $month ) );
		}
		$out = '';
		foreach ( $pieces as $p ) {
			switch ( $p[0] ) {
				case 'literal':
					$out .= $p[1];
					break;
				case 'seq':
					$out .= str_pad( (string) $number, $p[1], '0', STR_PAD_LEFT );
					break;
				case 'year':
					$out .= sprintf( '%04d', $year );
					break;
				case 'yy':
					$out .= sprintf( '%02d', $year % 100 );
					break;
				case 'month':
					$out .= sprintf( '%02d', $month );
					break;
				case 'fy':
					$out .= self::fiscal_label( $rule, $year );
					break;
				case 'fy_end':
					$out .= sprintf( '%04d', self::fiscal_end( $rule, $year ) );
					break;
			}
		}
		return $out;
	}
}
