//! The Kubernetes deployment's `toolhost.toml` (deploy/kubernetes/toolhost.toml,
//! which kustomize turns into the ConfigMap) through the real binary: with
//! the Secret's variables set it serves the components the image bundles to
//! a caller with the team token and to no one else, accepts the names the
//! Service is reached by, and refuses to start with the Secret template's
//! placeholders.
//!
//! The listen address is the test's loopback port (`--http` overrides
//! `host.http`); the schemas and the rest of the manifests are checked by
//! `deploy/validate`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::support::{Host, HostOptions, test_cache_home};

/// The components the container image copies into /plugins
/// (deploy/Containerfile: `statuspro_*.wasm` and `katana.wasm`).
const BUNDLED: [&str; 10] = [
    "statuspro_add_order_comment",
    "statuspro_bulk_update_order_status",
    "statuspro_get_order",
    "statuspro_get_viable_statuses",
    "statuspro_list_orders",
    "statuspro_list_statuses",
    "statuspro_lookup_order",
    "statuspro_update_order_due_date",
    "statuspro_update_order_status",
    "katana",
];

/// The tools they serve together: nine StatusPro tools, seven Katana tools.
const BUNDLED_TOOLS: usize = 16;

/// The team's token, as the Secret's `token-team` would hold it.
const TEAM_TOKEN: &str = "deploy-team-token-0123456789abcdef";

/// What the Secret template (deploy/kubernetes/secret.example.yaml) holds
/// until the operator fills it in.
const PLACEHOLDER: &str = "REPLACE-ME";

/// A bound on anything a test waits for: hitting it is a hang.
const HANG: Duration = Duration::from_secs(60);

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(relative: &str) -> String {
    let path = repository().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The ConfigMap's toolhost.toml.
fn deployed_config() -> String {
    read("deploy/kubernetes/toolhost.toml")
}

/// A host serving the bundled components with the deployment's config and
/// the environment the Deployment gives the container (real-looking secret
/// values), over HTTP on a loopback port, its client holding the team token.
fn deployed_host() -> HostOptions {
    HostOptions::new(&BUNDLED)
        .config(deployed_config())
        .http()
        .bearer(TEAM_TOKEN)
        .env("TOOLHOST_TOKEN_TEAM", TEAM_TOKEN)
        .env(
            "TOOLHOST_STATE_KEY",
            "deploy-state-key-0123456789abcdef0123456789abcdef",
        )
        .env("TOOLHOST_REDIS_PASSWORD", "deploy-redis-password")
        .env("STATUSPRO_API_KEY", "deploy-statuspro-key")
        .env("KATANA_API_KEY", "deploy-katana-key")
}

fn raw() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(HANG)
        .build()
        .expect("a reqwest client")
}

#[tokio::test]
async fn the_kubernetes_config_serves_the_bundled_tools_to_the_team_token_only() {
    let host = Host::start(deployed_host()).await;
    let tools = host.tools().await;
    assert_eq!(tools.len(), BUNDLED_TOOLS, "{tools:#?}");
    for name in ["list_orders", "update_order_status", "find_order"] {
        assert!(
            tools.iter().any(|t| t.name == name),
            "{name} is not served: {tools:#?}"
        );
    }

    let url = host.url.clone().expect("an HTTP host");
    let anonymous = raw()
        .get(&url)
        .header("accept", "text/event-stream")
        .send()
        .await
        .expect("the server answers");
    assert_eq!(anonymous.status(), 401, "a caller without a token");
    let wrong = raw()
        .get(&url)
        .header("accept", "text/event-stream")
        .bearer_auth("not-the-team-token-0123456789")
        .send()
        .await
        .expect("the server answers");
    assert_eq!(wrong.status(), 401, "a caller with another token");

    // What the readiness probe sees once the bundled directory is loaded.
    let ready = raw()
        .get(url.replace("/mcp", "/readyz"))
        .send()
        .await
        .expect("the server answers");
    assert_eq!(ready.status(), 200);
    let body: serde_json::Value =
        serde_json::from_str(&ready.text().await.expect("a body")).expect("a JSON body");
    assert_eq!(
        (body["ready"].as_bool(), body["tools"].as_u64()),
        (Some(true), Some(BUNDLED_TOOLS as u64)),
        "{body}"
    );
}

#[tokio::test]
async fn the_kubernetes_config_accepts_the_service_names_and_refuses_other_hosts() {
    let host = Host::start(deployed_host()).await;
    let url = host.url.clone().expect("an HTTP host");
    // A method the endpoint does not serve: past the token and the Host
    // check it is 405, so the answer tells which of the two refused it.
    let status_for = |name: &'static str| {
        let url = url.clone();
        async move {
            raw()
                .put(url)
                .header("host", name)
                .bearer_auth(TEAM_TOKEN)
                .send()
                .await
                .expect("the server answers")
                .status()
        }
    };
    for name in [
        "toolhost:8080",
        "toolhost.toolhost.svc:8080",
        "toolhost.toolhost.svc.cluster.local:8080",
        "mcp.example.com",
    ] {
        assert_eq!(status_for(name).await, 405, "Host: {name}");
    }
    assert_eq!(
        status_for("rebinding.attacker.example").await,
        403,
        "a name the config does not list"
    );
}

#[test]
fn the_kubernetes_config_refuses_to_start_with_the_secret_templates_placeholders() {
    assert!(
        read("deploy/kubernetes/secret.example.yaml").contains(PLACEHOLDER),
        "the Secret template's placeholder changed; update this test"
    );
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(&config, deployed_config()).unwrap();
    let plugins = dir.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .arg("list")
        .arg("--plugins")
        .arg(&plugins)
        .arg("--config")
        .arg(&config)
        .env("TOOLHOST_LOG", "warn")
        .env("XDG_CACHE_HOME", test_cache_home())
        .env("TOOLHOST_TOKEN_TEAM", PLACEHOLDER)
        .env("TOOLHOST_STATE_KEY", PLACEHOLDER)
        .env("TOOLHOST_REDIS_PASSWORD", PLACEHOLDER)
        .env("STATUSPRO_API_KEY", PLACEHOLDER)
        .env("KATANA_API_KEY", PLACEHOLDER)
        .output()
        .expect("toolhost runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "it started with placeholders");
    // The first placeholder read stops it: the state key (32 bytes needed)
    // or the token (16 characters), whichever the config resolves first.
    assert!(
        (stderr.contains("`state.keys`") && stderr.contains("at least 32 random bytes"))
            || (stderr.contains("auth") && stderr.contains("at least 16 random characters")),
        "the error names the secret and what it needs: {stderr}"
    );
}
