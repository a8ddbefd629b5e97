//! The operator's log: `tracing` to stderr, filtered by `TOOLHOST_LOG`.
//! stdout carries the protocol only, so nothing here ever writes there.
//!
//! Two set-ups:
//! - [`init_serving`] (`serve`): events go through tracing-appender's
//!   non-blocking writer in lossy mode. A client that never reads the
//!   server's stderr fills the pipe; then the writer thread blocks, its
//!   queue ([`QUEUED_LINES`]) fills, and further lines are dropped, while
//!   every worker keeps serving. The returned [`LogGuard`] flushes at exit.
//! - [`init_interactive`] (`list`, `check`, `call`, `new`): a person at a
//!   terminal reads every line, so writes are synchronous and nothing is
//!   dropped.
//!
//! Flushing at exit without ever touching stdout: tracing-appender's own
//! guard waits 100 ms to queue its shutdown message and, when the queue
//! stays full (stderr not being read), *prints* a complaint to stdout. So
//! [`LogGuard`] counts lines handed to the queue and lines the writer
//! thread finished, waits (at most [`FLUSH_WAIT`]) until the queue is
//! empty, and only then lets tracing-appender shut down; if stderr stays
//! stuck, the queued lines are abandoned (nobody is reading them).

use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use tracing_appender::non_blocking::{ErrorCounter, NonBlocking, NonBlockingBuilder, WorkerGuard};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

use crate::config::telemetry::TelemetrySettings;

/// Log lines waiting for stderr before new ones are dropped.
pub const QUEUED_LINES: usize = 8192;

/// Longest wait at exit for queued lines to reach stderr.
pub const FLUSH_WAIT: Duration = Duration::from_millis(500);

/// The filter when `TOOLHOST_LOG` is unset or invalid.
const DEFAULT_FILTER: &str = "info,rmcp=warn";

/// Installs the global subscriber writing to `writer`, and with
/// `telemetry` the layer exporting spans ([`crate::telemetry`]). The log's
/// filter (`TOOLHOST_LOG`) is the log layer's own: it does not decide which
/// spans are exported.
fn install<W>(
    writer: W,
    telemetry: Option<&TelemetrySettings>,
) -> anyhow::Result<Option<crate::telemetry::Telemetry>>
where
    W: for<'a> MakeWriter<'a> + Send + Sync + 'static,
{
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let log = tracing_subscriber::fmt::layer()
        .with_writer(writer)
        .with_ansi(io::IsTerminal::is_terminal(&io::stderr()))
        .with_filter(
            EnvFilter::try_from_env("TOOLHOST_LOG").unwrap_or_else(|_| DEFAULT_FILTER.into()),
        );
    let (traces, guard) = match telemetry {
        Some(settings) => {
            let (layer, guard) = crate::telemetry::layer(settings)?;
            (Some(layer), Some(guard))
        }
        None => (None, None),
    };
    tracing_subscriber::registry().with(traces).with(log).init();
    Ok(guard)
}

/// Logs synchronously to stderr (for the interactive commands).
pub fn init_interactive() {
    let _ = install(io::stderr, None);
}

/// Logs to stderr through a lossy non-blocking writer (for `serve`), and
/// exports spans as `telemetry` says. Keep the guard until the process
/// ends: dropping it flushes what is queued. Errors: the span exporter
/// cannot be built.
pub fn init_serving(telemetry: Option<&TelemetrySettings>) -> anyhow::Result<LogGuard> {
    let progress = Arc::new(Progress::default());
    let (writer, guard) = NonBlockingBuilder::default()
        .lossy(true)
        .buffered_lines_limit(QUEUED_LINES)
        .thread_name("toolhost-log")
        .finish(Delivered {
            inner: io::stderr(),
            progress: progress.clone(),
        });
    let dropped = writer.error_counter();
    let telemetry = install(
        Submitted {
            inner: writer,
            progress: progress.clone(),
        },
        telemetry,
    )?;
    Ok(LogGuard {
        guard: Some(guard),
        dropped,
        progress,
        telemetry,
    })
}

/// How many lines went into the queue and how many the writer thread
/// finished (written, or failed to write).
#[derive(Default)]
struct Progress {
    /// Lines handed to the non-blocking writer (queued or dropped).
    submitted: AtomicU64,
    /// Lines the writer thread is done with.
    delivered: Mutex<u64>,
    /// Signalled after each delivered line.
    delivered_one: Condvar,
}

/// The producer side: counts each event's line before queueing it.
struct Submitted {
    inner: NonBlocking,
    progress: Arc<Progress>,
}

impl<'a> MakeWriter<'a> for Submitted {
    type Writer = SubmittedLine;

    fn make_writer(&'a self) -> SubmittedLine {
        SubmittedLine {
            inner: self.inner.clone(),
            progress: self.progress.clone(),
        }
    }
}

/// One event's writer: the fmt layer writes each event with one
/// `write_all`.
struct SubmittedLine {
    inner: NonBlocking,
    progress: Arc<Progress>,
}

impl Write for SubmittedLine {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf).map(|()| buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.progress.submitted.fetch_add(1, Ordering::SeqCst);
        self.inner.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The writer thread's side: stderr, counting each line it is done with.
struct Delivered {
    inner: io::Stderr,
    progress: Arc<Progress>,
}

impl Write for Delivered {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        let result = self.inner.write_all(buf);
        let mut delivered = self
            .progress
            .delivered
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        *delivered += 1;
        self.progress.delivered_one.notify_all();
        result
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Keeps the log writer running; flushes it when dropped (see the module
/// doc for why this is not tracing-appender's guard alone).
pub struct LogGuard {
    /// The span exporter, sent what is queued first (its own log lines
    /// then still reach stderr).
    telemetry: Option<crate::telemetry::Telemetry>,
    guard: Option<WorkerGuard>,
    dropped: ErrorCounter,
    progress: Arc<Progress>,
}

impl Drop for LogGuard {
    fn drop(&mut self) {
        drop(self.telemetry.take());
        let Some(guard) = self.guard.take() else {
            return;
        };
        let dropped = self.dropped.dropped_lines();
        if dropped > 0 {
            tracing::warn!(
                "{dropped} log lines were dropped: stderr was not read fast enough \
                 (at most {QUEUED_LINES} lines wait for it)"
            );
        }
        let progress = &self.progress;
        let delivered = progress.delivered.lock().unwrap_or_else(|e| e.into_inner());
        let (delivered, waited) = progress
            .delivered_one
            .wait_timeout_while(delivered, FLUSH_WAIT, |delivered| {
                let queued = progress
                    .submitted
                    .load(Ordering::SeqCst)
                    .saturating_sub(self.dropped.dropped_lines() as u64);
                *delivered < queued
            })
            .unwrap_or_else(|e| e.into_inner());
        // The writer thread needs the lock to finish a line.
        drop(delivered);
        if waited.timed_out() {
            // stderr is not being read: the queue cannot drain, and
            // tracing-appender's guard would complain on stdout.
            std::mem::forget(guard);
        } else {
            drop(guard);
        }
    }
}

/// Guest and client text made safe for a line of the operator's log or
/// table: the runtime's one escaping rule.
pub use toolhost_runtime::text::escape_controls;
