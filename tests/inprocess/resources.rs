//! What `toolhost:plugin@0.2.0` components offer beside tools (ADR 0017):
//! resources, resource templates, prompts, completion and subscriptions,
//! served by the Gateway to rmcp's client in both eras, from the `offers`
//! test component. What needs HTTP sessions, the log, the CLI or the
//! sandboxes is the process tier's (`tests/e2e/resources.rs`).

use rmcp::ServiceError;
use rmcp::model::{
    ContentBlock, GetPromptRequestParams, ResourceContents, SubscribeRequestParams,
    SubscriptionFilter,
};
use serde_json::{Value, json};

use crate::support::offers::{not_found_code, read, rebuilt, resource_uris, rpc_error, text_of};
use crate::support::{ERAS, Era, Host, HostOptions, Recorder, component, write_then_rename};

/// A Gateway serving `components` to an `era` client, with `config` as
/// its `toolhost.toml`.
async fn start(components: &[&str], era: Era, config: &str) -> Host {
    Host::start(HostOptions::new(components).era(era).config(config)).await
}

/// `resources/subscribe` (legacy clients).
async fn subscribe(host: &Host, uri: &str) -> Result<(), ServiceError> {
    #[allow(deprecated)]
    host.client
        .subscribe(SubscribeRequestParams::new(uri))
        .await
}

const README: &str = "test://readme";
const STATIC_TEXT: &str = "test://static-text";

#[tokio::test]
async fn resources_and_templates_are_listed_and_read() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["offers", "hello"]).era(era)).await;
        let uris = resource_uris(&host.client).await;
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

        let contents = read(&host.client, "test://readme").await.unwrap();
        assert_eq!(contents.len(), 1);
        assert!(text_of(&contents[0]).starts_with("# Offers"), "{era:?}");
        match &read(&host.client, "test://logo").await.unwrap()[0] {
            ResourceContents::BlobResourceContents {
                blob, mime_type, ..
            } => {
                assert_eq!(blob, "iVBORw==", "the four bytes, base64-encoded");
                assert_eq!(mime_type.as_deref(), Some("application/octet-stream"));
            }
            other => panic!("expected a blob, got {other:?}"),
        }
        let red = read(&host.client, "test://colors/red").await.unwrap();
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
        let (code, message) = rpc_error(read(&host.client, "test://nothing-here").await);
        assert_eq!(code, not_found_code(era), "{era:?}: {message}");
        assert!(message.contains("resources/list"), "{message}");
        // The URI in the error's data, as MCP's example has it.
        match read(&host.client, "test://nothing-here").await {
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
        let (code, message) = rpc_error(read(&host.client, "test://colors/purple").await);
        assert_eq!(code, not_found_code(era), "{era:?}: {message}");
        assert!(message.contains("no colour \"purple\""), "{message}");

        assert!(
            !read(&host.client, "test://readme")
                .await
                .unwrap()
                .is_empty()
        );
    }
}

#[tokio::test]
async fn a_read_that_traps_is_an_error_and_the_host_keeps_serving() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["offers"]).era(era)).await;
        let (code, message) = rpc_error(read(&host.client, "test://crash").await);
        assert_eq!(code, -32603, "{era:?}: {message}");
        assert!(
            message.contains("reading the resource failed: the component crashed"),
            "{message}"
        );
        // The next read and the next call run in fresh instances.
        assert!(
            !read(&host.client, "test://readme")
                .await
                .unwrap()
                .is_empty()
        );
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
        let fetched = read(&host.client, "test://fetched").await.unwrap();
        assert_eq!(text_of(&fetched[0]), "recorded", "{era:?}");
        let before = server.received().len();

        // A read is read-only: its POST never leaves the host.
        let (code, message) = rpc_error(read(&host.client, "test://post").await);
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
    let (code, message) = rpc_error(read(&host.client, "test://fetched").await);
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
        let grey = read(&host.client, "test://colors/gr%65y").await.unwrap();
        assert_eq!(
            text_of(&grey[0]),
            "test://colors/gr%65y is the colour grey",
            "{era:?}"
        );
        // `%FF` decodes to a byte that is no UTF-8: invalid params naming
        // the variable, and the component is not asked.
        let (code, message) = rpc_error(read(&host.client, "test://colors/%FF").await);
        assert_eq!(code, -32602, "{era:?}: {message}");
        assert!(
            message.contains("{name} is not UTF-8 once percent-decoded"),
            "{message}"
        );
        assert!(!message.contains("no colour"), "{message}");
        assert!(
            !read(&host.client, "test://colors/red")
                .await
                .unwrap()
                .is_empty()
        );
    }
}

#[tokio::test]
async fn removing_the_component_tells_its_subscribers_and_others_hear_nothing() {
    let host = start(&["offers", "conformance"], Era::Legacy, "").await;
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
    let (code, _) = rpc_error(read(&host.client, README).await);
    assert_eq!(code, -32002);
}

#[tokio::test]
async fn the_resources_capability_says_subscribe() {
    let host = start(&["offers"], Era::Legacy, "").await;
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
    assert_eq!(resource_uris(&host.client).await.len(), 5);
    host.write_config(&config("[plugins.hello]\nfiles = [\"hello.wasm\"]\n"));
    host.wait_for_seen(|s| s.resources_changed >= 1 && s.prompts_changed >= 1)
        .await;
    assert!(resource_uris(&host.client).await.is_empty());
    assert!(host.client.list_all_prompts().await.unwrap().is_empty());
}
