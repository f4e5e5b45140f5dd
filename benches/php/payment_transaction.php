<?php
// The payment transaction of docs/design.md §9's measurement (the figure
// issue 30's goals came from), from one PHP process through mysqli, on one
// hot series: a payment row, the allocation, the registry row, the payment
// row's number, COMMIT.
//
// BENCH_SHAPE=packet: as one multi_query packet, as §9 states it
// (START TRANSACTION; INSERT …; SET @pid = LAST_INSERT_ID(); UPDATE …
// LAST_INSERT_ID(current_value + 1) …; SET @n = LAST_INSERT_ID(); INSERT …
// @n …; UPDATE … SET number = @n …; COMMIT; SELECT @n).
// BENCH_SHAPE=statements: the same transaction as separate prepared
// statements, one round trip each.
// Each call a new payment (this process's id and a counter); the number
// is checked to be a positive integer.
require __DIR__ . '/common.php';
$db    = bench_mysqli();
$shape = getenv('BENCH_SHAPE') ?: 'packet';
$pid   = getmypid();
$i     = 0;
if ('packet' === $shape) {
    $once = function () use ($db, $pid, &$i) {
        $txn = 'p' . $pid . '-' . ++$i;
        $db->multi_query(
            "START TRANSACTION;"
            . "INSERT INTO wp_counterfoil_payments (gateway, transaction_id, scope_key, created_at) VALUES ('bench', '$txn', '1:2019', UTC_TIMESTAMP());"
            . "SET @pid = LAST_INSERT_ID();"
            . "UPDATE wp_invoice_sequences SET current_value = LAST_INSERT_ID(current_value + 1) WHERE scope_key = '1:2019';"
            . "SET @n = LAST_INSERT_ID();"
            . "INSERT INTO wp_counterfoil_numbers (scope_key, number, status, source, gateway, transaction_id, created_at, updated_at) VALUES ('1:2019', @n, 'reserved', 'payment', 'bench', '$txn', UTC_TIMESTAMP(), UTC_TIMESTAMP());"
            . "UPDATE wp_counterfoil_payments SET number = @n WHERE id = @pid;"
            . "COMMIT;"
            . "SELECT @n"
        );
        $n = null;
        do {
            $r = $db->store_result();
            if ($r instanceof mysqli_result) {
                $n = $r->fetch_row()[0];
                $r->free();
            }
        } while ($db->more_results() && $db->next_result());
        if (!ctype_digit((string) $n) || (int) $n < 1) {
            throw new RuntimeException("no number: " . var_export($n, true));
        }
        return $n;
    };
} else {
    $insert   = $db->prepare("INSERT INTO wp_counterfoil_payments (gateway, transaction_id, scope_key, created_at) VALUES ('bench', ?, '1:2019', UTC_TIMESTAMP())");
    $allocate = $db->prepare("UPDATE wp_invoice_sequences SET current_value = LAST_INSERT_ID(current_value + 1) WHERE scope_key = '1:2019'");
    $register = $db->prepare("INSERT INTO wp_counterfoil_numbers (scope_key, number, status, source, gateway, transaction_id, created_at, updated_at) VALUES ('1:2019', ?, 'reserved', 'payment', 'bench', ?, UTC_TIMESTAMP(), UTC_TIMESTAMP())");
    $number   = $db->prepare('UPDATE wp_counterfoil_payments SET number = ? WHERE id = ?');
    $once     = function () use ($db, $pid, &$i, $insert, $allocate, $register, $number) {
        $txn = 'p' . $pid . '-' . ++$i;
        $db->begin_transaction();
        $insert->bind_param('s', $txn);
        $insert->execute();
        $id = $insert->insert_id;
        $allocate->execute();
        $n = $allocate->insert_id;
        if (1 !== $allocate->affected_rows || $n < 1) {
            throw new RuntimeException('no number');
        }
        $register->bind_param('is', $n, $txn);
        $register->execute();
        $number->bind_param('ii', $n, $id);
        $number->execute();
        $db->commit();
        return $n;
    };
}
$once();
bench_loop($once);
