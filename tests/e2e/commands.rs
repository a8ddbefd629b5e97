//! The command line beyond `serve`: `list`, `check`, `call`, `new`, `--help`.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::{component, components_dir, test_cache_home};

fn toolhost(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(args)
        .env("TOOLHOST_LOG", "warn")
        .env("XDG_CACHE_HOME", test_cache_home())
        .output()
        .expect("toolhost runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn plugin_dir(names: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in names {
        std::fs::write(dir.path().join(format!("{name}.wasm")), component(name)).unwrap();
    }
    dir
}

#[test]
fn help_documents_every_command_and_flag() {
    let out = toolhost(&["--help"]);
    let help = text(&out.stdout);
    for command in ["serve", "list", "check", "call", "new", "wit"] {
        assert!(help.contains(command), "{help}");
    }
    let serve = text(&toolhost(&["serve", "--help"]).stdout);
    for flag in [
        "--plugins",
        "--config",
        "--no-watch",
        "--cache-dir",
        "--no-cache",
    ] {
        assert!(serve.contains(flag), "{serve}");
    }
}

#[test]
fn list_prints_a_table() {
    let dir = plugin_dir(&["hello"]);
    let out = toolhost(&["list", "--plugins", dir.path().to_str().unwrap()]);
    assert!(out.status.success());
    let table = text(&out.stdout);
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].starts_with("TOOL") && lines[0].contains("ANNOTATIONS"),
        "{table}"
    );
    assert!(
        lines[1].starts_with("fetch_url") && lines[1].contains("read-only"),
        "{table}"
    );
    assert!(
        lines[2].starts_with("greet") && lines[2].contains("Greet Someone"),
        "{table}"
    );
}

#[test]
fn check_passes_every_shipped_component_and_fails_a_sloppy_one() {
    let mut shipped = 0;
    for entry in std::fs::read_dir(components_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        // Test components misbehave (or measure) on purpose, and the benchmark's
        // generated catalog declares no output schemas; everything else
        // ships.
        if ["misbehaving", "echo", "media", "catalog", "spend"].contains(&name.as_str())
            || path.extension().is_none_or(|e| e != "wasm")
        {
            continue;
        }
        let out = toolhost(&["check", path.to_str().unwrap()]);
        let report = text(&out.stdout);
        assert!(out.status.success(), "{name} fails the check:\n{report}");
        assert!(
            report.contains(" 0 errors, 0 warnings"),
            "{name}:\n{report}"
        );
        shipped += 1;
    }
    assert!(shipped >= 1);

    let sloppy = components_dir().join("misbehaving.wasm");
    let out = toolhost(&["check", sloppy.to_str().unwrap()]);
    assert!(!out.status.success());
    let report = text(&out.stdout);
    assert!(report.contains("error[delete_record]"), "{report}");
    assert!(report.contains("fix:"), "{report}");
    // An `object.operation` name is read by its operation.
    assert!(
        report.contains("error[order.list]: a tool named \"order.list\" reads"),
        "{report}"
    );
}

#[test]
fn check_reports_a_file_that_is_not_a_component() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.wasm");
    std::fs::write(&file, b"nope").unwrap();
    let out = toolhost(&["check", file.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("not a valid WebAssembly component"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn call_runs_a_tool_once_and_pretty_prints_the_result() {
    let dir = plugin_dir(&["hello", "misbehaving"]);
    let plugins = dir.path().to_str().unwrap();
    let out = toolhost(&["call", "greet", r#"{"name":"Ada"}"#, "--plugins", plugins]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "{\n  \"message\": \"Hello, Ada!\"\n}\n");

    // A tool error prints the envelope and exits non-zero.
    let out = toolhost(&["call", "fail", "--plugins", plugins]);
    assert!(!out.status.success());
    let envelope: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(envelope["issues"][0]["code"], "NOT_FOUND");

    // Without a terminal, a confirmation is declined.
    let out = toolhost(&[
        "call",
        "confirm_then_post",
        r#"{"url":"http://127.0.0.1:9/x","confirm":true}"#,
        "--plugins",
        plugins,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["detail"], "declined");
    assert!(text(&out.stderr).contains("no terminal: declined"));

    // An unknown tool names the ones there are.
    let out = toolhost(&["call", "nope", "--plugins", plugins]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("greet"), "{}", text(&out.stderr));
}

fn toolhost_logging_loads(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(args)
        .env("TOOLHOST_LOG", "info")
        .env("XDG_CACHE_HOME", test_cache_home())
        .output()
        .expect("toolhost runs")
}

#[test]
fn check_keeps_the_compiled_component_in_the_compile_cache() {
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().join("cache");
    let hello = components_dir().join("hello.wasm");
    let entries = || {
        std::fs::read_dir(&cache_dir)
            .map(|d| {
                d.filter_map(Result::ok)
                    .filter(|e| e.path().extension().is_some_and(|x| x == "cwasm"))
                    .count()
            })
            .unwrap_or(0)
    };
    let args = [
        "check",
        hello.to_str().unwrap(),
        "--cache-dir",
        cache_dir.to_str().unwrap(),
    ];
    let out = toolhost(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(entries(), 1, "the first check compiled into the cache");
    let again = toolhost(&args);
    assert!(again.status.success());
    assert_eq!(text(&again.stdout), text(&out.stdout));
    assert_eq!(entries(), 1);
}

#[test]
fn call_loads_only_the_file_serving_its_tool_once_the_cache_knows_it() {
    let dir = plugin_dir(&["hello", "misbehaving"]);
    let cache = tempfile::tempdir().unwrap();
    let (plugins, cache_dir) = (dir.path().to_str().unwrap(), cache.path().to_str().unwrap());
    let call = |tool: &str| {
        toolhost_logging_loads(&[
            "call",
            tool,
            r#"{"name":"Ada"}"#,
            "--plugins",
            plugins,
            "--cache-dir",
            cache_dir,
        ])
    };
    // The first call knows nothing yet: every file loads.
    let first = call("greet");
    assert!(first.status.success(), "{}", text(&first.stderr));
    assert!(
        text(&first.stderr).contains("misbehaving.wasm"),
        "{}",
        text(&first.stderr)
    );
    // Then only hello.wasm, which serves greet, is read and loaded.
    let second = call("greet");
    assert_eq!(text(&second.stdout), text(&first.stdout));
    let log = text(&second.stderr);
    assert!(log.contains("hello.wasm"), "{log}");
    assert!(!log.contains("misbehaving.wasm"), "{log}");

    // A file changed since is not trusted to the index: the whole
    // directory loads again, and the right answer comes back.
    std::fs::write(dir.path().join("hello.wasm"), component("echo")).unwrap();
    let out = call("greet");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("no tool named \"greet\""),
        "{}",
        text(&out.stderr)
    );
}

/// `toolhost new NAME --dir DIR`; the crate's directory.
fn scaffold(dir: &Path, name: &str) -> std::path::PathBuf {
    let out = toolhost(&["new", name, "--dir", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    dir.join(name)
}

/// Builds the scaffolded crate at `crate_dir` as an author would (the
/// builds share a target directory); its component, `LIB_NAME.wasm`.
fn build_scaffolded(crate_dir: &Path, lib_name: &str) -> std::path::PathBuf {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/scaffold");
    let build = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(crate_dir)
        .args(["build", "--quiet", "--target", "wasm32-wasip2", "--release"])
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .unwrap();
    assert!(build.status.success(), "{}", text(&build.stderr));
    target.join(format!("wasm32-wasip2/release/{lib_name}.wasm"))
}

#[test]
fn new_scaffolds_a_crate_outside_the_workspace_that_builds_checks_and_calls_from_the_binary_alone()
{
    let dir = tempfile::tempdir().unwrap();
    let crate_dir = scaffold(dir.path(), "weather-tools");
    assert!(crate_dir.join("src/lib.rs").exists());
    // Nothing in the crate points back into this repository: the SDK and
    // the WIT contract come from the binary.
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .canonicalize()
        .unwrap();
    let mut files = Vec::new();
    let mut dirs = vec![crate_dir.clone()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    for file in &files {
        let text = text(&std::fs::read(file).unwrap());
        assert!(
            !text.contains(workspace.to_str().unwrap()),
            "{} names the workspace",
            file.display()
        );
    }
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
    // The SDK's own version, which follows the contract's.
    let sdk_manifest = std::fs::read_to_string(workspace.join("plugins/sdk/Cargo.toml")).unwrap();
    let sdk_version = sdk_manifest
        .lines()
        .find_map(|l| l.strip_prefix("version = "))
        .expect("the SDK's version")
        .trim_matches('"');
    assert!(
        manifest.contains(&format!(
            r#"toolhost-sdk = {{ version = "{sdk_version}", path = "vendor/toolhost-sdk" }}"#
        )),
        "{manifest}"
    );
    assert!(
        crate_dir
            .join("vendor/toolhost-sdk/wit/0.2/plugin.wit")
            .exists()
    );

    let wasm = build_scaffolded(&crate_dir, "weather_tools");
    let out = toolhost(&["check", wasm.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("1 tools, 0 errors, 0 warnings"),
        "{}",
        text(&out.stdout)
    );
    let plugins = tempfile::tempdir().unwrap();
    std::fs::copy(&wasm, plugins.path().join("weather_tools.wasm")).unwrap();
    let out = toolhost(&[
        "call",
        "get_weather_tools_greeting",
        r#"{"name":"Ada"}"#,
        "--plugins",
        plugins.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "{\n  \"message\": \"Hello, Ada!\"\n}\n");

    // Creating it again refuses to overwrite.
    let again = toolhost(&[
        "new",
        "weather-tools",
        "--dir",
        dir.path().to_str().unwrap(),
    ]);
    assert!(!again.status.success());
    assert!(text(&again.stderr).contains("already exists"));
}

#[test]
fn list_prints_resources_templates_and_prompts_after_the_tools() {
    let dir = plugin_dir(&["offers", "hello"]);
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        "[plugins.colors]\nfiles = [\"offers.wasm\"]\nprefix = \"colors\"\n",
    )
    .unwrap();
    let out = toolhost(&[
        "list",
        "--plugins",
        dir.path().to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    let (tools, offers) = table
        .split_once("\n\n")
        .unwrap_or_else(|| panic!("a blank line between tools and offers:\n{table}"));
    assert!(tools.starts_with("TOOL"), "{table}");
    assert!(tools.contains("colors.color_count"), "{table}");
    let lines: Vec<Vec<&str>> = offers
        .lines()
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect()
        })
        .collect();
    assert_eq!(
        lines[0],
        ["OFFER", "KIND", "OWN NAME", "TITLE", "FILE"],
        "{table}"
    );
    let row = |served: &str| -> Vec<&str> {
        lines
            .iter()
            .find(|l| l[0] == served)
            .unwrap_or_else(|| panic!("no row for {served}:\n{table}"))
            .clone()
    };
    assert_eq!(
        row("test://readme"),
        [
            "test://readme",
            "resource",
            "readme",
            "Read Me",
            "offers.wasm"
        ]
    );
    assert_eq!(
        row("test://colors/{name}"),
        [
            "test://colors/{name}",
            "template",
            "color",
            "Colour",
            "offers.wasm"
        ]
    );
    // A prompt is served under its block's prefix, like a tool.
    assert_eq!(
        row("colors.describe_color"),
        [
            "colors.describe_color",
            "prompt",
            "describe_color",
            "Describe a Colour",
            "offers.wasm"
        ]
    );
    assert_eq!(lines.len(), 1 + 5 + 1 + 1, "{table}");

    // Tools alone: no second table.
    let dir = plugin_dir(&["hello"]);
    let out = toolhost(&["list", "--plugins", dir.path().to_str().unwrap()]);
    assert!(
        !text(&out.stdout).contains("OFFER"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn check_lints_resources_templates_and_prompts_too() {
    // A scaffolded component with offers written carelessly: a resource
    // with a terse description, no title and no MIME type; a template that
    // never says what its variable is; a prompt with an undescribed
    // argument.
    let dir = tempfile::tempdir().unwrap();
    let crate_dir = scaffold(dir.path(), "sloppy-offers");
    let lib = crate_dir.join("src/lib.rs");
    let source = std::fs::read_to_string(&lib).unwrap().replace(
        "toolhost_sdk::export_tools!(Greeting);",
        r#"
/// Notes.
struct Notes;

impl toolhost_sdk::Resource for Notes {
    const URI: &'static str = "notes://all";
    const NAME: &'static str = "notes";
    const TITLE: &'static str = "";
    const DESCRIPTION: &'static str = "Notes.";
    const MIME_TYPE: &'static str = "";

    fn read(&self) -> Result<toolhost_sdk::Contents, ToolError> {
        Ok("none".into())
    }
}

/// The variables of `notes://by-id/{note_id}`.
#[derive(Deserialize)]
struct NoteVariables {
    note_id: String,
}

/// One note.
struct Note;

impl toolhost_sdk::ResourceTemplate for Note {
    type Variables = NoteVariables;
    const URI_TEMPLATE: &'static str = "notes://by-id/{note_id}";
    const NAME: &'static str = "note";
    const TITLE: &'static str = "Note";
    const DESCRIPTION: &'static str = "One note of the notebook, as plain text.";
    const MIME_TYPE: &'static str = "text/plain";

    fn read(&self, _uri: &str, v: NoteVariables) -> Result<toolhost_sdk::Contents, ToolError> {
        Ok(toolhost_sdk::Contents::Text(v.note_id))
    }
}

/// Arguments of `summarize`.
#[derive(Deserialize, JsonSchema)]
struct SummarizeArguments {
    topic: String,
}

/// A prompt.
struct Summarize;

impl toolhost_sdk::Prompt for Summarize {
    type Arguments = SummarizeArguments;
    const NAME: &'static str = "summarize";
    const TITLE: &'static str = "Summarize Notes";
    const DESCRIPTION: &'static str = "Ask the model to summarize the notes on one topic.";

    fn get(&self, a: SummarizeArguments) -> Result<Vec<toolhost_sdk::Message>, ToolError> {
        Ok(vec![toolhost_sdk::Message::user(a.topic)])
    }
}

toolhost_sdk::export_component! {
    tools: [Greeting],
    resources: [Notes],
    templates: [Note],
    prompts: [Summarize],
}
"#,
    );
    std::fs::write(&lib, source).unwrap();
    let wasm = build_scaffolded(&crate_dir, "sloppy_offers");
    let out = toolhost(&["check", wasm.to_str().unwrap()]);
    let report = text(&out.stdout);
    assert!(!out.status.success(), "{report}");
    for expected in [
        "error[notes://all]: the description's first sentence is too short",
        "warning[notes://all]: the resource has no title",
        "warning[notes://all]: the resource declares no MIME type",
        "warning[notes://by-id/{note_id}]: the description does not say what {note_id} is",
        "error[summarize]: argument `topic` has no description",
        "1 tools, 2 errors, 3 warnings",
    ] {
        assert!(
            report.contains(expected),
            "{expected:?} missing in:\n{report}"
        );
    }
}

#[test]
fn call_shows_a_tools_form_on_the_terminal_and_without_one_declines_it() {
    let dir = plugin_dir(&["media"]);
    let plugins = dir.path().to_str().unwrap();
    let out = toolhost(&["call", "pick_color", "--plugins", plugins]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    // The host's first line, the tool's question and its fields are shown,
    // with how to answer.
    assert!(
        stderr.contains("toolhost: the tool \"pick_color\"")
            && stderr.contains("Which color should the fence be?")
            && stderr.contains("color (Color): string, one of \"red\", \"green\", \"blue\"")
            && stderr.contains("run `toolhost call` from a terminal to answer it"),
        "{stderr}"
    );
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["answer"], "declined", "{result}");
}
