//! A real OTLP receiver for the trace tests, built on the official
//! protobuf definitions (`opentelemetry-proto`): the generated tonic
//! `TraceService` server for gRPC, and an HTTP handler decoding
//! `ExportTraceServiceRequest` bodies with prost for http/protobuf. What
//! arrives is kept as [`ExportedSpan`]s the tests read, and can be drawn as
//! a timeline ([`svg_timeline`]).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTracePartialSuccess, ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use prost::Message;
use tokio::sync::Notify;

/// One span as the collector received it.
#[derive(Debug, Clone)]
pub struct ExportedSpan {
    /// The span's name.
    pub name: String,
    /// Hex trace id.
    pub trace_id: String,
    /// Hex span id.
    pub span_id: String,
    /// Hex parent span id, empty for a root.
    pub parent: String,
    /// `server`, `client`, `internal`, …
    pub kind: &'static str,
    /// Every attribute, its value as text (arrays joined with `,`).
    pub attributes: BTreeMap<String, String>,
    /// `service.name` of its resource.
    pub service: String,
    /// Start and end, Unix nanoseconds.
    pub start: u64,
    /// End, Unix nanoseconds.
    pub end: u64,
    /// Whether its status is an error.
    pub error: bool,
}

impl ExportedSpan {
    /// The attribute `key`, if set.
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }
}

/// What the collector received, and a wake-up for each export.
#[derive(Default)]
struct Received {
    spans: Mutex<Vec<ExportedSpan>>,
    /// Spans the collector answered it rejected (a partial success).
    rejected: Mutex<u64>,
    exported: Notify,
}

impl Received {
    /// Keeps what `request` sent; returns how many spans it held.
    fn take(&self, request: ExportTraceServiceRequest) -> usize {
        let mut spans = self.spans.lock().unwrap();
        let before = spans.len();
        for resource in request.resource_spans {
            let service = resource
                .resource
                .as_ref()
                .and_then(|r| r.attributes.iter().find(|a| a.key == "service.name"))
                .map(|a| text(a.value.as_ref().and_then(|v| v.value.as_ref())))
                .unwrap_or_default();
            for scope in resource.scope_spans {
                for span in scope.spans {
                    spans.push(ExportedSpan {
                        name: span.name.clone(),
                        trace_id: hex::encode(&span.trace_id),
                        span_id: hex::encode(&span.span_id),
                        parent: hex::encode(&span.parent_span_id),
                        kind: match span.kind {
                            1 => "internal",
                            2 => "server",
                            3 => "client",
                            4 => "producer",
                            5 => "consumer",
                            _ => "unspecified",
                        },
                        attributes: span
                            .attributes
                            .iter()
                            .map(|a| {
                                (
                                    a.key.clone(),
                                    text(a.value.as_ref().and_then(|v| v.value.as_ref())),
                                )
                            })
                            .collect(),
                        service: service.clone(),
                        start: span.start_time_unix_nano,
                        end: span.end_time_unix_nano,
                        error: span.status.as_ref().is_some_and(|s| s.code == 2),
                    });
                }
            }
        }
        let taken = spans.len() - before;
        drop(spans);
        self.exported.notify_waiters();
        taken
    }
}

/// An attribute's value as text.
fn text(value: Option<&Any>) -> String {
    match value {
        Some(Any::StringValue(s)) => s.clone(),
        Some(Any::IntValue(i)) => i.to_string(),
        Some(Any::DoubleValue(d)) => d.to_string(),
        Some(Any::BoolValue(b)) => b.to_string(),
        Some(Any::ArrayValue(a)) => a
            .values
            .iter()
            .map(|v| text(v.value.as_ref()))
            .collect::<Vec<_>>()
            .join(","),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

/// A collector on loopback, over http/protobuf or gRPC.
pub struct Collector {
    /// `http://127.0.0.1:PORT`.
    pub endpoint: String,
    /// `"http/protobuf"` or `"grpc"`.
    pub protocol: &'static str,
    received: Arc<Received>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The gRPC service.
struct Grpc(Arc<Received>);

#[tonic::async_trait]
impl TraceService for Grpc {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let _ = self.0.take(request.into_inner());
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

impl Collector {
    /// A collector taking `POST /v1/traces` with protobuf bodies.
    pub async fn http() -> Collector {
        Collector::http_rejecting(0).await
    }

    /// A collector taking `POST /v1/traces` with protobuf bodies that
    /// answers each export with a partial success rejecting `per_export`
    /// of its spans (all of them, when it holds fewer), keeping them all.
    pub async fn http_rejecting(per_export: u64) -> Collector {
        let received = Arc::new(Received::default());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let state = received.clone();
        let app = axum::Router::new().route(
            "/v1/traces",
            axum::routing::post(move |body: axum::body::Bytes| {
                let state = state.clone();
                async move {
                    let request = ExportTraceServiceRequest::decode(body)
                        .expect("an ExportTraceServiceRequest");
                    let taken = state.take(request) as u64;
                    let mut answer = ExportTraceServiceResponse::default();
                    if per_export > 0 {
                        let rejected = per_export.min(taken);
                        *state.rejected.lock().unwrap() += rejected;
                        answer.partial_success = Some(ExportTracePartialSuccess {
                            rejected_spans: rejected as i64,
                            error_message: "span attributes over the limit".into(),
                        });
                    }
                    (
                        [("content-type", "application/x-protobuf")],
                        answer.encode_to_vec(),
                    )
                }
            }),
        );
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Collector {
            endpoint,
            protocol: "http/protobuf",
            received,
            task,
        }
    }

    /// A collector serving OTLP's gRPC `TraceService`.
    pub async fn grpc() -> Collector {
        let received = Arc::new(Received::default());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let service = TraceServiceServer::new(Grpc(received.clone()));
        let task = tokio::spawn(async move {
            let _ = tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener))
                .await;
        });
        Collector {
            endpoint,
            protocol: "grpc",
            received,
            task,
        }
    }

    /// The `[telemetry]` table pointing at this collector.
    pub fn config(&self) -> String {
        format!(
            "\n[telemetry]\nendpoint = \"{}\"\nprotocol = \"{}\"\nservice_name = \"toolhost-test\"\n",
            self.endpoint, self.protocol
        )
    }

    /// Spans the collector's answers said it rejected, so far.
    pub fn rejected(&self) -> u64 {
        *self.received.rejected.lock().unwrap()
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<ExportedSpan> {
        self.received.spans.lock().unwrap().clone()
    }

    /// Waits (woken by each export, at most 30 s) until the spans received
    /// hold one that `found` picks; returns every span of its trace.
    pub async fn trace_with(&self, found: impl Fn(&ExportedSpan) -> bool) -> Vec<ExportedSpan> {
        let wait = async {
            loop {
                let exported = self.received.exported.notified();
                tokio::pin!(exported);
                exported.as_mut().enable();
                let spans = self.spans();
                if let Some(span) = spans.iter().find(|s| found(s)) {
                    let trace = span.trace_id.clone();
                    return spans.into_iter().filter(|s| s.trace_id == trace).collect();
                }
                exported.await;
            }
        };
        tokio::time::timeout(Duration::from_secs(30), wait)
            .await
            .unwrap_or_else(|_| panic!("no such span arrived; received: {:#?}", self.spans()))
    }
}

/// `spans` in the order a trace viewer lists them, each with its depth:
/// from each root (a span whose parent is not among them: a client's span,
/// or none) down, children in start order.
fn ordered(spans: &[ExportedSpan]) -> Vec<(usize, &ExportedSpan)> {
    fn walk<'a>(
        spans: &'a [ExportedSpan],
        parent: &str,
        depth: usize,
        out: &mut Vec<(usize, &'a ExportedSpan)>,
    ) {
        let mut children: Vec<&ExportedSpan> =
            spans.iter().filter(|s| s.parent == parent).collect();
        children.sort_by_key(|s| s.start);
        for child in children {
            out.push((depth, child));
            walk(spans, &child.span_id, depth + 1, out);
        }
    }
    let ids: Vec<&str> = spans.iter().map(|s| s.span_id.as_str()).collect();
    let mut roots: Vec<&str> = spans
        .iter()
        .filter(|s| !ids.contains(&s.parent.as_str()))
        .map(|s| s.parent.as_str())
        .collect();
    roots.sort_unstable();
    roots.dedup();
    let mut out = Vec::new();
    for root in roots {
        walk(spans, root, 0, &mut out);
    }
    out
}

/// The span tree of `spans` as indented `kind name` lines, children in
/// start order: what a test compares.
pub fn tree(spans: &[ExportedSpan]) -> Vec<String> {
    ordered(spans)
        .into_iter()
        .map(|(depth, span)| format!("{}{} {}", "  ".repeat(depth), span.kind, span.name))
        .collect()
}

/// A span timeline of `spans` as an SVG picture: one bar per span, indented
/// by depth, placed by its start and end, labelled with its name and
/// duration (as a trace viewer draws one call).
pub fn svg_timeline(spans: &[ExportedSpan]) -> String {
    let ordered = ordered(spans);
    let begin = spans.iter().map(|s| s.start).min().unwrap_or(0);
    let finish = spans
        .iter()
        .map(|s| s.end)
        .max()
        .unwrap_or(1)
        .max(begin + 1);
    let (label_width, bar_width, row) = (300.0, 600.0, 26.0);
    let scale = bar_width / (finish - begin) as f64;
    let height = 40.0 + row * ordered.len() as f64;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"8\" y=\"18\" font-weight=\"bold\">trace {} ({:.1} ms)</text>\n",
        label_width + bar_width + 120.0,
        ordered.first().map_or("", |(_, s)| s.trace_id.as_str()),
        (finish - begin) as f64 / 1e6
    );
    for (i, (depth, span)) in ordered.iter().enumerate() {
        let y = 30.0 + row * i as f64;
        let x = label_width + (span.start - begin) as f64 * scale;
        let w = ((span.end.saturating_sub(span.start)) as f64 * scale).max(1.0);
        let color = match span.kind {
            "server" => "#4e79a7",
            "client" => "#f28e2b",
            _ => "#59a14f",
        };
        let name = span.name.replace('&', "&amp;").replace('<', "&lt;");
        svg.push_str(&format!(
            "<text x=\"{}\" y=\"{}\">{} {name}</text>\n\
             <rect x=\"{x:.1}\" y=\"{}\" width=\"{w:.1}\" height=\"16\" fill=\"{color}\"/>\n\
             <text x=\"{:.1}\" y=\"{}\">{:.2} ms</text>\n",
            8.0 + 14.0 * *depth as f64,
            y + 13.0,
            span.kind,
            y + 2.0,
            x + w + 4.0,
            y + 13.0,
            (span.end.saturating_sub(span.start)) as f64 / 1e6
        ));
    }
    svg.push_str("</svg>\n");
    svg
}
