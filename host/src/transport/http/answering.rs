//! The gateway as the HTTP transport serves it ([`Answering`]): each
//! request's permit ([`RequestPermit`]) is given back the moment the
//! gateway has its answer, before rmcp writes it.
//!
//! A permit held until the response body ended could still be held when
//! the client, having read the answer, sent its next request: the end of a
//! response stream follows its last message from another task. A caller
//! at its `http.requests_per_identity` bound then met its own finished
//! request (a 429). Given back here, a request's permit is free before
//! the client can have the answer.
//!
//! rmcp's HTTP service takes a `ServerHandler`, and dispatches each
//! request to one of its methods: [`Answering`] is one, every method
//! passed on to [`Gateway`]. A request method takes the permit over as it
//! begins and gives it back when it has answered or is dropped; from then
//! on the end of the response body leaves the permit alone, so a client
//! that hangs up on a legacy session's call (whose handler rmcp lets run
//! on) cannot start another past its bound.
//!
//! What rmcp answers before any handler runs (a protocol version it does
//! not serve, missing `_meta`, a method the era or the capabilities do not
//! have, an unknown session) gives its permit back when the response body
//! ends, a moment after the answer.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use axum::http::request::Parts;
use rmcp::model::*;
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio::sync::OwnedSemaphorePermit;

use crate::server::Gateway;

/// A POST's request permit, shared by what the HTTP layers hold until the
/// response ends and by the request rmcp hands the gateway.
#[derive(Clone)]
pub(super) struct RequestPermit(Arc<PermitSlot>);

struct PermitSlot {
    /// The permit and who holds it, under one lock: the end of a response
    /// body and a handler that begins decide between them once.
    held: Mutex<Slot>,
    /// Takes a permit again from the caller's bound, if it has room.
    again: Box<dyn Fn() -> Option<OwnedSemaphorePermit> + Send + Sync>,
}

struct Slot {
    permit: Option<OwnedSemaphorePermit>,
    /// Whether a handler has taken the permit over ([`RequestPermit::answering`]).
    answering: bool,
}

impl RequestPermit {
    /// `permit`, taken from a caller's bound; `again` takes another from
    /// it (for a handler that begins after `permit` was given back).
    pub(super) fn new(
        permit: OwnedSemaphorePermit,
        again: impl Fn() -> Option<OwnedSemaphorePermit> + Send + Sync + 'static,
    ) -> RequestPermit {
        RequestPermit(Arc::new(PermitSlot {
            held: Mutex::new(Slot {
                permit: Some(permit),
                answering: false,
            }),
            again: Box::new(again),
        }))
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.0.held.lock().expect("not poisoned")
    }

    /// Gives the permit back (once; later calls do nothing).
    pub(super) fn release(&self) {
        drop(self.slot().permit.take());
    }

    /// Gives the permit back unless a handler has taken it over: the end
    /// of a response body while the request it answers may still run.
    pub(super) fn release_unless_answering(&self) {
        let permit = {
            let mut slot = self.slot();
            if slot.answering {
                return;
            }
            slot.permit.take()
        };
        drop(permit);
    }

    /// Takes the permit over for a handler: given back when the returned
    /// guard is dropped (the handler answered, or was dropped). A handler
    /// that begins after the response body ended (a client that hung up
    /// on a legacy session's call, which rmcp still runs) found its permit
    /// given back: it takes one again, and past the caller's bound it is
    /// refused, so a hang-up never lets a request run uncounted.
    fn answering(&self) -> Result<Answered, ErrorData> {
        let mut slot = self.slot();
        slot.answering = true;
        if slot.permit.is_none() {
            match (self.0.again)() {
                Some(permit) => slot.permit = Some(permit),
                None => {
                    return Err(ErrorData::invalid_request(
                        "too many requests open for this caller \
                         (http.requests_per_identity); retry when one has finished",
                        None,
                    ));
                }
            }
        }
        Ok(Answered(self.clone()))
    }

    /// The permit of the HTTP request `context`'s request came in, if any.
    fn of(context: &RequestContext<RoleServer>) -> Option<RequestPermit> {
        context
            .extensions
            .get::<Parts>()
            .and_then(|parts| parts.extensions.get::<RequestPermit>())
            .cloned()
    }
}

/// Gives a handler's [`RequestPermit`] back when dropped.
struct Answered(RequestPermit);

impl Drop for Answered {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// [`Gateway`], with each request's [`RequestPermit`] given back as soon as
/// its answer is made.
#[derive(Clone)]
pub(super) struct Answering(pub(super) Gateway);

/// Request methods: the permit taken over, passed on, the permit given
/// back with the answer.
macro_rules! answered {
    ($($method:ident($($param:ident: $ty:ty),*) -> $answer:ty;)*) => {$(
        async fn $method(
            &self,
            $($param: $ty,)*
            context: RequestContext<RoleServer>,
        ) -> Result<$answer, ErrorData> {
            let _answered = RequestPermit::of(&context)
                .map(|p| p.answering())
                .transpose()?;
            self.0.$method($($param,)* context).await
        }
    )*};
}

/// Notification methods: passed on.
macro_rules! passed_on {
    ($($method:ident($($param:ident: $ty:ty),*);)*) => {$(
        async fn $method(
            &self,
            $($param: $ty,)*
            context: NotificationContext<RoleServer>,
        ) {
            self.0.$method($($param,)* context).await
        }
    )*};
}

#[allow(deprecated)] // subscribe, unsubscribe and set_level: served while specified.
impl ServerHandler for Answering {
    answered! {
        ping() -> ();
        initialize(request: InitializeRequestParams) -> InitializeResult;
        discover() -> DiscoverResult;
        complete(request: CompleteRequestParams) -> CompleteResult;
        set_level(request: SetLevelRequestParams) -> ();
        get_prompt(request: GetPromptRequestParams) -> GetPromptResponse;
        list_prompts(request: Option<PaginatedRequestParams>) -> ListPromptsResult;
        list_resources(request: Option<PaginatedRequestParams>) -> ListResourcesResult;
        list_resource_templates(request: Option<PaginatedRequestParams>) -> ListResourceTemplatesResult;
        read_resource(request: ReadResourceRequestParams) -> ReadResourceResponse;
        subscribe(request: SubscribeRequestParams) -> ();
        unsubscribe(request: UnsubscribeRequestParams) -> ();
        call_tool(request: CallToolRequestParams) -> CallToolResponse;
        list_tools(request: Option<PaginatedRequestParams>) -> ListToolsResult;
        on_custom_request(request: CustomRequest) -> CustomResult;
        get_task(request: GetTaskParams) -> GetTaskResult;
        update_task(request: UpdateTaskParams) -> ();
        cancel_task(request: CancelTaskParams) -> ();
        list_skills(request: Option<PaginatedRequestParams>) -> ListSkillsResult;
        get_skill(request: GetSkillRequestParams) -> GetSkillResult;
        read_resource_directory(request: ReadResourceDirectoryRequestParams) -> ReadResourceDirectoryResult;
    }

    passed_on! {
        on_cancelled(notification: CancelledNotificationParam);
        on_progress(notification: ProgressNotificationParam);
        on_initialized();
        on_roots_list_changed();
        on_custom_notification(notification: CustomNotification);
    }

    fn negotiate_initialize(
        &self,
        request: &InitializeRequestParams,
    ) -> Result<InitializeResult, ErrorData> {
        self.0.negotiate_initialize(request)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        ServerHandler::supported_protocol_versions(&self.0)
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.0.accepted_subscription_filter(requested)
    }

    /// A listen stream holds a stream's permit, not a request's (the
    /// transport exchanged them when it read the body).
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.0.listen(context).await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.0.get_tool(name)
    }

    fn get_info(&self) -> ServerConfig {
        ServerHandler::get_info(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tokio::sync::Semaphore;

    use super::RequestPermit;

    /// A request's permit from `bound`, taken again from it.
    fn permit_of(bound: &Arc<Semaphore>) -> RequestPermit {
        let again = bound.clone();
        RequestPermit::new(bound.clone().try_acquire_owned().unwrap(), move || {
            again.clone().try_acquire_owned().ok()
        })
    }

    #[test]
    fn a_permit_a_handler_took_over_stays_held_past_the_body_until_the_handler_ends() {
        let bound = Arc::new(Semaphore::new(1));
        let permit = permit_of(&bound);
        let handler = permit.answering().unwrap();
        // The client hung up: the body ends while the handler still runs.
        permit.release_unless_answering();
        assert_eq!(bound.available_permits(), 0, "the request still counts");
        drop(handler);
        assert_eq!(bound.available_permits(), 1, "given back with the answer");
    }

    #[test]
    fn a_permit_no_handler_took_is_given_back_when_the_body_ends() {
        let bound = Arc::new(Semaphore::new(1));
        let permit = permit_of(&bound);
        permit.release_unless_answering();
        assert_eq!(bound.available_permits(), 1);
    }

    #[test]
    fn a_handler_that_begins_after_its_body_ended_counts_again_or_is_refused() {
        let bound = Arc::new(Semaphore::new(1));
        let permit = permit_of(&bound);
        // The client hung up before rmcp's handler began.
        permit.release_unless_answering();
        assert_eq!(bound.available_permits(), 1);
        // Another request of the caller took the place meanwhile: the late
        // handler is refused rather than run uncounted.
        let other = bound.clone().try_acquire_owned().unwrap();
        assert!(permit.answering().is_err());
        drop(other);
        // With the place free, it counts again while it runs.
        let handler = permit.answering().unwrap();
        assert_eq!(bound.available_permits(), 0, "the late handler counts");
        drop(handler);
        assert_eq!(bound.available_permits(), 1);
    }
}
