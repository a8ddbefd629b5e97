//! A tool component written in Python (`plugins/examples/python-wordcount`,
//! built with componentize-py) served by the same host, through the same
//! WIT contract, as the Rust components: listing, a call, a tool error, the
//! `log` import, the host's argument validation, a contract 0.2.0
//! resource, a contract 0.3.0 content block beside the JSON, and a form
//! the tool asks through the `form` import.

use serde_json::json;

use crate::support::{ERAS, Elicitation, Host, HostOptions, components_dir};

/// Fails with the way to build the component when it is missing: this test
/// must not pass by skipping.
fn python_component() -> &'static str {
    let path = components_dir().join("python_wordcount.wasm");
    assert!(
        path.exists(),
        "{} is missing: run `cargo xtask setup-python` and `cargo xtask build-plugins` \
         (`cargo xtask test` does both)",
        path.display()
    );
    "python_wordcount"
}

#[tokio::test]
async fn the_python_tool_returns_structured_output_and_logs_through_the_host() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&[python_component()]).era(era)).await;
        let out = host
            .ok(
                "word_count",
                json!({"text": "The quick brown fox\njumps over the lazy dög.\n"}),
            )
            .await;
        assert_eq!(
            out,
            json!({"words": 9, "characters": 45, "lines": 2}),
            "{era:?}"
        );
        // Characters are code points; a text without a final line feed
        // still has its last line; whitespace of any kind separates words.
        let out = host
            .ok("word_count", json!({"text": "naïve\tcafé  ünïcödé"}))
            .await;
        assert_eq!(out, json!({"words": 3, "characters": 19, "lines": 1}));
        let out = host.ok("word_count", json!({"text": "   "})).await;
        assert_eq!(out, json!({"words": 0, "characters": 3, "lines": 1}));
        // Contract 0.3: a one-line summary follows the JSON as a text block.
        let result = host
            .call("word_count", json!({"text": "a b"}))
            .await
            .unwrap();
        let summary = result.content.get(1).and_then(|c| c.as_text());
        assert_eq!(
            summary.map(|t| t.text.as_str()),
            Some("2 words, 3 characters, 1 lines"),
            "{era:?}"
        );

        // The `log` import reaches the host's log, tagged with plugin and tool.
        let stderr = host
            .wait_for_stderr("counted 9 words, 45 characters, 2 lines")
            .await;
        let line = stderr
            .lines()
            .find(|l| l.contains("counted 9 words"))
            .unwrap();
        assert!(
            line.contains("python_wordcount") && line.contains("word_count"),
            "{line}"
        );
    }
}

#[tokio::test]
async fn the_host_validates_arguments_before_python_sees_them() {
    let host = Host::start(HostOptions::new(&[python_component()])).await;
    let issue = host.tool_error("word_count", json!({"text": 5})).await;
    assert_eq!(issue["code"], "VALIDATION_ERROR");
    let message = issue["message"].as_str().unwrap();
    assert!(
        message.contains("`text`") && message.contains("string"),
        "{message}"
    );

    let issue = host.tool_error("word_count", json!({})).await;
    assert_eq!(issue["code"], "VALIDATION_ERROR");
    assert!(
        issue["message"]
            .as_str()
            .unwrap()
            .contains("\"text\" is a required property"),
        "{issue}"
    );

    let issue = host
        .tool_error("word_count", json!({"text": "a", "extra": 1}))
        .await;
    assert_eq!(issue["code"], "VALIDATION_ERROR");
    assert!(
        issue["message"].as_str().unwrap().contains("extra"),
        "{issue}"
    );

    // None of them reached the component (Python would have raised a
    // TypeError on `5`, an internal error): it logs every call it runs.
    host.ok("word_count", json!({"text": "done"})).await;
    let stderr = host.wait_for_stderr("counted 1 words").await;
    assert_eq!(
        stderr.matches("counted ").count(),
        1,
        "only the valid call ran Python:\n{stderr}"
    );
}

#[tokio::test]
async fn a_python_form_is_asked_and_its_checked_answer_reaches_the_tool() {
    let text = json!({"text": "one two\nthree\n"});
    for era in ERAS {
        let host = Host::start(
            HostOptions::new(&[python_component()])
                .era(era)
                .elicitation(Elicitation::AcceptWith(r#"{"unit": "lines"}"#)),
        )
        .await;
        let out = host.ok("count_chosen", text.clone()).await;
        assert_eq!(
            out,
            json!({"answer": "accepted", "unit": "lines", "count": 2}),
            "{era:?}"
        );
        let seen = host.handler.seen.lock().unwrap();
        seen.assert_form_asked(
            &format!("{era:?}"),
            "Which count of the text do you want?",
            "unit",
            "words",
        );
    }

    // An answer outside the form's choices never reaches the component.
    let host = Host::start(
        HostOptions::new(&[python_component()])
            .elicitation(Elicitation::AcceptWith(r#"{"unit": "pages"}"#)),
    )
    .await;
    let issue = host.tool_error("count_chosen", text.clone()).await;
    assert!(
        issue["message"]
            .as_str()
            .unwrap()
            .contains("does not match the form"),
        "{issue}"
    );

    // A client that cannot show a form: the tool hears so, and says so.
    let host = Host::start(HostOptions::new(&[python_component()])).await;
    let out = host.ok("count_chosen", text).await;
    assert_eq!(
        out,
        json!({"answer": "unsupported", "unit": null, "count": null})
    );
}
