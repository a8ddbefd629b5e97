//! The deterministic seed: status catalog, transition map and 48 orders.
//!
//! Every sandbox starts from exactly this data, so tests may rely on it. Pick
//! orders through the helpers ([`order_without_status`], [`cancelled_order`],
//! [`order_in_status`], [`order_with_viable_next`], ...) or filter [`orders`]
//! rather than hard-coding ids where a property is what matters.
//!
//! # Status catalog (catalog order)
//!
//! | code | name | public name | color | customers see it |
//! |---|---|---|---|---|
//! | `st000001` | Order Received | We Got Your Order | `gray` | yes |
//! | `st000002` | In Production | Crafting With Care | `pink` | yes |
//! | `st000003` | Shipped | On Its Way | `green` | yes |
//! | `st000004` | Delivered | Delivered | `#2e7d32` | yes |
//! | `st000005` | On Hold | (none) | `#f59e0b` | no |
//! | `st000006` | Quality Check | (none) | `#7c3aed` | no |
//!
//! Every status has `fr` and `de` translations. Shipped has
//! `auto_change_at = set_at + 7 days`; every other status has none.
//!
//! # Transition map ([`TRANSITIONS`])
//!
//! | from | viable next (catalog order) |
//! |---|---|
//! | `st000001` Order Received | `st000002`, `st000005` |
//! | `st000002` In Production | `st000005`, `st000006` |
//! | `st000003` Shipped | `st000004` |
//! | `st000004` Delivered | none (terminal) |
//! | `st000005` On Hold | `st000001`, `st000002` |
//! | `st000006` Quality Check | `st000002`, `st000003` |
//! | no status set | all six |
//!
//! # Orders
//!
//! Order `n` (1..=48) has id `6110375248000 + n` ([`FIRST_ORDER_ID`] ..=
//! [`LAST_ORDER_ID`]), name `#{1000 + n}` and order number `{1000 + n}`.
//!
//! | property | orders (by `n`) |
//! |---|---|
//! | `st000001` Order Received (8) | 4, 10, 15, 17, 23, 28, 36, 41 |
//! | `st000002` In Production (11) | 3, 9, 12, 18, 21, 26, 30, 34, 38, 43, 46 |
//! | `st000003` Shipped (6) | 2, 11, 19, 27, 33, 42 |
//! | `st000004` Delivered (5) | 1, 13, 25, 35, 44 |
//! | `st000005` On Hold (6) | 6, 7, 20, 31, 39, 47 |
//! | `st000006` Quality Check (6) | 5, 14, 22, 29, 37, 45 |
//! | no status set (6) | 8, 16, 24, 32, 40, 48 |
//! | cancelled (6) | 7, 17, 27, 37, 40, 47 |
//! | due date (23) | see [`orders`]; 9 of them also have `due_date_to` |
//!
//! Customers: 16 people with locales `en`, `fr`, `de`, `es`, `nl`, `it`, three
//! orders each; `Jon Smith <jon@example.com>` (`en`) owns #1001, #1012 and
//! #1033 (orders 1, 12, 33).
//!
//! Tags come from `vip`, `rush`, `gift`, `wholesale`, `custom-engraving`,
//! `repeat-customer`, `preorder`, `international`.
//!
//! # Seeded times and history
//!
//! * Order `n` was created at [`BASE_TIMESTAMP`] (`2026-03-01T09:00:00+00:00`)
//!   plus `3 × (n − 1)` hours.
//! * An order with a status has one `status_change` item per step of its
//!   status's path, the k-th (from 0) at creation + `26 × k` hours; `set_at` is
//!   the last step's time. Paths: Order Received `[01]`; In Production
//!   `[01, 02]`; Quality Check `[01, 02, 06]`; Shipped `[01, 02, 06, 03]`;
//!   Delivered `[01, 02, 06, 03, 04]`; On Hold `[01, 05]`. Changes to a public
//!   status carry a `mail_log` with `delivery_status: "delivered"`; the On Hold
//!   step carries the private comment `"Waiting for the customer to confirm
//!   details."`.
//! * Orders with `n % 5 == 0` also have a `comment_added` item two hours after
//!   their last event (public when `n % 10 == 0`).
//! * Due dates are midnight UTC `2026-03-01 + offset` days.

use chrono::{Duration as ChronoDuration, NaiveDate};

use crate::{
    clock,
    model::{Customer, HistoryItem, MailLog, StatusDefinition},
    store::{CurrentStatus, OrderRecord},
};

/// The instant every seeded time counts from.
pub const BASE_TIMESTAMP: &str = "2026-03-01T09:00:00+00:00";

/// Number of seeded orders.
pub const ORDER_COUNT: usize = 48;

/// Id of order 1 (`#1001`).
pub const FIRST_ORDER_ID: i64 = 6_110_375_248_001;

/// Id of order 48 (`#1048`), the newest.
pub const LAST_ORDER_ID: i64 = FIRST_ORDER_ID + ORDER_COUNT as i64 - 1;

/// An id no seeded order has.
pub const UNKNOWN_ORDER_ID: i64 = 6_110_375_249_999;

/// Largest number of order ids one bulk request may carry.
pub const BULK_LIMIT: usize = 50;

/// Sender of every notification e-mail.
pub const MAIL_FROM: &str = "Sandbox Shop <orders@sandbox-shop.example>";

/// The accepted `financial_status[]` values.
pub const FINANCIAL_STATUSES: &[&str] = &[
    "paid",
    "partially_paid",
    "partially_refunded",
    "refunded",
    "voided",
    "pending",
    "authorized",
    "unpaid",
];

/// The accepted `fulfillment_status[]` values.
pub const FULFILLMENT_STATUSES: &[&str] = &["unfulfilled", "partial", "restocked", "fulfilled"];

/// The transition map: for each status, the statuses it may move to, in
/// catalog order. An order with no status may move to any status.
pub const TRANSITIONS: &[(&str, &[&str])] = &[
    ("st000001", &["st000002", "st000005"]),
    ("st000002", &["st000005", "st000006"]),
    ("st000003", &["st000004"]),
    ("st000004", &[]),
    ("st000005", &["st000001", "st000002"]),
    ("st000006", &["st000002", "st000003"]),
];

/// One status of the catalog, with what the wire shapes need.
#[derive(Debug)]
pub(crate) struct StatusInfo {
    /// 8-character code.
    pub code: &'static str,
    /// Internal name.
    pub name: &'static str,
    /// Customer-facing name; `None` for private statuses.
    pub public_name: Option<&'static str>,
    /// Description.
    pub description: &'static str,
    /// Color name or hex.
    pub color: &'static str,
    /// `(locale, name, description)`.
    pub translations: &'static [(&'static str, &'static str, &'static str)],
    /// Days after which the status changes on its own, if it does.
    pub auto_change_after_days: Option<i64>,
    /// The furthest public-timeline step (index into [`TIMELINE`]) an order in
    /// this status has reached.
    pub stage: usize,
}

impl StatusInfo {
    /// Whether customers see the status.
    pub fn public(&self) -> bool {
        self.public_name.is_some()
    }

    /// The catalog entry as the API returns it.
    pub fn definition(&self) -> StatusDefinition {
        StatusDefinition {
            code: self.code.to_owned(),
            name: self.name.to_owned(),
            description: self.description.to_owned(),
            color: self.color.to_owned(),
        }
    }
}

/// The status catalog, in catalog order.
pub(crate) static CATALOG: [StatusInfo; 6] = [
    StatusInfo {
        code: "st000001",
        name: "Order Received",
        public_name: Some("We Got Your Order"),
        description: "Order received and awaiting production",
        color: "gray",
        translations: &[
            (
                "de",
                "Bestellung eingegangen",
                "Bestellung eingegangen, Produktion steht aus",
            ),
            (
                "fr",
                "Commande reçue",
                "Commande reçue, en attente de production",
            ),
        ],
        auto_change_after_days: None,
        stage: 0,
    },
    StatusInfo {
        code: "st000002",
        name: "In Production",
        public_name: Some("Crafting With Care"),
        description: "Order being handcrafted in the workshop",
        color: "pink",
        translations: &[
            (
                "de",
                "In Produktion",
                "Bestellung wird in der Werkstatt gefertigt",
            ),
            (
                "fr",
                "En production",
                "Commande fabriquée à la main dans l'atelier",
            ),
        ],
        auto_change_after_days: None,
        stage: 1,
    },
    StatusInfo {
        code: "st000003",
        name: "Shipped",
        public_name: Some("On Its Way"),
        description: "Order handed to the carrier",
        color: "green",
        translations: &[
            (
                "de",
                "Versandt",
                "Bestellung an den Versanddienst übergeben",
            ),
            ("fr", "Expédiée", "Commande remise au transporteur"),
        ],
        auto_change_after_days: Some(7),
        stage: 2,
    },
    StatusInfo {
        code: "st000004",
        name: "Delivered",
        public_name: Some("Delivered"),
        description: "Carrier confirmed delivery",
        color: "#2e7d32",
        translations: &[
            ("de", "Zugestellt", "Zustellung vom Versanddienst bestätigt"),
            ("fr", "Livrée", "Livraison confirmée par le transporteur"),
        ],
        auto_change_after_days: None,
        stage: 3,
    },
    StatusInfo {
        code: "st000005",
        name: "On Hold",
        public_name: None,
        description: "Order paused until an issue is resolved",
        color: "#f59e0b",
        translations: &[
            (
                "de",
                "Angehalten",
                "Bestellung pausiert, bis ein Problem gelöst ist",
            ),
            (
                "fr",
                "En attente",
                "Commande suspendue jusqu'à résolution d'un problème",
            ),
        ],
        auto_change_after_days: None,
        stage: 0,
    },
    StatusInfo {
        code: "st000006",
        name: "Quality Check",
        public_name: None,
        description: "Order being inspected before shipping",
        color: "#7c3aed",
        translations: &[
            (
                "de",
                "Qualitätsprüfung",
                "Bestellung wird vor dem Versand geprüft",
            ),
            (
                "fr",
                "Contrôle qualité",
                "Commande inspectée avant l'expédition",
            ),
        ],
        auto_change_after_days: None,
        stage: 1,
    },
];

/// The public progress timeline: `(status code, progress percent)` per step.
pub(crate) const TIMELINE: [(&str, u8); 4] = [
    ("st000001", 25),
    ("st000002", 50),
    ("st000003", 75),
    ("st000004", 100),
];

/// The catalog entry for `code`.
pub(crate) fn status_info(code: &str) -> Option<&'static StatusInfo> {
    CATALOG.iter().find(|info| info.code == code)
}

/// The status catalog as `GET /statuses` returns it.
pub fn statuses() -> Vec<StatusDefinition> {
    CATALOG.iter().map(StatusInfo::definition).collect()
}

/// The statuses an order in `from` may move to, in catalog order; `None`
/// (no status set) may move to every status. Unknown codes have none.
pub fn viable_next(from: Option<&str>) -> Vec<&'static str> {
    match from {
        None => CATALOG.iter().map(|info| info.code).collect(),
        Some(from) => TRANSITIONS
            .iter()
            .find(|(code, _)| *code == from)
            .map(|(_, next)| next.to_vec())
            .unwrap_or_default(),
    }
}

/// The seeded customers: `(name, email, locale)`.
const CUSTOMERS: [(&str, &str, &str); 16] = [
    ("Jon Smith", "jon@example.com", "en"),
    ("Amélie Dubois", "amelie.dubois@example.fr", "fr"),
    ("Lukas Meyer", "lukas.meyer@example.de", "de"),
    ("Sofia García", "sofia.garcia@example.es", "es"),
    ("Daan de Vries", "daan@example.nl", "nl"),
    ("Giulia Rossi", "giulia.rossi@example.it", "it"),
    ("Emma Johnson", "emma.johnson@example.com", "en"),
    ("Noah Williams", "noah.w@example.com", "en"),
    ("Chloé Martin", "chloe.martin@example.fr", "fr"),
    ("Hannah Becker", "hannah.becker@example.de", "de"),
    ("Olivia Brown", "olivia.brown@example.co.uk", "en"),
    ("Mateo López", "mateo.lopez@example.es", "es"),
    ("Liam O'Connor", "liam.oconnor@example.ie", "en"),
    ("Ava Taylor", "ava.taylor@example.com", "en"),
    ("Marco Bianchi", "marco.bianchi@example.it", "it"),
    ("Isabella Clark", "isabella.clark@example.com", "en"),
];

/// One seeded order before it becomes a record.
struct Row {
    /// Index into [`CUSTOMERS`].
    customer: usize,
    /// Status code, or `None` for no status set.
    status: Option<&'static str>,
    /// Shopify tags.
    tags: &'static [&'static str],
    /// One of [`FINANCIAL_STATUSES`].
    financial: &'static str,
    /// One of [`FULFILLMENT_STATUSES`].
    fulfillment: &'static str,
    /// Whether the order was cancelled.
    cancelled: bool,
    /// `(days after 2026-03-01, optional range length in days)`.
    due: Option<(i64, Option<i64>)>,
}

/// Shorthand for a [`Row`], to keep the table readable.
const fn row(
    customer: usize,
    status: Option<&'static str>,
    tags: &'static [&'static str],
    financial: &'static str,
    fulfillment: &'static str,
    cancelled: bool,
    due: Option<(i64, Option<i64>)>,
) -> Row {
    Row {
        customer,
        status,
        tags,
        financial,
        fulfillment,
        cancelled,
        due,
    }
}

const RECEIVED: Option<&str> = Some("st000001");
const PRODUCTION: Option<&str> = Some("st000002");
const SHIPPED: Option<&str> = Some("st000003");
const DELIVERED: Option<&str> = Some("st000004");
const HOLD: Option<&str> = Some("st000005");
const QC: Option<&str> = Some("st000006");
const NONE: Option<&str> = None;

/// The 48 orders; row `i` is order `n = i + 1`.
#[rustfmt::skip]
const ROWS: [Row; ORDER_COUNT] = [
    row(0, DELIVERED, &["vip", "repeat-customer"], "paid", "fulfilled", false, Some((3, None))),
    row(1, SHIPPED, &["gift"], "paid", "fulfilled", false, Some((10, Some(2)))),
    row(2, PRODUCTION, &["wholesale"], "authorized", "unfulfilled", false, Some((15, None))),
    row(3, RECEIVED, &[], "pending", "unfulfilled", false, None),
    row(4, QC, &["custom-engraving"], "paid", "partial", false, Some((12, Some(3)))),
    row(5, HOLD, &["rush"], "partially_paid", "unfulfilled", false, None),
    row(6, HOLD, &["preorder"], "refunded", "restocked", true, None),
    row(7, NONE, &[], "pending", "unfulfilled", false, None),
    row(8, PRODUCTION, &["vip", "rush"], "paid", "unfulfilled", false, Some((18, None))),
    row(9, RECEIVED, &["international"], "paid", "unfulfilled", false, None),
    row(10, SHIPPED, &["gift", "international"], "paid", "fulfilled", false, Some((20, Some(1)))),
    row(0, PRODUCTION, &["repeat-customer", "custom-engraving"], "paid", "unfulfilled", false, Some((22, Some(5)))),
    row(11, DELIVERED, &[], "paid", "fulfilled", false, None),
    row(12, QC, &["wholesale", "rush"], "authorized", "partial", false, Some((16, None))),
    row(13, RECEIVED, &["gift"], "unpaid", "unfulfilled", false, None),
    row(14, NONE, &["preorder"], "pending", "unfulfilled", false, Some((30, None))),
    row(15, RECEIVED, &[], "voided", "unfulfilled", true, None),
    row(1, PRODUCTION, &["vip"], "paid", "unfulfilled", false, Some((25, None))),
    row(2, SHIPPED, &["wholesale", "international"], "paid", "fulfilled", false, None),
    row(3, HOLD, &["custom-engraving"], "partially_refunded", "partial", false, None),
    row(4, PRODUCTION, &["rush"], "paid", "unfulfilled", false, Some((14, Some(2)))),
    row(5, QC, &["gift", "vip"], "paid", "unfulfilled", false, Some((17, None))),
    row(6, RECEIVED, &["repeat-customer"], "paid", "unfulfilled", false, None),
    row(7, NONE, &["wholesale"], "authorized", "unfulfilled", false, None),
    row(8, DELIVERED, &["international"], "paid", "fulfilled", false, Some((8, None))),
    row(9, PRODUCTION, &["custom-engraving", "rush"], "paid", "unfulfilled", false, Some((19, Some(3)))),
    row(10, SHIPPED, &["gift"], "refunded", "restocked", true, None),
    row(11, RECEIVED, &["vip"], "pending", "unfulfilled", false, Some((28, None))),
    row(12, QC, &[], "paid", "partial", false, None),
    row(13, PRODUCTION, &["preorder"], "partially_paid", "unfulfilled", false, Some((35, Some(7)))),
    row(14, HOLD, &["wholesale"], "paid", "unfulfilled", false, None),
    row(15, NONE, &["gift", "rush"], "paid", "unfulfilled", false, Some((21, None))),
    row(0, SHIPPED, &["repeat-customer", "vip"], "paid", "fulfilled", false, None),
    row(1, PRODUCTION, &["custom-engraving"], "paid", "unfulfilled", false, None),
    row(2, DELIVERED, &["wholesale"], "paid", "fulfilled", false, Some((11, None))),
    row(3, RECEIVED, &["international"], "unpaid", "unfulfilled", false, None),
    row(4, QC, &["rush", "vip"], "voided", "unfulfilled", true, None),
    row(5, PRODUCTION, &["gift"], "paid", "unfulfilled", false, Some((24, Some(2)))),
    row(6, HOLD, &[], "authorized", "unfulfilled", false, None),
    row(7, NONE, &["preorder"], "voided", "unfulfilled", true, None),
    row(8, RECEIVED, &["vip", "international"], "paid", "unfulfilled", false, Some((31, None))),
    row(9, SHIPPED, &["custom-engraving"], "paid", "fulfilled", false, Some((13, None))),
    row(10, PRODUCTION, &["wholesale", "rush"], "paid", "partial", false, Some((23, None))),
    row(11, DELIVERED, &["gift"], "partially_refunded", "fulfilled", false, None),
    row(12, QC, &["repeat-customer"], "paid", "unfulfilled", false, Some((27, Some(4)))),
    row(13, PRODUCTION, &[], "pending", "unfulfilled", false, None),
    row(14, HOLD, &["rush"], "refunded", "unfulfilled", true, None),
    row(15, NONE, &["vip"], "paid", "unfulfilled", false, None),
];

/// The status path that leads to `code`, oldest first.
fn path_to(code: &str) -> &'static [&'static str] {
    match code {
        "st000001" => &["st000001"],
        "st000002" => &["st000001", "st000002"],
        "st000006" => &["st000001", "st000002", "st000006"],
        "st000003" => &["st000001", "st000002", "st000006", "st000003"],
        "st000004" => &["st000001", "st000002", "st000006", "st000003", "st000004"],
        "st000005" => &["st000001", "st000005"],
        _ => &[],
    }
}

/// The subject line of a status notification.
pub(crate) fn mail_subject(order_name: &str, info: &StatusInfo) -> String {
    let shown = info.public_name.unwrap_or(info.name);
    format!("Your order {order_name} is now: {shown}")
}

/// Builds the seeded order records, oldest id first.
pub(crate) fn records() -> Vec<OrderRecord> {
    let base = clock::seed_base();
    let base_date = base.date_naive();
    ROWS.iter()
        .enumerate()
        .map(|(i, row)| {
            let n = i as i64 + 1;
            let (name, email, locale) = CUSTOMERS[row.customer];
            let customer = Customer {
                name: name.to_owned(),
                email: email.to_owned(),
                locale: locale.to_owned(),
            };
            let order_number = (1000 + n).to_string();
            let order_name = format!("#{order_number}");
            let created = base + ChronoDuration::hours(3 * (n - 1));

            let mut history = Vec::new();
            let mut last_event = created;
            let mut status = None;
            if let Some(code) = row.status {
                for (k, step) in path_to(code).iter().enumerate() {
                    let info = status_info(step).expect("seed paths use catalog codes");
                    let at = created + ChronoDuration::hours(26 * k as i64);
                    history.push(HistoryItem {
                        event: "status_change".to_owned(),
                        status: Some(info.name.to_owned()),
                        comment: (info.code == "st000005")
                            .then(|| "Waiting for the customer to confirm details.".to_owned()),
                        comment_is_public: false,
                        created_at: clock::format_datetime(at),
                        mail_log: info.public().then(|| MailLog {
                            from: MAIL_FROM.to_owned(),
                            to: customer.email.clone(),
                            subject: mail_subject(&order_name, info),
                            delivery_status: "delivered".to_owned(),
                        }),
                    });
                    last_event = at;
                }
                let info = status_info(code).expect("seed rows use catalog codes");
                status = Some(CurrentStatus {
                    code: info.code,
                    set_at: last_event,
                });
            }
            if n % 5 == 0 {
                history.push(HistoryItem {
                    event: "comment_added".to_owned(),
                    status: None,
                    comment: Some("Customer asked for an update by e-mail.".to_owned()),
                    comment_is_public: n % 10 == 0,
                    created_at: clock::format_datetime(last_event + ChronoDuration::hours(2)),
                    mail_log: None,
                });
            }

            let (due_date, due_date_to) = match row.due {
                Some((offset, span)) => {
                    let due = base_date + ChronoDuration::days(offset);
                    (Some(due), span.map(|days| due + ChronoDuration::days(days)))
                }
                None => (None, None),
            };

            OrderRecord {
                id: FIRST_ORDER_ID + n - 1,
                order_number,
                customer,
                status,
                due_date,
                due_date_to,
                history,
                tags: row.tags.iter().map(|tag| (*tag).to_owned()).collect(),
                financial_status: row.financial.to_owned(),
                fulfillment_status: row.fulfillment.to_owned(),
                cancelled: row.cancelled,
            }
        })
        .collect()
}

/// Everything about one seeded order, including the filter-only fields the API
/// never returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedOrder {
    /// Shopify id.
    pub id: i64,
    /// Display name, `#1001` ...
    pub name: String,
    /// Order number, `1001` ...
    pub order_number: String,
    /// The customer.
    pub customer: Customer,
    /// Status code; `None` when no status is set.
    pub status_code: Option<&'static str>,
    /// Shopify tags (filter-only).
    pub tags: Vec<&'static str>,
    /// Financial status (filter-only).
    pub financial_status: &'static str,
    /// Fulfillment status (filter-only).
    pub fulfillment_status: &'static str,
    /// Whether the order is cancelled (filter-only).
    pub cancelled: bool,
    /// Due date as `YYYY-MM-DD`.
    pub due_date: Option<String>,
    /// End of the due-date range as `YYYY-MM-DD`.
    pub due_date_to: Option<String>,
    /// Number of seeded history items.
    pub history_count: usize,
}

/// All seeded orders, oldest id first (the API lists newest first).
pub fn orders() -> Vec<SeedOrder> {
    records()
        .into_iter()
        .zip(ROWS.iter())
        .map(|(record, row)| SeedOrder {
            id: record.id,
            name: format!("#{}", record.order_number),
            order_number: record.order_number,
            customer: record.customer,
            status_code: row.status,
            tags: row.tags.to_vec(),
            financial_status: row.financial,
            fulfillment_status: row.fulfillment,
            cancelled: row.cancelled,
            due_date: record.due_date.map(|d| d.format("%Y-%m-%d").to_string()),
            due_date_to: record.due_date_to.map(|d| d.format("%Y-%m-%d").to_string()),
            history_count: record.history.len(),
        })
        .collect()
}

/// The seeded order with `id`.
pub fn order(id: i64) -> Option<SeedOrder> {
    orders().into_iter().find(|order| order.id == id)
}

/// The first seeded order matching `pred`.
pub fn find_order(pred: impl Fn(&SeedOrder) -> bool) -> Option<SeedOrder> {
    orders().into_iter().find(|order| pred(order))
}

/// An order with no status set that is not cancelled (order 8, `#1008`).
pub fn order_without_status() -> i64 {
    find_order(|o| o.status_code.is_none() && !o.cancelled)
        .expect("the seed has orders without a status")
        .id
}

/// A cancelled order (order 7, `#1007`, On Hold).
pub fn cancelled_order() -> i64 {
    find_order(|o| o.cancelled)
        .expect("the seed has cancelled orders")
        .id
}

/// The first non-cancelled order whose status is `code`.
pub fn order_in_status(code: &str) -> Option<i64> {
    find_order(|o| o.status_code == Some(code) && !o.cancelled).map(|o| o.id)
}

/// The first non-cancelled order with a status set from which `next` is a
/// viable move (e.g. `"st000003"` gives a Quality Check order).
pub fn order_with_viable_next(next: &str) -> Option<i64> {
    find_order(|o| {
        !o.cancelled && o.status_code.is_some() && viable_next(o.status_code).contains(&next)
    })
    .map(|o| o.id)
}

/// The first non-cancelled order with a status set from which `next` is
/// **not** a viable move.
pub fn order_with_non_viable_next(next: &str) -> Option<i64> {
    find_order(|o| {
        !o.cancelled && o.status_code.is_some() && !viable_next(o.status_code).contains(&next)
    })
    .map(|o| o.id)
}

/// An order with both `due_date` and `due_date_to` (order 2, `#1002`:
/// 2026-03-11 to 2026-03-13).
pub fn order_with_due_range() -> i64 {
    find_order(|o| o.due_date.is_some() && o.due_date_to.is_some())
        .expect("the seed has due-date ranges")
        .id
}

/// An order without a due date (order 4, `#1004`).
pub fn order_without_due_date() -> i64 {
    find_order(|o| o.due_date.is_none())
        .expect("the seed has orders without due dates")
        .id
}

/// The date 2026-03-01 plus `days`, as `YYYY-MM-DD`; handy for due-date tests.
pub fn seed_date(days: i64) -> String {
    let date =
        NaiveDate::from_ymd_opt(2026, 3, 1).expect("valid date") + ChronoDuration::days(days);
    date.format("%Y-%m-%d").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_matches_its_documentation() {
        let orders = orders();
        assert_eq!(orders.len(), ORDER_COUNT);
        assert_eq!(orders[0].id, FIRST_ORDER_ID);
        assert_eq!(orders[47].id, LAST_ORDER_ID);
        assert_eq!(orders[0].name, "#1001");

        let ns = |pred: &dyn Fn(&SeedOrder) -> bool| -> Vec<i64> {
            orders
                .iter()
                .filter(|o| pred(o))
                .map(|o| o.id - FIRST_ORDER_ID + 1)
                .collect()
        };
        assert_eq!(ns(&|o| o.status_code.is_none()), [8, 16, 24, 32, 40, 48]);
        assert_eq!(ns(&|o| o.cancelled), [7, 17, 27, 37, 40, 47]);
        assert_eq!(
            ns(&|o| o.status_code == Some("st000001")),
            [4, 10, 15, 17, 23, 28, 36, 41]
        );
        assert_eq!(
            ns(&|o| o.status_code == Some("st000002")),
            [3, 9, 12, 18, 21, 26, 30, 34, 38, 43, 46]
        );
        assert_eq!(
            ns(&|o| o.status_code == Some("st000003")),
            [2, 11, 19, 27, 33, 42]
        );
        assert_eq!(
            ns(&|o| o.status_code == Some("st000004")),
            [1, 13, 25, 35, 44]
        );
        assert_eq!(
            ns(&|o| o.status_code == Some("st000005")),
            [6, 7, 20, 31, 39, 47]
        );
        assert_eq!(
            ns(&|o| o.status_code == Some("st000006")),
            [5, 14, 22, 29, 37, 45]
        );
        assert_eq!(ns(&|o| o.due_date.is_some()).len(), 23);
        assert_eq!(ns(&|o| o.due_date_to.is_some()).len(), 9);
        assert_eq!(ns(&|o| o.customer.email == "jon@example.com"), [1, 12, 33]);

        for order in &orders {
            assert!(FINANCIAL_STATUSES.contains(&order.financial_status));
            assert!(FULFILLMENT_STATUSES.contains(&order.fulfillment_status));
        }
    }

    #[test]
    fn helpers_pick_the_documented_orders() {
        assert_eq!(order_without_status(), FIRST_ORDER_ID + 7);
        assert_eq!(cancelled_order(), FIRST_ORDER_ID + 6);
        assert_eq!(order_with_due_range(), FIRST_ORDER_ID + 1);
        assert_eq!(order_without_due_date(), FIRST_ORDER_ID + 3);
        assert_eq!(order_with_viable_next("st000003"), Some(FIRST_ORDER_ID + 4));
        assert_eq!(order_with_non_viable_next("st000001"), Some(FIRST_ORDER_ID));
        assert_eq!(order_in_status("st000004"), Some(FIRST_ORDER_ID));
        assert_eq!(seed_date(14), "2026-03-15");
    }

    #[test]
    fn transitions_cover_the_catalog_and_seed_paths_follow_them() {
        assert_eq!(TRANSITIONS.len(), CATALOG.len());
        for (from, next) in TRANSITIONS {
            assert!(status_info(from).is_some());
            let positions: Vec<usize> = next
                .iter()
                .map(|code| CATALOG.iter().position(|i| i.code == *code).unwrap())
                .collect();
            assert!(
                positions.windows(2).all(|w| w[0] < w[1]),
                "{from}: catalog order"
            );
        }
        for info in &CATALOG {
            let path = path_to(info.code);
            assert_eq!(path.last(), Some(&info.code));
            for pair in path.windows(2) {
                assert!(viable_next(Some(pair[0])).contains(&pair[1]), "{pair:?}");
            }
        }
    }
}
