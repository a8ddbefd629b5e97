//! Operator config that would have panicked the server is refused at load
//! with an error naming the key and its range.

use std::process::Command;

use crate::support::{component, test_cache_home};

#[test]
fn the_binary_refuses_numbers_out_of_range_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    std::fs::write(plugins.join("hello.wasm"), component("hello")).unwrap();
    for (config, expected) in [
        // `Duration::from_secs_f64` panics on it.
        (
            "[plugins.hello.limits]\ncall_timeout_secs = 1e30\n",
            "`limits.call_timeout_secs` must be between 0.001 and 86400 (seconds), not",
        ),
        // `Instant::now() + timeout` overflows while a lock is held.
        (
            "[host]\nelicitation_timeout_secs = 9223372036854775807\n",
            "`host.elicitation_timeout_secs` must be between 1 and 86400 (seconds), not 9223372036854775807",
        ),
        // `memory_mib << 20` wraps to exactly 1 MiB.
        (
            "[plugins.hello.limits]\nmemory_mib = 17592186044417\n",
            "`limits.memory_mib` must be between 1 and 4096 (MiB), not 17592186044417",
        ),
        // Seconds of leeway beyond any clock skew would accept long-expired tokens.
        (
            "[auth]\nresource = \"https://h/mcp\"\n[auth.oauth]\nissuer = \"https://i\"\njwks_url = \"https://i/jwks\"\nleeway_secs = 86400\n",
            "`auth.oauth.leeway_secs` must be between 0 and 300 (seconds), not 86400",
        ),
    ] {
        let path = dir.path().join("toolhost.toml");
        std::fs::write(&path, config).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .args(["serve", "--no-watch", "--plugins"])
            .arg(&plugins)
            .arg("--config")
            .arg(&path)
            .env("TOOLHOST_LOG", "warn")
            .env("XDG_CACHE_HOME", test_cache_home())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("toolhost runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{config}: accepted");
        assert!(stderr.contains(expected), "{config}:\n{stderr}");
        assert!(!stderr.contains("panicked"), "{config}:\n{stderr}");
        assert!(out.stdout.is_empty(), "stdout carries the protocol only");
    }
}
