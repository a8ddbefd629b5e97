//! The compile cache: a restart reuses compiled components, and a corrupt
//! entry is detected and rebuilt, never trusted.

use serde_json::json;

use crate::support::{Host, HostOptions};

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
