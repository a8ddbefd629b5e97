//! Measurement 4: hot-reload latency.
//!
//! toolhost serves a plugin directory holding `echo.wasm`, watched. Each swap
//! writes a component to a staging directory beside it (same file system,
//! not watched), then renames it over `swap.wasm` in the plugin directory,
//! the write-then-rename build tools use. The clock runs from just before the
//! rename to the moment the client receives
//! `notifications/tools/list_changed`. Swaps alternate between two different
//! components (a StatusPro one and `hello`), so every swap is a real change;
//! after each, `tools/list` must differ from before, and the harness waits a
//! moment so that swaps do not overlap. The first two swaps are not timed
//! (the slot starts empty).
//!
//! Two runs: with `--no-cache`, every swap compiles the component, as a new
//! build does; with a compile cache, the two components' compiled forms
//! are found on disk after the first swaps.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::Options;
use crate::fixture::{Cache, Fixture};
use crate::session::Session;
use crate::stats::{self, Samples};
use crate::table::Row;

/// The target for a StatusPro component (issue 5).
const TARGET_P50: Duration = Duration::from_millis(300);

/// Swaps before timing starts.
const UNTIMED: usize = 2;

/// Pause after each swap, so the next one starts on a quiet watcher.
const SETTLE: Duration = Duration::from_millis(200);

/// Measurement 4.
pub async fn hot_reload(fx: &Fixture, opts: &Options) -> Result<Vec<Row>> {
    let statuspro = fx
        .statuspro
        .iter()
        .find(|p| p.ends_with("statuspro_list_orders.wasm"))
        .or_else(|| fx.statuspro.first());
    let (a, b, note) = match statuspro {
        Some(sp) => (sp.clone(), fx.component("hello"), String::new()),
        None => (
            fx.component("hello"),
            fx.component("misbehaving"),
            "; stand-in pair, statuspro_*.wasm missing".to_string(),
        ),
    };
    let pair = format!("{} ↔ {}", file_name(&a), file_name(&b));
    let a = std::fs::read(&a).with_context(|| format!("cannot read {}", a.display()))?;
    let b = std::fs::read(&b).with_context(|| format!("cannot read {}", b.display()))?;

    let mut modes = Vec::new();
    if fx.flags.no_cache {
        modes.push(("each swap compiles (--no-cache)", Cache::Off));
    }
    modes.push((
        "compile cache warm",
        Cache::Dir(fx.fresh_dir("reload-cache")?),
    ));

    let mut rows = Vec::new();
    for (i, (mode, cache)) in modes.iter().enumerate() {
        eprintln!("  {} swaps, {mode}", opts.swaps);
        let samples = swaps(fx, &format!("reload-{i}"), &a, &b, cache, opts.swaps).await?;
        let what = format!(
            "hot reload, rename → list_changed, {pair}, {} swaps, {mode}{note}",
            opts.swaps
        );
        let p50 = samples.p50();
        rows.push(
            Row::figure("4", format!("{what}: p50"), stats::duration(p50)).target(format!(
                "p50 < 300 ms: {}",
                stats::verdict(p50 < TARGET_P50)
            )),
        );
        rows.push(Row::figure(
            "4",
            format!("{what}: p95"),
            stats::duration(samples.percentile(95.0)),
        ));
    }
    Ok(rows)
}

/// Runs `n` timed swaps (after [`UNTIMED`] untimed ones) on a fresh host.
async fn swaps(
    fx: &Fixture,
    label: &str,
    a: &[u8],
    b: &[u8],
    cache: &Cache,
    n: usize,
) -> Result<Samples> {
    let plugins = fx.plugin_dir(&format!("{label}-plugins"), &[fx.component("echo")])?;
    let session = Session::start(&fx.toolhost("toolhost", &plugins, cache)).await?;
    // Let the watcher start and any start-up notification pass.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let samples = swap_loop(fx, &session, label, &plugins, a, b, n).await?;
    session.stop().await;
    Ok(samples)
}

/// Runs `n` timed swaps (after [`UNTIMED`] untimed ones) on `session`,
/// which serves `plugins`; returns the times from rename to
/// `notifications/tools/list_changed`.
pub async fn swap_loop(
    fx: &Fixture,
    session: &Session,
    label: &str,
    plugins: &Path,
    a: &[u8],
    b: &[u8],
    n: usize,
) -> Result<Samples> {
    let staging = fx.fresh_dir(&format!("{label}-staging"))?;
    let staged = staging.join("swap.wasm");
    let slot = plugins.join("swap.wasm");
    let mut previous = session.tool_names().await?;
    let mut samples = Samples::default();
    for i in 0..UNTIMED + n {
        let bytes = if i % 2 == 0 { a } else { b };
        std::fs::write(&staged, bytes)
            .with_context(|| format!("cannot write {}", staged.display()))?;
        let mut changes = session.list_changed.clone();
        let before = changes.borrow_and_update().count;
        let start = Instant::now();
        std::fs::rename(&staged, &slot)
            .with_context(|| format!("cannot rename into {}", slot.display()))?;
        let arrived = tokio::time::timeout(Duration::from_secs(30), async {
            changes.wait_for(|c| c.count > before).await.map(|c| c.last)
        })
        .await;
        let at = match arrived {
            Ok(Ok(Some(at))) => at,
            _ => bail!(
                "swap {i}: no notifications/tools/list_changed within 30 s; toolhost's stderr ends with:\n{}",
                session.stderr_tail()
            ),
        };
        let names = session.tool_names().await?;
        if names == previous {
            bail!("swap {i}: notified, but tools/list did not change");
        }
        previous = names;
        if i >= UNTIMED {
            samples.extend([at.saturating_duration_since(start)]);
        }
        tokio::time::sleep(SETTLE).await;
    }
    Ok(samples)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
