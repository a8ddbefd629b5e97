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
//! its tools' own names ([`crate::settings::served_name`]), and
//! ownership is decided over served names, so two blocks that both offer
//! `search` coexist once one of them has a prefix. The guest is still
//! called with its own name ([`ToolRef::spec`]).
//!
//! A registry also carries the configuration it was built for
//! ([`Registry::config`]): settings and tools swap together, and a call
//! that holds the registry holds the settings it started with.
//!
//! The same rules decide who owns what a 0.2 component offers beside tools
//! (ADR 0017): a resource's URI, a resource template's shape (its URI
//! template with the variables' names left out, so `x://a/{id}` and
//! `x://a/{key}` are one), and a prompt's name. [`Conflict::kind`] says
//! which of them a conflict is about.
//!
//! **Which plugin serves a URI** ([`offered_by`]), and whether that changed
//! between two registries ([`offer_changed`]), decide what a resource
//! subscription hears of (ADR 0027).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use crate::bindings::v0_2::content::{PromptDefinition, ResourceDefinition};
use crate::offers::TemplateSpec;
use crate::plugin::Plugin;
use crate::settings::{PluginSettings, served_name};
use crate::spec::ToolSpec;

/// A resource, template or prompt and the plugin that serves it.
#[derive(Clone)]
pub struct Offered<T> {
    /// What it is served under: a resource's URI, a template's shape, a
    /// prompt's served name (the block's `prefix` and its own name).
    pub key: String,
    /// The plugin.
    pub plugin: Arc<Plugin>,
    /// What it offers.
    pub item: Arc<T>,
}

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

/// Every tool served, by name, and the configuration (the embedder's, `C`)
/// it was built for: swapped together, so a request sees one of each.
pub struct Registry<C> {
    /// Plugins by file name, with their load order.
    plugins: BTreeMap<String, Loaded>,
    /// Tools by name; derived from `plugins` by [`Registry::rebuild`].
    tools: BTreeMap<String, ToolRef>,
    /// Tool names not served because of a clash; derived like `tools`.
    conflicts: Vec<Conflict>,
    /// Resources by URI; derived like `tools`.
    resources: BTreeMap<String, Offered<ResourceDefinition>>,
    /// Resource templates by shape ([`template_shape`]); derived like `tools`.
    templates: BTreeMap<String, Offered<TemplateSpec>>,
    /// Prompts by name; derived like `tools`.
    prompts: BTreeMap<String, Offered<PromptDefinition>>,
    /// The last load order number given.
    last_order: u64,
    /// The configuration the registry was built for.
    config: Arc<C>,
}

impl<C> Clone for Registry<C> {
    fn clone(&self) -> Self {
        Registry {
            plugins: self.plugins.clone(),
            tools: self.tools.clone(),
            conflicts: self.conflicts.clone(),
            resources: self.resources.clone(),
            templates: self.templates.clone(),
            prompts: self.prompts.clone(),
            last_order: self.last_order,
            config: self.config.clone(),
        }
    }
}

/// One plugin's offer of a tool name: its load order, the plugin, the tool.
type Offer<'a> = (u64, &'a Loaded, &'a Arc<ToolSpec>);

#[derive(Clone)]
struct Loaded {
    plugin: Arc<Plugin>,
    /// The scan that first brought the file; a replacement keeps it.
    order: u64,
}

/// What a [`Conflict`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NameKind {
    /// A tool name.
    #[default]
    Tool,
    /// A resource URI.
    Resource,
    /// A resource template's shape.
    Template,
    /// A prompt name.
    Prompt,
}

impl std::fmt::Display for NameKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NameKind::Tool => "tool",
            NameKind::Resource => "resource",
            NameKind::Template => "resource template",
            NameKind::Prompt => "prompt",
        })
    }
}

/// A tool name (or resource URI, template shape, prompt name) offered by
/// more than one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// What the name is.
    pub kind: NameKind,
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
                "{kind} {:?} from {refused} was refused: {serving} already serves a {kind} with that name (rename one of them)",
                self.tool,
                kind = self.kind,
            ),
            None => {
                write!(
                    f,
                    "{kind} {:?} is not served: {} offer it and appeared in the plugin directory together, so none of \
                     them owns the name (remove all but one of these files, or rename the {kind}{prefix})",
                    self.tool,
                    self.owners.join(" and "),
                    kind = self.kind,
                    prefix = match self.kind {
                        NameKind::Tool | NameKind::Prompt => ", or give one block a `prefix`",
                        NameKind::Resource | NameKind::Template => "",
                    },
                )?;
                if !self.refused.is_empty() {
                    write!(f, "; {refused} offered it later and was refused")?;
                }
                Ok(())
            }
        }
    }
}

impl<C> Registry<C> {
    /// An empty registry for `config`.
    pub fn empty(config: Arc<C>) -> Registry<C> {
        Registry {
            plugins: BTreeMap::new(),
            tools: BTreeMap::new(),
            conflicts: Vec::new(),
            resources: BTreeMap::new(),
            templates: BTreeMap::new(),
            prompts: BTreeMap::new(),
            last_order: 0,
            config,
        }
    }

    /// The configuration this registry was built for: the settings a call
    /// that looked its tool up here runs with.
    pub fn config(&self) -> &Arc<C> {
        &self.config
    }

    /// This registry, for `config` (its plugins carry their own block's
    /// settings, so a reload that changes them reloads the plugins too).
    pub fn for_config(mut self, config: Arc<C>) -> Registry<C> {
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
    pub fn with_plugins(&self, plugins: Vec<Arc<Plugin>>) -> (Registry<C>, Vec<Conflict>) {
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
    pub fn with_plugin(&self, plugin: Arc<Plugin>) -> (Registry<C>, Vec<Conflict>) {
        self.with_plugins(vec![plugin])
    }

    /// A registry without the plugins from `files`. Names they held pass to
    /// the next plugin in load order that offers them. Returns the
    /// conflicts that are new (none, unless a name becomes ambiguous).
    pub fn without_plugins<'a>(
        &self,
        files: impl IntoIterator<Item = &'a str>,
    ) -> (Registry<C>, Vec<Conflict>) {
        let mut next = self.clone();
        for file in files {
            next.plugins.remove(file);
        }
        next.rebuild();
        let fresh = next.new_conflicts_since(self);
        (next, fresh)
    }

    /// A registry without the plugin from `file`.
    pub fn without_plugin(&self, file: &str) -> Registry<C> {
        self.without_plugins([file]).0
    }

    fn new_conflicts_since(&self, before: &Registry<C>) -> Vec<Conflict> {
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
                    kind: NameKind::Tool,
                    tool: name.clone(),
                    owners: files(&owners),
                    refused: files(&later),
                });
            }
        }
        self.tools = tools;
        self.conflicts = conflicts;
        self.rebuild_offers();
    }

    /// Recomputes the resources, templates and prompts, by the same rule as
    /// the tools, adding their conflicts to the tools'.
    fn rebuild_offers(&mut self) {
        let loaded: Vec<&Loaded> = self.plugins.values().collect();
        let offers = |l: &Loaded| l.plugin.offers.clone();
        let (resources, mut conflicts) = assign(&loaded, NameKind::Resource, |l| {
            offers(l)
                .map(|o| {
                    o.resources
                        .iter()
                        .map(|r| (r.uri.clone(), r.clone()))
                        .collect()
                })
                .unwrap_or_default()
        });
        let (templates, more) = assign(&loaded, NameKind::Template, |l| {
            offers(l)
                .map(|o| {
                    o.templates
                        .iter()
                        .map(|t| (template_shape(&t.definition.uri_template), t.clone()))
                        .collect()
                })
                .unwrap_or_default()
        });
        conflicts.extend(more);
        let (prompts, more) = assign(&loaded, NameKind::Prompt, |l| {
            offers(l)
                .map(|o| {
                    o.prompts
                        .iter()
                        .map(|p| (served_name(&l.plugin.settings, &p.name), p.clone()))
                        .collect()
                })
                .unwrap_or_default()
        });
        conflicts.extend(more);
        self.resources = resources;
        self.templates = templates;
        self.prompts = prompts;
        self.conflicts.extend(conflicts);
    }

    /// The resource at `uri`, if a plugin lists it.
    pub fn resource(&self, uri: &str) -> Option<&Offered<ResourceDefinition>> {
        self.resources.get(uri)
    }

    /// Every resource, by URI.
    pub fn resources(&self) -> impl Iterator<Item = &Offered<ResourceDefinition>> {
        self.resources.values()
    }

    /// Every resource template, by shape.
    pub fn templates(&self) -> impl Iterator<Item = &Offered<TemplateSpec>> {
        self.templates.values()
    }

    /// The template served under `uri_template`'s shape, if any.
    pub fn template(&self, uri_template: &str) -> Option<&Offered<TemplateSpec>> {
        self.templates.get(&template_shape(uri_template))
    }

    /// The first template (by shape) that `uri` matches, with the
    /// variables' values.
    pub fn template_for(&self, uri: &str) -> Option<(&Offered<TemplateSpec>, Variables)> {
        self.templates_for(uri).next()
    }

    /// Every template `uri` matches, by shape, with the variables' values:
    /// a caller who may not see the first one may see a later one.
    pub fn templates_for<'s>(
        &'s self,
        uri: &str,
    ) -> impl Iterator<Item = (&'s Offered<TemplateSpec>, Variables)> {
        self.templates.values().filter_map(move |t| {
            crate::offers::match_template(&t.item.definition.uri_template, uri).map(|v| (t, v))
        })
    }

    /// The prompt served as `name` (its block's `prefix` and its own
    /// name), if any.
    pub fn prompt(&self, name: &str) -> Option<&Offered<PromptDefinition>> {
        self.prompts.get(name)
    }

    /// Every prompt, by name.
    pub fn prompts(&self) -> impl Iterator<Item = &Offered<PromptDefinition>> {
        self.prompts.values()
    }
}

/// A template's variables and their values in one URI.
pub type Variables = Vec<(String, String)>;

/// One plugin's offer of a key: its load order, the plugin, the item.
type KeyOffer<'a, T> = (u64, &'a Loaded, Arc<T>);

/// A template's shape: its URI template with every variable's name left
/// out (`katana://items/{}`), so two templates that match the same URIs
/// have the same shape.
pub fn template_shape(uri_template: &str) -> String {
    let mut shape = String::with_capacity(uri_template.len());
    let mut inside = false;
    for c in uri_template.chars() {
        match c {
            '{' => {
                inside = true;
                shape.push('{');
            }
            '}' => {
                inside = false;
                shape.push('}');
            }
            _ if inside => {}
            _ => shape.push(c),
        }
    }
    shape
}

/// Who owns each key that `offered` lists for each plugin of `loaded`, by
/// the rule of the module doc: the only plugin of the lowest load order.
/// Returns the owners and the conflicts.
fn assign<T>(
    loaded: &[&Loaded],
    kind: NameKind,
    offered: impl Fn(&Loaded) -> Vec<(String, Arc<T>)>,
) -> (BTreeMap<String, Offered<T>>, Vec<Conflict>) {
    let mut offers: BTreeMap<String, Vec<KeyOffer<T>>> = BTreeMap::new();
    for l in loaded {
        for (key, item) in offered(l) {
            offers.entry(key).or_default().push((l.order, l, item));
        }
    }
    let mut owned = BTreeMap::new();
    let mut conflicts = Vec::new();
    for (key, mut offered) in offers {
        offered.sort_by_key(|(order, _, _)| *order);
        let first = offered[0].0;
        let files = |of: &mut dyn Iterator<Item = &KeyOffer<T>>| -> Vec<String> {
            of.map(|(_, l, _)| l.plugin.file.clone()).collect()
        };
        let owners = files(&mut offered.iter().filter(|(o, _, _)| *o == first));
        let refused = files(&mut offered.iter().filter(|(o, _, _)| *o != first));
        if owners.len() == 1 {
            let (_, holder, item) = &offered[0];
            owned.insert(
                key.clone(),
                Offered {
                    key: key.clone(),
                    plugin: holder.plugin.clone(),
                    item: item.clone(),
                },
            );
        }
        if offered.len() > 1 {
            conflicts.push(Conflict {
                kind,
                tool: key,
                owners,
                refused,
            });
        }
    }
    (owned, conflicts)
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

/// The plugin serving `uri` in `registry`: the one listing it as a
/// resource, else the one whose template (the first by shape) it matches.
pub fn offered_by<'a, C>(registry: &'a Registry<C>, uri: &str) -> Option<&'a Arc<Plugin>> {
    match registry.resource(uri) {
        Some(r) => Some(&r.plugin),
        None => registry.template_for(uri).map(|(t, _)| &t.plugin),
    }
}

/// Whether what is read at `uri` may differ between `before` and `now`:
/// another plugin serves it, or none does any more (or yet), or its
/// component's bytes changed, or its block's settings that reach a read
/// (values, network policy, credentials, limits). The trigger of
/// `notifications/resources/updated` (ADR 0027).
pub fn offer_changed<C>(before: &Registry<C>, now: &Registry<C>, uri: &str) -> bool {
    serving_changed(offered_by(before, uri), offered_by(now, uri))
}

/// Whether a read served by `before` may differ from one served by `now`
/// (each the plugin serving a URI, or none): [`offer_changed`] for a
/// caller who sees only some of what is served, given what it sees.
pub fn serving_changed(before: Option<&Arc<Plugin>>, now: Option<&Arc<Plugin>>) -> bool {
    match (before, now) {
        (None, None) => false,
        (Some(a), Some(b)) if Arc::ptr_eq(a, b) => false,
        (Some(a), Some(b)) => {
            a.file != b.file || a.digest != b.digest || !reads_alike(&a.settings, &b.settings)
        }
        _ => true,
    }
}

/// Whether a read under settings `a` and one under `b` see the same
/// configuration: the `config` values, the network policy, the
/// credentials injected and the limits.
fn reads_alike(a: &PluginSettings, b: &PluginSettings) -> bool {
    a.values == b.values
        && a.network == b.network
        && a.limits == b.limits
        && a.credentials.len() == b.credentials.len()
        && a.credentials
            .iter()
            .zip(&b.credentials)
            .all(|(x, y)| x.scope == y.scope && x.header == y.header && x.value == y.value)
}
