//! The record: one line of the trail ([`AuditRecord`]) and how a call's
//! arguments are hashed.

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

/// SHA-256 (hex) of `arguments` in canonical JSON: compact, object keys
/// sorted at every level (serde_json's map is ordered by key; a test pins
/// that), so the same arguments always hash alike.
pub fn arguments_sha256(arguments: &Value) -> String {
    let canonical = serde_json::to_vec(arguments).expect("a JSON value serializes");
    hex::encode(Sha256::digest(&canonical))
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
}
