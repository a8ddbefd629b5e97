//! The audit trail every test host can keep, and the check that ties it to
//! what an upstream received: the harness side of `tests/e2e/audit.rs`.
//!
//! Every plugin-set setup ([`crate::support::plugin_set`]) turns the trail
//! on and ends each test by checking, against its sandbox's request log,
//! that every change the sandbox received was recorded as made by a
//! confirmed call, and that no other call changed anything
//! ([`assert_changes_recorded`]).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Host, with_host_setting};

/// The trail's file name, beside the test host's `toolhost.toml`.
pub const TRAIL: &str = "audit.jsonl";

/// `config` with `host.audit` set to [`TRAIL`] (unless it sets its own).
pub fn with_trail(config: &str) -> String {
    with_host_setting(config, "audit", &format!("audit = \"{TRAIL}\""))
}

/// Where `host` writes [`TRAIL`].
pub fn trail_of(host: &Host) -> PathBuf {
    host.plugins
        .parent()
        .expect("a temporary directory")
        .join(TRAIL)
}

/// Every record in the file at `path`, in order; none when there is no file.
pub fn records(path: &Path) -> Vec<Value> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line:?}"))
        })
        .collect()
}

/// Whether a request to the upstream could change something.
fn is_change(upstream: &Value) -> bool {
    !matches!(upstream["method"].as_str(), Some("GET" | "HEAD"))
}

/// The requests of `record` that could change something and were sent
/// (a request the host refused is marked `refused` and never left).
pub fn changes_in(record: &Value) -> Vec<&Value> {
    record["upstream"]
        .as_array()
        .expect("upstream is a list")
        .iter()
        .filter(|u| is_change(u) && u.get("refused").is_none())
        .collect()
}

/// Checks `host`'s trail against `mutations`, the requests other than
/// GET/HEAD a sandbox logged ([`assert_changes_recorded`]); nothing while
/// the test is already failing.
pub fn assert_sandbox_changes_recorded(host: &Host, mutations: Vec<sandbox_kit::LoggedRequest>) {
    if std::thread::panicking() {
        return;
    }
    let changes: Vec<(String, String)> =
        mutations.into_iter().map(|r| (r.method, r.path)).collect();
    assert_changes_recorded(&trail_of(host), &changes);
}

/// Checks the trail at `path` against `changes`, the (method, path) of
/// every request other than GET/HEAD an upstream received: each was sent
/// by a recorded call whose confirmation outcome is `confirmed`, no call
/// whose outcome is anything else sent a change, and every `intent` has
/// its final record.
pub fn assert_changes_recorded(path: &Path, changes: &[(String, String)]) {
    let records = records(path);
    let calls: Vec<&Value> = records.iter().filter(|r| r["record"] == "call").collect();
    for intent in records.iter().filter(|r| r["record"] == "intent") {
        assert!(
            calls.iter().any(|c| c["id"] == intent["id"]),
            "an intent without its call record: {intent}"
        );
    }
    let mut recorded: Vec<(String, String)> = Vec::new();
    for call in &calls {
        let sent = changes_in(call);
        if !sent.is_empty() {
            assert_eq!(
                call["confirmation"]["outcome"], "confirmed",
                "a change by a call not confirmed: {call}"
            );
        }
        recorded.extend(sent.iter().map(|u| {
            (
                u["method"].as_str().unwrap().to_string(),
                u["path"].as_str().unwrap().to_string(),
            )
        }));
    }
    for change in changes {
        let at = recorded.iter().position(|r| r == change).unwrap_or_else(|| {
            panic!(
                "the upstream received {change:?}, which no audit record holds; records: {calls:#?}"
            )
        });
        recorded.remove(at);
    }
}
