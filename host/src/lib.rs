//! toolhost: an MCP gateway that serves WebAssembly tool components.
//!
//! Three crates (ADR 0030): this one, the only one that knows MCP and serves
//! HTTP; `toolhost-runtime` (`crates/runtime`), which loads components and
//! runs calls; `toolhost-oci` (`crates/oci`), which distributes them. Both
//! are re-exported here, each runtime module under its own name. A request
//! travels through these modules, top to bottom:
//!
//! | module         | job                                                             |
//! |----------------|-----------------------------------------------------------------|
//! | [`serve`]      | the composition root: builds the Gateway, starts reloads, picks a transport |
//! | [`transport`]  | stdio: an answer to every line, one writer; HTTP: `/mcp`, bounded |
//! | [`auth`]       | HTTP callers: bearer tokens → `Identity`; which plugins it sees   |
//! | [`server`]     | the MCP handler (rmcp): one request context, access, audit, every method |
//! | [`confirmation`] | answers a call's `confirm` questions for each kind of client   |
//! | [`replay`]     | which sealed confirmation states were spent: in process or Redis |
//! | [`rules`]      | `[[policy.rules]]`: CEL conditions, hide / allow / deny / confirm / approve / limit |
//! | [`approvals`]  | a second person's yes to one call: the records, kept in process or Redis |
//! | [`reload`]     | initial load, hot reload of the directory, config reload → the registry |
//! | [`registry`], [`plugin`] | the runtime's, carrying toolhost's [`config::Config`]  |
//! | [`config`]     | `toolhost.toml`: keys, raw, resolved (`[auth]` and `[[access]]` too) |
//! | [`oci`]        | `push`, `pull`, `oci://` components: registry, signatures, store |
//! | [`lint`]       | `toolhost check`: tool design guidelines                        |
//! | [`logging`]    | the operator's log on stderr: non-blocking, escaped guest text  |
//! | [`metrics`]    | Prometheus metrics: what is counted, `GET /metrics`              |
//! | [`audit`]      | the audit trail: one JSON line per call, fail-closed for mutations |
//! | [`table`]      | aligned text tables for `toolhost list` and `toolhost audit`     |
//!
//! and, from the runtime: [`call`], [`imports`], [`hooks`], [`policy`],
//! [`offers`], [`spec`], [`settings`], [`names`], [`text`], [`engine`],
//! [`cache`], [`bindings`] (their jobs: `toolhost_runtime`'s documentation).
//!
//! Only [`transport`] (JSON-RPC framing) and [`server`] (MCP's methods) know
//! the protocol; everything below them deals in tools, arguments and
//! outcomes. The runtime never names `audit` or `metrics`: they implement
//! [`hooks::CallHooks`] from above. No two modules of a crate name each
//! other in a cycle (`cargo xtask imports`), and no crate below this one
//! depends on MCP, HTTP serving, Redis or metrics (`cargo xtask layers`).

#![deny(missing_docs)]

pub mod approvals;
pub mod audit;
pub mod auth;
pub mod catalog;
pub mod config;
pub mod confirmation;
pub mod lint;
pub mod logging;
pub mod metrics;
/// OCI distribution: the `toolhost-oci` crate (`crates/oci`).
pub use toolhost_oci as oci;
/// The runtime: the `toolhost-runtime` crate (`crates/runtime`), each module
/// under its own name.
pub use toolhost_runtime::{
    bindings, cache, call, compiler, cost, engine, hooks, imports, names, offers, policy, settings,
    spec, text,
};

/// Loading component files ([`toolhost_runtime::plugin`]), with toolhost's
/// [`config::Config`] as the configuration a [`plugin::Loader`] carries.
pub mod plugin {
    pub use toolhost_runtime::plugin::*;

    /// The loader toolhost builds: it carries the whole [`crate::config::Config`].
    pub type Loader = toolhost_runtime::plugin::Loader<crate::config::Config>;
}

/// Which tool lives in which plugin ([`toolhost_runtime::registry`]), with
/// toolhost's [`config::Config`] as the configuration a
/// [`registry::Registry`] was built for.
pub mod registry {
    pub use toolhost_runtime::registry::*;

    /// The registry toolhost serves: swapped whole, with the
    /// [`crate::config::Config`] it was built for.
    pub type Registry = toolhost_runtime::registry::Registry<crate::config::Config>;
}
pub mod reload;
pub mod replay;
pub mod rules;
pub mod scaffold;
pub mod serve;
pub mod server;
pub mod table;
pub mod telemetry;
pub mod transport;
pub mod wit;
