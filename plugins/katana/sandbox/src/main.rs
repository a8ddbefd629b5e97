//! `katana-sandbox`: runs the Katana sandbox until Ctrl-C or SIGTERM.
//!
//! Its flags make the sandbox's configuration; [`sandbox_kit::cli::run`]
//! does the rest, as for every sandbox: logs to stderr (`RUST_LOG` filters
//! them, default `info`), and the base URL to point a Katana client at,
//! printed to stderr once the server is up.

use std::time::Duration;

use clap::Parser;
use katana_sandbox::{DEFAULT_API_KEY, Sandbox, SandboxConfig};

/// A local stand-in for the Katana manufacturing ERP API, with a seeded knife workshop.
#[derive(Debug, Parser)]
#[command(name = "katana-sandbox", version, about)]
struct Args {
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 8788)]
    port: u16,
    /// The bearer key clients must send.
    #[arg(long, default_value = DEFAULT_API_KEY)]
    api_key: String,
    /// Requests per key per window.
    #[arg(long, default_value_t = 60)]
    rate_limit: u32,
    /// Length of the sliding rate-limit window, in seconds.
    #[arg(long, default_value_t = 60)]
    rate_window_secs: u64,
    /// Seconds an `X-Sandbox-Fault: timeout` request is held before its 504.
    #[arg(long, default_value_t = 30)]
    fault_timeout_secs: u64,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();

    let config = SandboxConfig {
        api_key: args.api_key,
        rate_limit: args.rate_limit,
        rate_window: Duration::from_secs(args.rate_window_secs),
        fault_timeout: Duration::from_secs(args.fault_timeout_secs),
        port: args.port,
    };
    sandbox_kit::cli::run::<Sandbox>(config).await
}
