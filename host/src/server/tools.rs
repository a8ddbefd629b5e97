//! `tools/list` and `tools/call`: the tools the caller may see, and one
//! call of one of them with the confirmer its client needs.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ElicitRequest, ElicitResult,
    InputRequest, InputRequests, InputRequiredResult, InputResponses, ListToolsResult,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use super::Gateway;
use super::approval;
use super::convert::{PeerProgress, mcp_block, mcp_tool};
use super::request::{Authorized, Era, Record, Request, YesFrom, tool_target};
use crate::call::{CallOptions, CallOutcome, run_call_with};
use crate::confirmation::{
    CallBinding, Elicit, Replay, StateError, Unsealed, elicitation_params, form_params,
    form_reply_of, outcome_of, without_elicitation,
};
use crate::imports::confirm::{Confirmer, QuestionHash, Reply};
use crate::imports::progress::ProgressSink;
use crate::metrics;
use crate::registry::ToolRef;

/// The key of the confirmation, or of a tool's form that names none of
/// its own (`x-toolhost-input-key`), in `inputRequests` / `inputResponses`.
pub(super) const CONFIRM_KEY: &str = "confirm";

/// The key a question is asked under in `inputRequests`: a form's own
/// ([`crate::imports::form::INPUT_KEY`]), else [`CONFIRM_KEY`].
pub(super) fn input_key_of(form: Option<&str>) -> Option<String> {
    let schema: Value = serde_json::from_str(form?).ok()?;
    crate::imports::form::input_key(&schema).map(str::to_string)
}

/// What a 2026-07-28 retry after a URL-mode elicitation to the approval
/// page answers, as its sealed state records it: never a question a tool
/// asks (those begin with the host's line), so the answer is given to no
/// tool's question.
const APPROVAL_URL_QUESTION: &str = "(the approval page was shown)";

/// The audit trail's code for a continuation whose `inputResponses` is
/// missing, malformed, or sent without its `requestState` (or the state
/// without it).
const INVALID_INPUT_RESPONSES: &str = "INVALID_INPUT_RESPONSES";

/// `tools/list`: the tools the caller may see, under their served names.
pub(super) fn list(gateway: &Gateway, request: &Request) -> ListToolsResult {
    if request.profile().is_some_and(|p| p.discovery) {
        // The meta-tools, then what this session enabled, in the
        // profile's order, as far as the caller still sees it.
        let enabled = super::discovery::enabled_names(gateway, request);
        let mut tools = super::discovery::meta_tools();
        if !enabled.is_empty() {
            tools.extend(
                request
                    .visible()
                    .tools()
                    .iter()
                    .filter(|t| {
                        enabled.contains(&t.name)
                            && !crate::config::profiles::META_TOOLS.contains(&t.name.as_str())
                    })
                    .map(mcp_tool),
            );
        }
        return ListToolsResult::with_all_items(tools);
    }
    ListToolsResult::with_all_items(request.visible().tools().iter().map(mcp_tool).collect())
}

/// `tools/call`.
pub(super) async fn call(
    gateway: &Gateway,
    request: &Request,
    mut params: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    // A tool this caller may not see is unknown to it: same error, same
    // text, so the answer does not reveal that it exists.
    let Some(tool) = request.visible().tool(&params.name) else {
        if let Some(loading) = gateway.still_loading() {
            return Err(ErrorData::invalid_params(
                format!("no tool {:?} is served yet: {loading}", params.name),
                None,
            ));
        }
        let arguments = Value::Object(params.arguments.clone().unwrap_or_default());
        request
            .refuse_unknown_tool(gateway, &params.name, &arguments)
            .await;
        return Err(ErrorData::invalid_params(
            format!(
                "unknown tool {:?}; call tools/list to see the tools available",
                params.name
            ),
            None,
        ));
    };
    let arguments = Value::Object(params.arguments.take().unwrap_or_default());
    // A sealed state belongs to this caller, this tool, these arguments
    // and the component serving the tool now.
    let caller = request.caller();
    let binding = CallBinding {
        caller: &caller,
        tool: &tool.name,
        arguments: &arguments,
        component: &tool.plugin.digest,
    };
    let via = match (request.can_elicit, request.era) {
        (false, _) => "policy",
        (true, Era::Legacy) => "elicitation",
        (true, Era::Modern) => "input_required",
    };
    // A retry carrying a sealed answer was counted against the limits
    // when it first came, and may go on under an approval its first round
    // spent: so only a state this host sealed for this very call, from a
    // client that is asked that way, makes a retry. Anything else in
    // `requestState` is refused here, before the rules.
    let retry = match retry_state(gateway, request, &params, &binding) {
        Ok(retry) => retry,
        Err(refusal) => {
            let record = request.record_call(gateway, &tool, &arguments, (via, None));
            return refusal.answer(record).await;
        }
    };
    let first_round = retry.is_none();
    let round = match &retry {
        None => approval::Round::First,
        Some(state) if state.answers(APPROVAL_URL_QUESTION) => approval::Round::AfterThePage,
        Some(_) => approval::Round::OfItsRun,
    };
    // A retry's answer is read and its state spent before anything else
    // is: a state that cannot be spent (a malformed answer, a replay, the
    // store out of reach) is refused while nothing else has moved, so an
    // approval is never taken by a retry that then cannot run.
    let confirmer = match confirmer(gateway, request, &params, retry, &binding, context).await {
        Ok(confirmer) => confirmer,
        Err(refusal) => {
            let record = request.record_call(gateway, &tool, &arguments, (via, None));
            return refusal.answer(record).await;
        }
    };
    // The rules decide before anything runs.
    let policy = crate::telemetry::policy_span();
    let authorized = policy
        .in_span(request.authorize(
            gateway,
            "tools/call",
            (&tool.plugin, tool_target(&tool)),
            &arguments,
            first_round,
        ))
        .await;
    let (Authorized::Run { note, .. } | Authorized::Refused { note, .. }) = &authorized;
    crate::telemetry::record_policy(&policy, &note.rule, &note.outcome);
    drop(policy);
    let (note, ask_first, approved) = match authorized {
        Authorized::Run {
            note,
            needs: YesFrom::Nobody,
        } => (note, None, None),
        Authorized::Run {
            note,
            needs: YesFrom::Caller,
        } => {
            let question = policy_question(&tool, &arguments, &note.rule);
            (note, Some(question), None)
        }
        Authorized::Run {
            note,
            needs: YesFrom::Approver,
        } => {
            let as_task = request.era == Era::Modern
                && context
                    .client_capabilities()
                    .is_some_and(|c| c.supports_tasks());
            let url_elicitation = context
                .client_capabilities()
                .and_then(|c| c.elicitation)
                .is_some_and(|e| e.url.is_some());
            let url_mode = match (url_elicitation, request.era) {
                (false, _) => approval::UrlMode::None,
                (true, Era::Legacy) => approval::UrlMode::Ask(
                    context.peer.clone(),
                    request.registry.config().elicitation_timeout,
                ),
                // The retry comes back sealed to this call, as a
                // confirmation's does; the approval decides whether it runs.
                (true, Era::Modern) => approval::UrlMode::InputRequired(gateway.inner.states.seal(
                    &binding,
                    &[],
                    APPROVAL_URL_QUESTION,
                )),
            };
            let asked = approval::Ask {
                tool: &tool,
                arguments: &arguments,
                note: &note,
                round,
                as_task,
                url_mode,
            };
            match approval::gate(gateway, request, asked).await {
                approval::Gate::Run(approved) => (note, None, Some(approved)),
                approval::Gate::Answer {
                    response,
                    code,
                    approval,
                } => {
                    let response = *response;
                    let record = request.record_call(gateway, &tool, &arguments, (via, Some(note)));
                    if let Some(approval) = &approval {
                        record.approval(approval::audit_note(approval));
                    }
                    record.failed_before_running(code).await;
                    return Ok(response);
                }
            }
        }
        Authorized::Refused { note, refusal } => {
            let record = request.record_call(gateway, &tool, &arguments, (via, Some(note)));
            record.failed_before_running(refusal.code()).await;
            return Ok(CallToolResult::structured_error(
                json!({"ok": false, "result": null, "issues": [refusal.issue()]}),
            )
            .into());
        }
    };
    // Counts and records the call however it ends, an early return
    // included.
    let mut record = request.record_call(gateway, &tool, &arguments, (via, Some(note)));
    if let Some(approved) = &approved {
        record.approval(approval::audit_note(approved));
    }
    let progress: Option<Arc<dyn ProgressSink>> = context.meta.get_progress_token().map(|token| {
        Arc::new(PeerProgress {
            peer: context.peer.clone(),
            token,
        }) as _
    });
    let mut options = call_options(
        gateway, request, &tool, &record, confirmer, progress, ask_first,
    )
    .await;
    options.log_sink = super::logging::sink_for(gateway, request, &tool, context);
    let span = call_span(request, &tool);
    let call = span.in_span(run_call_with(
        &gateway.inner.env,
        &tool.plugin,
        &tool.spec,
        &arguments,
        options,
    ));
    record.running();
    let outcome = tokio::select! {
        outcome = call => outcome,
        _ = context.ct.cancelled() => {
            record.cancelled().await;
            tracing::info!(tool = %tool.name, "call cancelled by the client");
            return Err(ErrorData::invalid_request("the request was cancelled", None));
        }
    };
    // The component's span ends with its run.
    drop(span);
    // On record before the client hears the result.
    record.finish_call(&outcome).await;
    Ok(match outcome {
        CallOutcome::InputRequired {
            message,
            answered,
            form,
        } => match question(gateway, &binding, (&message, &answered, form.as_deref())) {
            Ok((asked, state)) => {
                let key = input_key_of(form.as_deref()).unwrap_or_else(|| CONFIRM_KEY.into());
                let mut requests = InputRequests::new();
                requests.insert(key, asked);
                InputRequiredResult::new(Some(requests), Some(state)).into()
            }
            Err(failed) => failed.into(),
        },
        finished => match &approved {
            Some(approval) => approval::with_approval(result_of(finished), approval).into(),
            None => result_of(finished).into(),
        },
    })
}

/// The options one call runs with: its confirmer, progress sink and the
/// host's own first question (`asking`), the record's hooks, and the
/// caller's own credentials where the plugin's are chosen per caller
/// (added by the runtime; the component never sees them), which the
/// record names.
pub(super) async fn call_options(
    gateway: &Gateway,
    request: &Request,
    tool: &ToolRef,
    record: &Record,
    confirmer: Box<dyn Confirmer>,
    progress: Option<Arc<dyn ProgressSink>>,
    ask_first: Option<String>,
) -> CallOptions {
    let caller = crate::config::CallerOf {
        identity: request.identity.as_ref(),
        token: request.token.as_ref().map(|t| &*t.0),
        exchanger: &gateway.inner.exchanger,
    };
    let (caller_credentials, used) = request
        .registry
        .config()
        .caller_credentials(&tool.plugin.settings, caller)
        .await;
    record.credentials(used);
    CallOptions {
        confirmer,
        progress,
        hooks: record.hooks(),
        ask_first,
        caller_credentials,
        log_sink: None,
    }
}

/// A call's result as the client receives it, for every outcome but a
/// question (see [`question`]).
pub(super) fn result_of(outcome: CallOutcome) -> CallToolResult {
    match outcome {
        CallOutcome::Success(value) => CallToolResult::structured(value),
        CallOutcome::Content {
            structured,
            content,
        } => {
            let blocks = content.into_iter().map(mcp_block);
            match structured {
                // The JSON as text first, for clients that do not read
                // `structuredContent`, then the tool's blocks.
                Some(value) => {
                    let mut result = CallToolResult::structured(value);
                    result.content.extend(blocks);
                    result
                }
                None => CallToolResult::success(blocks.collect()),
            }
        }
        CallOutcome::Failed(issues) => {
            CallToolResult::structured_error(json!({"ok": false, "result": null, "issues": issues}))
        }
        CallOutcome::InputRequired { .. } => CallToolResult::structured_error(json!({
            "ok": false,
            "result": null,
            "issues": [{"code": "INTERNAL", "message": "the tool's question cannot be sent to the client"}],
        })),
    }
}

/// The question a call asks now (`message`, after the answers
/// `answered`; `form`, a contract 0.3 form's schema) as the request to
/// put in `inputRequests`, and the sealed state that carries the answers
/// so far, bound to `binding`: a confirmation under its text's
/// fingerprint, a form under the form's. `Err`: the result to answer
/// instead (a form the client cannot be sent).
pub(super) fn question(
    gateway: &Gateway,
    binding: &CallBinding,
    (message, answered, form): (&str, &[crate::imports::confirm::Answer], Option<&str>),
) -> Result<(InputRequest, String), CallToolResult> {
    let (params, state) = match form {
        None => (
            elicitation_params(message),
            gateway.inner.states.seal(binding, answered, message),
        ),
        Some(schema) => {
            let Some(params) = form_params(message, schema) else {
                return Err(CallToolResult::structured_error(json!({
                    "ok": false,
                    "result": null,
                    "issues": [{"code": "INTERNAL", "message": "the tool's form cannot be sent to the client"}],
                })));
            };
            let key = input_key_of(Some(schema));
            let state = gateway.inner.states.seal_question(
                binding,
                answered,
                QuestionHash::of_form(message, schema),
                Some(key.as_deref()),
            );
            (params, state)
        }
    };
    Ok((InputRequest::Elicitation(ElicitRequest::new(params)), state))
}

/// The longest rendering of a call's arguments in the host's own
/// question, in characters; past it the question says how much was left
/// out (the arguments' hash is in the audit trail).
const QUESTION_ARGUMENTS_CHARS: usize = 2000;

/// The host's own question for a call a `confirm` rule holds: which tool,
/// which plugin, with which arguments, asked because of which rule. Written
/// by the host, so a tool cannot word it; the same call asks the same
/// question, so a 2026-07-28 retry's sealed answer matches it.
fn policy_question(tool: &ToolRef, arguments: &Value, rule: &str) -> String {
    let rendered = serde_json::to_string_pretty(arguments).unwrap_or_default();
    let shown: String = rendered.chars().take(QUESTION_ARGUMENTS_CHARS).collect();
    let cut = if shown.len() < rendered.len() {
        format!(
            "\n… ({} more characters not shown)",
            rendered.chars().count() - QUESTION_ARGUMENTS_CHARS
        )
    } else {
        String::new()
    };
    format!(
        "toolhost: the operator's policy (rule \"{rule}\") asks for your approval before the tool \
         \"{tool}\" of plugin \"{plugin}\" ({file}) runs with these arguments:\n{shown}{cut}\n\n\
         Yes lets this one call run. Anything it changes still needs its own confirmation.",
        tool = crate::text::escape_controls(&tool.name),
        plugin = tool.plugin.settings.name,
        file = tool.plugin.file,
    )
}

/// Every line of a call names the tool as clients know it (its served
/// name) and, over HTTP, the subject, which never reaches the guest. The
/// same span is the trace's `component` span: the run of the component's
/// code, with its cost ([`crate::telemetry::CallTrace`]).
fn call_span(request: &Request, tool: &ToolRef) -> crate::telemetry::Span {
    use crate::telemetry::CALL_TARGET;
    let log = match &request.identity {
        Some(identity) => {
            let span = tracing::info_span!(target: CALL_TARGET, "call", tool = %tool.name, subject = %identity.key());
            span.in_scope(|| tracing::info!(tool = %tool.name, "tool call"));
            span
        }
        None => tracing::info_span!(target: CALL_TARGET, "call", tool = %tool.name),
    };
    crate::telemetry::component_span(log, &tool.plugin, &tool.name)
}

/// Why a call was refused before its tool ran.
enum Refusal {
    /// A protocol error (invalid params), recorded as refused with `code`.
    Invalid {
        /// The audit trail's code.
        code: &'static str,
        /// What the client is told.
        message: String,
    },
    /// The confirmation-state store is out of reach: a tool error the
    /// client may retry, since nothing was spent.
    Transient(String),
}

impl Refusal {
    /// Records the refusal and answers the client.
    async fn answer(self, record: Record) -> Result<CallToolResponse, ErrorData> {
        match self {
            Refusal::Invalid { code, message } => {
                record.refused(code).await;
                Err(ErrorData::invalid_params(message, None))
            }
            Refusal::Transient(message) => {
                record.failed_before_running("TRANSIENT").await;
                Ok(CallToolResult::structured_error(json!({
                    "ok": false,
                    "result": null,
                    "issues": [{
                        "code": "TRANSIENT",
                        "message": message,
                        "retry_after_ms": 1000,
                    }],
                }))
                .into())
            }
        }
    }
}

/// A retry's `requestState`, opened (not yet spent) for this very call:
/// `None` on a first round. Refused: a state this host did not seal for
/// this caller, tool, arguments and component, and any state from a
/// client that is never asked in an `input_required` result (a legacy
/// session, or a client that declared no elicitation), which could carry
/// no answer.
fn retry_state(
    gateway: &Gateway,
    request: &Request,
    params: &CallToolRequestParams,
    binding: &CallBinding<'_>,
) -> Result<Option<Unsealed>, Refusal> {
    let Some(state) = &params.request_state else {
        return Ok(None);
    };
    if !request.can_elicit || request.era == Era::Legacy {
        tracing::warn!(tool = %binding.tool, "refused a requestState from a client never asked in an input_required result");
        return Err(Refusal::Invalid {
            code: "INVALID_REQUEST_STATE",
            message: "requestState carries the answer to a question this server asked in an \
                      input_required result, and it asks that way only a 2026-07-28 client that \
                      declares elicitation; this request is not one. Call again without \
                      requestState."
                .into(),
        });
    }
    gateway
        .inner
        .states
        .unseal(binding, state)
        .map(Some)
        .map_err(|e| refused_state(binding, &e))
}

/// The confirmer for this call's client: the operator's policy for a
/// client that cannot elicit, elicitation for a legacy session, and for a
/// 2026-07-28 client the answers its sealed `requestState` (`retry`,
/// opened by [`retry_state`]) and `inputResponses` carry (none on a first
/// round).
async fn confirmer(
    gateway: &Gateway,
    request: &Request,
    params: &CallToolRequestParams,
    retry: Option<Unsealed>,
    binding: &CallBinding<'_>,
    context: &RequestContext<RoleServer>,
) -> Result<Box<dyn Confirmer>, Refusal> {
    let config = request.registry.config();
    if !request.can_elicit {
        return Ok(Box::new(without_elicitation(
            config.confirmation,
            binding.arguments,
        )));
    }
    if request.era == Era::Legacy {
        return Ok(Box::new(Elicit {
            peer: context.peer.clone(),
            timeout: config.elicitation_timeout,
        }));
    }
    let (unsealed, responses) = match (retry, &params.input_responses) {
        (None, None) => return Ok(Box::new(Replay::new(Vec::new()))),
        (Some(unsealed), Some(responses)) => (unsealed, responses),
        _ => {
            return Err(Refusal::Invalid {
                code: INVALID_INPUT_RESPONSES,
                message: "send requestState and inputResponses together, as the input_required \
                          result asked"
                    .into(),
            });
        }
    };
    // The answer is read before the state is spent, under the key the
    // sealed question was asked with: a client that sent a malformed
    // answer can send the same state again with a proper one.
    let answer = read_answer(responses, unsealed.input_key(CONFIRM_KEY))?;
    let opened = match gateway.inner.states.spend(binding, unsealed).await {
        Ok(opened) => opened,
        Err(e) => return Err(refused_state(binding, &e)),
    };
    if opened.pending_form {
        // A form's answer is a form reply, never a confirmation's outcome;
        // the import checks its values against the form.
        let reply = Reply::Form(form_reply_of(&answer));
        return Ok(Box::new(Replay::new(opened.with_reply(reply))));
    }
    let outcome = outcome_of(&answer);
    metrics::confirmation_answered(outcome);
    Ok(Box::new(Replay::new(opened.with_answer(outcome))))
}

/// A refused `requestState`, logged, as the client is told.
fn refused_state(binding: &CallBinding<'_>, e: &StateError) -> Refusal {
    if let StateError::StoreUnavailable(_) = e {
        // Nothing was spent: the same retry can succeed later.
        return Refusal::Transient(e.to_string());
    }
    let code = refused_state_code(e);
    tracing::warn!(tool = %binding.tool, code, "refused a requestState: {e}");
    Refusal::Invalid {
        code,
        message: e.to_string(),
    }
}

/// The user's answer to the pending question in a continuation's
/// `inputResponses`, under `key`.
fn read_answer(responses: &InputResponses, key: &str) -> Result<ElicitResult, Refusal> {
    let Some(answer) = responses.get(key).cloned() else {
        return Err(Refusal::Invalid {
            code: INVALID_INPUT_RESPONSES,
            message: format!("inputResponses has no {key:?} answer"),
        });
    };
    serde_json::from_value(answer).map_err(|e| Refusal::Invalid {
        code: INVALID_INPUT_RESPONSES,
        message: format!("inputResponses.{key} is not an elicitation result: {e}"),
    })
}

/// The audit trail's code for a refused `requestState`: a replay, a state
/// from a replaced component and another caller's state each have their
/// own; anything else (altered, forged, expired, another server's) is
/// `INVALID_REQUEST_STATE`.
fn refused_state_code(error: &StateError) -> &'static str {
    match error {
        StateError::Replayed => "REPLAYED_REQUEST_STATE",
        StateError::ComponentChanged => "STALE_REQUEST_STATE",
        StateError::OtherCaller => "FOREIGN_REQUEST_STATE",
        StateError::StoreUnavailable(_) => "TRANSIENT",
        StateError::Invalid => "INVALID_REQUEST_STATE",
    }
}
