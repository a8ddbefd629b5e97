//! Progressive discovery (ADR 0040): a profile with `discovery = true`
//! lists three meta-tools instead of its tools, so a model pays for three
//! schemas instead of hundreds and finds the rest when it needs them:
//!
//! - `find_tools {query, limit?}`: the best tools for a query (BM25 over
//!   names, titles, descriptions and parameters; [`crate::catalog::search`]),
//!   each with its name, title, the first sentence of its description and
//!   its score;
//! - `describe_tool {name}`: one tool's whole definition (schemas and
//!   annotations), as `tools/list` would give it;
//! - `call_tool {name, arguments}`: calls it; exactly a `tools/call` of
//!   that tool (confirmation, policy, audit, both eras), so a model never
//!   needs the tool in its list. A tool of the profile may also be called
//!   by its name directly.
//!
//! What search and description see is [`super::request::Visible`]'s answer
//! for this caller: a tool the caller may not see is neither found nor
//! described, and (since each index is built from what one caller sees)
//! it changes no score.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, Weak};

use rmcp::ErrorData;
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool, ToolAnnotations};
use serde_json::{Map, Value, json};

use super::request::Request;
use crate::catalog::Shown;
use crate::catalog::search::Index;
use crate::config::profiles::META_TOOLS;
use crate::registry::Registry;

/// The most tools one `find_tools` answer holds.
const MAX_FOUND: u64 = 20;
/// How many `find_tools` gives without `limit`.
const DEFAULT_FOUND: u64 = 5;
/// Indexes kept (one per registry, profile and visible set); past it the
/// oldest is dropped.
const KEPT_INDEXES: usize = 16;

/// The indexes built for discovery profiles, reused while the registry
/// and what the caller sees stay the same.
#[derive(Default)]
pub(crate) struct Indexes {
    built: Mutex<Vec<Built>>,
}

/// One index and what it was built from.
struct Built {
    registry: Weak<Registry>,
    /// A hash of the served names, titles and descriptions indexed.
    key: u64,
    index: Arc<Index>,
}

impl Indexes {
    /// The index of `tools`, shown from `registry`.
    fn of(&self, registry: &Arc<Registry>, tools: &[Shown]) -> Arc<Index> {
        let mut hasher = DefaultHasher::new();
        for t in tools {
            (&t.name, t.title(), t.description(), &t.tool.plugin.digest).hash(&mut hasher);
        }
        let key = hasher.finish();
        let mut built = self.built.lock().expect("index list");
        built.retain(|b| b.registry.strong_count() > 0);
        if let Some(b) = built.iter().find(|b| {
            b.key == key
                && b.registry
                    .upgrade()
                    .is_some_and(|r| Arc::ptr_eq(&r, registry))
        }) {
            return b.index.clone();
        }
        let index = Arc::new(Index::build(tools));
        if built.len() >= KEPT_INDEXES {
            built.remove(0);
        }
        built.push(Built {
            registry: Arc::downgrade(registry),
            key,
            index: index.clone(),
        });
        index
    }
}

/// Profiles' surfaces ([`crate::catalog::Profile::surface`]) per registry,
/// so a request through a profile does not evaluate its `select` for
/// every tool again: computed once per registry and profile.
#[derive(Default)]
pub(crate) struct Surfaces {
    built: Mutex<Vec<SurfaceOf>>,
}

/// A profile's surface (by its name) in one registry.
type SurfaceOf = (Weak<Registry>, String, Arc<[Shown]>);

impl Surfaces {
    /// The surface of the profile `name` (resolved in `registry`'s
    /// configuration; [`crate::catalog::NOTHING`] when it has none).
    pub(crate) fn of(&self, registry: &Arc<Registry>, name: &str) -> Arc<[Shown]> {
        let mut built = self.built.lock().expect("surface list");
        built.retain(|(r, _, _)| r.strong_count() > 0);
        if let Some((_, _, surface)) = built
            .iter()
            .find(|(r, n, _)| n == name && r.upgrade().is_some_and(|r| Arc::ptr_eq(&r, registry)))
        {
            return surface.clone();
        }
        let profile = registry
            .config()
            .profile(name)
            .unwrap_or(&crate::catalog::NOTHING);
        let surface: Arc<[Shown]> = profile.surface(registry).into();
        if built.len() >= KEPT_INDEXES {
            built.remove(0);
        }
        built.push((Arc::downgrade(registry), name.to_string(), surface.clone()));
        surface
    }
}

/// The meta-tools a discovery profile lists.
pub(super) fn meta_tools() -> Vec<Tool> {
    let object = |properties: Value, required: &[&str]| -> Arc<Map<String, Value>> {
        let Value::Object(schema) = json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        }) else {
            unreachable!("a JSON object")
        };
        Arc::new(schema)
    };
    let reading = ToolAnnotations::new()
        .read_only(true)
        .destructive(false)
        .idempotent(true)
        .open_world(false);
    vec![
        Tool::new(
            META_TOOLS[0],
            "Find the tools for a task by describing it in words; use it first, since only these \
             meta-tools are listed. Returns the best matches, best first, with a one-line \
             description each; then describe_tool shows one's parameters and call_tool runs it.",
            object(
                json!({
                    "query": {"type": "string", "minLength": 1, "maxLength": 1000,
                              "description": "What you want to do, in words: \"receive a delivery for a purchase order\".",
                              "examples": ["receive a delivery for a purchase order"]},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_FOUND, "default": DEFAULT_FOUND,
                              "description": "How many tools to return at most."}
                }),
                &["query"],
            ),
        )
        .with_title("Find Tools")
        .with_annotations(reading.clone()),
        Tool::new(
            META_TOOLS[1],
            "Show one tool's full definition (parameters, output, behaviour hints); use it \
             after find_tools, before call_tool.",
            object(
                json!({"name": {"type": "string", "minLength": 1, "maxLength": 128,
                                "description": "The tool's name, as find_tools gave it.",
                                "examples": ["receive_purchase_order"]}}),
                &["name"],
            ),
        )
        .with_title("Describe Tool")
        .with_annotations(reading),
        Tool::new(
            META_TOOLS[2],
            "Call a tool found with find_tools, with its arguments; the answer is the tool's own. \
             Tools that change data still preview first and ask the user before acting.",
            object(
                json!({
                    "name": {"type": "string", "minLength": 1, "maxLength": 128,
                             "description": "The tool's name, as find_tools gave it.",
                             "examples": ["receive_purchase_order"]},
                    "arguments": {"type": "object",
                                  "description": "The tool's arguments, as describe_tool's inputSchema asks.",
                                  "examples": [{"order_id": 7001}]}
                }),
                &["name"],
            ),
        )
        .with_title("Call Tool")
        .with_annotations(
            ToolAnnotations::new()
                .read_only(false)
                .destructive(true)
                .idempotent(false)
                .open_world(true),
        ),
    ]
}

/// What a meta-tool call becomes.
pub(super) enum Meta {
    /// The meta-tool's own answer.
    Answer(CallToolResult),
    /// A call of a tool: `tools/call` goes on with these parameters.
    Call(CallToolRequestParams),
}

/// Answers `params` if it calls a meta-tool of the request's discovery
/// profile; anything else goes on unchanged.
pub(super) fn intercept(
    indexes: &Indexes,
    request: &Request,
    mut params: CallToolRequestParams,
) -> Result<Meta, ErrorData> {
    if !request.profile().is_some_and(|p| p.discovery) || !META_TOOLS.contains(&&*params.name) {
        return Ok(Meta::Call(params));
    }
    let arguments = params.arguments.clone().unwrap_or_default();
    let text = |key: &str| -> Result<String, ErrorData> {
        match arguments.get(key) {
            Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
            _ => Err(ErrorData::invalid_params(
                format!("{}: `{key}` must be a non-empty string", params.name),
                None,
            )),
        }
    };
    match &*params.name {
        "find_tools" => {
            let query = text("query")?;
            let limit = match arguments.get("limit") {
                None => DEFAULT_FOUND,
                Some(v) => v
                    .as_u64()
                    .filter(|n| (1..=MAX_FOUND).contains(n))
                    .ok_or_else(|| {
                        ErrorData::invalid_params(
                            format!(
                                "find_tools: `limit` must be a whole number from 1 to {MAX_FOUND}"
                            ),
                            None,
                        )
                    })?,
            };
            let found = find(indexes, request, &query, limit as usize);
            Ok(Meta::Answer(CallToolResult::structured(found)))
        }
        "describe_tool" => {
            let name = text("name")?;
            let tools = request.visible().tools();
            let Some(tool) = tools.iter().find(|t| t.name == name) else {
                return Err(unknown(&name));
            };
            let described = serde_json::to_value(super::convert::mcp_tool(tool))
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            Ok(Meta::Answer(CallToolResult::structured(described)))
        }
        _ => {
            let name = text("name")?;
            let inner = match arguments.get("arguments") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(o)) => o.clone(),
                Some(_) => {
                    return Err(ErrorData::invalid_params(
                        "call_tool: `arguments` must be an object",
                        None,
                    ));
                }
            };
            params.name = name.into();
            params.arguments = Some(inner);
            Ok(Meta::Call(params))
        }
    }
}

/// `find_tools`: the `limit` best of what the caller sees for `query`.
pub(super) fn find(indexes: &Indexes, request: &Request, query: &str, limit: usize) -> Value {
    let tools = request.visible().tools();
    let index = indexes.of(&request.registry, &tools);
    let hits = index.search(query, limit);
    let found: Vec<Value> = hits
        .iter()
        .filter_map(|hit| {
            let tool = tools.iter().find(|t| t.name == hit.name)?;
            Some(json!({
                "name": tool.name,
                "title": tool.title(),
                "description": first_sentence(tool.description()),
                "score": (f64::from(hit.score) * 1000.0).round() / 1000.0,
            }))
        })
        .collect();
    json!({"tools": found, "searched": tools.len()})
}

/// The first sentence of `text` (up to ". ", or all of it).
fn first_sentence(text: &str) -> &str {
    match text.find(". ") {
        Some(end) => &text[..=end],
        None => text,
    }
}

/// The answer for a tool the caller may not see, the same as for one that
/// does not exist.
fn unknown(name: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!("unknown tool {name:?}; find_tools lists the tools available"),
        None,
    )
}
