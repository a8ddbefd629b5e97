//! Approvals across replicas (ADR 0038): two replicas of the StatusPro
//! tools sharing a real Redis, behind a real HAProxy balancing round-robin.
//! A task begun on one replica is approved on the other's page, survives
//! the first replica's SIGKILL while it waits, is reported and resumed by
//! whichever replica a request reaches, and changes the sandbox once. A
//! task whose replica dies while its call runs fails on the next poll
//! (ADR 0068).

use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResponse, TaskStatus, UpdateTaskParams};
use serde_json::json;
use statuspro_sandbox::SandboxConfig;

use crate::approvals::{ALICE, CAROL, Page, change, config, poll, task_client_at};
use crate::statuspro;
use crate::support::cluster::{Haproxy, Replica, ReplicaSpec, Stickiness};
use crate::support::component;
use crate::support::infra::{Redis, require};

const STATE_KEY: &str = "approvals-cluster-key-0123456789abcdef01234";

#[tokio::test]
#[ignore = "needs redis-server and haproxy (apt-get install -y redis-server haproxy); cargo xtask test runs it when installed"]
async fn a_task_begun_on_one_replica_is_approved_on_another_and_survives_a_kill() {
    require(&["redis-server", "haproxy"]);
    let redis = Redis::start(None).await.expect("redis-server starts");
    let sandbox = statuspro_sandbox::start(SandboxConfig::default())
        .await
        .expect("the sandbox starts");
    let dir = tempfile::tempdir().unwrap();
    let toml = statuspro::config(&sandbox, &shared_state(&redis));
    let spec = statuspro_spec(dir.path(), &toml, &sandbox);
    let mut a = Replica::start(&spec).await;
    let b = Replica::start(&spec).await;
    let lb = Haproxy::start(&[a.port, b.port], Stickiness::None)
        .await
        .expect("haproxy starts");

    // Begun on replica A.
    let on_a = task_client_at(&a.url(), ALICE).await;
    let params = CallToolRequestParams::new("update_order_status")
        .with_arguments(change("across replicas").as_object().unwrap().clone());
    let CallToolResponse::Task(created) = on_a.call_tool_once(params).await.unwrap() else {
        panic!("a task");
    };
    let id = created.task.task_id;
    drop(on_a);

    // A dies while the task waits; B reports it.
    a.kill().await;
    let on_b = task_client_at(&b.url(), ALICE).await;
    let waiting = poll(&on_b, &id, |_| true).await;
    assert_eq!(waiting["status"], "working", "{waiting}");

    // Approved on B's page; the session is in Redis, so A's page knows it
    // too once A is back.
    let mut carol = Page::at(&b.url());
    carol.sign_in(CAROL).await;
    let (_, _, html) = carol.get("").await;
    assert!(html.contains(&id), "B lists the call begun on A: {html}");
    let (status, html) = carol.decide(&id, "approve").await;
    assert_eq!(status, reqwest::StatusCode::OK, "{html}");
    a.restart().await;
    let mut on_a_page = Page::at(&a.url());
    on_a_page.cookie = carol.cookie.clone();
    let (status, _, html) = on_a_page.get(&format!("/{id}")).await;
    assert_eq!(status, reqwest::StatusCode::OK, "{html}");
    assert!(
        html.contains("data-state=\"spent\"") || html.contains("data-state=\"approved\""),
        "{html}"
    );

    // Through the balancer from here: whichever replica answers.
    let through_lb = task_client_at(&lb.url, ALICE).await;
    let asking = poll(&through_lb, &id, |s| s != TaskStatus::Working).await;
    assert_eq!(asking["status"], "input_required", "{asking}");
    assert!(sandbox.mutations().is_empty(), "asked, not run");
    let mut answers = rmcp::model::InputResponses::new();
    answers.insert(
        "confirm".into(),
        json!({"action": "accept", "content": {"confirm": true}}),
    );
    through_lb
        .update_task(UpdateTaskParams::new(&id, answers))
        .await
        .unwrap();
    let done = poll(&through_lb, &id, |s| s == TaskStatus::Completed).await;
    assert_eq!(
        done["result"]["structuredContent"]["result"], "confirmed",
        "{done}"
    );
    assert_eq!(
        sandbox.mutations().len(),
        1,
        "one change, across two replicas"
    );
}

/// Limits under which a call waits for a silent upstream far longer than
/// the tests take.
const PATIENT: &str =
    "[plugins.statuspro.limits]\ncall_timeout_secs = 300\nhttp_timeout_secs = 300\n";

/// An upstream that accepts connections and never answers: a call that
/// reaches it runs until its deadline, or until the upstream is told to
/// close every connection.
struct SilentUpstream {
    addr: std::net::SocketAddr,
    /// How many connections it accepted.
    accepted: tokio::sync::watch::Receiver<usize>,
    /// Closes every connection and stops listening.
    close: Option<tokio::sync::oneshot::Sender<()>>,
}

impl SilentUpstream {
    async fn start() -> SilentUpstream {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (count, accepted) = tokio::sync::watch::channel(0usize);
        let (close, mut closed) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let mut held = Vec::new();
            loop {
                tokio::select! {
                    _ = &mut closed => return,
                    accepted = listener.accept() => {
                        let Ok((stream, _)) = accepted else { return };
                        held.push(stream);
                        count.send_modify(|n| *n += 1);
                    }
                }
            }
        });
        SilentUpstream {
            addr,
            accepted,
            close: Some(close),
        }
    }

    /// Waits (bounded) until a call reached it.
    async fn reached(&mut self) {
        tokio::time::timeout(Duration::from_secs(30), self.accepted.wait_for(|n| *n >= 1))
            .await
            .expect("the approved call reaches its upstream")
            .unwrap();
    }

    /// The StatusPro tools' configuration with `extra`, pointed here.
    fn config(&self, sandbox: &statuspro_sandbox::Sandbox, extra: &str) -> String {
        statuspro::config(sandbox, extra)
            .replace(&sandbox.addr().to_string(), &self.addr.to_string())
            .replace(
                &format!("port = {}", sandbox.addr().port()),
                &format!("port = {}", self.addr.port()),
            )
    }
}

/// A Debian `redis-server` and the StatusPro sandbox, started (the test
/// needs `redis-server` installed).
async fn redis_and_sandbox() -> (Redis, statuspro_sandbox::Sandbox) {
    require(&["redis-server"]);
    let redis = Redis::start(None).await.expect("redis-server starts");
    let sandbox = statuspro_sandbox::start(SandboxConfig::default())
        .await
        .expect("the sandbox starts");
    (redis, sandbox)
}

/// What keeps approvals and confirmations in `redis`, shared by replicas,
/// and the approval rule (`config`), as configuration to append.
fn shared_state(redis: &Redis) -> String {
    format!(
        "\n[state]\nreplay = \"{}\"\n[[state.keys]]\nid = \"k1\"\nenv = \"TOOLHOST_STATE_KEY\"\n{}",
        redis.url,
        config(600)
    )
}

/// The store of approvals in `redis`, as the replicas keep it.
fn approvals_in(redis: &Redis) -> toolhost::approvals::Approvals {
    let url = toolhost::config::ReplayUrl {
        url: redis.url.clone(),
        literal_password: false,
    };
    toolhost::approvals::Approvals::shared(std::sync::Arc::new(
        toolhost::replay::RedisReplay::open(&url).unwrap(),
    ))
}

/// A replica of the StatusPro tools configured by `toml` in `dir`.
fn statuspro_spec(
    dir: &std::path::Path,
    toml: &str,
    sandbox: &statuspro_sandbox::Sandbox,
) -> ReplicaSpec {
    let spec = ReplicaSpec::new(
        dir,
        toml,
        &[
            ("STATUSPRO_API_KEY", sandbox.api_key()),
            ("TOOLHOST_STATE_KEY", STATE_KEY),
        ],
    );
    for name in statuspro::COMPONENTS {
        std::fs::write(spec.plugins.join(format!("{name}.wasm")), component(name)).unwrap();
    }
    spec
}

/// Alice's status change as a task on `replica`, approved by Carol on its
/// page; its id and Alice's client.
async fn approved_task(
    replica: &Replica,
) -> (
    String,
    rmcp::service::RunningService<rmcp::RoleClient, crate::support::TestClient>,
) {
    let client = task_client_at(&replica.url(), ALICE).await;
    let params = CallToolRequestParams::new("update_order_status")
        .with_arguments(change("held by its run").as_object().unwrap().clone());
    let CallToolResponse::Task(created) = client.call_tool_once(params).await.unwrap() else {
        panic!("a task");
    };
    let id = created.task.task_id;
    let mut carol = Page::at(&replica.url());
    carol.sign_in(CAROL).await;
    let (status, html) = carol.decide(&id, "approve").await;
    assert_eq!(status, reqwest::StatusCode::OK, "{html}");
    (id, client)
}

#[tokio::test]
#[ignore = "needs redis-server (apt-get install -y redis-server); cargo xtask test runs it when installed"]
async fn a_task_whose_replica_dies_mid_call_fails_on_the_next_poll_and_is_not_run_again() {
    let (redis, sandbox) = redis_and_sandbox().await;
    // The tools are pointed at an upstream that never answers: an
    // approved call runs, and hangs, until the replica is killed.
    let mut upstream = SilentUpstream::start().await;
    let extra = format!(
        "{}\n[approvals]\ntask_lease_secs = 3\n{PATIENT}",
        shared_state(&redis)
    );
    let dir = tempfile::tempdir().unwrap();
    let spec = statuspro_spec(dir.path(), &upstream.config(&sandbox, &extra), &sandbox);
    let mut a = Replica::start(&spec).await;
    let (id, client) = approved_task(&a).await;

    // The approval began the call; it reaches the silent upstream and
    // waits there. Then the replica dies mid-call.
    let running = poll(&client, &id, |_| true).await;
    assert_eq!(running["status"], "working", "{running}");
    upstream.reached().await;
    drop(client);
    a.kill().await;
    a.restart().await;

    // Once its hold lapses, the task fails, saying what is not known and
    // where to look.
    let client = task_client_at(&a.url(), ALICE).await;
    let failed = poll(&client, &id, |s| s != TaskStatus::Working).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    let message = failed["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("stopped before the call ended") && message.contains(&id),
        "{failed}"
    );
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    assert_eq!(failed["statusMessage"], message, "{failed}");

    // Failed is where it stays: polled again it neither runs the call
    // again nor changes.
    let again = poll(&client, &id, |_| true).await;
    assert_eq!(again["status"], "failed", "{again}");
    assert_eq!(
        *upstream.accepted.borrow(),
        1,
        "the lost call was not run again"
    );
}

#[tokio::test]
async fn a_task_whose_call_outlives_its_lease_keeps_it_by_renewing_and_completes() {
    let sandbox = statuspro_sandbox::start(SandboxConfig::default())
        .await
        .expect("the sandbox starts");
    let mut upstream = SilentUpstream::start().await;
    let extra = format!(
        "\n{}\n[approvals]\ntask_lease_secs = 3\n{PATIENT}",
        config(600)
    );
    let dir = tempfile::tempdir().unwrap();
    let spec = statuspro_spec(dir.path(), &upstream.config(&sandbox, &extra), &sandbox);
    let a = Replica::start(&spec).await;
    let (id, client) = approved_task(&a).await;
    poll(&client, &id, |_| true).await;
    upstream.reached().await;

    // Over two leases, the run renews its hold: the task stays working.
    let until = tokio::time::Instant::now() + Duration::from_secs(7);
    while tokio::time::Instant::now() < until {
        let task = poll(&client, &id, |_| true).await;
        assert_eq!(task["status"], "working", "{task}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }

    // The upstream hangs up: the call ends with the tool's error, kept as
    // the task's result by the run that still holds it.
    upstream.close.take().unwrap().send(()).unwrap();
    let done = poll(&client, &id, |s| s != TaskStatus::Working).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["isError"], true, "{done}");
}

#[tokio::test]
#[ignore = "needs redis-server (apt-get install -y redis-server); cargo xtask test runs it when installed"]
async fn of_two_identical_moves_of_one_approval_in_redis_one_alone_happens() {
    use toolhost::approvals::{Approval, State, Transition, now_ms};
    require(&["redis-server"]);
    let redis = Redis::start(None).await.expect("redis-server starts");
    let store = approvals_in(&redis);
    for round in 0..20 {
        let approval = Approval {
            id: format!("same-change-{round}"),
            rule: "status-changes-need-support".into(),
            policy_version: "v1".into(),
            caller: "token:alice".into(),
            caller_identity: None,
            transport: "http".into(),
            profile: None,
            client: None,
            tool: "update_order_status".into(),
            plugin: "statuspro".into(),
            file: "statuspro_update_order_status.wasm".into(),
            digest: "ab".repeat(32),
            arguments: json!({"order_id": 1}),
            arguments_sha256: "cd".repeat(32),
            created_ms: now_ms(),
            expires_ms: now_ms() + 60_000,
            state: State::Approved,
            decided_by: Some("token:carol".into()),
            decided_ms: Some(now_ms()),
            note: None,
            void_reason: None,
            task: None,
            revision: 1,
            moved_by: String::new(),
        };
        store.insert(&approval).await.unwrap();
        // The same caller's same call, twice at once: both read the
        // approval approved and write the very same change.
        let spend = || {
            store.update(
                &approval.id,
                |a| a.state == State::Approved,
                |a| a.state = State::Spent,
            )
        };
        let (first, second) = tokio::join!(spend(), spend());
        let moved = [first.unwrap(), second.unwrap()]
            .iter()
            .filter(|t| matches!(t, Transition::Moved(_)))
            .count();
        assert_eq!(moved, 1, "round {round}: one approval runs one call");
    }
}

#[tokio::test]
#[ignore = "needs redis-server (apt-get install -y redis-server); cargo xtask test runs it when installed"]
async fn an_approval_approved_for_a_task_runs_only_as_that_task_when_the_call_comes_again() {
    use toolhost::approvals::{State, Transition};
    let (redis, sandbox) = redis_and_sandbox().await;
    let dir = tempfile::tempdir().unwrap();
    let toml = statuspro::config(&sandbox, &shared_state(&redis));
    let spec = statuspro_spec(dir.path(), &toml, &sandbox);
    let a = Replica::start(&spec).await;
    let store = approvals_in(&redis);
    let client = task_client_at(&a.url(), ALICE).await;
    let plain = crate::support::TestClient::new(crate::support::Elicitation::Accept(true))
        .start(
            crate::support::Era::Legacy,
            rmcp::transport::StreamableHttpClientTransport::from_config(
                rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                    a.url(),
                )
                .auth_header(ALICE.to_string()),
            ),
        )
        .await;

    // A task asked, then approved in the store, as by a replica that died
    // before it began the task's run: nothing has claimed it.
    let task_approved_meanwhile = |comment: &'static str| {
        let client = &client;
        let store = &store;
        async move {
            let params = CallToolRequestParams::new("update_order_status")
                .with_arguments(change(comment).as_object().unwrap().clone());
            let CallToolResponse::Task(created) =
                client.call_tool_once(params.clone()).await.unwrap()
            else {
                panic!("a task");
            };
            let id = created.task.task_id;
            let approved = store
                .update(
                    &id,
                    |a| a.state == State::Pending,
                    |a| {
                        a.state = State::Approved;
                        a.decided_by = Some("token:carol".into());
                    },
                )
                .await
                .unwrap();
            assert!(matches!(approved, Transition::Moved(_)));
            (id, params)
        }
    };

    // The same call again from the task's client: the task itself, which
    // then runs, once, and asks its question through the task.
    let (id, params) = task_approved_meanwhile("approved meanwhile").await;
    let CallToolResponse::Task(again) = client.call_tool_once(params).await.unwrap() else {
        panic!("the task again");
    };
    assert_eq!(again.task.task_id, id);
    let asking = poll(&client, &id, |s| s != TaskStatus::Working).await;
    assert_eq!(asking["status"], "input_required", "{asking}");
    assert_eq!(store.get(&id).await.unwrap().unwrap().state, State::Spent);

    // From a client without tasks: it is told where the call runs, and
    // runs nothing itself; the task runs it.
    let (id, params) = task_approved_meanwhile("approved meanwhile, asked plainly").await;
    let answered = plain.call_tool(params).await.unwrap();
    assert_eq!(answered.is_error, Some(true));
    let told = serde_json::to_string(&answered.structured_content).unwrap();
    assert!(
        told.contains("APPROVAL_PENDING") && told.contains(&format!("runs as task {id}")),
        "{told}"
    );
    let asking = poll(&client, &id, |s| s != TaskStatus::Working).await;
    assert_eq!(asking["status"], "input_required", "{asking}");
    assert!(sandbox.mutations().is_empty(), "asked, nothing changed yet");
}

#[tokio::test]
#[ignore = "needs redis-server (apt-get install -y redis-server); cargo xtask test runs it when installed"]
async fn a_sign_out_the_store_cannot_record_says_so_and_keeps_the_cookie_to_try_again() {
    let (redis, sandbox) = redis_and_sandbox().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = statuspro_spec(
        dir.path(),
        &statuspro::config(&sandbox, &shared_state(&redis)),
        &sandbox,
    );
    let a = Replica::start(&spec).await;
    let mut carol = Page::at(&a.url());
    carol.sign_in(CAROL).await;
    let csrf = carol.csrf().await;
    // The session lives in Redis, which goes away.
    redis.stop().await;
    let (status, html) = carol.post("/sign-out", &[("csrf", &csrf)]).await;
    assert_eq!(status, reqwest::StatusCode::SERVICE_UNAVAILABLE, "{html}");
    assert!(html.contains("You are not signed out"), "{html}");
}
