//! Measurements 1, 2 and 7 (latency half): what one call costs, and how many
//! calls a second one session carries.
//!
//! **Per-call latency.** The same `echo` tool behind three servers: toolhost
//! (the `echo` component alone in its plugin directory), `native-echo` (rmcp,
//! no wasm) and, when installed, Python FastMCP. All three are started, each
//! is checked once (the result must equal the input), warmed up, and then
//! timed in interleaved blocks (toolhost, native, FastMCP, toolhost, …) so
//! that a noisy moment on the machine lands on all of them alike. Each call
//! is timed from just before `tools/call` is sent to when its result is
//! back in the client, one call at a time. The servers' CPU time (each
//! thread's `/proc/PID/task/TID/schedstat`, in nanoseconds) before and
//! after the timed calls gives the CPU each spends per call, which is what
//! latency is made of once the machine is busy. FastMCP that is missing or
//! fails to start skips only its own rows (7), with the reason.
//!
//! **Throughput.** One session each for toolhost and native; `callers`
//! tasks send `tools/call` concurrently on clones of the session's peer
//! until a fixed total is done; calls per second = total ÷ wall time.
//!
//! **Over HTTP (10, 11).** The same `echo`, served over Streamable HTTP by
//! toolhost (`serve --http`) and by `native-echo --http` (rmcp's
//! `StreamableHttpService` under axum), with toolhost over stdio beside
//! them: per-call latency in interleaved blocks as above, then throughput
//! with 1, 8 and 64 clients, each its own session (its own HTTP connection
//! and `Mcp-Session-Id`) making one call at a time.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rmcp::service::{Peer, RoleClient};
use serde_json::{Value, json};

use crate::fixture::{Cache, Fixture};
use crate::session::{self, HttpServer, Launch, Session};
use crate::stats::{self, Samples};
use crate::table::Row;
use crate::{Options, Peers};

/// The arguments every echo call sends.
pub fn echo_arguments() -> Value {
    json!({ "message": "benchmark ping: the quick brown fox" })
}

/// Calls per timed block in the interleaved latency run.
pub(crate) const BLOCK: usize = 250;

/// Resident sizes seen along the way, for the memory rows' baselines.
#[derive(Debug, Default, Clone, Copy)]
pub struct Resident {
    /// `native-echo` after its calls, KiB.
    pub native_kib: Option<u64>,
    /// FastMCP after its calls, KiB.
    pub fastmcp_kib: Option<u64>,
}

/// toolhost serving only the `echo` component, from fresh directories.
fn echo_toolhost(fx: &Fixture, label: &str) -> Result<Launch> {
    let plugins = fx.plugin_dir(&format!("{label}-plugins"), &[fx.component("echo")])?;
    let cache = Cache::Dir(fx.fresh_dir(&format!("{label}-cache"))?);
    Ok(fx.toolhost("toolhost", &plugins, &cache))
}

/// Starts a server and checks that `echo` returns its input.
async fn start_checked(launch: &Launch) -> Result<Session> {
    checked(Session::start(launch).await?).await
}

/// Checks that `echo` on `session` returns its input.
pub(crate) async fn checked(session: Session) -> Result<Session> {
    let arguments = echo_arguments();
    let result = session::call(&session.peer(), "echo", &arguments)
        .await
        .with_context(|| format!("echo on {}", session.label))?;
    if result.structured_content.as_ref() != Some(&arguments) {
        bail!(
            "echo on {} returned {:?}, not its input",
            session.label,
            result.structured_content
        );
    }
    Ok(session)
}

/// Times `calls` calls on each of `targets` in interleaved blocks of
/// [`BLOCK`] (the first target's block, the second's, …, then again), so a
/// drift in the machine's speed touches every target alike. `time(target,
/// n)` times `n` calls on one target. Returns one [`Samples`] per target.
pub(crate) async fn interleaved<'a, T, F, Fut>(
    targets: &'a [T],
    calls: usize,
    mut time: F,
) -> Result<Vec<Samples>>
where
    F: FnMut(&'a T, usize) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<Duration>>>,
{
    let mut samples = vec![Samples::default(); targets.len()];
    let mut done = 0;
    while done < calls {
        let n = BLOCK.min(calls - done);
        for (target, samples) in targets.iter().zip(&mut samples) {
            samples.extend(time(target, n).await?);
        }
        done += n;
    }
    Ok(samples)
}

/// Times `n` sequential echo calls.
pub(crate) async fn sequential(peer: &Peer<RoleClient>, n: usize) -> Result<Vec<Duration>> {
    let arguments = echo_arguments();
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        session::call(peer, "echo", &arguments).await?;
        times.push(start.elapsed());
    }
    Ok(times)
}

/// Sends `total` echo calls from `callers` concurrent tasks on clones of
/// `peer`; returns the wall time.
pub async fn concurrent(peer: &Peer<RoleClient>, callers: usize, total: usize) -> Result<Duration> {
    concurrent_calls(peer, callers, total, "echo", echo_arguments()).await
}

/// Sends `total` calls of `tool` with `arguments` from `callers`
/// concurrent tasks on clones of `peer`; returns the wall time.
pub async fn concurrent_calls(
    peer: &Peer<RoleClient>,
    callers: usize,
    total: usize,
    tool: &'static str,
    arguments: Value,
) -> Result<Duration> {
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = Vec::with_capacity(callers);
    for _ in 0..callers {
        let (peer, next, arguments) = (peer.clone(), next.clone(), arguments.clone());
        tasks.push(tokio::spawn(async move {
            while next.fetch_add(1, Ordering::Relaxed) < total {
                session::call(&peer, tool, &arguments).await?;
            }
            anyhow::Ok(())
        }));
    }
    for task in tasks {
        task.await.context("a caller panicked")??;
    }
    Ok(start.elapsed())
}

/// Measurement 1 and the latency half of 7.
pub async fn latency(fx: &Fixture, opts: &Options, peers: &Peers) -> Result<(Vec<Row>, Resident)> {
    let mut servers = vec![
        start_checked(&echo_toolhost(fx, "latency")?).await?,
        start_checked(&fx.native_echo()).await?,
    ];
    // FastMCP is a comparison, not the subject: when it cannot be served,
    // its rows say why and the others are measured all the same.
    let fastmcp = match &peers.fastmcp {
        Ok(launch) => match start_checked(launch).await {
            Ok(session) => {
                servers.push(session);
                Ok(())
            }
            Err(e) => {
                eprintln!("  FastMCP did not start: {e:#}");
                Err(format!("FastMCP did not start: {e:#}"))
            }
        },
        Err(why) => Err(format!("FastMCP not available ({why})")),
    };
    for server in &servers {
        eprintln!("  warming up {} ({} calls)", server.label, opts.warmup);
        sequential(&server.peer(), opts.warmup).await?;
    }
    let cpu_before = servers
        .iter()
        .map(Session::cpu_time)
        .collect::<Result<Vec<_>>>()?;
    let samples = interleaved(&servers, opts.calls, |server, n| async move {
        sequential(&server.peer(), n).await
    })
    .await?;
    // CPU per call: what the server spent while the calls ran (it is idle
    // while the others are timed).
    let mut cpu = Vec::new();
    for (server, before) in servers.iter().zip(cpu_before) {
        let spent = server.cpu_time()?.saturating_sub(before);
        cpu.push(spent / opts.calls.max(1) as u32);
    }
    let resident = Resident {
        native_kib: servers[1].rss_kib().ok(),
        fastmcp_kib: servers.get(2).and_then(|s| s.rss_kib().ok()),
    };
    for server in servers {
        server.stop().await;
    }

    let (toolhost, native) = (&samples[0], &samples[1]);
    let n = stats::count(toolhost.len() as u64);
    let mut rows = Vec::new();
    for (name, p) in [("p50", 50.0), ("p99", 99.0)] {
        let (t, b) = (toolhost.percentile(p), native.percentile(p));
        let met = t.as_secs_f64() <= 1.5 * b.as_secs_f64();
        rows.push(
            Row::figure(
                "1",
                format!("per-call latency {name}: echo, {n} sequential calls"),
                stats::duration(t),
            )
            .against(
                format!("native rmcp {}", stats::duration(b)),
                stats::duration_ratio(t, b),
            )
            .target(format!("≤ 1.5× native: {}", stats::verdict(met))),
        );
    }
    rows.push(
        Row::figure(
            "1",
            "server CPU per call (user + system, all threads, schedstat ns)",
            stats::duration(cpu[0]),
        )
        .against(
            format!("native rmcp {}", stats::duration(cpu[1])),
            stats::duration_ratio(cpu[0], cpu[1]),
        ),
    );
    match fastmcp {
        Ok(()) => {
            let fast = &samples[2];
            for (name, p) in [("p50", 50.0), ("p99", 99.0)] {
                let (t, b) = (toolhost.percentile(p), fast.percentile(p));
                rows.push(
                    Row::figure(
                        "7",
                        format!("per-call latency {name} vs FastMCP: echo, {n} sequential calls"),
                        stats::duration(t),
                    )
                    .against(
                        format!("{} {}", peers.fastmcp_name, stats::duration(b)),
                        stats::duration_ratio(t, b),
                    ),
                );
            }
            rows.push(
                Row::figure(
                    "7",
                    "server CPU per call vs FastMCP (user + system, all threads)",
                    stats::duration(cpu[0]),
                )
                .against(
                    format!("{} {}", peers.fastmcp_name, stats::duration(cpu[2])),
                    stats::duration_ratio(cpu[0], cpu[2]),
                ),
            );
        }
        Err(why) => rows.push(Row::skipped("7", "per-call latency vs FastMCP", why)),
    }
    Ok((rows, resident))
}

/// A throughput row: `rates` are toolhost's and the baseline's calls per
/// second, the baseline named `baseline`.
pub(crate) fn throughput_row(id: &'static str, what: String, rates: &[f64], baseline: &str) -> Row {
    Row::figure(
        id,
        what,
        format!("{} calls/s", stats::count(rates[0].round() as u64)),
    )
    .against(
        format!(
            "{baseline} {} calls/s",
            stats::count(rates[1].round() as u64)
        ),
        stats::ratio(rates[0], rates[1]),
    )
}

/// Measurement 2: calls per second at each concurrency.
pub async fn throughput(fx: &Fixture, opts: &Options) -> Result<Vec<Row>> {
    let toolhost = start_checked(&echo_toolhost(fx, "throughput")?).await?;
    let native = start_checked(&fx.native_echo()).await?;
    let mut rows = Vec::new();
    for callers in [1usize, 8, 64] {
        let mut rates = Vec::new();
        for server in [&toolhost, &native] {
            let peer = server.peer();
            // Warm up at this concurrency (connections, pool slots, caches).
            concurrent(&peer, callers, opts.warmup.max(callers)).await?;
            let wall = concurrent(&peer, callers, opts.throughput_calls).await?;
            rates.push(opts.throughput_calls as f64 / wall.as_secs_f64());
        }
        rows.push(throughput_row(
            "2",
            format!(
                "throughput: {callers} concurrent caller{}, one session, {} echo calls",
                if callers == 1 { "" } else { "s" },
                stats::count(opts.throughput_calls as u64)
            ),
            &rates,
            "native rmcp",
        ));
    }
    toolhost.stop().await;
    native.stop().await;
    Ok(rows)
}

/// toolhost serving only the `echo` component over Streamable HTTP, from
/// fresh directories.
pub(crate) async fn echo_toolhost_http(fx: &Fixture, label: &str) -> Result<HttpServer> {
    let plugins = fx.plugin_dir(&format!("{label}-plugins"), &[fx.component("echo")])?;
    let cache = Cache::Dir(fx.fresh_dir(&format!("{label}-cache"))?);
    let mut launch = fx.toolhost_http("toolhost", &plugins, &cache);
    launch.label = "toolhost HTTP".into();
    HttpServer::start(&launch).await
}

/// Measurement 10: per-call latency over HTTP, against native rmcp over
/// HTTP and toolhost over stdio, interleaved as in measurement 1.
pub async fn http_latency(fx: &Fixture, opts: &Options) -> Result<Vec<Row>> {
    let toolhost_http = echo_toolhost_http(fx, "http-latency").await?;
    let native_http = HttpServer::start(&fx.native_echo_http()).await?;
    let sessions = vec![
        checked(toolhost_http.connect().await?).await?,
        checked(native_http.connect().await?).await?,
        start_checked(&echo_toolhost(fx, "stdio-latency")?).await?,
    ];
    for session in &sessions {
        eprintln!("  warming up {} ({} calls)", session.label, opts.warmup);
        sequential(&session.peer(), opts.warmup).await?;
    }
    let servers_cpu = |servers: [&HttpServer; 2]| -> Result<Vec<Duration>> {
        servers.iter().map(|s| s.cpu_time()).collect()
    };
    let cpu_before = servers_cpu([&toolhost_http, &native_http])?;
    let samples = interleaved(&sessions, opts.calls, |session, n| async move {
        sequential(&session.peer(), n).await
    })
    .await?;
    // The stdio server runs while the HTTP servers idle, so their CPU
    // difference is their own calls'.
    let cpu: Vec<Duration> = servers_cpu([&toolhost_http, &native_http])?
        .into_iter()
        .zip(cpu_before)
        .map(|(after, before)| after.saturating_sub(before) / opts.calls.max(1) as u32)
        .collect();
    for session in sessions {
        session.stop().await;
    }
    drop((toolhost_http, native_http));

    let (http, native, stdio) = (&samples[0], &samples[1], &samples[2]);
    let n = stats::count(http.len() as u64);
    let mut rows = Vec::new();
    for (name, p) in [("p50", 50.0), ("p99", 99.0)] {
        let (t, b) = (http.percentile(p), native.percentile(p));
        let met = t.as_secs_f64() <= 1.5 * b.as_secs_f64();
        rows.push(
            Row::figure(
                "10",
                format!(
                    "per-call latency {name} over HTTP: echo, {n} sequential calls, one session"
                ),
                stats::duration(t),
            )
            .against(
                format!("native rmcp HTTP {}", stats::duration(b)),
                stats::duration_ratio(t, b),
            )
            .target(format!("≤ 1.5× native: {}", stats::verdict(met))),
        );
    }
    for (name, p) in [("p50", 50.0), ("p99", 99.0)] {
        let (t, b) = (http.percentile(p), stdio.percentile(p));
        rows.push(
            Row::figure(
                "10",
                format!("per-call latency {name}, HTTP vs stdio: echo, {n} sequential calls"),
                stats::duration(t),
            )
            .against(
                format!("toolhost stdio {}", stats::duration(b)),
                stats::duration_ratio(t, b),
            ),
        );
    }
    rows.push(
        Row::figure(
            "10",
            "server CPU per call over HTTP (user + system, all threads, schedstat ns)",
            stats::duration(cpu[0]),
        )
        .against(
            format!("native rmcp HTTP {}", stats::duration(cpu[1])),
            stats::duration_ratio(cpu[0], cpu[1]),
        ),
    );
    Ok(rows)
}

/// Sends `total` echo calls from one task per session, each making one
/// call at a time; returns the wall time.
pub(crate) async fn from_sessions(sessions: &[Session], total: usize) -> Result<Duration> {
    Ok(timed_from_sessions(sessions, total).await?.0)
}

/// [`from_sessions`], also returning every call's latency.
pub(crate) async fn timed_from_sessions(
    sessions: &[Session],
    total: usize,
) -> Result<(Duration, Samples)> {
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = Vec::with_capacity(sessions.len());
    for client in sessions {
        let peer = client.peer();
        let next = next.clone();
        tasks.push(tokio::spawn(async move {
            let arguments = echo_arguments();
            let mut took = Vec::new();
            while next.fetch_add(1, Ordering::Relaxed) < total {
                let sent = Instant::now();
                session::call(&peer, "echo", &arguments).await?;
                took.push(sent.elapsed());
            }
            anyhow::Ok(took)
        }));
    }
    let mut samples = Samples::default();
    for task in tasks {
        samples.extend(task.await.context("a client panicked")??);
    }
    Ok((start.elapsed(), samples))
}

/// Measurement 11: calls per second over HTTP with 1, 8 and 64 clients,
/// each its own session, against native rmcp over HTTP.
pub async fn http_throughput(fx: &Fixture, opts: &Options) -> Result<Vec<Row>> {
    let toolhost = echo_toolhost_http(fx, "http-throughput").await?;
    let native = HttpServer::start(&fx.native_echo_http()).await?;
    let mut rows = Vec::new();
    for clients in [1usize, 8, 64] {
        let mut rates = Vec::new();
        for server in [&toolhost, &native] {
            let mut sessions = Vec::with_capacity(clients);
            for _ in 0..clients {
                sessions.push(checked(server.connect().await?).await?);
            }
            // Warm up at this concurrency (connections, pool slots, caches).
            from_sessions(&sessions, opts.warmup.max(clients)).await?;
            let wall = from_sessions(&sessions, opts.throughput_calls).await?;
            rates.push(opts.throughput_calls as f64 / wall.as_secs_f64());
            for session in sessions {
                session.stop().await;
            }
        }
        rows.push(throughput_row(
            "11",
            format!(
                "throughput over HTTP: {clients} concurrent client{} (a session each), {} echo calls",
                if clients == 1 { "" } else { "s" },
                stats::count(opts.throughput_calls as u64)
            ),
            &rates,
            "native rmcp HTTP",
        ));
    }
    Ok(rows)
}
