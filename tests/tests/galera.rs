//! A 3-node MariaDB Galera cluster (./scripts/test runs these in a stage of
//! their own, one at a time; `--no-galera` leaves them out):
//! workers spread over the nodes, with routing (every allocation to the first
//! healthy node) and without (each worker writes through its own node, so
//! writes to the hot series conflict at commit and 1213 is retried), and a
//! kill -9 of the writer node under load. The workers are OS processes
//! (`history-worker`); the history checker judges each run.

use std::process::Command;
use std::time::{Duration, Instant};

use counterfoil_core::{PaymentRef, ScopeKey, SeriesStore, StoreConfig};
use counterfoil_tests::galera::Galera;
use counterfoil_tests::history::{
    acknowledged, check, check_registry, client_counter, client_registry, Completion, History, Op,
};
use counterfoil_tests::mariadb::{block_on, MariaDb};
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::workers::{overlap, start_together};

fn key() -> ScopeKey {
    ScopeKey::new("hot").unwrap()
}

fn setup(g: &Galera) -> String {
    g.exec("CREATE DATABASE cf").unwrap();
    block_on(async {
        let mut s = SeriesStore::connect(StoreConfig::new(g.url(0, "cf")))
            .await
            .unwrap();
        s.ensure_schema().await.unwrap();
        s.initialize(&key(), 1).await.unwrap();
    });
    "cf".into()
}

struct Run {
    ops: Vec<Op>,
    elapsed: f64,
    conflicts: u64,
    /// What each worker printed.
    outputs: Vec<String>,
}

/// `workers` OS processes (`history-worker`), worker w using `url_of(w)`,
/// for `seconds`, while `during` runs; one try per call.
fn run_load(
    workers: usize,
    url_of: impl Fn(usize) -> String,
    seconds: f64,
    during: impl FnOnce(),
) -> Run {
    run_load_as("allocate", workers, url_of, seconds, during)
}

/// As [`run_load`], the workers in `mode` (`allocate`, or `allocate-lane`:
/// the blocking lane of the PHP extension).
fn run_load_as(
    mode: &str,
    workers: usize,
    url_of: impl Fn(usize) -> String,
    seconds: f64,
    during: impl FnOnce(),
) -> Run {
    run_workers(
        workers,
        |w| {
            let mut c = Command::new(env!("CARGO_BIN_EXE_history-worker"));
            c.args([mode, &url_of(w), "hot", "3000", &w.to_string()]);
            c
        },
        seconds,
        during,
    )
}

/// `workers` OS processes, `command_of(w)` each, for `seconds`, while `during` runs.
fn run_workers(
    workers: usize,
    command_of: impl Fn(usize) -> Command,
    seconds: f64,
    during: impl FnOnce(),
) -> Run {
    let commands = (0..workers).map(command_of).collect();
    let started = Instant::now();
    let running = start_together(commands).unwrap();
    let t = Instant::now();
    during();
    std::thread::sleep(Duration::from_secs_f64(seconds).saturating_sub(t.elapsed()));
    let finished = running.stop(Duration::from_secs(120)).unwrap();
    for f in &finished {
        assert!(f.status.success(), "worker failed: {}", f.stderr);
    }
    assert!(
        overlap(&finished).unwrap().all_overlapped(),
        "the workers ran at the same time"
    );
    let ops = History::from_outputs(finished.iter().map(|f| f.stdout.as_str()));
    let conflicts = ops
        .iter()
        .filter(|o| matches!(&o.completion, Completion::Fail(m) if m.contains("1213")))
        .count() as u64;
    Run {
        ops,
        elapsed: started.elapsed().as_secs_f64(),
        conflicts,
        outputs: finished.into_iter().map(|f| f.stdout).collect(),
    }
}

/// Now, in ns since the epoch (the clock of the workers' histories).
fn now_ns() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// Kills the writer (node 1) with SIGKILL `after` into the run, and asserts,
/// once the run's history is in, that the kill hit calls in flight: a
/// fault that lands between calls proves nothing about them.
struct WriterKill {
    at: std::sync::Mutex<Option<u128>>,
}

impl WriterKill {
    fn new() -> Self {
        Self {
            at: std::sync::Mutex::new(None),
        }
    }

    fn kill(&self, g: &Galera, after: Duration) {
        std::thread::sleep(after);
        *self.at.lock().unwrap() = Some(now_ns());
        g.crash(0).unwrap();
        println!("writer (node 1) killed with SIGKILL");
    }

    /// The calls invoked before the kill and completed after it.
    fn hit(&self, ops: &[Op]) -> usize {
        let at = self.at.lock().unwrap().expect("the writer was killed");
        let hit = ops
            .iter()
            .filter(|o| o.invoked < at && o.completed > at)
            .count();
        assert!(hit > 0, "the kill hit no call in flight");
        hit
    }
}

/// The hot series' counter on `node`, read with the mariadb client.
fn counter(g: &Galera, node: usize) -> u64 {
    client_counter(&g.url(node, "cf"), "hot")
}

fn report(name: &str, run: &Run, start: u64, counter: u64) {
    let v = check(&run.ops, start, counter);
    println!(
        "{name}: {:.0} allocations/s; {} ok, {} fail ({} certification conflicts, 1213), {} unknown; \
         duplicates {}; gaps {} (unknowns {}); counter {counter}",
        v.ok as f64 / run.elapsed, v.ok, v.fail, run.conflicts, v.unknown, v.duplicates.len(), v.gaps, v.unknown
    );
    assert!(v.holds(true), "{name}: {v:?}");
    assert!(v.ok > 50, "{name}: the load ran: {v:?}");
}

#[test]
#[ignore = "a 3-node Galera cluster: ./scripts/test runs these in a stage of their own"]
fn galera_routing_on_off_and_writer_failover() {
    let g = Galera::start("suite").unwrap();
    let db = setup(&g);

    // Routing on: workers spread over the nodes, every one given the node
    // list; all allocations go to the first healthy node.
    let before = counter(&g, 0);
    let on = run_load(6, |_| g.urls(&db), 3.0, || {});
    let after = counter(&g, 1);
    report("routing on", &on, before + 1, after);
    g.wait_caught_up().unwrap();

    // Routing off: worker w writes through node w % 3.
    let before = after;
    let off = run_load(6, |w| g.url(w % 3, &db), 3.0, || {});
    let after = counter(&g, 2);
    report("routing off", &off, before + 1, after);
    assert!(
        off.conflicts > on.conflicts,
        "writes through every node conflict at commit: {} vs {}",
        off.conflicts,
        on.conflicts
    );

    // The blocking lane (the PHP extension's path) with the node list: its
    // connections are vetted (wsrep_ready) and all go to the first node.
    let before = after;
    let lane = run_load_as("allocate-lane", 6, |_| g.urls(&db), 3.0, || {});
    let after = counter(&g, 1);
    report("lane, routing on", &lane, before + 1, after);
    assert!(
        lane.conflicts < off.conflicts,
        "the lane writes through one node too: {} conflicts (routing off: {})",
        lane.conflicts,
        off.conflicts
    );

    // kill -9 of the writer under load: the workers fail over to node 2; node 1 rejoins.
    let before = after;
    let kill = WriterKill::new();
    let failover = run_load(
        6,
        |_| g.urls(&db),
        6.0,
        || {
            kill.kill(&g, Duration::from_millis(1500));
            std::thread::sleep(Duration::from_millis(2000));
        },
    );
    println!("calls in flight at the kill: {}", kill.hit(&failover.ops));
    report("writer killed", &failover, before + 1, counter(&g, 1));
    g.rejoin(0).unwrap();
    assert_eq!(g.cluster_size(0).unwrap(), 3, "node 1 rejoined the cluster");
    assert_eq!(
        counter(&g, 0),
        counter(&g, 2),
        "the rejoined node holds the same counter"
    );
    println!("node 1 rejoined: cluster size 3, counters equal");
}

/// How many rounds each payment run makes: `COUNTERFOIL_GALERA_SOAK`
/// (`./scripts/test --galera-soak`: 20), else 1.
fn rounds() -> usize {
    std::env::var("COUNTERFOIL_GALERA_SOAK")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(1)
}

/// A cluster with the registry's tables and the hot series, database `cf`.
fn payment_cluster(name: &str) -> Galera {
    let g = Galera::start(name).unwrap();
    g.exec("CREATE DATABASE cf").unwrap();
    block_on(async {
        let mut s = SeriesStore::connect(StoreConfig::new(g.url(0, "cf")))
            .await
            .unwrap();
        s.ensure_registry_schema().await.unwrap();
        s.initialize(&key(), 1).await.unwrap();
    });
    g
}

/// Where each payment call of a run ended: its transaction id → the node
/// (1-based) and the server's connection id (`history-worker`'s `call` lines).
fn call_nodes(outputs: &[String]) -> std::collections::BTreeMap<String, (String, String)> {
    outputs
        .iter()
        .flat_map(|o| o.lines())
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            match f.as_slice() {
                ["call", txn, "node", node, "connection", id] => {
                    Some((txn.to_string(), (node.to_string(), id.to_string())))
                }
                _ => None,
            }
        })
        .collect()
}

/// Judges a payment run as a gateway and a bookkeeper would: first every
/// payment whose call was not told a number (a certification conflict, a
/// lost connection, a commit not confirmed) is delivered again through the
/// node list, as the gateway does, until it gets its number; then, read
/// back from `node` (causal reads): no number told to two payments, every
/// payment stored with the number it was told, and every number the
/// counter passed in the registry with the payment it was told to (nothing
/// left to explain: an unknown outcome is settled by its redelivery).
/// Returns the counter.
fn judge_payments(g: &Galera, node: usize, name: &str, run: &Run, start: u64) -> u64 {
    let verdict = check(&run.ops, start, u64::MAX);
    let unconfirmed = run
        .ops
        .iter()
        .filter(|o| matches!(&o.completion, Completion::Unknown(m) if m.contains("read back")))
        .count();
    let redelivered: Vec<(String, u64)> = block_on(async {
        let mut s = SeriesStore::connect(StoreConfig::new(g.urls("cf")))
            .await
            .unwrap();
        let mut told = Vec::new();
        for o in run
            .ops
            .iter()
            .filter(|o| !matches!(o.completion, Completion::Ok(..)))
        {
            let p = PaymentRef::new("fault", &o.label).unwrap();
            let r = s.record_payment(&key(), &p, None, None).await.unwrap();
            told.push((o.label.clone(), r.number));
        }
        told
    });
    let query = |sql: &str| {
        MariaDb::client_query(
            &g.url(node, "cf"),
            &format!("SET SESSION wsrep_sync_wait = 1; {sql}"),
        )
        .unwrap()
    };
    let stored: std::collections::BTreeMap<String, u64> = query(
        "SELECT transaction_id, number FROM wp_counterfoil_payments WHERE number IS NOT NULL",
    )
    .into_iter()
    .map(|r| (r[0].clone(), r[1].parse().unwrap()))
    .collect();
    let counter: u64 =
        query("SELECT current_value FROM wp_invoice_sequences WHERE scope_key = 'hot'")[0][0]
            .parse()
            .unwrap();
    // Every payment told a number: in the run, or on its redelivery.
    let told: Vec<(String, u64)> = run
        .ops
        .iter()
        .filter_map(|o| match o.completion {
            Completion::Ok(n, _) => Some((o.label.clone(), n)),
            _ => None,
        })
        .chain(redelivered.iter().cloned())
        .collect();
    let mut owner: std::collections::BTreeMap<u64, &str> = std::collections::BTreeMap::new();
    let mut twice = Vec::new();
    for (txn, n) in &told {
        if let Some(first) = owner.insert(*n, txn) {
            twice.push((*n, first.to_owned(), txn.clone()));
        }
    }
    let lost: Vec<_> = told
        .iter()
        .filter(|(txn, n)| stored.get(txn) != Some(n))
        .map(|(txn, n)| (txn.clone(), *n, stored.get(txn).copied()))
        .collect();
    println!(
        "{name}: {:.0} payments/s; {} ok, {} fail ({} certification conflicts), {} unknown \
         ({unconfirmed} not confirmed by the read back); {} delivered again; numbers told twice {}; \
         told but not stored as told {}; counter {counter}",
        verdict.ok as f64 / run.elapsed,
        verdict.ok,
        verdict.fail,
        run.conflicts,
        verdict.unknown,
        redelivered.len(),
        twice.len(),
        lost.len()
    );
    let nodes = call_nodes(&run.outputs);
    let where_of = |txn: &str| nodes.get(txn).cloned().unwrap_or_default();
    let logs = g.node_dir(0).parent().unwrap().display().to_string();
    assert!(
        lost.is_empty(),
        "{name}: payments told a number the cluster does not hold (txn, told, stored, (node, connection id)): {:?}; \
         the nodes' logs (wsrep_log_conflicts) are kept under {logs}",
        lost.iter()
            .map(|(t, n, s)| (t, n, s, where_of(t)))
            .collect::<Vec<_>>()
    );
    assert!(
        twice.is_empty(),
        "{name}: numbers told to two payments (number, first, second): {twice:?}; {:?}; logs under {logs}",
        twice.iter().map(|(_, a, b)| (where_of(a), where_of(b))).collect::<Vec<_>>()
    );
    assert!(verdict.ok > 50, "{name}: the load ran: {verdict:?}");
    let rows: Vec<_> = client_registry(&g.url(node, "cf"), "hot")
        .into_iter()
        .filter(|r| r.number >= start)
        .collect();
    let acknowledged: std::collections::BTreeSet<u64> = owner.keys().copied().collect();
    let registry = check_registry(&acknowledged, &rows, start, counter, 0);
    assert!(registry.holds(), "{name}: {registry:?}");
    counter
}

/// The core's payment flow with each worker writing through its own node
/// (certification conflicts at commit, 1213: the worker's call fails and the
/// gateway would deliver again). Every payment a worker was told about is
/// committed with the number it was told, and no number is told twice. On a
/// Galera node the store sends no one-trip packet (with packets, this run
/// saw payments answered with a number whose transaction the cluster had
/// lost), and reads every numbering transaction back after its COMMIT
/// before telling the number (once, with the statements one by one, a
/// COMMIT answered OK whose payment the cluster did not hold, its number
/// told again to the next payment). `COUNTERFOIL_GALERA_SOAK=N` runs N rounds.
#[test]
#[ignore = "a 3-node Galera cluster: ./scripts/test runs these in a stage of their own"]
fn galera_payments_through_every_node() {
    let g = payment_cluster("pay");
    let mut start = 1;
    for round in 1..=rounds() {
        let run = run_load_as("payment", 6, |w| g.url(w % 3, "cf"), 3.0, || {});
        let name = format!("payments through every node, round {round}");
        start = judge_payments(&g, 1, &name, &run, start) + 1;
        assert!(
            run.conflicts > 0,
            "{name}: writes through every node conflicted at commit"
        );
        g.wait_caught_up().unwrap();
    }
}

/// The supported set-up under the faults that spread writers over the
/// nodes: every worker is given the node list, but node 1 refuses
/// connections beyond two (`max_connections`, error 1040), so the workers
/// that meet the refusal write through node 2 while the others write
/// through node 1 (writers on two nodes: certification conflicts, seen);
/// then node 1 is killed with SIGKILL mid-run (its workers fail over to
/// node 2) and rejoins while the run goes on. No number told twice, no
/// payment told a number the cluster does not hold, every number the
/// counter passed in the registry. `COUNTERFOIL_GALERA_SOAK=N` runs N rounds.
#[test]
#[ignore = "a 3-node Galera cluster: ./scripts/test runs these in a stage of their own"]
fn galera_failover_split_then_writer_killed_and_rejoined() {
    let g = payment_cluster("split");
    // A shop's user: no CONNECTION ADMIN (which ignores max_connections).
    g.exec_on(
        0,
        "CREATE USER 'shop'@'%' IDENTIFIED BY 'cf'; \
            GRANT SELECT, INSERT, UPDATE, DELETE ON cf.* TO 'shop'@'%'",
    )
    .unwrap();
    let shop_urls = g.urls("cf").replace("mysql://cf:cf@", "mysql://shop:cf@");
    let mut start = 1;
    let mut rounds_in_conflict = 0;
    let mut first_round_conflicted = false;
    for round in 1..=rounds() {
        // Node 1 takes three of the six workers; the others meet 1040: ten
        // connections at most (MariaDB's least max_connections), seven of
        // them held by idle clients, which end with the node.
        g.exec_on(0, "SET GLOBAL max_connections = 10").unwrap();
        let idle: Vec<std::process::Child> = (0..7)
            .map(|_| {
                Command::new("mariadb")
                    .args(["-h", "127.0.0.1", "-P", &g.port(0).to_string()])
                    .args(["-u", "shop", "-pcf", "-e", "SELECT SLEEP(60)"])
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        std::thread::sleep(Duration::from_millis(500));
        let kill = WriterKill::new();
        let run = run_load_as(
            "payment",
            6,
            |_| shop_urls.clone(),
            7.0,
            || {
                kill.kill(&g, Duration::from_millis(2000));
                g.rejoin(0).unwrap();
                println!("node 1 rejoined mid-run");
            },
        );
        for mut c in idle {
            let _ = c.kill();
            let _ = c.wait();
        }
        let name = format!("split, writer killed and rejoined, round {round}");
        let nodes = call_nodes(&run.outputs);
        let at = *kill.at.lock().unwrap();
        let mut before_kill: std::collections::BTreeMap<&str, usize> = Default::default();
        for n in run
            .ops
            .iter()
            .filter(|o| Some(o.completed) < at && matches!(o.completion, Completion::Ok(..)))
            .filter_map(|o| nodes.get(&o.label).map(|(n, _)| n.as_str()))
        {
            *before_kill.entry(n).or_default() += 1;
        }
        println!(
            "{name}: calls in flight at the kill: {}; payments written through each node before it: {before_kill:?}",
            kill.hit(&run.ops)
        );
        assert!(
            before_kill.contains_key("1") && before_kill.contains_key("2"),
            "{name}: the refusal split the writers over nodes 1 and 2: {before_kill:?}"
        );
        // Judged first, whatever the contention: no round goes unjudged.
        start = judge_payments(&g, 1, &name, &run, start) + 1;
        rounds_in_conflict += usize::from(run.conflicts > 0);
        if round == 1 {
            first_round_conflicted = run.conflicts > 0;
        }
        assert_eq!(g.cluster_size(0).unwrap(), 3, "{name}: node 1 rejoined");
        g.wait_caught_up().unwrap();
        assert_eq!(
            counter(&g, 0),
            counter(&g, 2),
            "{name}: the rejoined node holds the same counter"
        );
    }
    // The writers on two nodes conflicted at commit (seen) in the first
    // round, the one ./scripts/test runs. Not yet explained (2026-12-04):
    // in a soak, the rounds after node 1's first rejoin wrote about as many
    // payments through each node before the kill and saw no certification
    // conflict (3 soaks of 3–5 rounds: conflicts in round 1 only); every
    // round is judged all the same.
    println!(
        "split: certification conflicts seen in {rounds_in_conflict} of {} rounds",
        rounds()
    );
    assert!(
        first_round_conflicted,
        "writers on two nodes conflicted at commit in the first round"
    );
}

/// The same suite with the plugin's pure-PHP backend: PHP worker processes
/// in a WordPress site on the cluster (tests/wp-workers/twin-history.php),
/// routing on (every worker given the node list) and off (each worker one
/// node: certification conflicts, 1213, retried inside each call), then the
/// writer killed under load. No number twice; every gap is a call with an
/// unknown outcome or a number voided by the retry that replaced it.
#[test]
#[ignore = "a 3-node Galera cluster: ./scripts/test runs these in a stage of their own"]
fn galera_with_the_php_backend() {
    let g = Galera::start("twin").unwrap();
    let wp = WordPress::install(&g, "galera_twin", None).unwrap();
    wp.config_set(
        "COUNTERFOIL_DB_NODES",
        "explode(',', (string) getenv('CF_NODES'))",
    );
    let all = (0..3)
        .map(|i| format!("127.0.0.1:{}", g.port(i)))
        .collect::<Vec<_>>()
        .join(",");
    let out = wp
        .php(false)
        .args(["-r", "require './wp-load.php'; echo var_export(initialize_invoice_sequence(1, 2026, 1), true), ' ', counterfoil_backend()->name();"])
        .env("CF_NODES", &all)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "true php",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let script = counterfoil_tests::php::repo_root().join("tests/wp-workers/twin-history.php");
    let worker = |w: usize, nodes: String| {
        let mut c = wp.php(false);
        c.arg(&script)
            .args(["1:2026", &w.to_string()])
            .env("CF_NODES", nodes);
        c
    };
    let db = wp.database().to_owned();
    let value = |node: usize, sql: &str| -> u64 {
        MariaDb::scalar(&g.url(node, &db), sql)
            .unwrap()
            .unwrap_or_default()
            .parse()
            .unwrap()
    };
    let counter = |node: usize| client_counter(&g.url(node, &db), "1:2026");
    let judge = |name: &str, run: &Run, start: u64, node: usize| {
        let counter = counter(node);
        let v = check(&run.ops, start, counter);
        let rows: Vec<_> = client_registry(&g.url(node, &db), "1:2026")
            .into_iter()
            .filter(|r| r.number >= start)
            .collect();
        let registry = check_registry(&acknowledged(&run.ops), &rows, start, counter, v.unknown);
        let voided = rows.iter().filter(|r| r.status == "void").count();
        println!(
            "PHP backend, {name}: {:.0} allocations/s; {} ok, {} fail, {} unknown; duplicates {}; \
             gaps {} (void with a reason {voided}, issued but unanswered {}); counter {counter}",
            v.ok as f64 / run.elapsed,
            v.ok,
            v.fail,
            v.unknown,
            v.duplicates.len(),
            v.gaps,
            registry.issued_unacknowledged
        );
        assert!(v.holds(false), "{name}: {v:?}");
        // Every number the counter passed is in the registry: issued to the
        // call that was told it, or void with a reason / unconfirmed; a
        // number somebody received is never voided.
        assert!(registry.holds(), "{name}: {registry:?}");
        assert!(v.ok > 50, "{name}: the load ran: {v:?}");
        counter
    };

    let before = counter(0);
    let on = run_workers(6, |w| worker(w, all.clone()), 3.0, || {});
    let after = judge("routing on", &on, before + 1, 1);
    g.wait_caught_up().unwrap();

    let off = run_workers(
        6,
        |w| worker(w, format!("127.0.0.1:{}", g.port(w % 3))),
        3.0,
        || {},
    );
    let retried_conflicts = value(0, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_LOCAL_CERT_FAILURES'");
    let after = judge("routing off", &off, after + 1, 2);
    println!("certification failures seen by node 1: {retried_conflicts}");
    g.wait_caught_up().unwrap();

    // Payments through every node (routing off): each payment told a number
    // is stored with that number, none told twice. On a Galera node the
    // twin sends no one-trip packet (the core's run of the same, with
    // packets, lost writes: galera_payments_through_every_node).
    let pay = run_workers(
        6,
        |w| {
            let mut c = worker(w, format!("127.0.0.1:{}", g.port(w % 3)));
            c.arg("payment");
            c
        },
        3.0,
        || {},
    );
    let stored: std::collections::BTreeMap<String, u64> = MariaDb::client_query(
        &g.url(1, &db),
        "SET SESSION wsrep_sync_wait = 1; \
         SELECT transaction_id, number FROM wp_counterfoil_payments WHERE gateway = 'galera'",
    )
    .unwrap()
    .into_iter()
    .map(|r| (r[0].clone(), r[1].parse().unwrap()))
    .collect();
    let lost: Vec<_> = pay
        .ops
        .iter()
        .filter_map(|o| match o.completion {
            Completion::Ok(n, _) if stored.get(&o.label) != Some(&n) => Some((o.label.clone(), n)),
            _ => None,
        })
        .collect();
    assert!(
        lost.is_empty(),
        "payments told a number the cluster does not hold: {lost:?}"
    );
    let after = judge("payments, routing off", &pay, after + 1, 1);
    g.wait_caught_up().unwrap();

    let kill = WriterKill::new();
    let failover = run_workers(
        6,
        |w| worker(w, all.clone()),
        6.0,
        || {
            kill.kill(&g, Duration::from_millis(1500));
            std::thread::sleep(Duration::from_millis(2000));
        },
    );
    println!("calls in flight at the kill: {}", kill.hit(&failover.ops));
    judge("writer killed", &failover, after + 1, 1);
    g.rejoin(0).unwrap();
    assert_eq!(
        counter(0),
        counter(2),
        "the rejoined node holds the same counter"
    );

    // Failing back to a node that answers but is not ready: node 2 cut off
    // from the cluster (gmcast.isolate: it runs on, non-primary, with
    // wsrep_ready = OFF), first in the list (node 2, 3, 1; WordPress's own
    // DB_HOST, node 1, stays in the primary component). One PHP process
    // pays four times through the list, failing back at every call (after
    // 0 ms): each call probes the first node again and stays on the second.
    // No one-trip packet may reach the second (a Galera node) for all that:
    // the twin used to clear its Galera gate while probing the first node
    // and keep it cleared when it put the second's connection back (3
    // packets sent to a Galera node here).
    g.isolate(1).unwrap();
    let isolated_first = [1, 2, 0]
        .map(|i| format!("127.0.0.1:{}", g.port(i)))
        .join(",");
    let script = "require './wp-load.php';
        add_filter('counterfoil_fail_back_after_ms', function () { return 0; });
        global $wpdb;
        $b = new Counterfoil_Php_Backend($wpdb->prefix, counterfoil_format());
        for ($i = 0; $i < 4; $i++) {
            $r = $b->record_payment('1:2026', 'failback', \"fb-$i\", '1.00', 'EUR', 2026, 1);
            echo $r['number'], ',';
        }
        echo ' ', $b->stats['one_trip'], ' ', $b->stats['connects'], ' ', $b->stats['confirmed'], ' ', $b->stats['skipped_reason'];";
    let out = wp
        .php(false)
        .args(["-r", script])
        .env("CF_NODES", &isolated_first)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!("fail-back to a node not ready: {text}");
    let fields: Vec<&str> = text.splitn(5, ' ').collect();
    let numbers: Vec<u64> = fields[0]
        .trim_end_matches(',')
        .split(',')
        .map(|n| n.parse().unwrap())
        .collect();
    assert_eq!(numbers.len(), 4, "{text}");
    let (one_trip, connects): (u64, u64) = (fields[1].parse().unwrap(), fields[2].parse().unwrap());
    assert_eq!(
        fields[3], "4",
        "each payment read back after its COMMIT on the Galera node: {text}"
    );
    assert!(
        fields[4].contains("node 1") && fields[4].contains("not ready"),
        "the list's first node was skipped as not ready: {text}"
    );
    assert!(
        connects >= 5,
        "the first node probed again at each later call (2 connects, then 3 probes): {text}"
    );
    assert_eq!(one_trip, 0, "no one-trip packet to a Galera node: {text}");
    let stored: Vec<u64> = MariaDb::client_query(
        &g.url(2, &db),
        "SET SESSION wsrep_sync_wait = 1; SELECT number FROM wp_counterfoil_payments \
         WHERE gateway = 'failback' ORDER BY transaction_id",
    )
    .unwrap()
    .into_iter()
    .map(|r| r[0].parse().unwrap())
    .collect();
    assert_eq!(stored, numbers, "each payment stored with its number");
}
