//! Fault injection through the `X-Sandbox-Fault` request header.
//!
//! A client (usually a test) asks for a failure by sending
//! `X-Sandbox-Fault: 500|503|429|timeout`. The sandbox then answers with that
//! failure instead of running the handler, so every error path of a client can
//! be driven on demand:
//!
//! | header value | response |
//! |---|---|
//! | `500` | 500, the style's `Server Error` body |
//! | `503` | 503, the style's `Service Unavailable` body |
//! | `429` | 429, `Retry-After: 1` ([`FAULT_RETRY_AFTER_SECS`]) |
//! | `timeout` | nothing for the configured fault timeout (default 30 s), then 504 |
//!
//! The timeout is an async sleep inside that one request, so other requests are
//! served meanwhile. An unknown value is a client bug and gets a 400 naming the
//! accepted values.

use std::{fmt, str::FromStr};

/// The request header that selects a fault.
pub const FAULT_HEADER: &str = "x-sandbox-fault";

/// The `Retry-After` value, in seconds, of an injected 429.
pub const FAULT_RETRY_AFTER_SECS: u64 = 1;

/// One injectable failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Answer 500 Internal Server Error.
    ServerError,
    /// Answer 503 Service Unavailable.
    Unavailable,
    /// Answer 429 Too Many Requests with a `Retry-After` header.
    RateLimited,
    /// Hold the request for the fault timeout, then answer 504 Gateway Timeout.
    Timeout,
}

/// A `X-Sandbox-Fault` value that names no fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown X-Sandbox-Fault value '{0}': expected one of 500, 503, 429, timeout")]
pub struct UnknownFault(pub String);

impl FromStr for Fault {
    type Err = UnknownFault;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value.trim().to_ascii_lowercase().as_str() {
            "500" => Ok(Self::ServerError),
            "503" => Ok(Self::Unavailable),
            "429" => Ok(Self::RateLimited),
            "timeout" => Ok(Self::Timeout),
            _ => Err(UnknownFault(value.to_owned())),
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ServerError => "500",
            Self::Unavailable => "503",
            Self::RateLimited => "429",
            Self::Timeout => "timeout",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_fault_and_round_trips() {
        for text in ["500", "503", "429", "timeout"] {
            let fault: Fault = text.parse().unwrap();
            assert_eq!(fault.to_string(), text);
        }
        assert_eq!(" TIMEOUT ".parse::<Fault>(), Ok(Fault::Timeout));
    }

    #[test]
    fn rejects_unknown_values_with_the_accepted_list() {
        let err = "502".parse::<Fault>().unwrap_err();
        assert!(err.to_string().contains("500, 503, 429, timeout"), "{err}");
    }
}
