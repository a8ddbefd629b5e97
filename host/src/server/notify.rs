//! Publishing a new registry and telling clients what changed: list
//! changes to legacy sessions and listen streams, and resource updates to
//! the subscribers of a URI, each only for what its caller may see.

use std::sync::Arc;

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::{Peer, RoleServer, SubscriptionSink};
use serde_json::Value;

use super::Gateway;
use super::convert::{mcp_prompt, mcp_resource, mcp_template, mcp_tool};
use super::request::Visible;
use crate::auth::Identity;
use crate::registry::Registry;

impl Gateway {
    /// Remembers a legacy session's peer once its `initialized` arrived,
    /// forgetting sessions that ended.
    pub(super) fn add_legacy_peer(&self, peer: Peer<RoleServer>) {
        let mut peers = self.inner.legacy_peers.lock().expect("not poisoned");
        peers.retain(|p| !p.is_transport_closed());
        peers.push(peer);
    }

    /// The open legacy sessions' peers.
    fn legacy_peers(&self) -> Vec<Peer<RoleServer>> {
        let mut peers = self.inner.legacy_peers.lock().expect("not poisoned");
        peers.retain(|p| !p.is_transport_closed());
        peers.clone()
    }

    /// The open listen streams.
    fn listen_streams(&self) -> Vec<SubscriptionSink> {
        self.inner.listeners.lock().expect("not poisoned").clone()
    }

    /// Serves `registry` from now on and tells every client its tool list
    /// changed (and its resource and prompt lists, when either registry
    /// offers any).
    pub async fn replace_registry(&self, registry: Registry) {
        let before = self.inner.registry.swap(Arc::new(registry));
        super::discovery::prune(self, true).await;
        self.notify_tools_changed().await;
        self.notify_offers_changed(&before).await;
        self.notify_resources_updated(&before).await;
    }

    /// Serves `registry`, built for a reloaded configuration (which it
    /// carries), from now on. Clients are told their tool list changed only
    /// if it may have: a tool's definition or served name, or the
    /// `[[access]]` rules that decide who sees it, changed; their resource
    /// and prompt lists likewise; and subscribers of a URI whose block's
    /// settings changed that it was updated.
    pub async fn replace_settings(&self, registry: Registry) {
        let before = self.registry();
        // `[[access]]` and the hide rules decide who sees what: a new
        // policy may change any caller's lists.
        // So may a profile's edit (its tools, names, words or hide).
        let access_changed = before.config().policy != registry.config().policy
            || format!("{:?}", before.config().profiles)
                != format!("{:?}", registry.config().profiles);
        // Everything served, as every caller without `[[access]]` sees it.
        let tools = |r: &Registry| -> Vec<Value> {
            Visible::everything(r)
                .tools()
                .iter()
                .map(|t| serde_json::to_value(mcp_tool(t)).unwrap_or(Value::Null))
                .collect()
        };
        // A block added or removed (`unmatched_files = "skip"`) adds or
        // removes what its components offer; a prefix renames prompts.
        let resources = |r: &Registry| -> Vec<Value> {
            let listed = r
                .resources()
                .map(|o| serde_json::to_value(mcp_resource(&o.item)));
            let templates = r
                .templates()
                .map(|t| serde_json::to_value(mcp_template(&t.item.definition)));
            listed
                .chain(templates)
                .map(|v| v.unwrap_or(Value::Null))
                .collect()
        };
        let prompts = |r: &Registry| -> Vec<Value> {
            r.prompts()
                .map(|p| serde_json::to_value(mcp_prompt(&p.key, &p.item)).unwrap_or(Value::Null))
                .collect()
        };
        // Changed access changes a list for someone whenever it is not
        // empty on both sides.
        let differ = |a: Vec<Value>, b: Vec<Value>| {
            a != b || (access_changed && !(a.is_empty() && b.is_empty()))
        };
        let tools_changed = tools(&before) != tools(&registry) || access_changed;
        let resources_changed = differ(resources(&before), resources(&registry));
        let prompts_changed = differ(prompts(&before), prompts(&registry));
        self.inner.registry.store(Arc::new(registry));
        super::discovery::prune(self, tools_changed).await;
        if tools_changed {
            self.notify_tools_changed().await;
        }
        self.notify_offer_lists(resources_changed, prompts_changed)
            .await;
        self.notify_resources_updated(&before).await;
    }

    /// Sends `tools/list_changed` to every legacy session and every listen
    /// stream.
    pub async fn notify_tools_changed(&self) {
        for peer in self.legacy_peers() {
            if let Err(e) = peer.notify_tool_list_changed().await {
                tracing::debug!("cannot send tools/list_changed: {e}");
            }
        }
        for sink in self.listen_streams() {
            if let Err(e) = sink.notify_tool_list_changed().await {
                tracing::debug!("cannot notify listen stream: {e}");
            }
        }
    }

    /// Sends `resources/list_changed` when `before` or the registry now
    /// served offers resources or templates, and `prompts/list_changed` when
    /// either offers prompts, to every legacy session and listen stream.
    async fn notify_offers_changed(&self, before: &Registry) {
        let now = self.registry();
        let has_resources =
            |r: &Registry| r.resources().next().is_some() || r.templates().next().is_some();
        let resources = has_resources(before) || has_resources(&now);
        let prompts = before.prompts().next().is_some() || now.prompts().next().is_some();
        self.notify_offer_lists(resources, prompts).await;
    }

    /// Sends `resources/list_changed` if `resources`, and
    /// `prompts/list_changed` if `prompts`, to every legacy session and
    /// listen stream.
    async fn notify_offer_lists(&self, resources: bool, prompts: bool) {
        if !resources && !prompts {
            return;
        }
        for peer in self.legacy_peers() {
            if resources && let Err(e) = peer.notify_resource_list_changed().await {
                tracing::debug!("cannot send resources/list_changed: {e}");
            }
            if prompts && let Err(e) = peer.notify_prompt_list_changed().await {
                tracing::debug!("cannot send prompts/list_changed: {e}");
            }
        }
        for sink in self.listen_streams() {
            if resources && let Err(e) = sink.notify_resource_list_changed().await {
                tracing::debug!("cannot notify listen stream: {e}");
            }
            if prompts && let Err(e) = sink.notify_prompt_list_changed().await {
                tracing::debug!("cannot notify listen stream: {e}");
            }
        }
    }

    /// Sends `notifications/resources/updated` for every subscribed URI
    /// whose offering, as its subscriber sees it, changed from `before` to
    /// the registry now served ([`crate::registry::serving_changed`]: its
    /// component reloaded, replaced or removed, its block's settings
    /// changed, or it became visible or hidden to the subscriber), to each
    /// legacy session and listen stream that subscribed to it, in URI order.
    async fn notify_resources_updated(&self, before: &Registry) {
        let now = self.registry();
        let due = |identity: Option<&Identity>, profile: Option<&str>, uri: &str| {
            // A subscriber with an identity came over HTTP.
            let transport = if identity.is_some() { "http" } else { "stdio" };
            // The URI is as the subscriber's profile serves it.
            let seen_before = Visible::new(before, identity, transport)
                .through_named(before, profile)
                .resource_at(uri);
            let seen_now = Visible::new(&now, identity, transport)
                .through_named(&now, profile)
                .resource_at(uri);
            crate::registry::serving_changed(
                seen_before.as_ref().map(|t| &t.plugin),
                seen_now.as_ref().map(|t| &t.plugin),
            )
        };
        let sessions: Vec<(Peer<RoleServer>, Vec<String>)> = {
            let mut sessions = self.inner.subscriptions.lock().expect("not poisoned");
            sessions.retain(|s| !s.peer.is_transport_closed());
            sessions
                .iter()
                .map(|s| {
                    let uris = s
                        .uris
                        .iter()
                        .filter(|u| due(s.identity.as_ref(), s.profile.as_deref(), u));
                    (s.peer.clone(), uris.cloned().collect())
                })
                .collect()
        };
        for (peer, uris) in sessions {
            for uri in uris {
                let update = ResourceUpdatedNotificationParam::new(uri);
                if let Err(e) = peer.notify_resource_updated(update).await {
                    tracing::debug!("cannot send resources/updated: {e}");
                }
            }
        }
        let listeners: Vec<(SubscriptionSink, Vec<String>)> = self
            .inner
            .resource_listeners
            .lock()
            .expect("not poisoned")
            .iter()
            .map(|l| {
                let mut uris: Vec<String> = l
                    .sink
                    .accepted()
                    .resource_subscriptions
                    .iter()
                    .flatten()
                    .filter(|u| due(l.identity.as_ref(), l.profile.as_deref(), u))
                    .cloned()
                    .collect();
                uris.sort();
                uris.dedup();
                (l.sink.clone(), uris)
            })
            .collect();
        for (sink, uris) in listeners {
            for uri in uris {
                if let Err(e) = sink.notify_resource_updated(uri).await {
                    tracing::debug!("cannot notify listen stream: {e}");
                }
            }
        }
    }
}
