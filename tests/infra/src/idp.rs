//! An OAuth identity provider's key endpoint on loopback, with the keys
//! that sign its tokens: what toolhost's `[auth.oauth]` verifies tokens
//! against, for the authenticator's unit tests and the end-to-end tests.
//! Keys are EC P-256 (`ES256`, [`SigningKey`]), made fresh for each test,
//! or RSA (`RS256`/`PS256`, [`RsaSigningKey`]), one checked-in test key. A test can hold the next
//! key-set response ([`Idp::hold_next_fetch`]) to see what the verifier does
//! while a fetch is in flight. [`AuthorizationServer`] adds the
//! authorization-code flow with PKCE (RFC 7636) and resource indicators
//! (RFC 8707) that a browser signs in through: it signs in whoever the test
//! says, and issues that person an access token signed by the key set's key.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rsa::pkcs1::{DecodeRsaPrivateKey, EncodeRsaPrivateKey};
use rsa::pkcs8::{EncodePublicKey, LineEnding};
use rsa::traits::PublicKeyParts;
use tokio::sync::oneshot;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use p256::elliptic_curve::sec1::ToEncodedPoint;
use p256::pkcs8::EncodePrivateKey;
use serde_json::{Value, json};

/// An EC P-256 signing key and its public JWK.
#[derive(Clone)]
pub struct SigningKey {
    /// The key id (`kid`) its tokens name.
    pub kid: String,
    /// The private key, PKCS#8 DER.
    pub der: Vec<u8>,
    /// The public point, uncompressed SEC1: what a careless verifier would
    /// take as an HMAC secret.
    pub point: Vec<u8>,
    /// The public key as the key set publishes it.
    pub jwk: Value,
}

impl SigningKey {
    /// A fresh random key named `kid`.
    pub fn new(kid: &str) -> SigningKey {
        let secret = p256::SecretKey::from_bytes(&rand::random::<[u8; 32]>().into())
            .expect("32 random bytes are a P-256 scalar");
        let point = secret.public_key().to_encoded_point(false);
        SigningKey {
            kid: kid.to_string(),
            der: secret
                .to_pkcs8_der()
                .expect("a P-256 key encodes")
                .as_bytes()
                .to_vec(),
            point: point.as_bytes().to_vec(),
            jwk: json!({
                "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": kid,
                "x": URL_SAFE_NO_PAD.encode(point.x().expect("an uncompressed point")),
                "y": URL_SAFE_NO_PAD.encode(point.y().expect("an uncompressed point")),
            }),
        }
    }

    /// `claims` as an `ES256` JWT naming this key.
    pub fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &EncodingKey::from_ec_der(&self.der))
            .expect("ES256 signs with a P-256 key")
    }

    /// `claims` under `header` (its `alg` an ECDSA one), naming this key
    /// unless `header` names another.
    pub fn sign_with_header(&self, mut header: Header, claims: &Value) -> String {
        header.kid.get_or_insert_with(|| self.kid.clone());
        jsonwebtoken::encode(&header, claims, &EncodingKey::from_ec_der(&self.der))
            .expect("a P-256 key signs")
    }
}

/// An RSA test key (2048 bits, checked in: generating one takes 10 to 20
/// seconds in a debug build), never used outside these tests.
const RSA_TEST_KEY_PEM: &str = include_str!("../keys/rsa-2048-test-only.pem");

/// An RSA signing key (2048 bits) and its public JWK, which names no `alg`,
/// so the key verifies `RS256` and `PS256` tokens alike.
pub struct RsaSigningKey {
    /// The key id (`kid`) its tokens name.
    pub kid: String,
    /// The private key, PKCS#1 DER.
    pub der: Vec<u8>,
    /// The public key as PEM (SubjectPublicKeyInfo): the bytes the classic
    /// algorithm-confusion attack uses as an HMAC secret.
    pub public_pem: String,
    /// The public key as the key set publishes it.
    pub jwk: Value,
}

impl RsaSigningKey {
    /// The checked-in test key, named `kid`.
    pub fn new(kid: &str) -> RsaSigningKey {
        let private = rsa::RsaPrivateKey::from_pkcs1_pem(RSA_TEST_KEY_PEM)
            .expect("the checked-in RSA test key parses");
        let public = private.to_public_key();
        RsaSigningKey {
            kid: kid.to_string(),
            der: private
                .to_pkcs1_der()
                .expect("an RSA key encodes")
                .as_bytes()
                .to_vec(),
            public_pem: public
                .to_public_key_pem(LineEnding::LF)
                .expect("an RSA public key encodes"),
            jwk: json!({
                "kty": "RSA", "use": "sig", "kid": kid,
                "n": URL_SAFE_NO_PAD.encode(public.n().to_bytes_be()),
                "e": URL_SAFE_NO_PAD.encode(public.e().to_bytes_be()),
            }),
        }
    }

    /// `claims` as an `RS256` JWT naming this key.
    pub fn sign(&self, claims: &Value) -> String {
        self.sign_with_header(Header::new(Algorithm::RS256), claims)
    }

    /// `claims` under `header` (its `alg` an RSA one: `RS*` or `PS*`),
    /// naming this key unless `header` names another.
    pub fn sign_with_header(&self, mut header: Header, claims: &Value) -> String {
        header.kid.get_or_insert_with(|| self.kid.clone());
        jsonwebtoken::encode(&header, claims, &EncodingKey::from_rsa_der(&self.der))
            .expect("an RSA key signs")
    }
}

/// A held key-set response ([`Idp::hold_next_fetch`]): the fetch has
/// arrived at the provider once [`FetchHold::arrived`] returns, and is
/// answered when the hold is released or dropped.
pub struct FetchHold {
    arrived: oneshot::Receiver<()>,
    release: oneshot::Sender<()>,
}

impl FetchHold {
    /// Waits until the held fetch has reached the provider.
    pub async fn arrived(&mut self) {
        (&mut self.arrived)
            .await
            .expect("the identity provider is still running");
    }

    /// Lets the held fetch be answered, with the keys published by then.
    pub fn release(self) {
        let _ = self.release.send(());
    }
}

/// Serves `app` on a free loopback port: its address, and the task that
/// serves it (aborted on drop by its owner).
async fn serve_on_loopback(
    app: axum::Router,
) -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("a bound address");
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (addr, server)
}

/// The gate [`Idp::hold_next_fetch`] sets: who to tell of the arrival, and
/// what to wait for.
type Gate = Arc<Mutex<Option<(oneshot::Sender<()>, oneshot::Receiver<()>)>>>;

/// The key endpoint (`/jwks.json`) on loopback, counting fetches; stops
/// when dropped.
pub struct Idp {
    /// `http://127.0.0.1:PORT`: the issuer tokens name.
    pub issuer: String,
    /// `{issuer}/jwks.json`.
    pub jwks_url: String,
    keys: Arc<Mutex<Vec<Value>>>,
    fetches: Arc<AtomicUsize>,
    gate: Gate,
    server: tokio::task::JoinHandle<()>,
}

impl Idp {
    /// Serves a key set holding `keys`.
    pub async fn start(keys: &[&SigningKey]) -> Idp {
        let keys: Arc<Mutex<Vec<Value>>> =
            Arc::new(Mutex::new(keys.iter().map(|k| k.jwk.clone()).collect()));
        let fetches = Arc::new(AtomicUsize::new(0));
        let gate: Gate = Arc::default();
        let (k, f, g) = (keys.clone(), fetches.clone(), gate.clone());
        let app = axum::Router::new().route(
            "/jwks.json",
            axum::routing::get(move || {
                let (k, f, g) = (k.clone(), f.clone(), g.clone());
                async move {
                    f.fetch_add(1, Ordering::SeqCst);
                    let held = g.lock().unwrap().take();
                    if let Some((arrived, release)) = held {
                        let _ = arrived.send(());
                        // Released or dropped: answer either way.
                        let _ = release.await;
                    }
                    let keys = k.lock().unwrap().clone();
                    axum::Json(json!({ "keys": keys }))
                }
            }),
        );
        let (addr, server) = serve_on_loopback(app).await;
        Idp {
            issuer: format!("http://{addr}"),
            jwks_url: format!("http://{addr}/jwks.json"),
            keys,
            fetches,
            gate,
            server,
        }
    }

    /// Adds `key` to the published set (a rotation).
    pub fn publish(&self, key: &SigningKey) {
        self.keys.lock().unwrap().push(key.jwk.clone());
    }

    /// Adds a public key in JWK form to the published set.
    pub fn publish_jwk(&self, jwk: Value) {
        self.keys.lock().unwrap().push(jwk);
    }

    /// Holds the next key-set request (counted when it arrives) until the
    /// returned hold is released or dropped.
    pub fn hold_next_fetch(&self) -> FetchHold {
        let (arrived_tx, arrived) = oneshot::channel();
        let (release, release_rx) = oneshot::channel();
        *self.gate.lock().unwrap() = Some((arrived_tx, release_rx));
        FetchHold { arrived, release }
    }

    /// How many times the key set was fetched.
    pub fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }
}

impl Drop for Idp {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// A token exchange (RFC 8693): the subject token must be an access token
/// this issuer signed with `key` and not expired; the token issued keeps
/// its subject and claims, is meant for the `audience` asked, and names the
/// client as the actor (`act`).
fn exchange(
    form: &std::collections::HashMap<String, String>,
    key: &SigningKey,
    issuer: &str,
    refused: &AtomicUsize,
    granted: &AtomicUsize,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let field = |k: &str| form.get(k).cloned().unwrap_or_default();
    let jwk: jsonwebtoken::jwk::Jwk =
        serde_json::from_value(key.jwk.clone()).expect("the key's JWK parses");
    let decoding = jsonwebtoken::DecodingKey::from_jwk(&jwk).expect("a usable public key");
    let mut validation = jsonwebtoken::Validation::new(Algorithm::ES256);
    validation.set_issuer(&[issuer]);
    validation.validate_aud = false;
    let subject = jsonwebtoken::decode::<Value>(&field("subject_token"), &decoding, &validation);
    let valid = field("subject_token_type") == "urn:ietf:params:oauth:token-type:access_token"
        && !field("audience").is_empty()
        && !field("client_id").is_empty();
    let (Ok(subject), true) = (subject, valid) else {
        refused.fetch_add(1, Ordering::SeqCst);
        return (
            axum::http::StatusCode::BAD_REQUEST,
            axum::Json(json!({"error": "invalid_grant"})),
        )
            .into_response();
    };
    granted.fetch_add(1, Ordering::SeqCst);
    let now = jsonwebtoken::get_current_timestamp();
    let mut claims = subject.claims;
    let object = claims.as_object_mut().expect("claims are an object");
    object.insert("aud".into(), json!(field("audience")));
    object.insert("scope".into(), json!(field("scope")));
    object.insert("act".into(), json!({"sub": field("client_id")}));
    object.insert("iat".into(), json!(now));
    object.insert("exp".into(), json!(now + 600));
    axum::Json(json!({
        "access_token": key.sign(&claims),
        "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
        "token_type": "Bearer",
        "expires_in": 600,
    }))
    .into_response()
}

/// A code the authorization endpoint issued, and what it is bound to.
#[derive(Clone)]
struct Issued {
    client_id: String,
    redirect_uri: String,
    challenge: String,
    resource: String,
    claims: Value,
}

/// The authorization and token endpoints of [`Idp`]'s issuer, on a port of
/// their own: `/authorize` signs in the person [`AuthorizationServer::sign_in_as`]
/// names at once (a test has no one to type a password) and redirects back
/// with a single-use code; `/token` exchanges it only with the PKCE
/// verifier whose S256 challenge the code was asked with, for the same
/// client, redirect URI and resource, and issues a JWT for that resource.
pub struct AuthorizationServer {
    /// `{base}/authorize`.
    pub authorization_endpoint: String,
    /// `{base}/token`.
    pub token_endpoint: String,
    /// Who signs in next, as the token's claims (`sub`, `groups`, …).
    user: Arc<Mutex<Value>>,
    /// Requests the token endpoint refused.
    pub refused: Arc<AtomicUsize>,
    /// Token exchanges (RFC 8693) granted.
    pub exchanges: Arc<AtomicUsize>,
    server: tokio::task::JoinHandle<()>,
}

impl AuthorizationServer {
    /// Endpoints for `idp`'s issuer, signing with `key`, for `client_id`.
    pub async fn start(idp: &Idp, key: SigningKey, client_id: &str) -> AuthorizationServer {
        use std::collections::HashMap;
        let user = Arc::new(Mutex::new(json!({"sub": "nobody"})));
        let codes: Arc<Mutex<HashMap<String, Issued>>> = Arc::default();
        let refused = Arc::new(AtomicUsize::new(0));
        let issuer = idp.issuer.clone();
        let client = client_id.to_string();
        let key = Arc::new(key);
        let authorize = {
            let (user, codes, client) = (user.clone(), codes.clone(), client.clone());
            move |axum::extract::Query(q): axum::extract::Query<HashMap<String, String>>| {
                let (user, codes, client) = (user.clone(), codes.clone(), client.clone());
                async move {
                    let field = |k: &str| q.get(k).cloned().unwrap_or_default();
                    let ok = field("response_type") == "code"
                        && field("client_id") == client
                        && field("code_challenge_method") == "S256"
                        && !field("code_challenge").is_empty()
                        && !field("state").is_empty();
                    if !ok {
                        return axum::http::StatusCode::BAD_REQUEST.into_response();
                    }
                    let code = URL_SAFE_NO_PAD.encode(rand::random::<[u8; 24]>());
                    codes.lock().unwrap().insert(
                        code.clone(),
                        Issued {
                            client_id: field("client_id"),
                            redirect_uri: field("redirect_uri"),
                            challenge: field("code_challenge"),
                            resource: field("resource"),
                            claims: user.lock().unwrap().clone(),
                        },
                    );
                    let to = format!(
                        "{}?code={code}&state={}",
                        field("redirect_uri"),
                        field("state")
                    );
                    axum::response::Redirect::to(&to).into_response()
                }
            }
        };
        let exchanges = Arc::new(AtomicUsize::new(0));
        let token = {
            let (codes, refused, key, issuer, exchanges) = (
                codes.clone(),
                refused.clone(),
                key.clone(),
                issuer.clone(),
                exchanges.clone(),
            );
            move |axum::extract::Form(f): axum::extract::Form<HashMap<String, String>>| {
                let (codes, refused, key, issuer, exchanges) = (
                    codes.clone(),
                    refused.clone(),
                    key.clone(),
                    issuer.clone(),
                    exchanges.clone(),
                );
                async move {
                    use sha2::Digest;
                    let field = |k: &str| f.get(k).cloned().unwrap_or_default();
                    if field("grant_type") == "urn:ietf:params:oauth:grant-type:token-exchange" {
                        return exchange(&f, &key, &issuer, &refused, &exchanges).into_response();
                    }
                    let issued = codes.lock().unwrap().remove(&field("code"));
                    let verifier = field("code_verifier");
                    let valid = issued.filter(|i| {
                        field("grant_type") == "authorization_code"
                            && i.client_id == field("client_id")
                            && i.redirect_uri == field("redirect_uri")
                            && i.resource == field("resource")
                            && URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()))
                                == i.challenge
                    });
                    let Some(issued) = valid else {
                        refused.fetch_add(1, Ordering::SeqCst);
                        return (
                            axum::http::StatusCode::BAD_REQUEST,
                            axum::Json(json!({"error": "invalid_grant"})),
                        )
                            .into_response();
                    };
                    let now = jsonwebtoken::get_current_timestamp();
                    let mut claims = issued.claims.clone();
                    let object = claims.as_object_mut().expect("claims are an object");
                    object.insert("iss".into(), json!(issuer));
                    object.insert("aud".into(), json!(issued.resource));
                    object.insert("iat".into(), json!(now));
                    object.insert("nbf".into(), json!(now - 10));
                    object.insert("exp".into(), json!(now + 600));
                    let access_token = key.sign(&claims);
                    axum::Json(json!({
                        "access_token": access_token,
                        "token_type": "Bearer",
                        "expires_in": 600,
                    }))
                    .into_response()
                }
            }
        };
        use axum::response::IntoResponse;
        let app = axum::Router::new()
            .route("/authorize", axum::routing::get(authorize))
            .route("/token", axum::routing::post(token));
        let (addr, server) = serve_on_loopback(app).await;
        AuthorizationServer {
            authorization_endpoint: format!("http://{addr}/authorize"),
            token_endpoint: format!("http://{addr}/token"),
            user,
            refused,
            exchanges,
            server,
        }
    }

    /// The person the next sign-in is, as the access token's claims.
    pub fn sign_in_as(&self, claims: Value) {
        *self.user.lock().unwrap() = claims;
    }
}

impl Drop for AuthorizationServer {
    fn drop(&mut self) {
        self.server.abort();
    }
}
