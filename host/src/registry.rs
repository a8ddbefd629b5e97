//! The registry: every tool the host serves, by name, and the plugin that
//! provides it.
//!
//! A registry is immutable. Changes (hot reload) build a new one and swap it
//! in atomically; a call holds the `Arc`s it looked up, so it finishes on the
//! version it started with.
//!
//! **Name collisions** are settled deterministically: the tool already
//! serving keeps its name and the newcomer's clashing tool is refused, with
//! an error naming both files. At startup files load in name order, so the
//! file that sorts first wins.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use crate::plugin::{Loader, Plugin};
use crate::spec::ToolSpec;

/// A tool and the plugin that serves it.
#[derive(Clone)]
pub struct ToolRef {
    /// The plugin.
    pub plugin: Arc<Plugin>,
    /// The tool.
    pub spec: Arc<ToolSpec>,
}

/// Every tool served, by name.
#[derive(Clone, Default)]
pub struct Registry {
    plugins: BTreeMap<String, Arc<Plugin>>,
    tools: BTreeMap<String, ToolRef>,
}

/// A tool refused because its name is taken.
#[derive(Debug, Clone, PartialEq)]
pub struct Collision {
    /// The tool name.
    pub tool: String,
    /// The file already serving it.
    pub serving: String,
    /// The file whose tool was refused.
    pub refused: String,
}

impl std::fmt::Display for Collision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "tool {:?} from {} was refused: {} already serves a tool with that name (rename one of them)",
            self.tool, self.refused, self.serving
        )
    }
}

impl Registry {
    /// Looks a tool up by name.
    pub fn tool(&self, name: &str) -> Option<&ToolRef> {
        self.tools.get(name)
    }

    /// Every tool, by name.
    pub fn tools(&self) -> impl Iterator<Item = &ToolRef> {
        self.tools.values()
    }

    /// Every plugin, by file name.
    pub fn plugins(&self) -> impl Iterator<Item = &Arc<Plugin>> {
        self.plugins.values()
    }

    /// The plugin loaded from `file`, if any.
    pub fn plugin(&self, file: &str) -> Option<&Arc<Plugin>> {
        self.plugins.get(file)
    }

    /// A registry with `plugin` added, replacing any plugin from the same
    /// file. Tools whose names another file already serves are refused.
    pub fn with_plugin(&self, plugin: Arc<Plugin>) -> (Registry, Vec<Collision>) {
        let mut next = self.without_plugin(&plugin.file);
        let mut collisions = Vec::new();
        for spec in &plugin.tools {
            if let Some(existing) = next.tools.get(&spec.name) {
                collisions.push(Collision {
                    tool: spec.name.clone(),
                    serving: existing.plugin.file.clone(),
                    refused: plugin.file.clone(),
                });
                continue;
            }
            next.tools.insert(
                spec.name.clone(),
                ToolRef {
                    plugin: plugin.clone(),
                    spec: spec.clone(),
                },
            );
        }
        next.plugins.insert(plugin.file.clone(), plugin);
        (next, collisions)
    }

    /// A registry without the plugin from `file`.
    pub fn without_plugin(&self, file: &str) -> Registry {
        let mut next = self.clone();
        if next.plugins.remove(file).is_some() {
            next.tools.retain(|_, t| t.plugin.file != file);
        }
        next
    }

    /// Loads every `*.wasm` in `dir`, in name order. A file that fails is
    /// skipped with an error on stderr naming it and the reason.
    pub async fn load_dir(loader: &Loader, dir: &Path) -> anyhow::Result<Registry> {
        let files = wasm_files(dir)?;
        // Spawned, so components compile in parallel on the blocking pool.
        let handles: Vec<_> = files
            .into_iter()
            .map(|path| {
                let loader = loader.clone();
                tokio::spawn(async move {
                    let result = loader.load_file(&path).await;
                    (path, result)
                })
            })
            .collect();
        let mut results = Vec::with_capacity(handles.len());
        for handle in handles {
            results.push(handle.await?);
        }
        let mut registry = Registry::default();
        for (path, result) in results {
            match result {
                Ok(plugin) => {
                    let (next, collisions) = registry.with_plugin(Arc::new(plugin));
                    for c in collisions {
                        tracing::error!("{}: {c}", path.display());
                    }
                    registry = next;
                }
                Err(e) => tracing::error!("skipped {}: {e}", path.display()),
            }
        }
        Ok(registry)
    }
}

/// The `*.wasm` files directly in `dir`, sorted by name.
pub fn wasm_files(dir: &Path) -> anyhow::Result<Vec<std::path::PathBuf>> {
    use anyhow::Context;
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read the plugin directory {}", dir.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "wasm") && p.is_file())
        .collect();
    files.sort();
    Ok(files)
}
