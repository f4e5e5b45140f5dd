<?php
/**
 * The exception hierarchy, declared in PHP when the counterfoil extension is
 * not loaded (the extension declares the same classes). Both backends throw
 * these, so callers catch the same classes either way.
 *
 * @package Counterfoil
 */

namespace Counterfoil;

defined( 'ABSPATH' ) || exit;

if ( ! class_exists( InvalidArgumentException::class, false ) ) {
	/** Bad input; nothing was written. */
	class InvalidArgumentException extends \InvalidArgumentException {}
	/** The series does not exist. */
	class SeriesNotFoundException extends \RuntimeException {}
	/** The series already exists. */
	class SeriesExistsException extends \RuntimeException {}
	/** The counter would pass the largest number. */
	class OverflowException extends \OverflowException {}
	/** The database cannot be used (code: the server's error code). */
	class DatabaseUnavailableException extends \RuntimeException {}
	/** The call did not finish within its deadline. */
	class TimeoutException extends \RuntimeException {}
}
if ( ! class_exists( SeriesClosedException::class, false ) ) {
	/** The series is closed: the series that continues it hands out its numbers. */
	class SeriesClosedException extends \RuntimeException {}
}
