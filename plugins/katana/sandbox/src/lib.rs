//! A faithful local stand-in for the Katana manufacturing ERP API.
//!
//! The sandbox is a real HTTP server on loopback serving the Katana endpoints
//! the seven Katana tools call (contract section 2, E1–E9, plus suppliers and
//! locations) under `/v1`, over a deterministic knife workshop ([`seed`]). The
//! project's tests, its demo and its benchmarks point the Katana tools at it
//! instead of `https://api.katanamrp.com/v1`.
//!
//! # How tests use it
//!
//! ```
//! use katana_sandbox::{SandboxConfig, seed};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> anyhow::Result<()> {
//! let sandbox = katana_sandbox::start(SandboxConfig::default()).await?;
//! let client = reqwest::Client::new();
//! let order: serde_json::Value = client
//!     .get(format!("{}/purchase_orders/{}", sandbox.base_url(), seed::PO_NOT_RECEIVED))
//!     .bearer_auth(sandbox.api_key())
//!     .send()
//!     .await?
//!     .json()
//!     .await?;
//! assert_eq!(order["status"], "NOT_RECEIVED");
//!
//! // Receive 50 of the 200 steel blanks on row 7101: the row splits.
//! let response = client
//!     .post(format!("{}/purchase_order_receive", sandbox.base_url()))
//!     .bearer_auth(sandbox.api_key())
//!     .json(&serde_json::json!([{"purchase_order_row_id": seed::PO1_STEEL_ROW, "quantity": 50}]))
//!     .send()
//!     .await?;
//! assert_eq!(response.status(), 204);
//!
//! // State and traffic are readable directly.
//! let order = sandbox.purchase_order(seed::PO_NOT_RECEIVED).unwrap();
//! assert_eq!(order.purchase_order_rows.len(), 3);
//! assert_eq!(sandbox.stock(seed::STEEL_BLANK, seed::LOCATION_MAIN), 550.0);
//! assert_eq!(sandbox.mutations().len(), 1);
//! # Ok(())
//! # }
//! ```
//!
//! Each [`start`] gives an independent server on a free port with fresh seed
//! data, so tests can mutate freely.
//!
//! # Behaviour (contract section 3)
//!
//! * Every request is logged ([`Sandbox::requests`]), then authenticated:
//!   a missing or wrong bearer key gets 401
//!   `{"statusCode":401,"name":"UnauthorizedError","message":"Unauthorized"}`
//!   before anything else, even before an unknown route is noticed.
//! * `X-Sandbox-Fault: 500|503|429|timeout` forces that outcome (see
//!   [`sandbox_kit::fault`]); faulted requests do not count against the limit.
//! * Rate limit: [`SandboxConfig::rate_limit`] requests per key per sliding
//!   [`SandboxConfig::rate_window`] (60 per 60 s by default). Every response
//!   to an authenticated request carries `X-Ratelimit-Limit`,
//!   `X-Ratelimit-Remaining` and `X-Ratelimit-Reset` (ms since the epoch when
//!   the next slot frees); over the limit, 429
//!   `{"statusCode":429,"name":"TooManyRequests","message":"Too Many Requests"}`
//!   with `Retry-After` in seconds.
//! * Errors: 404 `{"statusCode":404,"name":"NotFoundError","message":"Not
//!   found"}` for unknown ids and routes; 400 `{"statusCode":400,"name":
//!   "BadRequest","message":"Bad Request"}` for a body that is not JSON; 422
//!   `{"statusCode":422,"name":"UnprocessableEntityError","message":...,
//!   "code":"VALIDATION_FAILED","details":[{"path":".order_no","code":
//!   "required","message":...}]}` for a missing, unknown or mistyped field, a
//!   bad enum or currency, a quantity <= 0 (message [`VALIDATION_MESSAGE`]),
//!   and for conflicts with the data: an unknown supplier, location, variant
//!   or row, a duplicate `order_no`, a location that does not allow the
//!   operation, a row already received, more than is left (message: the first
//!   problem's own sentence). See [`error`] for the names.
//! * Lists (`/variants`, `/suppliers`, `/locations`, and `/purchase_orders`,
//!   `/manufacturing_orders`, `/sales_orders` by `ids` or exact `order_no`)
//!   are newest first, take
//!   `page` (default 1) and `limit` (default 50, clamped to 250), answer
//!   `{"data":[...]}` (empty past the end) with `X-Pagination` (all values
//!   strings); `ids` and `sku` take repeated keys or commas.
//! * Purchase orders are created NOT_RECEIVED, in the supplier's currency
//!   unless given, with `total = Σ quantity × price_per_unit`. Receiving a
//!   row's whole quantity sets its `received_date`; receiving part lowers the
//!   row to the rest (same id) and appends a received row with the part. The
//!   order's status follows its rows: none received NOT_RECEIVED, some
//!   PARTIALLY_RECEIVED, all RECEIVED. Stock grows by quantity × conversion
//!   rate. A row already received or asked for more than it holds is a 422
//!   and nothing of the request is applied.
//! * Manufacturing orders are created NOT_STARTED. `{"status":"DONE"}` sets
//!   `done_date` and `actual_quantity` (planned if null), adds the output to
//!   stock and consumes the recipe at the order's location. A DONE order
//!   refuses frozen fields and any other status (422); DONE again is a 200.
//! * Fulfillments over what is left of a row are 422. The sales order becomes
//!   DELIVERED (or PACKED) when every row is covered, PARTIALLY_DELIVERED (or
//!   PARTIALLY_PACKED) otherwise. DELIVERED lowers stock.
//!
//! # Modules
//!
//! | module | job |
//! |---|---|
//! | [`model`] | wire shapes (contract section 2) |
//! | [`seed`] | the deterministic seed, its constants and helpers |
//! | [`error`] | Katana's error bodies ([`KatanaStyle`]) |
//! | `api` | routes and handlers, one file per area |
//! | `input` | query strings, pages, and body schema checks |
//! | `store` | state, stock and every rule that depends on them |
//! | `clock` | Katana's datetime format |
//!
//! Errors: handlers use a small `ApiError` enum that maps straight onto a
//! status and body; setup code returns [`anyhow::Result`] with context.
#![deny(missing_docs)]

mod api;
mod clock;
pub mod error;
mod input;
pub mod model;
pub mod seed;
mod store;

use std::{collections::BTreeMap, net::SocketAddr, sync::Arc, time::Duration};

use anyhow::Context as _;
use sandbox_kit::{Gate, LoggedRequest, RateLimiter, RequestLog, ServerHandle};

pub use api::API_PREFIX;
pub use error::{KatanaStyle, NOT_FOUND_MESSAGE, VALIDATION_CODE, VALIDATION_MESSAGE};
pub use input::{DEFAULT_LIMIT, MAX_LIMIT, PAGINATION_HEADER};
pub use sandbox_kit::{
    ApiSandbox, FAULT_HEADER, Fault, RATE_LIMIT_HEADER, RATE_REMAINING_HEADER, RATE_RESET_HEADER,
};

use crate::{
    api::AppState,
    model::{ManufacturingOrder, PurchaseOrder, SalesOrder, SalesOrderFulfillment, Variant},
    store::Store,
};

/// The API key a default-configured sandbox accepts.
pub const DEFAULT_API_KEY: &str = "katana-sandbox-key";

/// The one rate-limit bucket: every request counts against it.
pub const DEFAULT_BUCKET: &str = "default";

/// How a sandbox behaves; [`Default`] matches the real API's limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxConfig {
    /// The one bearer key accepted. Default [`DEFAULT_API_KEY`].
    pub api_key: String,
    /// Requests per key per window. Default 60.
    pub rate_limit: u32,
    /// Length of the sliding rate-limit window. Default 60 s.
    pub rate_window: Duration,
    /// How long an `X-Sandbox-Fault: timeout` request is held before its 504. Default 30 s.
    pub fault_timeout: Duration,
    /// Port on 127.0.0.1; 0 (the default) picks a free one.
    pub port: u16,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            api_key: DEFAULT_API_KEY.to_owned(),
            rate_limit: 60,
            rate_window: Duration::from_secs(60),
            fault_timeout: sandbox_kit::DEFAULT_FAULT_TIMEOUT,
            port: 0,
        }
    }
}

/// A running sandbox. Dropping it shuts the server down.
#[derive(Debug)]
pub struct Sandbox {
    /// The background server.
    server: ServerHandle,
    /// Records and stock, shared with the handlers.
    store: Arc<Store>,
    /// Every request received, shared with the gate.
    log: RequestLog,
    /// The limiter, so tests can reset it.
    limiter: Arc<RateLimiter>,
    /// The configuration it was started with.
    config: SandboxConfig,
}

/// Starts a sandbox with fresh seed data on `127.0.0.1:config.port`.
///
/// Must be called within a tokio runtime; the server runs on it.
pub async fn start(config: SandboxConfig) -> anyhow::Result<Sandbox> {
    let store = Arc::new(Store::seeded());
    let limiter = Arc::new(
        RateLimiter::new(config.rate_window).with_bucket(DEFAULT_BUCKET, config.rate_limit),
    );
    let log = RequestLog::new();
    let gate = Gate::new(config.api_key.clone(), KatanaStyle)
        .with_rate_limiter(Arc::clone(&limiter), |_, _| vec![DEFAULT_BUCKET.to_owned()])
        .with_rate_limit_headers(DEFAULT_BUCKET)
        .with_fault_timeout(config.fault_timeout)
        .with_request_log(log.clone());
    let router = gate.wrap(api::router(AppState {
        store: Arc::clone(&store),
    }));
    let server = sandbox_kit::serve(router, config.port)
        .await
        .with_context(|| format!("starting the Katana sandbox on port {}", config.port))?;
    tracing::info!(base_url = %format!("{}{API_PREFIX}", server.url()), "Katana sandbox started");
    Ok(Sandbox {
        server,
        store,
        log,
        limiter,
        config,
    })
}

impl Sandbox {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// The API base URL, `http://127.0.0.1:PORT/v1` (no trailing slash).
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

    /// Forgets all rate-limit history, as if no request had been made.
    pub fn reset_rate_limits(&self) {
        self.limiter.reset();
    }

    /// The stock of `variant_id` at `location_id` now (0 when none was ever kept).
    pub fn stock(&self, variant_id: i64, location_id: i64) -> f64 {
        self.store.lock().stock(variant_id, location_id)
    }

    /// Every stock level kept, by `(variant id, location id)`.
    pub fn stock_levels(&self) -> BTreeMap<(i64, i64), f64> {
        self.store.lock().stock_levels()
    }

    /// The variant with `id`, with its `product_or_material`.
    pub fn variant(&self, id: i64) -> Option<Variant> {
        self.store.lock().variant(id)
    }

    /// A snapshot of purchase order `id`, exactly as `GET /purchase_orders/{id}` returns it.
    pub fn purchase_order(&self, id: i64) -> Option<PurchaseOrder> {
        self.store.lock().purchase_order(id)
    }

    /// Every purchase order, oldest first.
    pub fn purchase_orders(&self) -> Vec<PurchaseOrder> {
        self.store.lock().purchase_orders()
    }

    /// A snapshot of manufacturing order `id`, as `GET /manufacturing_orders/{id}` returns it.
    pub fn manufacturing_order(&self, id: i64) -> Option<ManufacturingOrder> {
        self.store.lock().manufacturing_order(id)
    }

    /// Every manufacturing order, oldest first.
    pub fn manufacturing_orders(&self) -> Vec<ManufacturingOrder> {
        self.store.lock().manufacturing_orders()
    }

    /// A snapshot of sales order `id`, as `GET /sales_orders/{id}` returns it.
    pub fn sales_order(&self, id: i64) -> Option<SalesOrder> {
        self.store.lock().sales_order(id)
    }

    /// Every sales order, oldest first.
    pub fn sales_orders(&self) -> Vec<SalesOrder> {
        self.store.lock().sales_orders()
    }

    /// Every fulfillment, seeded ones included, oldest first.
    pub fn fulfillments(&self) -> Vec<SalesOrderFulfillment> {
        self.store.lock().fulfillments()
    }

    /// Stops the server and waits for requests in flight to finish.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        self.server
            .shutdown()
            .await
            .context("shutting down the Katana sandbox")
    }
}

/// How the sandbox binary, the test harness and toolhost's end-to-end tests
/// run this sandbox (over the methods above; the plugin block is the one
/// [`ApiSandbox::toolhost_config`] writes for the Katana tools).
impl ApiSandbox for Sandbox {
    type Config = SandboxConfig;

    const API: &'static str = "Katana";
    const API_PREFIX: &'static str = API_PREFIX;
    const PLUGIN: &'static str = "katana";
    const PLUGIN_FILES: &'static str = "katana.wasm";
    const KEY_ENV: &'static str = "KATANA_API_KEY";

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
