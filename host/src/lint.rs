//! `toolhost check`: lint a component's tools against the project's tool
//! design guidelines (LLM-first tools: titles, descriptions that say what
//! and when, every input field described with an example, enums for finite
//! sets, annotations that match behaviour, an output schema, only formats
//! JSON Schema 2020-12 defines).
//!
//! What a 0.2 component offers beside tools ([`lint_offers`]) is held to
//! the rules that carry over: a model picks resources, templates and
//! prompts by their descriptions as it picks tools, so each needs a
//! description whose first sentence says what it holds (an error if not),
//! a title for people and, for contents, a MIME type (warnings); a
//! template's description says what each variable is (a warning), and
//! every prompt argument is described (an error), as every input field is.
//!
//! Each [`Finding`] names the tool (or the resource's URI, the template,
//! the prompt), what is wrong and how to fix it. Errors fail the check;
//! warnings are advice.

use serde_json::{Map, Value};

use crate::bindings::v0_2::content::{PromptDefinition, ResourceDefinition};
use crate::offers::{Offers, TemplateSpec};
use crate::spec::ToolSpec;

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Advice.
    Warning,
    /// Fails the check.
    Error,
}

/// One problem with one tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// How serious it is.
    pub severity: Severity,
    /// The tool.
    pub tool: String,
    /// What is wrong.
    pub problem: String,
    /// How to fix it.
    pub fix: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let level = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(
            f,
            "{level}[{}]: {}\n  fix: {}",
            self.tool, self.problem, self.fix
        )
    }
}

/// Verbs that name tools which only read.
const READ_VERBS: &[&str] = &[
    "list", "get", "search", "lookup", "find", "read", "fetch", "query", "verify",
];
/// Verbs that name tools which delete.
const DELETE_VERBS: &[&str] = &["delete", "remove", "destroy", "purge"];
/// Words that tell a model when to use a tool.
const WHEN_CUES: &[&str] = &[
    "use ", "use it", "call ", "when ", "before ", "after ", "to ",
];

/// Lints one tool.
pub fn lint(spec: &ToolSpec) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut push = |severity, problem: String, fix: &str| {
        findings.push(Finding {
            severity,
            tool: spec.name.clone(),
            problem,
            fix: fix.to_string(),
        });
    };

    let first = first_sentence(&spec.description);
    if first.chars().count() < 20 {
        push(
            Severity::Error,
            format!(
                "the description's first sentence is too short to say what the tool does: {first:?}"
            ),
            "start the description with one sentence saying what the tool does, then when to use it",
        );
    }
    let lower = spec.description.to_lowercase();
    if !WHEN_CUES.iter().any(|c| lower.contains(c)) {
        push(
            Severity::Warning,
            "the description does not say when to use the tool".into(),
            "add when to use it, e.g. \"Use it before update_order_status.\"",
        );
    }

    let verbs = verbs(&spec.name);
    let named = |list: &[&str]| verbs.iter().any(|v| list.contains(&v.as_str()));
    let a = &spec.annotations;
    if named(READ_VERBS) && !a.read_only {
        push(
            Severity::Error,
            format!(
                "a tool named {:?} reads, but is not annotated read-only",
                spec.name
            ),
            "set read_only (Annotations::READ_ONLY), or rename the tool after what it changes",
        );
    }
    if named(DELETE_VERBS) && !(a.destructive && a.idempotent && !a.read_only) {
        push(
            Severity::Error,
            format!(
                "a tool named {:?} deletes: it must be destructive and idempotent, not read-only",
                spec.name
            ),
            "use Annotations::mutating(true, true)",
        );
    }
    let properties = spec
        .input_schema
        .get("properties")
        .and_then(Value::as_object);
    if properties.is_some_and(|p| p.contains_key("confirm")) && a.read_only {
        push(
            Severity::Error,
            "the tool takes a `confirm` parameter but is annotated read-only".into(),
            "a tool that asks for confirmation changes something: use Annotations::mutating(..)",
        );
    }
    if a.read_only && a.destructive {
        push(
            Severity::Error,
            "the tool is annotated both read-only and destructive".into(),
            "a read-only tool destroys nothing: set destructive to false",
        );
    }
    if spec.output_schema.is_none() {
        push(
            Severity::Error,
            "the tool declares no output schema".into(),
            "declare the output type (toolhost-sdk does this from `Tool::Output`)",
        );
    }

    if !spec.nonstandard_formats.is_empty() {
        push(
            Severity::Warning,
            format!(
                "the schemas use formats JSON Schema 2020-12 does not define, which clients' validators warn about; the host publishes the schemas without them: {}",
                spec.nonstandard_formats.join(", ")
            ),
            "use only standard formats and express an integer's width as minimum/maximum (toolhost-sdk does this)",
        );
    }

    let mut fields = Vec::new();
    if let Some(props) = properties {
        walk_fields("", props, &mut fields);
    }
    for (path, schema) in fields {
        if schema
            .get("description")
            .and_then(Value::as_str)
            .is_none_or(|d| d.trim().is_empty())
        {
            push(
                Severity::Error,
                format!("input field `{path}` has no description"),
                "document the field (a doc comment on the struct field)",
            );
        }
        let has_example = schema
            .get("examples")
            .and_then(Value::as_array)
            .is_some_and(|e| !e.is_empty())
            || schema.get("example").is_some();
        if !has_example {
            push(
                Severity::Error,
                format!("input field `{path}` has no example"),
                "add one, e.g. #[schemars(example = &\"st000003\")]",
            );
        }
        let described = schema
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_lowercase();
        let enumerated = schema.get("enum").is_some()
            || schema.get("const").is_some()
            || schema.get("items").and_then(|i| i.get("enum")).is_some();
        if !enumerated && lists_values_in_prose(&described) {
            push(
                Severity::Warning,
                format!("input field `{path}` lists its values in prose"),
                "make it an enum so clients and models see the allowed values",
            );
        }
    }
    findings
}

/// Lints what a 0.2 component offers beside tools: each resource,
/// resource template and prompt (see the module doc for the rules).
pub fn lint_offers(offers: &Offers) -> Vec<Finding> {
    let mut findings = Vec::new();
    for r in &offers.resources {
        findings.extend(lint_resource(r));
    }
    for t in &offers.templates {
        findings.extend(lint_template(t));
    }
    for p in &offers.prompts {
        findings.extend(lint_prompt(p));
    }
    findings
}

/// Lints one resource at a fixed URI.
pub fn lint_resource(r: &ResourceDefinition) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut offer = Offer::new("resource", &r.uri, &mut findings);
    offer.described(r.title.as_deref(), r.description.as_deref());
    offer.typed(r.mime_type.as_deref());
    findings
}

/// Lints one resource template.
pub fn lint_template(t: &TemplateSpec) -> Vec<Finding> {
    let mut findings = Vec::new();
    let d = &t.definition;
    let mut offer = Offer::new("resource template", &d.uri_template, &mut findings);
    offer.described(d.title.as_deref(), d.description.as_deref());
    offer.typed(d.mime_type.as_deref());
    let description = d.description.as_deref().unwrap_or("").to_lowercase();
    for variable in &t.variables {
        let spoken = variable.to_lowercase().replace('_', " ");
        if !description.contains(&variable.to_lowercase()) && !description.contains(&spoken) {
            offer.push(
                Severity::Warning,
                format!("the description does not say what {{{variable}}} is"),
                "say what the variable holds and where a value comes from, e.g. \"One item by SKU (search_items finds SKUs).\"",
            );
        }
    }
    findings
}

/// Lints one prompt.
pub fn lint_prompt(p: &PromptDefinition) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut offer = Offer::new("prompt", &p.name, &mut findings);
    offer.described(p.title.as_deref(), p.description.as_deref());
    for a in &p.arguments {
        if a.description.as_deref().is_none_or(|d| d.trim().is_empty()) {
            offer.push(
                Severity::Error,
                format!("argument `{}` has no description", a.name),
                "say what to give, with an example (a doc comment on the arguments struct's field)",
            );
        }
    }
    findings
}

/// Findings about one resource, template or prompt.
struct Offer<'a> {
    /// `resource`, `resource template`, `prompt`.
    what: &'static str,
    /// Its URI, URI template or name.
    name: &'a str,
    findings: &'a mut Vec<Finding>,
}

impl<'a> Offer<'a> {
    fn new(what: &'static str, name: &'a str, findings: &'a mut Vec<Finding>) -> Offer<'a> {
        Offer {
            what,
            name,
            findings,
        }
    }

    fn push(&mut self, severity: Severity, problem: String, fix: &str) {
        self.findings.push(Finding {
            severity,
            tool: self.name.to_string(),
            problem,
            fix: fix.to_string(),
        });
    }

    /// A description whose first sentence says what it is, and a title.
    fn described(&mut self, title: Option<&str>, description: Option<&str>) {
        let what = self.what;
        match description.map(str::trim).filter(|d| !d.is_empty()) {
            None => self.push(
                Severity::Error,
                format!("the {what} has no description"),
                "describe what it holds and when to use it: a model picks by the description",
            ),
            Some(description) => {
                let first = first_sentence(description);
                if first.chars().count() < 20 {
                    self.push(
                        Severity::Error,
                        format!(
                            "the description's first sentence is too short to say what the {what} holds: {first:?}"
                        ),
                        "start the description with one sentence saying what it holds, then when to use it",
                    );
                }
            }
        }
        if title.is_none_or(|t| t.trim().is_empty()) {
            self.push(
                Severity::Warning,
                format!("the {what} has no title; clients show its name instead"),
                "give it a short title for people, e.g. \"Status Catalog\" (TITLE in toolhost-sdk)",
            );
        }
    }

    /// A MIME type for its contents.
    fn typed(&mut self, mime_type: Option<&str>) {
        if mime_type.is_none_or(|m| m.trim().is_empty()) {
            let what = self.what;
            self.push(
                Severity::Warning,
                format!("the {what} declares no MIME type, so clients cannot tell how to show it"),
                "declare one, e.g. text/markdown or application/json (MIME_TYPE in toolhost-sdk)",
            );
        }
    }
}

/// The words of a tool's name that may be its verb, lower-cased: the
/// first word (`list` in `list_orders`) and, for an `object.operation`
/// name, the operation's first word (`list` in `order.list`, `get` in
/// `orders.get_by_id`).
fn verbs(name: &str) -> Vec<String> {
    let first_word = |part: &str| {
        part.split(['_', '-', '.'])
            .next()
            .unwrap_or("")
            .to_lowercase()
    };
    let mut verbs = vec![first_word(name)];
    if let Some((_, operation)) = name.rsplit_once('.') {
        verbs.push(first_word(operation));
    }
    verbs
}

/// Whether a (lower-cased) description enumerates values in words: "one
/// of a, b or c", or "a | b". "Any one of these tags" is not a list.
fn lists_values_in_prose(description: &str) -> bool {
    if description.contains(" | ") {
        return true;
    }
    description.match_indices("one of").any(|(at, found)| {
        let rest = &description[at + found.len()..];
        let clause = rest.split(". ").next().unwrap_or(rest);
        let first = clause
            .trim_start_matches([' ', ':'])
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_end_matches(|c: char| !c.is_alphanumeric());
        let refers_elsewhere = matches!(
            first,
            "the" | "these" | "those" | "them" | "its" | "their" | "your" | "our"
        );
        !refers_elsewhere && (clause.contains(',') || clause.contains(" or "))
    })
}

/// Collects `(path, schema)` for every property, descending into objects
/// and array items.
fn walk_fields<'a>(
    prefix: &str,
    props: &'a Map<String, Value>,
    out: &mut Vec<(String, &'a Value)>,
) {
    for (name, schema) in props {
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}.{name}")
        };
        out.push((path.clone(), schema));
        if let Some(inner) = schema.get("properties").and_then(Value::as_object) {
            walk_fields(&path, inner, out);
        }
        if let Some(inner) = schema
            .get("items")
            .and_then(|i| i.get("properties"))
            .and_then(Value::as_object)
        {
            walk_fields(&format!("{path}[]"), inner, out);
        }
    }
}

/// The text up to and including the first full stop followed by a space or
/// the end.
fn first_sentence(text: &str) -> &str {
    let text = text.trim();
    match text.find(". ") {
        Some(i) => &text[..=i],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::types::{Annotations, ToolDefinition};

    fn spec(
        name: &str,
        description: &str,
        schema: &str,
        read_only: bool,
        output: bool,
    ) -> ToolSpec {
        ToolSpec::from_definition(ToolDefinition {
            name: name.into(),
            title: "T".into(),
            description: description.into(),
            input_schema: schema.into(),
            output_schema: output.then(|| r#"{"type":"object"}"#.into()),
            annotations: Annotations {
                read_only,
                destructive: false,
                idempotent: true,
                open_world: true,
            },
        })
        .unwrap()
    }

    #[test]
    fn a_good_tool_is_clean() {
        let s = spec(
            "list_orders",
            "List orders with filters. Use it to find an order before changing it.",
            r#"{"type":"object","properties":{"page":{"type":"integer","description":"Page.","examples":[1]}}}"#,
            true,
            true,
        );
        assert_eq!(lint(&s), vec![]);
    }

    #[test]
    fn findings_name_the_problem() {
        let s = spec(
            "delete_note",
            "Deletes.",
            r#"{"type":"object","properties":{"id":{"type":"integer"},"kind":{"type":"string","description":"one of a, b","examples":["a"]}}}"#,
            true,
            false,
        );
        let problems: Vec<String> = lint(&s).into_iter().map(|f| f.problem).collect();
        let all = problems.join("\n");
        for needle in [
            "too short",
            "deletes",
            "no output schema",
            "`id` has no description",
            "`id` has no example",
            "`kind` lists its values",
        ] {
            assert!(all.contains(needle), "missing {needle:?} in:\n{all}");
        }
    }

    #[test]
    fn object_operation_names_are_read_by_their_operation() {
        for (name, read_only, expected) in [
            ("order.list", false, true),
            ("orders.get_by_id", false, true),
            ("order.list", true, false),
            ("order.update", false, false),
            ("list_orders", false, true),
        ] {
            let s = spec(
                name,
                "List orders with filters. Use it to find an order before changing it.",
                r#"{"type":"object"}"#,
                read_only,
                true,
            );
            let flagged = lint(&s).iter().any(|f| f.problem.contains("reads, but"));
            assert_eq!(flagged, expected, "{name} read_only={read_only}");
        }
        assert_eq!(verbs("record.delete"), ["record", "delete"]);
    }

    #[test]
    fn nonstandard_formats_are_reported_with_where_they_were() {
        let s = spec(
            "list_orders",
            "List orders with filters. Use it to find an order before changing it.",
            r#"{"type":"object","properties":{"page":{"type":"integer","format":"uint32","description":"Page.","examples":[1]}}}"#,
            true,
            true,
        );
        let findings = lint(&s);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].severity, Severity::Warning);
        assert!(
            findings[0]
                .problem
                .contains("input /properties/page: uint32"),
            "{}",
            findings[0].problem
        );
    }

    #[test]
    fn resources_templates_and_prompts_are_held_to_the_rules_that_carry_over() {
        use crate::bindings::v0_2::content::{PromptArgument, ResourceTemplate};
        let resource = |title: Option<&str>, description: Option<&str>, mime: Option<&str>| {
            ResourceDefinition {
                uri: "shop://catalog".into(),
                name: "catalog".into(),
                title: title.map(String::from),
                description: description.map(String::from),
                mime_type: mime.map(String::from),
                size: None,
                annotations: None,
            }
        };
        let good = "Every product of the shop, with its price. Read it before quoting a price.";
        assert_eq!(
            lint_resource(&resource(
                Some("Catalog"),
                Some(good),
                Some("application/json")
            )),
            vec![]
        );
        let problems = |findings: Vec<Finding>| -> Vec<(Severity, String)> {
            findings
                .into_iter()
                .map(|f| (f.severity, f.problem))
                .collect()
        };
        let sloppy = problems(lint_resource(&resource(None, None, None)));
        assert_eq!(
            sloppy,
            [
                (Severity::Error, "the resource has no description".into()),
                (
                    Severity::Warning,
                    "the resource has no title; clients show its name instead".into()
                ),
                (
                    Severity::Warning,
                    "the resource declares no MIME type, so clients cannot tell how to show it"
                        .into()
                ),
            ]
        );
        let short = lint_resource(&resource(Some("C"), Some("Products."), Some("text/plain")));
        assert_eq!(short.len(), 1, "{short:?}");
        assert_eq!(short[0].tool, "shop://catalog");
        assert!(
            short[0].problem.contains("too short"),
            "{}",
            short[0].problem
        );

        let template = |description: &str| TemplateSpec {
            definition: ResourceTemplate {
                uri_template: "shop://orders/{order_id}".into(),
                name: "order".into(),
                title: Some("Order".into()),
                description: Some(description.into()),
                mime_type: Some("application/json".into()),
                annotations: None,
                completable: Vec::new(),
            },
            variables: vec!["order_id".into()],
        };
        assert_eq!(
            lint_template(&template("One order of the shop by its order ID, as JSON.")),
            vec![]
        );
        let unexplained = lint_template(&template("One order of the shop, as JSON."));
        assert_eq!(unexplained.len(), 1, "{unexplained:?}");
        assert_eq!(unexplained[0].severity, Severity::Warning);
        assert!(unexplained[0].problem.contains("{order_id}"));

        let argument = |name: &str, description: Option<&str>| PromptArgument {
            name: name.into(),
            title: None,
            description: description.map(String::from),
            required: true,
            completable: false,
        };
        let prompt = PromptDefinition {
            name: "review_order".into(),
            title: Some("Review an Order".into()),
            description: Some("Review one order for problems before it ships.".into()),
            arguments: vec![
                argument("order", Some("The order number, e.g. \"1042\".")),
                argument("tone", None),
            ],
        };
        assert_eq!(
            problems(lint_prompt(&prompt)),
            [(Severity::Error, "argument `tone` has no description".into())]
        );
    }

    #[test]
    fn values_listed_in_prose_are_told_from_references_to_other_things() {
        for listed in [
            "one of a, b",
            "the status: one of open, closed or held",
            "open | closed",
        ] {
            assert!(lists_values_in_prose(listed), "{listed}");
        }
        for not_listed in [
            "match orders with any one of these tags, e.g. rush",
            "one of the order's tags",
            "pick one of them, or leave it empty",
            "an order number",
        ] {
            assert!(!lists_values_in_prose(not_listed), "{not_listed}");
        }
    }
}
