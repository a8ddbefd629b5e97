//! Component references and the lock file that pins them.
//!
//! A reference names a component in an OCI registry:
//! `oci://registry.example/acme/statuspro_list_orders:1.2.0` (a tag) or
//! `…@sha256:<hex>` (a digest). The `oci://` prefix is what marks an entry
//! of `components` in `toolhost.toml` as a reference; on the command line
//! it is optional.
//!
//! A tag can move; a digest cannot. The lock file (`toolhost.lock` next to
//! `toolhost.toml`) records the digest each tag resolved to the first time,
//! so what runs changes only when the operator says so (`toolhost update`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::OciError;

/// The prefix that marks a component reference in `toolhost.toml`.
pub const SCHEME: &str = "oci://";

/// A parsed component reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentRef {
    /// The reference as the operator wrote it, without `oci://`.
    pub text: String,
    /// The parsed form the registry client uses.
    pub parsed: oci_client::Reference,
}

impl ComponentRef {
    /// Parses `text`, with or without the `oci://` prefix.
    pub fn parse(text: &str) -> Result<ComponentRef, OciError> {
        let bare = text.strip_prefix(SCHEME).unwrap_or(text);
        let parsed: oci_client::Reference = bare.parse().map_err(|e| OciError::BadReference {
            reference: text.to_string(),
            reason: format!("{e}"),
        })?;
        if parsed
            .repository()
            .rsplit('/')
            .next()
            .is_none_or(str::is_empty)
        {
            return Err(OciError::BadReference {
                reference: text.to_string(),
                reason: "it names no repository".into(),
            });
        }
        Ok(ComponentRef {
            text: bare.to_string(),
            parsed,
        })
    }

    /// The digest the reference pins, if it names one (`…@sha256:…`).
    pub fn pinned_digest(&self) -> Option<&str> {
        self.parsed.digest()
    }

    /// The file the component is installed as in the plugin directory: the
    /// repository's last segment plus `.wasm`
    /// (`acme/statuspro_list_orders` → `statuspro_list_orders.wasm`), so a
    /// `[plugins.NAME]` block's `files` match it as they match a copied file.
    pub fn file_name(&self) -> String {
        let last = self
            .parsed
            .repository()
            .rsplit('/')
            .next()
            .unwrap_or("component");
        format!("{last}.wasm")
    }

    /// The same repository at `digest`.
    pub fn at_digest(&self, digest: &str) -> oci_client::Reference {
        oci_client::Reference::with_digest(
            self.parsed.registry().to_string(),
            self.parsed.repository().to_string(),
            digest.to_string(),
        )
    }

    /// The same repository at `tag`.
    pub fn at_tag(&self, tag: &str) -> oci_client::Reference {
        oci_client::Reference::with_tag(
            self.parsed.registry().to_string(),
            self.parsed.repository().to_string(),
            tag.to_string(),
        )
    }
}

impl std::fmt::Display for ComponentRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{SCHEME}{}", self.text)
    }
}

/// `toolhost.lock`: the digest each reference resolved to.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockFile {
    /// Reference (as written, without `oci://`) → manifest digest.
    #[serde(default)]
    pub components: BTreeMap<String, String>,
}

/// The first line of every lock file toolhost writes.
const LOCK_HEADER: &str = "# Written by toolhost: the manifest digest each component reference \
                           resolved to.\n# `toolhost update` re-resolves tags and shows what \
                           changed; edit only to unpin.\n";

impl LockFile {
    /// The lock file that belongs to the config file `config`:
    /// `toolhost.toml` → `toolhost.lock`, in the same directory.
    pub fn path_for(config: &Path) -> PathBuf {
        config.with_extension("lock")
    }

    /// Reads `path`; a missing file is an empty lock.
    pub fn load(path: &Path) -> Result<LockFile, OciError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(LockFile::default()),
            Err(source) => {
                return Err(OciError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        toml::from_str(&text).map_err(|e| OciError::BadLockFile {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })
    }

    /// Writes the lock to `path`: a new file, then renamed into place.
    pub fn save(&self, path: &Path) -> Result<(), OciError> {
        let body = toml::to_string(self).map_err(|e| OciError::BadLockFile {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        super::store::write_atomically(path, format!("{LOCK_HEADER}{body}").as_bytes())
    }

    /// The digest recorded for `reference`.
    pub fn digest(&self, reference: &ComponentRef) -> Option<&str> {
        self.components.get(&reference.text).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_parse_with_or_without_the_scheme() {
        let r = ComponentRef::parse("oci://127.0.0.1:5000/acme/hello:v1").unwrap();
        assert_eq!(r.parsed.registry(), "127.0.0.1:5000");
        assert_eq!(r.parsed.repository(), "acme/hello");
        assert_eq!(r.parsed.tag(), Some("v1"));
        assert_eq!(r.file_name(), "hello.wasm");
        assert_eq!(r.to_string(), "oci://127.0.0.1:5000/acme/hello:v1");
        let d = format!("127.0.0.1:5000/acme/hello@sha256:{}", "a".repeat(64));
        let r = ComponentRef::parse(&d).unwrap();
        assert_eq!(
            r.pinned_digest(),
            Some(format!("sha256:{}", "a".repeat(64)).as_str())
        );
        assert!(ComponentRef::parse("oci://UPPER/Case:tag").is_err());
    }

    #[test]
    fn a_lock_file_round_trips_and_a_missing_one_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = LockFile::path_for(&dir.path().join("toolhost.toml"));
        assert_eq!(path.file_name().unwrap(), "toolhost.lock");
        assert_eq!(LockFile::load(&path).unwrap(), LockFile::default());
        let mut lock = LockFile::default();
        lock.components.insert(
            "r.example/a/b:1".into(),
            format!("sha256:{}", "b".repeat(64)),
        );
        lock.save(&path).unwrap();
        assert_eq!(LockFile::load(&path).unwrap(), lock);
    }
}
