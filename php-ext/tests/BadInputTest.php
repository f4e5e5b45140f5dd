<?php
use PHPUnit\Framework\TestCase;

/** Bad input: the documented exception, and nothing written. */
final class BadInputTest extends TestCase
{
    private string $prefix;

    protected function setUp(): void
    {
        $this->prefix = TestDb::prefix();
        Counterfoil\configure(['database_url' => getenv('COUNTERFOIL_TEST_URL'), 'table_prefix' => $this->prefix]);
        initialize_invoice_sequence(1, 2019, 5);
    }

    private function assertNothingWritten(): void
    {
        $this->assertSame([['scope_key' => '1:2019', 'current_value' => '4']], TestDb::rows($this->prefix));
    }

    public function wrongTypes(): array
    {
        return [
            'string user id' => [fn () => initialize_invoice_sequence('1', 2019, 1)],
            'string year' => [fn () => allocate_invoice_number(1, '2019')],
            'float start' => [fn () => initialize_invoice_sequence(1, 2020, 1.5)],
            'null start' => [fn () => initialize_invoice_sequence(1, 2020, null)],
            'array year' => [fn () => allocate_invoice_number(1, [2019])],
            'huge float' => [fn () => initialize_invoice_sequence(1, 2020, 1e30)],
        ];
    }

    /** @dataProvider wrongTypes */
    public function testWrongTypesAreTypeErrors(callable $call): void
    {
        try {
            $call();
            $this->fail('nothing thrown');
        } catch (TypeError $e) {
            $this->assertNothingWritten();
        }
    }

    public function invalidArguments(): array
    {
        return [
            'start 0' => [fn ($s) => initialize_invoice_sequence(2, 2019, 0), 'at least 1'],
            'start negative' => [fn () => initialize_invoice_sequence(2, 2019, -5), 'negative'],
            'start PHP_INT_MIN' => [fn () => initialize_invoice_sequence(2, 2019, PHP_INT_MIN), 'negative'],
            'negative user id' => [fn () => initialize_invoice_sequence(-1, 2019, 1), 'user_id'],
            'negative user id on allocate' => [fn () => allocate_invoice_number(-1, 2019), 'user_id'],
            'year 0' => [fn () => initialize_invoice_sequence(2, 0, 1), 'year 0'],
            'year 10000' => [fn () => allocate_invoice_number(1, 10000), 'year 10000'],
            'year PHP_INT_MAX' => [fn () => allocate_invoice_number(1, PHP_INT_MAX), 'out of range'],
            'year negative' => [fn () => allocate_invoice_number(1, -2019), 'out of range'],
            'empty scope' => [fn ($s) => $s->initialize('', 1), 'empty'],
            'control character' => [fn ($s) => $s->initialize("a\nb", 1), 'control character'],
            'scope too long' => [fn ($s) => $s->initialize(str_repeat('x', 192), 1), '192 bytes'],
            'batch 0' => [fn ($s) => $s->allocateMany('1:2019', 0), '1 to 100000'],
            'batch too big' => [fn ($s) => $s->allocateMany('1:2019', 100001), '1 to 100000'],
            'batch negative' => [fn ($s) => $s->allocateMany('1:2019', -1), 'negative'],
            'advance to 0' => [fn ($s) => $s->advance('1:2019', 0), 'at least 1'],
            'bad table prefix' => [fn ($s) => TestDb::sequences('wp`;'), 'table prefix'],
            'timeout 0' => [fn ($s) => new Counterfoil\Sequences(['timeout_ms' => 0]), 'timeout_ms'],
            'month 13' => [fn ($s) => $s->format(1, 2019, 13), 'month 13'],
            // Checked before anything is sent (issue [seams] item 1).
            'source too long' => [fn ($s) => $s->allocateRecorded('1:2019', str_repeat('x', 300)), '1 to 32 characters'],
            'amount too long' => [fn ($s) => $s->recordPayment('1:2019', 'stripe', 't', str_repeat('1', 40), 'EUR'), '`amount`'],
            'currency too long' => [fn ($s) => $s->recordPayment('1:2019', 'stripe', 't', '10.00', 'EURO'), '`currency`'],
        ];
    }

    /** @dataProvider invalidArguments */
    public function testInvalidArgumentsChangeNothing(callable $call, string $message): void
    {
        try {
            $call(TestDb::sequences($this->prefix));
            $this->fail('nothing thrown');
        } catch (Counterfoil\InvalidArgumentException $e) {
            $this->assertInstanceOf(InvalidArgumentException::class, $e);
            $this->assertStringContainsString($message, $e->getMessage());
        }
        $this->assertNothingWritten();
    }

    public function testHostileScopeKeysAreStoredVerbatim(): void
    {
        $s = TestDb::sequences($this->prefix);
        $keys = ["a'b", 'a"b', 'back\\slash', "x'; DROP TABLE {$this->prefix}invoice_sequences; --", '%', 'A', 'a'];
        foreach ($keys as $i => $k) {
            $this->assertTrue($s->initialize($k, 10 * ($i + 1)));
        }
        foreach ($keys as $i => $k) {
            $this->assertSame(10 * ($i + 1), $s->allocate($k));
        }
        $stored = array_column(TestDb::rows($this->prefix), 'scope_key');
        $expected = array_merge(['1:2019'], $keys);
        sort($stored);
        sort($expected);
        $this->assertSame($expected, $stored);
    }
}
