//! Hot reload: watch the plugin directory and keep the registry in step.
//!
//! The flow: `notify` reports file-system events → [`watch`] waits until the
//! directory has been quiet for [`QUIET`] (so a file copied in chunks, or a
//! burst of writes, is read once, whole) → [`Reloader::rescan`] compares every
//! `*.wasm` file's SHA-256 with what is serving, loads what changed (compiling
//! on the blocking pool), drops what was deleted, builds the next
//! [`Registry`] and hands it to the [`Gateway`], which swaps it atomically
//! and tells clients.
//!
//! Rules:
//! - A file whose bytes did not change is not reloaded; a rescan that
//!   changes nothing sends nothing.
//! - A replacement that fails to load leaves the previous version serving,
//!   with an error naming the file. (A file caught mid-copy fails the same
//!   way, and the next event after the copy completes loads it.)
//! - Name collisions: the tool already serving keeps its name (see
//!   [`crate::registry`]).
//! - Calls in flight hold the plugin they started with and finish on it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use notify::{RecursiveMode, Watcher};
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;

use crate::plugin::Loader;
use crate::registry::{Registry, wasm_files};
use crate::server::Gateway;

/// How long the directory must be quiet before a rescan.
pub const QUIET: Duration = Duration::from_millis(75);

/// Rescans a plugin directory into registries.
pub struct Reloader {
    dir: PathBuf,
    loader: Loader,
}

/// What a rescan found.
pub struct Rescan {
    /// The next registry.
    pub registry: Registry,
    /// Whether it differs from the one before (files added, changed or
    /// removed).
    pub changed: bool,
}

impl Reloader {
    /// A reloader for `dir`.
    pub fn new(dir: &Path, loader: Loader) -> Reloader {
        Reloader {
            dir: dir.to_path_buf(),
            loader,
        }
    }

    /// Compares the directory with `current` and builds the next registry.
    pub async fn rescan(&self, current: &Registry) -> Result<Rescan> {
        let mut present: BTreeMap<String, (PathBuf, Vec<u8>)> = BTreeMap::new();
        for path in wasm_files(&self.dir)? {
            let name = path
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            match tokio::fs::read(&path).await {
                Ok(bytes) => {
                    present.insert(name, (path, bytes));
                }
                // Deleted between listing and reading: treat as absent.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => tracing::error!("cannot read {}: {e}", path.display()),
            }
        }

        let mut next = current.clone();
        let mut changed = false;
        let gone: Vec<String> = current
            .plugins()
            .map(|p| p.file.clone())
            .filter(|f| !present.contains_key(f))
            .collect();
        for file in gone {
            tracing::info!(file, "removed");
            next = next.without_plugin(&file);
            changed = true;
        }
        for (file, (path, bytes)) in present {
            let digest = hex(&Sha256::digest(&bytes));
            if current.plugin(&file).is_some_and(|p| p.digest == digest) {
                continue;
            }
            match self.loader.load_bytes(&path, bytes).await {
                Ok(plugin) => {
                    tracing::info!(file, tools = plugin.tools.len(), "loaded");
                    let (with, collisions) = next.with_plugin(Arc::new(plugin));
                    for c in collisions {
                        tracing::error!("{c}");
                    }
                    next = with;
                    changed = true;
                }
                Err(e) if current.plugin(&file).is_some() => {
                    tracing::error!(
                        "{}: the new version was not loaded, the previous one keeps serving: {e}",
                        path.display()
                    );
                }
                Err(e) => tracing::error!("skipped {}: {e}", path.display()),
            }
        }
        Ok(Rescan {
            registry: next,
            changed,
        })
    }
}

/// Watches `dir` and keeps `gateway`'s registry in step until the process
/// ends. Returns once the watch is established.
pub fn watch(dir: &Path, loader: Loader, gateway: Gateway) -> Result<()> {
    let (tx, mut rx) = mpsc::unbounded_channel::<()>();
    let mut watcher =
        notify::recommended_watcher(move |event: notify::Result<notify::Event>| match event {
            Ok(event)
                if event
                    .paths
                    .iter()
                    .any(|p| p.extension().is_some_and(|x| x == "wasm")) =>
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

    let reloader = Reloader::new(dir, loader);
    tokio::spawn(async move {
        // The watcher lives as long as this task.
        let _watcher = watcher;
        while rx.recv().await.is_some() {
            // Wait for the directory to go quiet.
            while let Ok(Some(())) = tokio::time::timeout(QUIET, rx.recv()).await {}
            match reloader.rescan(&gateway.registry()).await {
                Ok(rescan) if rescan.changed => gateway.replace_registry(rescan.registry).await,
                Ok(_) => tracing::debug!("plugin directory rescanned: no changes"),
                Err(e) => tracing::error!("cannot rescan the plugin directory: {e:#}"),
            }
        }
    });
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
