//! Host-side bindings generated from the WIT contract: `wit/plugin.wit`
//! (`toolhost:plugin@0.1.0`) and `wit/0.2/plugin.wit`
//! (`toolhost:plugin@0.2.0`, ADR 0017) and `wit/0.3/plugin.wit`
//! (`toolhost:plugin@0.3.0`, ADR 0035).
//!
//! Every import is `async` (the host awaits HTTP and the user) and
//! `trappable` (the host can end a call that breaks a rule, such as asking
//! for too many confirmations). Exports are `async` so a call can be
//! interrupted at epoch boundaries and dropped on cancellation.
//!
//! 0.2.0 imports the 0.1.0 interfaces and exports 0.1.0's `tools`, so
//! [`v0_2`] reuses this module's types and host traits: one implementation
//! of each import serves both versions.

#![allow(missing_docs)] // Generated code; the WIT file carries the documentation.

wasmtime::component::bindgen!({
    path: "../../wit",
    world: "plugin",
    imports: { default: async | trappable },
    exports: { default: async },
});

pub use self::toolhost::plugin::{config, confirm, http, log, progress, types};

/// The `toolhost:plugin@0.2.0` exports: `resources`, `prompts`,
/// `completion`, and the `content` types they share.
pub mod v0_2 {
    wasmtime::component::bindgen!({
        path: ["../../wit", "../../wit/0.2"],
        world: "toolhost:plugin/plugin@0.2.0",
        imports: { default: async | trappable },
        exports: { default: async },
        with: {
            "toolhost:plugin/types@0.1.0": crate::bindings::types,
            "toolhost:plugin/http@0.1.0": crate::bindings::http,
            "toolhost:plugin/confirm@0.1.0": crate::bindings::confirm,
            "toolhost:plugin/log@0.1.0": crate::bindings::log,
            "toolhost:plugin/config@0.1.0": crate::bindings::config,
            "toolhost:plugin/progress@0.1.0": crate::bindings::progress,
            "toolhost:plugin/tools@0.1.0": crate::bindings::exports::toolhost::plugin::tools,
        },
    });

    pub use self::exports::toolhost::plugin0_2_0::{completion, prompts, resources};
    pub use self::toolhost::plugin0_2_0::content;
}

/// The `toolhost:plugin@0.3.0` parts: the `tools` and `prompts` exports
/// whose results carry content blocks, the `content` types, and the `form`
/// import. Everything else is 0.1's and 0.2's, shared through `with`.
pub mod v0_3 {
    wasmtime::component::bindgen!({
        path: ["../../wit", "../../wit/0.2", "../../wit/0.3"],
        world: "toolhost:plugin/plugin@0.3.0",
        imports: { default: async | trappable },
        exports: { default: async },
        with: {
            "toolhost:plugin/types@0.1.0": crate::bindings::types,
            "toolhost:plugin/http@0.1.0": crate::bindings::http,
            "toolhost:plugin/confirm@0.1.0": crate::bindings::confirm,
            "toolhost:plugin/log@0.1.0": crate::bindings::log,
            "toolhost:plugin/config@0.1.0": crate::bindings::config,
            "toolhost:plugin/progress@0.1.0": crate::bindings::progress,
            "toolhost:plugin/content@0.2.0": crate::bindings::v0_2::content,
            "toolhost:plugin/resources@0.2.0": crate::bindings::v0_2::resources,
            "toolhost:plugin/completion@0.2.0": crate::bindings::v0_2::completion,
        },
    });

    pub use self::exports::toolhost::plugin0_3_0::{prompts, tools};
    pub use self::toolhost::plugin0_3_0::{content, form};
}
