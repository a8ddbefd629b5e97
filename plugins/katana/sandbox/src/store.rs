//! The sandbox's state, and every rule that depends on it.
//!
//! One mutex guards everything (records, stock, id counters), so a request is
//! checked and applied under one lock: a receipt, a completion or a
//! fulfillment is all-or-nothing, and concurrent requests see each other
//! whole.
//!
//! Records are kept in wire shape ([`crate::model`]). Derived fields are
//! recomputed whenever a record changes: row and order totals, a purchase
//! order's status from its rows ([`refresh_purchase_order`]), a sales order's
//! status from its fulfillments ([`refresh_sales_order`]). A manufacturing
//! order's `ingredient_availability` depends on stock, so it is computed on
//! every read.
//!
//! **Architecture Invariant:** handlers check a request's shape (types,
//! required and unknown fields, `quantity > 0`); the store checks what needs
//! the data (unknown ids, duplicate order numbers, locations that do not
//! allow the operation, quantities beyond what is left) and answers those with
//! a 422 whose message is the first problem's.

use std::{
    collections::{BTreeMap, HashMap},
    sync::{Mutex, MutexGuard},
};

use chrono::{DateTime, Utc};
use serde_json::json;

use crate::{
    clock,
    error::{ApiError, Details},
    model::{
        FulfillmentRow, FulfillmentStatus, ItemType, Location, ManufacturingOrder,
        ManufacturingOrderStatus, PurchaseOrder, PurchaseOrderRow, PurchaseOrderStatus, SalesOrder,
        SalesOrderFulfillment, SalesOrderStatus, Supplier, Variant,
    },
    seed,
};

/// Quantities closer than this are equal (receipts of 0.1 + 0.2, ...).
const EPSILON: f64 = 1e-9;

/// Rounds away float noise (`0.1 + 0.2`) so totals and quantities read as
/// people wrote them.
fn tidy(value: f64) -> f64 {
    (value * 1e9).round() / 1e9
}

/// Formats a quantity for a message: `100`, `2.5`.
fn qty(value: f64) -> String {
    let value = tidy(value);
    if value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        value.to_string()
    }
}

/// Recomputes row totals, the order total and the status from the rows.
pub(crate) fn refresh_purchase_order(order: &mut PurchaseOrder) {
    for row in &mut order.purchase_order_rows {
        row.quantity = tidy(row.quantity);
        row.total = tidy(row.quantity * row.price_per_unit);
    }
    order.total = tidy(order.purchase_order_rows.iter().map(|row| row.total).sum());
    let received = order
        .purchase_order_rows
        .iter()
        .filter(|row| row.received_date.is_some())
        .count();
    order.status = if received == 0 {
        PurchaseOrderStatus::NotReceived
    } else if received == order.purchase_order_rows.len() {
        PurchaseOrderStatus::Received
    } else {
        PurchaseOrderStatus::PartiallyReceived
    };
}

/// Quantities of `row_id` in `fulfillments`: `(packed or delivered, delivered)`.
fn fulfilled(row_id: i64, fulfillments: &[SalesOrderFulfillment]) -> (f64, f64) {
    let mut covered = 0.0;
    let mut delivered = 0.0;
    for fulfillment in fulfillments {
        for row in &fulfillment.sales_order_fulfillment_rows {
            if row.sales_order_row_id == row_id {
                covered += row.quantity;
                if fulfillment.status == FulfillmentStatus::Delivered {
                    delivered += row.quantity;
                }
            }
        }
    }
    (covered, delivered)
}

/// Recomputes row totals, the order total and the status from the order's
/// fulfillments: every row delivered in full is DELIVERED; some quantity
/// delivered is PARTIALLY_DELIVERED; otherwise every row packed in full is
/// PACKED, some quantity packed PARTIALLY_PACKED, nothing NOT_SHIPPED.
pub(crate) fn refresh_sales_order(order: &mut SalesOrder, fulfillments: &[SalesOrderFulfillment]) {
    for row in &mut order.sales_order_rows {
        row.total = tidy(row.quantity * row.price_per_unit);
    }
    order.total = tidy(order.sales_order_rows.iter().map(|row| row.total).sum());
    let mine: Vec<SalesOrderFulfillment> = fulfillments
        .iter()
        .filter(|fulfillment| fulfillment.sales_order_id == order.id)
        .cloned()
        .collect();
    let progress: Vec<(f64, f64, f64)> = order
        .sales_order_rows
        .iter()
        .map(|row| {
            let (covered, delivered) = fulfilled(row.id, &mine);
            (row.quantity, covered, delivered)
        })
        .collect();
    let all =
        |pick: fn(&(f64, f64, f64)) -> bool| !progress.is_empty() && progress.iter().all(pick);
    let any = |pick: fn(&(f64, f64, f64)) -> bool| progress.iter().any(pick);
    order.status = if all(|&(quantity, _, delivered)| delivered >= quantity - EPSILON) {
        SalesOrderStatus::Delivered
    } else if any(|&(_, _, delivered)| delivered > EPSILON) {
        SalesOrderStatus::PartiallyDelivered
    } else if all(|&(quantity, covered, _)| covered >= quantity - EPSILON) {
        SalesOrderStatus::Packed
    } else if any(|&(_, covered, _)| covered > EPSILON) {
        SalesOrderStatus::PartiallyPacked
    } else {
        SalesOrderStatus::NotShipped
    };
}

/// What an operation needs a location to allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Allowance {
    /// Receiving purchases.
    Purchases,
    /// Running manufacturing orders.
    Manufacturing,
}

/// `GET /variants` filters.
#[derive(Debug, Clone, Default)]
pub(crate) struct VariantFilter {
    /// Only these ids (when not empty).
    pub ids: Vec<i64>,
    /// Only these exact SKUs (when not empty).
    pub skus: Vec<String>,
    /// Add `product_or_material`.
    pub extend_product_or_material: bool,
}

/// What the order lists filter on.
#[derive(Debug, Clone, Default)]
pub(crate) struct OrderFilter {
    /// Only these ids (when not empty).
    pub ids: Vec<i64>,
    /// Only these exact order numbers (when not empty).
    pub order_nos: Vec<String>,
}

impl OrderFilter {
    /// Whether an order with `id` and `order_no` passes.
    fn admits(&self, id: i64, order_no: &str) -> bool {
        (self.ids.is_empty() || self.ids.contains(&id))
            && (self.order_nos.is_empty() || self.order_nos.iter().any(|n| n == order_no))
    }
}

/// A validated `POST /purchase_orders` body.
#[derive(Debug, Clone)]
pub(crate) struct NewPurchaseOrder {
    /// Unique order number.
    pub order_no: String,
    /// The supplier.
    pub supplier_id: i64,
    /// Where goods arrive.
    pub location_id: i64,
    /// `regular` (default) or `outsourced`.
    pub entity_type: String,
    /// Currency; the supplier's when `None`.
    pub currency: Option<String>,
    /// Expected arrival.
    pub expected_arrival_date: Option<DateTime<Utc>>,
    /// When placed; now when `None`.
    pub order_created_date: Option<DateTime<Utc>>,
    /// Outsourced orders only.
    pub tracking_location_id: Option<i64>,
    /// Free text.
    pub additional_info: Option<String>,
    /// At least one row.
    pub rows: Vec<NewPurchaseOrderRow>,
}

/// One validated purchase order row.
#[derive(Debug, Clone)]
pub(crate) struct NewPurchaseOrderRow {
    /// The variant.
    pub variant_id: i64,
    /// Positive quantity.
    pub quantity: f64,
    /// Non-negative price.
    pub price_per_unit: f64,
    /// Tax rate.
    pub tax_rate_id: Option<i64>,
    /// Purchase unit.
    pub purchase_uom: Option<String>,
    /// Stock units per purchase unit.
    pub purchase_uom_conversion_rate: Option<f64>,
    /// Expected arrival.
    pub arrival_date: Option<DateTime<Utc>>,
}

/// One validated receipt line of `POST /purchase_order_receive`.
#[derive(Debug, Clone)]
pub(crate) struct Receipt {
    /// Path prefix for details: `[0]` in an array body, empty for one object.
    pub path: String,
    /// The row received.
    pub row_id: i64,
    /// Positive quantity received.
    pub quantity: f64,
    /// When; now when `None`.
    pub received_date: Option<DateTime<Utc>>,
}

/// A validated `POST /manufacturing_orders` body.
#[derive(Debug, Clone)]
pub(crate) struct NewManufacturingOrder {
    /// Unique order number.
    pub order_no: String,
    /// The product variant to make.
    pub variant_id: i64,
    /// Where.
    pub location_id: i64,
    /// Positive quantity.
    pub planned_quantity: f64,
    /// Quantity already made, if known.
    pub actual_quantity: Option<f64>,
    /// When created; now when `None`.
    pub order_created_date: Option<DateTime<Utc>>,
    /// Deadline.
    pub production_deadline_date: Option<DateTime<Utc>>,
    /// Free text.
    pub additional_info: Option<String>,
}

/// A validated `PATCH /manufacturing_orders/{id}` body: `None` leaves a
/// field unchanged.
#[derive(Debug, Clone, Default)]
pub(crate) struct ManufacturingOrderPatch {
    /// New status.
    pub status: Option<ManufacturingOrderStatus>,
    /// New order number.
    pub order_no: Option<String>,
    /// New variant.
    pub variant_id: Option<i64>,
    /// New location.
    pub location_id: Option<i64>,
    /// New planned quantity.
    pub planned_quantity: Option<f64>,
    /// New actual quantity.
    pub actual_quantity: Option<f64>,
    /// New creation date.
    pub order_created_date: Option<DateTime<Utc>>,
    /// New deadline.
    pub production_deadline_date: Option<DateTime<Utc>>,
    /// New note.
    pub additional_info: Option<String>,
    /// Completion time to use when the order becomes DONE.
    pub done_date: Option<DateTime<Utc>>,
    /// Every field present in the body, for the DONE rule.
    pub present: Vec<String>,
}

/// Fields Katana documents as "Not updatable when manufacturing order status
/// is DONE".
const FROZEN_WHEN_DONE: &[&str] = &[
    "order_no",
    "variant_id",
    "location_id",
    "planned_quantity",
    "actual_quantity",
    "production_deadline_date",
    "batch_transactions",
];

/// A validated `POST /sales_order_fulfillments` body.
#[derive(Debug, Clone)]
pub(crate) struct NewFulfillment {
    /// The sales order.
    pub sales_order_id: i64,
    /// PACKED or DELIVERED.
    pub status: FulfillmentStatus,
    /// At least one row.
    pub rows: Vec<FulfillmentRow>,
    /// When picked.
    pub picked_date: Option<DateTime<Utc>>,
    /// Conversion rate.
    pub conversion_rate: Option<f64>,
    /// Conversion date.
    pub conversion_date: Option<DateTime<Utc>>,
    /// Tracking number.
    pub tracking_number: Option<String>,
    /// Tracking URL.
    pub tracking_url: Option<String>,
    /// Carrier.
    pub tracking_carrier: Option<String>,
    /// Shipping method.
    pub tracking_method: Option<String>,
}

/// The next id of each kind of record the API creates.
#[derive(Debug, Clone)]
struct NextIds {
    purchase_order: i64,
    purchase_order_row: i64,
    manufacturing_order: i64,
    fulfillment: i64,
}

/// Everything the sandbox knows.
#[derive(Debug)]
pub(crate) struct State {
    locations: BTreeMap<i64, Location>,
    suppliers: BTreeMap<i64, Supplier>,
    /// Variants with `product_or_material` filled in.
    variants: BTreeMap<i64, Variant>,
    purchase_orders: BTreeMap<i64, PurchaseOrder>,
    manufacturing_orders: BTreeMap<i64, ManufacturingOrder>,
    sales_orders: BTreeMap<i64, SalesOrder>,
    fulfillments: BTreeMap<i64, SalesOrderFulfillment>,
    /// Quantity in stock per `(variant id, location id)`; absent is 0.
    stock: BTreeMap<(i64, i64), f64>,
    next: NextIds,
}

/// The state behind one lock.
#[derive(Debug)]
pub(crate) struct Store {
    state: Mutex<State>,
}

impl Store {
    /// A store holding the seed.
    pub fn seeded() -> Self {
        let state = State {
            locations: seed::locations().into_iter().map(|l| (l.id, l)).collect(),
            suppliers: seed::suppliers().into_iter().map(|s| (s.id, s)).collect(),
            variants: seed::variants().into_iter().map(|v| (v.id, v)).collect(),
            purchase_orders: seed::purchase_orders()
                .into_iter()
                .map(|o| (o.id, o))
                .collect(),
            manufacturing_orders: seed::manufacturing_orders()
                .into_iter()
                .map(|o| (o.id, o))
                .collect(),
            sales_orders: seed::sales_orders()
                .into_iter()
                .map(|o| (o.id, o))
                .collect(),
            fulfillments: seed::fulfillments()
                .into_iter()
                .map(|f| (f.id, f))
                .collect(),
            stock: seed::stock(),
            next: NextIds {
                purchase_order: seed::NEXT_PURCHASE_ORDER_ID,
                purchase_order_row: seed::NEXT_PURCHASE_ORDER_ROW_ID,
                manufacturing_order: seed::NEXT_MANUFACTURING_ORDER_ID,
                fulfillment: seed::NEXT_FULFILLMENT_ID,
            },
        };
        Self {
            state: Mutex::new(state),
        }
    }

    /// Locks the state for one request.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl State {
    /// Matching variants, newest (highest id) first.
    pub fn variants(&self, filter: &VariantFilter) -> Vec<Variant> {
        self.variants
            .values()
            .rev()
            .filter(|variant| filter.ids.is_empty() || filter.ids.contains(&variant.id))
            .filter(|variant| filter.skus.is_empty() || filter.skus.contains(&variant.sku))
            .map(|variant| {
                let mut variant = variant.clone();
                if !filter.extend_product_or_material {
                    variant.product_or_material = None;
                }
                variant
            })
            .collect()
    }

    /// The variant with `id`, with `product_or_material`.
    pub fn variant(&self, id: i64) -> Option<Variant> {
        self.variants.get(&id).cloned()
    }

    /// Suppliers (only `ids` when not empty), newest first.
    pub fn suppliers(&self, ids: &[i64]) -> Vec<Supplier> {
        self.suppliers
            .values()
            .rev()
            .filter(|supplier| ids.is_empty() || ids.contains(&supplier.id))
            .cloned()
            .collect()
    }

    /// Locations (only `ids` when not empty), newest first.
    pub fn locations(&self, ids: &[i64]) -> Vec<Location> {
        self.locations
            .values()
            .rev()
            .filter(|location| ids.is_empty() || ids.contains(&location.id))
            .cloned()
            .collect()
    }

    /// Stock of `variant_id` at `location_id`.
    pub fn stock(&self, variant_id: i64, location_id: i64) -> f64 {
        self.stock
            .get(&(variant_id, location_id))
            .copied()
            .unwrap_or(0.0)
    }

    /// Every recorded stock level.
    pub fn stock_levels(&self) -> BTreeMap<(i64, i64), f64> {
        self.stock.clone()
    }

    /// Adds `delta` (negative to remove) to a stock level; services keep no stock.
    fn move_stock(&mut self, variant_id: i64, location_id: i64, delta: f64) {
        let is_service = self
            .variants
            .get(&variant_id)
            .is_some_and(|variant| variant.item_type == ItemType::Service);
        if is_service {
            return;
        }
        let level = self.stock.entry((variant_id, location_id)).or_insert(0.0);
        *level = tidy(*level + delta);
    }

    /// Checks that location `id` exists and allows `need`.
    fn check_location(&self, id: i64, path: &str, need: Allowance, details: &mut Details) {
        let Some(location) = self.locations.get(&id) else {
            details.add(path, "notFound", format!("Location {id} not found."));
            return;
        };
        let (allowed, what) = match need {
            Allowance::Purchases => (location.purchases_allowed, "purchases"),
            Allowance::Manufacturing => (location.manufacturing_allowed, "manufacturing"),
        };
        if !allowed {
            details.add_info(
                path,
                "notAllowed",
                format!("Location {id} ({}) does not allow {what}.", location.name),
                json!({"location_id": id}),
            );
        }
    }

    /// Checks that variant `id` exists; with `product_only`, that it is a product.
    fn check_variant(&self, id: i64, path: &str, product_only: bool, details: &mut Details) {
        match self.variants.get(&id) {
            None => details.add(path, "notFound", format!("Variant {id} not found.")),
            Some(variant) if product_only && variant.item_type != ItemType::Product => {
                details.add(
                    path,
                    "notProducible",
                    format!(
                        "Variant {id} ({}) is a {}; only product variants can be manufactured.",
                        variant.sku,
                        variant.item_type.as_str()
                    ),
                );
            }
            Some(_) => {}
        }
    }

    /// The purchase order with `id`.
    pub fn purchase_order(&self, id: i64) -> Option<PurchaseOrder> {
        self.purchase_orders.get(&id).cloned()
    }

    /// Matching purchase orders, newest first.
    pub fn list_purchase_orders(&self, filter: &OrderFilter) -> Vec<PurchaseOrder> {
        self.purchase_orders
            .values()
            .rev()
            .filter(|order| filter.admits(order.id, &order.order_no))
            .cloned()
            .collect()
    }

    /// Every purchase order, oldest first.
    pub fn purchase_orders(&self) -> Vec<PurchaseOrder> {
        self.purchase_orders.values().cloned().collect()
    }

    /// Creates a purchase order, NOT_RECEIVED.
    pub fn create_purchase_order(
        &mut self,
        new: NewPurchaseOrder,
    ) -> Result<PurchaseOrder, ApiError> {
        let mut details = Details::default();
        if self
            .purchase_orders
            .values()
            .any(|order| order.order_no == new.order_no)
        {
            details.add(
                ".order_no",
                "unique",
                format!("Purchase order number {} already exists.", new.order_no),
            );
        }
        let supplier = self.suppliers.get(&new.supplier_id);
        if supplier.is_none() {
            details.add(
                ".supplier_id",
                "notFound",
                format!("Supplier {} not found.", new.supplier_id),
            );
        }
        self.check_location(
            new.location_id,
            ".location_id",
            Allowance::Purchases,
            &mut details,
        );
        if let Some(tracking) = new.tracking_location_id {
            if new.entity_type != "outsourced" {
                details.add(
                    ".tracking_location_id",
                    "notAllowed",
                    "tracking_location_id is submittable only when entity_type is outsourced.",
                );
            } else if !self.locations.contains_key(&tracking) {
                details.add(
                    ".tracking_location_id",
                    "notFound",
                    format!("Location {tracking} not found."),
                );
            }
        }
        for (index, row) in new.rows.iter().enumerate() {
            self.check_variant(
                row.variant_id,
                &format!(".purchase_order_rows[{index}].variant_id"),
                false,
                &mut details,
            );
        }
        details.finish_conflict()?;

        let currency = new
            .currency
            .or_else(|| supplier.map(|supplier| supplier.currency.clone()))
            .unwrap_or_else(|| "USD".to_owned());
        let now = clock::format(clock::now());
        let id = self.next.purchase_order;
        self.next.purchase_order += 1;
        let mut rows = Vec::with_capacity(new.rows.len());
        for row in new.rows {
            rows.push(PurchaseOrderRow {
                id: self.next.purchase_order_row,
                quantity: row.quantity,
                variant_id: row.variant_id,
                tax_rate_id: row.tax_rate_id,
                price_per_unit: row.price_per_unit,
                purchase_uom: row.purchase_uom,
                purchase_uom_conversion_rate: row.purchase_uom_conversion_rate,
                arrival_date: row.arrival_date.map(clock::format),
                received_date: None,
                currency: currency.clone(),
                total: 0.0,
                purchase_order_id: id,
                batch_transactions: Vec::new(),
                created_at: now.clone(),
                updated_at: now.clone(),
                deleted_at: None,
            });
            self.next.purchase_order_row += 1;
        }
        let mut order = PurchaseOrder {
            id,
            status: PurchaseOrderStatus::NotReceived,
            billing_status: "NOT_BILLED".to_owned(),
            order_no: new.order_no,
            entity_type: new.entity_type,
            supplier_id: new.supplier_id,
            currency,
            expected_arrival_date: new.expected_arrival_date.map(clock::format),
            order_created_date: Some(
                new.order_created_date
                    .map_or_else(|| now.clone(), clock::format),
            ),
            additional_info: new.additional_info,
            location_id: new.location_id,
            tracking_location_id: new.tracking_location_id,
            total: 0.0,
            created_at: now.clone(),
            updated_at: now,
            deleted_at: None,
            purchase_order_rows: rows,
        };
        refresh_purchase_order(&mut order);
        self.purchase_orders.insert(id, order.clone());
        Ok(order)
    }

    /// Finds the order holding purchase order row `row_id`.
    fn order_of_row(&self, row_id: i64) -> Option<i64> {
        self.purchase_orders
            .values()
            .find(|order| order.purchase_order_rows.iter().any(|row| row.id == row_id))
            .map(|order| order.id)
    }

    /// Receives purchase order rows, all or nothing (see the crate docs).
    pub fn receive(&mut self, receipts: Vec<Receipt>) -> Result<(), ApiError> {
        let mut details = Details::default();
        let mut asked: HashMap<i64, f64> = HashMap::new();
        for receipt in &receipts {
            let row_path = format!("{}.purchase_order_row_id", receipt.path);
            let row = self.order_of_row(receipt.row_id).and_then(|order_id| {
                self.purchase_orders[&order_id]
                    .purchase_order_rows
                    .iter()
                    .find(|row| row.id == receipt.row_id)
            });
            let Some(row) = row else {
                details.add(
                    &row_path,
                    "notFound",
                    format!("Purchase order row {} not found.", receipt.row_id),
                );
                continue;
            };
            if row.received_date.is_some() {
                details.add(
                    &row_path,
                    "alreadyReceived",
                    format!("Purchase order row {} is already received.", receipt.row_id),
                );
                continue;
            }
            let total = asked.entry(receipt.row_id).or_insert(0.0);
            *total += receipt.quantity;
            if *total > row.quantity + EPSILON {
                details.add_info(
                    &format!("{}.quantity", receipt.path),
                    "maximum",
                    format!(
                        "Cannot receive {} of purchase order row {}: only {} is not yet received.",
                        qty(*total),
                        receipt.row_id,
                        qty(row.quantity)
                    ),
                    json!({"comparison": "<=", "limit": row.quantity}),
                );
            }
        }
        details.finish_conflict()?;

        let now = clock::now();
        for receipt in receipts {
            let Some(order_id) = self.order_of_row(receipt.row_id) else {
                continue;
            };
            let when = clock::format(receipt.received_date.unwrap_or(now));
            let stamp = clock::format(now);
            let next_row_id = self.next.purchase_order_row;
            let order = self
                .purchase_orders
                .get_mut(&order_id)
                .expect("the order of a found row exists");
            let location_id = order.location_id;
            let Some(index) = order
                .purchase_order_rows
                .iter()
                .position(|row| row.id == receipt.row_id)
            else {
                continue;
            };
            let row = &mut order.purchase_order_rows[index];
            let variant_id = row.variant_id;
            let rate = row.purchase_uom_conversion_rate.unwrap_or(1.0);
            row.updated_at = stamp.clone();
            if (row.quantity - receipt.quantity).abs() <= EPSILON {
                row.received_date = Some(when);
            } else {
                row.quantity -= receipt.quantity;
                let mut received = row.clone();
                received.id = next_row_id;
                received.quantity = receipt.quantity;
                received.received_date = Some(when);
                received.created_at = stamp.clone();
                order.purchase_order_rows.push(received);
                self.next.purchase_order_row += 1;
            }
            order.updated_at = stamp;
            refresh_purchase_order(order);
            self.move_stock(variant_id, location_id, receipt.quantity * rate);
        }
        Ok(())
    }

    /// `order` as the API shows it, with `ingredient_availability` computed.
    fn render_manufacturing_order(&self, order: &ManufacturingOrder) -> ManufacturingOrder {
        let mut order = order.clone();
        let recipe = seed::recipe(order.variant_id);
        order.ingredient_availability = if order.status == ManufacturingOrderStatus::Done {
            "PROCESSED"
        } else if recipe.is_empty() {
            "NO_RECIPE"
        } else if recipe.iter().all(|&(ingredient, per_unit)| {
            self.stock(ingredient, order.location_id) + EPSILON >= per_unit * order.planned_quantity
        }) {
            "IN_STOCK"
        } else {
            "NOT_AVAILABLE"
        }
        .to_owned();
        order
    }

    /// The manufacturing order with `id`.
    pub fn manufacturing_order(&self, id: i64) -> Option<ManufacturingOrder> {
        self.manufacturing_orders
            .get(&id)
            .map(|order| self.render_manufacturing_order(order))
    }

    /// Matching manufacturing orders, newest first.
    pub fn list_manufacturing_orders(&self, filter: &OrderFilter) -> Vec<ManufacturingOrder> {
        self.manufacturing_orders
            .values()
            .rev()
            .filter(|order| filter.admits(order.id, &order.order_no))
            .map(|order| self.render_manufacturing_order(order))
            .collect()
    }

    /// Every manufacturing order, oldest first.
    pub fn manufacturing_orders(&self) -> Vec<ManufacturingOrder> {
        self.manufacturing_orders
            .values()
            .map(|order| self.render_manufacturing_order(order))
            .collect()
    }

    /// Checks a manufacturing order number is not used by another order.
    fn check_mo_number(&self, order_no: &str, except: Option<i64>, details: &mut Details) {
        if self
            .manufacturing_orders
            .values()
            .any(|order| order.order_no == order_no && Some(order.id) != except)
        {
            details.add(
                ".order_no",
                "unique",
                format!("Manufacturing order number {order_no} already exists."),
            );
        }
    }

    /// Creates a manufacturing order, NOT_STARTED.
    pub fn create_manufacturing_order(
        &mut self,
        new: NewManufacturingOrder,
    ) -> Result<ManufacturingOrder, ApiError> {
        let mut details = Details::default();
        self.check_mo_number(&new.order_no, None, &mut details);
        self.check_variant(new.variant_id, ".variant_id", true, &mut details);
        self.check_location(
            new.location_id,
            ".location_id",
            Allowance::Manufacturing,
            &mut details,
        );
        details.finish_conflict()?;

        let now = clock::format(clock::now());
        let id = self.next.manufacturing_order;
        self.next.manufacturing_order += 1;
        let order = ManufacturingOrder {
            id,
            status: ManufacturingOrderStatus::NotStarted,
            order_no: new.order_no,
            variant_id: new.variant_id,
            planned_quantity: new.planned_quantity,
            actual_quantity: new.actual_quantity,
            location_id: new.location_id,
            order_created_date: Some(
                new.order_created_date
                    .map_or_else(|| now.clone(), clock::format),
            ),
            done_date: None,
            production_deadline_date: new.production_deadline_date.map(clock::format),
            additional_info: new.additional_info,
            is_linked_to_sales_order: false,
            ingredient_availability: String::new(),
            batch_transactions: Vec::new(),
            serial_numbers: Vec::new(),
            created_at: now.clone(),
            updated_at: now,
            deleted_at: None,
        };
        self.manufacturing_orders.insert(id, order.clone());
        Ok(self.render_manufacturing_order(&order))
    }

    /// Updates a manufacturing order; DONE adds the output to stock and
    /// consumes the recipe (see the crate docs).
    pub fn update_manufacturing_order(
        &mut self,
        id: i64,
        patch: ManufacturingOrderPatch,
    ) -> Result<ManufacturingOrder, ApiError> {
        let current = self
            .manufacturing_orders
            .get(&id)
            .cloned()
            .ok_or(ApiError::NotFound)?;
        let mut details = Details::default();
        if current.status == ManufacturingOrderStatus::Done {
            for field in &patch.present {
                if FROZEN_WHEN_DONE.contains(&field.as_str()) {
                    details.add(
                        &format!(".{field}"),
                        "notUpdatable",
                        format!(
                            "{field} is not updatable when manufacturing order status is DONE."
                        ),
                    );
                }
            }
            if let Some(status) = patch.status
                && status != ManufacturingOrderStatus::Done
            {
                details.add_info(
                    ".status",
                    "invalidTransition",
                    format!(
                        "Manufacturing order {} is DONE; its status cannot change to {status}.",
                        current.order_no
                    ),
                    json!({"from": "DONE", "to": status.as_str()}),
                );
            }
        } else {
            if let Some(order_no) = &patch.order_no {
                self.check_mo_number(order_no, Some(id), &mut details);
            }
            if let Some(variant_id) = patch.variant_id {
                self.check_variant(variant_id, ".variant_id", true, &mut details);
            }
            if let Some(location_id) = patch.location_id {
                self.check_location(
                    location_id,
                    ".location_id",
                    Allowance::Manufacturing,
                    &mut details,
                );
            }
        }
        details.finish_conflict()?;

        let now = clock::now();
        let mut order = current;
        let completing = order.status != ManufacturingOrderStatus::Done
            && patch.status == Some(ManufacturingOrderStatus::Done);
        if let Some(order_no) = patch.order_no {
            order.order_no = order_no;
        }
        if let Some(variant_id) = patch.variant_id {
            order.variant_id = variant_id;
        }
        if let Some(location_id) = patch.location_id {
            order.location_id = location_id;
        }
        if let Some(planned) = patch.planned_quantity {
            order.planned_quantity = planned;
        }
        if let Some(actual) = patch.actual_quantity {
            order.actual_quantity = Some(actual);
        }
        if let Some(created) = patch.order_created_date {
            order.order_created_date = Some(clock::format(created));
        }
        if let Some(deadline) = patch.production_deadline_date {
            order.production_deadline_date = Some(clock::format(deadline));
        }
        if let Some(info) = patch.additional_info {
            order.additional_info = Some(info);
        }
        if let Some(status) = patch.status {
            order.status = status;
        }
        if completing {
            let made = order.actual_quantity.unwrap_or(order.planned_quantity);
            order.actual_quantity = Some(made);
            order.done_date = Some(clock::format(patch.done_date.unwrap_or(now)));
            self.move_stock(order.variant_id, order.location_id, made);
            for &(ingredient, per_unit) in seed::recipe(order.variant_id) {
                self.move_stock(ingredient, order.location_id, -per_unit * made);
            }
        } else if let Some(done) = patch.done_date
            && order.status == ManufacturingOrderStatus::Done
        {
            order.done_date = Some(clock::format(done));
        }
        order.updated_at = clock::format(now);
        self.manufacturing_orders.insert(id, order.clone());
        Ok(self.render_manufacturing_order(&order))
    }

    /// The sales order with `id`.
    pub fn sales_order(&self, id: i64) -> Option<SalesOrder> {
        self.sales_orders.get(&id).cloned()
    }

    /// Matching sales orders, newest first.
    pub fn list_sales_orders(&self, filter: &OrderFilter) -> Vec<SalesOrder> {
        self.sales_orders
            .values()
            .rev()
            .filter(|order| filter.admits(order.id, &order.order_no))
            .cloned()
            .collect()
    }

    /// Every sales order, oldest first.
    pub fn sales_orders(&self) -> Vec<SalesOrder> {
        self.sales_orders.values().cloned().collect()
    }

    /// Every fulfillment, oldest first.
    pub fn fulfillments(&self) -> Vec<SalesOrderFulfillment> {
        self.fulfillments.values().cloned().collect()
    }

    /// Records a fulfillment; DELIVERED lowers stock at the order's location.
    pub fn create_fulfillment(
        &mut self,
        new: NewFulfillment,
    ) -> Result<SalesOrderFulfillment, ApiError> {
        let Some(order) = self.sales_orders.get(&new.sales_order_id) else {
            return Err(ApiError::conflict(
                ".sales_order_id",
                "notFound",
                format!("Sales order {} not found.", new.sales_order_id),
            ));
        };
        let mut details = Details::default();
        let existing: Vec<SalesOrderFulfillment> = self.fulfillments.values().cloned().collect();
        let mut asked: HashMap<i64, f64> = HashMap::new();
        for (index, wanted) in new.rows.iter().enumerate() {
            let path = format!(".sales_order_fulfillment_rows[{index}]");
            let Some(row) = order
                .sales_order_rows
                .iter()
                .find(|row| row.id == wanted.sales_order_row_id)
            else {
                details.add(
                    &format!("{path}.sales_order_row_id"),
                    "notFound",
                    format!(
                        "Sales order row {} is not a row of sales order {}.",
                        wanted.sales_order_row_id, order.id
                    ),
                );
                continue;
            };
            let (covered, _) = fulfilled(row.id, &existing);
            let left = (row.quantity - covered).max(0.0);
            let total = asked.entry(row.id).or_insert(0.0);
            *total += wanted.quantity;
            if *total > left + EPSILON {
                details.add_info(
                    &format!("{path}.quantity"),
                    "maximum",
                    format!(
                        "Cannot fulfil {} of sales order row {}: only {} is left.",
                        qty(*total),
                        row.id,
                        qty(left)
                    ),
                    json!({"comparison": "<=", "limit": left}),
                );
            }
        }
        details.finish_conflict()?;

        let location_id = order.location_id;
        let moves: Vec<(i64, f64)> = new
            .rows
            .iter()
            .filter_map(|wanted| {
                order
                    .sales_order_rows
                    .iter()
                    .find(|row| row.id == wanted.sales_order_row_id)
                    .map(|row| (row.variant_id, wanted.quantity))
            })
            .collect();
        let now = clock::format(clock::now());
        let id = self.next.fulfillment;
        self.next.fulfillment += 1;
        let fulfillment = SalesOrderFulfillment {
            id,
            sales_order_id: new.sales_order_id,
            picked_date: new.picked_date.map(clock::format),
            status: new.status,
            conversion_rate: new.conversion_rate,
            conversion_date: new.conversion_date.map(clock::format),
            tracking_number: new.tracking_number,
            tracking_url: new.tracking_url,
            tracking_carrier: new.tracking_carrier,
            tracking_method: new.tracking_method,
            sales_order_fulfillment_rows: new.rows,
            created_at: now.clone(),
            updated_at: now.clone(),
        };
        self.fulfillments.insert(id, fulfillment.clone());
        if new.status == FulfillmentStatus::Delivered {
            for (variant_id, quantity) in moves {
                self.move_stock(variant_id, location_id, -quantity);
            }
        }
        let all: Vec<SalesOrderFulfillment> = self.fulfillments.values().cloned().collect();
        if let Some(order) = self.sales_orders.get_mut(&new.sales_order_id) {
            refresh_sales_order(order, &all);
            order.updated_at = now;
        }
        Ok(fulfillment)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tidy_scrubs_float_noise() {
        assert_eq!(tidy(0.1 + 0.2), 0.3);
        assert_eq!(qty(100.0), "100");
        assert_eq!(qty(2.5), "2.5");
    }

    #[test]
    fn sales_order_status_follows_fulfillments() {
        let mut order = seed::sales_orders()
            .into_iter()
            .find(|order| order.id == seed::SO_NOT_SHIPPED_MIXED)
            .unwrap();
        let fulfillment = |status, rows: &[(i64, f64)]| SalesOrderFulfillment {
            sales_order_fulfillment_rows: rows
                .iter()
                .map(|&(row, quantity)| FulfillmentRow {
                    sales_order_row_id: row,
                    quantity,
                    batch_transactions: Vec::new(),
                    serial_numbers: Vec::new(),
                })
                .collect(),
            status,
            sales_order_id: order.id,
            ..seed::fulfillments()[0].clone()
        };
        let cases = [
            (vec![], SalesOrderStatus::NotShipped),
            (
                vec![fulfillment(FulfillmentStatus::Packed, &[(3102, 1.0)])],
                SalesOrderStatus::PartiallyPacked,
            ),
            (
                vec![fulfillment(
                    FulfillmentStatus::Packed,
                    &[(3102, 3.0), (3103, 1.0), (3104, 1.0)],
                )],
                SalesOrderStatus::Packed,
            ),
            (
                vec![fulfillment(FulfillmentStatus::Delivered, &[(3103, 1.0)])],
                SalesOrderStatus::PartiallyDelivered,
            ),
            (
                vec![
                    fulfillment(FulfillmentStatus::Delivered, &[(3102, 3.0), (3103, 1.0)]),
                    fulfillment(FulfillmentStatus::Delivered, &[(3104, 1.0)]),
                ],
                SalesOrderStatus::Delivered,
            ),
        ];
        for (fulfillments, expected) in cases {
            refresh_sales_order(&mut order, &fulfillments);
            assert_eq!(order.status, expected, "{fulfillments:?}");
        }
    }
}
