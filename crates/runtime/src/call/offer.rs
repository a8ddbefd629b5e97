//! Running one `read`, `get` or `complete` of a `toolhost:plugin@0.2.0`
//! component (ADR 0017) in a fresh instance.
//!
//! A read, get or completion is a call like a tool call: the plugin's
//! concurrency turn and a pool slot, a fresh [`Store`] and instance with
//! the same [`CallState`] (limits, deadline, policy, imports), as a
//! read-only stand-in tool, so the `http` import lets it send `GET` and
//! `HEAD` only; what it does is reported to the call's [`CallHooks`].
//! Nothing survives it. A guest's `not-found` error becomes
//! [`OfferError::NotFound`]; every other failure (a tool error, a trap, a
//! limit) becomes [`OfferError::Failed`], naming the cause and an error
//! code for the metrics and the audit trail.
//!
//! What a component offers, and the checks at load, are
//! [`crate::offers`]'s.

use std::sync::{Arc, LazyLock};

use thiserror::Error;
use tokio::sync::OwnedSemaphorePermit;
use wasmtime::Store;

use super::{CallEnv, code_name, trap_summary};
use crate::bindings::confirm::Outcome;
use crate::bindings::types::{Annotations, ErrorCode, ToolDefinition, ToolError};
use crate::bindings::v0_2::content::{
    Body, CompletionTarget, Completions, MessageContent, ResourceContents,
};
use crate::bindings::v0_3::content::{Block, PromptMessage, PromptResult};
use crate::engine::Turn;
use crate::hooks::CallHooks;
use crate::imports::confirm::FixedAnswer;
use crate::imports::{CallState, Stop, new_store};
use crate::offers::Offers;
use crate::offers::PromptsExport;
use crate::plugin::Plugin;
use crate::settings::Limits;
use crate::spec::ToolSpec;

/// Why a read, get or completion failed.
#[derive(Debug, Error)]
pub enum OfferError {
    /// The guest says the thing does not exist.
    #[error("{0}")]
    NotFound(String),
    /// Anything else: the guest's error, a trap, a limit, a policy refusal.
    #[error("{message}")]
    Failed {
        /// The error code, as a tool's issue would carry it
        /// (`PERMISSION_DENIED`, `TRANSIENT`, `INTERNAL`, or the guest's).
        code: &'static str,
        /// What happened, naming the limit or rule.
        message: String,
    },
}

impl OfferError {
    /// The error code: `NOT_FOUND`, or the failure's.
    pub fn code(&self) -> &'static str {
        match self {
            OfferError::NotFound(_) => "NOT_FOUND",
            OfferError::Failed { code, .. } => code,
        }
    }

    fn internal(message: String) -> OfferError {
        OfferError::Failed {
            code: "INTERNAL",
            message,
        }
    }
}

/// Which of the operations beside tools ran: the `kind` label of the offer
/// metrics and the `kind` of an audit record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OfferKind {
    /// `resources/read`.
    ResourceRead,
    /// `prompts/get`.
    PromptGet,
    /// `completion/complete`.
    Completion,
}

impl OfferKind {
    /// `resource_read`, `prompt_get` or `completion`.
    pub fn label(self) -> &'static str {
        match self {
            OfferKind::ResourceRead => "resource_read",
            OfferKind::PromptGet => "prompt_get",
            OfferKind::Completion => "completion",
        }
    }
}

/// The read-only stand-in tools reads, gets and completions run as.
fn stand_in(name: &str, title: &str) -> Arc<ToolSpec> {
    Arc::new(
        ToolSpec::from_definition(ToolDefinition {
            name: name.into(),
            title: title.into(),
            description: format!("{title}: a read-only call of a 0.2 component."),
            input_schema: r#"{"type":"object"}"#.into(),
            output_schema: None,
            annotations: Annotations {
                read_only: true,
                destructive: false,
                idempotent: true,
                open_world: true,
            },
        })
        .expect("the stand-in is a valid tool"),
    )
}

static READ: LazyLock<Arc<ToolSpec>> =
    LazyLock::new(|| stand_in("resources.read", "Read Resource"));
static GET: LazyLock<Arc<ToolSpec>> = LazyLock::new(|| stand_in("prompts.get", "Get Prompt"));
static COMPLETE: LazyLock<Arc<ToolSpec>> =
    LazyLock::new(|| stand_in("completion.complete", "Complete Argument"));

/// One running read, get or completion: its store, holding the plugin's
/// turn, and its pool slot.
struct Running {
    store: Store<CallState>,
    _slot: OwnedSemaphorePermit,
}

impl Running {
    /// Waits for a turn and a slot, and builds the store.
    async fn start(
        env: &CallEnv,
        plugin: &Plugin,
        as_tool: &Arc<ToolSpec>,
        hooks: Arc<dyn CallHooks>,
    ) -> Running {
        let turn = Turn::take(&plugin.concurrency).await;
        let slot = env
            .runtime
            .slots
            .clone()
            .acquire_owned()
            .await
            .expect("the pool semaphore is never closed");
        // A read cannot ask the user anything: it cannot change anything.
        let mut state = CallState::new(
            plugin.settings.clone(),
            as_tool.clone(),
            env.http.clone(),
            Box::new(FixedAnswer(Outcome::Unsupported)),
            None,
        );
        state.file = plugin.file.clone();
        state.turn = Some(turn);
        state.waits = env.runtime.waiting.clone();
        state.hooks = hooks;
        Running {
            store: new_store(&env.runtime, state),
            _slot: slot,
        }
    }

    /// Turns what the guest returned into the answer, or the error naming
    /// what ended it.
    fn finish<T>(
        &mut self,
        plugin: &Plugin,
        what: &str,
        result: wasmtime::Result<Result<T, ToolError>>,
    ) -> Result<T, OfferError> {
        let state = self.store.data_mut();
        if let Some(violation) = state.take_violation() {
            return Err(OfferError::Failed {
                code: "PERMISSION_DENIED",
                message: format!("{what} was refused: {violation} ({what}s are read-only calls)"),
            });
        }
        let stopped = state.take_stop();
        let limits = &state.settings.limits;
        match result {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) if e.code == ErrorCode::NotFound => Err(OfferError::NotFound(e.message)),
            Ok(Err(e)) => Err(OfferError::Failed {
                code: code_name(e.code),
                message: format!(
                    "{what} failed ({}): {}{}",
                    code_name(e.code),
                    e.message,
                    e.hint.map(|h| format!(" ({h})")).unwrap_or_default()
                ),
            }),
            Err(trap) => {
                let mut code = "INTERNAL";
                let why = match stopped {
                    Some(Stop::Limit(why)) => why,
                    Some(Stop::Busy(why) | Stop::Unaudited(why)) => {
                        code = "TRANSIENT";
                        why
                    }
                    Some(Stop::NeedsInput(_)) => {
                        code = "PERMISSION_DENIED";
                        "it asked for a confirmation, which only tools may".into()
                    }
                    None if state.limiter_hit() => format!(
                        "it ran out of memory (limits.memory_mib = {})",
                        limits.memory_bytes >> 20
                    ),
                    None => format!("the component crashed: {}", trap_summary(&trap)),
                };
                tracing::warn!(plugin = %plugin.file, "{what}: {why}");
                Err(OfferError::Failed {
                    code,
                    message: format!("{what} failed: {why}"),
                })
            }
        }
    }
}

/// The bytes of `contents`, checked against `limits.output_bytes`.
fn within_output_limit(bytes: usize, limits: &Limits, what: &str) -> Result<(), OfferError> {
    if bytes as u64 > limits.output_bytes {
        return Err(OfferError::internal(format!(
            "{what} returned {bytes} bytes, more than limits.output_bytes ({}) allows",
            limits.output_bytes
        )));
    }
    Ok(())
}

fn offers_of(plugin: &Plugin) -> Result<&Offers, OfferError> {
    plugin.offers.as_deref().ok_or_else(|| {
        OfferError::internal(format!("{} targets toolhost:plugin@0.1.0", plugin.file))
    })
}

/// Reads `uri` from `plugin`; `variables` are the template's values
/// ([`decode_variables`](crate::offers::decode_variables)) when `uri` matched one of its templates. What it
/// does is reported to `hooks`.
pub async fn read_resource(
    env: &CallEnv,
    plugin: &Arc<Plugin>,
    uri: &str,
    variables: &[(String, String)],
    hooks: Arc<dyn CallHooks>,
) -> Result<Vec<ResourceContents>, OfferError> {
    let offers = offers_of(plugin)?;
    let mut run = Running::start(env, plugin, &READ, hooks).await;
    let result = async {
        let instance = plugin.pre.instantiate_async(&mut run.store).await?;
        let guest = offers.exports().resources.load(&mut run.store, &instance)?;
        guest.call_read(&mut run.store, uri, variables).await
    }
    .await;
    let contents = run.finish(plugin, "reading the resource", result)?;
    let bytes = contents
        .iter()
        .map(|c| {
            c.uri.len()
                + match &c.body {
                    Body::Text(t) => t.len(),
                    Body::Blob(b) => b.len(),
                }
        })
        .sum();
    within_output_limit(bytes, &plugin.settings.limits, "reading the resource")?;
    Ok(contents)
}

/// Builds the prompt `name` of `plugin` from `arguments`. What it does is
/// reported to `hooks`.
pub async fn get_prompt(
    env: &CallEnv,
    plugin: &Arc<Plugin>,
    name: &str,
    arguments: &[(String, String)],
    hooks: Arc<dyn CallHooks>,
) -> Result<PromptResult, OfferError> {
    let offers = offers_of(plugin)?;
    let mut run = Running::start(env, plugin, &GET, hooks).await;
    let result = async {
        let instance = plugin.pre.instantiate_async(&mut run.store).await?;
        match &offers.exports().prompts {
            PromptsExport::V0_2(indices) => {
                let guest = indices.load(&mut run.store, &instance)?;
                let result = guest.call_get(&mut run.store, name, arguments).await?;
                Ok(result.map(|p| PromptResult {
                    description: p.description,
                    messages: p
                        .messages
                        .into_iter()
                        .map(|m| PromptMessage {
                            role: m.role,
                            content: match m.content {
                                MessageContent::Text(t) => Block::Text(t),
                                MessageContent::Resource(r) => Block::Resource(r),
                            },
                        })
                        .collect(),
                }))
            }
            PromptsExport::V0_3(indices) => {
                let guest = indices.load(&mut run.store, &instance)?;
                guest.call_get(&mut run.store, name, arguments).await
            }
        }
    }
    .await;
    let prompt = run.finish(plugin, "getting the prompt", result)?;
    let bytes = super::check_blocks(prompt.messages.iter().map(|m| &m.content))
        .map_err(|why| OfferError::internal(format!("getting the prompt was refused: {why}")))?;
    within_output_limit(bytes, &plugin.settings.limits, "getting the prompt")?;
    Ok(prompt)
}

/// Asks `plugin` for values of `argument` of `target` that complete
/// `value`. What it does is reported to `hooks`.
pub async fn complete(
    env: &CallEnv,
    plugin: &Arc<Plugin>,
    target: &CompletionTarget,
    argument: &str,
    value: &str,
    context: &[(String, String)],
    hooks: Arc<dyn CallHooks>,
) -> Result<Completions, OfferError> {
    let offers = offers_of(plugin)?;
    let mut run = Running::start(env, plugin, &COMPLETE, hooks).await;
    let result = async {
        let instance = plugin.pre.instantiate_async(&mut run.store).await?;
        let guest = offers
            .exports()
            .completion
            .load(&mut run.store, &instance)?;
        guest
            .call_complete(&mut run.store, target, argument, value, context)
            .await
    }
    .await;
    let completions = run.finish(plugin, "completing the argument", result)?;
    let bytes = completions.values.iter().map(String::len).sum();
    within_output_limit(bytes, &plugin.settings.limits, "completing the argument")?;
    Ok(completions)
}
