<?php

// Stubs for the exception classes of the counterfoil extension. They are
// registered at module start-up as plain subclasses of SPL's classes (so
// `cargo php stubs` does not list them); php-ext/tests/ExceptionsTest.php
// checks this file against the loaded extension.

namespace Counterfoil {
    /** Bad input (scope key, template, start, count, year, user id, option); nothing was written. */
    class InvalidArgumentException extends \InvalidArgumentException {}

    /** The series does not exist: create it with initialize first. */
    class SeriesNotFoundException extends \RuntimeException {}

    /** The series already exists (Sequences::create); it was left unchanged. */
    class SeriesExistsException extends \RuntimeException {}
    class SeriesClosedException extends \RuntimeException {}

    /** The counter would pass the largest number; nothing changed. Start a new series. */
    class OverflowException extends \OverflowException {}

    /** Cannot connect, connection lost after retries, a server error (code = server error code), or an unsafe server (innodb_flush_log_at_trx_commit = 0). */
    class DatabaseUnavailableException extends \RuntimeException {}

    /** The call did not finish within counterfoil.timeout_ms; its outcome is unknown (a skipped number at worst, never a repeated one). */
    class TimeoutException extends \RuntimeException {}
}
