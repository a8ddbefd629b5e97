//! `cargo xtask demo`: toolhost for real, with no account.
//!
//! Starts the StatusPro and Katana sandboxes on loopback ports, writes a
//! `toolhost.toml` that points each plugin set at its sandbox (the API keys
//! reach the sandboxes only through the host's credential injection),
//! collects the bundled components into `target/demo/plugins/`, and runs
//! `toolhost serve` with this process's stdin and stdout, so the command can
//! be an MCP client's server command. Everything else goes to stderr.

use std::path::Path;
use std::process::Stdio;

use anyhow::{Context, Result};
// `toolhost_config`, the plugin block every sandbox writes the same way.
use statuspro_sandbox::ApiSandbox as _;

/// The components the demo serves: the nine StatusPro tools, the Katana
/// component and the Rust example.
fn is_demo_component(file: &str) -> bool {
    file.starts_with("statuspro_") || file == "katana.wasm" || file == "hello.wasm"
}

/// Serves the components in `components` against fresh sandboxes, first
/// building the host when `build` is set.
pub fn run(root: &Path, components: &Path, build: bool) -> Result<()> {
    // The host binary: the same debug build the tests use (its compiler
    // crates are optimised, see the workspace Cargo.toml).
    if build {
        crate::run(crate::cargo(root).args(["build", "--quiet", "--package", "toolhost"]))?;
    }
    let target = crate::target_dir(root);
    let toolhost = target.join("debug/toolhost");

    let demo = target.join("demo");
    let plugins = demo.join("plugins");
    if plugins.exists() {
        std::fs::remove_dir_all(&plugins)?;
    }
    std::fs::create_dir_all(&plugins)?;
    for entry in std::fs::read_dir(components)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if is_demo_component(&name) {
            std::fs::copy(entry.path(), plugins.join(&name))?;
        }
    }

    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let statuspro = statuspro_sandbox::start(statuspro_sandbox::SandboxConfig::default())
            .await
            .context("cannot start the StatusPro sandbox")?;
        let katana = katana_sandbox::start(katana_sandbox::SandboxConfig::default())
            .await
            .context("cannot start the Katana sandbox")?;
        let config = format!(
            "# Written by `cargo xtask demo`: StatusPro and Katana tools against local sandboxes.\n\
             [host]\nconfirmation = \"deny\"\n\n{}\n{}",
            statuspro.toolhost_config(&["GET", "POST"]),
            katana.toolhost_config(&["GET", "POST", "PATCH"]),
        );
        let config_path = demo.join("toolhost.toml");
        std::fs::write(&config_path, config)?;
        eprintln!(
            "StatusPro sandbox: {}\nKatana sandbox: {}\ndemo config: {}",
            statuspro.base_url(),
            katana.base_url(),
            config_path.display()
        );

        let status = tokio::process::Command::new(&toolhost)
            .arg("serve")
            .arg("--plugins")
            .arg(&plugins)
            .arg("--config")
            .arg(&config_path)
            .env("STATUSPRO_API_KEY", statuspro.api_key())
            .env("KATANA_API_KEY", katana.api_key())
            .stdin(Stdio::inherit())
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit())
            .status()
            .await
            .with_context(|| format!("cannot start {}", toolhost.display()))?;
        statuspro.shutdown().await?;
        katana.shutdown().await?;
        if !status.success() {
            anyhow::bail!("toolhost exited with {status}");
        }
        Ok(())
    })
}
