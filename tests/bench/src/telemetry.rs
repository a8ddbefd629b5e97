//! Measurement 21: what traces (`[telemetry]`, ADR 0039) cost a call,
//! against the same server without them, interleaved in blocks as in
//! measurement 1; and what the per-call cost accounting costs.
//!
//! - a read-only call (`echo` over stdio) with `[telemetry]` exporting to a
//!   local OTLP receiver at `sampling_ratio = 0.0` (spans made, none kept)
//!   and at `1.0` (every span exported), against tracing off, in
//!   [`ROUNDS`] rounds (below);
//! - a confirmed 2026-07-28 `add_order_comment` over HTTP (both rounds, with
//!   their policy, component, confirmation and upstream spans) at `1.0`
//!   against off;
//! - the cost accounting, which cannot be switched off: what it adds to a
//!   call is its two reads of the thread CPU clock around each poll of the
//!   call's execution (the counters beside them are a few additions), so
//!   the row times one read on this machine.
//!
//! The receiver answers every http/protobuf export at once with an empty
//! `ExportTraceServiceResponse` (zero bytes in protobuf) and counts the
//! requests and bytes, so the rows show that the spans were exported.
//!
//! **Where the receiver runs.** It stands in for a collector, which in a
//! deployment has cores of its own (another machine, or a sidecar's CPU
//! budget). On this benchmark's two cores, a receiver reading each batch on
//! the harness's own runtime took the cores from the client being timed,
//! and so charged the collector's work to toolhost. The rows held to the
//! target use a receiver on a thread of its own under `SCHED_IDLE`, which
//! reads a batch only while neither the client nor toolhost wants a core;
//! one more pair of rows keeps the receiver on the harness's runtime, as
//! before, to show what a collector sharing the cores costs.
//!
//! **Rounds, and the median of their ratios** (ADR 0059). A p99 is the
//! tail of one sample: the 20th slowest of 2,000 calls, set by whatever
//! else the machine did in those few milliseconds, and it moved by ±8%
//! from one run to the next while the code stayed the same. So the echo
//! servers are started and warmed up once, then measured in [`ROUNDS`]
//! rounds one after another, each `--calls` calls per server interleaved
//! in blocks as before. Each round gives each server's p50 and p99 and so
//! a ratio to tracing off in that round; the rows report the median of
//! those ratios beside every round's, and the target is held to the
//! median, which one noisy round cannot move. The pooled percentiles
//! (every round's calls together) are reported too, without a target.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::Options;
use crate::fixture::{ConfigChange, Fixture};
use crate::policy::echo_rounds;
use crate::replicas::confirmed_calls;
use crate::stats::{self, Samples};
use crate::table::{Row, percentile_rows};

/// What the receiver was sent.
#[derive(Default)]
struct Received {
    /// Export requests.
    requests: AtomicU64,
    /// Their body bytes (protobuf).
    bytes: AtomicU64,
}

/// An OTLP http/protobuf receiver on loopback that accepts everything.
struct Receiver {
    endpoint: String,
    received: Arc<Received>,
    task: tokio::task::JoinHandle<()>,
}

/// Where a [`Receiver`] runs (see the module doc).
#[derive(Clone, Copy)]
enum Placement {
    /// On the harness's runtime, beside the client being timed.
    Shared,
    /// On a thread of its own under `SCHED_IDLE`, like a collector with
    /// cores of its own.
    Apart,
}

/// The receiver's routes: accept every export, count it.
fn receiver_app(received: Arc<Received>) -> axum::Router {
    let counts = received;
    axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: axum::body::Bytes| {
            let counts = counts.clone();
            async move {
                counts.requests.fetch_add(1, Ordering::Relaxed);
                counts.bytes.fetch_add(body.len() as u64, Ordering::Relaxed);
                (
                    [("content-type", "application/x-protobuf")],
                    Vec::<u8>::new(),
                )
            }
        }),
    )
}

impl Receiver {
    async fn start(placement: Placement) -> Result<Receiver> {
        let listener =
            std::net::TcpListener::bind("127.0.0.1:0").context("cannot bind the OTLP receiver")?;
        listener.set_nonblocking(true)?;
        let endpoint = format!("http://{}", listener.local_addr()?);
        let received = Arc::new(Received::default());
        let app = receiver_app(received.clone());
        let task = match placement {
            Placement::Shared => {
                let listener = tokio::net::TcpListener::from_std(listener)?;
                tokio::spawn(async move {
                    let _ = axum::serve(listener, app).await;
                })
            }
            Placement::Apart => {
                let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
                std::thread::Builder::new()
                    .name("otlp-receiver".into())
                    .spawn(move || {
                        idle_priority();
                        let runtime = tokio::runtime::Builder::new_current_thread()
                            .enable_all()
                            .build()
                            .expect("a runtime for the receiver");
                        runtime.block_on(async move {
                            let listener = tokio::net::TcpListener::from_std(listener)
                                .expect("the receiver's listener");
                            let _ = axum::serve(listener, app)
                                .with_graceful_shutdown(async {
                                    let _ = stopped.await;
                                })
                                .await;
                        });
                    })
                    .context("cannot start the receiver's thread")?;
                // Dropping the task (with the receiver) drops `stop`,
                // which ends the thread's server.
                tokio::spawn(async move {
                    let _keep = stop;
                    std::future::pending::<()>().await;
                })
            }
        };
        Ok(Receiver {
            endpoint,
            received,
            task,
        })
    }

    /// `[telemetry]` exporting here, keeping `ratio` of the traces.
    fn config(&self, ratio: f64) -> ConfigChange {
        ConfigChange::tables(format!(
            "[telemetry]\nendpoint = \"{}\"\nprotocol = \"http/protobuf\"\nsampling_ratio = {ratio:.1}\nservice_name = \"toolhost-bench\"\n",
            self.endpoint
        ))
    }

    /// `N export requests, X KiB` so far.
    fn summary(&self) -> String {
        format!(
            "{} export requests, {:.0} KiB",
            stats::count(self.received.requests.load(Ordering::Relaxed)),
            self.received.bytes.load(Ordering::Relaxed) as f64 / 1024.0
        )
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Puts the calling thread under `SCHED_IDLE` (Linux): it runs only on a
/// core nothing else wants.
fn idle_priority() {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: changes only the calling thread's policy; `param` is
        // valid for `SCHED_IDLE` and outlives the call.
        if unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) } != 0 {
            eprintln!(
                "the OTLP receiver keeps its priority: {}",
                std::io::Error::last_os_error()
            );
        }
    }
}

/// The target at `sampling_ratio = 1.0`: under 10% over tracing off.
const TARGET: f64 = 1.10;

/// Rounds of the echo rows (see the module doc): enough that the median
/// ignores two bad rounds, few enough that the row stays quick.
const ROUNDS: usize = 5;

/// p50 and p99 of `measured` against `off`; with `target`, the target.
fn against_off(
    what: &str,
    ratio: &str,
    measured: &Samples,
    off: &Samples,
    target: bool,
) -> Vec<Row> {
    let count = stats::count(measured.len() as u64);
    let mut rows = percentile_rows(
        "21",
        |p| format!("{what} {p}, [telemetry] sampling {ratio}: {count} calls"),
        measured,
        "tracing off",
        off,
    );
    if target {
        for (row, p) in rows.iter_mut().zip([50.0, 99.0]) {
            let met =
                measured.percentile(p).as_secs_f64() <= off.percentile(p).as_secs_f64() * TARGET;
            *row = row
                .clone()
                .target(format!("≤ 1.10× off: {}", stats::verdict(met)));
        }
    }
    rows
}

/// Each round's ratio of `server`'s `p`-th percentile to tracing off's
/// (server 0) in the same round.
fn round_ratios(rounds: &[Vec<Samples>], server: usize, p: f64) -> Vec<f64> {
    rounds
        .iter()
        .map(|round| {
            round[server].percentile(p).as_secs_f64() / round[0].percentile(p).as_secs_f64()
        })
        .collect()
}

/// The median over `rounds` of `server`'s per-round p50 and p99 ratios to
/// tracing off, each round's listed; with `target`, the target, held to
/// the median.
fn median_rows(
    what: &str,
    ratio: &str,
    rounds: &[Vec<Samples>],
    server: usize,
    target: bool,
) -> Vec<Row> {
    let per_round = rounds.first().map_or(0, |round| round[server].len());
    [("p50", 50.0), ("p99", 99.0)]
        .into_iter()
        .map(|(name, p)| {
            let ratios = round_ratios(rounds, server, p);
            let median = stats::median(&ratios).unwrap_or(f64::NAN);
            let listed: Vec<String> = ratios.iter().map(|r| stats::ratio(*r, 1.0)).collect();
            let row = Row::figure(
                "21",
                format!(
                    "{what} {name}, [telemetry] sampling {ratio}: median of {} rounds' ratios ({} calls each)",
                    rounds.len(),
                    stats::count(per_round as u64)
                ),
                format!("rounds {}", listed.join(", ")),
            )
            .against(
                "tracing off, the same round",
                stats::ratio(median, 1.0),
            );
            if target {
                row.target(format!(
                    "median ≤ 1.10× off: {}",
                    stats::verdict(median <= TARGET)
                ))
            } else {
                row
            }
        })
        .collect()
}

/// Every round's samples of each server, pooled.
fn pooled(rounds: &[Vec<Samples>]) -> Vec<Samples> {
    let mut all = vec![Samples::default(); rounds.first().map_or(0, Vec::len)];
    for round in rounds {
        for (all, samples) in all.iter_mut().zip(round) {
            all.extend(samples.values().iter().copied());
        }
    }
    all
}

/// Measurement 21.
pub async fn telemetry(fx: &Fixture, opts: &Options) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    let receiver = Receiver::start(Placement::Apart).await?;
    let beside_client = Receiver::start(Placement::Shared).await?;
    let rounds = echo_rounds(
        fx,
        opts,
        &[
            ("telemetry-off", ConfigChange::default()),
            ("telemetry-0", receiver.config(0.0)),
            ("telemetry-1", receiver.config(1.0)),
            ("telemetry-1-shared", beside_client.config(1.0)),
        ],
        ROUNDS,
    )
    .await?;
    let samples = pooled(&rounds);
    const ECHO: &str = "read-only call (echo, stdio)";
    const SHARED: &str =
        "read-only call (echo, stdio), the receiver beside the client on the harness's runtime,";
    rows.extend(median_rows(ECHO, "0.0", &rounds, 1, false));
    rows.extend(median_rows(ECHO, "1.0", &rounds, 2, true));
    rows.extend(median_rows(SHARED, "1.0", &rounds, 3, false));
    rows.extend(against_off(ECHO, "0.0", &samples[1], &samples[0], false));
    rows.extend(against_off(ECHO, "1.0", &samples[2], &samples[0], false));
    rows.extend(against_off(SHARED, "1.0", &samples[3], &samples[0], false));
    rows.push(Row::figure(
        "21",
        "spans the receivers were sent (echo rows): apart; beside the client",
        format!("{}; {}", receiver.summary(), beside_client.summary()),
    ));

    if let Some(why) = fx.statuspro_missing() {
        rows.push(Row::skipped("21", "traces, confirmed call", why));
    } else {
        let samples = confirmed_calls(
            fx,
            opts,
            &[
                ("telemetry-confirmed-off", ConfigChange::default()),
                ("telemetry-confirmed-1", receiver.config(1.0)),
            ],
        )
        .await?;
        const CONFIRMED: &str = "confirmed call (both rounds, HTTP)";
        rows.extend(against_off(
            CONFIRMED,
            "1.0",
            &samples[1],
            &samples[0],
            true,
        ));
    }

    rows.push(cost_accounting());
    Ok(rows)
}

/// Reads of the thread CPU clock timed for the cost-accounting row.
const CLOCK_READS: u32 = 1_000_000;

/// The cost accounting's own overhead: one read of the thread CPU clock
/// (the runtime's `CpuTimed` makes two per poll of a call's execution).
fn cost_accounting() -> Row {
    let started = Instant::now();
    let mut last = Duration::ZERO;
    for _ in 0..CLOCK_READS {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        last = std::hint::black_box(Duration::new(t.tv_sec as u64, t.tv_nsec as u32));
    }
    std::hint::black_box(last);
    let each = started.elapsed() / CLOCK_READS;
    Row::figure(
        "21",
        "cost accounting: one read of the thread CPU clock (2 per poll of a call's execution)",
        format!("{} ns", each.as_nanos()),
    )
}
