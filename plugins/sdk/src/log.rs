//! Diagnostics for the operator, written to the host's log (stderr) and
//! tagged with the plugin and tool. The MCP client never sees them.

use crate::bindings::toolhost::plugin0_1_0::log as wit;

pub use wit::Level;

/// Writes `message` at `level`.
pub fn write(level: Level, message: &str) {
    wit::write(level, message);
}

/// Writes a debug message.
pub fn debug(message: &str) {
    write(Level::Debug, message);
}

/// Writes an informational message.
pub fn info(message: &str) {
    write(Level::Info, message);
}

/// Writes a warning.
pub fn warn(message: &str) {
    write(Level::Warn, message);
}

/// Writes an error.
pub fn error(message: &str) {
    write(Level::Error, message);
}
