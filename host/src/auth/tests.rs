//! The authenticator against a real key set served on loopback, with tokens
//! signed by keys made here, through the real middleware on a real axum
//! server.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::extract::Extension;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::routing::post;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use toolhost_test_infra::idp::{Idp, RsaSigningKey, SigningKey};

use super::http::{METADATA_PATH, metadata_router, require_identity};
use super::settings::{AuthSettings, OAuthSettings, StaticToken};
use super::*;

const RESOURCE: &str = "https://mcp.example.com/mcp";
const STATIC_TOKEN: &str = "ci-bot-token-0123456789abcdef";

/// `[auth]` for [`RESOURCE`] with `oauth` and the `ci-bot` static token
/// (scope `statuspro`), resolved.
fn settings(oauth: Option<OAuthSettings>) -> AuthSettings {
    AuthSettings {
        resource: RESOURCE.to_string(),
        metadata_url: "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
            .to_string(),
        oauth,
        tokens: vec![StaticToken {
            subject: "ci-bot".to_string(),
            sha256: Sha256::digest(STATIC_TOKEN.as_bytes()).into(),
            scopes: ["statuspro".to_string()].into(),
        }],
        metrics_scope: "toolhost:metrics".to_string(),
    }
}

/// The authenticator's view of the test provider.
trait IdpExt {
    fn authenticator(&self, adjust: impl FnOnce(&mut OAuthSettings)) -> Authenticator;
    fn claims(&self) -> Value;
}

impl IdpExt for Idp {
    fn authenticator(&self, adjust: impl FnOnce(&mut OAuthSettings)) -> Authenticator {
        // What `[auth]` with `[auth.oauth]` (this issuer, scope `mcp:tools`,
        // `leeway_secs = 5`, the other keys at their defaults) and the
        // `ci-bot` static token resolves to; `adjust` changes the oauth part.
        let mut oauth = OAuthSettings {
            issuer: self.issuer.clone(),
            jwks_url: self.jwks_url.parse().unwrap(),
            algorithms: vec![Algorithm::RS256, Algorithm::ES256],
            scopes: ["mcp:tools".to_string()].into(),
            jwks_refresh: std::time::Duration::from_secs(300),
            jwks_refetch_min: std::time::Duration::from_secs(10),
            leeway: std::time::Duration::from_secs(5),
            require_at_jwt: false,
        };
        adjust(&mut oauth);
        let settings = settings(Some(oauth));
        Authenticator::new(settings, &Access::default()).unwrap()
    }

    /// Claims that pass every check.
    fn claims(&self) -> Value {
        let now = jsonwebtoken::get_current_timestamp();
        json!({
            "iss": self.issuer, "aud": RESOURCE, "sub": "alice",
            "iat": now, "nbf": now - 10, "exp": now + 600,
            "scope": "mcp:tools katana:use",
        })
    }
}

/// The headers of a request bearing `key`'s token for `idp`'s default
/// claims.
fn signed_by(key: &SigningKey, idp: &Idp) -> HeaderMap {
    bearer(&key.sign(&idp.claims()))
}

fn bearer(token: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(
        "authorization",
        HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
    );
    headers
}

fn with(mut claims: Value, key: &str, value: Value) -> Value {
    claims[key] = value;
    claims
}

/// A header of `alg` with `typ` set as given (`None`: no `typ`).
fn typed(alg: Algorithm, typ: Option<&str>) -> Header {
    let mut header = Header::new(alg);
    header.typ = typ.map(str::to_string);
    header
}

/// A hang guard: what it wraps must finish, and fails the test if it
/// never does. It measures nothing.
async fn must_finish<F: std::future::Future>(what: &str, future: F) -> F::Output {
    tokio::time::timeout(std::time::Duration::from_secs(60), future)
        .await
        .unwrap_or_else(|_| panic!("{what} never finished"))
}

#[tokio::test]
async fn a_valid_token_establishes_its_subject_and_scopes() {
    let key = SigningKey::new("k1");
    let idp = Idp::start(&[&key]).await;
    let auth = idp.authenticator(|_| {});
    let identity = auth.authenticate(&signed_by(&key, &idp)).await.unwrap();
    assert_eq!(identity.subject, "alice");
    assert_eq!(
        identity.scopes,
        ["katana:use", "mcp:tools"].map(String::from).into()
    );
    // `scp` as an array counts too; `aud` may be a list holding ours.
    let claims = with(idp.claims(), "scope", Value::Null);
    let claims = with(claims, "scp", json!(["mcp:tools"]));
    let claims = with(claims, "aud", json!(["other", RESOURCE]));
    let identity = auth
        .authenticate(&bearer(&key.sign(&claims)))
        .await
        .unwrap();
    assert!(identity.scopes.contains("mcp:tools"));
    assert_eq!(idp.fetches(), 1, "keys are cached");
}

#[tokio::test]
async fn each_bad_token_is_refused_for_its_own_reason() {
    let key = SigningKey::new("k1");
    let stranger = SigningKey::new("k1");
    let idp = Idp::start(&[&key]).await;
    let auth = idp.authenticator(|_| {});
    let now = jsonwebtoken::get_current_timestamp();
    let claims = idp.claims();
    let valid = key.sign(&claims);

    let header_none = URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"JWT","kid":"k1"}"#);
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    let unsigned = format!("{header_none}.{payload}.");

    // HS256 keyed with the issuer's public key, as published.
    let mut hs_header = Header::new(Algorithm::HS256);
    hs_header.kid = Some("k1".into());
    let hs_with_point =
        jsonwebtoken::encode(&hs_header, &claims, &EncodingKey::from_secret(&key.point)).unwrap();
    let hs_with_jwk = jsonwebtoken::encode(
        &hs_header,
        &claims,
        &EncodingKey::from_secret(key.jwk.to_string().as_bytes()),
    )
    .unwrap();

    // The payload changed after signing.
    let parts: Vec<&str> = valid.split('.').collect();
    let forged_payload =
        URL_SAFE_NO_PAD.encode(with(claims.clone(), "sub", json!("root")).to_string());
    let tampered = format!("{}.{forged_payload}.{}", parts[0], parts[2]);

    let cases: Vec<(&str, String, AuthFailure)> = vec![
        (
            "expired",
            key.sign(&with(claims.clone(), "exp", json!(now - 60))),
            AuthFailure::Expired,
        ),
        (
            "not yet valid",
            key.sign(&with(claims.clone(), "nbf", json!(now + 600))),
            AuthFailure::NotYetValid,
        ),
        (
            "wrong aud",
            key.sign(&with(
                claims.clone(),
                "aud",
                json!("https://other.example.com/mcp"),
            )),
            AuthFailure::WrongAudience,
        ),
        (
            "wrong iss",
            key.sign(&with(
                claims.clone(),
                "iss",
                json!("https://evil.example.com"),
            )),
            AuthFailure::WrongIssuer,
        ),
        (
            "no sub",
            key.sign(&with(claims.clone(), "sub", Value::Null)),
            AuthFailure::MissingClaim,
        ),
        (
            "no aud",
            key.sign(&{
                let mut c = claims.clone();
                c.as_object_mut().unwrap().remove("aud");
                c
            }),
            AuthFailure::MissingClaim,
        ),
        ("alg none", unsigned, AuthFailure::AlgorithmNotAllowed),
        (
            "HS256 with the public point",
            hs_with_point,
            AuthFailure::AlgorithmNotAllowed,
        ),
        (
            "HS256 with the JWK",
            hs_with_jwk,
            AuthFailure::AlgorithmNotAllowed,
        ),
        ("tampered payload", tampered, AuthFailure::BadSignature),
        (
            "another key, same kid",
            stranger.sign(&claims),
            AuthFailure::BadSignature,
        ),
        (
            "unknown kid",
            SigningKey::new("k9").sign(&claims),
            AuthFailure::UnknownKey,
        ),
        (
            "not a JWT",
            "not-a-jwt-at-all".into(),
            AuthFailure::MalformedToken,
        ),
        (
            "missing scope",
            key.sign(&with(claims.clone(), "scope", json!("katana:use"))),
            AuthFailure::InsufficientScope,
        ),
    ];
    for (what, token, expected) in cases {
        let got = auth.authenticate(&bearer(&token)).await;
        assert_eq!(got, Err(expected), "{what}");
    }
    assert_eq!(
        auth.authenticate(&HeaderMap::new()).await,
        Err(AuthFailure::MissingToken)
    );
    let mut basic = HeaderMap::new();
    basic.insert(
        "authorization",
        HeaderValue::from_static("Basic YWxpY2U6cHc="),
    );
    assert_eq!(
        auth.authenticate(&basic).await,
        Err(AuthFailure::MalformedHeader)
    );
}

#[tokio::test]
async fn static_tokens_match_by_digest() {
    let key = SigningKey::new("k1");
    let idp = Idp::start(&[&key]).await;
    let auth = idp.authenticator(|_| {});
    let identity = auth.authenticate(&bearer(STATIC_TOKEN)).await.unwrap();
    assert_eq!(identity.subject, "ci-bot");
    assert!(identity.scopes.contains("statuspro"));
    let wrong = format!("{STATIC_TOKEN}x");
    assert_eq!(
        auth.authenticate(&bearer(&wrong)).await,
        Err(AuthFailure::MalformedToken)
    );

    // Static tokens alone: anything else is an unknown token.
    let mut static_only = settings(None);
    static_only.tokens[0].scopes.clear();
    let only_static = Authenticator::new(static_only, &Access::default()).unwrap();
    assert_eq!(
        only_static
            .authenticate(&bearer(STATIC_TOKEN))
            .await
            .unwrap()
            .subject,
        "ci-bot"
    );
    assert_eq!(
        only_static.authenticate(&bearer(&wrong)).await,
        Err(AuthFailure::UnknownToken)
    );
    assert_eq!(
        only_static.authenticate(&signed_by(&key, &idp)).await,
        Err(AuthFailure::UnknownToken)
    );
}

#[tokio::test]
async fn an_identity_established_earlier_is_accepted_while_its_credential_still_would_be() {
    let key = SigningKey::new("k1");
    let idp = Idp::start(&[&key]).await;
    let auth = idp.authenticator(|_| {});
    let bot = auth.authenticate(&bearer(STATIC_TOKEN)).await.unwrap();
    let digest = hex::encode(Sha256::digest(STATIC_TOKEN.as_bytes()));
    assert!(auth.still_accepts(&bot, Some(&digest)));
    // Another token under the same name (the old one rotated away).
    let rotated = hex::encode(Sha256::digest(b"the token before"));
    assert!(
        !auth.still_accepts(&bot, Some(&rotated)),
        "that token is gone"
    );
    // The same subject, from a configuration without its token.
    let mut without = settings(None);
    without.tokens.clear();
    let after_restart = Authenticator::new(without, &Access::default()).unwrap();
    assert!(
        !after_restart.still_accepts(&bot, Some(&digest)),
        "its token is gone"
    );
    // A JWT's identity, until its `exp` (a fraction of a second counts).
    let jwt = auth.authenticate(&signed_by(&key, &idp)).await.unwrap();
    assert!(jwt.expires_ms().is_some() && auth.still_accepts(&jwt, None));
    for past in [json!(1), json!(1.5)] {
        let mut expired = jwt.clone();
        let mut claims = (*expired.claims).clone();
        claims.insert("exp".into(), past.clone());
        expired.claims = std::sync::Arc::new(claims);
        assert!(!auth.still_accepts(&expired, None), "past its exp {past}");
    }
}

#[tokio::test]
async fn a_rotated_key_is_fetched_when_a_token_names_it() {
    let old = SigningKey::new("2026-01");
    let idp = Idp::start(&[&old]).await;
    let auth = idp.authenticator(|o| o.jwks_refetch_min = std::time::Duration::ZERO);
    auth.authenticate(&signed_by(&old, &idp)).await.unwrap();
    assert_eq!(idp.fetches(), 1);

    let new = SigningKey::new("2026-02");
    idp.publish(&new);
    let identity = auth.authenticate(&signed_by(&new, &idp)).await.unwrap();
    assert_eq!(identity.subject, "alice");
    assert_eq!(idp.fetches(), 2, "one refetch for the new key id");
}

#[tokio::test]
async fn a_flood_of_unknown_key_ids_fetches_the_keys_once_per_interval() {
    let key = SigningKey::new("k1");
    let idp = Idp::start(&[&key]).await;
    let auth = idp.authenticator(|o| o.jwks_refetch_min = std::time::Duration::from_secs(3600));
    auth.authenticate(&signed_by(&key, &idp)).await.unwrap();
    let random = SigningKey::new("unused");
    for i in 0..50 {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(format!("made-up-{i}"));
        let token = jsonwebtoken::encode(
            &header,
            &idp.claims(),
            &EncodingKey::from_ec_der(&random.der),
        )
        .unwrap();
        assert_eq!(
            auth.authenticate(&bearer(&token)).await,
            Err(AuthFailure::UnknownKey)
        );
    }
    assert_eq!(
        idp.fetches(),
        1,
        "unknown key ids within the interval fetch nothing"
    );
    // The known key still works.
    auth.authenticate(&signed_by(&key, &idp)).await.unwrap();
}

#[tokio::test]
async fn an_unreachable_issuer_is_unavailable_not_unauthorised() {
    let key = SigningKey::new("k1");
    let mut idp = Idp::start(&[&key]).await;
    // A port nobody listens on: bind one, then drop it.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    idp.jwks_url = format!("http://{closed}/jwks.json");
    let auth = idp.authenticator(|_| {});
    assert_eq!(
        auth.authenticate(&signed_by(&key, &idp)).await,
        Err(AuthFailure::KeysUnavailable)
    );
}

/// The middleware on a real server: refusals carry the challenge, nothing
/// behind the middleware runs, and an accepted request sees its identity.
#[tokio::test]
async fn the_middleware_answers_with_challenges_and_runs_nothing_refused() {
    let key = SigningKey::new("k1");
    let idp = Idp::start(&[&key]).await;
    let auth = idp.authenticator(|_| {});
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = ran.clone();
    let app = Router::new()
        .route(
            "/mcp",
            post(move |Extension(identity): Extension<Identity>| {
                let counter = counter.clone();
                async move {
                    counter.fetch_add(1, Ordering::SeqCst);
                    identity.subject
                }
            }),
        )
        .layer(axum::middleware::from_fn_with_state(
            auth.clone(),
            require_identity,
        ))
        .merge(metadata_router(&auth, |_: &str| false));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let client = reqwest::Client::new();
    let metadata_url = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";

    let send = |token: Option<String>| {
        let mut request = client.post(format!("{base}/mcp"));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };
    let challenge = |r: &reqwest::Response| {
        r.headers()
            .get("www-authenticate")
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default()
    };

    let missing = send(None).await.unwrap();
    assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
    let c = challenge(&missing);
    assert!(c.starts_with("Bearer "), "{c}");
    assert!(
        c.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{c}"
    );
    assert!(!c.contains("error="), "no error code without a token: {c}");

    let expired_token = key.sign(&with(idp.claims(), "exp", json!(1)));
    let expired = send(Some(expired_token.clone())).await.unwrap();
    assert_eq!(expired.status(), StatusCode::UNAUTHORIZED);
    let c = challenge(&expired);
    assert!(c.contains("error=\"invalid_token\""), "{c}");
    assert!(
        c.contains("error_description=\"the token has expired: get a new one"),
        "{c}"
    );
    assert!(
        !c.contains(&expired_token),
        "the token is never echoed: {c}"
    );
    assert!(c.contains("resource_metadata="), "{c}");
    let body: Value = expired.text().await.unwrap().parse::<Value>().unwrap();
    assert_eq!(body["error"], "invalid_token");
    assert!(
        body["error_description"]
            .as_str()
            .unwrap()
            .contains("expired"),
        "{body}"
    );
    assert!(
        !body.to_string().contains(&expired_token),
        "the token is never echoed"
    );

    let narrow = key.sign(&with(idp.claims(), "scope", json!("katana:use")));
    let forbidden = send(Some(narrow)).await.unwrap();
    assert_eq!(forbidden.status(), StatusCode::FORBIDDEN);
    let c = challenge(&forbidden);
    assert!(c.contains("error=\"insufficient_scope\""), "{c}");
    assert!(
        c.contains("error_description=\"the token lacks a required scope"),
        "{c}"
    );
    assert!(c.contains("scope=\"mcp:tools\""), "{c}");

    assert_eq!(ran.load(Ordering::SeqCst), 0, "nothing refused ran");

    let ok = send(Some(key.sign(&idp.claims()))).await.unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    assert_eq!(ok.text().await.unwrap(), "alice");
    let ok = send(Some(STATIC_TOKEN.into())).await.unwrap();
    assert_eq!(ok.text().await.unwrap(), "ci-bot");
    assert_eq!(ran.load(Ordering::SeqCst), 2);

    // The metadata, at both paths, without a token.
    for path in [METADATA_PATH.to_string(), format!("{METADATA_PATH}/mcp")] {
        let doc: Value = client
            .get(format!("{base}{path}"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(doc["resource"], RESOURCE, "{path}");
        assert_eq!(doc["authorization_servers"], json!([idp.issuer]), "{path}");
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
        assert!(
            doc["scopes_supported"]
                .as_array()
                .unwrap()
                .contains(&json!("mcp:tools"))
        );
    }
}

/// RS256 is a default algorithm: an RSA key's token passes. PS256 passes
/// only when configured. The classic confusions are refused: HS256 keyed
/// with the RSA public key (PEM, modulus, JWK), and an RSA token naming an
/// EC key (or the other way round), without fetching the keys again.
#[tokio::test]
async fn rsa_tokens_pass_and_algorithm_confusions_do_not() {
    let ec = SigningKey::new("ec-1");
    let rsa = RsaSigningKey::new("rsa-1");
    let idp = Idp::start(&[&ec]).await;
    idp.publish_jwk(rsa.jwk.clone());
    let auth = idp.authenticator(|_| {});
    let claims = idp.claims();

    let identity = auth
        .authenticate(&bearer(&rsa.sign(&claims)))
        .await
        .unwrap();
    assert_eq!(identity.subject, "alice");
    let ps256 = rsa.sign_with_header(Header::new(Algorithm::PS256), &claims);
    assert_eq!(
        auth.authenticate(&bearer(&ps256)).await,
        Err(AuthFailure::AlgorithmNotAllowed),
        "PS256 is not a default"
    );
    let with_ps256 = idp.authenticator(|o| o.algorithms = vec![Algorithm::PS256]);
    assert_eq!(
        with_ps256
            .authenticate(&bearer(&ps256))
            .await
            .unwrap()
            .subject,
        "alice"
    );
    assert_eq!(
        with_ps256.authenticate(&bearer(&rsa.sign(&claims))).await,
        Err(AuthFailure::AlgorithmNotAllowed),
        "RS256 is not configured there"
    );

    let mut hs256 = Header::new(Algorithm::HS256);
    hs256.kid = Some(rsa.kid.clone());
    let secrets: [(&str, Vec<u8>); 3] = [
        ("the PEM public key", rsa.public_pem.clone().into_bytes()),
        (
            "the modulus",
            URL_SAFE_NO_PAD
                .decode(rsa.jwk["n"].as_str().unwrap())
                .unwrap(),
        ),
        ("the JWK", rsa.jwk.to_string().into_bytes()),
    ];
    for (what, secret) in secrets {
        let token =
            jsonwebtoken::encode(&hs256, &claims, &EncodingKey::from_secret(&secret)).unwrap();
        assert_eq!(
            auth.authenticate(&bearer(&token)).await,
            Err(AuthFailure::AlgorithmNotAllowed),
            "HS256 keyed with {what}"
        );
    }

    let mut rs_naming_ec = Header::new(Algorithm::RS256);
    rs_naming_ec.kid = Some(ec.kid.clone());
    assert_eq!(
        auth.authenticate(&bearer(&rsa.sign_with_header(rs_naming_ec, &claims)))
            .await,
        Err(AuthFailure::KeyMismatch)
    );
    let mut es_naming_rsa = Header::new(Algorithm::ES256);
    es_naming_rsa.kid = Some(rsa.kid.clone());
    assert_eq!(
        auth.authenticate(&bearer(&ec.sign_with_header(es_naming_rsa, &claims)))
            .await,
        Err(AuthFailure::KeyMismatch)
    );
    assert_eq!(idp.fetches(), 2, "one fetch per authenticator, no refetch");
}

/// By default an access token may be typed `at+jwt`, `application/at+jwt`,
/// `JWT` or not at all; any other JWT type is refused. An ID token (typed
/// `JWT`) is refused for its audience, the client.
#[tokio::test]
async fn only_access_token_types_pass() {
    let key = SigningKey::new("k1");
    let idp = Idp::start(&[&key]).await;
    let auth = idp.authenticator(|_| {});
    let claims = idp.claims();
    for typ in [
        Some("at+jwt"),
        Some("application/at+jwt"),
        Some("AT+JWT"),
        Some("JWT"),
        Some("jwt"),
        None,
    ] {
        let token = key.sign_with_header(typed(Algorithm::ES256, typ), &claims);
        assert!(
            auth.authenticate(&bearer(&token)).await.is_ok(),
            "typ {typ:?}"
        );
    }
    for typ in [
        "dpop+jwt",
        "logout+jwt",
        "secevent+jwt",
        "application/secevent+jwt",
        "id_token+jwt",
        "",
    ] {
        let token = key.sign_with_header(typed(Algorithm::ES256, Some(typ)), &claims);
        assert_eq!(
            auth.authenticate(&bearer(&token)).await,
            Err(AuthFailure::NotAnAccessToken),
            "typ {typ:?}"
        );
    }
    let id_token = key.sign_with_header(
        typed(Algorithm::ES256, Some("JWT")),
        &with(claims.clone(), "aud", json!("my-mcp-client")),
    );
    assert_eq!(
        auth.authenticate(&bearer(&id_token)).await,
        Err(AuthFailure::WrongAudience)
    );
}

/// `require_at_jwt = true`: only `at+jwt` (RFC 9068) passes; an ID token
/// is refused for its type.
#[tokio::test]
async fn require_at_jwt_accepts_only_at_jwt() {
    let key = SigningKey::new("k1");
    let idp = Idp::start(&[&key]).await;
    let auth = idp.authenticator(|o| o.require_at_jwt = true);
    let claims = idp.claims();
    for typ in ["at+jwt", "application/at+jwt", "Application/AT+JWT"] {
        let token = key.sign_with_header(typed(Algorithm::ES256, Some(typ)), &claims);
        assert!(auth.authenticate(&bearer(&token)).await.is_ok(), "{typ}");
    }
    for typ in [Some("JWT"), None, Some("dpop+jwt"), Some("at+jwt+x")] {
        let token = key.sign_with_header(typed(Algorithm::ES256, typ), &claims);
        assert_eq!(
            auth.authenticate(&bearer(&token)).await,
            Err(AuthFailure::NotAtJwt),
            "typ {typ:?}"
        );
    }
    let id_token = key.sign_with_header(
        typed(Algorithm::ES256, Some("JWT")),
        &with(claims, "aud", json!("my-mcp-client")),
    );
    assert_eq!(
        auth.authenticate(&bearer(&id_token)).await,
        Err(AuthFailure::NotAtJwt)
    );
}

/// While a fetch for an unknown key id is held at the issuer, a token
/// whose key is cached passes; the held request completes on release.
#[tokio::test]
async fn a_cached_key_never_waits_for_a_fetch_in_flight() {
    let known = SigningKey::new("k1");
    let idp = Idp::start(&[&known]).await;
    let auth = idp.authenticator(|o| o.jwks_refetch_min = std::time::Duration::ZERO);
    auth.authenticate(&signed_by(&known, &idp)).await.unwrap();
    let rotated = SigningKey::new("k2");
    idp.publish(&rotated);

    let mut hold = idp.hold_next_fetch();
    let held = tokio::spawn({
        let auth = auth.clone();
        let token = rotated.sign(&idp.claims());
        async move { auth.authenticate(&bearer(&token)).await }
    });
    must_finish("the fetch reaching the issuer", hold.arrived()).await;
    let identity = must_finish(
        "a request with a cached key while a fetch is held",
        auth.authenticate(&signed_by(&known, &idp)),
    )
    .await
    .unwrap();
    assert_eq!(identity.subject, "alice");
    assert!(!held.is_finished(), "the held fetch is still held");

    hold.release();
    let identity = must_finish("the held request", held)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(identity.subject, "alice");
    assert_eq!(idp.fetches(), 2);
}

/// No keys to be had: 503 with `Retry-After` (the refetch interval, at
/// least a second), no challenge.
#[tokio::test]
async fn keys_unavailable_is_503_with_retry_after() {
    let key = SigningKey::new("k1");
    let mut idp = Idp::start(&[&key]).await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    idp.jwks_url = format!("http://{closed}/jwks.json");
    for (refetch_min_secs, retry_after) in [(7, "7"), (0, "1")] {
        let auth = idp.authenticator(|o| {
            o.jwks_refetch_min = std::time::Duration::from_secs(refetch_min_secs)
        });
        let failure = auth.authenticate(&signed_by(&key, &idp)).await.unwrap_err();
        assert_eq!(failure, AuthFailure::KeysUnavailable);
        let response = http::refusal(&auth, failure);
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            response.headers()["retry-after"],
            retry_after,
            "jwks_refetch_min_secs = {refetch_min_secs}"
        );
        assert!(!response.headers().contains_key("www-authenticate"));
    }
}
