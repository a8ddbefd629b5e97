//! Approvals (ADR 0038): a second person's yes to one call, kept where
//! every replica finds it.
//!
//! An `approve` rule (`[[policy.rules]]`) holds a `tools/call` until an
//! approver, someone the rule's `approver` condition admits, says yes on the
//! approval page. The call's request for approval is an [`Approval`]: bound
//! to the caller, the served tool, a hash of the arguments, the component's
//! digest and the policy's version, with an expiry. It moves through
//! [`State`] once each way: `pending` → `approved` → `spent` (the call ran),
//! or → `denied`, `void` (the call it was for changed), `cancelled`; every
//! move is one atomic compare-and-set ([`Approvals::transition`]), so a
//! second click, a replayed form or two replicas at once change nothing.
//!
//! | module | job |
//! |---|---|
//! | this module | [`Approval`], [`State`], the store ([`Approvals`]): in this process, or in the Redis of `state.replay` |
//!
//! The MCP side (what a caller is answered, tasks) is in
//! `crate::server::approval`; the page in `crate::transport::approval_page`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::replay::{RedisReplay, ReplayError};

/// How long a decided, spent or lapsed approval is kept past its expiry,
/// so that a caller who comes back is told what became of it.
const KEPT_AFTER_EXPIRY: Duration = Duration::from_secs(3600);

/// How long an approver stays signed in on the page.
pub const SESSION_LIFETIME: Duration = Duration::from_secs(8 * 3600);

/// Where an approval stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Waiting for an approver.
    Pending,
    /// An approver said yes; the call may run once.
    Approved,
    /// An approver said no.
    Denied,
    /// The call it approved ran (or began to).
    Spent,
    /// The call it was for changed (arguments, component, policy) before
    /// it was used.
    Void,
    /// The caller cancelled the call (a task's `tasks/cancel`).
    Cancelled,
}

impl State {
    /// Its name in the audit trail and on the page.
    pub fn name(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Approved => "approved",
            State::Denied => "denied",
            State::Spent => "spent",
            State::Void => "void",
            State::Cancelled => "cancelled",
        }
    }
}

/// One call's request for approval, and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Approval {
    /// Its id: 128 random bits, hex. In the page's address and the
    /// caller's answer.
    pub id: String,
    /// The `approve` rule that asked for it.
    pub rule: String,
    /// The policy's version when it was asked: a changed policy voids it.
    pub policy_version: String,
    /// Who called ([`crate::auth::Identity::key`], or the transport).
    pub caller: String,
    /// The caller's identity as JSON ([`crate::auth::Identity::to_json`]),
    /// if it had one: what the approver condition reads as `identity`.
    pub caller_identity: Option<String>,
    /// `stdio` or `http`.
    pub transport: String,
    /// The profile the call came through (`/mcp/NAME`), if any: its
    /// served name is found again there when a task's call runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The network address the call was asked from (over HTTP): what the
    /// audit record of a task's call, run after the approval, names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<std::net::IpAddr>,
    /// The served tool name.
    pub tool: String,
    /// The plugin block serving it.
    pub plugin: String,
    /// The component file.
    pub file: String,
    /// SHA-256 of the component, hex: a reloaded component voids it.
    pub digest: String,
    /// The call's arguments, shown to approvers.
    pub arguments: Value,
    /// SHA-256 of the arguments in canonical JSON.
    pub arguments_sha256: String,
    /// When it was asked, in Unix milliseconds.
    pub created_ms: u64,
    /// When it lapses (undecided) or can no longer be used (approved).
    pub expires_ms: u64,
    /// Where it stands.
    pub state: State,
    /// Who decided ([`crate::auth::Identity::key`]).
    pub decided_by: Option<String>,
    /// When, in Unix milliseconds.
    pub decided_ms: Option<u64>,
    /// The approver's note, which the caller sees.
    pub note: Option<String>,
    /// Why it became void.
    pub void_reason: Option<String>,
    /// The MCP task the call became, for a client that declared tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskRecord>,
    /// How many times it moved: what a move compares, so that of two
    /// moves from the same reading one alone happens.
    #[serde(default)]
    pub revision: u64,
    /// A random id of the move that wrote this version (in Redis): a
    /// move resent after its answer was lost finds its own id there, and
    /// knows it moved; two moves that wrote the same change never share
    /// one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub moved_by: String,
}

/// Where a call that became an MCP task (`io.modelcontextprotocol/tasks`)
/// stands, beside its approval: what `tasks/get` reports on any replica.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// Its phase.
    pub phase: TaskPhase,
    /// The question the tool asks now (`input_required`).
    pub question: Option<String>,
    /// The form the tool asks now, its JSON Schema (contract 0.3).
    pub form: Option<String>,
    /// The sealed state of the answers given so far, opened when the
    /// client answers the question (`tasks/update`).
    pub request_state: Option<String>,
    /// The call's result (`completed`), as the client receives it.
    pub result: Option<Value>,
    /// When it last changed, in Unix milliseconds.
    pub updated_ms: u64,
    /// While its call runs: which run holds it, and until when (ADR 0068).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunLease>,
    /// Why it failed (`failed`): its run was lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

/// A replica's hold on a task whose call it runs: renewed while the call
/// runs, so that a hold past its end means the replica stopped mid-run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunLease {
    /// The run's own random id: only the run that took the hold renews
    /// it or ends the task.
    pub id: String,
    /// When the hold ends unless renewed, in Unix milliseconds.
    pub until_ms: u64,
}

impl RunLease {
    /// When a hold of `lease` taken now ends, in Unix milliseconds.
    fn end_of(lease: std::time::Duration) -> u64 {
        now_ms().saturating_add(u64::try_from(lease.as_millis()).unwrap_or(u64::MAX))
    }
}

impl TaskRecord {
    /// A task just begun: working (waiting for an approver).
    pub fn working() -> TaskRecord {
        TaskRecord {
            phase: TaskPhase::Working,
            question: None,
            form: None,
            request_state: None,
            result: None,
            updated_ms: now_ms(),
            run: None,
            failure: None,
        }
    }

    /// Takes the task for the run `id`, held for `lease`: it is working.
    pub fn begin_run(&mut self, id: &str, lease: std::time::Duration) {
        self.phase = TaskPhase::Working;
        self.run = Some(RunLease {
            id: id.to_string(),
            until_ms: RunLease::end_of(lease),
        });
        self.updated_ms = now_ms();
    }

    /// Moves the hold of the run holding the task to `lease` from now.
    pub fn renew_run(&mut self, lease: std::time::Duration) {
        if let Some(run) = &mut self.run {
            run.until_ms = RunLease::end_of(lease);
        }
    }

    /// Whether the run `id` holds the task and its call is running.
    pub fn held_by(&self, id: &str) -> bool {
        self.phase == TaskPhase::Working && self.run.as_ref().is_some_and(|r| r.id == id)
    }

    /// The run holding the task, if its hold ended before `now_ms`
    /// without being renewed: the replica running it stopped.
    pub fn lost_run(&self, now_ms: u64) -> Option<&RunLease> {
        self.run
            .as_ref()
            .filter(|r| self.phase == TaskPhase::Working && now_ms >= r.until_ms)
    }
}

/// A task's phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskPhase {
    /// Waiting for an approver, or running.
    Working,
    /// Waiting for the client's answer to the tool's question.
    InputRequired,
    /// Done: `result` holds the answer.
    Completed,
    /// Its run was lost (the replica running it stopped): `failure` says
    /// so. Whether the call changed anything before is not known here.
    Failed,
    /// Cancelled: nothing more runs.
    Cancelled,
}

impl Approval {
    /// Whether it can no longer be decided or used: past its expiry while
    /// pending or approved.
    pub fn lapsed(&self, now_ms: u64) -> bool {
        matches!(self.state, State::Pending | State::Approved) && now_ms >= self.expires_ms
    }

    /// Whether it was asked for the very call `binding` describes.
    pub fn binds(&self, binding: &Binding) -> bool {
        self.caller == binding.caller
            && self.tool == binding.tool
            && self.arguments_sha256 == binding.arguments_sha256
            && self.digest == binding.digest
            && self.policy_version == binding.policy_version
    }

    /// Why it does not cover the call `binding` describes (the same
    /// caller's call of the same tool), in the caller's words; `None`
    /// when it does.
    pub fn differs_from(&self, binding: &Binding) -> Option<String> {
        if self.arguments_sha256 != binding.arguments_sha256 {
            Some("the arguments changed since it was asked".into())
        } else if self.digest != binding.digest {
            Some(format!(
                "the component serving the tool was replaced since (sha256 {} then, {} now)",
                short(&self.digest),
                short(&binding.digest)
            ))
        } else if self.policy_version != binding.policy_version {
            Some(format!(
                "the operator's policy changed since (version {} then, {} now)",
                self.policy_version, binding.policy_version
            ))
        } else {
            None
        }
    }
}

/// The first 12 hex digits of a digest, as messages show it.
fn short(digest: &str) -> &str {
    &digest[..digest.len().min(12)]
}

/// What an approval is bound to: one caller's call of one tool, with these
/// arguments, served by this component, under this policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// Who calls.
    pub caller: String,
    /// The served tool name.
    pub tool: String,
    /// SHA-256 of the arguments, canonical JSON.
    pub arguments_sha256: String,
    /// SHA-256 of the component.
    pub digest: String,
    /// The policy's version.
    pub policy_version: String,
}

impl Binding {
    /// The key a caller's latest approval for one tool is found by.
    fn latest_key(&self) -> String {
        latest_key(&self.caller, &self.tool)
    }
}

/// The key of `caller`'s latest approval for `tool`: a hash, so that no
/// name an operator or caller chose is part of a Redis key.
fn latest_key(caller: &str, tool: &str) -> String {
    let mut hash = Sha256::new();
    hash.update(caller.as_bytes());
    hash.update([0]);
    hash.update(tool.as_bytes());
    hex::encode(&hash.finalize()[..16])
}

/// An approver signed in on the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// The approver as JSON ([`crate::auth::Identity::to_json`]).
    pub identity: String,
    /// The token every form of this session carries (CSRF).
    pub csrf: String,
    /// When it ends, in Unix milliseconds.
    pub expires_ms: u64,
    /// For a static token's session, the token's SHA-256 (hex): the
    /// session lasts while that very token is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_sha256: Option<String>,
}

/// What [`Approvals::transition`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Transition {
    /// It moved; the approval as it is now.
    Moved(Approval),
    /// It was not in a state it could move from: as it is.
    Refused(Approval),
    /// There is no such approval (never, or long gone).
    Missing,
}

/// Most sign-ins through the provider kept in progress by this process's
/// own store (without `state.replay`); past it, the one begun first gives
/// way. The approval page also limits how many one client address begins.
pub const MAX_SIGN_INS_IN_PROGRESS: usize = 10_000;

/// Why the store could not answer. Nothing changed; the message says
/// what to do and never where the store is (the log does).
#[derive(Debug, thiserror::Error)]
#[error(
    "the store of approvals (the Redis of `state.replay`) cannot be reached right now; nothing \
     changed, so retry shortly"
)]
pub struct Unavailable;

impl From<ReplayError> for Unavailable {
    fn from(error: ReplayError) -> Self {
        tracing::warn!("the approvals store failed: {error}");
        Unavailable
    }
}

/// Where approvals (and the page's sessions) are kept.
#[derive(Clone)]
pub struct Approvals {
    backend: Backend,
}

#[derive(Clone)]
enum Backend {
    /// In this process.
    Local(Arc<Mutex<Local>>),
    /// In the Redis every replica shares.
    Redis(Arc<RedisReplay>),
}

#[derive(Default)]
struct Local {
    approvals: HashMap<String, Approval>,
    latest: HashMap<String, String>,
    sessions: HashMap<String, Session>,
    sign_ins: HashMap<String, SignIn>,
}

/// A sign-in through the identity provider in progress, kept under its
/// `state` until the browser comes back (once).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignIn {
    /// The PKCE code verifier.
    pub verifier: String,
    /// Where the page sends the approver once signed in.
    pub next: String,
    /// When it lapses, in Unix milliseconds.
    pub expires_ms: u64,
}

/// Moves an approval in Redis only if no other move came since it was
/// read: `KEYS[1]` the record, `KEYS[2]` the pending index; `ARGV[1]` the
/// revision read, `ARGV[2]` the record to write, `ARGV[3]` its id,
/// `ARGV[4]` whether it stays pending. Answers `{1, new}` when written,
/// `{0, current}` when another move came first, `{-1, ''}` when the record
/// is gone.
const TRANSITION_SCRIPT: &str = r"
local raw = redis.call('GET', KEYS[1])
if not raw then return {-1, ''} end
if tostring(cjson.decode(raw).revision) ~= ARGV[1] then return {0, raw} end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
if ARGV[4] == '0' then redis.call('ZREM', KEYS[2], ARGV[3]) end
return {1, ARGV[2]}
";

/// The sorted set of pending approvals' ids, scored by expiry.
const PENDING_INDEX: &str = "toolhost:approvals:pending";

fn record_key(id: &str) -> String {
    format!("toolhost:approval:{id}")
}

fn latest_redis_key(key: &str) -> String {
    format!("toolhost:approval-latest:{key}")
}

fn sign_in_key(state: &str) -> String {
    format!("toolhost:approver-sign-in:{state}")
}

fn session_key(id: &str) -> String {
    format!("toolhost:approver-session:{id}")
}

/// Now, in Unix milliseconds.
pub fn now_ms() -> u64 {
    u64::try_from(chrono::Utc::now().timestamp_millis()).unwrap_or_default()
}

/// 128 random bits, hex: an approval's or a session's id, a CSRF token.
pub fn random_id() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

impl Approvals {
    /// A store in this process.
    pub fn local() -> Approvals {
        Approvals {
            backend: Backend::Local(Arc::default()),
        }
    }

    /// A store in `redis`, shared by every replica.
    pub fn shared(redis: Arc<RedisReplay>) -> Approvals {
        Approvals {
            backend: Backend::Redis(redis),
        }
    }

    /// Keeps `approval` (new) as its caller's latest for its tool.
    pub async fn insert(&self, approval: &Approval) -> Result<(), Unavailable> {
        let latest = latest_key(&approval.caller, &approval.tool);
        match &self.backend {
            Backend::Local(local) => {
                let mut local = local.lock().expect("not poisoned");
                local.prune(now_ms());
                local.latest.insert(latest, approval.id.clone());
                local
                    .approvals
                    .insert(approval.id.clone(), approval.clone());
                Ok(())
            }
            Backend::Redis(redis) => {
                let kept = kept_ms(approval.expires_ms);
                let text = serde_json::to_string(approval).expect("an approval serializes");
                let mut pipe = redis::pipe();
                pipe.atomic()
                    .cmd("SET")
                    .arg(record_key(&approval.id))
                    .arg(text)
                    .arg("PX")
                    .arg(kept)
                    .ignore()
                    .cmd("SET")
                    .arg(latest_redis_key(&latest))
                    .arg(&approval.id)
                    .arg("PX")
                    .arg(kept)
                    .ignore()
                    .cmd("ZADD")
                    .arg(PENDING_INDEX)
                    .arg(approval.expires_ms)
                    .arg(&approval.id)
                    .ignore();
                redis.run_pipeline::<()>(&pipe).await?;
                Ok(())
            }
        }
    }

    /// The approval `id`, if it is kept.
    pub async fn get(&self, id: &str) -> Result<Option<Approval>, Unavailable> {
        match &self.backend {
            Backend::Local(local) => {
                let local = local.lock().expect("not poisoned");
                Ok(local.approvals.get(id).cloned())
            }
            Backend::Redis(redis) => {
                let mut command = redis::cmd("GET");
                command.arg(record_key(id));
                let text: Option<String> = redis.run(&command).await?;
                Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
            }
        }
    }

    /// The latest approval asked for `binding`'s caller and tool, if any
    /// is kept (whatever its arguments).
    pub async fn latest(&self, binding: &Binding) -> Result<Option<Approval>, Unavailable> {
        let key = binding.latest_key();
        let id = match &self.backend {
            Backend::Local(local) => {
                let local = local.lock().expect("not poisoned");
                local.latest.get(&key).cloned()
            }
            Backend::Redis(redis) => {
                let mut command = redis::cmd("GET");
                command.arg(latest_redis_key(&key));
                redis.run::<Option<String>>(&command).await?
            }
        };
        match id {
            Some(id) => self.get(&id).await,
            None => Ok(None),
        }
    }

    /// Moves approval `id` from the state `from` to what `change` makes of
    /// it, if it is still in `from` (see [`Approvals::update`]).
    pub async fn transition(
        &self,
        id: &str,
        from: State,
        change: impl FnOnce(&mut Approval),
    ) -> Result<Transition, Unavailable> {
        self.update(id, |a| a.state == from, change).await
    }

    /// Changes approval `id` as `change` says, if `when` holds for it as
    /// it is: one atomic step (a compare-and-set on its revision), so of
    /// two moves from the same reading (two clicks, two replicas) one
    /// alone happens; the other is [`Transition::Refused`] with the
    /// approval as the first left it.
    pub async fn update(
        &self,
        id: &str,
        when: impl FnOnce(&Approval) -> bool,
        change: impl FnOnce(&mut Approval),
    ) -> Result<Transition, Unavailable> {
        match &self.backend {
            Backend::Local(local) => {
                let mut local = local.lock().expect("not poisoned");
                let Some(approval) = local.approvals.get_mut(id) else {
                    return Ok(Transition::Missing);
                };
                if !when(approval) {
                    return Ok(Transition::Refused(approval.clone()));
                }
                change(approval);
                approval.revision += 1;
                Ok(Transition::Moved(approval.clone()))
            }
            Backend::Redis(redis) => {
                let Some(current) = self.get(id).await? else {
                    return Ok(Transition::Missing);
                };
                if !when(&current) {
                    return Ok(Transition::Refused(current));
                }
                let mut next = current.clone();
                change(&mut next);
                next.revision = current.revision + 1;
                next.moved_by = random_id();
                let text = serde_json::to_string(&next).expect("an approval serializes");
                let mut command = redis::cmd("EVAL");
                command
                    .arg(TRANSITION_SCRIPT)
                    .arg(2)
                    .arg(record_key(id))
                    .arg(PENDING_INDEX)
                    .arg(current.revision.to_string())
                    .arg(&text)
                    .arg(id)
                    .arg(if next.state == State::Pending {
                        "1"
                    } else {
                        "0"
                    });
                let (moved, raw): (i64, String) = redis.run(&command).await?;
                Ok(match moved {
                    1 => Transition::Moved(next),
                    // Our own write (its `moved_by` is this move's alone),
                    // found by a resend after a connection lost with its
                    // answer (`RedisReplay::run`): it moved.
                    0 if raw == text => Transition::Moved(next),
                    0 => match serde_json::from_str(&raw) {
                        Ok(now) => Transition::Refused(now),
                        Err(_) => Transition::Missing,
                    },
                    _ => Transition::Missing,
                })
            }
        }
    }

    /// Every approval still pending and not lapsed, oldest first.
    pub async fn pending(&self) -> Result<Vec<Approval>, Unavailable> {
        let now = now_ms();
        let mut found = match &self.backend {
            Backend::Local(local) => {
                let mut local = local.lock().expect("not poisoned");
                local.prune(now);
                local
                    .approvals
                    .values()
                    .filter(|a| a.state == State::Pending && !a.lapsed(now))
                    .cloned()
                    .collect::<Vec<_>>()
            }
            Backend::Redis(redis) => {
                let mut prune = redis::cmd("ZREMRANGEBYSCORE");
                prune.arg(PENDING_INDEX).arg("-inf").arg(now);
                redis.run::<i64>(&prune).await?;
                let mut ids = redis::cmd("ZRANGEBYSCORE");
                ids.arg(PENDING_INDEX).arg(now).arg("+inf");
                let ids: Vec<String> = redis.run(&ids).await?;
                if ids.is_empty() {
                    return Ok(Vec::new());
                }
                let mut get = redis::cmd("MGET");
                for id in &ids {
                    get.arg(record_key(id));
                }
                let texts: Vec<Option<String>> = redis.run(&get).await?;
                texts
                    .into_iter()
                    .flatten()
                    .filter_map(|t| serde_json::from_str::<Approval>(&t).ok())
                    .filter(|a| a.state == State::Pending && !a.lapsed(now))
                    .collect()
            }
        };
        found.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
        Ok(found)
    }

    /// Keeps a signed-in approver's `session`; returns its id (the
    /// cookie's value).
    pub async fn open_session(&self, session: &Session) -> Result<String, Unavailable> {
        let id = random_id();
        match &self.backend {
            Backend::Local(local) => {
                let mut local = local.lock().expect("not poisoned");
                local.prune(now_ms());
                local.sessions.insert(id.clone(), session.clone());
            }
            Backend::Redis(redis) => {
                let mut command = redis::cmd("SET");
                command
                    .arg(session_key(&id))
                    .arg(serde_json::to_string(session).expect("a session serializes"))
                    .arg("PX")
                    .arg(session.expires_ms.saturating_sub(now_ms()).max(1));
                redis.run::<()>(&command).await?;
            }
        }
        Ok(id)
    }

    /// The session `id`, if it is kept and not over.
    pub async fn session(&self, id: &str) -> Result<Option<Session>, Unavailable> {
        let session = match &self.backend {
            Backend::Local(local) => {
                let local = local.lock().expect("not poisoned");
                local.sessions.get(id).cloned()
            }
            Backend::Redis(redis) => {
                let mut command = redis::cmd("GET");
                command.arg(session_key(id));
                let text: Option<String> = redis.run(&command).await?;
                text.and_then(|t| serde_json::from_str(&t).ok())
            }
        };
        Ok(session.filter(|s| s.expires_ms > now_ms()))
    }

    /// Keeps a sign-in in progress under its OAuth `state`.
    pub async fn begin_sign_in(&self, state: &str, sign_in: &SignIn) -> Result<(), Unavailable> {
        match &self.backend {
            Backend::Local(local) => {
                let mut local = local.lock().expect("not poisoned");
                local.prune(now_ms());
                if local.sign_ins.len() >= MAX_SIGN_INS_IN_PROGRESS {
                    // Full (a flood from many addresses, each within the
                    // page's limit): the sign-in begun first gives way.
                    let oldest = local
                        .sign_ins
                        .iter()
                        .min_by_key(|(_, s)| s.expires_ms)
                        .map(|(state, _)| state.clone());
                    if let Some(oldest) = oldest {
                        local.sign_ins.remove(&oldest);
                    }
                }
                local.sign_ins.insert(state.to_string(), sign_in.clone());
            }
            Backend::Redis(redis) => {
                let mut command = redis::cmd("SET");
                command
                    .arg(sign_in_key(state))
                    .arg(serde_json::to_string(sign_in).expect("a sign-in serializes"))
                    .arg("PX")
                    .arg(sign_in.expires_ms.saturating_sub(now_ms()).max(1));
                redis.run::<()>(&command).await?;
            }
        }
        Ok(())
    }

    /// The sign-in in progress under `state`, taken (a second callback
    /// with the same state finds nothing), if it has not lapsed.
    pub async fn finish_sign_in(&self, state: &str) -> Result<Option<SignIn>, Unavailable> {
        let found = match &self.backend {
            Backend::Local(local) => local.lock().expect("not poisoned").sign_ins.remove(state),
            Backend::Redis(redis) => {
                let mut command = redis::cmd("GETDEL");
                command.arg(sign_in_key(state));
                let text: Option<String> = redis.run(&command).await?;
                text.and_then(|t| serde_json::from_str(&t).ok())
            }
        };
        Ok(found.filter(|s| s.expires_ms > now_ms()))
    }

    /// Ends the session `id` (signing out).
    pub async fn close_session(&self, id: &str) -> Result<(), Unavailable> {
        match &self.backend {
            Backend::Local(local) => {
                local.lock().expect("not poisoned").sessions.remove(id);
            }
            Backend::Redis(redis) => {
                let mut command = redis::cmd("DEL");
                command.arg(session_key(id));
                redis.run::<i64>(&command).await?;
            }
        }
        Ok(())
    }
}

/// How long a record is kept in Redis from now: until its expiry, and
/// [`KEPT_AFTER_EXPIRY`] past it.
fn kept_ms(expires_ms: u64) -> u64 {
    let kept = u64::try_from(KEPT_AFTER_EXPIRY.as_millis()).unwrap_or(u64::MAX);
    expires_ms
        .saturating_add(kept)
        .saturating_sub(now_ms())
        .max(1)
}

impl Local {
    /// Forgets what Redis would have let expire.
    fn prune(&mut self, now: u64) {
        let kept = u64::try_from(KEPT_AFTER_EXPIRY.as_millis()).unwrap_or(u64::MAX);
        self.approvals
            .retain(|_, a| a.expires_ms.saturating_add(kept) > now);
        let approvals = &self.approvals;
        self.latest.retain(|_, id| approvals.contains_key(id));
        self.sessions.retain(|_, s| s.expires_ms > now);
        self.sign_ins.retain(|_, s| s.expires_ms > now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approval(id: &str) -> Approval {
        Approval {
            id: id.into(),
            rule: "invoices".into(),
            policy_version: "v1".into(),
            caller: "jwt:alice".into(),
            caller_identity: None,
            transport: "http".into(),
            profile: None,
            client: None,
            tool: "update_status".into(),
            plugin: "statuspro".into(),
            file: "statuspro.wasm".into(),
            digest: "ab".repeat(32),
            arguments: serde_json::json!({"order": 7}),
            arguments_sha256: "cd".repeat(32),
            created_ms: now_ms(),
            expires_ms: now_ms() + 60_000,
            state: State::Pending,
            decided_by: None,
            decided_ms: None,
            note: None,
            void_reason: None,
            task: None,
            revision: 0,
            moved_by: String::new(),
        }
    }

    #[test]
    fn a_run_holds_its_task_until_its_lease_lapses_and_a_record_without_a_run_is_never_lost() {
        let lease = std::time::Duration::from_secs(3);
        let mut task = TaskRecord::working();
        assert!(
            task.lost_run(u64::MAX).is_none(),
            "waiting for an approver: no run"
        );
        task.begin_run("r1", lease);
        let until = task.run.as_ref().unwrap().until_ms;
        assert!(task.held_by("r1") && !task.held_by("r2"));
        assert!(task.lost_run(until - 1).is_none(), "held until its end");
        assert_eq!(task.lost_run(until).map(|r| r.id.as_str()), Some("r1"));
        task.renew_run(std::time::Duration::from_secs(60));
        assert!(
            task.run.as_ref().unwrap().until_ms >= until,
            "renewed forward"
        );
        task.phase = TaskPhase::InputRequired;
        assert!(
            task.lost_run(u64::MAX).is_none() && !task.held_by("r1"),
            "a task asking its client runs nowhere"
        );
        // A record kept before runs held their tasks reads as before.
        let old: TaskRecord = serde_json::from_value(serde_json::json!({
            "phase": "working", "question": null, "form": null,
            "request_state": null, "result": null, "updated_ms": 1
        }))
        .unwrap();
        assert!(old.run.is_none() && old.lost_run(u64::MAX).is_none());
    }

    #[tokio::test]
    async fn a_second_move_from_the_same_state_changes_nothing() {
        let store = Approvals::local();
        store.insert(&approval("a1")).await.unwrap();
        let first = store
            .transition("a1", State::Pending, |a| {
                a.state = State::Approved;
                a.decided_by = Some("jwt:carol".into());
            })
            .await
            .unwrap();
        assert!(matches!(first, Transition::Moved(ref a) if a.state == State::Approved));
        let second = store
            .transition("a1", State::Pending, |a| {
                a.state = State::Denied;
                a.decided_by = Some("jwt:dave".into());
            })
            .await
            .unwrap();
        let Transition::Refused(now) = second else {
            panic!("the second move happened: {second:?}");
        };
        assert_eq!(now.state, State::Approved);
        assert_eq!(now.decided_by.as_deref(), Some("jwt:carol"));
        assert!(store.pending().await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn sign_ins_in_progress_are_bounded_and_the_one_begun_first_gives_way() {
        let store = Approvals::local();
        let sign_in = |n: u64| SignIn {
            verifier: format!("verifier-{n}"),
            next: "/approvals".into(),
            expires_ms: now_ms() + 600_000 + n,
        };
        for n in 0..MAX_SIGN_INS_IN_PROGRESS as u64 {
            store
                .begin_sign_in(&format!("state-{n}"), &sign_in(n))
                .await
                .unwrap();
        }
        store
            .begin_sign_in("one-more", &sign_in(u64::MAX / 2))
            .await
            .unwrap();
        assert!(
            store.finish_sign_in("state-0").await.unwrap().is_none(),
            "the first begun gave way"
        );
        assert!(store.finish_sign_in("state-1").await.unwrap().is_some());
        assert!(store.finish_sign_in("one-more").await.unwrap().is_some());
    }

    #[test]
    fn an_approval_says_which_part_of_the_call_changed() {
        let a = approval("a1");
        let mut binding = Binding {
            caller: a.caller.clone(),
            tool: a.tool.clone(),
            arguments_sha256: a.arguments_sha256.clone(),
            digest: a.digest.clone(),
            policy_version: a.policy_version.clone(),
        };
        assert!(a.binds(&binding));
        assert_eq!(a.differs_from(&binding), None);
        binding.digest = "ef".repeat(32);
        assert!(!a.binds(&binding));
        assert!(a.differs_from(&binding).unwrap().contains("replaced"));
        binding.arguments_sha256 = "00".repeat(32);
        assert!(a.differs_from(&binding).unwrap().contains("arguments"));
    }
}
