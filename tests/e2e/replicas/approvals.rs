//! Approvals across replicas (ADR 0038): two replicas of the StatusPro
//! tools sharing a real Redis, behind a real HAProxy balancing round-robin.
//! A task begun on one replica is approved on the other's page, survives
//! the first replica's SIGKILL while it waits, is reported and resumed by
//! whichever replica a request reaches, and changes the sandbox once.

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
    let extra = format!(
        "\n[state]\nreplay = \"{}\"\n[[state.keys]]\nid = \"k1\"\nenv = \"TOOLHOST_STATE_KEY\"\n{}",
        redis.url,
        config(600)
    );
    let spec = ReplicaSpec::new(
        dir.path(),
        &statuspro::config(&sandbox, &extra),
        &[
            ("STATUSPRO_API_KEY", sandbox.api_key()),
            ("TOOLHOST_STATE_KEY", STATE_KEY),
        ],
    );
    for name in statuspro::COMPONENTS {
        std::fs::write(spec.plugins.join(format!("{name}.wasm")), component(name)).unwrap();
    }
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
