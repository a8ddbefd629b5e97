//! Progressive discovery (ADR 0040): a profile with `discovery = true`
//! lists three meta-tools instead of its tools, so a model pays for three
//! schemas instead of hundreds and finds the rest when it needs them:
//!
//! - `find_tools {query, limit?}`: the best tools for a query (BM25 over
//!   names, titles, descriptions and parameters; [`crate::catalog::search`]),
//!   each with its name, title, the first sentence of its description and
//!   its score;
//! - `describe_tool {name, enable?}`: one tool's whole definition
//!   (schemas and annotations), as `tools/list` would give it; with
//!   `enable`, the tool is added to this session's `tools/list` from then
//!   on, and the session is sent `notifications/tools/list_changed`
//!   ([`enable`]). Enabled tools are per session and profile (never
//!   another session's), still pass through [`super::request::Visible`]
//!   on every list (a hide wins), and one that stops being visible after a
//!   reload is dropped from the session's set ([`prune`]);
//! - `call_tool {name, arguments}`: calls it; exactly a `tools/call` of
//!   that tool (confirmation, policy, audit, both eras), so a model never
//!   needs the tool in its list. A tool of the profile may also be called
//!   by its name directly.
//!
//! What search and description see is [`super::request::Visible`]'s answer
//! for this caller: a tool the caller may not see is neither found nor
//! described, and (since each index is built from what one caller sees)
//! it changes no score.

use std::collections::BTreeSet;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, Weak};

use rmcp::ErrorData;
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool, ToolAnnotations};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Map, Value, json};

use super::Gateway;
use super::request::{Era, Request, Visible};
use crate::auth::Identity;
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
             after find_tools, before call_tool. With enable, the tool is also added to your \
             tool list for the rest of this session.",
            object(
                json!({"name": {"type": "string", "minLength": 1, "maxLength": 128,
                                "description": "The tool's name, as find_tools gave it.",
                                "examples": ["receive_purchase_order"]},
                       "enable": {"type": "boolean", "default": false,
                                  "description": "Also add the tool to this session's tool list (a tools/list_changed follows), to call it by name."}}),
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
    /// `describe_tool` with `enable`: the tool served as this name is
    /// enabled in the session ([`enable`]), then the answer goes out.
    Enable(String, CallToolResult),
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
            let enable = match arguments.get("enable") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => {
                    return Err(ErrorData::invalid_params(
                        "describe_tool: `enable` must be true or false",
                        None,
                    ));
                }
            };
            let tools = request.visible().tools();
            let Some(tool) = tools.iter().find(|t| t.name == name) else {
                return Err(unknown(&name));
            };
            let mut described = serde_json::to_value(super::convert::mcp_tool(tool))
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            if !enable {
                return Ok(Meta::Answer(CallToolResult::structured(described)));
            }
            if !holds_a_session(request) {
                return Err(ErrorData::invalid_params(
                    "describe_tool: `enable` adds a tool to a session's tool list, and this \
                     request has no session (a 2026-07-28 request stands alone); call the tool \
                     through call_tool, or by its name, instead",
                    None,
                ));
            }
            described["enabled"] = Value::Bool(true);
            Ok(Meta::Enable(name, CallToolResult::structured(described)))
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

/// Whether `request` belongs to a session a tool can be enabled in: a
/// legacy one, over stdio (one session) or with an `Mcp-Session-Id`.
fn holds_a_session(request: &Request) -> bool {
    request.era == Era::Legacy && (request.session.is_some() || request.transport() == "stdio")
}

/// The tools one legacy session enabled through a discovery profile
/// (`describe_tool` with `enable`), by the names the profile serves them
/// under. Kept until the session ends.
pub(super) struct Enabled {
    /// The `Mcp-Session-Id`; `None` over stdio, which serves one session.
    session: Option<String>,
    /// The profile they were enabled through.
    profile: String,
    /// Where the session's `tools/list_changed` go; once closed, the entry
    /// is dropped.
    peer: Peer<RoleServer>,
    /// Who enabled them: what stays visible to them after a reload.
    identity: Option<Identity>,
    /// `http` or `stdio`.
    transport: &'static str,
    /// The served names enabled.
    names: BTreeSet<String>,
}

/// Enables the tool served as `name` in the session of `request` (which
/// [`holds_a_session`]), whose peer is `peer`, and sends that session
/// `tools/list_changed` if it was not enabled already. No other session
/// hears of it.
pub(super) async fn enable(
    gateway: &Gateway,
    request: &Request,
    peer: &Peer<RoleServer>,
    name: String,
) {
    let Some(profile) = request.profile.clone() else {
        return;
    };
    let added = {
        let mut enabled = gateway.inner.enabled.lock().expect("not poisoned");
        enabled.retain(|e| !e.peer.is_transport_closed());
        match enabled
            .iter_mut()
            .find(|e| e.session == request.session && e.profile == profile)
        {
            Some(entry) => entry.names.insert(name),
            None => {
                enabled.push(Enabled {
                    session: request.session.clone(),
                    profile,
                    peer: peer.clone(),
                    identity: request.identity.clone(),
                    transport: request.transport(),
                    names: BTreeSet::from([name]),
                });
                true
            }
        }
    };
    if added && let Err(e) = peer.notify_tool_list_changed().await {
        tracing::debug!("cannot send tools/list_changed: {e}");
    }
}

/// The served names the session of `request` enabled through its
/// profile (none outside a session or a profile).
pub(super) fn enabled_names(gateway: &Gateway, request: &Request) -> BTreeSet<String> {
    let Some(profile) = &request.profile else {
        return BTreeSet::new();
    };
    if !holds_a_session(request) {
        return BTreeSet::new();
    }
    let enabled = gateway.inner.enabled.lock().expect("not poisoned");
    enabled
        .iter()
        .find(|e| {
            e.session == request.session && &e.profile == profile && !e.peer.is_transport_closed()
        })
        .map(|e| e.names.clone())
        .unwrap_or_default()
}

/// After a reload: drops from every session's enabled tools those its
/// caller no longer sees through its profile (removed, renamed, hidden),
/// so one that comes back is not listed until enabled again; a session
/// that lost one is sent `tools/list_changed`, unless every session
/// already was (`notified`).
pub(super) async fn prune(gateway: &Gateway, notified: bool) {
    let registry = gateway.registry();
    let peers: Vec<Peer<RoleServer>> = {
        let mut enabled = gateway.inner.enabled.lock().expect("not poisoned");
        enabled.retain(|e| !e.peer.is_transport_closed());
        let mut peers = Vec::new();
        for entry in enabled.iter_mut() {
            let visible: BTreeSet<String> =
                Visible::new(&registry, entry.identity.as_ref(), entry.transport)
                    .through_named(&registry, Some(&entry.profile))
                    .tools()
                    .into_iter()
                    .map(|t| t.name)
                    .collect();
            let before = entry.names.len();
            entry.names.retain(|n| visible.contains(n));
            if entry.names.len() != before {
                tracing::debug!(profile = %entry.profile, "a session's enabled tool is gone");
                peers.push(entry.peer.clone());
            }
        }
        enabled.retain(|e| !e.names.is_empty());
        peers
    };
    if notified {
        return;
    }
    for peer in peers {
        if let Err(e) = peer.notify_tool_list_changed().await {
            tracing::debug!("cannot send tools/list_changed: {e}");
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
