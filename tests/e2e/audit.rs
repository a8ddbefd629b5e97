//! The audit trail (`[host] audit`, ADR 0019), read from the file the real
//! binary wrote: what a change, a decline, a preview and a read leave; that
//! arguments are hashed unless the operator opts in; that no key or header
//! reaches it; that a trail that cannot be written stops changes and not
//! reads; rotation; `toolhost audit`; the HTTP caller's identity.
//!
//! Every StatusPro and Katana test runs with the trail on (their `Setup`
//! adds it) and ends by checking, against the sandbox's request log, that
//! every change it received was recorded as made by a confirmed call and
//! that no other call changed anything ([`assert_changes_recorded`]).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use statuspro_sandbox::{SandboxConfig, seed};

use crate::statuspro::Setup;
use crate::support::infra::sha256_hex;
use crate::support::{ERAS, Elicitation, Era, Host, HostOptions, component, with_host_setting};

pub use crate::support::audit::{
    TRAIL, assert_changes_recorded, changes_in, records, trail_of, with_trail,
};

/// The `call` and `intent` records in the file at `path`: every line but
/// the trail's own marks (`rotation`, `chain`, `suppressed`).
fn calls_in(path: &Path) -> Vec<Value> {
    records(path)
        .into_iter()
        .filter(|r| matches!(r["record"].as_str(), Some("call" | "intent")))
        .collect()
}

/// The final (`call`) records of `tool`.
fn calls_of<'a>(records: &'a [Value], tool: &str) -> Vec<&'a Value> {
    records
        .iter()
        .filter(|r| r["record"] == "call" && r["tool"] == tool)
        .collect()
}

/// A status change the seed allows: a Quality Check order to Shipped.
fn viable_change() -> (i64, &'static str) {
    (
        seed::order_with_viable_next("st000003").unwrap(),
        "st000003",
    )
}

#[tokio::test]
async fn a_change_a_preview_and_a_read_leave_what_an_operator_needs() {
    for era in ERAS {
        let statuspro = Setup::new()
            .era(era)
            .elicitation(Elicitation::Accept(true))
            .start()
            .await;
        let host = &statuspro.host;
        let (id, code) = viable_change();
        host.ok("get_order", json!({"order_id": id})).await;
        host.ok(
            "update_order_status",
            json!({"order_id": id, "status_code": code, "confirm": false}),
        )
        .await;
        // Keys in another order than the canonical one.
        let change =
            json!({"status_code": code, "order_id": id, "confirm": true, "comment": "Packed."});
        host.ok("update_order_status", change).await;

        let records = records(&statuspro.audit_trail());
        let read = calls_of(&records, "get_order");
        assert_eq!(read.len(), 1, "{era:?}: {records:#?}");
        let read = read[0];
        assert_eq!(
            (
                &read["caller"],
                &read["read_only"],
                &read["confirmation"],
                &read["result"]
            ),
            (&json!("stdio"), &json!(true), &Value::Null, &json!("ok")),
            "{era:?}: {read}"
        );
        let gets = read["upstream"].as_array().unwrap();
        assert!(!gets.is_empty(), "{read}");
        for get in gets {
            assert_eq!(
                (&get["method"], &get["host"], &get["status"]),
                (&json!("GET"), &json!("127.0.0.1"), &json!(200)),
                "{get}"
            );
            assert!(get["bytes"].as_u64().unwrap() > 0, "{get}");
            assert!(get["path"].as_str().unwrap().starts_with("/api/v1/orders/"));
        }
        assert!(read["time"].as_str().unwrap().ends_with('Z'), "{read}");
        assert!(read["duration_ms"].is_u64());

        let updates = calls_of(&records, "update_order_status");
        let preview = updates[0];
        assert_eq!(
            (
                &preview["confirmation"],
                &preview["result"],
                &preview["read_only"]
            ),
            (&Value::Null, &json!("ok"), &json!(false)),
            "{era:?}: a preview asks nothing: {preview}"
        );
        assert!(changes_in(preview).is_empty(), "{preview}");

        // A 2026-07-28 client is asked in an `input_required` round first,
        // then retries with the answer: two records.
        let done = match era {
            Era::Legacy => {
                assert_eq!(updates.len(), 2, "{updates:#?}");
                updates[1]
            }
            Era::Modern => {
                assert_eq!(updates.len(), 3, "{updates:#?}");
                let asked = updates[1];
                assert_eq!(
                    (&asked["result"], &asked["confirmation"]["outcome"]),
                    (&json!("input_required"), &json!("input_required")),
                    "{asked}"
                );
                assert!(changes_in(asked).is_empty(), "{asked}");
                updates[2]
            }
        };
        let via = match era {
            Era::Legacy => "elicitation",
            Era::Modern => "input_required",
        };
        assert_eq!(
            done["confirmation"],
            json!({"via": via, "answers": ["confirmed"], "outcome": "confirmed"}),
            "{era:?}"
        );
        assert_eq!(done["result"], "ok");
        assert_eq!(done["issues"], json!([]));
        let sent = statuspro.sandbox.mutations();
        assert_eq!(sent.len(), 1);
        let posts = changes_in(done);
        assert_eq!(posts.len(), 1, "{done}");
        assert_eq!(
            (&posts[0]["method"], &posts[0]["path"], &posts[0]["port"]),
            (
                &json!("POST"),
                &json!(sent[0].path),
                &json!(statuspro.sandbox.addr().port())
            ),
        );
        assert!(posts[0]["status"].as_u64().unwrap() / 100 == 2, "{done}");
        assert_eq!(
            (&done["plugin"], &done["file"]),
            (
                &json!("statuspro"),
                &json!("statuspro_update_order_status.wasm")
            )
        );
        let bytes = component("statuspro_update_order_status");
        use sha2::Digest;
        let digest = hex::encode(sha2::Sha256::digest(&bytes));
        assert_eq!(done["digest"], format!("sha256:{digest}"));
        let canonical = format!(
            r#"{{"comment":"Packed.","confirm":true,"order_id":{id},"status_code":"{code}"}}"#
        );
        assert_eq!(done["arguments_sha256"], sha256_hex(&canonical));
        assert!(done.get("arguments").is_none(), "not stored by default");

        // The intent went to disk before the change, with the same id.
        let at = |r: &Value| records.iter().position(|x| x == r).unwrap();
        let intent = records
            .iter()
            .find(|r| r["record"] == "intent" && r["id"] == done["id"])
            .expect("an intent record");
        assert!(at(intent) < at(done));
        assert_eq!(intent["result"], "pending");
        assert_eq!(changes_in(intent).len(), 1, "{intent}");
        assert_eq!(changes_in(intent)[0]["status"], Value::Null);
    }
}

#[tokio::test]
async fn declines_and_cancels_leave_a_record_and_no_change() {
    for era in ERAS {
        for (answer, outcome) in [
            (Elicitation::Accept(false), "declined"),
            (Elicitation::Cancel, "cancelled"),
        ] {
            let statuspro = Setup::new().era(era).elicitation(answer).start().await;
            let (id, code) = viable_change();
            statuspro
                .host
                .ok(
                    "update_order_status",
                    json!({"order_id": id, "status_code": code, "confirm": true}),
                )
                .await;
            assert!(statuspro.sandbox.mutations().is_empty());
            let records = records(&statuspro.audit_trail());
            let last = *calls_of(&records, "update_order_status").last().unwrap();
            assert_eq!(
                (&last["confirmation"]["outcome"], &last["result"]),
                (&json!(outcome), &json!("ok")),
                "{era:?}: {last}"
            );
            assert!(changes_in(last).is_empty(), "{last}");
            assert!(
                !records.iter().any(|r| r["record"] == "intent"),
                "nothing was about to change"
            );
        }
    }
}

#[tokio::test]
async fn arguments_are_stored_only_when_the_operator_opts_in_and_no_key_or_header_ever() {
    let key = "sp-live-7c41f0d9e2b84a6f93d1-audit";
    for opt_in in [false, true] {
        let mut setup = Setup::new()
            .sandbox(SandboxConfig {
                api_key: key.to_string(),
                ..SandboxConfig::default()
            })
            .elicitation(Elicitation::Accept(true))
            // A header the host injects, as an operator's credential.
            .config(
                "\n[[plugins.statuspro.credentials]]\nhost = \"127.0.0.1\"\nport = \"*\"\n\
                 header = \"X-Marker\"\nvalue = \"marker-value-3141\"\n",
            );
        if opt_in {
            setup = setup.config("\n[host]\naudit_arguments = true\n");
        }
        let statuspro = setup.start().await;
        let (id, code) = viable_change();
        let comment = "Gift wrap requested by phone.";
        let args =
            json!({"order_id": id, "status_code": code, "comment": comment, "confirm": true});
        statuspro.host.ok("update_order_status", args.clone()).await;
        statuspro.host.ok("list_orders", json!({"page": 1})).await;
        assert_eq!(statuspro.sandbox.mutations().len(), 1);

        let text = std::fs::read_to_string(statuspro.audit_trail()).unwrap();
        assert!(!text.contains(key), "the API key is in the trail:\n{text}");
        let lower = text.to_lowercase();
        for header in ["authorization", "bearer", "x-marker", "marker-value-3141"] {
            assert!(!lower.contains(header), "{header} is in the trail:\n{text}");
        }
        assert_eq!(text.contains(comment), opt_in, "{text}");
        let records = records(&statuspro.audit_trail());
        let done = *calls_of(&records, "update_order_status").last().unwrap();
        if opt_in {
            assert_eq!(done["arguments"], args);
        } else {
            assert!(done.get("arguments").is_none());
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(statuspro.audit_trail())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0, "the trail is private: {mode:o}");
        }
    }
}

#[tokio::test]
async fn a_full_disk_stops_changes_before_they_leave_and_lets_reads_go_on() {
    // /dev/full: every write fails with "No space left on device".
    let statuspro = Setup::new()
        .elicitation(Elicitation::Accept(true))
        .config("\n[host]\naudit = \"/dev/full\"\nmetrics = \"127.0.0.1:0\"\n")
        .start()
        .await;
    let host = &statuspro.host;
    let (id, code) = viable_change();
    for _ in 0..2 {
        let issue = host
            .tool_error(
                "update_order_status",
                json!({"order_id": id, "status_code": code, "confirm": true}),
            )
            .await;
        assert_eq!(issue["code"], "TRANSIENT", "{issue}");
        assert!(
            issue["message"]
                .as_str()
                .unwrap()
                .contains("nothing was changed"),
            "{issue}"
        );
        assert!(
            issue["hint"].as_str().unwrap().contains("host.audit"),
            "{issue}"
        );
    }
    assert!(
        statuspro.sandbox.mutations().is_empty(),
        "the change never left: {:?}",
        statuspro.requests()
    );
    let order = host.ok("get_order", json!({"order_id": id})).await;
    assert_ne!(order["status_code"], code);

    let log = host
        .wait_for_stderr("cannot write the audit trail /dev/full")
        .await;
    assert!(log.contains("host.audit"), "{log}");
    assert_eq!(
        log.matches("cannot write the audit trail /dev/full (")
            .count(),
        1,
        "logged once per failure episode, not per call:\n{log}"
    );

    // Counted per record lost: each refused call's intent and final
    // record, and the read's final record.
    let start = log.find("metrics on http://").expect("the metrics line") + "metrics on ".len();
    let url = log[start..].split_whitespace().next().unwrap();
    let text = reqwest::get(url).await.unwrap().text().await.unwrap();
    let failures = text
        .lines()
        .find_map(|l| l.strip_prefix("toolhost_audit_write_failures_total "))
        .unwrap_or_else(|| panic!("no failure counter in:\n{text}"));
    assert_eq!(failures, "5", "{text}");
}

#[tokio::test]
async fn the_trail_rotates_at_its_size_and_keeps_so_many_files() {
    let host = Host::start(
        HostOptions::new(&["hello"])
            .config("[host]\naudit = \"audit.jsonl\"\naudit_max_bytes = 4096\naudit_keep = 2\n"),
    )
    .await;
    for i in 0..40 {
        host.ok("greet", json!({"name": format!("caller {i}")}))
            .await;
    }
    let path = trail_of(&host);
    let rotated = |n: u32| PathBuf::from(format!("{}.{n}", path.display()));
    assert!(rotated(1).exists() && rotated(2).exists());
    assert!(!rotated(3).exists(), "only audit_keep = 2 rotated files");
    let mut kept = 0;
    for file in [rotated(2), rotated(1), path.clone()] {
        let size = std::fs::metadata(&file).unwrap().len();
        assert!(size <= 4096, "{} has {size} bytes", file.display());
        kept += calls_in(&file).len();
    }
    assert!(kept < 40, "the oldest records went with the oldest file");
    let newest = records(&path);
    let last = newest.last().unwrap();
    assert_eq!(
        last["arguments_sha256"],
        sha256_hex(r#"{"name":"caller 39"}"#),
        "the newest record is in the current file"
    );

    // `toolhost audit` reads the rotated files too, oldest first.
    let table = audit_command(&["--file", path.to_str().unwrap()]);
    assert_eq!(table.lines().count(), kept + 1, "{table}");
}

/// Runs `toolhost audit ARGS`; its stdout.
fn audit_command(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .arg("audit")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `toolhost audit ARGS` refused: what it says on stderr.
fn audit_refusal(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .arg("audit")
        .args(args)
        .output()
        .unwrap();
    assert!(!out.status.success(), "refused: {args:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test]
async fn toolhost_audit_prints_the_trail_as_a_table_filtered_by_tool_and_time() {
    let statuspro = Setup::new()
        .elicitation(Elicitation::Accept(true))
        .start()
        .await;
    let (id, code) = viable_change();
    statuspro
        .host
        .ok("get_order", json!({"order_id": id}))
        .await;
    statuspro
        .host
        .ok(
            "update_order_status",
            json!({"order_id": id, "status_code": code, "confirm": true}),
        )
        .await;
    // The host's own trail, read through its config file.
    let from_config = audit_command(&[
        "--config",
        statuspro
            .host
            .plugins
            .parent()
            .unwrap()
            .join("toolhost.toml")
            .to_str()
            .unwrap(),
        "--since",
        "2020-01-01T00:00:00Z",
        "--tool",
        "get_order",
    ]);
    assert_eq!(from_config.lines().count(), 2, "{from_config}");

    // A copy, to add what a longer-lived trail would hold.
    let copy = tempfile::tempdir().unwrap();
    let path = copy.path().join(TRAIL);
    std::fs::copy(statuspro.audit_trail(), &path).unwrap();
    // A record from long ago.
    let mut old = records(&path)[0].clone();
    old["time"] = json!("2020-01-01T00:00:00.000Z");
    old["tool"] = json!("list_orders");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.insert_str(0, &format!("{old}\n"));
    std::fs::write(&path, text).unwrap();
    let file = path.to_str().unwrap();

    let all = audit_command(&["--file", file]);
    let lines: Vec<&str> = all.lines().collect();
    assert_eq!(lines.len(), 4, "{all}");
    for column in [
        "TIME",
        "CALLER",
        "CLIENT",
        "TOOL",
        "CONFIRMATION",
        "UPSTREAM",
        "RESULT",
        "MS",
    ] {
        assert!(lines[0].contains(column), "{all}");
    }
    assert!(lines[1].starts_with("2020-01-01T00:00:00.000Z"), "{all}");
    let change = lines[3];
    assert!(change.contains("update_order_status"), "{all}");
    assert!(change.contains("confirmed (elicitation)"), "{change}");
    let sent = &statuspro.sandbox.mutations()[0];
    assert!(
        change.contains(&format!("POST 127.0.0.1{} 2", sent.path)),
        "{change}"
    );
    assert!(change.contains("stdio"), "{change}");

    let by_tool = audit_command(&["--file", file, "--tool", "get_order"]);
    assert_eq!(by_tool.lines().count(), 2, "{by_tool}");
    assert!(by_tool.lines().nth(1).unwrap().contains("get_order"));

    let recent = audit_command(&["--file", file, "--since", "1h"]);
    assert_eq!(recent.lines().count(), 3, "{recent}");
    assert!(!recent.contains("2020-01-01"), "{recent}");

    // A call whose process stopped after its intent: shown as unfinished.
    let intent = records(&path)
        .into_iter()
        .find(|r| r["record"] == "intent")
        .expect("the change wrote an intent");
    let mut lost = intent.clone();
    lost["id"] = json!("0123456789abcdef");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(&format!("{lost}\n"));
    std::fs::write(&path, text).unwrap();
    let with_lost = audit_command(&["--file", file, "--since", "1h"]);
    assert_eq!(with_lost.lines().count(), 4, "{with_lost}");
    assert!(
        with_lost.lines().last().unwrap().contains("unfinished"),
        "{with_lost}"
    );

    let error = audit_refusal(&["--file", file, "--since", "last tuesday"]);
    assert!(
        error.contains("RFC 3339") && error.contains("1h"),
        "{error}"
    );
}

#[tokio::test]
async fn an_http_caller_is_recorded_by_its_identity_and_its_token_is_not() {
    let token = "audit-static-token-0123456789abcdef";
    let config = format!(
        "[host]\naudit = \"{TRAIL}\"\n\n[auth]\nresource = \"http://127.0.0.1/mcp\"\n\
         [[auth.tokens]]\nsubject = \"release-bot\"\nsha256 = \"{}\"\n",
        sha256_hex(token)
    );
    let host = Host::start(
        HostOptions::new(&["hello"])
            .http()
            .bearer(token)
            .config(config),
    )
    .await;
    host.ok("greet", json!({"name": "Ada"})).await;
    let text = std::fs::read_to_string(trail_of(&host)).unwrap();
    assert!(!text.contains(token), "{text}");
    let records = records(&trail_of(&host));
    let greet = calls_of(&records, "greet")[0];
    assert_eq!(
        greet["caller"], "token:release-bot",
        "the caller, qualified by its source: {greet}"
    );
    assert_eq!(greet["protocol"], "2025-11-25", "{greet}");
    assert!(greet["session"].is_string(), "a legacy session: {greet}");

    // A call whose params rmcp cannot decode is answered by the transport,
    // and recorded as refused there.
    let answer = reqwest::Client::new()
        .post(host.url.as_deref().unwrap())
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(
            json!({
                "jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "greet", "arguments": 5},
            })
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 400);
    let trail = self::records(&trail_of(&host));
    assert_eq!(trail.len(), 2, "{trail:#?}");
    let refused = &trail[1];
    assert_eq!(
        (
            &refused["caller"],
            &refused["tool"],
            &refused["plugin"],
            &refused["result"],
            &refused["issues"]
        ),
        (
            &json!("token:release-bot"),
            &json!("greet"),
            &json!("hello"),
            &json!("refused"),
            &json!(["MALFORMED_REQUEST"])
        ),
        "{refused}"
    );
    assert_eq!(refused["arguments_sha256"], sha256_hex("5"));
}

/// The Katana component's changes leave records too (the Katana suite checks
/// every one of them as it ends); here one of each kind of flow, and a
/// confirmed change in a multi-tool component names its own tool.
#[tokio::test]
async fn katana_changes_are_recorded_with_their_tool_in_the_one_component() {
    use katana_sandbox::seed;
    let katana = crate::katana::Setup::new()
        .elicitation(Elicitation::Accept(true))
        .start()
        .await;
    let out = katana
        .host
        .ok(
            "create_manufacturing_order",
            json!({"variant_id": seed::KNIFE_WALNUT, "planned_quantity": 5,
                   "location_id": seed::LOCATION_MAIN, "order_no": "MO-25-010",
                   "production_deadline_date": "2026-03-20T17:00:00.000Z", "confirm": true}),
        )
        .await;
    assert_eq!(out["result"], "confirmed", "{out}");
    let records = records(&katana.audit_trail());
    let done = calls_of(&records, "create_manufacturing_order")[0];
    assert_eq!(done["file"], "katana.wasm");
    assert_eq!(done["confirmation"]["outcome"], "confirmed");
    let posts = changes_in(done);
    assert_eq!(posts.len(), 1, "{done}");
    assert_eq!(
        (&posts[0]["method"], &posts[0]["path"]),
        (
            &json!("POST"),
            &json!(format!(
                "{}/manufacturing_orders",
                katana_sandbox::API_PREFIX
            ))
        )
    );
}

#[test]
fn a_call_from_the_terminal_is_recorded_as_the_cli_s() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    std::fs::write(plugins.join("hello.wasm"), component("hello")).unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(&config, format!("[host]\naudit = \"{TRAIL}\"\n")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["call", "greet", r#"{"name":"Ada"}"#, "--plugins"])
        .arg(&plugins)
        .arg("--config")
        .arg(&config)
        .env("XDG_CACHE_HOME", crate::support::test_cache_home())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let records = records(&dir.path().join(TRAIL));
    assert_eq!(records.len(), 1, "{records:#?}");
    assert_eq!(
        (
            &records[0]["caller"],
            &records[0]["tool"],
            &records[0]["result"]
        ),
        (&json!("cli"), &json!("greet"), &json!("ok"))
    );
}

#[tokio::test]
async fn a_call_the_client_cancels_is_recorded_with_its_pending_question() {
    use rmcp::model::{CallToolRequestParams, ClientRequest, Request};
    let server = crate::support::Recorder::start().await;
    let host = Host::start(
        HostOptions::new(&["misbehaving"])
            .elicitation(Elicitation::Hang)
            .config(with_trail(&server.allow_block("misbehaving"))),
    )
    .await;
    let args = json!({"url": format!("{}/hook", server.url), "confirm": true});
    let Value::Object(args) = args else {
        unreachable!()
    };
    let request = ClientRequest::CallToolRequest(Request::new(
        CallToolRequestParams::new("confirm_then_post").with_arguments(args),
    ));
    let handle = host
        .client
        .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
        .await
        .unwrap();
    host.wait_for_seen(|s| s.elicitations.len() == 1).await;
    handle.cancel(Some("closed".into())).await.unwrap();
    // The record is written before this line is logged.
    host.wait_for_stderr("call cancelled by the client").await;
    let records = records(&trail_of(&host));
    let cancelled = calls_of(&records, "confirm_then_post");
    assert_eq!(cancelled.len(), 1, "{records:#?}");
    assert_eq!(cancelled[0]["result"], "cancelled");
    assert_eq!(
        cancelled[0]["confirmation"],
        json!({"via": "elicitation", "answers": [], "outcome": "pending"})
    );
    assert!(changes_in(cancelled[0]).is_empty());
    assert!(server.received().is_empty());
}

/// The records of reads, gets and completions (those with a `kind`).
fn offers_in(records: &[Value]) -> Vec<&Value> {
    records.iter().filter(|r| r.get("kind").is_some()).collect()
}

#[tokio::test]
async fn reads_gets_and_completions_leave_a_record_with_their_requests_and_no_chosen_text() {
    use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams};
    let server = crate::support::Recorder::start().await;
    // The legacy era with the default (hashes only), the 2026-07-28 era
    // with the operator's opt-in.
    for era in ERAS {
        let opt_in = era == Era::Modern;
        let mut config = with_trail(&format!(
            "{}[plugins.offers.config]\nfetch_url = \"{}/catalog\"\n",
            server.allow_block("offers"),
            server.url
        ));
        if opt_in {
            config = with_host_setting(&config, "audit_arguments", "audit_arguments = true");
        }
        let host = Host::start(HostOptions::new(&["offers"]).era(era).config(config)).await;
        let read = |uri: &str| {
            host.client
                .read_resource(ReadResourceRequestParams::new(uri.to_string()))
        };
        read("test://fetched").await.unwrap();
        read("test://colors/gr%65y").await.unwrap();
        assert!(read("test://colors/purple").await.is_err());
        assert!(read("test://post").await.is_err());
        // Refused before guest code runs: no record, as for an unknown tool.
        assert!(read("test://nothing-here").await.is_err());
        assert!(read("test://colors/%FF").await.is_err());
        let arguments = json!({"color": "gold", "tone": "hushed"});
        host.client
            .get_prompt(
                GetPromptRequestParams::new("describe_color")
                    .with_arguments(arguments.as_object().unwrap().clone()),
            )
            .await
            .unwrap();
        host.client
            .complete_resource_argument("test://colors/{name}", "name", "gre", None)
            .await
            .unwrap();

        let path = trail_of(&host);
        let records = records(&path);
        let offers = offers_in(&records);
        let kinds: Vec<(&str, &str, &str)> = offers
            .iter()
            .map(|r| {
                (
                    r["kind"].as_str().unwrap(),
                    r["target"].as_str().unwrap(),
                    r["result"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ("resource_read", "test://fetched", "ok"),
                ("resource_read", "test://colors/{name}", "ok"),
                ("resource_read", "test://colors/{name}", "error"),
                ("resource_read", "test://post", "error"),
                ("prompt_get", "describe_color", "ok"),
                ("completion", "test://colors/{name}", "ok"),
            ],
            "{era:?}: {records:#?}"
        );
        assert_eq!(records.len(), offers.len(), "nothing else was recorded");

        let fetched = offers[0];
        assert_eq!(
            (
                &fetched["record"],
                &fetched["caller"],
                &fetched["plugin"],
                &fetched["file"],
                &fetched["read_only"],
                &fetched["confirmation"],
            ),
            (
                &json!("call"),
                &json!("stdio"),
                &json!("offers"),
                &json!("offers.wasm"),
                &json!(true),
                &Value::Null,
            ),
            "{fetched}"
        );
        assert!(fetched.get("tool").is_none(), "{fetched}");
        use sha2::Digest;
        let digest: String = sha2::Sha256::digest(component("offers"))
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(fetched["digest"], format!("sha256:{digest}"));
        assert!(fetched["duration_ms"].is_u64());
        let upstream = fetched["upstream"].as_array().unwrap();
        assert_eq!(upstream.len(), 1, "{fetched}");
        assert_eq!(
            (
                &upstream[0]["method"],
                &upstream[0]["host"],
                &upstream[0]["path"],
                &upstream[0]["status"]
            ),
            (
                &json!("GET"),
                &json!("127.0.0.1"),
                &json!("/catalog"),
                &json!(200)
            ),
        );
        assert_eq!(
            fetched["arguments_sha256"],
            sha256_hex(r#"{"uri":"test://fetched"}"#)
        );

        // What the client chose is hashed; the text only with the opt-in.
        let grey = offers[1];
        assert_eq!(
            grey["arguments_sha256"],
            sha256_hex(r#"{"uri":"test://colors/gr%65y"}"#)
        );
        assert_eq!(offers[2]["issues"], json!(["NOT_FOUND"]));
        assert_eq!(offers[3]["issues"], json!(["PERMISSION_DENIED"]));
        assert!(
            changes_in(offers[3]).is_empty(),
            "the gate stopped a read's POST before it left: {}",
            offers[3]
        );
        assert_eq!(
            offers[3]["upstream"][0]["refused"], "read_only",
            "the attempt is recorded: {}",
            offers[3]
        );
        assert!(
            !server.received().iter().any(|r| r.method == "POST"),
            "no POST reached the server"
        );
        assert_eq!(
            offers[4]["arguments_sha256"],
            sha256_hex(r#"{"color":"gold","tone":"hushed"}"#)
        );
        assert_eq!(
            offers[5]["arguments_sha256"],
            sha256_hex(r#"{"argument":"name","context":{},"value":"gre"}"#)
        );
        let text = std::fs::read_to_string(&path).unwrap();
        for chosen in ["gr%65y", "hushed", "\"gre\""] {
            assert_eq!(text.contains(chosen), opt_in, "{era:?} {chosen}: {text}");
        }
        if opt_in {
            assert_eq!(grey["arguments"], json!({"uri": "test://colors/gr%65y"}));
            assert_eq!(offers[4]["arguments"], arguments);
        } else {
            assert!(grey.get("arguments").is_none(), "{grey}");
        }

        // `toolhost audit` shows each with its kind and target.
        let table = audit_command(&["--file", path.to_str().unwrap()]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 7, "{table}");
        assert!(
            lines[1].contains("resource_read test://fetched")
                && lines[1].contains("GET 127.0.0.1/catalog 200")
                && lines[1].contains(" ok "),
            "{table}"
        );
        assert!(lines[3].contains("error NOT_FOUND"), "{table}");
        assert!(lines[5].contains("prompt_get describe_color"), "{table}");
        let by_target =
            audit_command(&["--file", path.to_str().unwrap(), "--tool", "describe_color"]);
        assert_eq!(by_target.lines().count(), 2, "{by_target}");
    }
}

#[tokio::test]
async fn a_read_the_client_cancels_is_recorded_as_cancelled() {
    let server = crate::support::Recorder::start().await;
    let config = with_trail(&format!(
        "{}[plugins.offers.config]\nfetch_url = \"{}/hold\"\n",
        server.allow_block("offers"),
        server.url
    ));
    let host = Host::start(HostOptions::new(&["offers"]).config(config)).await;
    // The read waits in its GET; the client gives up.
    host.cancel_a_held_read("test://fetched", &server).await;
    let records = records(&trail_of(&host));
    let offers = offers_in(&records);
    assert_eq!(offers.len(), 1, "{records:#?}");
    assert_eq!(
        (
            &offers[0]["kind"],
            &offers[0]["target"],
            &offers[0]["result"]
        ),
        (
            &json!("resource_read"),
            &json!("test://fetched"),
            &json!("cancelled")
        ),
        "{}",
        offers[0]
    );
}

/// A host serving the misbehaving component with the trail on, allowed to
/// reach `server`, in `era`, every confirmation answered yes; `extra` is
/// more `[host]` configuration.
async fn misbehaving_host(server: &crate::support::Recorder, era: Era, extra: &str) -> Host {
    Host::start(
        HostOptions::new(&["misbehaving"])
            .era(era)
            .elicitation(Elicitation::Accept(true))
            .config(format!(
                "[host]\naudit = \"{TRAIL}\"\n{extra}\n{}",
                server.allow_block("misbehaving")
            )),
    )
    .await
}

/// How many of `host`'s open file descriptors name `path`.
fn open_in(host: &Host, path: &Path) -> usize {
    std::fs::read_dir(format!("/proc/{}/fd", host.pid))
        .unwrap()
        .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .filter(|target| target == path)
        .count()
}

#[tokio::test]
async fn the_trail_follows_a_rename_or_a_deletion_and_an_unwritable_one_stops_only_changes() {
    let server = crate::support::Recorder::start().await;
    let host = misbehaving_host(&server, Era::Legacy, "").await;
    let path = trail_of(&host);
    let read = json!({"url": format!("{}/item", server.url)});
    let change = json!({"url": format!("{}/hook", server.url), "confirm": true});
    host.ok("get", read.clone()).await;
    assert_eq!(records(&path).len(), 1);
    assert_eq!(
        open_in(&host, &path),
        1,
        "the file stays open between records"
    );

    // An operator's logrotate renames the file away: the next record
    // begins a new file at the configured path, the old one is left alone.
    let moved = path.with_extension("jsonl-20261125");
    std::fs::rename(&path, &moved).unwrap();
    host.ok("get", read.clone()).await;
    host.ok("get", read.clone()).await;
    assert_eq!(calls_in(&path).len(), 2, "a new file at the path");
    assert_eq!(
        (&records(&path)[0]["record"], &records(&path)[0]["kept"]),
        (&json!("rotation"), &Value::Null),
        "the new file says another program rotated the trail"
    );
    assert_eq!(
        records(&moved).len(),
        1,
        "the renamed file is not written again"
    );

    assert_eq!(open_in(&host, &moved), 0, "the renamed file is let go");
    assert_eq!(open_in(&host, &path), 1);

    // Deleted: recreated.
    std::fs::remove_file(&path).unwrap();
    host.ok("get", read.clone()).await;
    assert_eq!(calls_in(&path).len(), 1, "recreated");

    // Unwritable (a directory where the file was): a change is refused
    // before it leaves, a read goes on.
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    let issue = host.tool_error("confirm_then_post", change.clone()).await;
    assert_eq!(issue["code"], "TRANSIENT", "{issue}");
    assert!(
        issue["hint"].as_str().unwrap().contains("host.audit"),
        "{issue}"
    );
    assert_eq!(server.posts(), 0, "the change never left");
    host.ok("get", read.clone()).await;
    let log = host.wait_for_stderr("cannot write the audit trail").await;
    assert_eq!(
        log.matches("cannot write the audit trail").count(),
        1,
        "logged once per failure episode:\n{log}"
    );

    // Fixed: changes run again, recorded in the file at the path.
    std::fs::remove_dir(&path).unwrap();
    let out = host.ok("confirm_then_post", change).await;
    assert_eq!(out["detail"], "posted: 200");
    assert_eq!(server.posts(), 1);
    host.wait_for_stderr("the audit trail is writable again")
        .await;
    let trail = records(&path);
    let done = calls_of(&trail, "confirm_then_post");
    assert_eq!(done.len(), 1, "{trail:#?}");
    assert_eq!(done[0]["result"], "ok");
    assert_eq!(changes_in(done[0]).len(), 1, "{}", done[0]);
    assert_eq!(records(&moved).len(), 1);
}

/// Calls `name` once (no `input_required` round followed).
async fn call_once(
    host: &Host,
    params: rmcp::model::CallToolRequestParams,
) -> Result<rmcp::model::CallToolResponse, rmcp::ServiceError> {
    host.client.call_tool_once(params).await
}

/// The first round of a confirmed post: the params sent and the sealed
/// state that came back.
async fn asked(
    host: &Host,
    server: &crate::support::Recorder,
) -> (rmcp::model::CallToolRequestParams, String) {
    let Value::Object(args) = json!({"url": format!("{}/hook", server.url), "confirm": true})
    else {
        unreachable!()
    };
    let params = rmcp::model::CallToolRequestParams::new("confirm_then_post").with_arguments(args);
    match call_once(host, params.clone()).await.unwrap() {
        rmcp::model::CallToolResponse::InputRequired(round) => {
            (params, round.request_state.expect("a sealed state"))
        }
        other => panic!("expected input_required, got {other:?}"),
    }
}

/// `params` sent again with `state` and `responses`.
fn answer(
    params: &rmcp::model::CallToolRequestParams,
    state: Option<&str>,
    responses: Option<Value>,
) -> rmcp::model::CallToolRequestParams {
    let mut params = params.clone();
    if let Some(state) = state {
        params = params.with_request_state(state.to_string());
    }
    if let Some(Value::Object(responses)) = responses {
        let responses: rmcp::model::InputResponses =
            serde_json::from_value(Value::Object(responses)).unwrap();
        params = params.with_input_responses(responses);
    }
    params
}

fn yes() -> Value {
    json!({"confirm": {"action": "accept", "content": {"confirm": true}}})
}

/// The last `call` record in `host`'s trail.
fn last_call(host: &Host) -> Value {
    records(&trail_of(host))
        .into_iter()
        .rev()
        .find(|r| r["record"] == "call")
        .expect("a call record")
}

fn assert_refused_record(record: &Value, code: &str) {
    assert_eq!(
        (&record["result"], &record["issues"]),
        (&json!("refused"), &json!([code])),
        "{record}"
    );
    assert!(changes_in(record).is_empty(), "{record}");
}

#[tokio::test]
async fn forged_replayed_and_malformed_continuations_each_leave_a_refused_record() {
    let server = crate::support::Recorder::start().await;
    let host = misbehaving_host(&server, Era::Modern, "").await;

    // Forged: one character of the sealed state changed.
    let (params, state) = asked(&host, &server).await;
    let mut forged: Vec<char> = state.chars().collect();
    forged[6] = if forged[6] == 'A' { 'B' } else { 'A' };
    let forged: String = forged.into_iter().collect();
    assert!(
        call_once(&host, answer(&params, Some(&forged), Some(yes())))
            .await
            .is_err()
    );
    assert_refused_record(&last_call(&host), "INVALID_REQUEST_STATE");

    // Used once, then replayed.
    let done = call_once(&host, answer(&params, Some(&state), Some(yes()))).await;
    assert!(
        matches!(done, Ok(rmcp::model::CallToolResponse::Complete(_))),
        "{done:?}"
    );
    assert_eq!(server.posts(), 1);
    assert!(
        call_once(&host, answer(&params, Some(&state), Some(yes())))
            .await
            .is_err()
    );
    let replayed = last_call(&host);
    assert_refused_record(&replayed, "REPLAYED_REQUEST_STATE");
    assert_eq!(replayed["tool"], "confirm_then_post");
    assert_eq!(server.posts(), 1, "the replay sent nothing");
    host.wait_for_stderr("refused a requestState").await;

    // Malformed continuations: a state without answers, answers without a
    // state, answers with no `confirm`, a `confirm` that is no answer. None
    // spends the state: the same state with a proper answer then runs.
    let (params, state) = asked(&host, &server).await;
    for (state, responses) in [
        (Some(state.as_str()), None),
        (None, Some(yes())),
        (
            Some(state.as_str()),
            Some(json!({"other": {"action": "accept"}})),
        ),
        (
            Some(state.as_str()),
            Some(json!({"confirm": {"action": 7}})),
        ),
    ] {
        assert!(
            call_once(&host, answer(&params, state, responses))
                .await
                .is_err()
        );
        assert_refused_record(&last_call(&host), "INVALID_INPUT_RESPONSES");
    }
    assert_eq!(server.posts(), 1);
    let done = call_once(&host, answer(&params, Some(&state), Some(yes()))).await;
    assert!(
        matches!(done, Ok(rmcp::model::CallToolResponse::Complete(_))),
        "a malformed answer left the state unspent: {done:?}"
    );
    assert_eq!(server.posts(), 2);
    assert_changes_recorded(
        &trail_of(&host),
        &[
            ("POST".into(), "/hook".into()),
            ("POST".into(), "/hook".into()),
        ],
    );
}

#[tokio::test]
async fn an_unknown_tool_and_arguments_off_the_schema_leave_a_record_too() {
    for era in ERAS {
        let server = crate::support::Recorder::start().await;
        let host = misbehaving_host(&server, era, "").await;
        let unknown = host.call("no_such_tool", json!({"a": 1})).await;
        assert!(unknown.is_err(), "{era:?}");
        let record = last_call(&host);
        assert_refused_record(&record, "UNKNOWN_TOOL");
        assert_eq!(
            (
                &record["tool"],
                &record["plugin"],
                &record["arguments_sha256"]
            ),
            (
                &json!("no_such_tool"),
                &json!(""),
                &json!(sha256_hex(r#"{"a":1}"#))
            ),
            "{era:?}: {record}"
        );
        let issue = host
            .tool_error("confirm_then_post", json!({"confirm": "yes"}))
            .await;
        assert_eq!(issue["code"], "VALIDATION_ERROR");
        let record = last_call(&host);
        assert_eq!(
            (&record["tool"], &record["result"], &record["issues"]),
            (
                &json!("confirm_then_post"),
                &json!("error"),
                &json!(["VALIDATION_ERROR"])
            ),
            "{era:?}: {record}"
        );
        assert_eq!(
            records(&trail_of(&host)).len(),
            2,
            "{era:?}: one record each"
        );
    }
}

#[tokio::test]
async fn a_request_the_host_refused_is_in_the_calls_upstream_marked_refused() {
    let server = crate::support::Recorder::start().await;
    let host = misbehaving_host(&server, Era::Legacy, "").await;
    // A read-only tool that POSTs.
    let issue = host
        .tool_error(
            "readonly_post",
            json!({"url": format!("{}/hook", server.url)}),
        )
        .await;
    assert_eq!(issue["code"], "PERMISSION_DENIED", "{issue}");
    let record = last_call(&host);
    assert_eq!(
        record["upstream"],
        json!([{
            "method": "POST", "host": "127.0.0.1", "port": server.port,
            "path": "/hook", "status": null, "bytes": null, "refused": "read_only",
        }]),
        "{record}"
    );
    // A GET to a port no rule allows.
    host.tool_error("get", json!({"url": "http://127.0.0.1:9/secret?token=x"}))
        .await;
    let record = last_call(&host);
    let upstream = &record["upstream"][0];
    assert_eq!(
        (&upstream["method"], &upstream["path"], &upstream["refused"]),
        (&json!("GET"), &json!("/secret"), &json!("port")),
        "{record}"
    );
    assert!(server.received().is_empty(), "nothing left the host");
    // What a refused attempt holds is not a change that happened.
    assert_changes_recorded(&trail_of(&host), &[]);

    // Past the request budget: a redirect is a second request.
    let config = format!(
        "[host]\naudit = \"{TRAIL}\"\n{}\n[plugins.hello.limits]\nhttp_requests_per_call = 1\n",
        server.allow_block("hello")
    );
    let host = Host::start(HostOptions::new(&["hello"]).config(config)).await;
    let url = format!("{}/redirect?to={}/x", server.url, server.url);
    host.tool_error("fetch_url", json!({"url": url})).await;
    let record = last_call(&host);
    let hops: Vec<(&Value, &Value)> = record["upstream"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| (&u["path"], &u["refused"]))
        .collect();
    assert_eq!(
        hops,
        [
            (&json!("/redirect"), &Value::Null),
            (&json!("/x"), &json!("requests_per_call"))
        ],
        "{record}"
    );
}

/// Runs `toolhost audit --verify PATH`: whether it succeeded, and its
/// stdout and stderr together.
fn verify_command(path: &Path) -> (bool, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["audit", "--verify"])
        .arg(path)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[tokio::test]
async fn the_chain_survives_rotation_and_restart_and_an_edit_a_deletion_or_a_swap_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trail.jsonl");
    let config = format!(
        "[host]\naudit = \"{}\"\naudit_max_bytes = 4096\naudit_keep = 3\n",
        path.display()
    );
    // Two processes, one after the other, on the one trail.
    let mut calls = 0;
    for _ in 0..2 {
        let host = Host::start(HostOptions::new(&["hello"]).config(config.clone())).await;
        for _ in 0..6 {
            host.ok("greet", json!({"name": format!("caller {calls}")}))
                .await;
            calls += 1;
        }
        host.stop().await;
    }
    let rotated = |n: u32| PathBuf::from(format!("{}.{n}", path.display()));
    assert!(rotated(1).exists(), "the trail rotated");
    let (ok, text) = verify_command(&path);
    assert!(ok, "{text}");
    assert!(text.contains("chain intact"), "{text}");
    let kept: usize = [rotated(3), rotated(2), rotated(1), path.clone()]
        .iter()
        .map(|f| calls_in(f).len())
        .sum();
    assert!(text.contains(&format!("{kept} records")), "{text}");
    // Every line names the one before it, across files and processes.
    let second = records(&path);
    assert!(second.len() >= 2, "{second:#?}");
    assert!(second.iter().all(|r| r["prev"].is_string()), "{second:#?}");

    let lines: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let tampered = |lines: Vec<String>| {
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        verify_command(&path)
    };
    // The file's first call record (after the `rotation` record that
    // began the file).
    let at = lines
        .iter()
        .position(|l| l.contains(r#""record":"call""#))
        .unwrap();
    assert!(at + 1 < lines.len(), "{lines:#?}");
    // One byte of a middle record: the line after it no longer matches.
    let mut edited = lines.clone();
    edited[at] = edited[at].replacen("\"ok\"", "\"ko\"", 1);
    let (ok, text) = tampered(edited);
    assert!(!ok && text.contains(&format!("line {}:", at + 2)), "{text}");
    let mut deleted = lines.clone();
    deleted.remove(at);
    let (ok, text) = tampered(deleted);
    assert!(!ok && text.contains(&format!("line {}:", at + 1)), "{text}");
    let mut swapped = lines.clone();
    swapped.swap(at, at + 1);
    let (ok, text) = tampered(swapped);
    assert!(!ok && text.contains(&format!("line {}:", at + 1)), "{text}");
    let (ok, text) = tampered(lines);
    assert!(ok, "{text}");
}

#[tokio::test]
async fn a_torn_last_line_is_marked_at_the_next_start_and_the_chain_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trail.jsonl");
    let config = format!("[host]\naudit = \"{}\"\n", path.display());
    let run = |name: &'static str| {
        let config = config.clone();
        async move {
            let host = Host::start(HostOptions::new(&["hello"]).config(config)).await;
            host.ok("greet", json!({"name": name})).await;
            host.stop().await;
        }
    };
    run("Ada").await;
    // The process stopped in the middle of a line.
    let fragment = r#"{"time":"2026-11-25T14:00:00.000Z","record":"ca"#;
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut file, fragment.as_bytes()).unwrap();
    let (ok, text) = verify_command(&path);
    assert!(ok && text.contains("ends with a torn line"), "{text}");

    run("Grace").await;
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert_eq!(lines[1], fragment, "the torn line is ended, not changed");
    let chain: Value = serde_json::from_str(lines[2]).unwrap();
    assert_eq!(
        (&chain["record"], &chain["torn_bytes"], &chain["prev"]),
        (
            &json!("chain"),
            &json!(fragment.len()),
            &json!(sha256_hex(lines[0]))
        ),
        "{chain}"
    );
    let after: Value = serde_json::from_str(lines[3]).unwrap();
    assert_eq!(after["prev"], sha256_hex(lines[2]));
    let (ok, report) = verify_command(&path);
    assert!(ok, "{report}");
    assert!(
        report.contains("2 records") && report.contains("line 2: a torn line"),
        "{report}"
    );
    // The table shows the two calls.
    let table = audit_command(&["--file", path.to_str().unwrap()]);
    assert_eq!(table.lines().count(), 3, "{table}");
}

/// POSTs a stateless 2026-07-28 `tools/call` of `tool`, which no plugin
/// serves, to `host` with `headers` besides the ones a client sends.
async fn refused_call_over_http(host: &Host, tool: &str, headers: &[(&str, &str)]) {
    use rmcp::model::{
        CallToolRequest, CallToolRequestParams, ClientCapabilities, ClientJsonRpcMessage,
        ClientRequest, Implementation, JsonRpcRequest, JsonRpcVersion2_0, ProtocolVersion,
        RequestId, RequestMetaObject,
    };
    let mut params = CallToolRequestParams::new(tool.to_string());
    params.meta = Some(RequestMetaObject::with_client_context(
        ProtocolVersion::V_2026_07_28,
        Implementation::new("toolhost-tests", "0.1.0"),
        ClientCapabilities::default(),
    ));
    let message = ClientJsonRpcMessage::Request(JsonRpcRequest {
        jsonrpc: JsonRpcVersion2_0,
        id: RequestId::Number(1),
        request: ClientRequest::CallToolRequest(CallToolRequest::new(params)),
    });
    let mut request = reqwest::Client::new()
        .post(host.url.as_deref().unwrap())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header(
            "mcp-protocol-version",
            ProtocolVersion::V_2026_07_28.as_str(),
        )
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    // Read whole: the call is recorded before the answer is sent.
    let answer = request
        .body(serde_json::to_vec(&message).unwrap())
        .send()
        .await
        .unwrap();
    answer.bytes().await.unwrap();
}

/// A `tools/call` whose params rmcp cannot decode, answered (and
/// recorded) by the transport, with `headers`.
async fn malformed_call_over_http(host: &Host, headers: &[(&str, &str)]) {
    let mut request = reqwest::Client::new()
        .post(host.url.as_deref().unwrap())
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let body = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "greet", "arguments": 5},
    });
    let answer = request.body(body.to_string()).send().await.unwrap();
    assert_eq!(answer.status(), 400);
}

/// The `client` of the trail's last record.
fn last_client(host: &Host) -> Value {
    let trail = records(&trail_of(host));
    let last = trail.last().expect("a record");
    last.get("client").cloned().unwrap_or(Value::Null)
}

#[tokio::test]
async fn each_http_record_names_its_clients_address_forwarded_only_by_a_trusted_proxy() {
    // Without trusted proxies the peer is the client, whatever a header
    // claims: through the gateway (an unknown tool) and in the transport
    // (params rmcp cannot decode) alike.
    let direct = Host::start(HostOptions::new(&["hello"]).http().config(with_trail(""))).await;
    let forged = [("x-forwarded-for", "203.0.113.9")];
    refused_call_over_http(&direct, "nope", &forged).await;
    assert_eq!(last_client(&direct), "127.0.0.1");
    malformed_call_over_http(&direct, &forged).await;
    assert_eq!(last_client(&direct), "127.0.0.1");
    direct.ok("greet", json!({"name": "Ada"})).await;
    assert_eq!(last_client(&direct), "127.0.0.1");

    // Behind a trusted proxy (here the loopback peer itself), the client
    // is the last address in X-Forwarded-For that no trusted proxy wrote.
    let proxied = Host::start(
        HostOptions::new(&["hello"])
            .http()
            .config(with_trail("[http]\ntrusted_proxies = [\"127.0.0.1\"]\n")),
    )
    .await;
    let chain = [("x-forwarded-for", "198.51.100.4, 203.0.113.9")];
    refused_call_over_http(&proxied, "nope", &chain).await;
    assert_eq!(last_client(&proxied), "203.0.113.9");
    malformed_call_over_http(&proxied, &[("x-forwarded-for", "203.0.113.10")]).await;
    assert_eq!(last_client(&proxied), "203.0.113.10");
    refused_call_over_http(&proxied, "nope", &[]).await;
    assert_eq!(
        last_client(&proxied),
        "127.0.0.1",
        "no header: the proxy itself"
    );

    // `toolhost audit` shows each record's client and selects by address
    // or block, and by caller.
    let trail = trail_of(&proxied);
    let file = trail.to_str().unwrap();
    let all = audit_command(&["--file", file]);
    assert_eq!(all.lines().count(), 4, "{all}");
    let forwarded = audit_command(&["--file", file, "--client", "203.0.113.0/24"]);
    let rows: Vec<&str> = forwarded.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{forwarded}");
    assert!(
        rows[0].contains("203.0.113.9") && rows[1].contains("203.0.113.10"),
        "{forwarded}"
    );
    let one = audit_command(&["--file", file, "--client", "127.0.0.1"]);
    assert_eq!(one.lines().count(), 2, "{one}");
    let by_caller = audit_command(&["--file", file, "--caller", "http"]);
    assert_eq!(by_caller.lines().count(), 4, "{by_caller}");
    assert_eq!(
        audit_command(&["--file", file, "--caller", "token:nobody"])
            .lines()
            .count(),
        1,
        "the header alone"
    );
    let refused = audit_refusal(&["--file", file, "--client", "not-an-address"]);
    assert!(refused.contains("neither an address"), "{refused}");

    // Over stdio there is no network client.
    let stdio = Host::start(HostOptions::new(&["hello"]).config(with_trail(""))).await;
    stdio.ok("greet", json!({"name": "Ada"})).await;
    assert_eq!(last_client(&stdio), Value::Null);
}

#[tokio::test]
async fn a_flood_of_refused_calls_with_a_huge_session_header_cannot_flush_another_callers_records()
{
    let host =
        Host::start(HostOptions::new(&["hello"]).http().config(
            "[host]\naudit = \"audit.jsonl\"\naudit_max_bytes = 1048576\naudit_keep = 1\n",
        ))
        .await;
    host.ok("greet", json!({"name": "Ada"})).await;
    // As in the report: 14 refused calls, each with a 300 KB header.
    let session = "s".repeat(300_000);
    for _ in 0..14 {
        refused_call_over_http(&host, "no_such_tool", &[("mcp-session-id", &session)]).await;
    }
    let path = trail_of(&host);
    let rotated = PathBuf::from(format!("{}.1", path.display()));
    let mut trail = records(&rotated);
    trail.extend(records(&path));
    assert!(
        trail
            .iter()
            .any(|r| r["tool"] == "greet" && r["result"] == "ok"),
        "the other caller's record was rotated away"
    );
    let refused: Vec<&Value> = trail.iter().filter(|r| r["result"] == "refused").collect();
    assert_eq!(refused.len(), 14);
    for record in refused {
        assert_eq!(record["session"], "s".repeat(128), "cut to its bound");
        assert_eq!(
            record["cut"]["session"],
            json!({"bytes": 300_000, "sha256": sha256_hex(&session)}),
            "the cut says what the header was"
        );
    }
    let (ok, text) = verify_command(&path);
    assert!(ok && text.contains("chain intact"), "{text}");
}

#[tokio::test]
async fn refused_calls_past_a_callers_budget_are_counted_in_one_suppressed_record() {
    let host = Host::start(HostOptions::new(&["hello"]).config(
        "[host]\naudit = \"audit.jsonl\"\naudit_refused_per_window = 3\naudit_refused_window_secs = 2\n",
    ))
    .await;
    for _ in 0..10 {
        assert!(host.call("no_such_tool", json!({})).await.is_err());
    }
    host.ok("greet", json!({"name": "Ada"})).await;
    // At the window's end, the count of what was left out.
    host.wait_for_stderr("refused calls were not recorded")
        .await;
    let trail = records(&trail_of(&host));
    let written = trail.iter().filter(|r| r["result"] == "refused").count();
    let summaries: Vec<&Value> = trail
        .iter()
        .filter(|r| r["record"] == "suppressed")
        .collect();
    assert!(!summaries.is_empty(), "{trail:#?}");
    let dropped: u64 = summaries
        .iter()
        .map(|s| s["dropped"].as_u64().unwrap())
        .sum();
    assert!(written < 10, "the budget held: {trail:#?}");
    assert_eq!(written as u64 + dropped, 10, "every refusal is counted");
    for summary in &summaries {
        assert_eq!(summary["caller"], "stdio");
        assert_eq!(
            summary["issues"],
            json!({"UNKNOWN_TOOL": summary["dropped"]})
        );
    }
    assert_eq!(
        calls_of(&trail, "greet").len(),
        1,
        "a call that ran is always recorded"
    );
    let path = trail_of(&host);
    let (ok, text) = verify_command(&path);
    assert!(ok, "{text}");
    let table = audit_command(&["--file", path.to_str().unwrap()]);
    assert!(table.contains("refused calls not recorded"), "{table}");
}

#[tokio::test]
async fn a_tool_that_keeps_asking_for_what_is_refused_is_stopped_and_leaves_a_bounded_record() {
    let host = Host::start(HostOptions::new(&["misbehaving"]).config(with_trail(""))).await;
    let long_path = "a".repeat(4096);
    let issue = host
        .tool_error(
            "get_many",
            json!({"url": format!("https://unlisted.example/{long_path}"), "times": 500}),
        )
        .await;
    assert_eq!(issue["code"], "PERMISSION_DENIED", "{issue}");
    assert!(
        issue["message"]
            .as_str()
            .unwrap()
            .contains("had 16 requests refused"),
        "{issue}"
    );
    // A later line: every line before it has been read too.
    host.tool_error("get", json!({"url": "https://marker.example/"}))
        .await;
    let stderr = host.wait_for_stderr("marker.example").await;
    let refusals = stderr
        .lines()
        .filter(|l| l.contains("denied: ") && l.contains("unlisted.example"))
        .count();
    assert_eq!(refusals, 16, "one log line per refusal, up to the bound");
    let trail = records(&trail_of(&host));
    let call = calls_of(&trail, "get_many")
        .last()
        .cloned()
        .expect("the call is on record");
    let upstream = call["upstream"].as_array().unwrap();
    assert_eq!(upstream.len(), 16, "{call}");
    for request in upstream {
        let path = request["path"].as_str().unwrap();
        assert!(
            path.len() < 1100 && path.contains("(cut, 4097 bytes)"),
            "{path}"
        );
    }
}

#[tokio::test]
async fn a_suppressed_record_names_the_addresses_its_refusals_came_from_and_audit_selects_it_by_them()
 {
    // Behind a trusted proxy (the loopback peer), one caller identity
    // (`http`) refused from two forwarded addresses past its budget.
    let host = Host::start(HostOptions::new(&["hello"]).http().config(
        "[host]\naudit = \"audit.jsonl\"\naudit_refused_per_window = 2\naudit_refused_window_secs = 2\n\
         [http]\ntrusted_proxies = [\"127.0.0.1\"]\n",
    ))
    .await;
    for client in [
        "203.0.113.9",
        "198.51.100.7",
        "203.0.113.9",
        "198.51.100.7",
        "203.0.113.9",
    ] {
        refused_call_over_http(&host, "nope", &[("x-forwarded-for", client)]).await;
    }
    host.wait_for_stderr("refused calls were not recorded")
        .await;
    let trail = records(&trail_of(&host));
    let summary = trail
        .iter()
        .find(|r| r["record"] == "suppressed")
        .unwrap_or_else(|| panic!("{trail:#?}"));
    // The first two were written; the other three counted by address.
    assert_eq!(summary["dropped"], 3, "{summary}");
    assert_eq!(
        summary["clients"],
        json!({"203.0.113.9": 2, "198.51.100.7": 1}),
        "{summary}"
    );
    assert!(summary.get("other_clients").is_none(), "{summary}");

    // `toolhost audit --client` shows it for either address's block, not
    // for another.
    let path = trail_of(&host);
    let file = path.to_str().unwrap();
    let suppressed_rows = |block: &str| {
        audit_command(&["--file", file, "--client", block])
            .lines()
            .filter(|l| l.contains("refused calls not recorded"))
            .count()
    };
    assert_eq!(suppressed_rows("203.0.113.0/24"), 1);
    assert_eq!(suppressed_rows("198.51.100.7"), 1);
    assert_eq!(suppressed_rows("192.0.2.0/24"), 0);
    let table = audit_command(&["--file", file]);
    assert!(
        table.contains("198.51.100.7 x1, 203.0.113.9 x2"),
        "the row names the addresses: {table}"
    );
    let (ok, text) = verify_command(&path);
    assert!(ok, "{text}");
}

#[tokio::test]
async fn verify_names_a_deleted_rotated_file_and_records_cut_from_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trail.jsonl");
    let config = format!(
        "[host]\naudit = \"{}\"\naudit_max_bytes = 4096\naudit_keep = 3\n",
        path.display()
    );
    let host = Host::start(HostOptions::new(&["hello"]).config(config)).await;
    for i in 0..40 {
        host.ok("greet", json!({"name": format!("caller {i}")}))
            .await;
    }
    host.stop().await;
    let rotated = |n: u32| PathBuf::from(format!("{}.{n}", path.display()));
    assert!(rotated(3).exists(), "the trail rotated three times or more");
    let (ok, text) = verify_command(&path);
    assert!(
        ok && text.contains("chain intact"),
        "an intact rotated trail: {text}"
    );
    let kept: Vec<(PathBuf, Vec<u8>)> = [rotated(3), rotated(2), rotated(1), path.clone()]
        .into_iter()
        .map(|f| {
            let bytes = std::fs::read(&f).unwrap();
            (f, bytes)
        })
        .collect();
    let restore = || {
        for (file, bytes) in &kept {
            std::fs::write(file, bytes).unwrap();
        }
    };

    // A rotated file in the middle deleted: named, with its records.
    std::fs::remove_file(rotated(2)).unwrap();
    let (ok, text) = verify_command(&path);
    assert!(!ok, "{text}");
    assert!(
        text.contains("are missing before this line")
            && text.contains(&format!("{} held them", rotated(2).display())),
        "{text}"
    );
    restore();

    // The oldest rotated file deleted.
    std::fs::remove_file(rotated(3)).unwrap();
    let (ok, text) = verify_command(&path);
    assert!(
        !ok && text.contains("missing at the trail's start"),
        "{text}"
    );
    restore();

    // The oldest lines cut from the front.
    let oldest = String::from_utf8(kept[0].1.clone()).unwrap();
    let rest: Vec<&str> = oldest.lines().skip(2).collect();
    std::fs::write(rotated(3), rest.join("\n") + "\n").unwrap();
    let (ok, text) = verify_command(&path);
    assert!(
        !ok && text.contains("missing at the trail's start"),
        "{text}"
    );
    restore();

    let (ok, text) = verify_command(&path);
    assert!(ok, "{text}");
}

#[tokio::test]
async fn toolhost_audit_escapes_what_a_client_wrote_in_its_table() {
    let host =
        Host::start(HostOptions::new(&["hello"]).config("[host]\naudit = \"audit.jsonl\"\n")).await;
    host.ok("greet", json!({"name": "Ada"})).await;
    // A newline to forge a row, and escapes that move the cursor up and
    // erase the row above.
    let forged = "x\n2026-11-25T08:00:00.000Z  stdio  delete_everything\u{1b}[1A\u{1b}[2K";
    assert!(host.call(forged, json!({})).await.is_err());
    let table = audit_command(&["--file", trail_of(&host).to_str().unwrap()]);
    assert!(!table.contains('\u{1b}'), "{table:?}");
    assert_eq!(table.lines().count(), 3, "a header and two rows: {table}");
    assert!(
        table.contains(r"x\n2026-11-25") && table.contains(r"\u{1b}[1A"),
        "{table}"
    );
}

#[tokio::test]
async fn toolhost_call_is_refused_on_the_trail_toolhost_serve_writes() {
    // The terminal's own plugin directory and config, naming the trail the
    // server writes.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trail.jsonl");
    let audit = format!("[host]\naudit = \"{}\"\n", path.display());
    let plugins = dir.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    std::fs::write(plugins.join("hello.wasm"), component("hello")).unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(&config, &audit).unwrap();
    let call = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .args(["call", "greet", r#"{"name":"Grace"}"#, "--plugins"])
            .arg(&plugins)
            .arg("--config")
            .arg(&config)
            .env("XDG_CACHE_HOME", crate::support::test_cache_home())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };

    let host = Host::start(HostOptions::new(&["hello"]).config(audit.clone())).await;
    host.ok("greet", json!({"name": "Ada"})).await;
    let out = call();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("host.audit") && stderr.contains("toolhost serve"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "the tool never ran");
    assert_eq!(records(&path).len(), 1, "only the server's record");

    // Once the server is gone, the terminal may write the trail.
    host.stop().await;
    let out = call();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(records(&path).len(), 2);
    let (ok, text) = verify_command(&path);
    assert!(ok, "{text}");
}
