//! Credentials chosen by the caller: a `credentials` entry whose `value`
//! holds `${secret:PATH}`, where `PATH` names a file under
//! `host.secrets_dir` and may contain `{subject}` and `{source}` (the
//! caller's subject and `jwt`/`token`), one file per caller, as a mounted
//! Kubernetes Secret lays them out.
//!
//! The file is read at each call, so adding or rotating a caller's secret
//! needs no reload. A caller without a file, a subject that cannot name a
//! file (`/`, `..`, control characters), or a request without an identity
//! has no value: the runtime refuses every request that credential applies
//! to, and nothing is sent. The component never sees a value either way.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::auth::Identity;

/// Where a per-caller credential's value begins in `value`.
const OPEN: &str = "${secret:";

/// The largest secret file read, in bytes.
const MAX_SECRET_BYTES: u64 = 64 * 1024;

/// A credential value that names a secret file per caller:
/// `before${secret:path}after`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretTemplate {
    before: String,
    path: String,
    after: String,
}

impl SecretTemplate {
    /// The template in `value`, if it holds `${secret:…}`; an error if it
    /// holds one that is malformed, more than one, or an environment
    /// reference besides.
    pub fn parse(value: &str) -> Result<Option<SecretTemplate>> {
        let Some(start) = value.find(OPEN) else {
            return Ok(None);
        };
        let rest = &value[start + OPEN.len()..];
        let Some(end) = rest.find('}').map(|i| {
            // `{subject}` and `{source}` close inside the path.
            let mut depth = 0usize;
            let mut close = i;
            for (j, c) in rest.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        close = j;
                        break;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            close
        }) else {
            bail!("`${{secret:` is not closed with `}}`");
        };
        let path = &rest[..end];
        let before = &value[..start];
        let after = &rest[end + 1..];
        if before.contains("${") || after.contains("${") {
            bail!(
                "a value with `${{secret:…}}` holds it once and no other `${{…}}`; put fixed text \
                 such as `Bearer ` around it"
            );
        }
        let without_placeholders = path.replace("{subject}", "").replace("{source}", "");
        if without_placeholders.contains(['{', '}']) {
            bail!("`${{secret:{path}}}`: the placeholders are `{{subject}}` and `{{source}}`");
        }
        if path.is_empty()
            || path.starts_with('/')
            || path.split('/').any(|part| part == ".." || part == ".")
        {
            bail!(
                "`${{secret:{path}}}` must be a relative path under `host.secrets_dir`, without \
                 `.` or `..`, e.g. `${{secret:statuspro/{{subject}}}}`"
            );
        }
        Ok(Some(SecretTemplate {
            before: before.to_string(),
            path: path.to_string(),
            after: after.to_string(),
        }))
    }

    /// The file for `identity`'s secret under `dir`, and its name as the
    /// audit trail records it (the path under `dir`); `None` without an
    /// identity, or for a subject that cannot name a file.
    fn file_for(&self, dir: &Path, identity: Option<&Identity>) -> Option<(PathBuf, String)> {
        let identity = identity?;
        let subject = &identity.subject;
        let usable = !subject.is_empty()
            && subject.len() <= 255
            && !subject.starts_with('.')
            && subject
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._@+-=".contains(c));
        if !usable {
            return None;
        }
        let name = self
            .path
            .replace("{subject}", subject)
            .replace("{source}", identity.source.name());
        Some((dir.join(&name), name))
    }

    /// The header value for `identity`, read from its file under `dir`,
    /// and the file's name; `None` when there is none.
    pub async fn value_for(
        &self,
        dir: &Path,
        identity: Option<&Identity>,
    ) -> Option<(String, String)> {
        let (path, name) = self.file_for(dir, identity)?;
        let metadata = tokio::fs::metadata(&path).await.ok()?;
        if !metadata.is_file() || metadata.len() > MAX_SECRET_BYTES {
            tracing::warn!(secret = %name, "a caller's secret file is not a regular file of at most 64 KiB; not used");
            return None;
        }
        let text = tokio::fs::read_to_string(&path).await.ok()?;
        let secret = text.trim_end_matches(['\n', '\r']);
        if secret.is_empty() {
            return None;
        }
        Some((format!("{}{secret}{}", self.before, self.after), name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_reference_is_parsed_with_its_placeholders() {
        let t = SecretTemplate::parse("Bearer ${secret:statuspro/{subject}}")
            .unwrap()
            .unwrap();
        assert_eq!(t.before, "Bearer ");
        assert_eq!(t.path, "statuspro/{subject}");
        assert_eq!(t.after, "");
        assert_eq!(SecretTemplate::parse("Bearer ${TOKEN}").unwrap(), None);
        for bad in [
            "${secret:../x/{subject}}",
            "${secret:/etc/{subject}}",
            "${secret:a/{user}}",
            "${secret:a/{subject}} ${TOKEN}",
            "${secret:a",
        ] {
            assert!(SecretTemplate::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_subject_that_cannot_name_a_file_has_no_secret() {
        let t = SecretTemplate::parse("${secret:s/{subject}}")
            .unwrap()
            .unwrap();
        let who = |subject: &str| Identity {
            source: crate::auth::IdentitySource::AccessToken,
            subject: subject.into(),
            scopes: Default::default(),
            claims: Default::default(),
        };
        let dir = Path::new("/secrets");
        assert!(t.file_for(dir, Some(&who("alice@example.com"))).is_some());
        for bad in ["../root", "a/b", ".hidden", "a\nb", ""] {
            assert!(t.file_for(dir, Some(&who(bad))).is_none(), "{bad:?}");
        }
        assert!(t.file_for(dir, None).is_none());
    }
}
