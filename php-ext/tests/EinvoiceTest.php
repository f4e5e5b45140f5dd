<?php
use PHPUnit\Framework\TestCase;

/**
 * Counterfoil\einvoice_document(): the core's e-invoices, on the shared
 * vectors (tests/vectors/einvoice.json): the same UBL and CII bytes the
 * core's own test and the pure-PHP twin are held to, the same refusals
 * (naming their business term), and a Factur-X PDF carrying the CII.
 */
final class EinvoiceTest extends TestCase
{
    public function testSharedVectors(): void
    {
        $dir   = __DIR__ . '/../../tests/vectors';
        $cases = json_decode(file_get_contents("$dir/einvoice.json"), true);
        $this->assertNotEmpty($cases);
        $documents = 0;
        foreach ($cases as $case) {
            $input = json_encode($case['document']);
            if (isset($case['error'])) {
                try {
                    Counterfoil\einvoice_document($input, 'ubl');
                    $this->fail("{$case['name']}: made, expected a refusal naming {$case['error']}");
                } catch (Counterfoil\InvalidArgumentException $e) {
                    $this->assertStringStartsWith($case['error'] . ':', $e->getMessage(), $case['name']);
                }
                continue;
            }
            foreach (array('ubl', 'cii') as $format) {
                $this->assertSame(
                    file_get_contents("$dir/einvoice/{$case['name']}.$format.xml"),
                    Counterfoil\einvoice_document($input, $format),
                    "{$case['name']}.$format"
                );
                $documents++;
            }
            $pdf = Counterfoil\einvoice_document($input, 'pdf');
            $this->assertStringStartsWith('%PDF-1.7', $pdf, $case['name']);
            $this->assertStringContainsString('(factur-x.xml)', $pdf, $case['name']);
        }
        $this->assertGreaterThanOrEqual(20, $documents);
    }

    public function testAnUnknownFormatIsRefused(): void
    {
        $this->expectException(Counterfoil\InvalidArgumentException::class);
        Counterfoil\einvoice_document('{}', 'docx');
    }

    public function testTextThatIsNotJsonIsRefused(): void
    {
        $this->expectException(Counterfoil\InvalidArgumentException::class);
        Counterfoil\einvoice_document('not json', 'pdf');
    }
}
