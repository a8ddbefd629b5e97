//! `cargo xtask config-docs [--check]`: writes the key tables of
//! `docs/configuration.md` from the table of keys,
//! `host/src/config/keys.rs`. Each table is a region of the doc between
//! `<!-- config-docs:NAME … -->` and `<!-- /config-docs -->`; the prose
//! around them is the doc's own. `--check` writes nothing and fails when
//! the doc differs from what the table generates (the e2e test
//! `docs::the_configuration_key_tables_are_generated_from_the_table_of_keys`
//! checks the same).

use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};

/// The table of keys, compiled here from the host's own file: writing a doc
/// should not build the host (wasmtime and all), and the file needs only
/// `std`.
#[path = "../../host/src/config/keys.rs"]
#[allow(dead_code)] // The host's resolution reads the rest of it.
mod keys;

/// The doc the key tables are in, from the workspace root.
const DOC: &str = "docs/configuration.md";

/// Runs `config-docs` with `args` (nothing, or `--check`).
pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let check = match args {
        [] => false,
        [flag] if flag == "--check" => true,
        _ => bail!("usage: cargo xtask config-docs [--check]"),
    };
    let path = root.join(DOC);
    let doc = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let generated = keys::regenerate(&doc).map_err(|e| anyhow!("{DOC}: {e}"))?;
    if generated == doc {
        eprintln!("{DOC}: the key tables are up to date");
        return Ok(());
    }
    if check {
        bail!(
            "{DOC}: the key tables differ from host/src/config/keys.rs; run `cargo xtask config-docs`"
        );
    }
    std::fs::write(&path, generated).with_context(|| format!("cannot write {}", path.display()))?;
    eprintln!("{DOC}: the key tables were written from host/src/config/keys.rs");
    Ok(())
}
