//! Measurement 16: what `[[policy.rules]]` (ADR 0034) cost a call, against
//! the same server without rules, interleaved in blocks as in
//! measurement 1.
//!
//! - a read-only call (`echo` over stdio) under 10 and under 100 rules
//!   that do not match it (each evaluated: a fifth of them hide rules, the
//!   rest deny rules reading the caller, the tool and the arguments);
//! - the same call under one `limit` rule whose counter is in Redis
//!   (`state.replay`) against one counted in-process.
//!
//! Measurement 20: what an `approve` rule (ADR 0038) costs the call it
//! holds: the same `echo` call answered `APPROVAL_PENDING` (its approval
//! found and reported, nothing run), with the approvals kept in-process and
//! in Redis, against the call allowed and run.

use std::time::{Duration, Instant};

use anyhow::Result;
use rmcp::service::{Peer, RoleClient};

use crate::Options;
use crate::calls::{checked, interleaved, sequential};
use crate::fixture::{Cache, ConfigChange, Fixture};
use crate::session::Session;
use crate::stats::{self, Samples};
use crate::table::{Row, percentile_rows};
use toolhost_test_infra::Redis;

/// `n` rules, none of which holds for `echo`.
pub(crate) fn rules(n: usize) -> String {
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
/// interleaved (also measurement 20's).
pub(crate) async fn echo_samples(
    fx: &Fixture,
    opts: &Options,
    servers: &[(&str, ConfigChange)],
) -> Result<Vec<Samples>> {
    let mut rounds = echo_rounds(fx, opts, servers, 1).await?;
    Ok(rounds.remove(0))
}

/// Echo sessions over stdio, one per `(label, change)`, started and warmed
/// up once, then measured in `rounds` rounds one after another, each of
/// `opts.calls` calls per server interleaved in blocks. Returns each
/// round's samples, one [`Samples`] per server (measurement 21 compares
/// the servers round by round).
pub(crate) async fn echo_rounds(
    fx: &Fixture,
    opts: &Options,
    servers: &[(&str, ConfigChange)],
    rounds: usize,
) -> Result<Vec<Vec<Samples>>> {
    let mut sessions = Vec::new();
    let mut holds = Vec::new();
    for (label, change) in servers {
        let config = fx.config_with(label, change)?;
        let plugins = fx.plugin_dir(&format!("{label}-plugins"), &[fx.component("echo")])?;
        let cache = Cache::Dir(fx.fresh_dir(&format!("{label}-cache"))?);
        let launch = fx.toolhost_with_config(label, &plugins, &cache, &config);
        let session = Session::start(&launch).await?;
        // A held call does not echo: it answers that it waits.
        let holds_calls = change.tables.contains("outcome = \"approve\"");
        let session = if holds_calls {
            held(session).await?
        } else {
            checked(session).await?
        };
        sessions.push(session);
        holds.push(holds_calls);
    }
    for (session, held) in sessions.iter().zip(&holds) {
        timed(session, *held, opts.warmup).await?;
    }
    let targets: Vec<(&Session, bool)> = sessions.iter().zip(holds).collect();
    let mut measured = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        measured.push(
            interleaved(&targets, opts.calls, |(session, held), n| {
                timed(session, *held, n)
            })
            .await?,
        );
    }
    for session in sessions {
        session.stop().await;
    }
    Ok(measured)
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

/// `session`, once its `echo` answers `APPROVAL_PENDING` (held by an
/// `approve` rule, nothing run).
async fn held(session: Session) -> Result<Session> {
    held_echo(&session.peer()).await?;
    Ok(session)
}

/// One `echo` call that must answer `APPROVAL_PENDING`.
async fn held_echo(peer: &Peer<RoleClient>) -> Result<()> {
    let result =
        crate::session::call_answered(peer, "echo", &crate::calls::echo_arguments()).await?;
    let code = result
        .structured_content
        .as_ref()
        .and_then(|v| v["issues"][0]["code"].as_str().map(str::to_string));
    if code.as_deref() != Some("APPROVAL_PENDING") {
        anyhow::bail!(
            "echo was not held for approval: {:?}",
            result.structured_content
        );
    }
    Ok(())
}

/// Times `n` sequential echo calls on `session`: held ones (each must
/// answer `APPROVAL_PENDING`) when `held` is set, else run ones.
async fn timed(session: &Session, held: bool, n: usize) -> Result<Vec<Duration>> {
    if !held {
        return sequential(&session.peer(), n).await;
    }
    let peer = session.peer();
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        held_echo(&peer).await?;
        times.push(start.elapsed());
    }
    Ok(times)
}

/// Measurement 20.
pub async fn approvals(fx: &Fixture, opts: &Options) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    let held = "[[policy.rules]]\nname = \"held\"\nwhen = 'tool.name == \"echo\"'\n\
                outcome = \"approve\"\napprove = { approver = 'true' }\n";
    let samples = echo_samples(
        fx,
        opts,
        &[
            ("approve-allowed", ConfigChange::default()),
            ("approve-local", ConfigChange::tables(held.to_string())),
        ],
    )
    .await?;
    let count = stats::count(samples[0].len() as u64);
    rows.extend(percentile_rows(
        "20",
        |p| format!("call held for approval (echo, stdio) {p}, store in-process: {count} calls"),
        &samples[1],
        "the call allowed and run",
        &samples[0],
    ));
    const HELD_REDIS: &str = "call held for approval, store in Redis";
    let redis = match Redis::start(None).await {
        Ok(redis) => redis,
        Err(why) => {
            rows.push(Row::skipped("20", HELD_REDIS, why));
            return Ok(rows);
        }
    };
    let samples = echo_samples(
        fx,
        opts,
        &[
            (
                "approve-redis",
                ConfigChange::tables(format!("[state]\nreplay = \"{}\"\n{held}", redis.url)),
            ),
            ("approve-local-2", ConfigChange::tables(held.to_string())),
        ],
    )
    .await?;
    drop(redis);
    let count = stats::count(samples[0].len() as u64);
    rows.extend(percentile_rows(
        "20",
        |p| format!("call held for approval (echo, stdio) {p}, store in Redis: {count} calls"),
        &samples[0],
        "store in-process",
        &samples[1],
    ));
    Ok(rows)
}
