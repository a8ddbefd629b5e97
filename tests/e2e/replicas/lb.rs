//! Three replicas of the nine StatusPro tools behind a real HAProxy, with a
//! real Redis as the replay store and one sealing key, as docs/scaling.md
//! deploys them. Which replica answered what is read from each replica's
//! own `/metrics`; what reached the upstream from the sandbox's request log.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResponse};
use serde_json::{Value, json};
use statuspro_sandbox::{Sandbox, SandboxConfig, seed};

use crate::statuspro;
use crate::support::cluster::{Haproxy, Replica, ReplicaSpec, Stickiness};
use crate::support::infra::{Redis, require};
use crate::support::metrics::Scrape;
use crate::support::session::{refusal, retry_with_state};
use crate::support::{Elicitation, Era, component, http_client, write_then_rename};

/// A connected test client.
type Client = rmcp::service::RunningService<rmcp::RoleClient, crate::support::TestClient>;

const STATE_KEY: &str = "cluster-test-key-0123456789abcdef0123456789";

/// The sandbox, Redis, three replicas and the load balancer.
struct Cluster {
    sandbox: Sandbox,
    replicas: Vec<Replica>,
    lb: Haproxy,
    spec: ReplicaSpec,
    _redis: Redis,
    _dir: tempfile::TempDir,
}

/// Starts the cluster; fails the test, naming the packages, where Redis or
/// HAProxy is not installed (the tests that call it are ignored unless both
/// are).
async fn cluster(stickiness: Stickiness) -> Cluster {
    require(&["redis-server", "haproxy"]);
    let redis = Redis::start(None).await.expect("redis-server starts");
    // The load test makes thousands of requests; the sandbox's default
    // 60 a minute would answer most with 429.
    let sandbox = statuspro_sandbox::start(SandboxConfig {
        rate_limit_per_minute: 1_000_000,
        ..SandboxConfig::default()
    })
    .await
    .expect("the sandbox starts");
    let dir = tempfile::tempdir().unwrap();
    let state = format!(
        "\n[state]\nreplay = \"{}\"\n[[state.keys]]\nid = \"k1\"\nenv = \"TOOLHOST_STATE_KEY\"\n",
        redis.url
    );
    let spec = ReplicaSpec::new(
        dir.path(),
        &statuspro::config(&sandbox, &state),
        &[
            ("STATUSPRO_API_KEY", sandbox.api_key()),
            ("TOOLHOST_STATE_KEY", STATE_KEY),
        ],
    );
    for name in statuspro::COMPONENTS {
        std::fs::write(spec.plugins.join(format!("{name}.wasm")), component(name)).unwrap();
    }
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(Replica::start(&spec).await);
    }
    let ports: Vec<u16> = replicas.iter().map(|r| r.port).collect();
    let lb = Haproxy::start(&ports, stickiness)
        .await
        .expect("haproxy starts");
    Cluster {
        sandbox,
        replicas,
        lb,
        spec,
        _redis: redis,
        _dir: dir,
    }
}

impl Cluster {
    /// `toolhost_calls_total` for `tool` on each replica, by outcome.
    async fn calls(&self, tool: &str) -> Vec<BTreeMap<String, f64>> {
        let mut all = Vec::new();
        for replica in &self.replicas {
            let scrape = Scrape::of(&replica.metrics_url()).await;
            let mut outcomes = BTreeMap::new();
            for ((name, labels), value) in &scrape.samples {
                if name == "toolhost_calls_total"
                    && labels.get("tool").map(String::as_str) == Some(tool)
                {
                    *outcomes.entry(labels["outcome"].clone()).or_default() += value;
                }
            }
            all.push(outcomes);
        }
        all
    }

    /// How many times each comment text reached the sandbox in a POST.
    fn comments_posted(&self) -> BTreeMap<String, usize> {
        let mut posted = BTreeMap::new();
        for request in self.sandbox.mutations() {
            if let Some(text) = request.body.get("comment").and_then(Value::as_str) {
                *posted.entry(text.to_string()).or_default() += 1;
            }
        }
        posted
    }
}

/// Every replica's total for one outcome.
fn per_replica(calls: &[BTreeMap<String, f64>], outcome: &str) -> Vec<f64> {
    calls
        .iter()
        .map(|c| c.get(outcome).copied().unwrap_or(0.0))
        .collect()
}

/// Every replica's total over all outcomes.
fn totals(calls: &[BTreeMap<String, f64>]) -> Vec<f64> {
    calls.iter().map(|c| c.values().sum()).collect()
}

/// `get_order` of order `id`.
fn get_order(id: i64) -> CallToolRequestParams {
    let Value::Object(args) = json!({"order_id": id}) else {
        unreachable!()
    };
    CallToolRequestParams::new("get_order").with_arguments(args)
}

/// Reads the first order through `client`, which must succeed.
async fn read_first_order(client: &Client) {
    let result = client
        .call_tool(get_order(seed::FIRST_ORDER_ID))
        .await
        .expect("a replica answers");
    assert_ne!(
        result.is_error,
        Some(true),
        "{:?}",
        result.structured_content
    );
}

/// A 2026-07-28 client of the balancer that confirms when asked.
async fn modern_client(cluster: &Cluster) -> Client {
    http_client(
        &cluster.lb.url,
        Era::Modern,
        Elicitation::Accept(true),
        None,
    )
    .await
    .0
}

fn comment(text: &str) -> CallToolRequestParams {
    let Value::Object(args) = json!({"order_id": seed::FIRST_ORDER_ID, "comment": text, "public": false, "confirm": true})
    else {
        unreachable!()
    };
    CallToolRequestParams::new("add_order_comment").with_arguments(args)
}

/// The retry of `comment(text)` carrying `state` and the user's yes.
fn confirmed(text: &str, state: &str) -> CallToolRequestParams {
    retry_with_state(&comment(text), state, true)
}

/// Redeems `state` through the balancer until every replica has answered
/// at least once (bounded); each answer must be a refusal, returned.
async fn refused_everywhere(
    cluster: &Cluster,
    client: &Client,
    text: &str,
    state: &str,
) -> Vec<String> {
    let start = totals(&cluster.calls("add_order_comment").await);
    let mut refusals = Vec::new();
    for _ in 0..30 {
        refusals.push(refusal(client.call_tool_once(confirmed(text, state)).await));
        let now = totals(&cluster.calls("add_order_comment").await);
        if now.iter().zip(&start).all(|(n, s)| n > s) {
            return refusals;
        }
    }
    panic!("the balancer never reached every replica: {start:?}");
}

#[tokio::test]
#[ignore = "needs redis-server and haproxy (apt-get install -y redis-server haproxy); cargo xtask test runs it when installed"]
async fn a_2026_confirmation_hops_replicas_through_the_balancer_and_applies_once() {
    let cluster = cluster(Stickiness::SessionId).await;
    let client = modern_client(&cluster).await;

    // Round-robin moves each request to the next replica, but which one
    // answers is the balancer's business: confirm until the two rounds of
    // one confirmation landed on different replicas (the first or second
    // time, in practice).
    let mut hopped = None;
    for attempt in 0..10 {
        let text = format!("Confirmation {attempt}: asked on one replica, applied by another.");
        let before = cluster.calls("add_order_comment").await;
        let state = match client.call_tool_once(comment(&text)).await.unwrap() {
            CallToolResponse::InputRequired(round) => round.request_state.expect("a sealed state"),
            other => panic!("expected input_required, got {other:?}"),
        };
        match client
            .call_tool_once(confirmed(&text, &state))
            .await
            .unwrap()
        {
            CallToolResponse::Complete(result) => {
                assert_ne!(
                    result.is_error,
                    Some(true),
                    "{:?}",
                    result.structured_content
                )
            }
            other => panic!("expected the result, got {other:?}"),
        }
        assert_eq!(cluster.comments_posted()[&text], 1);
        let after = cluster.calls("add_order_comment").await;
        let moved = |outcome: &str| {
            let (b, a) = (per_replica(&before, outcome), per_replica(&after, outcome));
            (0..3)
                .find(|&i| a[i] > b[i])
                .expect("one replica counted it")
        };
        if moved("input_required") != moved("ok") {
            hopped = Some((text, state));
            break;
        }
    }
    let (text, state) = hopped.expect("round-robin sent a retry to another replica");
    let confirmations = cluster.sandbox.mutations().len();

    // The same state again, until every replica has refused it; then a
    // tampered state, the same way.
    let refusals = refused_everywhere(&cluster, &client, &text, &state).await;
    assert!(
        refusals.iter().all(|why| why.contains("already used")),
        "{refusals:?}"
    );
    let mut tampered = state.to_string().into_bytes();
    let at = tampered.len() - 3;
    tampered[at] = if tampered[at] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    let refusals = refused_everywhere(&cluster, &client, &text, &tampered).await;
    assert!(
        refusals
            .iter()
            .all(|why| why.contains("requestState is invalid")),
        "{refusals:?}"
    );
    assert_eq!(
        cluster.sandbox.mutations().len(),
        confirmations,
        "each confirmation applied exactly once"
    );
}

#[tokio::test]
#[ignore = "needs redis-server and haproxy (apt-get install -y redis-server haproxy); cargo xtask test runs it when installed"]
async fn legacy_sessions_stay_on_their_replica_when_the_balancer_sticks_on_the_session_id() {
    let cluster = cluster(Stickiness::SessionId).await;
    // Legacy clients, each opening its session on the replica round-robin
    // gives it: every later request of the session (calls, and the stream
    // a confirmation question travels on) must reach that same replica.
    let mut homes = Vec::new();
    let mut clients = Vec::new();
    for i in 0..6 {
        let (client, handler) = http_client(
            &cluster.lb.url,
            Era::Legacy,
            Elicitation::Accept(true),
            None,
        )
        .await;
        let before = totals(&cluster.calls("get_order").await);
        for _ in 0..3 {
            read_first_order(&client).await;
        }
        let after = totals(&cluster.calls("get_order").await);
        let moved: Vec<f64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
        let home = moved.iter().position(|n| *n == 3.0);
        assert!(
            home.is_some() && moved.iter().sum::<f64>() == 3.0,
            "session {i}'s calls went to more than one replica: {moved:?}"
        );
        let text = format!("Session {i} confirms over its own stream.");
        let result = client.call_tool(comment(&text)).await.unwrap();
        assert_ne!(
            result.is_error,
            Some(true),
            "{:?}",
            result.structured_content
        );
        assert_eq!(handler.seen.lock().unwrap().elicitations.len(), 1);
        assert_eq!(cluster.comments_posted()[&text], 1);
        homes.push(home.unwrap());
        clients.push(client);
        if i >= 2 && homes.iter().any(|h| *h != homes[0]) {
            break;
        }
    }
    assert!(
        homes.iter().any(|h| *h != homes[0]),
        "sessions were balanced across replicas: {homes:?}"
    );
}

#[tokio::test]
#[ignore = "needs redis-server and haproxy (apt-get install -y redis-server haproxy); cargo xtask test runs it when installed"]
async fn without_stickiness_a_legacy_session_breaks_on_the_next_replica() {
    let cluster = cluster(Stickiness::None).await;
    // The control for the test above: the same clients through a balancer
    // that does not stick cannot keep a session (another replica answers
    // 404 for a session it never opened). 2026-07-28 clients are unaffected.
    crate::support::install_tls_provider();
    let handler = crate::support::TestClient::new(Elicitation::Unsupported);
    let transport =
        rmcp::transport::StreamableHttpClientTransport::from_uri(cluster.lb.url.clone());
    let session = rmcp::ServiceExt::serve(handler, transport).await;
    // Round robin over three replicas: how many requests the client made
    // in the background (its GET stream) decides where the next one goes,
    // so one call may land on the session's own replica by chance. Of
    // three calls in a row, at least two reach another one.
    let broken = match session {
        Err(_) => true,
        Ok(client) => {
            let mut broken = false;
            for _ in 0..3 {
                if client.list_all_tools().await.is_err() {
                    broken = true;
                    break;
                }
            }
            broken
        }
    };
    assert!(
        broken,
        "a session spread over three replicas should not work"
    );

    let modern = modern_client(&cluster).await;
    for _ in 0..3 {
        assert_eq!(modern.list_all_tools().await.unwrap().len(), 9);
    }
}

#[tokio::test]
#[ignore = "needs redis-server and haproxy (apt-get install -y redis-server haproxy); cargo xtask test runs it when installed"]
async fn a_replica_killed_under_load_loses_no_answer_and_applies_nothing_twice() {
    const CLIENTS: usize = 64;
    const CALLS_PER_CLIENT: usize = 78; // 4,992 calls
    const TIMEOUT: Duration = Duration::from_secs(30);
    let mut cluster = cluster(Stickiness::SessionId).await;
    let mut clients = Vec::new();
    for _ in 0..CLIENTS {
        clients.push(modern_client(&cluster).await);
    }
    let total = CLIENTS * CALLS_PER_CLIENT;
    let done = Arc::new(AtomicUsize::new(0));
    let progress = Arc::new(tokio::sync::Notify::new());
    let mut runs = Vec::new();
    for (c, client) in clients.into_iter().enumerate() {
        let (done, progress) = (done.clone(), progress.clone());
        runs.push(tokio::spawn(async move {
            // (comment text or None for a read, whether it succeeded, its
            // place among all answers)
            let mut outcomes = Vec::new();
            for i in 0..CALLS_PER_CLIENT {
                let (params, text) = if i % 6 == 5 {
                    let text = format!("load {c}-{i}");
                    (comment(&text), Some(text))
                } else {
                    let id = seed::FIRST_ORDER_ID + (i % seed::ORDER_COUNT) as i64;
                    (get_order(id), None)
                };
                let answer = tokio::time::timeout(TIMEOUT, client.call_tool(params))
                    .await
                    .unwrap_or_else(|_| panic!("call {c}-{i} hung past {TIMEOUT:?}"));
                let ok = matches!(&answer, Ok(r) if r.is_error != Some(true));
                let place = done.fetch_add(1, Ordering::SeqCst) + 1;
                outcomes.push((text, ok, place));
                progress.notify_waiters();
            }
            outcomes
        }));
    }
    let reached = |n: usize| {
        let (done, progress) = (done.clone(), progress.clone());
        async move {
            loop {
                let notified = progress.notified();
                if done.load(Ordering::SeqCst) >= n {
                    return;
                }
                notified.await;
            }
        }
    };
    reached(total / 3).await;
    cluster.replicas[1].kill().await;
    let killed_at = done.load(Ordering::SeqCst);
    reached(2 * total / 3).await;
    let restarted_at = done.load(Ordering::SeqCst);
    cluster.replicas[1].restart().await;

    let mut outcomes = Vec::new();
    for run in runs {
        outcomes.extend(run.await.expect("no client task panicked"));
    }
    assert_eq!(outcomes.len(), total, "every call was answered");
    let succeeded = outcomes.iter().filter(|(_, ok, _)| *ok).count();
    let failed = total - succeeded;
    eprintln!(
        "{succeeded} of {total} calls succeeded, {failed} failed; replica 2 killed after \
         {killed_at}, restarted after {restarted_at}"
    );
    let while_down = outcomes
        .iter()
        .filter(|(_, ok, place)| *ok && (killed_at + 1..=restarted_at).contains(place))
        .count();
    assert!(
        while_down > (restarted_at - killed_at) / 2,
        "the other replicas kept serving while one was down: {while_down} of {}",
        restarted_at - killed_at
    );

    // No confirmed mutation applied twice; every one reported applied was.
    let posted = cluster.comments_posted();
    for (text, count) in &posted {
        assert_eq!(*count, 1, "{text:?} was applied {count} times");
    }
    for (text, ok, _) in &outcomes {
        if let (Some(text), true) = (text, ok) {
            assert_eq!(posted.get(text), Some(&1), "{text:?} reported applied");
        }
    }

    // The restarted replica rejoined: round-robin gives it calls again.
    let client = modern_client(&cluster).await;
    let mut rejoined = false;
    for _ in 0..30 {
        read_first_order(&client).await;
        if totals(&cluster.calls("get_order").await)[1] > 0.0 {
            rejoined = true;
            break;
        }
    }
    assert!(rejoined, "the restarted replica serves again");
}

#[tokio::test]
#[ignore = "needs redis-server and haproxy (apt-get install -y redis-server haproxy); cargo xtask test runs it when installed"]
async fn a_component_published_to_the_shared_directory_reaches_every_replica() {
    let cluster = cluster(Stickiness::SessionId).await;
    // A legacy listener on each replica, connected directly.
    let mut listeners = Vec::new();
    for replica in &cluster.replicas {
        listeners
            .push(http_client(&replica.url(), Era::Legacy, Elicitation::Unsupported, None).await);
    }
    write_then_rename(&cluster.spec.plugins, "hello.wasm", &component("hello"));
    for (client, handler) in &listeners {
        let wait = async {
            loop {
                let notified = handler.changed.notified();
                if handler.seen.lock().unwrap().list_changed > 0 {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(Duration::from_secs(30), wait)
            .await
            .expect("each replica tells its own listeners");
        let names: Vec<String> = client
            .list_all_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name.to_string())
            .collect();
        assert!(names.contains(&"greet".to_string()), "{names:?}");
    }
    // Through the balancer: every replica serves it.
    let (client, _) =
        http_client(&cluster.lb.url, Era::Modern, Elicitation::Unsupported, None).await;
    for _ in 0..30 {
        let args = json!({"name": "Ada"}).as_object().unwrap().clone();
        let result = client
            .call_tool(CallToolRequestParams::new("greet").with_arguments(args))
            .await
            .unwrap();
        assert_ne!(
            result.is_error,
            Some(true),
            "{:?}",
            result.structured_content
        );
        if totals(&cluster.calls("greet").await)
            .iter()
            .all(|n| *n > 0.0)
        {
            return;
        }
    }
    panic!("greet was not served by every replica");
}
