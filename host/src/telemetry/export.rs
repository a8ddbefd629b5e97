//! Sending finished spans to the collector without ever holding up a call.
//!
//! [`QueueProcessor`] is the SDK's span processor here: a span that ends is
//! put on a bounded queue with `try_send` (never waiting), and one thread
//! of its own, with a Tokio runtime of its own, takes batches off the queue
//! and exports them under `telemetry.export_timeout_secs`. A full queue, an
//! export that fails or times out, and a span left at exit are each dropped
//! and counted (`toolhost_trace_spans_dropped_total{reason}`), so a
//! collector that is down or slow costs dropped spans and nothing else:
//! the serving runtime never runs an export, and no call waits for one.
//!
//! **Rationale** for not using the SDK's `BatchSpanProcessor`: it drops
//! what does not fit too, but counts it only in its own log line at
//! shutdown; operators need the count while serving, as a metric.

use std::sync::Mutex;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig, WithTonicConfig};
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SpanData, SpanExporter, SpanProcessor};

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

/// What the export thread is handed.
enum Message {
    /// A finished, sampled span.
    Span(Box<SpanData>),
    /// Send everything queued, then say so.
    Flush(SyncSender<()>),
    /// The provider's resource (`service.name`), for the exporter.
    Resource(opentelemetry_sdk::Resource),
}

/// The span processor: a bounded queue in front of one export thread.
#[derive(Debug)]
pub struct QueueProcessor {
    /// The queue; `try_send` only.
    queue: SyncSender<Message>,
    /// The export thread, joined at shutdown.
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl QueueProcessor {
    /// Starts the export thread for `settings`; errors: the exporter cannot
    /// be built (the endpoint or a header cannot be used).
    pub fn start(settings: &TelemetrySettings) -> anyhow::Result<QueueProcessor> {
        let (queue, spans) = std::sync::mpsc::sync_channel(settings.queue_spans);
        let (ready, built) = std::sync::mpsc::sync_channel(1);
        let settings = settings.clone();
        let thread = std::thread::Builder::new()
            .name("toolhost-traces".into())
            .spawn(move || {
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
                    Ok(mut exporter) => {
                        let _ = ready.send(Ok(()));
                        export_loop(&runtime, &mut exporter, &spans, settings.export_timeout);
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

impl SpanProcessor for QueueProcessor {
    fn on_start(&self, _span: &mut opentelemetry_sdk::trace::Span, _cx: &opentelemetry::Context) {}

    fn on_end(&self, span: SpanData) {
        if !span.span_context.is_sampled() {
            return;
        }
        match self.queue.try_send(Message::Span(Box::new(span))) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => crate::metrics::trace_spans_dropped("queue_full", 1),
            Err(TrySendError::Disconnected(_)) => {
                crate::metrics::trace_spans_dropped("export_stopped", 1);
            }
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        let (done, flushed) = std::sync::mpsc::sync_channel(1);
        // A full queue is not waited for: flushing is best effort.
        self.queue
            .try_send(Message::Flush(done))
            .map_err(|_| OTelSdkError::InternalFailure("the span queue is full".into()))?;
        flushed
            .recv_timeout(SHUTDOWN_WAIT)
            .map_err(|_| OTelSdkError::Timeout(SHUTDOWN_WAIT))
    }

    fn set_resource(&mut self, resource: &opentelemetry_sdk::Resource) {
        // Set once, as the provider is built, before any span.
        let _ = self.queue.try_send(Message::Resource(resource.clone()));
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        let flushed = self.force_flush();
        // The thread ends when the queue's last sender goes, with the
        // processor; it is not joined here (a collector that hangs must
        // not hold up the exit).
        drop(self.thread.lock().map(|mut t| t.take()));
        flushed
    }
}

/// Takes batches off the queue and exports each under `timeout`, until
/// every sender is gone.
fn export_loop(
    runtime: &tokio::runtime::Runtime,
    exporter: &mut opentelemetry_otlp::SpanExporter,
    spans: &Receiver<Message>,
    timeout: Duration,
) {
    let mut batch = Vec::with_capacity(BATCH_SPANS);
    let mut flushes = Vec::new();
    loop {
        // Wait for a first span, then let the batch fill a little.
        let first = match spans.recv() {
            Ok(message) => message,
            Err(_) => return,
        };
        let until = Instant::now() + BATCH_WAIT;
        let mut next = Some(first);
        while let Some(message) = next.take() {
            match message {
                Message::Span(span) => batch.push(*span),
                Message::Flush(done) => {
                    flushes.push(done);
                    break;
                }
                Message::Resource(resource) => exporter.set_resource(&resource),
            }
            if batch.len() >= BATCH_SPANS {
                break;
            }
            next = match spans.recv_timeout(until.saturating_duration_since(Instant::now())) {
                Ok(message) => Some(message),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => None,
            };
        }
        if !batch.is_empty() {
            let sent = std::mem::replace(&mut batch, Vec::with_capacity(BATCH_SPANS));
            let count = sent.len() as u64;
            let result = runtime
                .block_on(async { tokio::time::timeout(timeout, exporter.export(sent)).await });
            match result {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    tracing::debug!("a trace export failed ({e}); {count} spans dropped");
                    crate::metrics::trace_spans_dropped("export_failed", count);
                }
                Err(_) => {
                    tracing::debug!(
                        "a trace export took longer than telemetry.export_timeout_secs; {count} spans dropped"
                    );
                    crate::metrics::trace_spans_dropped("export_failed", count);
                }
            }
        }
        for done in flushes.drain(..) {
            let _ = done.try_send(());
        }
    }
}

/// The OTLP exporter `settings` ask for.
fn exporter(settings: &TelemetrySettings) -> anyhow::Result<opentelemetry_otlp::SpanExporter> {
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
                .with_http_client(Http(client))
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
    Ok(exporter)
}

/// The exporter's HTTP client: the host's reqwest, with rustls and the
/// export timeout.
#[derive(Debug)]
struct Http(reqwest::Client);

#[async_trait::async_trait]
impl opentelemetry_http::HttpClient for Http {
    async fn send_bytes(
        &self,
        request: http::Request<Bytes>,
    ) -> Result<http::Response<Bytes>, opentelemetry_http::HttpError> {
        let (parts, body) = request.into_parts();
        let mut response = self
            .0
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
        let mut built = http::Response::builder()
            .status(status)
            .body(Bytes::from(answer))?;
        *built.headers_mut() = headers;
        Ok(built)
    }
}
