//! The audit trail (`[host] audit = "PATH"`): one JSON line per tool call,
//! and per resource read, prompt get and completion that runs a
//! component's code, appended before the result goes back to the client,
//! so nothing that changed the world goes unrecorded (ADR 0019).
//!
//! # The record
//!
//! Each line is one [`AuditRecord`]; every `tools/call` leaves one, a call
//! refused before it ran included (an unknown tool, a tool the caller may
//! not see, a refused `requestState` or `inputResponses`: `result`
//! `refused`, below):
//!
//! | field | what it holds |
//! |---|---|
//! | `time` | when the call began, RFC 3339 in UTC with milliseconds |
//! | `record` | `call` (the call's one final record) or `intent` (written, and synced to disk, before the call's first request that is not `GET`/`HEAD` leaves the host) |
//! | `id` | the call's random id: an `intent` and its `call` record share it |
//! | `caller` | `stdio`, the HTTP caller's identity subject (`[auth]`), `http` (HTTP without `[auth]`), or `cli` (`toolhost call`) |
//! | `protocol`, `session` | the client's protocol version and its `Mcp-Session-Id`, when there is one |
//! | `tool` | the tool's served name (left out of a read's, get's or completion's record) |
//! | `plugin`, `file`, `digest` | the operator's plugin block, the component file, and `sha256:` of the file's bytes |
//! | `read_only` | the tool's `readOnlyHint` |
//! | `arguments_sha256` | SHA-256 of the arguments in canonical JSON (compact, object keys sorted at every level) |
//! | `arguments` | the arguments themselves, only with `host.audit_arguments = true` |
//! | `confirmation` | `null` when the tool asked nothing; else how it was asked (`elicitation`, `input_required`, `policy`: the operator's `host.confirmation` answered for a client that cannot elicit, `terminal`), every answer in order (answers a 2026-07-28 client gave in earlier rounds included), and the `outcome`: the latest answer (`confirmed`, `declined`, `cancelled`, `unsupported`), `input_required` (the client was asked; its answer comes in a new request), `pending` (asked, and the call ended before the answer: cancelled) or `busy` (not asked: too many calls wait for a user) |
//! | `upstream` | every request the host sent for the call, each redirect hop one: `method`, `host`, `port`, `path` (never the query), `status` and response body `bytes`, or an `error` (`timeout`, `connection_failed`, `denied`, `body_too_large`); and every request the host refused to send, marked `refused` with why (`read_only`, `unconfirmed`, `host_not_allowed`, `port`, `method`, `path`, `scheme`, `ambiguous_path`, `private_address`, `credential_cleartext`, `method_override`, `requests_per_call` (past `limits.http_requests_per_call`), `audit_unwritable`): it never left the host |
//! | `result` | `ok`, `error` (then `issues` holds the codes; arguments that do not match the schema are `VALIDATION_ERROR`), `input_required`, `cancelled` (by the client), `refused` (the tool did not run; `issues` says why: `UNKNOWN_TOOL`, `PERMISSION_DENIED` (a tool `[[access]]` hides from this caller), `INVALID_REQUEST_STATE` (a `requestState` altered, forged, expired or sealed elsewhere), `REPLAYED_REQUEST_STATE` (one already used), `STALE_REQUEST_STATE` (sealed for a component since replaced), `INVALID_INPUT_RESPONSES` (`inputResponses` missing, malformed, or without its `requestState`), `MALFORMED_REQUEST` (`params` rmcp cannot decode, answered by the transport, over HTTP or stdio), `TRANSIENT` (a replay store that did not answer)), or `pending` in an `intent` |
//! | `issues` | the error codes, e.g. `["NOT_FOUND"]` |
//! | `duration_ms` | from finding the tool to the answer |
//! | `kind` | absent for a tool call; `resource_read`, `prompt_get` or `completion` for the operations below |
//! | `target` | only with `kind`: what was read, got or completed (below) |
//! | `prev` | SHA-256 (hex) of the line before this one in the trail; `null` on the trail's first line (below) |
//!
//! A refused call's record has the `tool` name the client sent (cut to 128
//! characters) and, for an unknown tool, empty `plugin`, `file` and
//! `digest`.
//!
//! # Reads, gets and completions
//!
//! A `resources/read`, `prompts/get` or `completion/complete` that runs a
//! 0.2 component's code (ADR 0017) runs it under the plugin's network
//! policy, so it leaves a `call` record too, with `kind` set and no `tool`:
//! the same `caller`, `protocol`, `session`, `plugin`, `file`, `digest`,
//! `upstream`, `duration_ms`; `read_only` is `true` (they may only `GET`
//! and `HEAD`) and `confirmation` `null` (no user is asked: a component
//! that asks anyway is answered `unsupported`, recorded with `via`
//! `none`). `result` is `ok`, `error` (with
//! the code: `NOT_FOUND` when the guest says so) or `cancelled`. A request
//! refused before guest code runs (an unknown URI or prompt, bad
//! arguments) leaves none: it can change nothing and sends nothing.
//!
//! `target` is what the component offers, never what the client chose: a
//! listed resource's URI, the URI template a read matched
//! (`katana://items/{sku}`), the served prompt name, or for a completion
//! the prompt's name or the template. What the client chose is the
//! operation's arguments and is treated like a tool's (a URI may hold a
//! customer's name or e-mail address): `arguments_sha256` hashes it, and
//! only `host.audit_arguments = true` records it: `{"uri": …}` for a read,
//! the prompt's arguments for a get, and `{"argument": …, "value": …,
//! "context": {…}}` for a completion.
//!
//! The record holds nothing else: no header the guest or the host set
//! (credentials are injected per request and never reach it), no query
//! string, no body, no result, and no argument unless the operator opts in.
//!
//! # Writing, rotation and failure
//!
//! The file (mode 0600) stays open between records; every record is one
//! `write` to it, under one lock, so lines never interleave. Before each
//! record the path is `stat`ed: when it no longer names the open file
//! (another program, such as logrotate, renamed or deleted it), the file
//! at the path is opened, or created, and the renamed one is not written
//! again. A record that precedes or follows a mutation (an `intent`, and
//! the `call` record of a call that wrote one) is also synced to disk
//! (`fdatasync`, the one step done on the blocking pool): it survives a
//! power loss. Other records survive a crash of the process, not
//! necessarily of the machine.
//!
//! When a record would grow the file past `host.audit_max_bytes`, the file
//! is renamed `PATH.1` (`PATH.1` to `PATH.2`, and so on; the oldest beyond
//! `host.audit_keep` is deleted) and a new one begun.
//!
//! A failed write is counted (`toolhost_audit_write_failures_total`) and
//! logged once per failure episode (again when writing works again); the
//! file is let go, and the next record opens the path afresh. A call never
//! mutates unrecorded: its `intent` must be on disk before the first
//! mutating request leaves, and while writing fails, that request is
//! refused and the call ends with `TRANSIENT` ("nothing was changed").
//! Read-only calls, and previews that change nothing, go on.
//!
//! # The hash chain
//!
//! Each line's `prev` is the SHA-256 of the line before it (its bytes,
//! without the newline), so a line changed, removed, inserted or moved
//! breaks the chain at the next line. The chain runs across rotation (a
//! new file's first line names the last line of `PATH.1`) and restarts (a
//! process reads the last line of the file, only its tail, before its
//! first record; of `PATH.1` when the file is new). When the file ends in
//! a torn line (the process stopped while writing it), the writer ends
//! that line and writes a `chain` record (`record`, `time`, `prev`: the
//! line before the torn one, `torn_bytes`, `reason`); the chain goes on
//! from it. A file renamed away by another program leaves the chain: the
//! new file's first line names its last line, so the two can be checked
//! together by hand, and [`verify`] accepts any `prev` on the first line
//! it walks. The last line is protected only once the next one is written;
//! `toolhost audit --verify` prints its hash, to be kept elsewhere.
//!
//! [`verify`] walks the trail (rotated files first) and reports the first
//! break, naming file and line.
//!
//! `toolhost audit` reads the trail back as a table ([`print_table`]).

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use chrono::{DateTime, SecondsFormat, Utc};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::bindings::confirm::Outcome;
use crate::call::CallOutcome;
use crate::call::offer::OfferKind;
use crate::confirmation::outcome_name;
use crate::hooks::{BoxFuture, CallHooks, MutationRefused, Upstream};
use crate::plugin::Plugin;
use crate::spec::ToolSpec;

pub use crate::config::AuditSettings;

/// Why a record was not written.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot write the audit trail {path} ({source}); free disk space or make the file writable (host.audit)"
)]
pub struct AuditError {
    /// The file.
    pub path: PathBuf,
    /// What the system said.
    #[source]
    pub source: std::io::Error,
}

/// How a call's confirmation went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Confirmation {
    /// How the user was asked: `elicitation`, `input_required`, `policy`,
    /// `terminal`.
    pub via: String,
    /// Every answer, in order.
    pub answers: Vec<String>,
    /// The latest answer, `input_required`, `pending` or `busy`.
    pub outcome: String,
}

/// One line of the trail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// When the call began (RFC 3339, UTC).
    pub time: String,
    /// `call` or `intent`.
    pub record: String,
    /// The call's id.
    pub id: String,
    /// Who called.
    pub caller: String,
    /// The client's protocol version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// The HTTP session, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The tool's served name (absent in a record with a `kind`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tool: String,
    /// The plugin block.
    pub plugin: String,
    /// The component file.
    pub file: String,
    /// `sha256:` of the component file.
    pub digest: String,
    /// The tool's `readOnlyHint`.
    pub read_only: bool,
    /// SHA-256 of the canonical arguments, hex.
    pub arguments_sha256: String,
    /// The arguments, with `host.audit_arguments`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// The confirmation, if one was asked.
    pub confirmation: Option<Confirmation>,
    /// Requests sent.
    pub upstream: Vec<Upstream>,
    /// `ok`, `error`, `input_required`, `cancelled`, `refused`, `pending`.
    pub result: String,
    /// Error codes.
    #[serde(default)]
    pub issues: Vec<String>,
    /// Milliseconds from start to answer (so far, in an `intent`).
    pub duration_ms: u64,
    /// `None` for a tool call; `resource_read`, `prompt_get` or
    /// `completion` ([`OfferKind`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// With `kind`: the resource's URI, the matched URI template, or the
    /// prompt's served name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// SHA-256 (hex) of the trail's line before this one (`null` for the
    /// first line of a trail): the hash chain [`verify`] walks. Set by the
    /// writer.
    #[serde(default)]
    pub prev: Option<String>,
}

/// The trail's file, shared by every call of the process.
#[derive(Debug, Clone)]
pub struct AuditLog {
    inner: Arc<LogInner>,
}

#[derive(Debug)]
struct LogInner {
    settings: AuditSettings,
    /// The open file and the chain's head; held while a record is written
    /// (and the file rotated), so lines never interleave.
    writer: Mutex<Writer>,
    /// Whether the last write failed: one log line per failure episode.
    failing: AtomicBool,
}

impl AuditLog {
    /// A trail written to `settings.path`. Nothing is opened until the
    /// first record.
    pub fn new(settings: AuditSettings) -> AuditLog {
        AuditLog {
            inner: Arc::new(LogInner {
                settings,
                writer: Mutex::new(Writer::default()),
                failing: AtomicBool::new(false),
            }),
        }
    }

    /// The settings it writes with.
    pub fn settings(&self) -> &AuditSettings {
        &self.inner.settings
    }

    /// Whether the latest write failed.
    pub fn is_failing(&self) -> bool {
        self.inner.failing.load(Ordering::SeqCst)
    }

    /// Appends `record` (its `prev` set to the chain's head); with
    /// `durable`, syncs it to disk too.
    ///
    /// The line is written on the calling thread: the file stays open
    /// between records, so a record costs one `stat` of the path and one
    /// `write`. Only the sync of a `durable` record, which waits for the
    /// disk, goes to the blocking pool.
    pub async fn append(&self, record: &AuditRecord, durable: bool) -> Result<(), AuditError> {
        let written = {
            let mut writer = self.inner.writer.lock().expect("not poisoned");
            writer.append(&self.inner.settings, record)
        };
        let written = match written {
            Ok(file) if durable => tokio::task::spawn_blocking(move || file.sync_data())
                .await
                .unwrap_or_else(|e| Err(std::io::Error::other(e))),
            Ok(_) => Ok(()),
            Err(e) => Err(e),
        };
        match written {
            Ok(()) => {
                if self.inner.failing.swap(false, Ordering::SeqCst) {
                    tracing::info!(
                        path = %self.inner.settings.path.display(),
                        "the audit trail is writable again; mutating calls run again"
                    );
                }
                Ok(())
            }
            Err(source) => {
                crate::metrics::audit_write_failure();
                let error = AuditError {
                    path: self.inner.settings.path.clone(),
                    source,
                };
                if !self.inner.failing.swap(true, Ordering::SeqCst) {
                    tracing::error!(
                        "{error}; until it can be written, calls that would change data are refused and read-only calls go on unrecorded"
                    );
                }
                Err(error)
            }
        }
    }

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
    /// characters), `plugin` the block serving it when the caller may not
    /// see it (`[[access]]`). Finish it with [`Ending::Refused`].
    pub fn start_refused(
        &self,
        context: CallContext,
        plugin: Option<&Plugin>,
        requested: &str,
        arguments: &Value,
    ) -> Arc<CallAudit> {
        let name: String = requested.chars().take(128).collect();
        self.start(context, plugin, name, false, arguments, None)
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
    /// get or completion as (kind, target).
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
        let record = AuditRecord {
            time: rfc3339(Utc::now()),
            record: "call".into(),
            id: hex::encode(id),
            caller: context.caller,
            protocol: context.protocol,
            session: context.session,
            tool,
            plugin: plugin.map(|p| p.settings.name.clone()).unwrap_or_default(),
            file: plugin.map(|p| p.file.clone()).unwrap_or_default(),
            digest: plugin
                .map(|p| format!("sha256:{}", p.digest))
                .unwrap_or_default(),
            read_only,
            arguments_sha256: arguments_sha256(arguments),
            arguments: self.inner.settings.arguments.then(|| arguments.clone()),
            confirmation: None,
            upstream: Vec::new(),
            result: "pending".into(),
            issues: Vec::new(),
            duration_ms: 0,
            kind,
            target,
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

/// Who calls, and how their confirmations are asked.
#[derive(Debug, Clone)]
pub struct CallContext {
    /// `stdio`, `http`, an identity's subject, `cli`.
    pub caller: String,
    /// The client's protocol version.
    pub protocol: Option<String>,
    /// The HTTP session id.
    pub session: Option<String>,
    /// How confirmations are asked: `elicitation`, `input_required`,
    /// `policy`, `terminal`; `none` for a read, get or completion (no user
    /// is asked).
    pub via: &'static str,
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
    /// ran has its `intent` on disk already).
    pub async fn finish(&self, ending: Ending<'_>) -> Result<(), AuditError> {
        let (result, issues) = match ending {
            Ending::Outcome(CallOutcome::Success(_)) => ("ok", Vec::new()),
            Ending::Outcome(CallOutcome::Failed(issues)) => {
                ("error", issues.iter().map(|i| i.code.to_string()).collect())
            }
            Ending::Outcome(CallOutcome::InputRequired { .. }) => {
                self.needs_input();
                ("input_required", Vec::new())
            }
            Ending::Cancelled => ("cancelled", Vec::new()),
            Ending::Refused(code) => ("refused", vec![code.to_string()]),
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

    fn needs_input(&self) {
        CallAudit::needs_input(self)
    }

    fn busy(&self) {
        CallAudit::busy(self)
    }
}

/// SHA-256 (hex) of `arguments` in canonical JSON: compact, object keys
/// sorted at every level (serde_json's map is ordered by key; a test pins
/// that), so the same arguments always hash alike.
pub fn arguments_sha256(arguments: &Value) -> String {
    let canonical = serde_json::to_vec(arguments).expect("a JSON value serializes");
    hex::encode(Sha256::digest(&canonical))
}

fn rfc3339(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The trail's open file and the head of its hash chain.
#[derive(Debug, Default)]
struct Writer {
    /// The file records go to, while the path still names it.
    open: Option<OpenTrail>,
    /// SHA-256 (hex) of the last line of the trail: the next record's
    /// `prev`. `None` until the first file is opened, and in a trail that
    /// has no line yet.
    head: Option<String>,
    /// Whether `head` is known (the tail of the trail was read once).
    head_known: bool,
}

/// The file a [`Writer`] holds open.
#[derive(Debug)]
struct OpenTrail {
    file: Arc<File>,
    /// Device and inode, to notice that the path names another file.
    id: Option<(u64, u64)>,
}

impl Writer {
    /// Writes `record` as one line, its `prev` the chain's head; returns
    /// the file it went to (for a sync). Reopens the file first when the
    /// path no longer names it (renamed or deleted by an operator's log
    /// rotation), rotates it when the line would grow it past
    /// `max_bytes`. On an error the file is let go: the next record opens
    /// it afresh.
    fn append(
        &mut self,
        settings: &AuditSettings,
        record: &AuditRecord,
    ) -> std::io::Result<Arc<File>> {
        let written = self.append_open(settings, record);
        if written.is_err() {
            self.open = None;
        }
        written
    }

    fn append_open(
        &mut self,
        settings: &AuditSettings,
        record: &AuditRecord,
    ) -> std::io::Result<Arc<File>> {
        // Opened first: the chain's head may be the file's last line.
        let len = self.current_len(settings)?;
        let mut record = record.clone();
        record.prev = self.head.clone();
        let mut line = serde_json::to_vec(&record).expect("a record serializes");
        if len.is_some_and(|len| len > 0 && len + line.len() as u64 + 1 > settings.max_bytes) {
            self.open = None;
            rotate(&settings.path, settings.keep)?;
            self.current_len(settings)?;
        }
        let file = self.open.as_ref().expect("opened above").file.clone();
        let hash = hex::encode(Sha256::digest(&line));
        line.push(b'\n');
        (&*file).write_all(&line)?;
        self.head = Some(hash);
        Ok(file)
    }

    /// Makes sure the file the path names is open (one `stat` when it
    /// is); its length when it is a regular file.
    fn current_len(&mut self, settings: &AuditSettings) -> std::io::Result<Option<u64>> {
        if let Some(open) = &self.open {
            match std::fs::metadata(&settings.path) {
                Ok(meta) if open.id.is_some() && file_id(&meta) == open.id => {
                    return Ok(meta.is_file().then_some(meta.len()));
                }
                Ok(_) => tracing::info!(
                    path = %settings.path.display(),
                    "the audit trail's path names another file now (rotated by another program); writing to the new one"
                ),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => tracing::info!(
                    path = %settings.path.display(),
                    "the audit trail was removed (rotated by another program); beginning a new file"
                ),
                Err(e) => return Err(e),
            }
            self.open = None;
        }
        let file = open_for_append(&settings.path)?;
        let meta = file.metadata()?;
        let regular = meta.is_file();
        if regular && meta.len() > 0 {
            match read_tail(&file, meta.len())? {
                Tail::Whole(last) => self.head = Some(last),
                Tail::Torn { last, torn_bytes } => {
                    // The process stopped mid-line: end the fragment, and
                    // say so in a record the chain goes on from.
                    let chain = ChainRecord {
                        time: rfc3339(Utc::now()),
                        record: "chain".into(),
                        prev: last,
                        torn_bytes,
                        reason: "the last line was torn (the process stopped while writing it); the chain goes on from the line before it".into(),
                    };
                    let mut line = serde_json::to_vec(&chain).expect("a record serializes");
                    let hash = hex::encode(Sha256::digest(&line));
                    line.insert(0, b'\n');
                    line.push(b'\n');
                    (&file).write_all(&line)?;
                    tracing::warn!(
                        path = %settings.path.display(),
                        torn_bytes,
                        "the audit trail's last line was torn; a `chain` record says so"
                    );
                    self.head = Some(hash);
                }
            }
        } else if !self.head_known {
            // A new file, maybe after a rotation this process did not see
            // end: the chain goes on from the newest rotated file.
            self.head = match File::open(rotated(&settings.path, 1)) {
                Ok(previous) => match previous.metadata()?.len() {
                    0 => None,
                    len => match read_tail(&previous, len)? {
                        Tail::Whole(last) => Some(last),
                        // Its torn fragment stays the last line.
                        Tail::Torn { .. } => None,
                    },
                },
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(e),
            };
        }
        self.head_known = true;
        let len = regular
            .then(|| file.metadata().map(|m| m.len()))
            .transpose()?;
        self.open = Some(OpenTrail {
            file: Arc::new(file),
            id: file_id(&meta),
        });
        Ok(len)
    }
}

/// The device and inode of a file.
#[cfg(unix)]
fn file_id(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

/// Without device and inode, a file is reopened for every record.
#[cfg(not(unix))]
fn file_id(_meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

fn open_for_append(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    // Read too: the chain goes on from the file's last line.
    options.read(true).create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// The record that restarts a trail's chain after a torn line.
#[derive(Debug, Serialize, Deserialize)]
struct ChainRecord {
    time: String,
    /// Always `chain`.
    record: String,
    /// SHA-256 of the last whole line before the torn one, if any.
    prev: Option<String>,
    /// Bytes of the torn line.
    torn_bytes: u64,
    /// What happened, in words.
    reason: String,
}

/// How a non-empty file ends.
#[derive(Debug, PartialEq)]
enum Tail {
    /// With a whole line: its SHA-256 (hex, without the newline).
    Whole(String),
    /// With a line cut short (no newline): the SHA-256 of the whole line
    /// before it, if any, and the cut line's length.
    Torn {
        last: Option<String>,
        torn_bytes: u64,
    },
}

/// Bytes read at a time from the end of a file.
const TAIL_CHUNK: u64 = 64 << 10;

/// How the file of `len` bytes ends, reading only its last lines.
fn read_tail(file: &File, len: u64) -> std::io::Result<Tail> {
    let mut last_byte = [0u8];
    read_at(file, len - 1, &mut last_byte)?;
    let torn = last_byte[0] != b'\n';
    let content_end = if torn { len } else { len - 1 };
    // The newline that ends the last whole line (or starts the fragment).
    let cut = newline_before(file, content_end)?;
    let hash_line = |start: u64, end: u64| -> std::io::Result<String> {
        let mut hasher = Sha256::new();
        let mut at = start;
        let mut buf = vec![0u8; TAIL_CHUNK as usize];
        while at < end {
            let n = (end - at).min(TAIL_CHUNK) as usize;
            read_at(file, at, &mut buf[..n])?;
            hasher.update(&buf[..n]);
            at += n as u64;
        }
        Ok(hex::encode(hasher.finalize()))
    };
    if !torn {
        let start = cut.map_or(0, |n| n + 1);
        return Ok(Tail::Whole(hash_line(start, content_end)?));
    }
    let torn_bytes = len - cut.map_or(0, |n| n + 1);
    let last = match cut {
        Some(end) => {
            let start = newline_before(file, end)?.map_or(0, |n| n + 1);
            Some(hash_line(start, end)?)
        }
        None => None,
    };
    Ok(Tail::Torn { last, torn_bytes })
}

/// The offset of the last newline before `end`, reading backwards.
fn newline_before(file: &File, end: u64) -> std::io::Result<Option<u64>> {
    let mut buf = vec![0u8; TAIL_CHUNK as usize];
    let mut chunk_end = end;
    while chunk_end > 0 {
        let start = chunk_end.saturating_sub(TAIL_CHUNK);
        let chunk = &mut buf[..(chunk_end - start) as usize];
        read_at(file, start, chunk)?;
        if let Some(i) = chunk.iter().rposition(|b| *b == b'\n') {
            return Ok(Some(start + i as u64));
        }
        chunk_end = start;
    }
    Ok(None)
}

/// Fills `buf` from `file` at `offset`.
fn read_at(file: &File, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = file;
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(buf)
}

/// `PATH.n` for a rotated file.
fn rotated(path: &Path, n: u32) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

/// `PATH` becomes `PATH.1`, `PATH.1` becomes `PATH.2`, …; what would pass
/// `PATH.keep` is deleted.
fn rotate(path: &Path, keep: u32) -> std::io::Result<()> {
    let ignore_missing = |r: std::io::Result<()>| match r {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    };
    ignore_missing(std::fs::remove_file(rotated(path, keep)))?;
    for n in (1..keep).rev() {
        ignore_missing(std::fs::rename(rotated(path, n), rotated(path, n + 1)))?;
    }
    std::fs::rename(path, rotated(path, 1))
}

/// What `toolhost audit` shows.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    /// Only calls that began at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only calls of this tool (or reads, gets and completions of this
    /// target).
    pub tool: Option<String>,
}

/// `--since` as written: an RFC 3339 time, or a duration back from `now`
/// such as `90s`, `15m`, `1h`, `2days`.
pub fn parse_since(text: &str, now: DateTime<Utc>) -> anyhow::Result<DateTime<Utc>> {
    if let Ok(time) = DateTime::parse_from_rfc3339(text) {
        return Ok(time.with_timezone(&Utc));
    }
    let ago = humantime::parse_duration(text).map_err(|e| {
        anyhow::anyhow!(
            "--since {text:?} is neither an RFC 3339 time (2026-11-25T07:00:00Z) nor a duration (1h, 30m, 2days): {e}"
        )
    })?;
    let ago = chrono::TimeDelta::from_std(ago)
        .map_err(|_| anyhow::anyhow!("--since {text:?} reaches too far back"))?;
    now.checked_sub_signed(ago)
        .ok_or_else(|| anyhow::anyhow!("--since {text:?} reaches too far back"))
}

/// The trail's files, oldest first: `PATH.n` … `PATH.1`, `PATH`.
fn trail_files(path: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = (1..=10_000)
        .map(|n| rotated(path, n))
        .take_while(|p| p.exists())
        .collect();
    files.reverse();
    files.push(path.to_path_buf());
    files
}

/// Reads the trail at `path` (its rotated files included, oldest first):
/// the `call` records, and the `intent` records of calls that have none
/// (the process stopped during the call). A line that is not a record is
/// reported and skipped.
pub fn read_trail(path: &Path) -> anyhow::Result<Vec<AuditRecord>> {
    let mut records = Vec::new();
    let mut found = false;
    for file in trail_files(path) {
        let reader = match File::open(&file) {
            Ok(f) => BufReader::new(f),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => anyhow::bail!("cannot read the audit trail {}: {e}", file.display()),
        };
        found = true;
        for (n, line) in reader.lines().enumerate() {
            let line = line.map_err(|e| {
                anyhow::anyhow!("cannot read the audit trail {}: {e}", file.display())
            })?;
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<AuditRecord>(&line) {
                Ok(record) => records.push(record),
                // The chain's mark after a torn line: no call.
                Err(_) if serde_json::from_str::<ChainRecord>(&line).is_ok() => {}
                Err(e) => eprintln!(
                    "warning: {} line {} is not an audit record ({e}); skipped",
                    file.display(),
                    n + 1
                ),
            }
        }
    }
    if !found {
        anyhow::bail!(
            "there is no audit trail at {} (host.audit); it is written once a tool is called",
            path.display()
        );
    }
    let finished: HashSet<String> = records
        .iter()
        .filter(|r| r.record == "call")
        .map(|r| r.id.clone())
        .collect();
    let mut intents: HashMap<String, AuditRecord> = HashMap::new();
    let mut out = Vec::new();
    for record in records {
        match record.record.as_str() {
            "call" => out.push(record),
            _ if !finished.contains(&record.id) => {
                // The latest intent of an unfinished call says the most.
                intents.insert(record.id.clone(), record);
            }
            _ => {}
        }
    }
    for (_, mut intent) in intents {
        intent.result = "unfinished".into();
        out.push(intent);
    }
    out.sort_by(|a, b| a.time.cmp(&b.time));
    Ok(out)
}

/// What [`verify`] found in an intact trail.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainReport {
    /// Records walked (`chain` records not counted).
    pub records: u64,
    /// Files walked, oldest first.
    pub files: Vec<PathBuf>,
    /// SHA-256 of the trail's last line: what the next record's `prev`
    /// will be. Kept elsewhere, it anchors the end of the trail too.
    pub head: Option<String>,
    /// What is intact but worth knowing: torn lines marked by a `chain`
    /// record, records written before the chain existed.
    pub notes: Vec<String>,
}

/// Where [`verify`] found the chain broken.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}, line {line}: {what}", file.display())]
pub struct ChainBreak {
    /// The file.
    pub file: PathBuf,
    /// The line, counted from 1 in that file.
    pub line: u64,
    /// What is wrong, in words.
    pub what: String,
}

/// One line already walked.
struct Walked {
    file: PathBuf,
    line: u64,
    len: u64,
    hash: String,
    /// Whether it is a JSON object (a record).
    is_record: bool,
    /// Whether it ended with a newline.
    whole: bool,
    /// The hash of the line before it; `None` for the first line walked
    /// (its predecessor may be in a file rotated away).
    before: Option<Option<String>>,
}

/// Walks the trail at `path` (its rotated files included, oldest first)
/// and checks its hash chain: every line's `prev` is the SHA-256 of the
/// line before it, across files. A torn line (the process stopped while
/// writing it) is intact only when the `chain` record the writer added
/// after it says so. The first line walked may name any `prev` (the files
/// before it were rotated away), and lines written before the chain
/// existed (no `prev`) may open the trail.
///
/// `Err` is a file that cannot be read; `Ok(Err)` the first break.
pub fn verify(path: &Path) -> anyhow::Result<Result<ChainReport, ChainBreak>> {
    let mut report = ChainReport {
        records: 0,
        files: Vec::new(),
        head: None,
        notes: Vec::new(),
    };
    let mut previous: Option<Walked> = None;
    let mut unchained = 0u64;
    for file in trail_files(path) {
        let mut reader = match File::open(&file) {
            Ok(f) => BufReader::new(f),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => anyhow::bail!("cannot read the audit trail {}: {e}", file.display()),
        };
        report.files.push(file.clone());
        let mut number = 0u64;
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let read = reader.read_until(b'\n', &mut buf).map_err(|e| {
                anyhow::anyhow!("cannot read the audit trail {}: {e}", file.display())
            })?;
            if read == 0 {
                break;
            }
            number += 1;
            let whole = buf.last() == Some(&b'\n');
            if whole {
                buf.pop();
            }
            let broken = |what: String| {
                Ok(Err(ChainBreak {
                    file: file.clone(),
                    line: number,
                    what,
                }))
            };
            let parsed = serde_json::from_slice::<Value>(&buf)
                .ok()
                .filter(Value::is_object);
            let hash = hex::encode(Sha256::digest(&buf));
            // A line that is no record must be a torn one, and the next
            // line the `chain` record saying so.
            if let Some(p) = previous.as_ref().filter(|p| !p.is_record) {
                let marks_it = parsed.as_ref().is_some_and(|v| {
                    v["record"] == "chain" && v["torn_bytes"].as_u64() == Some(p.len)
                });
                if !marks_it {
                    return Ok(Err(ChainBreak {
                        file: p.file.clone(),
                        line: p.line,
                        what:
                            "not an audit record, and no `chain` record after it says it was torn"
                                .into(),
                    }));
                }
            }
            if let Some(record) = &parsed {
                let prev = match record.get("prev") {
                    Some(Value::String(prev)) => Some(Some(prev.clone())),
                    Some(Value::Null) => Some(None),
                    _ => None,
                };
                let Some(prev) = prev else {
                    if previous
                        .as_ref()
                        .is_none_or(|_| unchained == report.records)
                    {
                        // Written before the chain existed, at the trail's start.
                        unchained += 1;
                        report.records += 1;
                        previous = Some(Walked {
                            file: file.clone(),
                            line: number,
                            len: buf.len() as u64,
                            hash,
                            is_record: true,
                            whole,
                            before: None,
                        });
                        continue;
                    }
                    return broken(
                        "the record has no `prev`: it was not written by the trail's writer".into(),
                    );
                };
                if record["record"] == "chain" {
                    if let Some(p) = &previous {
                        let before_matches = p.before.as_ref().is_none_or(|b| *b == prev);
                        if record["torn_bytes"].as_u64() != Some(p.len) || !before_matches {
                            return broken(format!(
                                "a `chain` record that does not match the torn line before it (line {} of {})",
                                p.line,
                                p.file.display()
                            ));
                        }
                        report.notes.push(format!(
                            "{}, line {}: a torn line (the process stopped while writing it), marked by the `chain` record after it",
                            p.file.display(),
                            p.line
                        ));
                    }
                } else {
                    if let Some(p) = &previous
                        && prev.as_ref() != Some(&p.hash)
                    {
                        return broken(format!(
                            "its `prev` is not the SHA-256 of the line before it ({}, line {}): a line was changed, removed, inserted or moved here",
                            p.file.display(),
                            p.line
                        ));
                    }
                    report.records += 1;
                }
            }
            let before = previous.as_ref().map(|p| Some(p.hash.clone()));
            previous = Some(Walked {
                file: file.clone(),
                line: number,
                len: buf.len() as u64,
                hash,
                is_record: parsed.is_some(),
                whole,
                before,
            });
        }
    }
    if report.files.is_empty() {
        anyhow::bail!(
            "there is no audit trail at {} (host.audit); it is written once a tool is called",
            path.display()
        );
    }
    if let Some(last) = &previous {
        if !last.is_record {
            if last.whole {
                return Ok(Err(ChainBreak {
                    file: last.file.clone(),
                    line: last.line,
                    what: "not an audit record".into(),
                }));
            }
            report.notes.push(format!(
                "{}, line {}: the trail ends with a torn line (the process stopped while writing it); the next start marks it",
                last.file.display(),
                last.line
            ));
        }
        report.head = Some(last.hash.clone());
    }
    if unchained > 0 {
        report.notes.insert(
            0,
            format!("the first {unchained} record(s) were written before the trail was chained (no `prev`)"),
        );
    }
    Ok(Ok(report))
}

/// Writes the records `filter` selects as a table: time, caller, tool (or
/// a read's, get's or completion's kind and target), confirmation,
/// upstream requests, result, duration.
pub fn print_table(
    records: &[AuditRecord],
    filter: &Filter,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let header = [
        "TIME",
        "CALLER",
        "TOOL",
        "CONFIRMATION",
        "UPSTREAM",
        "RESULT",
        "MS",
    ];
    let rows: Vec<[String; 7]> = records
        .iter()
        .filter(|r| {
            filter
                .tool
                .as_ref()
                .is_none_or(|t| &r.tool == t || r.target.as_ref() == Some(t))
        })
        .filter(|r| {
            filter
                .since
                .is_none_or(|since| DateTime::parse_from_rfc3339(&r.time).is_ok_and(|t| t >= since))
        })
        .map(|r| {
            let confirmation = r
                .confirmation
                .as_ref()
                .map_or("-".to_string(), |c| format!("{} ({})", c.outcome, c.via));
            let upstream = if r.upstream.is_empty() {
                "-".to_string()
            } else {
                r.upstream
                    .iter()
                    .map(|u| {
                        let status = u
                            .status
                            .map(|s| s.to_string())
                            .or_else(|| u.error.clone())
                            .unwrap_or_else(|| "-".into());
                        format!("{} {}{} {status}", u.method, u.host, u.path)
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let result = if r.issues.is_empty() {
                r.result.clone()
            } else {
                format!("{} {}", r.result, r.issues.join(","))
            };
            // A read, get or completion shows its kind and target.
            let tool = match (&r.kind, &r.target) {
                (Some(kind), Some(target)) => format!("{kind} {target}"),
                (Some(kind), None) => kind.clone(),
                _ => r.tool.clone(),
            };
            [
                r.time.clone(),
                r.caller.clone(),
                tool,
                confirmation,
                upstream,
                result,
                r.duration_ms.to_string(),
            ]
        })
        .collect();
    crate::table::write(out, header, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings(dir: &Path, max_bytes: u64, keep: u32) -> AuditSettings {
        AuditSettings {
            path: dir.join("audit.jsonl"),
            arguments: false,
            max_bytes,
            keep,
        }
    }

    #[test]
    fn canonical_arguments_hash_alike_whatever_the_key_order() {
        let a: Value =
            serde_json::from_str(r#"{"b":1,"a":{"y":[1,{"d":2,"c":3}],"x":"é"}}"#).unwrap();
        let b: Value =
            serde_json::from_str(r#"{"a":{"x":"é","y":[1,{"c":3,"d":2}]},"b":1}"#).unwrap();
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"a":{"x":"é","y":[1,{"c":3,"d":2}]},"b":1}"#,
            "serde_json's map must keep keys sorted (no `preserve_order`)"
        );
        assert_eq!(arguments_sha256(&a), arguments_sha256(&b));
        assert_ne!(arguments_sha256(&a), arguments_sha256(&json!({"b": 2})));
    }

    fn sample(id: &str) -> AuditRecord {
        AuditRecord {
            time: rfc3339(Utc::now()),
            record: "call".into(),
            id: id.into(),
            caller: "stdio".into(),
            protocol: None,
            session: None,
            tool: "t".into(),
            plugin: "p".into(),
            file: "p.wasm".into(),
            digest: "sha256:00".into(),
            read_only: true,
            arguments_sha256: arguments_sha256(&json!({})),
            arguments: None,
            confirmation: None,
            upstream: Vec::new(),
            result: "ok".into(),
            issues: Vec::new(),
            duration_ms: 1,
            kind: None,
            target: None,
            prev: None,
        }
    }

    fn ids(path: &Path) -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| {
                let id = serde_json::from_str::<Value>(l)
                    .ok()
                    .map(|v| v["id"].clone());
                id.and_then(|id| id.as_str().map(str::to_string))
                    .unwrap_or_else(|| "-".into())
            })
            .collect()
    }

    #[test]
    fn the_file_rotates_at_its_size_keeps_so_many_and_the_chain_spans_them() {
        let dir = tempfile::tempdir().unwrap();
        let line = serde_json::to_vec(&sample("0")).unwrap().len() as u64 + 70;
        // One record per file.
        let s = settings(dir.path(), line + 10, 2);
        let mut writer = Writer::default();
        for i in 0..10 {
            writer.append(&s, &sample(&i.to_string())).unwrap();
        }
        assert_eq!(ids(&s.path), ["9"]);
        assert_eq!(ids(&rotated(&s.path, 1)), ["8"]);
        assert_eq!(ids(&rotated(&s.path, 2)), ["7"]);
        assert!(!rotated(&s.path, 3).exists());
        let report = verify(&s.path).unwrap().unwrap();
        assert_eq!(report.records, 3, "{report:?}");
        assert_eq!(report.files.len(), 3);
    }

    #[test]
    fn a_new_writer_goes_on_from_the_last_line_and_marks_a_torn_one() {
        let dir = tempfile::tempdir().unwrap();
        let s = settings(dir.path(), 1 << 20, 2);
        Writer::default().append(&s, &sample("a")).unwrap();
        Writer::default().append(&s, &sample("b")).unwrap();
        verify(&s.path).unwrap().unwrap();
        // The process stopped mid-line.
        let mut file = OpenOptions::new().append(true).open(&s.path).unwrap();
        let fragment = br#"{"time":"2026-11-25T"#;
        file.write_all(fragment).unwrap();
        let file = File::open(&s.path).unwrap();
        assert!(matches!(
            read_tail(&file, file.metadata().unwrap().len()).unwrap(),
            Tail::Torn { last: Some(_), torn_bytes } if torn_bytes == fragment.len() as u64
        ));
        let ended = verify(&s.path).unwrap().unwrap();
        assert!(
            ended.notes[0].contains("ends with a torn line"),
            "{ended:?}"
        );
        Writer::default().append(&s, &sample("c")).unwrap();
        assert_eq!(ids(&s.path), ["a", "b", "-", "-", "c"]);
        let report = verify(&s.path).unwrap().unwrap();
        assert_eq!(report.records, 3);
        assert!(
            report.notes[0].contains("line 3: a torn line"),
            "{report:?}"
        );
    }

    #[test]
    fn verify_names_the_line_changed_removed_or_moved() {
        let dir = tempfile::tempdir().unwrap();
        let s = settings(dir.path(), 1 << 20, 2);
        let mut writer = Writer::default();
        for i in 0..5 {
            writer.append(&s, &sample(&i.to_string())).unwrap();
        }
        let text = std::fs::read_to_string(&s.path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let check = |lines: Vec<String>| {
            std::fs::write(&s.path, lines.join("\n") + "\n").unwrap();
            verify(&s.path).unwrap().unwrap_err()
        };
        let owned = || lines.iter().map(|l| l.to_string()).collect::<Vec<_>>();
        let mut edited = owned();
        edited[2] = edited[2].replace("\"id\":\"2\"", "\"id\":\"7\"");
        assert_eq!(check(edited).line, 4);
        let mut removed = owned();
        removed.remove(2);
        assert_eq!(check(removed).line, 3);
        let mut moved = owned();
        moved.swap(1, 2);
        assert_eq!(check(moved).line, 2);
        std::fs::write(&s.path, &text).unwrap();
        assert_eq!(verify(&s.path).unwrap().unwrap().records, 5);
    }

    #[test]
    fn a_directory_in_the_files_place_is_an_error_naming_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let s = settings(dir.path(), 1 << 20, 1);
        std::fs::create_dir(&s.path).unwrap();
        let log = AuditLog::new(s);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let record = sample("1");
        let error = runtime
            .block_on(log.append(&record, false))
            .unwrap_err()
            .to_string();
        assert!(error.contains("host.audit"), "{error}");
        assert!(log.is_failing());
    }

    #[test]
    fn since_takes_a_time_or_a_duration() {
        let now = DateTime::parse_from_rfc3339("2026-11-25T08:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(
            rfc3339(parse_since("1h", now).unwrap()),
            "2026-11-25T07:00:00.000Z"
        );
        assert_eq!(
            rfc3339(parse_since("2026-11-25T06:30:00+01:00", now).unwrap()),
            "2026-11-25T05:30:00.000Z"
        );
        let error = parse_since("yesterday", now).unwrap_err().to_string();
        assert!(error.contains("RFC 3339"), "{error}");
    }
}
