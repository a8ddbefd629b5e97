//! The five read tools' success paths: projections, filters, paging (one
//! page, and every page with progress, and a walk cut short by the rate
//! limit), history and its cap, lookups, the catalog and viable statuses.

use serde_json::{Value, json};
use statuspro_sandbox::{SandboxConfig, seed};

use super::{Setup, StatusPro};

/// The `id`s of a list result's rows.
fn ids(out: &Value) -> Vec<u64> {
    out["orders"]
        .as_array()
        .expect("an orders list")
        .iter()
        .map(|o| o["id"].as_u64().unwrap())
        .collect()
}

/// Every seeded order id matching `pred`, newest first (the API's order).
fn seeded(pred: impl Fn(&seed::SeedOrder) -> bool) -> Vec<u64> {
    let mut ids: Vec<u64> = seed::orders()
        .iter()
        .filter(|o| pred(o))
        .map(|o| o.id as u64)
        .collect();
    ids.reverse();
    ids
}

#[tokio::test]
async fn list_orders_without_page_walks_every_page_and_reports_progress() {
    let statuspro = StatusPro::start().await;
    let out = statuspro
        .host
        .ok("list_orders", json!({"per_page": 10}))
        .await;
    assert_eq!(ids(&out), seeded(|_| true), "all 48, newest first");
    assert_eq!(out["total"], 48);
    assert_eq!(out["pages_read"], 5);
    assert_eq!(out["last_page"], 5);
    assert_eq!(out["has_more"], false);
    assert!(out.get("next_page").is_none() && out.get("note").is_none());

    let pages: Vec<String> = statuspro
        .sandbox
        .requests()
        .iter()
        .map(|r| r.query.clone().unwrap_or_default())
        .collect();
    assert_eq!(
        pages,
        (1..=5)
            .map(|p| format!("per_page=10&page={p}"))
            .collect::<Vec<_>>(),
        "one request per page, in order, and nothing more"
    );

    statuspro
        .host
        .wait_for_seen(|s| s.progress.len() == 5)
        .await;
    let seen = statuspro.host.handler.seen.lock().unwrap();
    let steps: Vec<(f64, Option<f64>)> = seen.progress.iter().map(|p| (p.0, p.1)).collect();
    assert_eq!(
        steps,
        (1..=5)
            .map(|p| (f64::from(p), Some(5.0)))
            .collect::<Vec<_>>()
    );
    assert_eq!(seen.progress[4].2.as_deref(), Some("read page 5 of 5"));
}

#[tokio::test]
async fn list_orders_walks_with_100_rows_a_page_by_default() {
    let statuspro = StatusPro::start().await;
    let out = statuspro.host.ok("list_orders", json!({})).await;
    assert_eq!(ids(&out).len(), 48);
    assert_eq!(
        (out["per_page"].as_u64(), out["pages_read"].as_u64()),
        (Some(100), Some(1))
    );
    assert_eq!(
        statuspro.sandbox.requests()[0].query.as_deref(),
        Some("per_page=100&page=1")
    );
}

/// `limit` stops the walk at whole pages: what is returned is exact, and
/// `next_page` resumes right after it.
#[tokio::test]
async fn list_orders_stops_at_limit_in_whole_pages_and_says_where_to_resume() {
    let statuspro = StatusPro::start().await;
    let host = &statuspro.host;
    let all = seeded(|_| true);

    // A limit under per_page shrinks the page: one request of 25.
    let out = host.ok("list_orders", json!({"limit": 25})).await;
    assert_eq!(ids(&out), all[..25]);
    assert_eq!(
        (
            &out["per_page"],
            &out["pages_read"],
            &out["has_more"],
            &out["next_page"]
        ),
        (&json!(25), &json!(1), &json!(true), &json!(2))
    );
    let note = out["note"].as_str().expect("a note");
    assert!(
        note.contains("limit=25") && note.contains("25 of 48") && note.contains("page=2"),
        "{note}"
    );
    assert!(out.get("issues").is_none(), "a limit is not a problem");

    // 40 in pages of 15: two whole pages, and page 3 resumes exactly.
    let out = host
        .ok("list_orders", json!({"limit": 40, "per_page": 15}))
        .await;
    assert_eq!(ids(&out), all[..30]);
    assert_eq!(out["next_page"], 3);
    let rest = host
        .ok("list_orders", json!({"page": 3, "per_page": 15}))
        .await;
    assert_eq!(ids(&rest), all[30..45]);

    let queries: Vec<String> = statuspro
        .sandbox
        .requests()
        .iter()
        .map(|r| r.query.clone().unwrap_or_default())
        .collect();
    assert_eq!(
        queries,
        [
            "per_page=25&page=1",
            "per_page=15&page=1",
            "per_page=15&page=2",
            "per_page=15&page=3"
        ]
    );
}

/// A large shop: without `page` or `limit` the answer stops at the
/// default 1,000 orders, far under the host's 1 MiB output cap, instead of
/// failing whole at the cap.
#[tokio::test]
async fn list_orders_of_a_large_shop_stops_at_the_default_limit_under_the_output_cap() {
    let statuspro = Setup::new()
        .sandbox(SandboxConfig {
            extra_orders: 5_500,
            ..SandboxConfig::default()
        })
        .start()
        .await;
    let out = statuspro.host.ok("list_orders", json!({})).await;
    assert_eq!(ids(&out).len(), 1000);
    assert_eq!(
        (
            &out["total"],
            &out["pages_read"],
            &out["has_more"],
            &out["next_page"]
        ),
        (&json!(5548), &json!(10), &json!(true), &json!(11))
    );
    assert!(out["note"].as_str().unwrap().contains("limit=1000"));
    let bytes = out.to_string().len();
    assert!(bytes < 512 * 1024, "{bytes} bytes: well under 1 MiB");
    assert_eq!(statuspro.sandbox.requests().len(), 10);
}

/// A walk that meets the rate limit part way returns the pages it read,
/// where to resume and the `RATE_LIMIT` issue, instead of failing whole.
#[tokio::test]
async fn list_orders_cut_short_by_the_rate_limit_returns_what_it_read_and_where_to_resume() {
    let statuspro = Setup::new()
        .sandbox(SandboxConfig {
            rate_limit_per_minute: 3,
            ..SandboxConfig::default()
        })
        .start()
        .await;
    let host = &statuspro.host;
    let all = seeded(|_| true);
    let out = host.ok("list_orders", json!({"per_page": 10})).await;
    assert_eq!(ids(&out), all[..30], "pages 1 to 3, newest first");
    assert_eq!(
        (
            &out["total"],
            &out["pages_read"],
            &out["last_page"],
            &out["has_more"],
            &out["next_page"]
        ),
        (&json!(48), &json!(3), &json!(5), &json!(true), &json!(4))
    );
    let issues = out["issues"].as_array().expect("issues");
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert_eq!(issues[0]["code"], "RATE_LIMIT");
    let retry = issues[0]["retry_after_ms"]
        .as_u64()
        .expect("retry_after_ms");
    assert!(
        (1000..=60_000).contains(&retry) && retry % 1000 == 0,
        "{retry}"
    );
    assert!(issues[0]["hint"].as_str().unwrap().contains("60 requests"));
    let note = out["note"].as_str().expect("a note");
    assert!(
        note.contains("page=4") && note.contains("30 of 48"),
        "{note}"
    );
    assert_eq!(
        statuspro.sandbox.requests().len(),
        4,
        "three pages and the refused fourth, no retry"
    );

    // Resuming where the answer said, once the limit allows, gets the rest.
    statuspro.sandbox.reset_rate_limits();
    let next = host
        .ok("list_orders", json!({"per_page": 10, "page": 4}))
        .await;
    assert_eq!(ids(&next), all[30..40]);
}

#[tokio::test]
async fn list_orders_with_page_returns_that_page_and_its_paging_facts() {
    let statuspro = StatusPro::start().await;
    let host = &statuspro.host;
    let all = seeded(|_| true);

    let second = host
        .ok("list_orders", json!({"page": 2, "per_page": 20}))
        .await;
    assert_eq!(ids(&second), all[20..40]);
    assert_eq!(
        (
            &second["page"],
            &second["total"],
            &second["last_page"],
            &second["has_more"],
            &second["next_page"]
        ),
        (&json!(2), &json!(48), &json!(3), &json!(true), &json!(3))
    );

    let last = host
        .ok("list_orders", json!({"page": 3, "per_page": 20}))
        .await;
    assert_eq!(ids(&last), all[40..]);
    assert_eq!(last["has_more"], false);
    assert!(last.get("next_page").is_none());

    let past_the_end = host
        .ok("list_orders", json!({"page": 9, "per_page": 20}))
        .await;
    assert!(ids(&past_the_end).is_empty());
    assert_eq!(past_the_end["has_more"], false);
    assert_eq!(
        statuspro.sandbox.requests().len(),
        3,
        "one request per call"
    );
}

#[tokio::test]
async fn list_orders_projects_rows_to_summaries() {
    let statuspro = StatusPro::start().await;
    let out = statuspro
        .host
        .ok("list_orders", json!({"search": "#1002"}))
        .await;
    assert_eq!(
        out["orders"][0],
        json!({
            "id": seed::FIRST_ORDER_ID + 1,
            "name": "#1002",
            "order_number": "1002",
            "customer_name": "Amélie Dubois",
            "customer_email": "amelie.dubois@example.fr",
            "status_code": "st000003",
            "status_name": "Shipped",
            "due_date": "2026-03-11",
        }),
        "eight fields, the due date as an ISO date"
    );
    let without_status = seed::order_without_status();
    let out = statuspro
        .host
        .ok(
            "list_orders",
            json!({"search": seed::order(without_status).unwrap().name}),
        )
        .await;
    let row = &out["orders"][0];
    assert_eq!(row["id"], without_status);
    assert_eq!(
        (&row["status_code"], &row["status_name"]),
        (&Value::Null, &Value::Null)
    );
}

#[tokio::test]
async fn list_orders_filters_reach_the_api() {
    let statuspro = StatusPro::start().await;
    let host = &statuspro.host;

    let out = host
        .ok(
            "list_orders",
            json!({"status_code": "st000005", "exclude_cancelled": true}),
        )
        .await;
    assert_eq!(
        ids(&out),
        seeded(|o| o.status_code == Some("st000005") && !o.cancelled)
    );
    assert!(!ids(&out).is_empty());

    let out = host
        .ok(
            "list_orders",
            json!({"tags": ["vip"], "tags_any": ["rush", "gift"]}),
        )
        .await;
    assert_eq!(
        ids(&out),
        seeded(
            |o| o.tags.contains(&"vip") && (o.tags.contains(&"rush") || o.tags.contains(&"gift"))
        )
    );

    let out = host
        .ok(
            "list_orders",
            json!({"financial_status": ["paid", "authorized"], "fulfillment_status": ["unfulfilled"]}),
        )
        .await;
    assert_eq!(
        ids(&out),
        seeded(|o| ["paid", "authorized"].contains(&o.financial_status)
            && o.fulfillment_status == "unfulfilled")
    );

    let (from, to) = (seed::seed_date(10), seed::seed_date(20));
    let out = host
        .ok(
            "list_orders",
            json!({"due_date_from": from, "due_date_to": to}),
        )
        .await;
    let expected = seeded(|o| {
        o.due_date
            .as_deref()
            .is_some_and(|d| d >= from.as_str() && d <= to.as_str())
    });
    assert!(!expected.is_empty());
    assert_eq!(ids(&out), expected);
    for row in out["orders"].as_array().unwrap() {
        let due = row["due_date"].as_str().unwrap();
        assert!(due >= from.as_str() && due <= to.as_str(), "{due}");
    }

    let query = statuspro.sandbox.requests()[1].query.clone().unwrap();
    assert!(
        query.starts_with("tags%5B%5D=vip&tags_any%5B%5D=rush&tags_any%5B%5D=gift"),
        "PHP array spelling: {query}"
    );
}

#[tokio::test]
async fn get_order_returns_the_history_capped_by_history_limit() {
    let statuspro = StatusPro::start().await;
    let host = &statuspro.host;
    // Delivered orders have the longest seeded history.
    let id = seed::order_in_status("st000004").unwrap();
    let order = statuspro.sandbox.order(id).unwrap();
    let total = order.history.len();
    assert!(total >= 5);

    let out = host.ok("get_order", json!({"order_id": id})).await;
    assert_eq!(out["id"], id);
    assert_eq!(out["status_code"], "st000004");
    assert_eq!(
        out["status_set_at"].as_str(),
        order.status.set_at.as_deref()
    );
    assert_eq!(out["history_total"], total);
    assert_eq!(out["history_truncated"], false);
    assert_eq!(out["history"].as_array().unwrap().len(), total);
    let first = &out["history"][0];
    assert_eq!(first["event"], order.history[0].event);
    assert_eq!(first["status"].as_str(), order.history[0].status.as_deref());
    assert_eq!(first["at"], order.history[0].created_at);

    let capped = host
        .ok("get_order", json!({"order_id": id, "history_limit": 2}))
        .await;
    assert_eq!(capped["history_truncated"], true);
    assert_eq!(capped["history_total"], total);
    assert_eq!(
        capped["history"],
        json!([out["history"][total - 2], out["history"][total - 1]]),
        "the newest events, oldest first"
    );
}

#[tokio::test]
async fn lookup_order_matches_number_and_email() {
    let statuspro = StatusPro::start().await;
    let host = &statuspro.host;
    let out = host
        .ok(
            "lookup_order",
            json!({"number": "#1001", "email": "JON@example.com"}),
        )
        .await;
    assert_eq!(out["id"], seed::FIRST_ORDER_ID);
    assert_eq!(out["customer_name"], "Jon Smith");
    let history = out["history"].as_array().unwrap().clone();
    assert!(history.len() >= 2, "{out}");

    // history_limit caps it as get_order's does: the newest kept.
    let capped = host
        .ok(
            "lookup_order",
            json!({"number": "#1001", "email": "jon@example.com", "history_limit": 1}),
        )
        .await;
    assert_eq!(
        (&capped["history_truncated"], &capped["history_total"]),
        (&json!(true), &json!(history.len()))
    );
    assert_eq!(capped["history"], json!([history.last().unwrap()]));

    let out = host
        .ok(
            "lookup_order",
            json!({"number": "1012", "email": "jon@example.com"}),
        )
        .await;
    assert_eq!(out["id"], seed::FIRST_ORDER_ID + 11);
}

#[tokio::test]
async fn list_statuses_returns_the_catalog() {
    let statuspro = StatusPro::start().await;
    let out = statuspro.host.ok("list_statuses", json!({})).await;
    let statuses = out["statuses"].as_array().unwrap();
    let codes: Vec<&str> = statuses
        .iter()
        .map(|s| s["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes,
        [
            "st000001", "st000002", "st000003", "st000004", "st000005", "st000006"
        ]
    );
    assert_eq!(
        statuses[1],
        json!({"code": "st000002", "name": "In Production",
               "description": "Order being handcrafted in the workshop", "color": "pink"})
    );
}

#[tokio::test]
async fn get_viable_statuses_follows_the_transition_map() {
    let statuspro = StatusPro::start().await;
    let host = &statuspro.host;
    let codes = |out: &Value| -> Vec<String> {
        out["statuses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["code"].as_str().unwrap().to_string())
            .collect()
    };

    let quality_check = seed::order_in_status("st000006").unwrap();
    let out = host
        .ok("get_viable_statuses", json!({"order_id": quality_check}))
        .await;
    assert_eq!(out["order_id"], quality_check);
    assert_eq!(codes(&out), ["st000002", "st000003"]);
    assert_eq!(out["statuses"][1]["name"], "Shipped");

    let out = host
        .ok(
            "get_viable_statuses",
            json!({"order_id": seed::order_without_status()}),
        )
        .await;
    assert_eq!(codes(&out).len(), 6, "no status yet: any status");

    let delivered = seed::order_in_status("st000004").unwrap();
    let out = host
        .ok("get_viable_statuses", json!({"order_id": delivered}))
        .await;
    assert!(codes(&out).is_empty(), "a final status");
}
