//! `limit` rules' counters: fixed windows, counted in this process or, with
//! `state.replay`, in the shared Redis so that replicas behind a balancer
//! spend one budget.
//!
//! A window is `floor(now / window)`: every replica agrees on where it
//! starts and ends without talking, and a refusal's `retry_after` is the
//! time left until that end. In Redis a count is one atomic script
//! (`INCR`, and on the first a `PEXPIRE` at the window's end), so two
//! replicas counting at once never both see the last free place. A key a client's arguments chose is hashed
//! before it is stored, so its length bounds nothing. Unreachable, Redis
//! fails closed: the request is refused, retryably, and nothing runs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use super::Counted;

/// A counter store replicas share: `crate::replay`'s Redis implements it
/// (this module names no store, so the rules stay below the
/// configuration and the stores).
pub trait SharedCounters: Send + Sync {
    /// Counts one request under `key`, a window's counter that is
    /// forgotten `expires_ms` milliseconds after its first count (when the
    /// window ends): the count after this one, or why the store could not
    /// say.
    fn count<'a>(
        &'a self,
        key: &'a str,
        expires_ms: u64,
    ) -> toolhost_runtime::hooks::BoxFuture<'a, Result<u64, String>>;
}

/// Distinct (rule, key) counters one process keeps before it forgets the
/// ones of windows that have ended; past it, with none ended, a new key is
/// refused (fail closed) rather than memory growing without bound.
const MAX_LOCAL_COUNTERS: usize = 100_000;

/// Where `limit` rules count.
pub enum Limiter {
    /// In this process: hashed key → (the end of its window in Unix
    /// milliseconds, its count). The end, not the window's number: numbers
    /// of windows of different lengths do not compare.
    Local(Mutex<HashMap<String, (u64, u64)>>),
    /// In the shared store of `state.replay`.
    Shared(Arc<dyn SharedCounters>),
}

/// Why a request may not run now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// The rule's budget for this window is spent.
    Limited {
        /// The rule.
        rule: String,
        /// Its budget.
        count: u64,
        /// Its window.
        window: Duration,
        /// When the window ends.
        retry_after: Duration,
    },
    /// The counter could not be reached (Redis) or kept (too many keys):
    /// the request is refused, and may be retried.
    Unavailable {
        /// The rule.
        rule: String,
        /// Why, for the operator's log.
        reason: String,
    },
}

impl Limiter {
    /// Counting in this process.
    pub fn local() -> Limiter {
        Limiter::Local(Mutex::new(HashMap::new()))
    }

    /// Counting in the shared store when there is one, else here.
    pub fn new(shared: Option<Arc<dyn SharedCounters>>) -> Limiter {
        match shared {
            Some(store) => Limiter::Shared(store),
            None => Limiter::local(),
        }
    }

    /// Counts one request against every limit in `limits`, in order: the
    /// first whose budget is spent refuses it. The counts already made
    /// stand (a refused request still spent a place in the rules before):
    /// a client that retries at once is not helped by it.
    pub async fn count(&self, limits: &[Counted]) -> Result<(), Refused> {
        for limit in limits {
            self.count_one(limit).await?;
        }
        Ok(())
    }

    async fn count_one(&self, limit: &Counted) -> Result<(), Refused> {
        let window_ms = u64::try_from(limit.window.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or_default();
        let index = now_ms / window_ms;
        let ends_ms = index.saturating_add(1).saturating_mul(window_ms);
        let key = counter_key(limit);
        let count = match self {
            Limiter::Local(counters) => {
                let mut counters = counters.lock().expect("not poisoned");
                if counters.len() >= MAX_LOCAL_COUNTERS && !counters.contains_key(&key) {
                    // Forget every counter whose window is over.
                    counters.retain(|_, (ends, _)| *ends > now_ms);
                    if counters.len() >= MAX_LOCAL_COUNTERS {
                        return Err(Refused::Unavailable {
                            rule: limit.rule.clone(),
                            reason: format!(
                                "{MAX_LOCAL_COUNTERS} distinct keys are counted in this window; \
                                 the rule's `limit.key` may be one a client chooses freely"
                            ),
                        });
                    }
                }
                let entry = counters.entry(key).or_insert((ends_ms, 0));
                if entry.0 != ends_ms {
                    *entry = (ends_ms, 0);
                }
                entry.1 += 1;
                entry.1
            }
            Limiter::Shared(store) => store
                .count(
                    &format!("toolhost:limit:{key}:{index}"),
                    ends_ms.saturating_sub(now_ms),
                )
                .await
                .map_err(|reason| Refused::Unavailable {
                    rule: limit.rule.clone(),
                    reason,
                })?,
        };
        if count > limit.count {
            return Err(Refused::Limited {
                rule: limit.rule.clone(),
                count: limit.count,
                window: limit.window,
                retry_after: Duration::from_millis(ends_ms.saturating_sub(now_ms).max(1)),
            });
        }
        Ok(())
    }
}

/// The counter's name: a hash of the rule, its budget and its key, so a
/// changed budget or window starts afresh and no client-chosen key is
/// stored as written.
fn counter_key(limit: &Counted) -> String {
    let mut hash = Sha256::new();
    hash.update(limit.rule.as_bytes());
    hash.update([0]);
    hash.update(limit.count.to_be_bytes());
    hash.update(limit.window.as_millis().to_be_bytes());
    hash.update([0]);
    hash.update(limit.key.as_bytes());
    hex::encode(&hash.finalize()[..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(key: &str, count: u64) -> Counted {
        Counted {
            rule: "bulk".into(),
            key: key.into(),
            count,
            window: Duration::from_secs(3600),
        }
    }

    #[tokio::test]
    async fn a_local_limit_refuses_past_its_budget_per_key() {
        let limiter = Limiter::local();
        for _ in 0..3 {
            limiter.count(&[limit("alice", 3)]).await.expect("within");
        }
        let refused = limiter.count(&[limit("alice", 3)]).await.unwrap_err();
        match refused {
            Refused::Limited {
                rule, retry_after, ..
            } => {
                assert_eq!(rule, "bulk");
                assert!(retry_after <= Duration::from_secs(3600));
            }
            other => panic!("{other:?}"),
        }
        // Another key has its own budget.
        limiter.count(&[limit("bob", 3)]).await.expect("bob's own");
    }

    #[tokio::test]
    async fn a_full_table_forgets_only_counters_whose_window_is_over_whatever_its_length() {
        let limiter = Limiter::local();
        let daily = Counted {
            rule: "daily".into(),
            key: "alice".into(),
            count: 1,
            window: Duration::from_secs(86_400),
        };
        limiter.count(std::slice::from_ref(&daily)).await.unwrap();
        // A shorter window's keys fill the table, and one more asks for
        // room: none of the windows counted is over.
        for n in 0..MAX_LOCAL_COUNTERS {
            let _ = limiter.count(&[limit(&format!("key {n}"), 5)]).await;
        }
        let daily_again = limiter.count(&[daily]).await.unwrap_err();
        assert!(
            matches!(daily_again, Refused::Limited { ref rule, .. } if rule == "daily"),
            "the day's count was kept: {daily_again:?}"
        );
    }
}
