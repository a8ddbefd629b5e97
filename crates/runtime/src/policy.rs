//! Network policy: which destinations a plugin may reach, and how.
//!
//! Deny by default. A request passes only if one of the plugin's
//! [`HostRule`]s covers all of it:
//! - the URL's **host**: an exact name, `*.domain`, or an IP address (names
//!   and addresses are compared in the URL parser's canonical form, so
//!   `http://2130706433/` is `127.0.0.1`);
//! - its **port** ([`PortRule`]): the scheme's own port (443 for https, 80
//!   for http) unless the rule names one, or any port with `port = "*"`;
//! - its **method**, when the rule lists `methods`;
//! - its **path**, when the rule lists `paths`: glob patterns matched against
//!   the percent-decoded, dot-segment-free path. A path that would still
//!   change meaning on the server (an encoded `..`, `..;`, a backslash) is
//!   refused rather than guessed at.
//!
//! After DNS resolution, loopback, private, link-local, shared and
//! cloud-metadata addresses are refused unless a covering rule allows them:
//! an IP-address rule allows exactly that address, and a name rule with
//! `allow_private = true` allows that name (on that rule's port, methods and
//! paths) to resolve to one. The address check runs in the host's DNS
//! resolver ([`crate::imports::http`]), so a public name that resolves to a
//! private address is refused before any connection is made.
//!
//! Credentials are scoped the same way ([`CredentialScope`]): a credential
//! goes only to its host and port (443 unless the entry names one), and
//! only over https, except to a loopback address; a request that would
//! carry it in clear text is refused.

use std::net::IpAddr;

use reqwest::Url;

/// A rule the operator wrote that cannot be used; the text says how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    /// A `host` that is neither a name, `*.domain`, nor an IP address.
    #[error(
        "bad host {0:?}: give a name like `api.example.com`, `*.example.com` or an IP address (put the port in `port`)"
    )]
    BadHost(String),
    /// A method name outside the ones the `http` import can send.
    #[error(
        "unknown method {0:?} in `methods`: use GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS"
    )]
    UnknownMethod(String),
    /// A `paths` entry that is not an absolute path pattern.
    #[error("bad entry {0:?} in `paths`: give an absolute path pattern like `/api/v1/orders*`")]
    BadPath(String),
}

/// Which hosts a rule or credential covers.
#[derive(Debug, Clone, PartialEq)]
pub struct HostPattern(PatternKind);

#[derive(Debug, Clone, PartialEq)]
enum PatternKind {
    /// An exact host name, in the URL parser's canonical form.
    Exact(String),
    /// `*.domain`: any name ending in `.domain` (not `domain` itself).
    Suffix(String),
    /// An IP address.
    Ip(IpAddr),
}

impl HostPattern {
    /// Parses `name`, `*.domain` or an IP address (IPv6 with or without
    /// brackets). Names are canonicalised as the URL parser does (lower
    /// case, IDNA), and numeric forms such as `0x7f.1` become the address
    /// they denote, so a rule compares equal to the hosts of the URLs it
    /// means.
    pub fn parse(host: &str) -> Result<HostPattern, RuleError> {
        let trimmed = host.trim();
        let bad = || RuleError::BadHost(trimmed.to_string());
        let bare = trimmed.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = bare.parse::<IpAddr>() {
            return Ok(HostPattern(PatternKind::Ip(ip)));
        }
        if let Some(domain) = trimmed.strip_prefix("*.") {
            return match url::Host::parse(domain).map_err(|_| bad())? {
                url::Host::Domain(d) if !d.is_empty() && !d.contains('*') => {
                    Ok(HostPattern(PatternKind::Suffix(d)))
                }
                _ => Err(bad()),
            };
        }
        match url::Host::parse(trimmed).map_err(|_| bad())? {
            url::Host::Domain(d) if !d.is_empty() && !d.contains('*') => {
                Ok(HostPattern(PatternKind::Exact(d)))
            }
            url::Host::Domain(_) => Err(bad()),
            url::Host::Ipv4(ip) => Ok(HostPattern(PatternKind::Ip(ip.into()))),
            url::Host::Ipv6(ip) => Ok(HostPattern(PatternKind::Ip(ip.into()))),
        }
    }

    /// Whether this pattern covers `host` (as [`host_of`] gives it).
    pub fn matches(&self, host: &str) -> bool {
        match &self.0 {
            PatternKind::Exact(name) => name == host,
            PatternKind::Suffix(domain) => host
                .strip_suffix(domain.as_str())
                .is_some_and(|head| head.ends_with('.') && head.len() > 1),
            PatternKind::Ip(ip) => host.parse::<IpAddr>().is_ok_and(|h| h == *ip),
        }
    }

    fn is_ip(&self) -> bool {
        matches!(self.0, PatternKind::Ip(_))
    }

    /// A host this pattern covers: the name or address itself, or a name
    /// under the domain of `*.domain`.
    fn example(&self) -> String {
        match &self.0 {
            PatternKind::Exact(name) => name.clone(),
            PatternKind::Suffix(domain) => format!("host.{domain}"),
            PatternKind::Ip(ip) => ip.to_string(),
        }
    }
}

/// The pattern in its canonical form: `name`, `*.domain` or the address.
impl std::fmt::Display for HostPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            PatternKind::Exact(name) => f.write_str(name),
            PatternKind::Suffix(domain) => write!(f, "*.{domain}"),
            PatternKind::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

/// Which ports a rule or credential covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortRule {
    /// The URL scheme's own port: 443 for https, 80 for http. The default
    /// of an `allow` entry without `port`.
    SchemeDefault,
    /// Exactly this port.
    Only(u16),
    /// Any port (`port = "*"`).
    Any,
}

impl PortRule {
    /// Whether `url`'s port is covered.
    pub fn matches(self, url: &Url) -> bool {
        match self {
            // The parser drops a port equal to the scheme's default.
            PortRule::SchemeDefault => url.port().is_none(),
            PortRule::Only(port) => url.port_or_known_default() == Some(port),
            PortRule::Any => true,
        }
    }
}

/// A `port` value as written: a number, or `"*"` for any port.
impl<'de> serde::Deserialize<'de> for PortRule {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PortVisitor;
        impl serde::de::Visitor<'_> for PortVisitor {
            type Value = PortRule;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a port number from 1 to 65535, or \"*\" for any port")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<PortRule, E> {
                match u16::try_from(v) {
                    Ok(port) if port > 0 => Ok(PortRule::Only(port)),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Signed(v), &self)),
                }
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<PortRule, E> {
                match u16::try_from(v) {
                    Ok(port) if port > 0 => Ok(PortRule::Only(port)),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Unsigned(v), &self)),
                }
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<PortRule, E> {
                match v {
                    "*" => Ok(PortRule::Any),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
        }
        deserializer.deserialize_any(PortVisitor)
    }
}

/// One allowed destination.
#[derive(Debug, Clone, PartialEq)]
pub struct HostRule {
    host: HostPattern,
    port: PortRule,
    /// Upper-case method names; `None` allows all.
    methods: Option<Vec<String>>,
    /// Path patterns; `None` allows every path.
    paths: Option<Vec<glob::Pattern>>,
    allow_private: bool,
}

/// How `paths` patterns match: `*` runs across `/`, so `/api/v1/orders*`
/// is a prefix match; case matters, as it does for most servers.
const PATH_MATCH: glob::MatchOptions = glob::MatchOptions {
    case_sensitive: true,
    require_literal_separator: false,
    require_literal_leading_dot: false,
};

impl HostRule {
    /// The host (or `*.domain`, or address) the rule allows.
    pub fn host(&self) -> &HostPattern {
        &self.host
    }

    /// Parses one rule: `host` as in [`HostPattern::parse`], the ports it
    /// covers, the methods it allows (all when `None`), the path patterns it
    /// allows (all when `None`), and whether its name may resolve to a
    /// non-public address.
    pub fn parse(
        host: &str,
        port: PortRule,
        methods: Option<&[String]>,
        paths: Option<&[String]>,
        allow_private: bool,
    ) -> Result<HostRule, RuleError> {
        let methods = methods
            .map(|list| {
                list.iter()
                    .map(|m| {
                        let m = m.to_ascii_uppercase();
                        if ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
                            .contains(&m.as_str())
                        {
                            Ok(m)
                        } else {
                            Err(RuleError::UnknownMethod(m))
                        }
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?;
        let paths = paths
            .map(|list| {
                list.iter()
                    .map(|p| {
                        if !p.starts_with('/') {
                            return Err(RuleError::BadPath(p.clone()));
                        }
                        glob::Pattern::new(p).map_err(|_| RuleError::BadPath(p.clone()))
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?;
        Ok(HostRule {
            host: HostPattern::parse(host)?,
            port,
            methods,
            paths,
            allow_private,
        })
    }

    /// Whether this rule covers the host `host` (as [`host_of`] gives it),
    /// whatever the port, method and path.
    pub fn matches_host(&self, host: &str) -> bool {
        self.host.matches(host)
    }

    fn allows_method(&self, method: &str) -> bool {
        self.methods
            .as_ref()
            .is_none_or(|m| m.iter().any(|x| x == method))
    }

    /// Whether a request this rule covers may reach a non-public address.
    pub fn allows_private(&self) -> bool {
        self.allow_private || self.host.is_ip()
    }
}

/// A plugin's network policy: the set of [`HostRule`]s.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NetworkPolicy {
    rules: Vec<HostRule>,
}

/// What the policy says about a request that passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Permit {
    /// Whether a rule covering this exact request (host, port, method,
    /// path) lets it reach a non-public address.
    pub allow_private: bool,
}

impl NetworkPolicy {
    /// A policy allowing exactly `rules`.
    pub fn new(rules: Vec<HostRule>) -> Self {
        NetworkPolicy { rules }
    }

    /// The rules.
    pub fn rules(&self) -> &[HostRule] {
        &self.rules
    }

    /// Whether the policy allows nothing at all.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Checks `method` to `url`. `Err` says which rule refused it, in words
    /// the operator can act on, and why in one word for the metrics.
    pub fn check(&self, method: &str, url: &Url) -> Result<Permit, Denial> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Denial::new(
                DenialReason::Scheme,
                format!(
                    "scheme {:?} is not allowed; use http or https",
                    url.scheme()
                ),
            ));
        }
        let host = host_of(url)
            .ok_or_else(|| Denial::new(DenialReason::HostNotAllowed, "the URL has no host"))?;
        let port = url.port_or_known_default().unwrap_or(0);
        let on_host: Vec<&HostRule> = self
            .rules
            .iter()
            .filter(|r| r.matches_host(&host))
            .collect();
        if on_host.is_empty() {
            return Err(Denial::new(
                DenialReason::HostNotAllowed,
                format!(
                    "{host}:{port} is not in this plugin's allowed hosts (add an `allow` entry in toolhost.toml)"
                ),
            ));
        }
        let on_port: Vec<&HostRule> = on_host
            .into_iter()
            .filter(|r| r.port.matches(url))
            .collect();
        if on_port.is_empty() {
            return Err(Denial::new(
                DenialReason::Port,
                format!(
                    "{host} is allowed, but not on port {port}: an `allow` entry without `port` allows only the scheme's port (443 for https, 80 for http); add `port = {port}` (or `port = \"*\"` for any) to the entry"
                ),
            ));
        }
        let with_method: Vec<&HostRule> = on_port
            .into_iter()
            .filter(|r| r.allows_method(method))
            .collect();
        if with_method.is_empty() {
            return Err(Denial::new(
                DenialReason::Method,
                format!("{method} to {host} is not allowed by this plugin's `methods`"),
            ));
        }
        // The path is only looked at when a rule restricts it.
        let path = with_method
            .iter()
            .any(|r| r.paths.is_some())
            .then(|| normalised_path(url));
        let covering: Vec<&HostRule> = with_method
            .into_iter()
            .filter(|r| match (&r.paths, &path) {
                (None, _) => true,
                (Some(patterns), Some(Ok(path))) => {
                    patterns.iter().any(|p| p.matches_with(path, PATH_MATCH))
                }
                (Some(_), _) => false,
            })
            .collect();
        if covering.is_empty() {
            return Err(match path {
                Some(Err(why)) => Denial::new(DenialReason::AmbiguousPath, why),
                _ => Denial::new(
                    DenialReason::Path,
                    format!(
                        "the path {} on {host} is not in this plugin's allowed `paths`",
                        url.path()
                    ),
                ),
            });
        }
        let allow_private = covering.iter().any(|r| r.allows_private());
        if let Ok(ip) = host.parse::<IpAddr>()
            && !is_public(ip)
            && !allow_private
        {
            return Err(Denial::new(
                DenialReason::PrivateAddress,
                format!("{ip} is a non-public address"),
            ));
        }
        Ok(Permit { allow_private })
    }

    /// The host of the first rule covering the host `host` (as [`host_of`]
    /// gives it), as the operator wrote it: `api.example.com`,
    /// `*.example.com`, an address. A bounded name for a destination the
    /// policy allowed, whatever name under a wildcard the request used.
    pub fn rule_host(&self, host: &str) -> Option<String> {
        self.rules
            .iter()
            .find(|r| r.matches_host(host))
            .map(|r| r.host.to_string())
    }
}

/// Why the host refused to send a request: a word for each check, the
/// `reason` label of `toolhost_policy_denials_total` (toolhost's `metrics`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DenialReason {
    /// Not http or https.
    Scheme,
    /// No `allow` entry covers the host (or the URL has none).
    HostNotAllowed,
    /// The host is allowed, on other ports.
    Port,
    /// The entries for the host and port leave the method out.
    Method,
    /// The entries' `paths` leave the path out.
    Path,
    /// The path would mean something else to the server than to the check.
    AmbiguousPath,
    /// The address (or the one the name resolves to) is not public, and no
    /// rule allows that.
    PrivateAddress,
    /// A credential would go over plain http to an address not loopback.
    CredentialCleartext,
    /// A read-only tool tried another method than `GET`/`HEAD`.
    ReadOnly,
    /// A mutation without the user's yes in this call.
    Unconfirmed,
    /// A method-override header.
    MethodOverride,
    /// A header that asks a server to route the request to another path
    /// (`X-Original-URL`, `X-Rewrite-URL`).
    UrlOverride,
    /// A credential chosen per caller applies, and the call has none for
    /// its caller.
    NoCallerCredential,
}

impl DenialReason {
    /// The metrics label.
    pub fn label(self) -> &'static str {
        match self {
            DenialReason::Scheme => "scheme",
            DenialReason::HostNotAllowed => "host_not_allowed",
            DenialReason::Port => "port",
            DenialReason::Method => "method",
            DenialReason::Path => "path",
            DenialReason::AmbiguousPath => "ambiguous_path",
            DenialReason::PrivateAddress => "private_address",
            DenialReason::CredentialCleartext => "credential_cleartext",
            DenialReason::ReadOnly => "read_only",
            DenialReason::Unconfirmed => "unconfirmed",
            DenialReason::MethodOverride => "method_override",
            DenialReason::UrlOverride => "url_override",
            DenialReason::NoCallerCredential => "no_caller_credential",
        }
    }
}

/// A request the policy refused: why, in words for the guest and the
/// operator, and in one word for the metrics.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Denial {
    /// Which check refused it.
    pub reason: DenialReason,
    /// What to change to allow it.
    pub message: String,
}

impl Denial {
    /// A denial for `reason`, explained by `message`.
    pub fn new(reason: DenialReason, message: impl Into<String>) -> Denial {
        Denial {
            reason,
            message: message.into(),
        }
    }
}

/// `url`'s path as a server will read it: percent-decoded, with the dot
/// segments the URL parser already removed. `Err` when decoding reveals
/// something a server may still resolve differently (`..`, `.`, `..;`,
/// a backslash, a control character), so the check does not guess.
fn normalised_path(url: &Url) -> Result<String, String> {
    let decoded = percent_encoding::percent_decode_str(url.path())
        .decode_utf8_lossy()
        .into_owned();
    let dot_segment = decoded
        .split('/')
        .map(|segment| segment.split(';').next().unwrap_or_default())
        .any(|segment| segment == "." || segment == "..");
    if dot_segment || decoded.contains('\\') || decoded.chars().any(char::is_control) {
        return Err(format!(
            "the path {} is ambiguous (an encoded or parameterised dot segment, a backslash or a control character); send the plain path",
            url.path()
        ));
    }
    Ok(decoded)
}

/// Where one credential may go: its host, on its port (443 unless the
/// entry names one), over https, or over plain http to a loopback address.
#[derive(Debug, Clone, PartialEq)]
pub struct CredentialScope {
    host: HostPattern,
    port: PortRule,
}

impl std::fmt::Display for CredentialScope {
    /// `host:port` as configured (`*` for any port).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.port {
            PortRule::Only(port) => write!(f, "{}:{port}", self.host),
            PortRule::Any => write!(f, "{}:*", self.host),
            PortRule::SchemeDefault => write!(f, "{}:443", self.host),
        }
    }
}

/// Whether a credential goes with a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredentialUse {
    /// Add it: the destination is its host and port, over https or to a
    /// loopback address.
    Send,
    /// Not for this destination: another host or port.
    NotFor,
    /// The destination is its host and port, but the request is plain
    /// http to an address that is not loopback: the credential would cross
    /// the network in clear text, so the request must not be sent.
    ClearText,
}

impl CredentialScope {
    /// Whether some rule of `policy` allows a request this credential would
    /// go with: one to a host both patterns cover, on a port both cover. A
    /// credential no rule reaches is never sent, which is a mistake in the
    /// configuration (often a rule with a `port` and a credential without
    /// one, which means 443).
    pub fn reachable_under(&self, policy: &NetworkPolicy) -> bool {
        policy.rules().iter().any(|rule| {
            let hosts_meet =
                rule.host.matches(&self.host.example()) || self.host.matches(&rule.host.example());
            let ports: &[u16] = match self.port {
                PortRule::Only(port) => &[port][..],
                // Any port: any rule's port meets it.
                PortRule::Any => return hosts_meet,
                PortRule::SchemeDefault => &[443],
            };
            hosts_meet
                && ports.iter().any(|port| {
                    let scheme = if *port == 80 { "http" } else { "https" };
                    let host = match &self.host.0 {
                        PatternKind::Ip(IpAddr::V6(ip)) => format!("[{ip}]"),
                        _ => self.host.example(),
                    };
                    Url::parse(&format!("{scheme}://{host}:{port}/"))
                        .is_ok_and(|url| rule.port.matches(&url))
                })
        })
    }

    /// A scope for `host` (as in [`HostPattern::parse`]) on `port`; the
    /// https port, 443, when `None`.
    pub fn parse(host: &str, port: Option<PortRule>) -> Result<CredentialScope, RuleError> {
        Ok(CredentialScope {
            host: HostPattern::parse(host)?,
            port: port.unwrap_or(PortRule::Only(443)),
        })
    }

    /// Whether the credential goes with a request to `url`.
    pub fn use_for(&self, url: &Url) -> CredentialUse {
        let Some(host) = host_of(url) else {
            return CredentialUse::NotFor;
        };
        if !self.host.matches(&host) || !self.port.matches(url) {
            return CredentialUse::NotFor;
        }
        if url.scheme() == "https" || is_loopback_address(url) {
            CredentialUse::Send
        } else {
            CredentialUse::ClearText
        }
    }
}

/// Whether `url`'s host is a loopback address written as one (a name is
/// not: what it resolves to is not known here).
fn is_loopback_address(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        _ => false,
    }
}

/// The URL's host in the form rules compare: lower case, IPv6 unbracketed.
pub fn host_of(url: &Url) -> Option<String> {
    match url.host()? {
        url::Host::Domain(d) => Some(d.to_ascii_lowercase()),
        url::Host::Ipv4(ip) => Some(ip.to_string()),
        url::Host::Ipv6(ip) => Some(ip.to_string()),
    }
}

/// Whether `ip` is an ordinary public address. Not public: loopback,
/// private (RFC 1918, unique-local, the deprecated site-local `fec0::/10`),
/// link-local (which holds cloud metadata endpoints such as
/// 169.254.169.254), shared (100.64/10), unspecified, broadcast,
/// documentation, benchmarking, reserved and multicast space; the
/// IPv4-mapped (`::ffff:0:0/96`) and NAT64 (`64:ff9b::/96`) forms of those;
/// the local-use NAT64 prefix `64:ff9b:1::/48`; and the transition forms
/// that carry an IPv4 address a relay would reach (IPv4-compatible `::/96`,
/// 6to4 `2002::/16`, Teredo `2001::/32`) or discard it (`100::/64`).
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_documentation()
                || v4.is_multicast()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 192 && b == 0)
                || (a == 198 && (18..20).contains(&b))
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let s = v6.segments();
            if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                // NAT64 well-known prefix: the gateway connects to the
                // embedded IPv4 address.
                let [.., a, b, c, d] = v6.octets();
                return is_public(IpAddr::V4([a, b, c, d].into()));
            }
            !(s[..6] == [0; 6] // ::/96: unspecified, loopback, IPv4-compatible
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00 // unique local
                || (s[0] & 0xffc0) == 0xfe80 // link local
                || (s[0] & 0xffc0) == 0xfec0 // site local (deprecated)
                || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1) // local-use NAT64
                || s[0] == 0x2002 // 6to4
                || (s[0] == 0x2001 && s[1] == 0) // Teredo
                || s[..4] == [0x100, 0, 0, 0] // discard-only
                || (s[0] == 0x2001 && s[1] == 0x0db8)) // documentation
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type RuleSpec<'a> = (
        &'a str,
        PortRule,
        Option<&'a [&'a str]>,
        Option<&'a [&'a str]>,
        bool,
    );

    fn strings(list: Option<&[&str]>) -> Option<Vec<String>> {
        list.map(|m| m.iter().map(|s| s.to_string()).collect())
    }

    fn policy(rules: &[RuleSpec]) -> NetworkPolicy {
        NetworkPolicy::new(
            rules
                .iter()
                .map(|(h, port, methods, paths, private)| {
                    HostRule::parse(
                        h,
                        *port,
                        strings(*methods).as_deref(),
                        strings(*paths).as_deref(),
                        *private,
                    )
                    .unwrap()
                })
                .collect(),
        )
    }

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    use PortRule::{Any, Only, SchemeDefault};

    #[test]
    fn deny_by_default() {
        let p = NetworkPolicy::default();
        assert!(p.check("GET", &url("https://example.com/")).is_err());
    }

    #[test]
    fn exact_wildcard_port_and_method() {
        let p = policy(&[
            ("api.example.com", Only(443), Some(&["GET"]), None, false),
            ("*.example.org", Any, None, None, false),
        ]);
        assert!(p.check("GET", &url("https://api.example.com/x")).is_ok());
        assert!(p.check("GET", &url("https://API.example.com/x")).is_ok());
        assert!(p.check("POST", &url("https://api.example.com/x")).is_err());
        assert!(
            p.check("GET", &url("http://api.example.com:8080/x"))
                .is_err()
        );
        assert!(p.check("DELETE", &url("https://a.b.example.org/")).is_ok());
        assert!(p.check("GET", &url("https://a.example.org:22/")).is_ok());
        assert!(p.check("GET", &url("https://example.org/")).is_err());
        assert!(p.check("GET", &url("https://evilexample.org/")).is_err());
        assert!(p.check("GET", &url("ftp://api.example.com/")).is_err());
    }

    #[test]
    fn a_rule_without_a_port_allows_only_the_schemes_port() {
        let p = policy(&[("example.com", SchemeDefault, None, None, false)]);
        assert!(p.check("GET", &url("https://example.com/")).is_ok());
        assert!(p.check("GET", &url("https://example.com:443/")).is_ok());
        assert!(p.check("GET", &url("http://example.com/")).is_ok());
        for other in [
            "http://example.com:22/",
            "https://example.com:80/",
            "http://example.com:443/",
            "https://example.com:8443/",
        ] {
            let why = p.check("GET", &url(other)).unwrap_err();
            assert!(why.message.contains("port = \"*\""), "{other}: {why}");
            assert_eq!(why.reason, DenialReason::Port);
        }
    }

    #[test]
    fn paths_restrict_by_normalised_prefix() {
        let p = policy(&[(
            "api.example.com",
            SchemeDefault,
            None,
            Some(&["/api/v1/orders*", "/health"]),
            false,
        )]);
        for ok in [
            "https://api.example.com/api/v1/orders",
            "https://api.example.com/api/v1/orders/42?x=1",
            "https://api.example.com/api/v1/%6Frders/42",
            "https://api.example.com/health",
        ] {
            assert!(p.check("GET", &url(ok)).is_ok(), "{ok}");
        }
        for denied in [
            "https://api.example.com/",
            "https://api.example.com/health/x",
            "https://api.example.com/API/v1/orders",
            "https://api.example.com/api/v1/orders/../../admin",
            "https://api.example.com/api/v1/orders/%2e%2e/%2e%2e/admin",
            "https://api.example.com/api/v1/orders%2F..%2F..%2Fadmin",
            "https://api.example.com/api/v1/orders/..;/..;/admin",
            "https://api.example.com/api/v1/orders%5C..%5Cadmin",
        ] {
            assert!(p.check("GET", &url(denied)).is_err(), "{denied}");
        }
    }

    #[test]
    fn allow_private_comes_from_the_rule_that_covers_the_request() {
        let p = policy(&[
            ("localhost", Only(8001), None, None, true),
            ("localhost", Only(8002), None, None, false),
            ("localhost", Only(8003), Some(&["GET"]), None, true),
            ("localhost", Only(8003), Some(&["POST"]), None, false),
        ]);
        let private = |m: &str, u: &str| p.check(m, &url(u)).unwrap().allow_private;
        assert!(private("GET", "http://localhost:8001/"));
        assert!(!private("GET", "http://localhost:8002/"));
        assert!(private("GET", "http://localhost:8003/"));
        assert!(!private("POST", "http://localhost:8003/"));
    }

    #[test]
    fn ip_literals_need_an_explicit_rule() {
        let p = policy(&[
            ("127.0.0.1", Only(8080), None, None, false),
            ("*.example.com", SchemeDefault, None, None, false),
        ]);
        assert_eq!(
            p.check("GET", &url("http://127.0.0.1:8080/")),
            Ok(Permit {
                allow_private: true
            })
        );
        assert!(p.check("GET", &url("http://127.0.0.1:9090/")).is_err());
        for other_forms in [
            "http://2130706433:8080/",
            "http://0177.0.0.1:8080/",
            "http://0x7f.1:8080/",
        ] {
            assert!(p.check("GET", &url(other_forms)).is_ok(), "{other_forms}");
        }
        assert!(
            p.check("GET", &url("http://169.254.169.254/latest/meta-data"))
                .is_err()
        );
        assert_eq!(
            p.check("GET", &url("https://a.example.com/")),
            Ok(Permit {
                allow_private: false
            })
        );
    }

    #[test]
    fn hosts_in_rules_take_the_urls_canonical_form() {
        let p = policy(&[
            ("0x7f.1", Only(8080), None, None, false),
            ("Bücher.Example", SchemeDefault, None, None, false),
        ]);
        assert!(p.check("GET", &url("http://127.0.0.1:8080/")).is_ok());
        assert!(p.check("GET", &url("https://bücher.example/")).is_ok());
        for bad in ["", "*.", "a b", "a/b", "example.com:80", "*.*.example.com"] {
            assert!(HostPattern::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn credentials_go_over_https_to_their_port_or_to_loopback() {
        let scope = CredentialScope::parse("api.example.com", None).unwrap();
        let used = |u: &str| scope.use_for(&url(u));
        assert_eq!(used("https://api.example.com/x"), CredentialUse::Send);
        assert_eq!(used("https://api.example.com:443/x"), CredentialUse::Send);
        assert_eq!(
            used("http://api.example.com:443/x"),
            CredentialUse::ClearText
        );
        assert_eq!(used("http://api.example.com/x"), CredentialUse::NotFor);
        assert_eq!(used("https://api.example.com:8443/"), CredentialUse::NotFor);
        assert_eq!(used("https://other.example.com/"), CredentialUse::NotFor);

        let local = CredentialScope::parse("127.0.0.1", Some(Only(4000))).unwrap();
        assert_eq!(
            local.use_for(&url("http://127.0.0.1:4000/")),
            CredentialUse::Send
        );
        assert_eq!(
            local.use_for(&url("http://127.0.0.1:4001/")),
            CredentialUse::NotFor
        );
        let name = CredentialScope::parse("localhost", Some(Any)).unwrap();
        assert_eq!(
            name.use_for(&url("http://localhost:4000/")),
            CredentialUse::ClearText
        );
    }

    #[test]
    fn address_classes() {
        for bad in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::",
            "::1",
            "fe80::1",
            "fd00::1",
            "fec0::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "::8.8.8.8",
            "64:ff9b::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::808:808",
            "2002:7f00:1::",
            "2002:808:808::",
            "2001:0:4136:e378::1",
            "100::1",
            "2001:db8::1",
        ] {
            assert!(!is_public(bad.parse().unwrap()), "{bad}");
        }
        for good in [
            "93.184.216.34",
            "8.8.8.8",
            "2606:4700::1111",
            "64:ff9b::808:808",
            "2001:4860:4860::8888",
        ] {
            assert!(is_public(good.parse().unwrap()), "{good}");
        }
    }

    #[test]
    fn each_refusal_names_its_reason_and_allowed_hosts_their_rule() {
        let p = policy(&[
            (
                "api.example.com",
                SchemeDefault,
                Some(&["GET"]),
                Some(&["/v1/*"]),
                false,
            ),
            ("*.example.org", SchemeDefault, None, None, false),
        ]);
        let reason = |m: &str, u: &str| p.check(m, &url(u)).unwrap_err().reason;
        use DenialReason::*;
        assert_eq!(reason("GET", "ftp://api.example.com/v1/x"), Scheme);
        assert_eq!(reason("GET", "https://other.example.net/"), HostNotAllowed);
        assert_eq!(reason("GET", "https://api.example.com:8443/v1/x"), Port);
        assert_eq!(reason("POST", "https://api.example.com/v1/x"), Method);
        assert_eq!(reason("GET", "https://api.example.com/v2/x"), Path);
        assert_eq!(
            reason("GET", "https://api.example.com/v1/x%2F..%2F..%2Fadmin"),
            AmbiguousPath
        );
        assert_eq!(reason("GET", "http://10.0.0.1/"), HostNotAllowed);
        assert_eq!(
            p.rule_host("a.b.example.org").as_deref(),
            Some("*.example.org"),
            "a wildcard's many names are one label"
        );
        assert_eq!(
            p.rule_host("api.example.com").as_deref(),
            Some("api.example.com")
        );
        assert_eq!(p.rule_host("example.net"), None);
        let ip = policy(&[("::1", Only(80), None, None, false)]);
        assert_eq!(ip.rule_host("::1").as_deref(), Some("::1"));
    }

    #[test]
    fn a_credential_is_reachable_only_where_a_rule_covers_its_host_and_port() {
        let rule = |host: &str, port| HostRule::parse(host, port, None, None, false).unwrap();
        let scope = |host: &str, port| CredentialScope::parse(host, port).unwrap();
        let api = NetworkPolicy::new(vec![rule("api.example.com", PortRule::SchemeDefault)]);
        assert!(scope("api.example.com", None).reachable_under(&api));
        assert!(!scope("other.example.com", None).reachable_under(&api));
        // A rule with a port, a credential without one (443): never sent.
        let on_8443 = NetworkPolicy::new(vec![rule("api.example.com", PortRule::Only(8443))]);
        assert!(!scope("api.example.com", None).reachable_under(&on_8443));
        assert!(scope("api.example.com", Some(PortRule::Only(8443))).reachable_under(&on_8443));
        assert!(scope("api.example.com", Some(PortRule::Any)).reachable_under(&on_8443));
        // Patterns meet either way round.
        let wildcard = NetworkPolicy::new(vec![rule("*.example.com", PortRule::Any)]);
        assert!(scope("api.example.com", None).reachable_under(&wildcard));
        let exact = NetworkPolicy::new(vec![rule("api.example.com", PortRule::Any)]);
        assert!(scope("*.example.com", None).reachable_under(&exact));
        assert!(!scope("127.0.0.1", Some(PortRule::Only(9000))).reachable_under(&exact));
    }
}
