//! `http`: outbound requests made by the host for a guest, and the one
//! policy path every outbound request takes.
//!
//! A guest reaches the network through `toolhost:plugin/http` (this
//! module's `send`) or through standard `wasi:http/outgoing-handler`
//! (`super::wasi_http`, what JavaScript's `fetch`, Python's and Rust's
//! `wasi` HTTP clients use). Both turn the request into an
//! `OutboundRequest` and hand it to `Outbound::send`: there is no
//! other way out, so both get the same checks, limits, audit and metrics
//! (ADR 0036). Which of the operator's credentials a request carries is
//! chosen in one function, `Outbound::credentials_for`.
//!
//! Each request passes these checks, in order, before anything is sent:
//! 1. **Confirmation gate**: a read-only tool may send only `GET`/`HEAD`;
//!    any other tool may send another method only while the latest answer
//!    to a confirmation in this call is a yes. A refusal ends the call
//!    there, as a `PERMISSION_DENIED` violation: the guest gets no chance
//!    to ask a question or send anything else.
//! 2. **Headers**: those the host derives are refused, and so are the
//!    method-override headers (`X-HTTP-Method-Override` and its kin), which
//!    would let a `GET` act as another method behind the checks on methods.
//! 3. **Per-call budget**: `limits.http_requests_per_call`.
//! 4. **Network policy**
//!    ([`NetworkPolicy::check`](crate::policy::NetworkPolicy::check)):
//!    host, port, method, path.
//! 5. **Credentials**
//!    ([`CredentialScope::use_for`](crate::policy::CredentialScope::use_for)):
//!    those configured for the destination's host and port are set
//!    (replacing any header of the same name the guest sent); a request
//!    that would carry one over plain http to an address that is not
//!    loopback is refused.
//! 6. **Address check**, in the DNS resolver (`PolicyResolver`): a name
//!    resolving to a non-public address is refused unless the rule that
//!    covers this request allows it (such requests go through the calling
//!    plugin's own client, whose resolver allows that plugin's names; all
//!    others through the shared client, which allows none).
//!
//! Redirects are followed here, not by reqwest, so each hop is checked
//! again (steps 3 to 6) and credentials are only sent to the destination
//! they belong to. On a hop to another origin (scheme, host or port) the
//! guest's own `Authorization`, `Cookie` and `Proxy-Authorization` headers
//! are dropped. The body is read up to `limits.http_body_bytes`.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tracing::Instrument;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::{Client, Url};

use super::{CallState, Stop};
use crate::bindings::http::{Error, Host, Method, Request, Response};
use crate::hooks::{CallHooks, MutationRefused, Upstream, UpstreamStatus};
use crate::policy::{CredentialUse, DenialReason, HostRule, host_of, is_public};
use crate::settings::PluginSettings;
use crate::spec::ToolSpec;

/// Most redirects followed for one request.
const MAX_REDIRECTS: u32 = 5;

/// Headers the guest may not set: the host derives them from the request.
const FORBIDDEN_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "upgrade",
    "proxy-authorization",
    "te",
    "trailer",
];

/// Headers that ask a server to treat the request as another method. The
/// host checks the method it sends (read-only tools, confirmation,
/// `methods`), so a guest may not name a different one here.
const METHOD_OVERRIDE_HEADERS: &[&str] = &[
    "x-http-method-override",
    "x-http-method",
    "x-method-override",
];

/// Headers that ask a server (or the proxy in front of it) to route the
/// request to another path than the one it was sent to. The host checks
/// the path against `paths`, so a guest may not name a different one
/// here.
const URL_OVERRIDE_HEADERS: &[&str] = &["x-original-url", "x-rewrite-url", "x-forwarded-prefix"];

/// The methods the host sends. Anything else (`TRACE`, which echoes the
/// request back, credentials included; `CONNECT`; a made-up method) is
/// refused before it is checked against anything.
const SENT_METHODS: &[reqwest::Method] = &[
    reqwest::Method::GET,
    reqwest::Method::HEAD,
    reqwest::Method::POST,
    reqwest::Method::PUT,
    reqwest::Method::PATCH,
    reqwest::Method::DELETE,
    reqwest::Method::OPTIONS,
];

/// Requests of one call the host refuses before it stops sending the
/// call's requests at all: each refusal is a log line and an entry in the
/// call's audit record, so a tool that keeps asking for what is refused
/// must not write without bound. Past it, the call fails.
pub(crate) const MAX_REFUSED_REQUESTS: u32 = 16;

/// Guest-set headers that carry the guest's own credentials; dropped when a
/// redirect leads to another origin, as browsers do.
const ORIGIN_BOUND_HEADERS: &[&str] = &["authorization", "cookie", "proxy-authorization"];

/// The host's HTTP clients: one shared by every plugin, and one for each
/// plugin block with `allow_private` rules, whose resolver lets exactly
/// that block's names resolve to non-public addresses. Connections are
/// reused across calls.
#[derive(Clone)]
pub struct HttpClient {
    /// For plugins without `allow_private` rules: no name may resolve to a
    /// non-public address.
    shared: Client,
    /// By plugin block name.
    private: Arc<HashMap<String, Client>>,
}

impl HttpClient {
    /// Builds the clients from every plugin block's rules.
    pub fn new(plugins: &[PluginSettings]) -> anyhow::Result<HttpClient> {
        let mut private = HashMap::new();
        for plugin in plugins {
            let rules: Vec<HostRule> = plugin
                .network
                .rules()
                .iter()
                .filter(|r| r.allows_private())
                .cloned()
                .collect();
            if !rules.is_empty() {
                private.insert(plugin.name.clone(), build_client(rules)?);
            }
        }
        Ok(HttpClient {
            shared: build_client(Vec::new())?,
            private: Arc::new(private),
        })
    }

    /// The client for a request of the plugin block `plugin`: its own
    /// client only when the rule covering the request allows a non-public
    /// address (`allow_private`), otherwise the shared one, whose resolver
    /// refuses every non-public answer.
    fn client_for(&self, plugin: &str, allow_private: bool) -> &Client {
        match self.private.get(plugin) {
            Some(client) if allow_private => client,
            _ => &self.shared,
        }
    }
}

/// A client whose resolver lets only names matched by `private_rules`
/// resolve to non-public addresses.
fn build_client(private_rules: Vec<HostRule>) -> reqwest::Result<Client> {
    Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .dns_resolver(Arc::new(PolicyResolver { private_rules }))
        .user_agent(concat!("toolhost/", env!("CARGO_PKG_VERSION")))
        .pool_idle_timeout(Duration::from_secs(60))
        .build()
}

/// Resolves names with the system resolver and refuses non-public answers
/// for names no rule allows them for.
struct PolicyResolver {
    private_rules: Vec<HostRule>,
}

/// The resolver's refusal; found again in the error chain to report
/// `denied` rather than a connection failure. It does not carry the
/// address: the guest learns that the name is internal, not where it
/// points (the operator's log has the address).
#[derive(Debug, thiserror::Error)]
#[error(
    "{name} resolves to a non-public address, which no rule allows (set `allow_private = true` on the `allow` entry that covers this request if it is a local service)"
)]
struct PrivateAddress {
    name: String,
}

impl Resolve for PolicyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let name = name.as_str().to_ascii_lowercase();
        let allow_private = self.private_rules.iter().any(|r| r.matches_host(&name));
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
            if !allow_private && let Some(bad) = addrs.iter().find(|a| !is_public(a.ip())) {
                tracing::info!(%name, addr = %bad.ip(), "denied: the name resolves to a non-public address");
                return Err(Box::new(PrivateAddress { name }) as _);
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

fn method_name(m: Method) -> &'static str {
    match m {
        Method::Get => "GET",
        Method::Head => "HEAD",
        Method::Post => "POST",
        Method::Put => "PUT",
        Method::Patch => "PATCH",
        Method::Delete => "DELETE",
        Method::Options => "OPTIONS",
    }
}

/// An outbound request as either HTTP import hands it to the policy path:
/// `toolhost:plugin/http`'s `send` and `wasi:http/outgoing-handler`'s
/// `handle` (see `wasi_http`) both become one of these.
pub(crate) struct OutboundRequest {
    /// The method.
    pub method: reqwest::Method,
    /// The absolute URL.
    pub url: String,
    /// The guest's headers.
    pub headers: Vec<(String, String)>,
    /// The body, if any.
    pub body: Option<Vec<u8>>,
    /// The guest's own timeout, capped by `limits.http_timeout_secs`.
    pub timeout_ms: Option<u32>,
}

/// Why the policy path did not answer with a response.
pub(crate) enum Refused {
    /// The call broke a rule or cannot be recorded: it ends (the reason is
    /// in the call's [`OutboundRecord`]); the text is the trap's.
    EndCall(&'static str),
    /// The request failed or was refused; the guest gets this error and
    /// the call goes on.
    Error(Error),
}

/// What a call's requests leave behind for the call's outcome, shared with
/// requests still in flight (a `wasi:http` request runs in a task of its
/// own while the guest goes on).
#[derive(Debug, Default)]
pub(crate) struct OutboundRecord {
    /// HTTP requests made so far (redirect hops included), against
    /// `limits.http_requests_per_call`.
    pub requests_made: u32,
    /// A rule the tool broke; the call fails with it whatever it returns.
    pub violation: Option<String>,
    /// Set when a mutation was refused because the audit trail cannot
    /// record it.
    pub stop: Option<Stop>,
    /// Time in upstream requests, summed, for the call's cost.
    pub upstream_time: Duration,
    /// Request body bytes sent, for the cost.
    pub bytes_out: u64,
    /// Response body bytes read, for the cost.
    pub bytes_in: u64,
    /// Requests the host refused, against [`MAX_REFUSED_REQUESTS`].
    pub refused_requests: u32,
    /// Request body bytes this call's `wasi:http` requests hold in the
    /// host at once, gathered before they are sent, against
    /// `limits.memory_mib`.
    pub request_bodies_held: u64,
    /// Hosts requests went to, each once, at most
    /// [`MAX_HOSTS`](crate::cost::MAX_HOSTS).
    pub hosts: Vec<String>,
    /// A limit a request hit, by its key, for the cost.
    pub limit_hit: Option<&'static str>,
}

/// Everything the policy path needs of a call, taken from its
/// [`CallState`] when a request is made (cheap: shared pointers), so a
/// request can run after the import returned.
#[derive(Clone)]
pub(crate) struct Outbound {
    settings: Arc<PluginSettings>,
    tool: Arc<ToolSpec>,
    http: HttpClient,
    hooks: Arc<dyn CallHooks>,
    /// Whether the latest answer to a confirmation in this call was a yes
    /// when the request was made.
    confirmed: bool,
    /// When the call's time is up.
    deadline: std::time::Instant,
    record: Arc<Mutex<OutboundRecord>>,
    /// The values of the plugin's per-caller credentials for this call's
    /// caller, by the credential's index.
    caller_credentials: Arc<[Option<String>]>,
}

impl CallState {
    /// The policy path's view of this call, as it is now.
    pub(crate) fn outbound(&self) -> Outbound {
        Outbound {
            settings: self.settings.clone(),
            tool: self.tool.clone(),
            http: self.http.clone(),
            hooks: self.hooks.clone(),
            confirmed: self.confirmed,
            deadline: self.deadline,
            record: self.outbound.clone(),
            caller_credentials: self.caller_credentials.clone(),
        }
    }
}

impl Host for CallState {
    async fn send(&mut self, request: Request) -> wasmtime::Result<Result<Response, Error>> {
        let request = OutboundRequest {
            method: reqwest::Method::from_bytes(method_name(request.method).as_bytes())
                .expect("a known method"),
            url: request.url,
            headers: request.headers,
            body: request.body,
            timeout_ms: request.timeout_ms,
        };
        match self.outbound().send(request).await {
            Ok(response) => Ok(Ok(response)),
            Err(Refused::Error(error)) => Ok(Err(error)),
            // The guest gets no chance to ask a question or send anything
            // else.
            Err(Refused::EndCall(why)) => Err(wasmtime::format_err!("{why}")),
        }
    }
}

fn is_read(method: &reqwest::Method) -> bool {
    matches!(*method, reqwest::Method::GET | reqwest::Method::HEAD)
}

impl Outbound {
    /// The one policy path of outbound HTTP: every request of either HTTP
    /// import (`toolhost:plugin/http`, `wasi:http`) passes here, and nothing
    /// is sent any other way. The checks, in order, are in the module's
    /// documentation.
    pub(crate) async fn send(&self, request: OutboundRequest) -> Result<Response, Refused> {
        // Before any check or question: such a request can never leave.
        if !SENT_METHODS.contains(&request.method) {
            return Err(Refused::Error(Error::InvalidRequest(format!(
                "the host sends no {} requests, only GET, HEAD, POST, PUT, PATCH, DELETE and \
                 OPTIONS (TRACE would echo the request, its credentials included, back)",
                request.method
            ))));
        }
        if let Some((reason, why)) = self.gate(&request.method) {
            tracing::warn!(plugin = %self.settings.name, tool = %self.tool.name, "refused: {why}");
            self.hooks.policy_denial(&self.settings.name, reason);
            self.report_refused(&request.method, &request.url, reason.label());
            self.record().violation.get_or_insert(why);
            return Err(Refused::EndCall(
                "mutation refused by the confirmation gate",
            ));
        }
        if self.before_mutation(&request).await.is_err() {
            // The trail logs why, once per failure episode.
            tracing::warn!(
                plugin = %self.settings.name,
                tool = %self.tool.name,
                "refused a {} request: the audit trail cannot record it (host.audit)",
                request.method
            );
            self.report_refused(&request.method, &request.url, "audit_unwritable");
            self.record().stop.get_or_insert(Stop::Unaudited(
                "the host cannot write its audit trail, and changes nothing it cannot record"
                    .to_string(),
            ));
            return Err(Refused::EndCall(
                "mutation refused: the audit trail cannot be written",
            ));
        }
        self.send_checked(request).await.map_err(Refused::Error)
    }

    fn record(&self) -> std::sync::MutexGuard<'_, OutboundRecord> {
        self.record.lock().expect("not poisoned")
    }

    /// Counts `bytes` more of a request body gathered in the host, unless
    /// the call's requests would then hold more than `limits.memory_mib`
    /// together; [`Outbound::release_request_body`] gives them back.
    pub(crate) fn hold_request_body(&self, bytes: u64) -> bool {
        let most = self.settings.limits.memory_bytes;
        let mut record = self.record();
        if record.request_bodies_held.saturating_add(bytes) > most {
            return false;
        }
        record.request_bodies_held += bytes;
        true
    }

    /// Gives back `bytes` [`Outbound::hold_request_body`] counted.
    pub(crate) fn release_request_body(&self, bytes: u64) {
        let mut record = self.record();
        record.request_bodies_held = record.request_bodies_held.saturating_sub(bytes);
    }

    /// Counts one more refused request: whether it is logged and recorded
    /// (the first [`MAX_REFUSED_REQUESTS`] of a call are). The last of
    /// them fails the call (once said); later requests are refused before
    /// they are counted (`send_checked`).
    fn count_refusal(&self) -> bool {
        let mut record = self.record();
        record.refused_requests = record.refused_requests.saturating_add(1);
        if record.refused_requests == MAX_REFUSED_REQUESTS {
            record.violation.get_or_insert_with(|| {
                format!(
                    "tool {} had {MAX_REFUSED_REQUESTS} requests refused by the host; it may send \
                     no more in this call. Each refusal says what the operator's policy allows",
                    self.tool.name
                )
            });
        }
        record.refused_requests <= MAX_REFUSED_REQUESTS
    }

    /// Counts one more request of the call, unless it already made
    /// `most` (`limits.http_requests_per_call`).
    fn take_request_place(&self, most: u32) -> bool {
        let mut record = self.record();
        if record.requests_made >= most {
            return false;
        }
        record.requests_made += 1;
        true
    }

    /// Before a request that is not `GET`/`HEAD`: the hooks may refuse it
    /// (with an audit trail, the call's `intent` goes on disk first).
    async fn before_mutation(&self, request: &OutboundRequest) -> Result<(), MutationRefused> {
        if is_read(&request.method) {
            return Ok(());
        }
        let next = match Url::parse(&request.url) {
            Ok(url) => Upstream::to(request.method.as_str(), &url),
            // Refused later as a bad URL; nothing can leave.
            Err(_) => return Ok(()),
        };
        self.hooks.clone().before_mutation(next).await
    }

    /// Reports a request the host refused to send to the call's hooks,
    /// with why (an unparsable URL, which cannot leave, is not reported).
    fn report_refused(&self, method: &reqwest::Method, url: &str, reason: &str) {
        if let Ok(url) = Url::parse(url) {
            self.hooks
                .upstream(Upstream::refused(method.as_str(), &url, reason));
        }
    }

    /// Reports a request sent (or tried) to the call's hooks.
    fn report_upstream(
        &self,
        method: &reqwest::Method,
        url: &Url,
        status: Option<u16>,
        read: Result<Option<u64>, &Error>,
    ) {
        let mut entry = Upstream::to(method.as_str(), url);
        entry.status = status;
        match read {
            Ok(bytes) => entry.bytes = bytes,
            Err(error) => {
                if matches!(error, Error::Denied(_)) {
                    // The resolver's refusal: the request never left.
                    entry.refused = Some(DenialReason::PrivateAddress.label().to_string());
                }
                let kind = match error {
                    Error::Timeout => "timeout",
                    Error::Denied(_) => "denied",
                    Error::BodyTooLarge(_) => "body_too_large",
                    _ => "connection_failed",
                };
                entry.error = Some(kind.to_string());
            }
        }
        self.hooks.upstream(entry);
    }

    /// The confirmation gate: why a request with `method` may not be sent
    /// by this call, if it may not.
    fn gate(&self, method: &reqwest::Method) -> Option<(DenialReason, String)> {
        if is_read(method) {
            return None;
        }
        if self.tool.annotations.read_only {
            Some((
                DenialReason::ReadOnly,
                format!(
                    "tool {} is read-only and may not send {method}",
                    self.tool.name
                ),
            ))
        } else if !self.confirmed {
            Some((
                DenialReason::Unconfirmed,
                format!(
                    "tool {} tried to send {method} without the user's confirmation in this call",
                    self.tool.name
                ),
            ))
        } else {
            None
        }
    }

    /// The headers of the operator's `credentials` to set on a request to
    /// `url`: the one place where the host chooses which secret a request
    /// carries. `Err` when one may not be sent there (clear text to an
    /// address that is not loopback): the reason and why.
    fn credentials_for(
        &self,
        url: &Url,
    ) -> Result<Vec<(reqwest::header::HeaderName, reqwest::header::HeaderValue)>, CredentialError>
    {
        let host = host_of(url).unwrap_or_default();
        let mut headers = Vec::new();
        for (index, credential) in self.settings.credentials.iter().enumerate() {
            match credential.scope.use_for(url) {
                CredentialUse::NotFor => continue,
                CredentialUse::Send => {}
                CredentialUse::ClearText => {
                    return Err(CredentialError::ClearText(format!(
                        "the operator's `credentials` entry for {host} ({}) is sent only over https (or to a loopback address), never in clear text to {}; use an https URL",
                        credential.header,
                        redacted(url)
                    )));
                }
            }
            let value = if credential.per_caller {
                // Chosen per caller: this call's caller's value, or nothing
                // is sent at all.
                match self
                    .caller_credentials
                    .get(index)
                    .and_then(Option::as_deref)
                {
                    Some(value) => value,
                    None => {
                        return Err(CredentialError::NoneForCaller(format!(
                            "the operator's `credentials` entry {} for {host} ({}) is chosen per caller, and there is none for this caller; nothing was sent (ask the operator to provision yours)",
                            index + 1,
                            credential.header,
                        )));
                    }
                }
            } else {
                credential.value.as_str()
            };
            let (Ok(name), Ok(mut value)) = (
                reqwest::header::HeaderName::from_bytes(
                    credential.header.to_ascii_lowercase().as_bytes(),
                ),
                reqwest::header::HeaderValue::from_str(value),
            ) else {
                return Err(CredentialError::Invalid(format!(
                    "the operator's credential header {} for {host} is not a valid header",
                    credential.header
                )));
            };
            value.set_sensitive(true);
            headers.push((name, value));
        }
        Ok(headers)
    }

    async fn send_checked(&self, request: OutboundRequest) -> Result<Response, Error> {
        let mut url =
            Url::parse(&request.url).map_err(|e| Error::InvalidRequest(format!("bad URL: {e}")))?;
        let mut method = request.method;
        if self.record().refused_requests >= MAX_REFUSED_REQUESTS {
            // Neither logged nor recorded again (see `count_refusal`).
            return Err(Error::Denied(format!(
                "the host refused {MAX_REFUSED_REQUESTS} requests of this call already and sends \
                 no more of them"
            )));
        }

        let mut body = request.body;
        let mut headers = reqwest::header::HeaderMap::new();
        for (name, value) in &request.headers {
            let lower = name.to_ascii_lowercase();
            if FORBIDDEN_HEADERS.contains(&lower.as_str()) {
                return Err(Error::InvalidRequest(format!(
                    "the header {name:?} is set by the host"
                )));
            }
            let overrides = if METHOD_OVERRIDE_HEADERS.contains(&lower.as_str()) {
                Some((
                    DenialReason::MethodOverride,
                    "the method a request is sent with, and a method override would go around \
                     that check; send the method itself",
                ))
            } else if URL_OVERRIDE_HEADERS.contains(&lower.as_str()) {
                Some((
                    DenialReason::UrlOverride,
                    "the path a request is sent to against the operator's `paths`, and a header \
                     that routes it to another path would go around that check; send the request \
                     to the path itself",
                ))
            } else {
                None
            };
            if let Some((reason, check)) = overrides {
                let why = format!(
                    "tool {} may not send the header {name}: the host checks {check}",
                    self.tool.name
                );
                if self.count_refusal() {
                    tracing::warn!(plugin = %self.settings.name, tool = %self.tool.name, "refused: {why}");
                    self.hooks.policy_denial(&self.settings.name, reason);
                    self.hooks
                        .upstream(Upstream::refused(method.as_str(), &url, reason.label()));
                }
                self.record().violation.get_or_insert(why.clone());
                return Err(Error::Denied(why));
            }
            let name = reqwest::header::HeaderName::from_bytes(lower.as_bytes())
                .map_err(|_| Error::InvalidRequest(format!("bad header name {name:?}")))?;
            let value = reqwest::header::HeaderValue::from_str(value)
                .map_err(|_| Error::InvalidRequest(format!("bad value for header {name}")))?;
            headers.append(name, value);
        }
        let limits = &self.settings.limits;
        let timeout = request
            .timeout_ms
            .map(|ms| Duration::from_millis(ms.into()))
            .unwrap_or(limits.http_timeout)
            .min(limits.http_timeout)
            .min(
                self.deadline
                    .saturating_duration_since(std::time::Instant::now()),
            );
        // One deadline for the whole request: every redirect hop and the
        // body together, not each of them.
        let deadline = tokio::time::Instant::now() + timeout;

        for hop in 0..=MAX_REDIRECTS {
            // Counted when checked: requests in flight together
            // (`wasi:http`) share the budget. A hop refused below gives its
            // place back, as it never left.
            if !self.take_request_place(limits.http_requests_per_call) {
                self.record().limit_hit = Some("limits.http_requests_per_call");
                if self.count_refusal() {
                    self.hooks.upstream(Upstream::refused(
                        method.as_str(),
                        &url,
                        "requests_per_call",
                    ));
                }
                return Err(Error::TooManyRequests(limits.http_requests_per_call));
            }
            let denied = |reason: DenialReason, why: String| {
                self.record().requests_made -= 1;
                if self.count_refusal() {
                    tracing::info!(plugin = %self.settings.name, tool = %self.tool.name, url = %redacted(&url), "denied: {why}");
                    self.hooks.policy_denial(&self.settings.name, reason);
                    self.hooks
                        .upstream(Upstream::refused(method.as_str(), &url, reason.label()));
                }
                Error::Denied(if hop == 0 {
                    why
                } else {
                    format!("redirect refused: {why}")
                })
            };
            let permit = self
                .settings
                .network
                .check(method.as_str(), &url)
                .map_err(|denial| denied(denial.reason, denial.message))?;

            let mut hop_headers = headers.clone();
            let host = host_of(&url).unwrap_or_default();
            match self.credentials_for(&url) {
                Ok(credentials) => {
                    for (name, value) in credentials {
                        hop_headers.insert(name, value);
                    }
                }
                Err(CredentialError::ClearText(why)) => {
                    return Err(denied(DenialReason::CredentialCleartext, why));
                }
                Err(CredentialError::NoneForCaller(why)) => {
                    return Err(denied(DenialReason::NoCallerCredential, why));
                }
                Err(CredentialError::Invalid(why)) => {
                    self.record().requests_made -= 1;
                    return Err(Error::InvalidRequest(why));
                }
            }
            // The hop's own span (HTTP client conventions): the URL without
            // query or userinfo, never a header's value.
            let span = client_span(&method, &url);
            if self.settings.propagate_trace_context {
                for (name, value) in span.in_scope(|| self.hooks.trace_context()) {
                    if let (Ok(name), Ok(value)) = (
                        reqwest::header::HeaderName::from_bytes(name.as_bytes()),
                        reqwest::header::HeaderValue::from_str(&value),
                    ) {
                        hop_headers.insert(name, value);
                    }
                }
            }
            let mut builder = self
                .http
                .client_for(&self.settings.name, permit.allow_private)
                .request(method.clone(), url.clone())
                .headers(hop_headers);
            if let Some(b) = &body {
                builder = builder.body(b.clone());
            }
            let sent_at = std::time::Instant::now();
            {
                let mut record = self.record();
                record.bytes_out += body.as_ref().map_or(0, |b| b.len() as u64);
                if record.hosts.len() < crate::cost::MAX_HOSTS && !record.hosts.contains(&host) {
                    record.hosts.push(host.clone());
                }
            }
            let took = |record: &mut OutboundRecord| record.upstream_time += sent_at.elapsed();
            // Labelled with the host of the `allow` entry that covers the
            // request, not the URL's.
            let rule_host = self.settings.network.rule_host(&host).unwrap_or_default();
            let upstream = |status| {
                self.hooks
                    .upstream_status(&self.settings.name, &rule_host, status)
            };
            let response = match tokio::time::timeout_at(deadline, builder.send())
                .instrument(span.clone())
                .await
            {
                Err(_) => {
                    took(&mut self.record());
                    span.record("error.type", "timeout");
                    upstream(UpstreamStatus::Timeout);
                    self.report_upstream(&method, &url, None, Err(&Error::Timeout));
                    return Err(Error::Timeout);
                }
                Ok(Err(e)) => {
                    took(&mut self.record());
                    let error = transport_error(&e);
                    span.record("error.type", error_kind(&error));
                    self.report_upstream(&method, &url, None, Err(&error));
                    match &error {
                        Error::Denied(_) => self
                            .hooks
                            .policy_denial(&self.settings.name, DenialReason::PrivateAddress),
                        Error::Timeout => upstream(UpstreamStatus::Timeout),
                        _ => upstream(UpstreamStatus::ConnectionFailed),
                    }
                    return Err(error);
                }
                Ok(Ok(r)) => r,
            };

            let status = response.status();
            span.record("http.response.status_code", status.as_u16());
            if status.as_u16() >= 400 {
                span.record("error.type", status.as_str());
            }
            upstream(UpstreamStatus::Code(status.as_u16()));
            if status.is_redirection()
                && let Some(location) = response.headers().get(reqwest::header::LOCATION)
            {
                took(&mut self.record());
                self.report_upstream(&method, &url, Some(status.as_u16()), Ok(None));
                let next = location
                    .to_str()
                    .ok()
                    .and_then(|l| url.join(l).ok())
                    .ok_or_else(|| {
                        Error::ConnectionFailed("a redirect with a bad Location".into())
                    })?;
                if status == reqwest::StatusCode::SEE_OTHER
                    || (matches!(status.as_u16(), 301 | 302) && method == reqwest::Method::POST)
                {
                    method = reqwest::Method::GET;
                    body = None;
                }
                if next.origin() != url.origin() {
                    for name in ORIGIN_BOUND_HEADERS {
                        headers.remove(*name);
                    }
                }
                url = next;
                continue;
            }
            let read = read_response(response, limits.http_body_bytes, deadline)
                .instrument(span.clone())
                .await;
            {
                let mut record = self.record();
                took(&mut record);
                match &read {
                    Ok(r) => {
                        record.bytes_in += r.body.len() as u64;
                        span.record("http.response.body.size", r.body.len() as u64);
                    }
                    Err(Error::BodyTooLarge(_)) => {
                        record.limit_hit = Some("limits.http_body_bytes");
                        span.record("error.type", "body_too_large");
                    }
                    Err(error) => {
                        span.record("error.type", error_kind(error));
                    }
                }
            }
            let bytes = read.as_ref().map(|r| Some(r.body.len() as u64));
            self.report_upstream(&method, &url, Some(status.as_u16()), bytes);
            return read;
        }
        Err(Error::ConnectionFailed(format!(
            "more than {MAX_REDIRECTS} redirects"
        )))
    }

    /// The plugin's settings (for the `wasi:http` adapter's bounds).
    pub(crate) fn settings(&self) -> &PluginSettings {
        &self.settings
    }

    /// The call's hooks.
    pub(crate) fn hooks(&self) -> Arc<dyn CallHooks> {
        self.hooks.clone()
    }

    /// When the call's time is up.
    pub(crate) fn deadline(&self) -> std::time::Instant {
        self.deadline
    }
}

/// The span of one upstream request (one redirect hop), after the HTTP
/// client semantic conventions: method, the URL without its query,
/// fragment or userinfo, the server's address and port; the status, the
/// body's size and an error's kind are recorded when known.
fn client_span(method: &reqwest::Method, url: &Url) -> tracing::Span {
    let mut shown = url.clone();
    shown.set_query(None);
    shown.set_fragment(None);
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    tracing::info_span!(
        target: "toolhost_runtime::http",
        "upstream",
        otel.name = %method,
        otel.kind = "client",
        http.request.method = %method,
        url.full = %shown,
        server.address = url.host_str().unwrap_or_default(),
        server.port = url.port_or_known_default().unwrap_or_default(),
        http.response.status_code = tracing::field::Empty,
        http.response.body.size = tracing::field::Empty,
        error.type = tracing::field::Empty,
    )
}

/// A failed request's kind, as `error.type` names it.
fn error_kind(error: &Error) -> &'static str {
    match error {
        Error::Timeout => "timeout",
        Error::Denied(_) => "denied",
        Error::BodyTooLarge(_) => "body_too_large",
        _ => "connection_failed",
    }
}

/// Why the operator's credentials cannot go on a request.
enum CredentialError {
    /// It would go in clear text to an address that is not loopback.
    ClearText(String),
    /// The configured header is not a valid header.
    Invalid(String),
    /// A credential chosen per caller applies, and the call has none for
    /// its caller.
    NoneForCaller(String),
}

async fn read_response(
    mut response: reqwest::Response,
    max_body: u64,
    deadline: tokio::time::Instant,
) -> Result<Response, Error> {
    if response.content_length().is_some_and(|n| n > max_body) {
        return Err(Error::BodyTooLarge(max_body));
    }
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .filter_map(|(k, v)| Some((k.as_str().to_string(), v.to_str().ok()?.to_string())))
        .collect();
    let mut body = Vec::new();
    let read = async {
        while let Some(chunk) = response.chunk().await.map_err(|e| transport_error(&e))? {
            if (body.len() + chunk.len()) as u64 > max_body {
                return Err(Error::BodyTooLarge(max_body));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(())
    };
    tokio::time::timeout_at(deadline, read)
        .await
        .map_err(|_| Error::Timeout)??;
    Ok(Response {
        status,
        headers,
        body,
    })
}

/// Maps a reqwest failure to the WIT error, recognising the resolver's
/// refusal as a policy denial.
fn transport_error(e: &reqwest::Error) -> Error {
    let mut source: Option<&dyn std::error::Error> = Some(e);
    while let Some(err) = source {
        if let Some(private) = err.downcast_ref::<PrivateAddress>() {
            return Error::Denied(private.to_string());
        }
        source = err.source();
    }
    if e.is_timeout() {
        return Error::Timeout;
    }
    let mut chain = Vec::new();
    let mut source: Option<&dyn std::error::Error> = Some(e);
    let mut seen = HashSet::new();
    while let Some(err) = source {
        let text = err.to_string();
        if seen.insert(text.clone()) {
            chain.push(text);
        }
        source = err.source();
    }
    Error::ConnectionFailed(chain.join(": "))
}

/// The URL without its query string and userinfo, for logs (either can carry
/// secrets), its path cut to [`crate::hooks::MAX_UPSTREAM_PATH`] bytes.
fn redacted(url: &Url) -> String {
    let mut u = url.clone();
    u.set_query(None);
    u.set_fragment(None);
    let _ = u.set_username("");
    let _ = u.set_password(None);
    // Cut as the audit record cuts a path (the guest chose it).
    let path = crate::hooks::bounded_path(u.path());
    u.set_path("");
    format!("{}{path}", u.as_str().trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_in_the_log_has_neither_its_query_nor_its_userinfo() {
        let url = Url::parse("https://u:s3cret@api.example/orders?key=k3y#top").unwrap();
        let logged = redacted(&url);
        assert!(
            !logged.contains("s3cret") && !logged.contains("k3y"),
            "{logged}"
        );
        assert!(!logged.contains("u@"), "{logged}");
        assert_eq!(logged, "https://api.example/orders");
        let long = Url::parse(&format!("http://api.example:8080/{}", "a".repeat(5000))).unwrap();
        let logged = redacted(&long);
        assert!(
            logged.starts_with("http://api.example:8080/aaa") && logged.len() < 1100,
            "{logged}"
        );
    }
}
