//! A sliding-window rate limiter keyed by API key, with named buckets.
//!
//! Each bucket has a limit: at most `limit` admitted requests per key within
//! any `window`-long span. A request may count against several buckets at once
//! (StatusPro's bulk endpoint counts against both `"default"` and `"bulk"`);
//! it is admitted only if every one of them has room, and then it is recorded
//! in all of them. A rejected request is not recorded, as in Laravel's
//! throttle middleware, so a client that waits the advertised `Retry-After`
//! gets in.
//!
//! Time comes from [`tokio::time::Instant`], so tests that pause tokio's clock
//! can drive the window deterministically.

use std::{
    collections::{HashMap, VecDeque},
    sync::Mutex,
    time::Duration,
};

use tokio::time::Instant;

/// A request that exceeded a bucket's limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("rate limit of bucket '{bucket}' exceeded; retry after {retry_after:?}")]
pub struct RateLimited {
    /// The first full bucket the request would have counted against.
    pub bucket: String,
    /// How long until that bucket has room again.
    pub retry_after: Duration,
}

/// Where one key stands in one bucket: what a client's `X-Ratelimit-*`
/// headers report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BucketStatus {
    /// The bucket's limit per window.
    pub limit: u32,
    /// Requests the key may still make in the current window.
    pub remaining: u32,
    /// How long until the oldest admission in the window leaves it and frees
    /// a slot; zero when the key has no admission in the window.
    pub reset_after: Duration,
}

impl RateLimited {
    /// [`Self::retry_after`] in whole seconds, rounded up and at least 1: the
    /// value of a `Retry-After` header.
    pub fn retry_after_secs(&self) -> u64 {
        let secs = self.retry_after.as_secs() + u64::from(self.retry_after.subsec_nanos() > 0);
        secs.max(1)
    }
}

/// A sliding-window limiter shared by all connections of one sandbox.
///
/// Thread-safe; the lock is held only for the bookkeeping of one request.
#[derive(Debug)]
pub struct RateLimiter {
    /// Length of the sliding window.
    window: Duration,
    /// Limit of each named bucket; unknown bucket names are unlimited.
    limits: HashMap<String, u32>,
    /// Admission times per (bucket, key), oldest first, at most `limit` long.
    hits: Mutex<HashMap<(String, String), VecDeque<Instant>>>,
}

impl RateLimiter {
    /// A limiter with the given window and no buckets yet.
    pub fn new(window: Duration) -> Self {
        Self {
            window,
            limits: HashMap::new(),
            hits: Mutex::new(HashMap::new()),
        }
    }

    /// Adds (or replaces) a bucket allowing `limit` requests per key per window.
    ///
    /// A limit of 0 rejects every request counted against the bucket.
    pub fn with_bucket(mut self, name: impl Into<String>, limit: u32) -> Self {
        self.limits.insert(name.into(), limit);
        self
    }

    /// The sliding window length.
    pub fn window(&self) -> Duration {
        self.window
    }

    /// The limit of `bucket`, if it exists.
    pub fn limit(&self, bucket: &str) -> Option<u32> {
        self.limits.get(bucket).copied()
    }

    /// Admits one request by `key` counting against every bucket in `buckets`,
    /// or reports the first bucket that is full.
    ///
    /// Bucket names without a configured limit are ignored.
    pub fn acquire(&self, key: &str, buckets: &[&str]) -> Result<(), RateLimited> {
        let now = Instant::now();
        let mut hits = self
            .hits
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());

        for &bucket in buckets {
            let Some(&limit) = self.limits.get(bucket) else {
                continue;
            };
            let entry = hits.entry((bucket.to_owned(), key.to_owned())).or_default();
            while entry
                .front()
                .is_some_and(|&at| now.duration_since(at) >= self.window)
            {
                entry.pop_front();
            }
            if entry.len() >= limit as usize {
                // The oldest admission leaving the window frees a slot; with a
                // zero limit nothing ever does, so advertise a whole window.
                let retry_after = match entry.front() {
                    Some(&oldest) if limit > 0 => {
                        (oldest + self.window).saturating_duration_since(now)
                    }
                    _ => self.window,
                };
                return Err(RateLimited {
                    bucket: bucket.to_owned(),
                    retry_after,
                });
            }
        }

        for &bucket in buckets {
            if self.limits.contains_key(bucket) {
                hits.entry((bucket.to_owned(), key.to_owned()))
                    .or_default()
                    .push_back(now);
            }
        }
        Ok(())
    }

    /// Where `key` stands in `bucket` now, or `None` if the bucket has no
    /// limit. Read-only: nothing is recorded.
    pub fn status(&self, key: &str, bucket: &str) -> Option<BucketStatus> {
        let limit = *self.limits.get(bucket)?;
        let now = Instant::now();
        let hits = self
            .hits
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let in_window: Vec<Instant> = hits
            .get(&(bucket.to_owned(), key.to_owned()))
            .map(|entry| {
                entry
                    .iter()
                    .copied()
                    .filter(|&at| now.duration_since(at) < self.window)
                    .collect()
            })
            .unwrap_or_default();
        let used = u32::try_from(in_window.len()).unwrap_or(u32::MAX);
        let reset_after = in_window
            .first()
            .map(|&oldest| (oldest + self.window).saturating_duration_since(now))
            .unwrap_or(Duration::ZERO);
        Some(BucketStatus {
            limit,
            remaining: limit.saturating_sub(used),
            reset_after,
        })
    }

    /// Forgets every recorded request, as if the sandbox had just started.
    pub fn reset(&self) {
        self.hits
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter() -> RateLimiter {
        RateLimiter::new(Duration::from_secs(60))
            .with_bucket("default", 3)
            .with_bucket("bulk", 1)
    }

    #[tokio::test(start_paused = true)]
    async fn admits_up_to_the_limit_then_rejects_with_retry_after() {
        let limiter = limiter();
        for _ in 0..3 {
            limiter.acquire("k", &["default"]).unwrap();
            tokio::time::advance(Duration::from_secs(10)).await;
        }
        let err = limiter.acquire("k", &["default"]).unwrap_err();
        assert_eq!(err.bucket, "default");
        // First admission at t=0, now t=30: a slot frees at t=60.
        assert_eq!(err.retry_after, Duration::from_secs(30));
        assert_eq!(err.retry_after_secs(), 30);
    }

    #[tokio::test(start_paused = true)]
    async fn window_slides() {
        let limiter = limiter();
        for _ in 0..3 {
            limiter.acquire("k", &["default"]).unwrap();
            tokio::time::advance(Duration::from_secs(20)).await;
        }
        // t=60: the t=0 admission has left the window, the others have not.
        limiter.acquire("k", &["default"]).unwrap();
        assert!(limiter.acquire("k", &["default"]).is_err());
        tokio::time::advance(Duration::from_secs(20)).await;
        limiter.acquire("k", &["default"]).unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn keys_are_independent() {
        let limiter = limiter();
        for _ in 0..3 {
            limiter.acquire("a", &["default"]).unwrap();
        }
        assert!(limiter.acquire("a", &["default"]).is_err());
        limiter.acquire("b", &["default"]).unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_counts_in_all_its_buckets_only_when_admitted() {
        let limiter = limiter();
        limiter.acquire("k", &["default", "bulk"]).unwrap();
        let err = limiter.acquire("k", &["default", "bulk"]).unwrap_err();
        assert_eq!(err.bucket, "bulk");
        // The rejected bulk request did not use a default slot: two remain.
        limiter.acquire("k", &["default"]).unwrap();
        limiter.acquire("k", &["default"]).unwrap();
        assert!(limiter.acquire("k", &["default"]).is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn unknown_buckets_are_unlimited_and_reset_forgets() {
        let limiter = limiter();
        for _ in 0..100 {
            limiter.acquire("k", &["other"]).unwrap();
        }
        for _ in 0..3 {
            limiter.acquire("k", &["default"]).unwrap();
        }
        limiter.reset();
        limiter.acquire("k", &["default"]).unwrap();
    }

    #[test]
    fn retry_after_rounds_up_to_at_least_one_second() {
        let limited = |ms| RateLimited {
            bucket: "b".into(),
            retry_after: Duration::from_millis(ms),
        };
        assert_eq!(limited(0).retry_after_secs(), 1);
        assert_eq!(limited(1).retry_after_secs(), 1);
        assert_eq!(limited(1000).retry_after_secs(), 1);
        assert_eq!(limited(1001).retry_after_secs(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn status_reports_remaining_and_reset_without_recording() {
        let limiter = limiter();
        assert_eq!(limiter.status("k", "nope"), None);
        let fresh = limiter.status("k", "default").unwrap();
        assert_eq!(
            fresh,
            BucketStatus {
                limit: 3,
                remaining: 3,
                reset_after: Duration::ZERO
            }
        );
        limiter.acquire("k", &["default"]).unwrap();
        tokio::time::advance(Duration::from_secs(15)).await;
        limiter.acquire("k", &["default"]).unwrap();
        let status = limiter.status("k", "default").unwrap();
        assert_eq!(status.remaining, 1);
        // The first admission (t=0) leaves the window at t=60; now t=15.
        assert_eq!(status.reset_after, Duration::from_secs(45));
        // Reading the status used no slot.
        assert_eq!(limiter.status("k", "default").unwrap().remaining, 1);
        tokio::time::advance(Duration::from_secs(45)).await;
        assert_eq!(limiter.status("k", "default").unwrap().remaining, 2);
        assert_eq!(limiter.status("other", "default").unwrap().remaining, 3);
    }

    #[tokio::test(start_paused = true)]
    async fn zero_limit_rejects_everything() {
        let limiter = RateLimiter::new(Duration::from_secs(5)).with_bucket("none", 0);
        let err = limiter.acquire("k", &["none"]).unwrap_err();
        assert_eq!(err.retry_after, Duration::from_secs(5));
    }
}
