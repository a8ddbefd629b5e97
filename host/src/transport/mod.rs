//! How toolhost is reached: MCP over stdio (the default), or over
//! Streamable HTTP.
//!
//! [`server::Gateway`](crate::server::Gateway) is rmcp's service and knows
//! no transport. This module puts a ready Gateway (built by
//! [`crate::serve`], the composition root) on stdin/stdout or on a socket:
//! - [`stdio`] runs the session: a reader, rmcp, and one writer;
//! - [`triage`] decides, for one line, whether rmcp gets it or toolhost
//!   answers it itself (input rmcp would drop unanswered, or answer with
//!   the wrong error). See ADR 0010;
//! - [`http`] serves `/mcp` with rmcp's Streamable HTTP service for many
//!   clients in both eras, bounded per caller, with health endpoints and a
//!   graceful shutdown. See ADR 0011;
//! - [`rebinding`] is its `Host` and `Origin` check (DNS-rebinding
//!   protection), run before any other layer. See ADR 0033.

use std::net::{IpAddr, SocketAddr};

use axum::http::HeaderMap;

/// The address of the client a request came from: its connection's peer,
/// or, when the peer is one of `trusted` (`http.trusted_proxies`), the
/// last address of its `X-Forwarded-For` that is not itself trusted (each
/// proxy appends the address it received the request from, so the last
/// untrusted one is the closest any client could not forge). From an
/// untrusted peer the header is ignored: a client cannot pick its own
/// address. An entry that is not an address ends the walk at the hop that
/// wrote it. `None` when the peer is unknown.
pub fn client_address(
    peer: Option<SocketAddr>,
    headers: &HeaderMap,
    trusted: &[ipnet::IpNet],
) -> Option<IpAddr> {
    let mut client = peer?.ip().to_canonical();
    let is_trusted = |address: &IpAddr| trusted.iter().any(|block| block.contains(address));
    if !is_trusted(&client) {
        return Some(client);
    }
    // Split as bytes: a proxy appends its hop to whatever the client sent
    // in the same value, and a client's entry that is not text must not
    // hide the proxy's (it ends the walk where it stands, as any entry
    // that is not an address does).
    let forwarded: Vec<&[u8]> = headers
        .get_all("x-forwarded-for")
        .iter()
        .flat_map(|value| value.as_bytes().split(|b| *b == b','))
        .map(<[u8]>::trim_ascii)
        .collect();
    for entry in forwarded.iter().rev() {
        let Some(address) = std::str::from_utf8(entry)
            .ok()
            .and_then(|e| e.parse::<IpAddr>().ok())
            .map(|a| a.to_canonical())
        else {
            break;
        };
        client = address;
        if !is_trusted(&client) {
            break;
        }
    }
    Some(client)
}

pub mod approval_page;
pub mod http;
pub mod rebinding;
pub mod stdio;
pub mod triage;

#[cfg(test)]
mod tests {
    use super::*;

    fn forwarded(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append("x-forwarded-for", value.parse().unwrap());
        }
        headers
    }

    fn blocks(entries: &[&str]) -> Vec<ipnet::IpNet> {
        entries.iter().map(|e| e.parse().unwrap()).collect()
    }

    fn peer(address: &str) -> Option<SocketAddr> {
        Some(SocketAddr::new(address.parse().unwrap(), 40000))
    }

    fn ip(address: &str) -> Option<IpAddr> {
        Some(address.parse().unwrap())
    }

    #[test]
    fn a_peer_that_is_no_trusted_proxy_is_the_client_whatever_its_header_says() {
        let headers = forwarded(&["192.0.2.1"]);
        assert_eq!(
            client_address(peer("203.0.113.9"), &headers, &[]),
            ip("203.0.113.9")
        );
        assert_eq!(
            client_address(peer("203.0.113.9"), &headers, &blocks(&["10.0.0.0/8"])),
            ip("203.0.113.9")
        );
        assert_eq!(client_address(None, &headers, &[]), None);
    }

    #[test]
    fn behind_trusted_proxies_the_client_is_the_last_address_no_proxy_of_ours_wrote() {
        let trusted = blocks(&["10.0.0.0/8", "fd00::/8"]);
        // (peer, X-Forwarded-For headers, the client, why)
        let cases: &[(&str, &[&str], &str, &str)] = &[
            (
                "10.9.9.9",
                &["192.0.2.1, 198.51.100.7", "10.1.2.3"],
                "198.51.100.7",
                "the client forged the first entry, the edge proxy appended what it saw",
            ),
            (
                "::ffff:10.0.0.1",
                &["2001:db8::5"],
                "2001:db8::5",
                "IPv6, an IPv4-mapped peer",
            ),
            ("10.0.0.1", &[], "10.0.0.1", "no header: the proxy itself"),
            (
                "10.0.0.1",
                &["198.51.100.7, unknown"],
                "10.0.0.1",
                "an entry that is no address ends the walk at the hop that wrote it",
            ),
            (
                "10.0.0.1",
                &["10.0.0.5, 10.0.0.6"],
                "10.0.0.5",
                "every entry trusted: the first",
            ),
        ];
        for (from, headers, client, why) in cases {
            assert_eq!(
                client_address(peer(from), &forwarded(headers), &trusted),
                ip(client),
                "{why}"
            );
        }
    }

    #[test]
    fn a_clients_entry_that_is_not_text_hides_no_address_a_proxy_appended_after_it() {
        // nginx appends its hop to the value the client sent, in one value.
        let mut headers = HeaderMap::new();
        headers.append(
            "x-forwarded-for",
            axum::http::HeaderValue::from_bytes(b"\xc3\xa9, 203.0.113.11").unwrap(),
        );
        assert_eq!(
            client_address(peer("10.0.0.1"), &headers, &blocks(&["10.0.0.0/8"])),
            ip("203.0.113.11")
        );
    }
}
