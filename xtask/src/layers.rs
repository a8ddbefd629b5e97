//! `cargo xtask layers`: the crate boundaries of ADR 0030 as Cargo facts.
//!
//! The runtime (`toolhost-runtime`) and the OCI crate (`toolhost-oci`) must
//! not depend, directly or through anything they depend on, on a crate that
//! speaks MCP, serves HTTP, or carries a cross-cutting concern the
//! `toolhost` crate owns (metrics, Redis, tokens). Reads `cargo metadata`'s
//! resolved graph, follows normal dependencies only (a test may use
//! anything), and names the path to each forbidden crate it reaches.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// Each layered crate and what it must never reach.
const RULES: &[(&str, &[&str])] = &[
    (
        "toolhost-runtime",
        &[
            "toolhost",
            "toolhost-oci",
            "rmcp",
            "axum",
            "redis",
            "metrics",
            "metrics-exporter-prometheus",
            "jsonwebtoken",
            "notify",
            "clap",
        ],
    ),
    (
        "toolhost-oci",
        &[
            "toolhost",
            "toolhost-runtime",
            "rmcp",
            "axum",
            "redis",
            "metrics",
            "wasmtime",
            "clap",
        ],
    ),
];

/// Checks every rule; prints what holds and each violation with its path.
/// `Ok(false)` when a rule is broken.
pub fn run(root: &Path) -> Result<bool> {
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(root)
        .args(["metadata", "--format-version", "1", "--locked"])
        .output()
        .context("cannot run cargo metadata")?;
    if !output.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let metadata: Value = serde_json::from_slice(&output.stdout)?;
    let graph = normal_dependencies(&metadata)?;
    let mut ok = true;
    for (krate, forbidden) in RULES {
        let Some(start) = graph.ids.get(*krate) else {
            bail!("{krate} is not in the workspace");
        };
        let reached = reachable(&graph, start);
        let mut broken = false;
        for name in *forbidden {
            if let Some(path) = reached.get(*name) {
                println!("{krate} depends on {name}: {}", path.join(" → "));
                broken = true;
            }
        }
        if broken {
            ok = false;
        } else {
            println!(
                "{krate}: none of {} among its {} dependencies",
                forbidden.join(", "),
                reached.len()
            );
        }
    }
    Ok(ok)
}

/// The resolved graph: package names by id and normal edges.
struct Graph {
    /// A package id by name (the first one seen: names the rules use are
    /// not duplicated in the lockfile).
    ids: BTreeMap<String, String>,
    /// A package's name by id.
    names: BTreeMap<String, String>,
    /// Normal (not dev, not build) dependencies by id.
    edges: BTreeMap<String, Vec<String>>,
}

fn normal_dependencies(metadata: &Value) -> Result<Graph> {
    let mut graph = Graph {
        ids: BTreeMap::new(),
        names: BTreeMap::new(),
        edges: BTreeMap::new(),
    };
    for package in metadata["packages"].as_array().context("no packages")? {
        let (Some(id), Some(name)) = (package["id"].as_str(), package["name"].as_str()) else {
            continue;
        };
        graph.ids.entry(name.to_string()).or_insert(id.to_string());
        graph.names.insert(id.to_string(), name.to_string());
    }
    for node in metadata["resolve"]["nodes"]
        .as_array()
        .context("no resolve graph")?
    {
        let id = node["id"].as_str().context("a node without an id")?;
        let normal = node["deps"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|dep| {
                dep["dep_kinds"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|kind| kind["kind"].is_null())
            })
            .filter_map(|dep| dep["pkg"].as_str().map(String::from))
            .collect();
        graph.edges.insert(id.to_string(), normal);
    }
    Ok(graph)
}

/// Every package reachable from `start` by name, with the shortest path of
/// names to it.
fn reachable(graph: &Graph, start: &str) -> BTreeMap<String, Vec<String>> {
    let mut paths: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut queue = VecDeque::from([(start.to_string(), vec![graph.names[start].clone()])]);
    let mut seen = std::collections::BTreeSet::from([start.to_string()]);
    while let Some((id, path)) = queue.pop_front() {
        for next in graph.edges.get(&id).into_iter().flatten() {
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(graph.names[next].clone());
                paths
                    .entry(graph.names[next].clone())
                    .or_insert_with(|| longer.clone());
                queue.push_back((next.clone(), longer));
            }
        }
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &[&str])]) -> Graph {
        let mut g = Graph {
            ids: BTreeMap::new(),
            names: BTreeMap::new(),
            edges: BTreeMap::new(),
        };
        for (from, to) in edges {
            for name in std::iter::once(from).chain(to.iter()) {
                g.ids.insert(name.to_string(), format!("id-{name}"));
                g.names.insert(format!("id-{name}"), name.to_string());
            }
            g.edges.insert(
                format!("id-{from}"),
                to.iter().map(|t| format!("id-{t}")).collect(),
            );
        }
        g
    }

    #[test]
    fn a_crate_reached_through_another_is_found_with_its_path() {
        let g = graph(&[("runtime", &["reqwest"]), ("reqwest", &["hyper", "rmcp"])]);
        let reached = reachable(&g, "id-runtime");
        assert_eq!(reached["rmcp"], ["runtime", "reqwest", "rmcp"]);
        assert!(!reached.contains_key("runtime"));
    }
}
