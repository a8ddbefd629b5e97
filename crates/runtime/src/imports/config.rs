//! `config`: the plugin's `config` values from `toolhost.toml`. Credentials
//! live elsewhere and are never readable here.

use super::CallState;
use crate::bindings::config::Host;

impl Host for CallState {
    async fn get(&mut self, key: String) -> wasmtime::Result<Option<String>> {
        Ok(self.settings.values.get(&key).cloned())
    }
}
