//! What StatusPro offers beside its tools (`toolhost:plugin@0.2.0`), as the
//! reference server did: the status catalog and a usage guide, as
//! resources a client can attach to a conversation without a tool call.
//! Both are exported by the `list_statuses` component, the one that
//! already reads the catalog.
//!
//! | URI | what | upstream |
//! |---|---|---|
//! | `statuspro://statuses` | every status: code, name, description, colour (JSON) | `GET /statuses` |
//! | `statuspro://guide` | how the nine tools fit together (Markdown) | none |

use toolhost_sdk::{Contents, Resource, ResourceAnnotations, ToolError};

use crate::client::Client;
use crate::output::StatusEntry;

/// `statuspro://statuses`: the status catalog, read live.
pub struct StatusCatalog;

impl Resource for StatusCatalog {
    const URI: &'static str = "statuspro://statuses";
    const NAME: &'static str = "status-catalog";
    const TITLE: &'static str = "StatusPro Status Catalog";
    const DESCRIPTION: &'static str = "Every order status the StatusPro shop defines, in the \
        shop's order: the 8-character code (pass it as status_code), the name, what it means \
        and its colour. Read it to translate status names to codes before changing an order.";
    const MIME_TYPE: &'static str = "application/json";
    const ANNOTATIONS: ResourceAnnotations = ResourceAnnotations::FOR_THE_MODEL;

    fn read(&self) -> Result<Contents, ToolError> {
        let statuses: Vec<StatusEntry> = Client::from_config()?
            .statuses()?
            .iter()
            .map(StatusEntry::from_api)
            .collect();
        serde_json::to_string_pretty(&serde_json::json!({ "statuses": statuses }))
            .map(Contents::Text)
            .map_err(|e| ToolError::internal(format!("cannot render the catalog: {e}")))
    }
}

/// `statuspro://guide`: how to use the tools together.
pub struct UsageGuide;

/// The guide's text.
pub const GUIDE: &str = "# Using the StatusPro tools

StatusPro gives Shopify orders custom statuses, history comments and due dates.

## Find the order
- `lookup_order` with the order number (`1188` or `#1188`) and the customer's email,
  when a customer asks about their order.
- `list_orders` to filter by status code, tags, dates or a search text; without `page`
  it walks every page (up to 100).
- `get_order` for one order with its history (newest first, capped by `history_limit`).

## Know the statuses
- Status codes are 8 characters: `st` and six digits, e.g. `st000003`.
- The catalog (`statuspro://statuses`, or the `list_statuses` tool) maps names to codes.
- An order can only move to some statuses: call `get_viable_statuses` before
  `update_order_status`; an order with no status set may take any.

## Change an order (two steps)
`update_order_status`, `add_order_comment`, `update_order_due_date` and
`bulk_update_order_status` change data:
1. Call with `confirm: false` (the default): a preview of what would change, nothing sent.
2. Call again with `confirm: true`: the user is asked to approve; only a yes sends it.

Every result says `is_preview`, `result`, `message`, `warnings` and `next_actions`.
Bulk updates (up to 50 orders) are queued: StatusPro answers at once and applies them
shortly after; unknown or non-viable orders are skipped.

## Limits and errors
- 60 requests a minute per key (bulk: 5 a minute). A `RATE_LIMIT` error says how long
  to wait (`retry_after_ms`); nothing is retried silently.
- Errors use one vocabulary: `VALIDATION_ERROR`, `NOT_FOUND`, `PERMISSION_DENIED`,
  `CONFLICT`, `RATE_LIMIT`, `TRANSIENT`, `INTERNAL`, each with a hint.
";

impl Resource for UsageGuide {
    const URI: &'static str = "statuspro://guide";
    const NAME: &'static str = "usage-guide";
    const TITLE: &'static str = "StatusPro Usage Guide";
    const DESCRIPTION: &'static str = "How the StatusPro tools fit together: finding an order, \
        status codes and which ones an order may take, the two-step confirmation of every \
        change, rate limits and errors. Read it before the first change.";
    const MIME_TYPE: &'static str = "text/markdown";
    const ANNOTATIONS: ResourceAnnotations = ResourceAnnotations::FOR_THE_MODEL;

    fn read(&self) -> Result<Contents, ToolError> {
        Ok(GUIDE.into())
    }
}
