<?php
use PHPUnit\Framework\TestCase;

/** Connection reuse, a killed connection, and fork safety. */
final class ConnectionTest extends TestCase
{
    private string $prefix;

    protected function setUp(): void
    {
        $this->prefix = TestDb::prefix();
        Counterfoil\configure(['database_url' => getenv('COUNTERFOIL_TEST_URL'), 'table_prefix' => $this->prefix]);
        initialize_invoice_sequence(1, 2019, 1);
    }

    public function testOneConnectionAcrossCalls(): void
    {
        // MySQL: setUp's initialize runs on the store's connection,
        // allocations and reads on the allocation lane's: two, each kept
        // across calls. PostgreSQL: the store's, one.
        for ($i = 1; $i <= 50; $i++) {
            $this->assertSame(sprintf('2019-%04d', $i), allocate_invoice_number(1, 2019));
        }
        $seq = new Counterfoil\Sequences();
        $this->assertSame(50, $seq->current('1:2019'));
        $this->assertSame(51, $seq->allocate('1:2019'));
        $info = Counterfoil\connection_info();
        $this->assertSame(TestDb::postgres() ? 1 : 2, $info['connects']);
        $this->assertSame(getmypid(), $info['pid']);
        $this->assertGreaterThan(0, $info['connection_id']);
    }

    public function testKilledConnectionIsReplacedTransparently(): void
    {
        $this->assertSame('2019-0001', allocate_invoice_number(1, 2019));
        $before = Counterfoil\connection_info();
        TestDb::kill((int) $before['connection_id']);
        $this->assertSame('2019-0002', allocate_invoice_number(1, 2019), 'the next call succeeds, no number reused');
        $after = Counterfoil\connection_info();
        $this->assertSame($before['connects'] + 1, $after['connects']);
        $this->assertNotSame($before['connection_id'], $after['connection_id']);
    }

    public function testAForkedChildGetsItsOwnConnectionAndTheParentKeepsItsOwn(): void
    {
        if (!function_exists('pcntl_fork')) {
            $this->markTestSkipped('pcntl is not available');
        }
        $this->assertSame('2019-0001', allocate_invoice_number(1, 2019));
        $parentConn = Counterfoil\connection_info()['connection_id'];
        $out = tempnam(sys_get_temp_dir(), 'cf');
        $pid = pcntl_fork();
        if ($pid === 0) {
            // Child: must not use the parent's socket.
            $numbers = [];
            for ($i = 0; $i < 20; $i++) {
                $numbers[] = allocate_invoice_number(1, 2019);
            }
            $info = Counterfoil\connection_info();
            file_put_contents($out, json_encode(['numbers' => $numbers, 'info' => $info]));
            posix_kill(getmypid(), SIGKILL); // leave without running PHPUnit's shutdown
        }
        $mine = [];
        for ($i = 0; $i < 20; $i++) {
            $mine[] = allocate_invoice_number(1, 2019);
        }
        pcntl_waitpid($pid, $status);
        $child = json_decode(file_get_contents($out), true);
        unlink($out);
        $this->assertNotSame($parentConn, $child['info']['connection_id']);
        $this->assertSame(1, $child['info']['connects']);
        $this->assertSame($parentConn, Counterfoil\connection_info()['connection_id'], 'parent kept its connection');
        $all = array_merge(['2019-0001'], $mine, $child['numbers']);
        sort($all);
        $expected = array_map(fn ($n) => sprintf('2019-%04d', $n), range(1, 41));
        $this->assertSame($expected, $all, 'unique and contiguous across parent and child');
    }
}
