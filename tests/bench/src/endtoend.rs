//! Measurement 6: a real tool end to end.
//!
//! `list_orders` (no arguments: every order, walking pages) through toolhost
//! against the StatusPro sandbox, against the same upstream requests made
//! directly with reqwest. The direct requests are not guessed: the harness
//! makes one `list_orders` call, reads from the sandbox's request log exactly
//! which GETs the tool sent (path and query), and replays those, with the
//! bearer key, parsing each body as JSON as the tool does. Both sides keep
//! their connections open between calls. Calls alternate in blocks, one at a
//! time.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::Options;
use crate::fixture::{Cache, Fixture};
use crate::session::{self, Session};
use crate::stats::{self, Samples};
use crate::table::Row;

/// Calls per timed block.
const BLOCK: usize = 50;

/// Untimed calls on each side first.
const WARMUP: usize = 20;

/// Measurement 6.
pub async fn list_orders(fx: &Fixture, opts: &Options) -> Result<Vec<Row>> {
    let what = "end to end: list_orders through toolhost vs the same GETs with reqwest";
    if let Some(why) = fx.statuspro_missing() {
        return Ok(vec![Row::skipped("6", what, why)]);
    }
    let plugins = fx.plugin_dir("e2e-plugins", &fx.statuspro)?;
    let cache = Cache::Dir(fx.fresh_dir("e2e-cache")?);
    let session = Session::start(&fx.toolhost("toolhost", &plugins, &cache)).await?;
    let peer = session.peer();
    let arguments = json!({});

    fx.sandbox.clear_requests();
    let first = session::call(&peer, "list_orders", &arguments).await?;
    let sent = fx.sandbox.requests();
    if sent.is_empty() {
        bail!("list_orders sent no request to the sandbox");
    }
    if let Some(r) = sent.iter().find(|r| r.method != "GET") {
        bail!(
            "list_orders sent {} {}; the baseline replays GETs only",
            r.method,
            r.path
        );
    }
    let urls: Vec<String> = sent
        .iter()
        .map(|r| {
            let query = r
                .query
                .as_ref()
                .map(|q| format!("?{q}"))
                .unwrap_or_default();
            format!("http://{}{}{query}", fx.sandbox.addr(), r.path)
        })
        .collect();
    let orders = count_orders(first.structured_content.as_ref());

    let http = reqwest::Client::builder()
        .no_proxy()
        .build()
        .context("cannot build the HTTP client")?;
    let key = fx.sandbox.api_key().to_string();
    let direct = || async {
        for url in &urls {
            let body: Value = http
                .get(url)
                .bearer_auth(&key)
                .send()
                .await
                .with_context(|| format!("GET {url}"))?
                .error_for_status()
                .with_context(|| format!("GET {url}"))?
                .json()
                .await
                .with_context(|| format!("GET {url}: the body is not JSON"))?;
            std::hint::black_box(body);
        }
        anyhow::Ok(())
    };

    for _ in 0..WARMUP {
        session::call(&peer, "list_orders", &arguments).await?;
        direct().await?;
    }
    let (mut through, mut straight) = (Samples::default(), Samples::default());
    let mut done = 0;
    while done < opts.e2e_calls {
        let n = BLOCK.min(opts.e2e_calls - done);
        let mut times = Vec::with_capacity(n);
        for _ in 0..n {
            let start = Instant::now();
            session::call(&peer, "list_orders", &arguments).await?;
            times.push(start.elapsed());
        }
        through.extend(times);
        let mut times: Vec<Duration> = Vec::with_capacity(n);
        for _ in 0..n {
            let start = Instant::now();
            direct().await?;
            times.push(start.elapsed());
        }
        straight.extend(times);
        done += n;
    }
    session.stop().await;
    fx.sandbox.clear_requests();

    let detail = format!(
        "{} GET{} per call{}, {} sequential calls",
        urls.len(),
        if urls.len() == 1 { "" } else { "s" },
        orders.map(|n| format!(", {n} orders")).unwrap_or_default(),
        stats::count(through.len() as u64)
    );
    Ok(["p50", "p99"]
        .into_iter()
        .zip([50.0, 99.0])
        .map(|(name, p)| {
            let (t, b) = (through.percentile(p), straight.percentile(p));
            Row::figure(
                "6",
                format!("{what} ({detail}): {name}"),
                stats::duration(t),
            )
            .against(
                format!("direct reqwest {}", stats::duration(b)),
                stats::duration_ratio(t, b),
            )
        })
        .collect())
}

/// The number of orders in a `list_orders` result: the length of its first
/// array-valued field, if it has one.
fn count_orders(result: Option<&Value>) -> Option<usize> {
    let object = result?.as_object()?;
    object.values().find_map(|v| v.as_array().map(Vec::len))
}
