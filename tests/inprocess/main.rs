//! In-process tests: the Gateway built by the library's composition root
//! (`toolhost::serve::start`) from a config file and a plugin directory,
//! real components in real sandboxes, rmcp's client over an in-memory
//! duplex through stdio's line framing, in both protocol eras. No process
//! is started: what needs one (framing of raw bytes, signals, HTTP, auth,
//! the log, exit status, CLI commands) is in `tests/e2e` (ADR 0029). Run
//! `cargo xtask test` (it builds the components first).

mod support;

mod bounds;
mod config_reload;
mod confirmation;
mod foundation;
mod hot_reload;
mod loading;
mod network;
mod resources;
mod sandboxing;
mod second_language;
