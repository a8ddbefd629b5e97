//! The gate end to end over real HTTP, with the Katana-style error body, so
//! the pieces are proven independently of any one sandbox.

use std::{sync::Arc, time::Duration};

use axum::{
    Router,
    routing::{get, post},
};
use reqwest::{StatusCode, header::RETRY_AFTER};
use sandbox_kit::{
    FAULT_HEADER, Gate, NamedStyle, RATE_LIMIT_HEADER, RATE_REMAINING_HEADER, RATE_RESET_HEADER,
    RateLimiter, RequestLog, ServerHandle, serve,
};
use serde_json::{Value, json};

/// A tiny gated app: `GET /things` and `POST /things` (echoes the body), one
/// request per window on `default`, plus a `write` bucket of 1 for POSTs.
async fn app(limit: u32, fault_timeout: Duration) -> (ServerHandle, RequestLog) {
    let limiter = Arc::new(
        RateLimiter::new(Duration::from_secs(60))
            .with_bucket("default", limit)
            .with_bucket("write", 1),
    );
    let gate = Gate::new("k1", NamedStyle)
        .with_rate_limiter(limiter, |method, _path| {
            let mut buckets = vec!["default".to_owned()];
            if method == axum::http::Method::POST {
                buckets.push("write".to_owned());
            }
            buckets
        })
        .with_fault_timeout(fault_timeout);
    let log = gate.request_log().clone();
    let router = gate.wrap(
        Router::new()
            .route("/things", get(|| async { "things" }))
            .route("/things", post(|body: String| async move { body })),
    );
    (serve(router, 0).await.expect("the server starts"), log)
}

async fn send(request: reqwest::RequestBuilder) -> (StatusCode, Value) {
    let response = request.send().await.unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

#[tokio::test]
async fn auth_uses_the_named_style() {
    let (server, log) = app(10, Duration::from_secs(30)).await;
    let client = reqwest::Client::new();
    let (status, body) = send(
        client
            .get(format!("{}/things", server.url()))
            .bearer_auth("nope"),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        body,
        json!({"statusCode": 401, "name": "UnauthorizedError", "message": "Unauthorized"})
    );
    let (status, body) = send(
        client
            .get(format!("{}/things", server.url()))
            .bearer_auth("k1"),
    )
    .await;
    assert_eq!(
        (status, body),
        (StatusCode::OK, Value::String("things".into()))
    );
    assert_eq!(log.len(), 2);
}

#[tokio::test]
async fn buckets_limit_and_handlers_get_the_body() {
    let (server, log) = app(10, Duration::from_secs(30)).await;
    let client = reqwest::Client::new();
    let url = format!("{}/things", server.url());
    let (status, body) = send(client.post(&url).bearer_auth("k1").json(&json!({"a": 1}))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        json!({"a": 1}),
        "the handler still sees the body the gate logged"
    );
    assert_eq!(log.entries()[0].body, json!({"a": 1}));

    let response = client
        .post(&url)
        .bearer_auth("k1")
        .body("x")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry: u64 = response.headers()[RETRY_AFTER]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry));
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["name"], "TooManyRequestsError");
    // GETs only use the default bucket.
    assert_eq!(
        send(client.get(&url).bearer_auth("k1")).await.0,
        StatusCode::OK
    );
}

#[tokio::test]
async fn faults_and_timeouts() {
    let (server, log) = app(10, Duration::from_millis(300)).await;
    let client = reqwest::Client::new();
    let url = format!("{}/things", server.url());
    let (status, body) = send(
        client
            .get(&url)
            .bearer_auth("k1")
            .header(FAULT_HEADER, "500"),
    )
    .await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(body["name"], "InternalServerError");

    let held = tokio::spawn(
        client
            .get(&url)
            .bearer_auth("k1")
            .header(FAULT_HEADER, "timeout")
            .send(),
    );
    log.wait_for_received(2).await;
    assert_eq!(
        send(client.get(&url).bearer_auth("k1")).await.0,
        StatusCode::OK
    );
    let response = held.await.unwrap().unwrap();
    assert_eq!(response.status(), StatusCode::GATEWAY_TIMEOUT);
    assert_eq!(log.entries()[1].fault.as_deref(), Some("timeout"));
}

#[tokio::test]
async fn shutdown_closes_the_listener() {
    let (server, _log) = app(10, Duration::from_secs(30)).await;
    let url = format!("{}/things", server.url());
    server.shutdown().await.expect("a clean shutdown");
    let err = reqwest::Client::new()
        .get(&url)
        .bearer_auth("k1")
        .send()
        .await;
    assert!(err.is_err(), "nothing listens after shutdown");
}

/// Reads a numeric response header.
fn header_u64(response: &reqwest::Response, name: &str) -> u64 {
    response.headers()[name]
        .to_str()
        .unwrap()
        .parse()
        .unwrap_or_else(|err| panic!("{name} is not a number: {err}"))
}

#[tokio::test]
async fn rate_limit_headers_on_every_authenticated_response() {
    let limiter = Arc::new(RateLimiter::new(Duration::from_secs(60)).with_bucket("default", 2));
    let gate = Gate::new("k1", NamedStyle)
        .with_rate_limiter(limiter, |_, _| vec!["default".to_owned()])
        .with_rate_limit_headers("default");
    let router = gate.wrap(Router::new().route("/things", get(|| async { "things" })));
    let server = serve(router, 0).await.unwrap();
    let client = reqwest::Client::new();
    let url = format!("{}/things", server.url());
    let before_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;

    let first = client.get(&url).bearer_auth("k1").send().await.unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    assert_eq!(header_u64(&first, RATE_LIMIT_HEADER), 2);
    assert_eq!(header_u64(&first, RATE_REMAINING_HEADER), 1);
    let reset = header_u64(&first, RATE_RESET_HEADER);
    assert!(
        (before_ms + 59_000..=before_ms + 61_000).contains(&reset),
        "reset {reset} is about a window after {before_ms}"
    );

    let second = client.get(&url).bearer_auth("k1").send().await.unwrap();
    assert_eq!(header_u64(&second, RATE_REMAINING_HEADER), 0);
    let limited = client.get(&url).bearer_auth("k1").send().await.unwrap();
    assert_eq!(limited.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(header_u64(&limited, RATE_REMAINING_HEADER), 0);
    assert!(limited.headers().contains_key(RETRY_AFTER));

    // Injected faults carry them too; a 401 has no key and none.
    let faulted = client
        .get(&url)
        .bearer_auth("k1")
        .header(FAULT_HEADER, "503")
        .send()
        .await
        .unwrap();
    assert_eq!(faulted.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(header_u64(&faulted, RATE_LIMIT_HEADER), 2);
    let unauthorized = client.get(&url).bearer_auth("nope").send().await.unwrap();
    assert_eq!(unauthorized.status(), StatusCode::UNAUTHORIZED);
    assert!(!unauthorized.headers().contains_key(RATE_LIMIT_HEADER));
}

#[tokio::test]
async fn no_rate_limit_headers_unless_asked() {
    let (server, _log) = app(10, Duration::from_secs(30)).await;
    let response = reqwest::Client::new()
        .get(format!("{}/things", server.url()))
        .bearer_auth("k1")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(!response.headers().contains_key(RATE_LIMIT_HEADER));
}
