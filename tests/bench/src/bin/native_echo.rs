//! `native-echo`: the benchmark's baseline server.
//!
//! The same `echo` tool as the `echo` component (`tests/components/echo`),
//! written directly against rmcp and served over stdio: no wasm, no schema
//! validator, no sandbox. `toolhost-bench` drives it with the same client as
//! toolhost, so the difference between the two is what toolhost adds.
//!
//! `native-echo --http ADDR` serves it over Streamable HTTP instead, at
//! `http://ADDR/mcp` with rmcp's `StreamableHttpService` under axum and its
//! default configuration (sessions in memory), and logs
//! `serving MCP over HTTP at URL` to stderr once it listens (port 0 picks a
//! free port): the baseline of toolhost's HTTP rows.
//!
//! The tool is registered at runtime (a `ServerHandler` with `list_tools`
//! and `call_tool`), the way toolhost itself serves tools; its arguments are
//! checked by deserializing them into [`Message`], as a typed rmcp tool does.

use std::net::SocketAddr;
use std::sync::Arc;

use clap::Parser;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The tool's arguments and its result: the same object.
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Message {
    /// Any text; it comes back unchanged.
    message: String,
}

/// The server: one tool, no state.
#[derive(Clone)]
struct NativeEcho {
    /// The `echo` definition, built once.
    tool: Tool,
}

impl NativeEcho {
    /// The server, with the `echo` definition built.
    fn new() -> NativeEcho {
        let schema = json!({
            "type": "object",
            "properties": {
                "message": {
                    "type": "string",
                    "description": "Any text; it comes back unchanged.",
                    "examples": ["ping"]
                }
            },
            "required": ["message"],
            "additionalProperties": false
        });
        let Value::Object(schema) = schema else {
            unreachable!("the schema is an object literal")
        };
        let schema: Arc<JsonObject> = Arc::new(schema);
        let tool = Tool::new(
            "echo",
            "Return the message unchanged. A benchmark and connectivity check; it has no \
             side effects.",
            schema.clone(),
        )
        .with_title("Echo")
        .with_raw_output_schema(schema)
        .with_annotations(
            ToolAnnotations::new()
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        );
        NativeEcho { tool }
    }
}

impl ServerHandler for NativeEcho {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new("native-echo", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![self.tool.clone()]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != "echo" {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {:?}; the only tool is \"echo\"", request.name),
                None,
            ));
        }
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let input: Message = serde_json::from_value(arguments)
            .map_err(|e| ErrorData::invalid_params(format!("bad arguments for echo: {e}"), None))?;
        let output = serde_json::to_value(input).map_err(|e| {
            ErrorData::internal_error(format!("cannot encode the result: {e}"), None)
        })?;
        Ok(CallToolResult::structured(output).into())
    }
}

/// The benchmark's baseline: `echo` served natively by rmcp.
#[derive(Parser)]
#[command(name = "native-echo", version, about)]
struct Args {
    /// Serve MCP over Streamable HTTP at `http://ADDR/mcp` instead of
    /// stdio, e.g. `127.0.0.1:0`.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    match Args::parse().http {
        None => {
            let service = NativeEcho::new().serve(stdio_on_the_reactor()?).await?;
            service.waiting().await?;
        }
        Some(addr) => serve_http(addr).await?,
    }
    Ok(())
}

/// Stdin and stdout as non-blocking pipes read and written on tokio's
/// reactor, the way toolhost serves stdio (ADR 0024), rather than through
/// rmcp's `stdio()`, which goes through the blocking pool: the baseline
/// gets the same treatment, so the ratio measures the gateway. The
/// benchmark always starts this server with pipes.
fn stdio_on_the_reactor() -> anyhow::Result<(
    tokio::net::unix::pipe::Receiver,
    tokio::net::unix::pipe::Sender,
)> {
    use std::os::fd::AsFd;
    let stdin = std::io::stdin().as_fd().try_clone_to_owned()?;
    let stdout = std::io::stdout().as_fd().try_clone_to_owned()?;
    Ok((
        tokio::net::unix::pipe::Receiver::from_owned_fd(stdin)?,
        tokio::net::unix::pipe::Sender::from_owned_fd(stdout)?,
    ))
}

/// Serves `echo` over Streamable HTTP on `addr` until killed.
async fn serve_http(addr: SocketAddr) -> anyhow::Result<()> {
    let server = NativeEcho::new();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let app = axum::Router::new().route_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let address = listener.local_addr()?;
    // The same TCP_NODELAY toolhost sets on its connections, so both
    // answer without waiting on the client's delayed ACK.
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    eprintln!("serving MCP over HTTP at http://{}/mcp", address);
    axum::serve(listener, app).await?;
    Ok(())
}
