//! `config`: the plugin's `config` values from `toolhost.toml`. Credentials
//! live elsewhere and are never readable here.

use crate::bindings::config::Host;
use crate::call::CallState;

impl Host for CallState {
    async fn get(&mut self, key: String) -> wasmtime::Result<Option<String>> {
        Ok(self.settings.values.get(&key).cloned())
    }
}
