//! `[[profiles]]`: the raw tables and their resolution into
//! [`crate::catalog::Profile`] (ADR 0040).
//!
//! Conditions are compiled here, at load, with the policy rules'
//! machinery: one that does not compile refuses the whole file with its
//! line and column, as a rule does.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use anyhow::{Result, anyhow};
use serde::Deserialize;

use crate::catalog::{Override, Profile, ToolPick};
use crate::rules::Condition;

/// The names of the meta-tools a discovery profile lists
/// ([`crate::catalog`]); no alias may take one.
pub const META_TOOLS: [&str; 3] = ["find_tools", "describe_tool", "call_tool"];

/// The longest URI a profile may serve a resource at: well under the
/// longest URI a session may subscribe to, so every alias can be.
const MAX_ALIAS_URI_BYTES: usize = 2048;

/// One `[[profiles]]` entry, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProfile {
    /// `name`: the path segment (`/mcp/NAME`) and `serve --profile NAME`.
    pub name: String,
    /// `tools`: tools by served name or `block/tool`, in the order served.
    #[serde(default)]
    pub tools: Vec<String>,
    /// `select`: a CEL condition over `plugin`, `tool`, `resource` and
    /// `prompt` picking more (after `tools`, by name).
    pub select: Option<toml::Spanned<String>>,
    /// `resources`: resource URIs and URI templates.
    #[serde(default)]
    pub resources: Vec<String>,
    /// `prompts`: prompts by served name.
    #[serde(default)]
    pub prompts: Vec<String>,
    /// `hide`: a CEL condition hiding what it holds from a caller.
    pub hide: Option<toml::Spanned<String>>,
    /// `discovery`: list meta-tools instead of the tools.
    #[serde(default)]
    pub discovery: bool,
    /// `[profiles.tool.ENTRY]`: a tool's served name, title, description.
    #[serde(default)]
    pub tool: BTreeMap<String, RawOverride>,
    /// `[profiles.resource."URI"]`: a resource's served URI, title,
    /// description.
    #[serde(default)]
    pub resource: BTreeMap<String, RawOverride>,
    /// `[profiles.prompt.NAME]`: a prompt's served name, title,
    /// description.
    #[serde(default)]
    pub prompt: BTreeMap<String, RawOverride>,
}

/// `[profiles.tool.ENTRY]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOverride {
    /// `as`: the name served.
    #[serde(rename = "as")]
    pub name: Option<String>,
    /// `title`.
    pub title: Option<String>,
    /// `description`.
    pub description: Option<String>,
}

/// What a profile's `select` may read: only what is served, so the same
/// tools are picked for every caller.
const SELECT_READS: [&str; 4] = ["plugin", "tool", "resource", "prompt"];

/// Resolves `[[profiles]]`; `text` is the file's, for the line and column
/// of a condition that does not compile.
pub fn resolve_profiles(raw: Vec<RawProfile>, text: Option<&str>) -> Result<Vec<Profile>> {
    let mut profiles: Vec<Profile> = Vec::with_capacity(raw.len());
    for (i, raw) in raw.into_iter().enumerate() {
        let index = i + 1;
        let at = |key: &str| format!("`profiles` entry {index} ({:?}), `{key}`", raw.name);
        let name_ok = !raw.name.is_empty()
            && raw.name.len() <= 64
            && raw
                .name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if !name_ok {
            return Err(anyhow!(
                "{}: use 1 to 64 characters of a-z 0-9 - _ (it is the path /mcp/NAME)",
                at("name")
            ));
        }
        if profiles.iter().any(|p| p.name == raw.name) {
            return Err(anyhow!(
                "{}: another profile has this name; give each its own",
                at("name")
            ));
        }
        let compile = |key: &str, written: &toml::Spanned<String>| {
            Condition::compile(written.get_ref())
                .map(Arc::new)
                .map_err(|e| anyhow!("{}: {}", at(key), super::policy::located(&e, written, text)))
        };
        let select = raw
            .select
            .as_ref()
            .map(|s| compile("select", s))
            .transpose()?;
        if let Some(select) = &select
            && let Some(read) = crate::rules::condition::VARIABLES
                .iter()
                .find(|v| !SELECT_READS.contains(v) && select.reads(v))
        {
            return Err(anyhow!(
                "{}: reads `{read}`, but a profile picks the same tools for every caller, so \
                 `select` reads only `plugin`, `tool`, `resource` and `prompt`; hide per caller \
                 with `hide`",
                at("select")
            ));
        }
        let hide = raw.hide.as_ref().map(|h| compile("hide", h)).transpose()?;
        if let Some(hide) = &hide
            && (hide.reads("args") || hide.reads("request"))
        {
            return Err(anyhow!(
                "{}: decides what a caller is shown at all, before any request names arguments \
                 or a method, so it may not read `args` or `request`",
                at("hide")
            ));
        }
        let mut overrides = BTreeMap::new();
        let mut served: BTreeSet<String> = BTreeSet::new();
        for (entry, o) in raw.tool {
            if select.is_none() && !raw.tools.contains(&entry) {
                return Err(anyhow!(
                    "{}: names no entry of `tools` (and the profile has no `select`); write the \
                     entry as `tools` does (a served name or block/tool)",
                    at(&format!("tool.{entry}"))
                ));
            }
            if let Some(name) = &o.name {
                let valid = (1..=128).contains(&name.len())
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
                if !valid {
                    return Err(anyhow!(
                        "{}: {name:?} is no valid tool name; use 1 to 128 characters of A-Z a-z \
                         0-9 _ . -",
                        at(&format!("tool.{entry}.as"))
                    ));
                }
                if !served.insert(name.clone()) {
                    return Err(anyhow!(
                        "{}: another tool of the profile is served as {name:?} already",
                        at(&format!("tool.{entry}.as"))
                    ));
                }
                if raw.discovery && META_TOOLS.contains(&name.as_str()) {
                    return Err(anyhow!(
                        "{}: {name:?} is a meta-tool's name in a discovery profile",
                        at(&format!("tool.{entry}.as"))
                    ));
                }
            }
            overrides.insert(
                entry,
                Override {
                    name: o.name,
                    title: o.title,
                    description: o.description,
                },
            );
        }
        let resource_overrides =
            resolve_offer_overrides(raw.resource, "resource", &raw.resources, &select, &at)?;
        let prompt_overrides =
            resolve_offer_overrides(raw.prompt, "prompt", &raw.prompts, &select, &at)?;
        profiles.push(Profile {
            tools: raw.tools.iter().map(|t| ToolPick::parse(t)).collect(),
            name: raw.name,
            select,
            resources: raw.resources.into_iter().collect(),
            prompts: raw.prompts.into_iter().collect(),
            hide,
            overrides,
            resource_overrides,
            prompt_overrides,
            discovery: raw.discovery,
        });
    }
    Ok(profiles)
}

/// Resolves a profile's `[profiles.resource."URI"]` (`kind` "resource")
/// or `[profiles.prompt.NAME]` (`kind` "prompt") tables: each names an
/// entry of `named` (or the profile selects), a resource is no URI
/// template, and no two are served under one URI or name, nor one under
/// another entry's.
fn resolve_offer_overrides(
    raw: BTreeMap<String, RawOverride>,
    kind: &str,
    named: &[String],
    select: &Option<Arc<Condition>>,
    at: &dyn Fn(&str) -> String,
) -> Result<BTreeMap<String, Override>> {
    let list = if kind == "resource" {
        "resources"
    } else {
        "prompts"
    };
    let mut overrides = BTreeMap::new();
    let mut served: BTreeSet<String> = BTreeSet::new();
    for (entry, o) in raw {
        let key = format!("{kind}.{entry:?}");
        if select.is_none() && !named.contains(&entry) {
            return Err(anyhow!(
                "{}: names no entry of `{list}` (and the profile has no `select`); write it as \
                 `{list}` does",
                at(&key)
            ));
        }
        if kind == "resource" && entry.contains('{') {
            return Err(anyhow!(
                "{}: is a URI template, which a profile serves as its component writes it; \
                 rename resources at fixed URIs only",
                at(&key)
            ));
        }
        if let Some(name) = &o.name {
            let valid = if kind == "resource" {
                (1..=MAX_ALIAS_URI_BYTES).contains(&name.len())
                    && name
                        .split_once(':')
                        .is_some_and(|(scheme, _)| !scheme.is_empty())
                    && !name.contains(['{', '}'])
                    && !name.chars().any(char::is_whitespace)
            } else {
                (1..=128).contains(&name.len())
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
            };
            if !valid {
                let rule = if kind == "resource" {
                    "write an absolute URI with a scheme (\"support://statuses\"), without \
                     spaces or braces"
                } else {
                    "use 1 to 128 characters of A-Z a-z 0-9 _ . -"
                };
                return Err(anyhow!(
                    "{}: {name:?} is not valid; {rule}",
                    at(&format!("{key}.as"))
                ));
            }
            if !served.insert(name.clone()) || (name != &entry && named.contains(name)) {
                return Err(anyhow!(
                    "{}: another {kind} of the profile is served as {name:?} already",
                    at(&format!("{key}.as"))
                ));
            }
        }
        overrides.insert(
            entry,
            Override {
                name: o.name,
                title: o.title,
                description: o.description,
            },
        );
    }
    Ok(overrides)
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    fn error(text: &str) -> String {
        format!("{:#}", Config::parse(text).unwrap_err())
    }

    #[test]
    fn a_select_that_reads_the_caller_is_refused_naming_the_key() {
        let e = error("[[profiles]]\nname = \"p\"\nselect = 'identity.subject == \"a\"'\n");
        assert!(e.contains("`profiles` entry 1 (\"p\"), `select`"), "{e}");
        assert!(e.contains("reads `identity`"), "{e}");
    }

    #[test]
    fn two_tools_served_under_one_name_or_a_bad_profile_name_are_refused() {
        let e = error(
            "[[profiles]]\nname = \"p\"\ntools = [\"a\", \"b\"]\n[profiles.tool.a]\nas = \"x\"\n\
             [profiles.tool.b]\nas = \"x\"\n",
        );
        assert!(e.contains("served as \"x\" already"), "{e}");
        assert!(error("[[profiles]]\nname = \"Sales Team\"\n").contains("a-z 0-9 - _"));
        let e =
            error("[[profiles]]\nname = \"p\"\ntools = [\"a\"]\n[profiles.tool.b]\nas = \"x\"\n");
        assert!(e.contains("names no entry of `tools`"), "{e}");
    }

    #[test]
    fn a_renamed_template_or_two_resources_at_one_uri_are_refused() {
        let e = error(
            "[[profiles]]\nname = \"p\"\nresources = [\"k://items/{sku}\"]\n\
             [profiles.resource.\"k://items/{sku}\"]\nas = \"x://y\"\n",
        );
        assert!(e.contains("is a URI template"), "{e}");
        let e = error(
            "[[profiles]]\nname = \"p\"\nresources = [\"a://1\", \"a://2\"]\n\
             [profiles.resource.\"a://1\"]\nas = \"a://2\"\n",
        );
        assert!(e.contains("served as \"a://2\" already"), "{e}");
        let e = error(
            "[[profiles]]\nname = \"p\"\nprompts = [\"a\"]\n[profiles.prompt.a]\nas = \"b c\"\n",
        );
        assert!(e.contains("`prompt.\"a\".as`"), "{e}");
    }

    #[test]
    fn a_condition_that_does_not_compile_is_placed_in_the_file() {
        let e = error("[[profiles]]\nname = \"p\"\nhide = 'tool.name =='\n");
        assert!(e.contains("`hide`") && e.contains("line 3"), "{e}");
    }
}
