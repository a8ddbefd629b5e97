//! Who is calling over HTTP: the identity a request's credentials establish.
//!
//! Over stdio the caller is the process that started toolhost and there is
//! nothing to establish. Over HTTP every request carries a credential, and
//! what it proves is an [`Identity`]: the transport puts it into the
//! request's extensions, and the server reads it from there to decide what
//! this caller may see and call.

use std::collections::BTreeSet;

/// Who is calling, as established by the HTTP transport's authentication.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// The subject: an access token's `sub` claim, or a static token's
    /// configured name.
    pub subject: String,
    /// The scopes the credential grants.
    pub scopes: BTreeSet<String>,
}
