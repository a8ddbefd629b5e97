//! End-to-end tests: the real `toolhost` binary, real components, rmcp's
//! client over stdio, in both protocol eras: what needs the process
//! (framing, signals, HTTP, auth, the log, exit status, CLI commands).
//! What needs no process is in `tests/inprocess` (ADR 0029). Run
//! `cargo xtask test` (it builds the components first).

#[path = "../support/mod.rs"]
mod support;

mod access;
mod approvals;
mod audit;
mod auth;
mod bounds;
mod cache;
mod catalogs;
mod commands;
mod compiling;
mod config_ranges;
mod config_reload;
mod confirmation;
mod contract_0_3;
mod demo;
mod deploy;
mod docs;
mod foundation;
mod hot_reload;
mod http;
mod http_bounds;
mod identities;
mod javascript;
mod katana;
mod loading;
mod logging;
mod metrics;
mod oci;
mod policy;
mod protocol;
mod replicas;
mod resources;
mod sandboxing;
mod second_language;
mod startup;
mod statuspro;
mod stdio_streams;
mod traces;
mod wasi_http;
