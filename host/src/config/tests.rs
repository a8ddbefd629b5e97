//! The unit tests of `toolhost.toml`'s parsing and resolution.

use super::resolve::has_literal_password;
use super::*;

#[test]
fn unmatched_files_are_served_unless_the_config_says_skip() {
    let serve = Config::parse("[plugins.hello]\n").unwrap();
    assert!(serve.serves("hello.wasm") && serve.serves("other.wasm"));
    assert!(Config::default().serves("other.wasm"));

    let skip = Config::parse(
        "components = [\"oci://127.0.0.1:5000/tools/wordcount:1.0\"]\n\
         [host]\nunmatched_files = \"skip\"\n\
         [plugins.sp]\nfiles = [\"statuspro_*.wasm\"]\n",
    )
    .unwrap();
    assert!(skip.serves("statuspro_list_orders.wasm"));
    assert!(skip.serves("wordcount.wasm"), "named in `components`");
    assert!(!skip.serves("other.wasm"));

    let err = Config::parse("[host]\nunmatched_files = \"drop\"\n").unwrap_err();
    assert!(format!("{err:#}").contains("unknown variant"), "{err:#}");
}

#[test]
fn loads_compile_in_this_programs_worker_within_the_configured_memory() {
    let worker_args = |config: &Config| match config.compile_worker().unwrap() {
        crate::compiler::CompileIn::ChildProcess { args, .. } => args,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        worker_args(&Config::default()),
        ["compile-worker", "--memory-mib", "4096"],
        "4 GiB unless the config says otherwise"
    );
    let config = Config::parse("[host]\ncompile_memory_mib = 512\n").unwrap();
    assert_eq!(
        worker_args(&config),
        ["compile-worker", "--memory-mib", "512"]
    );
    let err = Config::parse("[host]\ncompile_memory_mib = 16\n").unwrap_err();
    assert!(
        format!("{err:#}").contains("host.compile_memory_mib"),
        "{err:#}"
    );
}

#[test]
fn defaults_apply_when_a_block_is_empty() {
    let c = Config::parse("[plugins.hello]\n").unwrap();
    let s = c.settings_for("hello.wasm");
    assert_eq!(s.name, "hello");
    assert_eq!(s.limits, default_limits());
    assert_eq!(c.settings_for("other.wasm").name, "other");
}

#[test]
fn one_block_serves_many_files() {
    let c = Config::parse(
        "[plugins.statuspro]\nfiles = [\"statuspro_*.wasm\"]\nconfig = { base_url = \"http://x\" }\n",
    )
    .unwrap();
    let s = c.settings_for("statuspro_list_orders.wasm");
    assert_eq!(s.name, "statuspro");
    assert_eq!(s.values["base_url"], "http://x");
    assert_eq!(c.settings_for("hello.wasm").name, "hello");
}

#[test]
fn credentials_read_the_environment_and_stay_redacted() {
    // SAFETY: tests in this module do not read this variable concurrently.
    unsafe { std::env::set_var("TOOLHOST_TEST_KEY_1", "s3cret") };
    let c = Config::parse(
        "[[plugins.p.credentials]]\nhost = \"api.example.com\"\nheader = \"Authorization\"\nvalue = \"Bearer ${TOOLHOST_TEST_KEY_1}\"\n",
    )
    .unwrap();
    let cred = &c.plugins[0].credentials[0];
    assert_eq!(cred.value, "Bearer s3cret");
    assert!(!format!("{cred:?}").contains("s3cret"));
}

#[test]
fn a_missing_variable_names_it() {
    let err = Config::parse(
        "[[plugins.p.credentials]]\nhost = \"a.b\"\nheader = \"X\"\nvalue = \"${TOOLHOST_TEST_SURELY_UNSET}\"\n",
    )
    .unwrap_err();
    assert!(
        format!("{err:#}").contains("TOOLHOST_TEST_SURELY_UNSET"),
        "{err:#}"
    );
}

/// An error's whole chain, as `main` prints it.
fn error_of(text: &str) -> String {
    format!("{:#}", Config::parse(text).unwrap_err())
}

#[test]
fn a_huge_timeout_is_refused_not_a_panic() {
    // `Duration::from_secs_f64(1e30)` panics; `Instant::now() + 1e15 s`
    // overflows. Both must be load errors naming the key and its range.
    for value in ["1e30", "1e15", "86400.5"] {
        let err = error_of(&format!(
            "[plugins.p.limits]\ncall_timeout_secs = {value}\n"
        ));
        assert!(
            err.contains("`limits.call_timeout_secs` must be between 0.001 and 86400 (seconds)"),
            "{err}"
        );
        assert!(err.contains("[plugins.p]"), "{err}");
    }
    let err = error_of(&format!(
        "[host]\nelicitation_timeout_secs = {}\n",
        i64::MAX
    ));
    assert!(
        err.contains("`host.elicitation_timeout_secs` must be between 1 and 86400 (seconds)"),
        "{err}"
    );
}

#[test]
fn a_memory_size_that_would_wrap_is_refused() {
    // 2^44 MiB << 20 wraps to 0 bytes, 2^44 + 1 to exactly 1 MiB.
    for mib in [1u64 << 44, (1 << 44) + 1, 4097] {
        let err = error_of(&format!("[plugins.p.limits]\nmemory_mib = {mib}\n"));
        assert!(
            err.contains("`limits.memory_mib` must be between 1 and 4096 (MiB)"),
            "{err}"
        );
    }
    let c = Config::parse("[plugins.p.limits]\nmemory_mib = 4096\n").unwrap();
    assert_eq!(c.plugins[0].limits.memory_bytes, 4 << 30);
}

#[test]
fn every_numeric_key_has_a_range() {
    // (key as written, a value below its range or absurd, a value in it)
    let cases = [
        ("host", "elicitation_timeout_secs", "0", "1"),
        ("host", "max_message_bytes", "100", "4096"),
        ("limits", "memory_mib", "0", "1"),
        ("limits", "call_timeout_secs", "0", "0.5"),
        ("limits", "call_timeout_secs", "-1", "86400"),
        ("limits", "call_timeout_secs", "nan", "30"),
        ("limits", "call_timeout_secs", "inf", "30"),
        ("limits", "output_bytes", "0", "1"),
        ("limits", "http_body_bytes", "0", "1073741824"),
        ("limits", "http_timeout_secs", "1e300", "0.001"),
        ("limits", "http_requests_per_call", "100001", "0"),
        ("limits", "concurrent_calls", "0", "1024"),
        ("limits", "confirmations_per_call", "101", "0"),
        ("limits", "log_messages_per_call", "1000001", "0"),
        ("limits", "log_bytes_per_call", "67108865", "0"),
    ];
    for (section, key, bad, good) in cases {
        let table = match section {
            "host" => "[host]",
            _ => "[plugins.p.limits]",
        };
        let err = error_of(&format!("{table}\n{key} = {bad}\n"));
        assert!(
            err.contains(&format!("`{section}.{key}` must be between")),
            "{key} = {bad}: {err}"
        );
        Config::parse(&format!("{table}\n{key} = {good}\n"))
            .unwrap_or_else(|e| panic!("{key} = {good} is refused: {e:#}"));
    }
}

#[test]
fn the_log_budget_and_message_size_have_defaults_and_keys() {
    let c = Config::parse(
        "[host]\nmax_message_bytes = 4096\n[plugins.p.limits]\nlog_messages_per_call = 5\nlog_bytes_per_call = 100\n",
    )
    .unwrap();
    assert_eq!(c.max_message_bytes, 4096);
    assert_eq!(c.plugins[0].limits.log_messages_per_call, 5);
    assert_eq!(c.plugins[0].limits.log_bytes_per_call, 100);
    let d = Config::default();
    assert_eq!(d.max_message_bytes, DEFAULT_MAX_MESSAGE_BYTES);
    assert_eq!(default_limits().log_messages_per_call, 1000);
}

#[test]
fn ports_are_numbers_or_a_star_and_default_to_the_schemes() {
    use reqwest::Url;
    let c = Config::parse(
        "[[plugins.p.allow]]\nhost = \"a.example\"\n\
         [[plugins.p.allow]]\nhost = \"b.example\"\nport = 8080\n\
         [[plugins.p.allow]]\nhost = \"c.example\"\nport = \"*\"\npaths = [\"/v1/*\"]\n",
    )
    .unwrap();
    let policy = &c.plugins[0].network;
    let allowed = |u: &str| policy.check("GET", &Url::parse(u).unwrap()).is_ok();
    assert!(allowed("https://a.example/"));
    assert!(!allowed("https://a.example:22/"));
    assert!(allowed("http://b.example:8080/"));
    assert!(!allowed("https://b.example/"));
    assert!(allowed("https://c.example:22/v1/x"));
    assert!(!allowed("https://c.example:22/v2/x"));
    for bad in ["\"any\"", "0", "70000", "-1"] {
        let err = Config::parse(&format!(
            "[[plugins.p.allow]]\nhost = \"a.example\"\nport = {bad}\n"
        ))
        .unwrap_err();
        assert!(
            format!("{err:#}").contains("\"*\" for any port"),
            "{bad}: {err:#}"
        );
    }
}

#[test]
fn loading_limits_are_read_and_zero_is_refused() {
    let c = Config::parse(
        "[plugins.p.limits]\ntools_per_component = 3\ndefinition_bytes = 100\nschema_bytes = 50\nwasm_bytes = 1000\ncompile_timeout_secs = 0.5\n",
    )
    .unwrap();
    let l = &c.plugins[0].limits;
    assert_eq!(
        (
            l.tools_per_component,
            l.definition_bytes,
            l.schema_bytes,
            l.wasm_bytes
        ),
        (3, 100, 50, 1000)
    );
    assert_eq!(l.compile_timeout, Duration::from_millis(500));
    let err = Config::parse("[plugins.p.limits]\ntools_per_component = 0\n").unwrap_err();
    assert!(
        format!("{err:#}").contains("limits.tools_per_component"),
        "{err:#}"
    );
}

#[test]
fn the_metrics_address_is_an_address_or_a_port_on_loopback() {
    let addr = |text: &str| Config::parse(&format!("[host]\nmetrics = {text:?}\n"));
    assert_eq!(Config::default().metrics, None);
    assert_eq!(
        addr("127.0.0.1:9464").unwrap().metrics,
        Some("127.0.0.1:9464".parse().unwrap())
    );
    assert_eq!(
        addr("9464").unwrap().metrics,
        Some("127.0.0.1:9464".parse().unwrap())
    );
    assert_eq!(
        addr("[::]:9464").unwrap().metrics,
        Some("[::]:9464".parse().unwrap())
    );
    for bad in ["localhost:9464", "127.0.0.1", "70000", ""] {
        let err = format!("{:#}", addr(bad).unwrap_err());
        assert!(err.contains("`host.metrics` must be"), "{bad}: {err}");
    }
}

#[test]
fn a_prefix_and_its_separator_make_the_served_name() {
    let c = Config::parse(
        "[plugins.a]\nprefix = \"shop\"\n[plugins.b]\nprefix = \"inv\"\nprefix_separator = \"_\"\n",
    )
    .unwrap();
    assert_eq!(
        served_name(&c.settings_for("a.wasm"), "search"),
        "shop.search"
    );
    assert_eq!(
        served_name(&c.settings_for("b.wasm"), "search"),
        "inv_search"
    );
    assert_eq!(served_name(&c.settings_for("c.wasm"), "search"), "search");
    let longest = "p".repeat(126);
    Config::parse(&format!("[plugins.a]\nprefix = \"{longest}\"\n")).unwrap();
    for (bad, says) in [
        (
            format!("prefix = \"{longest}p\""),
            "`prefix` must be 1 to 126 characters",
        ),
        ("prefix = \"a b\"".to_string(), "`prefix` must be"),
        ("prefix = \"\"".to_string(), "`prefix` must be"),
        (
            "prefix = \"a\"\nprefix_separator = \"::\"".to_string(),
            "`prefix_separator` must be",
        ),
        (
            "prefix_separator = \"-\"".to_string(),
            "`prefix_separator` is set without `prefix`",
        ),
    ] {
        let err = error_of(&format!("[plugins.a]\n{bad}\n"));
        assert!(
            err.contains(says) && err.contains("[plugins.a]"),
            "{bad}: {err}"
        );
    }
}

#[test]
fn a_toml_error_names_the_line_column_and_key_never_the_text() {
    let secret = "sk-live-0a1b2c3d";
    // A basic string left open on a credentials line.
    let err = error_of(&format!(
        "[host]\nconfirmation = \"deny\"\n[[plugins.web.credentials]]\nhost = \"a.b\"\n\
         header = \"Authorization\"\nvalue = \"Bearer {secret}\n"
    ));
    assert!(
        err.contains("line 6, column")
            && err.contains("(`value` in [[plugins.web.credentials]])")
            && err.contains("invalid basic string"),
        "{err}"
    );
    assert!(!err.contains(secret), "{err}");
    // A value of the wrong kind: its key path, not its text.
    let err = error_of(&format!(
        "[[plugins.web.allow]]\nhost = \"a.b\"\nport = \"{secret}\"\n"
    ));
    assert!(
        err.contains("line 3, column 8 (`plugins.web.allow.port`)"),
        "{err}"
    );
    assert!(err.contains("invalid value: a string"), "{err}");
    assert!(!err.contains(secret), "{err}");
    // An unclosed `${` is placed, not quoted.
    let err = error_of(&format!(
        "[[plugins.w.credentials]]\nhost = \"a.b\"\nheader = \"X\"\nvalue = \"{secret} ${{KEY\"\n"
    ));
    assert!(err.contains("`${` at character 18 is not closed"), "{err}");
    assert!(!err.contains(secret), "{err}");
}

#[test]
fn the_replay_url_reads_the_environment_and_stays_redacted() {
    // SAFETY: tests in this module do not read this variable concurrently.
    unsafe { std::env::set_var("TOOLHOST_TEST_REDIS_PASSWORD", "r3dis-pw") };
    let c = Config::parse(
        "[state]\nreplay = \"redis://:${TOOLHOST_TEST_REDIS_PASSWORD}@redis:6379/0\"\n",
    )
    .unwrap();
    let replay = c.state.replay.as_ref().unwrap();
    assert_eq!(replay.url, "redis://:r3dis-pw@redis:6379/0");
    assert!(!replay.literal_password);
    assert!(!format!("{c:?}").contains("r3dis-pw"));
    assert!(!format!("{replay:?}").contains("r3dis-pw"));

    for (url, literal) in [
        ("redis://:hunter2@redis:6379/0", true),
        ("redis://user:hunter2@redis/0", true),
        ("redis://:pre${TOOLHOST_TEST_REDIS_PASSWORD}@redis", true),
        ("redis://user@redis:6379", false),
        ("rediss://redis:6380/1", false),
        (
            "redis://:${TOOLHOST_TEST_REDIS_PASSWORD}@redis/0?protocol=resp3",
            false,
        ),
    ] {
        assert_eq!(has_literal_password(url), literal, "{url}");
    }

    // A value in the user information is percent-encoded; the rest of
    // the URL takes values as they are.
    // SAFETY: as above.
    unsafe {
        std::env::set_var("TOOLHOST_TEST_REDIS_ODD_PASSWORD", "p@ss/w:rd%?#ü");
        std::env::set_var("TOOLHOST_TEST_REDIS_HOST", "redis.internal:6380");
    }
    let c = Config::parse(
        "[state]\nreplay = \"redis://u:${TOOLHOST_TEST_REDIS_ODD_PASSWORD}@${TOOLHOST_TEST_REDIS_HOST}/0\"\n",
    )
    .unwrap();
    let url = &c.state.replay.as_ref().unwrap().url;
    assert_eq!(
        url,
        "redis://u:p%40ss%2Fw%3Ard%25%3F%23%C3%BC@redis.internal:6380/0"
    );
    let parsed = url::Url::parse(url).unwrap();
    assert_eq!(
        percent_encoding::percent_decode_str(parsed.password().unwrap())
            .decode_utf8()
            .unwrap(),
        "p@ss/w:rd%?#ü"
    );
    assert_eq!(parsed.host_str(), Some("redis.internal"));

    let err = error_of("[state]\nreplay = \"http://:hunter2@redis\"\n");
    assert!(err.contains("must be a redis:// or rediss:// URL"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    let err = error_of("[state]\nreplay = \"redis://:${TOOLHOST_TEST_SURELY_UNSET}@r\"\n");
    assert!(
        err.contains("`state.replay`") && err.contains("TOOLHOST_TEST_SURELY_UNSET"),
        "{err}"
    );
}

#[test]
fn shared_state_keys_need_a_shared_replay_store_or_local_said_explicitly() {
    // SAFETY: a variable of this test's own, set before it is read.
    let key = "k".repeat(40);
    unsafe { std::env::set_var("TOOLHOST_TEST_SHARED_STATE_KEY", &key) };
    let keys = "[[state.keys]]\nid = \"k1\"\nenv = \"TOOLHOST_TEST_SHARED_STATE_KEY\"\n";
    let err = error_of(&format!("[state]\n{keys}"));
    assert!(
        err.contains("`state.replay` is not")
            && err.contains("state.replay = \"local\"")
            && err.contains("every replica"),
        "{err}"
    );
    let local = Config::parse(&format!("[state]\nreplay = \"local\"\n{keys}")).unwrap();
    assert_eq!(local.state.keys.len(), 1);
    assert!(
        local.state.replay.is_none(),
        "local: spent states in this process"
    );
    let shared =
        Config::parse(&format!("[state]\nreplay = \"redis://redis:6379\"\n{keys}")).unwrap();
    assert!(shared.state.replay.is_some());
    // Without keys, each process seals with its own random key: no other
    // replica can open its states, so nothing needs saying.
    assert!(Config::parse("").unwrap().state.replay.is_none());
}

#[test]
fn unknown_keys_are_rejected() {
    let err = Config::parse("[plugins.p]\nalow = []\n").unwrap_err();
    assert!(format!("{err:#}").contains("alow"), "{err:#}");
}

#[test]
fn the_audit_keys_default_check_their_ranges_and_need_a_file() {
    assert_eq!(Config::parse("").unwrap().audit, None);
    let audit = Config::parse("[host]\naudit = \"audit.jsonl\"\n")
        .unwrap()
        .audit
        .unwrap();
    assert_eq!(
        (audit.arguments, audit.max_bytes, audit.keep),
        (false, 64 << 20, 5)
    );
    let err = Config::parse("[host]\naudit = \"a\"\naudit_max_bytes = 10\n").unwrap_err();
    assert!(
        format!("{err:#}").contains("`host.audit_max_bytes` must be between 4096"),
        "{err:#}"
    );
    let err = Config::parse("[host]\naudit_arguments = true\n").unwrap_err();
    assert!(format!("{err:#}").contains("need `host.audit`"), "{err:#}");

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("toolhost.toml");
    std::fs::write(&file, "[host]\naudit = \"logs/audit.jsonl\"\n").unwrap();
    let expected = dir.path().join("logs/audit.jsonl");
    assert_eq!(Config::load(&file).unwrap().audit.unwrap().path, expected);
    assert_eq!(Config::load_audit(&file).unwrap().unwrap().path, expected);
}

// The table of keys (`keys.rs`) against the code that reads the file.

use super::keys::{self, DefaultValue, KEYS, Number};

#[test]
fn every_path_is_one_key_and_every_name_one_range() {
    let mut paths: Vec<&str> = KEYS.iter().map(|k| k.path).collect();
    paths.sort();
    paths.dedup();
    assert_eq!(paths.len(), KEYS.len(), "a path is in the table twice");
    let mut names: Vec<&str> = KEYS
        .iter()
        .filter(|k| k.range.is_some())
        .map(|k| k.name())
        .collect();
    let ranged = names.len();
    names.sort();
    names.dedup();
    assert_eq!(
        names.len(),
        ranged,
        "two ranges would share a name in errors"
    );
}

#[test]
fn every_number_has_a_range_of_its_kind_that_holds_its_default() {
    for key in KEYS {
        let (default, range) = match (key.default, key.range) {
            (DefaultValue::Int(n), Some(range)) => (Number::Int(n), range),
            (DefaultValue::Float(x), Some(range)) => (Number::Float(x), range),
            (DefaultValue::Int(_) | DefaultValue::Float(_), None) => {
                panic!("`{}` is a number without a range", key.path)
            }
            (_, Some(_)) => panic!("`{}` has a range but no numeric default", key.path),
            (_, None) => continue,
        };
        let holds = match (range.min, default, range.max) {
            (Number::Int(min), Number::Int(d), Number::Int(max)) => min <= d && d <= max,
            (Number::Float(min), Number::Float(d), Number::Float(max)) => min <= d && d <= max,
            _ => panic!("`{}`: the default and range differ in kind", key.path),
        };
        assert!(holds, "`{}`: the default is outside its range", key.path);
        assert!(!range.unit.is_empty(), "`{}` has no unit", key.path);
    }
}

/// The TOML arrays of tables (`[[…]]`) among the tables of [`KEYS`].
const ARRAYS_OF_TABLES: [&str; 6] = [
    "profiles",
    "state.keys",
    "plugins.*.allow",
    "plugins.*.credentials",
    "auth.tokens",
    "access",
];

/// The header that opens `table` in a file, `*` written as the block `p`.
fn header(table: &str) -> String {
    let table = table.replace('*', "p");
    match table.as_str() {
        "" => String::new(),
        _ if ARRAYS_OF_TABLES.contains(&table.replace(".p.", ".*.").as_str()) => {
            format!("[[{table}]]\n")
        }
        _ => format!("[{table}]\n"),
    }
}

#[test]
fn every_key_is_one_the_file_has() {
    // A datetime is a value hardly any key takes: a key the file has
    // refuses it as the wrong type (or, `config`, takes it), one it lacks
    // as an unknown field.
    for key in KEYS {
        let text = format!(
            "{}{} = 1979-05-27T07:32:00Z\n",
            header(key.table()),
            key.field()
        );
        let err = Config::parse(&text).map_or_else(|e| format!("{e:#}"), |_| String::new());
        assert!(
            !err.contains(&format!("unknown field `{}`", key.field())),
            "`{}` is in the table but not in the file's structs: {err}",
            key.path
        );
    }
}

/// A file in which the keys of `key`'s table resolve: `{}` is where the
/// key's own line goes; the other keys a table requires are filled in.
fn file_around(key: &keys::Key) -> String {
    let oauth = "[auth.oauth]\nissuer = \"https://i\"\njwks_url = \"https://i/jwks\"\n";
    match key.table() {
        "" => "{}\n".to_string(),
        // The `audit_*` keys need `host.audit`.
        "host" => "[host]\naudit = \"a.jsonl\"\n{}\n".to_string(),
        // `prefix_separator` needs `prefix`.
        "plugins.*" => "[plugins.p]\nprefix = \"a\"\n{}\n".to_string(),
        "plugins.*.allow" => "[[plugins.p.allow]]\nhost = \"a.example\"\n{}\n".to_string(),
        "plugins.*.credentials" => "[[plugins.p.credentials]]\nhost = \"a.example\"\n\
             header = \"X\"\nvalue = \"v\"\n{}\n"
            .to_string(),
        "token_exchange.*" => "[token_exchange.x]\ntoken_endpoint = \"https://i/token\"\n\
             client_id = \"c\"\naudience = \"a\"\n{}\n"
            .to_string(),
        "policy.rules.approve" => "[[policy.rules]]\nname = \"r\"\noutcome = \"approve\"\n\
             [policy.rules.approve]\napprover = 'true'\n{}\n"
            .to_string(),
        "auth" => format!("[auth]\nresource = \"https://h/mcp\"\n{{}}\n{oauth}"),
        "auth.oauth" => format!("[auth]\nresource = \"https://h/mcp\"\n{oauth}{{}}\n"),
        "auth.tokens" => format!(
            "[auth]\nresource = \"https://h/mcp\"\n[[auth.tokens]]\nsubject = \"s\"\n\
             sha256 = \"{}\"\n{{}}\n",
            "0".repeat(64)
        ),
        // A rule names callers by subject or by scope.
        "access" if key.field() == "subjects" => {
            "[[access]]\nplugins = [\"*\"]\nscopes = [\"x\"]\n{}\n".to_string()
        }
        "access" => "[[access]]\nplugins = [\"*\"]\nsubjects = [\"s\"]\n{}\n".to_string(),
        "profiles" => "[[profiles]]\nname = \"p\"\n{}\n".to_string(),
        "profiles.tool.*" => {
            "[[profiles]]\nname = \"p\"\ntools = [\"t\"]\n[profiles.tool.t]\n{}\n".to_string()
        }
        table => format!("{}{{}}\n", header(table)),
    }
}

#[test]
fn writing_a_default_out_changes_nothing() {
    // Numbers and booleans are read from the table; a `Toml` default is
    // serde's or resolution's own, and this is where the two are held to
    // the same value.
    for key in KEYS {
        let value = match key.default {
            DefaultValue::Int(n) => n.to_string(),
            DefaultValue::Float(x) => format!("{x:?}"),
            DefaultValue::Bool(b) => b.to_string(),
            // `files`: the block's own name.
            DefaultValue::Toml(value) => value.replace("NAME", "p"),
            DefaultValue::Prose(_) | DefaultValue::Required => continue,
        };
        let around = file_around(key);
        let absent = Config::parse(&around.replace("{}", ""))
            .unwrap_or_else(|e| panic!("`{}`: {e:#}", key.path));
        let written = around.replace("{}", &format!("{} = {value}", key.field()));
        let present = Config::parse(&written).unwrap_or_else(|e| panic!("`{}`: {e:#}", key.path));
        assert_eq!(
            format!("{present:?}"),
            format!("{absent:?}"),
            "`{}`: writing the table's default `{value}` changes the configuration",
            key.path
        );
    }
}

#[test]
fn every_range_is_checked_and_named_as_the_table_says() {
    // One past the top of each range, through resolution: a key read with
    // another key's row would be named wrong here.
    for key in KEYS {
        let Some(range) = key.range else { continue };
        let past = match range.max {
            Number::Int(max) => (max + 1).to_string(),
            Number::Float(max) => format!("{:?}", max * 2.0 + 1.0),
        };
        let around = file_around(key);
        let err = error_of(&around.replace("{}", &format!("{} = {past}", key.field())));
        let says = format!(
            "`{}` must be between {} and {} ({}), not",
            key.name(),
            range.min,
            range.max,
            range.unit
        );
        assert!(err.contains(&says), "`{}`: {err}", key.path);
    }
}

#[test]
fn restart_only_settings_are_whole_tables_or_their_own_keys() {
    // Config reload reads each setting as `table`, `table.key`, or
    // `table.*.key` (the key of every block of the table).
    for (table, key) in keys::restart_only_settings() {
        assert!(!table.contains('.'), "{table}");
        let own = |k: &str| k.strip_prefix("*.").unwrap_or(k).to_string();
        assert!(key.is_none_or(|k| !own(k).contains('.')), "{table}.{key:?}");
    }
    let settings = keys::restart_only_settings();
    for (table, key) in [
        ("host", Some("http")),
        ("auth", None),
        ("components", None),
        ("plugins", Some("*.trusted_keys")),
        ("plugins", Some("*.require_signature")),
    ] {
        assert!(settings.contains(&(table, key)), "{settings:?}");
    }
    // Of the blocks, only their trust waits for a restart.
    assert!(!settings.iter().any(|(t, k)| {
        *t == "access"
            || (*t == "plugins"
                && !k.is_some_and(|k| {
                    k.ends_with("trusted_keys") || k.ends_with("require_signature")
                }))
    }));
}

#[test]
fn the_doc_regions_are_all_there_once_and_known() {
    let err = keys::regenerate("").unwrap_err();
    assert!(err.contains("no region for `host`"), "{err}");
    let err = keys::regenerate("<!-- config-docs:hosts -->\n<!-- /config-docs -->\n").unwrap_err();
    assert!(err.contains("`hosts`"), "{err}");
    let err = keys::regenerate("<!-- config-docs:host -->\n").unwrap_err();
    assert!(err.contains("no `<!-- /config-docs -->`"), "{err}");
}

#[test]
fn an_allowed_origin_without_a_port_is_given_its_schemes_default_port() {
    let config = Config::parse(
        "[http]\nallowed_origins = [\"HTTPS://App.example.com\", \"http://localhost:*\", \
         \"null\", \"http://[::1]:3000\", \"http://intranet\"]\n",
    )
    .unwrap();
    assert_eq!(
        config.http.allowed_origins,
        [
            "https://app.example.com:443",
            "http://localhost:*",
            "null",
            "http://[::1]:3000",
            "http://intranet:80",
        ]
    );
    let err = error_of("[http]\nallowed_origins = [\"https://app.example.com/path\"]\n");
    assert!(err.contains("http.allowed_origins"), "{err}");
}
