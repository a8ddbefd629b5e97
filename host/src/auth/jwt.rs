//! JWT access tokens (`[auth.oauth]`): the signature against the issuer's
//! published keys (JWKS), then `iss`, `aud`, `exp`/`nbf` and the required
//! scopes.
//!
//! Keys are fetched with reqwest when first needed, used for
//! `jwks_refresh_secs`, and fetched again early when a token names a key id
//! the set does not hold (the issuer rotated its keys). Fetches caused that
//! way are at least `jwks_refetch_min_secs` apart, so a flood of tokens with
//! made-up key ids costs the issuer one request per interval, not one per
//! token. Only asymmetric keys are used: `oct` (shared secret) entries in
//! the set are skipped, and `none`/HMAC algorithms are refused at load.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use base64::Engine;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation, errors::ErrorKind};
use serde::Deserialize;

use super::config::OAuthSettings;
use super::{AuthFailure, Identity};

/// The largest key set read from the issuer.
const MAX_JWKS_BYTES: usize = 1 << 20;
/// How long one key-set fetch may take.
const JWKS_FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// Checks JWT access tokens of one issuer for one resource.
pub(super) struct JwtVerifier {
    settings: OAuthSettings,
    /// The required `aud`: `auth.resource`.
    audience: String,
    keys: KeyCache,
}

/// The claims read from an access token. `exp`, `nbf`, `iss` and `aud` are
/// checked by `jsonwebtoken` itself.
#[derive(Deserialize)]
struct Claims {
    sub: Option<String>,
    /// Space-separated scopes (RFC 8693 `scope`).
    scope: Option<String>,
    /// Scopes as an array (or one string), as some providers send.
    scp: Option<OneOrMany>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// Just enough of the header to refuse an algorithm before anything else,
/// including names `jsonwebtoken` does not know (`none`).
#[derive(Deserialize)]
struct RawHeader {
    alg: String,
}

impl JwtVerifier {
    pub(super) fn new(
        settings: OAuthSettings,
        audience: String,
        client: reqwest::Client,
    ) -> JwtVerifier {
        JwtVerifier {
            keys: KeyCache {
                client,
                url: settings.jwks_url.clone(),
                refresh: settings.jwks_refresh,
                refetch_min: settings.jwks_refetch_min,
                state: tokio::sync::Mutex::new(KeyState::default()),
            },
            settings,
            audience,
        }
    }

    /// The scopes every token must grant.
    pub(super) fn required_scopes(&self) -> &BTreeSet<String> {
        &self.settings.scopes
    }

    /// The issuer, for the protected-resource metadata.
    pub(super) fn issuer(&self) -> &str {
        &self.settings.issuer
    }

    /// The identity `token` establishes, or why it establishes none.
    pub(super) async fn verify(&self, token: &str) -> Result<Identity, AuthFailure> {
        let alg = self.allowed_algorithm(token)?;
        let header = jsonwebtoken::decode_header(token).map_err(|_| AuthFailure::MalformedToken)?;
        let key = self.keys.key_for(header.kid.as_deref(), alg).await?;

        let mut validation = Validation::new(alg);
        validation.set_audience(&[&self.audience]);
        validation.set_issuer(&[&self.settings.issuer]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.validate_nbf = true;
        validation.leeway = self.settings.leeway.as_secs();
        let data = jsonwebtoken::decode::<Claims>(token, &key, &validation).map_err(|e| match e
            .kind()
        {
            ErrorKind::InvalidSignature => AuthFailure::BadSignature,
            ErrorKind::ExpiredSignature => AuthFailure::Expired,
            ErrorKind::ImmatureSignature => AuthFailure::NotYetValid,
            ErrorKind::InvalidAudience => AuthFailure::WrongAudience,
            ErrorKind::InvalidIssuer => AuthFailure::WrongIssuer,
            ErrorKind::MissingRequiredClaim(_) => AuthFailure::MissingClaim,
            ErrorKind::InvalidAlgorithm => AuthFailure::AlgorithmNotAllowed,
            _ => AuthFailure::MalformedToken,
        })?;
        let claims = data.claims;
        let subject = claims
            .sub
            .filter(|s| !s.is_empty())
            .ok_or(AuthFailure::MissingClaim)?;
        let mut scopes: BTreeSet<String> = claims
            .scope
            .iter()
            .flat_map(|s| s.split_whitespace())
            .map(str::to_string)
            .collect();
        match claims.scp {
            Some(OneOrMany::One(s)) => scopes.extend(s.split_whitespace().map(str::to_string)),
            Some(OneOrMany::Many(list)) => scopes.extend(list),
            None => {}
        }
        if !self.settings.scopes.is_subset(&scopes) {
            return Err(AuthFailure::InsufficientScope);
        }
        Ok(Identity { subject, scopes })
    }

    /// The token's `alg`, if the allow-list holds it. Read from the raw
    /// header so that `none` and unknown names are refused by name.
    fn allowed_algorithm(&self, token: &str) -> Result<Algorithm, AuthFailure> {
        let header = token.split('.').next().unwrap_or("");
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(header.trim_end_matches('='))
            .map_err(|_| AuthFailure::MalformedToken)?;
        let raw: RawHeader =
            serde_json::from_slice(&bytes).map_err(|_| AuthFailure::MalformedToken)?;
        raw.alg
            .parse::<Algorithm>()
            .ok()
            .filter(|alg| self.settings.algorithms.contains(alg))
            .ok_or(AuthFailure::AlgorithmNotAllowed)
    }
}

/// The issuer's keys, fetched when needed.
struct KeyCache {
    client: reqwest::Client,
    url: url::Url,
    refresh: Duration,
    refetch_min: Duration,
    /// Held across a fetch, so concurrent requests wait for one fetch.
    state: tokio::sync::Mutex<KeyState>,
}

#[derive(Default)]
struct KeyState {
    keys: Vec<PublicKey>,
    /// When the last fetch succeeded.
    fetched: Option<Instant>,
    /// When the last fetch was tried.
    attempted: Option<Instant>,
}

/// One usable key of the set.
struct PublicKey {
    kid: Option<String>,
    /// The key's own `alg`, when the set names one.
    alg: Option<String>,
    key: DecodingKey,
}

impl PublicKey {
    fn fits(&self, kid: Option<&str>, alg: Algorithm) -> bool {
        let kid_fits = match kid {
            Some(kid) => self.kid.as_deref() == Some(kid),
            None => true,
        };
        kid_fits
            && self.key.family() == alg.family()
            && self.alg.as_deref().is_none_or(|a| a == format!("{alg:?}"))
    }
}

impl KeyCache {
    /// The key that verifies a token with `kid` and `alg`.
    async fn key_for(&self, kid: Option<&str>, alg: Algorithm) -> Result<DecodingKey, AuthFailure> {
        let mut state = self.state.lock().await;
        let stale = state.fetched.is_none_or(|t| t.elapsed() >= self.refresh);
        if stale && self.may_fetch(&state) {
            self.fetch(&mut state).await;
        }
        if let Some(key) = Self::find(&state, kid, alg) {
            return Ok(key);
        }
        // An unknown key id: the issuer may have rotated its keys.
        if self.may_fetch(&state) {
            self.fetch(&mut state).await;
            if let Some(key) = Self::find(&state, kid, alg) {
                return Ok(key);
            }
        }
        if state.fetched.is_none() {
            Err(AuthFailure::KeysUnavailable)
        } else {
            Err(AuthFailure::UnknownKey)
        }
    }

    fn may_fetch(&self, state: &KeyState) -> bool {
        state
            .attempted
            .is_none_or(|t| t.elapsed() >= self.refetch_min)
    }

    /// With a key id, the key of that id; without one, the only key that
    /// fits the algorithm.
    fn find(state: &KeyState, kid: Option<&str>, alg: Algorithm) -> Option<DecodingKey> {
        let mut fitting = state.keys.iter().filter(|k| k.fits(kid, alg));
        let first = fitting.next()?;
        if kid.is_none() && fitting.next().is_some() {
            return None;
        }
        Some(first.key.clone())
    }

    /// Fetches the key set; on failure the keys already held stay in use.
    async fn fetch(&self, state: &mut KeyState) {
        state.attempted = Some(Instant::now());
        match self.download().await {
            Ok(keys) => {
                tracing::debug!(keys = keys.len(), url = %self.url, "fetched the issuer's keys");
                state.keys = keys;
                state.fetched = Some(Instant::now());
            }
            Err(e) => tracing::warn!(
                url = %self.url,
                "cannot fetch the issuer's keys (auth.oauth.jwks_url): {e}"
            ),
        }
    }

    async fn download(&self) -> Result<Vec<PublicKey>, String> {
        let mut response = self
            .client
            .get(self.url.clone())
            .timeout(JWKS_FETCH_TIMEOUT)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if !response.status().is_success() {
            return Err(format!("HTTP status {}", response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
            if body.len() + chunk.len() > MAX_JWKS_BYTES {
                return Err(format!("the key set is larger than {MAX_JWKS_BYTES} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        #[derive(Deserialize)]
        struct KeySet {
            keys: Vec<serde_json::Value>,
        }
        let set: KeySet =
            serde_json::from_slice(&body).map_err(|e| format!("not a JWK set: {e}"))?;
        Ok(set.keys.into_iter().filter_map(usable_key).collect())
    }
}

/// A signature-verification key from one entry of the set, or `None` for
/// an entry that is not one (encryption keys, shared secrets, unknown
/// types).
fn usable_key(entry: serde_json::Value) -> Option<PublicKey> {
    let jwk: Jwk = serde_json::from_value(entry).ok()?;
    if matches!(
        jwk.common.public_key_use,
        Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))
    ) || matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_))
    {
        return None;
    }
    let key = DecodingKey::from_jwk(&jwk).ok()?;
    let alg = jwk.common.key_algorithm.map(|a| format!("{a:?}"));
    Some(PublicKey {
        kid: jwk.common.key_id,
        alg,
        key,
    })
}
