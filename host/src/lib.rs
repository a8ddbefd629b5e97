//! toolhost: an MCP gateway that serves WebAssembly tool components.
//!
//! A request travels through these modules, top to bottom:
//!
//! | module         | job                                                             |
//! |----------------|-----------------------------------------------------------------|
//! | [`serve`]      | the composition root: builds the Gateway, starts reloads, picks a transport |
//! | [`transport`]  | stdio: an answer to every line, one writer; HTTP: `/mcp`, bounded |
//! | [`auth`]       | HTTP callers: bearer tokens → `Identity`; which plugins it sees   |
//! | [`server`]     | the MCP handler (rmcp): one request context, access, audit, every method |
//! | [`confirmation`] | answers a call's `confirm` questions for each kind of client   |
//! | [`replay`]     | which sealed confirmation states were spent: in process or Redis |
//! | [`registry`]   | which tool lives in which plugin; swapped atomically on change   |
//! | [`reload`]     | initial load, hot reload of the directory, config reload → the registry |
//! | [`call`]       | one call in a fresh instance: limits, deadline, outcome; reads, gets, completions |
//! | [`imports`]    | a call's `CallState` and the host side of each WIT import        |
//! | [`hooks`]      | what a running call reports (audit, metrics hear it through them) |
//! | [`policy`]     | which destinations a plugin may reach                            |
//! | [`plugin`]     | loading a component file within its limits: compile, link, list  |
//! | [`offers`]     | a 0.2 component's resources, templates, prompts; read/get/complete |
//! | [`spec`]       | a tool definition checked against MCP's rules                    |
//! | [`names`]      | MCP's rule for tool names: a leaf that `spec` and `config` use    |
//! | [`engine`]     | the wasmtime engine, pool, epoch ticker; turns and waiting places |
//! | [`cache`]      | compiled components on disk: keyed, HMAC-tagged, private files   |
//! | [`config`]     | `toolhost.toml`: keys, raw, resolved (`[auth]` and `[[access]]` too) |
//! | [`oci`]        | `push`, `pull`, `oci://` components: registry, signatures, store |
//! | [`lint`]       | `toolhost check`: tool design guidelines                        |
//! | [`logging`]    | the operator's log on stderr: non-blocking, escaped guest text  |
//! | [`metrics`]    | Prometheus metrics: what is counted, `GET /metrics`              |
//! | [`audit`]      | the audit trail: one JSON line per call, fail-closed for mutations |
//! | [`table`]      | aligned text tables for `toolhost list` and `toolhost audit`     |
//!
//! Only [`transport`] (JSON-RPC framing) and [`server`] (MCP's methods) know
//! the protocol; everything below them deals in tools, arguments and
//! outcomes.
//!
//! The runtime ([`engine`], [`cache`], [`plugin`], [`call`], [`imports`],
//! [`hooks`], [`policy`], [`spec`], [`names`], [`offers`], [`registry`], [`bindings`])
//! never names `audit` or `metrics`: they implement [`hooks::CallHooks`]
//! from above. No two host modules name each other (`cargo xtask
//! imports`).

#![deny(missing_docs)]

pub mod audit;
pub mod auth;
pub mod bindings;
pub mod cache;
pub mod call;
pub mod config;
pub mod confirmation;
pub mod engine;
pub mod hooks;
pub mod imports;
pub mod lint;
pub mod logging;
pub mod metrics;
pub mod names;
/// OCI distribution: the `toolhost-oci` crate (`crates/oci`).
pub use toolhost_oci as oci;
pub mod offers;
pub mod plugin;
pub mod policy;
pub mod registry;
pub mod reload;
pub mod replay;
pub mod scaffold;
pub mod serve;
pub mod server;
pub mod spec;
pub mod table;
pub mod transport;
