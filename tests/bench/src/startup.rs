//! Measurement 3 and the cold-start half of 7: how long from spawning a
//! server until it can be used.
//!
//! One start is timed from just before the process is spawned until
//! `tools/list` has answered with every expected tool: spawn, `initialize`,
//! `notifications/initialized`, then `tools/list`, repeated after each
//! `notifications/tools/list_changed` if a tool is still missing (so a host
//! that answers before it has compiled everything is timed until it really
//! serves everything). The expected list is learned first from an untimed
//! start that waits until the list stops changing.
//!
//! *Empty compile cache* gives every start a new, empty `--cache-dir`;
//! *warm* reuses the directory the untimed start filled.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;

use crate::fixture::{Cache, Fixture, STATUSPRO_TOOLS};
use crate::session::{Launch, Session};
use crate::stats::{self, Samples};
use crate::table::Row;
use crate::{Options, Peers};

/// The warm-start target (issue 7).
const WARM_TARGET: Duration = Duration::from_millis(100);

/// How long the tool list must stay unchanged to count as complete.
const SETTLED: Duration = Duration::from_secs(1);

/// One timed start of `launch`, until `tools/list` includes `expected`.
pub async fn time_start(launch: &Launch, expected: &BTreeSet<String>) -> Result<Duration> {
    let session = Session::start(launch).await?;
    session.wait_for_tools(expected).await?;
    let elapsed = session.spawned.elapsed();
    session.stop().await;
    Ok(elapsed)
}

/// `runs` timed starts; `launch` gets the run's index.
async fn repeat(
    runs: usize,
    expected: &BTreeSet<String>,
    mut launch: impl FnMut(usize) -> Result<Launch>,
) -> Result<Samples> {
    let mut samples = Samples::default();
    for i in 0..runs {
        samples.extend([time_start(&launch(i)?, expected).await?]);
    }
    Ok(samples)
}

/// `p50 (min–max)`.
pub fn spread(s: &Samples) -> String {
    format!(
        "{} ({}–{})",
        stats::duration(s.p50()),
        stats::duration(s.min()),
        stats::duration(s.max())
    )
}

/// Measurement 3 with the nine StatusPro components and `hello`.
pub async fn everything(fx: &Fixture, opts: &Options) -> Result<Vec<Row>> {
    let empty_what = "cold start, empty compile cache: spawn → tools/list with StatusPro + hello";
    let warm_what = "cold start, warm compile cache: spawn → tools/list with StatusPro + hello";
    if let Some(why) = fx.statuspro_missing() {
        return Ok(vec![
            Row::skipped("3", empty_what, why.clone()),
            Row::skipped("3", warm_what, why),
        ]);
    }
    let mut files = fx.statuspro.clone();
    files.push(fx.component("hello"));
    let plugins = fx.plugin_dir("cold-plugins", &files)?;
    let warm = fx.fresh_dir("cold-cache-warm")?;
    let launch = |cache: PathBuf| fx.toolhost("toolhost", &plugins, &Cache::Dir(cache));

    eprintln!("  learning the full tool list (untimed start; fills the warm cache)");
    let reference = Session::start(&launch(warm.clone())).await?;
    let expected = reference.settled_tool_names(SETTLED).await?;
    reference.stop().await;
    let missing: Vec<&str> = STATUSPRO_TOOLS
        .iter()
        .copied()
        .filter(|t| !expected.contains(*t))
        .collect();
    let mut loaded = format!("{} components, {} tools", files.len(), expected.len());
    if !missing.is_empty() {
        loaded.push_str(&format!(
            "; StatusPro tools not found: {}",
            missing.join(", ")
        ));
    }
    let flags_note = if fx.flags.cache_dir {
        String::new()
    } else {
        "; toolhost serve has no --cache-dir yet: both rows use its default".to_string()
    };

    eprintln!("  {} starts with an empty cache", opts.cold_runs);
    let empty = repeat(opts.cold_runs, &expected, |i| {
        Ok(launch(fx.fresh_dir(&format!("cold-cache-empty-{i}"))?))
    })
    .await?;
    eprintln!("  {} starts with a warm cache", opts.warm_runs);
    let warm_samples = repeat(opts.warm_runs, &expected, |_| Ok(launch(warm.clone()))).await?;

    let met = warm_samples.p50() < WARM_TARGET;
    Ok(vec![
        Row::figure(
            "3",
            format!(
                "{empty_what} ({loaded}); p50 (min–max) of {}{flags_note}",
                opts.cold_runs
            ),
            spread(&empty),
        ),
        Row::figure(
            "3",
            format!(
                "{warm_what} ({loaded}); p50 (min–max) of {}{flags_note}",
                opts.warm_runs
            ),
            spread(&warm_samples),
        )
        .against(
            format!("empty cache {}", stats::duration(empty.p50())),
            stats::duration_ratio(warm_samples.p50(), empty.p50()),
        )
        .target(format!("< 100 ms: {}", stats::verdict(met))),
    ])
}

/// The same start with only `echo`: toolhost (warm cache) against the
/// native rmcp server (measurement 3) and FastMCP (measurement 7).
pub async fn echo_only(fx: &Fixture, opts: &Options, peers: &Peers) -> Result<Vec<Row>> {
    let plugins = fx.plugin_dir("cold-echo-plugins", &[fx.component("echo")])?;
    let cache = Cache::Dir(fx.fresh_dir("cold-echo-cache")?);
    let toolhost = fx.toolhost("toolhost", &plugins, &cache);
    let expected: BTreeSet<String> = ["echo".to_string()].into();

    // One untimed start each: fills the compile cache and the page cache.
    time_start(&toolhost, &expected).await?;
    let th = repeat(opts.warm_runs, &expected, |_| Ok(toolhost.clone())).await?;
    let native_launch = fx.native_echo();
    time_start(&native_launch, &expected).await?;
    let native = repeat(opts.warm_runs, &expected, |_| Ok(native_launch.clone())).await?;

    let mut rows = vec![
        Row::figure(
            "3",
            format!(
                "cold start, echo only, warm compile cache; p50 (min–max) of {}",
                opts.warm_runs
            ),
            spread(&th),
        )
        .against(
            format!("native rmcp {}", spread(&native)),
            stats::duration_ratio(th.p50(), native.p50()),
        ),
    ];
    let what = "cold start vs FastMCP: echo only (toolhost: warm compile cache)";
    // A FastMCP that fails to start skips its own row only.
    let fastmcp = match &peers.fastmcp {
        Ok(fastmcp) => {
            eprintln!("  {} FastMCP starts", opts.fastmcp_cold_runs);
            let starts = async {
                time_start(fastmcp, &expected).await?;
                repeat(opts.fastmcp_cold_runs, &expected, |_| Ok(fastmcp.clone())).await
            };
            starts
                .await
                .map_err(|e| format!("FastMCP did not start: {e:#}"))
        }
        Err(why) => Err(format!("FastMCP not available ({why})")),
    };
    match fastmcp {
        Ok(fast) => {
            rows.push(
                Row::figure(
                    "7",
                    format!(
                        "{what}; p50 (min–max) of {} and {}",
                        opts.warm_runs, opts.fastmcp_cold_runs
                    ),
                    spread(&th),
                )
                .against(
                    format!("{} {}", peers.fastmcp_name, spread(&fast)),
                    stats::duration_ratio(th.p50(), fast.p50()),
                ),
            );
        }
        Err(why) => rows.push(Row::skipped("7", what, why)),
    }
    Ok(rows)
}
