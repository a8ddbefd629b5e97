//! `confirm`: asks the call's [`Confirmer`] and
//! records the answer. The latest answer is the gate for mutating HTTP
//! requests in this call (see [`super::http`]): a yes opens it, and any
//! other answer closes it again, taking an earlier yes back.
//!
//! The user is shown a prompt the host writes the first line of, naming
//! the tool, its plugin and what a yes permits; the component's question
//! follows, and may be at most `limits.output_bytes` long.
//!
//! Waiting for a human holds the call's instance, so it is bounded: only
//! [`MAX_WAITING_FOR_USER`](crate::engine::MAX_WAITING_FOR_USER) calls
//! host-wide, and `limits.concurrent_calls` per plugin block, may wait at
//! once; a call past that ends with a retryable error. While it waits, the
//! call gives its turn among the plugin's `concurrent_calls` back.
//!
//! Time spent waiting for the user does not count against the call's
//! deadline; the wait has its own bound (`elicitation_timeout_secs`).

use std::time::Instant;

use sha2::{Digest, Sha256};

use super::{CallState, Stop};
use crate::bindings::confirm::{Host, Outcome};
use crate::hooks::BoxFuture;

/// A question's fingerprint: the SHA-256 of the prompt the user was shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuestionHash(pub [u8; 32]);

impl QuestionHash {
    /// The fingerprint of `prompt`.
    pub fn of(prompt: &str) -> QuestionHash {
        QuestionHash(Sha256::digest(prompt.as_bytes()).into())
    }
}

impl QuestionHash {
    /// The fingerprint of a form (contract 0.3's `form` import): its
    /// prompt and its schema text together, kept apart from every
    /// confirmation's fingerprint, so a changed form is a new question and
    /// a form's answer never answers a confirmation.
    pub fn of_form(prompt: &str, schema: &str) -> QuestionHash {
        let mut hasher = Sha256::new();
        hasher.update(b"toolhost form\0");
        hasher.update((prompt.len() as u64).to_be_bytes());
        hasher.update(prompt.as_bytes());
        hasher.update(schema.as_bytes());
        QuestionHash(hasher.finalize().into())
    }
}

/// What the user did with a form (contract 0.3's `form` import).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormReply {
    /// Submitted: the values, as JSON object text (checked against the
    /// form's schema by the import before the tool sees them).
    Accepted(String),
    /// Refused to answer.
    Declined,
    /// Dismissed, or the question expired.
    Cancelled,
    /// The client cannot show forms.
    Unsupported,
}

impl FormReply {
    /// `accepted`, `declined`, `cancelled` or `unsupported`.
    pub fn name(&self) -> &'static str {
        match self {
            FormReply::Accepted(_) => "accepted",
            FormReply::Declined => "declined",
            FormReply::Cancelled => "cancelled",
            FormReply::Unsupported => "unsupported",
        }
    }
}

/// What the user said to one question: a confirmation's outcome or a
/// form's reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// The answer to a confirmation.
    Confirm(Outcome),
    /// The answer to a form.
    Form(FormReply),
}

/// One answered question (a confirmation or a form): what was asked and
/// what the user said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The prompt's fingerprint ([`QuestionHash::of`] for a confirmation,
    /// [`QuestionHash::of_form`] for a form).
    pub question: QuestionHash,
    /// The answer.
    pub reply: Reply,
}

impl Answer {
    /// A confirmation's answer.
    pub fn confirm(question: QuestionHash, outcome: Outcome) -> Answer {
        Answer {
            question,
            reply: Reply::Confirm(outcome),
        }
    }
}

/// What a [`Confirmer`] says about one question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    /// The answer.
    Answered(Outcome),
    /// The answer must come from the client in another round; end the call.
    NeedsInput,
}

/// What a [`Confirmer`] says about one form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AskedForm {
    /// The reply.
    Answered(FormReply),
    /// The reply must come from the client in another round; end the call.
    NeedsInput,
}

/// Answers a call's confirmation questions. Which one a call gets depends on
/// the client: elicitation (legacy), input-required rounds (2026-07-28), the
/// operator's policy (no elicitation), or a terminal (`toolhost call`).
pub trait Confirmer: Send {
    /// Asks `message`.
    fn ask<'a>(&'a mut self, message: &'a str) -> BoxFuture<'a, Asked>;

    /// Asks the form `schema` (JSON Schema text of the elicitation subset,
    /// already checked) with `message`. Who cannot show forms answers
    /// *unsupported*, the default.
    fn ask_form<'a>(&'a mut self, message: &'a str, schema: &'a str) -> BoxFuture<'a, AskedForm> {
        let _ = (message, schema);
        Box::pin(async { AskedForm::Answered(FormReply::Unsupported) })
    }

    /// Whether asking waits for a human (an elicitation, a terminal). Such
    /// a wait gives the plugin's concurrency permit back and counts against
    /// [`WaitingForUser`](crate::engine::WaitingForUser); an answer known at once does neither.
    fn waits_for_user(&self) -> bool {
        true
    }

    /// Whether its answers are new ones, counted in the metrics
    /// (`toolhost_confirmations_total`) when given. A replay of answers the
    /// client already sent is not: those were counted when they arrived.
    fn answers_afresh(&self) -> bool {
        true
    }
}

/// Answers every question with one fixed outcome.
pub struct FixedAnswer(pub Outcome);

impl Confirmer for FixedAnswer {
    fn ask<'a>(&'a mut self, _message: &'a str) -> BoxFuture<'a, Asked> {
        let answer = self.0;
        Box::pin(async move { Asked::Answered(answer) })
    }

    fn waits_for_user(&self) -> bool {
        false
    }
}

/// The host's line that opens every confirmation prompt: which tool asks,
/// from which plugin, and what a yes lets it do. The component's question
/// follows after a blank line.
pub fn prompt_header(tool: &str, plugin: &str, file: &str) -> String {
    format!(
        "toolhost: the tool \"{tool}\" of plugin \"{plugin}\" ({file}) asks for your approval. \
         Yes lets this one call send requests that change data (POST, PUT, PATCH, DELETE) to the \
         destinations the operator allowed for the plugin; any other answer lets it change nothing. \
         The tool's own words follow."
    )
}

impl Host for CallState {
    async fn request(&mut self, question: String) -> wasmtime::Result<Outcome> {
        let limits = &self.settings.limits;
        let limit = limits.confirmations_per_call;
        let asked_by_tool = self.answers.len() - usize::from(self.host_asked);
        if asked_by_tool as u32 >= limit {
            self.stop = Some(Stop::Limit(format!(
                "the tool asked for more than {limit} confirmations in one call (limits.confirmations_per_call)"
            )));
            return Err(wasmtime::format_err!("confirmation limit reached"));
        }
        if question.len() as u64 > limits.output_bytes {
            self.stop = Some(Stop::Limit(format!(
                "the tool's confirmation question ({} bytes) exceeds limits.output_bytes ({}); nobody was asked",
                question.len(),
                limits.output_bytes
            )));
            return Err(wasmtime::format_err!("confirmation question too long"));
        }
        let prompt = format!(
            "{}\n\n{question}",
            prompt_header(&self.tool.name, &self.settings.name, &self.file)
        );
        let outcome = self.ask_user(prompt).await?;
        // Only the latest answer counts: a no after a yes takes the yes
        // back.
        self.confirmed = outcome == Outcome::Confirmed;
        Ok(outcome)
    }
}

/// A question being asked: when it began (the call's deadline moves by
/// the time it takes) and, when a human is asked, the call's place among
/// those waiting for one.
pub(crate) struct Asking {
    started: Instant,
    place: Option<crate::engine::WaitingPlace>,
}

impl CallState {
    /// Before asking the user anything (a confirmation, a form): tells
    /// the hooks, and when the confirmer waits for a human, takes a place
    /// among the calls waiting for one and gives the plugin's permit back.
    /// Too many waiting: the call stops ([`Stop::Busy`]).
    pub(crate) fn begin_asking(&mut self) -> wasmtime::Result<Asking> {
        self.hooks.asking();
        let started = Instant::now();
        if !self.confirmer.waits_for_user() {
            return Ok(Asking {
                started,
                place: None,
            });
        }
        let place = match self
            .waits
            .enter(&self.settings.name, self.settings.limits.concurrent_calls)
        {
            Ok(place) => place,
            Err(why) => {
                self.hooks.busy();
                self.stop = Some(Stop::Busy(why));
                return Err(wasmtime::format_err!("too many calls wait for a user"));
            }
        };
        if let Some(turn) = &mut self.turn {
            turn.release();
        }
        Ok(Asking {
            started,
            place: Some(place),
        })
    }

    /// After the answer: the permit back, the place freed, the deadline
    /// moved by the time the question took.
    pub(crate) async fn end_asking(&mut self, asking: Asking) {
        if asking.place.is_some()
            && let Some(turn) = &mut self.turn
        {
            turn.resume().await;
        }
        drop(asking.place);
        let waited = asking.started.elapsed();
        self.deadline += waited;
        self.waited_for_person += waited;
    }

    /// Asks the user `prompt` through the call's confirmer, as it is: the
    /// one path every question of a call takes (a tool's own, and the
    /// host's before the tool runs, see
    /// [`run_call_with`](crate::call::run_call_with)). While a human is
    /// asked, the plugin's permit is given back and the call counts
    /// against the waits; the answer is recorded in order, for a
    /// 2026-07-28 retry to replay. A question the client must collect
    /// stops the call ([`Stop::NeedsInput`]).
    pub(crate) async fn ask_user(&mut self, prompt: String) -> wasmtime::Result<Outcome> {
        let wait = self.begin_asking()?;
        // The wait for a person, as its own span.
        let span = wait_span(Wait::Confirmation);
        let asked =
            tracing::Instrument::instrument(self.confirmer.ask(&prompt), span.clone()).await;
        self.end_asking(wait).await;
        match asked {
            Asked::Answered(outcome) => {
                span.record(
                    "toolhost.outcome",
                    match outcome {
                        Outcome::Confirmed => "confirmed",
                        Outcome::Declined => "declined",
                        Outcome::Cancelled => "cancelled",
                        Outcome::Unsupported => "unsupported",
                    },
                );
                tracing::info!(
                    plugin = %self.settings.name,
                    tool = %self.tool.name,
                    ?outcome,
                    "confirmation answered"
                );
                self.hooks
                    .answered(outcome, self.confirmer.answers_afresh());
                self.answers
                    .push(Answer::confirm(QuestionHash::of(&prompt), outcome));
                Ok(outcome)
            }
            Asked::NeedsInput => {
                span.record("toolhost.outcome", INPUT_REQUIRED);
                self.hooks.needs_input();
                self.stop = Some(Stop::NeedsInput(super::Pending {
                    message: prompt,
                    form: None,
                }));
                Err(wasmtime::format_err!("confirmation needs the client"))
            }
        }
    }
}

/// A question's outcome when the client must collect the answer (a
/// 2026-07-28 round that ends `input_required`).
pub(crate) const INPUT_REQUIRED: &str = "input_required";

/// What a call waits for a person to answer: a confirmation, or a tool's
/// own form.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Wait {
    /// A confirmation (the host's question or the tool's).
    Confirmation,
    /// A tool's own form (contract 0.3).
    Form,
}

/// The span of one wait for a person, named for what is waited for
/// (`confirmation` or `form`, in the log's prefix and as the exported
/// span's name alike): its `toolhost.outcome` says how the wait ended,
/// never what was answered (a form's values stay out of every span).
pub(crate) fn wait_span(wait: Wait) -> tracing::Span {
    match wait {
        Wait::Confirmation => tracing::info_span!(
            target: "toolhost_runtime::confirm",
            "confirmation",
            toolhost.outcome = tracing::field::Empty,
        ),
        Wait::Form => tracing::info_span!(
            target: "toolhost_runtime::confirm",
            "form",
            toolhost.outcome = tracing::field::Empty,
        ),
    }
}
