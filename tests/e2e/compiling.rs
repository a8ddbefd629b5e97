//! A load compiles in a child process of its own, `toolhost compile-worker`
//! (ADR 0058): what it compiles serves, it ends with the load, a
//! compilation given up on stops with it, and a child that cannot start or
//! dies fails the compilations it held, saying why, and the next one
//! starts anew; of the compilations a crashed child held together, each
//! is tried again alone, so only the one that crashes its compiler fails.
//!
//! Each test runs the worker under a program path of its own (a link to
//! the built binary in a temporary directory), so it finds its own child
//! among the processes this test binary started.

#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::time::Duration;

use toolhost::compiler::CompileIn;
use toolhost::plugin::{LoadError, Loader};

use crate::support::component;

/// The built `toolhost`, linked as `name` in `dir`.
fn worker_program(dir: &Path, name: &str) -> PathBuf {
    let program = dir.join(name);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_toolhost"), &program).unwrap();
    program
}

/// Compiling in `program`'s `compile-worker`.
fn worker(program: &Path) -> CompileIn {
    CompileIn::ChildProcess {
        program: program.to_path_buf(),
        args: vec!["compile-worker".into()],
    }
}

/// This process's living children started as `program` (zombies, killed
/// but not yet reaped, do not count).
fn children_running(program: &Path) -> Vec<u32> {
    let me = std::process::id();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`; comm may hold spaces and parentheses.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let mut fields = after.split_whitespace();
        let (state, parent) = (fields.next(), fields.next());
        if state == Some("Z") || parent != Some(&me.to_string()) {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let argv0 = cmdline.split(|b| *b == 0).next().unwrap_or_default();
        if argv0 == program.as_os_str().as_encoded_bytes() {
            found.push(pid);
        }
    }
    found
}

/// Waits (at most 10 s) until no child runs as `program`.
async fn until_no_child_runs(program: &Path) {
    let gone = tokio::time::timeout(Duration::from_secs(10), async {
        while !children_running(program).is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(gone.is_ok(), "the compiling process still runs");
}

/// A loader with `config`, no compile cache, compiling in `place`.
fn loader(config: &str, place: CompileIn) -> Loader {
    let config = toolhost::config::Config::parse(config).unwrap();
    let loader = Loader::from_config(config, None).expect("the loader builds");
    loader.compile_in(place);
    loader
}

/// The test component `name` (`NAME.wasm`) loaded with `loader`.
async fn load(loader: &Loader, name: &str) -> Result<toolhost::plugin::Plugin, LoadError> {
    loader
        .load_bytes(Path::new(&format!("{name}.wasm")), component(name))
        .await
}

/// `echo.wasm` loaded with `loader`.
async fn load_echo(loader: &Loader) -> Result<toolhost::plugin::Plugin, LoadError> {
    load(loader, "echo").await
}

/// Ends `loader`'s load and waits until its child, run as `program`, is
/// gone.
async fn end_load(loader: &Loader, program: &Path) {
    loader.runtime.end_load();
    until_no_child_runs(program).await;
}

/// Why `loader` refused `echo.wasm` (`expected` says why it should).
async fn echo_refused(loader: &Loader, expected: &str) -> LoadError {
    load_echo(loader).await.expect_err(expected)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_load_compiled_in_a_child_process_lists_its_tools_and_the_child_ends_with_the_load() {
    let dir = tempfile::tempdir().unwrap();
    let program = worker_program(dir.path(), "toolhost-lists");
    let loader = loader("", worker(&program));

    let echo = load_echo(&loader)
        .await
        .expect("echo loads from what the child compiled");
    assert_eq!(echo.tools[0].name, "echo", "its tool was listed");
    let hello = load(&loader, "hello")
        .await
        .expect("a second component of the same load compiles in the same child");
    assert!(!hello.tools.is_empty());
    assert_eq!(
        children_running(&program).len(),
        1,
        "one child for the whole load"
    );
    assert!(
        loader.runtime.functions.is_empty(),
        "nothing was compiled in this process"
    );

    end_load(&loader, &program).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compilation_given_up_on_stops_when_the_load_ends_and_gives_its_turn_back() {
    // A child that reads every request and never answers: a compilation
    // that would never end (a component that makes the compiler spin).
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("never-answers");
    std::os::unix::fs::symlink("/bin/sh", &program).unwrap();
    let loader = loader(
        "[plugins.echo]\nfiles = [\"echo.wasm\"]\nlimits = { compile_timeout_secs = 2 }\n",
        CompileIn::ChildProcess {
            program: program.clone(),
            args: vec!["-c".into(), "/bin/cat > /dev/null".into()],
        },
    );
    let permits = toolhost::engine::compile_permits();

    let refused = echo_refused(&loader, "no answer within the limit").await;
    assert!(
        matches!(refused, LoadError::CompileTimeout { .. }),
        "{refused}"
    );
    assert!(
        refused.to_string().contains("compile_timeout_secs"),
        "the refusal names its limit: {refused}"
    );
    assert_eq!(
        children_running(&program).len(),
        1,
        "the child still compiles while the load lasts"
    );
    assert_eq!(
        loader.runtime.compiling.available_permits(),
        permits - 1,
        "and the compilation given up on still holds its turn"
    );

    // The load's end stops the child, and the turn comes back.
    end_load(&loader, &program).await;
    let turns = tokio::time::timeout(
        Duration::from_secs(10),
        loader
            .runtime
            .compiling
            .clone()
            .acquire_many_owned(permits as u32),
    )
    .await;
    assert!(turns.is_ok(), "every compile turn is given back");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compiling_process_that_cannot_start_or_dies_fails_with_its_reason_and_the_next_starts_anew()
 {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-toolhost");
    let loader = loader("", worker(&missing));
    let refused = echo_refused(&loader, "no program, no compile").await;
    let text = refused.to_string();
    assert!(
        text.contains("cannot start the compiling process") && text.contains("no-such-toolhost"),
        "{text}"
    );

    // A child that ends without answering (as one would that crashed).
    loader.compile_in(CompileIn::ChildProcess {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), "exit 3".into()],
    });
    let refused = echo_refused(&loader, "a child that dies compiles nothing").await;
    let text = refused.to_string();
    assert!(
        text.contains("ended before it answered") && text.contains("exit status: 3"),
        "{text}"
    );

    // The next compilation starts a child of its own.
    let program = worker_program(dir.path(), "toolhost-anew");
    loader.compile_in(worker(&program));
    load_echo(&loader)
        .await
        .expect("a working child compiles it");
    end_load(&loader, &program).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compiler_crash_fails_one_component_and_the_others_it_held_compile_again_alone() {
    let dir = tempfile::tempdir().unwrap();
    let worker = worker_program(dir.path(), "toolhost-after-a-crash");
    let (hello_bytes, echo_bytes) = (component("hello"), component("echo"));
    // The load's first child reads until both components have reached it,
    // then ends as a crash would. Of the two children started next, the
    // first ends at once (as the compiler would again on the component that
    // crashed it) and the other is a real worker.
    let both_sent = 16 + hello_bytes.len().max(echo_bytes.len()) + 1;
    let dir_text = dir.path().display();
    let script = format!(
        "if /usr/bin/mkdir {dir_text}/first 2>/dev/null; then \
           /usr/bin/head -c {both_sent} > /dev/null; exit 70; \
         elif /usr/bin/mkdir {dir_text}/second 2>/dev/null; then exit 71; \
         else exec {} compile-worker; fi",
        worker.display()
    );
    let loader = loader(
        "",
        CompileIn::ChildProcess {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
        },
    );

    let (hello, echo) = tokio::join!(load(&loader, "hello"), load(&loader, "echo"));

    let failures: Vec<String> = [hello.as_ref().err(), echo.as_ref().err()]
        .into_iter()
        .flatten()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        failures.len(),
        1,
        "only the component whose lone compiler ended fails: {failures:?}"
    );
    assert!(
        failures[0].contains("exit status: 71"),
        "it names how its own compiler ended, not the crash it shared: {}",
        failures[0]
    );
    let loaded = hello.ok().or(echo.ok()).expect("the other one loaded");
    assert!(!loaded.tools.is_empty(), "its tools are listed");
    end_load(&loader, &worker).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compilation_past_the_compilers_memory_limit_refuses_its_component_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let program = worker_program(dir.path(), "toolhost-limited");
    let limited = |mib: &str| CompileIn::ChildProcess {
        program: program.clone(),
        args: vec!["compile-worker".into(), "--memory-mib".into(), mib.into()],
    };
    // Compiling katana takes about 35 MiB of the worker's data.
    let starved = loader("", limited("12"));
    let refused = load(&starved, "katana")
        .await
        .expect_err("more memory than the worker may allocate");
    let text = refused.to_string();
    assert!(
        text.contains("host.compile_memory_mib"),
        "the refusal names the key: {text}"
    );
    end_load(&starved, &program).await;

    // Under the default limit it compiles, in a worker that dumps no core.
    let ample = loader("", limited("4096"));
    let katana = load(&ample, "katana")
        .await
        .expect("katana compiles within the default limit");
    assert!(!katana.tools.is_empty());
    let child = children_running(&program)[0];
    let limits = std::fs::read_to_string(format!("/proc/{child}/limits")).unwrap();
    let row = |name: &str| {
        limits
            .lines()
            .find(|l| l.starts_with(name))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap()
    };
    assert_eq!(
        row("Max data size"),
        format!("Max data size {0} {0} bytes", 4096u64 << 20)
    );
    assert_eq!(row("Max core file size"), "Max core file size 0 0 bytes");
    end_load(&ample, &program).await;
}

#[test]
fn the_worker_answers_a_component_that_is_not_one_with_the_compilers_reason() {
    // The protocol as the child speaks it: one request, one answer.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .arg("compile-worker")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let not_wasm = b"not a component";
    let mut request = 7u64.to_le_bytes().to_vec();
    request.extend_from_slice(&(not_wasm.len() as u64).to_le_bytes());
    request.extend_from_slice(not_wasm);
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&request).unwrap();
        // Closing stdin ends the worker once it has answered.
    }
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{:?}", output.status);
    let answer = output.stdout;
    assert_eq!(answer[..8], 7u64.to_le_bytes(), "the request's number");
    assert_eq!(answer[8], 1, "not compiled");
    let length = u64::from_le_bytes(answer[9..17].try_into().unwrap()) as usize;
    let reason = String::from_utf8(answer[17..17 + length].to_vec()).unwrap();
    assert!(reason.contains("magic header"), "{reason}");
    assert_eq!(
        answer.len(),
        17 + length,
        "one answer, nothing else on stdout"
    );
}

#[test]
fn the_worker_is_the_first_process_the_kernel_ends_when_memory_runs_out() {
    use std::io::{Read, Write};
    let own_score = || std::fs::read_to_string("/proc/self/oom_score_adj").unwrap();
    let before = own_score();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .arg("compile-worker")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // One request answered: the worker is past its start.
    let mut request = 1u64.to_le_bytes().to_vec();
    request.extend_from_slice(&1u64.to_le_bytes());
    request.push(0);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&request).unwrap();
    stdin.flush().unwrap();
    let mut head = [0u8; 17];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut head)
        .unwrap();
    assert_eq!(head[..8], 1u64.to_le_bytes(), "the request's answer");

    let score = std::fs::read_to_string(format!("/proc/{}/oom_score_adj", child.id())).unwrap();
    assert_eq!(
        score.trim(),
        "1000",
        "the child goes first; the gateway stays"
    );
    assert_eq!(own_score(), before, "the parent's own score is untouched");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_compiling_process_inherits_none_of_the_gateways_environment() {
    // A child that writes its environment where the test can read it, then
    // ends without answering.
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("environment");
    assert!(
        std::env::var_os("PATH").is_some(),
        "the test's own environment has PATH"
    );
    let loader = loader(
        "",
        CompileIn::ChildProcess {
            program: "/bin/sh".into(),
            args: vec![
                "-c".into(),
                format!("/usr/bin/env > {}", seen.display()).into(),
            ],
        },
    );
    let refused = echo_refused(&loader, "the child answers nothing").await;
    assert!(matches!(refused, LoadError::CompileProcess(_)), "{refused}");
    let environment = std::fs::read_to_string(&seen).unwrap();
    assert!(
        !environment.lines().any(|l| l.starts_with("PATH=")),
        "{environment}"
    );
}
