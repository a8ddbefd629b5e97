//! Tool components written in JavaScript and TypeScript, built with
//! componentize-js (`cargo xtask build-plugins`, see
//! `xtask/src/javascript.rs`), served by the same host through the same WIT
//! contract as the Rust and Python ones:
//! - `js_notes` (contract 0.3.0): tools listed and called, a mutation that
//!   runs only after the user's yes (checked against a loopback upstream),
//!   JavaScript's own `fetch` under the plugin's allow-list, a resource, an
//!   image and an embedded document beside the JSON, a form of its own;
//! - `js_bookmarks` (contract 0.2.0): the same fetch, confirmation and
//!   resource through 0.2.0's exports;
//! - `ts_letters` (contract 0.3.0, TypeScript compiled with `tsc` against
//!   the types `jco guest-types` generates): listed and called, its text
//!   block beside its JSON.
//!
//! The components are built with Node.js from npm, so these tests need npm
//! like the other tests that need a program: ignored unless it is
//! installed, failing (not passing) when run without it.

use base64::Engine as _;
use rmcp::model::{ContentBlock, ReadResourceRequestParams, ResourceContents};
use serde_json::{Value, json};

use crate::support::infra::require;
use crate::support::{ERAS, Elicitation, Host, HostOptions, Recorder, components_dir};

/// The first bytes of a PNG file.
const PNG_SIGNATURE: &[u8] = &[0x89, 0x50, 0x4e, 0x47];

/// `name`, after failing the test with the way to build it when the
/// component is missing: these tests must not pass by skipping.
fn js_component(name: &'static str) -> &'static str {
    require(&["npm"]);
    let path = components_dir().join(format!("{name}.wasm"));
    assert!(
        path.exists(),
        "{} is missing: run `cargo xtask setup-js` and `cargo xtask build-plugins` \
         (`cargo xtask test` does both when npm is installed)",
        path.display()
    );
    name
}

/// A host serving `component` with `upstream` allowed, answering
/// elicitations with `elicitation`.
async fn serve(component: &'static str, upstream: &Recorder, elicitation: Elicitation) -> Host {
    Host::start(
        HostOptions::new(&[js_component(component)])
            .config(upstream.allow_block(component))
            .elicitation(elicitation),
    )
    .await
}

/// The text of the resource `uri`.
async fn read_text(host: &Host, uri: &str) -> String {
    let read = host
        .client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .unwrap();
    match &read.contents[..] {
        [
            ResourceContents::TextResourceContents {
                text, mime_type, ..
            },
        ] => {
            assert_eq!(mime_type.as_deref(), Some("text/markdown"));
            text.clone()
        }
        other => panic!("one text expected, got {other:?}"),
    }
}

#[tokio::test]
#[ignore = "needs npm (apt-get install -y npm); the JavaScript components are built with Node.js and componentize-js from npm"]
async fn the_javascript_tools_are_listed_with_their_hints_and_offer_their_resource() {
    let upstream = Recorder::start().await;
    let host = serve("js_notes", &upstream, Elicitation::Unsupported).await;
    let mut tools: Vec<(String, Option<bool>)> = host
        .tools()
        .await
        .into_iter()
        .map(|t| {
            let read_only = t.annotations.as_ref().and_then(|a| a.read_only_hint);
            (t.name.to_string(), read_only)
        })
        .collect();
    tools.sort();
    assert_eq!(
        tools,
        [
            ("choose_tag".to_string(), Some(true)),
            ("fetch_note".to_string(), Some(true)),
            ("note_card".to_string(), Some(true)),
            ("save_note".to_string(), Some(false)),
        ]
    );
    let guide = read_text(&host, "notes://guide").await;
    assert!(guide.starts_with("# notes"), "{guide}");
}

#[tokio::test]
#[ignore = "needs npm (apt-get install -y npm); the JavaScript components are built with Node.js and componentize-js from npm"]
async fn javascript_fetch_reaches_an_allowed_upstream_and_a_host_no_rule_allows_is_refused() {
    let upstream = Recorder::start().await;
    let elsewhere = Recorder::start().await;
    let host = serve("js_notes", &upstream, Elicitation::Unsupported).await;
    let out = host
        .ok(
            "fetch_note",
            json!({"url": format!("{}/notes/1", upstream.url)}),
        )
        .await;
    assert_eq!(out, json!({"status": 200, "text": "recorded"}));
    let received = upstream.received();
    assert_eq!(received.len(), 1, "{received:?}");
    assert_eq!(
        (received[0].method.as_str(), received[0].path.as_str()),
        ("GET", "/notes/1")
    );

    let issue = host
        .tool_error(
            "fetch_note",
            json!({"url": format!("{}/notes/1", elsewhere.url)}),
        )
        .await;
    assert_eq!(issue["code"], "PERMISSION_DENIED", "{issue}");
    assert!(
        elsewhere.received().is_empty(),
        "nothing left for the host no rule allows"
    );
    host.wait_for_stderr(&format!("but not on port {}", elsewhere.port))
        .await;
}

#[tokio::test]
#[ignore = "needs npm (apt-get install -y npm); the JavaScript components are built with Node.js and componentize-js from npm"]
async fn a_javascript_save_posts_only_after_the_users_yes() {
    let upstream = Recorder::start().await;
    let url = format!("{}/notes", upstream.url);
    let arguments = json!({"url": url, "text": "call the supplier"});
    for no in [Elicitation::Accept(false), Elicitation::Decline] {
        let host = serve("js_notes", &upstream, no).await;
        let issue = host.tool_error("save_note", arguments.clone()).await;
        assert_eq!(issue["code"], "PERMISSION_DENIED", "{issue}");
        assert!(
            issue["message"]
                .as_str()
                .unwrap()
                .contains("nothing was saved"),
            "{issue}"
        );
        let seen = host.client.service().seen.lock().unwrap();
        assert_eq!(
            seen.elicitations,
            [format!("Save the note \"call the supplier\" to {url}?")]
        );
    }
    assert_eq!(upstream.posts(), 0, "no mutation without the yes");

    let host = serve("js_notes", &upstream, Elicitation::Accept(true)).await;
    let out = host.ok("save_note", arguments).await;
    assert_eq!(out, json!({"saved": true, "status": 200}));
    assert_eq!(upstream.posts(), 1);
    let post = upstream
        .received()
        .into_iter()
        .find(|r| r.method == "POST")
        .unwrap();
    assert_eq!(post.header("content-type"), Some("application/json"));
}

#[tokio::test]
#[ignore = "needs npm (apt-get install -y npm); the JavaScript components are built with Node.js and componentize-js from npm"]
async fn a_javascript_tool_returns_an_image_and_an_embedded_document_beside_its_json() {
    let upstream = Recorder::start().await;
    for era in ERAS {
        let host = Host::start(
            HostOptions::new(&[js_component("js_notes")])
                .era(era)
                .config(upstream.allow_block("js_notes")),
        )
        .await;
        let result = host
            .call("note_card", json!({"text": "café"}))
            .await
            .unwrap();
        assert_ne!(result.is_error, Some(true), "{era:?}: {result:?}");
        assert_eq!(result.structured_content, Some(json!({"characters": 4})));
        assert_eq!(result.content.len(), 3, "{era:?}: {:?}", result.content);
        match &result.content[1] {
            ContentBlock::Image(image) => {
                assert_eq!(image.mime_type, "image/png");
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(&image.data)
                    .unwrap();
                assert!(bytes.starts_with(PNG_SIGNATURE), "{era:?}");
            }
            other => panic!("{era:?}: an image expected, got {other:?}"),
        }
        match &result.content[2] {
            ContentBlock::Resource(embedded) => match &embedded.resource {
                ResourceContents::TextResourceContents {
                    uri,
                    mime_type,
                    text,
                    ..
                } => {
                    assert_eq!(uri, "notes://card");
                    assert_eq!(mime_type.as_deref(), Some("text/markdown"));
                    assert_eq!(text, "# Note\n\ncafé\n");
                }
                other => panic!("{era:?}: a text document expected, got {other:?}"),
            },
            other => panic!("{era:?}: an embedded resource expected, got {other:?}"),
        }
    }
}

#[tokio::test]
#[ignore = "needs npm (apt-get install -y npm); the JavaScript components are built with Node.js and componentize-js from npm"]
async fn a_javascript_form_is_asked_and_its_checked_answer_reaches_the_tool() {
    let upstream = Recorder::start().await;
    for era in ERAS {
        let host = Host::start(
            HostOptions::new(&[js_component("js_notes")])
                .era(era)
                .config(upstream.allow_block("js_notes"))
                .elicitation(Elicitation::AcceptWith(
                    r#"{"tag": "work", "starred": true}"#,
                )),
        )
        .await;
        let out = host.ok("choose_tag", json!({"text": "standup"})).await;
        assert_eq!(
            out,
            json!({"answer": "accepted", "tag": "work", "starred": true}),
            "{era:?}"
        );
        let seen = host.handler.seen.lock().unwrap();
        seen.assert_form_asked(
            &format!("{era:?}"),
            "How should the note \"standup\" be filed?",
            "tag",
            "later",
        );
    }

    // An answer outside the form's choices never reaches the component.
    let host = Host::start(
        HostOptions::new(&[js_component("js_notes")])
            .elicitation(Elicitation::AcceptWith(r#"{"tag": "urgent"}"#)),
    )
    .await;
    let issue = host.tool_error("choose_tag", json!({"text": "x"})).await;
    assert!(
        issue["message"]
            .as_str()
            .unwrap()
            .contains("does not match the form"),
        "{issue}"
    );

    let host = Host::start(
        HostOptions::new(&[js_component("js_notes")]).elicitation(Elicitation::Decline),
    )
    .await;
    let out = host.ok("choose_tag", json!({"text": "x"})).await;
    assert_eq!(
        out,
        json!({"answer": "declined", "tag": null, "starred": null})
    );
}

#[tokio::test]
#[ignore = "needs npm (apt-get install -y npm); the JavaScript components are built with Node.js and componentize-js from npm"]
async fn a_contract_0_2_javascript_build_fetches_confirms_and_offers_its_resource() {
    let upstream = Recorder::start().await;
    let page = format!("{}/page", upstream.url);
    let service = format!("{}/bookmarks", upstream.url);
    let host = serve("js_bookmarks", &upstream, Elicitation::Accept(false)).await;
    let out = host.ok("fetch_bookmark", json!({"url": page})).await;
    assert_eq!(out, json!({"status": 200, "length": "recorded".len()}));
    let issue = host
        .tool_error("add_bookmark", json!({"service": service, "page": page}))
        .await;
    assert_eq!(issue["code"], "PERMISSION_DENIED", "{issue}");
    assert_eq!(upstream.posts(), 0, "no mutation without the yes");
    let guide = read_text(&host, "bookmarks://guide").await;
    assert!(guide.starts_with("# bookmarks"), "{guide}");

    let host = serve("js_bookmarks", &upstream, Elicitation::Accept(true)).await;
    let out = host
        .ok("add_bookmark", json!({"service": service, "page": page}))
        .await;
    assert_eq!(out, json!({"added": true, "status": 200}));
    assert_eq!(upstream.posts(), 1);
}

#[tokio::test]
#[ignore = "needs npm (apt-get install -y npm); the JavaScript components are built with Node.js and componentize-js from npm"]
async fn a_typescript_component_compiled_with_tsc_against_generated_types_is_called() {
    let host = Host::start(HostOptions::new(&[js_component("ts_letters")])).await;
    let tools = host.tools().await;
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "count_letters");
    let out: Value = host
        .ok("count_letters", json!({"text": "banana, 42!"}))
        .await;
    assert_eq!(out, json!({"letters": 6, "most_common": "a"}));
    host.wait_for_stderr("counted 6 letters").await;
    // Contract 0.3.0: a content block after the JSON's own text block.
    let result = host
        .call("count_letters", json!({"text": "banana, 42!"}))
        .await
        .unwrap();
    assert_eq!(result.content.len(), 2, "{:?}", result.content);
    match &result.content[1] {
        ContentBlock::Text(text) => assert_eq!(
            text.text,
            "The text has 6 letters; the most common is \"a\"."
        ),
        other => panic!("a text block expected, got {other:?}"),
    }
    let guide = read_text(&host, "letters://guide").await;
    assert!(guide.starts_with("# count_letters"), "{guide}");
}
