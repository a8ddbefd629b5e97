//! The Katana API client, over the host's `http` import.
//!
//! The base URL is the operator's `base_url` setting, by default
//! [`DEFAULT_BASE_URL`]. The API key is not read here: the host adds
//! `Authorization` to every request for the API's host from its
//! `credentials` configuration.
//!
//! Every failure is a tool error in the shared vocabulary
//! ([`crate::error`]). A request is retried at most once per call, and only
//! when the wait fits the call's time ([`retry_wait`]): after a 429 (any
//! method: Katana did not process it) and after a 502–504 to a `GET`.
//!
//! The call's time is counted the way the host counts it: from the start of
//! the call, leaving out the time the user took to answer a confirmation
//! ([`Client::confirm`]). The host extends the call's deadline by that
//! wait, so a slow "yes" must not cost the write its retry.

use std::cell::Cell;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde::de::DeserializeOwned;
use toolhost_sdk::confirm::{Confirmation, require_confirmation};
use toolhost_sdk::http::{self, Method, Request, Response};
use toolhost_sdk::{ToolError, config};

use crate::api;
use crate::error::{after_write, api_error, unreadable_answer};

/// Katana's API root, used when the operator sets no `base_url`.
pub const DEFAULT_BASE_URL: &str = "https://api.katanamrp.com/v1";

/// Rows per page when listing: Katana's maximum (larger limits are clamped).
pub const PAGE_SIZE: usize = 250;

/// Pages one walk reads at most (62,500 variants at [`PAGE_SIZE`]), so a
/// walk stays well inside the host's 200 requests per call.
pub const MAX_PAGES: u32 = 100;

/// Longest wait before the one retry.
pub const MAX_RETRY_WAIT_MS: u64 = 5_000;

/// The retry must start this soon after the call began (confirmation wait
/// excluded): the host's default call limit is 30 s, and the retried
/// request needs time too. The operator's `retry_deadline_ms` setting
/// ([`RETRY_DEADLINE_SETTING`]) replaces it.
pub const RETRY_DEADLINE_MS: u64 = 20_000;

/// The `config` key that sets the retry deadline in milliseconds; lower it
/// together with the host's `limits.call_timeout_secs`.
pub const RETRY_DEADLINE_SETTING: &str = "retry_deadline_ms";

/// How long to wait after a 502–504 that carries no `Retry-After`.
const GATEWAY_RETRY_MS: u64 = 500;

/// How long to wait after a 429 that carries no `Retry-After`.
const RATE_LIMIT_RETRY_MS: u64 = 1_000;

/// Ids per `GET /variants?ids=…` request, to keep URLs short.
const IDS_PER_REQUEST: usize = 100;

/// Whether to retry a request that answered `status`, and after how many
/// milliseconds: never when the call already retried once, only for a 429
/// (any method) or a 502–504 to a `GET`, and only when the wait is at most
/// [`MAX_RETRY_WAIT_MS`] and ends before `deadline_ms` (counted, like
/// `elapsed_ms`, from the start of the call).
pub fn retry_wait(
    is_get: bool,
    status: u16,
    retry_after_ms: Option<u64>,
    elapsed_ms: u64,
    deadline_ms: u64,
    already_retried: bool,
) -> Option<u64> {
    if already_retried {
        return None;
    }
    let wait = match status {
        429 => retry_after_ms.unwrap_or(RATE_LIMIT_RETRY_MS),
        502..=504 if is_get => retry_after_ms.unwrap_or(GATEWAY_RETRY_MS),
        _ => return None,
    };
    (wait <= MAX_RETRY_WAIT_MS && elapsed_ms.saturating_add(wait) <= deadline_ms).then_some(wait)
}

/// Reads every page: `fetch(page)` returns a page's rows and its
/// `X-Pagination`. Stops at an empty page, at the page the header calls
/// the last, without a header at a short page, or after `max_pages`.
/// Returns the rows and whether the walk reached the end.
pub fn walk_pages<T>(
    page_size: usize,
    max_pages: u32,
    mut fetch: impl FnMut(u32) -> Result<(Vec<T>, Option<api::Pagination>), ToolError>,
) -> Result<(Vec<T>, bool), ToolError> {
    let mut all = Vec::new();
    for page in 1..=max_pages {
        let (rows, pagination) = fetch(page)?;
        let count = rows.len();
        all.extend(rows);
        let last = match pagination.as_ref().and_then(api::Pagination::is_last) {
            Some(last) => last,
            None => count < page_size,
        };
        if count == 0 || last {
            return Ok((all, true));
        }
    }
    Ok((all, false))
}

/// A client for one call.
#[derive(Debug)]
pub struct Client {
    /// The API root.
    base_url: String,
    /// When the call began, moved later by every confirmation wait: the
    /// origin of the retry deadline.
    started: Cell<Instant>,
    /// Milliseconds after `started` by which the one retry must start.
    retry_deadline_ms: u64,
    /// Whether this call already used its one retry.
    retried: Cell<bool>,
}

impl Client {
    /// A client for the API at the operator's `base_url` setting, or
    /// Katana's own, with the operator's `retry_deadline_ms` if set.
    pub fn from_config() -> Result<Client, ToolError> {
        let base_url = config::get("base_url").unwrap_or_else(|| DEFAULT_BASE_URL.to_string());
        let deadline = match config::get(RETRY_DEADLINE_SETTING) {
            None => RETRY_DEADLINE_MS,
            Some(text) => parse_deadline(&text)?,
        };
        Ok(Client::new(&base_url).with_retry_deadline_ms(deadline))
    }

    /// A client for the API at `base_url`.
    pub fn new(base_url: &str) -> Client {
        Client {
            base_url: base_url.to_string(),
            started: Cell::new(Instant::now()),
            retry_deadline_ms: RETRY_DEADLINE_MS,
            retried: Cell::new(false),
        }
    }

    /// Sets how long after the call began the one retry may still start.
    pub fn with_retry_deadline_ms(mut self, millis: u64) -> Client {
        self.retry_deadline_ms = millis;
        self
    }

    /// Asks the user to approve `question` (see
    /// [`require_confirmation`]). The time the answer took does not count
    /// against the retry deadline, as the host does not count it against
    /// the call's.
    pub fn confirm(&self, question: &str) -> Confirmation {
        let asked = Instant::now();
        let answer = require_confirmation(question);
        self.leave_out(asked.elapsed());
        answer
    }

    /// Moves the start of the call later by `wait`, time that is not the
    /// call's own (a confirmation).
    fn leave_out(&self, wait: Duration) {
        self.started.set(self.started.get() + wait);
    }

    /// Milliseconds since the call began, confirmation waits left out.
    fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.started.get().elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The absolute URL of `path` (which starts with `/`).
    pub fn url(&self, path: &str) -> String {
        http::join(&self.base_url, path)
    }

    /// Sends `request` (`method`), retrying once when [`retry_wait`]
    /// allows. Answers of any status are `Ok`; a request that got no answer
    /// is an error naming it.
    fn send(&self, request: Request, method: Method) -> Result<Response, ToolError> {
        let response = request.clone().send()?;
        let Some(wait) = retry_wait(
            method == Method::Get,
            response.status,
            response.retry_after_ms(),
            self.elapsed_ms(),
            self.retry_deadline_ms,
            self.retried.get(),
        ) else {
            return Ok(response);
        };
        self.retried.set(true);
        toolhost_sdk::log::info(&format!(
            "{} answered {}; retrying once in {wait} ms",
            response.request_line, response.status
        ));
        std::thread::sleep(Duration::from_millis(wait));
        request.send()
    }

    /// `GET path?query`, parsed as `T`; `missing` names what a 404 means.
    pub fn get<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
        missing: &str,
    ) -> Result<T, ToolError> {
        let response = self.send(Request::get(self.url(path)).query(query), Method::Get)?;
        if !response.is_success() {
            return Err(api_error(&response, missing));
        }
        response.json()
    }

    /// One page of a list endpoint, with its `X-Pagination`.
    fn page<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
        page: u32,
    ) -> Result<(Vec<T>, Option<api::Pagination>), ToolError> {
        let mut query = query.to_vec();
        query.push(("limit", PAGE_SIZE.to_string()));
        query.push(("page", page.to_string()));
        let response = self.send(Request::get(self.url(path)).query(&query), Method::Get)?;
        if !response.is_success() {
            return Err(api_error(&response, "such list"));
        }
        let list: api::List<T> = response.json()?;
        let pagination = response
            .header("x-pagination")
            .and_then(api::Pagination::parse);
        Ok((list.data, pagination))
    }

    /// Every row of a list endpoint, page by page.
    pub fn all<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<Vec<T>, ToolError> {
        let (rows, complete) =
            walk_pages(PAGE_SIZE, MAX_PAGES, |page| self.page(path, query, page))?;
        if !complete {
            toolhost_sdk::log::warn(&format!(
                "GET {path}: stopped after {MAX_PAGES} pages ({} rows)",
                rows.len()
            ));
        }
        Ok(rows)
    }

    /// Sends a change: `method path` with a JSON `body`. A refusal is a tool
    /// error; a 5xx gets a hint to `check` before trying again, since the
    /// change may have been made.
    pub fn write<B: Serialize + ?Sized>(
        &self,
        method: Method,
        path: &str,
        body: &B,
        missing: &str,
        check: &str,
    ) -> Result<Response, ToolError> {
        let request = Request::new(method, self.url(path)).json(body)?;
        let response = self
            .send(request, method)
            .map_err(|e| after_write(e, check))?;
        if !response.is_success() {
            return Err(after_write(api_error(&response, missing), check));
        }
        Ok(response)
    }

    /// [`Client::write`], then the answer parsed as `T`, with its HTTP
    /// status (the report's `status_code`). An answer that cannot be read is
    /// an error saying the change was nevertheless made.
    pub fn write_json<T: DeserializeOwned, B: Serialize + ?Sized>(
        &self,
        method: Method,
        path: &str,
        body: &B,
        missing: &str,
        check: &str,
    ) -> Result<(u16, T), ToolError> {
        let response = self.write(method, path, body, missing, check)?;
        let parsed = response.json().map_err(|e| unreadable_answer(e, check))?;
        Ok((response.status, parsed))
    }

    /// E1: every variant, with its product or material (for names).
    pub fn variants(&self) -> Result<Vec<api::Variant>, ToolError> {
        self.all(
            "/variants",
            &[("extend", "product_or_material".to_string())],
        )
    }

    /// E1 for the variants `ids` (unknown ids are simply absent).
    pub fn variants_by_id(&self, ids: &[u64]) -> Result<Vec<api::Variant>, ToolError> {
        let mut unique: Vec<u64> = ids.to_vec();
        unique.sort_unstable();
        unique.dedup();
        let mut variants = Vec::new();
        for chunk in unique.chunks(IDS_PER_REQUEST) {
            let query: Vec<(&str, String)> =
                chunk.iter().map(|id| ("ids", id.to_string())).collect();
            variants.extend(self.all::<api::Variant>("/variants", &query)?);
        }
        Ok(variants)
    }

    /// E3: one purchase order.
    pub fn purchase_order(&self, id: u64) -> Result<api::PurchaseOrder, ToolError> {
        self.get(
            &format!("/purchase_orders/{id}"),
            &[],
            &format!("purchase order {id}"),
        )
    }

    /// E6: one manufacturing order.
    pub fn manufacturing_order(&self, id: u64) -> Result<api::ManufacturingOrder, ToolError> {
        self.get(
            &format!("/manufacturing_orders/{id}"),
            &[],
            &format!("manufacturing order {id}"),
        )
    }

    /// E8: one sales order.
    pub fn sales_order(&self, id: u64) -> Result<api::SalesOrder, ToolError> {
        self.get(
            &format!("/sales_orders/{id}"),
            &[],
            &format!("sales order {id}"),
        )
    }
}

/// The `retry_deadline_ms` setting's value, or an error telling the
/// operator what to write.
fn parse_deadline(text: &str) -> Result<u64, ToolError> {
    text.trim().parse().map_err(|_| {
        ToolError::internal(format!(
            "the setting {RETRY_DEADLINE_SETTING} = {text:?} is not a number of milliseconds"
        ))
        .with_hint(format!(
            "set `{RETRY_DEADLINE_SETTING} = \"20000\"` (or leave it out) under \
             [plugins.katana] config in toolhost.toml"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_join_without_double_slashes() {
        let client = Client::new("http://127.0.0.1:8080/v1/");
        assert_eq!(client.url("/variants"), "http://127.0.0.1:8080/v1/variants");
    }

    const DEADLINE: u64 = RETRY_DEADLINE_MS;

    #[test]
    fn a_429_is_retried_once_for_any_method_when_the_wait_fits() {
        assert_eq!(
            retry_wait(false, 429, Some(1000), 0, DEADLINE, false),
            Some(1000)
        );
        assert_eq!(retry_wait(true, 429, None, 0, DEADLINE, false), Some(1000));
        assert_eq!(
            retry_wait(true, 429, Some(1000), 0, DEADLINE, true),
            None,
            "once"
        );
        assert_eq!(
            retry_wait(true, 429, Some(30_000), 0, DEADLINE, false),
            None,
            "too long"
        );
        assert_eq!(
            retry_wait(true, 429, Some(2000), 19_000, DEADLINE, false),
            None,
            "past the deadline"
        );
        assert_eq!(
            retry_wait(true, 429, Some(2000), 19_000, 30_000, false),
            Some(2000),
            "the operator's deadline"
        );
    }

    #[test]
    fn gateway_errors_are_retried_for_gets_only() {
        for status in [502, 503, 504] {
            assert_eq!(
                retry_wait(true, status, None, 0, DEADLINE, false),
                Some(500)
            );
            assert_eq!(retry_wait(false, status, None, 0, DEADLINE, false), None);
        }
        for status in [200, 204, 400, 401, 404, 422, 500] {
            assert_eq!(
                retry_wait(true, status, None, 0, DEADLINE, false),
                None,
                "{status}"
            );
        }
    }

    #[test]
    fn a_confirmation_wait_is_left_out_of_the_calls_time() {
        let client = Client::new("http://127.0.0.1:8080/v1");
        client.leave_out(Duration::from_secs(60));
        // The call began (moved) a minute from now: no time has passed.
        assert_eq!(client.elapsed_ms(), 0);
    }

    #[test]
    fn the_deadline_setting_is_milliseconds() {
        assert_eq!(parse_deadline(" 1500 ").unwrap(), 1500);
        let e = parse_deadline("20s").unwrap_err();
        assert!(e.message.contains("retry_deadline_ms"), "{e}");
        assert!(e.hint.unwrap().contains("toolhost.toml"));
    }

    fn pages(sizes: &[usize], header: bool) -> (Vec<usize>, bool, u32) {
        let mut calls = 0;
        let total = sizes.len();
        let (rows, complete) = walk_pages(3, 5, |page| {
            calls += 1;
            let size = sizes.get(page as usize - 1).copied().unwrap_or(0);
            let pagination = header.then(|| api::Pagination {
                total_pages: Some(total as f64),
                page: Some(f64::from(page)),
                last_page: None,
            });
            Ok(((0..size).collect(), pagination))
        })
        .unwrap();
        (rows, complete, calls)
    }

    #[test]
    fn a_walk_reads_every_page_and_stops_at_the_last() {
        let (rows, complete, calls) = pages(&[3, 3, 2], true);
        assert_eq!((rows.len(), complete, calls), (8, true, 3));
        // Without a header, a short page is the last.
        let (rows, complete, calls) = pages(&[3, 3, 2], false);
        assert_eq!((rows.len(), complete, calls), (8, true, 3));
        // A full last page: the header says so; without it, one empty page more.
        assert_eq!(pages(&[3, 3], true).2, 2);
        assert_eq!(pages(&[3, 3], false).2, 3);
        // The cap.
        let (rows, complete, calls) = pages(&[3; 9], false);
        assert_eq!((rows.len(), complete, calls), (15, false, 5));
    }
}
