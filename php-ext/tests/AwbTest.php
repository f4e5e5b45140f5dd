<?php
use PHPUnit\Framework\TestCase;

/** Counterfoil\awb_is_valid() and awb_normalize(): the core's validator, on the shared vectors. */
final class AwbTest extends TestCase
{
    public function testSharedVectors(): void
    {
        $cases = json_decode(file_get_contents(__DIR__ . '/../../tests/vectors/awb.json'), true);
        $this->assertNotEmpty($cases);
        foreach ($cases as $case) {
            $text = $case['text'];
            if (isset($case['canonical'])) {
                $this->assertTrue(Counterfoil\awb_is_valid($text), $text);
                $this->assertSame($case['canonical'], Counterfoil\awb_normalize($text), $text);
                continue;
            }
            $this->assertFalse(Counterfoil\awb_is_valid($text), $text);
            try {
                Counterfoil\awb_normalize($text);
                $this->fail("no exception for " . json_encode($text));
            } catch (Counterfoil\InvalidArgumentException $e) {
                $this->assertInstanceOf(InvalidArgumentException::class, $e);
                if ($case['error'] === 'check_digit') {
                    $this->assertStringContainsString("mod 7 is {$case['expected']}", $e->getMessage());
                    $this->assertStringContainsString("ends in {$case['got']}", $e->getMessage());
                }
            }
        }
    }

    public function testWrongTypeIsATypeError(): void
    {
        $this->expectException(TypeError::class);
        Counterfoil\awb_is_valid([157]);
    }
}
