//! What a `toolhost:plugin@0.2.0` component offers beside tools (ADR 0017):
//! resources at fixed URIs, resource templates and prompts, checked at load.
//!
//! **Which contract a component targets** is read from its exports: one that
//! exports `toolhost:plugin/resources@0.2.0` targets 0.2.0 and must export
//! `prompts` and `completion` of 0.2.0 too; one that does not targets 0.1.0
//! ([`Contract`]). What a 0.2 component offers is what its lists hold.
//!
//! **Loading** asks each list once, in the instance that lists the tools,
//! under the same listing limits: at most `limits.tools_per_component`
//! entries per list and `limits.definition_bytes` per entry.
//!
//! **Running** a read, get or completion is [`crate::call::offer`]'s job;
//! **which plugin serves a URI**, and whether that changed between two
//! registries, is [`crate::registry`]'s ([`offered_by`](crate::registry::offered_by),
//! [`offer_changed`](crate::registry::offer_changed)).
//!
//! **Template variables** are percent-decoded before they reach the guest
//! ([`decode_variables`]): RFC 6570 level 1 expands a `{var}` value
//! percent-encoded, so `katana://items/A%2FB-1` holds the SKU `A/B-1`. A
//! value that is not UTF-8 once decoded is refused before any guest code
//! runs.
//!
//! **Architecture invariant:** this module holds definitions only: it never
//! names `plugin`, `registry` or `call` (a loaded [`Plugin`](crate::plugin::Plugin)
//! holds its [`Offers`]; running them is above it).

use std::collections::HashSet;
use std::sync::Arc;

use thiserror::Error;
use wasmtime::Store;
use wasmtime::component::InstancePre;

use crate::bindings::v0_2::content::{PromptDefinition, ResourceDefinition, ResourceTemplate};
use crate::bindings::v0_2::{completion, prompts, resources};
use crate::imports::CallState;
use crate::names::is_valid_name;
use crate::settings::Limits;

/// The version of the WIT contract a component targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contract {
    /// `toolhost:plugin@0.1.0`: tools only.
    V0_1,
    /// `toolhost:plugin@0.2.0`: tools, resources, templates, prompts,
    /// completion.
    V0_2,
    /// `toolhost:plugin@0.3.0`: 0.2, with content blocks in tool results
    /// and prompts, and forms (ADR 0035).
    V0_3,
}

impl Contract {
    /// The package version, e.g. `0.2.0`.
    pub fn version(self) -> &'static str {
        match self {
            Contract::V0_1 => "0.1.0",
            Contract::V0_2 => "0.2.0",
            Contract::V0_3 => "0.3.0",
        }
    }
}

/// Where a component's `prompts` export is: 0.2's, or 0.3's whose
/// messages hold any content block.
pub(crate) enum PromptsExport {
    /// `prompts@0.2.0`.
    V0_2(prompts::GuestIndices),
    /// `prompts@0.3.0`.
    V0_3(crate::bindings::v0_3::prompts::GuestIndices),
}

/// Where a 0.2 or 0.3 component's exports are, found once at load.
pub struct Exports {
    /// `resources@0.2.0`.
    pub(crate) resources: resources::GuestIndices,
    /// `prompts@0.2.0` or `prompts@0.3.0`.
    pub(crate) prompts: PromptsExport,
    /// `completion@0.2.0`.
    pub(crate) completion: completion::GuestIndices,
}

/// A resource template, checked, with its variables in order.
#[derive(Debug, Clone)]
pub struct TemplateSpec {
    /// The definition as the component gave it.
    pub definition: ResourceTemplate,
    /// The names of its `{variable}` expressions, in order.
    pub variables: Vec<String>,
}

/// What a 0.2 component offers beside tools, checked.
pub struct Offers {
    /// Resources at fixed URIs, in the component's order.
    pub resources: Vec<Arc<ResourceDefinition>>,
    /// Resource templates, in the component's order.
    pub templates: Vec<Arc<TemplateSpec>>,
    /// Prompts, in the component's order.
    pub prompts: Vec<Arc<PromptDefinition>>,
    exports: Exports,
}

impl Offers {
    /// Where the component's 0.2.0 exports are, to call them.
    pub(crate) fn exports(&self) -> &Exports {
        &self.exports
    }

    /// Whether it offers nothing beside tools.
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.templates.is_empty() && self.prompts.is_empty()
    }

    /// Whether any prompt argument or template variable is completable.
    pub fn completes(&self) -> bool {
        self.prompts
            .iter()
            .any(|p| p.arguments.iter().any(|a| a.completable))
            || self
                .templates
                .iter()
                .any(|t| !t.definition.completable.is_empty())
    }

    /// What it offers in words, e.g. `2 resources, 1 template, completion`.
    pub fn summary(&self) -> String {
        let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
        let mut parts = vec![
            plural(self.resources.len(), "resource"),
            plural(self.templates.len(), "template"),
            plural(self.prompts.len(), "prompt"),
        ];
        if self.completes() {
            parts.push("completion".into());
        }
        parts.join(", ")
    }
}

/// Why a 0.2 component's offers were refused at load.
#[derive(Debug, Error)]
pub enum OfferLoadError {
    /// It exports part of 0.2.0 only.
    #[error(
        "it exports part of the toolhost:plugin@0.2.0 or 0.3.0 world but not all of it (rebuild it with toolhost-sdk): {0}"
    )]
    Incomplete(String),
    /// Listing failed (a trap, too much data).
    #[error("listing its {what} failed: {why}")]
    List {
        /// `resources`, `templates` or `prompts`.
        what: &'static str,
        /// Why.
        why: String,
    },
    /// A list holds more entries than `limits.tools_per_component`.
    #[error(
        "it lists {count} {what}, more than limits.tools_per_component ({limit}) allows per list"
    )]
    TooMany {
        /// `resources`, `templates` or `prompts`.
        what: &'static str,
        /// How many.
        count: usize,
        /// The limit.
        limit: u32,
    },
    /// One definition breaks a rule.
    #[error("{0}")]
    Invalid(String),
}

/// Finds the 0.2.0 exports of the component behind `pre` (with 0.3.0's
/// `prompts` instead of 0.2.0's when `v0_3`, a component that exports
/// `tools@0.3.0`): `None` for a 0.1.0 component.
pub fn detect(pre: &InstancePre<CallState>, v0_3: bool) -> Result<Option<Exports>, OfferLoadError> {
    let incomplete = |e: wasmtime::Error| OfferLoadError::Incomplete(format!("{e:#}"));
    let resources = match resources::GuestIndices::new(pre) {
        Ok(resources) => resources,
        Err(e) if v0_3 => return Err(incomplete(e)),
        Err(_) => return Ok(None),
    };
    let prompts = if v0_3 {
        PromptsExport::V0_3(
            crate::bindings::v0_3::prompts::GuestIndices::new(pre).map_err(incomplete)?,
        )
    } else {
        PromptsExport::V0_2(prompts::GuestIndices::new(pre).map_err(incomplete)?)
    };
    Ok(Some(Exports {
        resources,
        prompts,
        completion: completion::GuestIndices::new(pre).map_err(incomplete)?,
    }))
}

/// Asks the instance `instance` in `store` for its lists and checks them
/// against `limits`. `refuel` sets the store's copy budget before each list.
pub(crate) async fn list(
    exports: Exports,
    store: &mut Store<CallState>,
    instance: &wasmtime::component::Instance,
    limits: &Limits,
    refuel: impl Fn(&mut Store<CallState>),
) -> Result<Offers, OfferLoadError> {
    let failed = |what: &'static str| {
        move |e: wasmtime::Error| OfferLoadError::List {
            what,
            why: format!("{e:#}"),
        }
    };
    let guest = exports
        .resources
        .load(&mut *store, instance)
        .map_err(failed("resources"))?;
    refuel(store);
    let resources = guest
        .call_list(&mut *store)
        .await
        .map_err(failed("resources"))?;
    refuel(store);
    let templates = guest
        .call_templates(&mut *store)
        .await
        .map_err(failed("templates"))?;
    refuel(store);
    let prompts = match &exports.prompts {
        PromptsExport::V0_2(indices) => {
            let guest = indices
                .load(&mut *store, instance)
                .map_err(failed("prompts"))?;
            guest.call_list(&mut *store).await
        }
        PromptsExport::V0_3(indices) => {
            let guest = indices
                .load(&mut *store, instance)
                .map_err(failed("prompts"))?;
            guest.call_list(&mut *store).await
        }
    }
    .map_err(failed("prompts"))?;
    check(resources, templates, prompts, limits, exports)
}

/// Checks the three lists against `limits` and MCP's rules.
fn check(
    resources: Vec<ResourceDefinition>,
    templates: Vec<ResourceTemplate>,
    prompts: Vec<PromptDefinition>,
    limits: &Limits,
    exports: Exports,
) -> Result<Offers, OfferLoadError> {
    for (what, count) in [
        ("resources", resources.len()),
        ("templates", templates.len()),
        ("prompts", prompts.len()),
    ] {
        if count > limits.tools_per_component as usize {
            return Err(OfferLoadError::TooMany {
                what,
                count,
                limit: limits.tools_per_component,
            });
        }
    }
    let invalid = |text: String| OfferLoadError::Invalid(text);
    let too_large = |what: &str, bytes: usize| {
        invalid(format!(
            "{what} is {bytes} bytes, more than limits.definition_bytes ({}) allows",
            limits.definition_bytes
        ))
    };
    let text_len =
        |texts: &[Option<&String>]| -> usize { texts.iter().flatten().map(|t| t.len()).sum() };

    let mut uris = HashSet::new();
    for r in &resources {
        let what = format!("resource {}", shown(&r.uri));
        let bytes = r.uri.len()
            + r.name.len()
            + text_len(&[
                r.title.as_ref(),
                r.description.as_ref(),
                r.mime_type.as_ref(),
            ]);
        if bytes as u64 > limits.definition_bytes {
            return Err(too_large(&what, bytes));
        }
        check_uri(&r.uri).map_err(|why| invalid(format!("{what}: {why}")))?;
        if r.name.is_empty() {
            return Err(invalid(format!("{what} has an empty name")));
        }
        if !uris.insert(r.uri.as_str()) {
            return Err(invalid(format!("{what} is listed twice by the component")));
        }
    }

    let mut checked_templates = Vec::with_capacity(templates.len());
    let mut seen = HashSet::new();
    for t in templates {
        let what = format!("resource template {}", shown(&t.uri_template));
        let bytes = t.uri_template.len()
            + t.name.len()
            + text_len(&[
                t.title.as_ref(),
                t.description.as_ref(),
                t.mime_type.as_ref(),
            ])
            + t.completable.iter().map(String::len).sum::<usize>();
        if bytes as u64 > limits.definition_bytes {
            return Err(too_large(&what, bytes));
        }
        let variables =
            template_variables(&t.uri_template).map_err(|why| invalid(format!("{what}: {why}")))?;
        if t.name.is_empty() {
            return Err(invalid(format!("{what} has an empty name")));
        }
        if let Some(unknown) = t.completable.iter().find(|c| !variables.contains(c)) {
            return Err(invalid(format!(
                "{what} marks {} completable, which is not one of its variables",
                shown(unknown)
            )));
        }
        if !seen.insert(t.uri_template.clone()) {
            return Err(invalid(format!("{what} is listed twice by the component")));
        }
        checked_templates.push(Arc::new(TemplateSpec {
            definition: t,
            variables,
        }));
    }

    let mut names = HashSet::new();
    for p in &prompts {
        let what = format!("prompt {}", shown(&p.name));
        let bytes = p.name.len()
            + text_len(&[p.title.as_ref(), p.description.as_ref()])
            + p.arguments
                .iter()
                .map(|a| a.name.len() + text_len(&[a.title.as_ref(), a.description.as_ref()]))
                .sum::<usize>();
        if bytes as u64 > limits.definition_bytes {
            return Err(too_large(&what, bytes));
        }
        if !is_valid_name(&p.name) {
            return Err(invalid(format!(
                "{what}: a prompt name is 1 to 128 characters of A-Z a-z 0-9 _ . -"
            )));
        }
        if !names.insert(p.name.as_str()) {
            return Err(invalid(format!("{what} is listed twice by the component")));
        }
        let mut arguments = HashSet::new();
        for a in &p.arguments {
            if a.name.is_empty() || !arguments.insert(a.name.as_str()) {
                return Err(invalid(format!(
                    "{what}: argument {} is empty or listed twice",
                    shown(&a.name)
                )));
            }
        }
    }

    Ok(Offers {
        resources: resources.into_iter().map(Arc::new).collect(),
        templates: checked_templates,
        prompts: prompts.into_iter().map(Arc::new).collect(),
        exports,
    })
}

/// `text` as shown in errors: quoted, at most 64 characters.
fn shown(text: &str) -> String {
    match text.char_indices().nth(64) {
        Some((end, _)) => format!("{:?}…", &text[..end]),
        None => format!("{text:?}"),
    }
}

/// Checks that `uri` is an absolute URI.
fn check_uri(uri: &str) -> Result<(), String> {
    url::Url::parse(uri)
        .map(|_| ())
        .map_err(|e| format!("not an absolute URI ({e})"))
}

/// The variables of an RFC 6570 level 1 URI template, in order: each
/// `{name}` (letters, digits, `_`) must fill a whole path segment, so that
/// a URI matches at most one way. Operators (`{+x}`, `{/x}`, …) are refused.
pub fn template_variables(template: &str) -> Result<Vec<String>, String> {
    let mut variables = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let close = rest[open..].find('}').ok_or("a `{` has no closing `}`")? + open;
        let name = &rest[open + 1..close];
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(format!(
                "{{{name}}} is not a level 1 variable (letters, digits and _ only)"
            ));
        }
        let before = rest[..open].chars().last();
        let after = rest[close + 1..].chars().next();
        if before != Some('/') || !matches!(after, None | Some('/')) {
            return Err(format!(
                "{{{name}}} must fill a whole path segment (between `/`s, or at the end)"
            ));
        }
        if variables.iter().any(|v| v == name) {
            return Err(format!("{{{name}}} appears twice"));
        }
        variables.push(name.to_string());
        rest = &rest[close + 1..];
    }
    if rest.contains('}') {
        return Err("a `}` has no opening `{`".into());
    }
    check_uri(&template.replace(['{', '}'], ""))?;
    Ok(variables)
}

/// The variables' values if `uri` matches `uri_template` (one checked by
/// [`template_variables`]): every literal segment equal, every variable a
/// non-empty segment.
pub fn match_template(uri_template: &str, uri: &str) -> Option<Vec<(String, String)>> {
    let mut template = uri_template.split('/');
    let mut given = uri.split('/');
    let mut variables = Vec::new();
    loop {
        match (template.next(), given.next()) {
            (None, None) => return Some(variables),
            (Some(t), Some(g)) => {
                if let Some(name) = t.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
                    if g.is_empty() {
                        return None;
                    }
                    variables.push((name.to_string(), g.to_string()));
                } else if t != g {
                    return None;
                }
            }
            _ => return None,
        }
    }
}

/// A template variable whose value is not UTF-8 once percent-decoded.
#[derive(Debug, Error)]
#[error(
    "the value {value:?} of the URI template variable {{{name}}} is not UTF-8 once percent-decoded; percent-encode the UTF-8 bytes of the value (RFC 3986)"
)]
pub struct UndecodableVariable {
    /// The variable's name.
    pub name: String,
    /// Its value as it appears in the URI.
    pub value: String,
}

/// The values of a template's variables as the guest receives them:
/// percent-decoded (RFC 6570 level 1 percent-encodes each value it
/// expands), so `A%2FB-1` becomes `A/B-1`.
pub fn decode_variables(
    variables: Vec<(String, String)>,
) -> Result<Vec<(String, String)>, UndecodableVariable> {
    variables
        .into_iter()
        .map(
            |(name, value)| match percent_encoding::percent_decode_str(&value).decode_utf8() {
                Ok(decoded) => Ok((name, decoded.into_owned())),
                Err(_) => Err(UndecodableVariable { name, value }),
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_one_variables_fill_whole_segments() {
        assert_eq!(template_variables("katana://items/{sku}").unwrap(), ["sku"]);
        assert_eq!(template_variables("x://a/{b}/c/{d}").unwrap(), ["b", "d"]);
        assert!(template_variables("x://a/{+b}").is_err());
        assert!(template_variables("x://a/b{c}").is_err());
        assert!(template_variables("x://a/{c}.json").is_err());
        assert!(template_variables("x://a/{c}/{c}").is_err());
        assert!(template_variables("x://a/{c").is_err());
        assert!(template_variables("no scheme/{c}").is_err());
    }

    #[test]
    fn a_uri_matches_a_template_segment_by_segment() {
        let t = "katana://items/{sku}";
        assert_eq!(
            match_template(t, "katana://items/KNF-8IN").unwrap(),
            [("sku".to_string(), "KNF-8IN".to_string())]
        );
        assert!(match_template(t, "katana://items/").is_none());
        assert!(match_template(t, "katana://items/a/b").is_none());
        assert!(match_template(t, "katana://orders/a").is_none());
    }

    #[test]
    fn variables_are_percent_decoded_and_must_be_utf8() {
        let decoded = decode_variables(vec![("sku".into(), "A%2FB-1%20%C3%A9".into())]).unwrap();
        assert_eq!(decoded, [("sku".to_string(), "A/B-1 é".to_string())]);
        let error = decode_variables(vec![("sku".into(), "%FF".into())]).unwrap_err();
        assert_eq!(error.name, "sku");
        assert!(error.to_string().contains("{sku}"), "{error}");
    }
}
