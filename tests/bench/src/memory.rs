//! Measurement 5: resident memory.
//!
//! toolhost serves everything (the StatusPro components, `hello`, `echo`).
//! A first start with an empty compile cache compiles every component and
//! fills the cache; `VmRSS` (from `/proc/PID/status`) is read once its tool
//! list has settled. A second start uses the warm cache, as every restart
//! does; `VmRSS` is read when its tools are listed, after 1,000 echo calls,
//! and after the total (10,000 by default), the calls coming from 8
//! concurrent callers so the instance pool is exercised as well. Growth from
//! call 1,000 on is what a leak would show; the first calls touch pool slots
//! and allocator arenas once.
//!
//! Then the demo set, what `cargo xtask demo` serves: StatusPro's nine
//! components, Katana's and `hello` (11 components, 18 tools), started with
//! a warm compile cache; `VmRSS` when its tools are listed and after 1,000
//! calls of `greet` from 8 callers (issue 31's target: ≤ 40 MiB warm).

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::{Result, bail};

use crate::Options;
use crate::calls::{Resident, concurrent, concurrent_calls};
use crate::fixture::{Cache, Fixture};
use crate::session::{Launch, Session};
use crate::stats;
use crate::table::Row;

/// Concurrent callers for the memory run.
const CALLERS: usize = 8;

/// Calls before the second reading.
const FIRST: usize = 1_000;

/// Growth from call [`FIRST`] to the end that still counts as none.
const FLAT_KIB: i64 = 1024;

/// Measurement 5.
pub async fn memory(fx: &Fixture, opts: &Options, resident: Resident) -> Result<Vec<Row>> {
    let mut rows = demo_set(fx).await?;
    let mut files = fx.statuspro.clone();
    files.push(fx.component("hello"));
    files.push(fx.component("echo"));
    let plugins = fx.plugin_dir("memory-plugins", &files)?;
    let launch = fx.toolhost(
        "toolhost",
        &plugins,
        &Cache::Dir(fx.fresh_dir("memory-cache")?),
    );
    let (names, compiled) = first_start(&launch, "echo").await?;

    let session = Session::start(&launch).await?;
    session.wait_for_tools(&names).await?;
    let loaded = session.rss_kib()?;
    let peer = session.peer();
    concurrent(&peer, CALLERS, FIRST).await?;
    let after_first = session.rss_kib()?;
    let total = opts.memory_calls.max(FIRST);
    concurrent(&peer, CALLERS, total - FIRST).await?;
    let after = session.rss_kib()?;
    session.stop().await;

    let what_loaded = match fx.statuspro_missing() {
        None => format!("{} components, {} tools", files.len(), names.len()),
        Some(why) => format!(
            "{} components, {} tools; StatusPro not included: {why}",
            files.len(),
            names.len()
        ),
    };
    let mut baselines = Vec::new();
    if let Some(kib) = resident.native_kib {
        baselines.push(format!("native rmcp echo {}", stats::mib(kib)));
    }
    if let Some(kib) = resident.fastmcp_kib {
        baselines.push(format!("FastMCP echo {}", stats::mib(kib)));
    }
    let baseline = if baselines.is_empty() {
        "—".to_string()
    } else {
        baselines.join("; ")
    };
    let since_load = after as i64 - loaded as i64;
    let steady = after as i64 - after_first as i64;
    let total = stats::count(total as u64);
    rows.splice(
        0..0,
        [
        Row::figure(
            "5",
            format!(
                "resident memory (VmRSS) after loading everything ({what_loaded}), warm compile cache"
            ),
            stats::mib(loaded),
        )
        .against(baseline, "—"),
        Row::figure(
            "5",
            "VmRSS after loading everything, empty compile cache (all compiled at start)",
            stats::mib(compiled),
        )
        .against(
            format!("warm cache {}", stats::mib(loaded)),
            stats::ratio(compiled as f64, loaded as f64),
        ),
        Row::figure(
            "5",
            format!("VmRSS after {total} echo calls ({CALLERS} concurrent callers)"),
            format!(
                "{} ({} since load; {} from call 1,000 to {total})",
                stats::mib(after),
                stats::mib_delta(since_load),
                stats::mib_delta(steady)
            ),
        )
        .against(
            format!("at load {}", stats::mib(loaded)),
            stats::ratio(after as f64, loaded as f64),
        )
        .target(format!(
            "no growth after warm-up (< 1 MiB from call 1,000 on): {}",
            stats::verdict(steady < FLAT_KIB)
        )),
        ],
    );
    Ok(rows)
}

/// A first start of `launch` with an empty compile cache, which fills it:
/// the tools it lists once the list has settled (`tool` among them), and
/// its `VmRSS` then.
async fn first_start(launch: &Launch, tool: &str) -> Result<(BTreeSet<String>, u64)> {
    let compiling = Session::start(launch).await?;
    let names = compiling
        .settled_tool_names(Duration::from_millis(500))
        .await?;
    let rss = compiling.rss_kib()?;
    compiling.stop().await;
    if !names.contains(tool) {
        bail!("toolhost does not list {tool}: {names:?}");
    }
    Ok((names, rss))
}

/// The demo set's target: resident memory serving it, warm.
const DEMO_TARGET_KIB: u64 = 40 * 1024;

/// Calls of `greet` before the demo set's second reading.
const DEMO_CALLS: usize = 1_000;

/// The demo set's rows (see the module doc).
async fn demo_set(fx: &Fixture) -> Result<Vec<Row>> {
    if let Some(why) = fx.statuspro_missing() {
        return Ok(vec![Row::skipped("5", "VmRSS serving the demo set", why)]);
    }
    let mut files = fx.statuspro.clone();
    files.push(fx.component("katana"));
    files.push(fx.component("hello"));
    let plugins = fx.plugin_dir("memory-demo-plugins", &files)?;
    let launch = fx.toolhost(
        "toolhost",
        &plugins,
        &Cache::Dir(fx.fresh_dir("memory-demo-cache")?),
    );
    let (names, _) = first_start(&launch, "greet").await?;

    let session = Session::start(&launch).await?;
    session.wait_for_tools(&names).await?;
    let listed = session.rss_kib()?;
    concurrent_calls(
        &session.peer(),
        CALLERS,
        DEMO_CALLS,
        "greet",
        serde_json::json!({"name": "bench"}),
    )
    .await?;
    let served = session.rss_kib()?;
    session.stop().await;

    let what = format!(
        "VmRSS serving the demo set ({} components, {} tools: StatusPro, Katana, hello), warm compile cache",
        files.len(),
        names.len()
    );
    let target = |kib: u64| format!("≤ 40 MiB: {}", stats::verdict(kib <= DEMO_TARGET_KIB));
    Ok(vec![
        Row::figure("5", format!("{what}, tools listed"), stats::mib(listed))
            .target(target(listed)),
        Row::figure(
            "5",
            format!(
                "{what}, after {} greet calls ({CALLERS} concurrent callers)",
                stats::count(DEMO_CALLS as u64)
            ),
            stats::mib(served),
        )
        .target(target(served)),
    ])
}
