//! Talking to a registry: toolhost's own reads (credentials, token, bounded
//! manifests and blobs), `oci-client` for pushes.
//!
//! - **Transport**: https, except to a loopback registry (`localhost`,
//!   `127.0.0.0/8`, `[::1]`), which is plain http as Docker treats it.
//! - **Credentials**, first found wins: the environment
//!   (`TOOLHOST_REGISTRY_USERNAME` and `TOOLHOST_REGISTRY_PASSWORD`, for
//!   the one registry `TOOLHOST_REGISTRY` names), then Docker's
//!   `config.json` (`$DOCKER_CONFIG` or `~/.docker`: `auths`, `credHelpers`,
//!   `credsStore`, each for the registry it is filed under), else
//!   anonymous. Environment credentials without `TOOLHOST_REGISTRY` are an
//!   error: they would otherwise go to every registry named.
//! - **Where credentials go** (ADR 0032): to the registry itself (a `Basic`
//!   challenge), or to the token service its `Bearer` challenge names, and
//!   then only if that realm is https (or on this machine) and on the
//!   registry's own host, Docker Hub's `auth.docker.io` for Docker Hub, or a
//!   host in `oci.token_hosts`. toolhost fetches the token itself and hands
//!   `oci-client` only the token, so no other code path sends the password;
//!   requests that carry credentials follow no redirect.
//! - **Bounds**: a manifest is read as a stream and refused as soon as it
//!   passes `oci.max_manifest_bytes` (before reading, when its length is
//!   announced); a layer likewise with `oci.max_blob_bytes`; a token answer
//!   and a signature payload with small fixed caps.
//! - **Digests**: a manifest fetched by digest must hash to it, one fetched
//!   by tag to the digest the registry names; a blob must hash to its
//!   descriptor's digest. A mismatch is an error, and nothing is kept.

use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::manifest::{OCI_IMAGE_MEDIA_TYPE, OciDescriptor};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference, RegistryOperation};

use super::OciError;
use super::store::sha256_digest;

/// Environment variable: the registry user name (with [`PASSWORD_ENV`]),
/// for the registry [`REGISTRY_ENV`] names.
pub const USERNAME_ENV: &str = "TOOLHOST_REGISTRY_USERNAME";
/// Environment variable: the registry password or token.
pub const PASSWORD_ENV: &str = "TOOLHOST_REGISTRY_PASSWORD";
/// Environment variable: the one registry (`host[:port]`, as in references)
/// the environment's credentials are for.
pub const REGISTRY_ENV: &str = "TOOLHOST_REGISTRY";

/// The manifest media types toolhost asks for.
const ACCEPTED_MANIFESTS: &[&str] = &[
    OCI_IMAGE_MEDIA_TYPE,
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
];

/// The largest token-service answer read: a JSON object holding a token
/// (registry tokens are a few KiB at most).
const MAX_TOKEN_BYTES: u64 = 64 << 10;

/// Docker Hub's registry hosts, whose token service is on another host
/// ([`DOCKER_HUB_TOKEN_HOST`]) and is accepted without configuration.
const DOCKER_HUB_REGISTRIES: &[&str] = &["index.docker.io", "registry-1.docker.io", "docker.io"];
/// Docker Hub's token service.
const DOCKER_HUB_TOKEN_HOST: &str = "auth.docker.io";

/// Size bounds of what is fetched.
#[derive(Debug, Clone, Copy)]
pub struct FetchLimits {
    /// Largest manifest, in bytes (`oci.max_manifest_bytes`).
    pub max_manifest_bytes: u64,
    /// Largest blob, in bytes (`oci.max_blob_bytes`).
    pub max_blob_bytes: u64,
    /// Most signatures considered on one manifest (`oci.max_signatures`).
    pub max_signatures: u64,
}

/// What a registry client needs from `[oci]`.
#[derive(Debug, Clone)]
pub struct ClientSettings {
    /// Size bounds.
    pub limits: FetchLimits,
    /// Hosts, besides a registry's own, whose token service may receive
    /// that registry's credentials (`oci.token_hosts`): `host` or
    /// `host:port`.
    pub token_hosts: Vec<String>,
}

/// Credentials found for one registry.
#[derive(Clone)]
enum Credential {
    /// A user name and password.
    Password { user: String, password: String },
    /// An identity token from Docker's config, sent to the registry as is.
    IdentityToken(String),
}

/// A connection to one registry, for one repository's reads or a push.
pub struct RegistryClient {
    /// `oci-client`, for pushes only.
    client: Client,
    /// toolhost's own HTTP client, for the challenge, the token, manifests
    /// and blobs; follows no redirect (credentials never leave the host
    /// they were checked for).
    http: reqwest::Client,
    /// For blob downloads, which registries redirect to storage: follows
    /// redirects (reqwest drops `Authorization` when the host changes).
    blobs: reqwest::Client,
    /// `host[:port]`, as `oci-client` resolves it (`docker.io` →
    /// `index.docker.io`).
    registry: String,
    /// `http` (loopback) or `https`.
    scheme: &'static str,
    /// Pull, or push (which needs a token with both scopes).
    operation: RegistryOperation,
    settings: ClientSettings,
    /// The authorization, worked out at the first request.
    auth: tokio::sync::OnceCell<RegistryAuth>,
}

/// The host part of `host[:port]` or `[v6]:port`.
fn host_of(registry: &str) -> &str {
    match registry.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(rest),
        None => registry.rsplit_once(':').map_or(registry, |(h, _)| h),
    }
}

/// Whether `host` (no port) names this machine.
fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Whether `registry` (`host[:port]`) is on this machine.
fn is_loopback(registry: &str) -> bool {
    is_loopback_host(host_of(registry))
}

/// The credentials for `registry` (as written in the reference, and as
/// resolved): the environment's if [`REGISTRY_ENV`] names it, then Docker's
/// config. Environment credentials that name no registry are an error.
fn credentials(written: &str, registry: &str) -> Result<Option<Credential>, OciError> {
    if let (Ok(user), Ok(password)) = (std::env::var(USERNAME_ENV), std::env::var(PASSWORD_ENV)) {
        match std::env::var(REGISTRY_ENV) {
            Ok(named)
                if named.eq_ignore_ascii_case(written) || named.eq_ignore_ascii_case(registry) =>
            {
                return Ok(Some(Credential::Password { user, password }));
            }
            Ok(_) => {}
            Err(_) => {
                return Err(OciError::UnscopedCredentials {
                    registry: written.to_string(),
                });
            }
        }
    }
    match docker_credential::get_credential(registry) {
        Ok(docker_credential::DockerCredential::UsernamePassword(user, password)) => {
            Ok(Some(Credential::Password { user, password }))
        }
        Ok(docker_credential::DockerCredential::IdentityToken(token)) => {
            Ok(Some(Credential::IdentityToken(token)))
        }
        Err(e) => {
            tracing::debug!("no Docker credentials for {registry}: {e}");
            Ok(None)
        }
    }
}

/// Checks the token service `realm` that `registry` named before
/// `registry`'s credentials are sent to it: https (plain http only on this
/// machine), and on the registry's own host, Docker Hub's token host for
/// Docker Hub, or a host of `token_hosts`. Returns the URL, or why not.
pub fn check_realm(
    registry: &str,
    realm: &str,
    token_hosts: &[String],
) -> Result<reqwest::Url, String> {
    let url = reqwest::Url::parse(realm).map_err(|e| format!("it is not a URL ({e})"))?;
    let Some(host) = url.host_str() else {
        return Err("it names no host".into());
    };
    match url.scheme() {
        "https" => {}
        "http" if is_loopback_host(host) => {}
        scheme => {
            return Err(format!(
                "it is {scheme}, not https (only a token service on this machine may use plain \
                 http); the registry must name an https realm"
            ));
        }
    }
    let host_port = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    };
    let own = host.eq_ignore_ascii_case(host_of(registry));
    let docker_hub = DOCKER_HUB_REGISTRIES
        .iter()
        .any(|r| r.eq_ignore_ascii_case(registry))
        && host.eq_ignore_ascii_case(DOCKER_HUB_TOKEN_HOST);
    let configured = token_hosts
        .iter()
        .any(|t| t.eq_ignore_ascii_case(host) || t.eq_ignore_ascii_case(&host_port));
    if own || docker_hub || configured {
        Ok(url)
    } else {
        Err(format!(
            "it is on another host than the registry; if {host} is {registry}'s token service, \
             add \"{host}\" to oci.token_hosts"
        ))
    }
}

/// A `Bearer` challenge's realm and service, if `value` has one.
fn bearer_challenge(value: &str) -> Option<(String, Option<String>)> {
    http_auth::ChallengeParser::new(value)
        .filter_map(Result::ok)
        .find(|c| c.scheme.eq_ignore_ascii_case("Bearer"))
        .and_then(|c| {
            let param = |name: &str| {
                c.params
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.to_unescaped())
            };
            Some((param("realm")?, param("service")))
        })
}

/// Reads `response`'s body, refusing it (with `too_large(size)`) as soon as
/// it passes `max` bytes, or before reading when its announced length
/// does: an endless or oversized answer costs at most `max` bytes.
async fn read_capped(
    mut response: reqwest::Response,
    max: u64,
    too_large: impl Fn(u64) -> OciError,
    read_error: impl Fn(reqwest::Error) -> OciError,
) -> Result<Vec<u8>, OciError> {
    if let Some(length) = response.content_length()
        && length > max
    {
        return Err(too_large(length));
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(&read_error)? {
        let size = (bytes.len() + chunk.len()) as u64;
        if size > max {
            return Err(too_large(size));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// What a token service answers.
#[derive(serde::Deserialize)]
struct TokenAnswer {
    token: Option<String>,
    access_token: Option<String>,
}

impl RegistryClient {
    /// A client for reading `reference`'s repository.
    pub fn for_reference(reference: &Reference, settings: &ClientSettings) -> RegistryClient {
        Self::new(reference, settings, RegistryOperation::Pull)
    }

    /// A client for pushing to `reference`'s repository.
    pub fn for_push(reference: &Reference, settings: &ClientSettings) -> RegistryClient {
        Self::new(reference, settings, RegistryOperation::Push)
    }

    fn new(
        reference: &Reference,
        settings: &ClientSettings,
        operation: RegistryOperation,
    ) -> RegistryClient {
        // The HTTP stack uses rustls with ring, as the host's other client.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let registry = reference.resolve_registry().to_string();
        let loopback = is_loopback(&registry);
        let client = Client::new(ClientConfig {
            protocol: if loopback {
                ClientProtocol::Http
            } else {
                ClientProtocol::Https
            },
            connect_timeout: Some(std::time::Duration::from_secs(10)),
            read_timeout: Some(std::time::Duration::from_secs(60)),
            ..ClientConfig::default()
        });
        let http = |redirect| {
            reqwest::Client::builder()
                .connect_timeout(std::time::Duration::from_secs(10))
                .read_timeout(std::time::Duration::from_secs(60))
                .redirect(redirect)
                .user_agent(concat!("toolhost/", env!("CARGO_PKG_VERSION")))
                .build()
                .expect("the HTTP client builds")
        };
        RegistryClient {
            client,
            http: http(reqwest::redirect::Policy::none()),
            blobs: http(reqwest::redirect::Policy::limited(5)),
            registry,
            scheme: if loopback { "http" } else { "https" },
            operation,
            settings: settings.clone(),
            auth: tokio::sync::OnceCell::new(),
        }
    }

    /// The written registry of `reference` (`docker.io`, not its resolved
    /// name), as Docker's config files it.
    fn written_registry(reference: &Reference) -> String {
        reference.registry().to_string()
    }

    fn unreachable(&self, what: &str, e: reqwest::Error) -> OciError {
        OciError::Registry {
            reference: self.registry.clone(),
            reason: format!("{what}: {e}"),
        }
    }

    /// The authorization for `reference`'s repository, worked out once:
    /// the registry's challenge, then (for a `Bearer` challenge) a token
    /// from its checked realm.
    async fn auth(&self, reference: &Reference) -> Result<&RegistryAuth, OciError> {
        self.auth
            .get_or_try_init(|| self.authorize(reference))
            .await
    }

    async fn authorize(&self, reference: &Reference) -> Result<RegistryAuth, OciError> {
        let credential = credentials(&Self::written_registry(reference), &self.registry)?;
        if let Some(Credential::IdentityToken(token)) = &credential {
            return Ok(RegistryAuth::Bearer(token.clone()));
        }
        let probe = self
            .http
            .get(format!("{}://{}/v2/", self.scheme, self.registry))
            .send()
            .await
            .map_err(|e| self.unreachable("cannot reach the registry", e))?;
        let challenge = probe
            .headers()
            .get(reqwest::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        drop(probe);
        let Some(challenge) = challenge else {
            return Ok(RegistryAuth::Anonymous);
        };
        let Some((realm, service)) = bearer_challenge(&challenge) else {
            // A `Basic` challenge: the credentials go to the registry
            // itself, the host they are filed under.
            return Ok(match credential {
                Some(Credential::Password { user, password }) => {
                    RegistryAuth::Basic(user, password)
                }
                _ => RegistryAuth::Anonymous,
            });
        };
        let scope = match self.operation {
            RegistryOperation::Pull => format!("repository:{}:pull", reference.repository()),
            RegistryOperation::Push => format!("repository:{}:pull,push", reference.repository()),
        };
        // Checked with or without credentials: an anonymous token is sent
        // back to the registry, so a realm anywhere would let a registry
        // have this process fetch (and hand it) what an internal service
        // gives out by source address.
        let mut url =
            check_realm(&self.registry, &realm, &self.settings.token_hosts).map_err(|reason| {
                OciError::TokenRealmRefused {
                    registry: self.registry.clone(),
                    realm: reqwest::Url::parse(&realm)
                        .map_or_else(|_| format!("{realm:?}"), |u| u.to_string()),
                    reason,
                }
            })?;
        {
            let mut query = url.query_pairs_mut();
            query.append_pair("scope", &scope);
            if let Some(service) = &service {
                query.append_pair("service", service);
            }
        }
        let mut request = self.http.get(url);
        if let Some(Credential::Password { user, password }) = &credential {
            request = request.basic_auth(user, Some(password));
        }
        let answer = request
            .send()
            .await
            .map_err(|e| self.unreachable("cannot reach its token service", e))?;
        if matches!(answer.status().as_u16(), 401 | 403) {
            return Err(OciError::Unauthorized {
                registry: self.registry.clone(),
            });
        }
        if !answer.status().is_success() {
            return Err(OciError::Registry {
                reference: self.registry.clone(),
                reason: format!("its token service answered {}", answer.status()),
            });
        }
        let body = read_capped(
            answer,
            MAX_TOKEN_BYTES,
            |size| OciError::Registry {
                reference: self.registry.clone(),
                reason: format!("its token service answered {size} bytes or more"),
            },
            |e| self.unreachable("reading its token", e),
        )
        .await?;
        let token = serde_json::from_slice::<TokenAnswer>(&body)
            .ok()
            .and_then(|t| t.token.or(t.access_token))
            .ok_or_else(|| OciError::Registry {
                reference: self.registry.clone(),
                reason: "its token service answered no token".into(),
            })?;
        Ok(RegistryAuth::Bearer(token))
    }

    /// `request` with the authorization for `reference`'s repository.
    async fn authorized(
        &self,
        request: reqwest::RequestBuilder,
        reference: &Reference,
    ) -> Result<reqwest::RequestBuilder, OciError> {
        Ok(match self.auth(reference).await? {
            RegistryAuth::Anonymous => request,
            RegistryAuth::Basic(user, password) => request.basic_auth(user, Some(password)),
            RegistryAuth::Bearer(token) => request.bearer_auth(token),
        })
    }

    /// The error for a registry answer that is not a success.
    fn status_error(&self, reference: &Reference, status: reqwest::StatusCode) -> OciError {
        match status.as_u16() {
            401 | 403 => OciError::Unauthorized {
                registry: self.registry.clone(),
            },
            _ => OciError::Registry {
                reference: reference.to_string(),
                reason: format!("the registry answered {status}"),
            },
        }
    }

    /// `/v2/REPOSITORY/manifests/DIGEST-OR-TAG` of `reference`.
    fn manifest_url(&self, reference: &Reference) -> String {
        let name = reference.digest().or(reference.tag()).unwrap_or("latest");
        format!(
            "{}://{}/v2/{}/manifests/{name}",
            self.scheme,
            self.registry,
            reference.repository()
        )
    }

    /// Sends a manifest request; `None` if there is no such manifest.
    async fn manifest_request(
        &self,
        reference: &Reference,
        method: reqwest::Method,
    ) -> Result<Option<reqwest::Response>, OciError> {
        let request = self
            .http
            .request(method, self.manifest_url(reference))
            .header(reqwest::header::ACCEPT, ACCEPTED_MANIFESTS.join(", "));
        let response = self
            .authorized(request, reference)
            .await?
            .send()
            .await
            .map_err(|e| self.unreachable("cannot reach the registry", e))?;
        match response.status() {
            s if s.is_success() => Ok(Some(response)),
            reqwest::StatusCode::NOT_FOUND => Ok(None),
            s => Err(self.status_error(reference, s)),
        }
    }

    /// The digest `reference` (a tag) names now: the registry's
    /// `Docker-Content-Digest`, else the hash of the (bounded) manifest.
    pub async fn resolve(&self, reference: &Reference) -> Result<String, OciError> {
        let not_found = || OciError::NotFound {
            reference: reference.to_string(),
        };
        let head = self
            .manifest_request(reference, reqwest::Method::HEAD)
            .await?
            .ok_or_else(not_found)?;
        if let Some(digest) = head
            .headers()
            .get("docker-content-digest")
            .and_then(|v| v.to_str().ok())
        {
            return Ok(digest.to_string());
        }
        let (_, digest) = self.manifest(reference).await?.ok_or_else(not_found)?;
        Ok(digest)
    }

    /// The manifest `reference` names, and its digest, read to at most
    /// `oci.max_manifest_bytes` and checked against the reference's digest
    /// (or the registry's, for a tag); `None` if the registry has no such
    /// manifest.
    pub async fn manifest(
        &self,
        reference: &Reference,
    ) -> Result<Option<(Vec<u8>, String)>, OciError> {
        let Some(response) = self
            .manifest_request(reference, reqwest::Method::GET)
            .await?
        else {
            return Ok(None);
        };
        let announced = response
            .headers()
            .get("docker-content-digest")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let max = self.limits().max_manifest_bytes;
        let bytes = read_capped(
            response,
            max,
            |size| OciError::ManifestTooLarge {
                reference: reference.to_string(),
                size,
                max,
            },
            |e| self.unreachable("reading the manifest", e),
        )
        .await?;
        let actual = sha256_digest(&bytes);
        let expected = reference
            .digest()
            .map(str::to_string)
            .or(announced)
            .unwrap_or_else(|| actual.clone());
        if actual != expected {
            return Err(OciError::DigestMismatch {
                what: format!("manifest of {reference}"),
                expected,
                actual,
            });
        }
        Ok(Some((bytes, actual)))
    }

    fn limits(&self) -> FetchLimits {
        self.settings.limits
    }

    /// The blob `descriptor` names, read at most to `oci.max_blob_bytes`
    /// and checked against its digest.
    pub async fn blob(
        &self,
        reference: &Reference,
        descriptor: &OciDescriptor,
    ) -> Result<Vec<u8>, OciError> {
        let max = self.limits().max_blob_bytes;
        self.blob_capped(reference, descriptor, max, &|size| OciError::BlobTooLarge {
            reference: reference.to_string(),
            size,
            max,
        })
        .await
    }

    /// The blob `descriptor` names, refused with `too_large` past `max`
    /// bytes (by its descriptor, its announced length, or as read), and
    /// checked against its digest.
    pub async fn blob_capped(
        &self,
        reference: &Reference,
        descriptor: &OciDescriptor,
        max: u64,
        too_large: &dyn Fn(u64) -> OciError,
    ) -> Result<Vec<u8>, OciError> {
        if descriptor.size < 0 || descriptor.size as u64 > max {
            return Err(too_large(descriptor.size.max(0) as u64));
        }
        let url = format!(
            "{}://{}/v2/{}/blobs/{}",
            self.scheme,
            self.registry,
            reference.repository(),
            descriptor.digest
        );
        let response = self
            .authorized(self.blobs.get(url), reference)
            .await?
            .send()
            .await
            .map_err(|e| self.unreachable("cannot reach the registry", e))?;
        if !response.status().is_success() {
            return Err(self.status_error(reference, response.status()));
        }
        let bytes = read_capped(response, max, too_large, |e| OciError::Registry {
            reference: reference.to_string(),
            reason: format!("reading {}: {e}", descriptor.digest),
        })
        .await?;
        let actual = sha256_digest(&bytes);
        if actual != descriptor.digest {
            return Err(OciError::DigestMismatch {
                what: format!("layer of {reference}"),
                expected: descriptor.digest.clone(),
                actual,
            });
        }
        Ok(bytes)
    }

    fn push_error(&self, reference: &Reference, e: OciDistributionError) -> OciError {
        match e {
            OciDistributionError::UnauthorizedError { .. }
            | OciDistributionError::AuthenticationFailure(_)
            | OciDistributionError::ServerError {
                code: 401 | 403, ..
            } => OciError::Unauthorized {
                registry: self.registry.clone(),
            },
            OciDistributionError::RegistryError { ref envelope, .. }
                if envelope.errors.iter().any(|e| {
                    matches!(e.code, OciErrorCode::Unauthorized | OciErrorCode::Denied)
                }) =>
            {
                OciError::Unauthorized {
                    registry: self.registry.clone(),
                }
            }
            e => OciError::Registry {
                reference: reference.to_string(),
                reason: e.to_string(),
            },
        }
    }

    /// Authenticates for pushing to `reference`'s repository: works out the
    /// authorization (a token from a checked realm, or the registry's own
    /// `Basic`) and gives `oci-client` that.
    pub async fn authenticate_push(&self, reference: &Reference) -> Result<(), OciError> {
        let auth = self.auth(reference).await?.clone();
        self.client
            .auth(reference, &auth, RegistryOperation::Push)
            .await
            .map(|_| ())
            .map_err(|e| self.push_error(reference, e))
    }

    /// Uploads `bytes` as the blob `digest`, unless the registry has it.
    pub async fn push_blob(
        &self,
        reference: &Reference,
        bytes: &[u8],
        digest: &str,
    ) -> Result<(), OciError> {
        let exists = self
            .client
            .blob_exists(reference, digest)
            .await
            .unwrap_or(false);
        if !exists {
            self.client
                .push_blob(reference, bytes.to_vec(), digest)
                .await
                .map_err(|e| self.push_error(reference, e))?;
        }
        Ok(())
    }

    /// Uploads `manifest` (an OCI image manifest) under `reference`.
    pub async fn push_manifest(
        &self,
        reference: &Reference,
        manifest: &[u8],
    ) -> Result<(), OciError> {
        self.client
            .push_manifest_raw(
                reference,
                manifest.to_vec(),
                OCI_IMAGE_MEDIA_TYPE.parse().expect("a valid header value"),
            )
            .await
            .map(|_| ())
            .map_err(|e| self.push_error(reference, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_registries_are_recognised() {
        for r in [
            "localhost:5000",
            "127.0.0.1:5000",
            "127.1.2.3",
            "[::1]:5000",
        ] {
            assert!(is_loopback(r), "{r}");
        }
        for r in ["ghcr.io", "10.0.0.1:5000", "registry.local:5000"] {
            assert!(!is_loopback(r), "{r}");
        }
    }

    #[test]
    fn credentials_go_only_to_an_https_realm_on_the_registrys_host_or_a_configured_one() {
        let none: &[String] = &[];
        // The registry's own host, any port.
        assert!(check_realm("ghcr.io", "https://ghcr.io/token", none).is_ok());
        assert!(check_realm("r.example:5000", "https://r.example:5001/auth", none).is_ok());
        // Docker Hub's token service, for Docker Hub only.
        assert!(check_realm("index.docker.io", "https://auth.docker.io/token", none).is_ok());
        let other = check_realm("ghcr.io", "https://auth.docker.io/token", none).unwrap_err();
        assert!(other.contains("oci.token_hosts"), "{other}");
        // Another host: only when configured.
        let other = check_realm("r.example", "https://auth.example/token", none).unwrap_err();
        assert!(other.contains("\"auth.example\""), "{other}");
        let configured = ["auth.example".to_string()];
        assert!(check_realm("r.example", "https://auth.example/token", &configured).is_ok());
        // Plain http: refused, configured or not, unless on this machine.
        for realm in ["http://r.example/token", "http://auth.example/token"] {
            let plain = check_realm("r.example", realm, &configured).unwrap_err();
            assert!(plain.contains("https"), "{plain}");
        }
        assert!(check_realm("127.0.0.1:5000", "http://127.0.0.1:5001/t", none).is_ok());
        // On this machine, but another host than the registry: refused.
        assert!(check_realm("127.0.0.1:5000", "http://127.0.0.2:5001/t", none).is_err());
        assert!(check_realm("r.example", "ftp://r.example/t", none).is_err());
        assert!(check_realm("r.example", "not a url", none).is_err());
    }

    #[test]
    fn a_bearer_challenge_yields_its_realm_and_service() {
        assert_eq!(
            bearer_challenge(r#"Bearer realm="https://a.example/token",service="reg""#),
            Some(("https://a.example/token".into(), Some("reg".into())))
        );
        assert_eq!(bearer_challenge(r#"Basic realm="x""#), None);
    }
}
