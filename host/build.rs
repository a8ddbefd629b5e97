//! Embeds the SDK's sources and the WIT contract in the binary:
//! `toolhost new` writes them into a new crate (ADR 0037) and `toolhost
//! wit` writes the contract, so an author needs only the binary and the
//! package registries. Every file under `plugins/sdk/` that the SDK's
//! package holds (`Cargo.toml`, `README.md`, `src/**/*.rs`) and every
//! `*.wit` under `wit/` is embedded, whatever versions are there.

use std::path::{Path, PathBuf};

fn files(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, keep, out);
        } else if keep(&path) {
            out.push(path);
        }
    }
}

fn table(name: &str, root: &Path, found: &mut [PathBuf]) -> String {
    found.sort();
    let mut text = format!("pub const {name}: &[(&str, &[u8])] = &[\n");
    for path in found.iter() {
        let relative = path.strip_prefix(root).expect("under the root");
        let relative = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        text.push_str(&format!(
            "    ({relative:?}, include_bytes!({:?})),\n",
            path.canonicalize().expect("an existing file")
        ));
    }
    text.push_str("];\n");
    text
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let sdk = manifest.join("../plugins/sdk");
    let wit = manifest.join("../wit");
    println!("cargo:rerun-if-changed={}", sdk.join("src").display());
    println!(
        "cargo:rerun-if-changed={}",
        sdk.join("Cargo.toml").display()
    );
    println!("cargo:rerun-if-changed={}", sdk.join("README.md").display());
    println!("cargo:rerun-if-changed={}", wit.display());

    let mut sdk_files = vec![sdk.join("Cargo.toml"), sdk.join("README.md")];
    files(
        &sdk.join("src"),
        &|p| p.extension().is_some_and(|x| x == "rs"),
        &mut sdk_files,
    );
    let mut wit_files = Vec::new();
    files(
        &wit,
        &|p| p.extension().is_some_and(|x| x == "wit"),
        &mut wit_files,
    );
    // Directories are watched by their modification time: a file added to
    // a version's directory (wit/0.3/) changes it.
    for path in &wit_files {
        println!(
            "cargo:rerun-if-changed={}",
            path.parent().unwrap().display()
        );
    }

    let text = format!(
        "/// The SDK's package files, by path inside the package.\n{}\n/// The WIT contract's files, by path under `wit/`.\n{}",
        table("SDK_FILES", &sdk, &mut sdk_files),
        table("WIT_FILES", &wit, &mut wit_files)
    );
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("embedded.rs");
    std::fs::write(out, text).unwrap();
}
