<?php
use PHPUnit\Framework\TestCase;

/**
 * Each documented exception is thrown where documented and caught by its
 * class. Every case fails when nothing is thrown (expectException).
 */
final class ExceptionsTest extends TestCase
{
    private string $prefix;
    private Counterfoil\Sequences $s;

    protected function setUp(): void
    {
        $this->prefix = TestDb::prefix();
        Counterfoil\configure(['database_url' => getenv('COUNTERFOIL_TEST_URL'), 'table_prefix' => $this->prefix]);
        $this->s = TestDb::sequences($this->prefix);
        $this->s->create('k', 1);
    }

    public function testHierarchyMatchesTheStubFile(): void
    {
        $src = file_get_contents(__DIR__ . '/../counterfoil-exceptions.stubs.php');
        preg_match_all('/class (\w+) extends \\\\(\w+)/', $src, $m, PREG_SET_ORDER);
        $this->assertCount(7, $m);
        foreach ($m as [, $class, $parent]) {
            $fq = "Counterfoil\\$class";
            $this->assertTrue(class_exists($fq), $fq);
            $this->assertSame($parent, get_parent_class($fq), $fq);
            // Constructible from PHP like any exception, with file and line.
            $e = new $fq('message', 7);
            $this->assertSame(7, $e->getCode());
            $this->assertSame(__FILE__, $e->getFile());
        }
    }

    public function testSeriesNotFound(): void
    {
        $this->expectException(Counterfoil\SeriesNotFoundException::class);
        $this->expectExceptionMessage('does not exist');
        $this->s->allocate('missing');
    }

    public function testSeriesNotFoundIsARuntimeException(): void
    {
        $this->expectException(RuntimeException::class);
        allocate_invoice_number(1, 1999);
    }

    public function testSeriesNotFoundOnAdvanceAndCurrent(): void
    {
        foreach ([fn () => $this->s->advance('missing', 5), fn () => $this->s->current('missing'),
                  fn () => $this->s->allocateMany('missing', 2)] as $call) {
            try {
                $call();
                $this->fail('nothing thrown');
            } catch (Counterfoil\SeriesNotFoundException $e) {
                $this->assertSame(0, $e->getCode());
            }
        }
    }

    public function testSeriesExists(): void
    {
        $this->expectException(Counterfoil\SeriesExistsException::class);
        $this->expectExceptionMessage('left unchanged');
        $this->s->create('k', 5);
    }

    public function testSeriesClosed(): void
    {
        // The continue plan closes the previous year's series: it hands out
        // no recorded number after that (its payments go to the successor).
        $this->s->ensureRegistrySchema();
        $this->s->create('c:2025', 41);
        $this->s->initializePlanned('c:2026', 'continue', 1);
        try {
            $this->s->allocateRecorded('c:2025', 'api');
            $this->fail('nothing thrown');
        } catch (Counterfoil\SeriesClosedException $e) {
            $this->assertStringContainsString('`c:2026` continues it', $e->getMessage());
        }
        $this->assertSame(41, $this->s->allocateRecorded('c:2026', 'api'));
    }

    public function testInvalidArgumentThrownWhereDocumented(): void
    {
        $this->expectException(InvalidArgumentException::class);
        initialize_invoice_sequence(42, 2019, 0);
    }

    public function testOverflow(): void
    {
        $this->assertTrue($this->s->advance('k', PHP_INT_MAX));
        $this->assertSame(PHP_INT_MAX, $this->s->allocate('k'));
        // The next number exists in the database but not as a PHP int.
        $this->expectException(Counterfoil\OverflowException::class);
        $this->s->allocate('k');
    }

    public function testServerErrorKeepsItsCode(): void
    {
        $other = TestDb::sequences(TestDb::prefix()); // no table there
        try {
            $other->allocate('k');
            $this->fail('nothing thrown');
        } catch (Counterfoil\DatabaseUnavailableException $e) {
            if (TestDb::postgres()) {
                // PostgreSQL has no numeric code: the SQLSTATE is in the message.
                $this->assertSame(0, $e->getCode());
                $this->assertStringContainsString('database error 42P01', $e->getMessage());
                $this->assertStringContainsString('does not exist', $e->getMessage());
            } else {
                $this->assertSame(1146, $e->getCode());
                $this->assertStringContainsString("doesn't exist", $e->getMessage());
            }
        }
    }

    public function testUnreachableDatabase(): void
    {
        $dead = new Counterfoil\Sequences(['database_url' => 'mysql://cf:cf@127.0.0.1:1/x', 'timeout_ms' => 1000]);
        $this->expectException(Counterfoil\DatabaseUnavailableException::class);
        $this->expectExceptionMessage('cannot connect');
        $dead->allocate('k');
    }

    public function testNoDatabaseConfigured(): void
    {
        $this->expectException(Counterfoil\InvalidArgumentException::class);
        $this->expectExceptionMessage('counterfoil.database_url');
        new Counterfoil\Sequences(['database_url' => '']);
    }

    public function testUnknownOption(): void
    {
        $this->expectException(Counterfoil\InvalidArgumentException::class);
        $this->expectExceptionMessage('unknown option `databse_url`');
        Counterfoil\configure(['databse_url' => 'x']);
    }

    public function testBadTemplateSaysWhere(): void
    {
        $this->expectException(Counterfoil\InvalidArgumentException::class);
        $this->expectExceptionMessage('byte 7');
        new Counterfoil\Sequences(['format' => '{year}-{sequence}']);
    }

    public function testWordPressStyleConnectionParts(): void
    {
        if (TestDb::postgres()) {
            $this->markTestSkipped('host/user/password/database are WordPress\'s DB_* parts: they name a MySQL/MariaDB server');
        }
        $u = parse_url(getenv('COUNTERFOIL_TEST_URL'));
        $s = new Counterfoil\Sequences([
            'host' => $u['host'] . ':' . $u['port'], 'user' => $u['user'], 'password' => $u['pass'],
            'database' => ltrim($u['path'], '/'), 'table_prefix' => $this->prefix,
        ]);
        $this->assertSame(1, $s->allocate('k'));
        $this->assertSame(2, $this->s->allocate('k'));
    }
}
