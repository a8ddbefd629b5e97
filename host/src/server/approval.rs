//! `approve` rules on the MCP side (ADR 0038): what a call held for an
//! approver is answered, the MCP task it becomes for a client that
//! declared `io.modelcontextprotocol/tasks`, and the decisions the approval
//! page makes.
//!
//! One mechanism for every client: the call's request for approval is an
//! [`Approval`] in the store every replica shares. A client without tasks
//! is answered `APPROVAL_PENDING` with where the approver decides, and its
//! call with the same arguments runs once approved (and spends the
//! approval). A client with tasks gets a task instead: `tasks/get` reports
//! it, and the call runs on whichever replica sees the approval first (the
//! one the approver used, or the one a `tasks/get` reached), once: the run
//! is claimed by the same compare-and-set that every move of an approval
//! is. The tool's own questions then travel in the task (`input_required`,
//! answered by `tasks/update`), sealed as 2026-07-28 answers are, so any
//! replica can take the answer and run the call again with it.

use std::net::IpAddr;
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, CallToolResult, CancelTaskParams, CreateTaskResult, DetailedTask,
    ElicitRequest, GetTaskParams, GetTaskResult, InputRequest, InputRequests, Task, TaskPayload,
    TaskStatus, UpdateTaskParams,
};
use serde_json::{Value, json};

use super::Gateway;
use super::request::Request;
use super::tools;
use crate::approvals::{
    Approval, Binding, RunLease, Session, State, TaskPhase, TaskRecord, Transition, Unavailable,
    now_ms, random_id,
};
use crate::audit::{ApprovalEvent, ApprovalNote, PolicyNote, arguments_sha256};
use crate::auth::Identity;
use crate::call::run_call_with;
use crate::confirmation::{CallBinding, Replay, elicitation_params, form_params, outcome_of};
use crate::imports::confirm::Answer;
use crate::metrics;
use crate::registry::ToolRef;

/// How often a task's client is asked to poll, in milliseconds.
const POLL_INTERVAL_MS: u64 = 2000;

/// How many times a run reads its task again to keep its end, when the
/// reading moved meanwhile (its own hold renewed beside it).
const END_RUN_ATTEMPTS: usize = 5;

/// How soon a renewal of a task's hold the store did not answer is tried
/// again.
const RENEW_RETRY: Duration = Duration::from_millis(250);

/// One run of a task's call on this replica: the hold it took on the task
/// (ADR 0068).
struct Run {
    /// The run's random id, in the task's [`RunLease`].
    id: String,
    /// How long the hold lasts unless renewed (`approvals.task_lease_secs`).
    lease: Duration,
}

/// A call an `approve` rule holds.
pub(super) struct Ask<'a> {
    /// The tool.
    pub tool: &'a ToolRef,
    /// Its arguments.
    pub arguments: &'a Value,
    /// The rule's decision.
    pub note: &'a PolicyNote,
    /// Which round of the call the request is (a 2026-07-28 retry carries
    /// a sealed state, opened before the rules).
    pub round: Round,
    /// Whether the client declared tasks (2026-07-28): the call becomes
    /// one.
    pub as_task: bool,
    /// How to point the user at the page, for a client that declared
    /// URL-mode elicitation.
    pub url_mode: UrlMode,
}

/// Which round of a call a `tools/call` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Round {
    /// The call as it first comes.
    First,
    /// A retry after the user was shown the approval page (the state the
    /// page's round sealed, before anything ran): the call's first run
    /// under its approval, never a second one.
    AfterThePage,
    /// A retry answering a question the call's run asked: the continuation
    /// of the run its approval let begin.
    OfItsRun,
}

/// How a call that waits points its user at the approval page.
pub(super) enum UrlMode {
    /// The client cannot open URLs for its user: the result says where.
    None,
    /// A legacy session: an `elicitation/create` in URL mode, and once the
    /// user is back, the approval is looked at again.
    Ask(rmcp::service::Peer<rmcp::RoleServer>, Duration),
    /// A 2026-07-28 client: an `input_required` result carrying the URL,
    /// its retry sealed to this call like a confirmation's.
    InputRequired(String),
}

/// What [`gate`] decided.
pub(super) enum Gate {
    /// Run the call: this approval covers it.
    Run(Approval),
    /// Answer the caller and run nothing.
    Answer {
        /// The answer.
        response: Box<CallToolResponse>,
        /// The audit trail's and the metrics' code.
        code: &'static str,
        /// The approval, as it stands, for the record.
        approval: Option<Approval>,
    },
}

/// The `_meta` key under which a result that ran under an approval says
/// which approval, who gave it, and their note.
pub(super) const APPROVAL_META: &str = "toolhost/approval";

/// `result`, with the approval it ran under in its `_meta` (the approver's
/// note is the caller's to see).
pub(super) fn with_approval(mut result: CallToolResult, approval: &Approval) -> CallToolResult {
    let mut meta = result.meta.take().unwrap_or_default();
    meta.0.insert(
        APPROVAL_META.to_string(),
        json!({
            "id": approval.id,
            "decided_by": approval.decided_by,
            "note": approval.note,
        }),
    );
    result.meta = Some(meta);
    result
}

/// The approval's line in a call's audit record.
pub(super) fn audit_note(approval: &Approval) -> ApprovalNote {
    ApprovalNote {
        id: approval.id.clone(),
        state: approval.state.name().to_string(),
        decided_by: approval.decided_by.clone(),
        note: approval.note.clone(),
    }
}

/// Whether the call `ask` describes may run now (an approver said yes to
/// this very call), and if not, what its caller is told: that it waits
/// (a new request for approval, or the one already waiting), that it was
/// refused, or that the store is out of reach.
pub(super) async fn gate(gateway: &Gateway, request: &Request, ask: Ask<'_>) -> Gate {
    let config = request.registry.config();
    let Some(terms) = config.policy.approval_rule(&ask.note.rule) else {
        // `authorize` decided by this rule in this registry's policy.
        return refusal(
            "INTERNAL",
            "the operator's approval rule could not be found".into(),
            None,
        );
    };
    let binding = Binding {
        caller: request.caller(),
        tool: ask.tool.name.clone(),
        arguments_sha256: arguments_sha256(ask.arguments),
        digest: ask.tool.plugin.digest.clone(),
        policy_version: ask.note.version.clone(),
    };
    let store = &gateway.inner.approvals;
    let latest = match store.latest(&binding).await {
        Ok(latest) => latest,
        Err(e) => return unavailable(e),
    };
    let now = now_ms();
    let mut previous = None;
    if let Some(latest) = latest {
        if latest.binds(&binding) {
            match latest.state {
                State::Pending if !latest.lapsed(now) => {
                    return waiting(gateway, latest, None, &ask).await;
                }
                // An approved task runs as its task, with a hold on it
                // (ADR 0068), not under this call.
                State::Approved if !latest.lapsed(now) && latest.task.is_some() => {
                    return runs_as_task(gateway, latest, &ask);
                }
                State::Approved if !latest.lapsed(now) => {
                    let spent = store
                        .transition(&latest.id, State::Approved, |a| a.state = State::Spent)
                        .await;
                    match spent {
                        Ok(Transition::Moved(spent)) => {
                            metrics::approval("spent");
                            return Gate::Run(spent);
                        }
                        Ok(_) => {
                            previous = Some(format!(
                                "approval {} was used by another call at the same moment",
                                latest.id
                            ))
                        }
                        Err(e) => return unavailable(e),
                    }
                }
                // The continuation of the call the approval let run: its
                // sealed state was issued to that run alone.
                State::Spent if ask.round == Round::OfItsRun && now < latest.expires_ms => {
                    return Gate::Run(latest);
                }
                // Back from the page while a task took the approval and
                // ran it (or runs it): the task has the call.
                State::Spent if ask.round == Round::AfterThePage && latest.task.is_some() => {
                    return runs_as_task(gateway, latest, &ask);
                }
                State::Denied if now < latest.expires_ms => return denied(latest),
                State::Pending | State::Approved => {
                    // Moved once, so the lapse is on record once.
                    let lapsed = store
                        .transition(&latest.id, latest.state, |a| {
                            a.state = State::Void;
                            a.void_reason =
                                Some(format!("it lapsed at {}", rfc3339(latest.expires_ms)));
                        })
                        .await;
                    if let Ok(Transition::Moved(lapsed)) = lapsed {
                        metrics::approval("lapsed");
                        event(gateway, &lapsed, "lapsed", None).await;
                    }
                    previous = Some(format!(
                        "approval {} lapsed {} ({})",
                        latest.id,
                        if latest.state == State::Pending {
                            "before anyone decided"
                        } else {
                            "before the call came back to use it"
                        },
                        rfc3339(latest.expires_ms)
                    ));
                }
                _ => {}
            }
        } else if matches!(latest.state, State::Pending | State::Approved) && !latest.lapsed(now) {
            let why = latest.differs_from(&binding).unwrap_or_default();
            let from = latest.state;
            let voided = store
                .transition(&latest.id, from, |a| {
                    a.state = State::Void;
                    a.void_reason = Some(why.clone());
                    if let Some(task) = &mut a.task {
                        task.phase = TaskPhase::Cancelled;
                    }
                })
                .await;
            match voided {
                Ok(Transition::Moved(void)) => {
                    metrics::approval("void");
                    event(gateway, &void, "void", None).await;
                    previous = Some(format!(
                        "approval {} ({}) asked for this tool no longer applies: {why}",
                        latest.id,
                        from.name()
                    ));
                }
                Ok(_) => {}
                Err(e) => return unavailable(e),
            }
        }
    }
    // A new request for approval, within the caller's bound
    // (`approvals.pending_per_caller`): counted from what waits now, so two
    // requests at the same moment may both pass it by one.
    let waiting_now = match store.pending().await {
        Ok(pending) => pending,
        Err(e) => return unavailable(e),
    };
    let mut mine: Vec<&Approval> = waiting_now
        .iter()
        .filter(|a| a.caller == binding.caller)
        .collect();
    mine.sort_by_key(|a| a.created_ms);
    if mine.len() >= config.pending_per_caller {
        let oldest = mine
            .iter()
            .map(|a| a.id.as_str())
            .take(5)
            .collect::<Vec<_>>();
        return refusal(
            "APPROVAL_LIMIT",
            format!(
                "{} of your calls already wait for an approver, the most approvals.pending_per_caller \
                 ({}) allows; call again once one is decided or lapses (waiting: {}{})",
                mine.len(),
                config.pending_per_caller,
                oldest.join(", "),
                if mine.len() > oldest.len() {
                    ", …"
                } else {
                    ""
                }
            ),
            None,
        );
    }
    let created_ms = now_ms();
    let approval = Approval {
        id: random_id(),
        rule: ask.note.rule.clone(),
        policy_version: binding.policy_version.clone(),
        caller: binding.caller.clone(),
        caller_identity: request.identity.as_ref().map(Identity::to_json),
        transport: request.transport().to_string(),
        profile: request.profile.clone(),
        client: request.client(),
        tool: binding.tool.clone(),
        plugin: ask.tool.plugin.settings.name.clone(),
        file: ask.tool.plugin.file.clone(),
        digest: binding.digest.clone(),
        arguments: ask.arguments.clone(),
        arguments_sha256: binding.arguments_sha256.clone(),
        created_ms,
        expires_ms: created_ms + u64::try_from(terms.expires.as_millis()).unwrap_or(u64::MAX),
        state: State::Pending,
        decided_by: None,
        decided_ms: None,
        note: None,
        void_reason: None,
        task: ask.as_task.then(TaskRecord::working),
        revision: 0,
        moved_by: String::new(),
    };
    if let Err(e) = store.insert(&approval).await {
        return unavailable(e);
    }
    metrics::approval("requested");
    gateway.count_pending().await;
    tracing::info!(
        approval = %approval.id,
        tool = %approval.tool,
        rule = %approval.rule,
        caller = %approval.caller,
        "a call waits for an approver"
    );
    waiting(gateway, approval, previous, &ask).await
}

/// The answer to a call that waits for `approval`: a task for a client
/// that declared tasks, `APPROVAL_PENDING` otherwise. `previous` says why
/// an earlier approval did not cover it.
async fn waiting(
    gateway: &Gateway,
    mut approval: Approval,
    previous: Option<String>,
    ask: &Ask<'_>,
) -> Gate {
    let as_task = ask.as_task;
    if as_task && approval.task.is_none() {
        // The same call, asked again by a client that now declares tasks.
        let attached = gateway
            .inner
            .approvals
            .update(
                &approval.id,
                |a| a.state == State::Pending && a.task.is_none(),
                |a| a.task = Some(TaskRecord::working()),
            )
            .await;
        match attached {
            Ok(Transition::Moved(now) | Transition::Refused(now)) => approval = now,
            Ok(Transition::Missing) => {}
            Err(e) => return unavailable(e),
        }
    }
    let message = waiting_message(gateway, &approval, previous.as_deref());
    let url = gateway.approval_url(&approval.id);
    match (&ask.url_mode, &url) {
        (UrlMode::Ask(peer, timeout), Some(url)) if !as_task => {
            // The user is shown where; whatever they answer, the approval
            // decides. Approved meanwhile, the call runs now.
            let params = rmcp::model::ElicitRequestParams::UrlElicitationParams {
                meta: None,
                message: message.clone(),
                url: url.clone(),
                elicitation_id: approval.id.clone(),
            };
            let _ = tokio::time::timeout(*timeout, peer.create_elicitation(params)).await;
            // Not one a task-declaring client's same call attached a task
            // to meanwhile: that runs as its task.
            let spent = gateway
                .inner
                .approvals
                .update(
                    &approval.id,
                    |a| a.state == State::Approved && a.task.is_none(),
                    |a| a.state = State::Spent,
                )
                .await;
            match spent {
                Ok(Transition::Moved(spent)) if !spent.lapsed(now_ms()) => {
                    metrics::approval("spent");
                    return Gate::Run(spent);
                }
                Ok(Transition::Refused(now)) if now.state == State::Denied => {
                    return denied(now);
                }
                // Approved, with a task a client attached meanwhile: the
                // task runs it (or has begun to: spent by its run), and
                // this caller is told so.
                Ok(Transition::Refused(now))
                    if now.task.is_some()
                        && (now.state == State::Spent
                            || (now.state == State::Approved && !now.lapsed(now_ms()))) =>
                {
                    return runs_as_task(gateway, now, ask);
                }
                Ok(_) => {}
                Err(e) => return unavailable(e),
            }
        }
        (UrlMode::InputRequired(state), Some(url)) if !as_task => {
            let params = rmcp::model::ElicitRequestParams::UrlElicitationParams {
                meta: None,
                message,
                url: url.clone(),
                elicitation_id: String::new(),
            };
            let mut requests = InputRequests::new();
            requests.insert(
                tools::CONFIRM_KEY.to_string(),
                InputRequest::Elicitation(ElicitRequest::new(params)),
            );
            return Gate::Answer {
                response: Box::new(
                    rmcp::model::InputRequiredResult::new(Some(requests), Some(state.clone()))
                        .into(),
                ),
                code: "APPROVAL_PENDING",
                approval: Some(approval),
            };
        }
        _ => {}
    }
    let response = if as_task && approval.task.is_some() {
        CallToolResponse::Task(CreateTaskResult::new(
            task_of(&approval).with_status_message(message),
        ))
    } else {
        CallToolResult::structured_error(json!({
            "ok": false,
            "result": null,
            "issues": [{
                "code": "APPROVAL_PENDING",
                "message": message,
                "hint": "call again with the same arguments once an approver has said yes; \
                         changed arguments ask anew",
            }],
            "approval": {
                "id": approval.id,
                "state": "pending",
                "url": gateway.approval_url(&approval.id),
                "expires_at": rfc3339(approval.expires_ms),
            },
        }))
        .into()
    };
    Gate::Answer {
        response: Box::new(response),
        code: "APPROVAL_PENDING",
        approval: Some(approval),
    }
}

/// The answer to a call whose approval was approved for a task: the task
/// runs it (begun here if no replica has begun it), and the call is
/// answered with the task (a client that declares tasks) or told where
/// it runs.
fn runs_as_task(gateway: &Gateway, approval: Approval, ask: &Ask<'_>) -> Gate {
    let begun = gateway.clone();
    let id = approval.id.clone();
    tokio::spawn(async move { begun.run_approved(&id).await });
    let message = format!(
        "approval {id} was approved, and the call it approved runs as task {id}: the client that \
         asked for the task follows it with tasks/get. This call ran nothing.",
        id = approval.id
    );
    let response = if ask.as_task {
        CallToolResponse::Task(CreateTaskResult::new(
            task_of(&approval).with_status_message(message),
        ))
    } else {
        refused_result("APPROVAL_PENDING", &message).into()
    };
    Gate::Answer {
        response: Box::new(response),
        code: "APPROVAL_PENDING",
        approval: Some(approval),
    }
}

/// What a caller whose call waits is told: which rule, which approval,
/// where an approver decides and by when; that nothing ran.
fn waiting_message(gateway: &Gateway, approval: &Approval, previous: Option<&str>) -> String {
    let previous = previous.map(|p| format!(" ({p})")).unwrap_or_default();
    let where_ = match gateway.approval_url(&approval.id) {
        Some(url) => format!("at {url}"),
        None => "on toolhost's approval page (`/approvals` on its HTTP listener; the operator \
                 sets `approvals.url` to say where)"
            .to_string(),
    };
    format!(
        "this call of {tool:?} waits for an approver: the operator's policy (rule {rule:?}) lets \
         it run only once someone the rule names says yes to this very call. Approval {id} was \
         requested{previous}; an approver decides {where_} before {expires}. Nothing ran.",
        tool = approval.tool,
        rule = approval.rule,
        id = approval.id,
        expires = rfc3339(approval.expires_ms),
    )
}

/// The answer to a call an approver refused.
fn denied(approval: Approval) -> Gate {
    let message = denied_message(&approval);
    refusal("APPROVAL_DENIED", message, Some(approval))
}

/// What a caller whose call was refused is told: by whom, the note.
fn denied_message(approval: &Approval) -> String {
    format!(
        "an approver ({by}) refused this call of {tool:?} (approval {id}){note}. Nothing ran; a \
         call with other arguments asks anew.",
        by = approval.decided_by.as_deref().unwrap_or("unknown"),
        tool = approval.tool,
        id = approval.id,
        note = approval
            .note
            .as_deref()
            .map(|n| format!(", saying: {n}"))
            .unwrap_or_default(),
    )
}

/// A tool error of `code` saying `message`; nothing ran.
fn refusal(code: &'static str, message: String, approval: Option<Approval>) -> Gate {
    Gate::Answer {
        response: Box::new(refused_result(code, &message).into()),
        code,
        approval,
    }
}

/// A tool error result of `code` saying `message`.
fn refused_result(code: &str, message: &str) -> CallToolResult {
    CallToolResult::structured_error(json!({
        "ok": false,
        "result": null,
        "issues": [{"code": code, "message": message}],
    }))
}

/// The answer when the store cannot be reached: retry; nothing changed.
fn unavailable(error: Unavailable) -> Gate {
    Gate::Answer {
        response: Box::new(
            CallToolResult::structured_error(json!({
                "ok": false,
                "result": null,
                "issues": [{"code": "TRANSIENT", "message": error.to_string(), "retry_after_ms": 1000}],
            }))
            .into(),
        ),
        code: "TRANSIENT",
        approval: None,
    }
}

/// `ms` (Unix milliseconds) as RFC 3339, UTC, to the second.
fn rfc3339(ms: u64) -> String {
    chrono::DateTime::from_timestamp_millis(i64::try_from(ms).unwrap_or(i64::MAX))
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The MCP task an approval's call is, as its seed state.
fn task_of(approval: &Approval) -> Task {
    let updated = approval
        .task
        .as_ref()
        .map_or(approval.created_ms, |t| t.updated_ms);
    Task::new(
        approval.id.clone(),
        TaskStatus::Working,
        rfc3339(approval.created_ms),
        rfc3339(updated),
    )
    .with_ttl_ms(approval.expires_ms.saturating_sub(approval.created_ms))
    .with_poll_interval_ms(POLL_INTERVAL_MS)
}

/// The approval the task `id` is, if it is the caller's task.
async fn caller_task(
    gateway: &Gateway,
    request: &Request,
    id: &str,
) -> Result<Approval, ErrorData> {
    let unknown = || {
        ErrorData::invalid_params(
            format!("unknown task {id:?}: no task of yours has this id (it may have expired)"),
            None,
        )
    };
    let approval = gateway
        .inner
        .approvals
        .get(id)
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
        .ok_or_else(unknown)?;
    if approval.caller != request.caller() || approval.task.is_none() {
        return Err(unknown());
    }
    Ok(approval)
}

/// `tasks/get`: where the caller's task stands. An approved call that has
/// not begun to run begins now, on this replica (once, whichever replica
/// claims it first); a run whose replica stopped mid-call is found lost
/// here, and the task fails (ADR 0068).
pub(super) async fn get_task(
    gateway: &Gateway,
    request: &Request,
    params: GetTaskParams,
) -> Result<GetTaskResult, ErrorData> {
    let mut approval = caller_task(gateway, request, &params.task_id).await?;
    let lost = approval
        .task
        .as_ref()
        .and_then(|t| t.lost_run(now_ms()))
        .cloned();
    if let Some(lost) = lost {
        approval = fail_lost_run(gateway, request, approval, &lost).await?;
    }
    if approval.state == State::Approved && !approval.lapsed(now_ms()) {
        let gateway = gateway.clone();
        let id = approval.id.clone();
        tokio::spawn(async move { gateway.run_approved(&id).await });
    }
    Ok(GetTaskResult::new(detailed(gateway, &approval)))
}

/// Fails the task `approval` is, whose run `lost` held it past its lease
/// without renewing (its replica stopped mid-call): once, whichever
/// replica finds it first; the move is written to the audit trail
/// (`lost`). Returns the approval as it is now.
async fn fail_lost_run(
    gateway: &Gateway,
    request: &Request,
    approval: Approval,
    lost: &RunLease,
) -> Result<Approval, ErrorData> {
    let failure = format!(
        "the replica running this call stopped before the call ended: its hold on the task \
         lapsed at {} without being renewed (the replica stopped, or lost the store of \
         approvals). Whether the tool changed anything before is not known: the audit trail's \
         records of approval {} say (an `intent` record precedes every change), so check there \
         before calling again",
        rfc3339(lost.until_ms),
        approval.id
    );
    let failed = gateway
        .inner
        .approvals
        .update(
            &approval.id,
            |a| {
                a.task
                    .as_ref()
                    .and_then(|t| t.lost_run(now_ms()))
                    .is_some_and(|r| r.id == lost.id)
            },
            |a| {
                if let Some(task) = &mut a.task {
                    task.phase = TaskPhase::Failed;
                    task.failure = Some(failure.clone());
                    task.run = None;
                    task.question = None;
                    task.form = None;
                    task.request_state = None;
                    task.updated_ms = now_ms();
                }
            },
        )
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(match failed {
        Transition::Moved(failed) => {
            metrics::approval("lost");
            event(gateway, &failed, "lost", request.client()).await;
            tracing::warn!(approval = %failed.id, "a task's run was lost: its replica stopped mid-call");
            failed
        }
        Transition::Refused(now) => now,
        Transition::Missing => approval,
    })
}

/// The task an approval's call is, with what its status carries.
fn detailed(gateway: &Gateway, approval: &Approval) -> DetailedTask {
    let task = approval.task.as_ref().expect("a task's approval has one");
    let seed = task_of(approval);
    let now = now_ms();
    let result = |r: CallToolResult| TaskPayload::Completed {
        result: serde_json::to_value(r)
            .ok()
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default(),
    };
    let (payload, message) = match (approval.state, task.phase) {
        (_, TaskPhase::Completed) => (
            TaskPayload::Completed {
                result: task
                    .result
                    .as_ref()
                    .and_then(|r| r.as_object().cloned())
                    .unwrap_or_default(),
            },
            "the call ran".to_string(),
        ),
        (_, TaskPhase::Failed) => {
            let failure = task.failure.clone().unwrap_or_default();
            let error =
                json!({"code": rmcp::model::ErrorCode::INTERNAL_ERROR.0, "message": failure});
            (
                TaskPayload::Failed {
                    error: error.as_object().cloned().unwrap_or_default(),
                },
                failure,
            )
        }
        (_, TaskPhase::Cancelled) | (State::Cancelled, _) => {
            (TaskPayload::Cancelled, "cancelled; nothing ran".to_string())
        }
        (_, TaskPhase::InputRequired) => {
            let params = match &task.form {
                Some(schema) => form_params(task.question.as_deref().unwrap_or_default(), schema),
                None => Some(elicitation_params(
                    task.question.as_deref().unwrap_or_default(),
                )),
            };
            let key = tools::input_key_of(task.form.as_deref())
                .unwrap_or_else(|| tools::CONFIRM_KEY.into());
            let mut requests = InputRequests::new();
            if let Some(params) = params {
                requests.insert(key, InputRequest::Elicitation(ElicitRequest::new(params)));
            }
            (
                TaskPayload::InputRequired {
                    input_requests: requests,
                },
                "the tool asks a question".to_string(),
            )
        }
        (State::Denied, _) => {
            let message = denied_message(approval);
            (result(refused_result("APPROVAL_DENIED", &message)), message)
        }
        (State::Void, _) => {
            let message = format!(
                "approval {} no longer applies: {}; nothing ran, so call again",
                approval.id,
                approval
                    .void_reason
                    .as_deref()
                    .unwrap_or("the call changed")
            );
            (result(refused_result("APPROVAL_VOID", &message)), message)
        }
        (State::Pending | State::Approved, _) if approval.lapsed(now) => {
            let message = format!(
                "approval {} lapsed at {} before the call ran; nothing ran, so call again to ask \
                 anew",
                approval.id,
                rfc3339(approval.expires_ms)
            );
            (
                result(refused_result("APPROVAL_EXPIRED", &message)),
                message,
            )
        }
        (State::Pending, _) => (
            TaskPayload::Working,
            waiting_message(gateway, approval, None),
        ),
        _ => (
            TaskPayload::Working,
            format!(
                "approved by {}; the call is running",
                approval.decided_by.as_deref().unwrap_or("an approver")
            ),
        ),
    };
    let mut seed = seed.with_status_message(message);
    seed.last_updated_at = rfc3339(task.updated_ms.max(approval.decided_ms.unwrap_or_default()));
    DetailedTask::new(seed, payload)
}

/// `tasks/update`: the client's answer to the tool's question. The call
/// runs again with it (on this replica, once).
pub(super) async fn update_task(
    gateway: &Gateway,
    request: &Request,
    params: UpdateTaskParams,
) -> Result<(), ErrorData> {
    let approval = caller_task(gateway, request, &params.task_id).await?;
    // The answer runs the call again, on this replica: its plugin
    // directory must be in first (a replica just restarted), or the answer
    // is left for a retry, unclaimed.
    gateway.wait_until_loaded().await;
    if let Some(loading) = gateway.still_loading() {
        return Err(ErrorData::internal_error(
            format!("this replica is {loading}; send the answer again shortly"),
            None,
        ));
    }
    let task = approval.task.as_ref().expect("checked");
    let (TaskPhase::InputRequired, Some(state)) = (task.phase, task.request_state.clone()) else {
        // Answers to nothing outstanding are ignored (the extension's
        // rule for unknown keys).
        return Ok(());
    };
    // The key the question was asked under: the form's own, if it named
    // one.
    let key =
        tools::input_key_of(task.form.as_deref()).unwrap_or_else(|| tools::CONFIRM_KEY.into());
    let Some(answer) = params.input_responses.get(&key).cloned() else {
        return Ok(());
    };
    let answer: rmcp::model::ElicitResult = serde_json::from_value(answer).map_err(|e| {
        ErrorData::invalid_params(
            format!("inputResponses.{key} is not an elicitation result: {e}"),
            None,
        )
    })?;
    let run = Run {
        id: random_id(),
        lease: gateway.registry().config().task_lease,
    };
    let claimed = gateway
        .inner
        .approvals
        .update(
            &approval.id,
            |a| {
                a.task.as_ref().is_some_and(|t| {
                    t.phase == TaskPhase::InputRequired
                        && t.request_state.as_deref() == Some(state.as_str())
                })
            },
            |a| {
                let task = a.task.as_mut().expect("checked");
                task.begin_run(&run.id, run.lease);
                task.request_state = None;
            },
        )
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    let Transition::Moved(approval) = claimed else {
        // Another answer came first.
        return Ok(());
    };
    // Claimed: from here the run goes on whether or not this request is
    // still there to hear of it.
    let gateway = gateway.clone();
    tokio::spawn(async move {
        let binding = CallBinding {
            caller: &approval.caller,
            tool: &approval.tool,
            arguments: &approval.arguments,
            component: &approval.digest,
        };
        let answers = match gateway.inner.states.open(&binding, &state).await {
            Ok(opened) if opened.pending_form => opened.with_reply(
                crate::imports::confirm::Reply::Form(crate::confirmation::form_reply_of(&answer)),
            ),
            Ok(opened) => {
                let outcome = outcome_of(&answer);
                metrics::confirmation_answered(outcome);
                opened.with_answer(outcome)
            }
            Err(e) => {
                let message = format!("the answer could not be taken ({e}); call again");
                gateway
                    .finish_task(
                        &approval.id,
                        &run.id,
                        refused_result("INVALID_REQUEST_STATE", &message),
                    )
                    .await;
                return;
            }
        };
        gateway.run_task(approval, answers, run).await
    });
    Ok(())
}

/// `tasks/cancel`: a task waiting for an approver or for the client's
/// answer ends, and nothing (more) runs. A call already running is let
/// finish (cancellation is cooperative).
pub(super) async fn cancel_task(
    gateway: &Gateway,
    request: &Request,
    params: CancelTaskParams,
) -> Result<(), ErrorData> {
    let approval = caller_task(gateway, request, &params.task_id).await?;
    let cancelled = gateway
        .inner
        .approvals
        .update(
            &approval.id,
            |a| {
                let waiting_for_approver = matches!(a.state, State::Pending | State::Approved);
                let waiting_for_client = a
                    .task
                    .as_ref()
                    .is_some_and(|t| t.phase == TaskPhase::InputRequired);
                waiting_for_approver || waiting_for_client
            },
            |a| {
                if matches!(a.state, State::Pending | State::Approved) {
                    a.state = State::Cancelled;
                }
                if let Some(task) = &mut a.task {
                    task.phase = TaskPhase::Cancelled;
                    task.request_state = None;
                    task.updated_ms = now_ms();
                }
            },
        )
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    if let Transition::Moved(cancelled) = cancelled {
        metrics::approval("cancelled");
        event(gateway, &cancelled, "cancelled", request.client()).await;
        gateway.count_pending().await;
        tracing::info!(approval = %cancelled.id, "a task waiting for a yes was cancelled");
    }
    Ok(())
}

/// Writes `approval`'s move to `state` in the audit trail (with
/// `host.audit`), made by a request from `client` (over HTTP).
async fn event(gateway: &Gateway, approval: &Approval, state: &str, client: Option<IpAddr>) {
    let Some(log) = gateway.audit_log() else {
        return;
    };
    let mut note = audit_note(approval);
    note.state = state.to_string();
    let _ = log
        .approval_event(ApprovalEvent {
            caller: &approval.caller,
            tool: &approval.tool,
            plugin: &approval.plugin,
            file: &approval.file,
            digest: &approval.digest,
            arguments_sha256: &approval.arguments_sha256,
            client,
            policy: PolicyNote {
                rule: approval.rule.clone(),
                outcome: "approve".into(),
                version: approval.policy_version.clone(),
            },
            approval: note,
        })
        .await;
}

/// Why an approver may not decide an approval (or it cannot be decided).
#[derive(Debug, thiserror::Error)]
pub enum DecideError {
    /// No such approval, or one this approver may not see.
    #[error("there is no approval {0:?} you may decide")]
    Unknown(String),
    /// The approver is the caller, and the rule wants someone else.
    #[error(
        "you made this call; the operator's rule {0:?} wants someone else to approve it \
         (self_approval is off)"
    )]
    OwnCall(String),
    /// The approval was decided, spent, void or cancelled already.
    #[error("approval {id} is {state} already{by}; nothing changed")]
    Settled {
        /// Its id.
        id: String,
        /// Where it stands.
        state: &'static str,
        /// Who decided it, if someone did.
        by: String,
    },
    /// The approval lapsed.
    #[error("approval {0} lapsed before it was decided; the caller must call again")]
    Lapsed(String),
    /// The policy changed since the approval was asked.
    #[error(
        "the operator's policy changed since approval {0} was asked, so it no longer applies; \
         the caller must call again"
    )]
    PolicyChanged(String),
    /// The store cannot be reached.
    #[error(transparent)]
    Unavailable(#[from] Unavailable),
}

impl Gateway {
    /// Where approvers decide approval `id`: `approvals.url`, else the
    /// HTTP listener's own `/approvals`, with the id; `None` when neither
    /// is known (a stdio `serve` without `approvals.url`).
    pub fn approval_url(&self, id: &str) -> Option<String> {
        Some(format!("{}/{id}", self.approval_page()?))
    }

    /// Where the approval page is, without a trailing slash:
    /// `approvals.url`, else the HTTP listener's own `/approvals`.
    pub fn approval_page(&self) -> Option<String> {
        let registry = self.registry();
        let base = match &registry.config().approvals_url {
            Some(url) => url.to_string(),
            None => self.inner.page_base.get()?.clone(),
        };
        Some(base.trim_end_matches('/').to_string())
    }

    /// Keeps an approver's sign-in through the provider under `state`.
    pub async fn begin_sign_in(
        &self,
        state: &str,
        sign_in: &crate::approvals::SignIn,
    ) -> Result<(), Unavailable> {
        self.inner.approvals.begin_sign_in(state, sign_in).await
    }

    /// Takes the sign-in kept under `state`, once.
    pub async fn finish_sign_in(
        &self,
        state: &str,
    ) -> Result<Option<crate::approvals::SignIn>, Unavailable> {
        self.inner.approvals.finish_sign_in(state).await
    }

    /// Records where this process serves the approval page (the HTTP
    /// listener's `/approvals`), for callers to be told.
    pub fn serve_approval_page_at(&self, base: String) {
        let _ = self.inner.page_base.set(base);
    }

    /// Sets the pending-approvals gauge from the store.
    async fn count_pending(&self) {
        if metrics::enabled()
            && let Ok(pending) = self.inner.approvals.pending().await
        {
            metrics::approvals_pending(pending.len());
        }
    }

    /// Whether `approver` may decide `approval` under the current policy:
    /// `Err` with why not.
    fn may_decide(&self, approver: &Identity, approval: &Approval) -> Result<(), DecideError> {
        let registry = self.registry();
        let policy = &registry.config().policy;
        if policy.version() != approval.policy_version {
            return Err(DecideError::PolicyChanged(approval.id.clone()));
        }
        let Some(terms) = policy.approval_rule(&approval.rule) else {
            return Err(DecideError::PolicyChanged(approval.id.clone()));
        };
        if approver.key() == approval.caller && !terms.self_approval {
            return Err(DecideError::OwnCall(approval.rule.clone()));
        }
        let caller = approval
            .caller_identity
            .as_deref()
            .and_then(|j| Identity::from_json(j).ok());
        match terms.admits(approver, (caller.as_ref(), &approval.transport)) {
            Ok(true) => Ok(()),
            Ok(false) => Err(DecideError::Unknown(approval.id.clone())),
            Err(reason) => {
                tracing::warn!(
                    rule = %approval.rule,
                    approver = %approver.key(),
                    "the approver condition of rule {:?} could not be evaluated ({reason}); \
                     admitting nobody, as a rule that cannot say fails closed",
                    approval.rule
                );
                Err(DecideError::Unknown(approval.id.clone()))
            }
        }
    }

    /// The approvals waiting that `approver` may decide, oldest first
    /// (the page's list). Their own calls are left out unless the rule
    /// allows self-approval.
    pub async fn approvals_for(&self, approver: &Identity) -> Result<Vec<Approval>, Unavailable> {
        let pending = self.inner.approvals.pending().await?;
        metrics::approvals_pending(pending.len());
        Ok(pending
            .into_iter()
            .filter(|a| self.may_decide(approver, a).is_ok())
            .collect())
    }

    /// Approval `id`, if `approver` may see it: one they may decide, or
    /// one they decided.
    pub async fn approval_for(
        &self,
        approver: &Identity,
        id: &str,
    ) -> Result<Option<Approval>, Unavailable> {
        let Some(approval) = self.inner.approvals.get(id).await? else {
            return Ok(None);
        };
        let decided_it = approval.decided_by.as_deref() == Some(approver.key().as_str());
        Ok((decided_it || self.may_decide(approver, &approval).is_ok()).then_some(approval))
    }

    /// `approver` (from `client`, over HTTP) approves (`approve`) or
    /// refuses approval `id`, with an optional `note` the caller sees:
    /// once, atomically (a second click, a replayed form, another approver
    /// at the same moment change nothing). An approved call that is a task
    /// runs now.
    pub async fn decide(
        &self,
        approver: &Identity,
        client: Option<IpAddr>,
        id: &str,
        approve: bool,
        note: Option<String>,
    ) -> Result<Approval, DecideError> {
        let store = &self.inner.approvals;
        let Some(approval) = store.get(id).await? else {
            return Err(DecideError::Unknown(id.to_string()));
        };
        self.may_decide(approver, &approval)?;
        if approval.lapsed(now_ms()) {
            return Err(DecideError::Lapsed(approval.id));
        }
        let decision = if approve {
            State::Approved
        } else {
            State::Denied
        };
        let by = approver.key();
        let moved = store
            .transition(id, State::Pending, |a| {
                a.state = decision;
                a.decided_by = Some(by.clone());
                a.decided_ms = Some(now_ms());
                a.note = note.filter(|n| !n.trim().is_empty());
            })
            .await?;
        let decided = match moved {
            Transition::Moved(decided) => decided,
            Transition::Refused(now) => {
                return Err(DecideError::Settled {
                    id: now.id,
                    state: now.state.name(),
                    by: now
                        .decided_by
                        .map(|b| format!(" (by {b})"))
                        .unwrap_or_default(),
                });
            }
            Transition::Missing => return Err(DecideError::Unknown(id.to_string())),
        };
        let label = decision.name();
        metrics::approval(label);
        metrics::approval_decided(
            label,
            Duration::from_millis(
                decided
                    .decided_ms
                    .unwrap_or_default()
                    .saturating_sub(decided.created_ms),
            ),
        );
        event(self, &decided, label, client).await;
        self.count_pending().await;
        tracing::info!(approval = %decided.id, by = %by, decision = label, "an approver decided");
        if approve && decided.task.is_some() {
            let gateway = self.clone();
            let id = decided.id.clone();
            tokio::spawn(async move { gateway.run_approved(&id).await });
        }
        Ok(decided)
    }

    /// Runs the approved call that task `id` is, if no replica has begun
    /// it: claimed by moving its approval to `spent`, so it runs once.
    async fn run_approved(&self, id: &str) {
        // A replica just (re)started serves nothing until its plugin
        // directory is in: a call claimed before would find no tool.
        // Unclaimed, the next `tasks/get` on any replica begins it.
        self.wait_until_loaded().await;
        if !self.is_loaded() {
            return;
        }
        let run = random_id();
        let lease = self.registry().config().task_lease;
        let claimed = self
            .inner
            .approvals
            .update(
                id,
                |a| a.state == State::Approved && !a.lapsed(now_ms()),
                |a| {
                    a.state = State::Spent;
                    if let Some(task) = &mut a.task {
                        task.begin_run(&run, lease);
                    }
                },
            )
            .await;
        match claimed {
            Ok(Transition::Moved(approval)) => {
                metrics::approval("spent");
                self.run_task(approval, Vec::new(), Run { id: run, lease })
                    .await;
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(approval = %id, "an approved task could not be begun: {e}"),
        }
    }

    /// Runs a task's call with the client's `answers` so far, as its
    /// caller, against the registry served now, and keeps where it ended
    /// in the task: a result, or the tool's next question.
    async fn run_task(&self, approval: Approval, answers: Vec<Answer>, run: Run) {
        let identity = approval
            .caller_identity
            .as_deref()
            .and_then(|j| Identity::from_json(j).ok());
        let request = Request::resumed(
            self,
            identity,
            approval.transport == "http",
            approval.profile.clone(),
            approval.client,
        );
        let Some(tool) = request.visible().tool(&approval.tool) else {
            let message = format!(
                "the tool {:?} is no longer served to you; nothing ran",
                approval.tool
            );
            self.finish_task(&approval.id, &run.id, refused_result("NOT_FOUND", &message))
                .await;
            return;
        };
        let config = request.registry.config();
        if tool.plugin.digest != approval.digest
            || config.policy.version() != approval.policy_version
        {
            let message = format!(
                "approval {} no longer applies: the component or the operator's policy changed \
                 since it was asked; nothing ran, so call again",
                approval.id
            );
            self.finish_task(
                &approval.id,
                &run.id,
                refused_result("APPROVAL_VOID", &message),
            )
            .await;
            return;
        }
        let arguments = approval.arguments.clone();
        let note = PolicyNote {
            rule: approval.rule.clone(),
            outcome: "approve".into(),
            version: approval.policy_version.clone(),
        };
        let mut record = request.record_call(self, &tool, &arguments, ("task", Some(note)));
        record.approval(audit_note(&approval));
        let options = tools::call_options(
            self,
            &request,
            &tool,
            &record,
            Box::new(Replay::new(answers)),
            None,
            None,
        )
        .await;
        let call = run_call_with(
            &self.inner.env,
            &tool.plugin,
            &tool.spec,
            &arguments,
            options,
        );
        record.running();
        // The hold is renewed while the call runs and its record is
        // written; what the call came to is then kept by `end_run`, whose
        // reading is taken again should a last renewal land beside it.
        let ran = async {
            let outcome = call.await;
            record.finish_call(&outcome).await;
            outcome
        };
        let outcome = tokio::select! {
            biased;
            outcome = ran => outcome,
            never = self.renew_run(&approval.id, &run) => match never {},
        };
        let binding = CallBinding {
            caller: &approval.caller,
            tool: &tool.name,
            arguments: &arguments,
            component: &tool.plugin.digest,
        };
        match outcome {
            crate::call::CallOutcome::InputRequired {
                message,
                answered,
                form,
            } => match tools::question(self, &binding, (&message, &answered, form.as_deref())) {
                Ok((_, state)) => {
                    self.end_run(&approval.id, &run.id, "question", |task| {
                        task.phase = TaskPhase::InputRequired;
                        task.question = Some(message.clone());
                        task.form = form.clone();
                        task.request_state = Some(state.clone());
                    })
                    .await
                }
                Err(result) => self.finish_task(&approval.id, &run.id, result).await,
            },
            finished => {
                self.finish_task(&approval.id, &run.id, tools::result_of(finished))
                    .await
            }
        }
    }

    /// Keeps `result` as task `id`'s answer, if the run `run` still holds
    /// it: it is completed.
    async fn finish_task(&self, id: &str, run: &str, result: CallToolResult) {
        let result = serde_json::to_value(result).unwrap_or(Value::Null);
        self.end_run(id, run, "result", |task| {
            task.phase = TaskPhase::Completed;
            task.result = Some(result.clone());
            task.question = None;
            task.form = None;
            task.request_state = None;
        })
        .await
    }

    /// Ends the run `run` of task `id` with `change` (what it came to:
    /// `what`, for the log), if the run still holds the task: a reading
    /// that moved meanwhile (the hold renewed) is read again, and a task
    /// another replica took as lost is left as it is, with a warning (the
    /// audit trail has the call).
    async fn end_run(&self, id: &str, run: &str, what: &str, change: impl Fn(&mut TaskRecord)) {
        for _ in 0..END_RUN_ATTEMPTS {
            let ended = self
                .inner
                .approvals
                .update(
                    id,
                    |a| a.task.as_ref().is_some_and(|t| t.held_by(run)),
                    |a| {
                        if let Some(task) = &mut a.task {
                            change(task);
                            task.run = None;
                            task.updated_ms = now_ms();
                        }
                    },
                )
                .await;
            match ended {
                Ok(Transition::Moved(_)) => return,
                Ok(Transition::Refused(now))
                    if now.task.as_ref().is_some_and(|t| t.held_by(run)) => {}
                Ok(_) => {
                    tracing::warn!(approval = %id, "a task's {what} came after another replica took its run as lost; the audit trail has the call");
                    return;
                }
                Err(e) => {
                    tracing::warn!(approval = %id, "a task's {what} could not be kept: {e}");
                    return;
                }
            }
        }
        tracing::warn!(approval = %id, "a task's {what} could not be kept: it kept moving");
    }

    /// Renews `run`'s hold on task `id` every quarter of its lease, for as
    /// long as the run holds the task; a renewal the store did not answer
    /// is tried again soon. It never returns: a run that no longer holds
    /// the task (another replica took it as lost) stops renewing and waits
    /// for its call to end.
    async fn renew_run(&self, id: &str, run: &Run) -> std::convert::Infallible {
        let every = run.lease / 4;
        let mut next = every;
        loop {
            tokio::time::sleep(next).await;
            next = every;
            let renewed = self
                .inner
                .approvals
                .update(
                    id,
                    |a| a.task.as_ref().is_some_and(|t| t.held_by(&run.id)),
                    |a| {
                        if let Some(task) = &mut a.task {
                            task.renew_run(run.lease);
                        }
                    },
                )
                .await;
            match renewed {
                Ok(Transition::Moved(_)) => {}
                Ok(Transition::Refused(now))
                    if now.task.as_ref().is_some_and(|t| t.held_by(&run.id)) => {}
                Ok(_) => {
                    tracing::warn!(approval = %id, "a task's run no longer holds it (taken as lost); its call runs to its end, and its end is not kept");
                    return std::future::pending().await;
                }
                Err(e) => {
                    tracing::warn!(approval = %id, "a task's hold could not be renewed: {e}");
                    next = RENEW_RETRY.min(every);
                }
            }
        }
    }

    /// The approver a page session is, if it is still open.
    pub async fn approver_session(&self, id: &str) -> Result<Option<Session>, Unavailable> {
        self.inner.approvals.session(id).await
    }

    /// Opens a page session for `approver` (signed in with the static
    /// token whose SHA-256 is `token_sha256`, if it was one); returns its
    /// id and its CSRF token.
    pub async fn open_approver_session(
        &self,
        approver: &Identity,
        token_sha256: Option<String>,
    ) -> Result<(String, String), Unavailable> {
        // A session lasts no longer than the credential it was opened with.
        let lifetime =
            now_ms() + u64::try_from(crate::approvals::SESSION_LIFETIME.as_millis()).unwrap_or(0);
        let session = Session {
            identity: approver.to_json(),
            csrf: random_id(),
            expires_ms: approver
                .expires_ms()
                .map_or(lifetime, |exp| exp.min(lifetime)),
            token_sha256,
        };
        let id = self.inner.approvals.open_session(&session).await?;
        Ok((id, session.csrf))
    }

    /// Ends the page session `id`.
    pub async fn close_approver_session(&self, id: &str) -> Result<(), Unavailable> {
        self.inner.approvals.close_session(id).await
    }
}
