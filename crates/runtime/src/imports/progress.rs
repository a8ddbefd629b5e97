//! `progress`: forwarded to the client when its request carried a progress
//! token, dropped otherwise.

use super::CallState;
use crate::bindings::progress::Host;
use crate::hooks::BoxFuture;

/// Receives a call's progress reports.
pub trait ProgressSink: Send + Sync {
    /// Forwards one report.
    fn report(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> BoxFuture<'_, ()>;
}

/// Longest progress message forwarded.
const MAX_MESSAGE_CHARS: usize = 1024;

impl Host for CallState {
    async fn report(
        &mut self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> wasmtime::Result<()> {
        if let Some(sink) = &self.progress
            && progress.is_finite()
        {
            let message = message.map(|m| m.chars().take(MAX_MESSAGE_CHARS).collect());
            sink.report(progress, total.filter(|t| t.is_finite()), message)
                .await;
        }
        Ok(())
    }
}
