//! MCP logging (ADR 0046): `logging/setLevel` per legacy session, and a
//! component's `log` messages sent to the calling client as
//! `notifications/message` when the operator opted its block in
//! (`plugins.NAME.log_to_client`).
//!
//! The operator's log is unchanged: every message still goes there. What a
//! client receives is a copy, for one call, of the messages at or above
//! both the block's level and the level the client asked for:
//! - a legacy session asks with `logging/setLevel`, kept per session
//!   (`Mcp-Session-Id` over HTTP; stdio serves one session); until it
//!   asks, the block's level alone decides, as the specification lets
//!   the server choose;
//! - a 2026-07-28 request asks in its own `_meta`
//!   (`io.modelcontextprotocol/logLevel`, SEP-2575); without it the
//!   request receives no log message, as that revision requires. Logging
//!   is deprecated there (SEP-2577) but still specified, so it is served.
//!
//! A message travels through the request's own peer, as progress does:
//! over stdio on the one stream; over HTTP in the calling session alone
//! (rmcp 3.9 routes a legacy session's `notifications/message` to its
//! standalone stream, a 2026-07-28 request's to its response stream).
//! Another session never receives it.

// rmcp marks every logging type deprecated (SEP-2577); toolhost serves
// the feature for as long as the specification keeps it.
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde_json::json;

use super::Gateway;
use super::request::{Era, Request};
use crate::hooks::BoxFuture;
use crate::imports::log::{LogLevel, LogSink};
use crate::registry::ToolRef;

/// The level one legacy session asked for with `logging/setLevel`.
pub(super) struct SessionLevel {
    /// The session's `Mcp-Session-Id` over HTTP; `None` over stdio, which
    /// serves one session.
    session: Option<String>,
    /// Its peer: once its transport closed, the entry is dropped.
    peer: Peer<RoleServer>,
    /// The least severe level it wants.
    level: LoggingLevel,
}

/// `logging/setLevel`: keeps `level` for the request's session. A
/// 2026-07-28 request has no session; its level rides in each request, so
/// nothing is kept.
pub(super) fn set_level(
    gateway: &Gateway,
    request: &Request,
    level: LoggingLevel,
    context: &RequestContext<RoleServer>,
) {
    if request.era == Era::Modern {
        return;
    }
    let mut levels = gateway.inner.log_levels.lock().expect("not poisoned");
    levels.retain(|l| !l.peer.is_transport_closed());
    match levels.iter_mut().find(|l| l.session == request.session) {
        Some(held) => held.level = level,
        None => levels.push(SessionLevel {
            session: request.session.clone(),
            peer: context.peer.clone(),
            level,
        }),
    }
    tracing::debug!(level = ?level, "client log level set");
}

/// Where a call of `tool` sends its log messages besides the operator's
/// log: the calling client, when the tool's block opted in and the client
/// may hear them (module docs); `None` otherwise.
pub(super) fn sink_for(
    gateway: &Gateway,
    request: &Request,
    tool: &ToolRef,
    context: &RequestContext<RoleServer>,
) -> Option<Arc<dyn LogSink>> {
    let block = tool.plugin.settings.log_to_client?;
    let asked = match (context.meta.log_level(), request.era) {
        (Some(level), _) => Some(level),
        (None, Era::Modern) => return None,
        (None, Era::Legacy) => {
            let levels = gateway.inner.log_levels.lock().expect("not poisoned");
            levels
                .iter()
                .find(|l| l.session == request.session && !l.peer.is_transport_closed())
                .map(|l| l.level)
        }
    };
    Some(Arc::new(PeerLog {
        peer: context.peer.clone(),
        block,
        asked,
        logger: tool.plugin.settings.name.clone(),
        tool: tool.name.clone(),
    }))
}

/// A call's log messages, sent to the client that made it.
struct PeerLog {
    /// The calling client's peer.
    peer: Peer<RoleServer>,
    /// The block's `log_to_client`.
    block: LogLevel,
    /// The level the client asked for, if it asked.
    asked: Option<LoggingLevel>,
    /// The block's name: the notification's `logger`.
    logger: String,
    /// The tool called, as the client called it.
    tool: String,
}

/// A component's level as MCP's (RFC 5424's): MCP has no `trace`, so it
/// is `debug`.
fn mcp_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Trace | LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Warn => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
    }
}

/// MCP's levels by severity, least severe first.
fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

impl LogSink for PeerLog {
    fn wants(&self, level: LogLevel) -> bool {
        level >= self.block
            && self
                .asked
                .is_none_or(|asked| severity(mcp_level(level)) >= severity(asked))
    }

    fn forward(&self, level: LogLevel, message: String) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let param = LoggingMessageNotificationParam::new(
                mcp_level(level),
                json!({ "tool": self.tool, "message": message }),
            )
            .with_logger(self.logger.clone());
            if let Err(e) = self.peer.notify_logging_message(param).await {
                tracing::debug!("cannot send a log message to the client: {e}");
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_components_levels_map_to_mcp_levels_in_the_same_order() {
        let mapped: Vec<u8> = LogLevel::ALL
            .into_iter()
            .map(|l| severity(mcp_level(l)))
            .collect();
        assert!(mapped.windows(2).all(|w| w[0] <= w[1]), "{mapped:?}");
        assert_eq!(mcp_level(LogLevel::Warn), LoggingLevel::Warning);
    }
}
