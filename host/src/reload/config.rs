//! Config reload: `serve` keeps serving while `toolhost.toml` changes.
//!
//! The flow, beside the plugin directory's ([`super::dir`], same task, so
//! a rescan and a reload never overlap): the kernel reports an event on
//! the config file (its directory is watched, so an editor's
//! write-then-rename is seen; on Linux inotify asked only for
//! `CONFIG_EVENTS`, elsewhere `notify`) → wait until quiet for [`QUIET`](crate::reload::dir::QUIET) → read
//! the file; content already seen (applied or refused) is ignored → parse
//! and resolve it off to the side ([`Config::parse_at`]) → keep the
//! running value of every setting that cannot change live
//! ([`restart_only_settings`], each change logged once as needing a restart) →
//! reload every component with its block's new settings
//! ([`Reloader::reconfigure`]: compiled code is reused) → the gateway swaps
//! the registry, which carries the new configuration, in one store
//! ([`Gateway::replace_settings`]), and tells clients if what they see may
//! have changed.
//!
//! Rules:
//! - All or nothing: a file that does not parse or resolve, or under which
//!   a serving component would no longer load (a `prefix` that makes a
//!   name too long, a smaller listing limit, a component file replaced by
//!   bytes that do not load), changes nothing. The error is logged once per
//!   distinct content, not again on each event for the same bytes.
//! - The two refusals differ in what can change them. A file that does not
//!   parse or resolve stays refused until it is saved with other content.
//!   A file refused because a component would not load under it is tried
//!   again ([`ConfigReload::retry`]) after each scan of the plugin
//!   directory (a `*.wasm` file written, added, renamed or removed): once
//!   the component is fixed or removed, the edit applies without saving
//!   `toolhost.toml` again (a failed retry is not logged again). Every
//!   scan, not only one that changed the registry: the refused attempt
//!   read the directory itself, so restoring the serving file's own bytes
//!   changes nothing the scan sees, yet lets the edit load.
//! - A syntax error names its line, column and key, never the text there
//!   ([`crate::config::TomlError`]): a broken line may hold a credential.
//! - A call holds the registry it looked its tool up in, and with it its
//!   plugin's settings, HTTP client and credentials: calls in flight finish
//!   with the settings they started with; calls after the swap use the new.
//! - A credential read from `value_file` or an environment variable is read
//!   again on each reload (an environment variable cannot change under a
//!   running process; a `value_file` can, then save `toolhost.toml` to
//!   apply it).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;

use super::dir::Reloader;
use crate::config::Config;
use crate::config::keys::restart_only_settings;
use crate::imports::http::HttpClient;
use crate::plugin::Loader;
use crate::server::Gateway;

/// A watch on the config file, established before the first scan so that
/// no change made during it is missed.
pub struct ConfigWatch {
    /// Kept alive as long as the watch.
    _watching: Watching,
    /// One message per event that may have changed the file.
    pub(crate) events: mpsc::UnboundedReceiver<()>,
}

/// Starts watching the config file at `path` (through its directory).
pub fn watch_config(path: &Path) -> Result<ConfigWatch> {
    let name = path
        .file_name()
        .with_context(|| format!("{} names no file", path.display()))?
        .to_os_string();
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let (tx, events) = mpsc::unbounded_channel::<()>();
    let watching = watch_entries(&dir, name, tx)?;
    tracing::info!("watching {} for configuration changes", path.display());
    Ok(ConfigWatch {
        _watching: watching,
        events,
    })
}

/// The watch of the config file's directory on Linux: the task reading
/// its events, ended with the watch.
#[cfg(target_os = "linux")]
struct Watching(tokio::task::AbortHandle);

#[cfg(target_os = "linux")]
impl Drop for Watching {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The kernel's events that can change what the config file's name holds:
/// a file written and closed, a name moved in or out, created or deleted
/// (an editor's write-then-rename, a ConfigMap's swapped `..data`), and
/// the directory itself moved or deleted. Not a write that leaves its file
/// open, nor an open: `notify` asks inotify for both on every entry of a
/// watched directory, so each line appended to a file beside the config
/// (an audit trail at a relative `host.audit`, which is taken from this
/// directory) woke the watch, a wake-up in the kernel and on a thread of
/// its own per line (ADR 0065).
#[cfg(target_os = "linux")]
const CONFIG_EVENTS: inotify::WatchMask = inotify::WatchMask::CLOSE_WRITE
    .union(inotify::WatchMask::MOVED_TO)
    .union(inotify::WatchMask::MOVED_FROM)
    .union(inotify::WatchMask::CREATE)
    .union(inotify::WatchMask::DELETE)
    .union(inotify::WatchMask::DELETE_SELF)
    .union(inotify::WatchMask::MOVE_SELF);

/// Sends on `tx` for each of [`CONFIG_EVENTS`] in `dir` that names the
/// config file (`name`) or can change it ([`is_config_entry`]). inotify
/// directly (the crate `notify` uses), since `notify` cannot narrow the
/// events it asks for.
#[cfg(target_os = "linux")]
fn watch_entries(
    dir: &Path,
    name: std::ffi::OsString,
    tx: mpsc::UnboundedSender<()>,
) -> Result<Watching> {
    use futures_util::StreamExt;
    use inotify::{EventMask, Inotify};

    let inotify = Inotify::init().context("cannot watch the config file")?;
    inotify
        .watches()
        .add(dir, CONFIG_EVENTS)
        .with_context(|| format!("cannot watch {}", dir.display()))?;
    let mut stream = inotify
        .into_event_stream([0u8; 4096])
        .context("cannot watch the config file")?;
    let task = tokio::spawn(async move {
        while let Some(event) = stream.next().await {
            let event = match event {
                Ok(event) => event,
                Err(e) => {
                    tracing::error!(
                        "the config file watch failed ({e}); configuration changes need a restart"
                    );
                    return;
                }
            };
            if event
                .mask
                .intersects(EventMask::DELETE_SELF | EventMask::MOVE_SELF | EventMask::IGNORED)
            {
                // The watch is gone, or follows the directory elsewhere:
                // read the file once more, then say so.
                let _ = tx.send(());
                tracing::error!(
                    "the config file's directory was moved or deleted; configuration changes need a restart"
                );
                return;
            }
            // An overflowed queue lost events: read the file again.
            let may_change = event.mask.contains(EventMask::Q_OVERFLOW)
                || event
                    .name
                    .as_deref()
                    .is_some_and(|entry| is_config_entry(Path::new(entry), &name));
            if may_change && tx.send(()).is_err() {
                return;
            }
        }
    });
    Ok(Watching(task.abort_handle()))
}

/// The watch of the config file's directory elsewhere: `notify`'s.
#[cfg(not(target_os = "linux"))]
struct Watching(notify::RecommendedWatcher);

/// Sends on `tx` for each event in `dir` that may change the config file
/// (`name`, or an entry that can change it: [`is_config_entry`]).
#[cfg(not(target_os = "linux"))]
fn watch_entries(
    dir: &Path,
    name: std::ffi::OsString,
    tx: mpsc::UnboundedSender<()>,
) -> Result<Watching> {
    use notify::{RecursiveMode, Watcher};
    let mut watcher =
        notify::recommended_watcher(move |event: notify::Result<notify::Event>| match event {
            Ok(event)
                if super::dir::changes_content(&event.kind)
                    && (event.need_rescan()
                        || event.paths.iter().any(|p| is_config_entry(p, &name))) =>
            {
                let _ = tx.send(());
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("config file watch error: {e}"),
        })
        .context("cannot watch the config file")?;
    watcher
        .watch(dir, RecursiveMode::NonRecursive)
        .with_context(|| format!("cannot watch {}", dir.display()))?;
    Ok(Watching(watcher))
}

/// Whether `path`, an entry of the config file's directory, can change
/// the file named `name`: the file itself, or, where the file is a
/// symbolic link into a hidden directory that is swapped whole (a
/// Kubernetes ConfigMap volume: `toolhost.toml -> ..data/toolhost.toml`,
/// `..data` replaced), an entry whose name starts with `..`.
fn is_config_entry(path: &Path, name: &std::ffi::OsStr) -> bool {
    path.file_name()
        .is_some_and(|f| f == name || f.as_encoded_bytes().starts_with(b".."))
}

/// What the reload remembers between changes of the config file.
pub struct ConfigReload {
    /// The file.
    path: PathBuf,
    /// The configuration serving now.
    running: Arc<Config>,
    /// The file's text as a TOML table when `running` was read, to tell
    /// which restart-only settings an edit changed.
    running_table: toml::Table,
    /// SHA-256 of the last content considered, applied or refused: the
    /// same bytes are neither applied nor reported again.
    last_digest: Option<[u8; 32]>,
    /// That content, resolved, when it was refused only because a
    /// component would not load under it: tried again when the plugin
    /// directory's files change ([`ConfigReload::retry`]).
    waiting: Option<Prepared>,
    /// The instance pool's memory per instance, fixed at start.
    pool_memory_bytes: u64,
}

/// A configuration resolved from the file, with the loader for it, ready
/// to be swapped in.
struct Prepared {
    config: Arc<Config>,
    table: toml::Table,
    loader: Loader,
}

/// Why a content of the config file was not applied.
enum Refusal {
    /// The file does not parse or resolve: only other content can change
    /// that.
    Invalid(anyhow::Error),
    /// A serving component would not load under it: a change of the plugin
    /// directory can.
    Components(Prepared, anyhow::Error),
}

/// What became of one change of the config file.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The content was seen before (or the file is gone for the moment):
    /// nothing was done.
    Unchanged,
    /// The new settings serve.
    Applied,
    /// The new content was refused; the previous settings keep serving.
    Refused,
}

impl ConfigReload {
    /// A reload for the file `config.path` whose content resolved to
    /// `config`, serving from an instance pool sized at start for
    /// `config`.
    pub fn new(config: Arc<Config>) -> Option<ConfigReload> {
        let path = config.path.clone()?;
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        Some(ConfigReload {
            running_table: toml::from_str(&text).unwrap_or_default(),
            last_digest: Some(Sha256::digest(text.as_bytes()).into()),
            waiting: None,
            pool_memory_bytes: config.max_memory_bytes(),
            running: config,
            path,
        })
    }

    /// The file watched.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the file again and, if its content is new and valid, applies
    /// it: every component reloaded for its block's new settings, and the
    /// registry carrying them swapped into `gateway`.
    pub async fn apply(&mut self, reloader: &mut Reloader, gateway: &Gateway) -> Outcome {
        let text = match tokio::fs::read_to_string(&self.path).await {
            Ok(text) => text,
            // Renamed away in an editor's save: the rename back is the next
            // event.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Outcome::Unchanged,
            Err(e) => {
                tracing::error!(
                    "cannot read the config file {}; the previous settings keep serving: {e}",
                    self.path.display()
                );
                return Outcome::Refused;
            }
        };
        let digest: [u8; 32] = Sha256::digest(text.as_bytes()).into();
        if self.last_digest == Some(digest) {
            tracing::debug!("{}: no new content", self.path.display());
            return Outcome::Unchanged;
        }
        self.last_digest = Some(digest);
        self.waiting = None;
        let prepared = match self.prepare(&text, reloader) {
            Ok(prepared) => prepared,
            Err(e) => return self.refused(Refusal::Invalid(e)),
        };
        match self.swap(prepared, reloader, gateway).await {
            Ok(()) => Outcome::Applied,
            Err(refusal) => self.refused(refusal),
        }
    }

    /// After a scan of the plugin directory: applies the content refused
    /// because a component would not load under it, if the file still
    /// holds it (other content has an event of its own). A retry that fails
    /// again is not logged as an error again: the content was reported once.
    pub async fn retry(&mut self, reloader: &mut Reloader, gateway: &Gateway) -> Outcome {
        if self.waiting.is_none() {
            return Outcome::Unchanged;
        }
        let digest = match tokio::fs::read(&self.path).await {
            Ok(bytes) => <[u8; 32]>::from(Sha256::digest(&bytes)),
            Err(_) => return Outcome::Unchanged,
        };
        if self.last_digest != Some(digest) {
            // Saved again meanwhile: its own event follows, and applies it.
            return Outcome::Unchanged;
        }
        let Some(prepared) = self.waiting.take() else {
            return Outcome::Unchanged;
        };
        tracing::info!(
            "the plugin directory changed; applying {} again",
            self.path.display()
        );
        match self.swap(prepared, reloader, gateway).await {
            Ok(()) => Outcome::Applied,
            Err(Refusal::Components(prepared, e)) => {
                tracing::info!(
                    "the configuration in {} still cannot be applied: {e:#}",
                    self.path.display()
                );
                self.waiting = Some(prepared);
                Outcome::Refused
            }
            Err(refusal) => self.refused(refusal),
        }
    }

    fn refused(&mut self, refusal: Refusal) -> Outcome {
        crate::metrics::reload(crate::metrics::ReloadResult::Failed);
        match refusal {
            Refusal::Invalid(error) => tracing::error!(
                "the configuration in {} was not applied; the previous settings keep serving: {error:#}",
                self.path.display()
            ),
            Refusal::Components(prepared, error) => {
                tracing::error!(
                    "the configuration in {} was not applied; the previous settings keep serving: \
                     {error:#}; it is tried again when the plugin directory's files change",
                    self.path.display()
                );
                self.waiting = Some(prepared);
            }
        }
        Outcome::Refused
    }

    /// Parses and resolves `text`, keeping the running value of every
    /// restart-only setting (and of memory limits above what the instance
    /// pool was sized for), and makes the loader for it.
    fn prepare(&self, text: &str, reloader: &Reloader) -> Result<Prepared> {
        let mut config = Config::parse_at(text, &self.path)?;
        let table: toml::Table = crate::config::parse_toml(text)?;
        for key in changed_restart_only(&self.running_table, &table) {
            tracing::warn!(
                "{}: `{key}` changed, and needs a restart to take effect; the running value is kept",
                self.path.display()
            );
        }
        keep_restart_only(&mut config, &self.running);
        for block in &mut config.plugins {
            if block.limits.memory_bytes > self.pool_memory_bytes {
                tracing::warn!(
                    "{}: `limits.memory_mib` in [plugins.{}] is larger than any block's was at \
                     start, which sized the instance pool; it takes effect after a restart, \
                     until then the block gets {} MiB",
                    self.path.display(),
                    block.name,
                    self.pool_memory_bytes >> 20
                );
                block.limits.memory_bytes = self.pool_memory_bytes;
            }
        }
        for warning in config.warnings() {
            tracing::warn!("{}: {warning}", self.path.display());
        }
        if config.access.is_restricted() && config.auth.is_none() {
            tracing::warn!(
                "{}: [[access]] rules apply to HTTP callers authenticated by [auth]; this process \
                 has no [auth], so they restrict nobody (adding [auth] needs a restart)",
                self.path.display()
            );
        }
        let config = Arc::new(config);
        let current = reloader.loader();
        let loader = Loader {
            runtime: current.runtime.clone(),
            linker: current.linker.clone(),
            http: HttpClient::new(&config.plugins).context("cannot build the HTTP client")?,
            cache: current.cache.clone(),
            config: config.clone(),
        };
        Ok(Prepared {
            config,
            table,
            loader,
        })
    }

    /// Reloads every component for `prepared` and swaps the result in, or
    /// changes nothing.
    async fn swap(
        &mut self,
        prepared: Prepared,
        reloader: &mut Reloader,
        gateway: &Gateway,
    ) -> Result<(), Refusal> {
        let rescan = match reloader
            .reconfigure(prepared.loader.clone(), &gateway.registry())
            .await
        {
            Ok(rescan) => rescan,
            Err(e) => {
                let e = e.context("the components could not all be reloaded under it");
                return Err(Refusal::Components(prepared, e));
            }
        };
        crate::metrics::reload(crate::metrics::ReloadResult::Changed);
        crate::metrics::loaded(&rescan.registry, rescan.failed);
        let tools = rescan.registry.tools().count();
        let summary = rescan.to_string();
        gateway.replace_settings(rescan.registry).await;
        // After the swap: a call that starts once this line is out runs
        // with the new settings.
        tracing::info!(
            tools,
            "configuration reloaded from {}: {summary}",
            self.path.display()
        );
        self.running = prepared.config;
        self.running_table = prepared.table;
        Ok(())
    }
}

/// The restart-only settings ([`restart_only_settings`]) whose value
/// differs between two versions of the file, as keys (`host.http`, `[auth]`).
pub fn changed_restart_only(before: &toml::Table, after: &toml::Table) -> Vec<String> {
    let mut changed = Vec::new();
    for (table, key) in restart_only_settings() {
        // A key of every block (`plugins.*.trusted_keys`): each block's own.
        if let Some(field) = key.and_then(|k| k.strip_prefix("*.")) {
            let blocks = |t: &toml::Table| t.get(table).and_then(toml::Value::as_table).cloned();
            let (before, after) = (
                blocks(before).unwrap_or_default(),
                blocks(after).unwrap_or_default(),
            );
            let names: std::collections::BTreeSet<&String> =
                before.keys().chain(after.keys()).collect();
            for name in names {
                let value =
                    |blocks: &toml::Table| blocks.get(name).and_then(|b| b.get(field)).cloned();
                if value(&before) != value(&after) {
                    changed.push(format!("{table}.{name}.{field}"));
                }
            }
            continue;
        }
        let value = |t: &toml::Table| -> Option<toml::Value> {
            let section = t.get(table)?;
            match key {
                None => Some(section.clone()),
                Some(key) => section.get(key).cloned(),
            }
        };
        if value(before) != value(after) {
            changed.push(match key {
                Some(key) => format!("{table}.{key}"),
                None if table == "components" => "components".to_string(),
                None => format!("[{table}]"),
            });
        }
    }
    changed
}

/// Gives `config` the running value of every restart-only setting.
fn keep_restart_only(config: &mut Config, running: &Config) {
    config.http = running.http.clone();
    config.metrics = running.metrics;
    config.max_message_bytes = running.max_message_bytes;
    config.load_wait = running.load_wait;
    config.elicitation_timeout = running.elicitation_timeout;
    config.auth = running.auth.clone();
    config.state = running.state.clone();
    config.oci = running.oci.clone();
    config.components = running.components.clone();
    config.verified_components = running.verified_components.clone();
    config.component_signers = running.component_signers.clone();
    config.audit = running.audit.clone();
    config.telemetry = running.telemetry.clone();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_and_a_swapped_configmap_directory_are_config_entries() {
        let name = std::ffi::OsStr::new("toolhost.toml");
        assert!(is_config_entry(Path::new("/etc/th/toolhost.toml"), name));
        assert!(is_config_entry(Path::new("/etc/th/..data"), name));
        assert!(is_config_entry(
            Path::new("/etc/th/..2026_11_25_08_00_00.1"),
            name
        ));
        assert!(!is_config_entry(
            Path::new("/etc/th/toolhost.toml.new"),
            name
        ));
        assert!(!is_config_entry(Path::new("/etc/th/plugins"), name));
    }

    /// The event mask the kernel holds for the inotify watch on `dir` in
    /// this process (`/proc/self/fdinfo`), if there is one.
    #[cfg(target_os = "linux")]
    fn kernel_mask_of_watch_on(dir: &Path) -> Option<u32> {
        use std::os::unix::fs::MetadataExt;
        let inode = format!("ino:{:x} ", std::fs::metadata(dir).unwrap().ino());
        for fd in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
            let is_inotify = std::fs::read_link(fd.path())
                .is_ok_and(|target| target.as_os_str() == "anon_inode:inotify");
            if !is_inotify {
                continue;
            }
            let info = std::fs::read_to_string(Path::new("/proc/self/fdinfo").join(fd.file_name()))
                .unwrap_or_default();
            for line in info.lines().filter(|l| l.starts_with("inotify ")) {
                if line.contains(&inode) {
                    let mask = line
                        .split_whitespace()
                        .find_map(|f| f.strip_prefix("mask:"))?;
                    return u32::from_str_radix(mask, 16).ok();
                }
            }
        }
        None
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn the_config_watch_asks_the_kernel_for_no_write_left_open_and_no_open() {
        const IN_MODIFY: u32 = 0x2;
        const IN_OPEN: u32 = 0x20;
        const IN_CLOSE_WRITE: u32 = 0x8;
        const IN_MOVED_TO: u32 = 0x80;
        let dir = tempfile::tempdir().unwrap();
        let _watch = watch_config(&dir.path().join("toolhost.toml")).unwrap();
        let mask = kernel_mask_of_watch_on(dir.path()).expect("the directory is watched");
        assert_eq!(
            mask & (IN_MODIFY | IN_OPEN),
            0,
            "an append to a file beside the config (a relative host.audit) wakes nothing: {mask:#x}"
        );
        assert_eq!(
            mask & (IN_CLOSE_WRITE | IN_MOVED_TO),
            IN_CLOSE_WRITE | IN_MOVED_TO,
            "a saved or renamed-in config is seen: {mask:#x}"
        );
    }

    #[tokio::test]
    async fn a_config_saved_in_place_or_renamed_in_is_seen_while_a_file_beside_it_grows() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("toolhost.toml");
        std::fs::write(&config, "").unwrap();
        let mut watch = watch_config(&config).unwrap();
        let mut trail = std::fs::File::create(dir.path().join("audit.jsonl")).unwrap();
        for _ in 0..100 {
            trail.write_all(b"{}\n").unwrap();
        }
        let seen = |events: &mut mpsc::UnboundedReceiver<()>| {
            let mut n = 0;
            while events.try_recv().is_ok() {
                n += 1;
            }
            n
        };
        let wait = std::time::Duration::from_secs(10);

        std::fs::write(&config, "[host]\n").unwrap();
        tokio::time::timeout(wait, watch.events.recv())
            .await
            .expect("a save in place is seen");
        seen(&mut watch.events);

        let staged = dir.path().join("toolhost.toml.new");
        std::fs::write(&staged, "[host]\nconfirmation = \"deny\"\n").unwrap();
        std::fs::rename(&staged, &config).unwrap();
        tokio::time::timeout(wait, watch.events.recv())
            .await
            .expect("a file renamed over the config is seen");
    }

    #[test]
    fn restart_only_changes_are_named_and_others_are_not() {
        let before: toml::Table = toml::from_str(
            "[host]\nhttp = \"127.0.0.1:1\"\nconfirmation = \"deny\"\n[plugins.a]\nprefix = \"a\"\n",
        )
        .unwrap();
        let after: toml::Table = toml::from_str(
            "[host]\nhttp = \"127.0.0.1:2\"\nconfirmation = \"trust-confirm-flag\"\n\
             [plugins.a]\nprefix = \"b\"\n[auth]\nissuer = \"x\"\n",
        )
        .unwrap();
        assert_eq!(
            changed_restart_only(&before, &after),
            ["host.http", "[auth]"]
        );
        assert!(changed_restart_only(&before, &before).is_empty());
    }

    #[test]
    fn a_blocks_trust_changed_is_named_as_needing_a_restart() {
        // Components are checked against their trust when installed: a
        // block that stops trusting a key must say the change waits.
        let before: toml::Table = toml::from_str(
            "[plugins.a]
trusted_keys = [\"a.pub\"]
[plugins.b]
prefix = \"b\"
",
        )
        .unwrap();
        let after: toml::Table = toml::from_str(
            "[plugins.a]
trusted_keys = [\"other.pub\"]
[plugins.b]
prefix = \"b\"
             require_signature = false
",
        )
        .unwrap();
        assert_eq!(
            changed_restart_only(&before, &after),
            ["plugins.a.trusted_keys", "plugins.b.require_signature"]
        );
    }

    #[test]
    fn restart_only_settings_keep_their_running_value() {
        let running =
            Config::parse("[host]\nmax_message_bytes = 4096\nmetrics = \"9464\"\n").unwrap();
        let mut next = Config::parse(
            "[host]\nmax_message_bytes = 8192\nconfirmation = \"trust-confirm-flag\"\n",
        )
        .unwrap();
        keep_restart_only(&mut next, &running);
        assert_eq!(next.max_message_bytes, 4096);
        assert_eq!(next.metrics, running.metrics);
        assert_eq!(
            next.confirmation,
            crate::config::NoElicitationPolicy::TrustConfirmFlag
        );
    }
}
