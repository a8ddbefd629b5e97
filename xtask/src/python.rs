//! The Python example component, `plugins/examples/python-wordcount`, built
//! with componentize-py (from PyPI) into
//! `target/components/python_wordcount.wasm`. It shows that the WIT
//! contract is not tied to Rust; see `docs/second-language.md`.
//!
//! - `cargo xtask setup-python` ([`setup`]) creates `target/python-venv`
//!   with `python3 -m venv` and installs the pinned componentize-py in it
//!   ([`venv_with`], which `bench` uses for FastMCP too).
//! - `build-plugins` ([`build`]) builds the component when a
//!   `componentize-py` executable is found (the venv's first, then `PATH`),
//!   and says so and skips it otherwise.
//! - `test` ([`ensure_venv`]) runs the setup when the venv has no
//!   componentize-py, and fails if that fails, so the Python component is
//!   always built and tested there.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use anyhow::{Context, Result};

/// The componentize-py release the component is built with.
pub const COMPONENTIZE_PY_VERSION: &str = "0.25.1";

/// The component's source directory, relative to the workspace root.
const SOURCE: &str = "plugins/examples/python-wordcount";
/// The file name under `target/components/`.
const OUTPUT: &str = "python_wordcount.wasm";

/// `target/python-venv`.
fn venv(root: &Path) -> PathBuf {
    crate::target_dir(root).join("python-venv")
}

/// The venv's `componentize-py`, whether or not it exists.
fn venv_componentize_py(root: &Path) -> PathBuf {
    venv(root).join("bin/componentize-py")
}

/// `cargo xtask setup-python`: creates `target/python-venv` (if it is not
/// there) and installs componentize-py at the pinned version in it.
/// Needs `python3` (3.9 or later, with the `venv` module) and access to PyPI.
pub fn setup(root: &Path) -> Result<()> {
    venv_with(
        &venv(root),
        &format!("componentize-py=={COMPONENTIZE_PY_VERSION}"),
    )
    .map(drop)
}

/// A virtual environment at `venv` with `requirement` installed: creates it
/// with `python3 -m venv` when it is not there, then runs pip, which
/// downloads nothing when the requirement is already met. Returns the
/// environment's interpreter. `setup-python` and `bench` (FastMCP) use it.
pub fn venv_with(venv: &Path, requirement: &str) -> Result<PathBuf> {
    let python = venv.join("bin/python3");
    if !python.exists() {
        eprintln!("creating {} with python3 -m venv", venv.display());
        crate::run(
            Command::new("python3")
                .args(["-m", "venv"])
                .arg(venv)
                .stdout(std::io::stderr()),
        )
        .context("cannot create the Python venv (needs python3 with the venv module; on Debian: apt-get install python3-venv)")?;
    }
    eprintln!("installing {requirement} in {} (pip)", venv.display());
    crate::run(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "--quiet",
                requirement,
            ])
            .stdout(std::io::stderr()),
    )
    .with_context(|| format!("pip could not install {requirement} (from PyPI)"))?;
    Ok(python)
}

/// Runs [`setup`] when the venv has no componentize-py. `cargo xtask test`
/// calls it so that the Python component is always part of a full test run.
pub fn ensure_venv(root: &Path) -> Result<()> {
    if venv_componentize_py(root).exists() {
        return Ok(());
    }
    setup(root).context(
        "`cargo xtask test` builds and tests the Python component; setting up its toolchain failed",
    )
}

/// The `componentize-py` to build with: the venv's, else the first on `PATH`.
fn find_componentize_py(root: &Path) -> Option<PathBuf> {
    let in_venv = venv_componentize_py(root);
    if in_venv.is_file() {
        return Some(in_venv);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("componentize-py"))
        .find(|p| p.is_file())
}

/// Builds the Python component into `out` (`target/components/`) when
/// componentize-py is available. Skips the build when the output is newer
/// than the sources, the WIT files and componentize-py itself: a build takes
/// seconds and its output is not byte-for-byte reproducible.
pub fn build(root: &Path, out: &Path) -> Result<()> {
    let Some(componentize_py) = find_componentize_py(root) else {
        eprintln!(
            "skipping {OUTPUT}: no componentize-py in {} or on PATH (run `cargo xtask setup-python`)",
            venv(root).display()
        );
        return Ok(());
    };
    let source = root.join(SOURCE);
    let dest = out.join(OUTPUT);
    let inputs = newest_mtime(&[&source, &root.join("wit"), &componentize_py])?;
    let built = std::fs::metadata(&dest).and_then(|m| m.modified()).ok();
    if built.is_some_and(|built| built >= inputs) {
        return Ok(());
    }
    eprintln!("building {OUTPUT} with {}", componentize_py.display());
    // Write next to the destination, then rename: the plugin directory never
    // holds half a component.
    let partial = out.join(format!("{OUTPUT}.partial"));
    crate::run(
        Command::new(&componentize_py)
            .current_dir(&source)
            // Contract 0.3.0 lives in wit/0.3 and refers to 0.2.0 in
            // wit/0.2 and 0.1.0 in wit/.
            .arg("--wit-path")
            .arg(root.join("wit"))
            .arg("--wit-path")
            .arg(root.join("wit/0.2"))
            .arg("--wit-path")
            .arg(root.join("wit/0.3"))
            .args([
                "--world",
                "toolhost:plugin/plugin@0.3.0",
                "--quiet",
                "componentize",
                "app",
                "--output",
            ])
            .arg(&partial)
            .stdout(std::io::stderr()),
    )
    .context("building the Python component failed")?;
    std::fs::rename(&partial, &dest)?;
    Ok(())
}

/// The newest modification time among `paths` and, for directories, the
/// files in them (recursively, skipping `__pycache__` and hidden entries).
fn newest_mtime(paths: &[&Path]) -> Result<SystemTime> {
    let mut newest = SystemTime::UNIX_EPOCH;
    let mut stack: Vec<PathBuf> = paths.iter().map(|p| p.to_path_buf()).collect();
    while let Some(path) = stack.pop() {
        let meta =
            std::fs::metadata(&path).with_context(|| format!("cannot read {}", path.display()))?;
        if meta.is_dir() {
            for entry in std::fs::read_dir(&path)? {
                let entry = entry?;
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if name != "__pycache__" && !name.starts_with('.') {
                    stack.push(entry.path());
                }
            }
        } else {
            newest = newest.max(meta.modified()?);
        }
    }
    Ok(newest)
}
