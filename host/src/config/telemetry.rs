//! `[telemetry]`: where traces go (ADR 0039). Raw as written, and resolved
//! into [`TelemetrySettings`]; the rows of its keys are in [`super::keys`].

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Result, bail};

use super::key;
use serde::Deserialize;

/// `[telemetry]`, as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTelemetry {
    /// `endpoint`: the OTLP collector's URL; no traces without it.
    pub endpoint: Option<String>,
    /// `protocol`: `"http/protobuf"` or `"grpc"`.
    pub protocol: Option<String>,
    /// `headers`: header name → the environment variable holding its value.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// `sampling_ratio`: the share of traces started here that are kept.
    pub sampling_ratio: Option<f64>,
    /// `service_name`: the resource's `service.name`.
    pub service_name: Option<String>,
    /// `queue_spans`: finished spans waiting for export before new ones
    /// are dropped.
    pub queue_spans: Option<u64>,
    /// `export_timeout_secs`: how long one export may take.
    pub export_timeout_secs: Option<f64>,
}

/// How spans are sent: OTLP over HTTP with protobuf bodies, or over gRPC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtlpProtocol {
    /// `http/protobuf`: `POST {endpoint}/v1/traces`.
    HttpProtobuf,
    /// `grpc`: the collector's `TraceService/Export`.
    Grpc,
}

/// `[telemetry]` resolved: present only when an endpoint is set.
#[derive(Clone, PartialEq)]
pub struct TelemetrySettings {
    /// Where spans go: for `http/protobuf` the full URL of the traces
    /// path (`/v1/traces` added to a bare origin).
    pub endpoint: String,
    /// How.
    pub protocol: OtlpProtocol,
    /// Headers sent with every export, values read from the environment
    /// at start.
    pub headers: Vec<(String, String)>,
    /// Of traces started here (no sampled parent), the share recorded.
    pub sampling_ratio: f64,
    /// `service.name`.
    pub service_name: String,
    /// Spans queued for export at most; more are dropped and counted.
    pub queue_spans: usize,
    /// One export's longest time.
    pub export_timeout: Duration,
}

impl std::fmt::Debug for TelemetrySettings {
    // Header values are secrets (a collector's API key): never shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TelemetrySettings")
            .field("endpoint", &self.endpoint)
            .field("protocol", &self.protocol)
            .field(
                "headers",
                &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field("sampling_ratio", &self.sampling_ratio)
            .field("service_name", &self.service_name)
            .field("queue_spans", &self.queue_spans)
            .field("export_timeout", &self.export_timeout)
            .finish()
    }
}

/// Resolves `[telemetry]`: `None` without `endpoint`.
pub fn resolve_telemetry(raw: RawTelemetry) -> Result<Option<TelemetrySettings>> {
    resolve_with(raw, |name| std::env::var(name).ok())
}

/// [`resolve_telemetry`] reading the environment through `env`.
fn resolve_with(
    raw: RawTelemetry,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<TelemetrySettings>> {
    let sampling_ratio = key!("telemetry.sampling_ratio").f64(raw.sampling_ratio)?;
    let queue_spans = key!("telemetry.queue_spans").u64(raw.queue_spans)?;
    let export_timeout = Duration::from_secs_f64(
        key!("telemetry.export_timeout_secs").f64(raw.export_timeout_secs)?,
    );
    // Without an endpoint the other keys have nothing to act on: each
    // key's default written out alone must change nothing.
    let Some(endpoint) = raw.endpoint else {
        return Ok(None);
    };
    let protocol = match raw.protocol.as_deref() {
        None | Some("http/protobuf") => OtlpProtocol::HttpProtobuf,
        Some("grpc") => OtlpProtocol::Grpc,
        Some(other) => bail!(
            "`telemetry.protocol` is {other:?}; write \"http/protobuf\" or \"grpc\" \
             (http/json is not supported)"
        ),
    };
    let url = url::Url::parse(&endpoint).map_err(|e| {
        anyhow::anyhow!(
            "`telemetry.endpoint` is not a URL ({e}); write e.g. \"http://127.0.0.1:4318\""
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        bail!("`telemetry.endpoint` must be an http:// or https:// URL");
    }
    if !url.username().is_empty() || url.password().is_some() {
        bail!(
            "`telemetry.endpoint` carries credentials; put them in `telemetry.headers`, read \
             from an environment variable (headers = {{ authorization = \"OTLP_AUTH\" }})"
        );
    }
    if protocol == OtlpProtocol::Grpc && url.scheme() == "https" {
        bail!(
            "`telemetry.protocol = \"grpc\"` is sent in plain text (a collector beside the \
             host); for TLS use \"http/protobuf\" with an https:// endpoint"
        );
    }
    let endpoint = match protocol {
        // A bare origin gets the signal's path, as OTLP's own
        // OTEL_EXPORTER_OTLP_ENDPOINT does; a path written is kept.
        OtlpProtocol::HttpProtobuf if matches!(url.path(), "" | "/") => {
            format!("{}/v1/traces", endpoint.trim_end_matches('/'))
        }
        _ => endpoint,
    };
    let mut headers = Vec::new();
    for (name, variable) in raw.headers {
        if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
            bail!("`telemetry.headers`: {name:?} is not a header name");
        }
        let Some(value) = env(&variable) else {
            bail!(
                "`telemetry.headers.{name}` names the environment variable {variable}, which is \
                 not set; set it, or remove the header"
            );
        };
        if http::HeaderValue::from_str(&value).is_err() {
            // The value is a secret: named, not shown.
            bail!(
                "`telemetry.headers.{name}`: the environment variable {variable} does not hold \
                 a valid header value"
            );
        }
        headers.push((name.to_ascii_lowercase(), value));
    }
    let service_name = raw.service_name.unwrap_or_else(|| "toolhost".to_string());
    if service_name.is_empty() {
        bail!("`telemetry.service_name` is empty; name the service, or leave the key out");
    }
    Ok(Some(TelemetrySettings {
        endpoint,
        protocol,
        headers,
        sampling_ratio,
        service_name,
        queue_spans: queue_spans as usize,
        export_timeout,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> RawTelemetry {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_bare_origin_gets_the_traces_path_and_headers_come_from_the_environment() {
        let settings = resolve_with(
            raw("endpoint = \"http://127.0.0.1:4318\"\nheaders = { Authorization = \"OTLP_KEY\" }"),
            |name| (name == "OTLP_KEY").then(|| "Bearer s3cret".to_string()),
        )
        .unwrap()
        .unwrap();
        assert_eq!(settings.endpoint, "http://127.0.0.1:4318/v1/traces");
        assert_eq!(
            settings.headers,
            vec![("authorization".into(), "Bearer s3cret".into())]
        );
        assert!(
            !format!("{settings:?}").contains("s3cret"),
            "a header's value is never shown"
        );
    }

    #[test]
    fn a_missing_variable_names_the_key_and_the_variable() {
        let error = resolve_with(
            raw("endpoint = \"http://c:4318\"\nheaders = { x-key = \"NOPE\" }"),
            |_| None,
        )
        .err()
        .unwrap()
        .to_string();
        assert!(
            error.contains("telemetry.headers.x-key") && error.contains("NOPE"),
            "{error}"
        );
    }

    #[test]
    fn no_endpoint_means_no_traces() {
        assert!(
            resolve_with(raw("protocol = \"grpc\""), |_| None)
                .unwrap()
                .is_none()
        );
        assert!(resolve_with(raw(""), |_| None).unwrap().is_none());
    }

    #[test]
    fn a_ratio_outside_zero_to_one_is_refused_naming_the_key() {
        let error = resolve_with(
            raw("endpoint = \"http://c:4318\"\nsampling_ratio = 1.5"),
            |_| None,
        )
        .err()
        .unwrap();
        assert!(format!("{error:#}").contains("sampling_ratio"), "{error:#}");
    }
}
