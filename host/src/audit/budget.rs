//! The budget of refused-call records per caller: each identity may leave
//! `host.audit_refused_per_window` records of calls refused before they
//! ran per `host.audit_refused_window_secs`; past it a refusal is counted,
//! and one `suppressed` record at the window's end says how many, so a
//! flood of refusals cannot rotate other callers' records away. Calls
//! that ran are never budgeted.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use tokio::time::Instant;

use super::record::{Bounded, SuppressedRecord, rfc3339};
use super::writer::AuditLog;

/// Past this many callers in the table, windows that ended with nothing
/// left out are dropped from it.
const PRUNE_AT: usize = 1024;

/// Distinct client addresses a window's `suppressed` record names; the
/// refusals from addresses past them are counted as `others`.
pub(super) const CLIENTS_NAMED: usize = 16;

/// Every caller's current window.
#[derive(Debug, Default)]
pub(super) struct Budgets {
    windows: HashMap<String, Window>,
    /// Numbers windows, so a window's end acts on that window only.
    generations: u64,
}

/// One caller's window.
#[derive(Debug)]
struct Window {
    generation: u64,
    began: Instant,
    began_at: DateTime<Utc>,
    written: u64,
    dropped: u64,
    issues: BTreeMap<String, u64>,
    /// How many of the refusals left out came from each client address
    /// (over HTTP), at most [`CLIENTS_NAMED`] of them.
    clients: BTreeMap<String, u64>,
    /// Refusals left out from addresses past [`CLIENTS_NAMED`].
    other_clients: u64,
}

/// What to do with one refused call's record.
enum Admit {
    /// Write it.
    Write,
    /// Count it; the first one left out of its window starts the timer
    /// that writes the summary at the window's end.
    Drop { first: Option<(u64, Instant)> },
}

impl Budgets {
    fn admit(
        &mut self,
        caller: &str,
        client: Option<&str>,
        code: &str,
        per_window: u64,
        length: std::time::Duration,
        now: Instant,
    ) -> (Admit, Option<Window>) {
        let mut ended = None;
        if self
            .windows
            .get(caller)
            .is_some_and(|w| now >= w.began + length)
        {
            ended = self.windows.remove(caller).filter(|w| w.dropped > 0);
        }
        if self.windows.len() >= PRUNE_AT {
            self.windows
                .retain(|_, w| now < w.began + length || w.dropped > 0);
        }
        let generations = &mut self.generations;
        let window = self.windows.entry(caller.to_string()).or_insert_with(|| {
            *generations += 1;
            Window {
                generation: *generations,
                began: now,
                began_at: Utc::now(),
                written: 0,
                dropped: 0,
                issues: BTreeMap::new(),
                clients: BTreeMap::new(),
                other_clients: 0,
            }
        });
        if window.written < per_window {
            window.written += 1;
            return (Admit::Write, ended);
        }
        window.dropped += 1;
        *window.issues.entry(code.to_string()).or_default() += 1;
        if let Some(client) = client {
            if let Some(count) = window.clients.get_mut(client) {
                *count += 1;
            } else if window.clients.len() < CLIENTS_NAMED {
                window.clients.insert(client.to_string(), 1);
            } else {
                window.other_clients += 1;
            }
        }
        let first = (window.dropped == 1).then_some((window.generation, window.began + length));
        (Admit::Drop { first }, ended)
    }

    /// Takes the window `generation` of `caller` when it left something
    /// out.
    fn end(&mut self, caller: &str, generation: u64) -> Option<Window> {
        if self.windows.get(caller)?.generation != generation {
            return None;
        }
        self.windows.remove(caller).filter(|w| w.dropped > 0)
    }
}

impl AuditLog {
    /// Whether the record of a call of `caller` (from the network address
    /// `client`, over HTTP) refused with `code` is written: within its
    /// window's budget. Past it, the refusal is counted for the window's
    /// `suppressed` record, with its address.
    pub(super) async fn admit_refused(
        &self,
        caller: &str,
        client: Option<&str>,
        code: &str,
    ) -> bool {
        let settings = &self.inner.settings;
        let now = Instant::now();
        let (admit, ended) = self.inner.budgets.lock().expect("not poisoned").admit(
            caller,
            client,
            code,
            settings.refused_per_window,
            settings.refused_window,
            now,
        );
        if let Some(ended) = ended {
            self.write_suppressed(caller, ended, now).await;
        }
        match admit {
            Admit::Write => true,
            Admit::Drop { first } => {
                if let Some((generation, end)) = first {
                    let log = Arc::downgrade(&self.inner);
                    let caller = caller.to_string();
                    tokio::spawn(async move {
                        tokio::time::sleep_until(end).await;
                        let Some(inner) = log.upgrade() else {
                            return;
                        };
                        let log = AuditLog { inner };
                        let ended = log
                            .inner
                            .budgets
                            .lock()
                            .expect("not poisoned")
                            .end(&caller, generation);
                        if let Some(ended) = ended {
                            log.write_suppressed(&caller, ended, end).await;
                        }
                    });
                }
                false
            }
        }
    }

    /// Writes the `suppressed` record of `window`, which ended at `end`.
    async fn write_suppressed(&self, caller: &str, window: Window, end: Instant) {
        let mut cut = BTreeMap::new();
        let until = window.began_at
            + chrono::TimeDelta::from_std(end.saturating_duration_since(window.began))
                .unwrap_or_default();
        let record = SuppressedRecord {
            time: rfc3339(window.began_at),
            record: "suppressed".into(),
            caller: Bounded::text("caller", caller.to_string(), Bounded::CALLER, &mut cut),
            until: rfc3339(until),
            dropped: window.dropped,
            issues: window.issues,
            clients: window.clients,
            other_clients: window.other_clients,
            cut,
            seq: None,
            prev: None,
        };
        // A failure is logged and counted by the log.
        let _ = self.append(&record, false).await;
        tracing::warn!(
            caller = %record.caller,
            dropped = record.dropped,
            "{} refused calls were not recorded in the audit trail, past host.audit_refused_per_window; a `suppressed` record counts them",
            record.dropped
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_caller_past_its_budget_is_counted_and_a_new_window_begins_afresh() {
        let mut budgets = Budgets::default();
        let start = Instant::now();
        let minute = Duration::from_secs(60);
        let admit = |b: &mut Budgets, caller: &str, at: Instant| {
            b.admit(caller, None, "UNKNOWN_TOOL", 2, minute, at)
        };
        assert!(matches!(admit(&mut budgets, "a", start).0, Admit::Write));
        assert!(matches!(admit(&mut budgets, "a", start).0, Admit::Write));
        assert!(matches!(
            admit(&mut budgets, "a", start).0,
            Admit::Drop { first: Some(_) }
        ));
        assert!(matches!(
            admit(&mut budgets, "a", start).0,
            Admit::Drop { first: None }
        ));
        assert!(
            matches!(admit(&mut budgets, "b", start).0, Admit::Write),
            "another caller has its own"
        );
        let (next, ended) = admit(&mut budgets, "a", start + minute);
        assert!(matches!(next, Admit::Write));
        let ended = ended.expect("the window that left two out");
        assert_eq!((ended.dropped, ended.issues["UNKNOWN_TOOL"]), (2, 2));
    }

    #[test]
    fn a_window_names_the_first_sixteen_addresses_it_left_out_and_counts_the_rest() {
        let mut budgets = Budgets::default();
        let start = Instant::now();
        let minute = Duration::from_secs(60);
        let addresses: Vec<String> = (0..20).map(|n| format!("192.0.2.{n}")).collect();
        // One written, then every address left out once, the first twice.
        budgets.admit("a", Some(&addresses[0]), "UNKNOWN_TOOL", 1, minute, start);
        for address in addresses.iter().chain([&addresses[0]]) {
            budgets.admit("a", Some(address), "UNKNOWN_TOOL", 1, minute, start);
        }
        budgets.admit("a", None, "UNKNOWN_TOOL", 1, minute, start);
        let (_, ended) = budgets.admit("a", None, "UNKNOWN_TOOL", 1, minute, start + minute);
        let ended = ended.expect("the window that left some out");
        assert_eq!(ended.dropped, 22, "every refusal left out is counted");
        assert_eq!(ended.clients.len(), CLIENTS_NAMED);
        assert_eq!(ended.clients["192.0.2.0"], 2);
        assert_eq!(
            ended.other_clients, 4,
            "the four addresses past the bound; the one with no address is in neither"
        );
    }
}
