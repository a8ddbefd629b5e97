//! What `toolhost:plugin@0.2.0` components offer beside tools (ADR 0017):
//! resources, resource templates, prompts and completion, served through
//! the real binary to rmcp's client in both eras, from the `offers` test
//! component; and the 0.1.0 components checked in as fixtures, loaded and
//! called unchanged.

use rmcp::ServiceError;
use rmcp::model::{
    ContentBlock, GetPromptRequestParams, ReadResourceRequestParams, ResourceContents,
    ServerNotification, SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use serde_json::{Value, json};

use crate::support::{ERAS, Era, Host, HostOptions, Recorder, component, write_then_rename};

/// The JSON-RPC error of a failed request.
fn rpc_error(result: Result<impl std::fmt::Debug, ServiceError>) -> (i32, String) {
    match result {
        Err(ServiceError::McpError(e)) => (e.code.0, e.message.to_string()),
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

/// The text of `contents`, which must be text.
fn text_of(contents: &ResourceContents) -> &str {
    match contents {
        ResourceContents::TextResourceContents { text, .. } => text,
        other => panic!("expected text, got {other:?}"),
    }
}

async fn read(host: &Host, uri: &str) -> Result<Vec<ResourceContents>, ServiceError> {
    host.client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .map(|r| r.contents)
}

/// MCP's resource-not-found code as each era receives it: `-32002` for
/// legacy clients; 2026-07-28 folds it into `-32602`.
fn not_found_code(era: Era) -> i32 {
    match era {
        Era::Legacy => -32002,
        Era::Modern => -32602,
    }
}

/// The URIs of every resource `host` lists, sorted.
async fn resource_uris(host: &Host) -> Vec<String> {
    let mut uris: Vec<String> = host
        .client
        .list_all_resources()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.uri)
        .collect();
    uris.sort();
    uris
}

#[tokio::test]
async fn resources_and_templates_are_listed_and_read() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["offers", "hello"]).era(era)).await;
        let uris = resource_uris(&host).await;
        assert_eq!(
            uris,
            [
                "test://crash",
                "test://fetched",
                "test://logo",
                "test://post",
                "test://readme"
            ],
            "{era:?}"
        );
        let resources = host.client.list_all_resources().await.unwrap();
        let readme = resources.iter().find(|r| r.uri == "test://readme").unwrap();
        assert_eq!(readme.title.as_deref(), Some("Read Me"));
        assert_eq!(readme.mime_type.as_deref(), Some("text/markdown"));
        let hints = readme.annotations.as_ref().expect("annotations");
        assert_eq!(hints.priority, Some(0.8));

        let templates = host.client.list_all_resource_templates().await.unwrap();
        assert_eq!(templates.len(), 1, "{era:?}");
        assert_eq!(templates[0].uri_template, "test://colors/{name}");

        let contents = read(&host, "test://readme").await.unwrap();
        assert_eq!(contents.len(), 1);
        assert!(text_of(&contents[0]).starts_with("# Offers"), "{era:?}");
        match &read(&host, "test://logo").await.unwrap()[0] {
            ResourceContents::BlobResourceContents {
                blob, mime_type, ..
            } => {
                assert_eq!(blob, "iVBORw==", "the four bytes, base64-encoded");
                assert_eq!(mime_type.as_deref(), Some("application/octet-stream"));
            }
            other => panic!("expected a blob, got {other:?}"),
        }
        let red = read(&host, "test://colors/red").await.unwrap();
        assert_eq!(text_of(&red[0]), "test://colors/red is the colour red");

        // Tools of both components are still served beside them.
        assert_eq!(host.ok("color_count", json!({})).await["count"], 5);
        assert_eq!(
            host.ok("greet", json!({"name": "Ada"})).await["message"],
            "Hello, Ada!"
        );
    }
}

#[tokio::test]
async fn an_unknown_uri_is_resource_not_found_and_serving_goes_on() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["offers"]).era(era)).await;
        let (code, message) = rpc_error(read(&host, "test://nothing-here").await);
        assert_eq!(code, not_found_code(era), "{era:?}: {message}");
        assert!(message.contains("resources/list"), "{message}");
        // The URI in the error's data, as MCP's example has it.
        match read(&host, "test://nothing-here").await {
            Err(ServiceError::McpError(e)) => {
                assert_eq!(
                    e.data,
                    Some(json!({"uri": "test://nothing-here"})),
                    "{era:?}"
                )
            }
            other => panic!("expected an error, got {other:?}"),
        }

        // A template URI the component says does not exist: the same error.
        let (code, message) = rpc_error(read(&host, "test://colors/purple").await);
        assert_eq!(code, not_found_code(era), "{era:?}: {message}");
        assert!(message.contains("no colour \"purple\""), "{message}");

        assert!(!read(&host, "test://readme").await.unwrap().is_empty());
    }
}

#[tokio::test]
async fn a_read_that_traps_is_an_error_and_the_host_keeps_serving() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["offers"]).era(era)).await;
        let (code, message) = rpc_error(read(&host, "test://crash").await);
        assert_eq!(code, -32603, "{era:?}: {message}");
        assert!(
            message.contains("reading the resource failed: the component crashed"),
            "{message}"
        );
        // The next read and the next call run in fresh instances.
        assert!(!read(&host, "test://readme").await.unwrap().is_empty());
        assert_eq!(host.ok("color_count", json!({})).await["count"], 5);
    }
}

#[tokio::test]
async fn reads_reach_the_network_under_the_plugin_policy_and_only_to_read() {
    let server = Recorder::start().await;
    for era in ERAS {
        let config = format!(
            "{}[plugins.offers.config]\nfetch_url = \"{}/hello\"\n",
            server.allow_block("offers"),
            server.url
        );
        let host = Host::start(HostOptions::new(&["offers"]).era(era).config(config)).await;
        let fetched = read(&host, "test://fetched").await.unwrap();
        assert_eq!(text_of(&fetched[0]), "recorded", "{era:?}");
        let before = server.received().len();

        // A read is read-only: its POST never leaves the host.
        let (code, message) = rpc_error(read(&host, "test://post").await);
        assert_eq!(code, -32603, "{era:?}: {message}");
        assert!(message.contains("read-only"), "{message}");
        assert_eq!(
            server.received().len(),
            before,
            "no POST reached the server"
        );
    }

    // Without an allow entry, the same read is refused by the policy.
    let config = format!(
        "[plugins.offers.config]\nfetch_url = \"{}/hello\"\n",
        server.url
    );
    let before = server.received().len();
    let host = Host::start(HostOptions::new(&["offers"]).config(config)).await;
    let (code, message) = rpc_error(read(&host, "test://fetched").await);
    assert_eq!(code, -32603, "{message}");
    assert_eq!(server.received().len(), before);
}

#[tokio::test]
async fn prompts_are_listed_and_built_from_their_arguments() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["offers"]).era(era)).await;
        let prompts = host.client.list_all_prompts().await.unwrap();
        assert_eq!(prompts.len(), 1, "{era:?}");
        let prompt = &prompts[0];
        assert_eq!(prompt.name, "describe_color");
        assert_eq!(prompt.title.as_deref(), Some("Describe a Colour"));
        let arguments = prompt.arguments.as_ref().unwrap();
        let color = arguments.iter().find(|a| a.name == "color").unwrap();
        assert_eq!(color.required, Some(true));
        assert_eq!(
            color.description.as_deref(),
            Some("The colour to describe, e.g. \"red\".")
        );
        let tone = arguments.iter().find(|a| a.name == "tone").unwrap();
        assert_ne!(tone.required, Some(true));

        let arguments = json!({"color": "gold", "tone": "poetic"});
        let got = host
            .client
            .get_prompt(
                GetPromptRequestParams::new("describe_color")
                    .with_arguments(arguments.as_object().unwrap().clone()),
            )
            .await
            .unwrap();
        assert_eq!(got.messages.len(), 1);
        match &got.messages[0].content {
            ContentBlock::Text(t) => {
                assert_eq!(t.text, "Describe the colour gold in a poetic tone.")
            }
            other => panic!("expected text, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_prompt_without_a_required_argument_is_invalid_params() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["offers"]).era(era)).await;
        let get = |arguments: Value| {
            host.client.get_prompt(
                GetPromptRequestParams::new("describe_color")
                    .with_arguments(arguments.as_object().unwrap().clone()),
            )
        };
        let (code, message) = rpc_error(get(json!({"tone": "dry"})).await);
        assert_eq!(code, -32602, "{era:?}");
        assert!(
            message.contains("needs the argument \"color\""),
            "{message}"
        );
        let (code, message) = rpc_error(get(json!({"color": "red", "colour": "x"})).await);
        assert_eq!(code, -32602);
        assert!(message.contains("no argument \"colour\""), "{message}");
        let (code, message) = rpc_error(
            host.client
                .get_prompt(GetPromptRequestParams::new("no_such_prompt"))
                .await,
        );
        assert_eq!(code, -32602);
        assert!(message.contains("prompts/list"), "{message}");
        // Still serving.
        assert!(get(json!({"color": "red"})).await.is_ok());
    }
}

#[tokio::test]
async fn completion_suggests_template_variables_and_prompt_arguments() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["offers"]).era(era)).await;
        let name = host
            .client
            .complete_resource_argument("test://colors/{name}", "name", "g", None)
            .await
            .unwrap();
        assert_eq!(name.values, ["green", "grey", "gold"], "{era:?}");
        let color = host
            .client
            .complete_prompt_argument("describe_color", "color", "r", None)
            .await
            .unwrap();
        assert_eq!(color.values, ["red"], "{era:?}");
        // An argument not marked completable gets no suggestions.
        let tone = host
            .client
            .complete_prompt_argument("describe_color", "tone", "p", None)
            .await
            .unwrap();
        assert!(tone.values.is_empty());
        let (code, _) = rpc_error(
            host.client
                .complete_prompt_argument("no_such_prompt", "x", "", None)
                .await,
        );
        assert_eq!(code, -32602);
    }
}

#[tokio::test]
async fn capabilities_follow_what_components_offer() {
    let host = Host::start(HostOptions::new(&["offers"]).era(Era::Legacy)).await;
    host.tools().await;
    let info = host.client.peer_info().expect("the server's info");
    let capabilities = &info.capabilities;
    assert_eq!(
        capabilities.resources.as_ref().and_then(|r| r.list_changed),
        Some(true)
    );
    assert_eq!(
        capabilities.prompts.as_ref().and_then(|p| p.list_changed),
        Some(true)
    );
    assert!(capabilities.completions.is_some());
}

#[tokio::test]
async fn hot_reload_announces_resource_and_prompt_list_changes() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["hello"]).era(era)).await;
        host.tools().await;
        let mut stream = match era {
            Era::Legacy => None,
            Era::Modern => Some(
                host.client
                    .listen(
                        SubscriptionFilter::builder()
                            .resources_list_changed()
                            .prompts_list_changed()
                            .build(),
                    )
                    .await
                    .expect("the listen stream opens"),
            ),
        };
        assert!(host.client.list_all_resources().await.unwrap().is_empty());

        std::fs::write(host.plugins.join("offers.wasm"), component("offers")).unwrap();
        match &mut stream {
            None => {
                host.wait_for_seen(|s| s.resources_changed >= 1 && s.prompts_changed >= 1)
                    .await
            }
            Some(stream) => {
                let mut resources = false;
                let mut prompts = false;
                while !(resources && prompts) {
                    let n = tokio::time::timeout(std::time::Duration::from_secs(30), stream.next())
                        .await
                        .expect("a change arrives in time")
                        .expect("the stream works")
                        .expect("the stream is open");
                    match n {
                        rmcp::model::ServerNotification::ResourceListChangedNotification(_) => {
                            resources = true
                        }
                        rmcp::model::ServerNotification::PromptListChangedNotification(_) => {
                            prompts = true
                        }
                        other => panic!("{era:?}: unexpected {other:?}"),
                    }
                }
            }
        }
        assert_eq!(
            host.client.list_all_resources().await.unwrap().len(),
            5,
            "{era:?}"
        );
        assert_eq!(host.client.list_all_prompts().await.unwrap().len(), 1);
    }
}

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
        let uris = resource_uris(host).await;
        assert_eq!(
            uris,
            ["statuspro://guide", "statuspro://statuses"],
            "{era:?}"
        );

        let catalog = read(host, "statuspro://statuses").await.unwrap();
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

        let guide = read(host, "statuspro://guide").await.unwrap();
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

        let item = read(host, "katana://items/KNF-8IN-BLK").await.unwrap();
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

        let (code, message) = rpc_error(read(host, "katana://items/NO-SUCH-SKU").await);
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
    let offers = crate::support::components_dir().join("offers.wasm");
    let report = check(&offers);
    assert!(
        report.contains(
            "targets toolhost:plugin@0.2.0 (5 resources, 1 template, 1 prompt, completion)"
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
    assert!(!read(&host, "test://colors/blue").await.unwrap().is_empty());
}

#[tokio::test]
async fn a_block_prefix_names_its_prompts_as_it_names_its_tools() {
    for era in ERAS {
        let host = Host::start(
            HostOptions::new(&["offers"])
                .era(era)
                .config("[plugins.colors]\nfiles = [\"offers.wasm\"]\nprefix = \"colors\"\n"),
        )
        .await;
        let prompts = host.client.list_all_prompts().await.unwrap();
        let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["colors.describe_color"], "{era:?}");

        // The served name reaches the component's own prompt.
        let arguments = json!({"color": "gold"});
        let got = host
            .client
            .get_prompt(
                GetPromptRequestParams::new("colors.describe_color")
                    .with_arguments(arguments.as_object().unwrap().clone()),
            )
            .await
            .unwrap();
        match &got.messages[0].content {
            ContentBlock::Text(t) => assert!(t.text.contains("gold"), "{}", t.text),
            other => panic!("expected text, got {other:?}"),
        }
        let color = host
            .client
            .complete_prompt_argument("colors.describe_color", "color", "r", None)
            .await
            .unwrap();
        assert_eq!(color.values, ["red"], "{era:?}");

        // Its own name is not served.
        let (code, _) = rpc_error(
            host.client
                .get_prompt(
                    GetPromptRequestParams::new("describe_color")
                        .with_arguments(arguments.as_object().unwrap().clone()),
                )
                .await,
        );
        assert_eq!(code, -32602, "{era:?}");
    }
}

#[tokio::test]
async fn template_variables_reach_the_component_percent_decoded() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["offers"]).era(era)).await;
        // `gr%65y` is `grey` percent-encoded; the component knows `grey`
        // only, and sees the URI as the client sent it.
        let grey = read(&host, "test://colors/gr%65y").await.unwrap();
        assert_eq!(
            text_of(&grey[0]),
            "test://colors/gr%65y is the colour grey",
            "{era:?}"
        );
        // `%FF` decodes to a byte that is no UTF-8: invalid params naming
        // the variable, and the component is not asked.
        let (code, message) = rpc_error(read(&host, "test://colors/%FF").await);
        assert_eq!(code, -32602, "{era:?}: {message}");
        assert!(
            message.contains("{name} is not UTF-8 once percent-decoded"),
            "{message}"
        );
        assert!(!message.contains("no colour"), "{message}");
        assert!(!read(&host, "test://colors/red").await.unwrap().is_empty());
    }
}

#[tokio::test]
async fn katana_reads_a_sku_decoded_once() {
    for era in ERAS {
        let katana = crate::katana::Setup::new().era(era).start().await;
        let host = &katana.host;
        // Every character encoded (`%2D` is `-`): the item is found.
        let item = read(host, "katana://items/KNF%2D8IN%2DBLK").await.unwrap();
        let item: Value = serde_json::from_str(text_of(&item[0])).unwrap();
        assert_eq!(item["id"], katana_sandbox::seed::KNIFE_BLACK, "{era:?}");
        // `%252D` is `%2D` once decoded, a SKU Katana does not have; decoded
        // twice it would be the knife.
        let (code, message) = rpc_error(read(host, "katana://items/KNF%252D8IN%252DBLK").await);
        assert_eq!(code, not_found_code(era), "{era:?}: {message}");
        assert!(message.contains("\"KNF%2D8IN%2DBLK\""), "{message}");
    }
}

/// `name`'s component with a custom section naming `build` appended: the
/// same code, other bytes, as a rebuild of the component would be.
fn rebuilt(name: &str, build: u8) -> Vec<u8> {
    const SECTION: &[u8] = b"toolhost-test-build";
    let mut bytes = component(name);
    // Custom section (id 0), its size, then the name and the payload; every
    // length is below 128, so one LEB128 byte each.
    bytes.extend([0, (1 + SECTION.len() + 1) as u8, SECTION.len() as u8]);
    bytes.extend(SECTION);
    bytes.push(build);
    bytes
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
async fn removing_the_component_tells_its_subscribers_and_others_hear_nothing() {
    let host = start(&["offers", "conformance"], Era::Legacy, false, "").await;
    subscribe(&host, STATIC_TEXT).await.unwrap();
    subscribe(&host, README).await.unwrap();
    std::fs::remove_file(host.plugins.join("offers.wasm")).unwrap();
    host.wait_for_seen(|s| !s.updated.is_empty()).await;
    // The conformance component's reload is the barrier: its update comes
    // after everything the removal sent.
    write_then_rename(
        &host.plugins,
        "conformance.wasm",
        &rebuilt("conformance", 1),
    );
    host.wait_for_seen(|s| s.updated.len() >= 2).await;
    assert_eq!(
        host.handler.seen.lock().unwrap().updated,
        [README, STATIC_TEXT]
    );
    // A removed resource reads as not found; its subscription stays, so
    // the component coming back is announced too.
    let (code, _) = rpc_error(read(&host, README).await);
    assert_eq!(code, -32002);
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
        assert!(!read(&host, README).await.unwrap().is_empty());
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

#[tokio::test]
async fn the_resources_capability_says_subscribe() {
    let host = start(&["offers"], Era::Legacy, false, "").await;
    host.tools().await;
    let info = host.client.peer_info().expect("the server's info");
    let resources = info.capabilities.resources.as_ref().expect("resources");
    assert_eq!(resources.subscribe, Some(true));
}

#[tokio::test]
async fn a_config_reload_tells_the_subscribers_of_the_blocks_it_changed() {
    let config = |offers: &str, conformance: &str| {
        format!(
            "[plugins.offers]\nfiles = [\"offers.wasm\"]\n[plugins.offers.config]\nmark = \"{offers}\"\n\
             [plugins.conformance]\nfiles = [\"conformance.wasm\"]\n[plugins.conformance.config]\nmark = \"{conformance}\"\n"
        )
    };
    let host =
        Host::start(HostOptions::new(&["offers", "conformance"]).config(config("a", "a"))).await;
    subscribe(&host, README).await.unwrap();
    subscribe(&host, STATIC_TEXT).await.unwrap();
    // Only the offers block's settings change, then only the conformance
    // block's: each edit tells the subscribers of its own block's URIs.
    host.write_config(&config("b", "a"));
    host.wait_for_seen(|s| !s.updated.is_empty()).await;
    host.write_config(&config("b", "b"));
    host.wait_for_seen(|s| s.updated.len() >= 2).await;
    assert_eq!(
        host.handler.seen.lock().unwrap().updated,
        [README, STATIC_TEXT]
    );
}

#[tokio::test]
async fn a_config_reload_that_removes_a_block_announces_its_resources_gone() {
    let config = |blocks: &str| format!("[host]\nunmatched_files = \"skip\"\n{blocks}");
    let both =
        "[plugins.offers]\nfiles = [\"offers.wasm\"]\n[plugins.hello]\nfiles = [\"hello.wasm\"]\n";
    let host = Host::start(HostOptions::new(&["offers", "hello"]).config(config(both))).await;
    assert_eq!(resource_uris(&host).await.len(), 5);
    host.write_config(&config("[plugins.hello]\nfiles = [\"hello.wasm\"]\n"));
    host.wait_for_seen(|s| s.resources_changed >= 1 && s.prompts_changed >= 1)
        .await;
    assert!(resource_uris(&host).await.is_empty());
    assert!(host.client.list_all_prompts().await.unwrap().is_empty());
}
