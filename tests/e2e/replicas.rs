//! Several `toolhost serve --http` processes as replicas of one service: a
//! 2026-07-28 confirmation sealed by one replica is redeemed on another,
//! once across all of them (a real Redis holds the spent states), keys
//! rotate by id, and a replay store that cannot be reached refuses rather
//! than applying a mutation unchecked.
//!
//! The [`lb`] module puts three replicas of the StatusPro tools behind a
//! real HAProxy: 2026-07-28 traffic balanced round-robin with no
//! stickiness, legacy sessions pinned by `Mcp-Session-Id`, a replica killed
//! under load, and a component published to the shared plugin directory.

mod approvals;
mod lb;

use rmcp::ServiceError;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use serde_json::{Value, json};

use crate::support::infra::{Redis, require};
use crate::support::session::retry_with_state;
use crate::support::{Elicitation, Era, Host, HostOptions, Recorder};

const KEY_1: &str = "replica-test-key-one-0123456789abcdef0123";
const KEY_2: &str = "replica-test-key-two-0123456789abcdef0123";

/// Starts Redis; fails the test, naming the package, where it is not
/// installed (the tests that call it are ignored unless it is).
async fn redis() -> Redis {
    require(&["redis-server"]);
    Redis::start(None).await.expect("redis-server starts")
}

/// A replica: misbehaving.wasm over HTTP, a 2026-07-28 client, the state
/// key ring `keys` (ids of KEY_1/KEY_2, first seals) and `replay`.
async fn replica(server: &Recorder, keys: &[&str], replay: &str) -> Host {
    replica_with_env(server, keys, replay, &[]).await
}

/// [`replica`], with the environment variables `env` besides the keys'.
async fn replica_with_env(
    server: &Recorder,
    keys: &[&str],
    replay: &str,
    env: &[(&str, &str)],
) -> Host {
    let mut config = format!("{}\n[state]\n", server.allow_block("misbehaving"));
    if !replay.is_empty() {
        config.push_str(&format!("replay = \"{replay}\"\n"));
    }
    for id in keys {
        config.push_str(&format!(
            "[[state.keys]]\nid = \"{id}\"\nenv = \"STATE_KEY_{}\"\n",
            id.to_uppercase()
        ));
    }
    let mut options = HostOptions::new(&["misbehaving"])
        .http()
        .era(Era::Modern)
        .elicitation(Elicitation::Accept(true))
        .env("STATE_KEY_K1", KEY_1)
        .env("STATE_KEY_K2", KEY_2)
        .config(config);
    for (key, value) in env {
        options = options.env(key, value);
    }
    Host::start(options).await
}

fn params(server: &Recorder) -> CallToolRequestParams {
    let Value::Object(args) = json!({"url": format!("{}/hook", server.url), "confirm": true})
    else {
        unreachable!()
    };
    CallToolRequestParams::new("confirm_then_post").with_arguments(args)
}

/// The first round on `host`: the sealed state it asks the client to echo.
async fn sealed_state(host: &Host, server: &Recorder) -> String {
    match host.client.call_tool_once(params(server)).await.unwrap() {
        CallToolResponse::InputRequired(round) => round.request_state.expect("a sealed state"),
        other => panic!("expected input_required, got {other:?}"),
    }
}

/// The retry carrying `state` and the user's yes.
fn yes(server: &Recorder, state: &str) -> CallToolRequestParams {
    retry_with_state(&params(server), state, true)
}

/// The retry's outcome: `Ok(detail)` when the tool ran, `Err(message)`
/// when the state was refused.
async fn redeem(host: &Host, server: &Recorder, state: &str) -> Result<String, String> {
    match host.client.call_tool_once(yes(server, state)).await {
        Ok(CallToolResponse::Complete(result)) => {
            let out = result.structured_content.unwrap();
            if result.is_error == Some(true) {
                Err(out.to_string())
            } else {
                Ok(out["detail"].as_str().unwrap().to_string())
            }
        }
        Err(ServiceError::McpError(e)) => Err(e.message.to_string()),
        other => panic!("unexpected answer {other:?}"),
    }
}

#[tokio::test]
#[ignore = "needs redis-server (apt-get install -y redis-server); cargo xtask test runs it when installed"]
async fn a_confirmation_sealed_on_one_replica_is_redeemed_on_another_once() {
    let redis = redis().await;
    let server = Recorder::start().await;
    let a = replica(&server, &["k1"], &redis.url).await;
    let b = replica(&server, &["k1"], &redis.url).await;
    let c = replica(&server, &["k1"], &redis.url).await;

    let state = sealed_state(&a, &server).await;
    assert_eq!(server.posts(), 0, "asking sends nothing");
    assert_eq!(redeem(&b, &server, &state).await.unwrap(), "posted: 200");
    assert_eq!(server.posts(), 1);
    let replayed = redeem(&c, &server, &state).await.unwrap_err();
    assert!(replayed.contains("already used"), "{replayed}");
    let replayed_on_a = redeem(&a, &server, &state).await.unwrap_err();
    assert!(replayed_on_a.contains("already used"), "{replayed_on_a}");
    assert_eq!(server.posts(), 1, "applied exactly once");

    // Tampered: refused everywhere, nothing spent or sent.
    let fresh = sealed_state(&a, &server).await;
    let mut tampered = fresh.clone().into_bytes();
    let last = tampered.len() - 3;
    tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    for replica in [&a, &b, &c] {
        let refused = redeem(replica, &server, &tampered).await.unwrap_err();
        assert!(refused.contains("requestState is invalid"), "{refused}");
    }
    assert_eq!(redeem(&c, &server, &fresh).await.unwrap(), "posted: 200");
    assert_eq!(server.posts(), 2);
}

#[tokio::test]
#[ignore = "needs redis-server (apt-get install -y redis-server); cargo xtask test runs it when installed"]
async fn keys_rotate_by_id_and_a_foreign_key_is_refused() {
    let redis = redis().await;
    let server = Recorder::start().await;
    let old = replica(&server, &["k1"], &redis.url).await;
    let rotating = replica(&server, &["k2", "k1"], &redis.url).await;
    let new_only = replica(&server, &["k2"], &redis.url).await;

    // A state sealed with the old key opens where the old key is still held.
    let by_old = sealed_state(&old, &server).await;
    assert_eq!(
        redeem(&rotating, &server, &by_old).await.unwrap(),
        "posted: 200"
    );
    // One sealed with the new (current) key opens on every replica holding it.
    let by_rotating = sealed_state(&rotating, &server).await;
    assert_eq!(
        redeem(&new_only, &server, &by_rotating).await.unwrap(),
        "posted: 200"
    );
    // Once the old key is retired, its states are refused.
    let by_old = sealed_state(&old, &server).await;
    let refused = redeem(&new_only, &server, &by_old).await.unwrap_err();
    assert!(refused.contains("requestState is invalid"), "{refused}");
    // A process with its own random key (no [state] keys) is foreign to all.
    let loner = replica(&server, &[], &redis.url).await;
    let foreign = sealed_state(&loner, &server).await;
    let refused = redeem(&rotating, &server, &foreign).await.unwrap_err();
    assert!(refused.contains("requestState is invalid"), "{refused}");
    assert_eq!(server.posts(), 2);
}

#[tokio::test]
#[ignore = "needs redis-server (apt-get install -y redis-server); cargo xtask test runs it when installed"]
async fn an_unreachable_replay_store_refuses_with_a_retryable_error_and_spends_nothing() {
    let redis = redis().await;
    let server = Recorder::start().await;
    let a = replica(&server, &["k1"], &redis.url).await;
    let b = replica(&server, &["k1"], &redis.url).await;
    let state = sealed_state(&a, &server).await;

    let port = redis.stop().await;
    let refused = redeem(&b, &server, &state).await.unwrap_err();
    let envelope: Value = serde_json::from_str(&refused).unwrap();
    assert_eq!(envelope["issues"][0]["code"], "TRANSIENT", "{envelope}");
    assert!(envelope["issues"][0]["retry_after_ms"].is_u64());
    assert!(
        envelope["issues"][0]["message"]
            .as_str()
            .unwrap()
            .contains("replay store"),
        "{envelope}"
    );
    assert_eq!(
        server.posts(),
        0,
        "never applied without the single-use check"
    );

    // The store comes back on the same address: the same answer now counts, once.
    let _redis = Redis::start(Some(port)).await.unwrap();
    assert_eq!(redeem(&b, &server, &state).await.unwrap(), "posted: 200");
    assert!(
        redeem(&a, &server, &state)
            .await
            .unwrap_err()
            .contains("already used")
    );
    assert_eq!(server.posts(), 1);
}

#[tokio::test]
#[ignore = "needs redis-server (apt-get install -y redis-server); cargo xtask test runs it when installed"]
async fn after_a_redis_restart_the_first_confirmed_retry_reconnects_and_applies() {
    let redis = redis().await;
    let server = Recorder::start().await;
    let a = replica(&server, &["k1"], &redis.url).await;
    let b = replica(&server, &["k1"], &redis.url).await;
    // b holds a pooled connection to this Redis.
    let first = sealed_state(&a, &server).await;
    assert_eq!(redeem(&b, &server, &first).await.unwrap(), "posted: 200");

    // Redis restarts on the same address; b's pooled connection died with
    // the old server. Redis is up: the answer counts, at the first try.
    let port = redis.stop().await;
    let _redis = Redis::start(Some(port)).await.unwrap();
    let second = sealed_state(&a, &server).await;
    assert_eq!(
        redeem(&b, &server, &second).await.unwrap(),
        "posted: 200",
        "a connection that died with the old server is replaced, not answered TRANSIENT"
    );
    assert!(
        redeem(&a, &server, &second)
            .await
            .unwrap_err()
            .contains("already used")
    );
    assert_eq!(server.posts(), 2, "each answer applied once");
}

#[tokio::test]
#[ignore = "needs redis-server (apt-get install -y redis-server); cargo xtask test runs it when installed"]
async fn a_replay_store_over_tls_spends_each_state_once() {
    require(&["redis-server"]);
    let tls = tempfile::tempdir().unwrap();
    toolhost_test_infra::make_tls_certificate(tls.path()).expect("openssl makes a certificate");
    let redis = Redis::start_tls(tls.path())
        .await
        .expect("redis-server starts with TLS");
    assert!(redis.url.starts_with("rediss://"), "{}", redis.url);
    let server = Recorder::start().await;
    // The replicas trust the test certificate as the system roots would.
    let ca = tls.path().join("cert.pem");
    let env = [("SSL_CERT_FILE", ca.to_str().unwrap())];
    let a = replica_with_env(&server, &["k1"], &redis.url, &env).await;
    let b = replica_with_env(&server, &["k1"], &redis.url, &env).await;
    let state = sealed_state(&a, &server).await;
    assert_eq!(redeem(&b, &server, &state).await.unwrap(), "posted: 200");
    let replayed = redeem(&a, &server, &state).await.unwrap_err();
    assert!(replayed.contains("already used"), "{replayed}");
    assert_eq!(server.posts(), 1, "applied once, through Redis over TLS");
}

/// A generated-looking password with the characters a URL's user
/// information cannot hold as they are: from the environment it works as
/// it is (toolhost percent-encodes it); written in the URL it must be
/// encoded.
const REDIS_PASSWORD: &str = "redis-pw/7f3a@9c1e:5b";

/// A Redis with `requirepass`; fails the test where it is not installed,
/// as [`redis`] does.
async fn redis_with_password() -> Redis {
    require(&["redis-server"]);
    Redis::start_with_password(None, Some(REDIS_PASSWORD))
        .await
        .expect("redis-server starts")
}

/// `state.replay` for `redis` with the password from the environment.
fn replay_from_env(redis: &Redis) -> String {
    format!(
        "redis://:${{TOOLHOST_REDIS_PASSWORD}}@127.0.0.1:{}/0",
        redis.port
    )
}

#[tokio::test]
#[ignore = "needs redis-server (apt-get install -y redis-server); cargo xtask test runs it when installed"]
async fn a_replay_store_password_from_the_environment_works_and_is_never_shown() {
    let redis = redis_with_password().await;
    let server = Recorder::start().await;
    let env = [("TOOLHOST_REDIS_PASSWORD", REDIS_PASSWORD)];
    let replay = replay_from_env(&redis);
    let a = replica_with_env(&server, &["k1"], &replay, &env).await;
    let b = replica_with_env(&server, &["k1"], &replay, &env).await;

    let state = sealed_state(&a, &server).await;
    assert_eq!(redeem(&b, &server, &state).await.unwrap(), "posted: 200");
    let replayed = redeem(&a, &server, &state).await.unwrap_err();
    assert!(replayed.contains("already used"), "{replayed}");
    assert_eq!(server.posts(), 1, "spent once, in the store both share");
    for replica in [&a, &b] {
        let stderr = replica.stderr.lock().unwrap().clone();
        assert!(!stderr.contains(REDIS_PASSWORD), "{stderr}");
        assert!(!stderr.contains("holds a password"), "{stderr}");
    }
}

#[tokio::test]
#[ignore = "needs redis-server (apt-get install -y redis-server); cargo xtask test runs it when installed"]
async fn a_refused_replay_store_password_fails_clearly_and_spends_nothing() {
    let redis = redis_with_password().await;
    let server = Recorder::start().await;
    let wrong = "wrong-pw-40c2d9e8a1";
    let sealer = replica_with_env(
        &server,
        &["k1"],
        &replay_from_env(&redis),
        &[("TOOLHOST_REDIS_PASSWORD", REDIS_PASSWORD)],
    )
    .await;
    let state = sealed_state(&sealer, &server).await;

    // A wrong password from the environment, and none at all.
    let with_wrong = replica_with_env(
        &server,
        &["k1"],
        &replay_from_env(&redis),
        &[("TOOLHOST_REDIS_PASSWORD", wrong)],
    )
    .await;
    let without = replica(&server, &["k1"], &redis.url).await;
    for replica in [&with_wrong, &without] {
        let refused = redeem(replica, &server, &state).await.unwrap_err();
        let envelope: Value = serde_json::from_str(&refused).unwrap();
        let issue = &envelope["issues"][0];
        assert_eq!(issue["code"], "TRANSIENT", "{envelope}");
        let message = issue["message"].as_str().unwrap();
        assert!(message.contains("the replay store"), "{message}");
        assert!(
            !message.contains("Redis") && !message.contains("127.0.0.1"),
            "the client learns neither the store's address nor why: {message}"
        );
        assert!(!message.contains(wrong) && !message.contains(REDIS_PASSWORD));
        let stderr = replica
            .wait_for_stderr("Redis refused the credentials")
            .await;
        assert!(
            !stderr.contains(wrong) && !stderr.contains(REDIS_PASSWORD),
            "{stderr}"
        );
    }
    assert_eq!(
        server.posts(),
        0,
        "never applied without the single-use check"
    );
    // Nothing was spent: the right password redeems the same answer.
    assert_eq!(
        redeem(&sealer, &server, &state).await.unwrap(),
        "posted: 200"
    );
}

#[tokio::test]
#[ignore = "needs redis-server (apt-get install -y redis-server); cargo xtask test runs it when installed"]
async fn a_password_written_in_the_replay_url_is_warned_about_and_not_logged() {
    let redis = redis_with_password().await;
    let server = Recorder::start().await;
    let encoded =
        percent_encoding::utf8_percent_encode(REDIS_PASSWORD, percent_encoding::NON_ALPHANUMERIC);
    let literal = format!("redis://:{encoded}@127.0.0.1:{}/0", redis.port);
    let host = replica(&server, &["k1"], &literal).await;
    let stderr = host
        .wait_for_stderr("holds a password written in the config file")
        .await;
    assert!(stderr.contains("${TOOLHOST_REDIS_PASSWORD}"), "{stderr}");
    // It works, and the password shows nowhere.
    let state = sealed_state(&host, &server).await;
    assert_eq!(redeem(&host, &server, &state).await.unwrap(), "posted: 200");
    let stderr = host.stderr.lock().unwrap().clone();
    assert!(!stderr.contains(REDIS_PASSWORD), "{stderr}");
    assert!(!stderr.contains(&encoded.to_string()), "{stderr}");
}
