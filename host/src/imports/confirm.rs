//! `confirm`: asks the call's [`Confirmer`](crate::call::Confirmer) and
//! records the answer. The latest answer is the gate for mutating HTTP
//! requests in this call (see [`super::http`]): a yes opens it, and any
//! other answer closes it again, taking an earlier yes back.
//!
//! The user is shown a prompt the host writes the first line of, naming
//! the tool, its plugin and what a yes permits; the component's question
//! follows, and may be at most `limits.output_bytes` long.
//!
//! Waiting for a human holds the call's instance, so it is bounded: only
//! [`MAX_WAITING_FOR_USER`](crate::call::MAX_WAITING_FOR_USER) calls
//! host-wide, and `limits.concurrent_calls` per plugin block, may wait at
//! once; a call past that ends with a retryable error. While it waits, the
//! call gives its turn among the plugin's `concurrent_calls` back.
//!
//! Time spent waiting for the user does not count against the call's
//! deadline; the wait has its own bound (`elicitation_timeout_secs`).

use std::time::Instant;

use crate::bindings::confirm::{Host, Outcome};
use crate::call::{Answer, Asked, CallState, QuestionHash, Stop};

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
        if self.answers.len() as u32 >= limit {
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

        if let Some(audit) = &self.audit {
            audit.asking();
        }
        let started = Instant::now();
        let asked = if self.confirmer.waits_for_user() {
            let place = match self
                .waits
                .enter(&self.settings.name, limits.concurrent_calls)
            {
                Ok(place) => place,
                Err(why) => {
                    crate::metrics::confirmation_busy();
                    if let Some(audit) = &self.audit {
                        audit.busy();
                    }
                    self.stop = Some(Stop::Busy(why));
                    return Err(wasmtime::format_err!("too many calls wait for a user"));
                }
            };
            if let Some(turn) = &mut self.turn {
                turn.release();
            }
            let asked = self.confirmer.ask(&prompt).await;
            if let Some(turn) = &mut self.turn {
                turn.resume().await;
            }
            drop(place);
            asked
        } else {
            self.confirmer.ask(&prompt).await
        };
        self.deadline += started.elapsed();
        match asked {
            Asked::Answered(outcome) => {
                tracing::info!(
                    plugin = %self.settings.name,
                    tool = %self.tool.name,
                    ?outcome,
                    "confirmation answered"
                );
                if self.confirmer.answers_afresh() {
                    crate::metrics::confirmation_answered(outcome);
                }
                if let Some(audit) = &self.audit {
                    audit.answered(outcome);
                }
                self.answers.push(Answer {
                    question: QuestionHash::of(&prompt),
                    outcome,
                });
                // Only the latest answer counts: a no after a yes takes the
                // yes back.
                self.confirmed = outcome == Outcome::Confirmed;
                Ok(outcome)
            }
            Asked::NeedsInput => {
                if let Some(audit) = &self.audit {
                    audit.needs_input();
                }
                self.stop = Some(Stop::NeedsInput(prompt));
                Err(wasmtime::format_err!("confirmation needs the client"))
            }
        }
    }
}
