//! The registry: every tool the host serves, by name, and the plugin that
//! provides it.
//!
//! A registry is immutable. Changes (hot reload) build a new one and swap it
//! in atomically; a call holds the `Arc`s it looked up, so it finishes on the
//! version it started with.
//!
//! **Name collisions** are settled deterministically: the tool already
//! serving keeps its name and the newcomer's clashing tool is refused, with
//! an error naming both files. Precisely: plugins are ordered by when their
//! file was first loaded (at startup, in file-name order; a replaced file
//! keeps its place), and each name goes to the first plugin in that order
//! that offers it. When a file is deleted, names it held pass to the next.

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
    /// Plugins by file name, with the order they were first loaded in.
    plugins: BTreeMap<String, Loaded>,
    /// Tools by name; derived from `plugins` by [`Registry::rebuild`].
    tools: BTreeMap<String, ToolRef>,
    /// The next load order number.
    next_order: u64,
}

#[derive(Clone)]
struct Loaded {
    plugin: Arc<Plugin>,
    /// When the file was first loaded; a replacement keeps its file's order.
    order: u64,
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
        self.plugins.values().map(|l| &l.plugin)
    }

    /// The plugin loaded from `file`, if any.
    pub fn plugin(&self, file: &str) -> Option<&Arc<Plugin>> {
        self.plugins.get(file).map(|l| &l.plugin)
    }

    /// A registry with `plugin` added, replacing any plugin from the same
    /// file (which keeps its place in the load order). Returns the tools of
    /// `plugin` refused because an earlier-loaded file serves their names.
    pub fn with_plugin(&self, plugin: Arc<Plugin>) -> (Registry, Vec<Collision>) {
        let mut next = self.clone();
        let order = match next.plugins.get(&plugin.file) {
            Some(existing) => existing.order,
            None => {
                next.next_order += 1;
                next.next_order
            }
        };
        let file = plugin.file.clone();
        next.plugins.insert(file.clone(), Loaded { plugin, order });
        let collisions = next
            .rebuild()
            .into_iter()
            .filter(|c| c.refused == file)
            .collect();
        (next, collisions)
    }

    /// A registry without the plugin from `file`. Names it held pass to the
    /// next plugin in load order that offers them.
    pub fn without_plugin(&self, file: &str) -> Registry {
        let mut next = self.clone();
        if next.plugins.remove(file).is_some() {
            next.rebuild();
        }
        next
    }

    /// Recomputes the tool map: plugins in load order, each tool taking its
    /// name unless an earlier plugin has it.
    fn rebuild(&mut self) -> Vec<Collision> {
        let mut loaded: Vec<&Loaded> = self.plugins.values().collect();
        loaded.sort_by_key(|l| l.order);
        let mut tools: BTreeMap<String, ToolRef> = BTreeMap::new();
        let mut collisions = Vec::new();
        for l in loaded {
            for spec in &l.plugin.tools {
                if let Some(existing) = tools.get(&spec.name) {
                    collisions.push(Collision {
                        tool: spec.name.clone(),
                        serving: existing.plugin.file.clone(),
                        refused: l.plugin.file.clone(),
                    });
                    continue;
                }
                tools.insert(
                    spec.name.clone(),
                    ToolRef {
                        plugin: l.plugin.clone(),
                        spec: spec.clone(),
                    },
                );
            }
        }
        self.tools = tools;
        collisions
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
                    let started = std::time::Instant::now();
                    let result = loader.load_file(&path).await;
                    if let Ok(plugin) = &result {
                        tracing::info!(
                            file = %plugin.file,
                            tools = plugin.tools.len(),
                            ms = started.elapsed().as_millis() as u64,
                            "loaded"
                        );
                    }
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
