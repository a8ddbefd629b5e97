//! Measurement 22: what the cross-cutting layers cost under load. One
//! `echo` server over Streamable HTTP with nothing on, one each with the
//! policy rules, the audit trail and the Prometheus metrics alone, and one
//! with all three; 1, 8, 64 and 256 clients (a session each, one call at a
//! time), a warm-up, then the same number of calls shared among them.
//! Calls per second and the p99 of one call, each server against the one
//! with nothing on, so an operator can read the price of each layer.

use anyhow::Result;

use crate::Options;
use crate::calls::{checked, timed_from_sessions};
use crate::fixture::{Cache, ConfigChange, Fixture};
use crate::session::HttpServer;
use crate::stats;
use crate::table::Row;

/// The concurrencies measured.
const CLIENTS: [usize; 4] = [1, 8, 64, 256];

/// The servers, by what is on: a label and the config change.
fn servers(fx: &Fixture) -> Vec<(&'static str, ConfigChange)> {
    let audit = |label: &str| {
        let trail = fx.scratch.join(format!("scaling-{label}.jsonl"));
        format!("audit = {:?}\n", trail.display().to_string())
    };
    let metrics = "metrics = \"127.0.0.1:0\"\n".to_string();
    // Ten rules evaluated on every call (as in measurement 16) and a
    // budget no call reaches, counted in process.
    let rules = format!(
        "{}[[policy.rules]]\nname = \"budget\"\noutcome = \"limit\"\n\
         limit = {{ count = 1000000000, window_secs = 3600 }}\n",
        crate::policy::rules(10)
    );
    vec![
        ("nothing on", ConfigChange::default()),
        ("policy", ConfigChange::tables(rules.clone())),
        ("audit", ConfigChange::host(audit("audit"))),
        ("metrics", ConfigChange::host(metrics.clone())),
        (
            "policy, audit and metrics",
            ConfigChange {
                host_keys: format!("{}{metrics}", audit("all")),
                tables: rules,
            },
        ),
    ]
}

/// Measurement 22.
pub async fn scaling(fx: &Fixture, opts: &Options) -> Result<Vec<Row>> {
    let plugins = fx.plugin_dir("scaling-plugins", &[fx.component("echo")])?;
    let mut started = Vec::new();
    for (label, change) in servers(fx) {
        let config = fx.config_with(
            &format!("scaling-{}", label.replace([' ', ','], "-")),
            &change,
        )?;
        let cache = Cache::Dir(fx.fresh_dir(&format!("scaling-cache-{}", started.len()))?);
        let mut launch = fx
            .toolhost_with_config(label, &plugins, &cache, &config)
            .arg("--http")
            .arg("127.0.0.1:0");
        launch.label = format!("toolhost HTTP, {label}");
        started.push((label, HttpServer::start(&launch).await?));
    }
    let calls = opts.throughput_calls;
    let mut rows = Vec::new();
    for clients in CLIENTS {
        // (calls per second, p99) per server, in the order started.
        let mut figures = Vec::new();
        for (_, server) in &started {
            let mut sessions = Vec::with_capacity(clients);
            for _ in 0..clients {
                sessions.push(checked(server.connect().await?).await?);
            }
            timed_from_sessions(&sessions, opts.warmup.max(clients)).await?;
            let (wall, samples) = timed_from_sessions(&sessions, calls).await?;
            figures.push((calls as f64 / wall.as_secs_f64(), samples.percentile(99.0)));
            for session in sessions {
                session.stop().await;
            }
        }
        let (base_rate, base_p99) = figures[0];
        let each = if clients == 1 { "" } else { "s" };
        for ((label, _), (rate, p99)) in started.iter().zip(&figures).skip(1) {
            rows.push(
                Row::figure(
                    "22",
                    format!(
                        "scaling over HTTP, {label} on: {clients} client{each}, calls/s ({} echo calls)",
                        stats::count(calls as u64)
                    ),
                    format!("{} calls/s", stats::count(*rate as u64)),
                )
                .against(
                    format!("nothing on {} calls/s", stats::count(base_rate as u64)),
                    stats::ratio(*rate, base_rate),
                ),
            );
            rows.push(
                Row::figure(
                    "22",
                    format!("scaling over HTTP, {label} on: {clients} client{each}, p99 of a call"),
                    stats::duration(*p99),
                )
                .against(
                    format!("nothing on {}", stats::duration(base_p99)),
                    stats::duration_ratio(*p99, base_p99),
                ),
            );
        }
    }
    for (_, server) in started {
        drop(server);
    }
    Ok(rows)
}
