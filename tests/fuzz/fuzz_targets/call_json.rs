//! Fuzz target: arbitrary bytes as tool arguments, through the host's
//! schema validation, into real components and back.
//!
//! Each input is parsed as JSON (or, when it is not JSON, used as the
//! `name` string of `greet`) and sent to several tools of the `hello` and
//! `misbehaving` components. Invariants: the host never panics; a call ends
//! in output that is a JSON object or in a non-empty list of issues with
//! known codes; no call asks for input (the confirmer answers
//! *unsupported*).

#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toolhost::bindings::confirm::Outcome;
use toolhost::call::{CallEnv, CallOutcome, run_call};
use toolhost::imports::confirm::FixedAnswer;
use toolhost::config::Config;
use toolhost::plugin::Loader;
use toolhost::registry::Registry;
use toolhost::reload::dir::load_dir;

struct Fixture {
    runtime: tokio::runtime::Runtime,
    env: CallEnv,
    registry: Registry,
}

/// Tools that finish quickly whatever their arguments.
const TOOLS: &[&str] = &["greet", "fetch_url", "fail", "confirm_then_post", "get"];

const CODES: &[&str] = &[
    "VALIDATION_ERROR",
    "PERMISSION_DENIED",
    "NOT_FOUND",
    "CONFLICT",
    "RATE_LIMIT",
    "TRANSIENT",
    "INTERNAL",
];

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let components = std::env::var_os("TOOLHOST_COMPONENTS")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/components"));
        let dir = std::env::temp_dir().join(format!("toolhost-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["hello.wasm", "misbehaving.wasm"] {
            std::fs::copy(components.join(name), dir.join(name))
                .unwrap_or_else(|e| panic!("{name}: {e}; run `cargo xtask build-plugins` first"));
        }
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let loader = Loader::from_config(Config::default(), None).unwrap();
        let registry = runtime.block_on(load_dir(&loader, &dir)).unwrap();
        assert!(registry.tool("greet").is_some() && registry.tool("fail").is_some());
        let env = CallEnv { runtime: loader.runtime.clone(), http: loader.http.clone() };
        Fixture { runtime, env, registry }
    })
}

fn check(tool: &str, outcome: CallOutcome) {
    match outcome {
        CallOutcome::Success(value) => assert!(value.is_object(), "{tool}: output {value}"),
        CallOutcome::Failed(issues) => {
            assert!(!issues.is_empty(), "{tool}: failed without issues");
            for issue in issues {
                assert!(CODES.contains(&issue.code), "{tool}: unknown code {}", issue.code);
                assert!(!issue.message.is_empty());
            }
        }
        CallOutcome::Content { .. } => panic!("{tool}: content blocks from a tool that returns none"),
        CallOutcome::InputRequired { .. } => panic!("{tool}: asked for input without a client"),
    }
}

fuzz_target!(|data: &[u8]| {
    let f = fixture();
    let arguments = serde_json::from_slice::<Value>(data)
        .unwrap_or_else(|_| json!({ "name": String::from_utf8_lossy(data) }));
    for name in TOOLS {
        let tool = f.registry.tool(name).expect("the tool is loaded").clone();
        let outcome = f.runtime.block_on(run_call(
            &f.env,
            &tool.plugin,
            &tool.spec,
            &arguments,
            Box::new(FixedAnswer(Outcome::Unsupported)),
            None,
        ));
        check(name, outcome);
    }
});
