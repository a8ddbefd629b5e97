//! Measurement 16: what `[[policy.rules]]` (ADR 0034) cost a call, against
//! the same server without rules, interleaved in blocks as in
//! measurement 1.
//!
//! - a read-only call (`echo` over stdio) under 10 and under 100 rules
//!   that do not match it (each evaluated: a fifth of them hide rules, the
//!   rest deny rules reading the caller, the tool and the arguments);
//! - the same call under one `limit` rule whose counter is in Redis
//!   (`state.replay`) against one counted in-process.

use anyhow::Result;

use crate::Options;
use crate::calls::{checked, interleaved, sequential};
use crate::fixture::{Cache, ConfigChange, Fixture};
use crate::session::Session;
use crate::stats::{self, Samples};
use crate::table::{Row, percentile_rows};
use toolhost_test_infra::Redis;

/// `n` rules, none of which holds for `echo`.
fn rules(n: usize) -> String {
    (0..n)
        .map(|i| {
            if i % 5 == 0 {
                format!(
                    "[[policy.rules]]\nname = \"hide-{i}\"\noutcome = \"hide\"\n\
                     when = 'plugin.name == \"other-{i}\" && identity.subject != \"root\"'\n"
                )
            } else {
                format!(
                    "[[policy.rules]]\nname = \"deny-{i}\"\noutcome = \"deny\"\n\
                     when = 'tool.name == \"other_{i}\" && size(args) > 0 && identity.source != \"jwt\"'\n"
                )
            }
        })
        .collect()
}

/// Echo sessions over stdio, one per `(label, change)`, measured
/// interleaved.
async fn echo_samples(
    fx: &Fixture,
    opts: &Options,
    servers: &[(&str, ConfigChange)],
) -> Result<Vec<Samples>> {
    let mut sessions = Vec::new();
    for (label, change) in servers {
        let config = fx.config_with(label, change)?;
        let plugins = fx.plugin_dir(&format!("{label}-plugins"), &[fx.component("echo")])?;
        let cache = Cache::Dir(fx.fresh_dir(&format!("{label}-cache"))?);
        let launch = fx.toolhost_with_config(label, &plugins, &cache, &config);
        sessions.push(checked(Session::start(&launch).await?).await?);
    }
    for session in &sessions {
        sequential(&session.peer(), opts.warmup).await?;
    }
    let samples = interleaved(&sessions, opts.calls, |session, n| async move {
        sequential(&session.peer(), n).await
    })
    .await?;
    for session in sessions {
        session.stop().await;
    }
    Ok(samples)
}

/// Measurement 16.
pub async fn policy_rules(fx: &Fixture, opts: &Options) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    let samples = echo_samples(
        fx,
        opts,
        &[
            ("rules-0", ConfigChange::default()),
            ("rules-10", ConfigChange::tables(rules(10))),
            ("rules-100", ConfigChange::tables(rules(100))),
        ],
    )
    .await?;
    let count = stats::count(samples[0].len() as u64);
    for (i, n) in [(1, 10), (2, 100)] {
        rows.extend(percentile_rows(
            "16",
            |p| format!("read-only call (echo, stdio) {p} under {n} rules: {count} calls"),
            &samples[i],
            "no rules",
            &samples[0],
        ));
    }

    const LIMITED: &str = "limited call, counter in Redis";
    let redis = match Redis::start(None).await {
        Ok(redis) => redis,
        Err(why) => {
            rows.push(Row::skipped("16", LIMITED, why));
            return Ok(rows);
        }
    };
    let limit = "[[policy.rules]]\nname = \"budget\"\noutcome = \"limit\"\n\
                 limit = { count = 1000000000, window_secs = 3600 }\n";
    let samples = echo_samples(
        fx,
        opts,
        &[
            (
                "limit-redis",
                ConfigChange::tables(format!("[state]\nreplay = \"{}\"\n{limit}", redis.url)),
            ),
            ("limit-local", ConfigChange::tables(limit.to_string())),
        ],
    )
    .await?;
    drop(redis);
    let count = stats::count(samples[0].len() as u64);
    rows.extend(percentile_rows(
        "16",
        |p| format!("limited call (echo, stdio) {p}, counter in Redis: {count} calls"),
        &samples[0],
        "in-process counter",
        &samples[1],
    ));
    Ok(rows)
}
