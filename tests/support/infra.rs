//! Real infrastructure for the tests that need it: Redis and HAProxy from
//! Debian's packages (the `toolhost-test-infra` crate, shared with the
//! benchmark), the check that fails a test whose programs are missing, and
//! the hash static tokens are configured with.

pub use toolhost_test_infra::{Redis, require};

/// SHA-256 of `text`, in hex: how a static token is written in `[auth]`.
pub fn sha256_hex(text: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(text.as_bytes()))
}
