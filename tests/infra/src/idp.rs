//! An OAuth identity provider's key endpoint on loopback, with the keys
//! that sign its tokens: what toolhost's `[auth.oauth]` verifies tokens
//! against, for the authenticator's unit tests and the end-to-end tests.
//! Keys are EC P-256 (`ES256`), made fresh for each test.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use p256::elliptic_curve::sec1::ToEncodedPoint;
use p256::pkcs8::EncodePrivateKey;
use serde_json::{Value, json};

/// An EC P-256 signing key and its public JWK.
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
}

/// The key endpoint (`/jwks.json`) on loopback, counting fetches; stops
/// when dropped.
pub struct Idp {
    /// `http://127.0.0.1:PORT`: the issuer tokens name.
    pub issuer: String,
    /// `{issuer}/jwks.json`.
    pub jwks_url: String,
    keys: Arc<Mutex<Vec<Value>>>,
    fetches: Arc<AtomicUsize>,
    server: tokio::task::JoinHandle<()>,
}

impl Idp {
    /// Serves a key set holding `keys`.
    pub async fn start(keys: &[&SigningKey]) -> Idp {
        let keys = Arc::new(Mutex::new(keys.iter().map(|k| k.jwk.clone()).collect()));
        let fetches = Arc::new(AtomicUsize::new(0));
        let (k, f) = (keys.clone(), fetches.clone());
        let app = axum::Router::new().route(
            "/jwks.json",
            axum::routing::get(move || {
                let (k, f) = (k.clone(), f.clone());
                async move {
                    f.fetch_add(1, Ordering::SeqCst);
                    axum::Json(json!({ "keys": *k.lock().unwrap() }))
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let addr = listener.local_addr().expect("a bound address");
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Idp {
            issuer: format!("http://{addr}"),
            jwks_url: format!("http://{addr}/jwks.json"),
            keys,
            fetches,
            server,
        }
    }

    /// Adds `key` to the published set (a rotation).
    pub fn publish(&self, key: &SigningKey) {
        self.keys.lock().unwrap().push(key.jwk.clone());
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
