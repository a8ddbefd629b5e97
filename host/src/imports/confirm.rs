//! `confirm`: asks the call's [`Confirmer`](crate::call::Confirmer) and
//! records the answer. A confirmed outcome opens the gate for mutating HTTP
//! requests in this call (see [`super::http`]).
//!
//! Time spent waiting for the user does not count against the call's
//! deadline; the wait has its own bound (`elicitation_timeout_secs`).

use std::time::Instant;

use crate::bindings::confirm::{Host, Outcome};
use crate::call::{Asked, CallState, Stop};

impl Host for CallState {
    async fn request(&mut self, message: String) -> wasmtime::Result<Outcome> {
        let limit = self.settings.limits.confirmations_per_call;
        if self.outcomes.len() as u32 >= limit {
            self.stop = Some(Stop::Limit(format!(
                "the tool asked for more than {limit} confirmations in one call (limits.confirmations_per_call)"
            )));
            return Err(wasmtime::format_err!("confirmation limit reached"));
        }
        let started = Instant::now();
        let asked = self.confirmer.ask(&message).await;
        self.deadline += started.elapsed();
        match asked {
            Asked::Answered(outcome) => {
                tracing::info!(
                    plugin = %self.settings.name,
                    tool = %self.tool.name,
                    ?outcome,
                    "confirmation answered"
                );
                self.outcomes.push(outcome);
                if outcome == Outcome::Confirmed {
                    self.confirmed = true;
                }
                Ok(outcome)
            }
            Asked::NeedsInput => {
                self.stop = Some(Stop::NeedsInput(message));
                Err(wasmtime::format_err!("confirmation needs the client"))
            }
        }
    }
}
