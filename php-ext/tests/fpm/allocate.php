<?php
// Served by php-fpm in tests/tests/php_ext.rs: one allocation per request
// through the extension configured by php.ini (-d counterfoil.*).
header('Content-Type: application/json');
try {
    $number = allocate_invoice_number(1, 2026);
    $info = Counterfoil\connection_info();
    echo json_encode(['number' => (int) $number, 'pid' => $info['pid'],
        'connects' => $info['connects'], 'connection_id' => $info['connection_id']]);
} catch (Throwable $e) {
    http_response_code(503);
    echo json_encode(['error' => get_class($e), 'message' => $e->getMessage(), 'pid' => getmypid()]);
}
