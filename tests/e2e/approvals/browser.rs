//! The approval page in a real browser: Debian's Chromium, headless, driven
//! over WebDriver by its own ChromeDriver. An approver signs in with a
//! token, sees only what they may decide, approves; the caller's task
//! completes and the sandbox shows one change. A denial runs nothing; a second
//! window's stale form changes nothing. The screenshots it takes are the
//! ones in docs/approvals.md.

use std::path::PathBuf;
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

use rmcp::model::TaskStatus;

use super::{ALICE, CAROL, MALLORY, change, pending, poll, statuspro, task_client_at};
use crate::support::infra::require;
use crate::support::{Elicitation, Era};

/// ChromeDriver on a loopback port, killed on drop.
struct Driver {
    url: String,
    _child: tokio::process::Child,
    _profile: tempfile::TempDir,
}

/// Starts ChromeDriver and waits until it accepts connections.
async fn driver() -> Driver {
    let port = toolhost_test_infra::free_port();
    let child = tokio::process::Command::new("chromedriver")
        .arg(format!("--port={port}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("chromedriver starts");
    let listening = async {
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(20), listening)
        .await
        .expect("chromedriver listens");
    Driver {
        url: format!("http://127.0.0.1:{port}"),
        _child: child,
        _profile: tempfile::tempdir().unwrap(),
    }
}

/// A headless Chromium session (no network but loopback: the flags keep it
/// from reaching for Google's services).
async fn browser(driver: &Driver) -> Client {
    let profile = driver._profile.path().display().to_string();
    let mut capabilities = serde_json::Map::new();
    capabilities.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": "/usr/bin/chromium",
            "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync",
                "--window-size=1100,900", format!("--user-data-dir={profile}"),
            ],
        }),
    );
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(capabilities)
        .connect(&driver.url)
        .await
        .expect("a browser session")
}

/// Where the test leaves its screenshots (docs/approvals.md shows copies).
fn screenshots() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/screenshots/approvals");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn shot(browser: &Client, name: &str) {
    let png = browser.screenshot().await.expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    std::fs::write(screenshots().join(name), png).unwrap();
}

/// Signs in on the page at `url` with `token`.
async fn sign_in(browser: &Client, url: &str, token: &str) {
    browser.goto(url).await.unwrap();
    element(browser, "#token")
        .await
        .send_keys(token)
        .await
        .unwrap();
    element(browser, "form button[type=submit]")
        .await
        .click()
        .await
        .unwrap();
    // Signed in once the page after the redirect shows its sign-out button
    // (the sign-in page's header has none): read before that, the page
    // source can still be the sign-in form on a busy machine.
    element(browser, "header form button").await;
}

/// The element `css`, once the page shows it (a click's navigation may
/// still be loading on a busy machine).
async fn element(browser: &Client, css: &str) -> fantoccini::elements::Element {
    browser
        .wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
}

/// The text of the element `css`.
async fn text(browser: &Client, css: &str) -> String {
    element(browser, css).await.text().await.unwrap()
}

#[tokio::test]
#[ignore = "needs chromium and chromedriver (apt-get install -y chromium chromium-driver); cargo xtask test runs it when installed"]
async fn an_approver_signs_in_sees_what_they_may_decide_and_approves_in_a_real_browser() {
    require(&["chromium", "chromedriver"]);
    let statuspro = statuspro(Era::Legacy, Elicitation::Accept(true), 600).await;
    let host = &statuspro.host;
    // The caller's client declares tasks: its call becomes one.
    let caller = task_client_at(host.url.as_deref().unwrap(), ALICE).await;
    let params = rmcp::model::CallToolRequestParams::new("update_order_status")
        .with_arguments(change("Checked by support.").as_object().unwrap().clone());
    let rmcp::model::CallToolResponse::Task(created) = caller.call_tool_once(params).await.unwrap()
    else {
        panic!("a task");
    };
    let id = created.task.task_id;
    let url = host
        .url
        .as_deref()
        .unwrap()
        .replace("/mcp", &format!("/approvals/{id}"));

    let driver = driver().await;
    let browser = browser(&driver).await;

    // Someone the rule does not name sees nothing to decide.
    sign_in(&browser, &url, MALLORY).await;
    let shown = browser.source().await.unwrap();
    assert!(shown.contains("no approval with this id"), "{shown}");
    element(&browser, "header form button")
        .await
        .click()
        .await
        .unwrap();
    // Signed out once the sign-in form is back.
    element(&browser, "#token").await;

    browser.goto(&url).await.unwrap();
    shot(&browser, "1-sign-in.png").await;
    sign_in(&browser, &url, CAROL).await;
    assert_eq!(text(&browser, "#approver").await, "token:carol");
    assert!(
        text(&browser, "pre.arguments")
            .await
            .contains("\"comment\": \"Checked by support.\""),
        "the arguments, pretty-printed"
    );
    assert_eq!(text(&browser, "dd.caller").await, "token:alice");
    shot(&browser, "2-pending.png").await;

    // The list of calls waiting, with its filter.
    browser
        .goto(&url.replace(&format!("/{id}"), ""))
        .await
        .unwrap();
    element(&browser, "form.filter").await;
    assert_eq!(text(&browser, "#shown").await, "1 call waiting");
    shot(&browser, "4-waiting-list.png").await;
    browser.goto(&url).await.unwrap();

    // A second window holds the same form, soon stale.
    let stale = browser.new_window(true).await.unwrap().handle;
    let first = browser.window().await.unwrap();
    browser.switch_to_window(stale.clone()).await.unwrap();
    browser.goto(&url).await.unwrap();
    browser.switch_to_window(first).await.unwrap();

    element(&browser, &format!("#note-{id}"))
        .await
        .send_keys("Checked the order; go ahead.")
        .await
        .unwrap();
    element(&browser, "button.approve")
        .await
        .click()
        .await
        .unwrap();
    assert!(text(&browser, "#outcome").await.starts_with("Approved."));
    shot(&browser, "3-approved.png").await;

    // The stale form's Deny changes nothing.
    browser.switch_to_window(stale).await.unwrap();
    element(&browser, "button.deny")
        .await
        .click()
        .await
        .unwrap();
    // Approved, and (a task) perhaps already begun: spent.
    let refused = text(&browser, "#outcome").await;
    assert!(
        refused.contains("already (by token:carol)") && refused.contains("nothing changed"),
        "{refused}"
    );

    // The caller's task runs, asks its own question through the task, and
    // completes with one change.
    let asking = poll(&caller, &id, |s| s != TaskStatus::Working).await;
    assert_eq!(asking["status"], "input_required", "{asking}");
    let mut answers = rmcp::model::InputResponses::new();
    answers.insert(
        "confirm".into(),
        json!({"action": "accept", "content": {"confirm": true}}),
    );
    caller
        .update_task(rmcp::model::UpdateTaskParams::new(&id, answers))
        .await
        .unwrap();
    let done = poll(&caller, &id, |s| s == TaskStatus::Completed).await;
    assert_eq!(
        done["result"]["structuredContent"]["result"], "confirmed",
        "{done}"
    );
    assert_eq!(statuspro.sandbox.mutations().len(), 1);

    // A denial in the browser: nothing runs.
    let denied = pending(host, change("Not this one.")).await;
    let denied_id = denied["id"].as_str().unwrap().to_string();
    browser.goto(denied["url"].as_str().unwrap()).await.unwrap();
    element(&browser, "button.deny")
        .await
        .click()
        .await
        .unwrap();
    assert!(text(&browser, "#outcome").await.starts_with("Denied."));
    let issue = host
        .tool_error("update_order_status", change("Not this one."))
        .await;
    assert_eq!(issue["code"], "APPROVAL_DENIED", "{issue}");
    assert!(issue["message"].as_str().unwrap().contains(&denied_id));
    assert_eq!(
        statuspro.sandbox.mutations().len(),
        1,
        "the denial ran nothing"
    );
    // The caller, signed in, has nothing to decide (its own calls are not
    // its to approve).
    element(&browser, "header form button")
        .await
        .click()
        .await
        .unwrap();
    // Signed out once the sign-in form is back: a page opened before could
    // still carry the session the sign-out ends.
    element(&browser, "#token").await;
    sign_in(&browser, &url.replace(&format!("/{id}"), ""), ALICE).await;
    assert!(
        text(&browser, "#nothing-pending")
            .await
            .contains("No call is waiting")
    );
    browser.close().await.unwrap();
}
