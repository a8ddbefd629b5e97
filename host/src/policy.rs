//! Network policy: which destinations a plugin may reach, and how.
//!
//! Deny by default. A request passes only if its URL's host matches one of
//! the plugin's [`HostRule`]s (exact name, `*.domain`, or IP address;
//! optionally one port and a set of methods). After DNS resolution, loopback,
//! private, link-local, shared and cloud-metadata addresses are refused
//! unless the matching rule allows them: an IP-address rule allows exactly
//! that address, and a name rule with `allow_private = true` allows that name
//! to resolve to one. The address check runs in the host's DNS resolver
//! ([`crate::imports::http`]), so a public name that resolves to a private
//! address is refused before any connection is made.

use std::net::IpAddr;

use anyhow::{Result, bail};
use reqwest::Url;

/// One allowed destination.
#[derive(Debug, Clone, PartialEq)]
pub struct HostRule {
    pattern: HostPattern,
    port: Option<u16>,
    /// Upper-case method names; `None` allows all.
    methods: Option<Vec<String>>,
    allow_private: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum HostPattern {
    /// An exact host name, lower case.
    Exact(String),
    /// `*.domain`: any name ending in `.domain` (not `domain` itself).
    Suffix(String),
    /// An IP address.
    Ip(IpAddr),
}

impl HostRule {
    /// Parses one rule. `host` is `name`, `*.domain` or an IP address.
    pub fn parse(
        host: &str,
        port: Option<u16>,
        methods: Option<&[String]>,
        allow_private: bool,
    ) -> Result<HostRule> {
        let host = host.trim().to_ascii_lowercase();
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let pattern = if let Ok(ip) = bare.parse::<IpAddr>() {
            HostPattern::Ip(ip)
        } else if let Some(domain) = host.strip_prefix("*.") {
            if domain.is_empty() || domain.contains('*') {
                bail!("bad host pattern {host:?}: use `*.example.com`");
            }
            HostPattern::Suffix(domain.to_string())
        } else if host.is_empty() || host.contains(['*', '/', ':', ' ']) {
            bail!(
                "bad host {host:?}: give a name like `api.example.com`, `*.example.com` or an IP address (put the port in `port`)"
            );
        } else {
            HostPattern::Exact(host)
        };
        let methods = match methods {
            None => None,
            Some(list) => {
                let mut upper = Vec::new();
                for m in list {
                    let m = m.to_ascii_uppercase();
                    if !["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
                        .contains(&m.as_str())
                    {
                        bail!("unknown method {m:?} in `methods`");
                    }
                    upper.push(m);
                }
                Some(upper)
            }
        };
        Ok(HostRule {
            pattern,
            port,
            methods,
            allow_private,
        })
    }

    /// Whether this rule covers `host` (lower case; IPv6 without brackets).
    pub fn matches_host(&self, host: &str) -> bool {
        match &self.pattern {
            HostPattern::Exact(name) => name == host,
            HostPattern::Suffix(domain) => host
                .strip_suffix(domain.as_str())
                .is_some_and(|head| head.ends_with('.') && head.len() > 1),
            HostPattern::Ip(ip) => host.parse::<IpAddr>().is_ok_and(|h| h == *ip),
        }
    }

    fn matches(&self, host: &str, port: u16) -> bool {
        self.matches_host(host) && self.port.is_none_or(|p| p == port)
    }

    fn allows_method(&self, method: &str) -> bool {
        self.methods
            .as_ref()
            .is_none_or(|m| m.iter().any(|x| x == method))
    }

    /// Whether a name matched by this rule may resolve to a non-public
    /// address.
    pub fn allows_private(&self) -> bool {
        self.allow_private || matches!(self.pattern, HostPattern::Ip(_))
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
    /// Whether the destination may be a non-public address.
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
    /// the operator can act on.
    pub fn check(&self, method: &str, url: &Url) -> Result<Permit, String> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!(
                "scheme {:?} is not allowed; use http or https",
                url.scheme()
            ));
        }
        let host = host_of(url).ok_or("the URL has no host")?;
        let port = url.port_or_known_default().unwrap_or(0);
        let matching: Vec<&HostRule> = self
            .rules
            .iter()
            .filter(|r| r.matches(&host, port))
            .collect();
        if matching.is_empty() {
            return Err(format!(
                "{host}:{port} is not in this plugin's allowed hosts (add an `allow` entry in toolhost.toml)"
            ));
        }
        let Some(rule) = matching.iter().find(|r| r.allows_method(method)) else {
            return Err(format!(
                "{method} to {host} is not allowed by this plugin's `methods`"
            ));
        };
        if let Ok(ip) = host.parse::<IpAddr>()
            && !is_public(ip)
            && !rule.allows_private()
        {
            return Err(format!("{ip} is a non-public address"));
        }
        Ok(Permit {
            allow_private: rule.allows_private(),
        })
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

/// Whether `ip` is an ordinary public address. Loopback, private (RFC 1918,
/// unique-local), link-local (which holds cloud metadata endpoints such as
/// 169.254.169.254), shared (100.64/10), unspecified, broadcast,
/// documentation, multicast and IPv4-mapped forms of these are not.
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
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local
                || (first & 0xffc0) == 0xfe80 // link local
                || (first == 0x2001 && v6.segments()[1] == 0x0db8)) // documentation
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type RuleSpec<'a> = (&'a str, Option<u16>, Option<&'a [&'a str]>, bool);

    fn policy(rules: &[RuleSpec]) -> NetworkPolicy {
        NetworkPolicy::new(
            rules
                .iter()
                .map(|(h, p, m, private)| {
                    let m: Option<Vec<String>> =
                        m.map(|m| m.iter().map(|s| s.to_string()).collect());
                    HostRule::parse(h, *p, m.as_deref(), *private).unwrap()
                })
                .collect(),
        )
    }

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn deny_by_default() {
        let p = NetworkPolicy::default();
        assert!(p.check("GET", &url("https://example.com/")).is_err());
    }

    #[test]
    fn exact_wildcard_port_and_method() {
        let p = policy(&[
            ("api.example.com", Some(443), Some(&["GET"]), false),
            ("*.example.org", None, None, false),
        ]);
        assert!(p.check("GET", &url("https://api.example.com/x")).is_ok());
        assert!(p.check("GET", &url("https://API.example.com/x")).is_ok());
        assert!(p.check("POST", &url("https://api.example.com/x")).is_err());
        assert!(
            p.check("GET", &url("http://api.example.com:8080/x"))
                .is_err()
        );
        assert!(p.check("DELETE", &url("https://a.b.example.org/")).is_ok());
        assert!(p.check("GET", &url("https://example.org/")).is_err());
        assert!(p.check("GET", &url("https://evilexample.org/")).is_err());
        assert!(p.check("GET", &url("ftp://api.example.com/")).is_err());
    }

    #[test]
    fn ip_literals_need_an_explicit_rule() {
        let p = policy(&[
            ("127.0.0.1", Some(8080), None, false),
            ("*.example.com", None, None, false),
        ]);
        assert_eq!(
            p.check("GET", &url("http://127.0.0.1:8080/")),
            Ok(Permit {
                allow_private: true
            })
        );
        assert!(p.check("GET", &url("http://127.0.0.1:9090/")).is_err());
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
    fn address_classes() {
        for bad in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
        ] {
            assert!(!is_public(bad.parse().unwrap()), "{bad}");
        }
        for good in ["93.184.216.34", "8.8.8.8", "2606:4700::1111"] {
            assert!(is_public(good.parse().unwrap()), "{good}");
        }
    }
}
