//! The StatusPro API client, over the host's `http` import.
//!
//! The base URL is the operator's `base_url` setting
//! (`https://app.orderstatuspro.com/api/v1` for the real API). The API key
//! is not read here: the host adds `Authorization` to every request for the
//! API's host from its `credentials` configuration.
//!
//! Reads ([`Client::get`]) turn any failure into a tool error. Writes
//! ([`Client::post`]) return the response whatever its status, so a
//! mutation can report what the API answered; only a request that never
//! got an answer is an error.

use serde::Serialize;
use serde::de::DeserializeOwned;
use toolhost_sdk::http::{self, Request, Response};
use toolhost_sdk::{ToolError, config};

use crate::api;
use crate::error::api_error;

/// A client for one call.
#[derive(Debug, Clone)]
pub struct Client {
    /// The API root, e.g. `https://…/api/v1`.
    base_url: String,
}

impl Client {
    /// A client for the API at the operator's `base_url` setting.
    pub fn from_config() -> Result<Client, ToolError> {
        Ok(Client::new(&config::require("base_url")?))
    }

    /// A client for the API at `base_url`.
    pub fn new(base_url: &str) -> Client {
        Client {
            base_url: base_url.to_string(),
        }
    }

    /// The absolute URL of `path` (which starts with `/`).
    pub fn url(&self, path: &str) -> String {
        http::join(&self.base_url, path)
    }

    /// `GET path?query`, parsed as `T`. Any failure is a tool error (the
    /// SDK names the request in its message).
    pub fn get<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<T, ToolError> {
        let response = Request::get(self.url(path)).query(query).send()?;
        if !response.is_success() {
            return Err(api_error(&response));
        }
        response.json()
    }

    /// `POST path` with a JSON `body`. Answers of any status are `Ok`; only
    /// a request that got no answer (refused by the host, timed out,
    /// unreachable) is an error.
    pub fn post<B: Serialize>(&self, path: &str, body: &B) -> Result<Response, ToolError> {
        Request::post(self.url(path)).json(body)?.send()
    }

    /// `GET /orders/{id}/viable-statuses`: where the order may move next.
    pub fn viable_statuses(&self, order_id: u64) -> Result<Vec<api::StatusDefinition>, ToolError> {
        self.get(&format!("/orders/{order_id}/viable-statuses"), &[])
    }

    /// `GET /statuses`: the whole catalog.
    pub fn statuses(&self) -> Result<Vec<api::StatusDefinition>, ToolError> {
        self.get("/statuses", &[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_join_without_double_slashes() {
        let client = Client::new("http://127.0.0.1:8080/api/v1/");
        assert_eq!(
            client.url("/orders/1"),
            "http://127.0.0.1:8080/api/v1/orders/1"
        );
    }
}
