//! One MCP request's context, taken once when the request begins: the
//! registry it runs against (with the configuration that registry was
//! built for), the caller's identity, the protocol era, and what the
//! caller may see; and [`Record`], the audit record and metrics of a
//! request that runs plugin code, finished in one place.
//!
//! **Architecture invariant:** [`Visible`] is the only access check. Every
//! handler (tools, resources, templates, prompts, completion,
//! subscriptions, listen acknowledgements, notifications) asks it, and it
//! reads `[[access]]` from the registry the request holds, never from a
//! configuration fixed at start, so a config reload that changes
//! `[[access]]` reaches every method at once.
//!
//! **Architecture invariant:** audit records and call metrics are written
//! here only: by [`Record`], [`Request::refuse_unknown_tool`] and
//! [`record_malformed_call`] (a call a transport answered itself);
//! handlers say how a request ended, not how that is recorded.

use std::sync::Arc;

use rmcp::model::ProtocolVersion;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use super::Gateway;
use crate::audit::{CallAudit, CallContext, Ending, PolicyNote};
use crate::auth::Identity;
use crate::bindings::v0_2::content::{PromptDefinition, ResourceDefinition};
use crate::call::CallOutcome;
use crate::call::offer::{OfferError, OfferKind};
use crate::hooks::CallHooks;
use crate::metrics;
use crate::offers::TemplateSpec;
use crate::plugin::Plugin;
use crate::registry::{Offered, Registry, ToolRef};
use crate::rules::limits::Refused;
use crate::rules::{Evaluation, Facts, Target, Verdict};

/// Which protocol era a request speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// A session opened with `initialize` (2025-11-25 and before): the
    /// server may send requests (elicitation) back to the client.
    Legacy,
    /// 2026-07-28 or later: no server-to-client requests; confirmations
    /// travel in `input_required` results.
    Modern,
}

/// One request's context. Made by [`Request::begin`]; a handler reads the
/// registry, the identity and the era from it and nowhere else.
pub(crate) struct Request {
    /// The registry this request runs against, with the configuration it
    /// was built for: kept for the whole request, however the directory or
    /// the configuration change meanwhile.
    pub registry: Arc<Registry>,
    /// The caller over HTTP (from the request's extensions, put there by
    /// [`crate::auth::http::require_identity`]); `None` over stdio and over
    /// HTTP without `[auth]`.
    pub identity: Option<Identity>,
    /// The protocol era.
    pub era: Era,
    /// Whether the client declared the elicitation capability.
    pub can_elicit: bool,
    /// Whether the request came over HTTP.
    over_http: bool,
    /// The client's protocol version, for the audit trail.
    protocol: Option<String>,
    /// The legacy HTTP session (`Mcp-Session-Id`); `None` over stdio and
    /// for 2026-07-28 requests.
    pub session: Option<String>,
    /// The client's network address over HTTP ([`ClientAddress`]), for the
    /// audit trail.
    client: Option<std::net::IpAddr>,
    /// The bearer token the caller authenticated with (HTTP with
    /// `[auth]`), for a token exchange; never logged or recorded.
    pub token: Option<crate::auth::CallerToken>,
    /// The profile the request came through (`/mcp/<profile>`, or
    /// `serve --profile` on stdio); `None` for the whole catalog.
    pub profile: Option<String>,
    /// That profile's tools in this request's registry, before the
    /// caller's hiding (computed once per registry).
    surface: Option<Arc<[crate::catalog::Shown]>>,
}

impl Request {
    /// Who calls ([`caller_of`]).
    pub fn caller(&self) -> String {
        caller_of(self.identity.as_ref(), self.over_http)
    }

    /// Begins a request: waits for the initial load of the plugin directory
    /// (up to `host.load_wait_secs`), then takes the registry being served
    /// and who calls.
    pub async fn begin(gateway: &Gateway, context: &RequestContext<RoleServer>) -> Request {
        gateway.wait_until_loaded().await;
        Request::now(gateway, context)
    }

    /// A request's context without waiting for the initial load (what a
    /// listen acknowledgement or an unsubscribe needs).
    pub fn now(gateway: &Gateway, context: &RequestContext<RoleServer>) -> Request {
        let parts = context.extensions.get::<axum::http::request::Parts>();
        let registry = gateway.registry();
        let profile = match parts {
            Some(parts) => parts
                .extensions
                .get::<crate::catalog::ProfileName>()
                .map(|p| p.0.clone()),
            None => gateway.stdio_profile(),
        };
        let surface = profile.as_deref().map(|p| gateway.surface(&registry, p));
        Request {
            registry,
            identity: parts.and_then(|p| p.extensions.get::<Identity>()).cloned(),
            era: if context
                .protocol_version()
                .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
            {
                Era::Modern
            } else {
                Era::Legacy
            },
            can_elicit: context
                .client_capabilities()
                .and_then(|c| c.elicitation)
                .is_some(),
            over_http: parts.is_some(),
            protocol: context.protocol_version().map(|v| v.to_string()),
            session: parts.and_then(session_header),
            client: parts.and_then(|p| ClientAddress::of(&p.extensions)),
            token: parts.and_then(|p| p.extensions.get::<crate::auth::CallerToken>().cloned()),
            profile,
            surface,
        }
    }

    /// The context of a call resumed apart from any client request: an
    /// approved call that became an MCP task, run when its approver said
    /// yes or its client answered (ADR 0038). The caller is who began it;
    /// its questions travel in the task, as in the 2026-07-28 era.
    pub fn resumed(
        gateway: &Gateway,
        identity: Option<Identity>,
        over_http: bool,
        profile: Option<String>,
        client: Option<std::net::IpAddr>,
    ) -> Request {
        let registry = gateway.registry();
        let surface = profile.as_deref().map(|p| gateway.surface(&registry, p));
        Request {
            registry,
            identity,
            era: Era::Modern,
            can_elicit: true,
            over_http,
            protocol: Some(ProtocolVersion::V_2026_07_28.to_string()),
            session: None,
            // Where the call was asked from, kept with its approval.
            client,
            // Not kept with the task: a token exchange for the resumed call
            // finds none, and the credential it needs refuses.
            token: None,
            // The profile the call came through: its served name is found
            // again there.
            profile,
            surface,
        }
    }

    /// What this caller may see of this request's registry, through the
    /// request's profile if it came through one.
    pub fn visible(&self) -> Visible<'_> {
        Visible::new(&self.registry, self.identity.as_ref(), self.transport())
            .through(self.profile(), self.surface.as_deref())
    }

    /// The profile the request came through, resolved in this request's
    /// configuration: one a reload removed serves nothing.
    pub fn profile(&self) -> Option<&crate::catalog::Profile> {
        let name = self.profile.as_deref()?;
        Some(
            self.registry
                .config()
                .profile(name)
                .unwrap_or(&crate::catalog::NOTHING),
        )
    }

    /// The 2026-07-28 hints on a list result: `ttlMs` from
    /// `host.list_ttl_ms`, and `cacheScope` private when the list depends
    /// on the caller ([`Request::lists_per_caller`]), public otherwise.
    pub fn list_hints(&self) -> (u64, rmcp::model::CacheScope) {
        let scope = if self.lists_per_caller() {
            rmcp::model::CacheScope::Private
        } else {
            rmcp::model::CacheScope::Public
        };
        (self.registry.config().list_ttl_ms, scope)
    }

    /// Whether this caller's lists may differ from another's: `[[access]]`,
    /// a hide rule or the profile's `hide` reading the caller, or a
    /// discovery profile (what it finds depends on what the caller may
    /// see). The lists' `cacheScope` hint.
    pub fn lists_per_caller(&self) -> bool {
        self.registry.config().policy.hides_per_caller()
            || self
                .profile()
                .is_some_and(|p| p.hides_per_caller() || p.discovery)
    }

    /// The client's network address over HTTP ([`ClientAddress`]).
    pub fn client(&self) -> Option<std::net::IpAddr> {
        self.client
    }

    /// `http` or `stdio`, as policy conditions read it.
    pub fn transport(&self) -> &'static str {
        if self.over_http { "http" } else { "stdio" }
    }

    /// Who calls and how, for the audit trail, with confirmations asked
    /// `via` and the policy's decision, if the request reached the rules.
    pub fn audit_context(&self, via: &'static str, policy: Option<PolicyNote>) -> CallContext {
        let mut context = call_context(
            self.identity.as_ref(),
            self.over_http,
            self.session.clone(),
            self.protocol.clone(),
            self.client,
            via,
        );
        context.policy = policy;
        context
    }

    /// What `[[policy.rules]]` let this request of `target` (served by
    /// `plugin`, with `arguments`) do: the one decision per request, made
    /// before any of the plugin's code runs (ADR 0034). The limits it
    /// falls under are counted unless `count` is false (the retry of a
    /// call that was counted when it first came, carrying its sealed
    /// answer). Counted in the metrics here; the caller records it with the
    /// note it returns.
    pub async fn authorize(
        &self,
        gateway: &Gateway,
        method: &str,
        (plugin, target): (&Plugin, Target<'_>),
        arguments: &Value,
        count: bool,
    ) -> Authorized {
        let policy = &self.registry.config().policy;
        let facts = Facts {
            identity: self.identity.as_ref(),
            transport: self.transport(),
            era: match self.era {
                Era::Legacy => "legacy",
                Era::Modern => "modern",
            },
            method,
            profile: self.profile.as_deref().unwrap_or_default(),
            plugin,
            target,
            arguments: Some(arguments),
            signer: self.registry.config().signer_of(&plugin.file),
        };
        let Evaluation { limits, decision } = policy.decide(&facts);
        let note = |rule: &str, outcome: &str| PolicyNote {
            rule: rule.to_string(),
            outcome: outcome.to_string(),
            version: policy.version().to_string(),
        };
        // A request the rules refuse spends no place in a budget.
        if count
            && !matches!(decision.verdict, Verdict::Deny(_))
            && let Err(refused) = gateway.inner.limiter.count(&limits).await
        {
            let (rule, refusal) = match refused {
                Refused::Limited {
                    rule,
                    count,
                    window,
                    retry_after,
                } => (
                    rule.clone(),
                    PolicyRefusal::Limited {
                        message: format!(
                            "the operator's policy allows {count} such requests per {}s (rule \
                                 {rule:?}) and this window's are spent",
                            window.as_secs()
                        ),
                        retry_after,
                    },
                ),
                Refused::Unavailable { rule, reason } => {
                    tracing::warn!(rule = %rule, "a limit could not be counted ({reason}); refusing, as a limit that cannot count fails closed");
                    (
                            rule,
                            PolicyRefusal::Unavailable(
                                "the store that counts the operator's rate limits cannot be reached right \
                                 now; nothing ran, so retry shortly"
                                    .into(),
                            ),
                        )
                }
            };
            metrics::policy_decision("limit", &rule);
            return Authorized::Refused {
                note: note(&rule, "limit"),
                refusal,
            };
        }
        metrics::policy_decision(decision.verdict.label(), &decision.rule);
        let recorded = note(&decision.rule, decision.verdict.label());
        match decision.verdict {
            Verdict::Allow => Authorized::Run {
                note: recorded,
                needs: YesFrom::Nobody,
            },
            Verdict::Confirm => Authorized::Run {
                note: recorded,
                needs: YesFrom::Caller,
            },
            Verdict::Approve => Authorized::Run {
                note: recorded,
                needs: YesFrom::Approver,
            },
            Verdict::Deny(reason) => Authorized::Refused {
                note: recorded,
                refusal: PolicyRefusal::Denied(reason),
            },
        }
    }

    /// Records a `tools/call` of `name` that found no tool this caller may
    /// see: counted as an unknown tool and, with `host.audit`, recorded as
    /// refused (`PERMISSION_DENIED` with the plugin for a hidden tool,
    /// `UNKNOWN_TOOL` otherwise).
    pub async fn refuse_unknown_tool(&self, gateway: &Gateway, name: &str, arguments: &Value) {
        metrics::unknown_tool();
        // Recorded for the operator: a hidden tool by its plugin, and the
        // hide rule that hid it.
        let hidden = self.registry.tool(name);
        let rule = hidden.and_then(|t| self.visible().hidden_by(&t.plugin, tool_target(t)));
        let note = rule.map(|rule| {
            metrics::policy_decision("hide", rule);
            PolicyNote {
                rule: rule.to_string(),
                outcome: "hide".into(),
                version: self.registry.config().policy.version().to_string(),
            }
        });
        let Some(log) = gateway.audit_log() else {
            return;
        };
        let hidden = hidden.map(|t| t.plugin.clone());
        let code = if hidden.is_some() {
            "PERMISSION_DENIED"
        } else {
            "UNKNOWN_TOOL"
        };
        let audit = log.start_refused(
            self.audit_context("none", note),
            hidden.as_deref(),
            name,
            arguments,
        );
        let _ = audit.finish(Ending::Refused(code)).await;
    }

    /// Starts the record of a call of `tool` with `arguments`, its
    /// confirmations asked `via`.
    pub fn record_call(
        &self,
        gateway: &Gateway,
        tool: &ToolRef,
        arguments: &Value,
        (via, policy): (&'static str, Option<PolicyNote>),
    ) -> Record {
        let audit = gateway.audit_log().map(|log| {
            log.start_call(
                self.audit_context(via, policy),
                &tool.plugin,
                &tool.spec,
                &tool.name,
                arguments,
            )
        });
        Record {
            audit,
            count: Some(Count::Call(metrics::CallCount::start(&tool.name))),
            finished: false,
            trace: Some(crate::telemetry::CallTrace::new(&tool.plugin, &tool.name)),
        }
    }

    /// Starts the record of a read, get or completion (`kind` of `target`)
    /// of `plugin`'s code, with the client's `arguments`.
    pub fn record_offer(
        &self,
        gateway: &Gateway,
        plugin: &Plugin,
        (kind, target): (OfferKind, &str),
        arguments: &Value,
        policy: Option<PolicyNote>,
    ) -> Record {
        let audit = gateway.audit_log().map(|log| {
            log.start_offer(
                self.audit_context("none", policy),
                plugin,
                kind,
                target,
                arguments,
            )
        });
        Record {
            audit,
            count: Some(Count::Offer(metrics::OfferCount::start(
                &plugin.settings.name,
                kind,
            ))),
            finished: false,
            trace: None,
        }
    }
}

/// The `Mcp-Session-Id` of an HTTP request.
fn session_header(parts: &axum::http::request::Parts) -> Option<String> {
    parts
        .headers
        .get("mcp-session-id")?
        .to_str()
        .ok()
        .map(str::to_string)
}

/// Who calls: the identity qualified by its source over HTTP with
/// `[auth]` (`token:alice`, `jwt:alice`), `http` without, `stdio`
/// otherwise. The audit trail's `caller`, and what a sealed confirmation
/// state is bound to.
pub(crate) fn caller_of(identity: Option<&Identity>, over_http: bool) -> String {
    match (identity, over_http) {
        (Some(identity), _) => identity.key(),
        (None, true) => "http".to_string(),
        (None, false) => "stdio".to_string(),
    }
}

/// Who calls ([`caller_of`]) and how, for the audit trail: the protocol
/// version and the HTTP session too.
pub(crate) fn call_context(
    identity: Option<&Identity>,
    over_http: bool,
    session: Option<String>,
    protocol: Option<String>,
    client: Option<std::net::IpAddr>,
    via: &'static str,
) -> CallContext {
    let caller = caller_of(identity, over_http);
    CallContext {
        caller,
        protocol,
        session,
        client: client.map(|a| a.to_string()),
        via,
        policy: None,
    }
}

/// The address of the client an HTTP request came from, as the transport
/// worked it out once for the request: its connection's peer or, from a
/// proxy `http.trusted_proxies` names, the address that proxy forwarded
/// for. Read by the approval page's sign-in limit and recorded in the
/// audit trail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddress(pub std::net::IpAddr);

impl ClientAddress {
    /// The address an HTTP request's `extensions` carry, if any.
    pub fn of(extensions: &axum::http::Extensions) -> Option<std::net::IpAddr> {
        extensions.get::<ClientAddress>().map(|c| c.0)
    }
}

/// [`call_context`] for an HTTP request's `parts` (or stdio, `None`),
/// reading the protocol version from its header: for a message rmcp could
/// not decode, which has no [`RequestContext`].
fn call_context_of_parts(
    parts: Option<&axum::http::request::Parts>,
    via: &'static str,
) -> CallContext {
    let protocol = parts
        .and_then(|p| p.headers.get("mcp-protocol-version"))
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let identity = parts.and_then(|p| p.extensions.get::<Identity>());
    call_context(
        identity,
        parts.is_some(),
        parts.and_then(session_header),
        protocol,
        parts.and_then(|p| ClientAddress::of(&p.extensions)),
        via,
    )
}

/// Whose yes a request needs before it runs, beyond what the tool itself
/// asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum YesFrom {
    /// Nobody's: the rules let it run.
    Nobody,
    /// The caller's, to the host's own question (a `confirm` rule).
    Caller,
    /// An approver's, to this very call (an `approve` rule, ADR 0038).
    Approver,
}

/// What the rules let a request do ([`Request::authorize`]).
pub(crate) enum Authorized {
    /// It runs, once it has the yes `needs` says.
    Run {
        /// The decision, for the audit record.
        note: PolicyNote,
        /// Whose yes it needs first.
        needs: YesFrom,
    },
    /// It is refused before any code runs.
    Refused {
        /// The decision, for the audit record.
        note: PolicyNote,
        /// Why, in the caller's words.
        refusal: PolicyRefusal,
    },
}

/// Why the rules refused a request, as the caller is told.
pub(crate) enum PolicyRefusal {
    /// A deny rule, with its reason.
    Denied(String),
    /// A limit rule's budget is spent until `retry_after`.
    Limited {
        /// What the caller is told.
        message: String,
        /// When the window ends.
        retry_after: std::time::Duration,
    },
    /// A limit could not be counted (its store is out of reach).
    Unavailable(String),
}

impl PolicyRefusal {
    /// The tool error's code (and the audit trail's).
    pub fn code(&self) -> &'static str {
        match self {
            PolicyRefusal::Denied(_) => "PERMISSION_DENIED",
            PolicyRefusal::Limited { .. } => "RATE_LIMIT",
            PolicyRefusal::Unavailable(_) => "TRANSIENT",
        }
    }

    /// The refusal as a tool error's issue: what happened, what to do,
    /// and when to retry.
    pub fn issue(&self) -> crate::call::Issue {
        let (message, hint, retry) = match self {
            PolicyRefusal::Denied(reason) => (
                reason.clone(),
                "the operator's policy refuses this request; ask the operator if you need it",
                None,
            ),
            PolicyRefusal::Limited {
                message,
                retry_after,
            } => (
                message.clone(),
                "wait until retry_after_ms has passed, then call again",
                Some(u64::try_from(retry_after.as_millis()).unwrap_or(u64::MAX)),
            ),
            PolicyRefusal::Unavailable(message) => (
                message.clone(),
                "retry the same request shortly",
                Some(1000),
            ),
        };
        crate::call::Issue {
            code: self.code(),
            message,
            hint: Some(hint.to_string()),
            retry_after_ms: retry,
        }
    }

    /// The refusal as a protocol error, for a read, get or completion
    /// (which have no tool-error result).
    pub fn error(&self) -> rmcp::ErrorData {
        let issue = self.issue();
        let message = match issue.retry_after_ms {
            Some(ms) => format!("{} ({}; retry after {ms} ms)", issue.message, issue.code),
            None => format!("{} ({})", issue.message, issue.code),
        };
        rmcp::ErrorData::invalid_request(message, None)
    }
}

/// What `identity` may see of `registry`: the one place the hide rules
/// (`[[access]]` first, then `[[policy.rules]]` with `outcome = "hide"`)
/// are applied, for every kind of thing a plugin serves.
#[derive(Clone, Copy)]
pub(crate) struct Visible<'a> {
    registry: &'a Registry,
    identity: Option<&'a Identity>,
    /// `stdio` or `http`; `None` sees everything served (for comparing
    /// what is served, not for answering a caller).
    transport: Option<&'static str>,
    /// The profile the caller came through: it narrows, renames and hides
    /// after the hide rules ([`crate::catalog`]).
    profile: Option<&'a crate::catalog::Profile>,
    /// The profile's tools, computed once per registry.
    surface: Option<&'a [crate::catalog::Shown]>,
}

/// Where a resource URI is served: the plugin, the template's variables
/// (none for a listed resource), and what the audit trail names as the
/// target (the resource's URI or the template).
pub(crate) struct ResourceTarget {
    /// The plugin serving it.
    pub plugin: Arc<Plugin>,
    /// The variables a template matched, still percent-encoded.
    pub variables: Vec<(String, String)>,
    /// The resource's URI or the template's URI template.
    pub target: String,
    /// The URI read, as the component serves it (a profile may serve it
    /// under another).
    pub uri: String,
}

impl<'a> Visible<'a> {
    /// What `identity`, calling over `transport`, may see of `registry`,
    /// by the hide rules of the configuration `registry` was built for.
    pub fn new(
        registry: &'a Registry,
        identity: Option<&'a Identity>,
        transport: &'static str,
    ) -> Visible<'a> {
        Visible {
            registry,
            identity,
            transport: Some(transport),
            profile: None,
            surface: None,
        }
    }

    /// What the caller may see through `profile` (none: the whole
    /// catalog), whose tools in this registry are `surface` (computed here
    /// when not given).
    pub fn through(
        self,
        profile: Option<&'a crate::catalog::Profile>,
        surface: Option<&'a [crate::catalog::Shown]>,
    ) -> Visible<'a> {
        Visible {
            profile,
            surface,
            ..self
        }
    }

    /// What the caller may see through the profile named `profile` (none:
    /// the whole catalog), resolved in `registry`'s configuration (one it
    /// no longer has serves nothing).
    pub fn through_named(self, registry: &'a Registry, profile: Option<&str>) -> Visible<'a> {
        let profile = profile.map(|name| {
            registry
                .config()
                .profile(name)
                .unwrap_or(&crate::catalog::NOTHING)
        });
        self.through(profile, None)
    }

    /// The profile's tools: the one computed for the request, or computed
    /// now.
    fn surface(
        &self,
        profile: &crate::catalog::Profile,
    ) -> std::borrow::Cow<'a, [crate::catalog::Shown]> {
        match self.surface {
            Some(surface) => std::borrow::Cow::Borrowed(surface),
            None => std::borrow::Cow::Owned(profile.surface(self.registry)),
        }
    }

    /// Everything `registry` serves, hidden from nobody: for deciding
    /// whether what is served changed, never for answering a caller.
    pub fn everything(registry: &'a Registry) -> Visible<'a> {
        Visible {
            registry,
            identity: None,
            transport: None,
            profile: None,
            surface: None,
        }
    }

    /// The hide rule that hides `target` of `plugin` from the caller, if
    /// one does.
    pub fn hidden_by(&self, plugin: &Plugin, target: Target<'_>) -> Option<&'a str> {
        let transport = self.transport?;
        let config = self.registry.config();
        let facts = Facts {
            identity: self.identity,
            transport,
            era: "",
            method: "",
            profile: self.profile.map_or("", |p| p.name.as_str()),
            plugin,
            target,
            arguments: None,
            signer: config.signer_of(&plugin.file),
        };
        if let Some(rule) = config.policy.hides(&facts) {
            return Some(rule);
        }
        self.profile
            .filter(|p| p.hides(&facts))
            .map(|_| PROFILE_RULE)
    }

    /// Whether the caller may see `target` of `plugin`: the hide rules,
    /// then the profile's membership and its own `hide`.
    fn shows(&self, plugin: &Plugin, target: Target<'_>) -> bool {
        let held = match (self.profile, target) {
            (None, _) => true,
            // A tool's membership is its place in the profile's surface.
            (Some(_), Target::Tool { .. }) => true,
            (Some(p), Target::Resource(uri)) => p.holds_resource(plugin, uri),
            (Some(p), Target::Prompt(name)) => p.holds_prompt(plugin, name),
        };
        held && self.hidden_by(plugin, target).is_none()
    }

    /// The tools the caller may see, under the names served to it, in the
    /// order served (by name; a profile's own order through one).
    pub fn tools(self) -> Vec<crate::catalog::Shown> {
        match self.profile {
            None => self
                .registry
                .tools()
                .filter(|t| self.shows(&t.plugin, tool_target(t)))
                .map(crate::catalog::Shown::plain)
                .collect(),
            Some(profile) => self
                .surface(profile)
                .iter()
                .filter(|s| self.shows(&s.tool.plugin, tool_target(&s.tool)))
                .cloned()
                .collect(),
        }
    }

    /// The tool served to the caller as `name`, if it may see it: the
    /// registry's tool (named as the registry serves it, which rules and
    /// the audit trail see).
    pub fn tool(self, name: &str) -> Option<ToolRef> {
        match self.profile {
            None => self
                .registry
                .tool(name)
                .filter(|t| self.shows(&t.plugin, tool_target(t)))
                .cloned(),
            Some(profile) => self
                .surface(profile)
                .iter()
                .find(|s| s.name == name)
                .filter(|s| self.shows(&s.tool.plugin, tool_target(&s.tool)))
                .map(|s| s.tool.clone()),
        }
    }

    /// The resources the caller may see (each at the URI its component
    /// serves it at; [`Visible::show_resource`] gives the one served).
    pub fn resources(self) -> impl Iterator<Item = &'a Offered<ResourceDefinition>> {
        self.registry.resources().filter(move |r| {
            self.shows(&r.plugin, Target::Resource(&r.item.uri))
                && !self.profile.is_some_and(|p| p.shadows_uri(&r.item.uri))
        })
    }

    /// `resource` (as its component lists it) as this caller is shown it:
    /// at the URI, and with the words, its profile gives it.
    pub fn show_resource(self, mut resource: rmcp::model::Resource) -> rmcp::model::Resource {
        let Some(o) = self
            .profile
            .and_then(|p| p.resource_overrides.get(&resource.uri))
        else {
            return resource;
        };
        if let Some(uri) = &o.name {
            resource.uri = uri.clone();
        }
        if let Some(title) = &o.title {
            resource.title = Some(title.clone());
        }
        if let Some(description) = &o.description {
            resource.description = Some(description.clone());
        }
        resource
    }

    /// The prompt `prompt` (as the registry lists it) as this caller is
    /// shown it: under the name, and with the words, its profile gives it.
    pub fn show_prompt(self, mut prompt: rmcp::model::Prompt) -> rmcp::model::Prompt {
        let Some(o) = self
            .profile
            .and_then(|p| p.prompt_overrides.get(&prompt.name))
        else {
            return prompt;
        };
        if let Some(name) = &o.name {
            prompt.name = name.clone();
        }
        if let Some(title) = &o.title {
            prompt.title = Some(title.clone());
        }
        if let Some(description) = &o.description {
            prompt.description = Some(description.clone());
        }
        prompt
    }

    /// The resource templates the caller may see.
    pub fn templates(self) -> impl Iterator<Item = &'a Offered<TemplateSpec>> {
        self.registry.templates().filter(move |t| {
            self.shows(&t.plugin, Target::Resource(&t.item.definition.uri_template))
        })
    }

    /// The resource template `uri_template`, if the caller may see it.
    pub fn template(self, uri_template: &str) -> Option<&'a Offered<TemplateSpec>> {
        self.registry
            .template(uri_template)
            .filter(|t| self.shows(&t.plugin, Target::Resource(&t.item.definition.uri_template)))
    }

    /// The prompts the caller may see (each under the registry's name;
    /// [`Visible::show_prompt`] gives the one served).
    pub fn prompts(self) -> impl Iterator<Item = &'a Offered<PromptDefinition>> {
        self.registry.prompts().filter(move |p| {
            self.shows(&p.plugin, Target::Prompt(&p.key))
                && !self
                    .profile
                    .is_some_and(|profile| profile.shadows_prompt(&p.key))
        })
    }

    /// The prompt served to the caller as `name`, if it may see it (a
    /// profile's alias found under the registry's name).
    pub fn prompt(self, name: &str) -> Option<&'a Offered<PromptDefinition>> {
        let name = match self.profile {
            Some(profile) => profile.registry_prompt(name)?,
            None => name,
        };
        self.registry
            .prompt(name)
            .filter(|p| self.shows(&p.plugin, Target::Prompt(&p.key)))
    }

    /// Where `uri` is served for this caller: the resource at `uri` if the
    /// caller may see it, else the first template matching `uri` that the
    /// caller may see. What is hidden from the caller shadows nothing: a
    /// hidden resource or template at the same URI is passed over, as if it
    /// were not served.
    pub fn resource_at(self, uri: &str) -> Option<ResourceTarget> {
        // The URI the component serves: a profile's alias stands for it,
        // and the URI it renamed away is unknown through it.
        let uri = match self.profile {
            Some(profile) => profile.registry_uri(uri)?,
            None => uri,
        };
        if let Some(r) = self
            .registry
            .resource(uri)
            .filter(|r| self.shows(&r.plugin, Target::Resource(&r.item.uri)))
        {
            return Some(ResourceTarget {
                plugin: r.plugin.clone(),
                variables: Vec::new(),
                target: r.item.uri.clone(),
                uri: uri.to_string(),
            });
        }
        self.registry
            .templates_for(uri)
            .find(|(t, _)| self.shows(&t.plugin, Target::Resource(&t.item.definition.uri_template)))
            .map(|(t, variables)| ResourceTarget {
                plugin: t.plugin.clone(),
                variables,
                target: t.item.definition.uri_template.clone(),
                uri: uri.to_string(),
            })
    }

    /// Whether the caller may see something served at `uri`.
    pub fn serves_uri(self, uri: &str) -> bool {
        self.resource_at(uri).is_some()
    }
}

/// The rule name a profile's own `hide` is recorded under.
pub(crate) const PROFILE_RULE: &str = "profile";

/// A tool as the rules see it.
pub(crate) fn tool_target(tool: &ToolRef) -> Target<'_> {
    Target::Tool {
        name: &tool.name,
        spec: &tool.spec,
    }
}

/// The metrics a [`Record`] keeps.
enum Count {
    /// A `tools/call` of a known tool.
    Call(metrics::CallCount),
    /// A read, get or completion.
    Offer(metrics::OfferCount),
}

/// What one request that reaches plugin code leaves behind: its audit
/// record (with `host.audit`) and its metrics, finished together by one of
/// the `finish`/`refuse` methods. Dropped unfinished (the transport dropped
/// the request), it is recorded as cancelled.
pub(crate) struct Record {
    /// The audit record; imports add upstream requests and answers to it.
    audit: Option<Arc<CallAudit>>,
    /// The metrics; a count dropped unfinished records itself as
    /// cancelled (or, before a call ran, rejected).
    count: Option<Count>,
    /// Whether the record was written.
    finished: bool,
    /// Traces and the cost metrics of a tool call.
    trace: Option<crate::telemetry::CallTrace>,
}

impl Record {
    /// The hooks for the call or offer to report to while it runs: the
    /// metrics, and the audit record (with `host.audit`).
    pub fn hooks(&self) -> Arc<dyn CallHooks> {
        Arc::new((
            (metrics::CallMetrics, self.audit.clone()),
            self.trace.clone(),
        ))
    }

    /// Records which per-caller credentials (by secret name) the call was
    /// given.
    pub fn credentials(&self, names: Vec<String>) {
        if let Some(audit) = &self.audit
            && !names.is_empty()
        {
            audit.credentials(names);
        }
    }

    /// Records the approval the call needed, as it stands.
    pub fn approval(&self, note: crate::audit::ApprovalNote) {
        if let Some(audit) = &self.audit {
            audit.approval(note);
        }
    }

    /// The call starts running: a drop from now on counts as cancelled.
    pub fn running(&mut self) {
        if let Some(Count::Call(count)) = &mut self.count {
            count.running();
        }
    }

    /// Writes the audit record (a failure is logged and counted by the
    /// trail; the answer stands).
    async fn write(&mut self, ending: Ending<'_>) {
        self.finished = true;
        if let Some(audit) = &self.audit {
            let _ = audit.finish(ending).await;
        }
    }

    /// The request was refused before its code ran, with `code`.
    pub async fn refused(mut self, code: &'static str) {
        self.write(Ending::Refused(code)).await;
    }

    /// The call failed with a tool error of `code` before it ran (the
    /// confirmation-state store was out of reach): counted as that error,
    /// recorded as refused.
    pub async fn failed_before_running(mut self, code: &'static str) {
        if let Some(Count::Call(count)) = &mut self.count {
            count.failed_before_running(code);
        }
        self.write(Ending::Refused(code)).await;
    }

    /// The call ran to `outcome`; on record before the client hears it.
    pub async fn finish_call(mut self, outcome: &CallOutcome) {
        if matches!(outcome, CallOutcome::Failed(_)) {
            crate::telemetry::record_tool_error();
        }
        if let Some(Count::Call(count)) = &mut self.count {
            count.finish(outcome);
        }
        self.write(Ending::Outcome(outcome)).await;
    }

    /// The read, get or completion ended: `Ok`, or with the error's code.
    pub async fn finish_offer(mut self, result: Result<(), &str>) {
        if let Some(Count::Offer(count)) = &mut self.count {
            count.finish(result);
        }
        self.write(Ending::Offer(result)).await;
    }

    /// The client cancelled the request.
    pub async fn cancelled(mut self) {
        // A count dropped while running records itself as cancelled:
        // counted before the record is written.
        drop(self.count.take());
        self.write(Ending::Cancelled).await;
    }
}

impl Drop for Record {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        // The transport dropped the request mid-way: what ran is still
        // recorded, as cancelled, off the dropped task.
        if let Some(audit) = self.audit.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move {
                let _ = audit.finish(Ending::Cancelled).await;
            });
        }
    }
}

impl Request {
    /// Runs one read, get or completion of `plugin`'s code (`run`, given
    /// the hooks to report to), if `[[policy.rules]]` allow it: counted in
    /// the metrics and, with `host.audit`, recorded as `kind` of `target`
    /// with the client's `arguments` (see [`crate::audit`]) before the
    /// answer. `Err` when the rules refused it or the client cancelled it
    /// (`cancelled`), with the error to answer.
    pub async fn run_offer<T, F>(
        &self,
        gateway: &Gateway,
        cancelled: &tokio_util::sync::CancellationToken,
        plugin: &Arc<Plugin>,
        (kind, target): (OfferKind, Target<'_>),
        arguments: Value,
        run: impl FnOnce(Arc<dyn CallHooks>) -> F,
    ) -> Result<Result<T, OfferError>, rmcp::ErrorData>
    where
        F: std::future::Future<Output = Result<T, OfferError>>,
    {
        let method = match kind {
            OfferKind::ResourceRead => "resources/read",
            OfferKind::PromptGet => "prompts/get",
            OfferKind::Completion => "completion/complete",
        };
        let policy = crate::telemetry::policy_span();
        let authorized = policy
            .in_span(self.authorize(gateway, method, (plugin, target), &arguments, true))
            .await;
        let (Authorized::Run { note, .. } | Authorized::Refused { note, .. }) = &authorized;
        crate::telemetry::record_policy(&policy, &note.rule, &note.outcome);
        drop(policy);
        let shown = target.name().to_string();
        let (note, refusal) = match authorized {
            Authorized::Run { note, needs } => {
                // Only a tool call carries a question for the user, or
                // waits for an approver.
                let refusal = (needs != YesFrom::Nobody).then(|| {
                    PolicyRefusal::Denied(format!(
                        "the operator's policy rule {:?} asks for a yes (the user's or an \
                         approver's), which only a tool call can wait for, so this {} is refused \
                         (the operator can narrow the rule with request.method == \"tools/call\")",
                        note.rule,
                        kind.label()
                    ))
                });
                (note, refusal)
            }
            Authorized::Refused { note, refusal } => (note, Some(refusal)),
        };
        let record = self.record_offer(gateway, plugin, (kind, &shown), &arguments, Some(note));
        if let Some(refusal) = refusal {
            record.finish_offer(Err(refusal.code())).await;
            return Err(refusal.error());
        }
        let result = tokio::select! {
            result = run(record.hooks()) => result,
            _ = cancelled.cancelled() => {
                record.cancelled().await;
                tracing::info!(plugin = %plugin.file, "{} cancelled by the client", kind.label());
                return Err(super::resources::cancelled());
            }
        };
        let ending = result.as_ref().map(|_| ()).map_err(OfferError::code);
        record.finish_offer(ending).await;
        Ok(result)
    }
}

/// See [`Gateway::audit_malformed_call`].
pub(super) async fn record_malformed_call(
    gateway: &Gateway,
    message: &[u8],
    parts: Option<&axum::http::request::Parts>,
) {
    let Some(log) = gateway.audit_log() else {
        return;
    };
    let Ok(Value::Object(request)) = serde_json::from_slice::<Value>(message) else {
        return;
    };
    if request.get("method").and_then(Value::as_str) != Some("tools/call") {
        return;
    }
    let params = request.get("params");
    let name = params
        .and_then(|p| p.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let arguments = params
        .and_then(|p| p.get("arguments"))
        .cloned()
        .unwrap_or(Value::Null);
    let plugin = gateway.registry().tool(name).map(|t| t.plugin.clone());
    let audit = log.start_refused(
        call_context_of_parts(parts, "none"),
        plugin.as_deref(),
        name,
        &arguments,
    );
    let _ = audit.finish(Ending::Refused("MALFORMED_REQUEST")).await;
}
