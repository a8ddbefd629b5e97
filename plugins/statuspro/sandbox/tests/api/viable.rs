//! Contract 4.6: viable statuses from the transition map, in catalog order;
//! an order with no status may move anywhere. Also `GET /statuses`.

use reqwest::StatusCode;
use statuspro_sandbox::{model::StatusDefinition, seed};

use crate::util::{Harness, start};

async fn viable(h: &Harness, id: i64) -> Vec<String> {
    let (status, body) = h.get(&format!("/orders/{id}/viable-statuses")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let statuses: Vec<StatusDefinition> = serde_json::from_value(body).unwrap();
    statuses.into_iter().map(|s| s.code).collect()
}

#[tokio::test]
async fn statuses_are_the_catalog_in_order() {
    let h = start().await;
    let (status, body) = h.get("/statuses").await;
    assert_eq!(status, StatusCode::OK);
    let statuses: Vec<StatusDefinition> = serde_json::from_value(body).unwrap();
    assert_eq!(statuses, seed::statuses());
    let summary: Vec<(&str, &str, &str)> = statuses
        .iter()
        .map(|s| (s.code.as_str(), s.name.as_str(), s.color.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            ("st000001", "Order Received", "gray"),
            ("st000002", "In Production", "pink"),
            ("st000003", "Shipped", "green"),
            ("st000004", "Delivered", "#2e7d32"),
            ("st000005", "On Hold", "#f59e0b"),
            ("st000006", "Quality Check", "#7c3aed"),
        ]
    );
}

#[tokio::test]
async fn viable_statuses_follow_the_transition_map() {
    let h = start().await;
    for (from, next) in seed::TRANSITIONS {
        let id = seed::find_order(|o| o.status_code == Some(*from))
            .unwrap()
            .id;
        assert_eq!(viable(&h, id).await, next.to_vec(), "from {from}");
    }
    let received = seed::order_in_status("st000001").unwrap();
    assert_eq!(viable(&h, received).await, ["st000002", "st000005"]);
    let delivered = seed::order_in_status("st000004").unwrap();
    assert!(viable(&h, delivered).await.is_empty());
}

#[tokio::test]
async fn an_order_without_status_may_move_anywhere() {
    let h = start().await;
    let id = seed::order_without_status();
    let all: Vec<String> = seed::statuses().into_iter().map(|s| s.code).collect();
    assert_eq!(viable(&h, id).await, all);
}

#[tokio::test]
async fn viable_statuses_follow_the_current_status() {
    let h = start().await;
    let id = seed::order_without_status();
    let (status, _) = h
        .post(
            &format!("/orders/{id}/status"),
            serde_json::json!({"status_code": "st000003"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(viable(&h, id).await, ["st000004"]);
}
