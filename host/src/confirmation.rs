//! Answering a call's confirmation questions, for each kind of client.
//!
//! | client | [`Confirmer`] | how the user is asked |
//! |---|---|---|
//! | legacy (≤ 2025-11-25), declared elicitation | [`Elicit`] | a server-to-client `elicitation/create`, bounded by `elicitation_timeout_secs`; expiry is *cancelled* |
//! | 2026-07-28, declared elicitation | [`Replay`] | an `input_required` result; the client retries with the answer and a sealed `requestState`, and the component runs again from the start with its questions answered in order, each answer given only to the very question it answered |
//! | did not declare elicitation | [`FixedAnswer`] from [`without_elicitation`] | never asked: the operator's policy decides |
//!
//! Every prompt starts with the host's own line naming the tool, its plugin
//! and what a yes permits ([`crate::imports::confirm::prompt_header`]).
//!
//! Re-running the component on the retry is safe because of the host's
//! confirmation gate (see [`crate::imports::http`]): nothing but `GET`/`HEAD`
//! leaves the host before a confirmed answer, so the first run, which stops
//! at the question, cannot have changed anything.
//!
//! A `requestState` is attacker-controlled input. [`RequestStates`] seals it
//! with an HMAC under a per-process secret, binds it to the tool and its
//! exact arguments, records the digest of the component that asked and the
//! fingerprint of every prompt shown so far, in order, gives it a lifetime,
//! and accepts each one once. On the retry an answer counts only for the
//! same component asking the same question at the same place: if the
//! re-run asks anything else (the upstream data changed, say), [`Replay`]
//! asks the client again instead, and a replaced component's state is
//! refused.

use std::collections::VecDeque;
use std::time::Duration;

use rand::RngCore;
use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, RequestStateCodec,
    SealOptions,
};
use rmcp::service::{Peer, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::bindings::confirm::Outcome;
use crate::config::{NoElicitationPolicy, StateSettings};
use crate::hooks::BoxFuture;
use crate::imports::confirm::{
    Answer, Asked, AskedForm, Confirmer, FixedAnswer, FormReply, QuestionHash, Reply,
};
use crate::replay::{ReplayError, ReplayStore};

/// The description of the elicitation's one field, in the words of the
/// tool design records' shared confirmation schema.
const CONFIRM_FIELD: &str = "Confirm the action (true to proceed)";

/// The elicitation form for `message`: one required boolean, `confirm`.
pub fn elicitation_params(message: &str) -> ElicitRequestParams {
    let schema = ElicitationSchema::builder()
        .required_bool_with("confirm", |b| b.description(CONFIRM_FIELD))
        .build()
        .expect("a one-field schema is valid");
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: message.to_string(),
        requested_schema: schema,
    }
}

/// What an elicitation answer means: accept with `confirm: true` is
/// *confirmed*, accept with anything else *declined*, decline or cancel
/// *cancelled*.
pub fn outcome_of(result: &ElicitResult) -> Outcome {
    match result.action {
        ElicitationAction::Accept => {
            let yes = result
                .content
                .as_ref()
                .and_then(|c| c.get("confirm"))
                .and_then(Value::as_bool)
                == Some(true);
            if yes {
                Outcome::Confirmed
            } else {
                Outcome::Declined
            }
        }
        _ => Outcome::Cancelled,
    }
}

/// What a form's elicitation answer means (contract 0.3's `form`): accept
/// with its content (checked later, against the form, by the import),
/// decline, or cancel.
pub fn form_reply_of(result: &ElicitResult) -> FormReply {
    match result.action {
        ElicitationAction::Accept => FormReply::Accepted(
            result
                .content
                .as_ref()
                .map_or_else(|| "{}".to_string(), Value::to_string),
        ),
        ElicitationAction::Decline => FormReply::Declined,
        _ => FormReply::Cancelled,
    }
}

/// The elicitation params of a form: the tool's schema (already checked by
/// the import to be in the elicitation subset) under the prompt, without
/// the host's own keyword naming its input key. `None` when rmcp's schema
/// types cannot hold it.
pub fn form_params(message: &str, schema: &str) -> Option<ElicitRequestParams> {
    let sent = serde_json::from_str::<Value>(schema)
        .map(|schema| crate::imports::form::for_client(&schema))
        .and_then(serde_json::from_value::<ElicitationSchema>);
    match sent {
        Ok(requested_schema) => Some(ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.to_string(),
            requested_schema,
        }),
        Err(e) => {
            tracing::warn!("a form the host checked cannot be sent: {e}");
            None
        }
    }
}

/// The confirmer for a client that cannot elicit, per the operator's
/// policy: `deny` answers *unsupported*; `trust-confirm-flag` answers
/// *confirmed* when the call's arguments carry `"confirm": true`.
pub fn without_elicitation(policy: NoElicitationPolicy, arguments: &Value) -> FixedAnswer {
    let flag = arguments.get("confirm").and_then(Value::as_bool) == Some(true);
    match policy {
        NoElicitationPolicy::TrustConfirmFlag if flag => FixedAnswer(Outcome::Confirmed),
        _ => FixedAnswer(Outcome::Unsupported),
    }
}

/// Asks a legacy client with `elicitation/create`.
pub struct Elicit {
    /// The session's peer.
    pub peer: Peer<RoleServer>,
    /// How long to wait for the user.
    pub timeout: Duration,
}

impl Confirmer for Elicit {
    fn ask<'a>(&'a mut self, message: &'a str) -> BoxFuture<'a, Asked> {
        Box::pin(async move {
            let params = elicitation_params(message);
            match self
                .peer
                .create_elicitation_with_timeout(params, Some(self.timeout))
                .await
            {
                Ok(result) => Asked::Answered(outcome_of(&result)),
                Err(e) => {
                    tracing::info!(
                        "the confirmation was not answered ({e}); treating it as cancelled"
                    );
                    Asked::Answered(Outcome::Cancelled)
                }
            }
        })
    }

    fn ask_form<'a>(&'a mut self, message: &'a str, schema: &'a str) -> BoxFuture<'a, AskedForm> {
        Box::pin(async move {
            let Some(params) = form_params(message, schema) else {
                return AskedForm::Answered(FormReply::Unsupported);
            };
            match self
                .peer
                .create_elicitation_with_timeout(params, Some(self.timeout))
                .await
            {
                Ok(result) => AskedForm::Answered(form_reply_of(&result)),
                Err(e) => {
                    tracing::info!("the form was not answered ({e}); treating it as cancelled");
                    AskedForm::Answered(FormReply::Cancelled)
                }
            }
        })
    }
}

/// Asks on the terminal (`toolhost call`): `y` or `yes` confirms, anything
/// else declines. A form is filled in field by field ([`terminal_form`]).
/// Without a terminal on stdin, every question is shown and *declined*.
pub struct Terminal;

impl Confirmer for Terminal {
    fn ask<'a>(&'a mut self, message: &'a str) -> BoxFuture<'a, Asked> {
        let message = message.to_string();
        Box::pin(async move {
            use std::io::IsTerminal;
            if !std::io::stdin().is_terminal() {
                eprintln!("{message} [y/N] (no terminal: declined)");
                return Asked::Answered(Outcome::Declined);
            }
            let answer = tokio::task::spawn_blocking(move || {
                eprint!("{message} [y/N] ");
                let mut line = String::new();
                std::io::stdin().read_line(&mut line).map(|_| line)
            })
            .await;
            let yes = matches!(answer, Ok(Ok(line)) if matches!(line.trim().to_lowercase().as_str(), "y" | "yes"));
            Asked::Answered(if yes {
                Outcome::Confirmed
            } else {
                Outcome::Declined
            })
        })
    }

    fn ask_form<'a>(&'a mut self, message: &'a str, schema: &'a str) -> BoxFuture<'a, AskedForm> {
        let message = message.to_string();
        // The schema the import checked, as a client would see it.
        let schema = serde_json::from_str::<Value>(schema)
            .map(|s| crate::imports::form::for_client(&s))
            .unwrap_or_default();
        Box::pin(async move {
            use std::io::{BufRead, IsTerminal};
            if !std::io::stdin().is_terminal() {
                eprintln!(
                    "{message}\n{}(no terminal to fill in the form on: declined; run `toolhost call` from a terminal to answer it)",
                    form_fields(&schema)
                );
                return AskedForm::Answered(FormReply::Declined);
            }
            let reply = tokio::task::spawn_blocking(move || {
                eprintln!("{message}\n{}", form_fields(&schema));
                let mut lines = std::io::stdin().lock().lines();
                terminal_form(&schema, &mut |prompt: &str| {
                    eprint!("{prompt}");
                    lines.next().and_then(Result::ok)
                })
            })
            .await;
            AskedForm::Answered(reply.unwrap_or(FormReply::Cancelled))
        })
    }
}

/// The fields of a form, one line each: name, title, what it takes, its
/// choices and default.
fn form_fields(schema: &Value) -> String {
    let required = required_fields(schema);
    let mut text = String::new();
    for (name, field) in fields(schema) {
        let title = field.get("title").and_then(Value::as_str).unwrap_or(name);
        let kind = field
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("string");
        let mut line = format!("  {name} ({title}): {kind}");
        let choices = choices(field);
        if !choices.is_empty() {
            line.push_str(", one of ");
            line.push_str(&choices.join(", "));
        }
        if let Some(default) = field.get("default") {
            line.push_str(&format!(", default {default}"));
        }
        if !required.contains(&name) {
            line.push_str(", optional");
        }
        text.push_str(&line);
        text.push('\n');
    }
    text
}

/// A form's fields, in the schema's order.
fn fields(schema: &Value) -> Vec<(&str, &Value)> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.iter().map(|(k, v)| (k.as_str(), v)).collect())
        .unwrap_or_default()
}

/// The names `required` lists.
fn required_fields(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// A field's choices (`enum`, `oneOf`, or a multi-select's `items`), each
/// as its value.
fn choices(field: &Value) -> Vec<String> {
    let holder = field.get("items").unwrap_or(field);
    if let Some(values) = holder.get("enum").and_then(Value::as_array) {
        return values.iter().map(Value::to_string).collect();
    }
    holder
        .get("oneOf")
        .or_else(|| holder.get("anyOf"))
        .and_then(Value::as_array)
        .map(|options| {
            options
                .iter()
                .filter_map(|o| o.get("const"))
                .map(Value::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Fills in the form `schema` from lines `read` returns after showing its
/// prompt: first whether to answer at all (`y` or `yes`; anything else
/// declines), then each field in turn. An empty line takes the field's
/// default, or leaves an optional field out; a multi-select takes values
/// separated by commas; a value that does not parse is asked again. The
/// end of input cancels. The import checks the answer against the form,
/// as it checks a client's.
pub fn terminal_form(schema: &Value, read: &mut dyn FnMut(&str) -> Option<String>) -> FormReply {
    let Some(go) = read("Fill in the form? [y/N] ") else {
        return FormReply::Cancelled;
    };
    if !matches!(go.trim().to_lowercase().as_str(), "y" | "yes") {
        return FormReply::Declined;
    }
    let required = required_fields(schema);
    let mut values = serde_json::Map::new();
    for (name, field) in fields(schema) {
        let kind = field
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("string");
        loop {
            let Some(line) = read(&format!("{name}: ")) else {
                return FormReply::Cancelled;
            };
            let line = line.trim();
            if line.is_empty() {
                if let Some(default) = field.get("default") {
                    values.insert(name.to_string(), default.clone());
                    break;
                }
                if !required.contains(&name) {
                    break;
                }
                eprintln!("{name} is required");
                continue;
            }
            let value = match kind {
                "boolean" => match line.to_lowercase().as_str() {
                    "y" | "yes" | "true" => Some(Value::Bool(true)),
                    "n" | "no" | "false" => Some(Value::Bool(false)),
                    _ => None,
                },
                "integer" => line.parse::<i64>().ok().map(Value::from),
                "number" => line.parse::<f64>().ok().map(Value::from),
                "array" => Some(Value::from(
                    line.split(',')
                        .map(|v| v.trim().to_string())
                        .filter(|v| !v.is_empty())
                        .collect::<Vec<_>>(),
                )),
                _ => Some(Value::from(line)),
            };
            match value {
                Some(value) => {
                    values.insert(name.to_string(), value);
                    break;
                }
                None => eprintln!("{name} takes a {kind}; try again"),
            }
        }
    }
    FormReply::Accepted(Value::Object(values).to_string())
}

/// Answers from earlier `input_required` rounds, in order. Each answers
/// only the prompt it was given for: a prompt that differs from the one
/// recorded at its place, or one past them, needs another round, and the
/// answers after it are dropped.
pub struct Replay {
    answers: VecDeque<Answer>,
}

impl Replay {
    /// A confirmer that replays `answers`.
    pub fn new(answers: Vec<Answer>) -> Replay {
        Replay {
            answers: answers.into(),
        }
    }
}

impl Confirmer for Replay {
    fn ask<'a>(&'a mut self, message: &'a str) -> BoxFuture<'a, Asked> {
        let asked = match self.answers.pop_front() {
            Some(Answer {
                question,
                reply: Reply::Confirm(outcome),
            }) if question == QuestionHash::of(message) => Asked::Answered(outcome),
            Some(_) => {
                tracing::info!(
                    "the tool asked a different question than the one answered; asking the client again"
                );
                self.answers.clear();
                Asked::NeedsInput
            }
            None => Asked::NeedsInput,
        };
        Box::pin(async move { asked })
    }

    /// Like a confirmation: the recorded reply answers only the very same
    /// form (prompt and schema) at its place.
    fn ask_form<'a>(&'a mut self, message: &'a str, schema: &'a str) -> BoxFuture<'a, AskedForm> {
        let asked = match self.answers.pop_front() {
            Some(Answer {
                question,
                reply: Reply::Form(reply),
            }) if question == QuestionHash::of_form(message, schema) => AskedForm::Answered(reply),
            Some(_) => {
                tracing::info!(
                    "the tool asked a different question than the one answered; asking the client again"
                );
                self.answers.clear();
                AskedForm::NeedsInput
            }
            None => AskedForm::NeedsInput,
        };
        Box::pin(async move { asked })
    }

    fn waits_for_user(&self) -> bool {
        false
    }

    fn answers_afresh(&self) -> bool {
        false
    }
}

/// Why a `requestState` was refused.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// Not sealed with a key this process holds, edited, expired, or for
    /// other arguments.
    #[error(
        "requestState is invalid: it was altered, has expired, was sealed with a key this server does not hold (another server process, or a retired key), or belongs to a different tool or different arguments; call the tool again without it"
    )]
    Invalid,
    /// The shared replay store did not answer: the state was not spent.
    #[error("{0}; the answer was not used, so retry the same request shortly")]
    StoreUnavailable(String),
    /// Already used once.
    #[error("requestState was already used; call the tool again without it to start over")]
    Replayed,
    /// Issued to another caller: a state answers the question its own
    /// caller was asked, and nobody else's.
    #[error(
        "requestState was issued to another caller (a state is bound to the identity that was asked), so it does not apply to this one; call the tool again without it"
    )]
    OtherCaller,
    /// The tool's component is not the one that asked.
    #[error(
        "requestState was issued by another version of the tool's component (its file was replaced since the question was asked), so the answer does not apply; call the tool again without it"
    )]
    ComponentChanged,
}

/// What a sealed state carries.
#[derive(Serialize, Deserialize)]
struct Sealed {
    /// Who was asked ([`CallBinding::caller`]).
    caller: String,
    /// SHA-256 of the component file that asked, hex.
    component: String,
    /// Questions answered so far, in order: (prompt fingerprint in hex,
    /// outcome name).
    answered: Vec<(String, String)>,
    /// Fingerprint of the prompt the client is asked now, hex.
    pending: String,
    /// Whether the pending question is a form (contract 0.3).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pending_form: bool,
    /// The key the client answers the pending question under, when the
    /// form named its own; absent: `confirm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pending_key: Option<String>,
    /// The values of accepted forms: (place in `answered`, JSON text).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    form_values: Vec<(usize, String)>,
    /// Single-use identifier.
    nonce: String,
    /// When the state expires, in milliseconds since the Unix epoch: how
    /// long a shared replay store must remember the nonce.
    expires_at_ms: u64,
}

/// What an opened state says: the answers so far and the question the
/// client's answer is for.
#[derive(Debug)]
pub struct Opened {
    /// Earlier answers, in order.
    pub answered: Vec<Answer>,
    /// The prompt the client was asked in the last round.
    pub pending: QuestionHash,
    /// Whether that prompt was a form (contract 0.3), whose answer is a
    /// [`FormReply`], never an [`Outcome`].
    pub pending_form: bool,
}

/// A state whose seal and caller were checked, not yet spent: what the
/// client's answer must be read under before [`RequestStates::spend`]
/// uses the state up (a malformed answer leaves it usable).
pub struct Unsealed {
    sealed: Sealed,
    answered: Vec<Answer>,
    pending: QuestionHash,
}

impl Unsealed {
    /// Whether the question it answers is `prompt`.
    pub fn answers(&self, prompt: &str) -> bool {
        self.pending == QuestionHash::of(prompt)
    }

    /// The key of `inputResponses` the answer to the pending question is
    /// under: the form's own, or `default` (the confirmations' key).
    pub fn input_key<'a>(&'a self, default: &'a str) -> &'a str {
        self.sealed.pending_key.as_deref().unwrap_or(default)
    }
}

impl Opened {
    /// Every answer to replay, the client's `answer` to the pending prompt
    /// last.
    pub fn with_answer(self, answer: Outcome) -> Vec<Answer> {
        self.with_reply(Reply::Confirm(answer))
    }

    /// Every answer to replay, the client's `reply` to the pending
    /// question last.
    pub fn with_reply(mut self, reply: Reply) -> Vec<Answer> {
        self.answered.push(Answer {
            question: self.pending,
            reply,
        });
        self.answered
    }
}

/// The call a state belongs to.
pub struct CallBinding<'a> {
    /// Who calls: the identity qualified by its source (`token:alice`,
    /// `jwt:alice`), `http` or `stdio`.
    pub caller: &'a str,
    /// The tool's name.
    pub tool: &'a str,
    /// The call's arguments.
    pub arguments: &'a Value,
    /// SHA-256 of the serving component file, hex.
    pub component: &'a str,
}

/// Seals and opens `requestState` values.
pub struct RequestStates {
    codec: RequestStateCodec,
    ttl: Duration,
    /// Nonces already accepted.
    spent: ReplayStore,
}

impl RequestStates {
    /// A sealer with a fresh random secret of this process's own, spending
    /// nonces in this process; states live for `ttl`.
    pub fn new(ttl: Duration) -> RequestStates {
        let mut key = [0u8; 32];
        rand::rng().fill_bytes(&mut key);
        RequestStates {
            codec: RequestStateCodec::try_new(key.to_vec()).expect("a 32-byte key is long enough"),
            ttl,
            spent: ReplayStore::local(),
        }
    }

    /// A sealer for `[state]`: with its key ring (the first key seals, every
    /// key opens) shared by replicas, or a key of this process's own; and
    /// its replay store.
    pub fn configured(ttl: Duration, settings: &StateSettings) -> anyhow::Result<RequestStates> {
        let mut states = RequestStates::new(ttl);
        if let Some((active, _)) = settings.keys.first() {
            let ring = settings
                .keys
                .iter()
                .map(|(id, key)| (id.clone(), key.as_bytes().to_vec()));
            states.codec = RequestStateCodec::new_with_keyring(active.clone(), ring)
                .map_err(|e| anyhow::anyhow!("[state] keys: {e}"))?;
        }
        if let Some(url) = &settings.replay {
            states.spent = ReplayStore::redis(url)
                .map_err(|e| anyhow::anyhow!("`state.replay` is not a usable Redis URL: {e}"))?;
        }
        Ok(states)
    }

    /// The shared Redis store of `state.replay`, if configured: the
    /// `limit` rules count there too.
    pub fn shared_store(&self) -> Option<std::sync::Arc<crate::replay::RedisReplay>> {
        self.spent.shared()
    }

    /// Seals `answered` and the prompt now asked, `pending`, for `call`.
    pub fn seal(&self, call: &CallBinding, answered: &[Answer], pending: &str) -> String {
        self.seal_question(call, answered, QuestionHash::of(pending), None)
    }

    /// Seals `answered` and the question now asked, by its fingerprint
    /// `pending`; `form` when it is a form (contract 0.3): `Some` of the
    /// key it is answered under when the form named one.
    pub fn seal_question(
        &self,
        call: &CallBinding,
        answered: &[Answer],
        pending: QuestionHash,
        form: Option<Option<&str>>,
    ) -> String {
        let mut nonce = [0u8; 16];
        rand::rng().fill_bytes(&mut nonce);
        let sealed = Sealed {
            caller: call.caller.to_string(),
            component: call.component.to_string(),
            answered: answered
                .iter()
                .map(|a| (hex::encode(a.question.0), reply_name(&a.reply)))
                .collect(),
            pending: hex::encode(pending.0),
            pending_form: form.is_some(),
            pending_key: form.flatten().map(str::to_string),
            form_values: answered
                .iter()
                .enumerate()
                .filter_map(|(i, a)| match &a.reply {
                    Reply::Form(FormReply::Accepted(values)) => Some((i, values.clone())),
                    _ => None,
                })
                .collect(),
            nonce: hex::encode(nonce),
            expires_at_ms: unix_ms().saturating_add(self.ttl.as_millis() as u64),
        };
        let binding = binding(call.tool, call.arguments);
        self.codec
            .seal_json_with(
                &sealed,
                &SealOptions::new().associated_data(&binding).ttl(self.ttl),
            )
            .expect("the sealed payload is serializable")
    }

    /// Opens `state` for `call`, once (across replicas, with a shared
    /// replay store).
    pub async fn open(&self, call: &CallBinding<'_>, state: &str) -> Result<Opened, StateError> {
        let unsealed = self.unseal(call, state)?;
        self.spend(call, unsealed).await
    }

    /// Checks `state`'s seal for `call` and that it was issued to its
    /// caller, without spending it.
    pub fn unseal(&self, call: &CallBinding<'_>, state: &str) -> Result<Unsealed, StateError> {
        let sealed: Sealed = self
            .codec
            .open_json_with(state, &binding(call.tool, call.arguments))
            .map_err(|_| StateError::Invalid)?;
        let answered = sealed
            .answered
            .iter()
            .enumerate()
            .map(|(i, (question, name))| {
                let values = sealed
                    .form_values
                    .iter()
                    .find(|(at, _)| *at == i)
                    .map(|(_, v)| v.clone());
                Ok(Answer {
                    question: question_hash(question).ok_or(StateError::Invalid)?,
                    reply: reply_named(name, values).ok_or(StateError::Invalid)?,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let pending = question_hash(&sealed.pending).ok_or(StateError::Invalid)?;
        // Before the nonce is spent: another caller holding a copy of the
        // state cannot use it up for the caller it was issued to.
        if sealed.caller != call.caller {
            return Err(StateError::OtherCaller);
        }
        Ok(Unsealed {
            sealed,
            answered,
            pending,
        })
    }

    /// Spends an unsealed state, once (across replicas, with a shared
    /// replay store): what it carries, when its component still serves
    /// the tool.
    pub async fn spend(
        &self,
        call: &CallBinding<'_>,
        unsealed: Unsealed,
    ) -> Result<Opened, StateError> {
        let Unsealed {
            sealed,
            answered,
            pending,
        } = unsealed;
        let remaining = Duration::from_millis(sealed.expires_at_ms.saturating_sub(unix_ms()));
        // The codec accepts the state until it expires; remember its nonce
        // that long, plus a margin for replicas whose clocks lag.
        let remember = remaining + CLOCK_SKEW_MARGIN;
        match self.spent.spend(&sealed.nonce, remember).await {
            Ok(()) => {}
            Err(ReplayError::Spent) => return Err(StateError::Replayed),
            Err(e @ ReplayError::Unavailable { .. }) => {
                tracing::warn!("a confirmation answer waits: {e}");
                return Err(StateError::StoreUnavailable(e.for_client().to_string()));
            }
        }
        if sealed.component != call.component {
            return Err(StateError::ComponentChanged);
        }
        Ok(Opened {
            answered,
            pending,
            pending_form: sealed.pending_form,
        })
    }
}

/// How much longer than a state's lifetime its spent nonce is remembered,
/// for replicas whose clocks lag the one that spent it.
const CLOCK_SKEW_MARGIN: Duration = Duration::from_secs(60);

/// Now, in milliseconds since the Unix epoch.
fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A fingerprint from its hex form.
fn question_hash(text: &str) -> Option<QuestionHash> {
    let mut bytes = [0u8; 32];
    hex::decode_to_slice(text, &mut bytes).ok()?;
    Some(QuestionHash(bytes))
}

/// The bytes a state is bound to: the tool name and its arguments in
/// canonical form (object keys sorted at every level).
fn binding(tool: &str, arguments: &Value) -> Vec<u8> {
    let mut hasher = Sha256::new();
    hasher.update(tool.as_bytes());
    hasher.update([0]);
    hasher.update(canonical(arguments).as_bytes());
    hasher.finalize().to_vec()
}

fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical(&map[k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

/// The outcome's name as tools report it.
pub fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Confirmed => "confirmed",
        Outcome::Declined => "declined",
        Outcome::Cancelled => "cancelled",
        Outcome::Unsupported => "unsupported",
    }
}

/// A reply's name in a sealed state: a confirmation's outcome, or `form-`
/// and the form reply's name.
fn reply_name(reply: &Reply) -> String {
    match reply {
        Reply::Confirm(outcome) => outcome_name(*outcome).to_string(),
        Reply::Form(form) => format!("form-{}", form.name()),
    }
}

/// The reply named `name` in a sealed state; `values`, an accepted form's.
fn reply_named(name: &str, values: Option<String>) -> Option<Reply> {
    Some(match name.strip_prefix("form-") {
        None => Reply::Confirm(outcome_named(name)?),
        Some("accepted") => Reply::Form(FormReply::Accepted(values?)),
        Some("declined") => Reply::Form(FormReply::Declined),
        Some("cancelled") => Reply::Form(FormReply::Cancelled),
        Some("unsupported") => Reply::Form(FormReply::Unsupported),
        Some(_) => return None,
    })
}

fn outcome_named(name: &str) -> Option<Outcome> {
    Some(match name {
        "confirmed" => Outcome::Confirmed,
        "declined" => Outcome::Declined,
        "cancelled" => Outcome::Cancelled,
        "unsupported" => Outcome::Unsupported,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call<'a>(tool: &'a str, arguments: &'a Value) -> CallBinding<'a> {
        CallBinding {
            caller: "token:alice",
            tool,
            arguments,
            component: "c1",
        }
    }

    #[tokio::test]
    async fn states_are_bound_single_use_and_unforgeable() {
        let states = RequestStates::new(Duration::from_secs(60));
        let args = json!({"order_id": 1, "confirm": true});
        let yes = Answer::confirm(QuestionHash::of("first?"), Outcome::Confirmed);
        let s = states.seal(&call("t", &args), std::slice::from_ref(&yes), "second?");
        // Key order does not matter; values do.
        let other_args = json!({"order_id": 2, "confirm": true});
        assert!(states.open(&call("t", &other_args), &s).await.is_err());
        assert!(states.open(&call("other", &args), &s).await.is_err());
        let same = json!({"confirm": true, "order_id": 1});
        let opened = states.open(&call("t", &same), &s).await.unwrap();
        assert_eq!(opened.answered, vec![yes]);
        assert_eq!(opened.pending, QuestionHash::of("second?"));
        assert!(matches!(
            states.open(&call("t", &args), &s).await,
            Err(StateError::Replayed)
        ));
        let foreign = RequestStates::new(Duration::from_secs(60)).seal(&call("t", &args), &[], "q");
        assert!(matches!(
            states.open(&call("t", &args), &foreign).await,
            Err(StateError::Invalid)
        ));
        let mut edited = states.seal(&call("t", &args), &[], "q");
        edited.insert(5, 'A');
        assert!(matches!(
            states.open(&call("t", &args), &edited).await,
            Err(StateError::Invalid)
        ));
        let by_old_component = states.seal(&call("t", &args), &[], "q");
        let replaced = CallBinding {
            component: "c2",
            ..call("t", &args)
        };
        assert!(matches!(
            states.open(&replaced, &by_old_component).await,
            Err(StateError::ComponentChanged)
        ));
        let alices = states.seal(&call("t", &args), &[], "q");
        for other in ["jwt:alice", "token:bob", "http"] {
            let theirs = CallBinding {
                caller: other,
                ..call("t", &args)
            };
            assert!(matches!(
                states.open(&theirs, &alices).await,
                Err(StateError::OtherCaller)
            ));
        }
        // Refused before it was spent: alice's own answer still works.
        assert!(states.open(&call("t", &args), &alices).await.is_ok());
    }

    #[tokio::test]
    async fn a_replayed_answer_answers_only_its_own_question() {
        let answer = |q: &str, outcome| Answer::confirm(QuestionHash::of(q), outcome);
        let mut replay = Replay::new(vec![
            answer("a?", Outcome::Confirmed),
            answer("b?", Outcome::Confirmed),
        ]);
        assert_eq!(replay.ask("a?").await, Asked::Answered(Outcome::Confirmed));
        // The second question changed: ask again, never reuse the answer.
        assert_eq!(replay.ask("b, now 40 orders?").await, Asked::NeedsInput);
        assert_eq!(replay.ask("b?").await, Asked::NeedsInput);
    }

    #[tokio::test]
    async fn a_forms_answer_is_sealed_and_replayed_only_to_the_very_same_form() {
        let states = RequestStates::new(Duration::from_secs(60));
        let args = json!({});
        let form = r#"{"type":"object","properties":{"c":{"type":"string"}}}"#;
        let accepted = Answer {
            question: QuestionHash::of_form("which?", form),
            reply: Reply::Form(FormReply::Accepted(r#"{"c":"red"}"#.into())),
        };
        let declined = Answer {
            question: QuestionHash::of_form("and?", form),
            reply: Reply::Form(FormReply::Declined),
        };
        let pending = QuestionHash::of_form("last?", form);
        let sealed = states.seal_question(
            &call("t", &args),
            &[accepted.clone(), declined.clone()],
            pending,
            Some(None),
        );
        let unsealed = states.unseal(&call("t", &args), &sealed).unwrap();
        assert_eq!(unsealed.input_key("confirm"), "confirm");
        let opened = states.spend(&call("t", &args), unsealed).await.unwrap();
        assert!(opened.pending_form);
        assert_eq!(opened.answered, vec![accepted.clone(), declined]);

        let mut replay = Replay::new(vec![accepted.clone()]);
        assert_eq!(
            replay.ask_form("which?", form).await,
            AskedForm::Answered(FormReply::Accepted(r#"{"c":"red"}"#.into()))
        );
        // A changed form (another schema, same words) is a new question.
        let mut replay = Replay::new(vec![accepted.clone()]);
        let changed = r#"{"type":"object","properties":{"c":{"type":"string","enum":["red"]}}}"#;
        assert_eq!(
            replay.ask_form("which?", changed).await,
            AskedForm::NeedsInput
        );
        // A form's answer never answers a confirmation, whatever it says.
        let mut replay = Replay::new(vec![accepted]);
        assert_eq!(replay.ask("which?").await, Asked::NeedsInput);
    }

    #[test]
    fn a_form_is_filled_in_on_the_terminal_field_by_field() {
        let schema = json!({
            "type": "object",
            "properties": {
                "color": {"type": "string", "oneOf": [{"const": "red", "title": "Red"}], "default": "red"},
                "count": {"type": "integer"},
                "urgent": {"type": "boolean"},
                "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
                "note": {"type": "string"}
            },
            "required": ["count", "urgent"]
        });
        let answer = |lines: &[&str]| {
            let mut lines = lines.iter().map(|l| l.to_string());
            terminal_form(&schema, &mut |_| lines.next())
        };
        // Fields in name order (color, count, note, tags, urgent): a default
        // taken, a bad integer asked again, an optional left out.
        let reply = answer(&["yes", "", "many", "3", "", "a, b", "y"]);
        let FormReply::Accepted(values) = reply else {
            panic!("{reply:?}");
        };
        assert_eq!(
            serde_json::from_str::<Value>(&values).unwrap(),
            json!({"color": "red", "count": 3, "urgent": true, "tags": ["a", "b"]})
        );
        assert_eq!(answer(&["n"]), FormReply::Declined);
        assert_eq!(answer(&["y", ""]), FormReply::Cancelled);
        assert!(
            form_fields(&schema)
                .contains("color (color): string, one of \"red\", default \"red\", optional")
        );
    }

    #[tokio::test]
    async fn a_forms_own_input_key_is_sealed_and_read_before_the_state_is_spent() {
        let states = RequestStates::new(Duration::from_secs(60));
        let args = json!({});
        let form = r#"{"type":"object","x-toolhost-input-key":"user_name","properties":{"name":{"type":"string"}}}"#;
        let sealed = states.seal_question(
            &call("t", &args),
            &[],
            QuestionHash::of_form("name?", form),
            Some(Some("user_name")),
        );
        // Reading the key does not spend the state: it opens once after.
        let unsealed = states.unseal(&call("t", &args), &sealed).unwrap();
        assert_eq!(unsealed.input_key("confirm"), "user_name");
        let again = states.unseal(&call("t", &args), &sealed).unwrap();
        let opened = states.spend(&call("t", &args), again).await.unwrap();
        assert!(opened.pending_form);
        assert!(matches!(
            states.open(&call("t", &args), &sealed).await,
            Err(StateError::Replayed)
        ));
        // The client is sent the schema without the host's keyword.
        let Some(ElicitRequestParams::FormElicitationParams {
            requested_schema, ..
        }) = form_params("name?", form)
        else {
            panic!("the form can be sent");
        };
        let sent = serde_json::to_value(&requested_schema).unwrap();
        assert!(sent.get("x-toolhost-input-key").is_none(), "{sent}");
        assert!(sent["properties"].get("name").is_some(), "{sent}");
    }

    #[test]
    fn answers_map_to_outcomes() {
        let accept = |c| ElicitResult::new(ElicitationAction::Accept).with_content(c);
        assert_eq!(
            outcome_of(&accept(json!({"confirm": true}))),
            Outcome::Confirmed
        );
        assert_eq!(
            outcome_of(&accept(json!({"confirm": false}))),
            Outcome::Declined
        );
        assert_eq!(
            outcome_of(&ElicitResult::new(ElicitationAction::Decline)),
            Outcome::Cancelled
        );
        assert_eq!(
            outcome_of(&ElicitResult::new(ElicitationAction::Cancel)),
            Outcome::Cancelled
        );
    }

    #[test]
    fn policy_without_elicitation() {
        let yes = json!({"confirm": true});
        let no = json!({"confirm": false});
        assert_eq!(
            without_elicitation(NoElicitationPolicy::Deny, &yes).0,
            Outcome::Unsupported
        );
        assert_eq!(
            without_elicitation(NoElicitationPolicy::TrustConfirmFlag, &yes).0,
            Outcome::Confirmed
        );
        assert_eq!(
            without_elicitation(NoElicitationPolicy::TrustConfirmFlag, &no).0,
            Outcome::Unsupported
        );
    }
}
