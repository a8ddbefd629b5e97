//! `[[access]]` applied to everything a plugin serves, from the
//! configuration the request's registry was built for: a config reload
//! that removes a caller's grant hides and refuses the plugin's tools,
//! resources, templates, prompts and completion at once, with the list
//! changes each list needs, and a reload that adds it back shows them
//! again; a listen stream's acknowledgement lists only URIs the caller may
//! see. Through the real binary over Streamable HTTP with static bearer
//! tokens, in both eras.

use rmcp::ServiceError;
use rmcp::model::{
    GetPromptRequestParams, ReadResourceRequestParams, ServerNotification, SubscribeRequestParams,
    SubscriptionFilter,
};
use serde_json::json;

use crate::support::infra::sha256_hex;
use crate::support::offers::{read, rpc_error, text_of};
use crate::support::{ERAS, Elicitation, Era, Host, HostOptions};

const RESOURCE: &str = "https://mcp.example.com/mcp";
const ALICE: &str = "alice-static-token-0123456789abcdef";
const BOB: &str = "bob-static-token-0123456789abcdef";
const README: &str = "test://readme";
const RED: &str = "test://colors/red";

/// `[auth]` with a static token for alice and one for bob; alice sees the
/// blocks `alice_sees`, bob only `hello`.
fn config(alice_sees: &[&str]) -> String {
    config_for(alice_sees, &["hello"])
}

/// `[auth]` with a static token for alice and one for bob; alice sees the
/// blocks `alice_sees`, bob `bob_sees`.
fn config_for(alice_sees: &[&str], bob_sees: &[&str]) -> String {
    let token = |subject: &str, token: &str| {
        format!(
            "[[auth.tokens]]\nsubject = \"{subject}\"\nsha256 = \"{}\"\nscopes = [\"mcp:tools\"]\n",
            sha256_hex(token)
        )
    };
    format!(
        "[auth]\nresource = \"{RESOURCE}\"\n{}{}\
         [[access]]\nsubjects = [\"alice\"]\nplugins = {}\n\
         [[access]]\nsubjects = [\"bob\"]\nplugins = {}\n",
        token("alice", ALICE),
        token("bob", BOB),
        serde_json::to_string(alice_sees).unwrap(),
        serde_json::to_string(bob_sees).unwrap(),
    )
}

/// What a caller sees of everything the `offers` component serves: its
/// tool, resources, templates and prompts, and whether reading, getting a
/// prompt and completing work.
#[derive(Debug, PartialEq)]
struct Seen {
    tool: bool,
    resources: usize,
    templates: usize,
    prompts: usize,
    read: bool,
    prompt: bool,
    prompt_completion: bool,
    template_completion: bool,
}

impl Seen {
    /// What a caller who may see `offers` sees.
    const ALL: Seen = Seen {
        tool: true,
        resources: 5,
        templates: 1,
        prompts: 1,
        read: true,
        prompt: true,
        prompt_completion: true,
        template_completion: true,
    };

    /// What a caller who may not see `offers` sees.
    const NOTHING: Seen = Seen {
        tool: false,
        resources: 0,
        templates: 0,
        prompts: 0,
        read: false,
        prompt: false,
        prompt_completion: false,
        template_completion: false,
    };
}

/// Everything `host`'s client sees of `offers`; each refusal is checked to
/// answer as for something that does not exist.
async fn seen(host: &Host, era: Era) -> Seen {
    let client = &host.client;
    let tools = client.list_all_tools().await.unwrap();
    let read = client
        .read_resource(ReadResourceRequestParams::new(README))
        .await;
    if read.is_err() {
        let (code, message) = rpc_error(read.as_ref().map(|_| ()).map_err(clone_error));
        let unknown = rpc_error(
            client
                .read_resource(ReadResourceRequestParams::new("test://no-such-thing"))
                .await,
        );
        assert_eq!(
            code, unknown.0,
            "{era:?}: a hidden URI reads as an unknown one"
        );
        assert_eq!(
            message,
            unknown.1.replace("test://no-such-thing", README),
            "{era:?}"
        );
    }
    let prompt = client
        .get_prompt(
            GetPromptRequestParams::new("describe_color")
                .with_arguments(json!({ "color": "red" }).as_object().unwrap().clone()),
        )
        .await;
    if let Err(e) = &prompt {
        let message = e.to_string();
        assert!(message.contains("unknown prompt"), "{era:?}: {message}");
    }
    let prompt_completion = client
        .complete_prompt_argument("describe_color", "color", "r", None)
        .await;
    let template_completion = client
        .complete_resource_argument("test://colors/{name}", "name", "r", None)
        .await;
    Seen {
        tool: tools.iter().any(|t| t.name == "color_count"),
        resources: client.list_all_resources().await.unwrap().len(),
        templates: client.list_all_resource_templates().await.unwrap().len(),
        prompts: client.list_all_prompts().await.unwrap().len(),
        read: read.is_ok(),
        prompt: prompt.is_ok(),
        prompt_completion: prompt_completion.is_ok_and(|c| !c.values.is_empty()),
        template_completion: template_completion.is_ok_and(|c| !c.values.is_empty()),
    }
}

fn clone_error(e: &ServiceError) -> ServiceError {
    match e {
        ServiceError::McpError(data) => ServiceError::McpError(data.clone()),
        other => panic!("not a JSON-RPC error: {other:?}"),
    }
}

/// Counts list changes of tools, resources and prompts the way each era
/// receives them: a legacy session's notifications, a 2026-07-28 listen
/// stream.
struct ListChanges {
    stream: Option<rmcp::service::Subscription>,
    /// (tools, resources, prompts) consumed so far.
    counted: (usize, usize, usize),
}

impl ListChanges {
    async fn open(host: &Host, era: Era) -> ListChanges {
        let stream = match era {
            Era::Legacy => None,
            Era::Modern => Some(
                host.client
                    .listen(
                        SubscriptionFilter::builder()
                            .tools_list_changed()
                            .resources_list_changed()
                            .prompts_list_changed()
                            .build(),
                    )
                    .await
                    .expect("the listen stream opens"),
            ),
        };
        ListChanges {
            stream,
            counted: (0, 0, 0),
        }
    }

    /// Waits until one more change of each list arrived.
    async fn next_of_each(&mut self, host: &Host) {
        let want = (self.counted.0 + 1, self.counted.1 + 1, self.counted.2 + 1);
        match &mut self.stream {
            None => {
                host.wait_for_seen(|s| {
                    s.list_changed >= want.0
                        && s.resources_changed >= want.1
                        && s.prompts_changed >= want.2
                })
                .await;
            }
            Some(stream) => {
                let mut got = self.counted;
                while got.0 < want.0 || got.1 < want.1 || got.2 < want.2 {
                    let n = tokio::time::timeout(std::time::Duration::from_secs(30), stream.next())
                        .await
                        .expect("a change arrives in time")
                        .expect("the stream works")
                        .expect("the stream is open");
                    match n {
                        ServerNotification::ToolListChangedNotification(_) => got.0 += 1,
                        ServerNotification::ResourceListChangedNotification(_) => got.1 += 1,
                        ServerNotification::PromptListChangedNotification(_) => got.2 += 1,
                        other => panic!("unexpected {other:?}"),
                    }
                }
            }
        }
        self.counted = want;
    }
}

/// Starts `offers` and `hello` over HTTP with alice seeing `alice_sees`,
/// with alice's client of `era`.
async fn start(era: Era, alice_sees: &[&str]) -> Host {
    Host::start(
        HostOptions::new(&["offers", "hello"])
            .http()
            .bearer(ALICE)
            .era(era)
            .config(config(alice_sees)),
    )
    .await
}

/// The resource URIs a new 2026-07-28 listen stream of `bearer` asking for
/// `uris` is acknowledged with.
async fn acknowledged_uris(host: &Host, bearer: &str, uris: &[&str]) -> Vec<String> {
    let other = host
        .another_client(Era::Modern, Elicitation::Unsupported, Some(bearer))
        .await;
    let stream = other
        .client
        .listen(
            SubscriptionFilter::builder()
                .resource_subscriptions(uris.iter().copied())
                .build(),
        )
        .await
        .expect("the listen stream opens");
    let mut acknowledged = stream
        .acknowledged()
        .resource_subscriptions
        .clone()
        .unwrap_or_default();
    acknowledged.sort();
    acknowledged
}

#[tokio::test]
async fn a_reload_that_removes_a_grant_hides_and_refuses_everything_the_plugin_serves_at_once() {
    for era in ERAS {
        let host = start(era, &["offers", "hello"]).await;
        assert_eq!(seen(&host, era).await, Seen::ALL, "{era:?}: before");
        let mut changes = ListChanges::open(&host, era).await;

        host.write_config(&config(&["hello"]));
        changes.next_of_each(&host).await;
        assert_eq!(seen(&host, era).await, Seen::NOTHING, "{era:?}: after");
        // The other plugin stays.
        let tools = host.client.list_all_tools().await.unwrap();
        assert!(
            tools.iter().any(|t| t.name == "greet"),
            "{era:?}: {tools:?}"
        );
        if era == Era::Legacy {
            #[allow(deprecated)]
            let subscribed = host
                .client
                .subscribe(SubscribeRequestParams::new(README))
                .await;
            let (_, message) = rpc_error(subscribed);
            assert!(message.contains("no resource at"), "{message}");
        }
        assert!(
            acknowledged_uris(&host, ALICE, &[README, RED])
                .await
                .is_empty(),
            "{era:?}: a listen stream is acknowledged with no URI the caller may not see"
        );
    }
}

#[tokio::test]
async fn a_reload_that_adds_a_grant_shows_everything_the_plugin_serves_with_list_changes() {
    for era in ERAS {
        let host = start(era, &["hello"]).await;
        assert_eq!(seen(&host, era).await, Seen::NOTHING, "{era:?}: before");
        let mut changes = ListChanges::open(&host, era).await;

        host.write_config(&config(&["offers", "hello"]));
        changes.next_of_each(&host).await;
        assert_eq!(seen(&host, era).await, Seen::ALL, "{era:?}: after");
        if era == Era::Legacy {
            #[allow(deprecated)]
            host.client
                .subscribe(SubscribeRequestParams::new(README))
                .await
                .expect("a URI the caller may now see can be subscribed to");
        }
        assert_eq!(
            acknowledged_uris(&host, ALICE, &[README, RED]).await,
            vec![RED.to_string(), README.to_string()],
            "{era:?}"
        );
    }
}

#[tokio::test]
async fn a_listen_stream_is_acknowledged_only_with_uris_its_caller_may_see() {
    let host = start(Era::Modern, &["offers", "hello"]).await;
    // Once the initial load is in (a stream opened before acknowledges no
    // URI, ADR 0027).
    host.tools().await;
    assert_eq!(
        acknowledged_uris(&host, ALICE, &[README, RED, "test://no-such-thing"]).await,
        vec![RED.to_string(), README.to_string()],
        "what is served and visible, and nothing else"
    );
    assert!(
        acknowledged_uris(&host, BOB, &[README, RED])
            .await
            .is_empty(),
        "bob may not see offers: his acknowledgement names none of its URIs"
    );
}

#[tokio::test]
async fn what_a_caller_may_not_see_shadows_no_template_it_may_see() {
    // `offers` serves the resource test://readme; `pages` the template
    // test://{page}, which matches it too. Bob may see `pages` only: the
    // resource he may not see must not stand between him and the template
    // he may see, for reads, subscriptions and listen acknowledgements.
    for era in ERAS {
        let host = Host::start(
            HostOptions::new(&["offers", "pages"])
                .http()
                .bearer(BOB)
                .era(era)
                .config(config_for(&["offers", "pages"], &["pages"])),
        )
        .await;
        host.tools().await;
        let bob_reads = read(&host.client, README)
            .await
            .unwrap_or_else(|e| panic!("{era:?}: bob reads the readme through pages: {e}"));
        assert_eq!(
            text_of(&bob_reads[0]),
            "test://readme is the page readme of the pages component",
            "{era:?}"
        );
        let alice = host
            .another_client(era, Elicitation::Unsupported, Some(ALICE))
            .await;
        let alice_reads = read(&alice.client, README).await.unwrap();
        assert!(
            text_of(&alice_reads[0]).starts_with("# Offers"),
            "{era:?}: alice, who may see offers, reads its own resource"
        );
        match era {
            #[allow(deprecated)]
            Era::Legacy => host
                .client
                .subscribe(SubscribeRequestParams::new(README))
                .await
                .unwrap_or_else(|e| panic!("bob may subscribe to what he may read: {e}")),
            Era::Modern => assert_eq!(
                acknowledged_uris(&host, BOB, &[README, RED]).await,
                vec![README.to_string()],
                "bob's acknowledgement names the URI he reads through pages, not offers' colours"
            ),
        }
    }
}

/// `[auth]` with alice's and bob's static tokens, no `[[access]]`, and a
/// `[[policy.rules]]` hide rule: bob may not see `offers`.
fn hide_rule_config() -> String {
    let token = |subject: &str, token: &str| {
        format!(
            "[[auth.tokens]]\nsubject = \"{subject}\"\nsha256 = \"{}\"\nscopes = [\"mcp:tools\"]\n",
            sha256_hex(token)
        )
    };
    format!(
        "[auth]\nresource = \"{RESOURCE}\"\n{}{}\
         [[policy.rules]]\nname = \"offers-not-for-bob\"\noutcome = \"hide\"\n\
         when = 'plugin.name == \"offers\" && identity.subject == \"bob\"'\n",
        token("alice", ALICE),
        token("bob", BOB),
    )
}

#[tokio::test]
async fn a_hide_rule_hides_everything_a_plugin_serves_from_the_callers_it_names() {
    for era in ERAS {
        let host = Host::start(
            HostOptions::new(&["offers", "hello"])
                .http()
                .bearer(BOB)
                .era(era)
                .config(hide_rule_config()),
        )
        .await;
        host.tools().await;
        assert_eq!(seen(&host, era).await, Seen::NOTHING, "{era:?}: bob");
        let unknown = host.call("color_count", json!({})).await;
        let (_, message) = rpc_error(unknown);
        assert!(message.contains("unknown tool"), "{era:?}: {message}");
        let alice = host
            .another_client(era, Elicitation::Unsupported, Some(ALICE))
            .await;
        assert_eq!(seen(&alice, era).await, Seen::ALL, "{era:?}: alice");
        assert!(
            acknowledged_uris(&host, BOB, &[README, RED])
                .await
                .is_empty(),
            "{era:?}: bob's listen acknowledgement names nothing hidden from him"
        );
        if era == Era::Legacy {
            #[allow(deprecated)]
            let subscribed = host
                .client
                .subscribe(SubscribeRequestParams::new(README))
                .await;
            let (_, message) = rpc_error(subscribed);
            assert!(message.contains("no resource at"), "{message}");
        }
    }
}
