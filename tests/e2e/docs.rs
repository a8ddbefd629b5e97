//! Documentation that must not drift from the code.

use std::path::Path;

fn read(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_wit_reference_holds_the_contract_verbatim() {
    let wit = read("wit/plugin.wit");
    let doc = read("docs/wit-reference.md");
    let embedded = doc
        .split("## The file\n\n```wit\n")
        .nth(1)
        .and_then(|rest| rest.strip_suffix("```\n"))
        .expect("docs/wit-reference.md ends with the WIT file in a ```wit block");
    assert_eq!(
        embedded, wit,
        "docs/wit-reference.md is out of date with wit/plugin.wit"
    );
}

/// The names a WIT file declares: interfaces, records, enums, variants and
/// functions.
fn wit_items(wit: &str) -> Vec<String> {
    wit.lines()
        .map(str::trim)
        .filter_map(|line| {
            ["interface ", "record ", "enum ", "variant "]
                .iter()
                .find_map(|k| line.strip_prefix(k))
                .or_else(|| line.split_once(": func").map(|(n, _)| n))
                .map(|n| n.trim_end_matches(" {").trim_start_matches('%').to_string())
        })
        .collect()
}

#[test]
fn every_wit_item_is_explained_in_the_reference() {
    let wit = read("wit/plugin.wit");
    let doc = read("docs/wit-reference.md");
    let explained = doc.split("## The file").next().unwrap();
    for name in wit_items(&wit) {
        assert!(
            explained.contains(&format!("`{name}")),
            "docs/wit-reference.md does not explain `{name}`"
        );
    }
}

#[test]
fn every_item_of_the_0_2_contract_is_explained_in_the_reference() {
    let wit = read("wit/0.2/plugin.wit");
    let doc = read("docs/wit-reference.md");
    let explained = doc
        .split("## Version 0.2.0")
        .nth(1)
        .and_then(|rest| rest.split("## The file").next())
        .expect("docs/wit-reference.md has a section on version 0.2.0");
    for name in wit_items(&wit) {
        assert!(
            explained.contains(&format!("`{name}")),
            "docs/wit-reference.md does not explain `{name}` of 0.2.0"
        );
    }
}

#[test]
fn every_item_of_the_0_3_contract_is_explained_in_the_reference() {
    let wit = read("wit/0.3/plugin.wit");
    let doc = read("docs/wit-reference.md");
    let explained = doc
        .split("## Version 0.3.0")
        .nth(1)
        .and_then(|rest| rest.split("## The file").next())
        .expect("docs/wit-reference.md has a section on version 0.3.0");
    for name in wit_items(&wit) {
        assert!(
            explained.contains(&format!("`{name}")),
            "docs/wit-reference.md does not explain `{name}` of 0.3.0"
        );
    }
}

#[test]
fn every_config_key_is_documented() {
    let source = read("host/src/config/raw.rs") + &read("host/src/config/auth.rs");
    let doc = read("docs/configuration.md");
    // Every raw key carries a doc comment starting with the key in backticks.
    let keys: Vec<&str> = source
        .lines()
        .filter_map(|l| l.trim().strip_prefix("/// `"))
        .filter_map(|l| l.split('`').next())
        .filter(|k| k.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        .collect();
    assert!(keys.len() >= 15, "{keys:?}");
    for key in keys {
        assert!(
            doc.contains(&format!("`{key}`")),
            "docs/configuration.md does not document `{key}`"
        );
    }
}

/// The table of `toolhost.toml`'s keys, compiled here from the host's own
/// file, as `cargo xtask config-docs` compiles it: the same code writes the
/// doc and checks it.
#[path = "../../host/src/config/keys.rs"]
#[allow(dead_code)] // The host's resolution reads the rest of it.
mod config_keys;

#[test]
fn the_configuration_key_tables_are_generated_from_the_table_of_keys() {
    let doc = read("docs/configuration.md");
    let generated =
        config_keys::regenerate(&doc).unwrap_or_else(|e| panic!("docs/configuration.md: {e}"));
    if generated != doc {
        let (line, doc_line, generated_line) = doc
            .lines()
            .chain(std::iter::repeat(""))
            .zip(generated.lines().chain(std::iter::repeat("")))
            .take(doc.lines().count().max(generated.lines().count()) + 1)
            .enumerate()
            .find(|(_, (d, g))| d != g)
            .map(|(i, (d, g))| (i + 1, d, g))
            .unwrap_or((0, "", ""));
        panic!(
            "docs/configuration.md's key tables differ from host/src/config/keys.rs; \
             run `cargo xtask config-docs`. First difference, line {line}:\n  \
             doc:       {doc_line}\n  generated: {generated_line}"
        );
    }
}

/// The scenario names of the list `name` (`EXPECTED_FAILURES`, …) in
/// xtask/src/conformance.rs.
fn expected_failures(name: &str) -> Vec<String> {
    let runner = read("xtask/src/conformance.rs");
    let list = runner
        .split(&format!("pub const {name}"))
        .nth(1)
        // `];`, not `\n];`: rustfmt writes a one-entry list on one line.
        .and_then(|rest| rest.split("];").next())
        .unwrap_or_else(|| panic!("xtask/src/conformance.rs has {name}"));
    list.lines()
        .map(str::trim)
        .filter_map(|l| l.strip_prefix("(\"").or_else(|| l.strip_prefix('"')))
        .filter_map(|l| l.split('"').next())
        .filter(|s| !s.contains(' '))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_expected_conformance_failure_is_explained() {
    let doc = read("docs/conformance.md");
    let scenarios = expected_failures("EXPECTED_FAILURES");
    assert!(!scenarios.is_empty(), "{scenarios:?}");
    let why = doc
        .split("## Why the failing scenarios fail")
        .nth(1)
        .expect("docs/conformance.md explains the failing scenarios");
    for scenario in scenarios {
        let row = doc
            .lines()
            .find(|l| l.starts_with(&format!("| `{scenario}` |")))
            .unwrap_or_else(|| panic!("docs/conformance.md has no result row for {scenario}"));
        assert!(
            row.contains("| fail |"),
            "docs/conformance.md does not record {scenario} as failing: {row}"
        );
        let family = scenario.split('-').next().unwrap();
        assert!(
            why.contains(&format!("`{scenario}`")) || why.contains(&format!("`{family}-*`")),
            "docs/conformance.md does not explain why {scenario} fails"
        );
    }
}

#[test]
fn every_result_of_the_newer_suite_is_recorded() {
    let doc = read("docs/conformance.md");
    let scenarios = expected_failures("ALPHA_EXPECTED_FAILURES");
    // A guard that the table was read at all (18 scenarios when written).
    assert!(scenarios.len() >= 15, "{scenarios:?}");
    let section = doc
        .split("## The newer suite")
        .nth(1)
        .expect("docs/conformance.md records the newer suite");
    for scenario in scenarios {
        let row = section
            .lines()
            .find(|l| l.starts_with(&format!("| `{scenario}` |")))
            .unwrap_or_else(|| panic!("docs/conformance.md has no newer-suite row for {scenario}"));
        assert!(row.contains("| fail |"), "{row}");
    }
}
