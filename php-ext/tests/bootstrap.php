<?php
// PHPUnit bootstrap for the extension's suite. Run by tests/tests/php_ext.rs
// with the built extension loaded (-d extension=…) and COUNTERFOIL_TEST_URL
// naming a fresh database on the harness's private MariaDB.

if (!extension_loaded('counterfoil')) {
    fwrite(STDERR, "the counterfoil extension is not loaded (php -d extension=target/release/libcounterfoil_php.so)\n");
    exit(2);
}
$url = getenv('COUNTERFOIL_TEST_URL');
if (!$url) {
    fwrite(STDERR, "COUNTERFOIL_TEST_URL is not set\n");
    exit(2);
}
Counterfoil\configure(['database_url' => $url, 'timeout_ms' => 5000]);

/** Helpers shared by the test cases. */
final class TestDb
{
    /** A fresh table prefix, so each test has its own sequences table. */
    public static function prefix(): string
    {
        return 't' . bin2hex(random_bytes(4)) . '_';
    }

    /** A mysqli connection to the test database (for checks and for KILL). */
    public static function mysqli(): mysqli
    {
        $u = parse_url(getenv('COUNTERFOIL_TEST_URL'));
        mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);
        return new mysqli($u['host'], $u['user'], $u['pass'] ?? '', ltrim($u['path'], '/'), $u['port']);
    }

    /** All rows of a prefix's sequences table, or null when it does not exist. */
    public static function rows(string $prefix): ?array
    {
        $db = self::mysqli();
        try {
            $r = $db->query("SELECT scope_key, current_value FROM `{$prefix}invoice_sequences` ORDER BY scope_key");
            return $r->fetch_all(MYSQLI_ASSOC);
        } catch (mysqli_sql_exception $e) {
            if ($e->getCode() === 1146) {
                return null;
            }
            throw $e;
        } finally {
            $db->close();
        }
    }

    public static function sequences(string $prefix, array $extra = []): Counterfoil\Sequences
    {
        return new Counterfoil\Sequences(['table_prefix' => $prefix] + $extra);
    }
}
