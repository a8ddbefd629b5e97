//! Who is calling over HTTP: the identity a request's credentials establish,
//! and what that identity may see.
//!
//! Over stdio the caller is the process that started toolhost and there is
//! nothing to establish. Over HTTP every request carries a credential, and
//! what it proves is an [`Identity`]: the transport puts it into the
//! request's extensions, and the server reads it from there to decide what
//! this caller may see and call ([`Access`]).
//!
//! | module | job |
//! |---|---|
//! | [`settings`] | `[auth]` resolved (the raw tables and their resolution are `config/auth.rs`) |
//! | `jwt` | JWT access tokens: `alg` and `typ`, the issuer's key set (cached, rotated by `kid`, never locked for a cached key), claims, scopes |
//! | [`access`] | which plugins an identity sees |
//! | [`http`] | the axum side: the `require_identity` middleware, 401/403 answers, RFC 9728 metadata |
//!
//! [`Authenticator`] is built from `[auth]` ([`Authenticator::from_settings`]);
//! `None` without the table, which the HTTP transport allows on loopback
//! addresses only. ADR 0012 records the design.

pub mod access;
pub mod exchange;
pub mod http;
mod jwt;
pub mod settings;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

pub use access::Access;
use jwt::JwtVerifier;
use settings::{AuthSettings, StaticToken};

/// Who is calling, as established by the HTTP transport's authentication.
///
/// Two identities are the same caller only if both their source and their
/// subject are: a JWT whose `sub` is `alice` is not the static token named
/// `alice` (it holds neither that token's sessions, nor its confirmation
/// states, nor the grants of rules written for it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// What established it.
    pub source: IdentitySource,
    /// The subject: an access token's `sub` claim, or a static token's
    /// configured name.
    pub subject: String,
    /// The scopes the credential grants.
    pub scopes: BTreeSet<String>,
    /// Every claim of a JWT access token, as the issuer wrote it (for
    /// `[[policy.rules]]` conditions: `identity.claims.groups`); empty for
    /// a static token. Shared: one request's identity is cloned into
    /// several places.
    pub claims: std::sync::Arc<serde_json::Map<String, serde_json::Value>>,
}

/// The bearer token a request authenticated with, kept beside its
/// [`Identity`] for that request alone: what a token exchange
/// ([`exchange`]) trades for an upstream's. Never logged, never in an
/// identity (a refreshed token is the same caller).
#[derive(Clone)]
pub struct CallerToken(pub Arc<str>);

impl std::fmt::Debug for CallerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CallerToken(<redacted>)")
    }
}

/// What established an [`Identity`]: each is its own namespace of subjects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IdentitySource {
    /// A static bearer token (`[[auth.tokens]]`).
    StaticToken,
    /// A JWT access token from `[auth.oauth]`'s issuer.
    AccessToken,
}

impl IdentitySource {
    /// The name written in `[[access]]`'s `source`, and before the subject
    /// in [`Identity::key`]: `token` or `jwt`.
    pub fn name(self) -> &'static str {
        match self {
            IdentitySource::StaticToken => "token",
            IdentitySource::AccessToken => "jwt",
        }
    }
}

impl Identity {
    /// An identity written as JSON, for `toolhost policy test`:
    /// `{"source": "jwt", "subject": "alice", "scopes": ["a"], "claims":
    /// {"groups": ["support"]}}`; `source` is `jwt` (the default) or
    /// `token`.
    pub fn from_json(text: &str) -> anyhow::Result<Identity> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Written {
            #[serde(default)]
            source: Option<String>,
            subject: String,
            #[serde(default)]
            scopes: BTreeSet<String>,
            #[serde(default)]
            claims: serde_json::Map<String, serde_json::Value>,
        }
        let written: Written = serde_json::from_str(text).context(
            "write the identity as {\"source\": \"jwt\", \"subject\": \"alice\", \"scopes\": [], \"claims\": {}}",
        )?;
        let source = match written.source.as_deref() {
            None | Some("jwt") => IdentitySource::AccessToken,
            Some("token") => IdentitySource::StaticToken,
            Some(other) => anyhow::bail!("`source` is {other:?}; write \"jwt\" or \"token\""),
        };
        let mut claims = written.claims;
        claims
            .entry("sub")
            .or_insert_with(|| serde_json::Value::String(written.subject.clone()));
        Ok(Identity {
            source,
            subject: written.subject,
            scopes: written.scopes,
            claims: Arc::new(if source == IdentitySource::AccessToken {
                claims
            } else {
                Default::default()
            }),
        })
    }

    /// The identity written as [`Identity::from_json`] reads it: how an
    /// approval keeps its caller and the page its approver.
    pub fn to_json(&self) -> String {
        serde_json::json!({
            "source": self.source.name(),
            "subject": self.subject,
            "scopes": self.scopes,
            "claims": *self.claims,
        })
        .to_string()
    }

    /// The caller, qualified by its source (`token:alice`, `jwt:alice`):
    /// what sessions, confirmation states, per-caller limits and the audit
    /// trail are keyed by.
    pub fn key(&self) -> String {
        format!("{}:{}", self.source.name(), self.subject)
    }

    /// When the credential it came from expires (a JWT's `exp`), in Unix
    /// milliseconds.
    pub fn expires_ms(&self) -> Option<u64> {
        // A NumericDate may have a fraction (RFC 7519 §2).
        self.claims
            .get("exp")
            .and_then(serde_json::Value::as_f64)
            .map(|secs| (secs.max(0.0) * 1000.0) as u64)
    }
}

/// Why a request's credentials establish no identity. The text says what
/// to do and never holds token material.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AuthFailure {
    /// No `Authorization` header.
    #[error("no access token: send `Authorization: Bearer <token>`")]
    MissingToken,
    /// An `Authorization` header that is not `Bearer <token>`.
    #[error("the Authorization header is not `Bearer <token>`: send the access token that way")]
    MalformedHeader,
    /// A token that is no configured static token (and no JWT is accepted).
    #[error(
        "the token is not one of this server's tokens ([[auth.tokens]]): check it was copied whole"
    )]
    UnknownToken,
    /// A token that is not a well-formed JWT.
    #[error(
        "the token is not a well-formed JWT access token: get a new one from the authorization server"
    )]
    MalformedToken,
    /// A JWT signed with an algorithm outside `auth.oauth.algorithms`.
    #[error("the token's signature algorithm is not accepted (auth.oauth.algorithms)")]
    AlgorithmNotAllowed,
    /// A JWT whose `typ` names another kind of JWT than an access token (an
    /// ID token's is `JWT`; `dpop+jwt`, `logout+jwt`, `secevent+jwt` …).
    #[error(
        "the token is not an access token (its typ names another kind of JWT): send the access token the authorization server issued for this server"
    )]
    NotAnAccessToken,
    /// With `auth.oauth.require_at_jwt`, a JWT whose `typ` is not `at+jwt`.
    #[error(
        "the token is not typed as an access token (typ must be at+jwt, auth.oauth.require_at_jwt): send an RFC 9068 access token, not an ID token"
    )]
    NotAtJwt,
    /// A JWT whose key id names a key of another type than its algorithm
    /// needs (an `RS256` token naming an EC key).
    #[error(
        "the token's algorithm does not fit the key its key id (kid) names: get a new token from the authorization server"
    )]
    KeyMismatch,
    /// A JWT whose key id is not in the issuer's key set, even after a
    /// refetch.
    #[error(
        "the token was signed with a key the issuer does not publish (auth.oauth.jwks_url): get a new token"
    )]
    UnknownKey,
    /// A JWT whose signature does not verify.
    #[error("the token's signature does not verify: get a new token from the authorization server")]
    BadSignature,
    /// A JWT past its `exp` (plus leeway).
    #[error("the token has expired: get a new one from the authorization server")]
    Expired,
    /// A JWT before its `nbf` (minus leeway).
    #[error(
        "the token is not valid yet (nbf): check the clocks of this server and the issuer (auth.oauth.leeway_secs)"
    )]
    NotYetValid,
    /// A JWT for another resource.
    #[error(
        "the token was issued for another resource: request one whose audience is this server's resource URI (auth.resource)"
    )]
    WrongAudience,
    /// A JWT from another issuer.
    #[error("the token comes from another issuer than this server trusts (auth.oauth.issuer)")]
    WrongIssuer,
    /// A JWT without `exp`, `iss`, `aud` or `sub`.
    #[error("the token lacks a required claim (exp, iss, aud and sub are required)")]
    MissingClaim,
    /// A valid JWT without every scope `auth.oauth.scopes` requires.
    #[error("the token lacks a required scope (auth.oauth.scopes): request a token with them")]
    InsufficientScope,
    /// The issuer's key set cannot be fetched and none is cached.
    #[error("the issuer's keys cannot be fetched right now (auth.oauth.jwks_url): try again later")]
    KeysUnavailable,
}

impl AuthFailure {
    /// A short, fixed name for logs and the `reason` label of
    /// `toolhost_auth_failures_total`.
    pub fn reason(self) -> &'static str {
        match self {
            AuthFailure::MissingToken => "missing_token",
            AuthFailure::MalformedHeader => "malformed_header",
            AuthFailure::UnknownToken => "unknown_token",
            AuthFailure::MalformedToken => "malformed_token",
            AuthFailure::AlgorithmNotAllowed => "algorithm_not_allowed",
            AuthFailure::NotAnAccessToken => "not_an_access_token",
            AuthFailure::NotAtJwt => "not_at_jwt",
            AuthFailure::KeyMismatch => "key_mismatch",
            AuthFailure::UnknownKey => "unknown_key",
            AuthFailure::BadSignature => "bad_signature",
            AuthFailure::Expired => "expired",
            AuthFailure::NotYetValid => "not_yet_valid",
            AuthFailure::WrongAudience => "wrong_audience",
            AuthFailure::WrongIssuer => "wrong_issuer",
            AuthFailure::MissingClaim => "missing_claim",
            AuthFailure::InsufficientScope => "insufficient_scope",
            AuthFailure::KeysUnavailable => "keys_unavailable",
        }
    }
}

/// Authenticates HTTP requests: static bearer tokens and, with
/// `[auth.oauth]`, JWT access tokens. Cheap to clone.
#[derive(Clone)]
pub struct Authenticator {
    inner: Arc<Inner>,
}

struct Inner {
    settings: AuthSettings,
    jwt: Option<JwtVerifier>,
    /// Every scope worth advertising in the metadata: the required ones
    /// and those `[[access]]` rules name.
    scopes_supported: BTreeSet<String>,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator")
            .field("settings", &self.inner.settings)
            .finish_non_exhaustive()
    }
}

impl Authenticator {
    /// The authenticator `[auth]` (`settings`) describes, or `None` without
    /// the table; `access` as for [`Authenticator::new`].
    pub fn from_settings(
        settings: Option<&AuthSettings>,
        access: &Access,
    ) -> anyhow::Result<Option<Authenticator>> {
        let Some(settings) = settings else {
            return Ok(None);
        };
        Authenticator::new(settings.clone(), access).map(Some)
    }

    /// An authenticator for `settings`; `access` adds the scopes its rules
    /// name to the metadata's `scopes_supported`.
    pub fn new(settings: AuthSettings, access: &Access) -> anyhow::Result<Authenticator> {
        let jwt = match &settings.oauth {
            Some(oauth) => {
                let client = reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .connect_timeout(Duration::from_secs(5))
                    .build()
                    .context("cannot set up the HTTP client that fetches the issuer's keys")?;
                Some(JwtVerifier::new(
                    oauth.clone(),
                    settings.resource.clone(),
                    client,
                ))
            }
            None => None,
        };
        let mut scopes_supported: BTreeSet<String> = access.scopes().map(str::to_string).collect();
        if let Some(jwt) = &jwt {
            scopes_supported.extend(jwt.required_scopes().iter().cloned());
        }
        for token in &settings.tokens {
            scopes_supported.extend(token.scopes.iter().cloned());
        }
        Ok(Authenticator {
            inner: Arc::new(Inner {
                settings,
                jwt,
                scopes_supported,
            }),
        })
    }

    /// The identity the request's `Authorization: Bearer` header
    /// establishes. A static token is tried first (its SHA-256 compared in
    /// constant time with every configured digest), then, with
    /// `[auth.oauth]`, the token as a JWT.
    pub async fn authenticate(&self, headers: &HeaderMap) -> Result<Identity, AuthFailure> {
        self.authenticate_for(headers, None).await
    }

    /// [`Authenticator::authenticate`] for a request to the profile
    /// `profile` (`/mcp/NAME`): a JWT issued for that profile's resource
    /// URI ([`Authenticator::profile_resource`], what its metadata names)
    /// is accepted there too, and nowhere else.
    pub async fn authenticate_for(
        &self,
        headers: &HeaderMap,
        profile: Option<&str>,
    ) -> Result<Identity, AuthFailure> {
        let token = bearer_token(headers)?;
        if let Some(identity) = self.static_token(token) {
            return Ok(identity);
        }
        let also = profile.map(|name| self.profile_resource(name));
        match &self.inner.jwt {
            Some(jwt) => jwt.verify(token, also.as_deref()).await,
            None => Err(AuthFailure::UnknownToken),
        }
    }

    /// The resource URI of the profile `name`, served at `/mcp/NAME`
    /// (RFC 9728): `auth.resource` with `/NAME` appended.
    pub fn profile_resource(&self, name: &str) -> String {
        format!("{}/{name}", self.resource().trim_end_matches('/'))
    }

    /// Where the protected-resource metadata of the profile `name` is:
    /// [`Authenticator::metadata_url`] with `/NAME` appended.
    pub fn profile_metadata_url(&self, name: &str) -> String {
        format!("{}/{name}", self.metadata_url())
    }

    /// The configured static token `token` is, if any. Every digest is
    /// compared, so the time taken does not depend on which one matched.
    fn static_token(&self, token: &str) -> Option<Identity> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut found: Option<&StaticToken> = None;
        for candidate in &self.inner.settings.tokens {
            if bool::from(candidate.sha256.ct_eq(&digest)) {
                found = Some(candidate);
            }
        }
        found.map(|t| Identity {
            source: IdentitySource::StaticToken,
            subject: t.subject.clone(),
            scopes: t.scopes.clone(),
            claims: Default::default(),
        })
    }

    /// Whether `identity`, established earlier (an approval page's
    /// session), is still one this server would establish: a static token
    /// (its SHA-256 `token_sha256`, hex, when known) still configured for
    /// its subject (`[[auth.tokens]]`, after a restart with Redis-kept
    /// sessions or a token rotated under the same name), a JWT's `exp`
    /// not passed.
    pub fn still_accepts(&self, identity: &Identity, token_sha256: Option<&str>) -> bool {
        match identity.source {
            IdentitySource::StaticToken => self.inner.settings.tokens.iter().any(|t| {
                t.subject == identity.subject
                    && token_sha256.is_none_or(|digest| hex::encode(t.sha256) == digest)
            }),
            IdentitySource::AccessToken => {
                let now_ms = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
                identity.expires_ms().is_none_or(|exp| exp > now_ms)
            }
        }
    }

    /// This server's resource URI (`auth.resource`).
    pub fn resource(&self) -> &str {
        &self.inner.settings.resource
    }

    /// Where the protected-resource metadata is, as sent in
    /// `WWW-Authenticate`.
    pub fn metadata_url(&self) -> &str {
        &self.inner.settings.metadata_url
    }

    /// How long a client should wait before retrying a request refused
    /// because the issuer's keys cannot be had: the refetch interval
    /// (`auth.oauth.jwks_refetch_min_secs`), at least a second.
    pub fn retry_after(&self) -> Duration {
        self.inner
            .jwt
            .as_ref()
            .map_or(Duration::from_secs(1), JwtVerifier::retry_after)
    }

    /// The scope `GET /metrics` on the MCP listener needs
    /// (`auth.metrics_scope`).
    pub fn metrics_scope(&self) -> &str {
        &self.inner.settings.metrics_scope
    }

    /// The scopes every JWT must grant (`auth.oauth.scopes`).
    pub fn required_scopes(&self) -> Vec<String> {
        self.inner
            .jwt
            .as_ref()
            .map(|j| j.required_scopes().iter().cloned().collect())
            .unwrap_or_default()
    }
}

/// The token of an `Authorization: Bearer <token>` header.
pub(crate) fn bearer_token(headers: &HeaderMap) -> Result<&str, AuthFailure> {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let value = values.next().ok_or(AuthFailure::MissingToken)?;
    if values.next().is_some() {
        return Err(AuthFailure::MalformedHeader);
    }
    let value = value.to_str().map_err(|_| AuthFailure::MalformedHeader)?;
    let (scheme, token) = value.split_once(' ').ok_or(AuthFailure::MalformedHeader)?;
    let token = token.trim();
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() || token.contains(' ') {
        return Err(AuthFailure::MalformedHeader);
    }
    Ok(token)
}

#[cfg(test)]
mod tests;
