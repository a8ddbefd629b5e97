//! JWT access tokens (`[auth.oauth]`): the header's `alg` and `typ`, the
//! signature against the issuer's published keys (JWKS), then `iss`, `aud`,
//! `exp`/`nbf` and the required scopes.
//!
//! `typ` tells an access token (RFC 9068: `at+jwt`) from the issuer's other
//! JWTs: an ID token, a DPoP proof, a logout or security-event token must
//! not pass as one. `at+jwt` and `application/at+jwt` always pass; `JWT`
//! and no `typ` (what many providers send) pass unless
//! `auth.oauth.require_at_jwt` is set; any other `typ` is refused.
//!
//! Keys are fetched with reqwest when first needed, used for
//! `jwks_refresh_secs`, and fetched again early when a token names a key id
//! the set does not hold (the issuer rotated its keys). Fetches caused that
//! way are at least `jwks_refetch_min_secs` apart, so a flood of tokens with
//! made-up key ids costs the issuer one request per interval, not one per
//! token. Only asymmetric keys are used: `oct` (shared secret) entries in
//! the set are skipped, `none`/HMAC algorithms are refused at load, and a
//! key verifies only tokens of its own family (an `RS256` token naming an
//! EC key is refused).
//!
//! A fetch never blocks a token whose key is cached: the key set is read
//! from an [`ArcSwap`] without waiting, and only requests that need a fetch
//! wait for the one in flight (one at a time), then look at its result
//! instead of fetching again. A set older than `jwks_refresh_secs` keeps
//! serving while one refresh runs in the background.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use base64::Engine;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation, errors::ErrorKind};
use serde::Deserialize;

use super::settings::{OAuthSettings, url_for_display};
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
    keys: Arc<KeyCache>,
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

/// Just enough of the header to refuse an algorithm or a token type before
/// anything else, including algorithm names `jsonwebtoken` does not know
/// (`none`).
#[derive(Deserialize)]
struct RawHeader {
    alg: String,
    typ: Option<String>,
}

impl JwtVerifier {
    pub(super) fn new(
        settings: OAuthSettings,
        audience: String,
        client: reqwest::Client,
    ) -> JwtVerifier {
        JwtVerifier {
            keys: Arc::new(KeyCache {
                client,
                url: settings.jwks_url.clone(),
                refresh: settings.jwks_refresh,
                refetch_min: settings.jwks_refetch_min,
                current: ArcSwap::from_pointee(KeySet::default()),
                fetching: Arc::new(tokio::sync::Mutex::new(FetchState::default())),
                fetches_done: AtomicU64::new(0),
            }),
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

    /// How long a client should wait before retrying when no keys can be
    /// had: the refetch interval, at least a second.
    pub(super) fn retry_after(&self) -> Duration {
        self.settings.jwks_refetch_min.max(Duration::from_secs(1))
    }

    /// The identity `token` establishes, or why it establishes none. Its
    /// `aud` must be `auth.resource`, or `also` when given (a profile's
    /// resource URI, on that profile's path).
    pub(super) async fn verify(
        &self,
        token: &str,
        also: Option<&str>,
    ) -> Result<Identity, AuthFailure> {
        let raw = raw_header(token)?;
        let alg = self.allowed_algorithm(&raw.alg)?;
        check_token_type(raw.typ.as_deref(), self.settings.require_at_jwt)?;
        let header = jsonwebtoken::decode_header(token).map_err(|_| AuthFailure::MalformedToken)?;
        let key = self.keys.key_for(header.kid.as_deref(), alg).await?;

        let mut validation = Validation::new(alg);
        match also {
            Some(also) => validation.set_audience(&[self.audience.as_str(), also]),
            None => validation.set_audience(&[&self.audience]),
        }
        validation.set_issuer(&[&self.settings.issuer]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.validate_nbf = true;
        validation.leeway = self.settings.leeway.as_secs();
        let data = jsonwebtoken::decode::<serde_json::Value>(token, &key, &validation).map_err(
            |e| match e.kind() {
                ErrorKind::InvalidSignature => AuthFailure::BadSignature,
                ErrorKind::ExpiredSignature => AuthFailure::Expired,
                ErrorKind::ImmatureSignature => AuthFailure::NotYetValid,
                ErrorKind::InvalidAudience => AuthFailure::WrongAudience,
                ErrorKind::InvalidIssuer => AuthFailure::WrongIssuer,
                ErrorKind::MissingRequiredClaim(_) => AuthFailure::MissingClaim,
                ErrorKind::InvalidAlgorithm => AuthFailure::AlgorithmNotAllowed,
                _ => AuthFailure::MalformedToken,
            },
        )?;
        // Every claim is kept for policy conditions; these are read here.
        let claims = Claims::deserialize(&data.claims).map_err(|_| AuthFailure::MalformedToken)?;
        let serde_json::Value::Object(all) = data.claims else {
            return Err(AuthFailure::MalformedToken);
        };
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
        Ok(Identity {
            source: super::IdentitySource::AccessToken,
            subject,
            scopes,
            claims: std::sync::Arc::new(all),
        })
    }

    /// `alg`, if the allow-list holds it. Read from the raw header so that
    /// `none` and unknown names are refused by name.
    fn allowed_algorithm(&self, alg: &str) -> Result<Algorithm, AuthFailure> {
        alg.parse::<Algorithm>()
            .ok()
            .filter(|alg| self.settings.algorithms.contains(alg))
            .ok_or(AuthFailure::AlgorithmNotAllowed)
    }
}

/// The token's header as written.
fn raw_header(token: &str) -> Result<RawHeader, AuthFailure> {
    let header = token.split('.').next().unwrap_or("");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(header.trim_end_matches('='))
        .map_err(|_| AuthFailure::MalformedToken)?;
    serde_json::from_slice(&bytes).map_err(|_| AuthFailure::MalformedToken)
}

/// Whether a token typed `typ` may pass as an access token. Compared as
/// RFC 7515 §4.1.9 says: case-insensitively, with `application/` optional.
fn check_token_type(typ: Option<&str>, require_at_jwt: bool) -> Result<(), AuthFailure> {
    let media_type = typ.map(|t| {
        let t = t.to_ascii_lowercase();
        match t.strip_prefix("application/") {
            Some(rest) => rest.to_string(),
            None => t,
        }
    });
    match media_type.as_deref() {
        Some("at+jwt") => Ok(()),
        _ if require_at_jwt => Err(AuthFailure::NotAtJwt),
        None | Some("jwt") => Ok(()),
        Some(_) => Err(AuthFailure::NotAnAccessToken),
    }
}

/// The issuer's keys, fetched when needed.
struct KeyCache {
    client: reqwest::Client,
    url: url::Url,
    refresh: Duration,
    refetch_min: Duration,
    /// The keys in use: read without waiting, replaced whole by a fetch.
    current: ArcSwap<KeySet>,
    /// Held across a fetch, so one runs at a time; requests that need a
    /// fetch wait here, requests whose key is cached never do.
    fetching: Arc<tokio::sync::Mutex<FetchState>>,
    /// Fetches finished, successful or not: a request that waited for the
    /// lock and sees this changed uses that fetch's result instead of
    /// fetching again.
    fetches_done: AtomicU64,
}

/// The keys of the last successful fetch.
#[derive(Default)]
struct KeySet {
    keys: Vec<PublicKey>,
    /// When they were fetched; `None` before the first success.
    fetched: Option<Instant>,
}

/// What only the fetching request touches.
#[derive(Default)]
struct FetchState {
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
    /// Whether this key verifies `alg`: its family, and its own `alg` if
    /// the set names one.
    fn fits(&self, alg: Algorithm) -> bool {
        self.key.family() == alg.family()
            && self.alg.as_deref().is_none_or(|a| a == format!("{alg:?}"))
    }
}

/// What the cached set says about a token's key.
enum Lookup {
    Found(DecodingKey),
    /// The key id names a key that does not verify the token's algorithm.
    Mismatch,
    /// No such key id, or (without one) not exactly one fitting key.
    Missing,
}

impl KeySet {
    /// With a key id, the key of that id; without one, the only key that
    /// fits the algorithm.
    fn lookup(&self, kid: Option<&str>, alg: Algorithm) -> Lookup {
        match kid {
            Some(kid) => {
                let mut named = self
                    .keys
                    .iter()
                    .filter(|k| k.kid.as_deref() == Some(kid))
                    .peekable();
                if named.peek().is_none() {
                    return Lookup::Missing;
                }
                named
                    .find(|k| k.fits(alg))
                    .map_or(Lookup::Mismatch, |k| Lookup::Found(k.key.clone()))
            }
            None => {
                let mut fitting = self.keys.iter().filter(|k| k.fits(alg));
                match (fitting.next(), fitting.next()) {
                    (Some(only), None) => Lookup::Found(only.key.clone()),
                    _ => Lookup::Missing,
                }
            }
        }
    }

    fn is_stale(&self, refresh: Duration) -> bool {
        self.fetched.is_none_or(|t| t.elapsed() >= refresh)
    }
}

impl KeyCache {
    /// The key that verifies a token with `kid` and `alg`.
    async fn key_for(
        self: &Arc<Self>,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<DecodingKey, AuthFailure> {
        // Read before the set, so a fetch finishing in between is noticed.
        let done_before = self.fetches_done.load(Ordering::Acquire);
        let set = self.current.load();
        match set.lookup(kid, alg) {
            Lookup::Found(key) => {
                if set.is_stale(self.refresh) {
                    self.refresh_in_background();
                }
                return Ok(key);
            }
            Lookup::Mismatch => return Err(AuthFailure::KeyMismatch),
            Lookup::Missing => {}
        }
        drop(set);
        // An unknown key id (the issuer may have rotated its keys), or no
        // keys yet: fetch, or wait for the fetch in flight.
        let mut state = match self.fetching.try_lock() {
            Ok(state) => state,
            Err(_) => {
                tracing::debug!(
                    "a token names a key that is not cached; waiting for the key-set fetch in flight"
                );
                self.fetching.lock().await
            }
        };
        if self.fetches_done.load(Ordering::Acquire) == done_before && self.may_fetch(&state) {
            self.fetch(&mut state).await;
        }
        drop(state);
        let set = self.current.load();
        match set.lookup(kid, alg) {
            Lookup::Found(key) => Ok(key),
            Lookup::Mismatch => Err(AuthFailure::KeyMismatch),
            Lookup::Missing if set.fetched.is_none() => Err(AuthFailure::KeysUnavailable),
            Lookup::Missing => Err(AuthFailure::UnknownKey),
        }
    }

    /// Starts a refresh of a set older than `jwks_refresh_secs`, unless a
    /// fetch is in flight or the last try is too recent.
    fn refresh_in_background(self: &Arc<Self>) {
        let Ok(mut state) = Arc::clone(&self.fetching).try_lock_owned() else {
            return;
        };
        if !self.may_fetch(&state) {
            return;
        }
        let cache = Arc::clone(self);
        tokio::spawn(async move {
            if cache.current.load().is_stale(cache.refresh) {
                cache.fetch(&mut state).await;
            }
        });
    }

    fn may_fetch(&self, state: &FetchState) -> bool {
        state
            .attempted
            .is_none_or(|t| t.elapsed() >= self.refetch_min)
    }

    /// Fetches the key set; on failure the keys already held stay in use.
    async fn fetch(&self, state: &mut FetchState) {
        state.attempted = Some(Instant::now());
        let url = url_for_display(&self.url);
        match self.download().await {
            Ok(keys) => {
                tracing::debug!(keys = keys.len(), url, "fetched the issuer's keys");
                self.current.store(Arc::new(KeySet {
                    keys,
                    fetched: Some(Instant::now()),
                }));
            }
            Err(e) => tracing::warn!(
                url,
                "cannot fetch the issuer's keys (auth.oauth.jwks_url): {e}"
            ),
        }
        self.fetches_done.fetch_add(1, Ordering::Release);
    }

    /// The usable keys at the key-set URL. Errors never hold the URL (its
    /// query could carry a credential).
    async fn download(&self) -> Result<Vec<PublicKey>, String> {
        let mut response = self
            .client
            .get(self.url.clone())
            .timeout(JWKS_FETCH_TIMEOUT)
            .send()
            .await
            .map_err(|e| e.without_url().to_string())?;
        if !response.status().is_success() {
            return Err(format!("HTTP status {}", response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| e.without_url().to_string())?
        {
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
