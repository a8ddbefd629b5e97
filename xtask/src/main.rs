//! Project tasks, run as `cargo xtask <task>`:
//!
//! - `build-plugins`: build every tool component (each workspace crate with
//!   a `cdylib` target under `plugins/` or `tests/components/`) for
//!   `wasm32-wasip2` with the `plugin` profile, and collect the `.wasm` files
//!   in `target/components/`; with componentize-py available, also the
//!   Python example component (see `python.rs`); with the JavaScript
//!   toolchain installed, the JavaScript and TypeScript example components
//!   (see `javascript.rs`).
//! - `setup-python`: create `target/python-venv` with the pinned
//!   componentize-py, which builds the Python example component.
//! - `setup-js`: install Node.js 22, jco (componentize-js) and TypeScript
//!   from npm under `target/js-tools/`, which build the JavaScript and
//!   TypeScript example components.
//! - `setup-wkg`: `cargo install wkg` at a pinned version into
//!   `target/tools/`, for the test that fetches the WIT package from a
//!   registry with it (see `wkg.rs`).
//! - `test [cargo test args]`: `setup-python` if the venv is missing,
//!   `setup-js` if npm is installed and the JavaScript toolchain is not,
//!   `setup-wkg` when the tests needing infrastructure will run,
//!   `build-plugins`, then `cargo test --workspace` with the arguments given.
//!   This is the command that runs every test: the tests that need
//!   infrastructure programs (Redis, HAProxy, an OCI registry; see
//!   `tests/infra/src/programs.rs`) are `#[ignore]`d, and run too (with
//!   `--include-ignored`) when every one of those programs is installed;
//!   otherwise it first says which are missing and those tests are listed
//!   as ignored.
//! - `demo [--no-build]`: `build-plugins`, then run toolhost against the
//!   bundled sandboxes (see `demo.rs`); `--no-build` serves what is already
//!   built (the end-to-end test of the demo uses it, so it never rebuilds
//!   the binary other tests are running).
//! - `fuzz [SECONDS]`: `build-plugins`, then run the `call_json` fuzz target
//!   (`tests/fuzz`) for SECONDS (default 60). Needs `cargo install cargo-fuzz`.
//! - `bench [harness args]`: `build-plugins`, then build and run the
//!   benchmark harness in release mode (see `bench.rs`).
//! - `conformance [--suite VERSION] [SCENARIO…]`: `build-plugins`, then run
//!   the official MCP conformance suite's server scenarios against toolhost
//!   over Streamable HTTP (see `conformance.rs`); installs Node.js 22 and the
//!   suite (the pinned stable version, or `VERSION`) under
//!   `target/conformance/` when missing.
//! - `imports [--graph] [SRC_DIR…]`: fail when the top-level modules of a
//!   crate (default `host/src`) import each other in a cycle, naming each
//!   cycle's modules and the edges between them with a file and line (see
//!   `imports.rs`); `--graph` prints every edge first. Builds nothing.
//! - `layers`: fail when the runtime or the OCI crate depends, through
//!   anything, on a crate only the `toolhost` crate may use (rmcp, axum,
//!   redis, metrics, …), naming the path (see `layers.rs`). Builds nothing.
//! - `config-docs [--check]`: write the key tables of
//!   `docs/configuration.md` from the table of keys in
//!   `host/src/config/keys.rs`; `--check` only fails when they differ (see
//!   `config_docs.rs`).
//!
//! Everything goes to stderr except what toolhost itself writes, so `demo`
//! can be an MCP client's server command, and the report of `imports`,
//! which is the command's answer.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

mod bench;
mod config_docs;
mod conformance;
mod demo;
mod imports;
mod javascript;
mod layers;
// The test-infrastructure crate's table of programs, included rather than
// depended on: it needs `std` alone, while that crate brings Redis, HAProxy
// and an identity provider. `require` and `Program::used_for` are for the
// tests.
#[allow(dead_code)]
#[path = "../../tests/infra/src/programs.rs"]
mod programs;
mod python;
mod wkg;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = workspace_root();
    match args.first().map(String::as_str) {
        Some("build-plugins") => build_plugins(&root).map(|_| ()),
        Some("setup-python") => python::setup(&root),
        Some("setup-js") => javascript::setup(&root),
        Some("setup-wkg") => wkg::setup(&root),
        Some("test") => {
            python::ensure_venv(&root)?;
            javascript::ensure(&root)?;
            wkg::ensure(&root)?;
            build_plugins(&root)?;
            // Every test binary runs even after one fails, so a run reports
            // every failure, not the first.
            run(cargo(&root)
                .args(["test", "--workspace", "--no-fail-fast"])
                .args(&args[1..])
                .args(infrastructure_args(&args[1..])))
        }
        Some("fuzz") => {
            let components = build_plugins(&root)?;
            let seconds = args.get(1).map(String::as_str).unwrap_or("60");
            fuzz(&root, &components, seconds)
        }
        Some("demo") if args.get(1).map(String::as_str) == Some("--no-build") => {
            demo::run(&root, &target_dir(&root).join("components"), false)
        }
        Some("demo") => {
            let components = build_plugins(&root)?;
            demo::run(&root, &components, true)
        }
        Some("bench") => {
            let components = build_plugins(&root)?;
            bench::run(&root, &components, &args[1..])
        }
        Some("conformance") => {
            let components = build_plugins(&root)?;
            conformance::run(&root, &components, &args[1..])
        }
        Some("config-docs") => config_docs::run(&root, &args[1..]),
        Some("imports") => {
            // A cycle is a finding, not a failure of the task: its report is
            // already printed, so exit without an error's backtrace.
            if !imports::run(&root, &args[1..])? {
                std::process::exit(1);
            }
            Ok(())
        }
        Some("layers") => {
            if !layers::run(&root)? {
                std::process::exit(1);
            }
            Ok(())
        }
        _ => {
            eprintln!(
                "usage: cargo xtask <build-plugins | setup-python | setup-js | setup-wkg | test [cargo test args] | demo [--no-build] | fuzz [SECONDS] | bench [args] | conformance [--suite VERSION] [SCENARIO...] | imports [--graph] [SRC_DIR...] | layers | config-docs [--check]>"
            );
            std::process::exit(2);
        }
    }
}

/// The test-binary arguments that decide whether the tests needing
/// infrastructure run, appended to the user's `cargo test` arguments.
///
/// Those tests are `#[ignore = "needs …"]`, so plain `cargo test` lists
/// them as ignored instead of passing them without running them. When
/// every program in [`programs::PROGRAMS`] is installed (as CI installs
/// them), `--include-ignored` runs them: they are the workspace's only
/// ignored tests, which `toolhost-test-infra`'s `gates` test keeps true.
/// When one is missing, this says which and what installs it, and they all
/// stay ignored: libtest can include ignored tests only all at once.
/// Nothing is added when the user already chose (`--ignored`,
/// `--include-ignored`).
fn infrastructure_args(user_args: &[String]) -> Vec<String> {
    let test_args = user_args
        .iter()
        .skip_while(|a| *a != "--")
        .collect::<Vec<_>>();
    if test_args
        .iter()
        .any(|a| *a == "--ignored" || *a == "--include-ignored")
    {
        return Vec::new();
    }
    let missing = programs::missing();
    if missing.is_empty() {
        let mut args = Vec::new();
        if test_args.is_empty() {
            args.push("--".to_string());
        }
        args.push("--include-ignored".to_string());
        return args;
    }
    let names: Vec<&str> = missing.iter().map(|p| p.name).collect();
    let packages: Vec<&str> = missing.iter().map(|p| p.package).collect();
    eprintln!(
        "cargo xtask test: not installed here: {}.\n\
         The tests that need infrastructure programs stay ignored (listed as ignored below, \
         each naming what it needs); they run once all of {} are installed:\n    \
         apt-get install -y {}",
        names.join(", "),
        programs::PROGRAMS.map(|p| p.name).join(", "),
        packages.join(" ")
    );
    Vec::new()
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

fn cargo(root: &Path) -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root);
    // Progress and diagnostics go to stderr; keep stdout for the protocol.
    c.stdout(std::process::Stdio::from(std::io::stderr()));
    c
}

fn run(command: &mut Command) -> Result<()> {
    let status = command
        .status()
        .with_context(|| format!("cannot run {command:?}"))?;
    if !status.success() {
        bail!("{command:?} failed with {status}");
    }
    Ok(())
}

/// Runs the `call_json` fuzz target for `seconds`.
///
/// cargo-fuzz passes unstable compiler flags; `RUSTC_BOOTSTRAP=1` lets the
/// stable toolchain accept them. No sanitizer: the host is safe Rust, and the
/// target checks the host's own invariants.
fn fuzz(root: &Path, components: &Path, seconds: &str) -> Result<()> {
    let fuzz_dir = root.join("tests/fuzz");
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command
        .current_dir(&fuzz_dir)
        .env("RUSTC_BOOTSTRAP", "1")
        .env("TOOLHOST_COMPONENTS", components)
        .args([
            "fuzz",
            "run",
            "--fuzz-dir",
            ".",
            "--dev",
            "--sanitizer",
            "none",
            "call_json",
        ])
        .arg("corpus/call_json")
        .arg("--")
        .arg(format!("-max_total_time={seconds}"))
        .arg("-rss_limit_mb=4096")
        .arg("-max_len=4096");
    run(&mut command)
        .context("fuzzing failed (is cargo-fuzz installed? `cargo install cargo-fuzz`)")
}

/// The target directory cargo uses for this workspace.
fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
}

/// Builds every component and copies them to `target/components/`.
/// Returns that directory.
pub fn build_plugins(root: &Path) -> Result<PathBuf> {
    ensure_wasm_target()?;
    let packages = component_packages(root)?;
    let mut build = cargo(root);
    build.args(["build", "--target", "wasm32-wasip2", "--profile", "plugin"]);
    for p in &packages {
        build.args(["--package", p]);
    }
    run(&mut build).context("building the components failed (is the target installed? `rustup target add wasm32-wasip2`)")?;

    let target = target_dir(root);
    let out = target.join("components");
    std::fs::create_dir_all(&out)?;
    for p in &packages {
        let file = format!("{}.wasm", p.replace('-', "_"));
        let built = target.join("wasm32-wasip2/plugin").join(&file);
        let dest = out.join(&file);
        // Copy only when changed, so the directory's files keep their
        // identity when nothing was rebuilt.
        let bytes =
            std::fs::read(&built).with_context(|| format!("missing {}", built.display()))?;
        if std::fs::read(&dest).ok().as_deref() != Some(&bytes[..]) {
            std::fs::write(&dest, &bytes)?;
        }
    }
    python::build(root, &out)?;
    javascript::build(root, &out)?;
    eprintln!("components: {} in {}", packages.len(), out.display());
    Ok(out)
}

/// Installs the `wasm32-wasip2` target with rustup when it is missing.
fn ensure_wasm_target() -> Result<()> {
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output();
    match installed {
        Ok(out)
            if String::from_utf8_lossy(&out.stdout)
                .lines()
                .any(|l| l.trim() == "wasm32-wasip2") =>
        {
            Ok(())
        }
        Ok(_) => {
            eprintln!("installing the wasm32-wasip2 target with rustup");
            run(Command::new("rustup")
                .args(["target", "add", "wasm32-wasip2"])
                .stdout(std::process::Stdio::from(std::io::stderr())))
        }
        // Without rustup, the build below says what is missing.
        Err(_) => Ok(()),
    }
}

/// Workspace packages with a `cdylib` target under `plugins/` or
/// `tests/components/`.
fn component_packages(root: &Path) -> Result<Vec<String>> {
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(root)
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .output()
        .context("cannot run cargo metadata")?;
    if !output.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let meta: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    let mut names = Vec::new();
    for package in meta["packages"].as_array().into_iter().flatten() {
        let manifest = package["manifest_path"].as_str().unwrap_or_default();
        let is_component = package["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| {
                t["crate_types"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| c == "cdylib")
            });
        let under = |dir: &str| Path::new(manifest).starts_with(root.join(dir));
        if is_component && (under("plugins") || under("tests/components")) {
            names.push(package["name"].as_str().unwrap_or_default().to_string());
        }
    }
    names.sort();
    Ok(names)
}
