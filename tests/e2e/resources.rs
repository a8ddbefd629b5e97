//! What `toolhost:plugin@0.2.0` components offer beside tools (ADR 0017):
//! resources, resource templates, prompts and completion, served through
//! the real binary to rmcp's client in both eras, from the `offers` test
//! component; and the 0.1.0 components checked in as fixtures, loaded and
//! called unchanged.

use rmcp::ServiceError;
use rmcp::model::{
    ServerNotification, SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use serde_json::{Value, json};

use crate::support::offers::{not_found_code, read, rebuilt, resource_uris, rpc_error, text_of};
use crate::support::{ERAS, Era, Host, HostOptions, component, write_then_rename};

#[tokio::test]
async fn components_built_against_0_1_load_and_run_unchanged() {
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/contract-0.1");
    for era in ERAS {
        let mut options = HostOptions::new(&[]).era(era);
        for name in ["hello.wasm", "statuspro_list_statuses.wasm"] {
            options = options.file(name, std::fs::read(fixtures.join(name)).unwrap());
        }
        let host = Host::start(options).await;
        let mut names: Vec<String> = host
            .tools()
            .await
            .into_iter()
            .map(|t| t.name.to_string())
            .collect();
        names.sort();
        assert_eq!(names, ["fetch_url", "greet", "list_statuses"], "{era:?}");
        assert_eq!(
            host.ok("greet", json!({"name": "Old"})).await["message"],
            "Hello, Old!"
        );
        // A 0.1 component offers no resources or prompts.
        assert!(host.client.list_all_resources().await.unwrap().is_empty());
        assert!(host.client.list_all_prompts().await.unwrap().is_empty());
    }
}

#[tokio::test]
async fn statuspro_offers_its_status_catalog_and_usage_guide() {
    for era in ERAS {
        let statuspro = crate::statuspro::Setup::new().era(era).start().await;
        let host = &statuspro.host;
        let uris = resource_uris(&host.client).await;
        assert_eq!(
            uris,
            ["statuspro://guide", "statuspro://statuses"],
            "{era:?}"
        );

        let catalog = read(&host.client, "statuspro://statuses").await.unwrap();
        let catalog: Value = serde_json::from_str(text_of(&catalog[0])).unwrap();
        let first = &catalog["statuses"][0];
        assert_eq!(first["code"], "st000001", "{era:?}");
        assert_eq!(first["name"], "Order Received");
        // Read live, through the host, with the host's credential.
        assert!(
            statuspro.requests().contains(&"GET /statuses".to_string()),
            "{:?}",
            statuspro.requests()
        );

        let guide = read(&host.client, "statuspro://guide").await.unwrap();
        let guide = text_of(&guide[0]);
        assert!(guide.contains("get_viable_statuses"), "{guide}");
        assert!(guide.contains("confirm: true"), "{guide}");
    }
}

#[tokio::test]
async fn katana_items_are_a_template_by_sku_with_sku_completion() {
    for era in ERAS {
        let katana = crate::katana::Setup::new().era(era).start().await;
        let host = &katana.host;
        let templates = host.client.list_all_resource_templates().await.unwrap();
        assert_eq!(templates.len(), 1, "{era:?}");
        assert_eq!(templates[0].uri_template, "katana://items/{sku}");

        let item = read(&host.client, "katana://items/KNF-8IN-BLK")
            .await
            .unwrap();
        let item: Value = serde_json::from_str(text_of(&item[0])).unwrap();
        assert_eq!(item["id"], katana_sandbox::seed::KNIFE_BLACK, "{era:?}");
        assert_eq!(item["name"], "Chef's Knife / 8-inch / Black");
        assert!(
            katana
                .requests()
                .iter()
                .any(|r| r.starts_with("GET /variants")),
            "{:?}",
            katana.requests()
        );

        let (code, message) = rpc_error(read(&host.client, "katana://items/NO-SUCH-SKU").await);
        assert_eq!(code, not_found_code(era), "{era:?}: {message}");
        assert!(message.contains("NO-SUCH-SKU"), "{message}");

        let skus = host
            .client
            .complete_resource_argument("katana://items/{sku}", "sku", "knf-8in", None)
            .await
            .unwrap();
        assert_eq!(skus.values, ["KNF-8IN-BLK", "KNF-8IN-WAL"], "{era:?}");
        assert!(
            katana.writes().is_empty(),
            "reads and completions write nothing"
        );
    }
}

#[test]
fn check_says_which_contract_a_component_targets_and_what_it_offers() {
    let check = |path: &std::path::Path| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .arg("check")
            .arg(path)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let old = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/contract-0.1/hello.wasm");
    let report = check(&old);
    assert!(
        report.contains("targets toolhost:plugin@0.1.0\n"),
        "{report}"
    );
    let offers_0_2 = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/contract-0.2/offers.wasm");
    let report = check(&offers_0_2);
    assert!(
        report.contains(
            "targets toolhost:plugin@0.2.0 (5 resources, 1 template, 1 prompt, completion)"
        ),
        "{report}"
    );
    let offers = crate::support::components_dir().join("offers.wasm");
    let report = check(&offers);
    assert!(
        report.contains(
            "targets toolhost:plugin@0.3.0 (5 resources, 1 template, 1 prompt, completion)"
        ),
        "{report}"
    );
}

#[tokio::test]
async fn uris_templates_and_prompts_are_owned_like_tool_names() {
    // Two files that appear together and offer the same URIs, template and
    // prompt: none of them serves those, and the log names both files.
    let options = HostOptions::new(&["offers"]).file("offers_copy.wasm", component("offers"));
    let host = Host::start(options).await;
    assert!(host.client.list_all_resources().await.unwrap().is_empty());
    assert!(
        host.client
            .list_all_resource_templates()
            .await
            .unwrap()
            .is_empty()
    );
    assert!(host.client.list_all_prompts().await.unwrap().is_empty());
    host.wait_for_stderr(
        "resource \"test://readme\" is not served: offers.wasm and offers_copy.wasm offer it",
    )
    .await;
    host.wait_for_stderr("resource template \"test://colors/{}\" is not served")
        .await;
    host.wait_for_stderr("prompt \"describe_color\" is not served")
        .await;

    // Removing one gives every name to the other.
    std::fs::remove_file(host.plugins.join("offers_copy.wasm")).unwrap();
    host.wait_for_seen(|s| s.resources_changed >= 1).await;
    assert_eq!(host.client.list_all_resources().await.unwrap().len(), 5);
    assert_eq!(host.client.list_all_prompts().await.unwrap().len(), 1);
    assert!(
        !read(&host.client, "test://colors/blue")
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn katana_reads_a_sku_decoded_once() {
    for era in ERAS {
        let katana = crate::katana::Setup::new().era(era).start().await;
        let host = &katana.host;
        // Every character encoded (`%2D` is `-`): the item is found.
        let item = read(&host.client, "katana://items/KNF%2D8IN%2DBLK")
            .await
            .unwrap();
        let item: Value = serde_json::from_str(text_of(&item[0])).unwrap();
        assert_eq!(item["id"], katana_sandbox::seed::KNIFE_BLACK, "{era:?}");
        // `%252D` is `%2D` once decoded, a SKU Katana does not have; decoded
        // twice it would be the knife.
        let (code, message) =
            rpc_error(read(&host.client, "katana://items/KNF%252D8IN%252DBLK").await);
        assert_eq!(code, not_found_code(era), "{era:?}: {message}");
        assert!(message.contains("\"KNF%2D8IN%2DBLK\""), "{message}");
    }
}

/// A host serving `components` to an `era` client over stdio, or over HTTP
/// when `http`, with `config` as its `toolhost.toml`.
async fn start(components: &[&str], era: Era, http: bool, config: &str) -> Host {
    let mut options = HostOptions::new(components).era(era).config(config);
    if http {
        options = options.http();
    }
    Host::start(options).await
}

/// `resources/subscribe` (legacy clients).
async fn subscribe(host: &Host, uri: &str) -> Result<(), ServiceError> {
    #[allow(deprecated)]
    host.client
        .subscribe(SubscribeRequestParams::new(uri))
        .await
}

/// `resources/unsubscribe` (legacy clients).
async fn unsubscribe(host: &Host, uri: &str) -> Result<(), ServiceError> {
    #[allow(deprecated)]
    host.client
        .unsubscribe(UnsubscribeRequestParams::new(uri))
        .await
}

/// How many `resources/updated` for `uri` a legacy client has received.
fn updates_of(host: &Host, uri: &str) -> usize {
    let seen = host.handler.seen.lock().unwrap();
    seen.updated.iter().filter(|u| *u == uri).count()
}

/// The next notification on a listen stream.
async fn next_on(stream: &mut rmcp::service::Subscription) -> ServerNotification {
    tokio::time::timeout(std::time::Duration::from_secs(30), stream.next())
        .await
        .expect("a notification arrives in time")
        .expect("the stream works")
        .expect("the stream is open")
}

/// The URI of an update, or `"list_changed"` for the resource list's change.
fn update_uri(notification: ServerNotification) -> String {
    match notification {
        ServerNotification::ResourceUpdatedNotification(n) => n.params.uri,
        ServerNotification::ResourceListChangedNotification(_) => "list_changed".into(),
        other => panic!("unexpected {other:?}"),
    }
}

const README: &str = "test://readme";
const RED: &str = "test://colors/red";
const STATIC_TEXT: &str = "test://static-text";

#[tokio::test]
async fn subscribers_hear_that_a_resource_changed_when_its_component_is_replaced() {
    for http in [false, true] {
        // Legacy: `resources/subscribe` and `resources/unsubscribe`.
        let host = start(&["offers", "conformance"], Era::Legacy, http, "").await;
        for uri in [README, RED, STATIC_TEXT] {
            subscribe(&host, uri).await.unwrap();
        }
        // Subscribing twice is one subscription.
        subscribe(&host, README).await.unwrap();

        write_then_rename(&host.plugins, "offers.wasm", &rebuilt("offers", 1));
        host.wait_for_seen(|s| s.updated.len() >= 2).await;
        unsubscribe(&host, README).await.unwrap();
        // Unsubscribing again changes nothing and is no error.
        unsubscribe(&host, README).await.unwrap();
        write_then_rename(&host.plugins, "offers.wasm", &rebuilt("offers", 2));
        host.wait_for_seen(|s| s.updated.iter().filter(|u| *u == RED).count() >= 2)
            .await;
        // Everything of the first reload arrived before the second's.
        assert_eq!(updates_of(&host, README), 1, "http: {http}");
        assert_eq!(
            updates_of(&host, STATIC_TEXT),
            0,
            "its component did not change"
        );
        assert_eq!(host.handler.seen.lock().unwrap().updated.len(), 3);

        // 2026-07-28: the URIs of a `subscriptions/listen` stream.
        let host = start(&["offers", "conformance"], Era::Modern, http, "").await;
        host.tools().await;
        let filter = SubscriptionFilter::builder()
            .resources_list_changed()
            .resource_subscriptions([README, RED, STATIC_TEXT, "test://nothing-here"])
            .build();
        let mut all = host.client.listen(filter).await.unwrap();
        assert_eq!(
            all.acknowledged().resource_subscriptions.as_deref(),
            Some(&[README.to_string(), RED.into(), STATIC_TEXT.into()][..]),
            "a URI nothing serves is not acknowledged"
        );
        let only_red = SubscriptionFilter::builder()
            .resource_subscription(RED)
            .build();
        let mut red = host.client.listen(only_red).await.unwrap();

        write_then_rename(&host.plugins, "offers.wasm", &rebuilt("offers", 1));
        assert_eq!(update_uri(next_on(&mut red).await), RED, "http: {http}");
        write_then_rename(&host.plugins, "offers.wasm", &rebuilt("offers", 2));
        let mut heard = Vec::new();
        for _ in 0..6 {
            heard.push(update_uri(next_on(&mut all).await));
        }
        let one_reload = ["list_changed", RED, README];
        assert_eq!(heard, [one_reload, one_reload].concat(), "http: {http}");
        assert_eq!(update_uri(next_on(&mut red).await), RED);
    }
}

#[tokio::test]
async fn each_http_session_hears_of_its_own_subscriptions_only() {
    let first = start(&["offers"], Era::Legacy, true, "").await;
    let second = first
        .another_client(Era::Legacy, crate::support::Elicitation::Unsupported, None)
        .await;
    subscribe(&first, README).await.unwrap();
    subscribe(&second, RED).await.unwrap();
    // The second session unsubscribing a URI the first holds leaves the
    // first's subscription alone.
    unsubscribe(&second, README).await.unwrap();

    write_then_rename(&first.plugins, "offers.wasm", &rebuilt("offers", 1));
    first.wait_for_seen(|s| !s.updated.is_empty()).await;
    second.wait_for_seen(|s| !s.updated.is_empty()).await;
    write_then_rename(&first.plugins, "offers.wasm", &rebuilt("offers", 2));
    first.wait_for_seen(|s| s.updated.len() >= 2).await;
    second.wait_for_seen(|s| s.updated.len() >= 2).await;
    assert_eq!(first.handler.seen.lock().unwrap().updated, [README, README]);
    assert_eq!(second.handler.seen.lock().unwrap().updated, [RED, RED]);
}

#[tokio::test]
async fn subscribing_to_a_uri_nothing_serves_is_resource_not_found() {
    for http in [false, true] {
        let host = start(&["offers"], Era::Legacy, http, "").await;
        let (code, message) = rpc_error(subscribe(&host, "test://nothing-here").await);
        assert_eq!(code, -32002, "the code resources/read uses: {message}");
        assert!(message.contains("resources/list"), "{message}");
        // A template URI is served (the component is asked only on a read).
        subscribe(&host, "test://colors/anything").await.unwrap();
        let long = format!("test://colors/{}", "x".repeat(5000));
        let (code, message) = rpc_error(subscribe(&host, &long).await);
        assert_eq!(code, -32602, "{message}");
        assert!(message.contains("at most 4096 bytes"), "{message}");
        // Still serving.
        assert!(!read(&host.client, README).await.unwrap().is_empty());
    }
}

#[tokio::test]
async fn a_session_holds_at_most_host_resource_subscriptions() {
    let config = "[host]\nresource_subscriptions = 2\n";
    for http in [false, true] {
        let host = start(&["offers"], Era::Legacy, http, config).await;
        subscribe(&host, README).await.unwrap();
        subscribe(&host, RED).await.unwrap();
        // Again: no new subscription, so within the limit.
        subscribe(&host, RED).await.unwrap();
        let (code, message) = rpc_error(subscribe(&host, "test://logo").await);
        assert_eq!(code, -32602, "{message}");
        assert!(
            message.contains("at most 2 resource URIs (host.resource_subscriptions)"),
            "{message}"
        );
        unsubscribe(&host, README).await.unwrap();
        subscribe(&host, "test://logo").await.unwrap();

        // 2026-07-28: a listen stream for more URIs ends with the same
        // limit named.
        let host = start(&["offers"], Era::Modern, http, config).await;
        host.tools().await;
        let filter = SubscriptionFilter::builder()
            .resource_subscriptions([README, RED, "test://logo"])
            .build();
        let mut stream = host.client.listen(filter).await.unwrap();
        let ended = tokio::time::timeout(std::time::Duration::from_secs(30), stream.next())
            .await
            .expect("the stream ends in time");
        let (code, message) = rpc_error(ended);
        assert_eq!(code, -32602, "{message}");
        assert!(message.contains("host.resource_subscriptions"), "{message}");
        let two = SubscriptionFilter::builder()
            .resource_subscriptions([README, RED])
            .build();
        let stream = host.client.listen(two).await.unwrap();
        assert_eq!(
            stream
                .acknowledged()
                .resource_subscriptions
                .as_ref()
                .map(Vec::len),
            Some(2)
        );
    }
}
