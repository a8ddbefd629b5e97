//! The operator's settings for this plugin (`[plugins.NAME.config]` in
//! `toolhost.toml`). Secrets are never here: the host injects them into
//! HTTP requests instead.

use crate::bindings::toolhost::plugin0_1_0::config as wit;
use crate::tool::ToolError;

/// The value of `key`, if set.
pub fn get(key: &str) -> Option<String> {
    wit::get(key)
}

/// The value of `key`, or a tool error telling the operator to set it.
pub fn require(key: &str) -> Result<String, ToolError> {
    get(key).ok_or_else(|| {
        ToolError::internal(format!("this plugin needs the setting {key:?}")).with_hint(format!(
            "set `{key} = \"…\"` under this plugin's `config` table in toolhost.toml"
        ))
    })
}
