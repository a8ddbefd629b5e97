//! The record: one line of the trail ([`AuditRecord`]), how the text a
//! client chose is bounded in it ([`Bounded`]), how a call's arguments
//! are hashed, and the lines that are no call: a `rotation` record and a
//! `suppressed` one ([`Line`] is what the writer needs of each).

use std::collections::BTreeMap;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::hooks::Upstream;

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

/// Which `[[policy.rules]]` rule decided a request, and under which
/// version of the rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyNote {
    /// The rule's name (`default` when no rule decided, `access` for
    /// `[[access]]`).
    pub rule: String,
    /// `allow`, `deny`, `confirm`, `hide` or `limit` (a limit that refused).
    pub outcome: String,
    /// The policy's version: a hash of the rules.
    pub version: String,
}

/// The approval a call needed (an `approve` rule, ADR 0038), or that a
/// decision on the approval page changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalNote {
    /// The approval's id.
    pub id: String,
    /// Where it stands after this record: `pending` (asked, or still
    /// waiting), `approved`, `denied`, `spent` (the call ran), `void`,
    /// `cancelled`, `lapsed`.
    pub state: String,
    /// Who decided (an identity's key), once someone did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// The approver's note, bounded like a tool name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
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
    /// The client's network address over HTTP: the connection's peer, or
    /// behind `http.trusted_proxies` the address they forwarded for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
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
    /// The policy's decision (absent in lines written before the rule
    /// layer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyNote>,
    /// The approval the call needed, or the decision this `approval`
    /// record writes down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalNote>,
    /// The per-caller credentials the call was given, by the name of their
    /// secret (`statuspro/alice`), never their value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub credentials: Vec<String>,
    /// Requests sent.
    pub upstream: Vec<Upstream>,
    /// What the call cost, measured by the host (a tool call that ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<crate::cost::CallCost>,
    /// `ok`, `error`, `input_required`, `cancelled`, `refused`, `pending`.
    pub result: String,
    /// Error codes.
    #[serde(default)]
    pub issues: Vec<String>,
    /// Milliseconds from start to answer (so far, in an `intent`).
    pub duration_ms: u64,
    /// `None` for a tool call; `resource_read`, `prompt_get` or
    /// `completion` (`OfferKind`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// With `kind`: the resource's URI, the matched URI template, or the
    /// prompt's served name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The fields a client chose that were cut to their bound (see
    /// [`Bounded`]): each one's original length and hash. Absent when
    /// nothing was cut.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub cut: BTreeMap<String, Cut>,
    /// The line's number in the trail: one more than the line before it,
    /// across files and restarts. Set by the writer; absent in lines
    /// written before the trail was numbered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// SHA-256 (hex) of the trail's line before this one (`null` for the
    /// first line of a trail): the hash chain [`verify`](super::verify)
    /// walks. Set by the writer.
    #[serde(default)]
    pub prev: Option<String>,
}

/// A field a client chose, cut to its bound: what it was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cut {
    /// The original's length in bytes (of its canonical JSON for
    /// `arguments`).
    pub bytes: u64,
    /// SHA-256 (hex) of the original.
    pub sha256: String,
}

/// Bounds of the text a client chooses, in characters: a field past its
/// bound keeps its first characters, and `cut` says what it was. Without
/// them one header could fill the trail and rotate other callers'
/// records away.
pub struct Bounded;

impl Bounded {
    /// `caller`: an identity's subject (a JWT's `sub`).
    pub const CALLER: usize = 256;
    /// `protocol`: a protocol version is a date.
    pub const PROTOCOL: usize = 64;
    /// `session`: an `Mcp-Session-Id`.
    pub const SESSION: usize = 128;
    /// `tool`: MCP's limit for a tool's name.
    pub const TOOL: usize = 128;
    /// `arguments` (with `host.audit_arguments`), in bytes of canonical
    /// JSON: past it they are left out whole, the hash still recorded.
    pub const ARGUMENTS_BYTES: usize = 64 << 10;

    /// `text` cut to `max` characters; a cut is noted in `cut` under
    /// `field`.
    pub fn text(field: &str, text: String, max: usize, cut: &mut BTreeMap<String, Cut>) -> String {
        match text.char_indices().nth(max) {
            None => text,
            Some((end, _)) => {
                cut.insert(
                    field.to_string(),
                    Cut {
                        bytes: text.len() as u64,
                        sha256: hex::encode(Sha256::digest(text.as_bytes())),
                    },
                );
                text[..end].to_string()
            }
        }
    }

    /// `arguments` when their canonical JSON fits [`Self::ARGUMENTS_BYTES`];
    /// else `None`, noted in `cut`.
    pub fn arguments(arguments: &Value, cut: &mut BTreeMap<String, Cut>) -> Option<Value> {
        let canonical = serde_json::to_vec(arguments).expect("a JSON value serializes");
        if canonical.len() <= Self::ARGUMENTS_BYTES {
            return Some(arguments.clone());
        }
        cut.insert(
            "arguments".into(),
            Cut {
                bytes: canonical.len() as u64,
                sha256: hex::encode(Sha256::digest(&canonical)),
            },
        );
        None
    }
}

/// What the writer needs of a line: to link it into the chain.
pub(super) trait Line: Serialize + Clone {
    /// Sets the line's `seq` and `prev`.
    fn link(&mut self, seq: u64, prev: Option<String>);
}

impl Line for AuditRecord {
    fn link(&mut self, seq: u64, prev: Option<String>) {
        self.seq = Some(seq);
        self.prev = prev;
    }
}

/// The first line of a file the writer began because the one before was
/// rotated: by size (`kept` lists what stays), or by another program.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct RotationRecord {
    /// When it was written.
    pub(super) time: String,
    /// Always `rotation`.
    pub(super) record: String,
    /// `size` (the writer's own rotation) or `moved` (the path named
    /// another file, or none: renamed or removed by another program).
    pub(super) reason: String,
    /// The first `seq` of each rotated file kept, oldest (`PATH.N`) first;
    /// a file begun before the trail was numbered is `null`. `null` after
    /// a `moved` rotation: what was moved is not the writer's to know.
    pub(super) kept: Option<Vec<Option<u64>>>,
    /// Its number (see [`AuditRecord::seq`]).
    pub(super) seq: Option<u64>,
    /// SHA-256 of the line before it: the rotated file's last line.
    pub(super) prev: Option<String>,
}

impl RotationRecord {
    /// A rotation for `reason`, with what the rotated files kept.
    pub(super) fn new(reason: &str, kept: Option<Vec<Option<u64>>>) -> RotationRecord {
        RotationRecord {
            time: rfc3339(Utc::now()),
            record: "rotation".into(),
            reason: reason.into(),
            kept,
            seq: None,
            prev: None,
        }
    }
}

impl Line for RotationRecord {
    fn link(&mut self, seq: u64, prev: Option<String>) {
        self.seq = Some(seq);
        self.prev = prev;
    }
}

/// How many refused calls of one caller were left out of the trail in one
/// window, past its budget (`host.audit_refused_per_window`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct SuppressedRecord {
    /// When the window began.
    pub(super) time: String,
    /// Always `suppressed`.
    pub(super) record: String,
    /// Whose refusals (bounded like a call's `caller`).
    pub(super) caller: String,
    /// When the window ended.
    pub(super) until: String,
    /// Refused calls not recorded.
    pub(super) dropped: u64,
    /// How many of them had each code.
    pub(super) issues: BTreeMap<String, u64>,
    /// How many of them came from each client address (over HTTP; at
    /// most [`CLIENTS_NAMED`](super::budget::CLIENTS_NAMED) addresses).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(super) clients: BTreeMap<String, u64>,
    /// How many came from addresses past those named in `clients`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(super) other_clients: u64,
    /// See [`AuditRecord::cut`].
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(super) cut: BTreeMap<String, Cut>,
    /// Its number (see [`AuditRecord::seq`]).
    pub(super) seq: Option<u64>,
    /// SHA-256 of the line before it.
    pub(super) prev: Option<String>,
}

impl Line for SuppressedRecord {
    fn link(&mut self, seq: u64, prev: Option<String>) {
        self.seq = Some(seq);
        self.prev = prev;
    }
}

/// SHA-256 (hex) of `arguments` in canonical JSON: compact, object keys
/// sorted at every level (serde_json's map is ordered by key; a test pins
/// that), so the same arguments always hash alike.
pub fn arguments_sha256(arguments: &Value) -> String {
    let canonical = serde_json::to_vec(arguments).expect("a JSON value serializes");
    hex::encode(Sha256::digest(&canonical))
}

/// Whether a count is zero (left out of a record).
fn is_zero(count: &u64) -> bool {
    *count == 0
}

/// `time` as the trail writes it: RFC 3339, UTC, milliseconds.
pub(super) fn rfc3339(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
    fn client_text_past_its_bound_is_cut_and_the_cut_says_what_it_was() {
        let mut cut = BTreeMap::new();
        let short = Bounded::text("session", "abc".into(), 4, &mut cut);
        assert_eq!((short.as_str(), cut.len()), ("abc", 0));
        let long = "é".repeat(10);
        let kept = Bounded::text("session", long.clone(), 4, &mut cut);
        assert_eq!(kept, "éééé");
        assert_eq!(
            cut["session"],
            Cut {
                bytes: 20,
                sha256: hex::encode(Sha256::digest(long.as_bytes()))
            }
        );
        let big = json!({"x": "y".repeat(Bounded::ARGUMENTS_BYTES)});
        assert_eq!(Bounded::arguments(&big, &mut cut), None);
        assert_eq!(cut["arguments"].sha256, arguments_sha256(&big));
        assert_eq!(Bounded::arguments(&json!({}), &mut cut), Some(json!({})));
    }
}
