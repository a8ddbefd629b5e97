//! Containment: a hostile or buggy component cannot hurt the host, other
//! tools, or anything the operator did not allow. Each test checks the right
//! error, within the deadline, that other tools still answer, and (where it
//! matters) that the host's memory returns near its baseline.

use serde_json::json;

use crate::support::{Host, HostOptions};

/// A host serving the misbehaving component and `hello`, with `config`.
async fn host(config: &str) -> Host {
    Host::start(HostOptions::new(&["misbehaving", "hello"]).config(config)).await
}

async fn other_tools_answer(host: &Host) {
    assert_eq!(
        host.ok("greet", json!({"name": "ok"})).await["message"],
        "Hello, ok!"
    );
    host.tool_error("fail", json!({})).await;
}

#[tokio::test]
async fn a_memory_bomb_hits_the_memory_limit_and_memory_returns() {
    let host = host("[plugins.misbehaving.limits]\nmemory_mib = 32\n").await;
    other_tools_answer(&host).await;
    let baseline = host.rss_kib();
    for _ in 0..5 {
        let issue = host.tool_error("hog_memory", json!({})).await;
        assert_eq!(issue["code"], "INTERNAL");
        assert!(
            issue["message"]
                .as_str()
                .unwrap()
                .contains("limits.memory_mib = 32"),
            "{issue}"
        );
    }
    other_tools_answer(&host).await;
    let after = host.rss_kib();
    assert!(
        after < baseline + 32 * 1024,
        "resident memory grew from {baseline} KiB to {after} KiB"
    );
}

#[tokio::test]
async fn files_and_environment_variables_are_out_of_reach() {
    let host =
        Host::start(HostOptions::new(&["misbehaving"]).env("TOOLHOST_TEST_SECRET", "leak-me"))
            .await;
    let out = host.ok("snoop", json!({})).await;
    let detail = out["detail"].as_str().unwrap();
    assert!(detail.starts_with("file=Err("), "{detail}");
    assert!(detail.contains("env=Err(NotPresent)"), "{detail}");
    assert!(detail.ends_with("vars=0"), "{detail}");
}
