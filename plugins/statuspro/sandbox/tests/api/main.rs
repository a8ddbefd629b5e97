//! End-to-end tests of the StatusPro sandbox: each test starts its own sandbox
//! on a free loopback port and talks real HTTP to it, one module per topic of
//! the contract's section 4.

mod auth;
mod bulk;
mod faults;
mod list;
mod lookup;
mod mutations;
mod not_found;
mod rate_limit;
mod request_log;
mod util;
mod validation;
mod viable;
