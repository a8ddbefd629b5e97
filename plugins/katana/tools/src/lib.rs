//! The seven Katana tools, served as one component.
//!
//! [Katana](https://katanamrp.com) is a manufacturing ERP: products made
//! from materials by recipe, bought on purchase orders, made on
//! manufacturing orders and sold on sales orders. Unlike StatusPro's
//! one-tool-per-component packaging, this crate is a single component
//! (`katana.wasm`) exporting all seven, so one configuration block grants
//! them one set of permissions:
//!
//! | tool | kind | upstream (contract endpoint) |
//! |---|---|---|
//! | [`SearchItems`] | read | E1 `GET /variants`, every page |
//! | [`VerifyOrderDocument`] | read | E3 `GET /purchase_orders/{id}`, E1 by ids |
//! | [`FindOrder`] | read | E3, E6 or E8 by id, or `GET /purchase_orders` (`/manufacturing_orders`, `/sales_orders`) by `order_no`; E1 by ids |
//! | [`CreatePurchaseOrder`] | two-step mutation | E2 `POST /purchase_orders` |
//! | [`ReceivePurchaseOrder`] | two-step mutation | E3, E4 `POST /purchase_order_receive`, E3 |
//! | [`CreateManufacturingOrder`] | two-step mutation | E5 `POST /manufacturing_orders` |
//! | [`FulfillOrder`] | two-step mutation | E6 + E7 `PATCH /manufacturing_orders/{id}`, or E8 + E9 `POST /sales_order_fulfillments` |
//!
//! # Modules
//!
//! | module | job |
//! |---|---|
//! | [`client`] | the API client over the host's `http` import: settings from config, paging, the one retry, confirmations |
//! | [`api`] | Katana's wire shapes, read leniently, and the request bodies |
//! | [`error`] | HTTP failures to the shared error vocabulary: Katana's message, the first `details` entry as hint |
//! | [`mutation`] | the two-step confirmation flow and the fields every mutation reports |
//! | [`inputs`] | line-item lists that may arrive as JSON strings, checks, enums, number and time formats |
//! | [`tools`] | one module per tool |
//! | [`resources`] | the item catalog as the resource template `katana://items/{sku}`, with completion on `sku` |
//!
//! # Invariants
//!
//! * **No secrets here.** The host adds `Authorization` to requests for the
//!   API's host from the operator's `credentials` entry.
//! * **Nothing changes without a confirmation.** A mutation with
//!   `confirm: false` sends at most `GET` requests; with `confirm: true`
//!   it checks what it can, asks the user, and only a yes lets the change
//!   out (the host enforces this too). Whenever nothing was written,
//!   `is_preview` is true.
//! * **One error envelope.** Every failure, a refused change included, is a
//!   tool error with the shared codes; nothing is reported as success that
//!   Katana did not accept.
//! * **At most one retry per call**, and only when the wait fits in the
//!   call's time (see [`client::retry_wait`]), counted as the host counts
//!   it: a confirmation's wait is not the call's time.

#![deny(missing_docs)]

pub mod api;
pub mod client;
pub mod error;
pub mod inputs;
pub mod mutation;
pub mod resources;
pub mod tools;

pub use tools::{
    CreateManufacturingOrder, CreatePurchaseOrder, FindOrder, FulfillOrder, ReceivePurchaseOrder,
    SearchItems, VerifyOrderDocument,
};

/// Everything a tools module needs from the crate and the SDK.
pub(crate) mod prelude {
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
    pub use toolhost_sdk::{Annotations, Tool, ToolError};

    pub use crate::client::Client;
}

// The component's exports. Native builds (the unit tests) leave them out:
// their symbol names are not valid in a native shared library.
#[cfg(target_family = "wasm")]
toolhost_sdk::export_component! {
    tools: [
        SearchItems,
        VerifyOrderDocument,
        FindOrder,
        CreatePurchaseOrder,
        ReceivePurchaseOrder,
        CreateManufacturingOrder,
        FulfillOrder,
    ],
    templates: [resources::ItemCatalog],
}
