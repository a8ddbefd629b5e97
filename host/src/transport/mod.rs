//! How toolhost is reached: MCP over stdio (the default), or over
//! Streamable HTTP.
//!
//! [`server::Gateway`](crate::server::Gateway) is rmcp's service and knows
//! no transport. This module puts a ready Gateway (built by
//! [`crate::serve`], the composition root) on stdin/stdout or on a socket:
//! - [`stdio`] runs the session: a reader, rmcp, and one writer;
//! - [`triage`] decides, for one line, whether rmcp gets it or toolhost
//!   answers it itself (input rmcp would drop unanswered, or answer with
//!   the wrong error). See ADR 0010;
//! - [`http`] serves `/mcp` with rmcp's Streamable HTTP service for many
//!   clients in both eras, bounded per caller, with health endpoints and a
//!   graceful shutdown. See ADR 0011;
//! - [`rebinding`] is its `Host` and `Origin` check (DNS-rebinding
//!   protection), run before any other layer. See ADR 0033.

pub mod approval_page;
pub mod http;
pub mod rebinding;
pub mod stdio;
pub mod triage;
