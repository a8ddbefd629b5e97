//! `toolhost serve`: the composition root. It builds the one [`Gateway`],
//! starts the task that keeps it in step with the plugin directory and the
//! config file ([`crate::reload`]), checks what must hold before anything
//! is served, and hands the ready Gateway to a transport.
//!
//! **Architecture invariant:** transports decide how toolhost is reached,
//! never what it serves: they take a ready [`Gateway`] and build none, load
//! nothing and start no reload. Everything that decides what is served is
//! wired here, once, for both transports.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use crate::auth::Authenticator;
use crate::call::CallEnv;
use crate::config::Config;
use crate::plugin::Loader;
use crate::server::Gateway;
use crate::transport;

/// How `toolhost serve` was asked to run.
pub struct ServeOptions {
    /// The plugin directory.
    pub dir: PathBuf,
    /// Whether hot reload follows the directory and the config file.
    pub watch: bool,
    /// Serve MCP over Streamable HTTP at this address (`--http`, else
    /// `host.http`); stdio without either.
    pub http: Option<SocketAddr>,
    /// On stdio, the profile served (`--profile`; ADR 0040).
    pub profile: Option<String>,
}

/// Serves the plugin directory until the client goes away (stdio) or a
/// signal ends the process (HTTP).
///
/// `initialize` is answered at once; the directory loads in the background
/// and requests wait for it (ADR 0006, [`crate::server`]).
pub async fn serve(loader: Loader, options: ServeOptions) -> Result<()> {
    // A missing or unreadable directory is an error now, not a log line
    // later.
    crate::registry::wasm_files(&options.dir)?;
    let config = loader.config.clone();
    for warning in config.warnings() {
        tracing::warn!("{warning}");
    }
    if let Some(addr) = config.metrics {
        crate::metrics::serve(addr).await?;
    }
    match options.http.or(config.http.listen) {
        Some(addr) => {
            if options.profile.is_some() {
                bail!(
                    "--profile chooses a profile on stdio; over HTTP every profile of \
                     [[profiles]] is served at /mcp/NAME"
                );
            }
            let auth = Authenticator::from_settings(config.auth.as_ref(), &config.access)?;
            refuse_unauthenticated_exposure(addr, auth.is_some())?;
            refuse_access_rules_without_auth(&config, auth.is_some())?;
            let listener = transport::http::listen(addr)
                .with_context(|| format!("cannot listen on {addr} (host.http or --http)"))?;
            if config.metrics.is_none() {
                // Metrics are served on this listener: recorded from
                // before the first load starts, whose counts (components
                // and tools loaded) would otherwise be lost when it ends
                // before the listener is set up.
                crate::metrics::install();
            }
            let gateway = start(loader, options.dir, options.watch)?;
            let http = transport::http::HttpOptions {
                settings: config.http.clone(),
                max_body: config.max_message_bytes,
                // Metrics on this listener unless the operator gave them
                // their own.
                metrics_here: config.metrics.is_none(),
            };
            transport::http::serve(gateway, listener, auth, http).await
        }
        None => {
            if let Some(name) = &options.profile
                && config.profile(name).is_none()
            {
                let known: Vec<&str> = config.profiles.iter().map(|p| p.name.as_str()).collect();
                bail!(
                    "--profile {name:?}: the config file's [[profiles]] has no profile by that \
                     name (it has: {}); add one or choose another",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                );
            }
            let gateway = start(loader, options.dir, options.watch)?;
            if let Some(name) = &options.profile {
                gateway.serve_profile(name);
            }
            transport::stdio::serve_process(gateway, config.max_message_bytes).await
        }
    }
}

/// Builds the Gateway (serving nothing until the initial load is in) and
/// spawns, on the current Tokio runtime, the task that loads `dir` and,
/// with `watch`, reloads it and the config file the loader's configuration
/// came from ([`crate::reload::run`]). The Gateway is ready for a
/// transport: [`serve`] hands it to stdio or HTTP; the in-process tests
/// serve it over an in-memory duplex with [`transport::stdio::serve`].
///
/// The reload task ends with the runtime (or, without `watch`, after the
/// initial load). Errors: the directory cannot be watched, or the
/// confirmation-state store (`[state]`) cannot be set up.
pub fn start(loader: Loader, dir: PathBuf, watch: bool) -> Result<Gateway> {
    let env = CallEnv {
        runtime: loader.runtime.clone(),
        http: loader.http.clone(),
    };
    let gateway = Gateway::loading(env, &loader)?;
    let watch = if watch {
        Some(crate::reload::dir::watch_dir(&dir)?)
    } else {
        None
    };
    tokio::spawn(crate::reload::run(dir, loader, gateway.clone(), watch));
    Ok(gateway)
}

/// Refuses to serve a non-loopback address without authentication: anyone
/// who can reach the port could call every tool.
pub fn refuse_unauthenticated_exposure(addr: SocketAddr, authenticated: bool) -> Result<()> {
    if !addr.ip().is_loopback() && !authenticated {
        bail!(
            "refusing to serve {addr} without authentication: anyone who can reach it could \
             call every tool. Configure [auth] (docs/auth.md), or listen on loopback \
             (127.0.0.1 or [::1]) behind a proxy that authenticates"
        );
    }
    Ok(())
}

/// Refuses `[[access]]` over HTTP without `[auth]`: without it no caller
/// has an identity, so the rules could restrict nobody.
fn refuse_access_rules_without_auth(config: &Config, authenticated: bool) -> Result<()> {
    if !authenticated && config.access.is_restricted() {
        bail!(
            "[[access]] rules need [auth] over HTTP: without it no caller has an identity, so \
             the rules could not apply and every caller would see every tool. Add [auth] \
             (docs/auth.md) or remove the [[access]] rules"
        );
    }
    Ok(())
}
