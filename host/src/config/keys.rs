//! The table of `toolhost.toml`'s keys: one row ([`Key`]) per key, holding
//! everything known about it: its dotted path, its default, the range a
//! number must lie in and its unit, whether a change needs a restart, and
//! its documentation.
//!
//! One definition per key, as ripgrep has one per flag: before this table a
//! key's facts lived in up to six places (the raw field, a range constant, a
//! default in another module, the restart-only list of config reload, and
//! two rows of `docs/configuration.md`), and they drifted. Now:
//!
//! - resolution ([`Config::from_raw`](super::Config::from_raw)) takes each
//!   number's range and default from here, through `key!("host.load_wait_secs")`,
//!   which finds the row while compiling (a path with no row fails the build);
//! - config reload compares the settings [`restart_only_settings`] names and
//!   keeps their running values;
//! - `cargo xtask config-docs` writes the key tables of
//!   `docs/configuration.md` from it ([`regenerate`]), and the e2e test
//!   `docs::the_configuration_key_tables_are_generated_from_the_table_of_keys`
//!   fails when the doc differs from what the table generates.
//!
//! To add a key: a field in [`super::raw`], its row here, its resolution,
//! then `cargo xtask config-docs`.
//!
//! This file uses `std` alone and no other module of the crate: xtask and
//! the e2e tests compile it by path (`#[path]`), so writing the docs needs
//! no wasmtime build.

use std::fmt::Write as _;

use DefaultValue::{Bool, Float, Int, Prose, Required, Toml};

/// One key of `toolhost.toml`.
#[derive(Debug)]
pub struct Key {
    /// Where the key is, dotted from the top of the file:
    /// `host.load_wait_secs`, `plugins.*.limits.memory_mib` (`*` is a
    /// block's name), `auth.tokens.subject` (a field of each entry of an
    /// array of tables).
    pub path: &'static str,
    /// What the host does when the key is absent.
    pub default: DefaultValue,
    /// For a number, the values it accepts; checked at load, before any
    /// arithmetic uses it (a huge timeout would overflow `Duration` and
    /// `Instant` arithmetic, a huge `memory_mib` would wrap when shifted to
    /// bytes).
    pub range: Option<Range>,
    /// Whether a change needs a restart: config reload logs the change and
    /// keeps the running value.
    pub restart_only: bool,
    /// What the key does, as one line of Markdown: the `meaning` cell of its
    /// row in `docs/configuration.md`.
    pub doc: &'static str,
}

/// A key's default.
#[derive(Debug, Clone, Copy)]
pub enum DefaultValue {
    /// A whole number, used by resolution.
    Int(u64),
    /// A number with a fraction (seconds), used by resolution.
    Float(f64),
    /// A boolean, used by resolution.
    Bool(bool),
    /// A value as TOML writes it (`"deny"`, `[]`): serde or resolution
    /// supplies it; a unit test checks that writing it changes nothing.
    Toml(&'static str),
    /// No value, and what that means ("none (off)", "all"), as the doc
    /// shows it.
    Prose(&'static str),
    /// The key must be written.
    Required,
}

/// The values a number accepts, both ends included.
#[derive(Debug, Clone, Copy)]
pub struct Range {
    /// The smallest value allowed.
    pub min: Number,
    /// The largest value allowed.
    pub max: Number,
    /// What the number counts (`seconds`, `bytes`), for errors and the doc.
    pub unit: &'static str,
    /// What the smallest value means when it is special ("no HTTP" for 0
    /// requests), for the doc.
    pub min_means: Option<&'static str>,
}

/// An end of a [`Range`]: whole or with a fraction, as the key is written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// A whole number (`u64` or `u32` keys).
    Int(u64),
    /// A number with a fraction (`f64` keys: seconds).
    Float(f64),
}

impl std::fmt::Display for Number {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Number::Int(n) => write!(f, "{n}"),
            Number::Float(x) => write!(f, "{x}"),
        }
    }
}

impl Range {
    /// A range of whole numbers.
    pub const fn int(min: u64, max: u64, unit: &'static str) -> Range {
        Range {
            min: Number::Int(min),
            max: Number::Int(max),
            unit,
            min_means: None,
        }
    }

    /// A range of numbers with a fraction.
    pub const fn float(min: f64, max: f64, unit: &'static str) -> Range {
        Range {
            min: Number::Float(min),
            max: Number::Float(max),
            unit,
            min_means: None,
        }
    }

    /// The range, with what its smallest value means.
    pub const fn min_means(self, meaning: &'static str) -> Range {
        Range {
            min_means: Some(meaning),
            ..self
        }
    }
}

impl Key {
    /// The key as errors and the doc's range table name it: the path,
    /// without `plugins.*.` for a block's keys (`limits.memory_mib`), since
    /// an error about one says `in [plugins.NAME]` already.
    pub fn name(&self) -> &'static str {
        self.path.strip_prefix("plugins.*.").unwrap_or(self.path)
    }

    /// The table the key is in (`plugins.*.limits`; `""` at the top).
    pub fn table(&self) -> &'static str {
        self.path.rsplit_once('.').map_or("", |(table, _)| table)
    }

    /// The key's own name within its table (`memory_mib`).
    pub fn field(&self) -> &'static str {
        self.path
            .rsplit_once('.')
            .map_or(self.path, |(_, field)| field)
    }

    /// The default of a whole-number key. Evaluated while compiling where
    /// it is used in a constant, so a row of another kind fails the build.
    pub const fn default_int(&self) -> u64 {
        match self.default {
            Int(n) => n,
            _ => panic!("the key's default is not a whole number"),
        }
    }

    /// The default of a key with a fraction.
    pub const fn default_float(&self) -> f64 {
        match self.default {
            Float(x) => x,
            _ => panic!("the key's default is not a number with a fraction"),
        }
    }

    /// The default of a boolean key.
    pub const fn default_bool(&self) -> bool {
        match self.default {
            Bool(b) => b,
            _ => panic!("the key's default is not a boolean"),
        }
    }
}

/// The row of [`KEYS`] whose path is `path`. A `const fn`: used in a
/// constant (as `key!` does), a path with no row fails the build.
pub const fn key(path: &str) -> &'static Key {
    let mut i = 0;
    while i < KEYS.len() {
        if same(KEYS[i].path, path) {
            return &KEYS[i];
        }
        i += 1;
    }
    panic!("no row of config::keys::KEYS has this path")
}

/// `a == b`, in a `const fn`.
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The settings a running server cannot change, as `(table, key)`, from
/// the rows marked [`Key::restart_only`]: a top-level table whose every key
/// needs a restart is one setting (`("auth", None)`, compared whole), as is
/// a top-level key (`("components", None)`); otherwise each key is its own
/// (`("host", Some("http"))`). Config reload compares these between two
/// versions of the file and names them as `host.http`, `[auth]`.
pub fn restart_only_settings() -> Vec<(&'static str, Option<&'static str>)> {
    let top = |path: &'static str| path.split('.').next().unwrap_or(path);
    let mut settings = Vec::new();
    for key in KEYS.iter().filter(|k| k.restart_only) {
        let table = top(key.path);
        let whole = KEYS
            .iter()
            .filter(|k| top(k.path) == table)
            .all(|k| k.restart_only);
        let setting = match key.path.split_once('.') {
            Some((_, rest)) if !whole => (table, Some(rest)),
            _ => (table, None),
        };
        if !settings.contains(&setting) {
            settings.push(setting);
        }
    }
    settings
}

/// What starts a generated region of the doc; the region's name follows.
const BEGIN: &str = "<!-- config-docs:";
/// What ends a generated region.
const END: &str = "<!-- /config-docs -->";

/// `doc` (the text of `docs/configuration.md`) with every generated region
/// written afresh from [`KEYS`]. A region runs from a line
/// `<!-- config-docs:NAME … -->` to `<!-- /config-docs -->`; NAME is a
/// table of keys (`host`, `plugins.*.limits`, `top-level` for the keys at
/// the top of the file), `ranges` (every number's range) or `restart-only`
/// (the settings that need a restart). An error when a region is unknown,
/// repeated or not closed, or a table of keys has no region (a new table
/// would otherwise go undocumented).
pub fn regenerate(doc: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = doc;
    let mut seen: Vec<String> = Vec::new();
    while let Some(start) = rest.find(BEGIN) {
        let name = rest[start + BEGIN.len()..]
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string();
        let after = rest[start..]
            .find('\n')
            .map_or(rest.len(), |i| start + i + 1);
        let end = rest[after..]
            .find(END)
            .ok_or_else(|| format!("the region `{name}` has no `{END}`"))?;
        let body = render(&name).ok_or_else(|| {
            format!(
                "no table of keys is called `{name}` (regions: {})",
                regions().join(", ")
            )
        })?;
        if seen.contains(&name) {
            return Err(format!("the region `{name}` appears twice"));
        }
        out.push_str(&rest[..start]);
        let _ = writeln!(
            out,
            "{BEGIN}{name} generated from host/src/config/keys.rs by `cargo xtask config-docs` -->"
        );
        out.push('\n');
        out.push_str(&body);
        out.push('\n');
        rest = &rest[after + end..];
        seen.push(name);
    }
    out.push_str(rest);
    if let Some(missing) = regions().into_iter().find(|r| !seen.contains(r)) {
        return Err(format!(
            "the doc has no region for `{missing}`; add `{BEGIN}{missing} -->` and `{END}` \
             where its table goes"
        ));
    }
    Ok(out)
}

/// Every region [`regenerate`] writes: each table of keys in the order of
/// [`KEYS`], then `ranges` and `restart-only`.
fn regions() -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for key in KEYS {
        let name = region_of(key.table()).to_string();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names.extend(["ranges".to_string(), "restart-only".to_string()]);
    names
}

/// The region of the keys of `table`.
fn region_of(table: &str) -> &str {
    if table.is_empty() { "top-level" } else { table }
}

/// The Markdown of the region `name`, each line ended; `None` for a name
/// that is no region.
fn render(name: &str) -> Option<String> {
    match name {
        "ranges" => Some(ranges_table()),
        "restart-only" => Some(restart_only_list()),
        _ => {
            let keys: Vec<&Key> = KEYS
                .iter()
                .filter(|k| region_of(k.table()) == name)
                .collect();
            (!keys.is_empty()).then(|| keys_table(&keys))
        }
    }
}

/// The `| key | default | meaning |` table of `keys`.
fn keys_table(keys: &[&Key]) -> String {
    let mut out = String::from("| key | default | meaning |\n|---|---|---|\n");
    for key in keys {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            key.field(),
            shown_default(key),
            key.doc
        );
    }
    out
}

/// A key's default as the doc's `default` column shows it.
fn shown_default(key: &Key) -> String {
    match key.default {
        Int(n) => match key.range.map(|r| r.unit) {
            Some("bytes") => with_size(n),
            _ => format!("`{n}`"),
        },
        Float(x) => format!("`{x}`"),
        Bool(b) => format!("`{b}`"),
        Toml(value) => format!("`{value}`"),
        Prose(text) => text.to_string(),
        Required => "required".to_string(),
    }
}

/// A number of bytes, with its size in KiB, MiB, GiB or TiB when it is a
/// whole number of one: `` `67108864` (64 MiB) ``.
fn with_size(bytes: u64) -> String {
    match binary_size(bytes) {
        Some(size) => format!("`{bytes}` ({size})"),
        None => format!("`{bytes}`"),
    }
}

/// `bytes` in the largest binary unit that divides it, if any.
fn binary_size(bytes: u64) -> Option<String> {
    [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)]
        .into_iter()
        .find(|(_, shift)| bytes >= 1 << shift && bytes.is_multiple_of(1 << shift))
        .map(|(unit, shift)| format!("{} {unit}", bytes >> shift))
}

/// The `| key | allowed |` table of every number's range, keys named as
/// errors name them.
fn ranges_table() -> String {
    let mut out = String::from("| key | allowed |\n|---|---|\n");
    for key in KEYS {
        let Some(range) = key.range else { continue };
        let min = match range.min_means {
            Some(meaning) => format!("{} ({meaning})", range.min),
            None => range.min.to_string(),
        };
        let size = match (range.unit, range.max) {
            ("bytes", Number::Int(max)) => binary_size(max).map(|s| format!(" ({s})")),
            _ => None,
        };
        let _ = writeln!(
            out,
            "| `{}` | {min} to {} {}{} |",
            key.name(),
            range.max,
            range.unit,
            size.unwrap_or_default()
        );
    }
    out
}

/// The settings that need a restart, as config reload names them in its
/// log: `host.http`, `[auth]`, `components`.
fn restart_only_list() -> String {
    let names: Vec<String> = restart_only_settings()
        .into_iter()
        .map(|(table, key)| match key {
            Some(key) => format!("`{table}.{key}`"),
            None if KEYS.iter().any(|k| k.path == table) => format!("`{table}`"),
            None => format!("`[{table}]`"),
        })
        .collect();
    format!("{}.\n", names.join(", "))
}

/// Default of `limits.wasm_bytes`, shared by `oci.max_blob_bytes`: a
/// component the plugin directory would load can be fetched.
const WASM_BYTES: u64 = 128 << 20;

/// Every key of `toolhost.toml`, in the order of the doc's tables.
pub const KEYS: &[Key] = &[
    Key {
        path: "host.confirmation",
        default: Toml("\"deny\""),
        range: None,
        restart_only: false,
        doc: "What a tool's confirmation gets when the client did not declare elicitation. \
            `\"deny\"`: the answer is *unsupported*, so no mutation happens and the tool says \
            why. `\"trust-confirm-flag\"`: the tool's own `confirm: true` argument counts as \
            the user's yes (for clients that show their own approval prompt before running a \
            destructive tool).",
    },
    Key {
        path: "host.elicitation_timeout_secs",
        default: Int(300),
        range: Some(Range::int(1, 86_400, "seconds")),
        restart_only: true,
        doc: "How long to wait for the user's answer to an elicitation; when it expires the \
            answer is *cancelled*. This wait does not count against the call's deadline.",
    },
    Key {
        path: "host.load_wait_secs",
        default: Int(45),
        range: Some(Range::int(0, 3600, "seconds")),
        restart_only: true,
        doc: "At start, `initialize` is answered at once and the plugin directory loads in the \
            background; `tools/list` and `tools/call` wait this long for that load. Past it \
            they answer with the tools loaded so far (none) and clients are sent a tool-list \
            change when the load is in.",
    },
    Key {
        path: "host.compile_memory_mib",
        default: Int(4096),
        range: Some(Range::int(64, 1 << 20, "MiB")),
        restart_only: true,
        doc: "The memory the process a load compiles in (`toolhost compile-worker`, ADR 0058) \
            may allocate, all its compilations together (`RLIMIT_DATA`: heap and private \
            mappings; the reservations of guard regions do not count). A compilation past it \
            ends that process, and the component is refused at load, naming this key; the \
            gateway serves on. The process dumps no core. The largest example components need about 450 MiB each, and up \
            to two per core compile at once.",
    },
    Key {
        path: "host.max_message_bytes",
        // 16 MiB: what rmcp's own stdio transport accepts.
        default: Int(16 << 20),
        range: Some(Range::int(1 << 10, 256 << 20, "bytes")),
        restart_only: true,
        doc: "The longest line (one JSON-RPC message) read from stdin. A longer line is \
            answered with a `-32600` error naming this key and skipped up to its newline; the \
            server keeps serving. Over HTTP, the largest request body (413 past it).",
    },
    Key {
        path: "host.metrics",
        default: Prose("none (off)"),
        range: None,
        restart_only: true,
        doc: "Where to serve Prometheus metrics (`GET /metrics`), on a listener of its own: an \
            IP address and port such as `\"127.0.0.1:9464\"` (`\"[::1]:9464\"` for IPv6), or a \
            port alone, on loopback (`\"9464\"`). Port `0` picks a free one; the address is \
            logged (`metrics on http://…/metrics`). A port that cannot be bound stops \
            `toolhost serve`. The endpoint has no authentication: an address other than \
            loopback is served with a warning in the log. Every metric: \
            [metrics.md](metrics.md).",
    },
    Key {
        path: "host.http",
        default: Prose("none (stdio)"),
        range: None,
        restart_only: true,
        doc: "Serve MCP over Streamable HTTP on this address, e.g. `\"127.0.0.1:8080\"`, \
            instead of stdio ([http.md](http.md)). `serve --http ADDR` overrides it. A \
            non-loopback address needs `[auth]`.",
    },
    Key {
        path: "host.unmatched_files",
        default: Toml("\"serve\""),
        range: None,
        restart_only: false,
        doc: "What happens to a file in the plugin directory that no `[plugins.NAME]` block \
            matches. `\"serve\"`: it serves unconfigured (no network, no settings, default \
            limits, its own names), so a drop-in directory works without a config. `\"skip\"`: \
            it is not loaded, so the config names every plugin that runs (a component of \
            `components` counts as named); a file dropped in without a block is logged and \
            skipped, and removing a block stops serving its tools, resources and prompts \
            (clients get `tools/list_changed`, and `resources/list_changed` or \
            `prompts/list_changed` when it offered any). Reloads live. Recommended for \
            deployments ([ADR 0022](adr/0022-files-no-block-matches.md)).",
    },
    Key {
        path: "host.secrets_dir",
        default: Prose("none"),
        range: None,
        restart_only: false,
        doc: "Where credentials chosen per caller are read (relative paths are taken from the \
            config file's directory): a `credentials` entry whose `value` holds \
            `${secret:PATH}`, e.g. `\"Bearer ${secret:statuspro/{subject}}\"`, is sent with the \
            contents of the file `PATH` under this directory, `{subject}` and `{source}` being \
            the caller's subject and `jwt` or `token`; one file per caller, as a mounted \
            Kubernetes Secret lays them out, read at each call. A caller without a file gets a \
            tool error and nothing is sent.",
    },
    Key {
        path: "host.audit",
        default: Prose("none (off)"),
        range: None,
        restart_only: true,
        doc: "The audit trail: a file (relative paths are taken from the config file's \
            directory) that gets one JSON line per tool call, appended before the result goes \
            back: time, caller (and over HTTP its network address), tool, plugin file and digest, SHA-256 of the canonical \
            arguments, the confirmation and its outcome, each upstream request (method, host, \
            path without query, status, bytes), the result, the duration. A resource read, \
            prompt get or completion that runs a component's code gets one too, with its \
            `kind` and `target` (the resource's URI, the matched URI template, the prompt's \
            name) in place of the tool; the URI the client read, the prompt's arguments or the \
            value completed count as its arguments (hashed). Never a credential or a header. A \
            call's first request that could change data (not `GET`/`HEAD`) waits until an \
            `intent` record is on disk; while the file cannot be written (disk full, not \
            writable) such requests are refused and the call fails with `TRANSIENT`, nothing \
            changed, while read-only calls go on; the reason is logged once. Calls refused \
            before they ran (unknown tool, forged or replayed `requestState`, malformed \
            `inputResponses`, params the transport cannot decode) are recorded as `refused`; \
            requests the host refused to send are in `upstream` with `refused`. The file stays \
            open; renamed or deleted by another program (logrotate), a new one is begun at the \
            path. Each line's `prev` is the SHA-256 of the line before it and its `seq` its \
            number: `toolhost audit --verify` checks the chain and names records missing (a \
            deleted rotated file, a cut-off start). Text a client chose is cut to a bound, the \
            cut noted with the original's length and hash; refused calls have a budget per \
            caller (`audit_refused_per_window`). One process writes a file: it holds a lock on \
            it, and a second process on it (`toolhost call` with the serving config) is refused \
            before anything runs. Read it with `toolhost audit`. \
            Fields and guarantees: ADR 0019, ADR 0025, ADR 0031 and `host/src/audit/mod.rs`.",
    },
    Key {
        path: "host.audit_arguments",
        default: Bool(false),
        range: None,
        restart_only: true,
        doc: "Also write each call's arguments themselves into the audit trail (they may hold \
            personal data), not only their hash; for a resource read, the URI read; for a \
            prompt get, its arguments; for a completion, the argument, value and context. \
            Needs `audit`.",
    },
    Key {
        path: "host.audit_max_bytes",
        default: Int(64 << 20),
        range: Some(Range::int(4 << 10, 1 << 40, "bytes")),
        restart_only: true,
        doc: "When a record would grow the audit file past this size, the file is renamed \
            `PATH.1` (older ones move up: `PATH.2`, …) and a new one begun. Needs `audit`.",
    },
    Key {
        path: "host.audit_keep",
        default: Int(5),
        range: Some(Range::int(1, 1000, "files")),
        restart_only: true,
        doc: "Rotated audit files kept (`PATH.1` … `PATH.N`); the oldest beyond it is deleted \
            at rotation. Needs `audit`.",
    },
    Key {
        path: "host.audit_refused_per_window",
        default: Int(60),
        range: Some(Range::int(1, 1_000_000, "records")),
        restart_only: true,
        doc: "Records of calls refused before they ran (unknown tool, hidden tool, forged or \
            replayed `requestState`, …) that one caller identity may leave in the audit trail \
            per `audit_refused_window_secs`. Past it, its refusals are counted, not written, and \
            one `suppressed` record at the window's end says how many (with their codes and client addresses), so a \
            flood of refusals cannot rotate other callers' records away. Calls that ran are \
            always recorded. Needs `audit`.",
    },
    Key {
        path: "host.audit_refused_window_secs",
        default: Int(60),
        range: Some(Range::int(1, 86_400, "seconds")),
        restart_only: true,
        doc: "The window of `audit_refused_per_window`, begun by a caller's first refused call. \
            Needs `audit`.",
    },
    Key {
        path: "host.list_ttl_ms",
        default: Int(0),
        range: Some(Range::int(0, 86_400_000, "milliseconds")),
        restart_only: false,
        doc: "The `ttlMs` hint on `tools/list`, `resources/list`, `resources/templates/list` and \
            `prompts/list` results (2026-07-28): how long a client may reuse a list without asking \
            again. 0 (the default) means ask every time; a list change is announced either way. \
            Lists carry `cacheScope: \"private\"` when they depend on the caller (`[[access]]`, \
            a hide rule or a profile's `hide` reading `identity`, a discovery profile), \
            `\"public\"` otherwise. Reloads live.",
    },
    Key {
        path: "host.resource_subscriptions",
        default: Int(100),
        range: Some(Range::int(1, 10_000, "URIs")),
        restart_only: false,
        doc: "Resource URIs one client session may subscribe to (`resources/subscribe`; over \
            HTTP, per `Mcp-Session-Id`), and one 2026-07-28 `subscriptions/listen` stream may \
            name. Past it, `resources/subscribe` is refused (`-32602`) and such a stream ends \
            with that error, both naming this key; unsubscribing frees a place. Each URI is at \
            most 4096 bytes. Reloads live.",
    },
    Key {
        path: "http.allowed_origins",
        default: Toml("[]"),
        range: None,
        restart_only: true,
        doc: "Browser origins allowed to call (`Origin` header, matched by scheme, host and \
            port; an entry without a port means the scheme's default, 443 for `https` and 80 \
            for `http`; `:*` for any port; `\"null\"` for `Origin: null`). A request with any \
            other `Origin` gets 403; requests without one pass.",
    },
    Key {
        path: "http.trusted_proxies",
        default: Toml("[]"),
        range: None,
        restart_only: true,
        doc: "Addresses or blocks (`\"10.0.0.7\"`, `\"10.0.0.0/8\"`, `\"fd00::/8\"`) of the \
            load balancers or proxies in front of toolhost. A connection from one of them is \
            counted and recorded, where toolhost counts or records by client address (the \
            approval page's sign-in limit, the audit trail's `client`), by the address its \
            `X-Forwarded-For` names: the last one in it that is not itself a trusted proxy. From any other peer the header is ignored, so a client \
            cannot choose its own address. Empty: every connection is its peer's address, and \
            behind a balancer all clients share the balancer's.",
    },
    Key {
        path: "http.allowed_hosts",
        default: Toml("[]"),
        range: None,
        restart_only: true,
        doc: "`Host` header values accepted besides `localhost`, `127.0.0.1`, `::1` and the \
            listen address: the public name a proxy forwards. Anything else gets 403 \
            (DNS-rebinding protection).",
    },
    Key {
        path: "http.header_read_timeout_secs",
        default: Float(10.0),
        range: Some(Range::float(0.1, 300.0, "seconds")),
        restart_only: true,
        doc: "A client must send a request's headers within this time, or the connection is \
            closed.",
    },
    Key {
        path: "http.body_read_timeout_secs",
        default: Float(30.0),
        range: Some(Range::float(0.1, 3600.0, "seconds")),
        restart_only: true,
        doc: "A client must send a request's body within this time, or gets 408.",
    },
    Key {
        path: "http.requests_per_identity",
        default: Int(64),
        range: Some(Range::int(1, 100_000, "requests")),
        restart_only: true,
        doc: "Requests one caller may have in flight at once (a request counts until its \
            answer is made, whatever it streams before); past it, 429 with `Retry-After`. The caller is the authenticated \
            identity, or one shared \"anonymous\" caller without `[auth]`.",
    },
    Key {
        path: "http.streams_per_identity",
        default: Int(8),
        range: Some(Range::int(1, 10_000, "streams")),
        restart_only: true,
        doc: "Event streams (GET streams and 2026-07-28 `subscriptions/listen`) one caller may \
            hold open; past it, 429.",
    },
    Key {
        path: "http.max_connections",
        default: Int(1024),
        range: Some(Range::int(1, 1_000_000, "connections")),
        restart_only: true,
        doc: "Open connections, all callers together; more are closed at accept.",
    },
    Key {
        path: "http.max_unauthenticated_connections",
        default: Int(256),
        range: Some(Range::int(1, 1_000_000, "connections")),
        restart_only: true,
        doc: "With `[auth]`: open connections none of whose requests has authenticated yet. \
            A new connection past it closes the oldest such connection, so unauthenticated \
            clients cannot hold every `max_connections` slot; a request refused for its \
            credentials (401, 403) is answered with `Connection: close`. Without `[auth]` \
            (loopback only) only `max_connections` applies.",
    },
    Key {
        path: "http.sessions_per_identity",
        default: Int(128),
        range: Some(Range::int(1, 100_000, "sessions")),
        restart_only: true,
        doc: "Legacy sessions (`initialize`, `Mcp-Session-Id`) one caller may hold open; past \
            it, `initialize` gets 429 with `Retry-After` and a JSON-RPC error naming this key. \
            A session ends with DELETE, after `session_idle_secs` without traffic, or after \
            `uninitialized_session_idle_secs` if it never sent `notifications/initialized`.",
    },
    Key {
        path: "http.max_sessions",
        default: Int(1024),
        range: Some(Range::int(1, 1_000_000, "sessions")),
        restart_only: true,
        doc: "Legacy sessions open, all callers together; past it, `initialize` gets 429 as \
            for `sessions_per_identity`.",
    },
    Key {
        path: "http.uninitialized_session_idle_secs",
        default: Int(30),
        range: Some(Range::int(1, 86_400, "seconds")),
        restart_only: true,
        doc: "A legacy session that has not sent `notifications/initialized` this long after \
            its `initialize` is closed (a client that opens sessions and never uses them).",
    },
    Key {
        path: "http.session_idle_secs",
        default: Int(600),
        range: Some(Range::int(1, 86_400, "seconds")),
        restart_only: true,
        doc: "A legacy session with no traffic for this long is closed.",
    },
    Key {
        path: "http.shutdown_grace_secs",
        default: Float(30.0),
        range: Some(Range::float(0.0, 3600.0, "seconds")),
        restart_only: true,
        doc: "After SIGTERM/SIGINT, how long calls in flight may take to finish before streams \
            are closed and the process exits 0.",
    },
    Key {
        path: "state.keys",
        default: Prose("none: a random key of this process's own"),
        range: None,
        restart_only: true,
        doc: "The sealing key ring (below). The first entry seals; every entry opens.",
    },
    Key {
        path: "state.keys.id",
        default: Required,
        range: None,
        restart_only: true,
        doc: "The key's id, written into every state it seals: 1 to 255 printable characters, \
            each id once.",
    },
    Key {
        path: "state.keys.env",
        default: Prose("—"),
        range: None,
        restart_only: true,
        doc: "The environment variable holding the key.",
    },
    Key {
        path: "state.keys.file",
        default: Prose("—"),
        range: None,
        restart_only: true,
        doc: "The file holding the key.",
    },
    Key {
        path: "state.replay",
        default: Prose("none: in this process (required with `[[state.keys]]`)"),
        range: None,
        restart_only: true,
        doc: "Where spent states are remembered: `\"local\"`, in this process alone, or a \
            Redis all replicas share. With `[[state.keys]]` it must be set (toolhost refuses to \
            start otherwise): keys are shared so that replicas open each other's states, and \
            without a shared store each replica would accept the same confirmed answer once; \
            say `\"local\"` when one process alone holds the keys. A Redis is given as a \
            `redis://` URL, `redis://[USER][:PASSWORD@]HOST[:PORT][/DB]`, or `rediss://` for \
            TLS (the server's certificate is checked against the system's roots, or the file \
            `SSL_CERT_FILE` names). \
            `${VAR}` is replaced by the environment variable `VAR` at start, as in a \
            credential's `value`: keep the password there \
            (`redis://:${TOOLHOST_REDIS_PASSWORD}@redis:6379/0`). A value put into the user or \
            password is percent-encoded by toolhost, so any generated password works as it is; \
            one written in the URL itself must be encoded by hand (`@` as `%40`, `/` as `%2F`, \
            `:` as `%3A`). A password written in the file itself works, with a warning at \
            start. Spending a state is an atomic set-if-absent there, remembered for the \
            state's remaining lifetime. A connection lost since its last use (Redis restarted) is \
            replaced and the spend tried once more. If Redis cannot be reached or refuses the \
            password, a confirmed retry gets a `TRANSIENT` tool error (retry later) saying only \
            that the replay store cannot be reached, and nothing is applied; the log says what \
            to fix (`Redis refused the credentials …; set the password it expects in \
            `state.replay``) and names the store by host and port, never with its URL or \
            password.",
    },
    Key {
        path: "components",
        default: Toml("[]"),
        range: None,
        restart_only: true,
        doc: "Top-level list of `oci://REGISTRY/REPOSITORY:TAG` or `…@sha256:DIGEST` \
            references, installed at `serve`, `list` and `call` (from the content store; the \
            registry only for what the store lacks). A tag is resolved once and recorded in \
            the lock file beside this file (`toolhost.toml` → `toolhost.lock`); `toolhost \
            update` resolves it again.",
    },
    Key {
        path: "oci.trusted_keys",
        default: Toml("[]"),
        range: None,
        restart_only: true,
        doc: "Public keys (PEM, P-256, as `cosign generate-key-pair` writes \
            `cosign.pub`) whose signatures are trusted for every OCI component. Relative paths \
            are relative to this file. A signature counts only for the repository it names \
            (its `docker-reference`), so a signed artifact copied into another repository is \
            refused there; write an entry as `{ path = \"mirror.pub\", any_repository = true }` \
            to accept that key's signatures in any repository (a mirror).",
    },
    Key {
        path: "oci.require_signature",
        default: Bool(true),
        range: None,
        restart_only: true,
        doc: "Refuse an OCI component unless a signature by a trusted key names \
            its manifest digest and the repository it is installed from.",
    },
    Key {
        path: "oci.max_manifest_bytes",
        // 4 MiB: the size registries must accept.
        default: Int(4 << 20),
        range: Some(Range::int(256, 64 << 20, "bytes")),
        restart_only: true,
        doc: "The largest manifest read from a registry; a larger one is refused before \
            (by its announced length) or while it is read, never read whole.",
    },
    Key {
        path: "oci.max_blob_bytes",
        default: Int(WASM_BYTES),
        range: Some(Range::int(1 << 10, 1 << 30, "bytes")),
        restart_only: true,
        doc: "The largest component layer read from a registry; a larger one is \
            refused before (by its descriptor) or while (by its bytes) it is read.",
    },
    Key {
        path: "oci.max_signatures",
        // cosign appends a layer per signing; 32 leaves room for re-signing.
        default: Int(32),
        range: Some(Range::int(1, 1024, "signatures")),
        restart_only: true,
        doc: "The most signatures one signature manifest (`sha256-…sig`) may hold; one \
            holding more is refused before any is fetched.",
    },
    Key {
        path: "oci.pull_timeout_secs",
        default: Int(300),
        range: Some(Range::int(5, 3600, "seconds")),
        restart_only: true,
        doc: "The longest one component's install from a registry may take in all (resolving \
            its tag, the manifest, the layer, the signatures), however its bytes trickle in; \
            past it that component is refused, naming this key, and the others install and \
            serve.",
    },
    Key {
        path: "oci.token_hosts",
        default: Toml("[]"),
        range: None,
        restart_only: true,
        doc: "Hosts (`host` or `host:port`), besides a registry's own, whose token service may \
            receive that registry's credentials when the registry names it as its `Bearer` \
            realm (e.g. `registry.gitlab.com` names `gitlab.com`). Docker Hub's \
            `auth.docker.io` is accepted for Docker Hub without it. Credentials go to a realm \
            only over https (plain http only on this machine); any other realm is refused and \
            nothing is sent.",
    },
    Key {
        path: "oci.store_dir",
        default: Prose("`~/.cache/toolhost-oci`"),
        range: None,
        restart_only: true,
        doc: "The content store: verified manifests, layers and signatures by \
            digest, private to the user.",
    },
    Key {
        path: "plugins.*.files",
        default: Toml("[\"NAME.wasm\"]"),
        range: None,
        restart_only: false,
        doc: "Glob patterns (`*`, `?`, `[…]`) over file names. One block can serve many \
            components, e.g. `[\"statuspro_*.wasm\"]`.",
    },
    Key {
        path: "plugins.*.config",
        default: Toml("{}"),
        range: None,
        restart_only: false,
        doc: "String values the plugin reads through the `config` import. Never put secrets \
            here: plugins can read every value.",
    },
    Key {
        path: "plugins.*.allow",
        default: Toml("[]"),
        range: None,
        restart_only: false,
        doc: "Destinations the plugin may reach (below). Empty means none.",
    },
    Key {
        path: "plugins.*.credentials",
        default: Toml("[]"),
        range: None,
        restart_only: false,
        doc: "Headers the host adds to requests for a destination (below).",
    },
    Key {
        path: "plugins.*.limits",
        default: Prose("see below"),
        range: None,
        restart_only: false,
        doc: "Resource limits.",
    },
    Key {
        path: "plugins.*.prefix",
        default: Prose("none"),
        range: None,
        restart_only: false,
        doc: "Serve the block's tools (and the prompts of its 0.2.0 components) as `PREFIX` + \
            separator + their own name, e.g. `prefix = \"statuspro\"` serves `list_orders` as \
            `statuspro.list_orders`. Resource URIs are not prefixed (a component's URI scheme \
            already names it). Clients, `toolhost call`, `[[access]]`-filtered lists, metrics \
            and logs use this *served* name; the component is still called with its own. \
            Tool-name ownership ([ADR 0009](adr/0009-tool-ownership-across-restarts.md)) goes \
            by served names, so two components that both define `search` coexist when one \
            block (or both) has a prefix. 1 to 126 characters of `A-Z a-z 0-9 _ . -`; a \
            component whose served name would pass MCP's 128 characters is refused at load, \
            naming this key.",
    },
    Key {
        path: "plugins.*.prefix_separator",
        default: Toml("\".\""),
        range: None,
        restart_only: false,
        doc: "Between the prefix and the tool's name: `\".\"`, `\"_\"` or `\"-\"` (MCP allows \
            nothing else in a name). Per block, beside its `prefix`; only with `prefix`.",
    },
    Key {
        path: "plugins.*.trusted_keys",
        default: Toml("[]"),
        range: None,
        restart_only: true,
        doc: "Public keys trusted for the OCI components installed as files this block \
            matches, besides `oci.trusted_keys`; entries as there (a path, or `{ path, \
            any_repository }`). Relative paths are relative to this file.",
    },
    Key {
        path: "plugins.*.require_signature",
        default: Prose("as `oci.require_signature`"),
        range: None,
        restart_only: true,
        doc: "Overrides `oci.require_signature` for the OCI components installed as files \
            this block matches, e.g. `false` for an unsigned internal component.",
    },
    Key {
        path: "plugins.*.allow.host",
        default: Required,
        range: None,
        restart_only: false,
        doc: "An exact name (`api.example.com`), a wildcard (`*.example.com`: any subdomain, \
            not the domain itself), or an IP address (`127.0.0.1`, `::1`).",
    },
    Key {
        path: "plugins.*.allow.port",
        default: Prose("the scheme's port"),
        range: None,
        restart_only: false,
        doc: "The only port allowed: a number, or `\"*\"` for any port. Without it, only the \
            URL scheme's own port is allowed (443 for `https`, 80 for `http`), so \
            `https://api.example.com:22/` does not pass a rule for `api.example.com`. A local \
            service on another port (a sandbox on a loopback port) needs its port here.",
    },
    Key {
        path: "plugins.*.allow.methods",
        default: Prose("all"),
        range: None,
        restart_only: false,
        doc: "Allowed methods, e.g. `[\"GET\"]`.",
    },
    Key {
        path: "plugins.*.allow.paths",
        default: Prose("all"),
        range: None,
        restart_only: false,
        doc: "Path patterns the entry allows, e.g. `[\"/api/v1/orders*\", \"/health\"]`. `*` \
            matches any run of characters, `/` included, so a trailing `*` is a prefix match; \
            without `*` the path must be exactly that. Matched, case-sensitively, against the \
            path as the server reads it: percent-decoded, `.` and `..` segments resolved. A \
            path that decoding would turn into a dot segment (`%2e%2e`, `%2F..`, `..;`) or \
            that holds a backslash is refused. The query string is not part of the path.",
    },
    Key {
        path: "plugins.*.allow.allow_private",
        default: Bool(false),
        range: None,
        restart_only: false,
        doc: "Let this name resolve to a loopback, private, link-local or shared address, for \
            the requests this entry covers (its port, methods and paths). Without it, a name \
            that resolves to one is refused, even when another entry for the same name allows \
            it on another port. An IP-address `host` allows that address by itself.",
    },
    Key {
        path: "plugins.*.credentials.host",
        default: Required,
        range: None,
        restart_only: false,
        doc: "The destination, matched like `allow.host`.",
    },
    Key {
        path: "plugins.*.credentials.port",
        default: Toml("443"),
        range: None,
        restart_only: false,
        doc: "The destination's port: a number, or `\"*\"` for any port. A request to another \
            port of the host goes without this header. A credential whose host and port no \
            `allow` rule covers would never be sent: toolhost warns about it at start and on \
            each reload (often a rule with a `port` and a credential without one).",
    },
    Key {
        path: "plugins.*.credentials.header",
        default: Required,
        range: None,
        restart_only: false,
        doc: "The header to set, e.g. `Authorization`. It replaces any header of that name the \
            plugin sent.",
    },
    Key {
        path: "plugins.*.credentials.value",
        default: Prose("—"),
        range: None,
        restart_only: false,
        doc: "The value. `${VAR}` is replaced by the environment variable `VAR` at start; a \
            missing variable is an error naming it.",
    },
    Key {
        path: "plugins.*.credentials.value_file",
        default: Prose("—"),
        range: None,
        restart_only: false,
        doc: "Read the value from this file instead (one trailing newline dropped).",
    },
    Key {
        path: "plugins.*.limits.memory_mib",
        default: Int(64),
        // Up to 4 GiB, wasm32's whole address space; the shift to bytes
        // cannot wrap.
        range: Some(Range::int(1, 4096, "MiB")),
        restart_only: false,
        doc: "Linear memory per instance, all of its memories together. Also the most data one \
            host call may copy out of the instance (strings and lists it passes to an import).",
    },
    Key {
        path: "plugins.*.limits.call_timeout_secs",
        default: Float(30.0),
        range: Some(Range::float(0.001, 86_400.0, "seconds")),
        restart_only: false,
        doc: "Wall-clock deadline of one call, enforced with epoch interruption. Time spent \
            waiting for the user's confirmation does not count.",
    },
    Key {
        path: "plugins.*.limits.output_bytes",
        default: Int(1 << 20),
        range: Some(Range::int(1, 1 << 30, "bytes")),
        restart_only: false,
        doc: "Largest tool output. A tool error's `message` and `hint` are cut to fit it \
            together; a longer confirmation question ends the call unasked.",
    },
    Key {
        path: "plugins.*.limits.http_body_bytes",
        default: Int(8 << 20),
        range: Some(Range::int(1, 1 << 30, "bytes")),
        restart_only: false,
        doc: "Largest HTTP response body.",
    },
    Key {
        path: "plugins.*.limits.http_timeout_secs",
        default: Float(10.0),
        range: Some(Range::float(0.001, 86_400.0, "seconds")),
        restart_only: false,
        doc: "Timeout of one HTTP request (a plugin may ask for less).",
    },
    Key {
        path: "plugins.*.limits.http_requests_per_call",
        default: Int(200),
        range: Some(Range::int(0, 100_000, "requests").min_means("no HTTP")),
        restart_only: false,
        doc: "HTTP requests one call may make; redirect hops count.",
    },
    Key {
        path: "plugins.*.limits.concurrent_calls",
        default: Int(16),
        range: Some(Range::int(1, 1024, "calls")),
        restart_only: false,
        doc: "Calls of this block's tools running at once, across all the files the block \
            matches; more wait. A call waiting for the user's answer gives its turn back. Also \
            the most calls of the block that may wait for users at once (host-wide at most 64, \
            half the instance pool); a call past either is told to retry (`TRANSIENT`).",
    },
    Key {
        path: "plugins.*.limits.confirmations_per_call",
        default: Int(2),
        range: Some(Range::int(0, 100, "confirmations").min_means("never ask")),
        restart_only: false,
        doc: "Questions one call's tool may ask the user: its confirmations and its forms \
            (contract 0.3) together. Asking one more ends the call with a tool error naming \
            this key.",
    },
    Key {
        path: "plugins.*.limits.log_messages_per_call",
        default: Int(1000),
        range: Some(Range::int(0, 1_000_000, "messages").min_means("log nothing")),
        restart_only: false,
        doc: "Messages one call may write to the host's log through the `log` import. Further \
            messages are dropped, and one line at the end of the call says how many, naming \
            this key.",
    },
    Key {
        path: "plugins.*.limits.log_bytes_per_call",
        default: Int(256 << 10),
        range: Some(Range::int(0, 64 << 20, "bytes").min_means("log nothing")),
        restart_only: false,
        doc: "Bytes of log messages one call may write (after a message is cut at 4096 \
            characters and escaped); counted and reported like `log_messages_per_call`.",
    },
    Key {
        path: "plugins.*.limits.wasm_bytes",
        default: Int(WASM_BYTES),
        range: Some(Range::int(1, 4 << 30, "bytes")),
        restart_only: false,
        doc: "Largest component file; a larger one is not read.",
    },
    Key {
        path: "plugins.*.limits.compile_timeout_secs",
        default: Float(300.0),
        range: Some(Range::float(0.001, 86_400.0, "seconds")),
        restart_only: false,
        doc: "Longest compiling a component may take, in wall-clock time, from when it gets \
            its turn (two components compile per core at a time; the wait for a turn does not \
            count). Each compilation spreads over every core, and the machine may be shared, so \
            keep it generous: it is there to refuse a pathological component, not a slow start. \
            toolhost compiles in a child process per load: a compilation given up on is \
            discarded, not cached, and stopped when the load ends (ADR 0058).",
    },
    Key {
        path: "plugins.*.limits.tools_per_component",
        default: Int(256),
        range: Some(Range::int(1, 100_000, "tools")),
        restart_only: false,
        doc: "Most tools one component may list.",
    },
    Key {
        path: "plugins.*.limits.definition_bytes",
        default: Int(64 << 10),
        range: Some(Range::int(1, 64 << 20, "bytes")),
        restart_only: false,
        doc: "Largest tool definition: name, title, description and both schemas together.",
    },
    Key {
        path: "plugins.*.limits.schema_bytes",
        default: Int(32 << 10),
        range: Some(Range::int(1, 64 << 20, "bytes")),
        restart_only: false,
        doc: "Largest input or output schema.",
    },
    Key {
        path: "auth.resource",
        default: Required,
        range: None,
        restart_only: true,
        doc: "This server's resource URI as clients address it, e.g. \
            `\"https://mcp.example.com/mcp\"`: the audience (`aud`) every access token must \
            name (RFC 8707), and the `resource` of the metadata at \
            `/.well-known/oauth-protected-resource`. No user name or password (the metadata \
            publishes it).",
    },
    Key {
        path: "auth.metrics_scope",
        default: Toml("\"toolhost:metrics\""),
        range: None,
        restart_only: true,
        doc: "The scope a caller's token must grant to read `GET /metrics` on the MCP \
            listener (a static token's `scopes`, a JWT's `scope`); other callers get 403. \
            Metrics name every tool and plugin and count every caller's use. A separate \
            `host.metrics` listener is not affected.",
    },
    Key {
        path: "auth.oauth",
        default: Prose("none"),
        range: None,
        restart_only: true,
        doc: "Accept JWT access tokens from one issuer (below).",
    },
    Key {
        path: "auth.tokens",
        default: Toml("[]"),
        range: None,
        restart_only: true,
        doc: "Static bearer tokens (below). At least one of `oauth` and `tokens` is required.",
    },
    Key {
        path: "auth.oauth.issuer",
        default: Required,
        range: None,
        restart_only: true,
        doc: "The authorization server: the required `iss` claim, and the \
            `authorization_servers` entry of the metadata.",
    },
    Key {
        path: "auth.oauth.jwks_url",
        default: Required,
        range: None,
        restart_only: true,
        doc: "The issuer's key set (JWKS). `https`; plain `http` only to a loopback address; \
            no user name or password. Errors and the log show it without user name, password \
            and query.",
    },
    Key {
        path: "auth.oauth.algorithms",
        default: Toml("[\"RS256\", \"ES256\"]"),
        range: None,
        restart_only: true,
        doc: "Signature algorithms accepted: `RS256`, `RS384`, `RS512`, `PS256`, `PS384`, \
            `PS512`, `ES256`, `ES384`, `EdDSA`. `none` and `HS*` are refused.",
    },
    Key {
        path: "auth.oauth.scopes",
        default: Toml("[]"),
        range: None,
        restart_only: true,
        doc: "Scopes every token must grant (`scope` claim, space-separated, or `scp` array); \
            without them the answer is 403 `insufficient_scope`.",
    },
    Key {
        path: "auth.oauth.jwks_refresh_secs",
        default: Int(300),
        range: Some(Range::int(60, 86_400, "seconds")),
        restart_only: true,
        doc: "How long fetched keys are used before they are fetched again.",
    },
    Key {
        path: "auth.oauth.jwks_refetch_min_secs",
        default: Int(10),
        range: Some(Range::int(0, 3600, "seconds")),
        restart_only: true,
        doc: "A token naming a key id the set lacks causes one early refetch (key rotation); \
            such refetches are at least this far apart. `0` refetches for every unknown key \
            id.",
    },
    Key {
        path: "auth.oauth.leeway_secs",
        default: Int(30),
        range: Some(Range::int(0, 300, "seconds")),
        restart_only: true,
        doc: "Clock skew allowed on `exp` and `nbf`.",
    },
    Key {
        path: "auth.oauth.require_at_jwt",
        default: Bool(false),
        range: None,
        restart_only: true,
        doc: "Accept only tokens whose header `typ` is `at+jwt` (RFC 9068 access tokens). Off: \
            `at+jwt`, `JWT` and no `typ` pass; any other `typ` (`dpop+jwt`, `logout+jwt` …) is \
            refused either way.",
    },
    Key {
        path: "auth.tokens.subject",
        default: Required,
        range: None,
        restart_only: true,
        doc: "The identity the token establishes (for `[[access]]` and the log).",
    },
    Key {
        path: "auth.tokens.sha256",
        default: Prose("—"),
        range: None,
        restart_only: true,
        doc: "The token's SHA-256, 64 hex digits (`printf %s \"$TOKEN\" \\| sha256sum`).",
    },
    Key {
        path: "auth.tokens.file",
        default: Prose("—"),
        range: None,
        restart_only: true,
        doc: "Read the token from this file when starting (trailing newline dropped); only its \
            hash is kept.",
    },
    Key {
        path: "auth.tokens.env",
        default: Prose("—"),
        range: None,
        restart_only: true,
        doc: "Read the token from this environment variable when starting; only its hash is \
            kept.",
    },
    Key {
        path: "auth.tokens.scopes",
        default: Toml("[]"),
        range: None,
        restart_only: true,
        doc: "Scopes the token grants (for `[[access]]` rules).",
    },
    Key {
        path: "access.source",
        default: Prose("the one kind `[auth]` accepts; required when it accepts both"),
        range: None,
        restart_only: false,
        doc: "Which kind of caller `subjects` names: `\"token\"` (static tokens, \
            `[[auth.tokens]]`) or `\"jwt\"` (access tokens from `[auth.oauth]`). The two are \
            separate namespaces: a JWT whose `sub` is `alice` is not the static token named \
            `alice`, and gets none of its grants, sessions or confirmation states. Scopes match \
            whatever the source.",
    },
    Key {
        path: "access.subjects",
        default: Toml("[]"),
        range: None,
        restart_only: false,
        doc: "The rule matches callers of its `source` with one of these subjects (a JWT's \
            `sub`, a static token's `subject`).",
    },
    Key {
        path: "access.scopes",
        default: Toml("[]"),
        range: None,
        restart_only: false,
        doc: "The rule matches callers holding any one of these scopes. At least one of \
            `subjects` and `scopes` is required.",
    },
    Key {
        path: "access.plugins",
        default: Required,
        range: None,
        restart_only: false,
        doc: "Plugin block names (`[plugins.NAME]`; for a file no block covers, its name \
            without `.wasm`), or `\"*\"` for all.",
    },
    Key {
        path: "profiles.name",
        default: Required,
        range: None,
        restart_only: false,
        doc: "The profile's name, 1 to 64 of `a-z 0-9 - _`: served at `/mcp/NAME` on the HTTP \
            listener, and on stdio by `toolhost serve --profile NAME` (docs/catalogs.md).",
    },
    Key {
        path: "profiles.tools",
        default: Prose("none"),
        range: None,
        restart_only: false,
        doc: "Tools, in the order listed: a served name, or `BLOCK/TOOL` (the `[plugins.BLOCK]` \
            block and the component's own name), which stays served when another plugin offering \
            the same name arrives. A tool not served is left out.",
    },
    Key {
        path: "profiles.select",
        default: Prose("none"),
        range: None,
        restart_only: false,
        doc: "A CEL condition over `plugin`, `tool`, `resource` and `prompt` picking more tools \
            (after `tools`, by name), resources and prompts, e.g. `plugin.name == \"katana\" && \
            tool.annotations.readOnlyHint`.",
    },
    Key {
        path: "profiles.resources",
        default: Prose("none"),
        range: None,
        restart_only: false,
        doc: "Resource URIs and resource URI templates the profile serves.",
    },
    Key {
        path: "profiles.prompts",
        default: Prose("none"),
        range: None,
        restart_only: false,
        doc: "Prompts (served names) the profile serves.",
    },
    Key {
        path: "profiles.hide",
        default: Prose("none"),
        range: None,
        restart_only: false,
        doc: "The profile's own access rule: a CEL condition (as a hide rule's, over `identity`, \
            `plugin`, `tool`, `resource`, `prompt`, `now`) hiding what it holds from a caller, \
            after `[[access]]` and the hide rules of `[[policy.rules]]`.",
    },
    Key {
        path: "profiles.discovery",
        default: Bool(false),
        range: None,
        restart_only: false,
        doc: "List the meta-tools `find_tools`, `describe_tool` and `call_tool` instead of the \
            profile's tools: the model finds a tool by a query (BM25 over names, titles, \
            descriptions and parameters) and calls it through `call_tool` or by its name, or \
            enables it into its session's list (`describe_tool` with `enable`).",
    },
    Key {
        path: "profiles.tool.*.as",
        default: Prose("the served name"),
        range: None,
        restart_only: false,
        doc: "`[profiles.tool.ENTRY]` (ENTRY as written in `tools`, or a selected tool's served \
            name): the name the profile serves it under. Rules and the audit trail still see the \
            served name.",
    },
    Key {
        path: "profiles.tool.*.title",
        default: Prose("the tool's"),
        range: None,
        restart_only: false,
        doc: "The title the profile shows for the tool.",
    },
    Key {
        path: "profiles.tool.*.description",
        default: Prose("the tool's"),
        range: None,
        restart_only: false,
        doc: "The description the profile shows for the tool.",
    },
    Key {
        path: "profiles.resource.*.as",
        default: Prose("the resource's URI"),
        range: None,
        restart_only: false,
        doc: "`[profiles.resource.\"URI\"]` (URI as written in `resources`, or a selected \
            resource's): the URI the profile serves it at, in lists, reads, subscriptions and \
            their updates; the original URI is unknown through the profile. Rules and the audit \
            trail still see the original. A URI template cannot be renamed.",
    },
    Key {
        path: "profiles.resource.*.title",
        default: Prose("the resource's"),
        range: None,
        restart_only: false,
        doc: "The title the profile shows for the resource.",
    },
    Key {
        path: "profiles.resource.*.description",
        default: Prose("the resource's"),
        range: None,
        restart_only: false,
        doc: "The description the profile shows for the resource.",
    },
    Key {
        path: "profiles.prompt.*.as",
        default: Prose("the served name"),
        range: None,
        restart_only: false,
        doc: "`[profiles.prompt.NAME]` (NAME as written in `prompts`, or a selected prompt's \
            served name): the name the profile serves it under, in lists, gets and completion; \
            the original name is unknown through the profile. Rules and the audit trail still \
            see the original.",
    },
    Key {
        path: "profiles.prompt.*.title",
        default: Prose("the prompt's"),
        range: None,
        restart_only: false,
        doc: "The title the profile shows for the prompt.",
    },
    Key {
        path: "profiles.prompt.*.description",
        default: Prose("the prompt's"),
        range: None,
        restart_only: false,
        doc: "The description the profile shows for the prompt.",
    },
    Key {
        path: "policy.rules.name",
        default: Required,
        range: None,
        restart_only: false,
        doc: "The rule's name, unique: the audit trail (`policy.rule`), the metrics \
            (`toolhost_policy_decisions_total{rule}`) and `toolhost policy test` say which rule \
            decided. `access` and `default` are reserved.",
    },
    Key {
        path: "policy.rules.when",
        default: Prose("always"),
        range: None,
        restart_only: false,
        doc: "A CEL condition over `identity`, `request`, `plugin`, `tool`, `resource`, \
            `prompt`, `args` and `now` (docs/policy.md). Compiled at load: one that does not \
            compile, reads an unknown name, or is past the cost bounds refuses the file with its \
            line and column. One that cannot be evaluated for a request (a missing claim) fails \
            closed. A `hide` rule may not read `args` or `request`.",
    },
    Key {
        path: "policy.rules.outcome",
        default: Required,
        range: None,
        restart_only: false,
        doc: "`\"hide\"` (unknown to the caller everywhere), `\"deny\"` (refused with \
            `reason`), `\"confirm\"` (the host asks the user before the tool runs), `\"limit\"` \
            (counted; refused past the budget) or `\"allow\"`. Hide rules apply first; then the \
            first allow, deny or confirm rule that holds decides; limit rules count and go on.",
    },
    Key {
        path: "policy.rules.reason",
        default: Prose("\"refused by the operator's policy (rule NAME)\""),
        range: None,
        restart_only: false,
        doc: "For `deny`: what the caller is told.",
    },
    Key {
        path: "policy.rules.limit.count",
        default: Required,
        range: None,
        restart_only: false,
        doc: "For `limit`: requests allowed per window and key, at least 1.",
    },
    Key {
        path: "policy.rules.limit.window_secs",
        default: Required,
        range: None,
        restart_only: false,
        doc: "For `limit`: the window, 1 to 86400 seconds. Windows are fixed (aligned to the \
            epoch), so replicas agree on them; with `state.replay` the count is kept in Redis and \
            shared by every replica.",
    },
    Key {
        path: "policy.rules.limit.key",
        default: Prose("the caller and the target"),
        range: None,
        restart_only: false,
        doc: "For `limit`: a CEL expression giving what requests are counted by, e.g. \
            `identity.key + \"/\" + tool.name`.",
    },
    Key {
        path: "policy.rules.approve.approver",
        default: Required,
        range: None,
        restart_only: false,
        doc: "For `approve`: who may decide, a CEL condition over `approver` (the person \
            signed in on the approval page, shaped like `identity`), `identity` (the caller) and \
            `now`, e.g. `\"support\" in approver.claims.groups`. One that cannot be evaluated \
            for an approver (a missing claim) admits nobody.",
    },
    Key {
        path: "policy.rules.approve.self_approval",
        default: Toml("false"),
        range: None,
        restart_only: false,
        doc: "For `approve`: whether the caller may approve its own call. Off, an approver \
            with the caller's identity is refused whatever the condition says.",
    },
    Key {
        path: "policy.rules.approve.expires_secs",
        default: Toml("3600"),
        range: None,
        restart_only: false,
        doc: "For `approve`: 1 to 604800 seconds. A request for approval not decided within it \
            lapses, and an approval not used within it from the call that asked cannot be used.",
    },
    Key {
        path: "approvals.url",
        default: Prose("the HTTP listener's own `/approvals`"),
        range: None,
        restart_only: false,
        doc: "Where approvers find the approval page, as callers are told it (the address \
            behind the load balancer, e.g. `https://tools.example.com/approvals`). Needed when \
            the page is not served on this process's own listener (a stdio `serve`).",
    },
    Key {
        path: "approvals.task_lease_secs",
        default: Int(30),
        range: Some(Range::int(3, 3600, "seconds")),
        restart_only: false,
        doc: "A task's call (an approved call a client follows with `tasks/get`) runs on one \
            replica, which renews its hold on the task every quarter of this. Should the replica \
            die mid-run, the hold lapses and the next `tasks/get` on any replica reports the \
            task `failed`, saying the call may have changed something before it stopped \
            (the audit trail's `intent` records say what). Longer: fewer writes to \
            `state.replay`; shorter: a lost run is reported sooner.",
    },
    Key {
        path: "approvals.pending_per_caller",
        default: Int(50),
        range: Some(Range::int(1, 100_000, "approvals")),
        restart_only: false,
        doc: "Approvals one caller identity may have waiting at once (one per tool: a call \
            of the same tool with other arguments replaces the one that waits). Past it, a call that would ask for another is \
            refused with `APPROVAL_LIMIT`, naming the approvals that wait, until an approver \
            decides one or one lapses: a caller cannot fill the approvers' page or the \
            approvals store.",
    },
    Key {
        path: "approvals.oauth.client_id",
        default: Required,
        range: None,
        restart_only: false,
        doc: "With `[approvals.oauth]`, approvers sign in on the page through the identity \
            provider that `[auth.oauth]` trusts (authorization code with PKCE; toolhost is a \
            public client, with no secret). The client id registered there; its redirect URI \
            is the page's `/approvals/callback` (under `approvals.url` when set). Needs \
            `[auth.oauth]`: the access token that comes back is verified as `/mcp` verifies \
            tokens, with `auth.resource` as its audience (asked for with RFC 8707's `resource`).",
    },
    Key {
        path: "approvals.oauth.authorization_endpoint",
        default: Required,
        range: None,
        restart_only: false,
        doc: "The provider's authorization endpoint (from its metadata).",
    },
    Key {
        path: "approvals.oauth.token_endpoint",
        default: Required,
        range: None,
        restart_only: false,
        doc: "The provider's token endpoint (from its metadata).",
    },
    Key {
        path: "approvals.oauth.scopes",
        default: Prose("`auth.oauth.scopes`"),
        range: None,
        restart_only: false,
        doc: "The scopes asked for at sign-in.",
    },
    Key {
        path: "token_exchange.*.token_endpoint",
        default: Required,
        range: None,
        restart_only: false,
        doc: "An OAuth 2.0 Token Exchange (RFC 8693) a `credentials` value uses as \
            `${exchange:NAME}` (e.g. `value = \"Bearer ${exchange:statuspro}\"`): at each call the \
            caller's own access token (HTTP with `[auth]`) is exchanged here for one meant for the \
            upstream, cached until 30 s before it expires. https, or http to a loopback address \
            only (callers' tokens are sent there). A caller without a token, or one the provider \
            refuses, gets no credential: nothing is sent where it applies, and the call says so.",
    },
    Key {
        path: "token_exchange.*.client_id",
        default: Required,
        range: None,
        restart_only: false,
        doc: "toolhost's client id at the provider.",
    },
    Key {
        path: "token_exchange.*.client_secret_env",
        default: Prose("none: a public client"),
        range: None,
        restart_only: false,
        doc: "The environment variable holding the client's secret, sent with HTTP Basic \
            authentication; read at load.",
    },
    Key {
        path: "token_exchange.*.audience",
        default: Prose("none"),
        range: None,
        restart_only: false,
        doc: "RFC 8693 `audience`: the upstream the token is for. `audience` or `resource` is \
            required, so the token issued serves that upstream and nothing else.",
    },
    Key {
        path: "token_exchange.*.resource",
        default: Prose("none"),
        range: None,
        restart_only: false,
        doc: "RFC 8693 `resource` (an absolute URI of the upstream).",
    },
    Key {
        path: "token_exchange.*.scope",
        default: Prose("none"),
        range: None,
        restart_only: false,
        doc: "Space-separated scopes asked for.",
    },
    Key {
        path: "telemetry.endpoint",
        default: Prose("none: no traces"),
        range: None,
        restart_only: true,
        doc: "The OTLP collector spans are sent to ([observability.md](observability.md)): \
            `http://HOST:4318` for `http/protobuf` (a bare origin gets `/v1/traces`; a path \
            written is kept), `http://HOST:4317` for `grpc`. No credentials in it: use \
            `headers`. A collector that is down or slow costs dropped spans, never a call.",
    },
    Key {
        path: "telemetry.protocol",
        default: Toml("\"http/protobuf\""),
        range: None,
        restart_only: true,
        doc: "`\"http/protobuf\"` (over https too) or `\"grpc\"` (plain text, for a \
            collector beside the host).",
    },
    Key {
        path: "telemetry.headers",
        default: Toml("{}"),
        range: None,
        restart_only: true,
        doc: "Headers sent with every export, each naming the environment variable that holds \
            its value (`{ authorization = \"OTLP_AUTH\" }`): read at start, never written in \
            the file or shown in an error. An unset variable stops the start, naming it.",
    },
    Key {
        path: "telemetry.sampling_ratio",
        default: Float(1.0),
        range: Some(Range::float(0.0, 1.0, "share of traces")),
        restart_only: true,
        doc: "The share of traces that start here (no sampled `traceparent` from the client) \
            which are recorded. A client's sampled parent is always followed, so a trace a client \
            started is whole.",
    },
    Key {
        path: "telemetry.service_name",
        default: Toml("\"toolhost\""),
        range: None,
        restart_only: true,
        doc: "The `service.name` of every span.",
    },
    Key {
        path: "telemetry.queue_spans",
        default: Int(4096),
        range: Some(Range::int(1, 1_000_000, "spans")),
        restart_only: true,
        doc: "Finished spans waiting for export at most. A span that finds the queue full is \
            dropped, never waited for, and counted in `toolhost_trace_spans_dropped_total`.",
    },
    Key {
        path: "telemetry.export_timeout_secs",
        default: Float(5.0),
        range: Some(Range::float(0.1, 60.0, "seconds")),
        restart_only: true,
        doc: "How long one export may take; the spans of an export that fails or times out \
            are dropped and counted.",
    },
    Key {
        path: "plugins.*.propagate_trace_context",
        default: Bool(false),
        range: None,
        restart_only: false,
        doc: "Send W3C `traceparent` (and `tracestate`) on this plugin's upstream requests, \
            so the upstream's own traces join the call's. Off by default: the header tells a \
            third-party host which trace and request it serves, and links its logs to yours \
            ([ADR 0039](adr/0039-traces-and-call-cost.md)).",
    },
    Key {
        path: "plugins.*.log_to_client",
        default: Toml("\"off\""),
        range: None,
        restart_only: false,
        doc: "The least severe of this plugin's `log` messages (`\"trace\"`, `\"debug\"`, \
            `\"info\"`, `\"warn\"`, `\"error\"`) that also go to the client making the call, \
            as MCP `notifications/message` (logger: the block's name), when at or above the \
            level the client asked for (`logging/setLevel`, or a 2026-07-28 request's \
            `logLevel`); `\"off\"`: the operator's log alone. Opt in only for components \
            whose messages the callers may read \
            ([ADR 0046](adr/0046-component-log-to-the-client.md)).",
    },
];
