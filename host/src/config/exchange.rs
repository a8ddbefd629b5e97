//! `[token_exchange.NAME]`: credentials obtained per caller by OAuth 2.0
//! Token Exchange (RFC 8693), for upstreams that accept tokens from the
//! same identity provider as toolhost's callers. A `credentials` entry
//! whose `value` holds `${exchange:NAME}` is chosen per caller: at each
//! call the caller's own access token is exchanged at `token_endpoint` for
//! one meant for the upstream (`audience`, `resource`, `scope`), cached
//! until it expires ([`crate::auth::exchange`], whose settings type this
//! resolves into).

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use serde::Deserialize;

pub use crate::auth::exchange::TokenExchange;

/// Where an exchanged token's place in a `value` begins.
const OPEN: &str = "${exchange:";

/// One `[token_exchange.NAME]` table, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTokenExchange {
    /// `token_endpoint`.
    pub token_endpoint: String,
    /// `client_id`: toolhost's client at the provider.
    pub client_id: String,
    /// `client_secret_env`: the environment variable holding the client's
    /// secret (none: a public client).
    pub client_secret_env: Option<String>,
    /// `audience`: RFC 8693 `audience`.
    pub audience: Option<String>,
    /// `resource`: RFC 8693 `resource` (RFC 8707).
    pub resource: Option<String>,
    /// `scope`: space-separated scopes asked for.
    pub scope: Option<String>,
}

/// Resolves every `[token_exchange.NAME]`.
pub fn resolve_exchanges(
    raw: &BTreeMap<String, RawTokenExchange>,
) -> Result<BTreeMap<String, TokenExchange>> {
    let mut resolved = BTreeMap::new();
    for (name, table) in raw {
        let at = |key: &str| format!("`token_exchange.{name}.{key}`");
        let token_endpoint = url::Url::parse(&table.token_endpoint)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: {:?} is not an http(s) URL; write the provider's token endpoint",
                    at("token_endpoint"),
                    table.token_endpoint
                )
            })?;
        if token_endpoint.scheme() == "http"
            && !token_endpoint.host_str().is_some_and(|h| {
                h == "localhost"
                    || h.parse::<std::net::IpAddr>()
                        .is_ok_and(|ip| ip.is_loopback())
                    || h == "[::1]"
            })
        {
            bail!(
                "{}: callers' tokens are sent there, so it must be https (http only to a \
                 loopback address)",
                at("token_endpoint")
            );
        }
        if table.client_id.trim().is_empty() {
            bail!(
                "{}: is empty; write toolhost's client id at the provider",
                at("client_id")
            );
        }
        let client_secret = match &table.client_secret_env {
            None => None,
            Some(var) => Some(std::env::var(var).map_err(|_| {
                anyhow::anyhow!(
                    "{}: the environment variable {var:?} is not set; export the client's \
                     secret there",
                    at("client_secret_env")
                )
            })?),
        };
        if table.audience.is_none() && table.resource.is_none() {
            bail!(
                "`token_exchange.{name}`: set `audience` or `resource`, so the token issued is \
                 meant for the upstream and for nothing else"
            );
        }
        resolved.insert(
            name.clone(),
            TokenExchange {
                name: name.clone(),
                token_endpoint,
                client_id: table.client_id.clone(),
                client_secret,
                audience: table.audience.clone(),
                resource: table.resource.clone(),
                scope: table.scope.clone(),
            },
        );
    }
    Ok(resolved)
}

/// A credential value holding `${exchange:NAME}`: `before`, the exchanged
/// token, `after`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExchangeTemplate {
    /// Text before the token (e.g. `Bearer `).
    pub before: String,
    /// The `[token_exchange.NAME]` it names.
    pub name: String,
    /// Text after it.
    pub after: String,
}

impl ExchangeTemplate {
    /// The template in `value`, if it holds `${exchange:…}`; an error when
    /// malformed or beside another `${…}`.
    pub fn parse(value: &str) -> Result<Option<ExchangeTemplate>> {
        let Some(start) = value.find(OPEN) else {
            return Ok(None);
        };
        let rest = &value[start + OPEN.len()..];
        let Some(end) = rest.find('}') else {
            bail!("`${{exchange:` is not closed with `}}`");
        };
        let name = &rest[..end];
        let before = &value[..start];
        let after = &rest[end + 1..];
        if before.contains("${") || after.contains("${") {
            bail!(
                "a value with `${{exchange:…}}` holds it once and no other `${{…}}`; put fixed \
                 text such as `Bearer ` around it"
            );
        }
        if name.is_empty() {
            bail!("`${{exchange:}}` names no `[token_exchange.NAME]`");
        }
        Ok(Some(ExchangeTemplate {
            before: before.to_string(),
            name: name.to_string(),
            after: after.to_string(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exchange_reference_is_parsed_and_a_malformed_one_refused() {
        let t = ExchangeTemplate::parse("Bearer ${exchange:statuspro}")
            .unwrap()
            .unwrap();
        assert_eq!(
            (t.before.as_str(), t.name.as_str(), t.after.as_str()),
            ("Bearer ", "statuspro", "")
        );
        assert_eq!(ExchangeTemplate::parse("Bearer ${TOKEN}").unwrap(), None);
        for bad in ["${exchange:a", "${exchange:}", "${exchange:a} ${B}"] {
            assert!(ExchangeTemplate::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_exchange_needs_https_an_audience_and_a_client() {
        let table = |endpoint: &str, audience: Option<&str>| {
            BTreeMap::from([(
                "x".to_string(),
                RawTokenExchange {
                    token_endpoint: endpoint.into(),
                    client_id: "toolhost".into(),
                    client_secret_env: None,
                    audience: audience.map(str::to_string),
                    resource: None,
                    scope: None,
                },
            )])
        };
        assert!(resolve_exchanges(&table("https://idp/token", Some("api"))).is_ok());
        assert!(resolve_exchanges(&table("http://127.0.0.1:9/token", Some("api"))).is_ok());
        let error = resolve_exchanges(&table("http://idp/token", Some("api")))
            .unwrap_err()
            .to_string();
        assert!(error.contains("must be https"), "{error}");
        let error = resolve_exchanges(&table("https://idp/token", None))
            .unwrap_err()
            .to_string();
        assert!(error.contains("`audience` or `resource`"), "{error}");
    }
}
