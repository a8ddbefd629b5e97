//! The host side of each WIT import, implemented on [`CallState`].
//!
//! | import     | module        | what it may touch                                   |
//! |------------|---------------|-----------------------------------------------------|
//! | `http`     | [`http`]      | destinations the plugin's policy allows, nothing else |
//! | `confirm`  | [`confirm`]   | the call's [`Confirmer`](crate::call::Confirmer)     |
//! | `log`      | [`log`]       | the host's log (stderr)                              |
//! | `config`   | [`config`]    | the plugin's `config` values                         |
//! | `progress` | [`progress`]  | the call's progress sink, if any                     |
//!
//! WASI is linked with an empty context: no environment, arguments, files or
//! sockets; clocks and randomness work.

pub mod config;
pub mod confirm;
pub mod http;
pub mod log;
pub mod progress;

use anyhow::Result;
use wasmtime::component::{HasSelf, Linker};

use crate::bindings::{Plugin as PluginWorld, types};
use crate::call::CallState;

impl types::Host for CallState {}

/// A linker with WASI and every toolhost import.
pub fn linker(engine: &wasmtime::Engine) -> Result<Linker<CallState>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    PluginWorld::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state)?;
    Ok(linker)
}
