//! `[auth]` and `[[access]]` in `toolhost.toml`: who may connect over HTTP,
//! and which plugins each caller sees.
//!
//! As for the rest of the file, serde reads the raw tables ([`RawAuth`],
//! [`RawAccess`]) and [`resolve_auth`] / [`resolve_access`] turn them into
//! what the host uses ([`AuthSettings`], [`Access`], checked at run time by
//! [`crate::auth`]): static tokens become SHA-256 digests (a token read
//! from a file or the environment is hashed at load and not kept), the
//! algorithm allow-list is checked, every number against its range. Every
//! key is documented in `docs/configuration.md` and `docs/auth.md`.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use jsonwebtoken::Algorithm;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::key;
use crate::auth::access::{AccessRule, PluginSet};
use crate::auth::settings::{AuthSettings, OAuthSettings, StaticToken, url_for_display};
use crate::auth::{Access, IdentitySource};

/// The scope `GET /metrics` on the MCP listener needs when
/// `auth.metrics_scope` is not written.
pub const DEFAULT_METRICS_SCOPE: &str = "toolhost:metrics";

/// `[auth]`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAuth {
    /// `resource`: this server's resource URI (RFC 8707), e.g.
    /// `https://mcp.example.com/mcp`: the audience access tokens must name.
    pub resource: String,
    /// `[auth.oauth]`: accept JWT access tokens from one issuer.
    pub oauth: Option<RawOAuth>,
    /// `[[auth.tokens]]`: static bearer tokens.
    #[serde(default)]
    pub tokens: Vec<RawToken>,
    /// `metrics_scope`: the scope `GET /metrics` on the MCP listener needs.
    pub metrics_scope: Option<String>,
}

/// `[auth.oauth]`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOAuth {
    /// `issuer`: the authorization server; the required `iss` claim.
    pub issuer: String,
    /// `jwks_url`: where the issuer publishes its signing keys.
    pub jwks_url: String,
    /// `algorithms`: the signature algorithms accepted.
    pub algorithms: Option<Vec<String>>,
    /// `scopes`: scopes every access token must grant.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// `jwks_refresh_secs`: how long fetched keys are used before they are
    /// fetched again.
    pub jwks_refresh_secs: Option<u64>,
    /// `jwks_refetch_min_secs`: the shortest time between two fetches that
    /// a token with an unknown key id causes.
    pub jwks_refetch_min_secs: Option<u64>,
    /// `leeway_secs`: clock skew allowed on `exp` and `nbf`.
    pub leeway_secs: Option<u64>,
    /// `require_at_jwt`: accept only tokens typed `at+jwt` (RFC 9068).
    #[serde(default)]
    pub require_at_jwt: bool,
}

/// One `[[auth.tokens]]` entry, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawToken {
    /// `subject`: the name this token authenticates as.
    pub subject: String,
    /// `sha256`: the token's SHA-256 digest, hex.
    pub sha256: Option<String>,
    /// `file`: read the token from this file (trailing newline dropped).
    pub file: Option<PathBuf>,
    /// `env`: read the token from this environment variable.
    pub env: Option<String>,
    /// `scopes`: the scopes the token grants.
    #[serde(default)]
    pub scopes: Vec<String>,
}

/// One `[[access]]` rule, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAccess {
    /// `source`: which kind of credential `subjects` are names of, `token`
    /// or `jwt`; required when `[auth]` accepts both.
    pub source: Option<String>,
    /// `subjects`: callers this rule applies to, by subject.
    #[serde(default)]
    pub subjects: Vec<String>,
    /// `scopes`: callers this rule applies to, by any one scope they hold.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// `plugins`: plugin block names (`[plugins.NAME]`) the callers see,
    /// or `"*"` for all.
    pub plugins: Vec<String>,
}

/// Algorithms accepted when `auth.oauth.algorithms` is absent.
const DEFAULT_ALGORITHMS: [Algorithm; 2] = [Algorithm::RS256, Algorithm::ES256];

/// Resolves `[auth]`: parses the URLs, checks the algorithms, hashes the
/// tokens read from files and the environment.
pub fn resolve_auth(raw: RawAuth) -> Result<AuthSettings> {
    // The value is never quoted: a URL can carry credentials.
    let resource = url::Url::parse(&raw.resource).map_err(|e| {
        anyhow::anyhow!(
            "`auth.resource` is not an absolute URL ({e}): write the address clients use for \
             this server, e.g. \"https://mcp.example.com/mcp\""
        )
    })?;
    if !matches!(resource.scheme(), "https" | "http") || resource.fragment().is_some() {
        bail!(
            "`auth.resource` must be an http(s) URL without a fragment, the address clients \
             use for this server (e.g. \"https://mcp.example.com/mcp\"), not {}",
            url_for_display(&resource)
        );
    }
    if has_userinfo(&resource) {
        bail!(
            "`auth.resource` holds a user name or password ({}): remove them; the resource URI \
             is published to every client in the protected-resource metadata",
            url_for_display(&resource)
        );
    }
    let oauth = raw
        .oauth
        .map(resolve_oauth)
        .transpose()
        .context("in [auth.oauth]")?;
    let mut tokens = Vec::new();
    for (i, token) in raw.tokens.into_iter().enumerate() {
        let subject = token.subject.clone();
        tokens.push(
            resolve_token(token)
                .with_context(|| format!("in [[auth.tokens]] entry {} ({subject})", i + 1))?,
        );
    }
    if oauth.is_none() && tokens.is_empty() {
        bail!(
            "[auth] accepts no credential: add [auth.oauth] (JWT access tokens) or at least \
             one [[auth.tokens]] entry (static bearer tokens)"
        );
    }
    let path = resource.path().trim_end_matches('/');
    let metadata_url = format!(
        "{}/.well-known/oauth-protected-resource{path}",
        resource.origin().ascii_serialization()
    );
    let metrics_scope = raw
        .metrics_scope
        .unwrap_or_else(|| DEFAULT_METRICS_SCOPE.to_string());
    if metrics_scope.is_empty() || metrics_scope.contains(|c: char| c.is_whitespace()) {
        bail!(
            "`auth.metrics_scope` must be one scope (no spaces), such as \"{DEFAULT_METRICS_SCOPE}\""
        );
    }
    Ok(AuthSettings {
        resource: raw.resource,
        metadata_url,
        oauth,
        tokens,
        metrics_scope,
    })
}

fn resolve_oauth(raw: RawOAuth) -> Result<OAuthSettings> {
    // The value is never quoted: a URL can carry credentials.
    let jwks_url = url::Url::parse(&raw.jwks_url).map_err(|e| {
        anyhow::anyhow!(
            "`auth.oauth.jwks_url` is not an absolute URL ({e}): write the issuer's key-set \
             address, e.g. \"https://idp.example.com/.well-known/jwks.json\""
        )
    })?;
    let loopback = match jwks_url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name == "localhost",
        None => false,
    };
    if jwks_url.scheme() != "https" && !(jwks_url.scheme() == "http" && loopback) {
        bail!(
            "`auth.oauth.jwks_url` must be https (plain http only to a loopback address), \
             not {}: keys fetched in the clear could be replaced on the way; use the issuer's \
             https address",
            url_for_display(&jwks_url)
        );
    }
    if has_userinfo(&jwks_url) {
        bail!(
            "`auth.oauth.jwks_url` holds a user name or password ({}): remove them; an \
             issuer's key set is public and fetched without credentials",
            url_for_display(&jwks_url)
        );
    }
    let algorithms = match raw.algorithms {
        None => DEFAULT_ALGORITHMS.to_vec(),
        Some(names) if names.is_empty() => {
            bail!("`auth.oauth.algorithms` is empty: list at least one, e.g. [\"RS256\"]")
        }
        Some(names) => names
            .iter()
            .map(|name| parse_algorithm(name))
            .collect::<Result<_>>()?,
    };
    Ok(OAuthSettings {
        issuer: raw.issuer,
        jwks_url,
        algorithms,
        scopes: raw.scopes.into_iter().collect(),
        jwks_refresh: key!("auth.oauth.jwks_refresh_secs").secs(raw.jwks_refresh_secs)?,
        jwks_refetch_min: key!("auth.oauth.jwks_refetch_min_secs")
            .secs(raw.jwks_refetch_min_secs)?,
        leeway: key!("auth.oauth.leeway_secs").secs(raw.leeway_secs)?,
        require_at_jwt: raw.require_at_jwt,
    })
}

/// Whether `url` carries a user name or password.
fn has_userinfo(url: &url::Url) -> bool {
    !url.username().is_empty() || url.password().is_some()
}

/// An asymmetric signature algorithm by its JOSE name. `none` and the HMAC
/// family are refused: a JWKS publishes public keys, and a public key used
/// as an HMAC secret lets anyone sign.
fn parse_algorithm(name: &str) -> Result<Algorithm> {
    let allowed = "RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, EdDSA";
    if name.eq_ignore_ascii_case("none") || name.to_ascii_uppercase().starts_with("HS") {
        bail!(
            "`auth.oauth.algorithms`: {name:?} is refused: unsigned and shared-secret tokens \
             cannot be checked against an issuer's public keys; use one of {allowed}"
        );
    }
    name.parse::<Algorithm>().map_err(|_| {
        anyhow::anyhow!("`auth.oauth.algorithms`: unknown algorithm {name:?}; use one of {allowed}")
    })
}

fn resolve_token(raw: RawToken) -> Result<StaticToken> {
    if raw.subject.is_empty() {
        bail!("`subject` is empty: name who this token authenticates as");
    }
    let sha256 = match (&raw.sha256, &raw.file, &raw.env) {
        (Some(hex), None, None) => parse_digest(hex)?,
        (None, Some(path), None) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read `file` {}", path.display()))?;
            digest_of_secret(text.trim_end_matches(['\n', '\r']), "`file`")?
        }
        (None, None, Some(var)) => {
            let value = std::env::var(var).with_context(|| {
                format!("the environment variable {var} (`env`) is not set; export it before starting toolhost")
            })?;
            digest_of_secret(&value, "`env`")?
        }
        _ => bail!(
            "set exactly one of `sha256` (the token's SHA-256, hex), `file` and `env`; \
             hash a token with `printf %s \"$TOKEN\" | sha256sum`"
        ),
    };
    Ok(StaticToken {
        subject: raw.subject,
        sha256,
        scopes: raw.scopes.into_iter().collect(),
    })
}

fn digest_of_secret(token: &str, key: &str) -> Result<[u8; 32]> {
    if token.len() < 16 {
        bail!(
            "{key}: the token is {} characters; use at least 16 random characters \
             (e.g. `openssl rand -hex 32`)",
            token.len()
        );
    }
    Ok(Sha256::digest(token.as_bytes()).into())
}

fn parse_digest(hex: &str) -> Result<[u8; 32]> {
    let hex = hex.trim();
    let bytes = hex.as_bytes();
    if bytes.len() != 64 {
        bail!(
            "`sha256` must be 64 hex digits (the token's SHA-256, e.g. from \
             `printf %s \"$TOKEN\" | sha256sum`), not {} characters",
            bytes.len()
        );
    }
    let mut out = [0u8; 32];
    hex::decode_to_slice(bytes, &mut out)
        .map_err(|_| anyhow::anyhow!("`sha256` holds a character that is not a hex digit"))?;
    Ok(out)
}

/// Resolves the `[[access]]` rules, for an `[auth]` that establishes
/// identities from `sources` (none without `[auth]`). No rules: everybody
/// sees every plugin.
///
/// Static-token names and JWT subjects are separate namespaces: a rule's
/// `subjects` name callers of one `source`. Where `[auth]` accepts only one
/// kind of credential, that kind is the default; where it accepts both, a
/// rule with `subjects` must say which.
pub fn resolve_access(raw: Vec<RawAccess>, sources: &[IdentitySource]) -> Result<Access> {
    let mut rules = Vec::new();
    for (i, rule) in raw.into_iter().enumerate() {
        let at = || format!("in [[access]] rule {}", i + 1);
        let source = match rule.source.as_deref() {
            Some("token") => Some(IdentitySource::StaticToken),
            Some("jwt") => Some(IdentitySource::AccessToken),
            Some(other) => bail!(
                "{}: `source` is {other:?}: write \"token\" (static tokens, [[auth.tokens]]) or \
                 \"jwt\" (access tokens from [auth.oauth])",
                at()
            ),
            None => match sources {
                [only] => Some(*only),
                [] => None,
                _ if rule.subjects.is_empty() => None,
                _ => bail!(
                    "{}: [auth] accepts both static tokens and JWT access tokens, whose \
                     subjects are separate (a JWT with `sub = \"alice\"` is not the static token \
                     named alice): add `source = \"token\"` or `source = \"jwt\"` to say which \
                     `subjects` names",
                    at()
                ),
            },
        };
        if let Some(source) = source
            && !sources.is_empty()
            && !sources.contains(&source)
        {
            bail!(
                "{}: `source = \"{}\"`, but [auth] accepts no {}: {}",
                at(),
                source.name(),
                match source {
                    IdentitySource::StaticToken => "static tokens",
                    IdentitySource::AccessToken => "JWT access tokens",
                },
                match source {
                    IdentitySource::StaticToken => "add [[auth.tokens]] or change `source`",
                    IdentitySource::AccessToken => "add [auth.oauth] or change `source`",
                }
            );
        }
        if rule.subjects.is_empty() && rule.scopes.is_empty() {
            bail!(
                "{}: name the callers it applies to with `subjects` and/or `scopes`",
                at()
            );
        }
        if rule.plugins.is_empty() {
            bail!(
                "{}: `plugins` is empty: list plugin block names ([plugins.NAME]) or \"*\"",
                at()
            );
        }
        let plugins = if rule.plugins.iter().any(|p| p == "*") {
            PluginSet::All
        } else {
            PluginSet::Named(rule.plugins.into_iter().collect())
        };
        rules.push(AccessRule {
            source,
            subjects: rule.subjects.into_iter().collect(),
            scopes: rule.scopes.into_iter().collect(),
            plugins,
        });
    }
    Ok(Access::new(rules))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn auth(text: &str) -> Result<AuthSettings> {
        resolve_auth(toml::from_str(text)?)
    }

    const OAUTH: &str = "resource = \"https://mcp.example.com/mcp\"\n[oauth]\nissuer = \"https://idp.example.com\"\njwks_url = \"https://idp.example.com/jwks.json\"\n";

    #[test]
    fn the_metadata_url_is_the_well_known_path_before_the_resource_path() {
        let a = auth(OAUTH).unwrap();
        assert_eq!(
            a.metadata_url,
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        let a =
            auth(&OAUTH.replace("https://mcp.example.com/mcp", "http://127.0.0.1:8080")).unwrap();
        assert_eq!(
            a.metadata_url,
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource"
        );
    }

    #[test]
    fn oauth_defaults_apply() {
        let a = auth(OAUTH).unwrap();
        let o = a.oauth.unwrap();
        assert_eq!(o.algorithms, DEFAULT_ALGORITHMS.to_vec());
        assert_eq!(o.jwks_refresh, Duration::from_secs(300));
        assert_eq!(o.jwks_refetch_min, Duration::from_secs(10));
        assert_eq!(o.leeway, Duration::from_secs(30));
        assert!(!o.require_at_jwt);
        let o = auth(&format!("{OAUTH}require_at_jwt = true\n"))
            .unwrap()
            .oauth
            .unwrap();
        assert!(o.require_at_jwt);
    }

    #[test]
    fn none_and_hmac_algorithms_are_refused() {
        for alg in ["none", "HS256", "hs512"] {
            let e = auth(&format!("{OAUTH}algorithms = [\"{alg}\"]\n")).unwrap_err();
            assert!(format!("{e:#}").contains("is refused"), "{alg}: {e:#}");
        }
        let e = auth(&format!("{OAUTH}algorithms = [\"XY1\"]\n")).unwrap_err();
        assert!(format!("{e:#}").contains("unknown algorithm"), "{e:#}");
    }

    #[test]
    fn numbers_are_checked_against_their_range() {
        let e = auth(&format!("{OAUTH}leeway_secs = 100000\n")).unwrap_err();
        assert!(
            format!("{e:#}").contains("`auth.oauth.leeway_secs` must be between 0 and 300"),
            "{e:#}"
        );
        let e = auth(&format!("{OAUTH}jwks_refresh_secs = 1\n")).unwrap_err();
        assert!(
            format!("{e:#}").contains("auth.oauth.jwks_refresh_secs"),
            "{e:#}"
        );
    }

    #[test]
    fn keys_over_plain_http_only_from_loopback() {
        let text = OAUTH.replace(
            "https://idp.example.com/jwks.json",
            "http://idp.example.com/jwks.json",
        );
        let e = auth(&text).unwrap_err();
        assert!(format!("{e:#}").contains("must be https"), "{e:#}");
        assert!(
            format!("{e:#}").contains("use the issuer's https address"),
            "{e:#}"
        );
        for loopback in [
            "http://127.0.0.1:9/jwks.json",
            "http://[::1]:9/jwks.json",
            "http://localhost:9/jwks.json",
        ] {
            auth(&OAUTH.replace("https://idp.example.com/jwks.json", loopback)).unwrap();
        }
    }

    /// A URL can carry credentials (`user:password@`, `?access_token=`):
    /// errors name the key and the problem and never show them.
    #[test]
    fn url_errors_never_show_credentials() {
        const SECRET: &str = "s3cret-in-the-url";
        let resource = |value: &str| OAUTH.replace("https://mcp.example.com/mcp", value);
        let jwks = |value: &str| OAUTH.replace("https://idp.example.com/jwks.json", value);
        let cases = [
            (
                resource(&format!("mcp.example.com/{SECRET}")),
                "`auth.resource` is not an absolute URL",
            ),
            (
                resource(&format!(
                    "ftp://user:{SECRET}@mcp.example.com/mcp?t={SECRET}"
                )),
                "`auth.resource` must be an http(s) URL without a fragment, the address clients \
                 use for this server (e.g. \"https://mcp.example.com/mcp\"), not \
                 ftp://mcp.example.com/mcp?…",
            ),
            (
                resource(&format!("https://user:{SECRET}@mcp.example.com/mcp")),
                "`auth.resource` holds a user name or password (https://mcp.example.com/mcp): \
                 remove them",
            ),
            (
                jwks(&format!("idp.example.com/jwks.json?access_token={SECRET}")),
                "`auth.oauth.jwks_url` is not an absolute URL",
            ),
            (
                jwks(&format!(
                    "http://idp.example.com/jwks.json?access_token={SECRET}"
                )),
                "`auth.oauth.jwks_url` must be https (plain http only to a loopback address), \
                 not http://idp.example.com/jwks.json?…",
            ),
            (
                jwks(&format!("https://ops:{SECRET}@idp.example.com/jwks.json")),
                "`auth.oauth.jwks_url` holds a user name or password \
                 (https://idp.example.com/jwks.json): remove them",
            ),
            (
                jwks(&format!("http://{SECRET}@127.0.0.1:9/jwks.json")),
                "`auth.oauth.jwks_url` holds a user name or password \
                 (http://127.0.0.1:9/jwks.json): remove them",
            ),
        ];
        for (text, expected) in cases {
            let e = format!("{:#}", auth(&text).unwrap_err());
            assert!(e.contains(expected), "{e}\nexpected: {expected}");
            assert!(!e.contains(SECRET), "a credential is shown: {e}");
        }
    }

    #[test]
    fn a_token_needs_exactly_one_source_and_a_full_digest() {
        let base = "resource = \"https://h/mcp\"\n[[tokens]]\nsubject = \"ci\"\n";
        let e = auth(base).unwrap_err();
        assert!(format!("{e:#}").contains("exactly one of"), "{e:#}");
        let e = auth(&format!("{base}sha256 = \"abcd\"\n")).unwrap_err();
        assert!(format!("{e:#}").contains("64 hex digits"), "{e:#}");
        let digest = hex::encode(Sha256::digest(b"a-long-enough-token"));
        let a = auth(&format!("{base}sha256 = \"{digest}\"\n")).unwrap();
        assert_eq!(
            a.tokens[0].sha256,
            <[u8; 32]>::from(Sha256::digest(b"a-long-enough-token"))
        );
        assert!(!format!("{:?}", a.tokens[0]).contains(&digest[..8]));
    }

    #[test]
    fn a_token_file_is_hashed_and_short_tokens_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "0123456789abcdef0123\n").unwrap();
        let text = format!(
            "resource = \"https://h/mcp\"\n[[tokens]]\nsubject = \"ci\"\nfile = {:?}\n",
            path.display().to_string()
        );
        let a = auth(&text).unwrap();
        assert_eq!(
            a.tokens[0].sha256,
            <[u8; 32]>::from(Sha256::digest(b"0123456789abcdef0123"))
        );
        std::fs::write(&path, "short\n").unwrap();
        let e = auth(&text).unwrap_err();
        assert!(format!("{e:#}").contains("at least 16"), "{e:#}");
    }

    #[test]
    fn auth_without_any_credential_is_an_error() {
        let e = auth("resource = \"https://h/mcp\"\n").unwrap_err();
        assert!(format!("{e:#}").contains("accepts no credential"), "{e:#}");
    }

    #[test]
    fn access_rules_need_callers_and_plugins() {
        let rules = |text: &str| {
            #[derive(Deserialize)]
            struct File {
                access: Vec<RawAccess>,
            }
            resolve_access(toml::from_str::<File>(text).unwrap().access, &[])
        };
        let e = rules("[[access]]\nplugins = [\"a\"]\n").unwrap_err();
        assert!(
            format!("{e:#}").contains("`subjects` and/or `scopes`"),
            "{e:#}"
        );
        let e = rules("[[access]]\nsubjects = [\"a\"]\nplugins = []\n").unwrap_err();
        assert!(format!("{e:#}").contains("`plugins` is empty"), "{e:#}");
        rules("[[access]]\nscopes = [\"x\"]\nplugins = [\"*\"]\n").unwrap();
    }

    #[test]
    fn subjects_name_callers_of_one_source_which_must_be_said_where_auth_accepts_both() {
        let rules = |text: &str, sources: &[IdentitySource]| {
            #[derive(Deserialize)]
            struct File {
                access: Vec<RawAccess>,
            }
            resolve_access(toml::from_str::<File>(text).unwrap().access, sources)
        };
        let both = [IdentitySource::StaticToken, IdentitySource::AccessToken];
        let alice = "[[access]]\nsubjects = [\"alice\"]\nplugins = [\"*\"]\n";
        let e = rules(alice, &both).unwrap_err();
        assert!(
            format!("{e:#}").contains("add `source = \"token\"` or `source = \"jwt\"`"),
            "{e:#}"
        );
        // Scopes alone need no source: a scope is a grant, whoever holds it.
        rules("[[access]]\nscopes = [\"x\"]\nplugins = [\"*\"]\n", &both).unwrap();
        let e = rules(
            &format!("{alice}source = \"jwt\"\n"),
            &[IdentitySource::StaticToken],
        )
        .unwrap_err();
        assert!(format!("{e:#}").contains("add [auth.oauth]"), "{e:#}");
        let e = rules(&format!("{alice}source = \"oidc\"\n"), &both).unwrap_err();
        assert!(format!("{e:#}").contains("write \"token\""), "{e:#}");

        // The rule's source decides who matches.
        let token = |source, subject: &str| crate::auth::Identity {
            source,
            subject: subject.into(),
            scopes: Default::default(),
            claims: Default::default(),
        };
        let only_tokens = rules(alice, &[IdentitySource::StaticToken]).unwrap();
        assert!(only_tokens.allows(Some(&token(IdentitySource::StaticToken, "alice")), "p"));
        assert!(
            !only_tokens.allows(Some(&token(IdentitySource::AccessToken, "alice")), "p"),
            "a JWT with sub=alice is not the static token alice"
        );
        let jwt = rules(&format!("{alice}source = \"jwt\"\n"), &both).unwrap();
        assert!(jwt.allows(Some(&token(IdentitySource::AccessToken, "alice")), "p"));
        assert!(!jwt.allows(Some(&token(IdentitySource::StaticToken, "alice")), "p"));
    }
}
