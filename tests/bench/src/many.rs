//! Measurements 8 and 9: a plugin directory of many components.
//!
//! The components are generated: `numbered.wasm` (`tests/components/numbered`)
//! names its one tool with a fixed-length placeholder, and each copy gets
//! that placeholder replaced by `numbered_000001`, `numbered_000002`, …, so
//! every file has different bytes (its own digest, its own compilation) and
//! its own tool name.
//!
//! 8. Start-up with 10, 50 and 100 distinct components: the first start
//!    (each run with a new, empty `--cache-dir`: everything compiles), the
//!    warm start (the cache the first starts filled), timed like
//!    measurement 3 from spawn until `tools/list` has every tool, and
//!    `VmRSS` once a start has every tool.
//! 9. A directory at rest: in a directory of 100 components plus `echo`,
//!    hot-reload swaps as in measurement 4 (warm cache), against the same
//!    swaps in a directory holding only `echo`; then, on the same server,
//!    the CPU time it uses over [`IDLE`] after the last swap, when nothing
//!    changes (target: under 1 % of that time).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::Options;
use crate::fixture::{Cache, Fixture};
use crate::reload;
use crate::session::Session;
use crate::startup::{spread, time_start};
use crate::stats::{self, Samples};
use crate::table::Row;

/// The tool name `numbered.wasm` is built with.
const PLACEHOLDER: &[u8] = b"numbered_XXXXXX";

/// Directory sizes for measurement 8.
const SIZES: [usize; 3] = [10, 50, 100];

/// First starts (empty cache) per size.
const FIRST_RUNS: usize = 3;

/// Warm starts per size.
const WARM_RUNS: usize = 5;

/// Components in measurement 9's directory.
const AT_SCALE: usize = 100;

/// Timed swaps per directory in measurement 9.
const SWAPS: usize = 10;

/// The idle period measured after a reload.
const IDLE: Duration = Duration::from_secs(10);

/// The idle CPU target: 1 % of [`IDLE`].
const IDLE_TARGET: Duration = Duration::from_millis(100);

/// Writes `n` distinct numbered components into a fresh `scratch/name`;
/// returns their paths and tool names.
fn numbered(fx: &Fixture, name: &str, n: usize) -> Result<(Vec<PathBuf>, BTreeSet<String>)> {
    let source = fx.component("numbered");
    let bytes = std::fs::read(&source).with_context(|| {
        format!(
            "cannot read {}; build the components with `cargo xtask build-plugins`",
            source.display()
        )
    })?;
    let at: Vec<usize> = bytes
        .windows(PLACEHOLDER.len())
        .enumerate()
        .filter(|(_, w)| *w == PLACEHOLDER)
        .map(|(i, _)| i)
        .collect();
    if at.is_empty() {
        bail!(
            "{} does not hold the placeholder tool name {:?}",
            source.display(),
            String::from_utf8_lossy(PLACEHOLDER)
        );
    }
    let dir = fx.fresh_dir(name)?;
    let mut files = Vec::with_capacity(n);
    let mut tools = BTreeSet::new();
    for i in 1..=n {
        let tool = format!("numbered_{i:06}");
        let mut copy = bytes.clone();
        for &offset in &at {
            copy[offset..offset + PLACEHOLDER.len()].copy_from_slice(tool.as_bytes());
        }
        let path = dir.join(format!("{tool}.wasm"));
        std::fs::write(&path, &copy).with_context(|| format!("cannot write {}", path.display()))?;
        files.push(path);
        tools.insert(tool);
    }
    Ok((files, tools))
}

/// Measurement 8.
pub async fn startup(fx: &Fixture, _opts: &Options) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for n in SIZES {
        eprintln!("  {n} components: {FIRST_RUNS} first starts, {WARM_RUNS} warm starts");
        let (files, expected) = numbered(fx, &format!("many-{n}-sources"), n)?;
        let plugins = fx.plugin_dir(&format!("many-{n}-plugins"), &files)?;
        let warm = fx.fresh_dir(&format!("many-{n}-cache-warm"))?;

        let mut first = Samples::default();
        let mut first_rss = 0;
        for i in 0..FIRST_RUNS {
            // The last first start fills the warm cache.
            let cache = if i + 1 == FIRST_RUNS {
                warm.clone()
            } else {
                fx.fresh_dir(&format!("many-{n}-cache-empty-{i}"))?
            };
            let session =
                Session::start(&fx.toolhost("toolhost", &plugins, &Cache::Dir(cache))).await?;
            session.wait_for_tools(&expected).await?;
            first.extend([session.spawned.elapsed()]);
            first_rss = first_rss.max(session.rss_kib()?);
            session.stop().await;
        }
        let launch = fx.toolhost("toolhost", &plugins, &Cache::Dir(warm.clone()));
        let mut warm_samples = Samples::default();
        for _ in 0..WARM_RUNS {
            warm_samples.extend([time_start(&launch, &expected).await?]);
        }
        let session = Session::start(&launch).await?;
        session.wait_for_tools(&expected).await?;
        let warm_rss = session.rss_kib()?;
        session.stop().await;

        let what = format!("start-up, {n} distinct components ({n} tools)");
        rows.push(Row::figure(
            "8",
            format!(
                "{what}, empty compile cache: spawn → tools/list complete; p50 (min–max) of {FIRST_RUNS}"
            ),
            spread(&first),
        ));
        rows.push(
            Row::figure(
                "8",
                format!(
                    "{what}, warm compile cache: spawn → tools/list complete; p50 (min–max) of {WARM_RUNS}"
                ),
                spread(&warm_samples),
            )
            .against(
                format!("empty cache {}", stats::duration(first.p50())),
                stats::duration_ratio(warm_samples.p50(), first.p50()),
            ),
        );
        rows.push(
            Row::figure(
                "8",
                format!("{what}: VmRSS with every tool listed, warm compile cache"),
                stats::mib(warm_rss),
            )
            .against(
                format!("after a first start {}", stats::mib(first_rss)),
                stats::ratio(warm_rss as f64, first_rss as f64),
            ),
        );
    }
    Ok(rows)
}

/// Measurement 9.
pub async fn at_rest(fx: &Fixture, _opts: &Options) -> Result<Vec<Row>> {
    let (a, b) = (fx.component("hello"), fx.component("echo"));
    let a = std::fs::read(&a).with_context(|| format!("cannot read {}", a.display()))?;
    let b = std::fs::read(&b).with_context(|| format!("cannot read {}", b.display()))?;
    let pair = "hello.wasm ↔ echo.wasm";

    // Baseline: the same swaps in a directory holding one component.
    eprintln!("  {SWAPS} swaps beside 1 component");
    let small = fx.plugin_dir("rest-small-plugins", &[fx.component("numbered")])?;
    let cache = Cache::Dir(fx.fresh_dir("rest-cache")?);
    let session = Session::start(&fx.toolhost("toolhost", &small, &cache)).await?;
    session
        .settled_tool_names(Duration::from_millis(500))
        .await?;
    let one = reload::swap_loop(fx, &session, "rest-small", &small, &a, &b, SWAPS).await?;
    session.stop().await;

    eprintln!("  {SWAPS} swaps beside {AT_SCALE} components, then {IDLE:?} idle");
    let (files, expected) = numbered(fx, "rest-sources", AT_SCALE)?;
    let large = fx.plugin_dir("rest-large-plugins", &files)?;
    let launch = fx.toolhost("toolhost", &large, &cache);
    // Fill the compile cache, so the swaps below measure reloading only.
    let filling = Session::start(&launch).await?;
    filling.wait_for_tools(&expected).await?;
    filling.stop().await;
    let session = Session::start(&launch).await?;
    session.wait_for_tools(&expected).await?;
    let many = reload::swap_loop(fx, &session, "rest-large", &large, &a, &b, SWAPS).await?;
    // Everything has settled (the swap loop waits after each swap): from
    // here on, nothing in the directory changes.
    let before = session.cpu_time()?;
    tokio::time::sleep(IDLE).await;
    let idle = session.cpu_time()?.saturating_sub(before);
    let names = session.tool_names().await?;
    session.stop().await;
    if !expected.is_subset(&names) {
        bail!("after the swaps, toolhost no longer lists every numbered tool");
    }

    let share = idle.as_secs_f64() / IDLE.as_secs_f64() * 100.0;
    Ok(vec![
        Row::figure(
            "9",
            format!(
                "hot reload in a directory of {AT_SCALE} components, rename → list_changed, {pair}, {SWAPS} swaps, compile cache warm: p50"
            ),
            stats::duration(many.p50()),
        )
        .against(
            format!("beside 1 component {}", stats::duration(one.p50())),
            stats::duration_ratio(many.p50(), one.p50()),
        ),
        Row::figure(
            "9",
            format!(
                "server CPU (user + system, /proc/PID/stat) over {} s idle after the last reload, {AT_SCALE} components watched",
                IDLE.as_secs()
            ),
            format!("{} ({share:.2} % of the time)", stats::duration(idle)),
        )
        .target(format!(
            "< 1 % ({}): {}",
            stats::duration(IDLE_TARGET),
            stats::verdict(idle < IDLE_TARGET)
        )),
    ])
}
