<?php
// One web request through mysqli as a careful PHP developer writes it: a
// connection (`?persistent=1`: mysqli's persistent `p:` connection, kept by
// the worker), one prepared UPDATE … LAST_INSERT_ID(current_value + 1), the
// number from $stmt->insert_id, the one-row check (a failure is an uncaught
// exception: status 500).
require __DIR__ . '/../common.php';
echo bench_prepared_request(!empty($_GET['persistent']), '1:2019');
