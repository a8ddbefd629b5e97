//! Host-side bindings generated from `wit/plugin.wit`.
//!
//! Every import is `async` (the host awaits HTTP and the user) and
//! `trappable` (the host can end a call that breaks a rule, such as asking
//! for too many confirmations). Exports are `async` so a call can be
//! interrupted at epoch boundaries and dropped on cancellation.

#![allow(missing_docs)] // Generated code; the WIT file carries the documentation.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "plugin",
    imports: { default: async | trappable },
    exports: { default: async },
});

pub use self::toolhost::plugin::{config, confirm, http, log, progress, types};
