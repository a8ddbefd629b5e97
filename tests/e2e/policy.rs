//! `[[policy.rules]]` through the real binary: each outcome (allow, deny,
//! confirm, limit, hide) in both eras, decisions named in the audit trail
//! and the metrics, conditions over a real JWT's claims, rules that fail
//! closed, reloads that change decisions at once (and a broken rule that
//! changes nothing), limits two replicas share through a real Redis, and
//! `toolhost policy test`. Hiding everywhere is in `access.rs`, beside
//! `[[access]]`, with the same checks.

use std::process::Stdio;

use serde_json::json;
use toolhost_test_infra::idp::{Idp, SigningKey};

use crate::support::audit::{records, trail_of, with_trail};
use crate::support::infra::{Redis, require, sha256_hex};
use crate::support::metrics::Scrape;
use crate::support::offers::rpc_error;
use crate::support::{
    Changes, ERAS, Elicitation, Era, Host, HostOptions, component, test_cache_home,
    write_then_rename,
};

const RESOURCE: &str = "https://mcp.example.com/mcp";

/// A rule refusing greetings of mallory, with the reason the caller sees.
const NO_MALLORY: &str = r#"
[[policy.rules]]
name = "no-mallory"
when = 'tool.name == "greet" && args.name == "mallory"'
outcome = "deny"
reason = "nobody greets mallory here"
"#;

/// `hello` over stdio with `config`, a client of `era` answering
/// confirmations with `elicitation`.
async fn hello(era: Era, elicitation: Elicitation, config: &str) -> Host {
    Host::start(
        HostOptions::new(&["hello"])
            .era(era)
            .elicitation(elicitation)
            .config(config.to_string()),
    )
    .await
}

#[tokio::test]
async fn a_deny_rule_refuses_with_its_reason_and_the_trail_names_the_rule_and_the_policy_version() {
    for era in ERAS {
        let host = hello(era, Elicitation::Unsupported, &with_trail(NO_MALLORY)).await;
        let issue = host.tool_error("greet", json!({"name": "mallory"})).await;
        assert_eq!(issue["code"], "PERMISSION_DENIED", "{era:?}: {issue}");
        assert_eq!(issue["message"], "nobody greets mallory here", "{era:?}");
        let out = host.ok("greet", json!({"name": "alice"})).await;
        assert_eq!(out["message"], "Hello, alice!", "{era:?}");

        let trail = records(&trail_of(&host));
        let denied = trail
            .iter()
            .find(|r| r["result"] == "refused")
            .expect("the denied call is on record");
        assert_eq!(denied["policy"]["rule"], "no-mallory", "{denied}");
        assert_eq!(denied["policy"]["outcome"], "deny", "{denied}");
        assert_eq!(denied["issues"], json!(["PERMISSION_DENIED"]), "{denied}");
        let version = denied["policy"]["version"].as_str().unwrap();
        assert_eq!(version.len(), 12, "a short hash of the rules: {version}");
        let allowed = trail.iter().find(|r| r["result"] == "ok").unwrap();
        assert_eq!(
            allowed["policy"],
            json!({"rule": "default", "outcome": "allow", "version": version}),
            "no rule decided: the default, under the same version"
        );
    }
}

#[tokio::test]
async fn a_confirm_rule_asks_the_user_before_a_tool_that_would_not_ask_runs() {
    let rule = r#"
[[policy.rules]]
name = "ask-before-greeting"
when = 'tool.name == "greet"'
outcome = "confirm"
"#;
    for era in ERAS {
        let host = hello(era, Elicitation::Accept(true), rule).await;
        let out = host.ok("greet", json!({"name": "ada"})).await;
        assert_eq!(out["message"], "Hello, ada!", "{era:?}");
        let seen = host.handler.seen.lock().unwrap().prompts.clone();
        assert_eq!(seen.len(), 1, "{era:?}: one question: {seen:?}");
        let question = &seen[0];
        assert!(
            question.starts_with("toolhost: the operator's policy (rule \"ask-before-greeting\")"),
            "{era:?}: the host's own words: {question}"
        );
        assert!(question.contains("\"greet\""), "{question}");
        assert!(
            question.contains("\"name\": \"ada\""),
            "the arguments are shown: {question}"
        );

        for (answer, expected) in [
            (Elicitation::Accept(false), "declined"),
            (Elicitation::Decline, "cancelled"),
            (Elicitation::Unsupported, "cannot ask"),
        ] {
            let host = hello(era, answer, rule).await;
            let issue = host.tool_error("greet", json!({"name": "ada"})).await;
            assert_eq!(issue["code"], "PERMISSION_DENIED", "{era:?} {answer:?}");
            let message = issue["message"].as_str().unwrap();
            assert!(
                message.contains(expected) && message.contains("did not run"),
                "{era:?} {answer:?}: {message}"
            );
        }
    }
}

#[tokio::test]
async fn a_limit_refuses_past_its_budget_with_when_to_retry_and_counts_per_key() {
    let rule = r#"
[[policy.rules]]
name = "three-greetings-per-name"
when = 'tool.name == "greet"'
outcome = "limit"
limit = { count = 3, window_secs = 3600, key = 'identity.key + "/" + args.name' }
"#;
    for era in ERAS {
        let host = hello(era, Elicitation::Unsupported, rule).await;
        for _ in 0..3 {
            host.ok("greet", json!({"name": "ada"})).await;
        }
        let issue = host.tool_error("greet", json!({"name": "ada"})).await;
        assert_eq!(issue["code"], "RATE_LIMIT", "{era:?}: {issue}");
        let retry = issue["retry_after_ms"].as_u64().expect("when to retry");
        assert!(retry > 0 && retry <= 3_600_000, "{retry}");
        assert!(
            issue["message"]
                .as_str()
                .unwrap()
                .contains("three-greetings-per-name"),
            "{issue}"
        );
        // Another key has its own budget.
        host.ok("greet", json!({"name": "grace"})).await;
    }
}

#[tokio::test]
async fn a_request_state_this_server_did_not_seal_is_refused_before_the_rules_and_never_skips_a_limit()
 {
    // A retry is not counted again (it was when it first came): a made-up
    // `requestState` must not pass for one, from any client.
    let rule = r#"
[[policy.rules]]
name = "one-greeting"
when = 'tool.name == "greet"'
outcome = "limit"
limit = { count = 1, window_secs = 3600 }
"#;
    let clients = [
        (Era::Legacy, Elicitation::Unsupported),
        (Era::Legacy, Elicitation::Accept(true)),
        (Era::Modern, Elicitation::Unsupported),
        (Era::Modern, Elicitation::Accept(true)),
    ];
    for (era, elicitation) in clients {
        let case = format!("{era:?}, {elicitation:?}");
        let host = hello(era, elicitation, &with_trail(rule)).await;
        host.ok("greet", json!({"name": "ada"})).await;
        for _ in 0..3 {
            let params = rmcp::model::CallToolRequestParams::new("greet")
                .with_arguments(json!({"name": "ada"}).as_object().unwrap().clone())
                .with_request_state("forged".to_string());
            let (_, message) = rpc_error(host.client.call_tool_once(params).await);
            assert!(message.contains("requestState"), "{case}: {message}");
        }
        let issue = host.tool_error("greet", json!({"name": "ada"})).await;
        assert_eq!(issue["code"], "RATE_LIMIT", "{case}: the budget held");
        let trail = records(&trail_of(&host));
        let ran = trail.iter().filter(|r| r["result"] == "ok").count();
        assert_eq!(ran, 1, "{case}: one greeting ran: {trail:#?}");
        let forged = trail
            .iter()
            .filter(|r| r["issues"] == json!(["INVALID_REQUEST_STATE"]))
            .count();
        assert_eq!(forged, 3, "{case}: each forged state on record");
    }
}

#[tokio::test]
async fn a_reload_changes_decisions_at_once_and_a_rule_that_does_not_compile_changes_nothing() {
    let host = hello(Era::Legacy, Elicitation::Unsupported, "").await;
    host.ok("greet", json!({"name": "mallory"})).await;

    host.write_config(NO_MALLORY);
    host.wait_for_stderr("configuration reloaded").await;
    let issue = host.tool_error("greet", json!({"name": "mallory"})).await;
    assert_eq!(issue["message"], "nobody greets mallory here");

    // A broken rule: the whole file is refused, and the running rules stay.
    let broken = format!(
        "{NO_MALLORY}\n[[policy.rules]]\nname = \"broken\"\noutcome = \"deny\"\nwhen = \"tool.name == == 'x'\"\n"
    );
    host.write_config(&broken);
    let stderr = host.wait_for_stderr("was not applied").await;
    assert!(
        stderr.contains("`policy.rules` entry 2 (\"broken\"), `when`"),
        "{stderr}"
    );
    assert!(stderr.contains("of the config file"), "{stderr}");
    let issue = host.tool_error("greet", json!({"name": "mallory"})).await;
    assert_eq!(issue["message"], "nobody greets mallory here");
    host.ok("greet", json!({"name": "alice"})).await;
}

#[tokio::test]
async fn a_rule_settled_once_for_a_tool_is_settled_again_when_a_reload_changes_the_rules() {
    // Rules reading only the tool and the plugin are worked out once per
    // tool served; a reload must work them out again from the new rules,
    // for calls (deny) and for what the caller is shown (hide) alike.
    let deny = |tool: &str| {
        format!(
            "[[policy.rules]]\nname = \"closed\"\nwhen = 'tool.name == \"{tool}\"'\n\
             outcome = \"deny\"\nreason = \"{tool} is closed\"\n"
        )
    };
    let host = hello(Era::Legacy, Elicitation::Unsupported, &deny("greet")).await;
    for _ in 0..2 {
        let issue = host.tool_error("greet", json!({"name": "ada"})).await;
        assert_eq!(issue["message"], "greet is closed");
    }
    host.write_config(&deny("wave"));
    host.wait_for_stderr("configuration reloaded").await;
    let out = host.ok("greet", json!({"name": "ada"})).await;
    assert_eq!(out["message"], "Hello, ada!");

    let hide = |tool: &str| {
        format!(
            "[[policy.rules]]\nname = \"unseen\"\n\
             when = 'plugin.name == \"hello\" && tool.name == \"{tool}\"'\noutcome = \"hide\"\n"
        )
    };
    let host = hello(Era::Legacy, Elicitation::Unsupported, &hide("greet")).await;
    for _ in 0..2 {
        assert!(host.tools().await.iter().all(|t| t.name != "greet"));
        let (_, message) = rpc_error(host.call("greet", json!({"name": "ada"})).await);
        assert!(message.contains("unknown tool"), "{message}");
    }
    host.write_config(&hide("wave"));
    host.wait_for_stderr("configuration reloaded").await;
    assert!(host.tools().await.iter().any(|t| t.name == "greet"));
    let out = host.ok("greet", json!({"name": "ada"})).await;
    assert_eq!(out["message"], "Hello, ada!");
}

#[tokio::test]
async fn a_rule_reading_the_caller_decides_per_caller_for_the_same_tool() {
    // The tool's part of the condition is settled once; the caller's
    // part is each caller's own.
    let rules = r#"
[[policy.rules]]
name = "not-alice"
when = 'tool.name == "greet" && identity.subject == "alice"'
outcome = "deny"
reason = "alice may not greet"
"#;
    let key = SigningKey::new("k1");
    let idp = Idp::start(&[&key]).await;
    for era in ERAS {
        let alice = hello_over_http(
            era,
            &token(&key, &idp, "alice", &[]),
            with_auth(&idp, rules),
        )
        .await;
        let issue = alice.tool_error("greet", json!({"name": "x"})).await;
        assert_eq!(issue["message"], "alice may not greet", "{era:?}");
        let bob = alice
            .another_client(
                era,
                Elicitation::Unsupported,
                Some(&token(&key, &idp, "bob", &[])),
            )
            .await;
        bob.ok("greet", json!({"name": "x"})).await;
        let issue = alice.tool_error("greet", json!({"name": "y"})).await;
        assert_eq!(issue["message"], "alice may not greet", "{era:?}");
    }
}

#[tokio::test]
async fn a_rule_that_does_not_compile_stops_the_start_naming_its_key_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.wasm"), component("hello")).unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        "[[policy.rules]]\nname = \"support-only\"\noutcome = \"deny\"\nwhen = '''\nidentity.subject == \"a\" &&\n  )'''\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["serve", "--plugins"])
        .arg(dir.path())
        .arg("--config")
        .arg(&config)
        .env("XDG_CACHE_HOME", test_cache_home())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty(), "stdout carries the protocol only");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`policy.rules` entry 1 (\"support-only\"), `when`: line 6, column"),
        "{stderr}"
    );
}

/// The `hello` component served over HTTP with `config`, its client in
/// `era` sending `bearer`.
async fn hello_over_http(era: Era, bearer: &str, config: String) -> Host {
    Host::start(
        HostOptions::new(&["hello"])
            .http()
            .bearer(bearer)
            .era(era)
            .config(config),
    )
    .await
}

/// `[auth]` trusting `idp`'s tokens and a static token for a bot, then
/// `rules`.
fn with_auth(idp: &Idp, rules: &str) -> String {
    format!(
        "[auth]\nresource = \"{RESOURCE}\"\n\
         [auth.oauth]\nissuer = \"{}\"\njwks_url = \"{}\"\nalgorithms = [\"ES256\"]\nscopes = [\"mcp:tools\"]\n\
         [[auth.tokens]]\nsubject = \"ci-bot\"\nsha256 = \"{}\"\nscopes = [\"mcp:tools\"]\n{rules}",
        idp.issuer,
        idp.jwks_url,
        sha256_hex(BOT_TOKEN),
    )
}

const BOT_TOKEN: &str = "ci-bot-static-token-0123456789abcdef";

/// A token of `idp` for `subject` in `groups`.
fn token(key: &SigningKey, idp: &Idp, subject: &str, groups: &[&str]) -> String {
    let now = jsonwebtoken::get_current_timestamp();
    key.sign(&json!({
        "iss": idp.issuer, "aud": RESOURCE, "sub": subject,
        "iat": now, "nbf": now - 10, "exp": now + 600,
        "scope": "mcp:tools", "groups": groups,
    }))
}

#[tokio::test]
async fn conditions_read_a_real_tokens_claims_and_a_missing_claim_fails_closed() {
    let rules = r#"
[[policy.rules]]
name = "support-only"
when = 'tool.name == "greet" && !("support" in identity.claims.groups)'
outcome = "deny"
reason = "only the support group may greet"
"#;
    let key = SigningKey::new("k1");
    let idp = Idp::start(&[&key]).await;
    for era in ERAS {
        let support = hello_over_http(
            era,
            &token(&key, &idp, "alice", &["support"]),
            with_auth(&idp, rules),
        )
        .await;
        support.ok("greet", json!({"name": "x"})).await;
        let other = support
            .another_client(
                era,
                Elicitation::Unsupported,
                Some(&token(&key, &idp, "bob", &["sales"])),
            )
            .await;
        let issue = other.tool_error("greet", json!({"name": "x"})).await;
        assert_eq!(
            issue["message"], "only the support group may greet",
            "{era:?}"
        );

        // The static token has no claims: the rule cannot say, so it denies.
        let bot = support
            .another_client(era, Elicitation::Unsupported, Some(BOT_TOKEN))
            .await;
        let issue = bot.tool_error("greet", json!({"name": "x"})).await;
        assert_eq!(issue["code"], "PERMISSION_DENIED");
        assert!(
            issue["message"]
                .as_str()
                .unwrap()
                .contains("\"support-only\" could not be evaluated"),
            "{issue}"
        );
        let log = support
            .wait_for_stderr("policy rule \"support-only\" could not be evaluated")
            .await;
        assert!(log.contains("groups"), "the operator is told why: {log}");
    }
}

#[tokio::test]
async fn decisions_are_counted_by_outcome_and_rule() {
    let config = format!("{NO_MALLORY}\n[host]\nmetrics = \"127.0.0.1:0\"\n");
    let host = hello(Era::Legacy, Elicitation::Unsupported, &config).await;
    host.tool_error("greet", json!({"name": "mallory"})).await;
    host.ok("greet", json!({"name": "ada"})).await;
    host.ok("greet", json!({"name": "grace"})).await;
    let log = host.wait_for_stderr("/metrics").await;
    let start = log.find("metrics on http://").unwrap() + "metrics on ".len();
    let rest = &log[start..];
    let url = &rest[..rest.find("/metrics").unwrap() + "/metrics".len()];
    let scrape = Scrape::of(url).await;
    scrape.expect(
        "toolhost_policy_decisions_total",
        &[("outcome", "deny"), ("rule", "no-mallory")],
        1.0,
    );
    scrape.expect(
        "toolhost_policy_decisions_total",
        &[("outcome", "allow"), ("rule", "default")],
        2.0,
    );
}

#[tokio::test]
#[ignore = "needs redis-server (apt-get install -y redis-server); cargo xtask test runs it when installed"]
async fn two_replicas_share_one_limit_through_redis() {
    require(&["redis-server"]);
    let redis = Redis::start(None).await.expect("redis-server starts");
    let config = format!(
        "[state]\nreplay = \"{}\"\n\n[[policy.rules]]\nname = \"four-in-all\"\noutcome = \"limit\"\nlimit = {{ count = 4, window_secs = 3600 }}\n",
        redis.url
    );
    let replica = || {
        Host::start(
            HostOptions::new(&["hello"])
                .http()
                .era(Era::Modern)
                .config(config.clone()),
        )
    };
    let a = replica().await;
    let b = replica().await;
    for host in [&a, &b, &a, &b] {
        host.ok("greet", json!({"name": "ada"})).await;
    }
    for host in [&a, &b] {
        let issue = host.tool_error("greet", json!({"name": "ada"})).await;
        assert_eq!(
            issue["code"], "RATE_LIMIT",
            "the budget is one for both replicas: {issue}"
        );
        // Retry when the hour the window is ends, not an hour after its
        // first count.
        let retry = issue["retry_after_ms"].as_u64().expect("when to retry");
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let left = 3_600_000 - now_ms % 3_600_000;
        assert!(
            retry <= left + 1_000,
            "{retry} ms, the window ends in {left} ms"
        );
    }
    // Redis gone: a limit that cannot count refuses, retryably.
    redis.stop().await;
    let issue = a.tool_error("greet", json!({"name": "grace"})).await;
    assert_eq!(issue["code"], "TRANSIENT", "{issue}");
    assert!(
        issue["message"]
            .as_str()
            .unwrap()
            .contains("cannot be reached"),
        "{issue}"
    );
}

#[tokio::test]
async fn policy_test_prints_the_decision_and_the_rule_that_makes_it() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    std::fs::write(plugins.join("hello.wasm"), component("hello")).unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        format!(
            "{NO_MALLORY}\n[[policy.rules]]\nname = \"hide-fetch-from-guests\"\noutcome = \"hide\"\n\
             when = 'tool.name == \"fetch_url\" && !(\"staff\" in identity.claims.groups)'\n"
        ),
    )
    .unwrap();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .args(["policy", "test", "--plugins"])
            .arg(&plugins)
            .arg("--config")
            .arg(&config)
            .args(args)
            .env("XDG_CACHE_HOME", test_cache_home())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let guest = r#"{"subject": "alice", "claims": {"groups": ["guests"]}}"#;
    let denied = run(&[
        "--identity",
        guest,
        "--call",
        "greet",
        r#"{"name": "mallory"}"#,
    ]);
    assert!(
        denied.contains("deny, by rule \"no-mallory\": nobody greets mallory here"),
        "{denied}"
    );
    let allowed = run(&["--identity", guest, "--call", "greet", r#"{"name": "ada"}"#]);
    assert!(allowed.contains("allow, by rule \"default\""), "{allowed}");
    let hidden = run(&["--identity", guest, "--call", "fetch_url"]);
    assert!(
        hidden.contains("hidden by rule \"hide-fetch-from-guests\""),
        "{hidden}"
    );
    let staff = r#"{"subject": "sam", "claims": {"groups": ["staff"]}}"#;
    let shown = run(&["--identity", staff, "--call", "fetch_url"]);
    assert!(shown.contains("allow"), "{shown}");
    assert!(denied.starts_with("policy version "), "{denied}");
}

#[tokio::test]
async fn credentials_chosen_per_caller_reach_the_upstream_and_a_caller_without_one_sends_nothing() {
    let alice = "alice-static-token-0123456789abcdef";
    let bob = "bob-static-token-0123456789abcdef";
    let secrets = tempfile::tempdir().unwrap();
    std::fs::create_dir(secrets.path().join("hello")).unwrap();
    std::fs::write(secrets.path().join("hello/alice"), "alice-upstream-key\n").unwrap();
    for era in ERAS {
        let server = crate::support::Recorder::start().await;
        let token = |subject: &str, token: &str| {
            format!(
                "[[auth.tokens]]\nsubject = \"{subject}\"\nsha256 = \"{}\"\nscopes = [\"mcp:tools\"]\n",
                sha256_hex(token)
            )
        };
        let config = format!(
            "[host]\nsecrets_dir = {:?}\n\n[auth]\nresource = \"{RESOURCE}\"\n{}{}\
             [plugins.hello]\n{}[[plugins.hello.credentials]]\nhost = \"127.0.0.1\"\nport = {}\n\
             header = \"Authorization\"\nvalue = \"Bearer ${{secret:hello/{{subject}}}}\"\n",
            secrets.path().display().to_string(),
            token("alice", alice),
            token("bob", bob),
            server.allow_block("hello"),
            server.port,
        );
        let host = hello_over_http(era, alice, with_trail(&config)).await;
        let fetch = json!({"url": format!("{}/orders", server.url)});
        let out = host.ok("fetch_url", fetch.clone()).await;
        assert_eq!(out["status"], 200, "{era:?}");
        assert!(
            !out.to_string().contains("alice-upstream-key"),
            "the component never sees the value: {out}"
        );
        let received = server.received();
        assert_eq!(received.len(), 1);
        assert_eq!(
            received[0].authorization.as_deref(),
            Some("Bearer alice-upstream-key"),
            "{era:?}: alice's own key"
        );

        let bob_client = host
            .another_client(era, Elicitation::Unsupported, Some(bob))
            .await;
        let issue = bob_client.tool_error("fetch_url", fetch).await;
        assert_eq!(issue["code"], "PERMISSION_DENIED", "{era:?}: {issue}");
        assert!(
            issue["message"]
                .as_str()
                .unwrap()
                .contains("there is none for this caller"),
            "{issue}"
        );
        assert_eq!(server.received().len(), 1, "{era:?}: nothing sent for bob");

        let trail = records(&trail_of(&host));
        let alices = trail.iter().find(|r| r["caller"] == "token:alice").unwrap();
        assert_eq!(alices["credentials"], json!(["hello/alice"]), "{alices}");
        let bobs = trail.iter().find(|r| r["caller"] == "token:bob").unwrap();
        assert!(bobs.get("credentials").is_none(), "{bobs}");
        let text = std::fs::read_to_string(trail_of(&host)).unwrap();
        assert!(!text.contains("alice-upstream-key"), "no value on record");
    }
}

#[tokio::test]
async fn each_callers_own_statuspro_key_reaches_the_sandbox_and_never_a_component() {
    // The sandbox accepts one key per person, as an API with personal keys
    // does; its request log records which key each request carried.
    let sandbox = statuspro_sandbox::start(statuspro_sandbox::SandboxConfig {
        api_key: "alice-statuspro-key".into(),
        also_accepted_keys: vec!["bob-statuspro-key".into()],
        ..Default::default()
    })
    .await
    .unwrap();
    let secrets = tempfile::tempdir().unwrap();
    std::fs::create_dir(secrets.path().join("statuspro")).unwrap();
    for (subject, key) in [
        ("alice", "alice-statuspro-key"),
        ("bob", "bob-statuspro-key"),
    ] {
        std::fs::write(secrets.path().join("statuspro").join(subject), key).unwrap();
    }
    let callers = [
        ("alice", "alice-static-token-0123456789abcdef"),
        ("bob", "bob-static-token-0123456789abcdef"),
        ("carol", "carol-static-token-0123456789abcdef"),
    ];
    let tokens: String = callers
        .iter()
        .map(|(subject, token)| {
            format!(
                "[[auth.tokens]]\nsubject = \"{subject}\"\nsha256 = \"{}\"\nscopes = [\"mcp:tools\"]\n",
                sha256_hex(token)
            )
        })
        .collect();
    let block = crate::statuspro::config(&sandbox, "")
        .replace("${STATUSPRO_API_KEY}", "${secret:statuspro/{subject}}");
    assert!(block.contains("{subject}"), "{block}");
    let config = format!(
        "[host]\nsecrets_dir = {:?}\n\n[auth]\nresource = \"{RESOURCE}\"\n{tokens}{block}",
        secrets.path().display().to_string(),
    );
    let order = statuspro_sandbox::seed::order_with_viable_next("st000003").unwrap();
    for era in ERAS {
        sandbox.clear_requests();
        let host = Host::start(
            HostOptions::new(&crate::statuspro::COMPONENTS)
                .http()
                .bearer(callers[0].1)
                .era(era)
                .config(with_trail(&config)),
        )
        .await;
        let alices = host.ok("get_order", json!({"order_id": order})).await;
        let bob = host
            .another_client(era, Elicitation::Unsupported, Some(callers[1].1))
            .await;
        let bobs = bob.ok("get_order", json!({"order_id": order})).await;
        assert_eq!(alices, bobs, "{era:?}: the same order for both");
        for out in [&alices, &bobs] {
            assert!(
                !out.to_string().contains("statuspro-key"),
                "{era:?}: no key reaches a component's output: {out}"
            );
        }
        let keys: Vec<_> = sandbox
            .requests()
            .into_iter()
            .map(|r| r.api_key.unwrap_or_default())
            .collect();
        let split = keys
            .iter()
            .position(|k| k == "bob-statuspro-key")
            .expect("bob's call reached the sandbox with bob's key");
        assert!(split > 0, "{era:?}: {keys:?}");
        assert!(
            keys[..split].iter().all(|k| k == "alice-statuspro-key")
                && keys[split..].iter().all(|k| k == "bob-statuspro-key"),
            "{era:?}: each call carried its caller's own key: {keys:?}"
        );

        let carol = host
            .another_client(era, Elicitation::Unsupported, Some(callers[2].1))
            .await;
        let refused = carol
            .tool_error("get_order", json!({"order_id": order}))
            .await;
        assert_eq!(refused["code"], "PERMISSION_DENIED", "{era:?}: {refused}");
        assert_eq!(
            sandbox.requests().len(),
            keys.len(),
            "{era:?}: nothing sent for a caller with no key"
        );

        let trail = records(&trail_of(&host));
        for (subject, _) in &callers[..2] {
            let record = trail
                .iter()
                .find(|r| r["caller"] == format!("token:{subject}"))
                .unwrap();
            assert_eq!(
                record["credentials"],
                json!([format!("statuspro/{subject}")]),
                "{record}"
            );
        }
        let text = std::fs::read_to_string(trail_of(&host)).unwrap();
        assert!(!text.contains("statuspro-key"), "no key on record");
    }
}

#[tokio::test]
async fn a_hide_rule_for_the_stdio_caller_hides_from_lists_reads_and_listen_acknowledgements() {
    let rule = r#"
[[policy.rules]]
name = "no-offers-over-stdio"
outcome = "hide"
when = 'plugin.name == "offers" && identity.source == "stdio"'
"#;
    let host = Host::start(
        HostOptions::new(&["offers", "hello"])
            .era(Era::Modern)
            .config(rule.to_string()),
    )
    .await;
    let tools = host.tools().await;
    assert!(tools.iter().any(|t| t.name == "greet"), "{tools:?}");
    assert!(!tools.iter().any(|t| t.name == "color_count"), "{tools:?}");
    assert!(host.client.list_all_resources().await.unwrap().is_empty());
    let read = crate::support::offers::read(&host.client, "test://readme").await;
    assert!(read.is_err(), "a hidden resource reads as unknown");
    let stream = host
        .client
        .listen(
            rmcp::model::SubscriptionFilter::builder()
                .resource_subscriptions(["test://readme", "test://colors/red"])
                .build(),
        )
        .await
        .expect("the listen stream opens");
    assert!(
        stream
            .acknowledged()
            .resource_subscriptions
            .clone()
            .unwrap_or_default()
            .is_empty(),
        "nothing hidden is acknowledged"
    );
}

#[tokio::test]
async fn a_callers_token_is_exchanged_for_the_upstreams_once_and_a_token_the_provider_refuses_sends_nothing()
 {
    use base64::Engine;
    use toolhost_test_infra::idp::AuthorizationServer;
    let key = SigningKey::new("k1");
    let idp = Idp::start(&[&key]).await;
    let provider = AuthorizationServer::start(&idp, key.clone(), "toolhost").await;
    for era in ERAS {
        let server = crate::support::Recorder::start().await;
        let config = format!(
            "{}\n[token_exchange.upstream]\ntoken_endpoint = \"{}\"\nclient_id = \"toolhost\"\n\
             audience = \"https://api.example.com\"\nscope = \"orders:read\"\n\n\
             [plugins.hello]\n{}[[plugins.hello.credentials]]\nhost = \"127.0.0.1\"\nport = {}\n\
             header = \"Authorization\"\nvalue = \"Bearer ${{exchange:upstream}}\"\n",
            with_auth(&idp, ""),
            provider.token_endpoint,
            server.allow_block("hello"),
            server.port,
        );
        let alice = token(&key, &idp, "alice", &["support"]);
        let host = hello_over_http(era, &alice, with_trail(&config)).await;
        let granted = provider.exchanges.load(std::sync::atomic::Ordering::SeqCst);
        let fetch = json!({"url": format!("{}/orders", server.url)});
        for _ in 0..2 {
            let out = host.ok("fetch_url", fetch.clone()).await;
            assert_eq!(out["status"], 200, "{era:?}");
        }
        assert_eq!(
            provider.exchanges.load(std::sync::atomic::Ordering::SeqCst) - granted,
            1,
            "{era:?}: exchanged once, then cached"
        );
        let received = server.received();
        assert_eq!(received.len(), 2);
        let sent = received[0].authorization.clone().unwrap();
        let jwt = sent.strip_prefix("Bearer ").expect("a bearer token");
        assert_ne!(jwt, alice, "not the caller's own token");
        let payload: serde_json::Value = serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(jwt.split('.').nth(1).unwrap())
                .unwrap(),
        )
        .unwrap();
        assert_eq!(payload["sub"], "alice", "{payload}");
        assert_eq!(payload["aud"], "https://api.example.com");
        assert_eq!(payload["act"]["sub"], "toolhost");

        // A static token is no access token the provider issued: refused,
        // so no credential, and nothing is sent.
        let bot = host
            .another_client(era, Elicitation::Unsupported, Some(BOT_TOKEN))
            .await;
        let issue = bot.tool_error("fetch_url", fetch).await;
        assert_eq!(issue["code"], "PERMISSION_DENIED", "{era:?}: {issue}");
        assert_eq!(
            server.received().len(),
            2,
            "{era:?}: nothing sent for the bot"
        );

        let trail = records(&trail_of(&host));
        let alices = trail.iter().find(|r| r["caller"] == "jwt:alice").unwrap();
        assert_eq!(
            alices["credentials"],
            json!(["exchange:upstream"]),
            "{alices}"
        );
        let text = std::fs::read_to_string(trail_of(&host)).unwrap();
        assert!(
            !text.contains(jwt) && !text.contains(&alice),
            "no token on record"
        );
    }
}

#[tokio::test]
async fn a_rule_over_the_components_digest_follows_the_build_a_reload_brings() {
    // `plugin` is built once per component served, not once per request:
    // a new build of the same file is a new component to the rules at once.
    let withdrawn = component("hello");
    let digest = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&withdrawn));
    let rule = format!(
        "[[policy.rules]]\nname = \"withdrawn-build\"\noutcome = \"deny\"\n\
         when = 'plugin.digest == \"sha256:{digest}\"'\nreason = \"this build of hello is withdrawn\"\n"
    );
    let host = hello(Era::Legacy, Elicitation::Unsupported, &rule).await;
    let issue = host.tool_error("greet", json!({"name": "alice"})).await;
    assert_eq!(issue["message"], "this build of hello is withdrawn");
    let issue = host.tool_error("greet", json!({"name": "bob"})).await;
    assert_eq!(issue["message"], "this build of hello is withdrawn");

    // Another build: the same code with a custom section (id 0, name
    // "build", content "2") appended, so other bytes and another digest.
    let mut rebuilt = withdrawn.clone();
    rebuilt.extend_from_slice(&[0, 7, 5, b'b', b'u', b'i', b'l', b'd', b'2']);
    let mut changes = Changes::open(&host, Era::Legacy).await;
    write_then_rename(&host.plugins, "hello.wasm", &rebuilt);
    changes.next(&host).await;
    host.ok("greet", json!({"name": "alice"})).await;
}
