//! End-to-end tests of the Katana sandbox: each test starts its own sandbox
//! on a free loopback port and talks real HTTP to it, one module per topic of
//! the contract's sections 1–3.

mod auth;
mod errors;
mod faults;
mod fulfillments;
mod lists;
mod manufacturing;
mod purchase_orders;
mod rate_limit;
mod receiving;
mod request_log;
mod util;
