//! Sending finished spans to the collector without ever holding up a call.
//!
//! [`QueueProcessor`] is the SDK's span processor here: a span that ends is
//! put on a bounded queue (a vector behind a mutex held only to push or to
//! take the whole batch, never across an export), and one thread of its
//! own, with a Tokio runtime of its own, takes batches off the queue and
//! exports them under `telemetry.export_timeout_secs`. A full queue, an
//! export that fails or times out, and a span left at exit are each dropped
//! and counted (`toolhost_trace_spans_dropped_total{reason}`), so a
//! collector that is down or slow costs dropped spans and nothing else:
//! the serving runtime never runs an export, and no call waits for one.
//!
//! **The export thread is woken once per batch, not once per span**: by
//! the span that finds the queue empty (the batch's first), by the one
//! that fills a batch, and by a flush; the spans between are pushed
//! without a wake-up. A wake-up per span (a channel's receiver waiting for
//! the next span) cost a call about as much as making its spans did: a
//! futex wake on the serving thread, and a context switch of the export
//! thread that competes with calls for the cores (measurement 21 in
//! docs/benchmarks.md).
//!
//! **The export thread runs only on a core nothing else wants**
//! (`SCHED_IDLE`, on Linux, where a scheduling policy belongs to a
//! thread): converting spans to OTLP, encoding and sending them is most of
//! what a sampled call costs the machine, and a batch of them, sent while a
//! call was being answered, took a core from the call or from its client
//! and was most of the calls' p99 at sampling 1.0 (measurement 21). Under
//! `SCHED_IDLE` a serving thread that wakes preempts the export at once;
//! at the same priority, or at nice 10, it did not (docs/benchmarks.md).
//! The price: while every core is busy with calls, nothing is exported;
//! the queue fills, and what does not fit is dropped and counted
//! (`queue_full`), never waited for. The calls come first.
//!
//! **A collector's partial success is counted** (over http/protobuf): the
//! spans its answer says it rejected are dropped spans
//! (`reason="rejected"`), not exported ones. Over gRPC the exporter crate
//! keeps the answer to itself (it only logs it), so there every span of
//! an answered export counts as exported.
//!
//! **Rationale** for not using the SDK's `BatchSpanProcessor`: it drops
//! what does not fit too, but counts it only in its own log line at
//! shutdown; operators need the count while serving, as a metric.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytes::Bytes;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig, WithTonicConfig};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceResponse;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SpanData, SpanExporter, SpanProcessor};
use prost::Message as _;

use crate::config::telemetry::{OtlpProtocol, TelemetrySettings};

/// Most spans sent in one export.
const BATCH_SPANS: usize = 512;

/// How long a batch waits to fill before it is sent anyway.
const BATCH_WAIT: Duration = Duration::from_millis(200);

/// Longest wait at exit for the queue to be sent.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(2);

/// Largest answer read from the collector (an OTLP answer is a few bytes;
/// a partial-success message a few hundred).
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// What waits for the export thread.
#[derive(Default)]
struct Waiting {
    /// Finished, sampled spans, oldest first; at most `capacity`.
    spans: Vec<SpanData>,
    /// Flushes asked for: each is answered once everything queued before
    /// it was sent.
    flushes: Vec<SyncSender<()>>,
    /// The provider's resource (`service.name`), for the exporter.
    resource: Option<opentelemetry_sdk::Resource>,
    /// The processor is gone: send what is left, then end.
    closed: bool,
    /// The export thread has ended: nothing queued would be sent.
    stopped: bool,
}

/// The queue the serving threads and the export thread share.
struct Queue {
    /// What waits, behind a mutex held only to push or to take.
    waiting: Mutex<Waiting>,
    /// Wakes the export thread (see the module doc for when).
    wake: Condvar,
    /// Most spans waiting (`telemetry.queue_spans`).
    capacity: usize,
}

impl Queue {
    /// The waiting spans; a thread that panicked holding the lock left
    /// them consistent (every change is one push or one take).
    fn lock(&self) -> MutexGuard<'_, Waiting> {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Marks the queue stopped when the export thread ends, however it ends.
struct Stopped(Arc<Queue>);

impl Drop for Stopped {
    fn drop(&mut self) {
        let mut waiting = self.0.lock();
        waiting.stopped = true;
        let left = waiting.spans.len() as u64;
        waiting.spans.clear();
        // A flush asked for now would never be answered.
        waiting.flushes.clear();
        drop(waiting);
        if left > 0 {
            crate::metrics::trace_spans_dropped("export_stopped", left);
        }
    }
}

/// The span processor: a bounded queue in front of one export thread.
pub struct QueueProcessor {
    /// The queue, shared with the export thread.
    queue: Arc<Queue>,
    /// The export thread, joined at shutdown.
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl std::fmt::Debug for QueueProcessor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueueProcessor")
            .field("capacity", &self.queue.capacity)
            .finish_non_exhaustive()
    }
}

impl QueueProcessor {
    /// Starts the export thread for `settings`; errors: the exporter cannot
    /// be built (the endpoint or a header cannot be used).
    pub fn start(settings: &TelemetrySettings) -> anyhow::Result<QueueProcessor> {
        let queue = Arc::new(Queue {
            waiting: Mutex::new(Waiting::default()),
            wake: Condvar::new(),
            capacity: settings.queue_spans,
        });
        let (ready, built) = std::sync::mpsc::sync_channel(1);
        let settings = settings.clone();
        let shared = queue.clone();
        let thread = std::thread::Builder::new()
            .name("toolhost-traces".into())
            .spawn(move || {
                yield_to_calls();
                let stopped = Stopped(shared);
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(e) => {
                        let _ = ready.send(Err(anyhow::anyhow!("no runtime for exports: {e}")));
                        return;
                    }
                };
                // tonic's channel needs the runtime while it is built.
                let exporter = runtime.block_on(async { exporter(&settings) });
                match exporter {
                    Ok((mut exporter, rejected)) => {
                        let _ = ready.send(Ok(()));
                        let sending = Sending {
                            runtime: &runtime,
                            rejected: &rejected,
                            timeout: settings.export_timeout,
                        };
                        export_loop(&sending, &mut exporter, &stopped.0);
                        let _ = exporter.shutdown();
                    }
                    Err(e) => {
                        let _ = ready.send(Err(e));
                    }
                }
            })?;
        built
            .recv()
            .map_err(|_| anyhow::anyhow!("the trace export thread ended at start"))??;
        Ok(QueueProcessor {
            queue,
            thread: Mutex::new(Some(thread)),
        })
    }
}

impl Drop for QueueProcessor {
    fn drop(&mut self) {
        // The thread sends what is left and ends.
        self.queue.lock().closed = true;
        self.queue.wake.notify_one();
    }
}

impl SpanProcessor for QueueProcessor {
    fn on_start(&self, _span: &mut opentelemetry_sdk::trace::Span, _cx: &opentelemetry::Context) {}

    fn on_end(&self, span: SpanData) {
        if !span.span_context.is_sampled() {
            return;
        }
        let mut waiting = self.queue.lock();
        if waiting.stopped {
            drop(waiting);
            crate::metrics::trace_spans_dropped("export_stopped", 1);
            return;
        }
        if waiting.spans.len() >= self.queue.capacity {
            drop(waiting);
            crate::metrics::trace_spans_dropped("queue_full", 1);
            return;
        }
        waiting.spans.push(span);
        let queued = waiting.spans.len();
        drop(waiting);
        // The batch's first span starts its wait; a full batch ends it.
        if queued == 1 || queued == BATCH_SPANS {
            self.queue.wake.notify_one();
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        let (done, flushed) = std::sync::mpsc::sync_channel(1);
        {
            let mut waiting = self.queue.lock();
            if waiting.stopped {
                return Err(OTelSdkError::InternalFailure(
                    "the trace export thread has ended".into(),
                ));
            }
            waiting.flushes.push(done);
        }
        self.queue.wake.notify_one();
        wait_flushed(&flushed)
    }

    fn set_resource(&mut self, resource: &opentelemetry_sdk::Resource) {
        // Set once, as the provider is built, before any span.
        self.queue.lock().resource = Some(resource.clone());
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        let flushed = self.force_flush();
        // The thread ends when the processor is dropped; it is not joined
        // here (a collector that hangs must not hold up the exit).
        drop(self.thread.lock().map(|mut t| t.take()));
        flushed
    }
}

/// Puts the calling thread under `SCHED_IDLE` (see the module doc). A
/// failure leaves it as it was, logged at debug.
fn yield_to_calls() {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: `sched_setscheduler` with pid 0 changes only the calling
        // thread's policy; `param` is a valid parameter for `SCHED_IDLE`
        // (its priority must be 0) and outlives the call.
        if unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) } != 0 {
            tracing::debug!(
                "the trace export thread keeps its scheduling policy: {}",
                std::io::Error::last_os_error()
            );
        }
    }
}

/// Waits for a flush's answer, at most [`SHUTDOWN_WAIT`].
fn wait_flushed(flushed: &Receiver<()>) -> OTelSdkResult {
    flushed
        .recv_timeout(SHUTDOWN_WAIT)
        .map_err(|_| OTelSdkError::Timeout(SHUTDOWN_WAIT))
}

/// What the export thread sends with.
struct Sending<'a> {
    /// The thread's own runtime.
    runtime: &'a tokio::runtime::Runtime,
    /// The spans the collector's answers rejected.
    rejected: &'a Rejected,
    /// `telemetry.export_timeout_secs`.
    timeout: Duration,
}

/// Takes batches off the queue and exports each, until the processor is
/// gone and nothing is left.
fn export_loop(
    sending: &Sending<'_>,
    exporter: &mut opentelemetry_otlp::SpanExporter,
    queue: &Queue,
) {
    loop {
        // The next batch's room, made before the lock is taken: this thread
        // may lose its core at any moment (`SCHED_IDLE`), and a serving
        // thread ending a span meanwhile waits for the lock, so nothing
        // slower than a swap happens while it is held.
        let next = Vec::with_capacity(BATCH_SPANS);
        let (spans, flushes, resource, closed) = {
            let mut waiting = queue.lock();
            // Wait for a batch's first span (or a flush, or the end).
            while waiting.spans.is_empty() && waiting.flushes.is_empty() && !waiting.closed {
                waiting = queue
                    .wake
                    .wait(waiting)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
            }
            // Then let the batch fill a little; only a full batch, a flush
            // or the end wakes this wait early.
            let until = Instant::now() + BATCH_WAIT;
            while waiting.spans.len() < BATCH_SPANS && waiting.flushes.is_empty() && !waiting.closed
            {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                waiting = queue
                    .wake
                    .wait_timeout(waiting, left)
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .0;
            }
            (
                // The next batch starts with room for a full one, so the
                // serving threads push without growing it.
                std::mem::replace(&mut waiting.spans, next),
                std::mem::take(&mut waiting.flushes),
                waiting.resource.take(),
                waiting.closed,
            )
        };
        if let Some(resource) = resource {
            exporter.set_resource(&resource);
        }
        let mut spans = spans.into_iter().peekable();
        while spans.peek().is_some() {
            let batch: Vec<SpanData> = spans.by_ref().take(BATCH_SPANS).collect();
            export(sending, exporter, batch);
        }
        for done in flushes {
            let _ = done.try_send(());
        }
        if closed && queue.lock().spans.is_empty() {
            return;
        }
    }
}

/// Exports `batch` under the timeout, counting its spans as dropped if the
/// export fails, and those the collector rejected; measures the export and
/// how far behind it ran.
fn export(
    sending: &Sending<'_>,
    exporter: &mut opentelemetry_otlp::SpanExporter,
    batch: Vec<SpanData>,
) {
    let count = batch.len() as u64;
    let lag = batch
        .iter()
        .map(|span| span.end_time)
        .min()
        .and_then(|oldest| std::time::SystemTime::now().duration_since(oldest).ok())
        .unwrap_or_default();
    let began = Instant::now();
    // What an earlier export's answer left (one that timed out after it
    // was answered) is not this one's.
    sending.rejected.take();
    let result = sending
        .runtime
        .block_on(async { tokio::time::timeout(sending.timeout, exporter.export(batch)).await });
    let mut exported = count;
    let outcome = match result {
        Ok(Ok(())) => {
            let rejected = sending.rejected.take().min(count);
            if rejected > 0 {
                tracing::debug!("the collector rejected {rejected} of {count} spans");
                crate::metrics::trace_spans_dropped("rejected", rejected);
                exported -= rejected;
            }
            "ok"
        }
        Ok(Err(e)) => {
            tracing::debug!("a trace export failed ({e}); {count} spans dropped");
            crate::metrics::trace_spans_dropped("export_failed", count);
            "failed"
        }
        Err(_) => {
            tracing::debug!(
                "a trace export took longer than telemetry.export_timeout_secs; {count} spans dropped"
            );
            crate::metrics::trace_spans_dropped("export_failed", count);
            "timeout"
        }
    };
    crate::metrics::trace_export(outcome, exported, began.elapsed(), lag);
}

/// Spans a collector's answers said it rejected (an OTLP partial
/// success), counted by the HTTP client as answers arrive and taken by
/// [`export`] after each export.
#[derive(Debug, Clone, Default)]
struct Rejected(Arc<AtomicU64>);

impl Rejected {
    /// The spans rejected since the last take.
    fn take(&self) -> u64 {
        self.0.swap(0, Ordering::Relaxed)
    }

    /// Counts the spans a successful answer's `body` says were rejected
    /// (an empty or unreadable body rejects none).
    fn count_in(&self, body: &[u8]) {
        let Ok(answer) = ExportTraceServiceResponse::decode(body) else {
            return;
        };
        if let Some(partial) = answer.partial_success {
            let rejected = u64::try_from(partial.rejected_spans).unwrap_or(0);
            if rejected > 0 || !partial.error_message.is_empty() {
                tracing::debug!(
                    "the collector rejected {rejected} spans: {}",
                    toolhost_runtime::text::escape_controls(&partial.error_message)
                );
            }
            self.0.fetch_add(rejected, Ordering::Relaxed);
        }
    }
}

/// The OTLP exporter `settings` ask for, and where its HTTP client counts
/// the spans the collector rejected (never over gRPC: see the module doc).
fn exporter(
    settings: &TelemetrySettings,
) -> anyhow::Result<(opentelemetry_otlp::SpanExporter, Rejected)> {
    let rejected = Rejected::default();
    let exporter = match settings.protocol {
        OtlpProtocol::HttpProtobuf => {
            let client = reqwest::Client::builder()
                .timeout(settings.export_timeout)
                // A collector's redirect is not followed with our headers.
                .redirect(reqwest::redirect::Policy::none())
                .build()?;
            opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                .with_endpoint(settings.endpoint.clone())
                .with_timeout(settings.export_timeout)
                .with_headers(settings.headers.iter().cloned().collect())
                .with_http_client(Http {
                    client,
                    rejected: rejected.clone(),
                })
                .build()?
        }
        OtlpProtocol::Grpc => {
            let mut metadata = tonic::metadata::MetadataMap::new();
            for (name, value) in &settings.headers {
                let name = tonic::metadata::MetadataKey::from_bytes(name.as_bytes())?;
                metadata.insert(name, value.parse()?);
            }
            opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .with_endpoint(settings.endpoint.clone())
                .with_timeout(settings.export_timeout)
                .with_metadata(metadata)
                .build()?
        }
    };
    Ok((exporter, rejected))
}

/// The exporter's HTTP client: the host's reqwest, with rustls and the
/// export timeout; it reads each successful answer for rejected spans.
#[derive(Debug)]
struct Http {
    client: reqwest::Client,
    rejected: Rejected,
}

#[async_trait::async_trait]
impl opentelemetry_http::HttpClient for Http {
    async fn send_bytes(
        &self,
        request: http::Request<Bytes>,
    ) -> Result<http::Response<Bytes>, opentelemetry_http::HttpError> {
        let (parts, body) = request.into_parts();
        let mut response = self
            .client
            .request(parts.method, parts.uri.to_string())
            .headers(parts.headers)
            .body(body)
            .send()
            .await?;
        let status = response.status();
        let headers = response.headers().clone();
        let mut answer = Vec::new();
        while let Some(chunk) = response.chunk().await? {
            if answer.len() + chunk.len() > MAX_ANSWER_BYTES {
                break;
            }
            answer.extend_from_slice(&chunk);
        }
        if status.is_success() {
            self.rejected.count_in(&answer);
        }
        let mut built = http::Response::builder()
            .status(status)
            .body(Bytes::from(answer))?;
        *built.headers_mut() = headers;
        Ok(built)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scheduling policy of this process's thread named `name`.
    #[cfg(target_os = "linux")]
    fn policy_of_thread(name: &str) -> Option<i32> {
        std::fs::read_dir("/proc/self/task").ok()?.find_map(|task| {
            let task = task.ok()?;
            let comm = std::fs::read_to_string(task.path().join("comm")).ok()?;
            if comm.trim_end() != name {
                return None;
            }
            let tid: i32 = task.file_name().to_str()?.parse().ok()?;
            // SAFETY: reads the policy of a thread of this process.
            Some(unsafe { libc::sched_getscheduler(tid) })
        })
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_export_thread_runs_only_when_no_serving_thread_wants_the_core() {
        let settings = TelemetrySettings {
            endpoint: "http://127.0.0.1:9/v1/traces".into(),
            protocol: OtlpProtocol::HttpProtobuf,
            headers: Vec::new(),
            sampling_ratio: 1.0,
            service_name: "toolhost-test".into(),
            queue_spans: 16,
            export_timeout: Duration::from_secs(1),
        };
        let processor = QueueProcessor::start(&settings).unwrap();
        // The thread sets its policy before it reports the exporter built,
        // which `start` waited for.
        assert_eq!(
            policy_of_thread("toolhost-traces"),
            Some(libc::SCHED_IDLE),
            "the export thread is under SCHED_IDLE"
        );
        assert_eq!(
            // SAFETY: reads the calling thread's policy.
            unsafe { libc::sched_getscheduler(0) },
            libc::SCHED_OTHER,
            "the thread that started it keeps its own"
        );
        drop(processor);
    }
}
