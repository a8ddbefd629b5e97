//! The deterministic seed: a small knife workshop.
//!
//! Every sandbox starts from exactly this data, so tests may rely on it. Use
//! the constants rather than bare numbers, and the helpers
//! ([`purchase_order_in_status`], [`variant_by_sku`], [`initial_stock`], ...)
//! where a property is what matters. Each entity has its own id range, so an
//! id alone says what it is. Seeded times count from [`BASE_TIMESTAMP`].
//!
//! # Locations and suppliers
//!
//! | id | location | sales | manufacturing | purchases |
//! |---|---|---|---|---|
//! | 1 [`LOCATION_MAIN`] | Main (primary) | yes | yes | yes |
//! | 2 [`LOCATION_WORKSHOP`] | Workshop | no | yes | no |
//! | 3 [`LOCATION_RETAIL`] | Retail | yes | no | no |
//!
//! | id | supplier | currency |
//! |---|---|---|
//! | 4001 [`SUPPLIER_USD`] | Sheffield Steel Supply | USD |
//! | 4002 [`SUPPLIER_EUR`] | Schwarzwald Holz GmbH | EUR |
//!
//! # Variants (120, so 3 pages at the default limit of 50)
//!
//! | id | SKU | type | item (`product_or_material.name`) | config | price |
//! |---|---|---|---|---|---|
//! | 5001 [`KNIFE_BLACK`] | `KNF-8IN-BLK` | product | Chef's Knife (1001) | Size 8-inch, Handle Black | sells 89 |
//! | 5002 [`KNIFE_WALNUT`] | `KNF-8IN-WAL` | product | Chef's Knife (1001) | Size 8-inch, Handle Walnut | sells 99 |
//! | 5101 [`STEEL_BLANK`] | `STL-BLANK-8` | material | Steel Blank 8-inch (1101) | | buys 2.5 |
//! | 5102 [`WALNUT_SCALE`] | `WAL-SCALE` | material | Walnut Scale (1102) | | buys 1.2 |
//! | 5103 [`BRASS_RIVET`] | `RIV-BRASS-3MM` | material | Brass Rivet 3mm (1103) | | buys 0.05 |
//! | 5201 [`SHARPENING`] | `SVC-SHARPEN` | service | Knife Sharpening (1201) | | sells 15 |
//! | 5301..=5414 | `FLR-001`..`FLR-114` | odd n product, even n material | `Filler Product 001`, `Filler Material 002`, ... | | |
//!
//! Filler `n` (1..=114) has id `5300 + n` and item id `1300 + n`; no filler
//! SKU or name shares a word with the named items, so searches for knives,
//! steel, walnut, brass, rivets or sharpening only find the six above.
//! Lists are newest first (highest id first): page 1 holds fillers 114..=65,
//! page 2 fillers 64..=15, page 3 fillers 14..=1 then 5201, 5103, 5102, 5101,
//! 5002, 5001.
//!
//! Recipe ([`recipe`]): each Chef's Knife (5001 and 5002) takes 1
//! `STL-BLANK-8`, 2 `WAL-SCALE` and 3 `RIV-BRASS-3MM` per unit.
//!
//! # Stock ([`INITIAL_STOCK`]; anything not listed is 0)
//!
//! | SKU | 1 Main | 2 Workshop | 3 Retail |
//! |---|---|---|---|
//! | `KNF-8IN-BLK` | 40 | 0 | 12 |
//! | `KNF-8IN-WAL` | 25 | 0 | 8 |
//! | `STL-BLANK-8` | 500 | 100 | 0 |
//! | `WAL-SCALE` | 800 | 200 | 0 |
//! | `RIV-BRASS-3MM` | 5000 | 1000 | 0 |
//!
//! Services keep no stock and are never moved.
//!
//! # Purchase orders (all at location 1; next order 7005, next row 7109)
//!
//! | id | order_no | supplier | status | rows: id variant qty × price (received) | total |
//! |---|---|---|---|---|---|
//! | 7001 | PO-25-001 | 4001 USD | NOT_RECEIVED | 7101 5101 200 × 2.5; 7102 5103 1000 × 0.05 | 550 |
//! | 7002 | PO-25-002 | 4002 EUR | NOT_RECEIVED | 7103 5102 300 × 1.2; 7104 5102 100 × 1.2 (one variant on two rows) | 480 |
//! | 7003 | PO-25-003 | 4001 USD | PARTIALLY_RECEIVED | 7105 5101 100 × 2.5; 7106 5101 50 × 2.5 (received): a row of 150 split by a receipt of 50 | 375 |
//! | 7004 | PO-25-004 | 4001 USD | RECEIVED | 7107 5101 100 × 2.4 (received); 7108 5103 3000 × 0.045 (received) | 375 |
//!
//! Seeded rows have no `purchase_uom` and no conversion rate (receipts count 1:1).
//!
//! # Manufacturing orders (next 2005)
//!
//! | id | order_no | status | variant | location | planned |
//! |---|---|---|---|---|---|
//! | 2001 | MO-25-001 | NOT_STARTED | 5001 | 1 | 20 |
//! | 2002 | MO-25-002 | BLOCKED | 5002 | 2 | 10 |
//! | 2003 | MO-25-003 | IN_PROGRESS | 5001 | 2 | 5 |
//! | 2004 | MO-25-004 | DONE (actual 8) | 5002 | 1 | 8 |
//!
//! # Sales orders (all USD; fulfillments: seeded 3401, 3402, next 3501)
//!
//! | id | order_no | status | location | rows: id variant qty × price |
//! |---|---|---|---|---|
//! | 3001 | SO-25-001 | NOT_SHIPPED | 1 | 3101 5001 2 × 89 |
//! | 3002 | SO-25-002 | NOT_SHIPPED | 3 | 3102 5002 3 × 99; 3103 5001 1 × 89; 3104 5201 1 × 15 (service) |
//! | 3003 | SO-25-003 | PACKED (fulfillment 3401 packs 3105 × 1) | 1 | 3105 5002 1 × 99 |
//! | 3004 | SO-25-004 | DELIVERED (fulfillment 3402 delivers 3106 × 2) | 3 | 3106 5001 2 × 89 |

use std::collections::BTreeMap;

use chrono::Duration as ChronoDuration;

use crate::{
    clock,
    model::{
        ConfigAttribute, FulfillmentRow, FulfillmentStatus, ItemType, Location, ManufacturingOrder,
        ManufacturingOrderStatus, ProductOrMaterial, PurchaseOrder, PurchaseOrderRow,
        PurchaseOrderStatus, SalesOrder, SalesOrderFulfillment, SalesOrderRow, SalesOrderStatus,
        Supplier, Variant,
    },
    store,
};

/// The instant every seeded time counts from.
pub const BASE_TIMESTAMP: &str = "2026-03-01T09:00:00.000Z";

/// Main: the primary location, where everything is allowed.
pub const LOCATION_MAIN: i64 = 1;
/// Workshop: manufacturing only.
pub const LOCATION_WORKSHOP: i64 = 2;
/// Retail: sales only.
pub const LOCATION_RETAIL: i64 = 3;

/// Sheffield Steel Supply, currency USD.
pub const SUPPLIER_USD: i64 = 4001;
/// Schwarzwald Holz GmbH, currency EUR.
pub const SUPPLIER_EUR: i64 = 4002;

/// `KNF-8IN-BLK`: Chef's Knife, 8-inch, black handle (product).
pub const KNIFE_BLACK: i64 = 5001;
/// `KNF-8IN-WAL`: Chef's Knife, 8-inch, walnut handle (product).
pub const KNIFE_WALNUT: i64 = 5002;
/// `STL-BLANK-8`: Steel Blank 8-inch (material).
pub const STEEL_BLANK: i64 = 5101;
/// `WAL-SCALE`: Walnut Scale (material).
pub const WALNUT_SCALE: i64 = 5102;
/// `RIV-BRASS-3MM`: Brass Rivet 3mm (material).
pub const BRASS_RIVET: i64 = 5103;
/// `SVC-SHARPEN`: Knife Sharpening (service).
pub const SHARPENING: i64 = 5201;
/// The first filler variant, `FLR-001`.
pub const FIRST_FILLER: i64 = 5301;
/// Number of filler variants.
pub const FILLER_COUNT: i64 = 114;
/// Number of seeded variants.
pub const VARIANT_COUNT: usize = 120;

/// SKU of [`KNIFE_BLACK`].
pub const SKU_KNIFE_BLACK: &str = "KNF-8IN-BLK";
/// SKU of [`KNIFE_WALNUT`].
pub const SKU_KNIFE_WALNUT: &str = "KNF-8IN-WAL";
/// SKU of [`STEEL_BLANK`].
pub const SKU_STEEL_BLANK: &str = "STL-BLANK-8";
/// SKU of [`WALNUT_SCALE`].
pub const SKU_WALNUT_SCALE: &str = "WAL-SCALE";
/// SKU of [`BRASS_RIVET`].
pub const SKU_BRASS_RIVET: &str = "RIV-BRASS-3MM";
/// SKU of [`SHARPENING`].
pub const SKU_SHARPENING: &str = "SVC-SHARPEN";

/// `PO-25-001`, NOT_RECEIVED: rows [`PO1_STEEL_ROW`] and [`PO1_RIVET_ROW`].
pub const PO_NOT_RECEIVED: i64 = 7001;
/// `PO-25-002`, NOT_RECEIVED, in EUR: `WAL-SCALE` on two rows, 7103 (300)
/// and 7104 (100), both at 1.2.
pub const PO_SAME_VARIANT_TWICE: i64 = 7002;
/// `PO-25-003`, PARTIALLY_RECEIVED: row 7105 (100 left) and the split-off,
/// received row 7106 (50).
pub const PO_PARTIALLY_RECEIVED: i64 = 7003;
/// `PO-25-004`, RECEIVED: rows 7107 and 7108, both received.
pub const PO_RECEIVED: i64 = 7004;
/// Row 7101 of `PO-25-001`: 200 × `STL-BLANK-8` at 2.5.
pub const PO1_STEEL_ROW: i64 = 7101;
/// Row 7102 of `PO-25-001`: 1000 × `RIV-BRASS-3MM` at 0.05.
pub const PO1_RIVET_ROW: i64 = 7102;
/// Row 7105 of `PO-25-003`: the unreceived rest, 100 × `STL-BLANK-8`.
pub const PO3_OPEN_ROW: i64 = 7105;
/// Row 7106 of `PO-25-003`: the received 50 × `STL-BLANK-8`.
pub const PO3_RECEIVED_ROW: i64 = 7106;
/// The id the next purchase order gets.
pub const NEXT_PURCHASE_ORDER_ID: i64 = 7005;
/// The id the next purchase order row gets (new orders and split receipts).
pub const NEXT_PURCHASE_ORDER_ROW_ID: i64 = 7109;

/// `MO-25-001`, NOT_STARTED: 20 × `KNF-8IN-BLK` at Main.
pub const MO_NOT_STARTED: i64 = 2001;
/// `MO-25-002`, BLOCKED: 10 × `KNF-8IN-WAL` at Workshop.
pub const MO_BLOCKED: i64 = 2002;
/// `MO-25-003`, IN_PROGRESS: 5 × `KNF-8IN-BLK` at Workshop.
pub const MO_IN_PROGRESS: i64 = 2003;
/// `MO-25-004`, DONE: 8 × `KNF-8IN-WAL` at Main, actual 8.
pub const MO_DONE: i64 = 2004;
/// The id the next manufacturing order gets.
pub const NEXT_MANUFACTURING_ORDER_ID: i64 = 2005;

/// `SO-25-001`, NOT_SHIPPED at Main: row [`SO1_ROW`], 2 × `KNF-8IN-BLK`.
pub const SO_NOT_SHIPPED: i64 = 3001;
/// `SO-25-002`, NOT_SHIPPED at Retail: 3 × `KNF-8IN-WAL` (3102),
/// 1 × `KNF-8IN-BLK` (3103), 1 × `SVC-SHARPEN` (3104).
pub const SO_NOT_SHIPPED_MIXED: i64 = 3002;
/// `SO-25-003`, PACKED at Main: row 3105, 1 × `KNF-8IN-WAL`.
pub const SO_PACKED: i64 = 3003;
/// `SO-25-004`, DELIVERED at Retail: row 3106, 2 × `KNF-8IN-BLK`.
pub const SO_DELIVERED: i64 = 3004;
/// Row 3101 of `SO-25-001`.
pub const SO1_ROW: i64 = 3101;
/// The id the next fulfillment gets.
pub const NEXT_FULFILLMENT_ID: i64 = 3501;

/// An id no seeded record of any kind has.
pub const UNKNOWN_ID: i64 = 999_999;

/// Ingredients per unit of a Chef's Knife: `(variant id, quantity)`.
pub const KNIFE_RECIPE: &[(i64, f64)] =
    &[(STEEL_BLANK, 1.0), (WALNUT_SCALE, 2.0), (BRASS_RIVET, 3.0)];

/// Seeded stock: `(variant id, location id, quantity)`; the rest is 0.
pub const INITIAL_STOCK: &[(i64, i64, f64)] = &[
    (KNIFE_BLACK, LOCATION_MAIN, 40.0),
    (KNIFE_WALNUT, LOCATION_MAIN, 25.0),
    (STEEL_BLANK, LOCATION_MAIN, 500.0),
    (WALNUT_SCALE, LOCATION_MAIN, 800.0),
    (BRASS_RIVET, LOCATION_MAIN, 5000.0),
    (STEEL_BLANK, LOCATION_WORKSHOP, 100.0),
    (WALNUT_SCALE, LOCATION_WORKSHOP, 200.0),
    (BRASS_RIVET, LOCATION_WORKSHOP, 1000.0),
    (KNIFE_BLACK, LOCATION_RETAIL, 12.0),
    (KNIFE_WALNUT, LOCATION_RETAIL, 8.0),
];

/// The seed base plus `hours`, in wire format.
fn at(hours: i64) -> String {
    clock::format(clock::seed_base() + ChronoDuration::hours(hours))
}

/// The ingredients per unit of `variant_id`: the knife recipe for both
/// knives, nothing for anything else.
pub fn recipe(variant_id: i64) -> &'static [(i64, f64)] {
    match variant_id {
        KNIFE_BLACK | KNIFE_WALNUT => KNIFE_RECIPE,
        _ => &[],
    }
}

/// The seeded stock of `variant_id` at `location_id` (0 when not listed).
pub fn initial_stock(variant_id: i64, location_id: i64) -> f64 {
    INITIAL_STOCK
        .iter()
        .find(|(variant, location, _)| *variant == variant_id && *location == location_id)
        .map_or(0.0, |(_, _, quantity)| *quantity)
}

/// [`INITIAL_STOCK`] as a map keyed by `(variant id, location id)`.
pub fn stock() -> BTreeMap<(i64, i64), f64> {
    INITIAL_STOCK
        .iter()
        .map(|&(variant, location, quantity)| ((variant, location), quantity))
        .collect()
}

/// The three locations, oldest id first.
pub fn locations() -> Vec<Location> {
    let location =
        |id: i64, name: &str, sales: bool, manufacturing: bool, purchases: bool| Location {
            id,
            name: name.to_owned(),
            legal_name: Some("Sandbox Knife Works Ltd".to_owned()),
            address_id: None,
            is_primary: id == LOCATION_MAIN,
            sales_allowed: sales,
            manufacturing_allowed: manufacturing,
            purchases_allowed: purchases,
            rank: id,
            created_at: at(-2000 + id),
            updated_at: at(-2000 + id),
            deleted_at: None,
        };
    vec![
        location(LOCATION_MAIN, "Main", true, true, true),
        location(LOCATION_WORKSHOP, "Workshop", false, true, false),
        location(LOCATION_RETAIL, "Retail", true, false, false),
    ]
}

/// The two suppliers, oldest id first.
pub fn suppliers() -> Vec<Supplier> {
    let supplier = |id: i64, name: &str, email: &str, currency: &str| Supplier {
        id,
        name: name.to_owned(),
        email: Some(email.to_owned()),
        phone: None,
        currency: currency.to_owned(),
        comment: None,
        created_at: at(-1900 + (id - SUPPLIER_USD)),
        updated_at: at(-1900 + (id - SUPPLIER_USD)),
        deleted_at: None,
    };
    vec![
        supplier(
            SUPPLIER_USD,
            "Sheffield Steel Supply",
            "orders@sheffield-steel.example",
            "USD",
        ),
        supplier(
            SUPPLIER_EUR,
            "Schwarzwald Holz GmbH",
            "verkauf@schwarzwald-holz.example",
            "EUR",
        ),
    ]
}

/// One seeded item and its variant, before it becomes a [`Variant`].
struct ItemSeed {
    variant_id: i64,
    sku: String,
    item_id: i64,
    item_type: ItemType,
    name: String,
    category: Option<&'static str>,
    config: &'static [(&'static str, &'static str)],
    sales_price: Option<f64>,
    purchase_price: Option<f64>,
    default_supplier_id: Option<i64>,
}

/// The named items, then the fillers, oldest id first.
fn item_seeds() -> Vec<ItemSeed> {
    let named = |variant_id: i64,
                 sku: &str,
                 item_id: i64,
                 item_type: ItemType,
                 name: &str,
                 category: &'static str,
                 config: &'static [(&'static str, &'static str)],
                 sales_price: Option<f64>,
                 purchase_price: Option<f64>,
                 default_supplier_id: Option<i64>| ItemSeed {
        variant_id,
        sku: sku.to_owned(),
        item_id,
        item_type,
        name: name.to_owned(),
        category: Some(category),
        config,
        sales_price,
        purchase_price,
        default_supplier_id,
    };
    let mut seeds = vec![
        named(
            KNIFE_BLACK,
            SKU_KNIFE_BLACK,
            1001,
            ItemType::Product,
            "Chef's Knife",
            "Knives",
            &[("Size", "8-inch"), ("Handle", "Black")],
            Some(89.0),
            None,
            None,
        ),
        named(
            KNIFE_WALNUT,
            SKU_KNIFE_WALNUT,
            1001,
            ItemType::Product,
            "Chef's Knife",
            "Knives",
            &[("Size", "8-inch"), ("Handle", "Walnut")],
            Some(99.0),
            None,
            None,
        ),
        named(
            STEEL_BLANK,
            SKU_STEEL_BLANK,
            1101,
            ItemType::Material,
            "Steel Blank 8-inch",
            "Blanks",
            &[],
            None,
            Some(2.5),
            Some(SUPPLIER_USD),
        ),
        named(
            WALNUT_SCALE,
            SKU_WALNUT_SCALE,
            1102,
            ItemType::Material,
            "Walnut Scale",
            "Handles",
            &[],
            None,
            Some(1.2),
            Some(SUPPLIER_EUR),
        ),
        named(
            BRASS_RIVET,
            SKU_BRASS_RIVET,
            1103,
            ItemType::Material,
            "Brass Rivet 3mm",
            "Hardware",
            &[],
            None,
            Some(0.05),
            Some(SUPPLIER_USD),
        ),
        named(
            SHARPENING,
            SKU_SHARPENING,
            1201,
            ItemType::Service,
            "Knife Sharpening",
            "Services",
            &[],
            Some(15.0),
            None,
            None,
        ),
    ];
    for n in 1..=FILLER_COUNT {
        let product = n % 2 == 1;
        seeds.push(ItemSeed {
            variant_id: FIRST_FILLER - 1 + n,
            sku: format!("FLR-{n:03}"),
            item_id: 1300 + n,
            item_type: if product {
                ItemType::Product
            } else {
                ItemType::Material
            },
            name: if product {
                format!("Filler Product {n:03}")
            } else {
                format!("Filler Material {n:03}")
            },
            category: None,
            config: &[],
            sales_price: product.then_some(10.0 + n as f64),
            purchase_price: (!product).then_some((100 + n) as f64 / 100.0),
            default_supplier_id: None,
        });
    }
    seeds
}

/// Every seeded variant with its `product_or_material`, oldest id first.
pub fn variants() -> Vec<Variant> {
    item_seeds()
        .into_iter()
        .enumerate()
        .map(|(index, seed)| {
            let created = at(-1500 + index as i64);
            let material = seed.item_type == ItemType::Material;
            Variant {
                id: seed.variant_id,
                sku: seed.sku,
                sales_price: seed.sales_price,
                purchase_price: seed.purchase_price,
                product_id: (seed.item_type == ItemType::Product).then_some(seed.item_id),
                material_id: material.then_some(seed.item_id),
                item_type: seed.item_type,
                internal_barcode: None,
                registered_barcode: None,
                supplier_item_codes: Vec::new(),
                lead_time: material.then_some(7),
                minimum_order_quantity: None,
                config_attributes: seed
                    .config
                    .iter()
                    .map(|(name, value)| ConfigAttribute {
                        config_name: (*name).to_owned(),
                        config_value: (*value).to_owned(),
                    })
                    .collect(),
                created_at: created.clone(),
                updated_at: created.clone(),
                deleted_at: None,
                product_or_material: Some(ProductOrMaterial {
                    id: seed.item_id,
                    name: seed.name,
                    item_type: seed.item_type,
                    uom: "pcs".to_owned(),
                    category_name: seed.category.map(str::to_owned),
                    is_sellable: seed.item_type != ItemType::Material,
                    is_producible: seed.item_type == ItemType::Product,
                    is_purchasable: material,
                    default_supplier_id: seed.default_supplier_id,
                    purchase_uom: material.then(|| "pcs".to_owned()),
                    purchase_uom_conversion_rate: material.then_some(1.0),
                    batch_tracked: false,
                    additional_info: None,
                    created_at: created.clone(),
                    updated_at: created,
                }),
            }
        })
        .collect()
}

/// The seeded variant with `id`.
pub fn variant(id: i64) -> Option<Variant> {
    variants().into_iter().find(|variant| variant.id == id)
}

/// The seeded variant with `sku` (exact match).
pub fn variant_by_sku(sku: &str) -> Option<Variant> {
    variants().into_iter().find(|variant| variant.sku == sku)
}

/// A seeded purchase order row: `(id, variant, quantity, price, received at hour)`.
type RowSeed = (i64, i64, f64, f64, Option<i64>);

/// Builds one purchase order from its rows.
fn purchase_order(
    id: i64,
    order_no: &str,
    supplier_id: i64,
    currency: &str,
    created_hour: i64,
    rows: &[RowSeed],
) -> PurchaseOrder {
    let created = at(created_hour);
    let mut order = PurchaseOrder {
        id,
        status: PurchaseOrderStatus::NotReceived,
        billing_status: "NOT_BILLED".to_owned(),
        order_no: order_no.to_owned(),
        entity_type: "regular".to_owned(),
        supplier_id,
        currency: currency.to_owned(),
        expected_arrival_date: Some(at(created_hour + 14 * 24)),
        order_created_date: Some(created.clone()),
        additional_info: None,
        location_id: LOCATION_MAIN,
        tracking_location_id: None,
        total: 0.0,
        created_at: created.clone(),
        updated_at: created.clone(),
        deleted_at: None,
        purchase_order_rows: rows
            .iter()
            .map(|&(row_id, variant_id, quantity, price, received)| {
                let updated = received.map_or_else(|| created.clone(), at);
                PurchaseOrderRow {
                    id: row_id,
                    quantity,
                    variant_id,
                    tax_rate_id: None,
                    price_per_unit: price,
                    purchase_uom: None,
                    purchase_uom_conversion_rate: None,
                    arrival_date: None,
                    received_date: received.map(at),
                    currency: currency.to_owned(),
                    total: 0.0,
                    purchase_order_id: id,
                    batch_transactions: Vec::new(),
                    created_at: updated.clone(),
                    updated_at: updated,
                    deleted_at: None,
                }
            })
            .collect(),
    };
    store::refresh_purchase_order(&mut order);
    order
}

/// The four purchase orders, oldest id first.
pub fn purchase_orders() -> Vec<PurchaseOrder> {
    vec![
        purchase_order(
            PO_NOT_RECEIVED,
            "PO-25-001",
            SUPPLIER_USD,
            "USD",
            0,
            &[
                (PO1_STEEL_ROW, STEEL_BLANK, 200.0, 2.5, None),
                (PO1_RIVET_ROW, BRASS_RIVET, 1000.0, 0.05, None),
            ],
        ),
        purchase_order(
            PO_SAME_VARIANT_TWICE,
            "PO-25-002",
            SUPPLIER_EUR,
            "EUR",
            2,
            &[
                (7103, WALNUT_SCALE, 300.0, 1.2, None),
                (7104, WALNUT_SCALE, 100.0, 1.2, None),
            ],
        ),
        purchase_order(
            PO_PARTIALLY_RECEIVED,
            "PO-25-003",
            SUPPLIER_USD,
            "USD",
            4,
            &[
                (PO3_OPEN_ROW, STEEL_BLANK, 100.0, 2.5, None),
                (PO3_RECEIVED_ROW, STEEL_BLANK, 50.0, 2.5, Some(72)),
            ],
        ),
        purchase_order(
            PO_RECEIVED,
            "PO-25-004",
            SUPPLIER_USD,
            "USD",
            6,
            &[
                (7107, STEEL_BLANK, 100.0, 2.4, Some(120)),
                (7108, BRASS_RIVET, 3000.0, 0.045, Some(120)),
            ],
        ),
    ]
}

/// The four manufacturing orders (one per status), oldest id first.
pub fn manufacturing_orders() -> Vec<ManufacturingOrder> {
    let order = |id: i64,
                 order_no: &str,
                 status: ManufacturingOrderStatus,
                 variant_id: i64,
                 location_id: i64,
                 planned: f64| {
        let hour = (id - MO_NOT_STARTED) * 2 + 1;
        let done = status == ManufacturingOrderStatus::Done;
        ManufacturingOrder {
            id,
            status,
            order_no: order_no.to_owned(),
            variant_id,
            planned_quantity: planned,
            actual_quantity: done.then_some(planned),
            location_id,
            order_created_date: Some(at(hour)),
            done_date: done.then(|| at(hour + 48)),
            production_deadline_date: Some(at(hour + 10 * 24)),
            additional_info: None,
            is_linked_to_sales_order: false,
            ingredient_availability: String::new(),
            batch_transactions: Vec::new(),
            serial_numbers: Vec::new(),
            created_at: at(hour),
            updated_at: at(if done { hour + 48 } else { hour }),
            deleted_at: None,
        }
    };
    vec![
        order(
            MO_NOT_STARTED,
            "MO-25-001",
            ManufacturingOrderStatus::NotStarted,
            KNIFE_BLACK,
            LOCATION_MAIN,
            20.0,
        ),
        order(
            MO_BLOCKED,
            "MO-25-002",
            ManufacturingOrderStatus::Blocked,
            KNIFE_WALNUT,
            LOCATION_WORKSHOP,
            10.0,
        ),
        order(
            MO_IN_PROGRESS,
            "MO-25-003",
            ManufacturingOrderStatus::InProgress,
            KNIFE_BLACK,
            LOCATION_WORKSHOP,
            5.0,
        ),
        order(
            MO_DONE,
            "MO-25-004",
            ManufacturingOrderStatus::Done,
            KNIFE_WALNUT,
            LOCATION_MAIN,
            8.0,
        ),
    ]
}

/// The two seeded fulfillments: 3401 packs SO-25-003, 3402 delivers SO-25-004.
pub fn fulfillments() -> Vec<SalesOrderFulfillment> {
    let fulfillment =
        |id: i64, sales_order_id: i64, status: FulfillmentStatus, row: i64, quantity: f64| {
            let hour = 30 + (id - 3401) * 2;
            SalesOrderFulfillment {
                id,
                sales_order_id,
                picked_date: Some(at(hour)),
                status,
                conversion_rate: None,
                conversion_date: None,
                tracking_number: None,
                tracking_url: None,
                tracking_carrier: None,
                tracking_method: None,
                sales_order_fulfillment_rows: vec![FulfillmentRow {
                    sales_order_row_id: row,
                    quantity,
                    batch_transactions: Vec::new(),
                    serial_numbers: Vec::new(),
                }],
                created_at: at(hour),
                updated_at: at(hour),
            }
        };
    vec![
        fulfillment(3401, SO_PACKED, FulfillmentStatus::Packed, 3105, 1.0),
        fulfillment(3402, SO_DELIVERED, FulfillmentStatus::Delivered, 3106, 2.0),
    ]
}

/// The four sales orders, oldest id first, with statuses derived from
/// [`fulfillments`].
pub fn sales_orders() -> Vec<SalesOrder> {
    let fulfillments = fulfillments();
    let order = |id: i64, order_no: &str, location_id: i64, rows: &[(i64, i64, f64, f64)]| {
        let hour = 3 + (id - SO_NOT_SHIPPED) * 2;
        let mut order = SalesOrder {
            id,
            customer_id: 6001 + (id - SO_NOT_SHIPPED),
            order_no: order_no.to_owned(),
            source: None,
            order_created_date: Some(at(hour)),
            delivery_date: Some(at(hour + 7 * 24)),
            location_id,
            status: SalesOrderStatus::NotShipped,
            currency: "USD".to_owned(),
            total: 0.0,
            additional_info: None,
            customer_ref: None,
            sales_order_rows: rows
                .iter()
                .map(|&(row_id, variant_id, quantity, price)| SalesOrderRow {
                    id: row_id,
                    quantity,
                    variant_id,
                    tax_rate_id: None,
                    location_id,
                    price_per_unit: price,
                    total: 0.0,
                    sales_order_id: id,
                    created_at: at(hour),
                    updated_at: at(hour),
                })
                .collect(),
            created_at: at(hour),
            updated_at: at(hour),
            deleted_at: None,
        };
        store::refresh_sales_order(&mut order, &fulfillments);
        order
    };
    vec![
        order(
            SO_NOT_SHIPPED,
            "SO-25-001",
            LOCATION_MAIN,
            &[(SO1_ROW, KNIFE_BLACK, 2.0, 89.0)],
        ),
        order(
            SO_NOT_SHIPPED_MIXED,
            "SO-25-002",
            LOCATION_RETAIL,
            &[
                (3102, KNIFE_WALNUT, 3.0, 99.0),
                (3103, KNIFE_BLACK, 1.0, 89.0),
                (3104, SHARPENING, 1.0, 15.0),
            ],
        ),
        order(
            SO_PACKED,
            "SO-25-003",
            LOCATION_MAIN,
            &[(3105, KNIFE_WALNUT, 1.0, 99.0)],
        ),
        order(
            SO_DELIVERED,
            "SO-25-004",
            LOCATION_RETAIL,
            &[(3106, KNIFE_BLACK, 2.0, 89.0)],
        ),
    ]
}

/// The first seeded purchase order in `status`.
pub fn purchase_order_in_status(status: PurchaseOrderStatus) -> Option<i64> {
    purchase_orders()
        .into_iter()
        .find(|order| order.status == status)
        .map(|order| order.id)
}

/// The seeded manufacturing order in `status`.
pub fn manufacturing_order_in_status(status: ManufacturingOrderStatus) -> Option<i64> {
    manufacturing_orders()
        .into_iter()
        .find(|order| order.status == status)
        .map(|order| order.id)
}

/// The first seeded sales order in `status`.
pub fn sales_order_in_status(status: SalesOrderStatus) -> Option<i64> {
    sales_orders()
        .into_iter()
        .find(|order| order.status == status)
        .map(|order| order.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_matches_its_documentation() {
        let variants = variants();
        assert_eq!(variants.len(), VARIANT_COUNT);
        let skus: Vec<&str> = variants.iter().take(6).map(|v| v.sku.as_str()).collect();
        assert_eq!(
            skus,
            [
                SKU_KNIFE_BLACK,
                SKU_KNIFE_WALNUT,
                SKU_STEEL_BLANK,
                SKU_WALNUT_SCALE,
                SKU_BRASS_RIVET,
                SKU_SHARPENING
            ]
        );
        assert_eq!(variants.last().map(|v| v.id), Some(5414));
        assert_eq!(variants.last().map(|v| v.sku.as_str()), Some("FLR-114"));
        let mut ids: Vec<i64> = variants.iter().map(|v| v.id).collect();
        ids.dedup();
        assert_eq!(ids.len(), VARIANT_COUNT, "variant ids are unique");

        let statuses: Vec<_> = purchase_orders()
            .iter()
            .map(|o| (o.id, o.status, o.total))
            .collect();
        assert_eq!(
            statuses,
            [
                (7001, PurchaseOrderStatus::NotReceived, 550.0),
                (7002, PurchaseOrderStatus::NotReceived, 480.0),
                (7003, PurchaseOrderStatus::PartiallyReceived, 375.0),
                (7004, PurchaseOrderStatus::Received, 375.0),
            ]
        );
        let statuses: Vec<_> = sales_orders().iter().map(|o| (o.id, o.status)).collect();
        assert_eq!(
            statuses,
            [
                (3001, SalesOrderStatus::NotShipped),
                (3002, SalesOrderStatus::NotShipped),
                (3003, SalesOrderStatus::Packed),
                (3004, SalesOrderStatus::Delivered),
            ]
        );
        assert_eq!(
            manufacturing_order_in_status(ManufacturingOrderStatus::Blocked),
            Some(MO_BLOCKED)
        );
        assert_eq!(
            purchase_order_in_status(PurchaseOrderStatus::PartiallyReceived),
            Some(PO_PARTIALLY_RECEIVED)
        );
        assert_eq!(
            sales_order_in_status(SalesOrderStatus::Packed),
            Some(SO_PACKED)
        );
    }

    #[test]
    fn next_ids_follow_the_seeded_ones() {
        let max_po = purchase_orders().iter().map(|o| o.id).max();
        assert_eq!(max_po, Some(NEXT_PURCHASE_ORDER_ID - 1));
        let max_row = purchase_orders()
            .iter()
            .flat_map(|o| o.purchase_order_rows.iter().map(|r| r.id))
            .max();
        assert_eq!(max_row, Some(NEXT_PURCHASE_ORDER_ROW_ID - 1));
        let max_mo = manufacturing_orders().iter().map(|o| o.id).max();
        assert_eq!(max_mo, Some(NEXT_MANUFACTURING_ORDER_ID - 1));
        assert!(fulfillments().iter().all(|f| f.id < NEXT_FULFILLMENT_ID));
    }

    #[test]
    fn stock_and_recipes() {
        assert_eq!(initial_stock(KNIFE_BLACK, LOCATION_MAIN), 40.0);
        assert_eq!(initial_stock(KNIFE_BLACK, LOCATION_WORKSHOP), 0.0);
        assert_eq!(recipe(KNIFE_WALNUT).len(), 3);
        assert!(recipe(STEEL_BLANK).is_empty());
        assert_eq!(
            variant_by_sku("WAL-SCALE").map(|v| v.id),
            Some(WALNUT_SCALE)
        );
    }

    #[test]
    fn filler_names_share_no_word_with_named_items() {
        let named = [
            "knife",
            "knf",
            "chef",
            "steel",
            "stl",
            "blank",
            "walnut",
            "wal",
            "scale",
            "brass",
            "riv",
            "rivet",
            "sharpen",
            "svc",
            "sharpening",
        ];
        for variant in variants().into_iter().skip(6) {
            let name = variant.product_or_material.unwrap().name.to_lowercase();
            let sku = variant.sku.to_lowercase();
            for word in named {
                assert!(
                    !name.contains(word) && !sku.contains(word),
                    "{name} {sku} {word}"
                );
            }
        }
    }
}
