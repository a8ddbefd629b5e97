//! Confirmation: the `confirm` import over elicitation in both eras, the
//! operator's policy for clients that cannot elicit, the sealed
//! `requestState` of 2026-07-28 rounds, the host's gate on mutations, and
//! cancellation while a confirmation is pending.

use rmcp::model::{CallToolRequestParams, ClientRequest, Request};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};

use crate::support::{ERAS, Elicitation, Era, Host, HostOptions, Recorder};

/// A host serving the misbehaving component, allowed to reach `server`.
async fn host(server: &Recorder, era: Era, elicitation: Elicitation, extra_config: &str) -> Host {
    Host::start(
        HostOptions::new(&["misbehaving"])
            .era(era)
            .elicitation(elicitation)
            .config(format!(
                "{extra_config}\n{}",
                server.allow_block("misbehaving")
            )),
    )
    .await
}

fn post_args(server: &Recorder) -> Value {
    json!({"url": format!("{}/hook", server.url), "confirm": true})
}

#[tokio::test]
async fn a_tool_that_posts_without_confirming_is_refused() {
    for era in ERAS {
        let server = Recorder::start().await;
        let host = host(&server, era, Elicitation::Accept(true), "").await;
        let issue = host
            .tool_error(
                "post_unconfirmed",
                json!({"url": format!("{}/hook", server.url)}),
            )
            .await;
        assert_eq!(issue["code"], "PERMISSION_DENIED", "{era:?}");
        assert!(
            issue["message"]
                .as_str()
                .unwrap()
                .contains("without the user's confirmation"),
            "{issue}"
        );
        assert!(server.received().is_empty());
        host.wait_for_stderr("refused: tool post_unconfirmed").await;
    }
}

#[tokio::test]
async fn cancelling_while_a_confirmation_is_pending_ends_the_call_and_sends_nothing() {
    for http in [false, true] {
        let server = Recorder::start().await;
        let options = HostOptions::new(&["misbehaving"])
            .elicitation(Elicitation::Hang)
            .config(server.allow_block("misbehaving"));
        let host = Host::start(if http { options.http() } else { options }).await;
        let Value::Object(args) = post_args(&server) else {
            unreachable!()
        };
        let request = ClientRequest::CallToolRequest(Request::new(
            CallToolRequestParams::new("confirm_then_post").with_arguments(args),
        ));
        let handle = host
            .client
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .unwrap();
        host.wait_for_seen(|s| s.elicitations.len() == 1).await;
        handle
            .cancel(Some("the user closed the dialog".into()))
            .await
            .unwrap();
        host.wait_for_stderr("call cancelled by the client").await;
        assert!(server.received().is_empty(), "http: {http}");
        // The host keeps serving.
        let out = host
            .ok(
                "confirm_then_post",
                json!({"url": format!("{}/hook", server.url)}),
            )
            .await;
        assert_eq!(out["detail"], "preview", "http: {http}");
    }
}
