//! Distribution through OCI registries: `push`, `pull`, `update` and
//! `oci://` components, against a real registry (Debian's
//! `docker-registry`, the CNCF distribution registry) on loopback.
//!
//! The tests that need the registry are ignored unless `cargo xtask test`
//! finds `docker-registry`, `skopeo` and `htpasswd` installed; run without
//! them, they fail and name the packages.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use p256::pkcs8::{EncodePrivateKey, EncodePublicKey, LineEnding};
use serde_json::{Value, json};

use crate::support::{Changes, Elicitation, Era, Host, component};

mod wkg;

/// The programs the registry tests run (`toolhost_test_infra::PROGRAMS`
/// names their packages).
const PROGRAMS: [&str; 3] = ["docker-registry", "skopeo", "htpasswd"];

/// A registry on 127.0.0.1 with its storage in a temporary directory.
struct Registry {
    child: Option<Child>,
    dir: tempfile::TempDir,
    /// `127.0.0.1:PORT`.
    addr: String,
}

impl Registry {
    /// Starts a registry; with `user`, it requires that basic-auth login.
    /// Fails the test, naming the packages, where the registry tools are
    /// not installed.
    fn start(user: Option<(&str, &str)>) -> Registry {
        crate::support::infra::require(&PROGRAMS);
        let dir = tempfile::tempdir().unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr = format!("127.0.0.1:{port}");
        let mut config = format!(
            "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\n\
             http:\n  addr: {addr}\n  secret: test-secret\n",
            dir.path().join("data").display()
        );
        if let Some((name, password)) = user {
            let out = Command::new("htpasswd")
                .args(["-Bbn", name, password])
                .output()
                .unwrap();
            assert!(out.status.success());
            std::fs::write(dir.path().join("htpasswd"), out.stdout).unwrap();
            config.push_str(&format!(
                "auth:\n  htpasswd:\n    realm: toolhost-test\n    path: {}\n",
                dir.path().join("htpasswd").display()
            ));
        }
        std::fs::write(dir.path().join("config.yml"), config).unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(dir.path().join("config.yml"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("docker-registry starts");
        let registry = Registry {
            child: Some(child),
            dir,
            addr,
        };
        // Ready when it accepts a connection (bounded: 20 s).
        for _ in 0..400 {
            if std::net::TcpStream::connect(&registry.addr).is_ok() {
                return registry;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the registry did not start on {}", registry.addr);
    }

    /// `REGISTRY/REPOSITORY:TAG` on this registry.
    fn reference(&self, repository: &str, tag: &str) -> String {
        format!("{}/{repository}:{tag}", self.addr)
    }

    /// The file holding the blob `digest` in the registry's storage.
    fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").unwrap();
        self.dir
            .path()
            .join("data/docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }

    /// Stops the registry and waits for it to exit.
    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A scratch directory for one test: plugin directory, store (through
/// `XDG_CACHE_HOME`), keys, config.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("plugins")).unwrap();
        Scratch { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn plugins(&self) -> PathBuf {
        self.path("plugins")
    }

    /// The content store's directory (under this scratch's cache home).
    fn store(&self) -> PathBuf {
        self.path("cache/toolhost-oci")
    }

    /// Writes a component file named `name` with the bytes of the built
    /// component `component`.
    fn component_file(&self, component_name: &str, name: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, component(component_name)).unwrap();
        path
    }

    /// A new P-256 key pair: (private key file, public key file).
    fn keypair(&self, name: &str) -> (PathBuf, PathBuf) {
        let secret = p256::SecretKey::from_slice(&rand::random::<[u8; 32]>()).unwrap();
        let private = self.path(&format!("{name}.key"));
        let public = self.path(&format!("{name}.pub"));
        std::fs::write(&private, secret.to_pkcs8_pem(LineEnding::LF).unwrap()).unwrap();
        std::fs::write(
            &public,
            secret
                .public_key()
                .to_public_key_pem(LineEnding::LF)
                .unwrap(),
        )
        .unwrap();
        (private, public)
    }

    /// Writes `toolhost.toml` (with the test load wait) and returns its path.
    fn config(&self, text: &str) -> PathBuf {
        let path = self.path("toolhost.toml");
        std::fs::write(&path, format!("{text}\n[host]\nload_wait_secs = 600\n")).unwrap();
        path
    }

    /// Runs `toolhost ARGS` with this scratch's cache home and `env`.
    fn toolhost(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolhost"));
        command
            .args(args)
            .env("TOOLHOST_LOG", "warn")
            .env("XDG_CACHE_HOME", self.path("cache"))
            .env("DOCKER_CONFIG", self.path("docker"))
            .env_remove("TOOLHOST_REGISTRY_USERNAME")
            .env_remove("TOOLHOST_REGISTRY_PASSWORD")
            .env_remove("TOOLHOST_REGISTRY");
        for (k, v) in env {
            command.env(k, v);
        }
        command.output().expect("toolhost runs")
    }

    /// `toolhost push FILE REF [--sign KEY]`; returns the digest printed.
    fn push(&self, file: &Path, reference: &str, key: Option<&Path>) -> String {
        let mut args = vec!["push", file.to_str().unwrap(), reference];
        if let Some(key) = key {
            args.extend(["--sign", key.to_str().unwrap()]);
        }
        let out = self.toolhost(&args, &[]);
        assert!(out.status.success(), "push failed: {}", text(&out.stderr));
        let digest = text(&out.stdout).trim().to_string();
        assert!(
            digest.starts_with("sha256:") && digest.len() == 71,
            "{digest}"
        );
        digest
    }

    /// `toolhost pull REF --plugins DIR ARGS…`.
    fn pull(&self, reference: &str, args: &[&str]) -> Output {
        let plugins = self.plugins();
        let mut all = vec!["pull", reference, "--plugins", plugins.to_str().unwrap()];
        all.extend(args);
        self.toolhost(&all, &[])
    }

    /// The files in the plugin directory.
    fn installed(&self) -> Vec<String> {
        names_in(&self.plugins())
    }

    /// The blobs in the content store.
    fn stored(&self) -> Vec<String> {
        names_in(&self.store().join("blobs/sha256"))
    }

    /// A `toolhost serve` of the plugin directory with `config`, whose
    /// client is `era`.
    async fn serve(&self, config: &Path, era: Era) -> Host {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolhost"));
        command
            .arg("serve")
            .arg("--plugins")
            .arg(self.plugins())
            .arg("--config")
            .arg(config)
            .env("TOOLHOST_LOG", "info,toolhost=debug")
            .env("XDG_CACHE_HOME", self.path("cache"))
            .env("DOCKER_CONFIG", self.path("docker"));
        Host::spawn(command, era, Elicitation::Unsupported).await
    }
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `skopeo inspect --raw` of `reference` (manifest), or with `--config`.
fn skopeo_raw(reference: &str, config: bool) -> Value {
    let mut command = Command::new("skopeo");
    command.args(["inspect", "--tls-verify=false", "--raw"]);
    if config {
        command.arg("--config");
    }
    let out = command
        .arg(format!("docker://{reference}"))
        .output()
        .unwrap();
    assert!(out.status.success(), "skopeo: {}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

async fn tool_names(host: &Host) -> Vec<String> {
    let mut names: Vec<String> = host
        .tools()
        .await
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    names
}

#[tokio::test]
#[ignore = "needs docker-registry, skopeo and htpasswd (apt-get install -y docker-registry skopeo apache2-utils); cargo xtask test runs it when installed"]
async fn a_pushed_component_reads_in_skopeo_pulls_verified_and_serves() {
    let registry = Registry::start(None);
    let s = Scratch::new();
    let (private, public) = s.keypair("acme");
    let reference = registry.reference("acme/hello", "1.0.0");
    let file = s.component_file("hello", "hello.wasm");
    let digest = s.push(&file, &reference, Some(&private));

    // skopeo reads the standard Wasm OCI layout.
    let manifest = skopeo_raw(&reference, false);
    assert_eq!(
        manifest["mediaType"],
        "application/vnd.oci.image.manifest.v1+json"
    );
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.wasm.config.v0+json"
    );
    assert_eq!(manifest["layers"].as_array().unwrap().len(), 1);
    assert_eq!(manifest["layers"][0]["mediaType"], "application/wasm");
    assert_eq!(
        manifest["layers"][0]["annotations"]["org.opencontainers.image.title"],
        "hello.wasm"
    );
    assert_eq!(
        manifest["annotations"]["org.opencontainers.image.version"],
        "1.0.0"
    );
    assert!(manifest["annotations"]["org.opencontainers.image.created"].is_string());
    let config = skopeo_raw(&reference, true);
    assert_eq!(config["architecture"], "wasm");
    assert_eq!(config["os"], "wasip2");
    assert_eq!(
        config["layerDigests"],
        json!([manifest["layers"][0]["digest"]])
    );
    // The cosign signature sits where cosign puts it.
    let signature = skopeo_raw(
        &registry.reference("acme/hello", &format!("{}.sig", digest.replace(':', "-"))),
        false,
    );
    assert_eq!(
        signature["layers"][0]["mediaType"],
        "application/vnd.dev.cosign.simplesigning.v1+json"
    );
    assert!(
        signature["layers"][0]["annotations"]["dev.cosignproject.cosign/signature"].is_string()
    );

    // pull: verified against the key, installed whole.
    let out = s.pull(&reference, &["--key", public.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with(&digest),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(s.installed(), ["hello.wasm"]);
    assert_eq!(
        std::fs::read(s.plugins().join("hello.wasm")).unwrap(),
        component("hello")
    );

    // serve from the reference; the tool answers. Policy conditions see
    // the key that verified it as `plugin.signer`.
    std::fs::remove_file(s.plugins().join("hello.wasm")).unwrap();
    let config = s.config(&format!(
        "components = [\"oci://{reference}\"]\n[oci]\ntrusted_keys = [\"{}\"]\n\
         [[policy.rules]]\nname = \"acme-may-not-fetch\"\noutcome = \"deny\"\n\
         reason = \"signed by acme: no fetching\"\n\
         when = 'tool.name == \"fetch_url\" && plugin.signer == \"acme.pub\"'\n",
        public.display()
    ));
    let host = s.serve(&config, Era::Modern).await;
    assert_eq!(
        host.ok("greet", json!({"name": "OCI"})).await["message"],
        "Hello, OCI!"
    );
    let issue = host
        .tool_error("fetch_url", json!({"url": "https://example.com/"}))
        .await;
    assert_eq!(issue["message"], "signed by acme: no fetching", "{issue}");
}

#[tokio::test]
#[ignore = "needs docker-registry, skopeo and htpasswd (apt-get install -y docker-registry skopeo apache2-utils); cargo xtask test runs it when installed"]
async fn a_registry_with_basic_auth_takes_credentials_from_the_environment_or_docker_config() {
    let registry = Registry::start(Some(("alice", "s3cret")));
    let s = Scratch::new();
    let reference = registry.reference("acme/hello", "v1");
    let file = s.component_file("hello", "hello.wasm");

    // Without credentials: refused, with what to do.
    let out = s.toolhost(&["push", file.to_str().unwrap(), &reference], &[]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("docker login"),
        "{}",
        text(&out.stderr)
    );

    // The environment (CI's way), for the registry it names.
    let creds = [
        ("TOOLHOST_REGISTRY_USERNAME", "alice"),
        ("TOOLHOST_REGISTRY_PASSWORD", "s3cret"),
        ("TOOLHOST_REGISTRY", registry.addr.as_str()),
    ];
    let out = s.toolhost(&["push", file.to_str().unwrap(), &reference], &creds);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Without the registry named, they are not used, and the error says
    // what to set.
    let out = s.toolhost(&["push", file.to_str().unwrap(), &reference], &creds[..2]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("TOOLHOST_REGISTRY="),
        "{}",
        text(&out.stderr)
    );

    let out = s.pull(&reference, &["--allow-unsigned"]);
    assert!(!out.status.success());
    assert!(s.installed().is_empty());

    // Docker's config.json `auths` (what `docker login` writes).
    use base64::Engine as _;
    let auth = base64::engine::general_purpose::STANDARD.encode("alice:s3cret");
    std::fs::create_dir_all(s.path("docker")).unwrap();
    std::fs::write(
        s.path("docker/config.json"),
        json!({"auths": {registry.addr.clone(): {"auth": auth}}}).to_string(),
    )
    .unwrap();
    let out = s.pull(&reference, &["--allow-unsigned"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(s.installed(), ["hello.wasm"]);

    // A credential helper named in config.json (`credHelpers`), as
    // `docker-credential-*` programs on PATH are used.
    std::fs::remove_file(s.plugins().join("hello.wasm")).unwrap();
    std::fs::write(
        s.path("docker/config.json"),
        json!({"credHelpers": {registry.addr.clone(): "toolhosttest"}}).to_string(),
    )
    .unwrap();
    let bin = s.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let helper = bin.join("docker-credential-toolhosttest");
    std::fs::write(
        &helper,
        format!(
            "#!/bin/sh\nread server\nprintf '%s' '{{\"ServerURL\":\"{}\",\"Username\":\"alice\",\"Secret\":\"s3cret\"}}'\n",
            registry.addr
        ),
    )
    .unwrap();
    std::fs::set_permissions(&helper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let plugins = s.plugins();
    let out = s.toolhost(
        &[
            "pull",
            &reference,
            "--plugins",
            plugins.to_str().unwrap(),
            "--allow-unsigned",
        ],
        &[("PATH", &path)],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(s.installed(), ["hello.wasm"]);
}

/// Asserts that `out` failed naming `needle`, and that nothing was
/// installed or stored.
fn assert_refused(s: &Scratch, out: &Output, needle: &str) {
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("refused") && stderr.contains(needle),
        "{needle}: {stderr}"
    );
    assert!(s.installed().is_empty(), "{needle}: {:?}", s.installed());
    assert!(s.stored().is_empty(), "{needle}: {:?}", s.stored());
}

#[tokio::test]
#[ignore = "needs docker-registry, skopeo and htpasswd (apt-get install -y docker-registry skopeo apache2-utils); cargo xtask test runs it when installed"]
async fn unsigned_untrusted_and_borrowed_signatures_are_refused_and_nothing_is_installed() {
    let registry = Registry::start(None);
    let s = Scratch::new();
    let (acme_private, acme_public) = s.keypair("acme");
    let (_, other_public) = s.keypair("other");
    let file = s.component_file("hello", "hello.wasm");
    let acme = acme_public.to_str().unwrap();

    // Unsigned, where a signature is required (the default).
    let unsigned = registry.reference("acme/unsigned", "v1");
    s.push(&file, &unsigned, None);
    assert_refused(&s, &s.pull(&unsigned, &["--key", acme]), "is not signed");
    // Also with no key at all: the default policy requires a signature.
    assert_refused(&s, &s.pull(&unsigned, &[]), "oci.require_signature");

    // Signed, but by a key the operator does not trust.
    let signed = registry.reference("acme/hello", "v1");
    let signed_digest = s.push(&file, &signed, Some(&acme_private));
    assert_refused(
        &s,
        &s.pull(&signed, &["--key", other_public.to_str().unwrap()]),
        "trusted key",
    );

    // A trusted signature copied onto another artifact: it names the first
    // manifest's digest, not the second's.
    let other = s.component_file("echo", "hello.wasm");
    let other_digest = s.push(&other, &registry.reference("acme/hello", "v2"), None);
    copy_signature(&registry, "acme/hello", &signed_digest, &other_digest).await;
    assert_refused(
        &s,
        &s.pull(&registry.reference("acme/hello", "v2"), &["--key", acme]),
        &format!("signs {signed_digest}"),
    );
}

/// Tags the signature manifest of `from` as the signature of `to`, as an
/// attacker with push rights could.
async fn copy_signature(registry: &Registry, repository: &str, from: &str, to: &str) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = oci_client::Client::new(oci_client::client::ClientConfig {
        protocol: oci_client::client::ClientProtocol::Http,
        ..Default::default()
    });
    let auth = oci_client::secrets::RegistryAuth::Anonymous;
    let tag = |digest: &str| {
        oci_client::Reference::with_tag(
            registry.addr.clone(),
            repository.to_string(),
            format!("{}.sig", digest.replace(':', "-")),
        )
    };
    let (manifest, _) = client
        .pull_manifest_raw(
            &tag(from),
            &auth,
            &["application/vnd.oci.image.manifest.v1+json"],
        )
        .await
        .unwrap();
    client
        .push_manifest_raw(
            &tag(to),
            manifest,
            "application/vnd.oci.image.manifest.v1+json"
                .parse()
                .unwrap(),
        )
        .await
        .unwrap();
}

/// Changes one byte of `path` (keeping its length), at `at` bytes from the
/// end.
fn flip_byte(path: &Path, from_end: usize) {
    let mut bytes = std::fs::read(path).unwrap();
    let i = bytes.len() - from_end;
    bytes[i] = if bytes[i] == b'0' { b'1' } else { b'0' };
    std::fs::write(path, bytes).unwrap();
}

#[tokio::test]
#[ignore = "needs docker-registry, skopeo and htpasswd (apt-get install -y docker-registry skopeo apache2-utils); cargo xtask test runs it when installed"]
async fn tampered_oversized_and_foreign_artifacts_are_refused_and_nothing_is_installed() {
    let registry = Registry::start(None);
    let s = Scratch::new();
    let file = s.component_file("hello", "hello.wasm");

    // A layer changed in the registry's storage.
    let reference = registry.reference("acme/layer", "v1");
    s.push(&file, &reference, None);
    let manifest = skopeo_raw(&reference, false);
    let layer = manifest["layers"][0]["digest"].as_str().unwrap();
    flip_byte(&registry.blob_file(layer), 100);
    assert_refused(
        &s,
        &s.pull(&reference, &["--allow-unsigned"]),
        "does not match its digest",
    );

    // A manifest changed in the registry's storage (a digit of its
    // creation time: still valid JSON). Another component than the later
    // steps push: manifests are content-addressed, and two pushes of one
    // file within a second make the same manifest, so tampering with it
    // would tamper with theirs too.
    let reference = registry.reference("acme/manifest", "v1");
    let other = s.component_file("echo", "echo.wasm");
    let digest = s.push(&other, &reference, None);
    let stored = registry.blob_file(&digest);
    let body = std::fs::read_to_string(&stored).unwrap();
    let at = body
        .find("\"org.opencontainers.image.created\":\"")
        .unwrap()
        + 38;
    flip_byte(&stored, body.len() - at);
    assert_refused(
        &s,
        &s.pull(&reference, &["--allow-unsigned"]),
        "does not match its digest",
    );

    // A manifest over the bound.
    let reference = registry.reference("acme/small", "v1");
    s.push(&file, &reference, None);
    let config = s.config("[oci]\nmax_manifest_bytes = 256\n");
    let args = ["--allow-unsigned", "--config", config.to_str().unwrap()];
    assert_refused(&s, &s.pull(&reference, &args), "oci.max_manifest_bytes");

    // A layer over the bound (hello.wasm is larger than 1 KiB).
    let config = s.config("[oci]\nmax_blob_bytes = 1024\n");
    let args = ["--allow-unsigned", "--config", config.to_str().unwrap()];
    assert_refused(&s, &s.pull(&reference, &args), "oci.max_blob_bytes");

    // An artifact that is not a component: a container image layout.
    let reference = registry.reference("acme/image", "v1");
    push_container_image(&registry, "acme/image", "v1").await;
    assert_refused(
        &s,
        &s.pull(&reference, &["--allow-unsigned"]),
        "not a WebAssembly component artifact",
    );
}

/// Pushes a (tiny) container image: an OCI image config and a tar layer.
async fn push_container_image(registry: &Registry, repository: &str, tag: &str) {
    let layer = oci_client::client::ImageLayer::oci_v1(vec![0u8; 1024], None);
    let config = oci_client::client::Config::oci_v1(
        br#"{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}"#
            .to_vec(),
        None,
    );
    push_raw(registry, repository, tag, layer, config).await;
}

/// Pushes one `layer` with `config` as `repository:tag`, with the registry
/// client directly (as another tool would), bypassing `toolhost push`'s
/// checks.
async fn push_raw(
    registry: &Registry,
    repository: &str,
    tag: &str,
    layer: oci_client::client::ImageLayer,
    config: oci_client::client::Config,
) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = oci_client::Client::new(oci_client::client::ClientConfig {
        protocol: oci_client::client::ClientProtocol::Http,
        ..Default::default()
    });
    let reference =
        oci_client::Reference::with_tag(registry.addr.clone(), repository.into(), tag.into());
    client
        .push(
            &reference,
            &[layer],
            config,
            &oci_client::secrets::RegistryAuth::Anonymous,
            None,
        )
        .await
        .unwrap();
}

#[tokio::test]
#[ignore = "needs docker-registry, skopeo and htpasswd (apt-get install -y docker-registry skopeo apache2-utils); cargo xtask test runs it when installed"]
async fn a_server_serving_oci_references_starts_again_with_the_registry_gone() {
    let mut registry = Registry::start(None);
    let s = Scratch::new();
    let (private, public) = s.keypair("acme");
    let reference = registry.reference("acme/hello", "stable");
    s.push(
        &s.component_file("hello", "hello.wasm"),
        &reference,
        Some(&private),
    );
    let config = s.config(&format!(
        "components = [\"oci://{reference}\"]\n[oci]\ntrusted_keys = [\"{}\"]\n",
        public.display()
    ));

    let host = s.serve(&config, Era::Legacy).await;
    assert_eq!(
        host.ok("greet", json!({"name": "A"})).await["message"],
        "Hello, A!"
    );
    drop(host);
    let lock = std::fs::read_to_string(s.path("toolhost.lock")).unwrap();
    assert!(
        lock.contains(&reference) && lock.contains("sha256:"),
        "{lock}"
    );

    // The registry goes away, and the installed file with it: the content
    // store (verified again against the trust policy) brings it back.
    registry.stop();
    std::fs::remove_file(s.plugins().join("hello.wasm")).unwrap();
    let host = s.serve(&config, Era::Modern).await;
    assert_eq!(
        host.ok("greet", json!({"name": "B"})).await["message"],
        "Hello, B!"
    );
    drop(host);

    // The stored signature is checked against the policy in force: with
    // the key no longer trusted, nothing is installed.
    std::fs::remove_file(s.plugins().join("hello.wasm")).unwrap();
    let (_, other) = s.keypair("other");
    let config = s.config(&format!(
        "components = [\"oci://{reference}\"]\n[oci]\ntrusted_keys = [\"{}\"]\n",
        other.display()
    ));
    let host = s.serve(&config, Era::Legacy).await;
    assert!(tool_names(&host).await.is_empty());
    host.wait_for_stderr("was not installed").await;
}

#[tokio::test]
#[ignore = "needs docker-registry, skopeo and htpasswd (apt-get install -y docker-registry skopeo apache2-utils); cargo xtask test runs it when installed"]
async fn a_component_the_trust_policy_now_refuses_stops_though_its_file_stays() {
    let registry = Registry::start(None);
    let s = Scratch::new();
    let (private, public) = s.keypair("acme");
    let reference = registry.reference("acme/hello", "stable");
    s.push(
        &s.component_file("hello", "hello.wasm"),
        &reference,
        Some(&private),
    );
    let trusting = |key: &Path| {
        s.config(&format!(
            "components = [\"oci://{reference}\"]\n[oci]\ntrusted_keys = [\"{}\"]\n",
            key.display()
        ))
    };
    let host = s.serve(&trusting(&public), Era::Legacy).await;
    assert_eq!(
        host.ok("greet", json!({"name": "A"})).await["message"],
        "Hello, A!"
    );
    drop(host);

    // The signer is no longer trusted. The file installed earlier is still
    // in the plugin directory: it must not be served.
    let (_, other) = s.keypair("other");
    let host = s.serve(&trusting(&other), Era::Legacy).await;
    assert!(
        s.plugins().join("hello.wasm").exists(),
        "the old file stays"
    );
    host.wait_for_stderr("was not installed").await;
    let refused = host
        .wait_for_stderr("the file left from an earlier install is not served")
        .await;
    assert!(refused.contains("hello.wasm"), "{refused}");
    assert!(
        tool_names(&host).await.is_empty(),
        "a component its trust policy refuses does not run"
    );
}

#[tokio::test]
#[ignore = "needs docker-registry, skopeo and htpasswd (apt-get install -y docker-registry skopeo apache2-utils); cargo xtask test runs it when installed"]
async fn a_pulled_and_swapped_component_hot_reloads() {
    let registry = Registry::start(None);
    let s = Scratch::new();
    let v1 = registry.reference("acme/tools", "v1");
    let v2 = registry.reference("acme/tools", "v2");
    s.push(&s.component_file("hello", "tools.wasm"), &v1, None);
    s.push(&s.component_file("echo", "tools.wasm"), &v2, None);
    let config = s.config("");

    for era in [Era::Legacy, Era::Modern] {
        let out = s.pull(&v1, &["--allow-unsigned"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let host = s.serve(&config, era).await;
        let mut changes = Changes::open(&host, era).await;
        assert_eq!(tool_names(&host).await, ["fetch_url", "greet"]);

        let out = s.pull(&v2, &["--allow-unsigned"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        changes.next(&host).await;
        assert_eq!(tool_names(&host).await, ["echo"], "{era:?}");
        assert_eq!(
            host.ok("echo", json!({"message": "swapped"})).await["message"],
            "swapped"
        );
    }
}

#[tokio::test]
#[ignore = "needs docker-registry, skopeo and htpasswd (apt-get install -y docker-registry skopeo apache2-utils); cargo xtask test runs it when installed"]
async fn the_lock_file_pins_a_tag_until_update_shows_and_takes_the_new_digest() {
    let registry = Registry::start(None);
    let s = Scratch::new();
    let reference = registry.reference("acme/tool", "stable");
    let first = s.push(&s.component_file("hello", "tool.wasm"), &reference, None);
    let config = s.config(&format!(
        "components = [\"oci://{reference}\"]\n[plugins.tool]\nrequire_signature = false\n"
    ));
    let config = config.to_str().unwrap();
    let plugins = s.plugins();
    let plugins = plugins.to_str().unwrap();
    let list = |s: &Scratch| {
        let out = s.toolhost(&["list", "--plugins", plugins, "--config", config], &[]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    assert!(list(&s).contains("greet"));
    let lock = s.path("toolhost.lock");
    assert!(std::fs::read_to_string(&lock).unwrap().contains(&first));

    // The tag moves: what runs does not.
    let second = s.push(&s.component_file("echo", "tool.wasm"), &reference, None);
    assert_ne!(first, second);
    let table = list(&s);
    assert!(
        table.contains("greet") && !table.contains("echo"),
        "{table}"
    );

    // `update` shows the difference and takes it.
    let out = s.toolhost(&["update", "--plugins", plugins, "--config", config], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    assert!(
        report.contains(&format!("oci://{reference}: {first} -> {second}")),
        "{report}"
    );
    assert!(std::fs::read_to_string(&lock).unwrap().contains(&second));
    let table = list(&s);
    assert!(
        table.contains("echo") && !table.contains("greet"),
        "{table}"
    );

    // Nothing moved: update says so.
    let out = s.toolhost(&["update", "--plugins", plugins, "--config", config], &[]);
    assert!(
        text(&out.stdout).contains("unchanged"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn push_pull_and_update_document_their_flags() {
    let s = Scratch::new();
    for (command, flags) in [
        ("push", &["--sign"][..]),
        (
            "pull",
            &["--plugins", "--config", "--key", "--allow-unsigned"][..],
        ),
        ("update", &["--plugins", "--config"][..]),
    ] {
        let help = text(&s.toolhost(&[command, "--help"], &[]).stdout);
        for flag in flags {
            assert!(help.contains(flag), "{command}: {help}");
        }
    }
}

#[tokio::test]
#[ignore = "needs docker-registry, skopeo and htpasswd (apt-get install -y docker-registry skopeo apache2-utils); cargo xtask test runs it when installed"]
async fn a_key_trusted_for_one_plugin_is_trusted_for_that_plugin_only() {
    let registry = Registry::start(None);
    let s = Scratch::new();
    let (private, public) = s.keypair("team");
    let reference = registry.reference("acme/tool", "v1");
    s.push(
        &s.component_file("hello", "tool.wasm"),
        &reference,
        Some(&private),
    );
    let plugins = s.plugins();
    let plugins = plugins.to_str().unwrap();
    let list = |block: &str| {
        let config = s.config(&format!(
            "components = [\"oci://{reference}\"]\n[plugins.{block}]\ntrusted_keys = [\"{}\"]\n",
            public.display()
        ));
        s.toolhost(
            &[
                "list",
                "--plugins",
                plugins,
                "--config",
                config.to_str().unwrap(),
            ],
            &[],
        )
    };
    // Trusted for another plugin's files: not for this component.
    let out = list("other");
    assert!(
        !text(&out.stdout).contains("greet"),
        "{}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr).contains("trusted key"),
        "{}",
        text(&out.stderr)
    );
    assert!(s.installed().is_empty());
    // Trusted in the block that covers tool.wasm: installed and served.
    let out = list("tool");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("greet"), "{}", text(&out.stdout));
}

/// A request a fake server received.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    authorization: Option<String>,
}

/// A tiny HTTP server (axum) on `ip`, port 0: records every request and
/// answers it with `answer`. For registries that misbehave in ways a real
/// one cannot be made to.
struct FakeServer {
    /// `IP:PORT`.
    addr: String,
    seen: std::sync::Arc<std::sync::Mutex<Vec<Seen>>>,
}

impl FakeServer {
    async fn start(
        ip: &str,
        answer: impl Fn(&Seen) -> axum::response::Response + Clone + Send + Sync + 'static,
    ) -> FakeServer {
        let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let seen: std::sync::Arc<std::sync::Mutex<Vec<Seen>>> = Default::default();
        let log = seen.clone();
        let router = axum::Router::new().fallback(move |request: axum::extract::Request| {
            let answer = answer.clone();
            let log = log.clone();
            async move {
                let request = Seen {
                    method: request.method().to_string(),
                    path: request.uri().path().to_string(),
                    authorization: request
                        .headers()
                        .get("authorization")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_string),
                };
                log.lock().unwrap().push(request.clone());
                answer(&request)
            }
        });
        tokio::spawn(async move { axum::serve(listener, router).await });
        FakeServer { addr, seen }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// Runs `toolhost ARGS` off the runtime (the fake servers answer on it).
async fn toolhost_blocking(s: &Scratch, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolhost"));
    command
        .args(args)
        .env("TOOLHOST_LOG", "warn")
        .env("XDG_CACHE_HOME", s.path("cache"))
        .env("DOCKER_CONFIG", s.path("docker"))
        .env_remove("TOOLHOST_REGISTRY_USERNAME")
        .env_remove("TOOLHOST_REGISTRY_PASSWORD")
        .env_remove("TOOLHOST_REGISTRY");
    for (k, v) in env {
        command.env(k, v);
    }
    tokio::task::spawn_blocking(move || command.output().expect("toolhost runs"))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_credentials_go_only_to_the_registry_they_name_and_a_token_service_on_its_host() {
    use axum::response::IntoResponse;
    let s = Scratch::new();
    // The token service is on another loopback address than the registry:
    // plain http is allowed on this machine, so only the host rule can
    // keep the credentials from it.
    let token = FakeServer::start("127.0.0.2", |_| {
        axum::http::StatusCode::UNAUTHORIZED.into_response()
    })
    .await;
    let realm = format!("http://{}/token", token.addr);
    let registry = FakeServer::start("127.0.0.1", move |_| {
        (
            axum::http::StatusCode::UNAUTHORIZED,
            [(
                "www-authenticate",
                format!("Bearer realm=\"{realm}\",service=\"fake\""),
            )],
        )
            .into_response()
    })
    .await;
    let reference = format!("{}/acme/hello:v1", registry.addr);
    let plugins = s.plugins();
    let pull = |config: Option<&Path>, env: &[(&str, &str)]| {
        let mut args = vec![
            "pull".to_string(),
            reference.clone(),
            "--plugins".into(),
            plugins.to_str().unwrap().into(),
            "--allow-unsigned".into(),
        ];
        if let Some(config) = config {
            args.extend(["--config".into(), config.to_str().unwrap().into()]);
        }
        let env: Vec<(String, String)> = [
            ("TOOLHOST_REGISTRY_USERNAME", "alice"),
            ("TOOLHOST_REGISTRY_PASSWORD", "s3cret"),
        ]
        .iter()
        .chain(env)
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let s = &s;
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let env: Vec<(&str, &str)> =
                env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            toolhost_blocking(s, &args, &env).await
        }
    };
    use base64::Engine as _;
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("alice:s3cret")
    );
    let sent_credentials = |server: &FakeServer| {
        server
            .seen()
            .iter()
            .filter(|r| r.authorization.is_some())
            .count()
    };

    // Named for this registry, whose realm is on another host: refused
    // before anything is sent there, saying what to configure.
    let out = pull(None, &[("TOOLHOST_REGISTRY", &registry.addr)]).await;
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("oci.token_hosts") && stderr.contains("\"127.0.0.2\""),
        "{stderr}"
    );
    assert!(token.seen().is_empty(), "{:?}", token.seen());
    assert_eq!(sent_credentials(&registry), 0, "{:?}", registry.seen());

    // Credentials that name no registry: used for none, and the error
    // says what to set.
    let out = pull(None, &[]).await;
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("TOOLHOST_REGISTRY="), "{stderr}");
    assert!(token.seen().is_empty(), "{:?}", token.seen());
    assert_eq!(sent_credentials(&registry), 0, "{:?}", registry.seen());

    // Named for another registry: this one is asked anonymously, and its
    // realm on another host is refused all the same (an anonymous token
    // goes back to the registry too, so a realm anywhere would let a
    // registry have this process fetch from any host for it).
    let out = pull(None, &[("TOOLHOST_REGISTRY", "ghcr.io")]).await;
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("oci.token_hosts"), "{stderr}");
    assert!(token.seen().is_empty(), "{:?}", token.seen());
    assert_eq!(sent_credentials(&registry), 0, "{:?}", registry.seen());

    // With the token service's host configured, it gets them: the rule,
    // not the setup, is what kept them back above.
    let config = s.config("[oci]\ntoken_hosts = [\"127.0.0.2\"]\n");
    let out = pull(Some(&config), &[("TOOLHOST_REGISTRY", &registry.addr)]).await;
    assert!(!out.status.success(), "{}", text(&out.stderr));
    let asked: Vec<_> = token
        .seen()
        .into_iter()
        .filter_map(|r| r.authorization)
        .collect();
    assert_eq!(asked, [basic], "{:?}", token.seen());
    assert_eq!(sent_credentials(&registry), 0, "{:?}", registry.seen());
}

#[tokio::test]
async fn a_registry_that_trickles_holds_up_its_component_no_longer_than_the_pull_timeout() {
    use axum::response::IntoResponse;
    let s = Scratch::new();
    let announced = format!("sha256:{}", "a".repeat(64));
    // A manifest sent a byte a second, never ending: no read ever times out.
    let registry = FakeServer::start("127.0.0.1", move |request| {
        match (request.method.as_str(), request.path.as_str()) {
            ("HEAD", path) if path.ends_with("/manifests/v1") => {
                ([("docker-content-digest", announced.clone())]).into_response()
            }
            ("GET", path) if path.contains("/manifests/") => {
                let trickle = futures_util::stream::unfold((), |()| async {
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                    Some((
                        Ok::<_, std::io::Error>(axum::body::Bytes::from_static(b" ")),
                        (),
                    ))
                });
                axum::body::Body::from_stream(trickle).into_response()
            }
            _ => axum::http::StatusCode::OK.into_response(),
        }
    })
    .await;
    std::fs::write(s.plugins().join("hello.wasm"), component("hello")).unwrap();
    let config = s.config(&format!(
        "components = [\"oci://{}/acme/slow:v1\"]\n[oci]\npull_timeout_secs = 5\n",
        registry.addr
    ));
    let host = s.serve(&config, Era::Legacy).await;
    let stderr = host.wait_for_stderr("oci.pull_timeout_secs (5 s)").await;
    assert!(stderr.contains("acme/slow"), "{stderr}");
    let out = host.ok("greet", json!({"name": "Ada"})).await;
    assert_eq!(out["message"], "Hello, Ada!", "the other components serve");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_over_the_bound_is_refused_without_reading_past_it() {
    use axum::response::IntoResponse;
    use std::sync::atomic::{AtomicU64, Ordering};
    static CHUNK: [u8; 64 << 10] = [b' '; 64 << 10];
    // 96 MiB, sent without a length, as an endless body would be.
    const BODY: u64 = 96 << 20;
    let s = Scratch::new();
    let sent = std::sync::Arc::new(AtomicU64::new(0));
    let counter = sent.clone();
    let digest = format!("sha256:{}", "a".repeat(64));
    let announced = digest.clone();
    let registry = FakeServer::start("127.0.0.1", move |request| {
        match (request.method.as_str(), request.path.as_str()) {
            ("HEAD", path) if path.ends_with("/manifests/v1") => {
                ([("docker-content-digest", announced.clone())]).into_response()
            }
            ("GET", path) if path.contains("/manifests/") => {
                let counter = counter.clone();
                let chunks = futures_util::stream::unfold(0u64, move |at| {
                    let counter = counter.clone();
                    async move {
                        (at < BODY).then(|| {
                            counter.fetch_add(CHUNK.len() as u64, Ordering::Relaxed);
                            (
                                Ok::<_, std::io::Error>(axum::body::Bytes::from_static(&CHUNK)),
                                at + CHUNK.len() as u64,
                            )
                        })
                    }
                });
                axum::body::Body::from_stream(chunks).into_response()
            }
            // `/v2/`: no authentication.
            _ => axum::http::StatusCode::OK.into_response(),
        }
    })
    .await;
    let reference = format!("{}/acme/big:v1", registry.addr);
    let config = s.config("[oci]\nmax_manifest_bytes = 65536\n");
    let plugins = s.plugins();
    let out = toolhost_blocking(
        &s,
        &[
            "pull",
            &reference,
            "--plugins",
            plugins.to_str().unwrap(),
            "--allow-unsigned",
            "--config",
            config.to_str().unwrap(),
        ],
        &[],
    )
    .await;
    assert_refused(&s, &out, "oci.max_manifest_bytes");
    assert!(
        registry
            .seen()
            .iter()
            .any(|r| r.method == "GET" && r.path.ends_with(&digest)),
        "{:?}",
        registry.seen()
    );
    // What the server produced is the bound plus what the sockets buffer,
    // far from the whole body.
    let produced = sent.load(Ordering::Relaxed);
    assert!(produced < 16 << 20, "{produced} bytes were sent");
}

#[tokio::test]
#[ignore = "needs docker-registry, skopeo and htpasswd (apt-get install -y docker-registry skopeo apache2-utils); cargo xtask test runs it when installed"]
async fn an_artifact_whose_layer_is_a_core_module_is_refused_and_nothing_is_installed() {
    let registry = Registry::start(None);
    let s = Scratch::new();
    // The Wasm OCI layout `push` writes, around a core module.
    let layer = oci_client::client::ImageLayer::new(
        b"\0asm\x01\0\0\0".to_vec(),
        "application/wasm".into(),
        None,
    );
    let config = oci_client::client::Config::new(
        br#"{"architecture":"wasm","os":"wasip2","layerDigests":[]}"#.to_vec(),
        "application/vnd.wasm.config.v0+json".into(),
        None,
    );
    push_raw(&registry, "acme/module", "v1", layer, config).await;
    assert_refused(
        &s,
        &s.pull(
            &registry.reference("acme/module", "v1"),
            &["--allow-unsigned"],
        ),
        "is not a WebAssembly component (a core WebAssembly module)",
    );
}

#[tokio::test]
#[ignore = "needs docker-registry, skopeo and htpasswd (apt-get install -y docker-registry skopeo apache2-utils); cargo xtask test runs it when installed"]
async fn pulling_into_a_missing_plugin_directory_names_the_directory_and_fetches_nothing() {
    let registry = Registry::start(None);
    let s = Scratch::new();
    let reference = registry.reference("acme/hello", "v1");
    s.push(&s.component_file("hello", "hello.wasm"), &reference, None);
    let missing = s.path("missing/plugins");
    let out = s.toolhost(
        &[
            "pull",
            &reference,
            "--plugins",
            missing.to_str().unwrap(),
            "--allow-unsigned",
        ],
        &[],
    );
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the plugin directory {} does not exist",
            missing.display()
        )) && stderr.contains("mkdir -p"),
        "{stderr}"
    );
    assert!(!missing.exists());
    assert!(s.stored().is_empty(), "{:?}", s.stored());
}

/// `skopeo copy` of `from` to `to`, both on the test registry, digests kept.
fn skopeo_copy(from: &str, to: &str) {
    let out = Command::new("skopeo")
        .args([
            "copy",
            "--src-tls-verify=false",
            "--dest-tls-verify=false",
            "--preserve-digests",
        ])
        .arg(format!("docker://{from}"))
        .arg(format!("docker://{to}"))
        .output()
        .unwrap();
    assert!(out.status.success(), "skopeo copy: {}", text(&out.stderr));
}

#[tokio::test]
#[ignore = "needs docker-registry, skopeo and htpasswd (apt-get install -y docker-registry skopeo apache2-utils); cargo xtask test runs it when installed"]
async fn a_signed_artifact_copied_into_another_repository_is_refused_unless_its_key_is_trusted_for_any()
 {
    let registry = Registry::start(None);
    let s = Scratch::new();
    let (private, public) = s.keypair("acme");
    let original = registry.reference("acme/hello", "v1");
    let digest = s.push(
        &s.component_file("hello", "hello.wasm"),
        &original,
        Some(&private),
    );
    // Copied, with its signature, as anyone with push rights to another
    // repository (or another registry) could.
    let signature_tag = format!("{}.sig", digest.replace(':', "-"));
    let copy = registry.reference("evil/hello", "v1");
    skopeo_copy(&original, &copy);
    skopeo_copy(
        &registry.reference("acme/hello", &signature_tag),
        &registry.reference("evil/hello", &signature_tag),
    );

    let out = s.pull(&copy, &["--key", public.to_str().unwrap()]);
    assert_refused(&s, &out, "any_repository");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("was made for \"{}/acme/hello\"", registry.addr))
            && stderr.contains(&format!("not {}/evil/hello", registry.addr)),
        "{stderr}"
    );

    // In the repository it was signed for: installed.
    let out = s.pull(&original, &["--key", public.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::fs::remove_file(s.plugins().join("hello.wasm")).unwrap();

    // A mirror: the key trusted for any repository.
    let config = s.config(&format!(
        "[oci]\ntrusted_keys = [{{ path = \"{}\", any_repository = true }}]\n",
        public.display()
    ));
    let out = s.pull(&copy, &["--config", config.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(s.installed(), ["hello.wasm"]);
}
