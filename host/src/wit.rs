//! `toolhost wit`: the WIT contract this binary carries, written for other
//! tools, in the standard layout each of them reads (ADR 0037).
//!
//! For each version `V` of `toolhost:plugin` (every `package
//! toolhost:plugin@V;` under `wit/` when the binary was built, so a new
//! contract version needs no change here), `toolhost wit --out DIR` writes:
//! - `DIR/V/`: a WIT directory whose root package is `V`, with every earlier
//!   version in `deps/toolhost-plugin-U/` (the `deps/` layout that
//!   componentize-py's `-d`, jco's `-w`, wit-bindgen's `path` and `wkg`
//!   read); world `toolhost:plugin/plugin@V`;
//! - `DIR/toolhost-plugin-V.wasm`: the package encoded as a WebAssembly
//!   binary, the form a package registry holds. `toolhost push` publishes
//!   it in the wasm-pkg OCI layout, where `wkg get toolhost:plugin@V`
//!   finds it.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::scaffold::embedded::WIT_FILES;

/// One version of the contract: its version and WIT text.
#[derive(Debug, Clone)]
pub struct Package {
    /// The version, as in `package toolhost:plugin@VERSION;`.
    pub version: String,
    /// The WIT text.
    pub text: &'static str,
}

/// The version's parts, for ordering versions.
fn parts(version: &str) -> Vec<u64> {
    version
        .split(['.', '-', '+'])
        .map_while(|p| p.parse().ok())
        .collect()
}

/// Every version of `toolhost:plugin` this binary carries, oldest first.
pub fn packages() -> Vec<Package> {
    let mut packages: Vec<Package> = WIT_FILES
        .iter()
        .filter_map(|(_, bytes)| {
            let text = std::str::from_utf8(bytes).ok()?;
            let version = text.lines().find_map(|line| {
                line.trim()
                    .strip_prefix("package toolhost:plugin@")?
                    .strip_suffix(';')
                    .map(str::to_string)
            })?;
            Some(Package { version, text })
        })
        .collect();
    packages.sort_by_key(|p| parts(&p.version));
    packages
}

/// What [`write()`] wrote for one version.
#[derive(Debug)]
pub struct Written {
    /// The version.
    pub version: String,
    /// The WIT directory (`DIR/V`).
    pub dir: PathBuf,
    /// The encoded package (`DIR/toolhost-plugin-V.wasm`).
    pub package: PathBuf,
}

/// Writes every version's WIT directory and encoded package into `out`.
pub fn write(out: &Path) -> Result<Vec<Written>> {
    let packages = packages();
    if packages.is_empty() {
        bail!("this binary carries no WIT contract (it was built without wit/)");
    }
    let mut written = Vec::new();
    for (i, package) in packages.iter().enumerate() {
        let dir = out.join(&package.version);
        let write = |path: PathBuf, text: &str| -> Result<()> {
            std::fs::create_dir_all(path.parent().expect("a file in a directory"))?;
            std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
        };
        write(dir.join("plugin.wit"), package.text)?;
        for earlier in &packages[..i] {
            write(
                dir.join(format!(
                    "deps/toolhost-plugin-{}/plugin.wit",
                    earlier.version
                )),
                earlier.text,
            )?;
        }
        let bytes = encode(&packages[..=i])?;
        let path = out.join(format!("toolhost-plugin-{}.wasm", package.version));
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
        written.push(Written {
            version: package.version.clone(),
            dir,
            package: path,
        });
    }
    Ok(written)
}

/// The last of `packages` encoded as a WIT package binary; the others are
/// the packages it may refer to.
fn encode(packages: &[Package]) -> Result<Vec<u8>> {
    let mut resolve = wit_parser::Resolve::default();
    let mut last = None;
    for package in packages {
        last = Some(
            resolve
                .push_str(
                    format!("toolhost-plugin-{}.wit", package.version),
                    package.text,
                )
                .with_context(|| format!("toolhost:plugin@{} does not parse", package.version))?,
        );
    }
    let id = last.context("no package to encode")?;
    wit_component::encode(&resolve, id)
        .with_context(|| format!("cannot encode {}", resolve.packages[id].name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_version_is_found_oldest_first_including_0_1_and_0_2() {
        let versions: Vec<String> = packages().into_iter().map(|p| p.version).collect();
        assert!(versions.len() >= 2, "{versions:?}");
        assert_eq!(versions[..2], ["0.1.0", "0.2.0"]);
        let mut sorted = versions.clone();
        sorted.sort_by_key(|v| parts(v));
        assert_eq!(versions, sorted);
    }

    #[test]
    fn each_version_directory_resolves_on_its_own_with_its_world_and_its_package_decodes() {
        let out = tempfile::tempdir().unwrap();
        let written = write(out.path()).unwrap();
        assert_eq!(written.len(), packages().len());
        for w in &written {
            // What a WIT tool does with the directory: the root package and
            // its deps/ resolve, and the world is there.
            let mut resolve = wit_parser::Resolve::default();
            let (id, _) = resolve.push_dir(&w.dir).unwrap();
            assert_eq!(
                resolve.packages[id].name.to_string(),
                format!("toolhost:plugin@{}", w.version)
            );
            resolve
                .select_world(
                    &[id],
                    Some(&format!("toolhost:plugin/plugin@{}", w.version)),
                )
                .unwrap();
            // The encoded package is the same package.
            let bytes = std::fs::read(&w.package).unwrap();
            let decoded = wit_component::decode(&bytes).unwrap();
            let decoded_resolve = decoded.resolve();
            let name = &decoded_resolve.packages[decoded.package()].name;
            assert_eq!(name.to_string(), format!("toolhost:plugin@{}", w.version));
        }
    }
}
