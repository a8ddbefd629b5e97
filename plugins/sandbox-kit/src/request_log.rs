//! The request log: every request a sandbox received, in arrival order.
//!
//! Tests read it to prove what a client sent, or did not send: a declined
//! confirmation must leave no `POST` behind. Entries are recorded as a request
//! arrives, before authentication, rate limiting or fault injection, so
//! rejected and held requests are logged too.
//!
//! The log is a cheap, cloneable handle; clones share one log.

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::watch;

/// One request as the sandbox received it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggedRequest {
    /// The HTTP method, upper case (`"GET"`, `"POST"`).
    pub method: String,
    /// The path without the query string, e.g. `/api/v1/orders/6110375248001`.
    pub path: String,
    /// The raw query string without the `?`, if the URL had one.
    pub query: Option<String>,
    /// The body parsed as JSON; `null` when the body was empty or not JSON.
    pub body: Value,
    /// The value of the `X-Sandbox-Fault` header, if sent.
    pub fault: Option<String>,
    /// The bearer token of the `Authorization` header, if one was sent:
    /// which API key the request carried (a sandbox's keys are not
    /// secrets).
    #[serde(default)]
    pub api_key: Option<String>,
}

impl LoggedRequest {
    /// Whether this request could change state (any method but GET, HEAD, OPTIONS).
    pub fn is_mutation(&self) -> bool {
        !matches!(self.method.as_str(), "GET" | "HEAD" | "OPTIONS")
    }
}

/// A thread-safe, shared, clearable log of [`LoggedRequest`]s.
#[derive(Debug, Clone)]
pub struct RequestLog {
    /// The entries, oldest first.
    entries: Arc<Mutex<Vec<LoggedRequest>>>,
    /// Number of requests recorded since the sandbox started (not reset by
    /// [`RequestLog::clear`]); lets tests wait for arrivals without polling.
    received: Arc<watch::Sender<usize>>,
}

impl Default for RequestLog {
    fn default() -> Self {
        Self::new()
    }
}

impl RequestLog {
    /// An empty log.
    pub fn new() -> Self {
        Self {
            entries: Arc::new(Mutex::new(Vec::new())),
            received: Arc::new(watch::Sender::new(0)),
        }
    }

    /// Appends one entry.
    pub fn record(&self, request: LoggedRequest) {
        self.lock().push(request);
        self.received.send_modify(|count| *count += 1);
    }

    /// A snapshot of the entries, oldest first.
    pub fn entries(&self) -> Vec<LoggedRequest> {
        self.lock().clone()
    }

    /// The entries that could change state ([`LoggedRequest::is_mutation`]),
    /// oldest first: what tests check a declined confirmation left out.
    pub fn mutations(&self) -> Vec<LoggedRequest> {
        self.lock()
            .iter()
            .filter(|request| request.is_mutation())
            .cloned()
            .collect()
    }

    /// Number of entries currently in the log.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether the log is empty.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Removes every entry.
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// Total requests recorded since the log was created, clears included.
    pub fn received(&self) -> usize {
        *self.received.borrow()
    }

    /// Waits until at least `count` requests have been recorded since the log
    /// was created (see [`Self::received`]).
    ///
    /// Useful to know that a request which the server holds (an injected
    /// timeout) has arrived, without sleeping.
    pub async fn wait_for_received(&self, count: usize) {
        let mut rx = self.received.subscribe();
        // The sender lives as long as `self`, so this cannot fail.
        let _ = rx.wait_for(|&received| received >= count).await;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<LoggedRequest>> {
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(method: &str) -> LoggedRequest {
        LoggedRequest {
            method: method.into(),
            path: "/x".into(),
            query: None,
            body: Value::Null,
            fault: None,
            api_key: None,
        }
    }

    #[tokio::test]
    async fn records_clears_and_counts() {
        let log = RequestLog::new();
        let shared = log.clone();
        shared.record(entry("GET"));
        shared.record(entry("POST"));
        assert_eq!(log.len(), 2);
        assert!(log.entries()[1].is_mutation());
        assert!(!log.entries()[0].is_mutation());
        assert_eq!(log.mutations(), vec![entry("POST")]);
        log.clear();
        assert!(log.is_empty());
        assert_eq!(log.received(), 2);
        log.wait_for_received(2).await;
    }
}
