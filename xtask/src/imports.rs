//! `cargo xtask imports [--graph] [SRC_DIR…]`: fails when a crate's
//! top-level modules import each other in a cycle.
//!
//! A cycle among modules is what keeps a crate from being split: no module
//! of a strongly connected component can move to another crate without the
//! rest. This check keeps a broken cycle broken (issue 24).
//!
//! What it reads: every `.rs` file under each `SRC_DIR` (default
//! `host/src`; relative paths are taken from the workspace root), parsed
//! with `syn`, so comments, doc comments and string literals can never
//! count as an import.
//!
//! - **Modules.** `foo.rs` and everything under `foo/` is the top-level
//!   module `foo`; so is an inline `mod foo { … }` in the crate root.
//!   `lib.rs` and `main.rs` are crate roots: what they name belongs to no
//!   module (the host's `main.rs` names the library as `toolhost::`).
//!   `bin/` holds other crates' roots and is not read.
//! - **Edges.** `a → b` when code in module `a` names `crate::b`: in a `use`
//!   declaration (groups included: `use crate::{b, c::d}` names `b` and
//!   `c`), in a path anywhere in code (types, expressions, patterns, trait
//!   bounds, attributes), in a macro's tokens (`$crate::b` too), or through
//!   `super::` climbing to the crate root and naming a sibling
//!   (`super::super::b` in `a/c.rs`, or in `a.rs`'s inline `mod tests`;
//!   `super::b` in `a/c.rs` is `a`'s own child). `b` must
//!   be a module: `crate::Error` defined in the root is no edge. An edge
//!   from a module to itself is not one.
//! - **Not followed**: aliases of the crate root (`use crate as root;`,
//!   `extern crate self as name;`), and names a glob of the root
//!   (`use super::*` in a top-level module) brings into scope. The host
//!   uses neither.
//!
//! It then finds the strongly connected components (Tarjan) and prints, for
//! each component of more than one module, the modules and every edge
//! between them with one place that makes it (`a → b (file:line)`), plus
//! how many places make it: paths that name `crate::b`, so a `use` counts
//! once however often the name it imports is used. An edge made only by test code (under
//! `#[cfg(test)]` or `#[test]`) is marked `tests only`: it counts, since it
//! is compiled into the crate's tests, but a split into crates could keep it
//! as a dev-dependency, which Cargo lets form a cycle. The report ends with
//! the size of the largest component; the command exits non-zero when there
//! is a cycle. `--graph` first prints every edge of the crate. The report
//! goes to stdout.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use proc_macro2::{Delimiter, Ident, Spacing, TokenStream, TokenTree};
use syn::visit::{self, Visit};

/// Where the check looks when it is given no directory: the host crate.
const DEFAULT_SRC: &str = "host/src";

/// Runs the check on each source directory in `args` (the host's when none
/// is named), printing one report per crate. Returns whether every crate is
/// free of import cycles; fails when a file cannot be read or parsed.
pub fn run(root: &Path, args: &[String]) -> Result<bool> {
    let mut show_graph = false;
    let mut dirs = Vec::new();
    for arg in args {
        match arg.as_str() {
            "--graph" => show_graph = true,
            flag if flag.starts_with('-') => {
                bail!("unknown option {flag}; usage: cargo xtask imports [--graph] [SRC_DIR...]")
            }
            dir => dirs.push(PathBuf::from(dir)),
        }
    }
    if dirs.is_empty() {
        dirs.push(PathBuf::from(DEFAULT_SRC));
    }

    let mut cyclic = Vec::new();
    for dir in &dirs {
        let graph = read_crate(&root.join(dir), dir)?;
        let report = report(&dir.display().to_string(), &graph, show_graph);
        print!("{}", report.text);
        if report.cycles > 0 {
            cyclic.push(dir.display().to_string());
        }
    }
    if !cyclic.is_empty() {
        eprintln!("error: import cycle in {}", cyclic.join(", "));
    }
    Ok(cyclic.is_empty())
}

/// One place in the source that makes an edge: the file (as the report
/// shows it) and the line of the name of the imported module.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Site {
    /// The file, shown under the source directory as given, e.g.
    /// `host/src/call.rs`.
    pub file: String,
    /// 1-based line of the imported module's name.
    pub line: usize,
    /// Whether the place is test code (under `#[cfg(test)]` or `#[test]`),
    /// which a split into crates may leave cyclic as dev-dependencies.
    pub test: bool,
}

/// The import graph of one crate's top-level modules.
#[derive(Debug, Default)]
pub struct ModuleGraph {
    /// Every top-level module, by name.
    pub modules: BTreeSet<String>,
    /// `(a, b)` → every place where module `a` names `crate::b`, in file
    /// and line order.
    pub edges: BTreeMap<(String, String), Vec<Site>>,
}

/// Reads every `.rs` file under `src` and builds its module graph. Files
/// are shown as `label` joined with their path under `src`.
pub fn read_crate(src: &Path, label: &Path) -> Result<ModuleGraph> {
    let mut files = Vec::new();
    collect_rs_files(src, Path::new(""), &mut files)
        .with_context(|| format!("cannot read {}", src.display()))?;
    if files.is_empty() {
        bail!("no .rs files under {}", src.display());
    }
    let mut sources = Vec::new();
    for relative in files {
        let path = src.join(&relative);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        sources.push((relative, text));
    }
    graph_of(&sources, label)
}

/// Appends the `.rs` files under `dir` (as paths relative to the source
/// root, below `relative`) to `out`, in name order so reports are stable.
fn collect_rs_files(dir: &Path, relative: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries = std::fs::read_dir(dir)?.collect::<std::io::Result<Vec<_>>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        let path = relative.join(&name);
        if entry.file_type()?.is_dir() {
            // `src/bin/` holds the roots of other crates (binaries).
            if relative.as_os_str().is_empty() && name == "bin" {
                continue;
            }
            collect_rs_files(&entry.path(), &path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// The module path of a file under the source root: `foo.rs` and
/// `foo/mod.rs` are `[foo]`, `foo/bar.rs` is `[foo, bar]`, the crate roots
/// `lib.rs` and `main.rs` are `[]`.
fn module_path(relative: &Path) -> Vec<String> {
    let mut path: Vec<String> = relative
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let Some(file) = path.pop() else {
        return path;
    };
    let stem = file.strip_suffix(".rs").unwrap_or(&file);
    let is_root = path.is_empty() && (stem == "lib" || stem == "main");
    if stem != "mod" && !is_root {
        path.push(stem.to_string());
    }
    path
}

/// Builds the module graph from `(path under the source root, source)`
/// pairs.
fn graph_of(sources: &[(PathBuf, String)], label: &Path) -> Result<ModuleGraph> {
    let mut parsed = Vec::new();
    let mut modules = BTreeSet::new();
    // Module paths declared `#[cfg(test)] mod x;`: their files are test code.
    let mut test_modules = BTreeSet::new();
    for (relative, text) in sources {
        let file = label.join(relative).display().to_string();
        let ast = syn::parse_file(text).map_err(|e| {
            let at = e.span().start();
            anyhow::anyhow!("{file}:{}:{}: cannot parse: {e}", at.line, at.column + 1)
        })?;
        let stack = module_path(relative);
        test_module_declarations(&ast.items, &mut stack.clone(), &mut test_modules);
        match stack.first() {
            Some(top) => {
                modules.insert(top.clone());
            }
            // Inline modules of the crate root are top-level modules too.
            None => modules.extend(ast.items.iter().filter_map(|item| match item {
                syn::Item::Mod(m) if m.content.is_some() => Some(m.ident.to_string()),
                _ => None,
            })),
        }
        parsed.push((file, stack, ast));
    }

    let mut edges: BTreeMap<(String, String), Vec<Site>> = BTreeMap::new();
    for (file, stack, ast) in parsed {
        let test = (1..=stack.len()).any(|n| test_modules.contains(&stack[..n]));
        let mut collector = Collector {
            stack,
            test,
            names: Vec::new(),
        };
        collector.visit_file(&ast);
        for named in collector.names {
            if named.from != named.to && modules.contains(&named.to) {
                edges.entry((named.from, named.to)).or_default().push(Site {
                    file: file.clone(),
                    line: named.line,
                    test: named.test,
                });
            }
        }
    }
    for sites in edges.values_mut() {
        sites.sort();
    }
    Ok(ModuleGraph { modules, edges })
}

/// Adds to `out` the module path of every `#[cfg(test)] mod x;` among
/// `items`, which sit in the module `path` (inline modules included).
fn test_module_declarations(
    items: &[syn::Item],
    path: &mut Vec<String>,
    out: &mut BTreeSet<Vec<String>>,
) {
    for item in items {
        if let syn::Item::Mod(m) = item {
            path.push(m.ident.to_string());
            match &m.content {
                None if is_test(&m.attrs) => {
                    out.insert(path.clone());
                }
                None => {}
                Some((_, inner)) => test_module_declarations(inner, path, out),
            }
            path.pop();
        }
    }
}

/// Whether `attrs` make an item test code: `#[cfg(test)]` or `#[test]`
/// (`#[tokio::test]` too).
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let path = a.path();
        let last_is_test = path.segments.last().is_some_and(|s| s.ident == "test");
        match &a.meta {
            syn::Meta::Path(_) => last_is_test,
            syn::Meta::List(list) if path.is_ident("cfg") => list.tokens.to_string() == "test",
            _ => false,
        }
    })
}

/// The attributes of an item, for the ones that can carry `#[cfg(test)]`.
fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item;
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// A top-level module named from inside another part of the crate.
struct Named {
    /// The top-level module whose code names it.
    from: String,
    /// The top-level module it names (not yet checked to be a module).
    to: String,
    /// The line of that name.
    line: usize,
    /// Whether the name is in test code.
    test: bool,
}

/// Walks one file's syntax tree and records every top-level module named
/// through `crate::` or `super::`.
struct Collector {
    /// The module being walked, from the crate root: the file's module path,
    /// then the inline modules entered. Empty in the crate root.
    stack: Vec<String>,
    /// Whether the code being walked is test code.
    test: bool,
    /// What was found, in the order found.
    names: Vec<Named>,
}

impl Collector {
    /// Records the top-level module a path starting with `segments` names,
    /// if it leaves the current top-level module through `crate::` or
    /// `super::`. Paths through `self::`, or starting with any other name
    /// (an extern crate, a local item or import), stay where they are or
    /// were recorded where the name was imported.
    fn path(&mut self, segments: &[&Ident]) {
        // Code in the crate root belongs to no module; an inline module
        // there has its name on the stack.
        let Some(from) = self.stack.first() else {
            return;
        };
        let Some(first) = segments.first() else {
            return;
        };
        let target = if *first == "crate" {
            segments.get(1)
        } else if *first == "super" {
            let ups = segments.iter().take_while(|s| **s == "super").count();
            // More `super`s than levels does not compile; only climbing
            // exactly to the root leaves the current top-level module.
            if ups != self.stack.len() {
                return;
            }
            segments.get(ups)
        } else {
            return;
        };
        let Some(target) = target else {
            return;
        };
        // `crate::self` and `super::self` do not compile; a `self` in a use
        // group was already dropped by the caller.
        if *target == "self" || *target == "super" {
            return;
        }
        self.names.push(Named {
            from: from.clone(),
            to: target.to_string(),
            line: target.span().start().line,
            test: self.test,
        });
    }

    /// Records what each leaf of a `use` tree names, `prefix` being the
    /// segments above it.
    fn use_tree<'a>(&mut self, prefix: &mut Vec<&'a Ident>, tree: &'a syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(&p.ident);
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.use_leaf(prefix, Some(&n.ident)),
            syn::UseTree::Rename(r) => self.use_leaf(prefix, Some(&r.ident)),
            syn::UseTree::Glob(_) => self.use_leaf(prefix, None),
            syn::UseTree::Group(g) => {
                for item in &g.items {
                    self.use_tree(prefix, item);
                }
            }
        }
    }

    /// One leaf of a `use` tree: `self` in a group imports the prefix
    /// itself (`use crate::b::{self, c}` names `b`).
    fn use_leaf(&mut self, prefix: &[&Ident], last: Option<&Ident>) {
        let mut segments = prefix.to_vec();
        if let Some(last) = last.filter(|l| *l != "self") {
            segments.push(last);
        }
        self.path(&segments);
    }

    /// Records the paths in a macro's tokens. Its arguments are not parsed
    /// as Rust (a macro's syntax is its own), so this reads the tokens:
    /// `crate :: b`, `super :: … :: b`, and `crate :: { b , c :: d }`
    /// groups. Comments never reach a token stream, and string literals are
    /// single tokens, so neither can match.
    fn tokens(&mut self, stream: TokenStream) {
        let tokens: Vec<TokenTree> = stream.into_iter().collect();
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                TokenTree::Group(g) => {
                    self.tokens(g.stream());
                    i += 1;
                }
                TokenTree::Ident(id) if id == "crate" || id == "super" => {
                    i = self.token_path(&tokens, i, &mut Vec::new());
                }
                _ => i += 1,
            }
        }
    }

    /// Reads the path that starts at `tokens[start]` (after the segments in
    /// `prefix`), records what it names, and returns the index after it.
    /// The segments are owned: a group's tokens live only in this call.
    fn token_path(&mut self, tokens: &[TokenTree], start: usize, prefix: &mut Vec<Ident>) -> usize {
        let depth = prefix.len();
        let mut i = start;
        let mut group = None;
        while let Some(TokenTree::Ident(id)) = tokens.get(i) {
            prefix.push(id.clone());
            i += 1;
            if !is_path_separator(tokens, i) {
                break;
            }
            i += 2;
            if let Some(TokenTree::Group(g)) = tokens.get(i)
                && g.delimiter() == Delimiter::Brace
            {
                group = Some(g);
                i += 1;
                break;
            }
        }
        match group {
            // Each comma-separated entry of the group is a path below the
            // prefix; `self` stands for the prefix itself.
            Some(g) => {
                let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                let mut j = 0;
                while j < inner.len() {
                    match &inner[j] {
                        TokenTree::Ident(id) if id == "self" => {
                            self.path(&prefix.iter().collect::<Vec<_>>());
                            j += 1;
                        }
                        TokenTree::Ident(_) => j = self.token_path(&inner, j, prefix),
                        _ => j += 1,
                    }
                }
            }
            None => self.path(&prefix.iter().collect::<Vec<_>>()),
        }
        prefix.truncate(depth);
        i
    }
}

/// Whether `tokens[i..]` starts with `::`.
fn is_path_separator(tokens: &[TokenTree], i: usize) -> bool {
    matches!(
        (tokens.get(i), tokens.get(i + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':'
    )
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let outer = self.test;
        self.test |= is_test(item_attrs(item));
        visit::visit_item(self, item);
        self.test = outer;
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        // `mod foo;` is read from its own file; only an inline module adds
        // a level that `super::` climbs.
        if m.content.is_some() {
            self.stack.push(m.ident.to_string());
            visit::visit_item_mod(self, m);
            self.stack.pop();
        } else {
            visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        // A leading `::` names an extern crate, never this one.
        if u.leading_colon.is_none() {
            self.use_tree(&mut Vec::new(), &u.tree);
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.leading_colon.is_none() {
            let segments: Vec<&Ident> = p.segments.iter().map(|s| &s.ident).collect();
            self.path(&segments);
        }
        // Generic arguments hold paths of their own.
        visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        visit::visit_macro(self, m);
        self.tokens(m.tokens.clone());
    }
}

/// The strongly connected components of `graph` (Tarjan's algorithm), each
/// sorted by name, largest first, then by their first module.
pub fn strongly_connected(graph: &ModuleGraph) -> Vec<Vec<String>> {
    let names: Vec<&String> = graph.modules.iter().collect();
    let index_of: BTreeMap<&String, usize> =
        names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut successors = vec![Vec::new(); names.len()];
    for (from, to) in graph.edges.keys() {
        if let (Some(&f), Some(&t)) = (index_of.get(from), index_of.get(to)) {
            successors[f].push(t);
        }
    }

    let mut tarjan = Tarjan {
        successors: &successors,
        index: vec![None; names.len()],
        low: vec![0; names.len()],
        on_stack: vec![false; names.len()],
        stack: Vec::new(),
        next: 0,
        components: Vec::new(),
    };
    for v in 0..names.len() {
        if tarjan.index[v].is_none() {
            tarjan.connect(v);
        }
    }

    let mut components: Vec<Vec<String>> = tarjan
        .components
        .into_iter()
        .map(|c| {
            let mut c: Vec<String> = c.into_iter().map(|v| names[v].clone()).collect();
            c.sort();
            c
        })
        .collect();
    components.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    components
}

/// State of one run of Tarjan's algorithm over vertices `0..n`.
struct Tarjan<'g> {
    /// Each vertex's successors.
    successors: &'g [Vec<usize>],
    /// The order each vertex was first reached in; `None` until then.
    index: Vec<Option<usize>>,
    /// The lowest index reachable from each vertex through its subtree and
    /// one edge back into the stack.
    low: Vec<usize>,
    /// Whether each vertex is on `stack`.
    on_stack: Vec<bool>,
    /// Vertices reached whose component is not yet complete.
    stack: Vec<usize>,
    /// The next index to give.
    next: usize,
    /// Components found, each a list of vertices.
    components: Vec<Vec<usize>>,
}

impl Tarjan<'_> {
    /// Visits `v` and everything reachable from it. Recursive: the depth is
    /// bounded by the number of modules, a few dozen.
    fn connect(&mut self, v: usize) {
        self.index[v] = Some(self.next);
        self.low[v] = self.next;
        self.next += 1;
        self.stack.push(v);
        self.on_stack[v] = true;
        for &w in &self.successors[v] {
            match self.index[w] {
                None => {
                    self.connect(w);
                    self.low[v] = self.low[v].min(self.low[w]);
                }
                Some(w_index) if self.on_stack[w] => self.low[v] = self.low[v].min(w_index),
                Some(_) => {}
            }
        }
        if Some(self.low[v]) == self.index[v] {
            let mut component = Vec::new();
            loop {
                let w = self.stack.pop().expect("v is on the stack");
                self.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            self.components.push(component);
        }
    }
}

/// What the check found in one crate.
pub struct Report {
    /// The text to print.
    pub text: String,
    /// How many import cycles (components of more than one module) there
    /// are.
    pub cycles: usize,
}

/// Describes the crate shown as `label`: with `show_graph`, every edge;
/// then each cycle with its edges; then the largest component's size.
pub fn report(label: &str, graph: &ModuleGraph, show_graph: bool) -> Report {
    let mut text = String::new();
    let edge_line = |text: &mut String, from: &str, to: &str, sites: &[Site]| {
        let first = &sites[0];
        let mut more = match sites.len() {
            1 => String::new(),
            n => format!(", {n} places"),
        };
        if sites.iter().all(|s| s.test) {
            more.push_str(", tests only");
        }
        let _ = writeln!(
            text,
            "  {from} → {to} ({}:{}{more})",
            first.file, first.line
        );
    };

    if show_graph {
        let _ = writeln!(
            text,
            "{label}: {} edges among {} modules",
            graph.edges.len(),
            graph.modules.len()
        );
        for ((from, to), sites) in &graph.edges {
            edge_line(&mut text, from, to, sites);
        }
    }

    let components = strongly_connected(graph);
    let cycles: Vec<&Vec<String>> = components.iter().filter(|c| c.len() > 1).collect();
    for cycle in &cycles {
        let members: BTreeSet<&String> = cycle.iter().collect();
        let inside: Vec<_> = graph
            .edges
            .iter()
            .filter(|((from, to), _)| members.contains(from) && members.contains(to))
            .collect();
        let _ = writeln!(
            text,
            "{label}: import cycle among {} modules: {}",
            cycle.len(),
            cycle.join(", ")
        );
        // Pairs that name each other are where a cycle is cheapest to see
        // and usually to cut.
        let mutual: Vec<String> = inside
            .iter()
            .filter(|((from, to), _)| {
                from < to && graph.edges.contains_key(&(to.clone(), from.clone()))
            })
            .map(|((from, to), _)| format!("{from} ↔ {to}"))
            .collect();
        if !mutual.is_empty() {
            let _ = writeln!(
                text,
                "  {} mutual pairs: {}",
                mutual.len(),
                mutual.join(", ")
            );
        }
        let tests_only = inside
            .iter()
            .filter(|(_, sites)| sites.iter().all(|s| s.test))
            .count();
        let _ = writeln!(
            text,
            "  {} edges inside it ({tests_only} only in tests):",
            inside.len()
        );
        for ((from, to), sites) in inside {
            edge_line(&mut text, from, to, sites);
        }
    }
    if cycles.is_empty() {
        let _ = writeln!(
            text,
            "{label}: no import cycle among {} modules",
            graph.modules.len()
        );
    }
    let largest = components.first().map_or(0, Vec::len);
    let _ = writeln!(
        text,
        "{label}: largest strongly connected component: {largest} of {} modules",
        graph.modules.len()
    );
    Report {
        text,
        cycles: cycles.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The graph of in-memory files, shown under `src/`.
    fn graph(files: &[(&str, &str)]) -> ModuleGraph {
        let sources: Vec<(PathBuf, String)> = files
            .iter()
            .map(|(path, text)| (PathBuf::from(path), text.to_string()))
            .collect();
        graph_of(&sources, Path::new("src")).expect("the fixture parses")
    }

    /// The edges of `graph` as `a → b` strings.
    fn edges(graph: &ModuleGraph) -> Vec<String> {
        graph
            .edges
            .keys()
            .map(|(from, to)| format!("{from} → {to}"))
            .collect()
    }

    #[test]
    fn a_cycle_fails_and_is_named_with_its_edges() {
        let g = graph(&[
            ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n"),
            ("a.rs", "use crate::b::B;\npub struct A;\n"),
            (
                "b.rs",
                "pub struct B;\n\nfn f() -> crate::c::C {\n    crate::c::C\n}\n",
            ),
            ("c.rs", "pub struct C(crate::a::A);\n"),
            ("d.rs", "use crate::a::A;\n"),
        ]);
        let report = report("src", &g, false);
        assert_eq!(report.cycles, 1);
        assert!(
            report
                .text
                .contains("src: import cycle among 3 modules: a, b, c\n"),
            "{}",
            report.text
        );
        assert!(
            report.text.contains("  a → b (src/a.rs:1)\n"),
            "{}",
            report.text
        );
        assert!(
            report.text.contains("  b → c (src/b.rs:3, 2 places)\n"),
            "{}",
            report.text
        );
        assert!(
            report.text.contains("  c → a (src/c.rs:1)\n"),
            "{}",
            report.text
        );
        // d imports from the cycle but is not in it.
        assert!(!report.text.contains("d →"), "{}", report.text);
        assert!(
            report
                .text
                .ends_with("src: largest strongly connected component: 3 of 4 modules\n")
        );
    }

    #[test]
    fn mutual_pairs_are_listed() {
        let g = graph(&[
            ("a.rs", "use crate::b::B;\n"),
            ("b.rs", "use crate::a::A;\n"),
        ]);
        let report = report("src", &g, false);
        assert!(
            report.text.contains("  1 mutual pairs: a ↔ b\n"),
            "{}",
            report.text
        );
    }

    #[test]
    fn an_acyclic_crate_passes() {
        let g = graph(&[
            ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
            ("a.rs", "use crate::b::B;\nuse crate::c::C;\n"),
            ("b.rs", "use crate::c::C;\npub struct B;\n"),
            ("c.rs", "pub struct C;\n"),
        ]);
        let report = report("src", &g, true);
        assert_eq!(report.cycles, 0);
        assert_eq!(
            report.text,
            "src: 3 edges among 3 modules\n\
             \x20 a → b (src/a.rs:1)\n\
             \x20 a → c (src/a.rs:2)\n\
             \x20 b → c (src/b.rs:1)\n\
             src: no import cycle among 3 modules\n\
             src: largest strongly connected component: 1 of 3 modules\n"
        );
    }

    #[test]
    fn comments_doc_comments_and_strings_are_not_edges() {
        let g = graph(&[
            (
                "a.rs",
                r####"//! Uses crate::b::B, see [`crate::b`].
//! ```
//! use crate::b::B;
//! ```

/// Like [`crate::b::B`]: `use crate::b;`
#[doc = "crate::b::B"]
pub struct A;

// use crate::b::B;
/* crate::b::B and
   use crate::b; */
/** crate::b */
fn f() -> &'static str {
    let _ = 'c';
    let _ = b"crate::b";
    let _ = r#"use crate::b::B; "quoted" crate::b"#;
    println!("{}", "crate::b::B");
    "crate::b::B"
}
"####,
            ),
            ("b.rs", "pub struct B;\n"),
        ]);
        assert!(edges(&g).is_empty(), "{:?}", g.edges);
    }

    #[test]
    fn use_groups_name_each_module() {
        let g = graph(&[
            (
                "a.rs",
                "use crate::{\n    b,\n    c::{C, self},\n    d::e::E as F,\n    Error,\n};\n",
            ),
            ("b.rs", ""),
            ("c.rs", ""),
            ("d/mod.rs", "pub mod e;\n"),
            ("d/e.rs", "pub struct E;\n"),
        ]);
        assert_eq!(edges(&g), ["a → b", "a → c", "a → d"]);
        assert_eq!(g.edges[&("a".into(), "b".into())][0].line, 2);
        assert_eq!(g.edges[&("a".into(), "c".into())][0].line, 3);
        assert_eq!(
            g.edges[&("a".into(), "d".into())][0],
            Site {
                file: "src/a.rs".into(),
                line: 4,
                test: false,
            }
        );
    }

    #[test]
    fn super_reaches_a_sibling_only_from_the_root() {
        let g = graph(&[
            // a/inner.rs is two levels down: super::super is the crate root,
            // and super::b is a's own child, not the top-level b.
            (
                "a/inner.rs",
                "use super::super::b::B;\nuse super::Local;\nuse super::b::Own;\n",
            ),
            ("a/b.rs", ""),
            // An inline test module adds a level.
            (
                "c.rs",
                "mod tests {\n    use super::*;\n    fn f() { super::super::d::f(); }\n}\n",
            ),
            // One `super` from a top-level module is the root already.
            ("e.rs", "use super::{b, d::D};\n"),
            ("b.rs", ""),
            ("d.rs", ""),
        ]);
        assert_eq!(edges(&g), ["a → b", "c → d", "e → b", "e → d"]);
        // Only line 1 of a/inner.rs leaves `a`.
        assert_eq!(g.edges[&("a".into(), "b".into())].len(), 1);
        assert_eq!(g.edges[&("c".into(), "d".into())][0].line, 3);
    }

    #[test]
    fn paths_in_code_types_and_macros_are_edges() {
        let g = graph(&[
            (
                "a.rs",
                r#"
impl crate::b::Trait for Vec<crate::c::C> {}
fn f<T: crate::d::Bound>() {
    match x { crate::e::E::One => {} }
    tracing::info!(value = %crate::f::name(), "crate::g");
    tokio::select! { _ = crate::h::wait() => {} }
    bindgen!({ with: { "x": crate::i::{I, self} } });
    macro_rules! m { () => { $crate::j::J } }
}
"#,
            ),
            ("b.rs", ""),
            ("c.rs", ""),
            ("d.rs", ""),
            ("e.rs", ""),
            ("f.rs", ""),
            ("g.rs", ""),
            ("h.rs", ""),
            ("i.rs", ""),
            ("j.rs", ""),
        ]);
        assert_eq!(
            edges(&g),
            [
                "a → b", "a → c", "a → d", "a → e", "a → f", "a → h", "a → i", "a → j"
            ]
        );
    }

    #[test]
    fn edges_only_in_test_code_are_marked() {
        let g = graph(&[
            ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
            (
                "a/mod.rs",
                "#[cfg(test)]\nmod tests;\n#[cfg(test)]\nuse crate::b::B;\n\
                 #[cfg(not(test))]\nuse crate::c::C;\n",
            ),
            ("a/tests.rs", "use crate::c::C;\n"),
            (
                "b.rs",
                "#[test]\nfn t() { crate::a::f(); }\nfn g() { crate::c::f(); }\n",
            ),
            (
                "c.rs",
                "#[cfg(test)]\nmod tests { fn t() { crate::a::f(); } }\n",
            ),
        ]);
        let tests_only: Vec<String> = g
            .edges
            .iter()
            .filter(|(_, sites)| sites.iter().all(|s| s.test))
            .map(|((from, to), _)| format!("{from} → {to}"))
            .collect();
        assert_eq!(edges(&g), ["a → b", "a → c", "b → a", "b → c", "c → a"]);
        assert_eq!(tests_only, ["a → b", "b → a", "c → a"]);
        let report = report("src", &g, false);
        assert!(
            report
                .text
                .contains("  a → b (src/a/mod.rs:4, tests only)\n"),
            "{}",
            report.text
        );
        assert!(
            report.text.contains("  a → c (src/a/mod.rs:6, 2 places)\n"),
            "{}",
            report.text
        );
        assert!(
            report
                .text
                .contains("  5 edges inside it (3 only in tests):\n"),
            "{}",
            report.text
        );
    }

    #[test]
    fn the_crate_root_is_no_module_and_items_in_it_are_no_edges() {
        let g = graph(&[
            (
                "lib.rs",
                "pub mod a;\npub struct Error;\nuse crate::a::A;\nmod inline { use crate::a::A; }\n",
            ),
            ("main.rs", "fn main() { crate::a::f(); }\n"),
            (
                "a.rs",
                "pub struct A;\nfn f() -> crate::Error { crate::Error }\n",
            ),
        ]);
        assert_eq!(g.modules.iter().collect::<Vec<_>>(), ["a", "inline"]);
        assert_eq!(edges(&g), ["inline → a"]);
    }

    #[test]
    fn a_module_naming_itself_is_no_edge() {
        let g = graph(&[
            ("a/mod.rs", "pub mod b;\nuse crate::a::b::B;\n"),
            ("a/b.rs", "use crate::a::C;\nuse super::C;\n"),
        ]);
        assert!(edges(&g).is_empty(), "{:?}", g.edges);
    }

    #[test]
    fn module_paths_follow_files() {
        let path = |p: &str| module_path(Path::new(p));
        assert_eq!(path("lib.rs"), Vec::<String>::new());
        assert_eq!(path("main.rs"), Vec::<String>::new());
        assert_eq!(path("a.rs"), ["a"]);
        assert_eq!(path("a/mod.rs"), ["a"]);
        assert_eq!(path("a/b.rs"), ["a", "b"]);
        assert_eq!(path("a/main.rs"), ["a", "main"]);
    }

    #[test]
    fn a_crate_is_read_from_its_directory() {
        let dir = std::env::temp_dir().join(format!("xtask-imports-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("b")).unwrap();
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::write(dir.join("lib.rs"), "pub mod a;\npub mod b;\n").unwrap();
        std::fs::write(dir.join("a.rs"), "use crate::b::c::C;\n").unwrap();
        std::fs::write(dir.join("b/mod.rs"), "pub mod c;\n").unwrap();
        std::fs::write(dir.join("b/c.rs"), "pub struct C(super::super::a::A);\n").unwrap();
        std::fs::write(dir.join("b/notes.txt"), "crate::a").unwrap();
        // A binary's root names the library by its crate name, and is not
        // a module of it.
        std::fs::write(dir.join("bin/tool.rs"), "use crate::a::A;\n").unwrap();

        let g = read_crate(&dir, Path::new("x/src")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(g.modules.iter().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(edges(&g), ["a → b", "b → a"]);
        assert_eq!(
            g.edges[&("b".into(), "a".into())],
            [Site {
                file: "x/src/b/c.rs".into(),
                line: 1,
                test: false,
            }]
        );
        let report = report("x/src", &g, false);
        assert_eq!(report.cycles, 1);
        assert!(
            report
                .text
                .contains("x/src: import cycle among 2 modules: a, b\n")
        );
    }

    #[test]
    fn a_file_that_does_not_parse_is_named() {
        let sources = [(PathBuf::from("a.rs"), "fn f( {\n".to_string())];
        let error = graph_of(&sources, Path::new("src"))
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("src/a.rs:1:"), "{error}");
    }

    #[test]
    fn components_are_found_largest_first() {
        let g = graph(&[
            ("a.rs", "use crate::b::X;\n"),
            ("b.rs", "use crate::a::X;\nuse crate::c::X;\n"),
            ("c.rs", "use crate::d::X;\n"),
            ("d.rs", "use crate::e::X;\n"),
            ("e.rs", "use crate::c::X;\n"),
            ("f.rs", ""),
        ]);
        assert_eq!(
            strongly_connected(&g),
            [vec!["c", "d", "e"], vec!["a", "b"], vec!["f"],]
        );
        assert_eq!(report("src", &g, false).cycles, 2);
    }
}
