//! Helpers for the tests of what 0.2 components offer (resources,
//! templates, prompts), shared by the process and in-process tiers.

use rmcp::ServiceError;
use rmcp::model::{ReadResourceRequestParams, ResourceContents};

use super::session::Client;
use super::{Era, component};

/// The JSON-RPC error of a failed request: (code, message).
pub fn rpc_error(result: Result<impl std::fmt::Debug, ServiceError>) -> (i32, String) {
    match result {
        Err(ServiceError::McpError(e)) => (e.code.0, e.message.to_string()),
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

/// The text of `contents`, which must be text.
pub fn text_of(contents: &ResourceContents) -> &str {
    match contents {
        ResourceContents::TextResourceContents { text, .. } => text,
        other => panic!("expected text, got {other:?}"),
    }
}

/// Reads `uri`.
pub async fn read(client: &Client, uri: &str) -> Result<Vec<ResourceContents>, ServiceError> {
    client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .map(|r| r.contents)
}

/// MCP's resource-not-found code as each era receives it: `-32002` for
/// legacy clients; 2026-07-28 folds it into `-32602`.
pub fn not_found_code(era: Era) -> i32 {
    match era {
        Era::Legacy => -32002,
        Era::Modern => -32602,
    }
}

/// The URIs of every resource `client` is listed, sorted.
pub async fn resource_uris(client: &Client) -> Vec<String> {
    let mut uris: Vec<String> = client
        .list_all_resources()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.uri)
        .collect();
    uris.sort();
    uris
}

/// `name`'s component with a custom section naming `build` appended: the
/// same code, other bytes, as a rebuild of the component would be.
pub fn rebuilt(name: &str, build: u8) -> Vec<u8> {
    const SECTION: &[u8] = b"toolhost-test-build";
    let mut bytes = component(name);
    // Custom section (id 0), its size, then the name and the payload; every
    // length is below 128, so one LEB128 byte each.
    bytes.extend([0, (1 + SECTION.len() + 1) as u8, SECTION.len() as u8]);
    bytes.extend(SECTION);
    bytes.push(build);
    bytes
}
