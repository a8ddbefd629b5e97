//! Measurement 15: what the audit trail (`[host] audit`, ADR 0019) costs a
//! call, against the same server without it, interleaved in blocks as in
//! measurement 1.
//!
//! - a read-only call (`echo` over stdio): one record appended before the
//!   answer;
//! - a confirmed 2026-07-28 `add_order_comment` over HTTP (both rounds): an
//!   `intent` record on disk (`fdatasync`) before the `POST`, then the
//!   call's record.
//!
//! The trail is written to the scratch directory, on whatever file system
//! holds it: on a disk slower to sync, the second figure grows.

use anyhow::Result;

use crate::Options;
use crate::calls::{checked, interleaved, sequential};
use crate::fixture::{Cache, ConfigChange, Fixture};
use crate::replicas::confirmed_calls;
use crate::session::Session;
use crate::stats::{self, Samples};
use crate::table::{Row, percentile_rows};

/// `[host]` keys that turn the trail on, writing to `scratch/LABEL.jsonl`.
fn audit_on(fx: &Fixture, label: &str) -> ConfigChange {
    let trail = fx.scratch.join(format!("{label}.jsonl"));
    ConfigChange::host(format!("audit = {:?}\n", trail.display().to_string()))
}

/// Measurement 15.
pub async fn audit_trail(fx: &Fixture, opts: &Options) -> Result<Vec<Row>> {
    let mut rows = Vec::new();

    let mut sessions = Vec::new();
    for (label, change) in [
        ("audit-echo-on", audit_on(fx, "audit-echo-on")),
        ("audit-echo-off", ConfigChange::default()),
    ] {
        let config = fx.config_with(label, &change)?;
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
    rows.extend(ratio_rows("read-only call (echo, stdio)", &samples));

    if let Some(why) = fx.statuspro_missing() {
        rows.push(Row::skipped("15", "audit trail, confirmed call", why));
        return Ok(rows);
    }
    let samples = confirmed_calls(
        fx,
        opts,
        &[
            ("audit-confirmed-on", audit_on(fx, "audit-confirmed-on")),
            ("audit-confirmed-off", ConfigChange::default()),
        ],
    )
    .await?;
    rows.extend(ratio_rows("confirmed call (both rounds, HTTP)", &samples));
    Ok(rows)
}

/// p50 and p99 of `samples[0]` (trail on) against `samples[1]` (off).
fn ratio_rows(what: &str, samples: &[Samples]) -> Vec<Row> {
    let count = stats::count(samples[0].len() as u64);
    percentile_rows(
        "15",
        |p| format!("{what} {p} with the audit trail: {count} calls"),
        &samples[0],
        "without",
        &samples[1],
    )
}
