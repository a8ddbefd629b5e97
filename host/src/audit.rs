//! The audit trail (`[host] audit = "PATH"`): one JSON line per tool call,
//! and per resource read, prompt get and completion that runs a
//! component's code, appended before the result goes back to the client,
//! so nothing that changed the world goes unrecorded (ADR 0019).
//!
//! # The record
//!
//! Each line is one [`AuditRecord`]; every `tools/call` of a tool the
//! caller may see leaves one (an unknown tool runs nothing and leaves none):
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
//! | `upstream` | every request the host sent for the call, each redirect hop one: `method`, `host`, `port`, `path` (never the query), `status` and response body `bytes`, or an `error` (`timeout`, `connection_failed`, `denied`, `body_too_large`) |
//! | `result` | `ok`, `error` (then `issues` holds the codes), `input_required`, `cancelled` (by the client), `refused` (the tool did not run: a `requestState` that is not accepted, `INVALID_REQUEST_STATE`, or a replay store that did not answer, `TRANSIENT`), or `pending` in an `intent` |
//! | `issues` | the error codes, e.g. `["NOT_FOUND"]` |
//! | `duration_ms` | from finding the tool to the answer |
//! | `kind` | absent for a tool call; `resource_read`, `prompt_get` or `completion` for the operations below |
//! | `target` | only with `kind`: what was read, got or completed (below) |
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
//! arguments) leaves none, as an unknown tool leaves none.
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
//! Every record is one `write` to a file opened for appending (mode 0600),
//! under one lock, so lines never interleave. A record that precedes or
//! follows a mutation (an `intent`, and the `call` record of a call that
//! wrote one) is also synced to disk (`fdatasync`): it survives a power
//! loss. Other records survive a crash of the process, not necessarily of
//! the machine.
//!
//! When a record would grow the file past `host.audit_max_bytes`, the file
//! is renamed `PATH.1` (`PATH.1` to `PATH.2`, and so on; the oldest beyond
//! `host.audit_keep` is deleted) and a new one begun.
//!
//! A failed write is counted (`toolhost_audit_write_failures_total`) and
//! logged once per failure episode (again when writing works again). A
//! call never mutates unrecorded: its `intent` must be on disk before the
//! first mutating request leaves, and while writing fails, that request is
//! refused and the call ends with `TRANSIENT` ("nothing was changed").
//! Read-only calls, and previews that change nothing, go on.
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
use crate::confirmation::outcome_name;
use crate::offers::OfferKind;
use crate::plugin::Plugin;
use crate::spec::ToolSpec;

/// Default of `host.audit_max_bytes`: 64 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 64 << 20;
/// Default of `host.audit_keep`: five rotated files.
pub const DEFAULT_KEEP: u32 = 5;

/// The resolved `host.audit*` keys.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditSettings {
    /// `host.audit`: the file.
    pub path: PathBuf,
    /// `host.audit_arguments`: record the arguments themselves, not only
    /// their hash.
    pub arguments: bool,
    /// `host.audit_max_bytes`: size at which the file is rotated.
    pub max_bytes: u64,
    /// `host.audit_keep`: rotated files kept.
    pub keep: u32,
}

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

/// One upstream request as the trail records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Upstream {
    /// `GET`, `POST`, …
    pub method: String,
    /// The URL's host.
    pub host: String,
    /// The URL's port (the scheme's own when the URL names none).
    pub port: Option<u16>,
    /// The URL's path, without the query.
    pub path: String,
    /// The response's status code, when one came.
    pub status: Option<u16>,
    /// Bytes of the response body read.
    pub bytes: Option<u64>,
    /// Why no response was read: `timeout`, `connection_failed`, `denied`,
    /// `body_too_large`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Upstream {
    /// A request to `url` with `method`; status and bytes to be filled.
    pub fn to(method: &str, url: &url::Url) -> Upstream {
        Upstream {
            method: method.to_string(),
            host: crate::policy::host_of(url).unwrap_or_default(),
            port: url.port_or_known_default(),
            path: url.path().to_string(),
            status: None,
            bytes: None,
            error: None,
        }
    }

    /// Whether the request could change something (not `GET`/`HEAD`).
    pub fn is_mutation(&self) -> bool {
        !matches!(self.method.as_str(), "GET" | "HEAD")
    }
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
}

/// The trail's file, shared by every call of the process.
#[derive(Debug, Clone)]
pub struct AuditLog {
    inner: Arc<LogInner>,
}

#[derive(Debug)]
struct LogInner {
    settings: AuditSettings,
    /// Held while a record is written (and the file rotated).
    writing: Mutex<()>,
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
                writing: Mutex::new(()),
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

    /// Appends `record`; with `durable`, syncs it to disk too.
    pub async fn append(&self, record: &AuditRecord, durable: bool) -> Result<(), AuditError> {
        let mut line = serde_json::to_vec(record).expect("a record serializes");
        line.push(b'\n');
        let inner = self.inner.clone();
        let written = tokio::task::spawn_blocking(move || {
            let _one_writer = inner.writing.lock().expect("not poisoned");
            write_line(&inner.settings, &line, durable)
        })
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e)));
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
            plugin,
            served_name.to_string(),
            tool.annotations.read_only,
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
        self.start(context, plugin, String::new(), true, arguments, Some(offer))
    }

    /// Starts a `call` record: of the tool `tool`, or (`offer`) of a read,
    /// get or completion as (kind, target).
    fn start(
        &self,
        context: CallContext,
        plugin: &Plugin,
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
            plugin: plugin.settings.name.clone(),
            file: plugin.file.clone(),
            digest: format!("sha256:{}", plugin.digest),
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

/// Appends `line` to the trail, rotating first if it would outgrow
/// `max_bytes`.
fn write_line(settings: &AuditSettings, line: &[u8], durable: bool) -> std::io::Result<()> {
    let mut file = open_for_append(&settings.path)?;
    let meta = file.metadata()?;
    if meta.is_file() && meta.len() > 0 && meta.len() + line.len() as u64 > settings.max_bytes {
        drop(file);
        rotate(&settings.path, settings.keep)?;
        file = open_for_append(&settings.path)?;
    }
    file.write_all(line)?;
    if durable {
        file.sync_data()?;
    }
    Ok(())
}

fn open_for_append(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
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

    #[test]
    fn the_file_rotates_at_its_size_and_keeps_so_many() {
        let dir = tempfile::tempdir().unwrap();
        let s = settings(dir.path(), 100, 2);
        for i in 0..10 {
            write_line(&s, format!("{:059}\n", i).as_bytes(), false).unwrap();
        }
        let read = |p: PathBuf| std::fs::read_to_string(p).unwrap();
        // 60-byte lines, 100-byte files: one line each.
        assert_eq!(read(s.path.clone()), format!("{:059}\n", 9));
        assert_eq!(read(rotated(&s.path, 1)), format!("{:059}\n", 8));
        assert_eq!(read(rotated(&s.path, 2)), format!("{:059}\n", 7));
        assert!(!rotated(&s.path, 3).exists());
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
        let record = AuditRecord {
            time: rfc3339(Utc::now()),
            record: "call".into(),
            id: "1".into(),
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
        };
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
