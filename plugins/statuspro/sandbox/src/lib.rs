//! A faithful local stand-in for the StatusPro REST API.
//!
//! The sandbox is a real HTTP server on loopback serving the nine StatusPro
//! endpoints under `/api/v1` over deterministic seed data ([`seed`]). The
//! project's tests, its demo and its benchmarks point the StatusPro tools at
//! it instead of `https://app.orderstatuspro.com/api/v1`.
//!
//! # How tests use it
//!
//! ```
//! use statuspro_sandbox::{SandboxConfig, seed};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> anyhow::Result<()> {
//! let sandbox = statuspro_sandbox::start(SandboxConfig::default()).await?;
//! let id = seed::order_without_status();
//! let order: serde_json::Value = reqwest::Client::new()
//!     .get(format!("{}/orders/{id}", sandbox.base_url()))
//!     .bearer_auth(sandbox.api_key())
//!     .send()
//!     .await?
//!     .json()
//!     .await?;
//! assert_eq!(order["status"]["is_set"], false);
//! // State and traffic are readable directly.
//! assert!(sandbox.order(id).is_some());
//! assert_eq!(sandbox.requests()[0].path, format!("/api/v1/orders/{id}"));
//! # Ok(())
//! # }
//! ```
//!
//! Each [`start`] gives an independent server on a free port with fresh seed
//! data, so tests can mutate freely. Bulk jobs are applied after the 202;
//! [`Sandbox::wait_for_bulk_jobs`] waits for them and
//! [`Sandbox::pause_bulk_jobs`] holds them, with no sleeping.
//!
//! # Behaviour (contract section 4)
//!
//! * Every request is logged ([`Sandbox::requests`]), then authenticated:
//!   a missing or wrong bearer key gets 401 `{"message":"Unauthenticated."}`.
//! * `X-Sandbox-Fault: 500|503|429|timeout` forces that outcome (see
//!   [`sandbox_kit::fault`]); faulted requests do not count against limits.
//! * Rate limits: a sliding window ([`SandboxConfig::rate_window`]) per key,
//!   [`SandboxConfig::rate_limit_per_minute`] on every request plus
//!   [`SandboxConfig::bulk_rate_limit_per_minute`] on `POST /orders/bulk-status`;
//!   over a limit, 429 `{"message":"Too Many Requests"}` with `Retry-After`.
//! * Validation errors are 422 `{"message":"The given data was invalid.",
//!   "errors":{field:[...]}}` in Laravel's wording (`"The per page field must
//!   be between 1 and 100."`); a status that is not viable for the order reads
//!   `"The status st000004 (Delivered) is not a viable next status for this
//!   order."` under `status_code`. A malformed JSON body is 400.
//! * Unknown or non-integer order ids are 404 `{"message":"Order not found."}`,
//!   checked before the body is validated.
//! * A status change sets `is_set`, `set_at = now`, appends a `status_change`
//!   history item with the comment and its visibility, and a `mail_log`
//!   (`delivery_status: "queued"`) when `email_customer` is true. A comment
//!   appends `comment_added`; a due date appends `due_date_set` or
//!   `due_date_cleared`.
//!
//! # Modules
//!
//! | module | job |
//! |---|---|
//! | [`model`] | wire shapes (contract section 3) |
//! | [`seed`] | the deterministic seed and helpers to pick orders by property |
//! | `api` | routes and handlers |
//! | `input` | Laravel-style query and JSON reading |
//! | `store` | order state, rendering, filtering, mutations |
//! | `bulk` | the bulk-status queue and its worker |
//!
//! Errors: handlers use a small `ApiError` enum that maps straight onto a
//! status and body; setup code returns [`anyhow::Result`] with context.
#![deny(missing_docs)]

mod api;
mod bulk;
mod clock;
mod error;
mod input;
pub mod model;
pub mod seed;
mod store;

use std::{net::SocketAddr, sync::Arc, time::Duration};

use anyhow::Context as _;
use axum::http::Method;
use sandbox_kit::{Gate, LoggedRequest, MessageStyle, RateLimiter, RequestLog, ServerHandle};

pub use api::API_PREFIX;
pub use error::{ORDER_NOT_FOUND, VALIDATION_MESSAGE};
pub use sandbox_kit::{ApiSandbox, FAULT_HEADER, Fault};

use crate::{
    api::AppState,
    bulk::{BulkControl, BulkQueue},
    model::Order,
    store::Store,
};

/// The API key a default-configured sandbox accepts.
pub const DEFAULT_API_KEY: &str = "sandbox-key";

/// Rate-limit bucket every request counts against.
pub const DEFAULT_BUCKET: &str = "default";

/// Rate-limit bucket `POST /orders/bulk-status` also counts against.
pub const BULK_BUCKET: &str = "bulk";

/// How a sandbox behaves; [`Default`] matches the real API's limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxConfig {
    /// The bearer key accepted. Default `"sandbox-key"`.
    pub api_key: String,
    /// Further keys accepted beside `api_key`, as during a key rotation
    /// (the request log records which key each request carried). Default
    /// none.
    pub also_accepted_keys: Vec<String>,
    /// Requests per key per window on every endpoint. Default 60.
    pub rate_limit_per_minute: u32,
    /// Additional limit on `POST /orders/bulk-status` per key per window. Default 5.
    pub bulk_rate_limit_per_minute: u32,
    /// Length of the sliding rate-limit window. Default 60 s.
    pub rate_window: Duration,
    /// Pause before each bulk job is applied. Default 0.
    pub bulk_apply_delay: Duration,
    /// How long an `X-Sandbox-Fault: timeout` request is held before its 504. Default 30 s.
    pub fault_timeout: Duration,
    /// Port on 127.0.0.1; 0 (the default) picks a free one.
    pub port: u16,
    /// Orders added after the seeded ones, for tests of a large shop:
    /// copies of the seeded orders, in turn, with new ids and numbers.
    /// Default 0.
    pub extra_orders: usize,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            api_key: DEFAULT_API_KEY.to_owned(),
            also_accepted_keys: Vec::new(),
            rate_limit_per_minute: 60,
            bulk_rate_limit_per_minute: 5,
            rate_window: Duration::from_secs(60),
            bulk_apply_delay: Duration::ZERO,
            fault_timeout: sandbox_kit::DEFAULT_FAULT_TIMEOUT,
            port: 0,
            extra_orders: 0,
        }
    }
}

/// A running sandbox. Dropping it shuts the server down.
#[derive(Debug)]
pub struct Sandbox {
    /// The background server.
    server: ServerHandle,
    /// The orders, shared with the handlers and the bulk worker.
    store: Arc<Store>,
    /// Every request received, shared with the gate.
    log: RequestLog,
    /// The limiter, so tests can reset it.
    limiter: Arc<RateLimiter>,
    /// Pending count and pause switch of the bulk queue.
    bulk: Arc<BulkControl>,
    /// The configuration it was started with.
    config: SandboxConfig,
}

/// Starts a sandbox with fresh seed data on `127.0.0.1:config.port`.
///
/// Must be called within a tokio runtime; the server and the bulk worker run
/// on it.
pub async fn start(config: SandboxConfig) -> anyhow::Result<Sandbox> {
    let store = Arc::new(Store::seeded_with(config.extra_orders));
    let queue = BulkQueue::spawn(Arc::clone(&store), config.bulk_apply_delay);
    let bulk = queue.control();
    let limiter = Arc::new(
        RateLimiter::new(config.rate_window)
            .with_bucket(DEFAULT_BUCKET, config.rate_limit_per_minute)
            .with_bucket(BULK_BUCKET, config.bulk_rate_limit_per_minute),
    );
    let log = RequestLog::new();
    let gate = Gate::new(config.api_key.clone(), MessageStyle)
        .also_accepting(config.also_accepted_keys.clone())
        .with_rate_limiter(Arc::clone(&limiter), classify_buckets)
        .with_fault_timeout(config.fault_timeout)
        .with_request_log(log.clone());
    let router = gate.wrap(api::router(AppState {
        store: Arc::clone(&store),
        bulk: queue,
    }));
    let server = sandbox_kit::serve(router, config.port)
        .await
        .with_context(|| format!("starting the StatusPro sandbox on port {}", config.port))?;
    tracing::info!(base_url = %format!("{}{API_PREFIX}", server.url()), "StatusPro sandbox started");
    Ok(Sandbox {
        server,
        store,
        log,
        limiter,
        bulk,
        config,
    })
}

/// Every request counts against [`DEFAULT_BUCKET`]; the bulk endpoint also
/// against [`BULK_BUCKET`].
fn classify_buckets(method: &Method, path: &str) -> Vec<String> {
    let mut buckets = vec![DEFAULT_BUCKET.to_owned()];
    let bulk_path = format!("{API_PREFIX}/orders/bulk-status");
    if method == Method::POST && path.trim_end_matches('/') == bulk_path {
        buckets.push(BULK_BUCKET.to_owned());
    }
    buckets
}

impl Sandbox {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// The API base URL, `http://127.0.0.1:PORT/api/v1` (no trailing slash).
    pub fn base_url(&self) -> String {
        format!("{}{API_PREFIX}", self.server.url())
    }

    /// The accepted bearer key.
    pub fn api_key(&self) -> &str {
        &self.config.api_key
    }

    /// The configuration the sandbox was started with.
    pub fn config(&self) -> &SandboxConfig {
        &self.config
    }

    /// Every request received so far (since the last clear), oldest first.
    pub fn requests(&self) -> Vec<LoggedRequest> {
        self.log.entries()
    }

    /// Requests other than GET/HEAD/OPTIONS received so far.
    pub fn mutations(&self) -> Vec<LoggedRequest> {
        self.log.mutations()
    }

    /// Empties the request log.
    pub fn clear_requests(&self) {
        self.log.clear();
    }

    /// The request log itself, e.g. to wait for arrivals with
    /// [`RequestLog::wait_for_received`].
    pub fn request_log(&self) -> &RequestLog {
        &self.log
    }

    /// A snapshot of the order with `id`, exactly as `GET /orders/{id}` would return it.
    pub fn order(&self, id: i64) -> Option<Order> {
        self.store.order(id)
    }

    /// Snapshots of every order, oldest id first.
    pub fn orders(&self) -> Vec<Order> {
        self.store.orders()
    }

    /// Number of bulk jobs answered with 202 but not yet applied.
    pub fn pending_bulk_jobs(&self) -> usize {
        self.bulk.pending()
    }

    /// Resolves once every bulk job accepted so far has been applied.
    ///
    /// Never resolves while the queue is paused with jobs pending.
    pub async fn wait_for_bulk_jobs(&self) {
        self.bulk.wait_idle().await;
    }

    /// Holds bulk jobs: they are accepted (202) but not applied until
    /// [`Self::resume_bulk_jobs`].
    pub fn pause_bulk_jobs(&self) {
        self.bulk.set_paused(true);
    }

    /// Lets held and future bulk jobs be applied.
    pub fn resume_bulk_jobs(&self) {
        self.bulk.set_paused(false);
    }

    /// Forgets all rate-limit history, as if no request had been made.
    pub fn reset_rate_limits(&self) {
        self.limiter.reset();
    }

    /// Stops the server and waits for requests in flight to finish.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        self.server
            .shutdown()
            .await
            .context("shutting down the StatusPro sandbox")
    }
}

/// How the sandbox binary, the test harness and toolhost's end-to-end tests
/// run this sandbox (over the methods above; the plugin block is the one
/// [`ApiSandbox::toolhost_config`] writes for the StatusPro tools).
impl ApiSandbox for Sandbox {
    type Config = SandboxConfig;

    const API: &'static str = "StatusPro";
    const API_PREFIX: &'static str = API_PREFIX;
    const PLUGIN: &'static str = "statuspro";
    const PLUGIN_FILES: &'static str = "statuspro_*.wasm";
    const KEY_ENV: &'static str = "STATUSPRO_API_KEY";

    async fn start(config: SandboxConfig) -> anyhow::Result<Sandbox> {
        start(config).await
    }

    fn addr(&self) -> SocketAddr {
        Sandbox::addr(self)
    }

    fn api_key(&self) -> &str {
        Sandbox::api_key(self)
    }

    fn request_log(&self) -> &RequestLog {
        Sandbox::request_log(self)
    }

    async fn shutdown(self) -> anyhow::Result<()> {
        Sandbox::shutdown(self).await
    }
}
