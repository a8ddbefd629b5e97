//! The wire shapes of the Katana API (contract sections 1 and 2).
//!
//! These are exactly what the sandbox sends; tests deserialize responses into
//! them. Every type denies unknown fields, so a test that deserializes a
//! response also proves the sandbox sent nothing it does not document.
//!
//! Conventions, as on the wire:
//!
//! * Datetimes are strings such as `2026-03-01T09:00:00.000Z`.
//! * Quantities, prices and totals are JSON numbers; whole values are written
//!   without a fraction (`200`, not `200.0`), as Katana does.
//! * Optional values are present and `null` rather than missing, except
//!   [`Variant::product_or_material`], which only `extend=product_or_material`
//!   adds.
//! * Statuses are upper-case enums (`NOT_RECEIVED`).

use std::fmt;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

/// Writes a number the way Katana does: whole values as integers.
fn number<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    // Whole values within the exactly representable integer range of f64 are
    // written as integers; the cast is exact there.
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if value.fract() == 0.0 && value.abs() < EXACT {
        serializer.serialize_i64(*value as i64)
    } else {
        serializer.serialize_f64(*value)
    }
}

/// [`number`] for an optional value.
fn optional_number<S: Serializer>(value: &Option<f64>, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(value) => number(value, serializer),
        None => serializer.serialize_none(),
    }
}

/// `{"data": [...]}`: the body of every list endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListBody<T> {
    /// One page of records, newest first.
    pub data: Vec<T>,
}

/// The `X-Pagination` header of a list response, a JSON object whose values
/// are all strings (`{"page":"2","first_page":"false",...}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pagination {
    /// Records matching the filters, over all pages.
    pub total_records: String,
    /// Pages at the effective `limit` (at least 1).
    pub total_pages: String,
    /// Records skipped before this page: `(page - 1) × limit`.
    pub offset: String,
    /// The page returned (as asked, even past the end).
    pub page: String,
    /// `"true"` on page 1.
    pub first_page: String,
    /// `"true"` on the last page and past it.
    pub last_page: String,
}

/// Every error body: `{statusCode, name, message}`, plus `code` and `details`
/// on a 422.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorBody {
    /// The HTTP status, repeated.
    #[serde(rename = "statusCode")]
    pub status_code: u16,
    /// `UnauthorizedError`, `NotFoundError`, `BadRequest`,
    /// `UnprocessableEntityError`, `TooManyRequests`, `InternalServerError`, ...
    pub name: String,
    /// A human-readable description.
    pub message: String,
    /// `VALIDATION_FAILED` on a 422; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// What was wrong, one entry per problem, on a 422; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Vec<ErrorDetail>>,
}

/// One problem of a 422.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorDetail {
    /// Where in the body (or query): `.order_no`,
    /// `.purchase_order_rows[0].quantity`, `[1].quantity` for an array body.
    pub path: String,
    /// What kind of problem: `required`, `additionalProperties`, `type`,
    /// `enum`, `pattern`, `minItems`, `minimum`, `exclusiveMinimum`,
    /// `maximum`, `maxLength`, `format`, `notFound`, `unique`, `notAllowed`,
    /// `notProducible`, `alreadyReceived`, `notUpdatable`, `invalidTransition`.
    pub code: String,
    /// A readable sentence.
    pub message: String,
    /// Extra facts, e.g. `{"additionalProperty":"foo"}`,
    /// `{"allowedValues":[...]}`, `{"limit":100}`; absent when there are none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub info: Option<Value>,
}

/// A place stock is kept, and what may happen there (`GET /locations`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Location {
    /// Location id (1, 2, 3 in the seed).
    pub id: i64,
    /// Display name, e.g. `"Main"`.
    pub name: String,
    /// Legal name of the company at this location.
    pub legal_name: Option<String>,
    /// Address record id; the sandbox has no addresses, so always null.
    pub address_id: Option<i64>,
    /// Whether this is the primary location.
    pub is_primary: bool,
    /// Whether sales orders may ship from here.
    pub sales_allowed: bool,
    /// Whether manufacturing orders may run here.
    pub manufacturing_allowed: bool,
    /// Whether purchase orders may be received here.
    pub purchases_allowed: bool,
    /// Sort rank in the UI.
    pub rank: i64,
    /// Creation time.
    pub created_at: String,
    /// Last update time.
    pub updated_at: String,
    /// Always null: deleted records are not served.
    pub deleted_at: Option<String>,
}

/// A supplier purchase orders are placed with (`GET /suppliers`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Supplier {
    /// Supplier id (4001, 4002 in the seed).
    pub id: i64,
    /// Company name.
    pub name: String,
    /// Contact e-mail.
    pub email: Option<String>,
    /// Contact phone.
    pub phone: Option<String>,
    /// ISO 4217 code; a new purchase order without `currency` takes this one.
    pub currency: String,
    /// Free-text note.
    pub comment: Option<String>,
    /// Creation time.
    pub created_at: String,
    /// Last update time.
    pub updated_at: String,
    /// Always null.
    pub deleted_at: Option<String>,
}

/// What kind of item a variant belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ItemType {
    /// Something made (and sold): it has a recipe and can be manufactured.
    Product,
    /// Something bought and consumed by recipes.
    Material,
    /// Work sold without stock (no stock is kept or moved).
    Service,
}

impl ItemType {
    /// `"product"`, `"material"` or `"service"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Product => "product",
            Self::Material => "material",
            Self::Service => "service",
        }
    }
}

/// One configuration choice of a variant, e.g. `Size: 8-inch`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigAttribute {
    /// The option's name, e.g. `"Size"`.
    pub config_name: String,
    /// The chosen value, e.g. `"8-inch"`.
    pub config_value: String,
}

/// The product, material or service a variant belongs to (added by
/// `extend=product_or_material`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProductOrMaterial {
    /// Item id (products 1001+, materials 1101+, services 1201+, fillers 1301+).
    pub id: i64,
    /// Item name, e.g. `"Chef's Knife"`; tools build display names from it.
    pub name: String,
    /// What kind of item.
    #[serde(rename = "type")]
    pub item_type: ItemType,
    /// Unit of measure, e.g. `"pcs"`.
    pub uom: String,
    /// Category, e.g. `"Knives"`.
    pub category_name: Option<String>,
    /// Whether it can be sold.
    pub is_sellable: bool,
    /// Whether it can be manufactured.
    pub is_producible: bool,
    /// Whether it can be purchased.
    pub is_purchasable: bool,
    /// The usual supplier.
    pub default_supplier_id: Option<i64>,
    /// Unit purchases are made in.
    pub purchase_uom: Option<String>,
    /// Stock units per purchase unit.
    #[serde(serialize_with = "optional_number")]
    pub purchase_uom_conversion_rate: Option<f64>,
    /// Whether stock is tracked in batches.
    pub batch_tracked: bool,
    /// Free-text note.
    pub additional_info: Option<String>,
    /// Creation time.
    pub created_at: String,
    /// Last update time.
    pub updated_at: String,
}

/// A sellable, buyable or makeable SKU (`GET /variants`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// Variant id (products 5001+, materials 5101+, services 5201+, fillers 5301+).
    pub id: i64,
    /// Stock-keeping unit, unique, e.g. `"KNF-8IN-BLK"`.
    pub sku: String,
    /// Sale price per unit.
    #[serde(serialize_with = "optional_number")]
    pub sales_price: Option<f64>,
    /// Purchase price per unit.
    #[serde(serialize_with = "optional_number")]
    pub purchase_price: Option<f64>,
    /// The product's item id, for product variants.
    pub product_id: Option<i64>,
    /// The material's item id, for material variants.
    pub material_id: Option<i64>,
    /// What kind of item.
    #[serde(rename = "type")]
    pub item_type: ItemType,
    /// Internal barcode.
    pub internal_barcode: Option<String>,
    /// Registered (GTIN) barcode.
    pub registered_barcode: Option<String>,
    /// The suppliers' codes for this SKU.
    pub supplier_item_codes: Vec<String>,
    /// Purchase lead time in days.
    pub lead_time: Option<i64>,
    /// Smallest purchase quantity.
    #[serde(serialize_with = "optional_number")]
    pub minimum_order_quantity: Option<f64>,
    /// Configuration choices, in the product's option order.
    pub config_attributes: Vec<ConfigAttribute>,
    /// Creation time.
    pub created_at: String,
    /// Last update time.
    pub updated_at: String,
    /// Always null.
    pub deleted_at: Option<String>,
    /// The parent item; only with `extend=product_or_material`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_or_material: Option<ProductOrMaterial>,
}

/// Declares a wire enum with its upper-case spelling.
macro_rules! wire_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant),+
        }

        impl $name {
            /// Every value, in the order the API documents them.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            /// The wire spelling.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $text),+
                }
            }

            /// Parses the wire spelling (exact case).
            pub fn parse(text: &str) -> Option<Self> {
                match text {
                    $($text => Some(Self::$variant),)+
                    _ => None,
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

wire_enum! {
    /// A purchase order's status, derived from its rows' `received_date`s.
    PurchaseOrderStatus {
        /// No row received.
        NotReceived = "NOT_RECEIVED",
        /// Some rows received, some not.
        PartiallyReceived = "PARTIALLY_RECEIVED",
        /// Every row received.
        Received = "RECEIVED",
    }
}

wire_enum! {
    /// A manufacturing order's status.
    ManufacturingOrderStatus {
        /// Created, not started.
        NotStarted = "NOT_STARTED",
        /// Held up (set by hand).
        Blocked = "BLOCKED",
        /// Being made.
        InProgress = "IN_PROGRESS",
        /// Finished: output added to stock, recipe consumed. Terminal.
        Done = "DONE",
    }
}

wire_enum! {
    /// A sales order's status, derived from its fulfillments.
    SalesOrderStatus {
        /// Nothing packed or delivered.
        NotShipped = "NOT_SHIPPED",
        /// Some quantity packed, not all, none delivered.
        PartiallyPacked = "PARTIALLY_PACKED",
        /// Every row packed (or delivered), something still only packed.
        Packed = "PACKED",
        /// Some quantity delivered, not all.
        PartiallyDelivered = "PARTIALLY_DELIVERED",
        /// Every row delivered in full.
        Delivered = "DELIVERED",
    }
}

wire_enum! {
    /// A fulfillment's status.
    FulfillmentStatus {
        /// Packed, not yet shipped: stock is not moved.
        Packed = "PACKED",
        /// Delivered: stock at the sales order's location is lowered.
        Delivered = "DELIVERED",
    }
}

/// One line of a purchase order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PurchaseOrderRow {
    /// Row id (7101+). A partial receipt keeps this id for the rest.
    pub id: i64,
    /// Quantity in purchase units; a partial receipt lowers it to the rest.
    #[serde(serialize_with = "number")]
    pub quantity: f64,
    /// The variant bought.
    pub variant_id: i64,
    /// Tax rate, if any.
    pub tax_rate_id: Option<i64>,
    /// Price per purchase unit, in the order's currency.
    #[serde(serialize_with = "number")]
    pub price_per_unit: f64,
    /// Purchase unit, e.g. `"box"`.
    pub purchase_uom: Option<String>,
    /// Stock units per purchase unit (null means 1).
    #[serde(serialize_with = "optional_number")]
    pub purchase_uom_conversion_rate: Option<f64>,
    /// Expected arrival of this row.
    pub arrival_date: Option<String>,
    /// When this row was received; null until it is.
    pub received_date: Option<String>,
    /// The order's currency.
    pub currency: String,
    /// `quantity × price_per_unit`.
    #[serde(serialize_with = "number")]
    pub total: f64,
    /// The order this row belongs to.
    pub purchase_order_id: i64,
    /// Batch assignments; always empty in the sandbox.
    pub batch_transactions: Vec<Value>,
    /// Creation time.
    pub created_at: String,
    /// Last update time.
    pub updated_at: String,
    /// Always null.
    pub deleted_at: Option<String>,
}

/// A purchase order (`GET /purchase_orders/{id}`, `POST /purchase_orders`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PurchaseOrder {
    /// Order id (7001+).
    pub id: i64,
    /// Derived from the rows (see [`PurchaseOrderStatus`]).
    pub status: PurchaseOrderStatus,
    /// Always `NOT_BILLED` in the sandbox.
    pub billing_status: String,
    /// Unique order number, e.g. `"PO-25-001"`.
    pub order_no: String,
    /// `regular` or `outsourced`.
    pub entity_type: String,
    /// The supplier.
    pub supplier_id: i64,
    /// ISO 4217 code (the supplier's unless given).
    pub currency: String,
    /// Expected arrival.
    pub expected_arrival_date: Option<String>,
    /// When the order was placed.
    pub order_created_date: Option<String>,
    /// Free-text note.
    pub additional_info: Option<String>,
    /// Where the goods arrive (stock is added there).
    pub location_id: i64,
    /// For outsourced orders: where the materials are tracked.
    pub tracking_location_id: Option<i64>,
    /// Σ `quantity × price_per_unit` over the rows, before tax.
    #[serde(serialize_with = "number")]
    pub total: f64,
    /// Creation time.
    pub created_at: String,
    /// Last update time.
    pub updated_at: String,
    /// Always null.
    pub deleted_at: Option<String>,
    /// The rows, oldest id first; receipts that split a row append the
    /// received part.
    pub purchase_order_rows: Vec<PurchaseOrderRow>,
}

/// A manufacturing order (`/manufacturing_orders`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManufacturingOrder {
    /// Order id (2001+).
    pub id: i64,
    /// Current status.
    pub status: ManufacturingOrderStatus,
    /// Unique order number, e.g. `"MO-25-001"`.
    pub order_no: String,
    /// The product variant made.
    pub variant_id: i64,
    /// Quantity planned.
    #[serde(serialize_with = "number")]
    pub planned_quantity: f64,
    /// Quantity made; set (to planned, if null) when the order is done.
    #[serde(serialize_with = "optional_number")]
    pub actual_quantity: Option<f64>,
    /// Where it is made (output added and ingredients consumed there).
    pub location_id: i64,
    /// When the order was created.
    pub order_created_date: Option<String>,
    /// When the order was done; null until then.
    pub done_date: Option<String>,
    /// Production deadline.
    pub production_deadline_date: Option<String>,
    /// Free-text note.
    pub additional_info: Option<String>,
    /// Always false: the sandbox does not link orders.
    pub is_linked_to_sales_order: bool,
    /// `PROCESSED` once done; otherwise `IN_STOCK` when the location holds
    /// every ingredient for the planned quantity, else `NOT_AVAILABLE`
    /// (`NO_RECIPE` without a recipe). Computed on every read.
    pub ingredient_availability: String,
    /// Batch assignments; always empty.
    pub batch_transactions: Vec<Value>,
    /// Serial numbers; always empty.
    pub serial_numbers: Vec<Value>,
    /// Creation time.
    pub created_at: String,
    /// Last update time.
    pub updated_at: String,
    /// Always null.
    pub deleted_at: Option<String>,
}

/// One line of a sales order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SalesOrderRow {
    /// Row id (3101+).
    pub id: i64,
    /// Quantity ordered.
    #[serde(serialize_with = "number")]
    pub quantity: f64,
    /// The variant sold.
    pub variant_id: i64,
    /// Tax rate, if any.
    pub tax_rate_id: Option<i64>,
    /// Where it ships from (the order's location).
    pub location_id: i64,
    /// Price per unit, in the order's currency.
    #[serde(serialize_with = "number")]
    pub price_per_unit: f64,
    /// `quantity × price_per_unit`.
    #[serde(serialize_with = "number")]
    pub total: f64,
    /// The order this row belongs to.
    pub sales_order_id: i64,
    /// Creation time.
    pub created_at: String,
    /// Last update time.
    pub updated_at: String,
}

/// A sales order (`GET /sales_orders/{id}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SalesOrder {
    /// Order id (3001+).
    pub id: i64,
    /// The customer.
    pub customer_id: i64,
    /// Order number, e.g. `"SO-25-001"`.
    pub order_no: String,
    /// Sales channel; null for orders entered in Katana.
    pub source: Option<String>,
    /// When the order was placed.
    pub order_created_date: Option<String>,
    /// Promised delivery.
    pub delivery_date: Option<String>,
    /// Where it ships from (stock is lowered there on delivery).
    pub location_id: i64,
    /// Derived from the fulfillments (see [`SalesOrderStatus`]).
    pub status: SalesOrderStatus,
    /// ISO 4217 code.
    pub currency: String,
    /// Σ row totals.
    #[serde(serialize_with = "number")]
    pub total: f64,
    /// Free-text note.
    pub additional_info: Option<String>,
    /// The customer's reference.
    pub customer_ref: Option<String>,
    /// The rows, oldest id first.
    pub sales_order_rows: Vec<SalesOrderRow>,
    /// Creation time.
    pub created_at: String,
    /// Last update time.
    pub updated_at: String,
    /// Always null.
    pub deleted_at: Option<String>,
}

/// One line of a fulfillment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FulfillmentRow {
    /// The sales order row fulfilled.
    pub sales_order_row_id: i64,
    /// Quantity packed or delivered.
    #[serde(serialize_with = "number")]
    pub quantity: f64,
    /// Batch assignments, as sent.
    pub batch_transactions: Vec<Value>,
    /// Serial numbers, as sent.
    pub serial_numbers: Vec<Value>,
}

/// A sales order fulfillment (`POST /sales_order_fulfillments`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SalesOrderFulfillment {
    /// Fulfillment id (seeded 3401, 3402; new ones 3501+).
    pub id: i64,
    /// The sales order.
    pub sales_order_id: i64,
    /// When it was picked.
    pub picked_date: Option<String>,
    /// `PACKED` or `DELIVERED`.
    pub status: FulfillmentStatus,
    /// Currency conversion rate, as sent.
    #[serde(serialize_with = "optional_number")]
    pub conversion_rate: Option<f64>,
    /// Currency conversion date, as sent.
    pub conversion_date: Option<String>,
    /// Carrier tracking number.
    pub tracking_number: Option<String>,
    /// Carrier tracking URL.
    pub tracking_url: Option<String>,
    /// Carrier name.
    pub tracking_carrier: Option<String>,
    /// Shipping method.
    pub tracking_method: Option<String>,
    /// What was packed or delivered.
    pub sales_order_fulfillment_rows: Vec<FulfillmentRow>,
    /// Creation time.
    pub created_at: String,
    /// Last update time.
    pub updated_at: String,
}
