//! `list_orders`: search and filter orders, one page or all of them up to
//! a limit.
//!
//! Without `page` it walks pages of `per_page` rows (100 by default, the
//! API's maximum) and stops at the first of: the last page, `limit` orders
//! (whole pages only, so `next_page` resumes exactly), [`MAX_PAGES`]
//! pages, or a page the rate limit (or a 5xx) refused after the first. A
//! walk that stops early says so: `has_more`, `next_page` and a `note`, and
//! for a refused page the issue; it never fails whole. The default limit,
//! [`DEFAULT_LIMIT`] orders of about 200 bytes each, keeps the answer well
//! under the host's default 1 MiB output cap.

use toolhost_sdk::progress;

use crate::api;
use crate::inputs::{
    DATE_PATTERN, FinancialStatus, FulfillmentStatus, STATUS_CODE_PATTERN, check_date, check_range,
};
use crate::output::OrderSummary;
use crate::paging::{self, MAX_PAGES, Page, WALK_PER_PAGE};
use crate::prelude::*;

// Schema examples of the list filters: `example = …` takes a path or a
// literal, not an array expression.
/// Example of `tags`.
const EXAMPLE_TAGS: &[&str] = &["vip"];
/// Example of `tags_any`.
const EXAMPLE_TAGS_ANY: &[&str] = &["rush", "gift"];
/// Example of `financial_status`.
const EXAMPLE_FINANCIAL: &[FinancialStatus] = &[FinancialStatus::Paid];
/// Example of `fulfillment_status`.
const EXAMPLE_FULFILLMENT: &[FulfillmentStatus] = &[FulfillmentStatus::Unfulfilled];

/// Orders a walk returns when `limit` is not given: about 200 KB of
/// summaries, a fifth of the host's default output cap.
pub const DEFAULT_LIMIT: u32 = 1000;

/// The largest `limit`: about half of the host's default output cap.
pub const MAX_LIMIT: u32 = 2500;

fn default_limit() -> u32 {
    DEFAULT_LIMIT
}

fn default_per_page() -> u32 {
    WALK_PER_PAGE
}

/// Arguments of `list_orders`. Every filter is optional; filters combine with AND.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListOrdersInput {
    /// Text to search for, partial and case-insensitive, in the order name, order number, customer name and customer e-mail.
    #[serde(default)]
    #[schemars(example = &"Smith", length(min = 1, max = 255))]
    pub search: Option<String>,
    /// Only orders currently in this status: an 8-character code like `st000002` (see list_statuses).
    #[serde(default)]
    #[schemars(example = &"st000002", length(min = 8, max = 8), regex(pattern = STATUS_CODE_PATTERN))]
    pub status_code: Option<String>,
    /// Only orders carrying all of these Shopify tags.
    #[serde(default)]
    #[schemars(example = EXAMPLE_TAGS, length(max = 20), inner(length(min = 1, max = 255)))]
    pub tags: Vec<String>,
    /// Only orders carrying any of these Shopify tags (at least one).
    #[serde(default)]
    #[schemars(example = EXAMPLE_TAGS_ANY, length(max = 20), inner(length(min = 1, max = 255)))]
    pub tags_any: Vec<String>,
    /// Only orders in one of these payment states.
    #[serde(default)]
    #[schemars(example = EXAMPLE_FINANCIAL, length(max = 8))]
    pub financial_status: Vec<FinancialStatus>,
    /// Only orders in one of these shipping states.
    #[serde(default)]
    #[schemars(example = EXAMPLE_FULFILLMENT, length(max = 4))]
    pub fulfillment_status: Vec<FulfillmentStatus>,
    /// Leave out cancelled orders.
    #[serde(default)]
    #[schemars(example = true)]
    pub exclude_cancelled: bool,
    /// Only orders due on or after this date (YYYY-MM-DD).
    #[serde(default)]
    #[schemars(example = &"2026-03-01", regex(pattern = DATE_PATTERN), extend("format" = "date"))]
    pub due_date_from: Option<String>,
    /// Only orders due on or before this date (YYYY-MM-DD).
    #[serde(default)]
    #[schemars(example = &"2026-03-31", regex(pattern = DATE_PATTERN), extend("format" = "date"))]
    pub due_date_to: Option<String>,
    /// Return only this page (1-based) and its paging facts. Leave it out to get the matching orders up to limit: pages of per_page rows are read until the last one, limit, or 100 pages.
    #[serde(default)]
    #[schemars(example = 2, range(min = 1))]
    pub page: Option<u64>,
    /// Without page: the most orders to return (default 1000, at most 2500). Whole pages are read while they fit, so up to per_page fewer may come back; has_more, next_page and note then say how to get the rest.
    #[serde(default = "default_limit")]
    #[schemars(example = 200, range(min = 1, max = 2500))]
    pub limit: u32,
    /// Rows per page, 1 to 100 (without page, at most limit).
    #[serde(default = "default_per_page")]
    #[schemars(example = 50, range(min = 1, max = 100))]
    pub per_page: u32,
}

/// What `list_orders` returns.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ListOrdersOutput {
    /// The matching orders, newest first.
    pub orders: Vec<OrderSummary>,
    /// How many orders match the filters, over all pages.
    pub total: u64,
    /// The page returned, when one page was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u64>,
    /// Rows per page used.
    pub per_page: u32,
    /// The last page there is at this per_page.
    pub last_page: u64,
    /// How many pages were read.
    pub pages_read: u32,
    /// Whether matching orders exist beyond those returned.
    pub has_more: bool,
    /// The page to ask for next (same filters and per_page) to get more; absent when nothing is left.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_page: Option<u64>,
    /// Why fewer orders than total were returned, when that happens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Why the walk stopped before the last page, when a page could not be read (e.g. RATE_LIMIT with retry_after_ms); the orders read before it are returned.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub issues: Vec<ToolError>,
}

/// Lists orders.
pub struct ListOrders;

impl Tool for ListOrders {
    type Input = ListOrdersInput;
    type Output = ListOrdersOutput;
    const NAME: &'static str = "list_orders";
    const TITLE: &'static str = "List Orders";
    const DESCRIPTION: &'static str = "List StatusPro orders, optionally filtered by search \
        text, status, tags, payment or shipping state, cancellation and due-date range; use \
        it to find orders when you do not know their id. Without `page` it returns the \
        matching orders up to `limit` (default 1000); if it stops early, at the limit or at \
        the rate limit, it returns what it read with has_more, next_page and why. With \
        `page` it returns that page and how many pages there are. Rows are order summaries: \
        id, name, number, customer, current status and due date.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn call(&self, input: ListOrdersInput) -> Result<ListOrdersOutput, ToolError> {
        let filters = filters(&input)?;
        let client = Client::from_config()?;
        match input.page {
            Some(page) => {
                let per_page = input.per_page;
                one_page(
                    |page| fetch_page(&client, &filters, per_page, page),
                    page,
                    per_page,
                )
            }
            None => {
                let limit = input.limit.clamp(1, MAX_LIMIT);
                let per_page = input.per_page.min(limit);
                every_page(
                    |page| fetch_page(&client, &filters, per_page, page),
                    per_page,
                    limit,
                )
            }
        }
    }
}

/// The answer for one asked-for page.
fn one_page(
    fetch: impl FnOnce(u64) -> Result<Page<OrderSummary>, ToolError>,
    page: u64,
    per_page: u32,
) -> Result<ListOrdersOutput, ToolError> {
    let fetched = fetch(page)?;
    let has_more = page < fetched.last_page;
    Ok(ListOrdersOutput {
        orders: fetched.items,
        total: fetched.total,
        page: Some(page),
        per_page,
        last_page: fetched.last_page,
        pages_read: 1,
        has_more,
        next_page: has_more.then_some(page + 1),
        note: None,
        issues: Vec::new(),
    })
}

/// The answer with every page (up to `limit` orders in whole pages, and
/// [`MAX_PAGES`]), reporting progress after each.
fn every_page(
    fetch: impl FnMut(u64) -> Result<Page<OrderSummary>, ToolError>,
    per_page: u32,
    limit: u32,
) -> Result<ListOrdersOutput, ToolError> {
    let pages_in_limit = (limit / per_page.max(1)).max(1);
    let max_pages = MAX_PAGES.min(pages_in_limit);
    let walk = paging::walk(max_pages, fetch, |read, expected| {
        progress::report(
            read.into(),
            Some(expected as f64),
            Some(&format!("read page {read} of {expected}")),
        );
    })?;
    let read = walk.items.len();
    let note = walk.next_page.map(|next| match &walk.interrupted {
        None if max_pages < MAX_PAGES => format!(
            "Stopped at limit={limit} ({read} of {} orders, whole pages of {per_page}). Narrow \
             the filters, or ask for page={next} onwards one page at a time with the same \
             filters and per_page={per_page}.",
            walk.total
        ),
        None => format!(
            "Stopped after {MAX_PAGES} pages ({read} of {} orders). Narrow the filters, or ask \
             for page={next} onwards one page at a time with the same filters and \
             per_page={per_page}.",
            walk.total
        ),
        Some(why) => format!(
            "Stopped at page {next} of {}, which StatusPro did not return ({read} of {} orders \
             read; see issues). Ask for page={next} onwards one page at a time, with the same \
             filters and per_page{}.",
            walk.last_page,
            walk.total,
            why.retry_after_ms
                .map(|ms| format!(", after waiting {ms} ms"))
                .unwrap_or_default()
        ),
    });
    Ok(ListOrdersOutput {
        orders: walk.items,
        total: walk.total,
        page: None,
        per_page,
        last_page: walk.last_page,
        pages_read: walk.pages_read,
        has_more: walk.next_page.is_some(),
        next_page: walk.next_page,
        note,
        issues: walk.interrupted.into_iter().collect(),
    })
}

/// The query parameters for the filters, in the API's spelling
/// (`tags[]=a&tags[]=b`).
fn filters(input: &ListOrdersInput) -> Result<Vec<(&'static str, String)>, ToolError> {
    let mut query = Vec::new();
    if let Some(search) = &input.search {
        query.push(("search", search.clone()));
    }
    if let Some(code) = &input.status_code {
        query.push(("status_code", code.clone()));
    }
    query.extend(input.tags.iter().map(|t| ("tags[]", t.clone())));
    query.extend(input.tags_any.iter().map(|t| ("tags_any[]", t.clone())));
    query.extend(
        input
            .financial_status
            .iter()
            .map(|s| ("financial_status[]", s.as_str().to_string())),
    );
    query.extend(
        input
            .fulfillment_status
            .iter()
            .map(|s| ("fulfillment_status[]", s.as_str().to_string())),
    );
    if input.exclude_cancelled {
        query.push(("exclude_cancelled", "1".to_string()));
    }
    if let Some(from) = &input.due_date_from {
        check_date("due_date_from", from)?;
        query.push(("due_date_from", from.clone()));
    }
    if let Some(to) = &input.due_date_to {
        check_date("due_date_to", to)?;
        query.push(("due_date_to", to.clone()));
    }
    if let (Some(from), Some(to)) = (&input.due_date_from, &input.due_date_to) {
        check_range("due_date_from", from, "due_date_to", to)?;
    }
    Ok(query)
}

/// `GET /orders` for one page, projected.
fn fetch_page(
    client: &Client,
    filters: &[(&'static str, String)],
    per_page: u32,
    page: u64,
) -> Result<Page<OrderSummary>, ToolError> {
    let mut query = filters.to_vec();
    query.push(("per_page", per_page.to_string()));
    query.push(("page", page.to_string()));
    let body: api::OrderPage = client.get("/orders", &query)?;
    Ok(Page {
        items: body.data.iter().map(OrderSummary::from_api).collect(),
        last_page: body.meta.last_page.max(1),
        total: body.meta.total,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_use_the_apis_array_spelling() {
        let input = ListOrdersInput {
            search: Some("smith".into()),
            tags: vec!["vip".into(), "rush".into()],
            financial_status: vec![FinancialStatus::PartiallyPaid],
            exclude_cancelled: true,
            due_date_from: Some("2026-03-01".into()),
            ..Default::default()
        };
        let query = filters(&input).unwrap();
        assert_eq!(
            query,
            [
                ("search", "smith".to_string()),
                ("tags[]", "vip".to_string()),
                ("tags[]", "rush".to_string()),
                ("financial_status[]", "partially_paid".to_string()),
                ("exclude_cancelled", "1".to_string()),
                ("due_date_from", "2026-03-01".to_string()),
            ]
        );
    }

    #[test]
    fn impossible_dates_and_backwards_ranges_are_refused_before_any_request() {
        let input = ListOrdersInput {
            due_date_from: Some("2026-02-30".into()),
            ..Default::default()
        };
        assert!(filters(&input).is_err());
        let input = ListOrdersInput {
            due_date_from: Some("2026-03-10".into()),
            due_date_to: Some("2026-03-01".into()),
            ..Default::default()
        };
        assert!(filters(&input).is_err());
    }
}
