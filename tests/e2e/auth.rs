//! Authentication and per-identity access through the real binary over
//! Streamable HTTP: an identity provider's key set served on loopback with
//! keys the test makes, tokens signed here, rmcp's HTTP client.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientCapabilities, ClientJsonRpcMessage,
    ClientRequest, Implementation, JsonRpcRequest, JsonRpcVersion2_0, ProtocolVersion, RequestId,
    RequestMetaObject,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientServiceExt, ServiceError, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::Notify;
use toolhost_test_infra::idp::{Idp, RsaSigningKey, SigningKey};

use crate::support::{Era, Recorder, capture_stderr, component, test_cache_home};

const RESOURCE: &str = "https://mcp.example.com/mcp";
const METADATA_URL: &str = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";
const CI_TOKEN: &str = "ci-bot-static-token-0123456789";

/// What the tests ask of their identity provider.
trait IdpExt {
    fn claims(&self, subject: &str) -> Value;
    fn auth_config(&self, extra_oauth: &str) -> String;
    fn auth_config_with(&self, algorithms: Option<&str>, extra_oauth: &str) -> String;
}

impl IdpExt for Idp {
    /// Claims that pass every check, for `subject`.
    fn claims(&self, subject: &str) -> Value {
        let now = jsonwebtoken::get_current_timestamp();
        json!({
            "iss": self.issuer, "aud": RESOURCE, "sub": subject,
            "iat": now, "nbf": now - 10, "exp": now + 600,
            "scope": "mcp:tools",
        })
    }

    /// `[auth]` trusting this provider (`ES256` only) and the static token
    /// [`CI_TOKEN`].
    fn auth_config(&self, extra_oauth: &str) -> String {
        self.auth_config_with(Some("[\"ES256\"]"), extra_oauth)
    }

    /// As [`IdpExt::auth_config`], with `auth.oauth.algorithms` as given
    /// (`None`: the default).
    fn auth_config_with(&self, algorithms: Option<&str>, extra_oauth: &str) -> String {
        let algorithms = algorithms
            .map(|list| format!("algorithms = {list}\n"))
            .unwrap_or_default();
        format!(
            "[auth]\nresource = \"{RESOURCE}\"\n\
             [auth.oauth]\nissuer = \"{}\"\njwks_url = \"{}\"\n{algorithms}\
             scopes = [\"mcp:tools\"]\nleeway_secs = 5\n{extra_oauth}\n\
             [[auth.tokens]]\nsubject = \"ci-bot\"\nsha256 = \"{}\"\nscopes = [\"mcp:tools\"]\n",
            self.issuer,
            self.jwks_url,
            crate::support::infra::sha256_hex(CI_TOKEN)
        )
    }
}

fn with(mut claims: Value, key: &str, value: Value) -> Value {
    claims[key] = value;
    claims
}

/// `toolhost serve --http 127.0.0.1:0`, its address read from its log.
struct HttpHost {
    /// `http://127.0.0.1:PORT`.
    base: String,
    stderr: Arc<Mutex<String>>,
    /// Notified whenever `stderr` grows.
    grew: Arc<Notify>,
    _child: tokio::process::Child,
    _dir: tempfile::TempDir,
}

impl HttpHost {
    async fn start(components: &[&str], config: &str) -> HttpHost {
        let dir = tempfile::tempdir().unwrap();
        let plugins = dir.path().join("plugins");
        std::fs::create_dir(&plugins).unwrap();
        for name in components {
            std::fs::write(plugins.join(format!("{name}.wasm")), component(name)).unwrap();
        }
        let path = dir.path().join("toolhost.toml");
        std::fs::write(&path, format!("{config}\n[host]\nload_wait_secs = 600\n")).unwrap();
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .args(["serve", "--http", "127.0.0.1:0", "--plugins"])
            .arg(&plugins)
            .arg("--config")
            .arg(&path)
            .env("TOOLHOST_LOG", "info,toolhost=debug")
            .env("XDG_CACHE_HOME", test_cache_home())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let (stderr, grew) = capture_stderr(child.stderr.take());
        let line = wait_for(&stderr, &grew, "serving MCP over HTTP at http://").await;
        let base = line
            .split("serving MCP over HTTP at ")
            .nth(1)
            .and_then(|rest| rest.split("/mcp").next())
            .unwrap()
            .to_string();
        HttpHost {
            base,
            stderr,
            grew,
            _child: child,
            _dir: dir,
        }
    }

    /// An rmcp client of `era` sending `token`.
    async fn client(&self, token: &str, era: Era) -> RunningService<RoleClient, ()> {
        crate::support::install_tls_provider();
        let transport = StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", self.base))
                .auth_header(token),
        );
        match era {
            Era::Legacy => ().serve(transport).await.expect("the legacy client connects"),
            Era::Modern => ()
                .serve_with_lifecycle(
                    transport,
                    rmcp::service::ClientLifecycleMode::Discover {
                        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                    },
                )
                .await
                .expect("the 2026-07-28 client connects"),
        }
    }

    /// POSTs a stateless 2026-07-28 `tools/call` of `fetch_url` for `url`,
    /// with `authorization` if given.
    async fn raw_call(&self, authorization: Option<&str>, url: &str) -> reqwest::Response {
        let mut params = CallToolRequestParams::new("fetch_url")
            .with_arguments(json!({ "url": url }).as_object().unwrap().clone());
        params.meta = Some(RequestMetaObject::with_client_context(
            ProtocolVersion::V_2026_07_28,
            Implementation::new("toolhost-tests", "0.1.0"),
            ClientCapabilities::default(),
        ));
        let message = ClientJsonRpcMessage::Request(JsonRpcRequest {
            jsonrpc: JsonRpcVersion2_0,
            id: RequestId::Number(1),
            request: ClientRequest::CallToolRequest(CallToolRequest::new(params)),
        });
        let mut request = reqwest::Client::new()
            .post(format!("{}/mcp", self.base))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header(
                "mcp-protocol-version",
                ProtocolVersion::V_2026_07_28.as_str(),
            )
            .header("mcp-method", "tools/call")
            .header("mcp-name", "fetch_url")
            .body(serde_json::to_vec(&message).unwrap());
        if let Some(value) = authorization {
            request = request.header("authorization", value);
        }
        request.send().await.unwrap()
    }

    /// Whether `token` is accepted: an rmcp client of the 2026-07-28 era
    /// sending it lists the tools.
    async fn accepts(&self, token: &str) -> bool {
        self.accepts_at(token, "/mcp").await
    }

    /// Whether `token` is accepted at `path` (`/mcp`, `/mcp/NAME`).
    async fn accepts_at(&self, token: &str, path: &str) -> bool {
        crate::support::install_tls_provider();
        let transport = StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(format!("{}{path}", self.base))
                .auth_header(token),
        );
        let Ok(client) = ()
            .serve_with_lifecycle(
                transport,
                rmcp::service::ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
        else {
            return false;
        };
        let listed = client.list_all_tools().await.is_ok();
        client.cancel().await.unwrap();
        listed
    }

    /// The status and `WWW-Authenticate` of a call sending `token`, whose
    /// tool (if it ran) would fetch from nowhere.
    async fn refusal(&self, token: &str) -> (u16, String) {
        let response = self
            .raw_call(Some(&format!("Bearer {token}")), "http://127.0.0.1:9/")
            .await;
        (response.status().as_u16(), challenge(&response))
    }
}

/// Waits until `needle` is in `count` lines of `stderr`.
async fn wait_for_lines(stderr: &Mutex<String>, grew: &Notify, needle: &str, count: usize) {
    let wait = async {
        loop {
            let notified = grew.notified();
            if stderr
                .lock()
                .unwrap()
                .lines()
                .filter(|l| l.contains(needle))
                .count()
                >= count
            {
                return;
            }
            notified.await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), wait)
        .await
        .unwrap_or_else(|_| {
            panic!(
                "stderr never held {count} lines with {needle:?}:\n{}",
                stderr.lock().unwrap()
            )
        })
}

async fn wait_for(stderr: &Mutex<String>, grew: &Notify, needle: &str) -> String {
    let wait = async {
        loop {
            let notified = grew.notified();
            {
                let text = stderr.lock().unwrap();
                if let Some(line) = text.lines().find(|l| l.contains(needle)) {
                    return line.to_string();
                }
            }
            notified.await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), wait)
        .await
        .unwrap_or_else(|_| {
            panic!(
                "stderr never contained {needle:?}:\n{}",
                stderr.lock().unwrap()
            )
        })
}

fn challenge(response: &reqwest::Response) -> String {
    response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default()
}

/// Every bad credential gets its status and challenge, and no call runs:
/// the tool would have fetched from the recorder.
#[tokio::test]
async fn bad_credentials_are_refused_and_nothing_runs() {
    let key = SigningKey::new("k1");
    let idp = Idp::start(&[&key]).await;
    let recorder = Recorder::start().await;
    let host = HttpHost::start(
        &["hello"],
        &format!("{}\n{}", idp.auth_config(""), recorder.allow_block("hello")),
    )
    .await;
    let target = format!("{}/fetched", recorder.url);
    let now = jsonwebtoken::get_current_timestamp();
    let claims = idp.claims("alice");

    let unsigned = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"JWT","kid":"k1"}"#),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let mut hs256 = Header::new(Algorithm::HS256);
    hs256.kid = Some("k1".into());
    let hs_with_public_key =
        jsonwebtoken::encode(&hs256, &claims, &EncodingKey::from_secret(&key.point)).unwrap();
    let valid = key.sign(&claims);
    let parts: Vec<&str> = valid.split('.').collect();
    let tampered = format!(
        "{}.{}.{}",
        parts[0],
        URL_SAFE_NO_PAD.encode(with(claims.clone(), "sub", json!("admin")).to_string()),
        parts[2]
    );

    let invalid: Vec<(&str, String)> = vec![
        (
            "expired",
            key.sign(&with(claims.clone(), "exp", json!(now - 60))),
        ),
        (
            "not yet valid",
            key.sign(&with(claims.clone(), "nbf", json!(now + 600))),
        ),
        (
            "wrong aud",
            key.sign(&with(
                claims.clone(),
                "aud",
                json!("https://other.example.com/mcp"),
            )),
        ),
        (
            "wrong iss",
            key.sign(&with(
                claims.clone(),
                "iss",
                json!("https://evil.example.com"),
            )),
        ),
        ("unknown kid", SigningKey::new("k9").sign(&claims)),
        ("alg none", unsigned),
        ("HS256 keyed with the public key", hs_with_public_key),
        ("tampered signature", tampered),
        ("wrong static token", format!("{CI_TOKEN}x")),
    ];
    for (what, token) in &invalid {
        let response = host
            .raw_call(Some(&format!("Bearer {token}")), &target)
            .await;
        assert_eq!(response.status(), 401, "{what}");
        let c = challenge(&response);
        assert!(c.contains("error=\"invalid_token\""), "{what}: {c}");
        assert!(
            c.contains(&format!("resource_metadata=\"{METADATA_URL}\"")),
            "{what}: {c}"
        );
        let body = response.text().await.unwrap();
        assert!(
            !body.contains(token.as_str()),
            "{what}: the token is echoed: {body}"
        );
    }

    let missing = host.raw_call(None, &target).await;
    assert_eq!(missing.status(), 401);
    let c = challenge(&missing);
    assert!(c.starts_with("Bearer resource_metadata="), "{c}");
    assert!(!c.contains("error="), "{c}");

    let narrow = key.sign(&with(claims.clone(), "scope", json!("other")));
    let forbidden = host
        .raw_call(Some(&format!("Bearer {narrow}")), &target)
        .await;
    assert_eq!(forbidden.status(), 403);
    let c = challenge(&forbidden);
    assert!(c.contains("error=\"insufficient_scope\""), "{c}");
    assert!(c.contains("scope=\"mcp:tools\""), "{c}");

    assert!(recorder.received().is_empty(), "a refused call ran");
    // The refusal's log line may follow its answer: wait for it.
    let log = wait_for(&host.stderr, &host.grew, "reason=\"expired\"").await;
    for (_, token) in &invalid {
        assert!(!log.contains(token.as_str()), "a token reached the log");
    }

    // The same request with valid credentials runs: the refusals above are
    // what kept the tool from fetching.
    let ok = host
        .raw_call(Some(&format!("Bearer {CI_TOKEN}")), &target)
        .await;
    assert_eq!(ok.status(), 200, "{}", ok.text().await.unwrap());
    recorder.wait_for_requests(1).await;
    let client = host.client(&valid, Era::Legacy).await;
    let result = client
        .call_tool(
            CallToolRequestParams::new("fetch_url")
                .with_arguments(json!({ "url": target }).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert_eq!(recorder.received().len(), 2);
    client.cancel().await.unwrap();
}

/// The metadata clients read to find the authorization server, without a
/// token.
#[tokio::test]
async fn the_protected_resource_metadata_names_the_issuer() {
    let key = SigningKey::new("k1");
    let idp = Idp::start(&[&key]).await;
    let host = HttpHost::start(
        &["hello"],
        &format!(
            "{}\n[[access]]\nscopes = [\"hello:use\"]\nplugins = [\"hello\"]\n",
            idp.auth_config("")
        ),
    )
    .await;
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let response = reqwest::get(format!("{}{path}", host.base)).await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
        let doc: Value = response.text().await.unwrap().parse::<Value>().unwrap();
        assert_eq!(doc["resource"], RESOURCE);
        assert_eq!(doc["authorization_servers"], json!([idp.issuer]));
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
        assert_eq!(doc["scopes_supported"], json!(["hello:use", "mcp:tools"]));
    }
}

/// A profile at `/mcp/NAME` is a protected resource of its own (RFC 9728):
/// its metadata names its resource URI, a refusal there points at that
/// metadata, and a token issued for it is good there and nowhere else.
#[tokio::test]
async fn a_profile_has_its_own_protected_resource_metadata_and_audience() {
    let key = SigningKey::new("k1");
    let idp = Idp::start(&[&key]).await;
    let profile = "[[profiles]]\nname = \"support\"\ntools = [\"greet\"]\n";
    let host = HttpHost::start(&["hello"], &format!("{}\n{profile}", idp.auth_config(""))).await;
    let metadata = format!("{METADATA_URL}/support");
    let path = "/.well-known/oauth-protected-resource/mcp/support";
    let response = reqwest::get(format!("{}{path}", host.base)).await.unwrap();
    assert_eq!(response.status(), 200);
    let doc: Value = response.text().await.unwrap().parse().unwrap();
    assert_eq!(doc["resource"], format!("{RESOURCE}/support"));
    assert_eq!(doc["authorization_servers"], json!([idp.issuer]));
    let nobody = "/.well-known/oauth-protected-resource/mcp/nobody";
    let response = reqwest::get(format!("{}{nobody}", host.base))
        .await
        .unwrap();
    assert_eq!(response.status(), 404, "no profile by that name");

    for (at, points_to) in [("/mcp/support", metadata.as_str()), ("/mcp", METADATA_URL)] {
        let response = reqwest::Client::new()
            .post(format!("{}{at}", host.base))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 401, "{at}");
        let c = challenge(&response);
        assert!(
            c.contains(&format!("resource_metadata=\"{points_to}\"")),
            "{at}: {c}"
        );
    }

    let for_profile = key.sign(&with(
        idp.claims("alice"),
        "aud",
        json!(format!("{RESOURCE}/support")),
    ));
    assert!(host.accepts_at(&for_profile, "/mcp/support").await);
    assert!(
        !host.accepts_at(&for_profile, "/mcp").await,
        "a token for the profile is not one for the whole server"
    );
    let for_server = key.sign(&idp.claims("alice"));
    assert!(host.accepts_at(&for_server, "/mcp/support").await);
}

/// A key the provider starts publishing after the host fetched its keys is
/// accepted once a token names it.
#[tokio::test]
async fn a_rotated_key_is_accepted_after_a_refetch() {
    let old = SigningKey::new("2026-01");
    let idp = Idp::start(&[&old]).await;
    let host = HttpHost::start(&["hello"], &idp.auth_config("jwks_refetch_min_secs = 0")).await;
    let client = host
        .client(&old.sign(&idp.claims("alice")), Era::Legacy)
        .await;
    assert_eq!(client.list_all_tools().await.unwrap().len(), 2);
    client.cancel().await.unwrap();
    let fetched = idp.fetches();

    let new = SigningKey::new("2026-02");
    idp.publish(&new);
    let client = host
        .client(&new.sign(&idp.claims("alice")), Era::Modern)
        .await;
    assert_eq!(client.list_all_tools().await.unwrap().len(), 2);
    client.cancel().await.unwrap();
    assert_eq!(idp.fetches(), fetched + 1);
}

/// A caller without a plugin neither lists nor calls its tools (the error
/// is the unknown-tool error, word for word); another caller does; in
/// both eras.
#[tokio::test]
async fn a_caller_without_a_plugin_neither_lists_nor_calls_it() {
    let key = SigningKey::new("k1");
    let idp = Idp::start(&[&key]).await;
    let config = format!(
        "{}\n[[access]]\nsource = \"jwt\"\nsubjects = [\"alice\"]\nplugins = [\"*\"]\n\
         [[access]]\nsource = \"token\"\nsubjects = [\"ci-bot\"]\nplugins = [\"echo\"]\n",
        idp.auth_config("")
    );
    let host = HttpHost::start(&["hello", "echo"], &config).await;
    let alice = key.sign(&idp.claims("alice"));
    let bob = key.sign(&idp.claims("bob"));
    let greet = || {
        CallToolRequestParams::new("greet")
            .with_arguments(json!({ "name": "Ada" }).as_object().unwrap().clone())
    };
    let names = |tools: Vec<rmcp::model::Tool>| {
        let mut names: Vec<String> = tools.into_iter().map(|t| t.name.to_string()).collect();
        names.sort();
        names
    };
    let error_of = |e: ServiceError| match e {
        ServiceError::McpError(data) => (data.code.0, data.message.to_string()),
        other => panic!("not a JSON-RPC error: {other:?}"),
    };

    for era in [Era::Legacy, Era::Modern] {
        let full = host.client(&alice, era).await;
        let all = names(full.list_all_tools().await.unwrap());
        assert!(all.contains(&"greet".to_string()), "{era:?}: {all:?}");
        let result = full.call_tool(greet()).await.unwrap();
        assert_ne!(result.is_error, Some(true), "{era:?}");
        let unknown = error_of(
            full.call_tool(CallToolRequestParams::new("no_such_tool"))
                .await
                .unwrap_err(),
        );
        full.cancel().await.unwrap();

        let ci = host.client(CI_TOKEN, era).await;
        let visible = names(ci.list_all_tools().await.unwrap());
        assert!(
            !visible.contains(&"greet".to_string()),
            "{era:?}: {visible:?}"
        );
        assert!(
            !visible.contains(&"fetch_url".to_string()),
            "{era:?}: {visible:?}"
        );
        assert!(!visible.is_empty(), "{era:?}: echo's tools stay visible");
        let hidden = error_of(ci.call_tool(greet()).await.unwrap_err());
        assert_eq!(hidden.0, unknown.0, "{era:?}");
        assert_eq!(
            hidden.1,
            unknown.1.replace("no_such_tool", "greet"),
            "{era:?}: a hidden tool answers like an unknown one"
        );
        ci.cancel().await.unwrap();

        // No rule names bob: he sees nothing.
        let nobody = host.client(&bob, era).await;
        assert!(nobody.list_all_tools().await.unwrap().is_empty(), "{era:?}");
        nobody.cancel().await.unwrap();
    }
    let log = host.stderr.lock().unwrap().clone();
    assert!(
        log.contains("subject=jwt:alice") || log.contains("subject=\"jwt:alice\""),
        "the log names the caller with its source: {log}"
    );
}

/// Without `[auth]`, only a loopback address is served.
#[test]
fn a_public_address_without_auth_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    std::fs::write(plugins.join("hello.wasm"), component("hello")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["serve", "--http", "0.0.0.0:0", "--plugins"])
        .arg(&plugins)
        .env("TOOLHOST_LOG", "warn")
        .env("XDG_CACHE_HOME", test_cache_home())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("[auth]"), "{stderr}");
    assert!(out.stdout.is_empty());
}

/// `[[access]]` without `[auth]` would restrict nobody over HTTP: refused.
#[test]
fn access_rules_without_auth_are_refused_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    std::fs::write(plugins.join("hello.wasm"), component("hello")).unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        "[[access]]\nsubjects = [\"alice\"]\nplugins = [\"hello\"]\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["serve", "--http", "127.0.0.1:0", "--plugins"])
        .arg(&plugins)
        .arg("--config")
        .arg(&config)
        .env("TOOLHOST_LOG", "warn")
        .env("XDG_CACHE_HOME", test_cache_home())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("[[access]] rules need [auth]"), "{stderr}");
}

/// RS256 (a default algorithm) passes through the real binary; PS256 does
/// when configured; HS256 keyed with the RSA public key, and an RS256
/// token naming the issuer's EC key, are refused with the reason in the
/// challenge.
#[tokio::test]
async fn rsa_tokens_pass_and_algorithm_confusions_are_refused() {
    let ec = SigningKey::new("ec-1");
    let rsa = RsaSigningKey::new("rsa-1");
    let idp = Idp::start(&[&ec]).await;
    idp.publish_jwk(rsa.jwk.clone());
    let claims = idp.claims("alice");
    let ps256 = rsa.sign_with_header(Header::new(Algorithm::PS256), &claims);
    let mut hs256 = Header::new(Algorithm::HS256);
    hs256.kid = Some(rsa.kid.clone());
    let hs_with_pem = jsonwebtoken::encode(
        &hs256,
        &claims,
        &EncodingKey::from_secret(rsa.public_pem.as_bytes()),
    )
    .unwrap();
    let mut rs_naming_ec = Header::new(Algorithm::RS256);
    rs_naming_ec.kid = Some(ec.kid.clone());
    let rs_naming_ec = rsa.sign_with_header(rs_naming_ec, &claims);

    let defaults = HttpHost::start(&["hello"], &idp.auth_config_with(None, "")).await;
    assert!(defaults.accepts(&rsa.sign(&claims)).await, "RS256");
    assert!(defaults.accepts(&ec.sign(&claims)).await, "ES256");
    for (what, token, reason) in [
        (
            "PS256 without configuring it",
            &ps256,
            "signature algorithm is not accepted (auth.oauth.algorithms)",
        ),
        (
            "HS256 keyed with the RSA public key",
            &hs_with_pem,
            "signature algorithm is not accepted (auth.oauth.algorithms)",
        ),
        (
            "RS256 naming the EC key",
            &rs_naming_ec,
            "algorithm does not fit the key its key id (kid) names",
        ),
    ] {
        let (status, challenge) = defaults.refusal(token).await;
        assert_eq!(status, 401, "{what}");
        assert!(
            challenge.contains("error=\"invalid_token\""),
            "{what}: {challenge}"
        );
        assert!(challenge.contains(reason), "{what}: {challenge}");
    }
    wait_for(&defaults.stderr, &defaults.grew, "reason=\"key_mismatch\"").await;

    let with_ps256 =
        HttpHost::start(&["hello"], &idp.auth_config_with(Some("[\"PS256\"]"), "")).await;
    assert!(with_ps256.accepts(&ps256).await, "PS256 when configured");
    let (status, _) = with_ps256.refusal(&rsa.sign(&claims)).await;
    assert_eq!(status, 401, "RS256 when only PS256 is configured");
}

/// The token type (`typ`): by default `at+jwt`, `JWT` and none pass and
/// other JWT types are refused; with `require_at_jwt` only `at+jwt`
/// passes, so an ID token is refused for its type. Each refusal says why
/// in the challenge, without the token.
#[tokio::test]
async fn token_types_other_than_access_tokens_are_refused() {
    let key = SigningKey::new("k1");
    let idp = Idp::start(&[&key]).await;
    let claims = idp.claims("alice");
    let typed = |typ: Option<&str>, claims: &Value| {
        let mut header = Header::new(Algorithm::ES256);
        header.typ = typ.map(str::to_string);
        key.sign_with_header(header, claims)
    };
    let id_token = typed(
        Some("JWT"),
        &with(claims.clone(), "aud", json!("mcp-client")),
    );

    let default = HttpHost::start(&["hello"], &idp.auth_config("")).await;
    for typ in [
        Some("at+jwt"),
        Some("application/at+jwt"),
        Some("JWT"),
        None,
    ] {
        assert!(default.accepts(&typed(typ, &claims)).await, "typ {typ:?}");
    }
    for typ in ["dpop+jwt", "logout+jwt", "secevent+jwt"] {
        let token = typed(Some(typ), &claims);
        let (status, challenge) = default.refusal(&token).await;
        assert_eq!(status, 401, "{typ}");
        assert!(
            challenge.contains(
                "error_description=\"the token is not an access token (its typ names another \
                 kind of JWT)"
            ),
            "{typ}: {challenge}"
        );
        assert!(!challenge.contains(&token), "{typ}: the token is echoed");
    }
    let (status, challenge) = default.refusal(&id_token).await;
    assert_eq!(status, 401);
    assert!(
        challenge.contains("issued for another resource"),
        "{challenge}"
    );

    let strict = HttpHost::start(&["hello"], &idp.auth_config("require_at_jwt = true")).await;
    for typ in [Some("at+jwt"), Some("application/at+jwt")] {
        assert!(strict.accepts(&typed(typ, &claims)).await, "typ {typ:?}");
    }
    for (what, token) in [
        ("typ JWT", typed(Some("JWT"), &claims)),
        ("no typ", typed(None, &claims)),
        ("an ID token", id_token.clone()),
    ] {
        let (status, challenge) = strict.refusal(&token).await;
        assert_eq!(status, 401, "{what}");
        assert!(
            challenge.contains("typ must be at+jwt, auth.oauth.require_at_jwt"),
            "{what}: {challenge}"
        );
        assert!(!challenge.contains(&token), "{what}: the token is echoed");
    }
    wait_for(&strict.stderr, &strict.grew, "reason=\"not_at_jwt\"").await;
}

/// While the issuer holds a key-set fetch that a token with an unknown key
/// id caused, a token whose key is cached is served; requests that also
/// need a fetch wait for that one instead of fetching again; on release,
/// the held request completes.
#[tokio::test]
async fn a_key_set_fetch_in_flight_holds_up_no_cached_key_and_runs_once() {
    let known = SigningKey::new("2026-01");
    let idp = Idp::start(&[&known]).await;
    let host =
        Arc::new(HttpHost::start(&["hello"], &idp.auth_config("jwks_refetch_min_secs = 0")).await);
    let alice = known.sign(&idp.claims("alice"));
    assert!(host.accepts(&alice).await);
    assert_eq!(idp.fetches(), 1);

    let rotated = SigningKey::new("2026-02");
    idp.publish(&rotated);
    let mut hold = idp.hold_next_fetch();
    let call = |token: String| {
        let host = host.clone();
        tokio::spawn(async move { host.refusal(&token).await.0 })
    };
    let held = call(rotated.sign(&idp.claims("alice")));
    tokio::time::timeout(Duration::from_secs(60), hold.arrived())
        .await
        .expect("the fetch reaches the issuer");
    let made_up = SigningKey::new("unused");
    let waiting: Vec<_> = (0..4)
        .map(|i| {
            let mut header = Header::new(Algorithm::ES256);
            header.kid = Some(format!("made-up-{i}"));
            call(made_up.sign_with_header(header, &idp.claims("mallory")))
        })
        .collect();
    wait_for_lines(
        &host.stderr,
        &host.grew,
        "waiting for the key-set fetch in flight",
        waiting.len(),
    )
    .await;

    let served = tokio::time::timeout(Duration::from_secs(60), host.accepts(&alice))
        .await
        .expect("a token with a cached key waited for the fetch in flight");
    assert!(served);
    assert!(!held.is_finished(), "the fetch is still held");

    hold.release();
    assert_eq!(held.await.unwrap(), 200, "the rotated key is accepted");
    for request in waiting {
        assert_eq!(request.await.unwrap(), 401);
    }
    assert_eq!(
        idp.fetches(),
        2,
        "the requests that waited used the fetch in flight"
    );
}

/// No keys to be had from the issuer: 503 with `Retry-After`, the
/// refetch interval. The log says why without the key-set URL's query,
/// which may carry a credential.
#[tokio::test]
async fn an_unreachable_issuer_answers_503_with_retry_after() {
    const SECRET: &str = "s3cret-in-the-query";
    let key = SigningKey::new("k1");
    let mut idp = Idp::start(&[&key]).await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    idp.jwks_url = format!("http://{closed}/jwks.json?access_token={SECRET}");
    let host = HttpHost::start(&["hello"], &idp.auth_config("jwks_refetch_min_secs = 30")).await;
    let response = host
        .raw_call(
            Some(&format!("Bearer {}", key.sign(&idp.claims("alice")))),
            "http://127.0.0.1:9/",
        )
        .await;
    assert_eq!(response.status(), 503);
    assert_eq!(response.headers()["retry-after"], "30");
    let body: Value = response.text().await.unwrap().parse().unwrap();
    assert_eq!(body["error"], "temporarily_unavailable");
    let line = wait_for(&host.stderr, &host.grew, "cannot fetch the issuer's keys").await;
    assert!(
        line.contains(&format!("http://{closed}/jwks.json?…")),
        "{line}"
    );
    let log = host.stderr.lock().unwrap().clone();
    assert!(!log.contains(SECRET), "the query reached the log: {log}");
}
