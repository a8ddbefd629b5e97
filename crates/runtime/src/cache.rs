//! The compile cache: compiled components kept on disk so a restart with
//! unchanged components skips compilation.
//!
//! An entry's name is a SHA-256 over the component's bytes, the engine's
//! compatibility hash (wasmtime version and every setting that affects
//! code) and this crate's version, so a change to any of them misses.
//!
//! An entry is native code that wasmtime runs unchecked, so the cache uses
//! only what this user's toolhost wrote:
//! - **The directory** must belong to the user running toolhost and must
//!   not be writable by group or others ([`CompileCache::open`] refuses it
//!   otherwise, and the host compiles every component). A directory it
//!   creates gets mode 0700.
//! - **An entry** is opened without following symbolic links and used only
//!   if it is a regular file owned by the user and not writable by group or
//!   others.
//! - **Its tag** is an HMAC-SHA256 under a secret key kept outside the
//!   directory ([`CompileCache::default_key_file`], mode 0600), over the
//!   entry's name and the artifact. It is checked before wasmtime sees a
//!   byte: an entry truncated, corrupted, copied from another machine or
//!   account, moved to another component's name, or written by anyone
//!   without the key is removed and rebuilt, never deserialized.
//! - **Writes** go to a new file created exclusively (never through an
//!   existing path or symbolic link), mode 0600, then renamed into place,
//!   so readers never see a partial entry.

use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hmac::{Hmac, KeyInit, Mac};
use rand::RngCore;
use sha2::{Digest, Sha256};
use thiserror::Error;
use wasmtime::Engine;
use wasmtime::component::Component;

/// Bytes of the secret key.
const KEY_BYTES: usize = 32;
/// Bytes of an entry's tag (HMAC-SHA256).
const TAG_BYTES: usize = 32;
/// The subdirectory of markers of schemas that passed a load's checks
/// ([`CompileCache::schema_checked`]).
const SCHEMAS_DIR: &str = "schemas";
/// The version of the checks a load makes of a tool's schemas; raised when
/// they change, including when `jsonschema` is upgraded (its meta-schemas
/// and formats are part of them), so schemas checked by the earlier ones
/// are checked again. 2: `jsonschema` 0.61. 3: a subschema's own `$schema`
/// must name a draft too.
const SCHEMA_CHECKS_VERSION: u32 = 3;

/// A directory of compiled components, and the key that proves an entry
/// was written by this user's toolhost.
#[derive(Clone)]
pub struct CompileCache {
    dir: PathBuf,
    key: Arc<[u8; KEY_BYTES]>,
}

impl std::fmt::Debug for CompileCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompileCache")
            .field("dir", &self.dir)
            .field("key", &"<redacted>")
            .finish()
    }
}

/// Why a cache directory or its key cannot be used. The host then
/// compiles every component; each says how to fix it.
#[derive(Debug, Error)]
pub enum CacheError {
    /// The directory or the key file could not be created or read.
    #[error("cannot use {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// The path belongs to another user.
    #[error(
        "{path} belongs to another user; use a directory of your own (--cache-dir) or --no-cache"
    )]
    NotOwned {
        /// The path.
        path: PathBuf,
    },
    /// Others can write the directory, so they could plant native code.
    #[error(
        "{path} can be written by other users (mode {mode:o}); make it private (chmod 700 {path}) or choose another --cache-dir"
    )]
    Writable {
        /// The directory.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The key file is not a private file of this user's.
    #[error(
        "the compile cache key {path} is not a private file of yours ({reason}); delete it and toolhost makes a new one"
    )]
    BadKey {
        /// The key file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// There is nowhere to keep the key.
    #[error(
        "there is no place for the compile cache key: set XDG_CACHE_HOME or HOME, or run with --no-cache"
    )]
    NoKeyHome,
}

/// Where compiled components are kept, as the command line asks
/// (`--cache-dir`, `--no-cache`, or neither).
#[derive(Debug, Clone)]
pub enum CacheSetting {
    /// Compile every component at start; keep nothing on disk.
    Off,
    /// [`CompileCache::default_dir`].
    Default,
    /// This directory.
    Dir(PathBuf),
}

impl CacheSetting {
    /// The cache this setting names, opened; `None` when it is off, or
    /// when it cannot be used (logged as a warning: the host then compiles
    /// every component, it does not fail).
    pub fn open(&self) -> Option<CompileCache> {
        let dir = match self {
            CacheSetting::Off => return None,
            CacheSetting::Default => CompileCache::default_dir()?,
            CacheSetting::Dir(dir) => dir.clone(),
        };
        match CompileCache::open(&dir) {
            Ok(cache) => Some(cache),
            Err(e) => {
                tracing::warn!("compile cache disabled: cannot use {}: {e}", dir.display());
                None
            }
        }
    }
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
    /// A cache in `dir` (created, mode 0700, if missing), keyed with the
    /// key in [`CompileCache::default_key_file`]. Refuses a directory that
    /// is not the user's own and private to writes.
    pub fn open(dir: &Path) -> Result<CompileCache, CacheError> {
        let key_file = Self::default_key_file().ok_or(CacheError::NoKeyHome)?;
        Self::open_with_key_file(dir, &key_file)
    }

    /// A cache in `dir` whose key is kept in `key_file` (created with a
    /// new random key if missing). `key_file` must be outside `dir`.
    pub fn open_with_key_file(dir: &Path, key_file: &Path) -> Result<CompileCache, CacheError> {
        private_dir(dir)?;
        let key = load_or_create_key(key_file)?;
        Ok(CompileCache {
            dir: dir.to_path_buf(),
            key: Arc::new(key),
        })
    }

    /// The directory it keeps entries in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The default location: `$XDG_CACHE_HOME/toolhost` or
    /// `~/.cache/toolhost`.
    pub fn default_dir() -> Option<PathBuf> {
        cache_home().map(|d| d.join("toolhost"))
    }

    /// Where the key is kept, whatever the cache directory:
    /// `$XDG_CACHE_HOME/toolhost.key` or `~/.cache/toolhost.key`, beside
    /// the default directory and outside every cache directory.
    pub fn default_key_file() -> Option<PathBuf> {
        cache_home().map(|d| d.join("toolhost.key"))
    }

    /// The entry's path and its name as bytes (what the tag covers besides
    /// the artifact).
    fn entry(&self, engine: &Engine, bytes: &[u8]) -> (PathBuf, Vec<u8>) {
        let mut hasher = ShaHasher(Sha256::new());
        engine.precompile_compatibility_hash().hash(&mut hasher);
        hasher.write(env!("CARGO_PKG_VERSION").as_bytes());
        hasher.write(bytes);
        let name = hasher.0.finalize().to_vec();
        (self.dir.join(format!("{}.cwasm", hex::encode(&name))), name)
    }

    /// The tag of `artifact` stored under the entry named `name`.
    fn tag(&self, name: &[u8]) -> Hmac<Sha256> {
        let mut mac =
            Hmac::<Sha256>::new_from_slice(&self.key[..]).expect("HMAC accepts any key length");
        mac.update(name);
        mac
    }

    /// The artifact of a stored entry, if its tag is this user's key's tag
    /// over `name` and the artifact.
    fn verified<'a>(&self, name: &[u8], stored: &'a [u8]) -> Option<&'a [u8]> {
        let (tag, artifact) = stored.split_at_checked(TAG_BYTES)?;
        let mut mac = self.tag(name);
        mac.update(artifact);
        mac.verify_slice(tag).is_ok().then_some(artifact)
    }

    /// The compiled form of `bytes` from the cache, if a trusted entry
    /// exists. An untrusted or corrupt entry is removed, with a warning.
    /// Blocking; call it off the async workers.
    pub fn load(&self, engine: &Engine, bytes: &[u8]) -> Option<Component> {
        let (path, name) = self.entry(engine, bytes);
        let stored = match read_entry(&path) {
            Ok(Some(stored)) => stored,
            Ok(None) => return None,
            Err(reason) => {
                tracing::warn!(
                    "untrusted compile cache entry {}: {reason}; compiling instead",
                    path.display()
                );
                let _ = std::fs::remove_file(&path);
                return None;
            }
        };
        match self.verified(&name, &stored) {
            // SAFETY: the tag proves these bytes were written by
            // `CompileCache::store` with this user's key, under this name:
            // the output of `Component::serialize` for these component
            // bytes on an engine with the same compatibility hash (it is in
            // the name). wasmtime also checks the header.
            Some(artifact) => match unsafe { Component::deserialize(engine, artifact) } {
                Ok(component) => return Some(component),
                Err(e) => tracing::warn!(
                    "stale compile cache entry {}: {e}; rebuilding",
                    path.display()
                ),
            },
            None => tracing::warn!(
                "corrupt compile cache entry {}: its tag does not match (truncated, damaged, or not written by this user's toolhost); rebuilding",
                path.display()
            ),
        }
        let _ = std::fs::remove_file(&path);
        None
    }

    /// Stores the compiled `component` of `bytes`. A failure is a warning:
    /// the next start compiles again. Blocking.
    pub fn store(&self, engine: &Engine, bytes: &[u8], component: &Component) {
        match component.serialize() {
            Ok(artifact) => self.store_artifact(engine, bytes, &artifact),
            Err(e) => tracing::warn!("cannot serialise a compiled component for the cache: {e:#}"),
        }
    }

    /// Stores `artifact`, the compiled form of `bytes` on an engine with
    /// `engine`'s settings (`Engine::precompile_component`'s output). A
    /// failure is a warning: the next start compiles again. Blocking.
    pub fn store_artifact(&self, engine: &Engine, bytes: &[u8], artifact: &[u8]) {
        let (path, name) = self.entry(engine, bytes);
        let mut mac = self.tag(&name);
        mac.update(artifact);
        let tag = mac.finalize().into_bytes();
        let written = write_new_then_rename(&path, &[&tag[..], artifact]);
        if let Err(e) = written {
            tracing::warn!(
                "cannot write the compile cache entry {}: {e}",
                path.display()
            );
        }
    }

    /// The marker recording that `schema`, a tool's `which` schema as its
    /// component listed it, passed every check a load makes: a file named
    /// by an HMAC under this user's key, so only this user's toolhost can
    /// name one. The checks' version and this crate's are in the name, so
    /// a change to either misses.
    fn schema_marker(&self, which: &str, schema: &str) -> PathBuf {
        let mut mac = self.tag(b"toolhost checked schema\0");
        mac.update(&SCHEMA_CHECKS_VERSION.to_le_bytes());
        mac.update(env!("CARGO_PKG_VERSION").as_bytes());
        mac.update(b"\0");
        mac.update(which.as_bytes());
        mac.update(b"\0");
        mac.update(schema.as_bytes());
        let name = hex::encode(mac.finalize().into_bytes());
        self.dir.join(SCHEMAS_DIR).join(name)
    }

    /// Whether `schema` (a tool's `which` schema, `input` or `output`, as
    /// its component listed it) is known to have passed every check a load
    /// makes ([`crate::spec`]): against its meta-schema, an object schema,
    /// self-contained. A load that finds it known skips building its
    /// validators (the meta-schema's compilation is most of a warm start)
    /// and builds the argument validator on first use. Blocking.
    pub fn schema_checked(&self, which: &str, schema: &str) -> bool {
        std::fs::symlink_metadata(self.schema_marker(which, schema))
            .is_ok_and(|meta| meta.is_file())
    }

    /// Records that `schema` passed every check a load makes. A failure is
    /// ignored: the next load checks it again. Blocking.
    pub fn remember_checked_schema(&self, which: &str, schema: &str) {
        let marker = self.schema_marker(which, schema);
        if marker.exists() {
            return;
        }
        let written = marker
            .parent()
            .map_or(Ok(()), |dir| {
                private_dir(dir).map_err(std::io::Error::other)
            })
            .and_then(|()| write_new_then_rename(&marker, &[]));
        if let Err(e) = written {
            tracing::debug!(
                "cannot record a checked schema in {}: {e}",
                marker.display()
            );
        }
    }
}

/// `$XDG_CACHE_HOME`, or `~/.cache`.
fn cache_home() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
}

/// Permission bits that let group or others write.
const WRITABLE_BY_OTHERS: u32 = 0o022;

/// Creates `dir` (mode 0700) if missing, and checks that it is a directory
/// of this user's that nobody else can write.
fn private_dir(dir: &Path) -> Result<(), CacheError> {
    let io = |source| CacheError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(io)?;
    let meta = std::fs::metadata(dir).map_err(io)?;
    if !meta.is_dir() {
        return Err(io(std::io::Error::other("it is not a directory")));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.uid() != rustix::process::geteuid().as_raw() {
            return Err(CacheError::NotOwned {
                path: dir.to_path_buf(),
            });
        }
        if meta.mode() & WRITABLE_BY_OTHERS != 0 {
            return Err(CacheError::Writable {
                path: dir.to_path_buf(),
                mode: meta.mode() & 0o7777,
            });
        }
    }
    Ok(())
}

/// Opens `path` for reading without following a symbolic link, and checks
/// that it is a regular file owned by this user with none of the
/// `forbidden` permission bits. `Ok(None)`: there is no such file.
fn open_owned(path: &Path, forbidden: u32) -> Result<Option<File>, String> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        rustix::fs::OFlags::NOFOLLOW.bits() as i32,
    );
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
            return Err("it is a symbolic link".into());
        }
        Err(e) => return Err(format!("cannot open it: {e}")),
    };
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read its metadata: {e}"))?;
    if !meta.is_file() {
        return Err("it is not a regular file".into());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.uid() != rustix::process::geteuid().as_raw() {
            return Err(format!("it belongs to another user (uid {})", meta.uid()));
        }
        if meta.mode() & forbidden != 0 {
            return Err(format!(
                "its mode {:o} gives others access",
                meta.mode() & 0o7777
            ));
        }
    }
    #[cfg(not(unix))]
    let _ = forbidden;
    Ok(Some(file))
}

/// Reads a cache entry: `Ok(None)` when there is none, `Err(reason)` when
/// the file there cannot be trusted.
fn read_entry(path: &Path) -> Result<Option<Vec<u8>>, String> {
    let Some(mut file) = open_owned(path, WRITABLE_BY_OTHERS)? else {
        return Ok(None);
    };
    let mut stored = Vec::new();
    file.read_to_end(&mut stored)
        .map_err(|e| format!("cannot read it: {e}"))?;
    Ok(Some(stored))
}

/// Writes `parts` to a new file beside `path` (created exclusively: an
/// existing file or symbolic link there is never written through; mode
/// 0600) and renames it to `path`.
fn write_new_then_rename(path: &Path, parts: &[&[u8]]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp{:016x}", rand::rng().next_u64()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    }
    let written = options.open(&tmp).and_then(|mut file| {
        for part in parts {
            file.write_all(part)?;
        }
        Ok(())
    });
    let renamed = written.and_then(|()| std::fs::rename(&tmp, path));
    if renamed.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    renamed
}

/// The key in `path`, or a new random one written there. The file must be
/// this user's, readable by nobody else.
fn load_or_create_key(path: &Path) -> Result<[u8; KEY_BYTES], CacheError> {
    let bad = |reason: String| CacheError::BadKey {
        path: path.to_path_buf(),
        reason,
    };
    // The directory it is in need not be private: the file itself must be
    // this user's (others can replace it only with a file of theirs, which
    // is refused) and is opened without following links.
    if let Some(parent) = path.parent() {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(parent).map_err(|source| CacheError::Io {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    for _ in 0..2 {
        if let Some(mut file) = open_owned(path, 0o077).map_err(bad)? {
            let mut key = Vec::new();
            file.read_to_end(&mut key)
                .map_err(|e| bad(format!("cannot read it: {e}")))?;
            return key
                .try_into()
                .map_err(|k: Vec<u8>| bad(format!("{} bytes, not {KEY_BYTES}", k.len())));
        }
        // None yet: write one. A hard link publishes it whole and never
        // replaces a key another toolhost made meanwhile; then read
        // whichever won.
        let mut key = [0u8; KEY_BYTES];
        rand::rng().fill_bytes(&mut key);
        let tmp = path.with_extension(format!("tmp{:016x}", rand::rng().next_u64()));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let io = |source| CacheError::Io {
            path: path.to_path_buf(),
            source,
        };
        options
            .open(&tmp)
            .and_then(|mut f| f.write_all(&key))
            .map_err(io)?;
        let linked = std::fs::hard_link(&tmp, path);
        let _ = std::fs::remove_file(&tmp);
        match linked {
            Ok(()) => return Ok(key),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io(e)),
        }
    }
    Err(bad("it keeps changing while toolhost reads it".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest valid component: the preamble alone.
    const EMPTY_COMPONENT: &[u8] = b"\0asm\x0d\x00\x01\x00";

    fn cache(root: &Path) -> CompileCache {
        CompileCache::open_with_key_file(&root.join("cache"), &root.join("cache.key")).unwrap()
    }

    fn only_entry(cache: &CompileCache) -> PathBuf {
        let entries: Vec<PathBuf> = std::fs::read_dir(&cache.dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(entries.len(), 1, "{entries:?}");
        entries[0].clone()
    }

    #[test]
    fn tags_catch_corruption_other_names_and_other_keys() {
        let root = tempfile::tempdir().unwrap();
        let cache = cache(root.path());
        let artifact = b"compiled code".to_vec();
        let mut mac = cache.tag(b"name");
        mac.update(&artifact);
        let mut stored = mac.finalize().into_bytes().to_vec();
        stored.extend_from_slice(&artifact);
        assert_eq!(cache.verified(b"name", &stored), Some(&artifact[..]));
        assert_eq!(cache.verified(b"other name", &stored), None);
        let mut flipped = stored.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(cache.verified(b"name", &flipped), None);
        assert_eq!(cache.verified(b"name", &stored[..stored.len() - 1]), None);
        assert_eq!(cache.verified(b"name", &stored[..10]), None);
        // A plain checksum, which anyone can compute, is not a tag.
        let mut plain = Sha256::digest(&artifact).to_vec();
        plain.extend_from_slice(&artifact);
        assert_eq!(cache.verified(b"name", &plain), None);
        // Another key (another user, another machine) does not verify.
        let other = CompileCache::open_with_key_file(
            &root.path().join("cache"),
            &root.path().join("other.key"),
        )
        .unwrap();
        assert_eq!(other.verified(b"name", &stored), None);
    }

    #[test]
    fn the_key_is_made_once_private_and_kept() {
        let root = tempfile::tempdir().unwrap();
        let first = cache(root.path());
        let again = cache(root.path());
        assert_eq!(first.key, again.key);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let key = root.path().join("cache.key");
            let mode = std::fs::metadata(&key).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
            std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
            let err =
                CompileCache::open_with_key_file(&root.path().join("cache"), &key).unwrap_err();
            assert!(matches!(err, CacheError::BadKey { .. }), "{err}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_directory_others_can_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("shared");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = CompileCache::open_with_key_file(&dir, &root.path().join("k.key")).unwrap_err();
        assert!(
            matches!(err, CacheError::Writable { mode: 0o777, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("chmod 700"), "{err}");
        // A new directory is private.
        let made = root.path().join("made/here");
        CompileCache::open_with_key_file(&made, &root.path().join("k.key")).unwrap();
        let mode = std::fs::metadata(&made).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }

    #[cfg(unix)]
    #[test]
    fn entries_are_used_only_when_private_regular_files() {
        use std::os::unix::fs::PermissionsExt;
        let engine = Engine::default();
        let root = tempfile::tempdir().unwrap();
        let cache = cache(root.path());
        assert!(cache.load(&engine, EMPTY_COMPONENT).is_none());
        let compiled = Component::new(&engine, EMPTY_COMPONENT).unwrap();
        cache.store(&engine, EMPTY_COMPONENT, &compiled);
        let entry = only_entry(&cache);
        let mode = std::fs::metadata(&entry).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(cache.load(&engine, EMPTY_COMPONENT).is_some());

        // A symbolic link to a valid entry is not followed, and is removed.
        let elsewhere = root.path().join("elsewhere.cwasm");
        std::fs::rename(&entry, &elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &entry).unwrap();
        assert!(cache.load(&engine, EMPTY_COMPONENT).is_none());
        assert!(
            std::fs::symlink_metadata(&entry).is_err(),
            "the link is gone"
        );

        // An entry others can write is not used.
        std::fs::rename(&elsewhere, &entry).unwrap();
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(cache.load(&engine, EMPTY_COMPONENT).is_none());
    }

    #[cfg(unix)]
    #[test]
    fn writes_never_go_through_a_planted_link() {
        let root = tempfile::tempdir().unwrap();
        let victim = root.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let path = root.path().join("entry.cwasm");
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        // The final name is replaced by rename, not written through.
        write_new_then_rename(&path, &[b"new"]).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert!(!std::fs::symlink_metadata(&path).unwrap().is_symlink());
    }
}
