//! `statuspro-sandbox`: runs the StatusPro sandbox until Ctrl-C or SIGTERM.
//!
//! Its flags make the sandbox's configuration; [`sandbox_kit::cli::run`]
//! does the rest, as for every sandbox: logs to stderr (`RUST_LOG` filters
//! them, default `info`), and the base URL to point a StatusPro client at,
//! printed to stderr once the server is up.

use std::time::Duration;

use clap::Parser;
use statuspro_sandbox::{DEFAULT_API_KEY, Sandbox, SandboxConfig};

/// A local stand-in for the StatusPro REST API, with seeded orders.
#[derive(Debug, Parser)]
#[command(name = "statuspro-sandbox", version, about)]
struct Args {
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 8787)]
    port: u16,
    /// The bearer key clients must send.
    #[arg(long, default_value = DEFAULT_API_KEY)]
    api_key: String,
    /// Requests per key per minute on every endpoint.
    #[arg(long, default_value_t = 60)]
    rate_limit: u32,
    /// Additional per-minute limit on POST /orders/bulk-status.
    #[arg(long, default_value_t = 5)]
    bulk_rate_limit: u32,
    /// Milliseconds to wait before applying each bulk job.
    #[arg(long, default_value_t = 0)]
    bulk_delay_ms: u64,
    /// Seconds an `X-Sandbox-Fault: timeout` request is held before its 504.
    #[arg(long, default_value_t = 30)]
    fault_timeout_secs: u64,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();

    let config = SandboxConfig {
        api_key: args.api_key,
        rate_limit_per_minute: args.rate_limit,
        bulk_rate_limit_per_minute: args.bulk_rate_limit,
        bulk_apply_delay: Duration::from_millis(args.bulk_delay_ms),
        fault_timeout: Duration::from_secs(args.fault_timeout_secs),
        port: args.port,
        ..SandboxConfig::default()
    };
    sandbox_kit::cli::run::<Sandbox>(config).await
}
