//! Walking a paginated listing page by page, with a cap.
//!
//! `list_orders` without `page` collects pages (100 rows each by default)
//! until the last one, or until the pages its `limit` allows, or
//! [`MAX_PAGES`], were read; it then says that it stopped early and where
//! to continue. The walk is generic over how a
//! page is fetched so its stopping rules are tested without an API.
//!
//! Never a silent retry. A failed first page fails the walk: nothing was
//! read, and the caller gets the error. A later page that fails for a
//! reason that passes (a 429 with its `retry_after_ms`, a 5xx or timeout)
//! ends the walk with what was read, the error, and the page to resume
//! from, so a long walk that meets the 60-requests-a-minute limit loses
//! nothing. Any other failure fails the walk.

use toolhost_sdk::{ErrorCode, ToolError};

/// Rows per page when walking.
pub const WALK_PER_PAGE: u32 = 100;

/// Most pages one walk reads. With 100 rows a page that is 10,000 orders;
/// the API's 60 requests a minute make longer walks fail anyway.
pub const MAX_PAGES: u32 = 100;

/// One fetched page.
#[derive(Debug, Clone)]
pub struct Page<T> {
    /// Its rows.
    pub items: Vec<T>,
    /// The last page there is, as the API reported it.
    pub last_page: u64,
    /// Rows over all pages, as the API reported it.
    pub total: u64,
}

/// What a walk collected.
#[derive(Debug, Clone)]
pub struct Walk<T> {
    /// Rows of every page read, in order.
    pub items: Vec<T>,
    /// Pages read.
    pub pages_read: u32,
    /// The last page there is, from the latest page read.
    pub last_page: u64,
    /// Rows over all pages, from the latest page read.
    pub total: u64,
    /// The first page not read, when the walk stopped early (at the cap,
    /// or at a page that failed).
    pub next_page: Option<u64>,
    /// Why the page at `next_page` could not be read, when one failed.
    pub interrupted: Option<ToolError>,
}

/// Reads pages 1, 2, … with `fetch` until the last page, an empty page,
/// `max_pages` pages, or a page after the first that fails with
/// `RATE_LIMIT` or `TRANSIENT` (see the module docs).
/// `on_page(pages_read, pages_expected)` runs after each page, e.g. to
/// report progress.
pub fn walk<T>(
    max_pages: u32,
    mut fetch: impl FnMut(u64) -> Result<Page<T>, ToolError>,
    mut on_page: impl FnMut(u32, u64),
) -> Result<Walk<T>, ToolError> {
    let mut walk = Walk {
        items: Vec::new(),
        pages_read: 0,
        last_page: 1,
        total: 0,
        next_page: None,
        interrupted: None,
    };
    let mut page = 1u64;
    loop {
        let fetched = match fetch(page) {
            Ok(fetched) => fetched,
            Err(e) if page > 1 && resumable(&e) => {
                walk.next_page = Some(page);
                walk.interrupted = Some(e);
                return Ok(walk);
            }
            Err(e) => return Err(e),
        };
        walk.pages_read += 1;
        walk.last_page = fetched.last_page.max(1);
        walk.total = fetched.total;
        let empty = fetched.items.is_empty();
        walk.items.extend(fetched.items);
        on_page(walk.pages_read, walk.last_page.min(max_pages.into()));
        if empty || page >= walk.last_page {
            return Ok(walk);
        }
        if walk.pages_read >= max_pages {
            walk.next_page = Some(page + 1);
            return Ok(walk);
        }
        page += 1;
    }
}

/// Whether asking for the same page later may succeed.
fn resumable(error: &ToolError) -> bool {
    matches!(error.code, ErrorCode::RateLimit | ErrorCode::Transient)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listing of `total` numbered rows, `per_page` a page.
    fn listing(total: u64, per_page: u64) -> impl FnMut(u64) -> Result<Page<u64>, ToolError> {
        move |page| {
            let start = (page - 1) * per_page;
            let end = (start + per_page).min(total);
            Ok(Page {
                items: (start.min(end)..end).collect(),
                last_page: total.div_ceil(per_page).max(1),
                total,
            })
        }
    }

    #[test]
    fn it_reads_every_page_in_order() {
        let mut seen = Vec::new();
        let walk = walk(100, listing(48, 10), |read, of| seen.push((read, of))).unwrap();
        assert_eq!(walk.items, (0..48).collect::<Vec<_>>());
        assert_eq!((walk.pages_read, walk.last_page, walk.total), (5, 5, 48));
        assert_eq!(walk.next_page, None);
        assert_eq!(seen, [(1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]);
    }

    #[test]
    fn it_stops_at_the_cap_and_says_where_to_continue() {
        let walk = walk(100, listing(10_050, 100), |_, _| {}).unwrap();
        assert_eq!(walk.pages_read, 100);
        assert_eq!(walk.items.len(), 10_000);
        assert_eq!(walk.last_page, 101);
        assert_eq!(walk.next_page, Some(101));
    }

    #[test]
    fn an_empty_listing_is_one_page() {
        let walk = walk(100, listing(0, 100), |_, _| {}).unwrap();
        assert_eq!(
            (walk.pages_read, walk.items.len(), walk.next_page),
            (1, 0, None)
        );
    }

    /// A listing of 300 rows, 100 a page, whose page `failing` fails with `code`.
    fn failing_at(failing: u64, code: ErrorCode) -> (Result<Walk<u64>, ToolError>, u32) {
        let mut calls = 0;
        let result = walk(
            100,
            |page| {
                calls += 1;
                if page == failing {
                    Err(ToolError::new(code, "slow down").with_retry_after_ms(7000))
                } else {
                    listing(300, 100)(page)
                }
            },
            |_, _| {},
        );
        (result, calls)
    }

    #[test]
    fn a_rate_limited_page_ends_the_walk_with_what_was_read_without_retrying() {
        let (result, calls) = failing_at(3, ErrorCode::RateLimit);
        let walk = result.unwrap();
        assert_eq!(calls, 3, "no retry");
        assert_eq!(walk.items, (0..200).collect::<Vec<_>>());
        assert_eq!((walk.pages_read, walk.next_page), (2, Some(3)));
        let why = walk.interrupted.unwrap();
        assert_eq!(
            (why.code, why.retry_after_ms),
            (ErrorCode::RateLimit, Some(7000))
        );
        let (result, _) = failing_at(2, ErrorCode::Transient);
        assert_eq!(result.unwrap().next_page, Some(2));
    }

    #[test]
    fn a_failed_first_page_or_a_lasting_failure_fails_the_walk() {
        let (result, calls) = failing_at(1, ErrorCode::RateLimit);
        assert_eq!(result.unwrap_err().code, ErrorCode::RateLimit);
        assert_eq!(calls, 1);
        let (result, calls) = failing_at(2, ErrorCode::PermissionDenied);
        assert_eq!(result.unwrap_err().code, ErrorCode::PermissionDenied);
        assert_eq!(calls, 2);
    }
}
