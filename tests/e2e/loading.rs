//! Loading is bounded and self-contained: a component that lists a flood of
//! tools, a huge description, a file or a compilation past its limit, or a
//! schema that names something outside itself is refused with an error
//! naming the limit or the rule, while the other components keep serving;
//! and every schema the shipped components publish is one every client
//! accepts.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::support::{Host, HostOptions, MISBEHAVING_TOOLS, Recorder, component, components_dir};

/// The misbehaving component copied under `name`.wasm (its own config block
/// decides what it lists).
fn copy(options: HostOptions, name: &str) -> HostOptions {
    options.file(&format!("{name}.wasm"), component("misbehaving"))
}

/// The line of stderr about `file`.
async fn line_about(host: &Host, file: &str) -> String {
    let stderr = host.wait_for_stderr(&format!("{file}: ")).await;
    stderr
        .lines()
        .find(|l| l.contains(&format!("{file}: ")))
        .unwrap()
        .to_string()
}

/// Tool names the host serves.
async fn served(host: &Host) -> BTreeSet<String> {
    host.tools()
        .await
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

/// The other components serve as before: every tool of `hello` and
/// `misbehaving` is listed, nothing else, and calls answer.
async fn others_serve(host: &Host) {
    let names = served(host).await;
    assert_eq!(names.len(), 2 + MISBEHAVING_TOOLS, "{names:?}");
    assert!(
        names.contains("greet") && names.contains("crash"),
        "{names:?}"
    );
    assert_eq!(
        host.ok("greet", json!({"name": "ok"})).await["message"],
        "Hello, ok!"
    );
    assert_eq!(
        host.tool_error("fail", json!({})).await["code"],
        "NOT_FOUND"
    );
}

#[tokio::test]
async fn floods_of_tools_and_huge_definitions_are_refused_naming_the_limit() {
    let options = HostOptions::new(&["misbehaving", "hello"]).config(
        r#"
[plugins.flood.config]
list_extra_tools = "200000"
[plugins.flood.limits]
memory_mib = 256

[plugins.many.config]
list_extra_tools = "300"

[plugins.verbose.config]
list_description_bytes = "10000000"
[plugins.verbose.limits]
memory_mib = 256
"#,
    );
    let options = copy(copy(copy(options, "flood"), "many"), "verbose");
    let host = Host::start(options).await;

    // 200,014 definitions: more than wasmtime may copy out under the limits.
    let flood = line_about(&host, "flood.wasm").await;
    assert!(
        flood.contains("limits.tools_per_component (256)"),
        "{flood}"
    );
    // 300 more small definitions: the count is checked before any is parsed.
    let many = line_about(&host, "many.wasm").await;
    let count = format!("lists {} tools", MISBEHAVING_TOOLS + 300);
    assert!(
        many.contains(&count) && many.contains("limits.tools_per_component (256)"),
        "{many}"
    );
    // A 10 MB description, named without being repeated.
    let verbose = line_about(&host, "verbose.wasm").await;
    assert!(
        verbose.contains("\"delete_record\"")
            && verbose.contains("limits.definition_bytes (65536)"),
        "{verbose}"
    );
    assert!(verbose.len() < 1000, "the error line stays short");
    others_serve(&host).await;
}

#[tokio::test]
async fn file_size_and_compile_time_are_limited() {
    let options = HostOptions::new(&["misbehaving", "hello"])
        .arg("--no-cache")
        .config(
            r#"
[plugins.big.limits]
wasm_bytes = 1000

[plugins.slow.limits]
compile_timeout_secs = 0.001
"#,
        );
    let host = Host::start(copy(copy(options, "big"), "slow")).await;
    let big = line_about(&host, "big.wasm").await;
    assert!(big.contains("limits.wasm_bytes (1000)"), "{big}");
    let slow = line_about(&host, "slow.wasm").await;
    assert!(
        slow.contains("limits.compile_timeout_secs (0.001)"),
        "{slow}"
    );
    others_serve(&host).await;
}

#[tokio::test]
async fn a_file_read_only_in_part_is_read_whole_once_its_limit_allows_it() {
    // Over its limit, only the file's start is read, and its hash is not
    // the file's: a raised limit must compile the whole file under its own
    // digest, never the whole under the start's.
    let bytes = component("hello");
    let limit = bytes.len() - 100;
    let config = |limit: usize| {
        crate::support::audit::with_trail(&format!(
            "[plugins.hello.limits]\nwasm_bytes = {limit}\n"
        ))
    };
    let host = Host::start(HostOptions::new(&["hello"]).config(config(limit))).await;
    line_about(&host, "hello.wasm").await;
    // Once the file's metadata can be trusted (older than two seconds), a
    // change beside it makes the directory be scanned again.
    tokio::time::sleep(std::time::Duration::from_millis(2_100)).await;
    crate::support::write_then_rename(&host.plugins, "echo.wasm", &component("echo"));
    host.wait_for_stderr("loaded file=echo.wasm").await;
    host.write_config(&config(bytes.len() + 100));
    host.wait_for_stderr("configuration reloaded").await;
    host.ok("greet", json!({"name": "Ada"})).await;
    let trail = crate::support::audit::records(&crate::support::audit::trail_of(&host));
    let call = trail
        .iter()
        .find(|r| r["record"] == "call" && r["tool"] == "greet")
        .expect("the call is on record");
    assert_eq!(
        call["digest"],
        {
            use sha2::Digest;
            format!("sha256:{}", hex::encode(sha2::Sha256::digest(&bytes)))
        },
        "the digest is the whole file's"
    );
}

#[tokio::test]
async fn schemas_never_fetch_what_they_name() {
    let recorder = Recorder::start().await;
    let remote = format!(
        r#"{{"type":"object","properties":{{"a":{{"$ref":"{}/x.json"}}}}}}"#,
        recorder.url
    );
    let file = r#"{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}"#;
    let meta = format!(
        r#"{{"$schema":"{}/meta.json","type":"object"}}"#,
        recorder.url
    );
    let config = format!(
        "[plugins.remote.config]\nlist_input_schema = '{remote}'\n\
         [plugins.local.config]\nlist_input_schema = '{file}'\n\
         [plugins.meta.config]\nlist_input_schema = '{meta}'\n"
    );
    let options = HostOptions::new(&["misbehaving", "hello"]).config(config);
    let host = Host::start(copy(copy(copy(options, "remote"), "local"), "meta")).await;
    for file in ["remote.wasm", "local.wasm", "meta.wasm"] {
        let line = line_about(&host, file).await;
        assert!(
            line.contains("skipped") && line.contains("never fetches schemas"),
            "{line}"
        );
    }
    others_serve(&host).await;
    assert!(
        recorder.received().is_empty(),
        "the host fetched a schema: {:?}",
        recorder.received()
    );
}

/// The values of `format` that JSON Schema 2020-12 defines.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Every `format` value in `schema`.
fn formats(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("format", Value::String(format)) => out.push(format.clone()),
                    _ => formats(value, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| formats(v, out)),
        _ => {}
    }
}

#[tokio::test]
async fn every_shipped_schema_uses_standard_formats_and_is_valid_2020_12() {
    let mut names: Vec<String> = std::fs::read_dir(components_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "wasm"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 10, "{names:?}");
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let host = Host::start(HostOptions::new(&names)).await;
    let tools = host.tools().await;
    let stderr = host.stderr.lock().unwrap().clone();
    assert!(
        !stderr.contains("skipped") && !stderr.contains("refused"),
        "every component loads and every tool is served:\n{stderr}"
    );
    assert!(tools.len() > names.len(), "{} tools", tools.len());
    for tool in &tools {
        let mut schemas = vec![("input", Value::Object((*tool.input_schema).clone()))];
        if let Some(output) = &tool.output_schema {
            schemas.push(("output", Value::Object((**output).clone())));
        }
        for (which, schema) in schemas {
            if let Err(e) = jsonschema::draft202012::meta::validate(&schema) {
                panic!(
                    "{} {which} schema is not valid 2020-12: {e}\n{schema}",
                    tool.name
                );
            }
            let mut found = Vec::new();
            formats(&schema, &mut found);
            let nonstandard: Vec<&String> = found
                .iter()
                .filter(|f| !STANDARD_FORMATS.contains(&f.as_str()))
                .collect();
            assert!(
                nonstandard.is_empty(),
                "{} {which} schema uses formats 2020-12 does not define: {nonstandard:?}",
                tool.name
            );
        }
    }
}
