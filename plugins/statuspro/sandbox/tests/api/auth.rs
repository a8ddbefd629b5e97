//! Contract 4.1: a missing or wrong bearer key gets 401, before anything else.

use reqwest::{Method, StatusCode};
use serde_json::json;
use statuspro_sandbox::{FAULT_HEADER, seed};

use crate::util::start;

#[tokio::test]
async fn missing_or_wrong_key_is_401_unauthenticated() {
    let h = start().await;
    let unauthenticated = json!({"message": "Unauthenticated."});

    let missing = h.client.get(h.url("/orders"));
    assert_eq!(
        h.send(missing).await,
        (StatusCode::UNAUTHORIZED, unauthenticated.clone())
    );

    let wrong = h.client.get(h.url("/orders")).bearer_auth("not-the-key");
    assert_eq!(
        h.send(wrong).await,
        (StatusCode::UNAUTHORIZED, unauthenticated.clone())
    );

    let basic = h
        .client
        .get(h.url("/statuses"))
        .basic_auth("sandbox-key", None::<&str>);
    assert_eq!(
        h.send(basic).await,
        (StatusCode::UNAUTHORIZED, unauthenticated)
    );
}

#[tokio::test]
async fn auth_is_checked_before_routing_validation_and_faults() {
    let h = start().await;
    let unauthenticated = json!({"message": "Unauthenticated."});

    // Unknown route, unknown order, invalid body, injected fault: all 401 first.
    let cases = [
        h.client.get(h.url("/no-such-route")),
        h.client
            .get(h.url(&format!("/orders/{}", seed::UNKNOWN_ORDER_ID))),
        h.client.post(h.url("/orders/bulk-status")).json(&json!({})),
        h.client.get(h.url("/orders?per_page=0")),
        h.client.get(h.url("/statuses")).header(FAULT_HEADER, "500"),
        h.client
            .get(h.url("/statuses"))
            .bearer_auth("wrong")
            .header(FAULT_HEADER, "timeout"),
    ];
    for request in cases {
        assert_eq!(
            h.send(request).await,
            (StatusCode::UNAUTHORIZED, unauthenticated.clone())
        );
    }
}

#[tokio::test]
async fn the_right_key_is_accepted_and_configurable() {
    let h = crate::util::start_with(statuspro_sandbox::SandboxConfig {
        api_key: "custom-key".into(),
        ..Default::default()
    })
    .await;
    let (status, _) = h.get("/statuses").await;
    assert_eq!(status, StatusCode::OK);
    let default_key = h
        .client
        .request(Method::GET, h.url("/statuses"))
        .bearer_auth("sandbox-key");
    assert_eq!(h.send(default_key).await.0, StatusCode::UNAUTHORIZED);
}
