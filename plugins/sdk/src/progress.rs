//! Progress reports for long calls. The host forwards them to the client as
//! `notifications/progress` when the request asked for progress, and drops
//! them otherwise, so reporting is always safe.

use crate::bindings::toolhost::plugin0_1_0::progress as wit;

/// Reports `progress` (increasing) out of `total` when known.
pub fn report(progress: f64, total: Option<f64>, message: Option<&str>) {
    wit::report(progress, total, message);
}
