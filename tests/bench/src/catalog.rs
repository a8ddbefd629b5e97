//! Measurement 17: what a model pays for a 1,000-tool catalog (ADR 0040),
//! and how well discovery finds what it needs.
//!
//! The catalog: 100 copies of the `catalog` component, each with its own
//! domain (`[plugins.cat_NN.config] domain = "NN"`), 1,000 distinct tools,
//! compiled once. One server over stdio per surface, each measured alone:
//!
//! - `tools/list` of the whole catalog, of a profile of 30 tools (three
//!   domains picked by a `select` condition, evaluated for every tool on
//!   every list), and of a discovery profile (three meta-tools): the
//!   answer's bytes and the p50 and p99 of its latency;
//! - `find_tools` over the 1,000 tools: p50 and p99;
//! - retrieval quality over the fixed queries of
//!   `tests/components/catalog/src/queries.rs`: recall@5 (the intended tool
//!   among the first five) and MRR (1/rank of the intended tool among the
//!   first 20, 0 past them); the target is recall@5 ≥ 0.9.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rmcp::model::CallToolRequestParams;
use serde_json::json;

use crate::Options;
use crate::fixture::{Cache, ConfigChange, Fixture};
use crate::session::Session;
use crate::stats::{self, Samples};
use crate::table::Row;

#[path = "../../components/catalog/src/queries.rs"]
mod queries;

/// `tools/list` requests timed per surface.
const LISTS: usize = 200;
/// Times each query is sent for the `find_tools` latency.
const FIND_ROUNDS: usize = 10;

/// The config tables of the catalog: its 100 blocks and two profiles.
fn catalog_tables() -> String {
    let mut tables = String::from(
        "[[profiles]]\nname = \"support\"\n\
         select = 'plugin.name in [\"cat_09\", \"cat_40\", \"cat_49\"]'\n\n\
         [[profiles]]\nname = \"find\"\nselect = 'true'\ndiscovery = true\n\n",
    );
    for i in 0..100 {
        tables.push_str(&format!("[plugins.cat_{i:02}.config]\ndomain = \"{i}\"\n"));
    }
    tables
}

/// A server of the catalog through `profile` (none: the whole catalog).
async fn server(fx: &Fixture, plugins: &std::path::Path, profile: Option<&str>) -> Result<Session> {
    let label = format!("catalog-{}", profile.unwrap_or("all"));
    let config = fx.config_with(&label, &ConfigChange::tables(catalog_tables()))?;
    let cache = Cache::Dir(fx.fresh_dir(&format!("{label}-cache"))?);
    let mut launch = fx.toolhost_with_config(&label, plugins, &cache, &config);
    if let Some(profile) = profile {
        launch = launch.arg("--profile").arg(profile);
    }
    Session::start(&launch).await
}

/// The bytes of one `tools/list` answer and the latencies of [`LISTS`].
async fn lists(session: &Session) -> Result<(usize, usize, Samples)> {
    let peer = session.peer();
    let first = peer.list_tools(None).await?;
    let bytes = serde_json::to_vec(&first)?.len();
    let mut samples = Samples::default();
    for _ in 0..LISTS {
        let started = Instant::now();
        let answer = peer.list_tools(None).await?;
        samples.extend([started.elapsed()]);
        if answer.tools.len() != first.tools.len() {
            bail!("the list changed while measured");
        }
    }
    Ok((first.tools.len(), bytes, samples))
}

/// One `find_tools` call: the names found, best first.
async fn find(session: &Session, query: &str, limit: u64) -> Result<Vec<String>> {
    let arguments = json!({"query": query, "limit": limit});
    let answer = session
        .peer()
        .call_tool(
            CallToolRequestParams::new("find_tools")
                .with_arguments(arguments.as_object().cloned().unwrap_or_default()),
        )
        .await?;
    let found = answer
        .structured_content
        .context("find_tools answers with structured content")?;
    Ok(found["tools"]
        .as_array()
        .context("a tools list")?
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect())
}

/// Measurement 17.
pub async fn catalog(fx: &Fixture, _opts: &Options) -> Result<Vec<Row>> {
    let copies: Vec<std::path::PathBuf> = Vec::new();
    let plugins = fx.plugin_dir("catalog-plugins", &copies)?;
    let component = fx.component("catalog");
    for i in 0..100 {
        std::fs::copy(&component, plugins.join(format!("cat_{i:02}.wasm")))
            .with_context(|| format!("cannot copy {}", component.display()))?;
    }
    let mut rows = Vec::new();
    let mut full: Option<(usize, Duration)> = None;
    for (profile, what) in [
        (None, "whole catalog"),
        (Some("support"), "profile of 3 domains"),
        (Some("find"), "discovery profile"),
    ] {
        let session = server(fx, &plugins, profile).await?;
        let (tools, bytes, samples) = lists(&session).await?;
        let p50 = samples.p50();
        let (baseline, ratio) = match full {
            None => ("—".to_string(), "—".to_string()),
            Some((full_bytes, full_p50)) => (
                format!(
                    "whole: {} B, p50 {}",
                    stats::count(full_bytes as u64),
                    stats::duration(full_p50)
                ),
                format!(
                    "{} of the bytes",
                    stats::ratio(bytes as f64, full_bytes as f64)
                ),
            ),
        };
        rows.push(
            Row::figure(
                "17",
                format!(
                    "tools/list, {what} ({tools} tools listed of 1,000): bytes; p50, p99 of {LISTS}"
                ),
                format!(
                    "{} B; {}, {}",
                    stats::count(bytes as u64),
                    stats::duration(p50),
                    stats::duration(samples.percentile(99.0))
                ),
            )
            .against(baseline, ratio),
        );
        if full.is_none() {
            full = Some((bytes, p50));
        }
        if profile == Some("find") {
            rows.extend(discovery(&session).await?);
        }
        session.stop().await;
    }
    Ok(rows)
}

/// The `find_tools` latency and the retrieval quality, on the discovery
/// profile's `session`.
async fn discovery(session: &Session) -> Result<Vec<Row>> {
    let mut samples = Samples::default();
    for _ in 0..FIND_ROUNDS {
        for (query, _) in queries::QUERIES {
            let started = Instant::now();
            find(session, query, 5).await?;
            samples.extend([started.elapsed()]);
        }
    }
    let mut in_five = 0usize;
    let mut reciprocal = 0.0;
    let mut missed = Vec::new();
    for (query, expected) in queries::QUERIES {
        let found = find(session, query, 20).await?;
        match found.iter().position(|n| n == expected) {
            Some(rank) => {
                reciprocal += 1.0 / (rank + 1) as f64;
                if rank < 5 {
                    in_five += 1;
                } else {
                    missed.push(*expected);
                }
            }
            None => missed.push(*expected),
        }
    }
    let n = queries::QUERIES.len();
    let recall = in_five as f64 / n as f64;
    let mrr = reciprocal / n as f64;
    if !missed.is_empty() {
        eprintln!("  not among the first five: {}", missed.join(", "));
    }
    Ok(vec![
        Row::figure(
            "17",
            format!("find_tools over 1,000 tools: p50, p99 of {}", samples.len()),
            format!(
                "{}, {}",
                stats::duration(samples.p50()),
                stats::duration(samples.percentile(99.0))
            ),
        ),
        Row::figure(
            "17",
            format!("retrieval over 1,000 tools, {n} fixed queries: recall@5; MRR (first 20)"),
            format!("{recall:.3}; {mrr:.3}"),
        )
        .target(format!("recall@5 ≥ 0.9: {}", stats::verdict(recall >= 0.9))),
    ])
}
