//! Walking a paginated listing page by page, with a cap.
//!
//! `list_orders` without `page` collects every page (100 rows each) until
//! the last one, or until [`MAX_PAGES`] pages were read; it then says that
//! it stopped early and where to continue. The walk is generic over how a
//! page is fetched so its stopping rules are tested without an API.
//!
//! A failed page fails the walk: the caller gets the error (a 429 with its
//! `retry_after_ms`), never a silent retry.

use toolhost_sdk::ToolError;

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
    /// The first page not read, when the walk stopped at the cap.
    pub next_page: Option<u64>,
}

/// Reads pages 1, 2, … with `fetch` until the last page, an empty page, or
/// `max_pages` pages. `on_page(pages_read, pages_expected)` runs after each
/// page, e.g. to report progress.
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
    };
    let mut page = 1u64;
    loop {
        let fetched = fetch(page)?;
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

    #[test]
    fn a_failed_page_fails_the_walk_without_retrying() {
        let mut calls = 0;
        let result = walk(
            100,
            |page| {
                calls += 1;
                if page == 2 {
                    Err(ToolError::new(
                        toolhost_sdk::ErrorCode::RateLimit,
                        "slow down",
                    ))
                } else {
                    listing(300, 100)(page)
                }
            },
            |_, _| {},
        );
        assert_eq!(result.unwrap_err().code, toolhost_sdk::ErrorCode::RateLimit);
        assert_eq!(calls, 2);
    }
}
