//! Static-token names and JWT subjects are separate namespaces: a JWT whose
//! `sub` is `alice` is not the static token named `alice`. It gets neither
//! that token's `[[access]]` grants nor its sealed confirmation states; a
//! rule's `subjects` name callers of one `source`, which the config must
//! say where `[auth]` accepts both. Through the real binary over Streamable
//! HTTP, with a real identity provider's signed tokens.

use rmcp::model::{CallToolRequestParams, CallToolResponse};
use serde_json::{Value, json};
use toolhost_test_infra::idp::{Idp, SigningKey};

use crate::support::infra::sha256_hex;
use crate::support::session::{refusal, retry_with_state};
use crate::support::{Elicitation, Era, Host, HostOptions, Recorder};

const RESOURCE: &str = "https://mcp.example.com/mcp";
const ALICE_TOKEN: &str = "alice-static-token-0123456789abcdef";

/// `[auth]` accepting the static token alice and `idp`'s JWTs, with `access`.
fn auth(idp: &Idp, access: &str) -> String {
    format!(
        "[auth]\nresource = \"{RESOURCE}\"\n\
         [auth.oauth]\nissuer = \"{}\"\njwks_url = \"{}\"\nalgorithms = [\"ES256\"]\nleeway_secs = 5\n\
         [[auth.tokens]]\nsubject = \"alice\"\nsha256 = \"{}\"\n{access}",
        idp.issuer,
        idp.jwks_url,
        sha256_hex(ALICE_TOKEN)
    )
}

/// A JWT from `idp` for `subject`.
fn jwt(idp: &Idp, key: &SigningKey, subject: &str) -> String {
    let now = jsonwebtoken::get_current_timestamp();
    key.sign(&json!({
        "iss": idp.issuer, "aud": RESOURCE, "sub": subject,
        "iat": now, "nbf": now - 10, "exp": now + 600,
    }))
}

#[tokio::test]
async fn a_jwt_with_a_static_tokens_name_gets_none_of_its_grants() {
    let key = SigningKey::new("k1");
    let idp = Idp::start(&[&key]).await;
    let access = "[[access]]\nsource = \"token\"\nsubjects = [\"alice\"]\nplugins = [\"hello\"]\n";
    for era in [Era::Legacy, Era::Modern] {
        let host = Host::start(
            HostOptions::new(&["hello"])
                .http()
                .bearer(ALICE_TOKEN)
                .era(era)
                .config(auth(&idp, access)),
        )
        .await;
        let static_alice = host.tools().await;
        assert!(
            static_alice.iter().any(|t| t.name == "greet"),
            "{era:?}: the static token alice sees hello: {static_alice:?}"
        );
        let jwt_alice = host
            .another_client(
                era,
                Elicitation::Unsupported,
                Some(&jwt(&idp, &key, "alice")),
            )
            .await;
        assert!(
            jwt_alice.client.list_all_tools().await.unwrap().is_empty(),
            "{era:?}: a JWT with sub=alice is not the static token alice"
        );
    }
}

#[tokio::test]
async fn subjects_without_a_source_are_refused_where_auth_accepts_both_kinds() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolhost.toml");
    // No identity provider is needed to refuse the file: the issuer is
    // never asked.
    std::fs::write(
        &config,
        format!(
            "[auth]\nresource = \"{RESOURCE}\"\n\
             [auth.oauth]\nissuer = \"http://127.0.0.1:9\"\njwks_url = \"http://127.0.0.1:9/jwks.json\"\n\
             [[auth.tokens]]\nsubject = \"alice\"\nsha256 = \"{}\"\n\
             [[access]]\nsubjects = [\"alice\"]\nplugins = [\"*\"]\n",
            sha256_hex(ALICE_TOKEN)
        ),
    )
    .unwrap();
    let serve = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["serve", "--http", "127.0.0.1:0", "--config"])
        .arg(&config)
        .arg("--plugins")
        .arg(dir.path())
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    // A server that accepted the file would serve until killed.
    let out = tokio::time::timeout(std::time::Duration::from_secs(60), serve)
        .await
        .expect("toolhost refuses the file at start instead of serving")
        .unwrap();
    assert!(!out.status.success(), "the ambiguous rule is refused");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("[[access]] rule 1")
            && stderr.contains("add `source = \"token\"` or `source = \"jwt\"`"),
        "{stderr}"
    );
}

/// `confirm_then_post` to `server`'s `/hook`, with `confirm: true`.
fn post(server: &Recorder) -> CallToolRequestParams {
    let Value::Object(args) = json!({"url": format!("{}/hook", server.url), "confirm": true})
    else {
        unreachable!()
    };
    CallToolRequestParams::new("confirm_then_post").with_arguments(args)
}

#[tokio::test]
async fn a_sealed_state_answers_only_for_the_caller_it_was_issued_to() {
    let key = SigningKey::new("k1");
    let idp = Idp::start(&[&key]).await;
    let server = Recorder::start().await;
    // Everybody may call the tool: only the state's binding refuses.
    let access = "[[access]]\nsource = \"token\"\nsubjects = [\"alice\"]\nplugins = [\"*\"]\n\
                  [[access]]\nsource = \"jwt\"\nsubjects = [\"alice\", \"mallory\"]\nplugins = [\"*\"]\n";
    let host = Host::start(
        HostOptions::new(&["misbehaving"])
            .http()
            .bearer(ALICE_TOKEN)
            .era(Era::Modern)
            .elicitation(Elicitation::Accept(true))
            .config(format!(
                "{}\n{}",
                server.allow_block("misbehaving"),
                auth(&idp, access)
            )),
    )
    .await;
    let state = match host.client.call_tool_once(post(&server)).await.unwrap() {
        CallToolResponse::InputRequired(round) => round.request_state.expect("a sealed state"),
        other => panic!("expected input_required, got {other:?}"),
    };
    for subject in ["alice", "mallory"] {
        let other = host
            .another_client(
                Era::Modern,
                Elicitation::Accept(true),
                Some(&jwt(&idp, &key, subject)),
            )
            .await;
        let refused = refusal(
            other
                .client
                .call_tool_once(retry_with_state(&post(&server), &state, true))
                .await,
        );
        assert!(
            refused.contains("issued to another caller"),
            "jwt:{subject} redeems the static token alice's state: {refused}"
        );
    }
    assert_eq!(server.posts(), 0, "nothing ran for another caller");
    // Refused before it was spent: alice's own yes still applies, once.
    match host
        .client
        .call_tool_once(retry_with_state(&post(&server), &state, true))
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
        other => panic!("expected the call to run, got {other:?}"),
    }
    assert_eq!(server.posts(), 1);
}
