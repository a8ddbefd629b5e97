//! The `toolhost.toml` block that serves a plugin set against a sandbox.
//!
//! The block is the one an operator writes for the real API, with the
//! sandbox's address in place of the API's: the base URL in the plugin's
//! `config`, the sandbox's loopback port allowed (loopback is refused unless
//! an entry names it), and the API key injected by the host from an
//! environment variable as a bearer token for that address and port (plain
//! http is allowed for credentials to a loopback address only), so the
//! components never see it.
//! The demo, the end-to-end tests and the benchmarks all use it.
//!
//! [`fault_credentials`] is the entry the end-to-end tests add to force an
//! upstream failure the way an operator's configuration would add a header.

/// One `[plugins.NAME]` block pointed at a sandbox.
#[derive(Debug, Clone)]
pub struct ToolhostBlock<'a> {
    /// The block's name, e.g. `statuspro`.
    pub name: &'a str,
    /// The component files it covers, as globs, e.g. `statuspro_*.wasm`.
    pub files: &'a str,
    /// The value of the plugin's `base_url` config key.
    pub base_url: &'a str,
    /// The sandbox's loopback port.
    pub port: u16,
    /// The HTTP methods the components may send.
    pub methods: &'a [&'a str],
    /// The environment variable the host reads the API key from.
    pub key_env: &'a str,
    /// Further `config` keys beside `base_url`, as `(key, value)`.
    pub settings: &'a [(&'a str, &'a str)],
}

impl ToolhostBlock<'_> {
    /// The block as TOML text, ending with a newline.
    pub fn to_toml(&self) -> String {
        let ToolhostBlock {
            name,
            files,
            base_url,
            port,
            key_env,
            ..
        } = self;
        let settings: String = self
            .settings
            .iter()
            .map(|(key, value)| format!(", {key} = \"{value}\""))
            .collect();
        let methods = self
            .methods
            .iter()
            .map(|m| format!("\"{m}\""))
            .collect::<Vec<_>>()
            .join(", ");
        format!(
            r#"[plugins.{name}]
files = ["{files}"]
config = {{ base_url = "{base_url}"{settings} }}

[[plugins.{name}.allow]]
host = "127.0.0.1"
port = {port}
methods = [{methods}]

[[plugins.{name}.credentials]]
host = "127.0.0.1"
port = {port}
header = "Authorization"
value = "Bearer ${{{key_env}}}"
"#
        )
    }
}

/// A `[[plugins.PLUGIN.credentials]]` entry that makes the host add
/// `X-Sandbox-Fault: FAULT` ([`crate::FAULT_HEADER`]) to every request the
/// plugin sends to a loopback port, as it would add an operator's header:
/// how an end-to-end test makes the sandbox answer with `fault` (`500`,
/// `503`, `429`, `timeout`). Starts with a newline, so it can follow any
/// block.
pub fn fault_credentials(plugin: &str, fault: &str) -> String {
    format!(
        "\n[[plugins.{plugin}.credentials]]\nhost = \"127.0.0.1\"\nport = \"*\"\n\
         header = \"X-Sandbox-Fault\"\nvalue = \"{fault}\"\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_allows_the_port_and_injects_the_key() {
        let toml = ToolhostBlock {
            name: "shop",
            files: "shop_*.wasm",
            base_url: "http://127.0.0.1:4000/v1",
            port: 4000,
            methods: &["GET", "POST"],
            key_env: "SHOP_API_KEY",
            settings: &[("retry_deadline_ms", "1500")],
        }
        .to_toml();
        assert!(toml.starts_with("[plugins.shop]\nfiles = [\"shop_*.wasm\"]\n"));
        assert!(toml.contains(
            "config = { base_url = \"http://127.0.0.1:4000/v1\", retry_deadline_ms = \"1500\" }"
        ));
        assert!(toml.contains("port = 4000\nmethods = [\"GET\", \"POST\"]\n"));
        assert!(toml.contains("host = \"127.0.0.1\"\nport = 4000\nheader = \"Authorization\"\n"));
        assert!(toml.contains("value = \"Bearer ${SHOP_API_KEY}\"\n"));
    }

    #[test]
    fn the_fault_entry_adds_the_header_for_every_loopback_port() {
        assert_eq!(
            fault_credentials("shop", "503"),
            "\n[[plugins.shop.credentials]]\nhost = \"127.0.0.1\"\nport = \"*\"\n\
             header = \"X-Sandbox-Fault\"\nvalue = \"503\"\n"
        );
    }
}
