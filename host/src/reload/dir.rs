//! Loading the plugin directory and keeping the registry in step with it:
//! the initial load at start and hot reload are the same scan.
//!
//! The flow: `notify` reports file-system events → `watch` keeps only
//! those that can change a file's content ([`changes_content`]: create,
//! write, close after writing, rename, remove; never an open, a read or a
//! close after reading, the host's own reads included) → it waits until
//! the directory has been quiet for [`QUIET`] (so a file copied in chunks,
//! or a burst of writes, is read once, whole) → [`Reloader::rescan`]
//! compares the directory with what is serving, loads what changed, drops
//! what was deleted, builds the next [`Registry`] and hands it to the
//! [`Gateway`](crate::server::Gateway), which swaps it atomically and tells clients.
//!
//! Rules:
//! - A file whose size, modification time, change time and inode are what
//!   the last scan saw is neither read nor hashed, unless it had changed
//!   less than [`RACY`] before that scan (a write in the same timestamp
//!   tick would not show in its metadata).
//! - A file whose bytes (SHA-256) did not change is not reloaded; a rescan
//!   that changes nothing sends nothing.
//! - Each distinct content is compiled once per scan, and not at all when
//!   a plugin already serving has the same digest: files with the same
//!   bytes share the compiled component (each still lists its tools with
//!   its own settings).
//! - A file that fails to load is reported once per distinct content: the
//!   same bytes are not loaded, or reported, again until they change.
//! - A replacement that fails to load leaves the previous version serving,
//!   with an error naming the file. (A file caught mid-copy fails the same
//!   way, and the next event after the copy completes loads it.)
//! - Under `host.unmatched_files = "skip"`, a file no `[plugins.NAME]`
//!   block matches is skipped as if absent (reported once): a config
//!   reload that removes its block drops it, one that adds a block back
//!   loads it.
//! - File names that are not UTF-8 are skipped with an error (once): two
//!   such names could read alike, and tool ownership and the `files`
//!   patterns of `toolhost.toml` go by name.
//! - Tool name ownership: see [`crate::registry`]; every scan's new files
//!   share one load order, the first scan's included.
//! - Calls in flight hold the plugin they started with and finish on it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsString;
use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result};
use notify::event::{AccessKind, AccessMode, ModifyKind};
use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;
use wasmtime::component::Component;

use crate::plugin::{LoadError, Loader, Plugin};
use crate::registry::Registry;
use crate::server::LoadProgress;

/// How long the directory must be quiet before a rescan.
pub const QUIET: Duration = Duration::from_millis(75);

/// A file whose metadata changed less than this before a scan is read
/// again by the next scan even if its metadata looks the same: file
/// systems keep timestamps in ticks (up to 2 s on FAT), and a second write
/// in the tick of the first would not change them.
pub const RACY: Duration = Duration::from_secs(2);

/// What a scan remembers of a file's metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileStat {
    len: u64,
    modified: Option<SystemTime>,
    /// The inode change time where there is one (it cannot be set back, as
    /// the modification time can), else the modification time.
    changed: Option<SystemTime>,
    /// Device and inode: a file renamed into place is another file.
    identity: (u64, u64),
}

impl FileStat {
    fn of(meta: &Metadata) -> FileStat {
        #[cfg(unix)]
        let (changed, identity) = {
            use std::os::unix::fs::MetadataExt;
            let changed = u64::try_from(meta.ctime()).ok().map(|secs| {
                SystemTime::UNIX_EPOCH
                    + Duration::new(secs, u32::try_from(meta.ctime_nsec()).unwrap_or(0))
            });
            (changed, (meta.dev(), meta.ino()))
        };
        #[cfg(not(unix))]
        let (changed, identity) = (meta.modified().ok(), (0, 0));
        FileStat {
            len: meta.len(),
            modified: meta.modified().ok(),
            changed,
            identity,
        }
    }

    /// Whether the file last changed at least [`RACY`] before `now`.
    fn settled(&self, now: SystemTime) -> bool {
        let newest = self.modified.max(self.changed);
        newest.is_some_and(|t| now.duration_since(t).is_ok_and(|age| age >= RACY))
    }
}

/// What the last scan saw of one file.
#[derive(Clone)]
struct Seen {
    stat: FileStat,
    /// Whether `stat` can be trusted to show the next change.
    settled: bool,
    /// SHA-256 of its bytes, hex.
    digest: String,
    /// Whether these bytes failed to load (and were reported).
    failed: bool,
}

/// A `*.wasm` file present in this scan.
struct Present {
    path: PathBuf,
    digest: String,
    /// Its bytes, when this scan read them.
    bytes: Option<Vec<u8>>,
}

/// Scans a plugin directory into registries, remembering what it saw.
pub struct Reloader {
    dir: PathBuf,
    loader: Loader,
    /// By file name, from the last scan.
    seen: HashMap<String, Seen>,
    /// Non-UTF-8 file names already reported.
    bad_names: HashSet<OsString>,
    /// Files not served because no block matches them (`host.unmatched_files
    /// = "skip"`), already reported.
    unmatched: HashSet<String>,
    /// Whether this scan loads every file again, changed or not, for new
    /// settings ([`Reloader::reconfigure`]).
    reload_all: bool,
    /// Where the next scan reports how far it has come (the initial load's,
    /// read while requests are answered before it is in); taken by it.
    progress: Option<Arc<LoadProgress>>,
    /// When set, the only file names scans consider (`toolhost call`
    /// loading just the file that serves its tool).
    only: Option<HashSet<String>>,
}

/// What a rescan found and did.
pub struct Rescan {
    /// The next registry.
    pub registry: Registry,
    /// Whether it differs from the one before (files added, changed or
    /// removed).
    pub changed: bool,
    /// `*.wasm` files in the directory.
    pub files: usize,
    /// Files read and hashed (the others were unchanged since the last
    /// scan).
    pub read: usize,
    /// Distinct contents compiled (or taken from the compile cache).
    pub compiled: usize,
    /// Files loaded.
    pub loaded: usize,
    /// Files that failed to load.
    pub failed: usize,
    /// Files gone.
    pub removed: usize,
}

impl std::fmt::Display for Rescan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} files, {} read, {} compiled, {} loaded, {} failed, {} removed",
            self.files, self.read, self.compiled, self.loaded, self.failed, self.removed
        )
    }
}

impl Reloader {
    /// A reloader for `dir` that has seen nothing yet.
    pub fn new(dir: &Path, loader: Loader) -> Reloader {
        Reloader {
            dir: dir.to_path_buf(),
            loader,
            seen: HashMap::new(),
            bad_names: HashSet::new(),
            unmatched: HashSet::new(),
            reload_all: false,
            progress: None,
            only: None,
        }
    }

    /// Has the next scan report how far it has come to `progress`.
    pub fn report_progress(&mut self, progress: Arc<LoadProgress>) {
        self.progress = Some(progress);
    }

    /// What loading uses: the configuration the registry serves included.
    pub fn loader(&self) -> &Loader {
        &self.loader
    }

    /// Loads every file of the directory again with `loader`'s settings (a
    /// reloaded configuration), reusing the compiled components, and builds
    /// the registry for them. All or nothing: if a file serving now cannot
    /// be loaded under the new settings, the error says which, and this
    /// reloader keeps the settings it had.
    pub async fn reconfigure(&mut self, loader: Loader, current: &Registry) -> Result<Rescan> {
        let mut seen = self.seen.clone();
        // New limits or settings may let a file load that failed before.
        seen.values_mut().for_each(|s| s.failed = false);
        let mut trial = Reloader {
            dir: self.dir.clone(),
            loader,
            seen,
            bad_names: self.bad_names.clone(),
            unmatched: self.unmatched.clone(),
            reload_all: true,
            progress: None,
            only: self.only.clone(),
        };
        let rescan = trial.rescan(current).await?;
        // A serving file that failed to load kept its previous version,
        // with the previous settings: not a state to serve.
        let kept: Vec<&str> = rescan
            .registry
            .plugins()
            .filter(|p| {
                current
                    .plugin(&p.file)
                    .is_some_and(|old| Arc::ptr_eq(old, p))
            })
            .map(|p| p.file.as_str())
            .collect();
        if !kept.is_empty() {
            anyhow::bail!("{} cannot be loaded under it", kept.join(", "));
        }
        trial.reload_all = false;
        *self = trial;
        Ok(rescan)
    }

    /// Compares the directory with `current` and builds the next registry.
    pub async fn rescan(&mut self, current: &Registry) -> Result<Rescan> {
        let now = SystemTime::now();
        let mut read = 0;
        let mut present: BTreeMap<String, Present> = BTreeMap::new();
        for (name, path) in self.wasm_files()? {
            let meta = match metadata(&path).await {
                Ok(meta) if meta.is_file() => meta,
                // Not a file, or deleted since listing: absent.
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                // Shutting down: nothing to report.
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    tracing::error!("cannot read {}: {e}", path.display());
                    continue;
                }
            };
            let stat = FileStat::of(&meta);
            if let Some(seen) = self.seen.get(&name)
                && seen.settled
                && seen.stat == stat
            {
                let digest = seen.digest.clone();
                present.insert(
                    name,
                    Present {
                        path,
                        digest,
                        bytes: None,
                    },
                );
                continue;
            }
            // Metadata first, bytes second: a write after the read changes
            // the metadata, so the next scan reads again.
            let limit = self.loader.config.settings_for(&name).limits.wasm_bytes;
            let (bytes, digest) = match read_and_hash(&path, limit).await {
                Ok(pair) => pair,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                // Shutting down: nothing to report.
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    tracing::error!("cannot read {}: {e}", path.display());
                    continue;
                }
            };
            read += 1;
            let failed = self
                .seen
                .get(&name)
                .is_some_and(|s| s.failed && s.digest == digest);
            // A file over its limit was read only in part: its digest is
            // not the file's, so it is never taken again without reading
            // (a raised limit must see the whole file, not its start).
            let whole = bytes.len() as u64 <= limit;
            self.seen.insert(
                name.clone(),
                Seen {
                    stat,
                    settled: stat.settled(now) && whole,
                    digest: digest.clone(),
                    failed,
                },
            );
            present.insert(
                name,
                Present {
                    path,
                    digest,
                    bytes: Some(bytes),
                },
            );
        }
        self.seen.retain(|name, _| present.contains_key(name));

        let gone: Vec<String> = current
            .plugins()
            .map(|p| p.file.clone())
            .filter(|f| !present.contains_key(f))
            .collect();
        for file in &gone {
            if self.unmatched.contains(file) {
                tracing::info!(file, "no longer served: no block matches it");
            } else {
                tracing::info!(file, "removed");
            }
        }

        // What to load, by content: each distinct digest compiles once.
        let mut refused = Vec::new();
        let mut by_digest: BTreeMap<String, Vec<(String, Present)>> = BTreeMap::new();
        for (name, file) in present.iter_mut() {
            if !self.reload_all
                && current
                    .plugin(name)
                    .is_some_and(|p| p.digest == file.digest)
            {
                continue;
            }
            if self.seen.get(name).is_some_and(|s| s.failed) {
                tracing::debug!(file = %name, "not loaded again: these bytes already failed");
                continue;
            }
            // A file a `components` entry names runs only as the bytes
            // verified for it at start.
            if let Err(why) = self.loader.config.component_gate(name, &file.digest) {
                if let Some(seen) = self.seen.get_mut(name) {
                    seen.failed = true;
                }
                refused.push((file.path.clone(), why));
                continue;
            }
            let taken = Present {
                path: file.path.clone(),
                digest: file.digest.clone(),
                bytes: file.bytes.take(),
            };
            by_digest
                .entry(file.digest.clone())
                .or_default()
                .push((name.clone(), taken));
        }
        let serving: HashMap<&str, &Component> = current
            .plugins()
            .map(|p| (p.digest.as_str(), p.pre.component()))
            .collect();
        let mut compiled = 0;
        let mut groups = Vec::new();
        let progress = self.progress.take();
        if let Some(progress) = &progress {
            progress.expect(by_digest.len(), by_digest.values().map(Vec::len).sum());
        }
        for (digest, files) in by_digest {
            let component = serving.get(digest.as_str()).map(|c| (*c).clone());
            compiled += usize::from(component.is_none());
            groups.push(tokio::spawn(load_group(
                self.loader.clone(),
                digest,
                component,
                files,
                progress.clone(),
            )));
        }
        let mut results = Vec::new();
        for group in groups {
            match group.await {
                Ok(loaded) => results.extend(loaded),
                // The runtime is shutting down (the client left while the
                // directory was loading): nothing is left to serve.
                Err(e) if e.is_cancelled() => return Err(ShuttingDown.into()),
                Err(e) => return Err(e).context("a load task failed"),
            }
        }
        results.sort_by(|a, b| a.0.cmp(&b.0));

        let mut plugins = Vec::new();
        let mut failed = refused.len();
        for (path, why) in refused {
            tracing::error!("not loaded {}: {why}", path.display());
        }
        for (name, path, result) in results {
            match result {
                Ok((plugin, took)) => {
                    tracing::info!(
                        file = %name,
                        tools = plugin.tools.len(),
                        ms = took.as_millis() as u64,
                        "loaded"
                    );
                    plugins.push(Arc::new(plugin));
                }
                Err(e) => {
                    failed += 1;
                    if let Some(seen) = self.seen.get_mut(&name) {
                        seen.failed = true;
                    }
                    if self.reload_all {
                        tracing::error!(
                            "{}: cannot be loaded under the new configuration: {e}",
                            path.display()
                        );
                    } else if current.plugin(&name).is_some() {
                        tracing::error!(
                            "{}: the new version was not loaded, the previous one keeps serving: {e}",
                            path.display()
                        );
                    } else {
                        tracing::error!("skipped {}: {e}", path.display());
                    }
                }
            }
        }

        let loaded = plugins.len();
        let changed = !gone.is_empty() || loaded > 0;
        let (next, _) = current.without_plugins(gone.iter().map(String::as_str));
        prepare_validators(&plugins);
        let (next, _) = next.with_plugins(plugins);
        let next = next.for_config(self.loader.config.clone());
        for conflict in next.conflicts() {
            if !current.conflicts().contains(conflict) {
                tracing::error!("{conflict}");
            }
        }
        if compiled > 0 {
            self.loader.runtime.end_load();
            return_freed_memory();
        }
        Ok(Rescan {
            registry: next,
            changed,
            files: present.len(),
            read,
            compiled,
            loaded,
            failed,
            removed: gone.len(),
        })
    }

    /// The `*.wasm` entries directly in the directory that the
    /// configuration serves ([`Config::serves`](crate::config::Config::serves)),
    /// by UTF-8 name. Other names, and files no block matches under
    /// `unmatched_files = "skip"`, are reported once and skipped: a file
    /// serving now that is skipped is dropped like a deleted one.
    fn wasm_files(&mut self) -> Result<Vec<(String, PathBuf)>> {
        let entries = std::fs::read_dir(&self.dir)
            .with_context(|| format!("cannot read the plugin directory {}", self.dir.display()))?;
        let mut files = Vec::new();
        let mut bad = HashSet::new();
        let mut unmatched = HashSet::new();
        for entry in entries.filter_map(|e| e.ok()) {
            let path = entry.path();
            if path.extension().is_none_or(|x| x != "wasm") {
                continue;
            }
            match entry.file_name().into_string() {
                Ok(name) if !self.loader.config.serves(&name) => {
                    if !self.unmatched.contains(&name) {
                        tracing::info!(
                            file = %name,
                            "not served: no [plugins] block matches it and host.unmatched_files \
                             is \"skip\"; add a block whose `files` match it to serve it"
                        );
                    }
                    unmatched.insert(name);
                }
                Ok(name) if self.only.as_ref().is_some_and(|only| !only.contains(&name)) => {}
                Ok(name) => files.push((name, path)),
                Err(raw) => {
                    if !self.bad_names.contains(&raw) {
                        tracing::error!(
                            "skipped {}: the file name is not valid UTF-8; rename it (tool \
                             ownership and the `files` patterns of toolhost.toml go by file name)",
                            path.display()
                        );
                    }
                    bad.insert(raw);
                }
            }
        }
        // Forget names that are gone, so one that comes back is reported.
        self.bad_names = bad;
        self.unmatched = unmatched;
        files.sort();
        Ok(files)
    }
}

/// One loaded file: its name, path, and the plugin with how long it took
/// (or why it failed).
type LoadResult = (String, PathBuf, Result<(Plugin, Duration), LoadError>);

/// Loads `files`, which share the content `digest`: compiles it once
/// unless `component` is given, then loads each file from the result.
async fn load_group(
    loader: Loader,
    digest: String,
    component: Option<Component>,
    mut files: Vec<(String, Present)>,
    progress: Option<Arc<LoadProgress>>,
) -> Vec<LoadResult> {
    let started = Instant::now();
    // (size, compile time) when this group compiled: each file is then held
    // to its own block's loading limits.
    let mut compiled = None;
    let component = match component {
        Some(component) => Ok(component),
        None => {
            let names: Vec<String> = files.iter().map(|(name, _)| name.clone()).collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let limit = names
                .iter()
                .map(|n| loader.config.settings_for(n).limits.wasm_bytes)
                .max()
                .unwrap_or(0);
            let bytes = match files.iter_mut().find_map(|(_, f)| f.bytes.take()) {
                Some(bytes) => Ok(bytes),
                // Read again: only the bytes the scan hashed, and checked
                // against the verified digests, may be compiled.
                None => read_and_hash(&files[0].1.path, limit)
                    .await
                    .and_then(|(bytes, read)| {
                        // Over its (perhaps lowered) limit: refused as too
                        // large by the compile, before anything is compiled.
                        if read == digest || bytes.len() as u64 > limit {
                            Ok(bytes)
                        } else {
                            Err(std::io::Error::other(
                                "the file changed since the scan checked it; the next scan reads \
                                 it again",
                            ))
                        }
                    }),
            };
            match bytes {
                Ok(bytes) => {
                    let size = bytes.len() as u64;
                    loader
                        .compile_shared(&names, bytes)
                        .await
                        .map(|(component, took)| {
                            compiled = Some((size, took));
                            component
                        })
                }
                Err(e) => Err(LoadError::Read(e)),
            }
        }
    };
    if let Some(progress) = &progress {
        progress.compiled_one();
    }
    let component = match component {
        Ok(component) => component,
        Err(e) => {
            if let Some(progress) = &progress {
                (0..files.len()).for_each(|_| progress.loaded_one());
            }
            // Every file with these bytes fails the same way.
            let again = || match &e {
                LoadError::Read(io) => {
                    LoadError::Read(std::io::Error::new(io.kind(), io.to_string()))
                }
                LoadError::Compile(message) => LoadError::Compile(message.clone()),
                LoadError::CompileProcess(message) => LoadError::CompileProcess(message.clone()),
                LoadError::TooLarge { bytes, limit } => LoadError::TooLarge {
                    bytes: *bytes,
                    limit: *limit,
                },
                LoadError::CompileTimeout { secs } => LoadError::CompileTimeout { secs: *secs },
                other => LoadError::Compile(other.to_string()),
            };
            return files
                .into_iter()
                .map(|(name, f)| (name, f.path, Err(again())))
                .collect();
        }
    };
    let loads: Vec<_> = files
        .into_iter()
        .map(|(name, f)| {
            let (loader, digest, component) = (loader.clone(), digest.clone(), component.clone());
            let progress = progress.clone();
            tokio::spawn(async move {
                let within = match compiled {
                    Some((size, took)) => loader.within_limits(&name, size, took),
                    None => Ok(()),
                };
                let result = match within {
                    Ok(()) => loader
                        .load_compiled(&f.path, digest, component)
                        .await
                        .map(|plugin| (plugin, started.elapsed())),
                    Err(e) => Err(e),
                };
                if let Some(progress) = &progress {
                    progress.loaded_one();
                }
                (name, f.path, result)
            })
        })
        .collect();
    let mut results = Vec::new();
    for load in loads {
        match load.await {
            Ok(result) => results.push(result),
            Err(e) => tracing::error!("a component load task failed: {e}"),
        }
    }
    results
}

/// Reads a file, at most `limit` bytes and one more (so that a file over
/// `limits.wasm_bytes` is refused by [`Loader::compile`] without being read
/// whole), and hashes what it read, off the async workers.
async fn read_and_hash(path: &Path, limit: u64) -> std::io::Result<(Vec<u8>, String)> {
    let path = path.to_path_buf();
    off_the_workers(move || {
        let bytes = read_within(&path, limit)?;
        let digest = hex::encode(Sha256::digest(&bytes));
        Ok((bytes, digest))
    })
    .await
}

/// The bytes of the regular file at `path`, at most `limit` and one more
/// (so that a file over `limits.wasm_bytes` is known to be without being
/// read whole). Opened without blocking and checked on the descriptor it
/// reads: a file swapped for a FIFO or a device after it was listed
/// neither hangs the read nor feeds it without end.
pub(super) fn read_within(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "it is not a regular file",
        ));
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The metadata of the file at `path`, read off the async workers.
async fn metadata(path: &Path) -> std::io::Result<std::fs::Metadata> {
    let path = path.to_path_buf();
    off_the_workers(move || std::fs::metadata(&path)).await
}

/// Runs `work` on the blocking pool. A task the runtime drops because it
/// is shutting down (the client went away) is `Interrupted`, not a file
/// that cannot be read, so the scan says nothing about it.
async fn off_the_workers<T: Send + 'static>(
    work: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> std::io::Result<T> {
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(e) if e.is_cancelled() => Err(std::io::Error::new(
            std::io::ErrorKind::Interrupted,
            "shutting down",
        )),
        Err(e) => Err(std::io::Error::other(e)),
    }
}

/// Whether an event of this kind can change what a file holds (or whether
/// it exists). Opening, reading and closing a file without writing cannot,
/// nor can a change of permissions or timestamps alone.
pub fn changes_content(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        EventKind::Modify(ModifyKind::Metadata(_)) => false,
        // Create, Modify (data, name, other), Remove, and events the
        // backend cannot classify (including "rescan everything").
        _ => true,
    }
}

/// A watch on the plugin directory, established before the first scan so
/// that no change made during it is missed.
pub struct DirWatch {
    /// Kept alive as long as the watch.
    _watcher: RecommendedWatcher,
    /// One message per relevant event.
    pub(crate) events: mpsc::UnboundedReceiver<()>,
}

/// Starts watching `dir` for changes to `*.wasm` files.
pub fn watch_dir(dir: &Path) -> Result<DirWatch> {
    let (tx, events) = mpsc::unbounded_channel::<()>();
    let mut watcher =
        notify::recommended_watcher(move |event: notify::Result<notify::Event>| match event {
            Ok(event)
                if changes_content(&event.kind)
                    && (event.need_rescan()
                        || event
                            .paths
                            .iter()
                            .any(|p| p.extension().is_some_and(|x| x == "wasm"))) =>
            {
                let _ = tx.send(());
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("plugin directory watch error: {e}"),
        })
        .context("cannot watch the plugin directory")?;
    watcher
        .watch(dir, RecursiveMode::NonRecursive)
        .with_context(|| format!("cannot watch {}", dir.display()))?;
    tracing::info!("watching {} for plugin changes", dir.display());
    Ok(DirWatch {
        _watcher: watcher,
        events,
    })
}

/// Hands memory freed since the last call back to the system. Compiling
/// a component allocates hundreds of MiB in Cranelift and the compile
/// cache's buffers, all freed once the component is built, but glibc's
/// allocator keeps freed pages in its arenas (one per thread that
/// compiled), so a first start stayed at 4–5× the resident memory of a
/// warm one (measurement 8). `malloc_trim` returns every free page of
/// every arena; it takes milliseconds and runs once per scan that
/// compiled something.
fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only releases memory the allocator holds free;
    // it is safe to call at any time from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Builds, on the blocking pool and without holding up the scan, the
/// argument validators the load skipped because the compile cache knew
/// their schemas had passed every check (`spec.rs`'s module doc): the first
/// call of each tool then finds its validator ready instead of compiling
/// the meta-schema and its schema while the client waits.
fn prepare_validators(plugins: &[Arc<Plugin>]) {
    let unbuilt: Vec<_> = plugins
        .iter()
        .flat_map(|plugin| plugin.tools.iter())
        .filter(|tool| !tool.validator_built())
        .cloned()
        .collect();
    if !unbuilt.is_empty() {
        tokio::task::spawn_blocking(move || unbuilt.iter().for_each(|tool| tool.prepare()));
    }
}

/// The error a rescan ends with when the process is shutting down under
/// it: not a failure to report, only a reason to stop.
#[derive(Debug, thiserror::Error)]
#[error("the process is shutting down")]
pub struct ShuttingDown;

/// Loads every `*.wasm` in `dir` once (`toolhost list`, `call`): the
/// first scan of a [`Reloader`]. A file that fails is skipped with an
/// error on stderr naming it and the reason.
pub async fn load_dir(loader: &Loader, dir: &Path) -> Result<Registry> {
    let mut reloader = Reloader::new(dir, loader.clone());
    Ok(reloader
        .rescan(&Registry::empty(loader.config.clone()))
        .await?
        .registry)
}

/// Loads only the files of `dir` named in `names` (`toolhost call`, when
/// it knows which file serves the tool): the others are neither read nor
/// compiled.
pub async fn load_files(loader: &Loader, dir: &Path, names: HashSet<String>) -> Result<Registry> {
    let mut reloader = Reloader::new(dir, loader.clone());
    reloader.only = Some(names);
    Ok(reloader
        .rescan(&Registry::empty(loader.config.clone()))
        .await?
        .registry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{CreateKind, DataChange, MetadataKind, RemoveKind, RenameMode};

    #[test]
    fn reads_and_attribute_changes_are_not_content_changes() {
        for kind in [
            EventKind::Access(AccessKind::Open(AccessMode::Any)),
            EventKind::Access(AccessKind::Read),
            EventKind::Access(AccessKind::Close(AccessMode::Read)),
            EventKind::Modify(ModifyKind::Metadata(MetadataKind::Any)),
        ] {
            assert!(!changes_content(&kind), "{kind:?}");
        }
        for kind in [
            EventKind::Create(CreateKind::File),
            EventKind::Modify(ModifyKind::Data(DataChange::Any)),
            EventKind::Access(AccessKind::Close(AccessMode::Write)),
            EventKind::Modify(ModifyKind::Name(RenameMode::To)),
            EventKind::Remove(RemoveKind::File),
            EventKind::Other,
        ] {
            assert!(changes_content(&kind), "{kind:?}");
        }
    }

    #[test]
    fn a_file_changed_within_the_racy_window_is_not_settled() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.wasm");
        std::fs::write(&path, b"x").unwrap();
        let stat = FileStat::of(&std::fs::metadata(&path).unwrap());
        let now = SystemTime::now();
        assert!(!stat.settled(now));
        assert!(stat.settled(now + RACY + Duration::from_millis(10)));
    }

    #[test]
    fn renaming_another_file_into_place_changes_the_stat() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.wasm");
        std::fs::write(&path, b"one").unwrap();
        let before = FileStat::of(&std::fs::metadata(&path).unwrap());
        // Same size, same modification time, another file.
        let tmp = dir.path().join("b.tmp");
        std::fs::write(&tmp, b"two").unwrap();
        let file = std::fs::File::options().write(true).open(&tmp).unwrap();
        file.set_modified(before.modified.unwrap()).unwrap();
        drop(file);
        std::fs::rename(&tmp, &path).unwrap();
        let after = FileStat::of(&std::fs::metadata(&path).unwrap());
        assert_eq!(after.len, before.len);
        assert_eq!(after.modified, before.modified);
        assert_ne!(after, before);
    }
}
