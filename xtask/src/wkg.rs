//! `wkg`, the WebAssembly package tool (crates.io, from the wasm-pkg-tools
//! project), which the registry test of `tests/e2e/oci.rs` runs to fetch
//! the WIT package `toolhost push` published, the way an author's tooling
//! would.
//!
//! - `cargo xtask setup-wkg` ([`setup`]) runs `cargo install wkg` at the
//!   pinned version into `target/tools/` (`target/tools/bin/wkg`, where the
//!   test looks first).
//! - `test` ([`ensure`]) runs the setup when the tests needing
//!   infrastructure will run (every program of `tests/infra/src/programs.rs`
//!   is installed): the wkg test is one of them, gated on the registry.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

/// The crate and its pinned version.
pub const WKG: (&str, &str) = ("wkg", "0.16.1");

/// `target/tools/bin/wkg`.
fn binary(root: &Path) -> PathBuf {
    crate::target_dir(root).join("tools/bin/wkg")
}

/// Whether `target/tools/bin/wkg` is the pinned version.
fn installed(root: &Path) -> bool {
    Command::new(binary(root))
        .arg("--version")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains(WKG.1))
}

/// `cargo xtask setup-wkg`: `cargo install wkg --version V --locked --root
/// target/tools`, unless that version is there. A few minutes the first
/// time (it compiles).
pub fn setup(root: &Path) -> Result<()> {
    if installed(root) {
        return Ok(());
    }
    let (name, version) = WKG;
    eprintln!("installing {name} {version} into target/tools (cargo install)");
    crate::run(
        crate::cargo(root)
            .args(["install", name, "--version", version, "--locked", "--root"])
            .arg(crate::target_dir(root).join("tools")),
    )
    .with_context(|| format!("cannot install {name} {version} from crates.io"))
}

/// Runs [`setup`] when the tests needing infrastructure will run.
pub fn ensure(root: &Path) -> Result<()> {
    if !crate::programs::missing().is_empty() {
        return Ok(());
    }
    setup(root).context("`cargo xtask test` runs the wkg test; installing wkg failed")
}
