//! Keeping what is served in step with the plugin directory and the
//! config file: the initial load, hot reload ([`dir`]) and config reload
//! ([`config`]), run by one task ([`run`]) so a rescan and a config reload
//! never overlap. Each publishes a new [`Registry`] on the [`Gateway`],
//! which swaps it in whole and tells clients what changed.
//!
//! **Architecture invariant:** this is the only module that publishes a
//! registry, and the registry carries the configuration it was built for:
//! settings and what is served change together, in one store.

pub mod config;
pub mod dir;
pub mod index;

use std::path::PathBuf;
use std::time::Instant;

use crate::plugin::Loader;
use crate::registry::Registry;
use crate::server::Gateway;
use config::ConfigReload;
use dir::{DirWatch, QUIET, Reloader};

/// Loads `dir` and publishes the result on `gateway` (the initial load),
/// then, given a watch, keeps `gateway`'s registry in step with the
/// directory, and its settings with the config file the loader's
/// configuration came from ([`config`]), until the process
/// ends.
pub async fn run(dir: PathBuf, loader: Loader, gateway: Gateway, watch: Option<DirWatch>) {
    let started = Instant::now();
    if watch.is_some() {
        gateway.follow_reloads();
    }
    let config = loader.config.clone();
    // Watched before the first scan, like the directory.
    let mut config_reload = watch
        .as_ref()
        .and_then(|_| ConfigReload::new(config.clone()));
    let mut config_watch = match &config_reload {
        Some(reload) => match config::watch_config(reload.path()) {
            Ok(watch) => Some(watch),
            Err(e) => {
                tracing::error!("configuration changes need a restart: {e:#}");
                None
            }
        },
        None => None,
    };
    let mut reloader = Reloader::new(&dir, loader);
    reloader.report_progress(gateway.load_progress());
    match reloader.rescan(&Registry::empty(config.clone())).await {
        Ok(first) => {
            tracing::info!(
                tools = first.registry.tools().count(),
                ms = started.elapsed().as_millis() as u64,
                "plugin directory loaded: {first}"
            );
            crate::metrics::loaded(&first.registry, first.failed);
            gateway.publish_initial(first.registry).await;
        }
        Err(e) if e.is::<dir::ShuttingDown>() => {
            tracing::debug!("the first load stopped: the process is shutting down");
            return;
        }
        Err(e) => {
            tracing::error!("cannot load the plugin directory: {e:#}");
            gateway.publish_initial(Registry::empty(config)).await;
        }
    }
    let Some(mut watch) = watch else { return };
    loop {
        let config_event = async {
            match &mut config_watch {
                Some(w) => w.events.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            event = watch.events.recv() => {
                if event.is_none() {
                    return;
                }
                // Wait for the directory to go quiet.
                while let Ok(Some(())) = tokio::time::timeout(QUIET, watch.events.recv()).await {}
                rescan_and_publish(&mut reloader, &gateway).await;
                // A config edit refused because a component would not load
                // may load now.
                if let Some(reload) = &mut config_reload {
                    reload.retry(&mut reloader, &gateway).await;
                }
            }
            Some(()) = config_event => {
                let events = &mut config_watch.as_mut().expect("an event came from it").events;
                while let Ok(Some(())) = tokio::time::timeout(QUIET, events.recv()).await {}
                if let Some(reload) = &mut config_reload {
                    reload.apply(&mut reloader, &gateway).await;
                }
            }
        }
    }
}

/// Rescans the plugin directory and publishes the next registry if it
/// changed.
async fn rescan_and_publish(reloader: &mut Reloader, gateway: &Gateway) {
    match reloader.rescan(&gateway.registry()).await {
        Ok(rescan) if rescan.changed => {
            tracing::debug!("plugin directory rescanned: {rescan}");
            // Recorded before clients hear of the change.
            crate::metrics::reload(crate::metrics::ReloadResult::Changed);
            crate::metrics::loaded(&rescan.registry, rescan.failed);
            gateway.replace_registry(rescan.registry).await;
        }
        Ok(rescan) => {
            tracing::debug!("plugin directory rescanned: no changes ({rescan})");
            crate::metrics::reload(crate::metrics::ReloadResult::Unchanged);
            crate::metrics::loaded(&rescan.registry, rescan.failed);
        }
        Err(e) if e.is::<dir::ShuttingDown>() => {
            tracing::debug!("the rescan stopped: the process is shutting down");
        }
        Err(e) => {
            tracing::error!("cannot rescan the plugin directory: {e:#}");
            crate::metrics::reload(crate::metrics::ReloadResult::Failed);
        }
    }
}
