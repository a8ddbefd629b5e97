//! toolhost's runtime: WebAssembly tool components loaded within their
//! limits, and each call run in a fresh instance with the host's imports.
//!
//! It knows components, tools, arguments and outcomes, never MCP: no rmcp,
//! no HTTP serving, no Redis, no metrics among its dependencies (ADR 0030).
//! The `toolhost` crate builds the protocol on top of it and re-exports each
//! module under its own name (`toolhost::plugin`, `toolhost::call`, …).
//!
//! | module         | job                                                             |
//! |----------------|-----------------------------------------------------------------|
//! | [`registry`]   | which tool lives in which plugin; a snapshot the embedder swaps  |
//! | [`call`]       | one call in a fresh instance: limits, deadline, outcome; reads, gets, completions |
//! | [`imports`]    | a call's `CallState` and the host side of each WIT import        |
//! | [`hooks`]      | what a running call reports; audit and metrics implement it from above |
//! | [`policy`]     | which destinations a plugin may reach                            |
//! | [`plugin`]     | loading a component file within its limits: compile, link, list  |
//! | [`offers`]     | a 0.2 component's resources, templates, prompts; read/get/complete |
//! | [`spec`]       | a tool definition checked against MCP's rules for names and schemas |
//! | [`settings`]   | what the runtime reads of the operator's configuration           |
//! | [`names`]      | the rule for tool names: a leaf `spec` and the config use        |
//! | [`text`]       | guest and client text escaped for a log line or a table row      |
//! | [`engine`]     | the wasmtime engine, pool, epoch ticker; turns and waiting places |
//! | [`compiler`]   | the compile settings, a load's function cache; compiling in a child process |
//! | [`cache`]      | compiled components on disk: keyed, HMAC-tagged, private files   |
//! | [`bindings`]   | the host side generated from the WIT contract, 0.1.0 and 0.2.0  |
//!
//! Cross-cutting concerns enter through [`hooks::CallHooks`] (a call's
//! report) and [`imports::confirm::Confirmer`] (who answers a confirmation); the
//! runtime names no implementation of either.

#![deny(missing_docs)]

pub mod bindings;
pub mod cache;
pub mod call;
pub mod compiler;
pub mod cost;
pub mod engine;
pub mod hooks;
pub mod imports;
pub mod names;
pub mod offers;
pub mod plugin;
pub mod policy;
pub mod registry;
pub mod settings;
pub mod spec;
pub mod text;
