//! What the model sees (ADR 0040): profiles served at `/mcp/<profile>`
//! and by `serve --profile`, with their own tools, order, names, words and
//! hide condition; served names that survive a clash; the 2026-07-28
//! list hints; progressive discovery's meta-tools.

use rmcp::model::{CacheScope, Tool};
use serde_json::json;

use crate::support::{
    Changes, Elicitation, Era, Host, HostOptions, component, http_client, session,
    write_then_rename,
};

/// The components every test here serves: the Katana tools, two
/// StatusPro tools and `echo` (the one that needs no upstream).
const COMPONENTS: &[&str] = &[
    "katana",
    "statuspro_get_order",
    "statuspro_list_orders",
    "echo",
];

/// A profile naming three tools from three plugins, one renamed with words
/// of the operator's.
const SUPPORT: &str = r#"
[[profiles]]
name = "support"
tools = ["statuspro_get_order/get_order", "echo", "katana/search_items"]

[profiles.tool."statuspro_get_order/get_order"]
as = "read_order"
title = "Read an Order"
description = "Read one StatusPro order with its history; use it when a customer asks about an order."
"#;

fn names(tools: &[Tool]) -> Vec<&str> {
    tools.iter().map(|t| t.name.as_ref()).collect()
}

#[tokio::test]
async fn a_profile_serves_its_tools_in_its_order_under_its_names_at_its_own_path() {
    let host = Host::start(HostOptions::new(COMPONENTS).http().config(SUPPORT)).await;
    let everything = host.tools().await;
    assert!(everything.len() > 3, "/mcp serves the whole catalog");
    let url = format!("{}/support", host.url.as_deref().unwrap());
    for era in [Era::Legacy, Era::Modern] {
        let (client, _) = http_client(&url, era, Elicitation::Unsupported, None).await;
        let tools = client.list_all_tools().await.unwrap();
        assert_eq!(
            names(&tools),
            ["read_order", "echo", "search_items"],
            "{era:?}: the profile's tools, in its order"
        );
        assert_eq!(tools[0].title.as_deref(), Some("Read an Order"));
        assert!(
            tools[0]
                .description
                .as_deref()
                .unwrap()
                .starts_with("Read one StatusPro order")
        );
        let echo = everything.iter().find(|t| t.name == "echo").unwrap();
        assert_eq!(
            &tools[1], echo,
            "an entry without words of the operator's is the tool itself"
        );

        let answer = client
            .call_tool(
                rmcp::model::CallToolRequestParams::new("echo").with_arguments(
                    json!({"message": "through a profile"})
                        .as_object()
                        .unwrap()
                        .clone(),
                ),
            )
            .await
            .unwrap();
        assert_eq!(
            answer.structured_content,
            Some(json!({"message": "through a profile"}))
        );
        // Outside the profile: unknown here, as a hidden tool is.
        let outside = client
            .call_tool(rmcp::model::CallToolRequestParams::new("list_orders"))
            .await
            .unwrap_err()
            .to_string();
        assert!(outside.contains("unknown tool"), "{era:?}: {outside}");
        let renamed_away = client
            .call_tool(rmcp::model::CallToolRequestParams::new("get_order"))
            .await
            .unwrap_err()
            .to_string();
        assert!(renamed_away.contains("unknown tool"), "{renamed_away}");
        let _ = client.cancel().await;
    }
}

#[tokio::test]
async fn a_path_naming_no_profile_is_not_found() {
    let host = Host::start(HostOptions::new(&["echo"]).http().config(SUPPORT)).await;
    let url = format!("{}/nobody", host.url.as_deref().unwrap());
    let answer = reqwest::Client::new()
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 404);
    assert!(
        answer
            .text()
            .await
            .unwrap()
            .contains("no profile \"nobody\"")
    );
}

#[tokio::test]
async fn serve_profile_on_stdio_serves_that_profile_alone() {
    let host = Host::start(
        HostOptions::new(COMPONENTS)
            .config(SUPPORT)
            .arg("--profile")
            .arg("support"),
    )
    .await;
    assert_eq!(
        names(&host.tools().await),
        ["read_order", "echo", "search_items"]
    );
}

#[tokio::test]
async fn serve_with_an_unknown_profile_refuses_to_start_and_names_the_profiles() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(&config, SUPPORT).unwrap();
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["serve", "--profile", "sales", "--plugins"])
        .arg(&plugins)
        .arg("--config")
        .arg(&config)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--profile \"sales\"") && stderr.contains("it has: support"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "stdout carries the protocol only");
}

#[tokio::test]
async fn a_profile_keeps_serving_its_names_when_another_plugin_brings_the_same_name() {
    let config = r#"
[[profiles]]
name = "stable"
tools = ["echo/echo"]
"#;
    let host = Host::start(
        HostOptions::new(&["echo"])
            .config(config)
            .arg("--profile")
            .arg("stable"),
    )
    .await;
    let mut changes = Changes::open(&host, Era::Legacy).await;
    assert_eq!(names(&host.tools().await), ["echo"]);
    // A second file offering `echo`: the catalog serves neither (a clash),
    // the profile still serves the one it named by block.
    write_then_rename(&host.plugins, "echo_copy.wasm", &component("echo"));
    changes.next(&host).await;
    assert_eq!(names(&host.tools().await), ["echo"]);
    assert_eq!(
        host.ok("echo", json!({"message": "still here"})).await["message"],
        "still here"
    );
}

#[tokio::test]
async fn lists_carry_a_ttl_and_say_private_only_when_they_depend_on_the_caller() {
    let config = r#"
[host]
list_ttl_ms = 5000

[[profiles]]
name = "reads"
select = 'tool.annotations.readOnlyHint'

[[profiles]]
name = "mine"
select = 'true'
hide = 'identity.source == "http" && tool.name == "echo"'
"#;
    let host = Host::start(
        HostOptions::new(COMPONENTS)
            .http()
            .era(Era::Modern)
            .config(config),
    )
    .await;
    let base = host.url.clone().unwrap();
    for (path, scope) in [
        ("", CacheScope::Public),
        ("/reads", CacheScope::Public),
        ("/mine", CacheScope::Private),
    ] {
        let (client, _) = http_client(
            &format!("{base}{path}"),
            Era::Modern,
            Elicitation::Unsupported,
            None,
        )
        .await;
        let first = client.list_tools(None).await.unwrap();
        assert_eq!(
            (first.ttl_ms, first.cache_scope),
            (Some(5000), Some(scope)),
            "{path}"
        );
        let again = client.list_tools(None).await.unwrap();
        assert_eq!(
            names(&first.tools),
            names(&again.tools),
            "the same order every time"
        );
        let mut sorted = names(&first.tools);
        sorted.sort_unstable();
        assert_eq!(
            names(&first.tools),
            sorted,
            "{path}: selected tools come by name"
        );
        match path {
            "/reads" => assert!(
                first
                    .tools
                    .iter()
                    .all(|t| t.annotations.as_ref().unwrap().read_only_hint == Some(true))
            ),
            "/mine" => assert!(!names(&first.tools).contains(&"echo"), "its own hide rule"),
            _ => {}
        }
        let prompts = client.list_prompts(None).await.unwrap();
        assert_eq!(
            (prompts.ttl_ms, prompts.cache_scope),
            (Some(5000), Some(scope))
        );
        let _ = client.cancel().await;
    }
}

#[tokio::test]
async fn a_discovery_profile_lists_three_meta_tools_that_find_describe_and_call_the_rest() {
    let config = r#"
[[profiles]]
name = "find"
select = 'true'
discovery = true
hide = 'tool.name == "list_orders"'
"#;
    for era in [Era::Legacy, Era::Modern] {
        let host = Host::start(
            HostOptions::new(COMPONENTS)
                .era(era)
                .config(config)
                .arg("--profile")
                .arg("find"),
        )
        .await;
        let tools = host.tools().await;
        assert_eq!(
            names(&tools),
            ["find_tools", "describe_tool", "call_tool"],
            "{era:?}"
        );

        let find = |query: &str| {
            let query = query.to_string();
            let host = &host;
            async move {
                host.ok("find_tools", json!({"query": query, "limit": 3}))
                    .await
            }
        };
        let found = find("receive the delivered items of a purchase order").await;
        assert_eq!(
            found["tools"][0]["name"], "receive_purchase_order",
            "{found}"
        );
        assert_eq!(
            found,
            find("receive the delivered items of a purchase order").await,
            "deterministic"
        );
        let echo = find("return my message unchanged").await;
        assert_eq!(echo["tools"][0]["name"], "echo", "{echo}");
        // Hidden by the profile: never found, not described, not callable.
        let listing = find("list orders search filter").await;
        assert!(
            listing["tools"]
                .as_array()
                .unwrap()
                .iter()
                .all(|t| t["name"] != "list_orders"),
            "{listing}"
        );
        assert!(
            host.call("describe_tool", json!({"name": "list_orders"}))
                .await
                .unwrap_err()
                .to_string()
                .contains("unknown tool")
        );

        let described = host.ok("describe_tool", json!({"name": "echo"})).await;
        assert_eq!(described["inputSchema"]["required"], json!(["message"]));
        assert_eq!(described["annotations"]["readOnlyHint"], true);

        let called = host
            .ok(
                "call_tool",
                json!({"name": "echo", "arguments": {"message": "hi"}}),
            )
            .await;
        assert_eq!(called, json!({"message": "hi"}));
        let refused = host
            .call("call_tool", json!({"name": "list_orders", "arguments": {}}))
            .await
            .unwrap_err()
            .to_string();
        assert!(refused.contains("unknown tool"), "{refused}");
        // A tool of the profile may be called by its name too.
        assert_eq!(
            host.ok("echo", json!({"message": "direct"})).await["message"],
            "direct"
        );
    }
}

#[path = "../components/catalog/src/queries.rs"]
mod queries;

/// The generated 1,000-tool catalog: 100 copies of the `catalog` component,
/// each with its domain, and a discovery profile over all of it.
fn thousand_tools() -> HostOptions {
    let bytes = component("catalog");
    let mut options = HostOptions::new(&[]);
    let mut config =
        String::from("[[profiles]]\nname = \"find\"\nselect = 'true'\ndiscovery = true\n\n");
    for i in 0..100 {
        options = options.file(&format!("cat_{i:02}.wasm"), bytes.clone());
        config.push_str(&format!("[plugins.cat_{i:02}.config]\ndomain = \"{i}\"\n"));
    }
    options.config(config).arg("--profile").arg("find")
}

#[tokio::test]
async fn discovery_finds_the_intended_tool_among_the_first_five_for_nine_queries_in_ten_of_a_thousand_tools()
 {
    let host = Host::start(thousand_tools()).await;
    let mut found = 0;
    let mut missed = Vec::new();
    for (query, expected) in queries::QUERIES {
        let answer = host
            .ok("find_tools", json!({"query": query, "limit": 5}))
            .await;
        assert_eq!(answer["searched"], 1000, "every tool is searched");
        let names: Vec<&str> = answer["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        if names.contains(expected) {
            found += 1;
        } else {
            missed.push(format!("{query:?} → {names:?}, not {expected}"));
        }
    }
    let recall = f64::from(found) / queries::QUERIES.len() as f64;
    assert!(
        queries::QUERIES.len() >= 50 && recall >= 0.9,
        "recall@5 {recall:.2}; missed:\n{}",
        missed.join("\n")
    );
}

#[tokio::test]
async fn a_policy_rule_reads_the_profile_a_request_came_through() {
    let config = format!(
        r#"{SUPPORT}
[[policy.rules]]
name = "no-echo-for-support"
when = 'request.profile == "support" && tool.name == "echo"'
outcome = "deny"
reason = "support does not echo"

[[policy.rules]]
name = "whole-catalog-searches-nothing"
when = 'request.profile == "" && tool.name == "search_items"'
outcome = "deny"
reason = "search through a profile"
"#
    );
    let host = Host::start(HostOptions::new(COMPONENTS).http().config(&config)).await;
    let base = host.url.clone().unwrap();
    let message = json!({"message": "hi"});
    let (support, _) = http_client(
        &format!("{base}/support"),
        Era::Legacy,
        Elicitation::Unsupported,
        None,
    )
    .await;
    let issue = session::tool_error(&support, "echo", message.clone()).await;
    assert_eq!(issue["message"], "support does not echo", "{issue}");
    // The same tool through /mcp: the rule does not hold there.
    assert_eq!(host.ok("echo", message).await["message"], "hi");
    let issue = host
        .tool_error("search_items", json!({"query": "knife"}))
        .await;
    assert_eq!(issue["message"], "search through a profile", "{issue}");
    let _ = support.cancel().await;
}

/// A profile renaming a resource and a prompt of the `offers` component.
const SHOP: &str = r#"
[[profiles]]
name = "shop"
tools = ["echo"]
resources = ["test://readme", "test://logo", "test://colors/{name}"]
prompts = ["describe_color"]

[profiles.resource."test://readme"]
as = "shop://guide"
title = "Shop Guide"

[profiles.prompt.describe_color]
as = "colour_words"
description = "Describe a colour in words."
"#;

#[tokio::test]
async fn a_profile_serves_resources_and_prompts_under_its_names_in_lists_reads_gets_completion_and_subscriptions()
 {
    use crate::support::offers::{read, rebuilt, resource_uris, text_of};
    use rmcp::model::{GetPromptRequestParams, ServerNotification, SubscribeRequestParams};
    for era in [Era::Legacy, Era::Modern] {
        let host = Host::start(
            HostOptions::new(&["offers", "echo"])
                .era(era)
                .config(SHOP)
                .arg("--profile")
                .arg("shop"),
        )
        .await;
        let client = &host.client;
        assert_eq!(
            resource_uris(client).await,
            ["shop://guide", "test://logo"],
            "{era:?}"
        );
        let listed = client.list_all_resources().await.unwrap();
        let guide = listed.iter().find(|r| r.uri == "shop://guide").unwrap();
        assert_eq!(guide.title.as_deref(), Some("Shop Guide"));
        let contents = read(client, "shop://guide").await.unwrap();
        assert!(!text_of(&contents[0]).is_empty());
        let rmcp::model::ResourceContents::TextResourceContents { uri, .. } = &contents[0] else {
            panic!("text")
        };
        assert_eq!(uri, "shop://guide", "contents at the URI asked for");
        assert!(
            read(client, "test://readme").await.is_err(),
            "{era:?}: the URI renamed away is unknown here"
        );
        // A template is served as its component writes it.
        assert!(read(client, "test://colors/red").await.is_ok());

        let prompts = client.list_all_prompts().await.unwrap();
        assert_eq!(prompts.len(), 1);
        assert_eq!(prompts[0].name, "colour_words");
        assert_eq!(
            prompts[0].description.as_deref(),
            Some("Describe a colour in words.")
        );
        let arguments = json!({"color": "red"}).as_object().unwrap().clone();
        let got = client
            .get_prompt(
                GetPromptRequestParams::new("colour_words").with_arguments(arguments.clone()),
            )
            .await
            .unwrap();
        assert!(
            format!("{:?}", got.messages).contains("colour red"),
            "{got:?}"
        );
        assert!(
            client
                .get_prompt(GetPromptRequestParams::new("describe_color").with_arguments(arguments))
                .await
                .is_err(),
            "{era:?}: the name renamed away is unknown here"
        );
        let completed = client
            .complete_prompt_argument("colour_words", "color", "re", None)
            .await
            .unwrap();
        assert_eq!(completed.values, ["red"], "{era:?}");

        // Subscriptions are to the served URI, and updates name it.
        match era {
            Era::Legacy => {
                #[allow(deprecated)]
                let refused = client
                    .subscribe(SubscribeRequestParams::new("test://readme"))
                    .await;
                assert!(refused.is_err(), "the URI renamed away");
                #[allow(deprecated)]
                client
                    .subscribe(SubscribeRequestParams::new("shop://guide"))
                    .await
                    .unwrap();
                write_then_rename(&host.plugins, "offers.wasm", &rebuilt("offers", 1));
                host.wait_for_seen(|s| !s.updated.is_empty()).await;
                assert_eq!(host.handler.seen.lock().unwrap().updated, ["shop://guide"]);
            }
            Era::Modern => {
                let filter = rmcp::model::SubscriptionFilter::builder()
                    .resource_subscriptions(["shop://guide", "test://readme", "test://fetched"])
                    .build();
                let mut stream = client.listen(filter).await.unwrap();
                assert_eq!(
                    stream.acknowledged().resource_subscriptions.as_deref(),
                    Some(&["shop://guide".to_string()][..]),
                    "acknowledged as the profile serves it, with nothing outside it"
                );
                write_then_rename(&host.plugins, "offers.wasm", &rebuilt("offers", 1));
                let update =
                    tokio::time::timeout(std::time::Duration::from_secs(30), stream.next())
                        .await
                        .unwrap()
                        .unwrap()
                        .unwrap();
                let ServerNotification::ResourceUpdatedNotification(update) = update else {
                    panic!("{update:?}")
                };
                assert_eq!(update.params.uri, "shop://guide");
            }
        }
    }
}

#[tokio::test]
async fn a_listen_stream_through_a_profile_is_acknowledged_with_only_what_the_profile_serves() {
    let config = "[[profiles]]\nname = \"readme\"\nresources = [\"test://readme\"]\n";
    let host = Host::start(
        HostOptions::new(&["offers"])
            .http()
            .era(Era::Modern)
            .config(config),
    )
    .await;
    // Once the initial load is in: what is served is known.
    host.tools().await;
    let base = host.url.clone().unwrap();
    let uris = ["test://readme", "test://logo", "test://colors/red"];
    for (path, expected) in [("/readme", &uris[..1]), ("", &uris[..])] {
        let (client, _) = http_client(
            &format!("{base}{path}"),
            Era::Modern,
            Elicitation::Unsupported,
            None,
        )
        .await;
        let filter = rmcp::model::SubscriptionFilter::builder()
            .resource_subscriptions(uris)
            .build();
        let stream = client.listen(filter).await.unwrap();
        assert_eq!(
            stream.acknowledged().resource_subscriptions.as_deref(),
            Some(&expected.iter().map(|u| u.to_string()).collect::<Vec<_>>()[..]),
            "at /mcp{path}"
        );
        let _ = client.cancel().await;
    }
}

/// A discovery profile over every tool, hiding `list_orders`.
const FIND: &str = r#"
[[profiles]]
name = "find"
select = 'true'
discovery = true
hide = 'tool.name == "list_orders"'
"#;

fn meta_and(extra: &[&'static str]) -> Vec<&'static str> {
    let mut names = vec!["find_tools", "describe_tool", "call_tool"];
    names.extend(extra);
    names
}

#[tokio::test]
async fn a_found_tool_enabled_joins_the_sessions_list_with_a_list_change_and_leaves_it_when_a_reload_hides_it()
 {
    let host = Host::start(
        HostOptions::new(COMPONENTS)
            .config(FIND)
            .arg("--profile")
            .arg("find"),
    )
    .await;
    let mut changes = Changes::open(&host, Era::Legacy).await;
    assert_eq!(names(&host.tools().await), meta_and(&[]));

    let described = host
        .ok("describe_tool", json!({"name": "echo", "enable": true}))
        .await;
    assert_eq!(
        (&described["name"], &described["enabled"]),
        (&json!("echo"), &json!(true))
    );
    changes.next(&host).await;
    let tools = host.tools().await;
    assert_eq!(names(&tools), meta_and(&["echo"]));
    assert_eq!(
        tools[3].input_schema["required"],
        json!(["message"]),
        "the whole tool, as the catalog lists it"
    );
    // Described without `enable`, a tool stays out of the list.
    host.ok("describe_tool", json!({"name": "get_order"})).await;
    assert_eq!(names(&host.tools().await), meta_and(&["echo"]));
    // The profile's hide wins: a hidden tool cannot be enabled.
    let hidden = host
        .call(
            "describe_tool",
            json!({"name": "list_orders", "enable": true}),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(hidden.contains("unknown tool"), "{hidden}");

    // A reload that hides it takes it out, with a list change; one that
    // shows it again does not put it back until it is enabled again.
    host.write_config(&FIND.replace(
        r#"tool.name == "list_orders""#,
        r#"tool.name in ["list_orders", "echo"]"#,
    ));
    changes.next(&host).await;
    assert_eq!(names(&host.tools().await), meta_and(&[]));
    host.write_config(FIND);
    changes.next(&host).await;
    assert_eq!(names(&host.tools().await), meta_and(&[]));
}

#[tokio::test]
async fn a_tool_one_session_enables_stays_out_of_every_other_sessions_list() {
    let host = Host::start(HostOptions::new(COMPONENTS).http().config(FIND)).await;
    host.tools().await;
    let url = format!("{}/find", host.url.as_deref().unwrap());
    let (first, first_seen) = http_client(&url, Era::Legacy, Elicitation::Unsupported, None).await;
    let (second, second_seen) =
        http_client(&url, Era::Legacy, Elicitation::Unsupported, None).await;

    session::ok(
        &first,
        "describe_tool",
        json!({"name": "echo", "enable": true}),
    )
    .await;
    session::wait_for_seen(&first_seen, |s| s.list_changed >= 1).await;
    assert_eq!(names(&session::tools(&first).await), meta_and(&["echo"]));
    assert_eq!(names(&session::tools(&second).await), meta_and(&[]));

    session::ok(
        &second,
        "describe_tool",
        json!({"name": "search_items", "enable": true}),
    )
    .await;
    session::wait_for_seen(&second_seen, |s| s.list_changed >= 1).await;
    assert_eq!(
        names(&session::tools(&second).await),
        meta_and(&["search_items"])
    );
    assert_eq!(names(&session::tools(&first).await), meta_and(&["echo"]));
    // A reload that edits the profile tells every session, tools first,
    // then resources: once the second has heard of its resources, it has
    // heard every tool-list change meant for it, and only its own enabling
    // and the reload's are among them (the first's went to the first).
    host.write_config(&FIND.replace(
        r#"tool.name == "list_orders""#,
        r#"tool.name in ["list_orders"]"#,
    ));
    session::wait_for_seen(&second_seen, |s| s.resources_changed >= 1).await;
    assert_eq!(second_seen.seen.lock().unwrap().list_changed, 2);
    // What stays visible stays enabled across the reload.
    assert_eq!(
        names(&session::tools(&second).await),
        meta_and(&["search_items"])
    );
    assert_eq!(names(&session::tools(&first).await), meta_and(&["echo"]));
    // The whole catalog at /mcp is no session of the profile's.
    assert!(names(&host.tools().await).contains(&"get_order"));

    // A 2026-07-28 request has no session to enable a tool into.
    let (modern, _) = http_client(&url, Era::Modern, Elicitation::Unsupported, None).await;
    let refused = session::call(
        &modern,
        "describe_tool",
        json!({"name": "echo", "enable": true}),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(refused.contains("call_tool"), "{refused}");
    for client in [first, second, modern] {
        let _ = client.cancel().await;
    }
}
