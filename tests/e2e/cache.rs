//! The compile cache: a restart reuses compiled components, and a corrupt
//! or planted entry is detected and rebuilt, never trusted.

use serde_json::json;
use sha2::Digest;

use crate::support::{Host, HostOptions, component};

fn entries(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "cwasm"))
        .collect();
    v.sort();
    v
}

#[tokio::test]
async fn compiled_components_are_cached_and_corrupt_entries_rebuilt() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().to_str().unwrap().to_string();
    {
        let host = Host::start(HostOptions::new(&["hello"]).arg("--cache-dir").arg(&dir)).await;
        host.ok("greet", json!({"name": "one"})).await;
    }
    let stored = entries(cache.path());
    assert_eq!(stored.len(), 1);
    let first = std::fs::read(&stored[0]).unwrap();

    // Corrupt the entry: the next start notices, recompiles and still serves.
    let mut corrupt = first.clone();
    let middle = corrupt.len() / 2;
    corrupt[middle] ^= 0xff;
    std::fs::write(&stored[0], &corrupt).unwrap();
    let host = Host::start(HostOptions::new(&["hello"]).arg("--cache-dir").arg(&dir)).await;
    host.wait_for_stderr("corrupt compile cache entry").await;
    assert_eq!(
        host.ok("greet", json!({"name": "two"})).await["message"],
        "Hello, two!"
    );
    assert_eq!(
        std::fs::read(&stored[0]).unwrap(),
        first,
        "the entry was rebuilt"
    );

    // A truncated entry is caught the same way.
    std::fs::write(&stored[0], &first[..100]).unwrap();
    let host = Host::start(HostOptions::new(&["hello"]).arg("--cache-dir").arg(&dir)).await;
    host.wait_for_stderr("corrupt compile cache entry").await;
    host.ok("greet", json!({"name": "three"})).await;
}

/// What an attacker who can write a cache directory plants: `echo`'s
/// compiled code under `hello`'s entry name, with a plain SHA-256 checksum
/// (what the entry format used to be, and all anyone without the key can
/// compute).
fn forged_entry() -> Vec<u8> {
    let runtime = toolhost::engine::Runtime::new(64 << 20).unwrap();
    let artifact = wasmtime::component::Component::new(&runtime.engine, component("echo"))
        .unwrap()
        .serialize()
        .unwrap();
    let mut entry = sha2::Sha256::digest(&artifact).to_vec();
    entry.extend_from_slice(&artifact);
    entry
}

/// The name of `hello`'s entry in a cache directory.
async fn hello_entry_name() -> std::ffi::OsString {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().to_str().unwrap();
    let host = Host::start(HostOptions::new(&["hello"]).arg("--cache-dir").arg(dir)).await;
    host.ok("greet", json!({"name": "x"})).await;
    drop(host);
    entries(cache.path())[0].file_name().unwrap().to_owned()
}

/// A host serving `hello` from the cache in `dir`: it must serve hello's
/// own tools, never the planted code's.
async fn serves_hello_not_the_plant(dir: &std::path::Path, expect: &str) {
    let host = Host::start(
        HostOptions::new(&["hello"])
            .arg("--cache-dir")
            .arg(dir.to_str().unwrap()),
    )
    .await;
    host.wait_for_stderr(expect).await;
    let names: Vec<String> = host
        .tools()
        .await
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["fetch_url", "greet"], "the planted code ran");
    assert_eq!(
        host.ok("greet", json!({"name": "four"})).await["message"],
        "Hello, four!"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn planted_entries_are_never_deserialized() {
    use std::os::unix::fs::PermissionsExt;
    let name = hello_entry_name().await;
    let forged = forged_entry();

    // A directory anyone can write: not used at all; the host compiles.
    let shared = tempfile::tempdir().unwrap();
    std::fs::write(shared.path().join(&name), &forged).unwrap();
    std::fs::set_permissions(shared.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    serves_hello_not_the_plant(shared.path(), "can be written by other users").await;
    let mode = std::fs::metadata(shared.path())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o777, "the host does not quietly adopt it");

    // A private directory with the forged entry: its checksum is no tag.
    let private = tempfile::tempdir().unwrap();
    std::fs::write(private.path().join(&name), &forged).unwrap();
    serves_hello_not_the_plant(private.path(), "corrupt compile cache entry").await;

    // A genuine entry of another component moved to hello's name: the tag
    // covers the name.
    let other = tempfile::tempdir().unwrap();
    {
        let host = Host::start(
            HostOptions::new(&["echo"])
                .arg("--cache-dir")
                .arg(other.path().to_str().unwrap()),
        )
        .await;
        host.ok("echo", json!({"message": "x"})).await;
    }
    let moved = tempfile::tempdir().unwrap();
    std::fs::copy(&entries(other.path())[0], moved.path().join(&name)).unwrap();
    serves_hello_not_the_plant(moved.path(), "corrupt compile cache entry").await;
}
