//! The programs some tests run on loopback, each with the Debian package
//! that installs it: one table for the tests, for `cargo xtask test` and for
//! CI (`.ci/run`, checked against it by this crate's `gates` test).
//!
//! A test that needs one of them is `#[ignore = "needs PROGRAM (apt-get
//! install -y PACKAGE); …"]`, so a plain `cargo test` lists it as ignored
//! instead of passing it without running it, and it begins with
//! [`require`], so run without its program it fails and names the package.
//! `cargo xtask test` passes `--include-ignored` when every program here is
//! installed, and says which are missing when not.
//!
//! This file depends on `std` alone: `xtask` includes it as a module, so the
//! task that decides whether those tests run reads the table they are
//! checked against.

/// A program some tests need on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Program {
    /// The command, e.g. `redis-server`.
    pub name: &'static str,
    /// The Debian package that installs it, e.g. `apache2-utils` for
    /// `htpasswd`.
    pub package: &'static str,
    /// What the tests use it for.
    pub used_for: &'static str,
}

/// Every program a test needs besides Rust and the components, in the order
/// the tests' ignore reasons and `.ci/run` name them.
pub const PROGRAMS: [Program; 8] = [
    Program {
        name: "redis-server",
        package: "redis-server",
        used_for: "the replicas' shared replay store (tests/e2e/replicas.rs)",
    },
    Program {
        name: "haproxy",
        package: "haproxy",
        used_for: "the load balancer in front of replicas (tests/e2e/replicas/lb.rs)",
    },
    Program {
        name: "docker-registry",
        package: "docker-registry",
        used_for: "the OCI registry toolhost pushes to and pulls from (tests/e2e/oci.rs)",
    },
    Program {
        name: "skopeo",
        package: "skopeo",
        used_for: "reading what toolhost pushed as other OCI tools do (tests/e2e/oci.rs)",
    },
    Program {
        name: "htpasswd",
        package: "apache2-utils",
        used_for: "the registry's basic-auth login (tests/e2e/oci.rs)",
    },
    Program {
        name: "chromium",
        package: "chromium",
        used_for: "the approval page in a real browser, headless (tests/e2e/approvals/browser.rs)",
    },
    Program {
        name: "chromedriver",
        package: "chromium-driver",
        used_for: "driving that browser over WebDriver (tests/e2e/approvals/browser.rs)",
    },
    Program {
        name: "npm",
        package: "npm",
        used_for: "installing Node.js 22, componentize-js and TypeScript under target/js-tools, \
                   which build the JavaScript and TypeScript components (tests/e2e/javascript.rs)",
    },
];

/// Whether `program` is on PATH (or in /usr/sbin, where Debian puts some
/// servers, and which a user's PATH often lacks).
pub fn on_path(program: &str) -> bool {
    std::process::Command::new("sh")
        .args([
            "-c",
            &format!("command -v {program} || test -x /usr/sbin/{program}"),
        ])
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The programs of [`PROGRAMS`] that are not installed here.
pub fn missing() -> Vec<Program> {
    PROGRAMS.into_iter().filter(|p| !on_path(p.name)).collect()
}

/// Fails the calling test, naming the packages to install, unless every
/// one of `programs` (names from [`PROGRAMS`]) is installed.
///
/// The tests that call it are ignored by default; this is what makes one
/// that is run anyway without its infrastructure fail instead of passing
/// without having run.
///
/// # Panics
/// When a program is missing, or is not in [`PROGRAMS`] (then `cargo xtask
/// test` would not know to check for it).
#[track_caller]
pub fn require(programs: &[&str]) {
    let wanted: Vec<Program> = programs
        .iter()
        .map(|name| {
            PROGRAMS
                .into_iter()
                .find(|p| p.name == *name)
                .unwrap_or_else(|| {
                    panic!(
                        "{name} is not in toolhost_test_infra::PROGRAMS; add it there so \
                         `cargo xtask test` and CI check for it"
                    )
                })
        })
        .collect();
    let absent: Vec<Program> = wanted.into_iter().filter(|p| !on_path(p.name)).collect();
    if absent.is_empty() {
        return;
    }
    let names: Vec<&str> = absent.iter().map(|p| p.name).collect();
    let packages: Vec<&str> = absent.iter().map(|p| p.package).collect();
    panic!(
        "this test needs {}, not installed here: apt-get install -y {} \
         (`cargo xtask test` runs it once every program in toolhost_test_infra::PROGRAMS \
         is installed, and lists it as ignored until then)",
        names.join(", "),
        packages.join(" ")
    );
}
