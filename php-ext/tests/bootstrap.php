<?php
// PHPUnit bootstrap for the extension's suite. Run by tests/tests/php_ext.rs
// with the built extension loaded (-d extension=…) and COUNTERFOIL_TEST_URL
// naming a fresh database on the harness's private MariaDB or PostgreSQL
// (the suite runs on both engines).

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

    /** Whether the suite runs on PostgreSQL (the URL's scheme). */
    public static function postgres(): bool
    {
        return (bool) preg_match('#^postgres(ql)?://#', getenv('COUNTERFOIL_TEST_URL'));
    }

    /** A PDO connection to the test database, on either engine (for checks and for killing a connection); on a node list, to the first node (the primary). */
    public static function pdo(): PDO
    {
        $u = parse_url(preg_replace('#@([^/,]+),[^/]+/#', '@$1/', getenv('COUNTERFOIL_TEST_URL')));
        $dsn = (self::postgres() ? 'pgsql' : 'mysql') . ":host={$u['host']};port={$u['port']};dbname=" . ltrim($u['path'], '/');
        return new PDO($dsn, $u['user'], $u['pass'] ?? '', [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
    }

    /** A table name quoted for the engine. */
    public static function table(string $name): string
    {
        return self::postgres() ? "\"$name\"" : "`$name`";
    }

    /** Ends another session's connection by its id (connection_info()['connection_id']). */
    public static function kill(int $connectionId): void
    {
        self::pdo()->exec(self::postgres() ? "SELECT pg_terminate_backend($connectionId)" : "KILL $connectionId");
    }

    /** All rows of a prefix's sequences table, or null when it does not exist. */
    public static function rows(string $prefix): ?array
    {
        $db = self::pdo();
        try {
            $r = $db->query('SELECT scope_key, current_value FROM ' . self::table("{$prefix}invoice_sequences") . ' ORDER BY scope_key');
            return array_map(fn ($row) => ['scope_key' => $row['scope_key'], 'current_value' => (string) $row['current_value']], $r->fetchAll(PDO::FETCH_ASSOC));
        } catch (PDOException $e) {
            // 42S02 (MySQL) / 42P01 (PostgreSQL): no such table.
            if (in_array($e->getCode(), ['42S02', '42P01'], true)) {
                return null;
            }
            throw $e;
        }
    }

    public static function sequences(string $prefix, array $extra = []): Counterfoil\Sequences
    {
        return new Counterfoil\Sequences(['table_prefix' => $prefix] + $extra);
    }
}
