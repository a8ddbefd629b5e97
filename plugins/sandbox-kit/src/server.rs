//! Serving a router on loopback in the background.
//!
//! [`serve`] binds `127.0.0.1:<port>` (port 0 picks a free port, which is what
//! tests want), spawns the server on the current tokio runtime and returns a
//! [`ServerHandle`]. Dropping the handle starts a graceful shutdown: the
//! listener closes at once, and requests in flight finish on their own.

use std::{
    io,
    net::{Ipv4Addr, SocketAddr},
};

use axum::Router;
use tokio::{net::TcpListener, sync::oneshot, task::JoinHandle};

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The address could not be bound (port in use, no permission, ...).
    #[error("cannot bind {addr}: {source}")]
    Bind {
        /// The address that was asked for.
        addr: SocketAddr,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The socket was bound but its local address could not be read.
    #[error("cannot read the local address of the listener bound to {addr}: {source}")]
    LocalAddr {
        /// The address that was asked for.
        addr: SocketAddr,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
}

/// A running background server; shuts down when dropped.
#[derive(Debug)]
pub struct ServerHandle {
    /// The bound address (the real port when port 0 was asked for).
    addr: SocketAddr,
    /// Fires the graceful shutdown; `None` once fired.
    shutdown: Option<oneshot::Sender<()>>,
    /// The server task; `None` once awaited.
    task: Option<JoinHandle<io::Result<()>>>,
}

impl ServerHandle {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:<port>`, without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting connections and waits until the server has finished
    /// the requests in flight (an injected timeout fault still runs its course).
    pub async fn shutdown(mut self) -> io::Result<()> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        match self.task.take() {
            Some(task) => task.await.map_err(io::Error::other)?,
            None => Ok(()),
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// Binds `127.0.0.1:port` and serves `router` on a background task.
///
/// Must be called within a tokio runtime; the server lives on that runtime.
pub async fn serve(router: Router, port: u16) -> Result<ServerHandle, ServeError> {
    let requested = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let listener = TcpListener::bind(requested)
        .await
        .map_err(|source| ServeError::Bind {
            addr: requested,
            source,
        })?;
    let addr = listener
        .local_addr()
        .map_err(|source| ServeError::LocalAddr {
            addr: requested,
            source,
        })?;

    let (tx, rx) = oneshot::channel::<()>();
    let server = axum::serve(listener, router).with_graceful_shutdown(async move {
        // Either an explicit shutdown or the handle being dropped.
        let _ = rx.await;
    });
    let task = tokio::spawn(async move {
        let result = server.await;
        if let Err(err) = &result {
            tracing::error!(%addr, %err, "sandbox server failed");
        }
        result
    });
    tracing::debug!(%addr, "sandbox server listening");

    Ok(ServerHandle {
        addr,
        shutdown: Some(tx),
        task: Some(task),
    })
}

/// Resolves on Ctrl-C, or on SIGTERM where there is one (service managers
/// and container runtimes stop processes with it): how a sandbox binary
/// knows to shut down.
pub async fn wait_for_stop_signal() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut terminate = signal(SignalKind::terminate())?;
        tokio::select! {
            result = tokio::signal::ctrl_c() => result,
            _ = terminate.recv() => Ok(()),
        }
    }
    #[cfg(not(unix))]
    {
        tokio::signal::ctrl_c().await
    }
}
