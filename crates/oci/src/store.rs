//! The content store: what was pulled and verified, kept by digest.
//!
//! Layout (in a private directory, by default `toolhost-oci` beside the
//! compile cache):
//! - `blobs/sha256/<hex>`: manifests and component layers, each named by
//!   the SHA-256 of its bytes;
//! - `signatures/sha256-<hex>.json`: the cosign signature records found for
//!   the manifest `sha256:<hex>`, kept so a start without the registry
//!   checks them against the trust policy in force, as a pull would.
//!
//! Only bytes that passed every check of a pull are put here, and every read
//! hashes the bytes again: a blob whose digest does not match is refused
//! (and removed), never used.

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::OciError;
use super::signature::SignatureRecord;

/// A directory of verified blobs and signatures.
#[derive(Debug, Clone)]
pub struct ContentStore {
    dir: PathBuf,
}

/// `sha256:<hex>` of `bytes`.
pub fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// The hex part of a `sha256:<hex>` digest, checked.
fn sha256_hex(digest: &str) -> Result<&str, OciError> {
    match digest.strip_prefix("sha256:") {
        Some(hex)
            if hex.len() == 64
                && hex
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) =>
        {
            Ok(hex)
        }
        _ => Err(OciError::UnsupportedDigest {
            digest: digest.to_string(),
        }),
    }
}

impl ContentStore {
    /// The store in `dir`, created (mode 0700) if missing.
    pub fn open(dir: &Path) -> Result<ContentStore, OciError> {
        for sub in ["blobs/sha256", "signatures"] {
            private_dir(&dir.join(sub))?;
        }
        private_dir(dir)?;
        Ok(ContentStore {
            dir: dir.to_path_buf(),
        })
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn blob_path(&self, digest: &str) -> Result<PathBuf, OciError> {
        Ok(self.dir.join("blobs/sha256").join(sha256_hex(digest)?))
    }

    /// The blob `digest`, if stored and intact. A stored blob whose bytes no
    /// longer hash to its name is removed and reported missing.
    pub fn get(&self, digest: &str) -> Result<Option<Vec<u8>>, OciError> {
        let path = self.blob_path(digest)?;
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(OciError::Io { path, source }),
        };
        if sha256_digest(&bytes) != digest {
            tracing::warn!(
                "content store: {} does not match its digest; removed",
                path.display()
            );
            let _ = std::fs::remove_file(&path);
            return Ok(None);
        }
        Ok(Some(bytes))
    }

    /// Stores `bytes` as the blob `digest`, after checking that they hash
    /// to it.
    pub fn put(&self, digest: &str, bytes: &[u8]) -> Result<(), OciError> {
        let actual = sha256_digest(bytes);
        if actual != digest {
            return Err(OciError::DigestMismatch {
                what: "blob".into(),
                expected: digest.to_string(),
                actual,
            });
        }
        let path = self.blob_path(digest)?;
        if path.exists() {
            return Ok(());
        }
        write_atomically(&path, bytes)
    }

    fn signatures_path(&self, manifest_digest: &str) -> Result<PathBuf, OciError> {
        Ok(self
            .dir
            .join("signatures")
            .join(format!("sha256-{}.json", sha256_hex(manifest_digest)?)))
    }

    /// The signature records kept for the manifest `manifest_digest`.
    pub fn signatures(&self, manifest_digest: &str) -> Result<Vec<SignatureRecord>, OciError> {
        let path = self.signatures_path(manifest_digest)?;
        match std::fs::read(&path) {
            Ok(bytes) => Ok(serde_json::from_slice(&bytes).unwrap_or_default()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(source) => Err(OciError::Io { path, source }),
        }
    }

    /// Keeps the signature records of the manifest `manifest_digest`.
    pub fn put_signatures(
        &self,
        manifest_digest: &str,
        records: &[SignatureRecord],
    ) -> Result<(), OciError> {
        let path = self.signatures_path(manifest_digest)?;
        let bytes = serde_json::to_vec(records).expect("records serialize");
        write_atomically(&path, &bytes)
    }
}

/// Creates `dir` (and its parents) with mode 0700 where it is missing.
fn private_dir(dir: &Path) -> Result<(), OciError> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|source| OciError::Io {
        path: dir.to_path_buf(),
        source,
    })
}

/// Writes `bytes` to `path` as one whole file: to a new temporary file in
/// the same directory (private, created exclusively), then renamed over
/// `path`. A reader, or a watching server, sees the old file or the new
/// one, never a part.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), OciError> {
    let io = |source| OciError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(
        ".{name}.{}.{}.partial",
        std::process::id(),
        rand::random::<u32>()
    ));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let result = (|| {
        let mut file = options.open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blob_is_stored_only_under_its_own_digest_and_checked_on_read() {
        let dir = tempfile::tempdir().unwrap();
        let store = ContentStore::open(dir.path()).unwrap();
        let digest = sha256_digest(b"component");
        assert!(store.put(&sha256_digest(b"other"), b"component").is_err());
        assert_eq!(store.get(&digest).unwrap(), None);
        store.put(&digest, b"component").unwrap();
        assert_eq!(store.get(&digest).unwrap().unwrap(), b"component");
        // Changed on disk: refused and removed.
        let path = store.blob_path(&digest).unwrap();
        std::fs::write(&path, b"tampered!").unwrap();
        assert_eq!(store.get(&digest).unwrap(), None);
        assert!(!path.exists());
        assert!(store.get("sha256:../../etc").is_err());
    }
}
