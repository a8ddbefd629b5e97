//! What the model sees: profiles (named surfaces of the catalog) and the
//! search that progressive discovery answers with (ADR 0040).
//!
//! A [`Profile`] is a named surface (`[[profiles]]` in `toolhost.toml`):
//! the tools it names, in the order it names them, then the tools its
//! `select` condition picks, in name order; the resources and prompts it
//! names or picks; per tool a served name (`as`), a title and a
//! description of the operator's; and a `hide` condition of its own,
//! applied after `[[access]]` and the hide rules of `[[policy.rules]]`.
//! A client reaches it at `/mcp/<name>` over HTTP or with
//! `serve --profile NAME` on stdio.
//!
//! **Architecture invariant:** a profile only narrows and renames. What a
//! caller sees through one is decided in one place,
//! `server::request::Visible`, which asks [`Profile::surface`] (and the
//! profile's `hide`) after the global hide rules; lists, calls, reads,
//! completion, subscriptions and search all go through it. Policy rules
//! and the audit trail see a tool under its registry name, never an alias,
//! so an alias is no way around a rule.
//!
//! **Stable names.** A tool named `block/tool` (its `[plugins.NAME]` block
//! and the component's own name) is found in that block's plugin whatever
//! else is served: when another plugin arrives offering the same name (a
//! clash the registry resolves by serving neither), the profile still
//! serves it, under the name the profile gives it.

pub mod search;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

// The runtime's own types, generic over the configuration a registry
// carries: `crate::registry` names `config`, which names this module.
use toolhost_runtime::plugin::Plugin;
use toolhost_runtime::registry::{Registry, ToolRef};
use toolhost_runtime::settings::served_name;

use crate::rules::{Condition, Facts, Target, condition_holds};

/// The profile an HTTP request's path names (`/mcp/<profile>`), put into
/// the request's extensions by the transport, which knows paths; the
/// request context reads it from there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileName(pub String);

/// How a profile names one of its tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolPick {
    /// By the name the registry serves it under.
    Served(String),
    /// By its block and the component's own name: `statuspro/get_order`.
    Own {
        /// The `[plugins.NAME]` block (or, for a file no block covers, its
        /// name without `.wasm`).
        block: String,
        /// The tool's own name, as the component lists it.
        tool: String,
    },
}

impl ToolPick {
    /// Reads an entry of a profile's `tools`: `block/tool` or a served name.
    pub fn parse(entry: &str) -> ToolPick {
        match entry.split_once('/') {
            Some((block, tool)) => ToolPick::Own {
                block: block.to_string(),
                tool: tool.to_string(),
            },
            None => ToolPick::Served(entry.to_string()),
        }
    }
}

/// The operator's words for one tool of a profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Override {
    /// The name the profile serves it under (`as`).
    pub name: Option<String>,
    /// Its title there.
    pub title: Option<String>,
    /// Its description there.
    pub description: Option<String>,
}

/// One `[[profiles]]` entry, resolved.
#[derive(Debug, Clone)]
pub struct Profile {
    /// Its name: the path `/mcp/<name>`, and `serve --profile <name>`.
    pub name: String,
    /// The tools named, in the order served.
    pub tools: Vec<ToolPick>,
    /// The tools, resources and prompts picked by a condition, after the
    /// named ones.
    pub select: Option<Arc<Condition>>,
    /// Resource URIs and URI templates named.
    pub resources: BTreeSet<String>,
    /// Prompt names (served) named.
    pub prompts: BTreeSet<String>,
    /// Hides from a caller what it holds (its own access rule).
    pub hide: Option<Arc<Condition>>,
    /// Per tool (keyed by the entry as written in `tools`, or the served
    /// name of a selected tool): served name, title, description.
    pub overrides: BTreeMap<String, Override>,
    /// Per resource (keyed by its URI as its component serves it): the
    /// URI served instead (`as`), title, description.
    pub resource_overrides: BTreeMap<String, Override>,
    /// Per prompt (keyed by the name the registry serves it under): the
    /// name served instead (`as`), title, description.
    pub prompt_overrides: BTreeMap<String, Override>,
    /// Whether the profile lists meta-tools to find, describe and call its
    /// tools instead of the tools themselves.
    pub discovery: bool,
}

/// A tool as one surface serves it.
#[derive(Clone)]
pub struct Shown {
    /// The name served on this surface.
    pub name: String,
    /// The registry's tool (its `name` is the registry's served name, the
    /// one rules and the audit trail see).
    pub tool: ToolRef,
    /// The profile's title for it, if it gives one.
    pub title: Option<String>,
    /// The profile's description for it, if it gives one.
    pub description: Option<String>,
}

impl std::fmt::Debug for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shown")
            .field("name", &self.name)
            .field("tool", &self.tool.name)
            .finish_non_exhaustive()
    }
}

impl Shown {
    /// A tool shown as the registry serves it.
    pub fn plain(tool: &ToolRef) -> Shown {
        Shown {
            name: tool.name.clone(),
            tool: tool.clone(),
            title: None,
            description: None,
        }
    }

    /// The title shown.
    pub fn title(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.tool.spec.title)
    }

    /// The description shown.
    pub fn description(&self) -> &str {
        self.description
            .as_deref()
            .unwrap_or(&self.tool.spec.description)
    }
}

/// The profile a name stands for when the configuration has none by that
/// name (removed by a reload while a client still uses its path): it
/// serves nothing.
pub static NOTHING: std::sync::LazyLock<Profile> = std::sync::LazyLock::new(|| Profile {
    name: String::new(),
    tools: Vec::new(),
    select: None,
    resources: BTreeSet::new(),
    prompts: BTreeSet::new(),
    hide: None,
    overrides: BTreeMap::new(),
    resource_overrides: BTreeMap::new(),
    prompt_overrides: BTreeMap::new(),
    discovery: false,
});

impl Profile {
    /// The tools this profile serves from `registry`, in its order (named
    /// first, then selected, by name), before any caller's hiding. A named
    /// tool that is not served is left out; a selected tool whose served
    /// name an earlier one took is left out (the named one wins).
    pub fn surface<C>(&self, registry: &Registry<C>) -> Vec<Shown> {
        let mut shown: Vec<Shown> = Vec::new();
        let mut names: BTreeSet<String> = BTreeSet::new();
        // Each tool once, by its plugin file and own name.
        let mut tools: BTreeSet<(String, String)> = BTreeSet::new();
        for pick in &self.tools {
            let (entry, found) = match pick {
                ToolPick::Served(name) => (name.clone(), registry.tool(name).cloned()),
                ToolPick::Own { block, tool } => {
                    (format!("{block}/{tool}"), own(registry, block, tool))
                }
            };
            let Some(tool) = found else { continue };
            let o = self.overrides.get(&entry);
            let name = o
                .and_then(|o| o.name.clone())
                .unwrap_or_else(|| tool.name.clone());
            if !names.insert(name.clone())
                || !tools.insert((tool.plugin.file.clone(), tool.spec.name.clone()))
            {
                continue;
            }
            shown.push(Shown {
                name,
                title: o.and_then(|o| o.title.clone()),
                description: o.and_then(|o| o.description.clone()),
                tool,
            });
        }
        if let Some(select) = &self.select {
            for tool in registry.tools() {
                let key = (tool.plugin.file.clone(), tool.spec.name.clone());
                if tools.contains(&key)
                    || !selects(
                        select,
                        &tool.plugin,
                        Target::Tool {
                            name: &tool.name,
                            spec: &tool.spec,
                        },
                    )
                {
                    continue;
                }
                let o = self.overrides.get(&tool.name);
                let name = o
                    .and_then(|o| o.name.clone())
                    .unwrap_or_else(|| tool.name.clone());
                if !names.insert(name.clone()) {
                    continue;
                }
                tools.insert(key);
                shown.push(Shown {
                    name,
                    title: o.and_then(|o| o.title.clone()),
                    description: o.and_then(|o| o.description.clone()),
                    tool: tool.clone(),
                });
            }
        }
        shown
    }

    /// Whether the profile holds the resource or template `uri` of `plugin`.
    pub fn holds_resource(&self, plugin: &Plugin, uri: &str) -> bool {
        self.resources.contains(uri)
            || self
                .select
                .as_ref()
                .is_some_and(|s| selects(s, plugin, Target::Resource(uri)))
    }

    /// Whether the profile holds the prompt served as `name` by `plugin`.
    pub fn holds_prompt(&self, plugin: &Plugin, name: &str) -> bool {
        self.prompts.contains(name)
            || self
                .select
                .as_ref()
                .is_some_and(|s| selects(s, plugin, Target::Prompt(name)))
    }

    /// The URI the resource at `uri` (as its component serves it) is
    /// served at through this profile.
    pub fn served_uri<'s>(&'s self, uri: &'s str) -> &'s str {
        renamed(&self.resource_overrides, uri)
    }

    /// The URI, as its component serves it, of what this profile serves
    /// at `served`; `None` for a URI the profile renamed away (it is
    /// unknown here, as a renamed tool's registry name is).
    pub fn registry_uri<'s>(&'s self, served: &'s str) -> Option<&'s str> {
        original(&self.resource_overrides, served)
    }

    /// Whether a resource at `uri` is left out of this profile because
    /// another one is served under that URI.
    pub fn shadows_uri(&self, uri: &str) -> bool {
        shadowed(&self.resource_overrides, uri)
    }

    /// The name the prompt served as `name` by the registry has here.
    pub fn served_prompt<'s>(&'s self, name: &'s str) -> &'s str {
        renamed(&self.prompt_overrides, name)
    }

    /// The registry's name of the prompt this profile serves as `served`;
    /// `None` for a name the profile renamed away.
    pub fn registry_prompt<'s>(&'s self, served: &'s str) -> Option<&'s str> {
        original(&self.prompt_overrides, served)
    }

    /// Whether a prompt named `name` is left out of this profile because
    /// another one is served under that name.
    pub fn shadows_prompt(&self, name: &str) -> bool {
        shadowed(&self.prompt_overrides, name)
    }

    /// Whether the profile's own `hide` hides what `facts` describe. A
    /// condition that cannot be evaluated hides (fail closed), and is logged.
    pub fn hides(&self, facts: &Facts) -> bool {
        let Some(hide) = &self.hide else {
            return false;
        };
        condition_holds(hide, facts).unwrap_or_else(|error| {
            tracing::warn!(
                profile = %self.name,
                "profile {:?}'s hide condition could not be evaluated ({error}); hiding, as a \
                 condition that cannot say fails closed",
                self.name
            );
            true
        })
    }

    /// Whether what the profile shows depends on who calls (its `hide`
    /// reads `identity`).
    pub fn hides_per_caller(&self) -> bool {
        self.hide.as_ref().is_some_and(|h| h.reads("identity"))
    }
}

/// What `name` (a registry URI or prompt name) is served as under
/// `overrides`.
fn renamed<'s>(overrides: &'s BTreeMap<String, Override>, name: &'s str) -> &'s str {
    overrides
        .get(name)
        .and_then(|o| o.name.as_deref())
        .unwrap_or(name)
}

/// What the `served` URI or prompt name stands for under `overrides`: the
/// entry renamed to it, else itself unless it was renamed away.
fn original<'s>(overrides: &'s BTreeMap<String, Override>, served: &'s str) -> Option<&'s str> {
    if let Some((entry, _)) = overrides
        .iter()
        .find(|(_, o)| o.name.as_deref() == Some(served))
    {
        return Some(entry);
    }
    match overrides.get(served).and_then(|o| o.name.as_deref()) {
        Some(_) => None,
        None => Some(served),
    }
}

/// Whether `name` is another entry's served name under `overrides`, so the
/// offering at `name` itself is not served.
fn shadowed(overrides: &BTreeMap<String, Override>, name: &str) -> bool {
    overrides
        .iter()
        .any(|(entry, o)| entry != name && o.name.as_deref() == Some(name))
}

/// The tool `tool` of the plugin whose block is `block`, under the name
/// the registry would serve it.
fn own<C>(registry: &Registry<C>, block: &str, tool: &str) -> Option<ToolRef> {
    let plugin = registry
        .plugins()
        .find(|p| p.settings.name == block)?
        .clone();
    let spec = plugin.tools.iter().find(|s| s.name == tool)?.clone();
    Some(ToolRef {
        name: served_name(&plugin.settings, &spec.name),
        plugin,
        spec,
    })
}

/// Whether a profile's `select` picks `target` of `plugin`. It reads only
/// what is served (checked at load), so it cannot fail for lack of a
/// caller; if it fails anyway, nothing is picked.
fn selects(select: &Condition, plugin: &Plugin, target: Target<'_>) -> bool {
    let facts = Facts {
        identity: None,
        transport: "",
        era: "",
        method: "",
        profile: "",
        plugin,
        target,
        arguments: None,
        signer: None,
    };
    condition_holds(select, &facts).unwrap_or(false)
}
