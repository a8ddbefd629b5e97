//! The nine StatusPro tools, and everything they share.
//!
//! [StatusPro](https://orderstatuspro.com) gives Shopify orders custom
//! statuses, history comments and due dates. Each tool here is a
//! [`toolhost_sdk::Tool`]; each has its own component crate under
//! `plugins/statuspro/components/`, one line long, so an operator can serve
//! any subset and grant each only what it needs:
//!
//! ```no_run
//! toolhost_sdk::export_tools!(statuspro_tools::ListOrders);
//! ```
//!
//! | tool | kind | upstream |
//! |---|---|---|
//! | [`ListOrders`] | read | `GET /orders` (one page, or every page) |
//! | [`GetOrder`] | read | `GET /orders/{id}` |
//! | [`LookupOrder`] | read | `GET /orders/lookup` |
//! | [`ListStatuses`] | read | `GET /statuses` |
//! | [`GetViableStatuses`] | read | `GET /orders/{id}/viable-statuses` |
//! | [`UpdateOrderStatus`] | two-step mutation | `POST /orders/{id}/status` |
//! | [`AddOrderComment`] | two-step mutation | `POST /orders/{id}/comment` |
//! | [`UpdateOrderDueDate`] | two-step mutation | `POST /orders/{id}/due-date` |
//! | [`BulkUpdateOrderStatus`] | two-step mutation | `POST /orders/bulk-status` |
//!
//! # Modules
//!
//! | module | job |
//! |---|---|
//! | [`client`] | the API client over the host's `http` import; base URL from config |
//! | [`api`] | the API's wire shapes, deserialized leniently |
//! | [`output`] | the token-lean shapes the tools return, and the projections to them |
//! | [`error`] | HTTP failures to the shared error vocabulary, with hints |
//! | [`inputs`] | input pieces several tools share: enums, date and status-code checks |
//! | [`mutation`] | the two-step confirmation flow of the four mutations, reported in the SDK's shared vocabulary |
//! | [`paging`] | walking `GET /orders` page by page, with a cap; a walk cut short keeps what it read |
//! | [`resources`] | the status catalog and the usage guide as resources (`statuspro://statuses`, `statuspro://guide`) |
//! | `tools` | one module per tool |
//!
//! # Invariants
//!
//! * **No secrets here.** The API key never reaches the component: the host
//!   adds `Authorization` to requests for the API's host from the operator's
//!   `credentials` entry.
//! * **Nothing changes without a confirmation.** A mutation with
//!   `confirm: false` sends at most `GET` requests; with `confirm: true` it
//!   refuses what it can tell is impossible (a status an order cannot take)
//!   before asking, then asks the user, and only a confirmed answer lets
//!   the `POST` out (the host enforces this too).
//! * **One vocabulary.** Mutations report `is_preview`, `result`,
//!   `message`, `warnings` and `next_actions`
//!   ([`toolhost_sdk::mutation::Report`]), as the Katana tools do; every
//!   failure, a change StatusPro refused included, is a tool error
//!   (`isError: true`) in the host's envelope.
//! * **No silent retries.** A 429 becomes `RATE_LIMIT` with `retry_after_ms`
//!   (in a walk of every page, after the first, an issue beside the orders
//!   read).

#![deny(missing_docs)]

pub mod api;
pub mod client;
pub mod error;
pub mod inputs;
pub mod mutation;
pub mod output;
pub mod paging;
pub mod resources;
mod tools;

pub use resources::{StatusCatalog, UsageGuide};
pub use tools::{
    AddOrderComment, BulkUpdateOrderStatus, GetOrder, GetViableStatuses, ListOrders, ListStatuses,
    LookupOrder, UpdateOrderDueDate, UpdateOrderStatus,
};

/// Everything a tools module needs from the crate and the SDK.
pub(crate) mod prelude {
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
    pub use toolhost_sdk::{Annotations, Tool, ToolError};

    pub use crate::client::Client;
}
