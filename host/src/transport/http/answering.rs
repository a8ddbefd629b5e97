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
//! passed on to [`Gateway`], each request method followed by the release.
//! What rmcp answers without the handler (the legacy `initialize`
//! handshake) gives its permit back when the response body ends.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use axum::http::request::Parts;
use rmcp::model::*;
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio::sync::OwnedSemaphorePermit;

use crate::server::Gateway;

/// A POST's request permit, shared by what the HTTP layers hold until the
/// response ends and by the request rmcp hands the gateway: whichever
/// comes first gives it back.
#[derive(Clone)]
pub(super) struct RequestPermit(Arc<Mutex<Option<OwnedSemaphorePermit>>>);

impl RequestPermit {
    pub(super) fn new(permit: OwnedSemaphorePermit) -> RequestPermit {
        RequestPermit(Arc::new(Mutex::new(Some(permit))))
    }

    /// Gives the permit back (once; later calls do nothing).
    pub(super) fn release(&self) {
        drop(self.0.lock().expect("not poisoned").take());
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

/// [`Gateway`], with each request's [`RequestPermit`] given back as soon as
/// its answer is made.
#[derive(Clone)]
pub(super) struct Answering(pub(super) Gateway);

/// Request methods: passed on, then the permit given back.
macro_rules! answered {
    ($($method:ident($($param:ident: $ty:ty),*) -> $answer:ty;)*) => {$(
        async fn $method(
            &self,
            $($param: $ty,)*
            context: RequestContext<RoleServer>,
        ) -> Result<$answer, ErrorData> {
            let permit = RequestPermit::of(&context);
            let answer = self.0.$method($($param,)* context).await;
            if let Some(permit) = permit {
                permit.release();
            }
            answer
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
