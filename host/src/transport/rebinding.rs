//! DNS-rebinding protection for the HTTP transport: the `Host` and `Origin`
//! checks, run first on `/mcp` and `/metrics`, before anything of
//! toolhost's (drain, authentication, per-caller bounds, body triage and
//! its audit record) or rmcp's looks at a request.
//!
//! A rebinding page makes a browser send requests to a loopback server
//! under the attacker's name: its `Host` names the attacker's host, and a
//! cross-origin request carries the page's `Origin`. So a request must name
//! an allowed host (loopback names, the listen address, `http.allowed_hosts`)
//! and, if it carries an `Origin`, an allowed origin (the server's own
//! address, `http.allowed_origins`). This is the one check of both: rmcp's
//! own is switched off, since it would repeat this one, per request, on
//! requests that already passed it.
//!
//! Origins are compared as (scheme, host, port). An `Origin` without a port
//! means its scheme's default port (RFC 6454), and so does an
//! `http.allowed_origins` entry without one (config resolution writes the
//! port in); `:*` allows any port.

use axum::http::header::{HOST, ORIGIN};
use axum::http::uri::Authority;
use axum::http::{HeaderMap, Uri};

/// The allowed `Host` and `Origin` values, parsed once at start.
#[derive(Debug)]
pub struct RebindingGuard {
    hosts: Vec<(String, Option<u16>)>,
    origins: Vec<AllowedOrigin>,
}

/// One allowed origin.
#[derive(Debug, PartialEq, Eq)]
enum AllowedOrigin {
    /// `"null"`: `Origin: null` (a sandboxed frame, a file).
    Null,
    /// Scheme, host and the ports it allows.
    Tuple {
        scheme: String,
        host: String,
        port: AllowedPort,
    },
}

/// The ports an allowed origin matches.
#[derive(Debug, PartialEq, Eq)]
enum AllowedPort {
    /// `:*`.
    Any,
    /// Exactly this one (an entry without a port was given its scheme's
    /// default by config resolution).
    Exact(u16),
    /// A scheme without a default port, written without one: only an
    /// `Origin` without a port.
    None,
}

/// Why a request was refused; the text says which key to change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// No `Host` header, or one that is not a host and port.
    #[error("the request has no valid Host header")]
    BadHost,
    /// A `Host` this server does not answer to.
    #[error(
        "the Host header names a host this server does not answer to (DNS-rebinding \
         protection): add the name clients use to http.allowed_hosts"
    )]
    HostNotAllowed,
    /// An `Origin` that is not an origin.
    #[error("the Origin header is not an origin")]
    BadOrigin,
    /// An `Origin` that is not allowed.
    #[error(
        "the Origin header names an origin that may not call this server: add it to \
         http.allowed_origins (scheme, host and port)"
    )]
    OriginNotAllowed,
}

impl RebindingGuard {
    /// A guard allowing `hosts` (`localhost`, `example.com:8080`, `::1`;
    /// without a port, any port) and `origins` (as config resolution
    /// writes them: `https://app.example.com:443`, `http://localhost:*`,
    /// `null`). Entries that parse as neither are ignored.
    pub fn new(hosts: &[String], origins: &[String]) -> RebindingGuard {
        RebindingGuard {
            hosts: hosts.iter().filter_map(|h| parse_allowed_host(h)).collect(),
            origins: origins
                .iter()
                .filter_map(|o| parse_allowed_origin(o))
                .collect(),
        }
    }

    /// Whether a request with `headers` (and `uri`, whose authority an
    /// HTTP/2 request carries instead of `Host`) may be served.
    pub fn check(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), Refusal> {
        let authority = match headers.get(HOST) {
            Some(value) => value
                .to_str()
                .ok()
                .and_then(|v| v.parse::<Authority>().ok())
                .ok_or(Refusal::BadHost)?,
            None => uri.authority().cloned().ok_or(Refusal::BadHost)?,
        };
        let host = normalise_host(authority.host());
        let port = authority.port_u16();
        let host_allowed = self.hosts.iter().any(|(allowed, allowed_port)| {
            *allowed == host && allowed_port.is_none_or(|p| Some(p) == port)
        });
        if !host_allowed {
            return Err(Refusal::HostNotAllowed);
        }
        let mut origins = headers.get_all(ORIGIN).iter();
        let Some(origin) = origins.next() else {
            return Ok(());
        };
        if origins.next().is_some() {
            return Err(Refusal::BadOrigin);
        }
        let origin = origin.to_str().map_err(|_| Refusal::BadOrigin)?.trim();
        if origin.eq_ignore_ascii_case("null") {
            return if self.origins.contains(&AllowedOrigin::Null) {
                Ok(())
            } else {
                Err(Refusal::OriginNotAllowed)
            };
        }
        let (scheme, host, port) = parse_origin(origin).ok_or(Refusal::BadOrigin)?;
        let port = port.or_else(|| default_port(&scheme));
        let allowed = self.origins.iter().any(|allowed| match allowed {
            AllowedOrigin::Null => false,
            AllowedOrigin::Tuple {
                scheme: s,
                host: h,
                port: p,
            } => {
                *s == scheme
                    && *h == host
                    && match p {
                        AllowedPort::Any => true,
                        AllowedPort::Exact(p) => port == Some(*p),
                        AllowedPort::None => port.is_none(),
                    }
            }
        });
        if allowed {
            Ok(())
        } else {
            Err(Refusal::OriginNotAllowed)
        }
    }
}

/// The port a scheme implies when an origin omits it.
fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

/// A host as compared: lower case, an IPv6 address without brackets.
fn normalise_host(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

/// An allowed `Host`: `name`, `name:port`, an IP address (IPv6 with or
/// without brackets).
fn parse_allowed_host(allowed: &str) -> Option<(String, Option<u16>)> {
    let allowed = allowed.trim();
    if allowed.is_empty() {
        return None;
    }
    match allowed.parse::<Authority>() {
        Ok(authority) => Some((normalise_host(authority.host()), authority.port_u16())),
        // `::1`: an IPv6 address without brackets reads as no authority.
        Err(_) => Some((normalise_host(allowed), None)),
    }
}

/// An `Origin` value: scheme, host, and the port if written.
fn parse_origin(origin: &str) -> Option<(String, String, Option<u16>)> {
    let (scheme, rest) = origin.split_once("://")?;
    if rest.is_empty() || rest.contains(['/', '?', '#', '@']) {
        return None;
    }
    let authority: Authority = rest.parse().ok()?;
    Some((
        scheme.to_ascii_lowercase(),
        normalise_host(authority.host()),
        authority.port_u16(),
    ))
}

/// An allowed origin as config resolution writes it.
fn parse_allowed_origin(allowed: &str) -> Option<AllowedOrigin> {
    let allowed = allowed.trim();
    if allowed.eq_ignore_ascii_case("null") {
        return Some(AllowedOrigin::Null);
    }
    if let Some(base) = allowed.strip_suffix(":*") {
        let (scheme, host, None) = parse_origin(base)? else {
            return None;
        };
        return Some(AllowedOrigin::Tuple {
            scheme,
            host,
            port: AllowedPort::Any,
        });
    }
    let (scheme, host, port) = parse_origin(allowed)?;
    let port = match port.or_else(|| default_port(&scheme)) {
        Some(port) => AllowedPort::Exact(port),
        None => AllowedPort::None,
    };
    Some(AllowedOrigin::Tuple { scheme, host, port })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(HOST, host.parse().unwrap());
        if let Some(origin) = origin {
            headers.insert(ORIGIN, origin.parse().unwrap());
        }
        headers
    }

    fn guard() -> RebindingGuard {
        RebindingGuard::new(
            &[
                "localhost".into(),
                "127.0.0.1".into(),
                "::1".into(),
                "mcp.example.com:8443".into(),
            ],
            &[
                "https://app.example.com:443".into(),
                "http://localhost:*".into(),
                "chrome-extension://abc".into(),
            ],
        )
    }

    #[test]
    fn hosts_match_by_name_and_by_port_when_the_entry_names_one() {
        let uri = Uri::from_static("/mcp");
        let g = guard();
        assert_eq!(g.check(&uri, &headers("localhost:9", None)), Ok(()));
        assert_eq!(g.check(&uri, &headers("[::1]:9", None)), Ok(()));
        assert_eq!(
            g.check(&uri, &headers("MCP.example.com:8443", None)),
            Ok(())
        );
        assert_eq!(
            g.check(&uri, &headers("mcp.example.com:443", None)),
            Err(Refusal::HostNotAllowed)
        );
        assert_eq!(
            g.check(&uri, &headers("attacker.example", None)),
            Err(Refusal::HostNotAllowed)
        );
    }

    #[test]
    fn an_origin_without_a_port_means_the_default_port_of_its_scheme() {
        let uri = Uri::from_static("/mcp");
        let g = guard();
        let origin = |o| g.check(&uri, &headers("localhost", Some(o)));
        assert_eq!(origin("https://app.example.com"), Ok(()));
        assert_eq!(origin("https://app.example.com:443"), Ok(()));
        assert_eq!(
            origin("https://app.example.com:8443"),
            Err(Refusal::OriginNotAllowed)
        );
        assert_eq!(
            origin("http://app.example.com"),
            Err(Refusal::OriginNotAllowed)
        );
        assert_eq!(origin("http://localhost:5173"), Ok(()));
        assert_eq!(origin("chrome-extension://abc"), Ok(()));
        assert_eq!(origin("null"), Err(Refusal::OriginNotAllowed));
        assert_eq!(origin("not an origin"), Err(Refusal::BadOrigin));
    }
}
