//! The compile cache: compiled components kept on disk so a restart with
//! unchanged components skips compilation.
//!
//! An entry's name is a SHA-256 over the component's bytes, the engine's
//! compatibility hash (wasmtime version and every setting that affects
//! code) and this crate's version, so a change to any of them misses. The
//! file holds a SHA-256 of the compiled artifact followed by the artifact;
//! the checksum is verified before wasmtime sees the bytes, so a truncated or
//! corrupted entry is detected, removed and rebuilt, never executed.
//! Entries are written to a temporary file and renamed, so readers never
//! see a partial one.
//!
//! The cache directory must be writable only by the operator: anyone who can
//! write there could plant native code (with a matching checksum). It is
//! created with mode 0700.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// A directory of compiled components.
#[derive(Debug, Clone)]
pub struct CompileCache {
    dir: PathBuf,
}

/// Feeds `Hash` output into a SHA-256.
struct ShaHasher(Sha256);

impl Hasher for ShaHasher {
    fn finish(&self) -> u64 {
        0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

impl CompileCache {
    /// A cache in `dir`, created if missing.
    pub fn open(dir: &Path) -> std::io::Result<CompileCache> {
        std::fs::create_dir_all(dir)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
        Ok(CompileCache {
            dir: dir.to_path_buf(),
        })
    }

    /// The default location: `$XDG_CACHE_HOME/toolhost` or
    /// `~/.cache/toolhost`.
    pub fn default_dir() -> Option<PathBuf> {
        std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|d| d.join("toolhost"))
    }

    fn entry(&self, engine: &Engine, bytes: &[u8]) -> PathBuf {
        let mut hasher = ShaHasher(Sha256::new());
        engine.precompile_compatibility_hash().hash(&mut hasher);
        hasher.write(env!("CARGO_PKG_VERSION").as_bytes());
        hasher.write(bytes);
        let key: String = hasher
            .0
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        self.dir.join(format!("{key}.cwasm"))
    }

    /// The compiled form of `bytes`: from the cache when a valid entry
    /// exists, otherwise compiled and stored. Blocking; call it off the
    /// async workers.
    pub fn compile(&self, engine: &Engine, bytes: &[u8]) -> wasmtime::Result<Component> {
        let path = self.entry(engine, bytes);
        if let Ok(stored) = std::fs::read(&path) {
            match verified(&stored) {
                // SAFETY: the artifact was produced by `Component::serialize`
                // for an engine with the same compatibility hash (it is in the
                // entry's name) and its checksum matches, so these are the
                // bytes that were written. wasmtime also checks the header.
                Some(artifact) => match unsafe { Component::deserialize(engine, artifact) } {
                    Ok(component) => return Ok(component),
                    Err(e) => tracing::warn!(
                        "stale compile cache entry {}: {e}; rebuilding",
                        path.display()
                    ),
                },
                None => {
                    tracing::warn!("corrupt compile cache entry {}; rebuilding", path.display())
                }
            }
            let _ = std::fs::remove_file(&path);
        }
        let component = Component::new(engine, bytes)?;
        if let Err(e) = self.store(&path, &component.serialize()?) {
            tracing::warn!(
                "cannot write the compile cache entry {}: {e}",
                path.display()
            );
        }
        Ok(component)
    }

    fn store(&self, path: &Path, artifact: &[u8]) -> std::io::Result<()> {
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let mut contents = Sha256::digest(artifact).to_vec();
        contents.extend_from_slice(artifact);
        std::fs::write(&tmp, contents)?;
        std::fs::rename(&tmp, path)
    }
}

/// The artifact of a stored entry, if its checksum matches.
fn verified(stored: &[u8]) -> Option<&[u8]> {
    let (sum, artifact) = stored.split_at_checked(32)?;
    (Sha256::digest(artifact).as_slice() == sum).then_some(artifact)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_catch_corruption() {
        let artifact = b"compiled code".to_vec();
        let mut stored = Sha256::digest(&artifact).to_vec();
        stored.extend_from_slice(&artifact);
        assert_eq!(verified(&stored), Some(&artifact[..]));
        let mut flipped = stored.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(verified(&flipped), None);
        assert_eq!(verified(&stored[..stored.len() - 1]), None);
        assert_eq!(verified(&stored[..10]), None);
    }
}
