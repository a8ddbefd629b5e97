//! Measurements 12 to 14: replicas behind a load balancer and the shared
//! replay store, with the HAProxy and Redis of the end-to-end tests
//! (`toolhost-test-infra`, Debian's packages) and the HAProxy configuration
//! docs/scaling.md gives operators.
//!
//! - 12: per-call latency of one replica through HAProxy against the same
//!   replica reached directly, interleaved in blocks as in measurement 1.
//! - 13: throughput of 64 clients through HAProxy with 1, 2 and 3 replicas
//!   (legacy sessions, so the balancer sticks on `Mcp-Session-Id`), against
//!   one replica through the same balancer.
//! - 14: a confirmed 2026-07-28 call (`add_order_comment`: the question,
//!   then the retry with the answer and the sealed state) against a replica
//!   whose spent states live in Redis, and one that keeps them in-process.
//!
//! Without `haproxy` or `redis-server` the rows are skipped with the reason.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, ElicitResult,
    ElicitationAction, ElicitationCapability, Implementation, InputResponses, ProtocolVersion,
};
use rmcp::service::{ClientLifecycleMode, Peer, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ClientServiceExt};
use serde_json::{Value, json};
use toolhost_test_infra::{Haproxy, Redis, Stickiness};

use crate::Options;
use crate::calls::{
    BLOCK, checked, echo_toolhost_http, from_sessions, interleaved, sequential, throughput_row,
};
use crate::fixture::{Cache, ConfigChange, Fixture};
use crate::session::{HttpServer, PATIENCE};
use crate::stats::{self, Samples};
use crate::table::{Row, percentile_rows};

/// The port of a server's logged endpoint `http://127.0.0.1:PORT/mcp`.
fn port_of(server: &HttpServer) -> Result<u16> {
    server
        .url
        .trim_start_matches("http://")
        .split(['/', ':'])
        .nth(1)
        .and_then(|p| p.parse().ok())
        .with_context(|| format!("no port in {}", server.url))
}

/// HAProxy in front of `servers`, or the reason it cannot run.
async fn balancer(
    servers: &[&HttpServer],
    stickiness: Stickiness,
) -> Result<Result<Haproxy, String>> {
    let ports = servers
        .iter()
        .map(|s| port_of(s))
        .collect::<Result<Vec<u16>>>()?;
    Ok(Haproxy::start(&ports, stickiness).await)
}

/// Measurement 12: per-call latency through HAProxy vs direct.
pub async fn through_balancer(fx: &Fixture, opts: &Options) -> Result<Vec<Row>> {
    let replica = echo_toolhost_http(fx, "lb-latency").await?;
    let lb = match balancer(&[&replica], Stickiness::SessionId).await? {
        Ok(lb) => lb,
        Err(why) => return Ok(vec![Row::skipped("12", "latency through HAProxy", why)]),
    };
    let sessions = [
        checked(replica.connect_via(&lb.url).await?).await?,
        checked(replica.connect().await?).await?,
    ];
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
    lb.stop().await;
    let (through, direct) = (&samples[0], &samples[1]);
    let n = stats::count(through.len() as u64);
    Ok(percentile_rows(
        "12",
        |p| format!("per-call latency {p} through HAProxy: echo, {n} sequential calls"),
        through,
        "direct",
        direct,
    ))
}

/// Measurement 13: 64 clients through HAProxy with 1, 2 and 3 replicas.
pub async fn replica_throughput(fx: &Fixture, opts: &Options) -> Result<Vec<Row>> {
    const CLIENTS: usize = 64;
    let mut replicas = Vec::new();
    for i in 0..3 {
        replicas.push(echo_toolhost_http(fx, &format!("lb-throughput-{i}")).await?);
    }
    let mut rates = Vec::new();
    for n in 1..=3 {
        let behind: Vec<&HttpServer> = replicas.iter().take(n).collect();
        let lb = match balancer(&behind, Stickiness::SessionId).await? {
            Ok(lb) => lb,
            Err(why) => return Ok(vec![Row::skipped("13", "throughput with replicas", why)]),
        };
        let mut sessions = Vec::with_capacity(CLIENTS);
        for _ in 0..CLIENTS {
            sessions.push(checked(replicas[0].connect_via(&lb.url).await?).await?);
        }
        from_sessions(&sessions, opts.warmup.max(CLIENTS)).await?;
        let wall = from_sessions(&sessions, opts.throughput_calls).await?;
        rates.push(opts.throughput_calls as f64 / wall.as_secs_f64());
        for session in sessions {
            session.stop().await;
        }
        lb.stop().await;
    }
    let calls = stats::count(opts.throughput_calls as u64);
    let mut rows = vec![Row::figure(
        "13",
        format!("throughput through HAProxy, 1 replica: {CLIENTS} clients, {calls} echo calls"),
        format!("{} calls/s", stats::count(rates[0].round() as u64)),
    )];
    for n in [2, 3] {
        rows.push(throughput_row(
            "13",
            format!(
                "throughput through HAProxy, {n} replicas: {CLIENTS} clients, {calls} echo calls"
            ),
            &[rates[n - 1], rates[0]],
            "1 replica",
        ));
    }
    Ok(rows)
}

/// A 2026-07-28 client that can be asked to confirm (it declares
/// elicitation); the measurement answers with `inputResponses` itself.
#[derive(Clone)]
struct ConfirmingClient;

impl ClientHandler for ConfirmingClient {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(ElicitationCapability::default());
        ClientConfig::new(
            capabilities,
            Implementation::new("toolhost-bench", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// Connects a [`ConfirmingClient`] to `url`.
async fn confirming_client(url: &str) -> Result<RunningService<RoleClient, ConfirmingClient>> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let transport = StreamableHttpClientTransport::from_uri(url.to_string());
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    tokio::time::timeout(
        PATIENCE,
        ConfirmingClient.serve_with_lifecycle(transport, lifecycle),
    )
    .await
    .context("server/discover timed out")?
    .context("the 2026-07-28 client could not connect")
}

/// One confirmed `add_order_comment`, both rounds; its wall time.
pub(crate) async fn confirmed_comment(peer: &Peer<RoleClient>, n: usize) -> Result<Duration> {
    let Value::Object(arguments) = json!({
        "order_id": statuspro_sandbox::seed::FIRST_ORDER_ID,
        "comment": format!("Benchmark comment {n}."),
        "public": false,
        "confirm": true,
    }) else {
        unreachable!("an object")
    };
    let params = CallToolRequestParams::new("add_order_comment").with_arguments(arguments);
    let start = Instant::now();
    let state = match peer.call_tool_once(params.clone()).await? {
        CallToolResponse::InputRequired(round) => round
            .request_state
            .context("input_required without a requestState")?,
        other => bail!("expected the confirmation question, got {other:?}"),
    };
    let answer =
        ElicitResult::new(ElicitationAction::Accept).with_content(json!({"confirm": true}));
    let mut responses = InputResponses::new();
    responses.insert("confirm".into(), serde_json::to_value(answer)?);
    let retry = params
        .with_input_responses(responses)
        .with_request_state(state);
    match peer.call_tool_once(retry).await? {
        CallToolResponse::Complete(result) if result.is_error != Some(true) => Ok(start.elapsed()),
        other => bail!("the confirmed retry failed: {other:?}"),
    }
}

/// Times confirmed calls ([`confirmed_comment`], 2026-07-28 over HTTP) on
/// one toolhost per entry of `servers`, each serving the StatusPro tools
/// with the benchmark's config changed by the entry's TOML
/// ([`Fixture::config_with`]), interleaved in blocks. Returns one
/// [`Samples`] per server, in order.
pub(crate) async fn confirmed_calls(
    fx: &Fixture,
    opts: &Options,
    servers: &[(&str, ConfigChange)],
) -> Result<Vec<Samples>> {
    let mut running = Vec::new();
    for (label, change) in servers {
        let config = fx.config_with(label, change)?;
        let plugins = fx.plugin_dir(&format!("{label}-plugins"), &fx.statuspro)?;
        let cache = Cache::Dir(fx.fresh_dir(&format!("{label}-cache"))?);
        let launch = fx
            .toolhost_with_config(label, &plugins, &cache, &config)
            .arg("--http")
            .arg("127.0.0.1:0")
            .env(
                "TOOLHOST_STATE_KEY",
                "benchmark-state-key-0123456789abcdef0123",
            );
        running.push(HttpServer::start(&launch).await?);
    }
    let mut clients = Vec::new();
    for server in &running {
        clients.push(confirming_client(&server.url).await?);
    }
    let calls = (opts.calls / 4).max(BLOCK);
    let mut n = 0;
    for client in &clients {
        for _ in 0..opts.warmup / 4 {
            confirmed_comment(client.peer(), n).await?;
            n += 1;
        }
    }
    let samples = interleaved(&clients, calls, |client, block| {
        let first = n;
        n += block;
        async move {
            let mut times = Vec::with_capacity(block);
            for i in first..first + block {
                times.push(confirmed_comment(client.peer(), i).await?);
            }
            Ok(times)
        }
    })
    .await?;
    for client in clients {
        let _ = client.cancel().await;
    }
    Ok(samples)
}

/// Measurement 14: the replay store's cost per confirmed call.
pub async fn replay_store(fx: &Fixture, opts: &Options) -> Result<Vec<Row>> {
    const WHAT: &str = "replay store per confirmed call";
    if let Some(why) = fx.statuspro_missing() {
        return Ok(vec![Row::skipped("14", WHAT, why)]);
    }
    let redis = match Redis::start(None).await {
        Ok(redis) => redis,
        Err(why) => return Ok(vec![Row::skipped("14", WHAT, why)]),
    };
    let keys = "[[state.keys]]\nid = \"bench\"\nenv = \"TOOLHOST_STATE_KEY\"\n";
    let samples = confirmed_calls(
        fx,
        opts,
        &[
            (
                "replay-redis",
                ConfigChange::tables(format!("[state]\nreplay = \"{}\"\n{keys}", redis.url)),
            ),
            (
                "replay-local",
                ConfigChange::tables(format!("[state]\nreplay = \"local\"\n{keys}")),
            ),
        ],
    )
    .await?;
    drop(redis);
    let (shared, local) = (&samples[0], &samples[1]);
    let count = stats::count(shared.len() as u64);
    Ok(percentile_rows(
        "14",
        |p| format!("confirmed call {p} (both rounds), spent states in Redis: {count} calls"),
        shared,
        "in-process",
        local,
    ))
}
