//! OAuth 2.0 Token Exchange (RFC 8693) for credentials chosen per caller:
//! the caller's own access token, exchanged at the provider for one meant
//! for an upstream, so the upstream sees the caller (and toolhost as the
//! actor), not the operator. Configured by `[token_exchange.NAME]`
//! (`config/exchange.rs`); used where a `credentials` value holds
//! `${exchange:NAME}`.
//!
//! Exchanged tokens are cached per caller token and exchange until 30
//! seconds before they expire (bounded: [`MAX_CACHED`]); a caller token is
//! keyed by its SHA-256, never kept. A provider that refuses, or cannot be
//! reached, gives the call no value: the runtime then sends nothing the
//! credential applies to, and the caller is told it has no credential.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

/// The most exchanged tokens kept; past it, the expired are dropped, then
/// the whole cache.
pub const MAX_CACHED: usize = 10_000;

/// How long before its expiry an exchanged token stops being used.
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);

/// How long a token without `expires_in` is used.
const DEFAULT_LIFETIME: Duration = Duration::from_secs(60);

/// One `[token_exchange.NAME]`, resolved.
#[derive(Clone, PartialEq, Eq)]
pub struct TokenExchange {
    /// Its name.
    pub name: String,
    /// Where tokens are exchanged.
    pub token_endpoint: url::Url,
    /// The client id.
    pub client_id: String,
    /// The client's secret (read from the environment at load), if any.
    pub client_secret: Option<String>,
    /// `audience`.
    pub audience: Option<String>,
    /// `resource`.
    pub resource: Option<String>,
    /// `scope`.
    pub scope: Option<String>,
}

impl std::fmt::Debug for TokenExchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenExchange")
            .field("name", &self.name)
            .field("token_endpoint", &self.token_endpoint.as_str())
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("audience", &self.audience)
            .field("resource", &self.resource)
            .field("scope", &self.scope)
            .finish()
    }
}

/// An exchange's name and the SHA-256 of the caller's token.
type CacheKey = (String, [u8; 32]);

/// Exchanges callers' tokens, and remembers what it got until it expires.
pub struct Exchanger {
    http: reqwest::Client,
    /// Issued tokens and until when each is used.
    cache: Mutex<HashMap<CacheKey, (String, Instant)>>,
}

impl Default for Exchanger {
    fn default() -> Self {
        Exchanger::new()
    }
}

/// The provider's answer (RFC 8693 §2.2.1).
#[derive(serde::Deserialize)]
struct Issued {
    access_token: String,
    #[serde(default)]
    expires_in: Option<u64>,
}

impl Exchanger {
    /// An exchanger with an empty cache.
    pub fn new() -> Exchanger {
        Exchanger {
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .connect_timeout(Duration::from_secs(5))
                .timeout(Duration::from_secs(10))
                .build()
                .expect("a reqwest client with no TLS settings of its own builds"),
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The token `exchange` issues for the caller's `subject_token`, from
    /// the cache while it lasts; `None` (logged with why) when the provider
    /// refuses or cannot be reached.
    pub async fn token_for(&self, exchange: &TokenExchange, subject_token: &str) -> Option<String> {
        let key = (
            exchange.name.clone(),
            Sha256::digest(subject_token.as_bytes()).into(),
        );
        let now = Instant::now();
        if let Some((token, until)) = self.cache.lock().expect("not poisoned").get(&key)
            && *until > now
        {
            return Some(token.clone());
        }
        let mut form = vec![
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:token-exchange",
            ),
            ("subject_token", subject_token),
            (
                "subject_token_type",
                "urn:ietf:params:oauth:token-type:access_token",
            ),
            (
                "requested_token_type",
                "urn:ietf:params:oauth:token-type:access_token",
            ),
        ];
        if let Some(audience) = &exchange.audience {
            form.push(("audience", audience));
        }
        if let Some(resource) = &exchange.resource {
            form.push(("resource", resource));
        }
        if let Some(scope) = &exchange.scope {
            form.push(("scope", scope));
        }
        let mut request = self.http.post(exchange.token_endpoint.clone());
        request = match &exchange.client_secret {
            Some(secret) => request.basic_auth(&exchange.client_id, Some(secret)),
            None => {
                form.push(("client_id", &exchange.client_id));
                request
            }
        };
        let answer = request.form(&form).send().await;
        let issued = match answer {
            Ok(response) if response.status().is_success() => match response.bytes().await {
                Ok(body) => serde_json::from_slice::<Issued>(&body)
                    .map_err(|e| format!("the provider's answer is not a token response: {e}")),
                Err(e) => Err(format!("the provider's answer could not be read ({e})")),
            },
            Ok(response) => Err(format!("the provider answered {}", response.status())),
            Err(e) => Err(format!("the provider cannot be reached ({e})")),
        };
        let issued = match issued {
            Ok(issued) => issued,
            Err(why) => {
                tracing::warn!(
                    exchange = %exchange.name,
                    "a caller's token could not be exchanged: {why}; the call gets no credential"
                );
                return None;
            }
        };
        let lifetime = issued
            .expires_in
            .map_or(DEFAULT_LIFETIME, Duration::from_secs)
            .saturating_sub(EXPIRY_MARGIN);
        let mut cache = self.cache.lock().expect("not poisoned");
        if cache.len() >= MAX_CACHED {
            cache.retain(|_, (_, until)| *until > now);
            if cache.len() >= MAX_CACHED {
                cache.clear();
            }
        }
        if !lifetime.is_zero() {
            cache.insert(key, (issued.access_token.clone(), now + lifetime));
        }
        Some(issued.access_token)
    }
}
