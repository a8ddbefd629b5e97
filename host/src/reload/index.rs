//! Which tools each component content offers, kept beside the compile
//! cache (`tools-index.json`), so `toolhost call` can load only the file
//! that serves the tool it calls instead of compiling the whole directory.
//!
//! The index is a hint, not a trust decision: it names a file to load, and
//! that file is then loaded and checked like any other. A file whose
//! content is not in the index, or two files serving the name, or a file
//! that turns out not to serve it, make `call` load the whole directory
//! (which rewrites the index).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::config::Config;
use crate::registry::Registry;

/// The index's file name in the cache directory.
const FILE: &str = "tools-index.json";

/// By a content's SHA-256 (hex): its tools' own names.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct ToolIndex {
    contents: BTreeMap<String, Vec<String>>,
}

impl ToolIndex {
    /// The index in the cache directory `dir`; empty when there is none or
    /// it cannot be read.
    pub fn read(dir: &Path) -> ToolIndex {
        std::fs::read(dir.join(FILE))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Adds what `registry` serves and writes the index to `dir` (a new
    /// file renamed into place). A failure is only logged: the index is a
    /// hint.
    pub fn record(mut self, dir: &Path, registry: &Registry) {
        for plugin in registry.plugins() {
            let names = plugin.tools.iter().map(|t| t.name.clone()).collect();
            self.contents.insert(plugin.digest.clone(), names);
        }
        let write = || -> std::io::Result<()> {
            let tmp = dir.join(format!(".{FILE}.{}", std::process::id()));
            std::fs::write(&tmp, serde_json::to_vec(&self)?)?;
            std::fs::rename(&tmp, dir.join(FILE))
        };
        if let Err(e) = write() {
            tracing::debug!("cannot write the tool index in {}: {e}", dir.display());
        }
    }

    /// The one file of the directory `plugins` that serves `tool` under
    /// `config`, when every file's content is in the index and exactly one
    /// serves it.
    pub fn file_serving(&self, plugins: &Path, config: &Config, tool: &str) -> Option<String> {
        let mut serving = Vec::new();
        for (name, path) in wasm_files(plugins)? {
            if !config.serves(&name) {
                continue;
            }
            let settings = config.settings_for(&name);
            let limit = settings.limits.wasm_bytes;
            // A file over its limit, or not a regular file: the full load
            // reports it.
            let bytes = super::dir::read_within(&path, limit)
                .ok()
                .filter(|b| b.len() as u64 <= limit)?;
            let digest = hex::encode(Sha256::digest(&bytes));
            let own = self.contents.get(&digest)?;
            if own
                .iter()
                .any(|own| crate::settings::served_name(&settings, own) == tool)
            {
                serving.push(name);
            }
        }
        match serving.as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        }
    }
}

/// The `*.wasm` files directly in `dir`, by UTF-8 name; `None` when a name
/// is not UTF-8 or the directory cannot be read (the full load reports it).
fn wasm_files(dir: &Path) -> Option<Vec<(String, PathBuf)>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).ok()? {
        let path = entry.ok()?.path();
        if path.extension().is_some_and(|x| x == "wasm") {
            files.push((path.file_name()?.to_str()?.to_string(), path));
        }
    }
    Some(files)
}

/// The set holding `name` alone.
pub fn only(name: String) -> HashSet<String> {
    HashSet::from([name])
}
