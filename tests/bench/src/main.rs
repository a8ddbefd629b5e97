//! `toolhost-bench`: the benchmark harness behind `cargo xtask bench`.
//!
//! It starts real servers as child processes, drives them over stdio (and,
//! for rows 10 to 15, Streamable HTTP, through HAProxy for 12 and 13) with
//! rmcp's client (legacy era; 2026-07-28 for the confirmed calls of 14 and 15), and
//! prints one table, also written as
//! markdown with `--markdown FILE`. `cargo xtask bench` builds everything in
//! release mode and passes the paths; `docs/benchmarks.md` explains each
//! row and records a run.
//!
//! | module | measurement |
//! |---|---|
//! | [`calls`] | 1 per-call latency vs native rmcp, 2 throughput, 7 latency vs FastMCP; over Streamable HTTP: 10 per-call latency vs native rmcp and stdio, 11 throughput with 1, 8, 64 clients |
//! | [`startup`] | 3 cold start (empty and warm compile cache), 7 cold start vs FastMCP |
//! | [`reload`] | 4 hot-reload latency |
//! | [`memory`] | 5 resident memory at load and after 10,000 calls |
//! | [`endtoend`] | 6 `list_orders` through toolhost vs direct HTTP |
//! | [`many`] | 8 start-up with 10, 50, 100 distinct components; 9 a directory of 100 at rest: reload, idle CPU |
//! | [`replicas`] | 12 per-call latency through HAProxy vs direct; 13 throughput with 1, 2, 3 replicas behind HAProxy; 14 a confirmed call with spent states in Redis vs in-process |
//! | [`audit`] | 15 a read-only and a confirmed call with the audit trail vs without |
//! | [`policy`] | 16 a read-only call under 10 and 100 `[[policy.rules]]` vs none; a limited call, counter in Redis vs in-process; 20 a call held for approval (in-process and Redis store) vs the call allowed |
//! | [`catalog`] | 17 a 1,000-tool catalog: `tools/list` bytes and latency, whole vs a profile vs discovery; `find_tools` latency; recall@5 and MRR over fixed queries |
//! | [`languages`] | 18 component size and first/warm load, Rust vs Python vs JavaScript; 19 scaffold to first call per language |
//! | [`telemetry`] | 21 a call with `[telemetry]` at sampling 0.0 and 1.0 vs tracing off; the cost accounting's clock read |
//! | [`scaling`] | 22 calls per second and p99 over HTTP at 1, 8, 64, 256 clients with policy, audit and metrics each and all on, vs all off |
//!
//! Shared parts: [`fixture`] (binaries, components, the StatusPro sandbox,
//! config, scratch directories), [`session`] (start a server, connect,
//! call), [`stats`] (percentiles and number formats), [`table`] (rows and
//! rendering).
//!
//! Performance is reported, never asserted: a measurement that cannot run
//! (StatusPro components not built yet, FastMCP not installed) gives a
//! `skipped: …` row, one that breaks gives a `FAILED: …` row with the
//! error, and the rest still run. The exit status is non-zero only when a
//! measurement failed.

mod audit;
mod calls;
mod catalog;
mod endtoend;
mod fixture;
mod languages;
mod many;
mod memory;
mod policy;
mod reload;
mod replicas;
mod scaling;
mod session;
mod startup;
mod stats;
mod table;
mod telemetry;

use std::future::Future;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;

use crate::fixture::Fixture;
use crate::session::Launch;
use crate::table::Row;

/// The FastMCP echo server, written next to the scratch directory at run
/// time so the harness binary is self-contained.
const FASTMCP_ECHO: &str = include_str!("../fastmcp_echo.py");

/// Measure toolhost against native rmcp and FastMCP; print one table.
#[derive(Parser, Debug)]
#[command(name = "toolhost-bench", version, about, args_override_self = true)]
pub struct Options {
    /// The `toolhost` binary to measure (a release build).
    #[arg(long, value_name = "PATH")]
    toolhost: PathBuf,
    /// The `native-echo` binary (the baseline server).
    #[arg(long, value_name = "PATH")]
    native_echo: PathBuf,
    /// The built components (`target/components`).
    #[arg(long, value_name = "DIR")]
    components: PathBuf,
    /// Scratch directory; its `run/` subdirectory is emptied and reused.
    #[arg(long, value_name = "DIR")]
    work: PathBuf,
    /// Python interpreter with `fastmcp` installed, for measurement 7.
    #[arg(long, value_name = "PATH")]
    python: Option<PathBuf>,
    /// Why FastMCP could not be installed (printed in the skipped rows).
    #[arg(long, value_name = "TEXT", conflicts_with = "python")]
    no_fastmcp: Option<String>,
    /// The workspace root (for measurement 19: the example sources and the
    /// Python and JavaScript toolchains under its `target/`).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Also write the results as markdown to this file.
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
    /// Only these measurements (comma-separated numbers, e.g. `1,4`).
    #[arg(long, value_delimiter = ',', value_name = "N,…")]
    only: Vec<u8>,
    /// Sequential calls per server for per-call latency.
    #[arg(long, default_value_t = 2000)]
    calls: usize,
    /// Untimed calls per server before timing.
    #[arg(long, default_value_t = 200)]
    warmup: usize,
    /// Calls per concurrency level for throughput.
    #[arg(long, default_value_t = 4000)]
    throughput_calls: usize,
    /// Timed starts with an empty compile cache.
    #[arg(long, default_value_t = 5)]
    cold_runs: usize,
    /// Timed starts with a warm compile cache (and of the native server).
    #[arg(long, default_value_t = 10)]
    warm_runs: usize,
    /// Timed starts of the FastMCP server.
    #[arg(long, default_value_t = 5)]
    fastmcp_cold_runs: usize,
    /// Timed hot-reload swaps per mode.
    #[arg(long, default_value_t = 20)]
    swaps: usize,
    /// Calls before the last memory reading.
    #[arg(long, default_value_t = 10_000)]
    memory_calls: usize,
    /// Sequential `list_orders` calls (and direct requests) end to end.
    #[arg(long, default_value_t = 300)]
    e2e_calls: usize,
}

impl Options {
    fn runs(&self, measurement: u8) -> bool {
        self.only.is_empty() || self.only.contains(&measurement)
    }
}

/// The servers toolhost is compared with, besides `native-echo`.
pub struct Peers {
    /// How to start the FastMCP echo server, or why it cannot be.
    pub fastmcp: Result<Launch, String>,
    /// `FastMCP 4.1.2`, as the table names it.
    pub fastmcp_name: String,
}

fn main() -> Result<()> {
    let opts = Options::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the tokio runtime")?;
    let failed = runtime.block_on(run(opts))?;
    if failed {
        std::process::exit(1);
    }
    Ok(())
}

/// Runs every selected measurement, prints the table; returns whether any
/// measurement failed.
async fn run(opts: Options) -> Result<bool> {
    let started = Instant::now();
    let fx = Fixture::new(
        opts.toolhost.clone(),
        opts.native_echo.clone(),
        opts.components.clone(),
        opts.work.join("run"),
    )
    .await?;
    let peers = peers(&opts)?;
    let machine = machine(&fx, &peers);
    eprintln!("{}", machine.join("\n"));

    let mut rows = Vec::new();
    let mut resident = calls::Resident::default();
    if opts.runs(1) || opts.runs(7) {
        eprintln!("1, 7. per-call latency: toolhost, native rmcp, FastMCP");
        match calls::latency(&fx, &opts, &peers).await {
            Ok((r, res)) => {
                rows.extend(r);
                resident = res;
            }
            Err(e) => rows.push(Row::failed("1", "per-call latency", &e)),
        }
    }
    if opts.runs(2) {
        eprintln!("2. throughput");
        measure(&mut rows, "2", "throughput", calls::throughput(&fx, &opts)).await;
    }
    if opts.runs(3) {
        eprintln!("3. cold start, everything");
        measure(
            &mut rows,
            "3",
            "cold start",
            startup::everything(&fx, &opts),
        )
        .await;
    }
    if opts.runs(3) || opts.runs(7) {
        eprintln!("3, 7. cold start, echo only: toolhost, native rmcp, FastMCP");
        let echo = startup::echo_only(&fx, &opts, &peers);
        measure(&mut rows, "3", "cold start, echo only", echo).await;
    }
    if opts.runs(4) {
        eprintln!("4. hot reload");
        measure(&mut rows, "4", "hot reload", reload::hot_reload(&fx, &opts)).await;
    }
    if opts.runs(5) {
        eprintln!("5. memory");
        let m = memory::memory(&fx, &opts, resident);
        measure(&mut rows, "5", "memory", m).await;
    }
    if opts.runs(6) {
        eprintln!("6. end to end");
        measure(
            &mut rows,
            "6",
            "end to end",
            endtoend::list_orders(&fx, &opts),
        )
        .await;
    }
    if opts.runs(8) {
        eprintln!("8. start-up with many components");
        measure(&mut rows, "8", "start-up, many", many::startup(&fx, &opts)).await;
    }
    if opts.runs(9) {
        eprintln!("9. a plugin directory at rest");
        measure(
            &mut rows,
            "9",
            "directory at rest",
            many::at_rest(&fx, &opts),
        )
        .await;
    }
    if opts.runs(10) {
        eprintln!("10. per-call latency over HTTP: toolhost, native rmcp, toolhost over stdio");
        let latency = calls::http_latency(&fx, &opts);
        measure(&mut rows, "10", "per-call latency over HTTP", latency).await;
    }
    if opts.runs(11) {
        eprintln!("11. throughput over HTTP");
        let throughput = calls::http_throughput(&fx, &opts);
        measure(&mut rows, "11", "throughput over HTTP", throughput).await;
    }
    if opts.runs(12) {
        eprintln!("12. per-call latency through HAProxy vs direct");
        let latency = replicas::through_balancer(&fx, &opts);
        measure(&mut rows, "12", "latency through HAProxy", latency).await;
    }
    if opts.runs(13) {
        eprintln!("13. throughput with 1, 2, 3 replicas behind HAProxy");
        let throughput = replicas::replica_throughput(&fx, &opts);
        measure(&mut rows, "13", "throughput with replicas", throughput).await;
    }
    if opts.runs(14) {
        eprintln!("14. replay store per confirmed call: Redis vs in-process");
        let replay = replicas::replay_store(&fx, &opts);
        measure(&mut rows, "14", "replay store", replay).await;
    }
    if opts.runs(15) {
        eprintln!("15. the audit trail per call: on vs off");
        let audit = audit::audit_trail(&fx, &opts);
        measure(&mut rows, "15", "audit trail", audit).await;
    }
    if opts.runs(16) {
        eprintln!(
            "16. [[policy.rules]] per call: 10 and 100 rules vs none; a limit in Redis vs in-process"
        );
        let policy = policy::policy_rules(&fx, &opts);
        measure(&mut rows, "16", "policy rules", policy).await;
    }
    if opts.runs(17) {
        eprintln!("17. a 1,000-tool catalog: whole, a profile, discovery; search quality");
        measure(&mut rows, "17", "catalog", catalog::catalog(&fx, &opts)).await;
    }
    if opts.runs(20) {
        eprintln!(
            "20. a call held for approval: store in-process and in Redis vs the call allowed"
        );
        let approvals = policy::approvals(&fx, &opts);
        measure(&mut rows, "20", "approvals", approvals).await;
    }
    if opts.runs(18) {
        eprintln!("18. a component per language: size, first and warm load");
        measure(&mut rows, "18", "languages", languages::loads(&fx, &opts)).await;
    }
    if opts.runs(19) {
        eprintln!("19. scaffold to first call per language");
        let scaffold = languages::scaffold_to_first_call(&fx, &opts);
        measure(&mut rows, "19", "scaffold to first call", scaffold).await;
    }
    if opts.runs(21) {
        eprintln!("21. traces per call: [telemetry] sampling 0.0 and 1.0 vs off; cost accounting");
        let traces = telemetry::telemetry(&fx, &opts);
        measure(&mut rows, "21", "traces", traces).await;
    }
    if opts.runs(22) {
        eprintln!(
            "22. scaling over HTTP with 1, 8, 64, 256 clients: policy, audit, metrics each and all on vs off"
        );
        measure(&mut rows, "22", "scaling", scaling::scaling(&fx, &opts)).await;
    }
    rows.retain(|r| opts.runs(r.id.parse().unwrap_or(0)) || r.toolhost.starts_with("FAILED"));
    rows.sort_by_key(|r| r.id.parse::<u8>().unwrap_or(0));

    let table = table::render(&rows);
    let took = format!("measured in {:.0} s", started.elapsed().as_secs_f64());
    println!("{}\n{took}\n\n{table}", machine.join("\n"));
    if let Some(path) = &opts.markdown {
        let text = format!(
            "# toolhost benchmark results\n\n{}\n\n{table}",
            machine
                .iter()
                .chain([&took])
                .map(|l| format!("- {l}"))
                .collect::<Vec<_>>()
                .join("\n")
        );
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("results written to {}", path.display());
    }
    let sandbox = fx.sandbox;
    sandbox.shutdown().await?;
    Ok(rows.iter().any(|r| r.toolhost.starts_with("FAILED")))
}

/// Awaits one measurement; its rows, or a `FAILED` row.
async fn measure(
    rows: &mut Vec<Row>,
    id: &'static str,
    what: &str,
    measurement: impl Future<Output = Result<Vec<Row>>>,
) {
    match measurement.await {
        Ok(r) => rows.extend(r),
        Err(e) => {
            eprintln!("{what} failed: {e:#}");
            rows.push(Row::failed(id, what, &e));
        }
    }
}

/// Finds FastMCP: the interpreter must import it.
fn peers(opts: &Options) -> Result<Peers> {
    let Some(python) = &opts.python else {
        let why = opts
            .no_fastmcp
            .clone()
            .unwrap_or_else(|| "no --python given".to_string());
        return Ok(Peers {
            fastmcp: Err(why),
            fastmcp_name: "FastMCP".into(),
        });
    };
    let version = Command::new(python)
        .args(["-c", "import fastmcp; print(fastmcp.__version__)"])
        .output();
    let version = match version {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).trim().to_string(),
        Ok(out) => {
            return Ok(Peers {
                fastmcp: Err(format!(
                    "{} cannot import fastmcp: {}",
                    python.display(),
                    String::from_utf8_lossy(&out.stderr).trim()
                )),
                fastmcp_name: "FastMCP".into(),
            });
        }
        Err(e) => {
            return Ok(Peers {
                fastmcp: Err(format!("cannot run {}: {e}", python.display())),
                fastmcp_name: "FastMCP".into(),
            });
        }
    };
    std::fs::create_dir_all(&opts.work)
        .with_context(|| format!("cannot create {}", opts.work.display()))?;
    let script = opts.work.join("fastmcp_echo.py");
    std::fs::write(&script, FASTMCP_ECHO)
        .with_context(|| format!("cannot write {}", script.display()))?;
    Ok(Peers {
        fastmcp: Ok(Launch::new("FastMCP", python).arg(script)),
        fastmcp_name: format!("FastMCP {version}"),
    })
}

/// Lines describing the machine and the software measured.
fn machine(fx: &Fixture, peers: &Peers) -> Vec<String> {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get().to_string())
        .unwrap_or_else(|_| "?".into());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|v| v.trim_start_matches([' ', '\t', ':']).trim().to_string())
        .unwrap_or_else(|| "unknown CPU".into());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let memory = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kib| format!("{:.1} GiB RAM", kib as f64 / 1024.0 / 1024.0))
        .unwrap_or_else(|| "RAM unknown".into());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| format!("Linux {}", s.trim()))
        .unwrap_or_default();
    let output = |program: &std::path::Path, args: &[&str]| {
        Command::new(program)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_else(|| "unknown".into())
    };
    let rustc = output("rustc".as_ref(), &["--version"]);
    let toolhost = output(&fx.toolhost, &["--version"]);
    let fastmcp = match &peers.fastmcp {
        Ok(launch) => format!(
            "{} on {}",
            peers.fastmcp_name,
            output(&launch.program, &["--version"])
        ),
        Err(why) => format!("FastMCP not measured ({why})"),
    };
    vec![
        format!("machine: {cpus} CPUs, {model}, {memory}, {kernel}"),
        format!("software: {toolhost} (release), {rustc}, {fastmcp}"),
    ]
}
