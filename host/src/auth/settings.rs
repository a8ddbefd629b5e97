//! `[auth]` and `[[access]]` resolved: what the host uses to check HTTP
//! callers. The file's raw tables and their resolution are in
//! [`crate::config`] (`config/auth.rs`): static tokens become SHA-256
//! digests (a token read from a file or the environment is hashed at load
//! and not kept), the algorithm allow-list is checked, every number
//! against its range.

use std::collections::BTreeSet;
use std::time::Duration;

use jsonwebtoken::Algorithm;

/// `[auth]`, resolved.
#[derive(Clone, Debug)]
pub struct AuthSettings {
    /// This server's resource URI, as written: the audience tokens must
    /// name, and the `resource` of the protected-resource metadata.
    pub resource: String,
    /// Where clients find the protected-resource metadata (RFC 9728 §3.1):
    /// `/.well-known/oauth-protected-resource` inserted between the
    /// resource's host and its path.
    pub metadata_url: String,
    /// JWT access tokens, when `[auth.oauth]` is present.
    pub oauth: Option<OAuthSettings>,
    /// Static bearer tokens.
    pub tokens: Vec<StaticToken>,
    /// `auth.metrics_scope`: the scope `GET /metrics` on the MCP listener
    /// needs.
    pub metrics_scope: String,
}

impl AuthSettings {
    /// The kinds of credential this `[auth]` accepts.
    pub fn sources(&self) -> Vec<super::IdentitySource> {
        let mut sources = Vec::new();
        if !self.tokens.is_empty() {
            sources.push(super::IdentitySource::StaticToken);
        }
        if self.oauth.is_some() {
            sources.push(super::IdentitySource::AccessToken);
        }
        sources
    }
}

/// `[auth.oauth]`, resolved.
#[derive(Clone, Debug)]
pub struct OAuthSettings {
    /// The required `iss`.
    pub issuer: String,
    /// Where the issuer's keys are.
    pub jwks_url: url::Url,
    /// The signature algorithms accepted (never `none` or HMAC).
    pub algorithms: Vec<Algorithm>,
    /// Scopes every access token must grant.
    pub scopes: BTreeSet<String>,
    /// How long fetched keys are used before the next fetch.
    pub jwks_refresh: Duration,
    /// The shortest time between two fetches caused by unknown key ids.
    pub jwks_refetch_min: Duration,
    /// Clock skew allowed on `exp` and `nbf`.
    pub leeway: Duration,
    /// Accept only tokens whose `typ` is `at+jwt` (RFC 9068); otherwise
    /// `JWT` and no `typ` pass too.
    pub require_at_jwt: bool,
}

/// A static bearer token: only its digest is kept.
#[derive(Clone)]
pub struct StaticToken {
    /// Who the token authenticates as.
    pub subject: String,
    /// SHA-256 of the token.
    pub sha256: [u8; 32],
    /// The scopes it grants.
    pub scopes: BTreeSet<String>,
}

impl std::fmt::Debug for StaticToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticToken")
            .field("subject", &self.subject)
            .field("sha256", &"<redacted>")
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// How messages and logs may show `url`: without user name, password,
/// query and fragment, which can carry credentials (`https://host/path?…`
/// says a query was there).
pub(crate) fn url_for_display(url: &url::Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    let had_query = shown.query().is_some();
    shown.set_query(None);
    shown.set_fragment(None);
    let mut text = shown.to_string();
    if had_query {
        text.push_str("?…");
    }
    text
}
