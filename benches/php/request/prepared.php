<?php
// One web request through mysqli as a careful PHP developer writes it: a
// connection (`?persistent=1`: mysqli's persistent `p:` connection, kept by
// the worker), one prepared UPDATE … LAST_INSERT_ID(current_value + 1), the
// number from $stmt->insert_id, the one-row check. The request's end closes
// what it opened, as in any PHP request.
require __DIR__ . '/../common.php';
$db = bench_mysqli(!empty($_GET['persistent']));
$stmt = $db->prepare('UPDATE wp_invoice_sequences SET current_value = LAST_INSERT_ID(current_value + 1) WHERE scope_key = ?');
$scope = '1:2019';
$stmt->bind_param('s', $scope);
$stmt->execute();
if ($stmt->affected_rows !== 1) {
    http_response_code(500);
    exit("series $scope does not exist");
}
printf('%d-%04d', 2019, $stmt->insert_id);
