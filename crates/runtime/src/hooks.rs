//! What a running call reports, and to whom: the [`CallHooks`] trait.
//!
//! A call (a tool call, a read, a get or a completion) tells its hooks
//! what happened while it ran: each upstream request sent, tried or refused
//! ([`Upstream`]), a policy denial, each response's status, a confirmation
//! asked, answered, left to the client or not asked because too many calls
//! wait for a user; and, before each request that could change something,
//! [`CallHooks::before_mutation`], which may refuse it. The audit trail
//! (`audit::CallAudit`) and the metrics (`metrics::CallMetrics`) implement
//! the trait from above; a pair of hooks is a hook that tells both.
//!
//! **Architecture invariant:** this module, and every module that reports
//! through it (`call`, `imports`, `offers`), never names `audit` or
//! `metrics`: cross-cutting concerns enter the runtime through these hooks,
//! not through imports. A call that nobody observes gets [`NoHooks`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::bindings::confirm::Outcome;
use crate::policy::DenialReason;

/// A boxed future, as the runtime's traits return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One upstream request as a call reports it (and the audit trail records
/// it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Upstream {
    /// `GET`, `POST`, …
    pub method: String,
    /// The URL's host.
    pub host: String,
    /// The URL's port (the scheme's own when the URL names none).
    pub port: Option<u16>,
    /// The URL's path, without the query.
    pub path: String,
    /// The response's status code, when one came.
    pub status: Option<u16>,
    /// Bytes of the response body read.
    pub bytes: Option<u64>,
    /// Why no response was read: `timeout`, `connection_failed`, `denied`,
    /// `body_too_large`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Set when the host refused to send the request: why, as the
    /// policy-denial label (`read_only`, `unconfirmed`, `host_not_allowed`,
    /// `method`, `path`, `private_address`, …, `requests_per_call`, or
    /// `audit_unwritable`).
    /// Such a request never left the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// Longest URL path an [`Upstream`] keeps, in bytes: a guest chooses it,
/// and it is written to the audit trail.
pub const MAX_UPSTREAM_PATH: usize = 1024;

/// `path`, cut to [`MAX_UPSTREAM_PATH`] bytes and saying so when longer (a
/// URL's path is percent-encoded ASCII; cut at a character all the same).
pub(crate) fn bounded_path(path: &str) -> String {
    if path.len() <= MAX_UPSTREAM_PATH {
        return path.to_string();
    }
    let mut end = MAX_UPSTREAM_PATH;
    while !path.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…(cut, {} bytes)", &path[..end], path.len())
}

impl Upstream {
    /// A request to `url` with `method`; status and bytes to be filled.
    pub fn to(method: &str, url: &url::Url) -> Upstream {
        Upstream {
            method: method.to_string(),
            host: crate::policy::host_of(url).unwrap_or_default(),
            port: url.port_or_known_default(),
            path: bounded_path(url.path()),
            status: None,
            bytes: None,
            error: None,
            refused: None,
        }
    }

    /// A request to `url` with `method` the host refused to send, for
    /// `reason` (see [`Upstream::refused`]).
    pub fn refused(method: &str, url: &url::Url, reason: &str) -> Upstream {
        Upstream {
            refused: Some(reason.to_string()),
            ..Upstream::to(method, url)
        }
    }

    /// Whether the request could change something (not `GET`/`HEAD`).
    pub fn is_mutation(&self) -> bool {
        !matches!(self.method.as_str(), "GET" | "HEAD")
    }
}

/// What came back for one upstream request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpstreamStatus {
    /// A response with this status code.
    Code(u16),
    /// No response within the time left.
    Timeout,
    /// No connection, or it broke.
    ConnectionFailed,
}

impl UpstreamStatus {
    /// The `status` label: the code (100 to 599, else `other`), `timeout`
    /// or `connection_failed`.
    pub fn label(self) -> String {
        match self {
            UpstreamStatus::Code(code @ 100..=599) => code.to_string(),
            UpstreamStatus::Code(_) => "other".to_string(),
            UpstreamStatus::Timeout => "timeout".to_string(),
            UpstreamStatus::ConnectionFailed => "connection_failed".to_string(),
        }
    }
}

/// A hook's refusal of a request that could change something: the call
/// changes nothing it cannot have recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MutationRefused {
    /// Why, in words (the hook has logged it already).
    pub why: String,
}

/// What a running call reports. Every method has a default that does
/// nothing (and refuses nothing), so a hook implements only what it
/// observes. Called on the call's task, in the order things happen.
pub trait CallHooks: Send + Sync {
    /// An upstream request was sent, tried or refused (`refused` set).
    fn upstream(&self, _request: Upstream) {}

    /// A request that could change something (`next`) is about to be
    /// checked and sent; an `Err` refuses it, and the call ends with a
    /// retryable error, having changed nothing.
    fn before_mutation(&self, _next: Upstream) -> BoxFuture<'_, Result<(), MutationRefused>> {
        Box::pin(async { Ok(()) })
    }

    /// The plugin (its block name) had a request refused by the host's
    /// policy or confirmation gate, for `reason`.
    fn policy_denial(&self, _plugin: &str, _reason: DenialReason) {}

    /// A request of the plugin `plugin`, let through by the `allow` entry
    /// for `rule_host` (empty when none names it), came back with `status`.
    fn upstream_status(&self, _plugin: &str, _rule_host: &str, _status: UpstreamStatus) {}

    /// A confirmation question is being asked.
    fn asking(&self) {}

    /// The question was answered with `outcome`; `afresh` is false when the
    /// answer is a replay of one the client sent in an earlier round.
    fn answered(&self, _outcome: Outcome, _afresh: bool) {}

    /// A form of the tool's own (contract 0.3) was answered: `reply` is
    /// `accepted`, `declined`, `cancelled` or `unsupported` (never the
    /// values, which may be personal); `afresh` as for [`CallHooks::answered`].
    fn form_answered(&self, _reply: &'static str, _afresh: bool) {}

    /// The answer must come from the client in another round.
    fn needs_input(&self) {}

    /// The question was not asked: too many calls wait for a user.
    fn busy(&self) {}

    /// The W3C trace context (`traceparent`, `tracestate`) to send on an
    /// upstream request of a plugin whose settings propagate it; asked
    /// within the request's own span. None by default.
    fn trace_context(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// `work`, which a library may run apart from the call (a `wasi:http`
    /// request, polled in a task of its own), made to run within the
    /// call's context as the hooks keep it (the host's trace context), so
    /// that what it records lands in the call's trace. Called within the
    /// call. By default `work` itself.
    fn within_call(&self, work: BoxFuture<'static, ()>) -> BoxFuture<'static, ()> {
        work
    }

    /// The call ended, having cost `cost`; reported once per call that ran
    /// (a call refused before it ran has no cost).
    fn finished(&self, _cost: &crate::cost::CallCost) {}
}

/// Hooks that observe nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

impl CallHooks for NoHooks {}

impl<H: CallHooks + ?Sized> CallHooks for Arc<H> {
    fn upstream(&self, request: Upstream) {
        (**self).upstream(request)
    }
    fn before_mutation(&self, next: Upstream) -> BoxFuture<'_, Result<(), MutationRefused>> {
        (**self).before_mutation(next)
    }
    fn policy_denial(&self, plugin: &str, reason: DenialReason) {
        (**self).policy_denial(plugin, reason)
    }
    fn upstream_status(&self, plugin: &str, rule_host: &str, status: UpstreamStatus) {
        (**self).upstream_status(plugin, rule_host, status)
    }
    fn asking(&self) {
        (**self).asking()
    }
    fn answered(&self, outcome: Outcome, afresh: bool) {
        (**self).answered(outcome, afresh)
    }
    fn form_answered(&self, reply: &'static str, afresh: bool) {
        (**self).form_answered(reply, afresh)
    }
    fn needs_input(&self) {
        (**self).needs_input()
    }
    fn busy(&self) {
        (**self).busy()
    }
    fn trace_context(&self) -> Vec<(String, String)> {
        (**self).trace_context()
    }
    fn within_call(&self, work: BoxFuture<'static, ()>) -> BoxFuture<'static, ()> {
        (**self).within_call(work)
    }
    fn finished(&self, cost: &crate::cost::CallCost) {
        (**self).finished(cost)
    }
}

/// Absent hooks observe nothing.
impl<H: CallHooks> CallHooks for Option<H> {
    fn upstream(&self, request: Upstream) {
        if let Some(h) = self {
            h.upstream(request)
        }
    }
    fn before_mutation(&self, next: Upstream) -> BoxFuture<'_, Result<(), MutationRefused>> {
        match self {
            Some(h) => h.before_mutation(next),
            None => Box::pin(async { Ok(()) }),
        }
    }
    fn policy_denial(&self, plugin: &str, reason: DenialReason) {
        if let Some(h) = self {
            h.policy_denial(plugin, reason)
        }
    }
    fn upstream_status(&self, plugin: &str, rule_host: &str, status: UpstreamStatus) {
        if let Some(h) = self {
            h.upstream_status(plugin, rule_host, status)
        }
    }
    fn asking(&self) {
        if let Some(h) = self {
            h.asking()
        }
    }
    fn answered(&self, outcome: Outcome, afresh: bool) {
        if let Some(h) = self {
            h.answered(outcome, afresh)
        }
    }
    fn form_answered(&self, reply: &'static str, afresh: bool) {
        if let Some(h) = self {
            h.form_answered(reply, afresh)
        }
    }
    fn needs_input(&self) {
        if let Some(h) = self {
            h.needs_input()
        }
    }
    fn busy(&self) {
        if let Some(h) = self {
            h.busy()
        }
    }
    fn trace_context(&self) -> Vec<(String, String)> {
        self.as_ref().map(H::trace_context).unwrap_or_default()
    }
    fn within_call(&self, work: BoxFuture<'static, ()>) -> BoxFuture<'static, ()> {
        match self {
            Some(h) => h.within_call(work),
            None => work,
        }
    }
    fn finished(&self, cost: &crate::cost::CallCost) {
        if let Some(h) = self {
            h.finished(cost)
        }
    }
}

/// Both hooks hear every event, the first one first; a mutation either
/// refuses is refused (the second is not asked when the first refuses).
impl<A: CallHooks, B: CallHooks> CallHooks for (A, B) {
    fn upstream(&self, request: Upstream) {
        self.0.upstream(request.clone());
        self.1.upstream(request)
    }
    fn before_mutation(&self, next: Upstream) -> BoxFuture<'_, Result<(), MutationRefused>> {
        Box::pin(async move {
            self.0.before_mutation(next.clone()).await?;
            self.1.before_mutation(next).await
        })
    }
    fn policy_denial(&self, plugin: &str, reason: DenialReason) {
        self.0.policy_denial(plugin, reason);
        self.1.policy_denial(plugin, reason)
    }
    fn upstream_status(&self, plugin: &str, rule_host: &str, status: UpstreamStatus) {
        self.0.upstream_status(plugin, rule_host, status);
        self.1.upstream_status(plugin, rule_host, status)
    }
    fn asking(&self) {
        self.0.asking();
        self.1.asking()
    }
    fn answered(&self, outcome: Outcome, afresh: bool) {
        self.0.answered(outcome, afresh);
        self.1.answered(outcome, afresh)
    }
    fn form_answered(&self, reply: &'static str, afresh: bool) {
        self.0.form_answered(reply, afresh);
        self.1.form_answered(reply, afresh)
    }
    fn needs_input(&self) {
        self.0.needs_input();
        self.1.needs_input()
    }
    fn busy(&self) {
        self.0.busy();
        self.1.busy()
    }
    fn trace_context(&self) -> Vec<(String, String)> {
        let mut headers = self.0.trace_context();
        headers.extend(self.1.trace_context());
        headers
    }
    fn within_call(&self, work: BoxFuture<'static, ()>) -> BoxFuture<'static, ()> {
        self.1.within_call(self.0.within_call(work))
    }
    fn finished(&self, cost: &crate::cost::CallCost) {
        self.0.finished(cost);
        self.1.finished(cost)
    }
}
