//! The workspace's ignored tests are exactly the ones gated on
//! infrastructure programs, and CI installs every such program.
//!
//! `cargo xtask test` passes `--include-ignored` when every program in
//! `PROGRAMS` is installed. That is right only while nothing else is
//! ignored: an `#[ignore]` kept for another reason, or a doc example fenced
//! as `ignore` (rustdoc runs those too under `--include-ignored`, and they
//! do not compile), would be pulled in. And CI must install every program,
//! or those tests would only be listed as ignored there.

use std::path::{Path, PathBuf};

use toolhost_test_infra::PROGRAMS;

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file under `dir`, skipping build output and hidden
/// directories (`target/` holds vendored sources; `tests/fuzz` is its own
/// workspace, which `cargo xtask test` does not run).
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') && !path.ends_with("tests/fuzz") {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// `(file:line, line)` of every line of the workspace's Rust files.
fn lines() -> Vec<(String, String)> {
    let root = root();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(files.len() > 100, "the walk found the workspace's files");
    let mut lines = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let shown = file.strip_prefix(&root).unwrap().display().to_string();
        for (i, line) in text.lines().enumerate() {
            lines.push((format!("{shown}:{}", i + 1), line.to_string()));
        }
    }
    lines
}

/// Checks one ignore reason: `needs A, B and C (apt-get install -y P Q R);
/// …`, every program in `PROGRAMS` and the packages exactly theirs.
fn check_reason(at: &str, reason: &str) {
    let (programs, rest) = reason
        .strip_prefix("needs ")
        .and_then(|r| r.split_once(" (apt-get install -y "))
        .unwrap_or_else(|| {
            panic!(
                "{at}: an ignored test must be gated on infrastructure, its reason \
                 `needs PROGRAM (apt-get install -y PACKAGE); …`, got {reason:?}"
            )
        });
    let (packages, _) = rest
        .split_once(')')
        .unwrap_or_else(|| panic!("{at}: the package list is not closed: {reason:?}"));
    let mut expected = Vec::new();
    for name in programs.replace(" and ", ", ").split(", ") {
        let program = PROGRAMS.iter().find(|p| p.name == name).unwrap_or_else(|| {
            panic!(
                "{at}: {name:?} is not in toolhost_test_infra::PROGRAMS, so `cargo xtask test` \
                     would never run this test"
            )
        });
        expected.push(program.package);
    }
    let packages: Vec<&str> = packages.split(' ').collect();
    assert_eq!(
        packages, expected,
        "{at}: the packages do not install the programs: {reason:?}"
    );
}

#[test]
fn every_ignored_test_is_gated_on_programs_xtask_checks() {
    let mut gated = 0;
    for (at, line) in lines() {
        let line = line.trim();
        if !line.starts_with("#[ignore") {
            continue;
        }
        let reason = line
            .strip_prefix("#[ignore = \"")
            .and_then(|r| r.strip_suffix("\"]"))
            .unwrap_or_else(|| panic!("{at}: an ignored test without a reason: {line}"));
        check_reason(&at, reason);
        gated += 1;
    }
    // The Redis, HAProxy and registry tests of tests/e2e: if this drops to
    // zero, the walk or the attribute's spelling changed, not the tests.
    assert!(gated >= 10, "only {gated} gated tests found");
}

#[test]
fn no_doc_example_is_fenced_as_ignore() {
    for (at, line) in lines() {
        let line = line.trim_start();
        let Some(doc) = line
            .strip_prefix("//!")
            .or_else(|| line.strip_prefix("///"))
        else {
            continue;
        };
        let Some(info) = doc.trim_start().strip_prefix("```") else {
            continue;
        };
        assert!(
            !info
                .split(',')
                .any(|attribute| attribute.trim() == "ignore"),
            "{at}: a doc example fenced as `ignore` runs (and fails to compile) under \
             `cargo xtask test`'s --include-ignored; make it compile (`no_run` if it must not \
             run) or fence it as `text`"
        );
    }
}

#[test]
fn ci_installs_every_program_the_tests_need() {
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    let listed = ci
        .lines()
        .find_map(|l| l.strip_prefix("programs=\""))
        .and_then(|l| l.strip_suffix('"'))
        .expect(".ci/run lists the programs it checks in `programs=\"…\"`");
    let listed: Vec<&str> = listed.split(' ').collect();
    // `package_of` names each program's package where the names differ;
    // any other program is its own package.
    let package_of = |program: &str| -> String {
        ci.lines()
            .map(str::trim)
            .find_map(|l| l.strip_prefix(&format!("{program}) echo ")))
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or(program)
            .to_string()
    };
    assert!(
        ci.contains("apt-get install -y -q $packages"),
        ".ci/run installs the missing programs' packages with `apt-get install -y -q $packages`"
    );
    for program in PROGRAMS {
        assert!(
            listed.contains(&program.name),
            ".ci/run does not check for {}",
            program.name
        );
        assert_eq!(
            package_of(program.name),
            program.package,
            ".ci/run would not install {} for {}",
            program.package,
            program.name
        );
    }
}
