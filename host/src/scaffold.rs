//! `toolhost new NAME`: a tool component crate that builds and passes
//! `toolhost check` as generated.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// Where the SDK lives in this source tree (the default for new crates).
pub fn default_sdk_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins/sdk")
}

/// Creates the crate `name` in `parent/name`, depending on the SDK at `sdk`.
pub fn create(parent: &Path, name: &str, sdk: &Path) -> Result<PathBuf> {
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
    let sdk = sdk.canonicalize().with_context(|| {
        format!(
            "cannot find toolhost-sdk at {} (pass --sdk PATH)",
            sdk.display()
        )
    })?;
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
toolhost-sdk = {{ path = {sdk:?} }}
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
"#,
            sdk = sdk.display().to_string()
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
            "# {name}\n\nA toolhost tool component.\n\n```sh\ncargo build --target wasm32-wasip2 --release\ntoolhost check target/wasm32-wasip2/release/{tool}.wasm\ncp target/wasm32-wasip2/release/{tool}.wasm /path/to/plugins/\n```\n"
        ),
    )?;
    std::fs::write(dir.join(".gitignore"), "/target\n")?;
    Ok(dir)
}
