//! The sandbox's state: order records, and every read and write on them.
//!
//! The store owns the orders behind one mutex; handlers, the bulk worker and
//! the test-facing [`crate::Sandbox`] all go through it. A record keeps typed
//! fields (dates, status code, set time) plus the filter-only fields (tags,
//! financial and fulfillment status, cancellation); the wire shapes of
//! [`crate::model`] are rendered from it on every read, so derived fields
//! (`history_count`, the public timeline, `auto_change_at`) never go stale.
//!
//! **Architecture Invariant:** the store validates nothing a client sent; the
//! handlers do. It only enforces what the data itself implies (an unknown id is
//! `None`, a non-viable move is refused).

use std::{
    collections::BTreeMap,
    sync::{Mutex, MutexGuard},
};

use chrono::{DateTime, Duration as ChronoDuration, NaiveDate, Utc};

use crate::{
    clock,
    model::{
        Customer, HistoryItem, MailLog, Order, OrderListItem, OrderPage, PageMeta, Status,
        StatusDefinition, StatusTranslation, TimelineItem,
    },
    seed::{self, StatusInfo},
};

/// The status an order is in.
#[derive(Debug, Clone)]
pub(crate) struct CurrentStatus {
    /// Catalog code.
    pub code: &'static str,
    /// When it was set.
    pub set_at: DateTime<Utc>,
}

/// One order as the sandbox stores it.
#[derive(Debug, Clone)]
pub(crate) struct OrderRecord {
    /// Shopify id.
    pub id: i64,
    /// Order number without `#`.
    pub order_number: String,
    /// The customer.
    pub customer: Customer,
    /// Current status; `None` when no status is set.
    pub status: Option<CurrentStatus>,
    /// Due date.
    pub due_date: Option<NaiveDate>,
    /// End of the due-date range.
    pub due_date_to: Option<NaiveDate>,
    /// Events, oldest first, already in wire shape.
    pub history: Vec<HistoryItem>,
    /// Shopify tags (filter-only).
    pub tags: Vec<String>,
    /// Financial status (filter-only).
    pub financial_status: String,
    /// Fulfillment status (filter-only).
    pub fulfillment_status: String,
    /// Whether the order is cancelled (filter-only).
    pub cancelled: bool,
}

/// The parameters of a status change, shared by the single and bulk endpoints.
#[derive(Debug, Clone)]
pub(crate) struct StatusChange {
    /// The target status.
    pub status: &'static StatusInfo,
    /// Optional comment for the history item.
    pub comment: Option<String>,
    /// Whether the comment is public.
    pub public: bool,
    /// Whether to e-mail the customer (adds a `mail_log`).
    pub email_customer: bool,
}

/// `GET /orders` filters, already validated.
#[derive(Debug, Clone, Default)]
pub(crate) struct ListFilter {
    /// Case-insensitive substring of name, number, customer name or e-mail.
    pub search: Option<String>,
    /// Exact status code.
    pub status_code: Option<String>,
    /// Tags that must all be present (case-insensitive).
    pub tags: Vec<String>,
    /// Tags of which one must be present (case-insensitive).
    pub tags_any: Vec<String>,
    /// Accepted financial statuses; empty accepts all.
    pub financial_status: Vec<String>,
    /// Accepted fulfillment statuses; empty accepts all.
    pub fulfillment_status: Vec<String>,
    /// Drop cancelled orders.
    pub exclude_cancelled: bool,
    /// Earliest due date, inclusive.
    pub due_date_from: Option<NaiveDate>,
    /// Latest due date, inclusive.
    pub due_date_to: Option<NaiveDate>,
}

/// Why a status change was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ChangeError {
    /// No order has the id.
    NotFound,
    /// The order's current status does not allow the move.
    NotViable,
}

impl OrderRecord {
    /// `#1001`.
    pub fn name(&self) -> String {
        format!("#{}", self.order_number)
    }

    fn status_info(&self) -> Option<&'static StatusInfo> {
        self.status
            .as_ref()
            .and_then(|status| seed::status_info(status.code))
    }

    /// The `status` object.
    pub fn status_view(&self) -> Status {
        let (Some(current), Some(info)) = (&self.status, self.status_info()) else {
            return Status {
                is_set: false,
                code: None,
                name: None,
                public_name: None,
                description: None,
                public: false,
                set_at: None,
                auto_change_at: None,
                translations: BTreeMap::new(),
            };
        };
        Status {
            is_set: true,
            code: Some(info.code.to_owned()),
            name: Some(info.name.to_owned()),
            public_name: info.public_name.map(str::to_owned),
            description: Some(info.description.to_owned()),
            public: info.public(),
            set_at: Some(clock::format_datetime(current.set_at)),
            auto_change_at: info
                .auto_change_after_days
                .map(|days| clock::format_datetime(current.set_at + ChronoDuration::days(days))),
            translations: info
                .translations
                .iter()
                .map(|(locale, name, description)| {
                    (
                        (*locale).to_owned(),
                        StatusTranslation {
                            name: (*name).to_owned(),
                            description: (*description).to_owned(),
                        },
                    )
                })
                .collect(),
        }
    }

    /// The public progress timeline: steps up to the current status's stage
    /// carry the time of their latest `status_change`, later steps `null`.
    pub fn timeline(&self) -> Vec<TimelineItem> {
        let reached = self.status_info().map(|info| info.stage);
        seed::TIMELINE
            .iter()
            .enumerate()
            .map(|(index, (code, progress))| {
                let info = seed::status_info(code).expect("timeline codes are in the catalog");
                let timestamp = reached
                    .filter(|&stage| index <= stage)
                    .and_then(|_| {
                        self.history.iter().rev().find(|item| {
                            item.event == "status_change"
                                && item.status.as_deref() == Some(info.name)
                        })
                    })
                    .map(|item| item.created_at.clone());
                TimelineItem {
                    name: info.public_name.unwrap_or(info.name).to_owned(),
                    description: info.description.to_owned(),
                    progress: *progress,
                    timestamp,
                }
            })
            .collect()
    }

    /// The row shape of `GET /orders`.
    pub fn list_item(&self) -> OrderListItem {
        OrderListItem {
            id: self.id,
            name: self.name(),
            order_number: self.order_number.clone(),
            customer: self.customer.clone(),
            status: self.status_view(),
            due_date: self.due_date.map(clock::format_date),
            due_date_to: self.due_date_to.map(clock::format_date),
            history_count: self.history.len(),
        }
    }

    /// The full order shape.
    pub fn order(&self) -> Order {
        Order {
            id: self.id,
            name: self.name(),
            order_number: self.order_number.clone(),
            customer: self.customer.clone(),
            status: self.status_view(),
            due_date: self.due_date.map(clock::format_date),
            due_date_to: self.due_date_to.map(clock::format_date),
            history: self.history.clone(),
            public_progress_timeline: self.timeline(),
        }
    }

    /// Codes this order may move to, in catalog order.
    pub fn viable_codes(&self) -> Vec<&'static str> {
        seed::viable_next(self.status.as_ref().map(|status| status.code))
    }

    /// Whether the order may move to `code`.
    pub fn is_viable(&self, code: &str) -> bool {
        self.viable_codes().contains(&code)
    }

    /// Sets the status and records the change in the history.
    pub fn apply_status(&mut self, change: &StatusChange, at: DateTime<Utc>) {
        let info = change.status;
        self.status = Some(CurrentStatus {
            code: info.code,
            set_at: at,
        });
        let mail_log = change.email_customer.then(|| MailLog {
            from: seed::MAIL_FROM.to_owned(),
            to: self.customer.email.clone(),
            subject: seed::mail_subject(&self.name(), info),
            delivery_status: "queued".to_owned(),
        });
        self.history.push(HistoryItem {
            event: "status_change".to_owned(),
            status: Some(info.name.to_owned()),
            comment: change.comment.clone(),
            comment_is_public: change.public,
            created_at: clock::format_datetime(at),
            mail_log,
        });
    }

    /// Appends a `comment_added` item.
    pub fn add_comment(&mut self, comment: String, public: bool, at: DateTime<Utc>) {
        self.history.push(HistoryItem {
            event: "comment_added".to_owned(),
            status: None,
            comment: Some(comment),
            comment_is_public: public,
            created_at: clock::format_datetime(at),
            mail_log: None,
        });
    }

    /// Sets (or with `None`, clears) the due date and range, and records it.
    pub fn set_due_date(
        &mut self,
        due_date: Option<NaiveDate>,
        due_date_to: Option<NaiveDate>,
        at: DateTime<Utc>,
    ) {
        self.due_date = due_date;
        self.due_date_to = due_date.and(due_date_to);
        let ymd = |date: NaiveDate| date.format("%Y-%m-%d").to_string();
        let (event, comment) = match (self.due_date, self.due_date_to) {
            (None, _) => ("due_date_cleared", "Due date cleared.".to_owned()),
            (Some(from), None) => ("due_date_set", format!("Due date set to {}.", ymd(from))),
            (Some(from), Some(to)) => (
                "due_date_set",
                format!("Due date set to {} – {}.", ymd(from), ymd(to)),
            ),
        };
        self.history.push(HistoryItem {
            event: event.to_owned(),
            status: None,
            comment: Some(comment),
            comment_is_public: false,
            created_at: clock::format_datetime(at),
            mail_log: None,
        });
    }

    /// Whether the order passes every filter.
    pub fn matches(&self, filter: &ListFilter) -> bool {
        let has_tag =
            |wanted: &String| self.tags.iter().any(|tag| tag.eq_ignore_ascii_case(wanted));
        if let Some(search) = &filter.search {
            let needle = search.to_lowercase();
            let haystacks = [
                self.name(),
                self.order_number.clone(),
                self.customer.name.clone(),
                self.customer.email.clone(),
            ];
            if !haystacks
                .iter()
                .any(|hay| hay.to_lowercase().contains(&needle))
            {
                return false;
            }
        }
        if let Some(code) = &filter.status_code
            && self.status.as_ref().map(|status| status.code) != Some(code.as_str())
        {
            return false;
        }
        if !filter.tags.iter().all(has_tag) {
            return false;
        }
        if !filter.tags_any.is_empty() && !filter.tags_any.iter().any(has_tag) {
            return false;
        }
        if !filter.financial_status.is_empty()
            && !filter.financial_status.contains(&self.financial_status)
        {
            return false;
        }
        if !filter.fulfillment_status.is_empty()
            && !filter.fulfillment_status.contains(&self.fulfillment_status)
        {
            return false;
        }
        if filter.exclude_cancelled && self.cancelled {
            return false;
        }
        if filter.due_date_from.is_some() || filter.due_date_to.is_some() {
            let Some(due) = self.due_date else {
                return false;
            };
            if filter.due_date_from.is_some_and(|from| due < from)
                || filter.due_date_to.is_some_and(|to| due > to)
            {
                return false;
            }
        }
        true
    }
}

/// All orders, behind one lock.
#[derive(Debug)]
pub(crate) struct Store {
    /// Orders by id; iteration in reverse gives newest first.
    orders: Mutex<BTreeMap<i64, OrderRecord>>,
}

impl Store {
    /// A store holding the seed and `extra` more orders after it: copies
    /// of the seeded orders, in turn, each with the next id and number.
    pub fn seeded_with(extra: usize) -> Self {
        let seeded = seed::records();
        let mut next_id = seeded.last().map_or(seed::FIRST_ORDER_ID, |r| r.id + 1);
        let mut next_number = 1001 + seeded.len();
        let copies: Vec<OrderRecord> = seeded
            .iter()
            .cycle()
            .take(extra)
            .map(|record| {
                let mut copy = record.clone();
                copy.id = next_id;
                copy.order_number = next_number.to_string();
                next_id += 1;
                next_number += 1;
                copy
            })
            .collect();
        let orders = seeded
            .into_iter()
            .chain(copies)
            .map(|record| (record.id, record))
            .collect();
        Self {
            orders: Mutex::new(orders),
        }
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<i64, OrderRecord>> {
        self.orders
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// One page of matching orders, newest id first, with Laravel meta.
    pub fn list(&self, filter: &ListFilter, page: u64, per_page: u64) -> OrderPage {
        let orders = self.lock();
        let matching: Vec<&OrderRecord> = orders
            .values()
            .rev()
            .filter(|record| record.matches(filter))
            .collect();
        let total = matching.len() as u64;
        let last_page = total.div_ceil(per_page).max(1);
        let skip = page.saturating_sub(1).saturating_mul(per_page);
        let data: Vec<OrderListItem> = matching
            .into_iter()
            .skip(usize::try_from(skip).unwrap_or(usize::MAX))
            .take(per_page as usize)
            .map(OrderRecord::list_item)
            .collect();
        let (from, to) = if data.is_empty() {
            (None, None)
        } else {
            (Some(skip + 1), Some(skip + data.len() as u64))
        };
        OrderPage {
            data,
            meta: PageMeta {
                current_page: page,
                from,
                last_page,
                per_page,
                to,
                total,
            },
        }
    }

    /// The order with `id`.
    pub fn order(&self, id: i64) -> Option<Order> {
        self.lock().get(&id).map(OrderRecord::order)
    }

    /// Every order, oldest id first.
    pub fn orders(&self) -> Vec<Order> {
        self.lock().values().map(OrderRecord::order).collect()
    }

    /// The order with this number (no `#`) and e-mail (any case).
    pub fn lookup(&self, number: &str, email: &str) -> Option<Order> {
        self.lock()
            .values()
            .find(|record| {
                record.order_number == number && record.customer.email.eq_ignore_ascii_case(email)
            })
            .map(OrderRecord::order)
    }

    /// Whether an order with `id` exists.
    pub fn exists(&self, id: i64) -> bool {
        self.lock().contains_key(&id)
    }

    /// The statuses the order may move to, in catalog order.
    pub fn viable_statuses(&self, id: i64) -> Option<Vec<StatusDefinition>> {
        self.lock().get(&id).map(|record| {
            record
                .viable_codes()
                .into_iter()
                .filter_map(seed::status_info)
                .map(StatusInfo::definition)
                .collect()
        })
    }

    /// Applies a status change if the order exists and the move is viable.
    pub fn change_status(&self, id: i64, change: &StatusChange) -> Result<(), ChangeError> {
        let mut orders = self.lock();
        let record = orders.get_mut(&id).ok_or(ChangeError::NotFound)?;
        if !record.is_viable(change.status.code) {
            return Err(ChangeError::NotViable);
        }
        record.apply_status(change, clock::now());
        Ok(())
    }

    /// Runs `f` on the order with `id`; `None` if there is none.
    pub fn update<R>(&self, id: i64, f: impl FnOnce(&mut OrderRecord) -> R) -> Option<R> {
        self.lock().get_mut(&id).map(f)
    }
}
