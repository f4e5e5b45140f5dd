//! One worker process of `galera-confirm-cost`: the core's payment flow
//! (`record_payment`, a new payment per call) or its recorded allocation
//! (`allocate_recorded`) in a loop for BENCH_SECONDS, through the store with
//! the node list BENCH_URL (writer first) and the product's defaults, commit
//! confirmation on (the default: on a Galera node) or, with
//! `BENCH_CONFIRM=never`, off ([`ConfirmCommits::Never`]).
//!
//! Env: BENCH_URL, BENCH_SECONDS, BENCH_FLOW (`payment` or `recorded`),
//! BENCH_CONFIRM (`on` or `never`), BENCH_TAG (makes the payments'
//! transaction ids unique across cells), COUNTERFOIL_START_DIR. Output as the
//! other timed workers (`start`, `end`, `count`, `lat`, `cpu`), and
//! `errors <n> <first error>` and `nodes <node of the list each call ended
//! on, 1-based, with its count …>`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use counterfoil_core::{ConfirmCommits, PaymentRef, ScopeKey, SeriesStore, StoreConfig};
use counterfoil_tests::workers::{now_ns, wait_at_start_line};

/// The hot series `galera-confirm-cost` creates.
const SCOPE: &str = "hot";

fn main() -> Result<()> {
    let env = |name: &str| std::env::var(name).with_context(|| format!("{name} not set"));
    let url = env("BENCH_URL")?;
    let seconds: f64 = env("BENCH_SECONDS")?.parse()?;
    let flow = env("BENCH_FLOW")?;
    let tag = env("BENCH_TAG")?;
    let confirm = match env("BENCH_CONFIRM")?.as_str() {
        "on" => ConfirmCommits::OnClusters,
        "never" => ConfirmCommits::Never,
        other => bail!("BENCH_CONFIRM={other}: on or never"),
    };
    let payments = match flow.as_str() {
        "payment" => true,
        "recorded" => false,
        other => bail!("BENCH_FLOW={other}: payment or recorded"),
    };
    let scope = ScopeKey::new(SCOPE)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let mut store =
            SeriesStore::connect(StoreConfig::new(url.as_str()).confirm_commits(confirm)).await?;
        store.current(&scope).await?; // connected, on the writer, before the start line
        wait_at_start_line()?;
        let cpu0 = counterfoil_benches::cpu_us();
        let wall = now_ns();
        let start = Instant::now();
        let until = start + Duration::from_secs_f64(seconds);
        let mut lat = Vec::new();
        let (mut errors, mut first_error) = (0u64, None::<String>);
        let mut nodes: BTreeMap<String, u64> = BTreeMap::new();
        let mut i = 0u64;
        loop {
            let t = Instant::now();
            let told = if payments {
                let payment = PaymentRef::new("bench", &format!("{tag}-{i}"))?;
                store
                    .record_payment(&scope, &payment, None, None)
                    .await
                    .map(|_| ())
            } else {
                store.allocate_recorded(&scope, "bench").await.map(|_| ())
            };
            i += 1;
            let now = Instant::now();
            match told {
                Ok(()) => lat.push(now - t),
                Err(e) => {
                    errors += 1;
                    first_error.get_or_insert_with(|| e.to_string().replace('\n', " "));
                }
            }
            *nodes
                .entry(store.node().map_or("-".into(), |n| (n + 1).to_string()))
                .or_default() += 1;
            if now >= until {
                break;
            }
        }
        let elapsed = start.elapsed().as_nanos();
        let cpu1 = counterfoil_benches::cpu_us();
        lat.sort();
        let at = |q: usize| lat.get(lat.len() * q / 100).map_or(0, |d| d.as_micros());
        println!("start {wall}\nend {}\ncount {}", wall + elapsed, lat.len());
        println!("lat {} {}", at(50), at(99));
        println!("cpu {} {}", cpu1.0 - cpu0.0, cpu1.1 - cpu0.1);
        println!("errors {errors} {}", first_error.unwrap_or_default());
        let nodes: Vec<String> = nodes.iter().map(|(n, c)| format!("{n}:{c}")).collect();
        println!("nodes {}", nodes.join(" "));
        anyhow::Ok(())
    })
}
