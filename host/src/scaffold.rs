//! `toolhost new NAME`: a tool component crate that builds and passes
//! `toolhost check` as generated, on a machine with only the `toolhost`
//! binary and the package registries (ADR 0037).
//!
//! The binary carries the SDK it was built with and the WIT contract
//! ([`embedded`]); a new crate gets them in `vendor/toolhost-sdk` and
//! depends on them as `toolhost-sdk = { version = "X", path = "vendor/…" }`:
//! the build uses the vendored copy, and `cargo publish` of the author's
//! crate uses the registry's release of the same version. `--sdk PATH`
//! depends on a checkout instead.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// The SDK's package files and the WIT contract, as they were when this
/// binary was built (`host/build.rs`).
pub mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

/// Where a new crate's `vendor/` copy of the SDK goes.
const VENDORED_SDK: &str = "vendor/toolhost-sdk";

/// The version of the embedded SDK (its `Cargo.toml`'s `package.version`).
pub fn sdk_version() -> String {
    let manifest = embedded::SDK_FILES
        .iter()
        .find(|(path, _)| *path == "Cargo.toml")
        .map(|(_, bytes)| String::from_utf8_lossy(bytes).into_owned())
        .unwrap_or_default();
    toml::from_str::<toml::Table>(&manifest)
        .ok()
        .and_then(|t| {
            t.get("package")?
                .get("version")?
                .as_str()
                .map(str::to_string)
        })
        .expect("the embedded SDK manifest has a version")
}

/// Writes the embedded SDK, with the WIT contract in its `wit/`, into
/// `dir`.
fn write_sdk(dir: &Path) -> Result<()> {
    let files = embedded::SDK_FILES.iter().map(|(p, b)| (p.to_string(), *b));
    let wit = embedded::WIT_FILES
        .iter()
        .map(|(p, b)| (format!("wit/{p}"), *b));
    for (path, bytes) in files.chain(wit) {
        let path = dir.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// Creates the crate `name` in `parent/name`: depending on the SDK at
/// `sdk` when given, otherwise on the embedded SDK, written into the crate.
pub fn create(parent: &Path, name: &str, sdk: Option<&Path>) -> Result<PathBuf> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        || !name.starts_with(|c: char| c.is_ascii_lowercase())
    {
        bail!(
            "{name:?} is not a good crate name: use lower-case letters, digits, - and _, starting with a letter"
        );
    }
    let dir = parent.join(name);
    if dir.exists() {
        bail!(
            "{} already exists; pick another name or remove it",
            dir.display()
        );
    }
    let dependency = match sdk {
        Some(sdk) => {
            let sdk = sdk.canonicalize().with_context(|| {
                format!(
                    "cannot find toolhost-sdk at {} (leave out --sdk to use the SDK this binary carries)",
                    sdk.display()
                )
            })?;
            format!("{{ path = {:?} }}", sdk.display().to_string())
        }
        None => format!(
            "{{ version = \"{}\", path = \"{VENDORED_SDK}\" }}",
            sdk_version()
        ),
    };
    let tool = name.replace('-', "_");
    let title: String = tool
        .split('_')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ");
    std::fs::create_dir_all(dir.join("src"))?;
    if sdk.is_none() {
        write_sdk(&dir.join(VENDORED_SDK))?;
    }
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
publish = false

[lib]
crate-type = ["cdylib"]

[dependencies]
# The SDK this toolhost was built with, in vendor/ (builds with no checkout
# of toolhost). Remove `path` to use the registry's release instead.
toolhost-sdk = {dependency}
serde = {{ version = "1", features = ["derive"] }}
schemars = "1"

# Small components; a panic becomes a tool error in the host.
[profile.release]
opt-level = "s"
lto = true
codegen-units = 1
strip = true
panic = "abort"

# A crate of its own, not part of an enclosing workspace.
[workspace]
"#
        ),
    )?;
    std::fs::write(
        dir.join("src/lib.rs"),
        format!(
            r#"//! The `{name}` tool component.

use schemars::JsonSchema;
use serde::{{Deserialize, Serialize}};
use toolhost_sdk::{{Annotations, Tool, ToolError}};

/// Arguments of `get_{tool}_greeting`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Input {{
    /// Who to greet.
    #[schemars(example = &"Ada", length(min = 1, max = 100))]
    name: String,
}}

/// What `get_{tool}_greeting` returns.
#[derive(Serialize, JsonSchema)]
struct Output {{
    /// The greeting.
    message: String,
}}

/// The component's one tool. Replace it with yours.
struct Greeting;

impl Tool for Greeting {{
    type Input = Input;
    type Output = Output;
    const NAME: &'static str = "get_{tool}_greeting";
    const TITLE: &'static str = "Get {title} Greeting";
    const DESCRIPTION: &'static str = "Return a greeting for a name. Use it to check that the \
        {name} component is installed.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;

    fn call(&self, input: Input) -> Result<Output, ToolError> {{
        Ok(Output {{ message: format!("Hello, {{}}!", input.name) }})
    }}
}}

toolhost_sdk::export_tools!(Greeting);
"#
        ),
    )?;
    std::fs::write(
        dir.join("README.md"),
        format!(
            "# {name}\n\nA toolhost tool component.\n\n```sh\ncargo build --target wasm32-wasip2 --release\ntoolhost check target/wasm32-wasip2/release/{tool}.wasm\ncp target/wasm32-wasip2/release/{tool}.wasm /path/to/plugins/\n```\n\n`vendor/toolhost-sdk` is the SDK (with the WIT contract in its `wit/`) that the\n`toolhost` binary which created this crate was built with. To use the\nregistry's release instead, remove `path` from the `toolhost-sdk` line of\n`Cargo.toml` and delete `vendor/`.\n"
        ),
    )?;
    std::fs::write(dir.join(".gitignore"), "/target\n")?;
    Ok(dir)
}
