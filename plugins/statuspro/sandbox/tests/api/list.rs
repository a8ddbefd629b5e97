//! Contract 4.4 and the `GET /orders` filters: newest first, Laravel meta,
//! filter-only fields never returned.

use std::collections::BTreeSet;

use reqwest::StatusCode;
use serde_json::{Value, json};
use statuspro_sandbox::{
    model::{OrderPage, PageMeta},
    seed::{self, SeedOrder},
};

use crate::util::{Harness, start, start_with};

/// `GET /orders?{query}` as a typed page (which also proves no unknown fields).
async fn page(h: &Harness, query: &str) -> OrderPage {
    let (status, body) = h.get(&format!("/orders?{query}")).await;
    assert_eq!(status, StatusCode::OK, "{query}: {body}");
    serde_json::from_value(body).expect("an OrderPage")
}

/// Ids of every order matching `query`, newest first.
async fn ids(h: &Harness, query: &str) -> Vec<i64> {
    page(h, &format!("per_page=100&{query}"))
        .await
        .data
        .iter()
        .map(|row| row.id)
        .collect()
}

/// Seed ids matching `pred`, newest first.
fn expected(pred: impl Fn(&SeedOrder) -> bool) -> Vec<i64> {
    let mut ids: Vec<i64> = seed::orders()
        .into_iter()
        .filter(|o| pred(o))
        .map(|o| o.id)
        .collect();
    ids.reverse();
    ids
}

#[tokio::test]
async fn first_page_is_newest_first_with_laravel_meta() {
    let h = start().await;
    let first = page(&h, "").await;
    assert_eq!(first.data.len(), 15);
    let ids: Vec<i64> = first.data.iter().map(|row| row.id).collect();
    let newest: Vec<i64> = (0..15).map(|i| seed::LAST_ORDER_ID - i).collect();
    assert_eq!(ids, newest);
    assert_eq!(
        first.meta,
        PageMeta {
            current_page: 1,
            from: Some(1),
            last_page: 4,
            per_page: 15,
            to: Some(15),
            total: 48
        }
    );
}

#[tokio::test]
async fn last_partial_page_and_pages_past_the_end() {
    let h = start().await;
    let last = page(&h, "page=4").await;
    assert_eq!(last.data.len(), 3);
    assert_eq!(last.data.last().unwrap().id, seed::FIRST_ORDER_ID);
    assert_eq!(
        last.meta,
        PageMeta {
            current_page: 4,
            from: Some(46),
            last_page: 4,
            per_page: 15,
            to: Some(48),
            total: 48
        }
    );

    let (status, body) = h.get("/orders?page=5").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        json!({"data": [], "meta": {"current_page": 5, "from": null, "last_page": 4, "per_page": 15, "to": null, "total": 48}})
    );
    let huge = page(&h, "page=9223372036854775807&per_page=100").await;
    assert!(huge.data.is_empty());
}

#[tokio::test]
async fn no_matches_still_has_one_last_page() {
    let h = start().await;
    let empty = page(&h, "search=no-such-customer").await;
    assert!(empty.data.is_empty());
    assert_eq!(
        empty.meta,
        PageMeta {
            current_page: 1,
            from: None,
            last_page: 1,
            per_page: 15,
            to: None,
            total: 0
        }
    );
    let all = page(&h, "per_page=100").await;
    assert_eq!((all.data.len(), all.meta.last_page), (48, 1));
    let sevens = page(&h, "per_page=7&page=7").await;
    assert_eq!(
        (sevens.meta.from, sevens.meta.to, sevens.meta.last_page),
        (Some(43), Some(48), 7)
    );
}

#[tokio::test]
async fn rows_carry_exactly_the_documented_fields() {
    let h = start().await;
    let (_, body) = h.get("/orders?per_page=100").await;
    let keys: BTreeSet<&str> = [
        "id",
        "name",
        "order_number",
        "customer",
        "status",
        "due_date",
        "due_date_to",
        "history_count",
    ]
    .into();
    for row in body["data"].as_array().unwrap() {
        let row_keys: BTreeSet<&str> = row
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            row_keys, keys,
            "tags, financial/fulfillment status and cancellation never appear"
        );
    }
    // The seed's first order as a row.
    let row = &body["data"][47];
    assert_eq!(row["id"], seed::FIRST_ORDER_ID);
    assert_eq!(row["name"], "#1001");
    assert_eq!(row["order_number"], "1001");
    assert_eq!(
        row["customer"],
        json!({"name": "Jon Smith", "email": "jon@example.com", "locale": "en"})
    );
    assert_eq!(row["status"]["code"], "st000004");
    assert_eq!(row["due_date"], "2026-03-04T00:00:00+00:00");
    assert_eq!(row["due_date_to"], Value::Null);
    assert_eq!(row["history_count"], 5);
}

#[tokio::test]
async fn search_is_partial_and_case_insensitive_over_name_number_customer_and_email() {
    let h = start().await;
    let jon = expected(|o| o.customer.email == "jon@example.com");
    assert_eq!(jon.len(), 3);
    assert_eq!(ids(&h, "search=JON%40EXAMPLE").await, jon);
    assert_eq!(ids(&h, "search=jon+smith").await, jon);
    assert_eq!(ids(&h, "search=%231012").await, [seed::FIRST_ORDER_ID + 11]);
    assert_eq!(ids(&h, "search=1048").await, [seed::LAST_ORDER_ID]);
    assert_eq!(
        ids(&h, "search=AM%C3%89LIE").await,
        expected(|o| o.customer.name == "Amélie Dubois")
    );
}

#[tokio::test]
async fn status_code_filter() {
    let h = start().await;
    let shipped = ids(&h, "status_code=st000003").await;
    assert_eq!(shipped.len(), 6);
    assert_eq!(shipped, expected(|o| o.status_code == Some("st000003")));
}

#[tokio::test]
async fn tags_require_all_and_tags_any_require_one() {
    let h = start().await;
    let both = ids(&h, "tags[]=vip&tags[]=rush").await;
    assert_eq!(both, [seed::FIRST_ORDER_ID + 36, seed::FIRST_ORDER_ID + 8]);
    assert_eq!(
        both,
        expected(|o| o.tags.contains(&"vip") && o.tags.contains(&"rush"))
    );

    let either = ids(&h, "tags_any[]=wholesale&tags_any[]=preorder").await;
    assert_eq!(
        either,
        expected(|o| o.tags.contains(&"wholesale") || o.tags.contains(&"preorder"))
    );
    assert_eq!(either.len(), 11);
    // Indexed keys are arrays too.
    assert_eq!(ids(&h, "tags[0]=vip&tags[1]=rush").await, both);
}

#[tokio::test]
async fn financial_and_fulfillment_filters() {
    let h = start().await;
    let refunded_or_voided = ids(&h, "financial_status[]=refunded&financial_status[]=voided").await;
    assert_eq!(
        refunded_or_voided,
        expected(|o| ["refunded", "voided"].contains(&o.financial_status))
    );
    assert_eq!(refunded_or_voided.len(), 6);
    let restocked = ids(&h, "fulfillment_status[]=restocked").await;
    assert_eq!(restocked, expected(|o| o.fulfillment_status == "restocked"));
    assert_eq!(restocked.len(), 2);
    let combined = ids(&h, "financial_status[]=paid&fulfillment_status[]=partial").await;
    assert_eq!(
        combined,
        expected(|o| o.financial_status == "paid" && o.fulfillment_status == "partial")
    );
}

#[tokio::test]
async fn exclude_cancelled() {
    let h = start().await;
    for value in ["1", "true"] {
        let kept = ids(&h, &format!("exclude_cancelled={value}")).await;
        assert_eq!(kept, expected(|o| !o.cancelled));
        assert_eq!(kept.len(), 42);
    }
    assert_eq!(ids(&h, "exclude_cancelled=0").await.len(), 48);
}

#[tokio::test]
async fn due_date_range_is_inclusive() {
    let h = start().await;
    let from = seed::seed_date(10);
    let to = seed::seed_date(15);
    let due = ids(&h, &format!("due_date_from={from}&due_date_to={to}")).await;
    // Orders 2 (offset 10), 3 (15), 5 (12), 21 (14), 35 (11), 42 (13).
    let ns = |ns: &[i64]| {
        ns.iter()
            .rev()
            .map(|n| seed::FIRST_ORDER_ID + n - 1)
            .collect::<Vec<_>>()
    };
    assert_eq!(due, ns(&[2, 3, 5, 21, 35, 42]));

    let only_from = ids(&h, &format!("due_date_from={}", seed::seed_date(30))).await;
    assert_eq!(only_from, ns(&[16, 30, 41]));
    let only_to = ids(&h, &format!("due_date_to={}", seed::seed_date(3))).await;
    assert_eq!(only_to, ns(&[1]));
}

#[tokio::test]
async fn extra_orders_follow_the_seed_with_new_ids_and_numbers() {
    let h = start_with(statuspro_sandbox::SandboxConfig {
        extra_orders: 60,
        ..statuspro_sandbox::SandboxConfig::default()
    })
    .await;
    let first = page(&h, "per_page=10").await;
    assert_eq!(first.meta.total, seed::ORDER_COUNT as u64 + 60);
    let newest = &first.data[0];
    assert_eq!(newest.id, seed::LAST_ORDER_ID + 60, "newest first");
    assert_eq!(
        newest.order_number,
        (1000 + seed::ORDER_COUNT + 60).to_string()
    );
    let mut all = BTreeSet::new();
    for p in 1..=2 {
        for row in page(&h, &format!("per_page=100&page={p}")).await.data {
            assert!(all.insert(row.id), "ids are unique");
        }
    }
    assert_eq!(all.len(), seed::ORDER_COUNT + 60);
}
