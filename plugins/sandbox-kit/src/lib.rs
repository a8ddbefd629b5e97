//! Shared pieces of toolhost's upstream-API sandboxes.
//!
//! A sandbox is a small, real HTTP server on loopback that stands in for an
//! upstream REST API (StatusPro, Katana) in tests, the demo and
//! benchmarks. Each sandbox owns its routes, data and validation; this crate
//! holds what every sandbox needs around them:
//!
//! | module | job |
//! |---|---|
//! | [`auth`] | `Authorization: Bearer <key>` check |
//! | [`rate_limit`] | sliding-window limiter keyed by API key, with named buckets |
//! | [`fault`] | `X-Sandbox-Fault: 500\|503\|429\|timeout` parsing |
//! | [`request_log`] | thread-safe, clearable log of every request received |
//! | [`error_style`] | pluggable error-body shapes (`{"message"}` vs `{"statusCode","name","message"}`) |
//! | [`gate`] | one middleware running log → auth → body cap → fault → rate limit, optionally adding `X-Ratelimit-*` headers |
//! | [`server`] | bind `127.0.0.1:port` (port 0 allowed) and serve in the background; wait for a stop signal |
//! | [`toolhost_config`] | the `toolhost.toml` block that serves a plugin set against a sandbox, and the entry that forces a fault |
//! | [`clock`] | the fixed instant seed data counts from, and the real clock for new records |
//! | [`sandbox`] | [`ApiSandbox`]: what runs and tests a sandbox, whichever API it stands in for |
//! | [`cli`] | a sandbox binary's life: log, start, announce, serve until stopped |
//! | `testing` | (feature `testing`) the sandboxes' test harness and their binaries' check |
//!
//! Errors: each fallible piece has its own small `thiserror` enum or struct
//! carrying the context a test failure needs (the address that failed to bind,
//! the bucket that was full, the header value that named no fault). A whole
//! sandbox starts and stops with [`anyhow::Result`], as the sandboxes' own
//! setup code does.
//!
//! # Example
//!
//! A gated router, served on a free port, answering a test's request:
//!
//! ```
//! use std::{sync::Arc, time::Duration};
//! use axum::{Router, routing::get};
//! use sandbox_kit::{Gate, MessageStyle, RateLimiter, serve};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let limiter = Arc::new(RateLimiter::new(Duration::from_secs(60)).with_bucket("default", 60));
//! let gate = Gate::new("secret", MessageStyle)
//!     .with_rate_limiter(limiter, |_, _| vec!["default".to_owned()]);
//! let log = gate.request_log().clone();
//! let router = gate.wrap(Router::new().route("/ping", get(|| async { "pong" })));
//! let server = serve(router, 0).await.unwrap();
//!
//! let response = reqwest::Client::new()
//!     .get(format!("{}/ping", server.url()))
//!     .bearer_auth("secret")
//!     .send()
//!     .await
//!     .unwrap();
//! assert_eq!(response.text().await.unwrap(), "pong");
//! assert_eq!(log.entries()[0].path, "/ping");
//! # }
//! ```
#![deny(missing_docs)]

pub mod auth;
pub mod cli;
pub mod clock;
pub mod error_style;
pub mod fault;
pub mod gate;
pub mod rate_limit;
pub mod request_log;
pub mod sandbox;
pub mod server;
#[cfg(feature = "testing")]
pub mod testing;
pub mod toolhost_config;

pub use auth::{AuthError, check_bearer};
pub use error_style::{ErrorStyle, MessageStyle, NamedStyle};
pub use fault::{FAULT_HEADER, FAULT_RETRY_AFTER_SECS, Fault, UnknownFault};
pub use gate::{
    BucketClassifier, DEFAULT_FAULT_TIMEOUT, DEFAULT_MAX_BODY_BYTES, Gate, RATE_LIMIT_HEADER,
    RATE_REMAINING_HEADER, RATE_RESET_HEADER,
};
pub use rate_limit::{BucketStatus, RateLimited, RateLimiter};
pub use request_log::{LoggedRequest, RequestLog};
pub use sandbox::ApiSandbox;
pub use server::{ServeError, ServerHandle, serve, wait_for_stop_signal};
pub use toolhost_config::{ToolhostBlock, fault_credentials};
