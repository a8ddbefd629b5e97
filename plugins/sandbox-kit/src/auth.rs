//! Bearer-token authentication.
//!
//! Upstreams authenticate every call with `Authorization: Bearer <api key>`.
//! A sandbox knows exactly one valid key; [`check_bearer`] compares the header
//! against it and, on success, hands back the key so the rate limiter can count
//! requests per key.

use axum::http::{HeaderMap, header::AUTHORIZATION};

/// Why a request failed authentication.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// No `Authorization` header was sent.
    #[error("no Authorization header")]
    Missing,
    /// The header is not of the form `Bearer <token>`.
    #[error("Authorization header is not a bearer token")]
    NotBearer,
    /// A bearer token was sent but it is not the sandbox's API key.
    #[error("bearer token does not match the sandbox API key")]
    WrongKey,
}

/// Checks that `headers` carry `Authorization: Bearer <expected>`.
///
/// The scheme is matched case-insensitively (`bearer` works too), as most
/// frameworks do; the key itself must match exactly. Returns the accepted key.
pub fn check_bearer<'a>(headers: &HeaderMap, expected: &'a str) -> Result<&'a str, AuthError> {
    let value = headers.get(AUTHORIZATION).ok_or(AuthError::Missing)?;
    let value = value.to_str().map_err(|_| AuthError::NotBearer)?.trim();
    let (scheme, token) = value.split_once(' ').ok_or(AuthError::NotBearer)?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(AuthError::NotBearer);
    }
    if token.trim() == expected {
        Ok(expected)
    } else {
        Err(AuthError::WrongKey)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(value: Option<&str>) -> HeaderMap {
        let mut map = HeaderMap::new();
        if let Some(value) = value {
            map.insert(AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn accepts_the_right_key() {
        assert_eq!(check_bearer(&headers(Some("Bearer k1")), "k1"), Ok("k1"));
        assert_eq!(check_bearer(&headers(Some("bearer k1")), "k1"), Ok("k1"));
    }

    #[test]
    fn rejects_missing_malformed_and_wrong_keys() {
        assert_eq!(check_bearer(&headers(None), "k1"), Err(AuthError::Missing));
        assert_eq!(
            check_bearer(&headers(Some("Basic k1")), "k1"),
            Err(AuthError::NotBearer)
        );
        assert_eq!(
            check_bearer(&headers(Some("k1")), "k1"),
            Err(AuthError::NotBearer)
        );
        assert_eq!(
            check_bearer(&headers(Some("Bearer k2")), "k1"),
            Err(AuthError::WrongKey)
        );
    }
}
