//! `/approvals` on the HTTP listener (ADR 0038): where approvers sign in,
//! see the calls waiting that they may decide, and approve or deny them.
//!
//! Plain server-rendered HTML (escaped by construction: `maud`), no script
//! at all, a strict Content-Security-Policy (nothing but this origin's
//! stylesheet; forms post only here; no framing). An approver signs in
//! with a bearer token `[auth]` accepts (a static token, or a JWT from the
//! issuer), checked as `/mcp` checks it; the session is a random id in an
//! `HttpOnly`, `SameSite=Strict` cookie scoped to `/approvals`, kept in
//! the approvals store (so any replica serves it), and every form carries
//! the session's CSRF token, compared in constant time. A decision is one
//! atomic move of the approval: a second click, a replayed form or another
//! approver at the same moment change nothing and are told so.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Form, Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use maud::{DOCTYPE, Markup, html};
use serde::Deserialize;
use sha2::Digest as _;
use subtle::ConstantTimeEq;

use crate::approvals::{Approval, SESSION_LIFETIME};
use crate::auth::{Authenticator, Identity};
use crate::server::{ClientAddress, DecideError, Gateway};

/// The page's path.
pub const PAGE_PATH: &str = "/approvals";

/// The session cookie's name.
const COOKIE: &str = "toolhost_approver";

/// The longest note an approver may leave, in characters.
const MAX_NOTE_CHARS: usize = 500;

/// Every page's Content-Security-Policy: this origin's stylesheet and
/// nothing else; forms post here alone; no page may frame it.
const CSP: &str = "default-src 'none'; style-src 'self'; form-action 'self'; \
                   frame-ancestors 'none'; base-uri 'none'";

/// The stylesheet.
const STYLE: &str = "\
body{font-family:system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1b1f24}\
header{background:#1b1f24;color:#fff;padding:.8rem 1.5rem;display:flex;justify-content:space-between;align-items:center}\
header h1{font-size:1.2rem;margin:0}header form{margin:0}\
main{max-width:60rem;margin:1.5rem auto;padding:0 1rem}\
article{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:1rem 1.5rem;margin-bottom:1.2rem}\
article h2{font-size:1.1rem;margin:.2rem 0 .8rem}\
dl{display:grid;grid-template-columns:9rem 1fr;gap:.3rem .8rem;margin:0 0 .8rem}dt{color:#57606a}dd{margin:0;word-break:break-all}\
pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:.8rem;overflow:auto;max-height:24rem}\
label{display:block;margin:.6rem 0 .2rem;color:#57606a}\
textarea,input[type=password]{width:100%;box-sizing:border-box;padding:.4rem;font:inherit}\
button{font:inherit;padding:.45rem 1.1rem;margin:.6rem .6rem 0 0;border-radius:6px;border:1px solid #d0d7de;cursor:pointer}\
button.approve{background:#1f883d;color:#fff;border-color:#1a7f37}button.deny{background:#cf222e;color:#fff;border-color:#a40e26}\
.notice{padding:.8rem 1rem;border-radius:6px;margin-bottom:1rem;background:#ddf4ff;border:1px solid #54aeff}\
.refused{background:#ffebe9;border-color:#ff8182}.empty{color:#57606a}\
form.filter{display:flex;flex-wrap:wrap;gap:.2rem .6rem;align-items:center;margin-bottom:1rem}\
form.filter label{margin:0}form.filter button{margin:0}select{font:inherit;padding:.3rem}\
nav.pages{text-align:center;margin:1rem 0 2rem}nav.pages a{margin:0 .6rem}\
";

/// Sign-in attempts one client address may make per minute: a token
/// posted, or a sign-in through the provider begun (which keeps a state in
/// the approvals store for ten minutes). An approver needs one or two; a
/// client guessing tokens, or filling the store, is told to wait.
pub const SIGN_INS_PER_MINUTE: u32 = 10;

/// Client addresses the sign-in limit remembers before it forgets those
/// whose attempts have all lapsed.
const REMEMBERED_ADDRESSES: usize = 10_000;

/// Sign-in attempts per client address ([`SIGN_INS_PER_MINUTE`]). An IPv6
/// address counts by its /64, the block one client usually holds.
struct SignInLimit {
    limiter: governor::DefaultKeyedRateLimiter<std::net::IpAddr>,
}

impl SignInLimit {
    fn new() -> SignInLimit {
        let per_minute = std::num::NonZeroU32::new(SIGN_INS_PER_MINUTE).expect("not zero");
        SignInLimit {
            limiter: governor::RateLimiter::keyed(governor::Quota::per_minute(per_minute)),
        }
    }

    /// Counts an attempt from `client` (none: the connection's address is
    /// unknown, and every such attempt counts together); `Err` with how
    /// long to wait when its attempts are spent.
    fn attempt(&self, client: Option<std::net::IpAddr>) -> Result<(), std::time::Duration> {
        use governor::clock::{Clock, DefaultClock};
        let address = match client {
            Some(std::net::IpAddr::V6(v6)) => {
                let block = u128::from(v6) & !((1u128 << 64) - 1);
                std::net::IpAddr::V6(block.into())
            }
            Some(v4) => v4,
            None => std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED),
        };
        if self.limiter.len() > REMEMBERED_ADDRESSES {
            self.limiter.retain_recent();
        }
        self.limiter
            .check_key(&address)
            .map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
    }
}

/// The answer to an attempt over the limit: 429, when to come back.
fn too_many_sign_ins(wait: std::time::Duration) -> Response {
    let seconds = wait.as_secs().max(1);
    let mut response = respond(
        StatusCode::TOO_MANY_REQUESTS,
        layout(
            "Too many sign-ins",
            None,
            html! {
                p.notice.refused role="alert" {
                    "Too many sign-in attempts from this address: at most "
                    (SIGN_INS_PER_MINUTE) " a minute. Try again in " (seconds) " s."
                }
            },
        ),
    );
    if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

/// What the page's handlers share.
#[derive(Clone)]
struct Page {
    gateway: Gateway,
    auth: Option<Authenticator>,
    /// Whether the cookie is `Secure` (the page is reached over HTTPS).
    secure: bool,
    /// The client that exchanges a sign-in's code at the provider: no
    /// redirects followed, bounded in time.
    http: reqwest::Client,
    /// Sign-in attempts per client address.
    sign_ins: Arc<SignInLimit>,
}

/// The cookie that ties a sign-in through the provider to the browser
/// that began it.
const SIGN_IN_COOKIE: &str = "toolhost_sign_in";

/// How long a sign-in through the provider may take.
const SIGN_IN_LIFETIME: std::time::Duration = std::time::Duration::from_secs(600);

/// The page's routes, served beside `/mcp` (behind the same rebinding
/// guard, not behind `/mcp`'s bearer authentication: approvers sign in
/// here).
pub fn router(gateway: Gateway, auth: Option<Authenticator>, secure: bool) -> Router {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(std::time::Duration::from_secs(5))
        .timeout(std::time::Duration::from_secs(15))
        .build()
        .expect("a reqwest client with no TLS settings of its own builds");
    let page = Arc::new(Page {
        gateway,
        auth,
        secure,
        http,
        sign_ins: Arc::new(SignInLimit::new()),
    });
    Router::new()
        .route(PAGE_PATH, get(index))
        .route("/approvals/style.css", get(style))
        .route("/approvals/sign-in", post(sign_in))
        .route("/approvals/sign-in/provider", get(sign_in_at_provider))
        .route("/approvals/callback", get(callback))
        .route("/approvals/sign-out", post(sign_out))
        .route("/approvals/{id}", get(one).post(decide))
        .with_state(page)
}

/// A response with the page's security headers.
fn respond(status: StatusCode, markup: Markup) -> Response {
    let mut response = (status, Html(markup.into_string())).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    // Not `no-referrer`: under it a browser sends `Origin: null` with the
    // page's own forms, which the rebinding guard rightly refuses.
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

/// A page with `title` and `body`, signed in as `approver` (with the
/// session's CSRF token) or not.
fn layout(title: &str, signed_in: Option<(&Identity, &str)>, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · toolhost approvals" }
                link rel="stylesheet" href="/approvals/style.css";
            }
            body {
                header {
                    h1 { "toolhost approvals" }
                    @if let Some((approver, csrf)) = signed_in {
                        form method="post" action="/approvals/sign-out" {
                            span { "Signed in as " strong #approver { (approver.key()) } " " }
                            input type="hidden" name="csrf" value=(csrf);
                            button type="submit" { "Sign out" }
                        }
                    }
                }
                main { (body) }
            }
        }
    }
}

/// The sign-in form, returning to `next`; `problem` says why it is shown
/// again.
fn sign_in_page(page: &Page, next: &str, problem: Option<&str>) -> Response {
    let status = if problem.is_some() {
        StatusCode::UNAUTHORIZED
    } else {
        StatusCode::OK
    };
    let body = html! {
        @if let Some(problem) = problem {
            p.notice.refused role="alert" { (problem) }
        }
        @if page.gateway.registry().config().approvals_oauth.is_some() {
            article {
                h2 { "Sign in to decide pending calls" }
                p {
                    a.button #provider href={ "/approvals/sign-in/provider?next=" (next) } {
                        "Sign in with your identity provider"
                    }
                }
            }
        }
        @if page.auth.is_none() {
            p.notice.refused {
                "This server has no [auth] table, so nobody can sign in to approve calls. The \
                 operator adds [[auth.tokens]] (or [auth.oauth]) to toolhost.toml; approvers \
                 then sign in with their token."
            }
        } @else {
            article {
                h2 { "Sign in with a token" }
                form method="post" action="/approvals/sign-in" {
                    input type="hidden" name="next" value=(next);
                    label for="token" { "Your access token (a static token or an access token from the identity provider)" }
                    input #token type="password" name="token" autocomplete="off" required;
                    button type="submit" { "Sign in" }
                }
            }
        }
    };
    respond(status, layout("Sign in", None, body))
}

/// The approver this request's session cookie is, with the session's CSRF
/// token and its id; `None` when it has none or it ended.
async fn approver(page: &Page, headers: &HeaderMap) -> Result<Option<Signed>, Response> {
    let Some(id) = session_id(headers) else {
        return Ok(None);
    };
    let session = page
        .gateway
        .approver_session(&id)
        .await
        .map_err(|e| unavailable(&e.to_string()))?;
    Ok(session.and_then(|s| {
        Identity::from_json(&s.identity)
            .ok()
            // A credential this server no longer accepts (a static token
            // removed, a JWT past its `exp`) ends the session.
            .filter(|identity| {
                page.auth
                    .as_ref()
                    .is_none_or(|a| a.still_accepts(identity, s.token_sha256.as_deref()))
            })
            .map(|identity| Signed {
                identity,
                csrf: s.csrf,
                session: id,
            })
    }))
}

/// A signed-in approver.
struct Signed {
    identity: Identity,
    csrf: String,
    session: String,
}

/// The session id the request's cookie carries.
fn session_id(headers: &HeaderMap) -> Option<String> {
    cookie_value(headers, COOKIE)
}

/// The value of the request's cookie `name`.
fn cookie_value(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(cookie::Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|c| c.name() == name)
        .map(|c| c.value().to_string())
}

/// A 503 page: the store cannot be reached.
fn unavailable(message: &str) -> Response {
    respond(
        StatusCode::SERVICE_UNAVAILABLE,
        layout(
            "Unavailable",
            None,
            html! { p.notice.refused role="alert" { (message) } },
        ),
    )
}

/// `GET /approvals/style.css`.
async fn style() -> Response {
    let mut response = STYLE.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/css; charset=utf-8"),
    );
    response
}

/// Calls one page of `/approvals` shows (the oldest first: they lapse
/// first).
const PER_PAGE: usize = 20;

/// `GET /approvals`'s query: which page, and which calls.
struct Listing {
    /// The page, from 1 (a page that is no number is the first).
    page: usize,
    /// Only calls of this served tool.
    tool: Option<String>,
    /// Only calls of this caller.
    caller: Option<String>,
}

impl Listing {
    /// The listing `query` (URL-encoded) asks for: the last of a repeated
    /// key counts; other keys are ignored.
    fn from_query(query: &str) -> Listing {
        let mut listing = Listing {
            page: 1,
            tool: None,
            caller: None,
        };
        for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
            match &*key {
                "page" => listing.page = value.parse().ok().filter(|&p| p >= 1).unwrap_or(1),
                "tool" => listing.tool = Some(value.into_owned()),
                "caller" => listing.caller = Some(value.into_owned()),
                _ => {}
            }
        }
        listing
    }

    /// Where "back" leads from a decision made on the listing `back` (a
    /// path and query this page wrote into the form): the same page of
    /// the same listing, or the first page of all when `back` is not one
    /// of this page's own listings.
    fn back_to(back: &str) -> String {
        match back
            .strip_prefix(PAGE_PATH)
            .and_then(|q| q.strip_prefix('?'))
        {
            Some(query) => {
                let listing = Listing::from_query(query);
                listing.query_of(listing.page)
            }
            None => PAGE_PATH.to_string(),
        }
    }

    /// The filter a value of the form names: none for "any" (empty).
    fn wanted(value: &Option<String>) -> Option<&str> {
        value.as_deref().filter(|v| !v.is_empty())
    }

    /// Whether `approval` is one the listing asks for.
    fn admits(&self, approval: &Approval) -> bool {
        Listing::wanted(&self.tool).is_none_or(|t| approval.tool == t)
            && Listing::wanted(&self.caller).is_none_or(|c| approval.caller == c)
    }

    /// The query of page `page` of this listing.
    fn query_of(&self, page: usize) -> String {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        if let Some(tool) = Listing::wanted(&self.tool) {
            query.append_pair("tool", tool);
        }
        if let Some(caller) = Listing::wanted(&self.caller) {
            query.append_pair("caller", caller);
        }
        query.append_pair("page", &page.to_string());
        format!("{PAGE_PATH}?{}", query.finish())
    }
}

/// `GET /approvals`: the calls waiting that this approver may decide,
/// [`PER_PAGE`] at a time, of one tool or caller if the query says so.
async fn index(
    State(page): State<Arc<Page>>,
    headers: HeaderMap,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
) -> Response {
    let signed = match approver(&page, &headers).await {
        Ok(Some(signed)) => signed,
        Ok(None) => return sign_in_page(&page, PAGE_PATH, None),
        Err(response) => return response,
    };
    let all = match page.gateway.approvals_for(&signed.identity).await {
        Ok(pending) => pending,
        Err(e) => return unavailable(&e.to_string()),
    };
    let listing = Listing::from_query(query.as_deref().unwrap_or_default());
    let mut tools: Vec<&str> = all.iter().map(|a| a.tool.as_str()).collect();
    tools.sort_unstable();
    tools.dedup();
    let mut callers: Vec<&str> = all.iter().map(|a| a.caller.as_str()).collect();
    callers.sort_unstable();
    callers.dedup();
    let shown: Vec<&Approval> = all.iter().filter(|a| listing.admits(a)).collect();
    let pages = shown.len().div_ceil(PER_PAGE).max(1);
    let current = listing.page.min(pages);
    let first = (current - 1) * PER_PAGE;
    let on_page = &shown[first..shown.len().min(first + PER_PAGE)];
    let body = html! {
        @if !all.is_empty() {
            form.filter method="get" action=(PAGE_PATH) {
                label for="tool" { "Tool" }
                select #tool name="tool" {
                    option value="" { "any" }
                    @for tool in &tools {
                        option value=(tool) selected[Listing::wanted(&listing.tool) == Some(*tool)] { (tool) }
                    }
                }
                label for="caller" { "Caller" }
                select #caller name="caller" {
                    option value="" { "any" }
                    @for caller in &callers {
                        option value=(caller) selected[Listing::wanted(&listing.caller) == Some(*caller)] { (caller) }
                    }
                }
                button type="submit" { "Show" }
            }
        }
        @if shown.is_empty() {
            @if all.is_empty() {
                p.empty #nothing-pending { "No call is waiting for your decision." }
            } @else {
                p.empty #nothing-pending { "No call of this tool and caller is waiting for your decision." }
            }
        } @else {
            p #shown {
                @if pages > 1 {
                    "Calls " (first + 1) "–" (first + on_page.len()) " of " (shown.len())
                } @else if shown.len() == 1 {
                    "1 call waiting"
                } @else {
                    (shown.len()) " calls waiting"
                }
                @if shown.len() < all.len() { " (" (all.len()) " waiting in all)" }
            }
        }
        @for approval in on_page {
            (card(approval, Some(&signed.csrf), Some(&listing.query_of(current))))
        }
        @if pages > 1 {
            nav.pages {
                @if current > 1 {
                    a rel="prev" href=(listing.query_of(current - 1)) { "Earlier" }
                }
                " Page " (current) " of " (pages) " "
                @if current < pages {
                    a rel="next" href=(listing.query_of(current + 1)) { "Later" }
                }
            }
        }
    };
    respond(
        StatusCode::OK,
        layout(
            "Pending approvals",
            Some((&signed.identity, &signed.csrf)),
            body,
        ),
    )
}

/// Most bytes of a call's arguments the page shows: past it, the start and
/// what the whole is (its length and SHA-256, as the audit trail records
/// it).
const SHOWN_ARGUMENT_BYTES: usize = 64 * 1024;

/// `arguments` as an approver reads them: pretty JSON in which every
/// character that would display as something else (bidirectional
/// overrides, zero-width characters, other format characters) is
/// written as its `\u` escape, cut to [`SHOWN_ARGUMENT_BYTES`] saying so
/// (with `sha256`, the arguments' hash).
fn shown_arguments(arguments: &serde_json::Value, sha256: &str) -> String {
    let pretty = serde_json::to_string_pretty(arguments).unwrap_or_default();
    let mut shown = String::with_capacity(pretty.len().min(SHOWN_ARGUMENT_BYTES) + 16);
    for c in pretty.chars() {
        if shown.len() >= SHOWN_ARGUMENT_BYTES {
            // The length and hash the audit trail records: of the
            // arguments' compact canonical JSON.
            let canonical = serde_json::to_vec(arguments).map_or(0, |b| b.len());
            shown.push_str(&format!(
                "\n… cut: the arguments are {canonical} bytes in all (SHA-256 {sha256}); only \
                 their start is shown"
            ));
            break;
        }
        if is_invisible(c) {
            let code = u32::from(c);
            if code <= 0xffff {
                shown.push_str(&format!("\\u{code:04x}"));
            } else {
                shown.push_str(&format!("\\u{{{code:x}}}"));
            }
        } else {
            shown.push(c);
        }
    }
    shown
}

/// Characters that change how text around them displays, or display as
/// nothing: Unicode's format characters (bidirectional controls,
/// zero-width ones, the byte-order mark, the soft hyphen, tag characters),
/// line and paragraph separators, variation selectors, the combining
/// grapheme joiner, the Hangul fillers and the C1 controls. Written
/// `\uXXXX`, or `\u{XXXXX}` past U+FFFF.
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{0080}'..='\u{009f}'
            | '\u{00ad}'
            | '\u{034f}'
            | '\u{0600}'..='\u{0605}'
            | '\u{061c}'
            | '\u{06dd}'
            | '\u{070f}'
            | '\u{08e2}'
            | '\u{115f}'..='\u{1160}'
            | '\u{17b4}'..='\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206f}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{110bd}'
            | '\u{110cd}'
            | '\u{13430}'..='\u{1343f}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e007f}'
            | '\u{e0100}'..='\u{e01ef}'
    )
}

/// One approval: the call, its caller and component, and (with `csrf`,
/// while it waits) the decision form, which carries `back`: the listing
/// it was shown on, to return to.
fn card(approval: &Approval, csrf: Option<&str>, back: Option<&str>) -> Markup {
    let arguments = shown_arguments(&approval.arguments, &approval.arguments_sha256);
    let action = format!("/approvals/{}", approval.id);
    let lapsed = approval.lapsed(crate::approvals::now_ms());
    let state = if lapsed {
        "lapsed"
    } else {
        approval.state.name()
    };
    html! {
        article.approval id={ "approval-" (approval.id) } data-state=(state) {
            h2 { "Call of " code { (approval.tool) } }
            dl {
                dt { "Caller" } dd.caller { (approval.caller) }
                dt { "Plugin" } dd { (approval.plugin) " (" code { (approval.file) } ")" }
                dt { "Component" } dd { code { "sha256:" (approval.digest) } }
                dt { "Rule" } dd { (approval.rule) }
                dt { "Asked" } dd { (when(approval.created_ms)) }
                dt { "Expires" } dd { (when(approval.expires_ms)) }
                dt { "State" } dd.state { (state) }
                @if let Some(by) = &approval.decided_by {
                    dt { "Decided by" } dd { (by) }
                }
                @if let Some(note) = &approval.note {
                    dt { "Note" } dd { (note) }
                }
            }
            h3 { "Arguments" }
            pre.arguments { (arguments) }
            @if let Some(csrf) = csrf {
                @if approval.state == crate::approvals::State::Pending && !lapsed {
                    form method="post" action=(action) {
                        input type="hidden" name="csrf" value=(csrf);
                        @if let Some(back) = back {
                            input type="hidden" name="back" value=(back);
                        }
                        label for={ "note-" (approval.id) } { "A note for the caller (optional)" }
                        textarea id={ "note-" (approval.id) } name="note" maxlength="500" rows="2" {}
                        button.approve type="submit" name="decision" value="approve" { "Approve" }
                        button.deny type="submit" name="decision" value="deny" { "Deny" }
                    }
                }
            }
        }
    }
}

/// `ms` (Unix milliseconds) as the page shows it.
fn when(ms: u64) -> String {
    chrono::DateTime::from_timestamp_millis(i64::try_from(ms).unwrap_or(i64::MAX))
        .unwrap_or_default()
        .format("%Y-%m-%d %H:%M:%S UTC")
        .to_string()
}

/// `GET /approvals/{id}`: one approval (the address callers are told).
async fn one(
    State(page): State<Arc<Page>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let here = format!("/approvals/{}", id_of(&id));
    let signed = match approver(&page, &headers).await {
        Ok(Some(signed)) => signed,
        Ok(None) => return sign_in_page(&page, &here, None),
        Err(response) => return response,
    };
    match page.gateway.approval_for(&signed.identity, &id).await {
        Ok(Some(approval)) => respond(
            StatusCode::OK,
            layout(
                "Approval",
                Some((&signed.identity, &signed.csrf)),
                card(&approval, Some(&signed.csrf), None),
            ),
        ),
        Ok(None) => respond(
            StatusCode::NOT_FOUND,
            layout(
                "No such approval",
                Some((&signed.identity, &signed.csrf)),
                html! { p.notice.refused role="alert" { "There is no approval with this id that you may decide." } },
            ),
        ),
        Err(e) => unavailable(&e.to_string()),
    }
}

/// An id as it may appear in a path: hex digits only (anything else is
/// no approval's).
fn id_of(id: &str) -> String {
    id.chars()
        .filter(char::is_ascii_hexdigit)
        .take(32)
        .collect()
}

/// The sign-in form's fields.
#[derive(Deserialize)]
struct SignIn {
    token: String,
    #[serde(default)]
    next: String,
}

/// `POST /approvals/sign-in`: the token is checked as `/mcp` checks a
/// bearer token; a session begins.
async fn sign_in(
    State(page): State<Arc<Page>>,
    extensions: axum::http::Extensions,
    Form(form): Form<SignIn>,
) -> Response {
    let next = safe_next(&form.next);
    let Some(auth) = &page.auth else {
        return sign_in_page(&page, &next, None);
    };
    if let Err(wait) = page.sign_ins.attempt(ClientAddress::of(&extensions)) {
        return too_many_sign_ins(wait);
    }
    let mut headers = HeaderMap::new();
    let Ok(value) = HeaderValue::from_str(&format!("Bearer {}", form.token.trim())) else {
        return sign_in_page(&page, &next, Some("That is not a token."));
    };
    headers.insert(header::AUTHORIZATION, value);
    let identity = match auth.authenticate(&headers).await {
        Ok(identity) => identity,
        Err(failure) => {
            tracing::info!("an approval page sign-in was refused: {}", failure.reason());
            return sign_in_page(
                &page,
                &next,
                Some("That token was not accepted; sign in with a token this server accepts."),
            );
        }
    };
    // A static token's session holds the token's fingerprint: rotated
    // under the same name, the old token's sessions end too.
    let token_sha256 = (identity.source == crate::auth::IdentitySource::StaticToken)
        .then(|| hex::encode(sha2::Sha256::digest(form.token.trim().as_bytes())));
    let (session, _) = match page
        .gateway
        .open_approver_session(&identity, token_sha256)
        .await
    {
        Ok(opened) => opened,
        Err(e) => return unavailable(&e.to_string()),
    };
    tracing::info!(approver = %identity.key(), "an approver signed in on the approval page");
    see_other(&next, Some(session_cookie(&page, session)))
}

/// `next` if it is a path of the page, else the page itself: a sign-in
/// never sends anyone elsewhere.
fn safe_next(next: &str) -> String {
    let within = next == PAGE_PATH
        || next
            .strip_prefix("/approvals/")
            .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_hexdigit()) && !rest.is_empty());
    if within {
        next.to_string()
    } else {
        PAGE_PATH.to_string()
    }
}

/// A 303 to `to`, setting `cookie` if given.
fn see_other(to: &str, cookie: Option<String>) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    if let Ok(location) = HeaderValue::from_str(to) {
        headers.insert(header::LOCATION, location);
    }
    if let Some(cookie) = cookie.and_then(|c| HeaderValue::from_str(&c).ok()) {
        headers.insert(header::SET_COOKIE, cookie);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The sign-out form's field.
#[derive(Deserialize)]
struct SignOut {
    #[serde(default)]
    csrf: String,
}

/// `POST /approvals/sign-out`.
async fn sign_out(
    State(page): State<Arc<Page>>,
    headers: HeaderMap,
    Form(form): Form<SignOut>,
) -> Response {
    // A session the store could not close stays usable to whoever holds
    // its cookie: the approver is told, and keeps the cookie to try again.
    let not_closed = |e: &dyn std::fmt::Display| {
        unavailable(&format!(
            "You are not signed out: the session could not be closed ({e}). Sign out again in \
             a moment; until then the session stays open."
        ))
    };
    match approver(&page, &headers).await {
        Ok(Some(signed)) if same_token(&signed.csrf, &form.csrf) => {
            if let Err(e) = page.gateway.close_approver_session(&signed.session).await {
                return not_closed(&e);
            }
        }
        Ok(_) => {}
        Err(_) => return not_closed(&"the approvals store cannot be reached"),
    }
    let expired = cookie::Cookie::build((COOKIE, ""))
        .path(PAGE_PATH)
        .http_only(true)
        .secure(page.secure)
        .same_site(cookie::SameSite::Strict)
        .max_age(cookie::time::Duration::ZERO)
        .build();
    see_other(PAGE_PATH, Some(expired.to_string()))
}

/// Whether two tokens are the same, compared in constant time.
fn same_token(expected: &str, given: &str) -> bool {
    !expected.is_empty() && bool::from(expected.as_bytes().ct_eq(given.as_bytes()))
}

/// The decision form's fields.
#[derive(Deserialize)]
struct Decision {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    decision: String,
    #[serde(default)]
    note: String,
    /// The listing the form was shown on (see [`Listing::back_to`]).
    #[serde(default)]
    back: String,
}

/// `POST /approvals/{id}`: the signed-in approver's decision.
async fn decide(
    State(page): State<Arc<Page>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    extensions: axum::http::Extensions,
    Form(form): Form<Decision>,
) -> Response {
    let here = format!("/approvals/{}", id_of(&id));
    let back = Listing::back_to(&form.back);
    let signed = match approver(&page, &headers).await {
        Ok(Some(signed)) => signed,
        Ok(None) => {
            return sign_in_page(
                &page,
                &here,
                Some("Your session ended; sign in again to decide."),
            );
        }
        Err(response) => return response,
    };
    let refused = |status: StatusCode, message: String| {
        respond(
            status,
            layout(
                "Not decided",
                Some((&signed.identity, &signed.csrf)),
                html! {
                    p.notice.refused #outcome role="alert" { (message) }
                    p { a #back href=(back) { "Back to the pending calls" } }
                },
            ),
        )
    };
    if !same_token(&signed.csrf, &form.csrf) {
        return refused(
            StatusCode::FORBIDDEN,
            "This form did not come from your session (its CSRF token does not match); nothing \
             changed. Open the page again and decide there."
                .into(),
        );
    }
    let approve = match form.decision.as_str() {
        "approve" => true,
        "deny" => false,
        _ => {
            return refused(
                StatusCode::BAD_REQUEST,
                "Choose Approve or Deny; nothing changed.".into(),
            );
        }
    };
    let note: String = form.note.trim().chars().take(MAX_NOTE_CHARS).collect();
    let decided = page
        .gateway
        .decide(
            &signed.identity,
            ClientAddress::of(&extensions),
            &id,
            approve,
            Some(note),
        )
        .await;
    match decided {
        Ok(approval) => respond(
            StatusCode::OK,
            layout(
                "Decided",
                Some((&signed.identity, &signed.csrf)),
                html! {
                    p.notice #outcome role="status" {
                        @if approve {
                            "Approved. The call runs now (a task) or when its caller calls again."
                        } @else {
                            "Denied. The caller is told, with your note; nothing runs."
                        }
                    }
                    (card(&approval, None, None))
                    p { a #back href=(back) { "Back to the pending calls" } }
                },
            ),
        ),
        Err(e) => {
            let status = match &e {
                DecideError::Unknown(_) => StatusCode::NOT_FOUND,
                DecideError::OwnCall(_) => StatusCode::FORBIDDEN,
                DecideError::Settled { .. } => StatusCode::CONFLICT,
                DecideError::Lapsed(_) | DecideError::PolicyChanged(_) => StatusCode::GONE,
                DecideError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            };
            refused(status, e.to_string())
        }
    }
}

/// `GET /approvals/sign-in/provider?next=`: begins a sign-in through the
/// identity provider (authorization code with PKCE, RFC 7636; the token
/// asked for this server as its audience, RFC 8707): the browser is sent
/// to the provider, with a cookie tying the sign-in's `state` to it.
async fn sign_in_at_provider(
    State(page): State<Arc<Page>>,
    headers: HeaderMap,
    extensions: axum::http::Extensions,
    axum::extract::Query(query): axum::extract::Query<std::collections::HashMap<String, String>>,
) -> Response {
    let next = safe_next(query.get("next").map_or("", String::as_str));
    // Begun from the page's own button only: another site's page (an
    // image, a link followed unseen) would spend the sign-ins its
    // visitors' address may begin, and write a sign-in record each time.
    // A browser says where a request came from; a client that says
    // nothing is let through.
    if headers
        .get("sec-fetch-site")
        .is_some_and(|site| site.as_bytes() == b"cross-site")
    {
        return sign_in_page(
            &page,
            &next,
            Some("A sign-in begins from this page: use the button below."),
        );
    }
    let (Some(client), Some(auth)) = (provider_client(&page), &page.auth) else {
        return sign_in_page(
            &page,
            &next,
            Some("This server has no [approvals.oauth] table."),
        );
    };
    let scopes = page
        .gateway
        .registry()
        .config()
        .approvals_oauth
        .as_ref()
        .map(|o| o.scopes.clone())
        .unwrap_or_default();
    if let Err(wait) = page.sign_ins.attempt(ClientAddress::of(&extensions)) {
        return too_many_sign_ins(wait);
    }
    let (challenge, verifier) = oauth2::PkceCodeChallenge::new_random_sha256();
    let mut request = client
        .authorize_url(oauth2::CsrfToken::new_random)
        .add_extra_param("resource", auth.resource())
        .set_pkce_challenge(challenge);
    for scope in scopes {
        request = request.add_scope(oauth2::Scope::new(scope));
    }
    let (url, state) = request.url();
    let sign_in = crate::approvals::SignIn {
        verifier: verifier.secret().clone(),
        next,
        expires_ms: crate::approvals::now_ms()
            + u64::try_from(SIGN_IN_LIFETIME.as_millis()).unwrap_or(0),
    };
    if let Err(e) = page.gateway.begin_sign_in(state.secret(), &sign_in).await {
        return unavailable(&e.to_string());
    }
    // `Lax`, not `Strict`: it must come back with the provider's redirect,
    // a top-level navigation from another site.
    let cookie = cookie::Cookie::build((SIGN_IN_COOKIE, state.secret().clone()))
        .path(PAGE_PATH)
        .http_only(true)
        .secure(page.secure)
        .same_site(cookie::SameSite::Lax)
        .max_age(cookie::time::Duration::seconds(
            i64::try_from(SIGN_IN_LIFETIME.as_secs()).unwrap_or(600),
        ))
        .build();
    see_other(url.as_str(), Some(cookie.to_string()))
}

/// The provider's client with its authorization and token endpoints set.
type ProviderClient = oauth2::Client<
    oauth2::basic::BasicErrorResponse,
    oauth2::basic::BasicTokenResponse,
    oauth2::basic::BasicTokenIntrospectionResponse,
    oauth2::StandardRevocableToken,
    oauth2::basic::BasicRevocationErrorResponse,
    oauth2::EndpointSet,
    oauth2::EndpointNotSet,
    oauth2::EndpointNotSet,
    oauth2::EndpointNotSet,
    oauth2::EndpointSet,
>;

/// toolhost as the provider's public client, redirected back to the
/// page's `/callback`; `None` without `[approvals.oauth]` or before the
/// page's address is known.
fn provider_client(page: &Page) -> Option<ProviderClient> {
    let oauth = page.gateway.registry().config().approvals_oauth.clone()?;
    let redirect = format!("{}/callback", page.gateway.approval_page()?);
    Some(
        oauth2::basic::BasicClient::new(oauth2::ClientId::new(oauth.client_id))
            .set_auth_uri(oauth2::AuthUrl::from_url(oauth.authorization_endpoint))
            .set_token_uri(oauth2::TokenUrl::from_url(oauth.token_endpoint))
            .set_redirect_uri(oauth2::RedirectUrl::new(redirect).ok()?),
    )
}

/// `GET /approvals/callback?code=&state=`: the browser is back from the
/// provider. The state must be the one this browser's cookie holds and
/// still kept (once); the code is exchanged with the PKCE verifier, and
/// the access token verified as `/mcp` verifies one.
async fn callback(
    State(page): State<Arc<Page>>,
    headers: HeaderMap,
    axum::extract::Query(query): axum::extract::Query<std::collections::HashMap<String, String>>,
) -> Response {
    let refused = |message: &str| sign_in_page(&page, PAGE_PATH, Some(message));
    if let Some(error) = query.get("error") {
        tracing::info!("an approval page sign-in came back from the provider with {error:?}");
        return refused("The identity provider did not sign you in; try again.");
    }
    let (Some(code), Some(state)) = (query.get("code"), query.get("state")) else {
        return refused("The identity provider's answer lacks its code; sign in again.");
    };
    let cookie_state = cookie_value(&headers, SIGN_IN_COOKIE);
    if !cookie_state.is_some_and(|c| same_token(&c, state)) {
        return refused(
            "This sign-in was not begun in this browser (or it took too long); sign in again.",
        );
    }
    let sign_in = match page.gateway.finish_sign_in(state).await {
        Ok(Some(sign_in)) => sign_in,
        Ok(None) => return refused("This sign-in was used or lapsed; sign in again."),
        Err(e) => return unavailable(&e.to_string()),
    };
    let (Some(client), Some(auth)) = (provider_client(&page), &page.auth) else {
        return refused("This server has no [approvals.oauth] table.");
    };
    let exchanged = client
        .exchange_code(oauth2::AuthorizationCode::new(code.clone()))
        .add_extra_param("resource", auth.resource())
        .set_pkce_verifier(oauth2::PkceCodeVerifier::new(sign_in.verifier))
        .request_async(&page.http)
        .await;
    let token = match exchanged {
        Ok(token) => oauth2::TokenResponse::access_token(&token).secret().clone(),
        Err(e) => {
            tracing::warn!("the identity provider refused an approval page sign-in's code: {e}");
            return refused("The identity provider did not give an access token; sign in again.");
        }
    };
    let mut bearer = HeaderMap::new();
    let Ok(value) = HeaderValue::from_str(&format!("Bearer {token}")) else {
        return refused("The identity provider's token is not usable; sign in again.");
    };
    bearer.insert(header::AUTHORIZATION, value);
    let identity = match auth.authenticate(&bearer).await {
        Ok(identity) => identity,
        Err(failure) => {
            tracing::warn!(
                "an access token from an approval page sign-in was refused: {}",
                failure.reason()
            );
            return refused(
                "The identity provider's token is not one this server accepts (its audience, \
                 issuer or scopes); ask the operator.",
            );
        }
    };
    let (session, _) = match page.gateway.open_approver_session(&identity, None).await {
        Ok(opened) => opened,
        Err(e) => return unavailable(&e.to_string()),
    };
    tracing::info!(approver = %identity.key(), "an approver signed in through the identity provider");
    let mut response = see_other(&sign_in.next, Some(session_cookie(&page, session)));
    let spent = cookie::Cookie::build((SIGN_IN_COOKIE, ""))
        .path(PAGE_PATH)
        .max_age(cookie::time::Duration::ZERO)
        .build();
    if let Ok(value) = HeaderValue::from_str(&spent.to_string()) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    response
}

/// The session cookie carrying `session`.
fn session_cookie(page: &Page, session: String) -> String {
    cookie::Cookie::build((COOKIE, session))
        .path(PAGE_PATH)
        .http_only(true)
        .secure(page.secure)
        .same_site(cookie::SameSite::Strict)
        .max_age(cookie::time::Duration::seconds(
            i64::try_from(SESSION_LIFETIME.as_secs()).unwrap_or(i64::MAX),
        ))
        .build()
        .to_string()
}
