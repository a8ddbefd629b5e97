//! The registry: every tool the host serves, by name, and the plugin that
//! provides it.
//!
//! A registry is immutable. Changes (the initial load, hot reload) build a
//! new one and swap it in atomically; a call holds the `Arc`s it looked up,
//! so it finishes on the version it started with.
//!
//! **Who owns a tool name** is decided by when files appeared, never by
//! their names, so a restart cannot hand a name to a different file:
//! - Every scan of the plugin directory that brings new files gives them
//!   one *load order* number, the same for all of them; the first scan (at
//!   start) is number 1. A replaced file keeps its number.
//! - Each tool name goes to the plugin with the lowest number that offers
//!   it. A later file's clashing tool is refused, with an error naming
//!   both files.
//! - If several files with that lowest number offer the name (they appeared
//!   together, e.g. at start), none of them serves it: the name is
//!   *ambiguous*, and the error names every file. The operator removes one
//!   (or renames the tool); the name then goes to the file that remains.
//! - When the holder is deleted, the name passes to the next in order.
//!
//! So at start, a name offered by two files is served by neither, whatever
//! happened before the restart: a file dropped in later, refused while the
//! host ran, cannot take the name (and, through a `files` pattern, another
//! block's credentials) by restarting the host.
//!
//! **Names** are *served* names: a block's `prefix` goes before each of
//! its tools' own names ([`served_name`](crate::config::served_name)), and
//! ownership is decided over served names, so two blocks that both offer
//! `search` coexist once one of them has a prefix. The guest is still
//! called with its own name ([`ToolRef::spec`]).
//!
//! A registry also carries the configuration it was built for
//! ([`Registry::config`]): settings and tools swap together, and a call
//! that holds the registry holds the settings it started with.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use crate::config::{Config, served_name};
use crate::plugin::{Loader, Plugin};
use crate::spec::ToolSpec;

/// A tool and the plugin that serves it.
#[derive(Clone)]
pub struct ToolRef {
    /// The plugin.
    pub plugin: Arc<Plugin>,
    /// The tool, as the component defines it (`spec.name` is its own
    /// name, the one the guest is called with).
    pub spec: Arc<ToolSpec>,
    /// The name it is served under: the block's prefix and the own name.
    pub name: String,
}

/// Every tool served, by name.
#[derive(Clone, Default)]
pub struct Registry {
    /// Plugins by file name, with their load order.
    plugins: BTreeMap<String, Loaded>,
    /// Tools by name; derived from `plugins` by [`Registry::rebuild`].
    tools: BTreeMap<String, ToolRef>,
    /// Tool names not served because of a clash; derived like `tools`.
    conflicts: Vec<Conflict>,
    /// The last load order number given.
    last_order: u64,
    /// The configuration the registry was built for.
    config: Arc<Config>,
}

/// One plugin's offer of a tool name: its load order, the plugin, the tool.
type Offer<'a> = (u64, &'a Loaded, &'a Arc<ToolSpec>);

#[derive(Clone)]
struct Loaded {
    plugin: Arc<Plugin>,
    /// The scan that first brought the file; a replacement keeps it.
    order: u64,
}

/// A tool name offered by more than one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The tool name.
    pub tool: String,
    /// The files of the lowest load order that offer it, by name. One: it
    /// serves the name. Several: they appeared together, the name is
    /// ambiguous, and none of them serves it.
    pub owners: Vec<String>,
    /// Later files that offer it too; their tool of that name is refused.
    pub refused: Vec<String>,
}

impl Conflict {
    /// The file serving the name, unless the name is ambiguous.
    pub fn serving(&self) -> Option<&str> {
        match self.owners.as_slice() {
            [one] => Some(one.as_str()),
            _ => None,
        }
    }
}

impl std::fmt::Display for Conflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let refused = self.refused.join(", ");
        match self.serving() {
            Some(serving) => write!(
                f,
                "tool {:?} from {refused} was refused: {serving} already serves a tool with that name (rename one of them)",
                self.tool
            ),
            None => {
                write!(
                    f,
                    "tool {:?} is not served: {} offer it and appeared in the plugin directory together, so none of \
                     them owns the name (remove all but one of these files, rename the tool, or give one \
                     block a `prefix`)",
                    self.tool,
                    self.owners.join(" and ")
                )?;
                if !self.refused.is_empty() {
                    write!(f, "; {refused} offered it later and was refused")?;
                }
                Ok(())
            }
        }
    }
}

impl Registry {
    /// An empty registry for `config`.
    pub fn empty(config: Arc<Config>) -> Registry {
        Registry {
            config,
            ..Registry::default()
        }
    }

    /// The configuration this registry was built for: the settings a call
    /// that looked its tool up here runs with.
    pub fn config(&self) -> &Arc<Config> {
        &self.config
    }

    /// This registry, for `config` (its plugins carry their own block's
    /// settings; see [`crate::watch::Reloader`]).
    pub fn for_config(mut self, config: Arc<Config>) -> Registry {
        self.config = config;
        self
    }

    /// Looks a tool up by the name it is served under.
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

    /// The tool names some files offer but do not serve.
    pub fn conflicts(&self) -> &[Conflict] {
        &self.conflicts
    }

    /// A registry with `plugins` added, each replacing any plugin from the
    /// same file (which keeps its load order). Files new to the registry
    /// share one new load order number: they are equals, and a name two of
    /// them offer is ambiguous. Returns the conflicts that are new.
    pub fn with_plugins(&self, plugins: Vec<Arc<Plugin>>) -> (Registry, Vec<Conflict>) {
        let mut next = self.clone();
        let order = next.last_order + 1;
        let mut any_new = false;
        for plugin in plugins {
            let order = match next.plugins.get(&plugin.file) {
                Some(existing) => existing.order,
                None => {
                    any_new = true;
                    order
                }
            };
            next.plugins
                .insert(plugin.file.clone(), Loaded { plugin, order });
        }
        if any_new {
            next.last_order = order;
        }
        next.rebuild();
        let fresh = next.new_conflicts_since(self);
        (next, fresh)
    }

    /// A registry with `plugin` added; see [`Registry::with_plugins`].
    pub fn with_plugin(&self, plugin: Arc<Plugin>) -> (Registry, Vec<Conflict>) {
        self.with_plugins(vec![plugin])
    }

    /// A registry without the plugins from `files`. Names they held pass to
    /// the next plugin in load order that offers them. Returns the
    /// conflicts that are new (none, unless a name becomes ambiguous).
    pub fn without_plugins<'a>(
        &self,
        files: impl IntoIterator<Item = &'a str>,
    ) -> (Registry, Vec<Conflict>) {
        let mut next = self.clone();
        for file in files {
            next.plugins.remove(file);
        }
        next.rebuild();
        let fresh = next.new_conflicts_since(self);
        (next, fresh)
    }

    /// A registry without the plugin from `file`.
    pub fn without_plugin(&self, file: &str) -> Registry {
        self.without_plugins([file]).0
    }

    fn new_conflicts_since(&self, before: &Registry) -> Vec<Conflict> {
        self.conflicts
            .iter()
            .filter(|c| !before.conflicts.contains(c))
            .cloned()
            .collect()
    }

    /// Recomputes the tool map and the conflicts: each name goes to the
    /// only plugin of the lowest load order that offers it.
    fn rebuild(&mut self) {
        // Served name → offers as (order, file, spec); files iterate in
        // name order.
        let mut offers: BTreeMap<String, Vec<Offer>> = BTreeMap::new();
        for loaded in self.plugins.values() {
            for spec in &loaded.plugin.tools {
                offers
                    .entry(served_name(&loaded.plugin.settings, &spec.name))
                    .or_default()
                    .push((loaded.order, loaded, spec));
            }
        }
        let mut tools = BTreeMap::new();
        let mut conflicts = Vec::new();
        for (name, mut offered) in offers {
            offered.sort_by_key(|(order, _, _)| *order);
            let first = offered[0].0;
            let (owners, later): (Vec<_>, Vec<_>) =
                offered.iter().partition(|(order, _, _)| *order == first);
            let files = |of: &[Offer]| -> Vec<String> {
                of.iter().map(|(_, l, _)| l.plugin.file.clone()).collect()
            };
            if let [(_, holder, spec)] = owners.as_slice() {
                tools.insert(
                    name.clone(),
                    ToolRef {
                        plugin: holder.plugin.clone(),
                        spec: Arc::clone(spec),
                        name: name.clone(),
                    },
                );
            }
            if offered.len() > 1 {
                conflicts.push(Conflict {
                    tool: name.clone(),
                    owners: files(&owners),
                    refused: files(&later),
                });
            }
        }
        self.tools = tools;
        self.conflicts = conflicts;
    }

    /// Loads every `*.wasm` in `dir` (the first scan of a
    /// [`Reloader`](crate::watch::Reloader)). A file that fails is skipped
    /// with an error on stderr naming it and the reason.
    pub async fn load_dir(loader: &Loader, dir: &Path) -> anyhow::Result<Registry> {
        let mut reloader = crate::watch::Reloader::new(dir, loader.clone());
        Ok(reloader.rescan(&Registry::default()).await?.registry)
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
