//! What one call cost, measured by the host: CPU time of its execution,
//! its wall time split by what it waited for, its peak linear memory, the
//! epoch ticks it ran through, and what it sent upstream.
//!
//! Filled while the call runs (the store's `CallState`
//! and the record of its upstream requests) and handed to
//! [`CallHooks::finished`](crate::hooks::CallHooks::finished) once, when
//! the call ends, whatever the outcome.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Most distinct upstream hosts a cost names; more are counted, not named.
pub const MAX_HOSTS: usize = 16;

/// One call's cost. Times in microseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CallCost {
    /// CPU time of the threads while they ran the call's execution (the
    /// component's code and the host's work for its imports), summed over
    /// every poll of the call wherever the runtime ran it.
    pub cpu_us: u64,
    /// Wall time waiting for a turn (`limits.concurrent_calls`) and a pool
    /// slot before anything ran.
    pub queue_us: u64,
    /// Wall time from instantiation to the end: the component's own
    /// running, its upstream requests and any wait for a person.
    pub run_us: u64,
    /// Of `run_us`, the time spent in upstream HTTP requests (summed over
    /// requests, so requests in flight together may add up to more).
    pub upstream_us: u64,
    /// Of `run_us`, the time waiting for a person (a confirmation or a
    /// form).
    pub waiting_us: u64,
    /// The largest the call's linear memories together grew to, in bytes.
    pub peak_memory_bytes: u64,
    /// Epoch ticks (10 ms each) at which the component was found running.
    pub epoch_ticks: u64,
    /// Upstream HTTP requests sent (each redirect hop one).
    pub upstream_requests: u32,
    /// Request body bytes sent upstream.
    pub bytes_out: u64,
    /// Response body bytes read from upstream.
    pub bytes_in: u64,
    /// The hosts requests went to, each once, at most [`MAX_HOSTS`].
    pub hosts: Vec<String>,
    /// The limit the call hit, by its key (`limits.memory_mib`), if it hit
    /// one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
}

impl CallCost {
    /// Wall time of the whole call, queue and run.
    pub fn wall(&self) -> Duration {
        Duration::from_micros(self.queue_us + self.run_us)
    }
}

/// Microseconds of `d`, saturating.
pub(crate) fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// The CPU time the current thread has used.
fn thread_cpu() -> Duration {
    #[cfg(unix)]
    {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
    }
    #[cfg(not(unix))]
    {
        Duration::ZERO
    }
}

/// A future whose polls' thread CPU time is added to `total`: a task may
/// move between threads, but each poll runs on one.
pub(crate) struct CpuTimed<'a, F> {
    /// The future measured.
    pub inner: Pin<&'a mut F>,
    /// CPU time so far.
    pub total: &'a mut Duration,
}

impl<F: Future> Future for CpuTimed<'_, F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        let before = thread_cpu();
        let polled = this.inner.as_mut().poll(cx);
        *this.total += thread_cpu().saturating_sub(before);
        polled
    }
}
