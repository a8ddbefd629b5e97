//! `approve` rules through the real binary (ADR 0038): a call held until a
//! second person says yes on the approval page, bound to exactly what
//! runs and spent once; the page itself (sign-in with a real token, CSRF,
//! CSP, a second click that changes nothing); MCP tasks for clients that
//! declare them; the audit trail and the metrics. The StatusPro sandbox
//! is the ground truth of what changed.

mod browser;

use std::time::Duration;

use reqwest::StatusCode;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, GetTaskParams,
    TaskStatus, UpdateTaskParams,
};
use serde_json::{Value, json};
use statuspro_sandbox::seed;

use crate::statuspro::StatusPro;
use crate::support::audit::records;
use crate::support::infra::sha256_hex;
use crate::support::plugin_set::Setup;
use crate::support::{ERAS, Elicitation, Era, Host, TestClient};

pub const ALICE: &str = "alice-caller-token-0123456789abcdef";
pub const CAROL: &str = "carol-approver-token-0123456789abcd";
pub const MALLORY: &str = "mallory-token-0123456789abcdef0123";

/// Static tokens for alice (the caller), carol (an approver) and mallory
/// (neither), and a rule holding status changes for carol's yes.
pub fn config(expires_secs: u64) -> String {
    let token = |subject: &str, token: &str| {
        format!(
            "[[auth.tokens]]\nsubject = \"{subject}\"\nsha256 = \"{}\"\nscopes = [\"mcp:tools\"]\n",
            sha256_hex(token)
        )
    };
    format!(
        "[auth]\nresource = \"https://mcp.example.com/mcp\"\n{}{}{}\n\
         [[policy.rules]]\nname = \"status-changes-need-support\"\n\
         when = 'tool.name == \"update_order_status\"'\noutcome = \"approve\"\n\
         approve = {{ approver = 'approver.subject == \"carol\"', expires_secs = {expires_secs} }}\n",
        token("alice", ALICE),
        token("carol", CAROL),
        token("mallory", MALLORY),
    )
}

/// A status change the seed allows.
pub fn change(comment: &str) -> Value {
    let id = seed::order_with_viable_next("st000003").unwrap();
    json!({"order_id": id, "status_code": "st000003", "comment": comment, "confirm": true})
}

/// StatusPro over HTTP for alice, in `era`, confirming with `elicitation`.
pub async fn statuspro(era: Era, elicitation: Elicitation, expires_secs: u64) -> StatusPro {
    statuspro_with(era, elicitation, &config(expires_secs)).await
}

/// StatusPro over HTTP for alice, in `era`, confirming with `elicitation`,
/// configured by `toml`.
async fn statuspro_with(era: Era, elicitation: Elicitation, toml: &str) -> StatusPro {
    Setup::new()
        .http()
        .era(era)
        .elicitation(elicitation)
        .bearer(ALICE)
        .config(toml)
        .start()
        .await
}

/// The approval page as a browser without JavaScript uses it: a cookie,
/// forms, no redirects followed.
pub struct Page {
    base: String,
    client: reqwest::Client,
    /// The session cookie (`name=value`), once signed in.
    pub cookie: Option<String>,
}

impl Page {
    /// The page of `host`.
    pub fn of(host: &Host) -> Page {
        Page::at(host.url.as_deref().expect("an HTTP host"))
    }

    /// The page of `host`, reached from the loopback address `local`, each
    /// request carrying `X-Forwarded-For: forwarded_for` when given (as a
    /// balancer's would).
    pub fn from_address(host: &Host, local: [u8; 4], forwarded_for: Option<&str>) -> Page {
        let mut page = Page::of(host);
        let mut headers = reqwest::header::HeaderMap::new();
        if let Some(client) = forwarded_for {
            headers.insert("x-forwarded-for", client.parse().unwrap());
        }
        page.client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .local_address(std::net::IpAddr::from(local))
            .default_headers(headers)
            .build()
            .unwrap();
        page
    }

    /// The page beside the MCP endpoint `mcp`.
    pub fn at(mcp: &str) -> Page {
        Page {
            base: mcp.trim_end_matches("/mcp").to_string() + "/approvals",
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            cookie: None,
        }
    }

    /// `GET` of `path` under the page: status, headers, body.
    pub async fn get(&self, path: &str) -> (StatusCode, reqwest::header::HeaderMap, String) {
        let mut request = self.client.get(format!("{}{path}", self.base));
        if let Some(cookie) = &self.cookie {
            request = request.header("cookie", cookie);
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        (status, headers, response.text().await.unwrap())
    }

    /// `POST` of `form` to `path` under the page: status, body.
    pub async fn post(&self, path: &str, form: &[(&str, &str)]) -> (StatusCode, String) {
        let mut request = self.client.post(format!("{}{path}", self.base)).form(form);
        if let Some(cookie) = &self.cookie {
            request = request.header("cookie", cookie);
        }
        let response = request.send().await.unwrap();
        (response.status(), response.text().await.unwrap())
    }

    /// The page's answer to signing in with `token`, whole.
    pub async fn sign_in_response(&self, token: &str) -> reqwest::Response {
        self.client
            .post(format!("{}/sign-in", self.base))
            .form(&[("token", token), ("next", "/approvals")])
            .send()
            .await
            .unwrap()
    }

    /// Signs in with `token`; the session cookie is kept.
    pub async fn sign_in(&mut self, token: &str) {
        let response = self.sign_in_response(token).await;
        assert_eq!(response.status(), StatusCode::SEE_OTHER, "signed in");
        let set = response.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .to_string();
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Strict"),
            "{set}"
        );
        self.cookie = Some(set.split(';').next().unwrap().to_string());
    }

    /// Decides approval `id` (`decision` is `approve` or `deny`) with the
    /// session's own form token: status, body.
    pub async fn decide(&self, id: &str, decision: &str) -> (StatusCode, String) {
        let csrf = self.csrf().await;
        self.post(
            &format!("/{id}"),
            &[("csrf", &csrf), ("decision", decision)],
        )
        .await
    }

    /// The CSRF token the page's forms carry.
    pub async fn csrf(&self) -> String {
        let (_, _, html) = self.get("").await;
        let at = html.find("name=\"csrf\" value=\"").expect("a form") + 19;
        html[at..at + 32].to_string()
    }
}

/// The `approval` object of a call's `APPROVAL_PENDING` answer.
pub async fn pending(host: &Host, arguments: Value) -> Value {
    let result = host
        .call("update_order_status", arguments)
        .await
        .expect("a tool result");
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let out = result.structured_content.expect("structured");
    assert_eq!(out["issues"][0]["code"], "APPROVAL_PENDING", "{out}");
    out["approval"].clone()
}

#[tokio::test]
async fn a_call_waits_for_a_second_persons_yes_on_the_page_and_runs_once_when_called_again() {
    for era in ERAS {
        let statuspro = statuspro(era, Elicitation::Accept(true), 600).await;
        let host = &statuspro.host;
        let arguments = change("Approved by support.");

        let approval = pending(host, arguments.clone()).await;
        let id = approval["id"].as_str().unwrap().to_string();
        assert_eq!(approval["state"], "pending");
        let url = approval["url"].as_str().unwrap();
        assert!(url.ends_with(&format!("/approvals/{id}")), "{url}");
        assert!(
            statuspro.sandbox.mutations().is_empty(),
            "{era:?}: nothing ran"
        );
        // Asked again, the same call waits on the same approval.
        assert_eq!(pending(host, arguments.clone()).await["id"], id.as_str());

        let mut page = Page::of(host);
        let (status, headers, html) = page.get("").await;
        assert_eq!(status, StatusCode::OK);
        assert!(html.contains("Sign in"), "{html}");
        let csp = headers["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"));

        // The caller cannot approve its own call: not listed, and refused.
        page.sign_in(ALICE).await;
        let (_, _, html) = page.get("").await;
        assert!(html.contains("No call is waiting"), "{html}");
        let (status, html) = page.decide(&id, "approve").await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{html}");
        assert!(html.contains("you made this call"), "{html}");

        // Neither can someone the rule does not name.
        let mut stranger = Page::of(host);
        stranger.sign_in(MALLORY).await;
        let (_, _, html) = stranger.get("").await;
        assert!(!html.contains(&id), "mallory sees nothing: {html}");

        let mut carol = Page::of(host);
        carol.sign_in(CAROL).await;
        let (_, _, html) = carol.get("").await;
        assert!(html.contains(&id), "carol sees the call: {html}");
        assert!(html.contains("update_order_status") && html.contains("token:alice"));
        assert!(
            html.contains("&quot;comment&quot;: &quot;Approved by support.&quot;"),
            "the arguments, pretty-printed and escaped: {html}"
        );
        // A form without the session's token changes nothing.
        let (status, _) = carol
            .post(
                &format!("/{id}"),
                &[("csrf", "0".repeat(32).as_str()), ("decision", "approve")],
            )
            .await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let csrf = carol.csrf().await;
        let form = [
            ("csrf", csrf.as_str()),
            ("decision", "approve"),
            ("note", "ok, go"),
        ];
        let (status, html) = carol.post(&format!("/{id}"), &form).await;
        assert_eq!(status, StatusCode::OK, "{html}");
        assert!(html.contains("Approved."), "{html}");
        // The same form again (a second click, a replay): nothing changes.
        let (status, html) = carol.post(&format!("/{id}"), &form).await;
        assert_eq!(status, StatusCode::CONFLICT, "{html}");
        assert!(html.contains("approved already (by token:carol)"), "{html}");

        assert!(
            statuspro.sandbox.mutations().is_empty(),
            "approved, not run yet"
        );
        let out = host.ok("update_order_status", arguments.clone()).await;
        assert_eq!(out["result"], "confirmed", "{era:?}: {out}");
        assert_eq!(
            statuspro.sandbox.mutations().len(),
            1,
            "{era:?}: one change"
        );
        // A made-up `requestState` does not pass for a continuation of
        // the call the approval let run (whose state this server seals).
        let forged = CallToolRequestParams::new("update_order_status")
            .with_arguments(arguments.as_object().unwrap().clone())
            .with_request_state("forged".to_string());
        let refused = host.client.call_tool_once(forged).await;
        assert!(
            format!("{refused:?}").contains("requestState"),
            "{era:?}: {refused:?}"
        );
        assert_eq!(
            statuspro.sandbox.mutations().len(),
            1,
            "{era:?}: nothing ran again"
        );
        // Spent: the same call again waits for a new approval.
        let again = pending(host, arguments.clone()).await;
        assert_ne!(again["id"], id.as_str());
        assert_eq!(statuspro.sandbox.mutations().len(), 1);

        let trail = records(&statuspro.audit_trail());
        let decided = trail
            .iter()
            .find(|r| r["record"] == "approval" && r["approval"]["id"] == id.as_str())
            .expect("the decision is on record");
        assert_eq!(decided["approval"]["state"], "approved");
        assert_eq!(decided["approval"]["decided_by"], "token:carol");
        assert_eq!(decided["approval"]["note"], "ok, go");
        assert_eq!(
            decided["client"], "127.0.0.1",
            "where the approver decided from: {decided}"
        );
        assert_eq!(decided["policy"]["rule"], "status-changes-need-support");
        let ran = trail
            .iter()
            .find(|r| r["record"] == "call" && r["result"] == "ok")
            .expect("the call that ran");
        assert_eq!(ran["approval"]["id"], id.as_str(), "{ran}");
        assert_eq!(ran["approval"]["state"], "spent");
        assert_eq!(ran["caller"], "token:alice");
        let waited = trail
            .iter()
            .filter(|r| r["issues"] == json!(["APPROVAL_PENDING"]))
            .count();
        assert_eq!(waited, 3, "each call that waited is on record");
    }
}

#[tokio::test]
async fn a_denial_reaches_the_caller_with_the_note_and_a_changed_call_voids_an_approval() {
    let statuspro = statuspro(Era::Legacy, Elicitation::Accept(true), 600).await;
    let host = &statuspro.host;
    let mut carol = Page::of(host);
    carol.sign_in(CAROL).await;

    let first = pending(host, change("first")).await;
    let csrf = carol.csrf().await;
    let id = first["id"].as_str().unwrap();
    let (status, _) = carol
        .post(
            &format!("/{id}"),
            &[("csrf", &csrf), ("decision", "approve")],
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    // Other arguments: that approval does not cover them, and is void.
    let second = pending(host, change("second")).await;
    let message = host
        .call("update_order_status", change("second"))
        .await
        .unwrap()
        .structured_content
        .unwrap()["issues"][0]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains(second["id"].as_str().unwrap()),
        "{message}"
    );
    let out = host
        .call("update_order_status", change("first"))
        .await
        .unwrap()
        .structured_content
        .unwrap();
    let message = out["issues"][0]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("approval {id} (approved)"))
            || message.contains("no longer applies"),
        "the caller is told why its approval does not count: {message}"
    );

    let waiting = out["approval"]["id"].as_str().unwrap().to_string();
    let csrf = carol.csrf().await;
    let (status, _) = carol
        .post(
            &format!("/{waiting}"),
            &[
                ("csrf", &csrf),
                ("decision", "deny"),
                ("note", "Not during the audit."),
            ],
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let issue = host
        .tool_error("update_order_status", change("first"))
        .await;
    assert_eq!(issue["code"], "APPROVAL_DENIED", "{issue}");
    let message = issue["message"].as_str().unwrap();
    assert!(
        message.contains("token:carol") && message.contains("Not during the audit."),
        "{message}"
    );
    assert!(statuspro.sandbox.mutations().is_empty(), "nothing ran");
}

#[tokio::test]
async fn a_lapsed_approval_cannot_be_used() {
    let statuspro = statuspro(Era::Legacy, Elicitation::Accept(true), 3).await;
    let host = &statuspro.host;
    let approval = pending(host, change("late")).await;
    let id = approval["id"].as_str().unwrap().to_string();
    let mut carol = Page::of(host);
    carol.sign_in(CAROL).await;
    let (decided, html) = carol.decide(&id, "approve").await;
    // Approved within its three seconds (or, on a slow machine, lapsed
    // already): either way it lapses before the call comes back.
    assert!(
        decided == StatusCode::OK || decided == StatusCode::GONE,
        "{decided}: {html}"
    );
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (_, _, html) = carol.get(&format!("/{id}")).await;
        if html.contains("data-state=\"lapsed\"") {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{html}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let result = host
        .call("update_order_status", change("late"))
        .await
        .unwrap();
    let out = result.structured_content.unwrap();
    assert_eq!(
        out["issues"][0]["code"], "APPROVAL_PENDING",
        "a new one is asked: {out}"
    );
    let message = out["issues"][0]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("approval {id} lapsed")),
        "{message}"
    );
    assert_ne!(out["approval"]["id"], id.as_str());
    // Too late to decide, too.
    let (status, html) = carol.decide(&id, "approve").await;
    assert!(
        status == StatusCode::GONE || status == StatusCode::CONFLICT,
        "{status}: {html}"
    );
    assert!(statuspro.sandbox.mutations().is_empty(), "nothing ran");
}

/// A 2026-07-28 client of `host` that declares tasks, sending `token`.
async fn task_client(
    host: &Host,
    token: &str,
) -> rmcp::service::RunningService<rmcp::RoleClient, TestClient> {
    task_client_at(host.url.as_deref().unwrap(), token).await
}

/// A 2026-07-28 client of the MCP endpoint `url` that declares tasks,
/// sending `token`.
pub async fn task_client_at(
    url: &str,
    token: &str,
) -> rmcp::service::RunningService<rmcp::RoleClient, TestClient> {
    crate::support::install_tls_provider();
    let config =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            url.to_string(),
        )
        .auth_header(token.to_string());
    let transport = rmcp::transport::StreamableHttpClientTransport::from_config(config);
    TestClient::new(Elicitation::Accept(true))
        .with_capabilities(
            ClientCapabilities::builder()
                .enable_elicitation()
                .enable_tasks()
                .build(),
        )
        .start(Era::Modern, transport)
        .await
}

/// Polls task `id` until `done` holds for its status (bounded).
pub async fn poll(
    client: &rmcp::service::RunningService<rmcp::RoleClient, TestClient>,
    id: &str,
    done: impl Fn(TaskStatus) -> bool,
) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let task = client.get_task(GetTaskParams::new(id)).await.unwrap();
        let status = task.task.status();
        if done(status) {
            return serde_json::to_value(&task).unwrap();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "task stuck: {task:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn the_page_shows_twenty_waiting_calls_at_a_time_and_filters_them_by_caller() {
    let callers: Vec<String> = (0..23).map(|n| format!("caller{n:02}")).collect();
    let token = |caller: &str| format!("{caller}-token-0123456789abcdef");
    let tokens: String = callers
        .iter()
        .map(|c| {
            format!(
                "[[auth.tokens]]\nsubject = \"{c}\"\nsha256 = \"{}\"\nscopes = [\"mcp:tools\"]\n",
                sha256_hex(&token(c))
            )
        })
        .collect();
    let statuspro = statuspro_with(
        Era::Modern,
        Elicitation::Accept(true),
        &format!("{}{tokens}", config(600)),
    )
    .await;
    let host = &statuspro.host;
    for caller in &callers {
        let client = task_client_at(host.url.as_deref().unwrap(), &token(caller)).await;
        let params = CallToolRequestParams::new("update_order_status")
            .with_arguments(change(caller).as_object().unwrap().clone());
        let created = client.call_tool_once(params).await.unwrap();
        assert!(matches!(created, CallToolResponse::Task(_)), "{caller}");
    }
    let cards = |html: &str| html.matches("<article class=\"approval\"").count();

    let mut carol = Page::of(host);
    carol.sign_in(CAROL).await;
    let (_, _, first) = carol.get("").await;
    assert_eq!(cards(&first), 20, "{first}");
    assert!(first.contains("Calls 1–20 of 23"), "{first}");
    assert!(
        first.contains("rel=\"next\" href=\"/approvals?page=2\""),
        "{first}"
    );
    let listed = |html: &str, caller: &str| {
        html.contains(&format!("<dd class=\"caller\">token:{caller}</dd>"))
    };
    assert!(
        listed(&first, "caller00") && !listed(&first, "caller22"),
        "the oldest first"
    );
    let (_, _, second) = carol.get("?page=2").await;
    assert_eq!(cards(&second), 3, "{second}");
    assert!(
        second.contains("Calls 21–23 of 23") && listed(&second, "caller22"),
        "{second}"
    );
    assert!(second.contains("rel=\"prev\""), "{second}");
    // A page that is no number is the first; one past the last, the last.
    let (_, _, odd) = carol.get("?page=abc").await;
    assert_eq!(cards(&odd), 20);
    let (_, _, past) = carol.get("?page=99").await;
    assert_eq!(cards(&past), 3);

    // One caller's calls, with the filter kept in the form.
    let (_, _, one) = carol.get("?caller=token%3Acaller07").await;
    assert_eq!(cards(&one), 1, "{one}");
    assert!(
        listed(&one, "caller07") && one.contains("(23 waiting in all)"),
        "{one}"
    );
    assert!(
        one.contains("<option value=\"token:caller07\" selected>"),
        "{one}"
    );
    let (_, _, none) = carol.get("?tool=list_orders").await;
    assert_eq!(cards(&none), 0);
    assert!(none.contains("No call of this tool and caller"), "{none}");
    // A key given twice counts once, the last (no refusal).
    let (status, _, twice) = carol.get("?page=2&page=1").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(cards(&twice), 20);

    // A decision made on a listing leads back to it; a form that names
    // anything else as where it came from leads to the first page.
    assert!(
        one.contains("name=\"back\" value=\"/approvals?caller=token%3Acaller07&amp;page=1\""),
        "{one}"
    );
    let id = one
        .split("id=\"approval-")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap()
        .to_string();
    let csrf = carol.csrf().await;
    let back = "/approvals?caller=token%3Acaller07&page=1";
    let (status, decided) = carol
        .post(
            &format!("/{id}"),
            &[("csrf", &csrf), ("decision", "deny"), ("back", back)],
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{decided}");
    assert!(
        decided.contains("id=\"back\" href=\"/approvals?caller=token%3Acaller07&amp;page=1\""),
        "{decided}"
    );
    let (status, again) = carol
        .post(
            &format!("/{id}"),
            &[
                ("csrf", &csrf),
                ("decision", "deny"),
                ("back", "https://elsewhere.example/approvals?page=1"),
            ],
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{again}");
    assert!(again.contains("id=\"back\" href=\"/approvals\""), "{again}");
}

#[tokio::test]
async fn a_call_that_waits_becomes_a_task_that_asks_through_the_task_and_completes_once() {
    let statuspro = statuspro(Era::Modern, Elicitation::Accept(true), 600).await;
    let host = &statuspro.host;
    let client = task_client(host, ALICE).await;
    let arguments = change("via a task");
    let params = CallToolRequestParams::new("update_order_status")
        .with_arguments(arguments.as_object().unwrap().clone());
    let CallToolResponse::Task(created) = client.call_tool_once(params.clone()).await.unwrap()
    else {
        panic!("a client with tasks gets a task");
    };
    let id = created.task.task_id.clone();
    assert_eq!(created.task.status, TaskStatus::Working);
    let waiting = poll(&client, &id, |_| true).await;
    assert_eq!(waiting["status"], "working");
    assert!(
        waiting["statusMessage"]
            .as_str()
            .unwrap()
            .contains("waits for an approver"),
        "{waiting}"
    );

    let mut carol = Page::of(host);
    carol.sign_in(CAROL).await;
    let (status, _) = carol.decide(&id, "approve").await;
    assert_eq!(status, StatusCode::OK);

    // StatusPro asks its own question: it comes through the task.
    let asking = poll(&client, &id, |s| s != TaskStatus::Working).await;
    assert_eq!(asking["status"], "input_required", "{asking}");
    let question = &asking["inputRequests"]["confirm"];
    assert!(
        question["params"]["message"]
            .as_str()
            .unwrap()
            .contains("Change order"),
        "{asking}"
    );
    assert!(statuspro.sandbox.mutations().is_empty(), "asked, not run");
    let mut answers = rmcp::model::InputResponses::new();
    answers.insert(
        "confirm".into(),
        json!({"action": "accept", "content": {"confirm": true}}),
    );
    client
        .update_task(UpdateTaskParams::new(&id, answers.clone()))
        .await
        .unwrap();
    let done = poll(&client, &id, |s| s == TaskStatus::Completed).await;
    assert_eq!(
        done["result"]["structuredContent"]["result"], "confirmed",
        "{done}"
    );
    assert_eq!(statuspro.sandbox.mutations().len(), 1, "one change");
    // The call ran for no request, yet its record says where it was asked
    // from.
    let trail = records(&statuspro.audit_trail());
    let ran = trail
        .iter()
        .find(|r| r["record"] == "call" && r["result"] == "ok")
        .expect("the task's call is on record");
    assert_eq!(ran["client"], "127.0.0.1", "{ran}");
    // The same answer again changes nothing.
    client
        .update_task(UpdateTaskParams::new(&id, answers))
        .await
        .unwrap();
    assert_eq!(statuspro.sandbox.mutations().len(), 1);

    // A task cancelled while it waits never runs, and cannot be approved.
    let CallToolResponse::Task(second) = client
        .call_tool_once(
            CallToolRequestParams::new("update_order_status")
                .with_arguments(change("cancelled").as_object().unwrap().clone()),
        )
        .await
        .unwrap()
    else {
        panic!("a task");
    };
    let second = second.task.task_id;
    client
        .cancel_task(CancelTaskParams::new(&second))
        .await
        .unwrap();
    let cancelled = poll(&client, &second, |s| s == TaskStatus::Cancelled).await;
    assert_eq!(cancelled["status"], "cancelled");
    let trail = records(&statuspro.audit_trail());
    let cancel = trail
        .iter()
        .find(|r| r["record"] == "approval" && r["approval"]["state"] == "cancelled")
        .expect("the cancellation is on record");
    assert_eq!(
        cancel["client"], "127.0.0.1",
        "the caller cancelled from: {cancel}"
    );
    let (status, html) = carol.decide(&second, "approve").await;
    assert_eq!(status, StatusCode::CONFLICT, "{html}");
    assert_eq!(statuspro.sandbox.mutations().len(), 1);
    // Another caller's task is unknown to this one.
    let other = task_client(host, MALLORY).await;
    let error = other.get_task(GetTaskParams::new(&id)).await.unwrap_err();
    assert!(format!("{error}").contains("unknown task"), "{error}");
}

/// A client of `host` in `era`, sending alice's token, that declares
/// URL-mode elicitation and answers once released
/// ([`TestClient::release_elicitations`]): its handler and its session.
async fn url_client(
    host: &Host,
    era: Era,
) -> (
    TestClient,
    rmcp::service::RunningService<rmcp::RoleClient, TestClient>,
) {
    let config =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            host.url.as_deref().unwrap().to_string(),
        )
        .auth_header(ALICE.to_string());
    let mut capabilities = ClientCapabilities::default();
    capabilities.elicitation = Some(
        rmcp::model::ElicitationCapability::new()
            .with_form(Default::default())
            .with_url(Default::default()),
    );
    let handler = TestClient::new(Elicitation::AcceptWhenReleased).with_capabilities(capabilities);
    let transport = rmcp::transport::StreamableHttpClientTransport::from_config(config);
    let client = handler.clone().start(era, transport).await;
    (handler, client)
}

#[tokio::test]
async fn a_client_that_opens_urls_is_sent_to_the_page_and_its_call_runs_once_approved() {
    // The user is shown the page in a URL-mode elicitation (legacy: a
    // request to the client; 2026-07-28: an input_required round); once
    // they are back and the approver said yes, the call runs.
    for era in ERAS {
        let statuspro = statuspro(era, Elicitation::Unsupported, 600).await;
        let host = &statuspro.host;
        let (handler, client) = url_client(host, era).await;
        // The client's own call helper, which answers 2026-07-28 rounds
        // through the handler, as a real client does.
        let call = tokio::spawn(async move {
            let answer = client
                .call_tool(
                    CallToolRequestParams::new("update_order_status")
                        .with_arguments(change("opened").as_object().unwrap().clone()),
                )
                .await;
            (client, answer)
        });
        crate::support::session::wait_for_seen(&handler, |seen| !seen.urls.is_empty()).await;
        let shown = handler.seen.lock().unwrap().urls[0].clone();
        let id = shown.rsplit('/').next().unwrap().to_string();
        assert!(shown.contains("/approvals/"), "{shown}");
        assert!(statuspro.sandbox.mutations().is_empty());

        let mut carol = Page::of(host);
        carol.sign_in(CAROL).await;
        let (status, _) = carol.decide(&id, "approve").await;
        assert_eq!(status, StatusCode::OK);
        handler.release_elicitations();
        let (_client, result) = call.await.unwrap();
        let result = result.expect("the call answers");
        let out = result.structured_content.expect("structured");
        assert_eq!(out["result"], "confirmed", "{era:?}: {out}");
        assert_eq!(statuspro.sandbox.mutations().len(), 1, "{era:?}");
    }
}

#[tokio::test]
async fn one_approval_runs_its_call_once_however_many_page_rounds_the_client_kept() {
    // A 2026-07-28 client that opens URLs gets a sealed page round each
    // time it calls while the approval waits; approved, the first retry
    // runs the call, and a second round's retry asks anew (it is no
    // continuation of the run).
    let statuspro = statuspro(Era::Modern, Elicitation::Unsupported, 600).await;
    let host = &statuspro.host;
    let (handler, client) = url_client(host, Era::Modern).await;
    let params = CallToolRequestParams::new("update_order_status")
        .with_arguments(change("once").as_object().unwrap().clone());
    // The approval a page round names, and the round's state.
    let page_round = |answer: CallToolResponse| match answer {
        CallToolResponse::InputRequired(round) => {
            let text = serde_json::to_string(&round).unwrap();
            let id = text
                .split("/approvals/")
                .nth(1)
                .map(|rest| {
                    rest.chars()
                        .take_while(char::is_ascii_hexdigit)
                        .collect::<String>()
                })
                .expect("the round names the page");
            (id, round.request_state.expect("a sealed state"))
        }
        other => panic!("a page round, not {other:?}"),
    };
    let (id, first) = page_round(client.call_tool_once(params.clone()).await.unwrap());
    let (same, second) = page_round(client.call_tool_once(params.clone()).await.unwrap());
    assert_eq!(same, id, "one approval waits");

    let mut carol = Page::of(host);
    carol.sign_in(CAROL).await;
    let (status, _) = carol.decide(&id, "approve").await;
    assert_eq!(status, StatusCode::OK);
    handler.release_elicitations();
    let back = |state: String| {
        let mut answers = rmcp::model::InputResponses::new();
        answers.insert("confirm".into(), json!({"action": "accept"}));
        params
            .clone()
            .with_request_state(state)
            .with_input_responses(answers)
    };
    // A retry whose answer cannot be read is refused before the approval
    // is taken: the same state, answered properly, still runs the call.
    let malformed = params.clone().with_request_state(first.clone());
    let refused = client.call_tool_once(malformed).await;
    assert!(
        format!("{refused:?}").contains("inputResponses"),
        "{refused:?}"
    );
    // The first round's retry runs the call (the client's helper answers
    // the tool's own question).
    let out = client.call_tool(back(first)).await.unwrap();
    assert_eq!(
        out.structured_content.unwrap()["result"],
        "confirmed",
        "the approved call ran"
    );
    assert_eq!(statuspro.sandbox.mutations().len(), 1);
    // The second round's retry: a new approval is asked for, nothing runs.
    let (again, _) = page_round(client.call_tool_once(back(second)).await.unwrap());
    assert_ne!(again, id, "the spent approval runs nothing more");
    assert_eq!(statuspro.sandbox.mutations().len(), 1, "the call ran once");
}

#[tokio::test]
async fn a_call_waiting_on_the_page_whose_approval_a_task_took_meanwhile_is_told_the_task_runs_it()
{
    // A legacy client that opens URLs waits while its user is on the page;
    // meanwhile the same caller's same call comes from a client that
    // declares tasks, and the approval becomes that task. Approved, the
    // task runs the call once; the waiting call runs nothing and says so.
    let statuspro = statuspro(Era::Legacy, Elicitation::Unsupported, 600).await;
    let host = &statuspro.host;
    let (handler, waiting) = url_client(host, Era::Legacy).await;
    let params = CallToolRequestParams::new("update_order_status")
        .with_arguments(change("opened").as_object().unwrap().clone());
    let call = tokio::spawn({
        let params = params.clone();
        async move {
            let answer = waiting.call_tool(params).await;
            (waiting, answer)
        }
    });
    crate::support::session::wait_for_seen(&handler, |seen| !seen.urls.is_empty()).await;
    let shown = handler.seen.lock().unwrap().urls[0].clone();
    let id = shown.rsplit('/').next().unwrap().to_string();

    let tasks = task_client(host, ALICE).await;
    let CallToolResponse::Task(created) = tasks.call_tool_once(params).await.unwrap() else {
        panic!("a client with tasks gets a task");
    };
    assert_eq!(
        created.task.task_id, id,
        "the approval waiting became the task"
    );

    let mut carol = Page::of(host);
    carol.sign_in(CAROL).await;
    let (status, _) = carol.decide(&id, "approve").await;
    assert_eq!(status, StatusCode::OK);
    // The task may have begun by the time the user is back: either way
    // the waiting call is told where the call runs.
    handler.release_elicitations();
    let (_waiting, answer) = call.await.unwrap();
    let out = answer
        .expect("the waiting call answers")
        .structured_content
        .expect("structured");
    assert_eq!(out["issues"][0]["code"], "APPROVAL_PENDING", "{out}");
    let message = out["issues"][0]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("runs as task {id}")) && message.contains("ran nothing"),
        "{out}"
    );

    // StatusPro's own question comes through the task; answered, the call
    // runs once.
    let asking = poll(&tasks, &id, |s| s != TaskStatus::Working).await;
    assert_eq!(asking["status"], "input_required", "{asking}");
    let mut answers = rmcp::model::InputResponses::new();
    answers.insert(
        "confirm".into(),
        json!({"action": "accept", "content": {"confirm": true}}),
    );
    tasks
        .update_task(UpdateTaskParams::new(&id, answers))
        .await
        .unwrap();
    let done = poll(&tasks, &id, |s| s == TaskStatus::Completed).await;
    assert_eq!(
        done["result"]["structuredContent"]["result"], "confirmed",
        "{done}"
    );
    assert_eq!(statuspro.sandbox.mutations().len(), 1, "the call ran once");
}

#[tokio::test]
async fn a_caller_may_have_only_so_many_approvals_waiting_at_once() {
    // Two tools under the approval rule, one approval allowed to wait.
    let rule = config(600).replace(
        "when = 'tool.name == \"update_order_status\"'",
        "when = 'tool.name in [\"update_order_status\", \"add_order_comment\"]'",
    );
    let statuspro = statuspro_with(
        Era::Legacy,
        Elicitation::Accept(true),
        &format!("{rule}[approvals]\npending_per_caller = 1\n"),
    )
    .await;
    let host = &statuspro.host;
    let first = pending(host, change("one")).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    // Another tool's call would ask for a second: refused, naming the one
    // that waits.
    let comment = json!({
        "order_id": seed::order_without_due_date(),
        "comment": "a second approval",
        "confirm": true,
    });
    let issue = host.tool_error("add_order_comment", comment.clone()).await;
    assert_eq!(issue["code"], "APPROVAL_LIMIT", "{issue}");
    let message = issue["message"].as_str().unwrap();
    assert!(
        message.contains("approvals.pending_per_caller (1)") && message.contains(&first),
        "{issue}"
    );
    // The same call as the one that waits is answered with it, as always.
    assert_eq!(pending(host, change("one")).await["id"], first.as_str());
    // Once it is decided, there is room again.
    let mut carol = Page::of(host);
    carol.sign_in(CAROL).await;
    let (status, _) = carol.decide(&first, "deny").await;
    assert_eq!(status, StatusCode::OK);
    let issue = host.tool_error("add_order_comment", comment).await;
    assert_eq!(issue["code"], "APPROVAL_PENDING", "{issue}");
    assert!(statuspro.sandbox.mutations().is_empty());
}

#[tokio::test]
async fn a_page_session_ends_when_the_credential_it_was_opened_with_expires() {
    use toolhost_test_infra::idp::{Idp, SigningKey};
    let key = SigningKey::new("k1");
    let idp = Idp::start(&[&key]).await;
    let oauth = format!(
        "[auth.oauth]\nissuer = \"{}\"\njwks_url = \"{}\"\nalgorithms = [\"ES256\"]\nscopes = [\"mcp:tools\"]\n",
        idp.issuer, idp.jwks_url
    );
    let statuspro = statuspro_with(
        Era::Legacy,
        Elicitation::Accept(true),
        &format!("{}{oauth}", config(600)),
    )
    .await;
    let host = &statuspro.host;
    let id = pending(host, change("After the token ran out.")).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    // Carol signs in with an access token good for two more seconds.
    let now = jsonwebtoken::get_current_timestamp();
    let short = key.sign(&json!({
        "iss": idp.issuer, "aud": "https://mcp.example.com/mcp", "sub": "carol",
        "iat": now, "nbf": now - 10, "exp": now + 2, "scope": "mcp:tools",
    }));
    let mut carol = Page::of(host);
    carol.sign_in(&short).await;
    let (_, _, html) = carol.get("").await;
    assert!(html.contains(&id), "signed in, carol sees the call: {html}");
    // The passing of the token's lifetime is what is tested.
    tokio::time::sleep(Duration::from_millis(2_100)).await;
    let (_, _, html) = carol.get("").await;
    assert!(
        html.contains("Sign in"),
        "the session ended with the token: {html}"
    );
    let form = [
        ("csrf", "0".repeat(32)),
        ("decision", "approve".to_string()),
    ];
    let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (status, _) = carol.post(&format!("/{id}"), &form).await;
    assert_ne!(status, StatusCode::OK);
    assert!(statuspro.sandbox.mutations().is_empty());
}

#[tokio::test]
async fn the_page_shows_characters_that_display_as_something_else_as_escapes() {
    let statuspro = statuspro(Era::Legacy, Elicitation::Accept(true), 600).await;
    let host = &statuspro.host;
    // A right-to-left override makes "exe.png" read as "gnp.exe"; a
    // zero-width space hides between letters.
    let id = pending(host, change("invoice\u{202E}gnp.exe pa\u{200B}id")).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut carol = Page::of(host);
    carol.sign_in(CAROL).await;
    let (_, _, html) = carol.get(&format!("/{id}")).await;
    assert!(
        !html.contains('\u{202E}') && !html.contains('\u{200B}'),
        "no invisible character reaches the page"
    );
    assert!(
        html.contains("invoice\\u202egnp.exe pa\\u200bid"),
        "each is shown as its escape: {html}"
    );
}

#[tokio::test]
async fn a_sign_in_through_the_provider_begins_only_from_the_page_itself() {
    let statuspro = statuspro(Era::Legacy, Elicitation::Accept(true), 600).await;
    let page = Page::of(&statuspro.host);
    let cross_site = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(format!("{}/sign-in/provider?next=/approvals", page.base))
        .header("sec-fetch-site", "cross-site")
        .send()
        .await
        .unwrap();
    assert_ne!(
        cross_site.status(),
        StatusCode::SEE_OTHER,
        "not sent to the provider"
    );
    let html = cross_site.text().await.unwrap();
    assert!(
        html.contains("A sign-in begins from this page"),
        "another site's page cannot begin one: {html}"
    );
}

#[tokio::test]
async fn an_approver_signs_in_through_the_identity_provider_with_pkce_and_decides() {
    use toolhost_test_infra::idp::{AuthorizationServer, Idp, SigningKey};
    let key = SigningKey::new("k1");
    let idp = Idp::start(&[&key]).await;
    let provider = AuthorizationServer::start(&idp, key.clone(), "toolhost-approvals").await;
    let rule = format!(
        "[auth.oauth]\nissuer = \"{}\"\njwks_url = \"{}\"\nalgorithms = [\"ES256\"]\nscopes = [\"mcp:tools\"]\n\
         [approvals.oauth]\nclient_id = \"toolhost-approvals\"\nauthorization_endpoint = \"{}\"\n\
         token_endpoint = \"{}\"\n",
        idp.issuer, idp.jwks_url, provider.authorization_endpoint, provider.token_endpoint
    );
    let config = config(600).replace(
        "outcome = \"approve\"\napprove = { approver = 'approver.subject == \"carol\"'",
        "outcome = \"approve\"\napprove = { approver = '\"support\" in approver.claims.groups'",
    );
    let statuspro = statuspro_with(
        Era::Legacy,
        Elicitation::Accept(true),
        &format!("{config}{rule}"),
    )
    .await;
    let host = &statuspro.host;
    let approval = pending(host, change("Signed in at the provider.")).await;
    let id = approval["id"].as_str().unwrap().to_string();

    let page = Page::of(host);
    let (_, _, html) = page.get(&format!("/{id}")).await;
    assert!(
        html.contains("Sign in with your identity provider"),
        "{html}"
    );

    // The whole redirect dance, as a browser follows it.
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let sign_in = |claims: Value| {
        provider.sign_in_as(claims);
        let browser = browser.clone();
        let start = format!("{}/sign-in/provider?next=/approvals/{id}", page.base);
        async move {
            let to_provider = browser.get(&start).send().await.unwrap();
            assert_eq!(to_provider.status(), StatusCode::SEE_OTHER);
            let sign_in_cookie = to_provider.headers()["set-cookie"]
                .to_str()
                .unwrap()
                .split(';')
                .next()
                .unwrap()
                .to_string();
            let authorize = to_provider.headers()["location"]
                .to_str()
                .unwrap()
                .to_string();
            assert!(
                authorize.contains("code_challenge_method=S256") && authorize.contains("resource="),
                "{authorize}"
            );
            let back = browser.get(&authorize).send().await.unwrap();
            let callback = back.headers()["location"].to_str().unwrap().to_string();
            (sign_in_cookie, callback)
        }
    };

    // Back in another browser (without the sign-in's cookie): refused.
    let (_, callback) =
        sign_in(json!({"sub": "carol", "groups": ["support"], "scope": "mcp:tools"})).await;
    let stolen = browser.get(&callback).send().await.unwrap();
    assert_eq!(stolen.status(), StatusCode::UNAUTHORIZED);
    assert!(
        stolen
            .text()
            .await
            .unwrap()
            .contains("not begun in this browser")
    );

    let (cookie, callback) =
        sign_in(json!({"sub": "carol", "groups": ["support"], "scope": "mcp:tools"})).await;
    let signed = browser
        .get(&callback)
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(
        signed.status(),
        StatusCode::SEE_OTHER,
        "{:?}",
        signed.text().await
    );
    assert_eq!(
        signed.headers()["location"],
        format!("/approvals/{id}").as_str()
    );
    let session = signed
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .find(|c| c.starts_with("toolhost_approver="))
        .expect("a session");
    // The same code and state again: used.
    let replayed = browser
        .get(&callback)
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(replayed.status(), StatusCode::UNAUTHORIZED);

    let mut carol = Page::of(host);
    carol.cookie = Some(session.split(';').next().unwrap().to_string());
    let (_, _, html) = carol.get("").await;
    assert!(html.contains("jwt:carol") && html.contains(&id), "{html}");
    let (status, _) = carol.decide(&id, "approve").await;
    assert_eq!(status, StatusCode::OK);
    let out = host
        .ok("update_order_status", change("Signed in at the provider."))
        .await;
    assert_eq!(out["result"], "confirmed");
    assert_eq!(statuspro.sandbox.mutations().len(), 1);

    // Someone outside the group signs in, and has nothing to decide.
    pending(host, change("Another.")).await;
    let (cookie, callback) =
        sign_in(json!({"sub": "dave", "groups": ["sales"], "scope": "mcp:tools"})).await;
    let signed = browser
        .get(&callback)
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    let session = signed
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .find(|c| c.starts_with("toolhost_approver="))
        .expect("a session");
    let mut dave = Page::of(host);
    dave.cookie = Some(session.split(';').next().unwrap().to_string());
    let (_, _, html) = dave.get("").await;
    assert!(
        html.contains("jwt:dave") && html.contains("No call is waiting"),
        "{html}"
    );
}

#[tokio::test]
async fn approvals_are_counted_by_event_with_the_pending_gauge_and_the_decision_time() {
    let statuspro = Setup::new()
        .http()
        .elicitation(Elicitation::Accept(true))
        .bearer(ALICE)
        .config(&format!(
            "{}\n[host]\nmetrics = \"127.0.0.1:0\"\n",
            config(600)
        ))
        .start()
        .await;
    let statuspro: &StatusPro = &statuspro;
    let host = &statuspro.host;
    let first = pending(host, change("one")).await;
    pending(host, change("two")).await; // voids the first
    let second = pending(host, change("two")).await;
    let mut carol = Page::of(host);
    carol.sign_in(CAROL).await;
    let csrf = carol.csrf().await;
    let id = second["id"].as_str().unwrap();
    carol
        .post(
            &format!("/{id}"),
            &[("csrf", &csrf), ("decision", "approve")],
        )
        .await;
    host.ok("update_order_status", change("two")).await;
    assert_ne!(first["id"], second["id"]);

    let log = host.wait_for_stderr("/metrics").await;
    let start = log.find("metrics on http://").unwrap() + "metrics on ".len();
    let rest = &log[start..];
    let url = &rest[..rest.find("/metrics").unwrap() + "/metrics".len()];
    let scrape = crate::support::metrics::Scrape::of(url).await;
    for (event, n) in [
        ("requested", 2.0),
        ("void", 1.0),
        ("approved", 1.0),
        ("spent", 1.0),
    ] {
        scrape.expect("toolhost_approvals_total", &[("event", event)], n);
    }
    scrape.expect("toolhost_approvals_pending", &[], 0.0);
    scrape.expect(
        "toolhost_approval_decision_seconds_count",
        &[("decision", "approved")],
        1.0,
    );
}

/// A token no `[auth]` of these tests accepts.
const WRONG_TOKEN: &str = "guessed-token-0123456789";

/// Spends the sign-in attempts of `page`'s client on a wrong token, each
/// refused as such.
async fn spend_sign_ins(page: &Page) {
    for _ in 0..toolhost::transport::approval_page::SIGN_INS_PER_MINUTE {
        let status = page.sign_in_response(WRONG_TOKEN).await.status();
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
}

#[tokio::test]
async fn behind_a_trusted_proxy_sign_ins_are_limited_per_forwarded_client_and_a_forged_header_is_ignored()
 {
    // The balancer is 127.0.0.2; clients elsewhere reach the page directly.
    let statuspro = statuspro_with(
        Era::Legacy,
        Elicitation::Accept(true),
        &format!(
            "{}\n[http]\ntrusted_proxies = [\"127.0.0.2\"]\n",
            config(600)
        ),
    )
    .await;
    let limit = toolhost::transport::approval_page::SIGN_INS_PER_MINUTE;
    let from = |local, forwarded_for| Page::from_address(&statuspro.host, local, forwarded_for);

    // Through the balancer, one client spends its attempts…
    let guesser = from([127, 0, 0, 2], Some("198.51.100.7, 203.0.113.5"));
    spend_sign_ins(&guesser).await;
    assert_eq!(
        guesser.sign_in_response(CAROL).await.status(),
        StatusCode::TOO_MANY_REQUESTS,
        "counted by the address the balancer forwarded for"
    );
    // …and another client through the same balancer signs in.
    let mut approver = from([127, 0, 0, 2], Some("203.0.113.6"));
    approver.sign_in(CAROL).await;

    // A client that is not a trusted proxy cannot choose its address: its
    // header is ignored, and every attempt counts against its own.
    for n in 0..limit {
        let forged_for = format!("192.0.2.{n}");
        let status = Page::from_address(&statuspro.host, [127, 0, 0, 3], Some(&forged_for))
            .sign_in_response(WRONG_TOKEN)
            .await
            .status();
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    let forged = from([127, 0, 0, 3], Some("192.0.2.200"));
    assert_eq!(
        forged.sign_in_response(CAROL).await.status(),
        StatusCode::TOO_MANY_REQUESTS
    );
}

#[tokio::test]
async fn sign_in_attempts_are_limited_per_client_address_and_told_when_to_come_back() {
    let statuspro = statuspro(Era::Legacy, Elicitation::Accept(true), 600).await;
    let page = Page::of(&statuspro.host);
    // A client guessing tokens: each wrong one is refused as such, until
    // the address's attempts are spent.
    spend_sign_ins(&page).await;
    let response = page.sign_in_response(CAROL).await;
    assert_eq!(
        response.status(),
        StatusCode::TOO_MANY_REQUESTS,
        "past the limit even a right token waits"
    );
    let wait: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
    let body = response.text().await.unwrap();
    assert!(body.contains("Too many sign-in attempts"), "{body}");

    // Another address is not held to this one's attempts.
    let mut elsewhere = Page::from_address(&statuspro.host, [127, 0, 0, 2], None);
    elsewhere.sign_in(CAROL).await;
    let (status, _, html) = elsewhere.get("").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("Sign out"), "{html}");
}
