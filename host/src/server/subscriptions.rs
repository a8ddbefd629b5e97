//! Resource subscriptions (ADR 0027): `resources/subscribe` and
//! `resources/unsubscribe` for legacy sessions, and `subscriptions/listen`
//! streams for 2026-07-28 clients, whose acknowledged filter holds only
//! URIs the caller may see.

use std::collections::BTreeSet;

use rmcp::ErrorData;
use rmcp::model::SubscriptionFilter;
use rmcp::service::{Peer, RequestContext, RoleServer, SubscriptionContext, SubscriptionSink};
use serde_json::json;

use super::Gateway;
use super::request::{Request, Visible};
use crate::auth::Identity;

/// The longest URI a session may subscribe to, in bytes: with
/// `host.resource_subscriptions`, what bounds the memory one session's
/// subscriptions hold.
pub const MAX_SUBSCRIBED_URI_BYTES: usize = 4096;

/// The resource URIs one legacy session subscribed to
/// (`resources/subscribe`), kept until it unsubscribes or the session ends.
pub(super) struct SessionSubscriptions {
    /// The session's `Mcp-Session-Id` over HTTP; `None` over stdio, which
    /// serves one session.
    pub session: Option<String>,
    /// Where its `notifications/resources/updated` go; closed once the
    /// session ended, and then the entry is dropped.
    pub peer: Peer<RoleServer>,
    /// Who subscribed (HTTP with `[auth]`): an update is sent only for a URI
    /// this identity may see (`[[access]]`).
    pub identity: Option<Identity>,
    /// The profile it came through: the URIs are as it serves them, and
    /// an update is sent only for what it serves.
    pub profile: Option<String>,
    /// The URIs, each one a served resource's or one a template matches
    /// when it was subscribed to.
    pub uris: BTreeSet<String>,
}

/// A 2026-07-28 `subscriptions/listen` stream whose acknowledged filter
/// holds resource URIs: it hears of those URIs until it closes.
pub(super) struct ResourceListener {
    /// The stream; its accepted filter holds the URIs.
    pub sink: SubscriptionSink,
    /// Who opened it, as for [`SessionSubscriptions::identity`].
    pub identity: Option<Identity>,
    /// The profile it came through, as for
    /// [`SessionSubscriptions::profile`].
    pub profile: Option<String>,
}

/// Narrows a listen filter's resource URIs to those some served component
/// offers and `visible` allows (and that are not too long); whether it
/// removed any.
pub(super) fn narrow_to_visible(visible: Visible<'_>, filter: &mut SubscriptionFilter) -> bool {
    let Some(uris) = &mut filter.resource_subscriptions else {
        return false;
    };
    let before = uris.len();
    uris.retain(|uri| uri.len() <= MAX_SUBSCRIBED_URI_BYTES && visible.serves_uri(uri));
    uris.len() != before
}

/// The filter a listen stream is acknowledged with: what the server
/// advertises of `requested`, with only the URIs something served offers.
/// rmcp asks without the request's context; the HTTP transport narrowed
/// the URIs to what the caller may see before
/// ([`Gateway::narrow_listen_request`]).
pub(super) fn accepted_filter(
    gateway: &Gateway,
    requested: &SubscriptionFilter,
) -> SubscriptionFilter {
    let mut accepted = requested.supported_by(&gateway.server_config().capabilities);
    let registry = gateway.registry();
    let config = registry.config();
    let everything = Visible::everything(&registry);
    if let Some(uris) = &mut accepted.resource_subscriptions {
        // A profile's alias, which the transport let through for a caller
        // of that profile, is served too.
        uris.retain(|uri| {
            uri.len() <= MAX_SUBSCRIBED_URI_BYTES
                && (everything.serves_uri(uri)
                    || config
                        .profiles
                        .iter()
                        .any(|p| p.registry_uri(uri).is_some_and(|r| r != uri)))
        });
    }
    accepted
}

/// The refusal of a subscription past `host.resource_subscriptions`.
fn too_many_subscriptions(limit: usize, holder: &str, instead: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "{holder} may subscribe to at most {limit} resource URIs (host.resource_subscriptions); \
             {instead}, or raise host.resource_subscriptions"
        ),
        None,
    )
}

/// `resources/subscribe`: adds `uri`, which some served component must
/// offer (a resource, or a URI one of its templates matches) and the
/// caller may see, to the session's subscriptions, up to
/// `host.resource_subscriptions`. Subscribing twice is one subscription.
pub(super) fn subscribe(
    gateway: &Gateway,
    request: &Request,
    uri: String,
    context: &RequestContext<RoleServer>,
) -> Result<(), ErrorData> {
    if uri.len() > MAX_SUBSCRIBED_URI_BYTES {
        return Err(ErrorData::invalid_params(
            format!(
                "a subscribed URI is at most {MAX_SUBSCRIBED_URI_BYTES} bytes; this one is {}",
                uri.len()
            ),
            None,
        ));
    }
    if !request.visible().serves_uri(&uri) {
        return Err(ErrorData::resource_not_found(
            format!(
                "no resource at {uri:?} to subscribe to; call resources/list and \
                 resources/templates/list to see what is served"
            ),
            Some(json!({ "uri": uri })),
        ));
    }
    let limit = request.registry.config().resource_subscriptions;
    let mut sessions = gateway.inner.subscriptions.lock().expect("not poisoned");
    sessions.retain(|s| !s.peer.is_transport_closed());
    let index = match sessions.iter().position(|s| s.session == request.session) {
        Some(index) => index,
        None => {
            sessions.push(SessionSubscriptions {
                session: request.session.clone(),
                peer: context.peer.clone(),
                identity: None,
                profile: request.profile.clone(),
                uris: BTreeSet::new(),
            });
            sessions.len() - 1
        }
    };
    let held = &mut sessions[index];
    held.identity = request.identity.clone();
    if !held.uris.contains(&uri) && held.uris.len() >= limit {
        return Err(too_many_subscriptions(
            limit,
            "a session",
            "unsubscribe (resources/unsubscribe) from one first",
        ));
    }
    tracing::debug!(uri = %uri, "resource subscribed to");
    held.uris.insert(uri);
    Ok(())
}

/// `resources/unsubscribe`: drops `uri` from the session's subscriptions.
/// A URI it does not hold is no error: unsubscribing twice (a retry) ends
/// in the same state.
pub(super) fn unsubscribe(gateway: &Gateway, request: &Request, uri: &str) {
    let mut sessions = gateway.inner.subscriptions.lock().expect("not poisoned");
    sessions.retain(|s| !s.peer.is_transport_closed());
    let removed = sessions
        .iter_mut()
        .find(|s| s.session == request.session)
        .is_some_and(|s| s.uris.remove(uri));
    sessions.retain(|s| !s.uris.is_empty());
    if !removed {
        tracing::debug!(uri = %uri, "unsubscribe from a URI the session did not hold");
    }
}

/// `subscriptions/listen`: registers the stream for list changes (and, if
/// its acknowledged filter holds resource URIs, for their updates) until
/// the client closes it.
pub(super) async fn listen(
    gateway: &Gateway,
    request: &Request,
    context: SubscriptionContext,
) -> Result<(), ErrorData> {
    let resources = listen_to_resources(gateway, request, &context)?;
    let sink = context.sink().clone();
    let id = sink.id().clone();
    gateway
        .inner
        .listeners
        .lock()
        .expect("not poisoned")
        .push(sink);
    context.cancelled().await;
    gateway
        .inner
        .listeners
        .lock()
        .expect("not poisoned")
        .retain(|s| s.id() != &id);
    if resources {
        gateway
            .inner
            .resource_listeners
            .lock()
            .expect("not poisoned")
            .retain(|l| l.sink.id() != &id);
    }
    Ok(())
}

/// Registers a listen stream whose acknowledged filter holds resource
/// URIs; `false` when it holds none. More URIs than
/// `host.resource_subscriptions` end the stream with an error naming the
/// limit.
fn listen_to_resources(
    gateway: &Gateway,
    request: &Request,
    context: &SubscriptionContext,
) -> Result<bool, ErrorData> {
    let accepted = context
        .accepted()
        .resource_subscriptions
        .as_ref()
        .map_or(0, Vec::len);
    if accepted == 0 {
        return Ok(false);
    }
    let limit = request.registry.config().resource_subscriptions;
    if accepted > limit {
        return Err(too_many_subscriptions(
            limit,
            "a subscriptions/listen stream",
            "listen to fewer URIs per stream",
        ));
    }
    gateway
        .inner
        .resource_listeners
        .lock()
        .expect("not poisoned")
        .push(ResourceListener {
            sink: context.sink().clone(),
            identity: request.identity.clone(),
            profile: request.profile.clone(),
        });
    Ok(true)
}
