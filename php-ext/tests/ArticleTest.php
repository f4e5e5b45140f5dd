<?php
use PHPUnit\Framework\TestCase;

/** The article's semantics through PHP: the same cases as the core's suite. */
final class ArticleTest extends TestCase
{
    private string $prefix;

    protected function setUp(): void
    {
        $this->prefix = TestDb::prefix();
        Counterfoil\configure(['database_url' => getenv('COUNTERFOIL_TEST_URL'), 'table_prefix' => $this->prefix]);
    }

    public function testTheArticlesFunctions(): void
    {
        $this->assertTrue(initialize_invoice_sequence(42, 2019, 2));
        $this->assertSame('2019-0002', allocate_invoice_number(42, 2019));
        $this->assertSame('2019-0003', allocate_invoice_number(42, 2019));
        // Initialize again: false, counter unchanged.
        $this->assertFalse(initialize_invoice_sequence(42, 2019, 2));
        $this->assertFalse(initialize_invoice_sequence(42, 2019, 900));
        $this->assertSame([['scope_key' => '42:2019', 'current_value' => '3']], TestDb::rows($this->prefix));
        // Another user, same year: its own series.
        $this->assertTrue(initialize_invoice_sequence(43, 2019, 1));
        $this->assertSame('2019-0001', allocate_invoice_number(43, 2019));
        $this->assertSame('2019-0004', allocate_invoice_number(42, 2019));
    }

    public function testAdvanceNeverMovesDown(): void
    {
        $s = TestDb::sequences($this->prefix);
        $this->assertTrue($s->initialize('42:2019', 2));
        $this->assertSame(2, $s->allocate('42:2019'));
        $this->assertSame(3, $s->allocate('42:2019'));
        $this->assertTrue($s->advance('42:2019', 200));   // GREATEST(current_value, 199)
        $this->assertSame('2019-0200', allocate_invoice_number(42, 2019));
        $this->assertFalse($s->advance('42:2019', 50));
        $this->assertSame(200, $s->current('42:2019'));
        $this->assertSame(201, $s->allocate('42:2019'));
    }

    public function testBatchesAndFormats(): void
    {
        $s = TestDb::sequences($this->prefix, ['format' => 'INV/{yy}{month}/{seq:06}']);
        $s->create('batch', 10);
        $this->assertSame([10, 11, 12], $s->allocateMany('batch', 3));
        $this->assertSame(13, $s->allocate('batch'));
        $this->assertSame('INV/1903/000042', $s->format(42, 2019, 3));
        $this->assertSame('42:2019', Counterfoil\Sequences::scopeFor(42, 2019));
        $d = TestDb::sequences($this->prefix);
        $this->assertSame('2019-10000', $d->format(10000, 2019, 1));
    }

    public function testUnknownSeriesAfterASuccessfulAllocation(): void
    {
        initialize_invoice_sequence(7, 2024, 1000);
        $this->assertSame('2024-1000', allocate_invoice_number(7, 2024));
        try {
            allocate_invoice_number(7, 2025);
            $this->fail('no exception for an unknown series');
        } catch (Counterfoil\SeriesNotFoundException $e) {
            $this->assertStringContainsString('7:2025', $e->getMessage());
        }
        $this->assertSame('2024-1001', allocate_invoice_number(7, 2024));
    }

    public function testArticleTableIsAdoptedWithItsData(): void
    {
        $db = TestDb::pdo();
        $table = TestDb::table("{$this->prefix}invoice_sequences");
        $db->exec(TestDb::postgres()
            ? "CREATE TABLE $table (scope_key VARCHAR(191) NOT NULL PRIMARY KEY, current_value BIGINT NOT NULL)"
            : "CREATE TABLE $table (scope_key VARCHAR(191) NOT NULL, current_value BIGINT UNSIGNED NOT NULL, PRIMARY KEY (scope_key)) ENGINE=InnoDB");
        $db->exec("INSERT INTO $table VALUES ('42:2019', 57)");
        $this->assertFalse(initialize_invoice_sequence(42, 2019, 1));
        $this->assertSame('2019-0058', allocate_invoice_number(42, 2019));
    }
}
