//! The WIT contract as a package in a registry, fetched by `wkg` (the
//! wasm-pkg-tools command line, from crates.io) the way an author's tooling
//! fetches any WIT package: `toolhost wit` encodes each version,
//! `toolhost push` publishes it in the wasm-pkg OCI layout at
//! `REGISTRY/toolhost/plugin:VERSION`, and `wkg`, with the `toolhost`
//! namespace mapped to that registry, gets the same bytes back and resolves
//! a WIT directory that depends on the package.

use std::path::PathBuf;
use std::process::Command;

use super::{Registry, Scratch, text};

/// `wkg`: the one `cargo xtask setup-wkg` installs into `target/tools/`,
/// else the first on `PATH`. Fails the test, saying how to install it, when
/// there is none.
fn wkg() -> PathBuf {
    let target = crate::support::components_dir()
        .parent()
        .expect("components/ is in the target directory")
        .to_path_buf();
    let installed = target.join("tools/bin/wkg");
    if installed.is_file() {
        return installed;
    }
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("wkg"))
            .find(|p| p.is_file())
    });
    on_path.unwrap_or_else(|| {
        panic!(
            "no wkg in {} or on PATH: run `cargo xtask setup-wkg` (`cargo xtask test` does when \
             the registry tests run)",
            installed.display()
        )
    })
}

#[test]
#[ignore = "needs docker-registry, skopeo and htpasswd (apt-get install -y docker-registry skopeo apache2-utils); and wkg, which cargo xtask test installs under target/tools"]
fn wkg_fetches_the_wit_package_toolhost_pushed_and_resolves_a_wit_directory_needing_it() {
    let registry = Registry::start(None);
    let s = Scratch::new();
    let out = s.toolhost(&["wit", "--out", s.path("wit-out").to_str().unwrap()], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for version in ["0.1.0", "0.2.0", "0.3.0"] {
        let file = s.path(&format!("wit-out/toolhost-plugin-{version}.wasm"));
        s.push(&file, &registry.reference("toolhost/plugin", version), None);
    }

    // An author's wkg configuration: the `toolhost` namespace lives in this
    // registry, spoken to over plain HTTP (it is on loopback). Not named
    // `wkg.toml`: that is the name of a project manifest, which wkg looks
    // for in the directories above the one it runs in.
    let config = s.path("wkg-config.toml");
    std::fs::write(
        &config,
        format!(
            "[namespace_registries]\ntoolhost = \"{addr}\"\n\n[registry.\"{addr}\".oci]\nprotocol = \"http\"\n",
            addr = registry.addr
        ),
    )
    .unwrap();
    let wkg = |args: &[&str], dir: &std::path::Path| {
        let out = Command::new(wkg())
            .args(args)
            .current_dir(dir)
            .env("WKG_CONFIG_FILE", &config)
            .env("XDG_CONFIG_HOME", s.path("config"))
            .env("XDG_CACHE_HOME", s.path("wkg-cache"))
            .env("DOCKER_CONFIG", s.path("docker"))
            .output()
            .expect("wkg runs");
        assert!(
            out.status.success(),
            "wkg {args:?} failed:\n{}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        out
    };

    // `wkg get` returns the package exactly as `toolhost wit` encoded it.
    let fetched = s.path("fetched.wasm");
    wkg(
        &[
            "get",
            "--config",
            config.to_str().unwrap(),
            "--format",
            "wasm",
            "--overwrite",
            "--output",
            fetched.to_str().unwrap(),
            "toolhost:plugin@0.3.0",
        ],
        s.dir.path(),
    );
    assert_eq!(
        std::fs::read(&fetched).unwrap(),
        std::fs::read(s.path("wit-out/toolhost-plugin-0.3.0.wasm")).unwrap(),
        "wkg fetched the bytes toolhost pushed"
    );

    // An author's WIT that uses the contract: `wkg fetch` fills its deps/
    // from the registry with 0.3.0 and the versions 0.3.0 refers to.
    let author = s.path("author");
    std::fs::create_dir_all(author.join("wit")).unwrap();
    std::fs::write(
        author.join("wit/world.wit"),
        "package acme:notes@0.1.0;\n\nworld notes {\n    include toolhost:plugin/plugin@0.3.0;\n}\n",
    )
    .unwrap();
    wkg(&["fetch", "--config", config.to_str().unwrap()], &author);
    assert_eq!(
        walk(&author.join("wit/deps")),
        [
            "toolhost-plugin-0.1.0/package.wit",
            "toolhost-plugin-0.2.0/package.wit",
            "toolhost-plugin-0.3.0/package.wit",
        ]
    );
}

/// Every file under `dir`, relative to it.
fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        for entry in std::fs::read_dir(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}
