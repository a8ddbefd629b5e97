//! One call's record while the call runs ([`CallAudit`]): the imports add
//! its upstream requests, the confirmation its answers, and the server
//! ends it ([`Ending`]) before the answer goes back.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use chrono::Utc;
use rand::RngCore;
use serde_json::Value;

use super::record::{
    ApprovalNote, AuditRecord, Bounded, Confirmation, PolicyNote, arguments_sha256, rfc3339,
};
use super::writer::{AuditError, AuditLog};
use crate::bindings::confirm::Outcome;
use crate::call::CallOutcome;
use crate::call::offer::OfferKind;
use crate::confirmation::outcome_name;
use crate::hooks::{BoxFuture, CallHooks, MutationRefused, Upstream};
use crate::plugin::Plugin;
use crate::spec::ToolSpec;

impl AuditLog {
    /// Starts the record of one call of `tool` in `plugin`, served to
    /// clients as `served_name` (its own name, or prefixed: ADR 0018).
    pub fn start_call(
        &self,
        context: CallContext,
        plugin: &Plugin,
        tool: &ToolSpec,
        served_name: &str,
        arguments: &Value,
    ) -> Arc<CallAudit> {
        self.start(
            context,
            Some(plugin),
            served_name.to_string(),
            tool.annotations.read_only,
            arguments,
            None,
        )
    }

    /// Starts the record of a `tools/call` refused before any tool was
    /// found: `requested` is the name the client sent (cut to MCP's 128
    /// characters, [`Bounded::TOOL`]), `plugin` the block serving it when
    /// the caller may not see it (`[[access]]`). Finish it with
    /// [`Ending::Refused`]: within the caller's budget of refused records,
    /// it is written.
    pub fn start_refused(
        &self,
        context: CallContext,
        plugin: Option<&Plugin>,
        requested: &str,
        arguments: &Value,
    ) -> Arc<CallAudit> {
        self.start(
            context,
            plugin,
            requested.to_string(),
            false,
            arguments,
            None,
        )
    }

    /// Starts the record of one `kind` of `plugin` at `target` (see the
    /// module doc): `arguments` is what the client chose, hashed, and
    /// recorded only with `host.audit_arguments`.
    pub fn start_offer(
        &self,
        context: CallContext,
        plugin: &Plugin,
        kind: OfferKind,
        target: &str,
        arguments: &Value,
    ) -> Arc<CallAudit> {
        let offer = (kind.label().to_string(), target.to_string());
        self.start(
            context,
            Some(plugin),
            String::new(),
            true,
            arguments,
            Some(offer),
        )
    }

    /// Starts a `call` record: of the tool `tool`, or (`offer`) of a read,
    /// get or completion as (kind, target). The text the client chose is
    /// bounded here, once for every kind of record ([`Bounded`]).
    fn start(
        &self,
        context: CallContext,
        plugin: Option<&Plugin>,
        tool: String,
        read_only: bool,
        arguments: &Value,
        offer: Option<(String, String)>,
    ) -> Arc<CallAudit> {
        let mut id = [0u8; 8];
        rand::rng().fill_bytes(&mut id);
        let (kind, target) = offer.unzip();
        let mut cut = BTreeMap::new();
        let caller = Bounded::text("caller", context.caller, Bounded::CALLER, &mut cut);
        let protocol = context
            .protocol
            .map(|p| Bounded::text("protocol", p, Bounded::PROTOCOL, &mut cut));
        let session = context
            .session
            .map(|s| Bounded::text("session", s, Bounded::SESSION, &mut cut));
        let client = context.client;
        let tool = Bounded::text("tool", tool, Bounded::TOOL, &mut cut);
        let recorded_arguments = if self.inner.settings.arguments {
            Bounded::arguments(arguments, &mut cut)
        } else {
            None
        };
        let record = AuditRecord {
            time: rfc3339(Utc::now()),
            record: "call".into(),
            id: hex::encode(id),
            caller,
            protocol,
            session,
            client,
            tool,
            plugin: plugin.map(|p| p.settings.name.clone()).unwrap_or_default(),
            file: plugin.map(|p| p.file.clone()).unwrap_or_default(),
            digest: plugin
                .map(|p| format!("sha256:{}", p.digest))
                .unwrap_or_default(),
            read_only,
            arguments_sha256: arguments_sha256(arguments),
            arguments: recorded_arguments,
            confirmation: None,
            policy: context.policy,
            credentials: Vec::new(),
            approval: None,
            cost: None,
            upstream: Vec::new(),
            result: "pending".into(),
            issues: Vec::new(),
            duration_ms: 0,
            kind,
            target,
            cut,
            seq: None,
            prev: None,
        };
        Arc::new(CallAudit {
            log: self.clone(),
            started: Instant::now(),
            via: context.via,
            record: Mutex::new(record),
            intent_written: AtomicBool::new(false),
        })
    }
}

/// A decision about an approval, made apart from any call (on the
/// approval page, or by a task's cancellation): what its `approval` record
/// says.
#[derive(Debug, Clone)]
pub struct ApprovalEvent<'a> {
    /// Whose call it was.
    pub caller: &'a str,
    /// The served tool name.
    pub tool: &'a str,
    /// The plugin block.
    pub plugin: &'a str,
    /// The component file.
    pub file: &'a str,
    /// SHA-256 of the component, hex.
    pub digest: &'a str,
    /// SHA-256 of the call's arguments.
    pub arguments_sha256: &'a str,
    /// The network address the decision came from (the approver's, or
    /// the caller's cancelling), over HTTP.
    pub client: Option<std::net::IpAddr>,
    /// The rule that asked for the approval, and the policy's version.
    pub policy: PolicyNote,
    /// The approval after the decision.
    pub approval: ApprovalNote,
}

impl AuditLog {
    /// Writes down `event` as an `approval` record, synced to disk: who
    /// decided which call, and how.
    pub async fn approval_event(&self, event: ApprovalEvent<'_>) -> Result<(), AuditError> {
        let mut id = [0u8; 8];
        rand::rng().fill_bytes(&mut id);
        let mut cut = BTreeMap::new();
        let mut approval = event.approval;
        approval.note = approval
            .note
            .map(|n| Bounded::text("approval.note", n, Bounded::TOOL, &mut cut));
        let record = AuditRecord {
            time: rfc3339(Utc::now()),
            record: "approval".into(),
            id: hex::encode(id),
            caller: Bounded::text(
                "caller",
                event.caller.to_string(),
                Bounded::CALLER,
                &mut cut,
            ),
            protocol: None,
            session: None,
            client: event.client.map(|a| a.to_string()),
            tool: Bounded::text("tool", event.tool.to_string(), Bounded::TOOL, &mut cut),
            plugin: event.plugin.to_string(),
            file: event.file.to_string(),
            digest: format!("sha256:{}", event.digest),
            read_only: false,
            arguments_sha256: event.arguments_sha256.to_string(),
            arguments: None,
            confirmation: None,
            policy: Some(event.policy),
            credentials: Vec::new(),
            result: approval.state.clone(),
            approval: Some(approval),
            cost: None,
            upstream: Vec::new(),
            issues: Vec::new(),
            duration_ms: 0,
            kind: None,
            target: None,
            cut,
            seq: None,
            prev: None,
        };
        self.append(&record, true).await
    }
}

/// Who calls, and how their confirmations are asked.
#[derive(Debug, Clone)]
pub struct CallContext {
    /// `stdio`, `http`, an identity's subject, `cli`.
    pub caller: String,
    /// The client's protocol version.
    pub protocol: Option<String>,
    /// The HTTP session id.
    pub session: Option<String>,
    /// The client's network address over HTTP: the connection's peer, or
    /// behind `http.trusted_proxies` the address they forwarded for.
    pub client: Option<String>,
    /// How confirmations are asked: `elicitation`, `input_required`,
    /// `policy`, `terminal`; `none` for a read, get or completion (no user
    /// is asked).
    pub via: &'static str,
    /// Which rule decided, if the request reached the rules.
    pub policy: Option<super::PolicyNote>,
}

/// How a call ended, for its record.
#[derive(Debug, Clone, Copy)]
pub enum Ending<'a> {
    /// The call ran to an outcome.
    Outcome(&'a CallOutcome),
    /// The client cancelled the request.
    Cancelled,
    /// The request was refused before the tool ran, with this code.
    Refused(&'static str),
    /// A read, get or completion ended: `Ok`, or with this error code.
    Offer(Result<(), &'a str>),
}

/// The record of one call in progress: imports add to it, the server
/// writes it when the call ends. Shared, so a call the client cancels is
/// still recorded with what it did.
#[derive(Debug)]
pub struct CallAudit {
    log: AuditLog,
    started: Instant,
    via: &'static str,
    record: Mutex<AuditRecord>,
    intent_written: AtomicBool,
}

impl CallAudit {
    /// Records the names of the per-caller credentials the call was given.
    pub fn credentials(&self, names: Vec<String>) {
        self.with(|r| r.credentials = names);
    }

    /// Records the approval the call needed, as it stands.
    pub fn approval(&self, note: ApprovalNote) {
        self.with(|r| r.approval = Some(note));
    }

    fn with<T>(&self, f: impl FnOnce(&mut AuditRecord) -> T) -> T {
        f(&mut self.record.lock().expect("not poisoned"))
    }

    fn confirmation(&self, f: impl FnOnce(&mut Confirmation)) {
        let via = self.via;
        self.with(|r| {
            f(r.confirmation.get_or_insert_with(|| Confirmation {
                via: via.to_string(),
                answers: Vec::new(),
                outcome: String::new(),
            }))
        });
    }

    /// The user's answer to a confirmation.
    pub fn answered(&self, outcome: Outcome) {
        self.confirmation(|c| {
            c.answers.push(outcome_name(outcome).to_string());
            c.outcome = outcome_name(outcome).to_string();
        });
    }

    /// The user's answer to a form of the tool's own (contract 0.3),
    /// recorded as `form-accepted`, `form-declined`, … beside the
    /// confirmations' answers; never the values.
    pub fn form_answered(&self, reply: &str) {
        self.confirmation(|c| {
            c.answers.push(format!("form-{reply}"));
            c.outcome = format!("form-{reply}");
        });
    }

    /// A question is being asked; `pending` until the answer comes (the
    /// outcome a cancelled call is left with).
    pub fn asking(&self) {
        self.confirmation(|c| c.outcome = "pending".into());
    }

    /// A confirmation the client must collect (`input_required`).
    pub fn needs_input(&self) {
        self.confirmation(|c| c.outcome = "input_required".into());
    }

    /// A confirmation not asked: too many calls wait for a user.
    pub fn busy(&self) {
        self.confirmation(|c| c.outcome = "busy".into());
    }

    /// A request sent (or tried) for the call.
    pub fn upstream(&self, request: Upstream) {
        self.with(|r| r.upstream.push(request));
    }

    /// Called before each request that could change something: writes the
    /// call's `intent` (to disk) before the first one, and refuses every
    /// one while the trail cannot be written.
    pub async fn before_mutation(&self, next: Upstream) -> Result<(), AuditError> {
        if self.intent_written.load(Ordering::SeqCst) && !self.log.is_failing() {
            return Ok(());
        }
        let mut intent = self.snapshot();
        intent.record = "intent".into();
        intent.upstream.push(next);
        self.log.append(&intent, true).await?;
        self.intent_written.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// Writes the call's record. A failure is logged and counted by the
    /// [`AuditLog`]; the caller's answer does not change (a mutation that
    /// ran has its `intent` on disk already). A refusal past its caller's
    /// budget is counted instead (see `budget.rs`).
    pub async fn finish(&self, ending: Ending<'_>) -> Result<(), AuditError> {
        let (result, issues) = match ending {
            Ending::Outcome(CallOutcome::Success(_) | CallOutcome::Content { .. }) => {
                ("ok", Vec::new())
            }
            Ending::Outcome(CallOutcome::Failed(issues)) => {
                ("error", issues.iter().map(|i| i.code.to_string()).collect())
            }
            Ending::Outcome(CallOutcome::InputRequired { .. }) => {
                self.needs_input();
                ("input_required", Vec::new())
            }
            Ending::Cancelled => ("cancelled", Vec::new()),
            Ending::Refused(code) => {
                let (caller, client) = self.with(|r| (r.caller.clone(), r.client.clone()));
                if !self
                    .log
                    .admit_refused(&caller, client.as_deref(), code)
                    .await
                {
                    // Past the caller's budget: counted for its window's
                    // `suppressed` record.
                    return Ok(());
                }
                ("refused", vec![code.to_string()])
            }
            Ending::Offer(Ok(())) => ("ok", Vec::new()),
            Ending::Offer(Err(code)) => ("error", vec![code.to_string()]),
        };
        let mut record = self.snapshot();
        record.result = result.into();
        record.issues = issues;
        let durable = self.intent_written.load(Ordering::SeqCst);
        self.log.append(&record, durable).await
    }

    fn snapshot(&self) -> AuditRecord {
        let mut record = self.with(|r| r.clone());
        record.duration_ms = self.started.elapsed().as_millis() as u64;
        record
    }
}

/// The audit record hears what the call does: its upstream requests and
/// confirmations; a mutation waits for the call's `intent` on disk, and is
/// refused while the trail cannot be written.
impl CallHooks for CallAudit {
    fn upstream(&self, request: Upstream) {
        CallAudit::upstream(self, request)
    }

    fn before_mutation(&self, next: Upstream) -> BoxFuture<'_, Result<(), MutationRefused>> {
        Box::pin(async move {
            CallAudit::before_mutation(self, next)
                .await
                .map_err(|e| MutationRefused { why: e.to_string() })
        })
    }

    fn asking(&self) {
        CallAudit::asking(self)
    }

    fn answered(&self, outcome: Outcome, _afresh: bool) {
        CallAudit::answered(self, outcome)
    }

    fn form_answered(&self, reply: &'static str, _afresh: bool) {
        CallAudit::form_answered(self, reply)
    }

    fn needs_input(&self) {
        CallAudit::needs_input(self)
    }

    fn busy(&self) {
        CallAudit::busy(self)
    }

    fn finished(&self, cost: &crate::cost::CallCost) {
        self.with(|r| r.cost = Some(cost.clone()));
    }
}
