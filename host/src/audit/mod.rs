//! The audit trail (`[host] audit = "PATH"`): one JSON line per tool call,
//! and per resource read, prompt get and completion that runs a
//! component's code, appended before the result goes back to the client,
//! so nothing that changed the world goes unrecorded (ADR 0019, ADR 0025,
//! ADR 0031).
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
//! | `caller` | `stdio`, the HTTP caller's identity qualified by its source (`token:ci-bot` for a static token, `jwt:alice` for an access token; `[auth]`), `http` (HTTP without `[auth]`), or `cli` (`toolhost call`) |
//! | `protocol`, `session` | the client's protocol version and its `Mcp-Session-Id`, when there is one |
//! | `client` | over HTTP, the client's network address: the connection's peer or, from a proxy `http.trusted_proxies` names, the address it forwarded for; in an `approval` record, where the decision came from; for a task's call run after its approval, where it was asked from (ADR 0066) |
//! | `tool` | the tool's served name (left out of a read's, get's or completion's record) |
//! | `plugin`, `file`, `digest` | the operator's plugin block, the component file, and `sha256:` of the file's bytes |
//! | `read_only` | the tool's `readOnlyHint` |
//! | `arguments_sha256` | SHA-256 of the arguments in canonical JSON (compact, object keys sorted at every level) |
//! | `arguments` | the arguments themselves, only with `host.audit_arguments = true` |
//! | `confirmation` | `null` when the tool asked nothing; else how it was asked (`elicitation`, `input_required`, `policy`: the operator's `host.confirmation` answered for a client that cannot elicit, `terminal`), every answer in order (answers a 2026-07-28 client gave in earlier rounds included), and the `outcome`: the latest answer (`confirmed`, `declined`, `cancelled`, `unsupported`; a form of the tool's own, contract 0.3, is `form-accepted`, `form-declined`, `form-cancelled` or `form-unsupported`, never its values), `input_required` (the client was asked; its answer comes in a new request), `pending` (asked, and the call ended before the answer: cancelled) or `busy` (not asked: too many calls wait for a user) |
//! | `upstream` | every request the host sent for the call, each redirect hop one: `method`, `host`, `port`, `path` (never the query), `status` and response body `bytes`, or an `error` (`timeout`, `connection_failed`, `denied`, `body_too_large`); and every request the host refused to send, marked `refused` with why (`read_only`, `unconfirmed`, `host_not_allowed`, `port`, `method`, `path`, `scheme`, `ambiguous_path`, `private_address`, `credential_cleartext`, `method_override`, `requests_per_call` (past `limits.http_requests_per_call`), `audit_unwritable`): it never left the host |
//! | `result` | `ok`, `error` (then `issues` holds the codes; arguments that do not match the schema are `VALIDATION_ERROR`), `input_required`, `cancelled` (by the client), `refused` (the tool did not run; `issues` says why: `UNKNOWN_TOOL`, `PERMISSION_DENIED` (a tool `[[access]]` hides from this caller), `INVALID_REQUEST_STATE` (a `requestState` altered, forged, expired or sealed elsewhere), `REPLAYED_REQUEST_STATE` (one already used), `STALE_REQUEST_STATE` (sealed for a component since replaced), `FOREIGN_REQUEST_STATE` (issued to another caller), `INVALID_INPUT_RESPONSES` (`inputResponses` missing, malformed, or without its `requestState`), `MALFORMED_REQUEST` (`params` rmcp cannot decode, answered by the transport, over HTTP or stdio), `TRANSIENT` (a replay store that did not answer)), or `pending` in an `intent` |
//! | `issues` | the error codes, e.g. `["NOT_FOUND"]` |
//! | `duration_ms` | from finding the tool to the answer |
//! | `kind` | absent for a tool call; `resource_read`, `prompt_get` or `completion` for the operations below |
//! | `target` | only with `kind`: what was read, got or completed (below) |
//! | `cut` | absent unless a field the client chose was cut to its bound (below): for each such field, its original `bytes` and `sha256` |
//! | `seq` | the line's number: one more than the line before it, across rotation and restarts (below) |
//! | `prev` | SHA-256 (hex) of the line before this one in the trail; `null` on the trail's first line (below) |
//!
//! A refused call's record has the `tool` name the client sent and, for an
//! unknown tool, empty `plugin`, `file` and `digest`.
//!
//! # Client text is bounded
//!
//! A client chooses some of a record's text: its `session` and `protocol`
//! headers, a refused call's `tool` name, the arguments (recorded with
//! `host.audit_arguments`), and through its token's `sub` the `caller`.
//! Each has a bound ([`Bounded`]: `caller` 256 characters, `protocol` 64,
//! `session` 128, `tool` 128, the arguments 64 KiB of canonical JSON); a
//! field past it keeps its first characters (the arguments are left out,
//! their hash kept) and `cut` names it with the original's length and
//! SHA-256, so a header cannot fill the trail and rotate other callers'
//! records away.
//!
//! # Refused calls have a budget
//!
//! Each caller may leave `host.audit_refused_per_window` records of calls
//! refused before they ran per `host.audit_refused_window_secs`, the
//! window begun by its first refusal. Past it a refusal is counted, not
//! written, and when the window ends one `suppressed` record (`time` and
//! `until`, `caller`, `dropped`, the count per code in `issues`) says how
//! many were left out; a warning is logged too. Calls that ran are never
//! budgeted.
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
//! `host.audit_keep` is deleted) and a new one begun with a `rotation`
//! record (`reason` `size`; `kept`: the first `seq` of each rotated file
//! kept, oldest first, grown from the previous `rotation` record and never
//! from the files found, so a file deleted by hand stays missing). A file
//! begun because another program moved the old one away opens with a
//! `rotation` record whose `reason` is `moved` and `kept` `null`.
//!
//! # One writer per file
//!
//! The process holds an exclusive `flock` on the file it writes (a regular
//! file; a FIFO is not locked), taken when the trail is opened at start
//! ([`AuditLog::open`]) and moved to the new file at each rotation. A
//! second process on the same file (`toolhost call` with the config
//! `toolhost serve` runs with, or a second `serve`) is refused with
//! [`AuditLocked`], naming `host.audit`, before anything runs: two writers
//! would each chain their own lines.
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
//! new file's first line (its `rotation` record) names its last line, so
//! the two can be checked together by hand, and [`verify`] accepts any
//! `prev` on the first line it walks. The last line is protected only once the next one is written;
//! `toolhost audit --verify` prints its hash, to be kept elsewhere.
//!
//! Each line's `seq` counts on from the line before it (a torn fragment
//! has none). [`verify`] walks the trail (every rotated file present,
//! oldest first) and reports the first break, naming file and line: a
//! changed, removed, inserted or moved line; records missing between two
//! lines, naming the rotated file that held them when it is not there;
//! and records missing at the trail's start (its oldest lines or files
//! removed), by the latest `rotation` record's `kept` (by `seq` 1 when the
//! trail never rotated). After a `moved` rotation it cannot know the
//! trail's start, and says so in a note.
//!
//! `toolhost audit` reads the trail back as a table ([`print_table`]);
//! every cell is escaped as the log escapes a guest's text
//! ([`crate::logging::escape_controls`]), so a client's text cannot forge a
//! row or move the terminal's cursor.
//!
//! # Where each part lives
//!
//! | file | its one job |
//! |---|---|
//! | `record` | the record: its fields ([`AuditRecord`]), how client text is bounded in it ([`Bounded`]), how the arguments are hashed, the `rotation` and `suppressed` records |
//! | `call` | one call's record while the call runs ([`CallAudit`]): what the imports and the confirmation add, and how it ends |
//! | `budget` | the budget of refused-call records per caller, and its `suppressed` record |
//! | `writer` | the file: one open file per process ([`AuditLog`]) and its `flock`, `seq` and `prev` on each line, size rotation and its `rotation` record, reopening after another program's rotation |
//! | `chain` | the hash chain: the tail read at a start, the `chain` mark of a torn line, [`verify`] and what it says is missing |
//! | `reader` | the trail read back for `toolhost audit`: [`read_trail`], [`Filter`], [`parse_since`], [`print_table`] |
//!
//! **Architecture invariant:** this folder knows nothing of transports or
//! the server: callers hand it a [`CallContext`], and it writes lines.

mod budget;
mod call;
mod chain;
mod reader;
mod record;
mod writer;

pub use crate::config::AuditSettings;
pub use call::{ApprovalEvent, CallAudit, CallContext, Ending};
pub use chain::{ChainBreak, ChainReport, verify};
pub use reader::{Filter, TrailRow, parse_client, parse_since, print_table, read_trail};
pub use record::{
    ApprovalNote, AuditRecord, Bounded, Confirmation, Cut, PolicyNote, arguments_sha256,
};
pub use writer::{AuditError, AuditLocked, AuditLog};

#[cfg(test)]
mod testing {
    //! What the unit tests of every part share.

    use std::path::Path;

    use chrono::Utc;
    use serde_json::{Value, json};

    use super::record::{AuditRecord, arguments_sha256, rfc3339};
    use crate::config::AuditSettings;

    pub fn settings(dir: &Path, max_bytes: u64, keep: u32) -> AuditSettings {
        AuditSettings {
            path: dir.join("audit.jsonl"),
            arguments: false,
            max_bytes,
            keep,
            refused_per_window: 60,
            refused_window: std::time::Duration::from_secs(60),
        }
    }

    pub fn sample(id: &str) -> AuditRecord {
        AuditRecord {
            time: rfc3339(Utc::now()),
            record: "call".into(),
            id: id.into(),
            caller: "stdio".into(),
            protocol: None,
            session: None,
            client: None,
            tool: "t".into(),
            plugin: "p".into(),
            file: "p.wasm".into(),
            digest: "sha256:00".into(),
            read_only: true,
            arguments_sha256: arguments_sha256(&json!({})),
            arguments: None,
            confirmation: None,
            policy: None,
            credentials: Vec::new(),
            approval: None,
            cost: None,
            upstream: Vec::new(),
            result: "ok".into(),
            issues: Vec::new(),
            duration_ms: 1,
            kind: None,
            target: None,
            cut: Default::default(),
            seq: None,
            prev: None,
        }
    }

    pub fn ids(path: &Path) -> Vec<String> {
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
}
