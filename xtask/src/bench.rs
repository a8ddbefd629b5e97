//! `cargo xtask bench`: the benchmark harness, built and run in release mode.
//!
//! After the components are built (by `main`), this builds `toolhost` and the
//! harness crate (`tests/bench`: `toolhost-bench` and `native-echo`) with
//! `--release`, makes sure Python FastMCP is installed in a virtual
//! environment under `target/bench/venv` (`python3 -m venv`, then pip), and
//! runs `toolhost-bench` with their paths. The table goes to stdout and, as
//! markdown, to `target/bench/results.md`. Arguments after `bench` go to the
//! harness (`cargo xtask bench --only 1,4`; `--help` lists them).
//!
//! `toolhost` and the harness are built in one cargo invocation, so the
//! dependencies they share (tokio, rmcp, reqwest, …) compile once: 6.5
//! minutes from an empty `target/` on 2 cores instead of about 13.5 for two
//! builds. Cargo unifies features across the two, so the measured `toolhost`
//! also carries what the harness turns on in shared crates (rmcp's client
//! side, for one); none of it is on the call path.
//!
//! When FastMCP cannot be installed (no `python3`, no venv module, no
//! network), its rows say why and everything else still runs.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

/// Builds, prepares FastMCP, runs the harness with `extra` arguments.
pub fn run(root: &Path, components: &Path, extra: &[String]) -> Result<()> {
    crate::run(crate::cargo(root).args([
        "build",
        "--release",
        "--package",
        "toolhost",
        "--package",
        "toolhost-bench",
    ]))?;
    let target = crate::target_dir(root);
    let release = target.join("release");
    let work = target.join("bench");
    std::fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;

    let mut harness = Command::new(release.join("toolhost-bench"));
    harness
        .arg("--toolhost")
        .arg(release.join("toolhost"))
        .arg("--native-echo")
        .arg(release.join("native-echo"))
        .arg("--components")
        .arg(components)
        .arg("--work")
        .arg(&work)
        .arg("--workspace")
        .arg(root)
        .arg("--markdown")
        .arg(work.join("results.md"));
    match fastmcp(&work) {
        Ok(python) => {
            harness.arg("--python").arg(python);
        }
        Err(e) => {
            eprintln!("FastMCP is not available, its rows will be skipped: {e:#}");
            harness.arg("--no-fastmcp").arg(format!("{e:#}"));
        }
    }
    harness.args(extra);
    crate::run(&mut harness)
}

/// The interpreter of `work/venv`, with `fastmcp` installed (created and
/// installed when missing).
fn fastmcp(work: &Path) -> Result<PathBuf> {
    crate::python::venv_with(&work.join("venv"), "fastmcp")
}
