//! Per-identity access: which plugins an HTTP caller sees and may call
//! (`[[access]]`).
//!
//! With no rules everybody sees every plugin. With rules, a caller sees the
//! union of the plugins of every rule that names its subject or one of its
//! scopes, and nothing else. A tool the caller may not see is *unknown* to
//! it, in `tools/list` and `tools/call` alike (ADR 0012): the answer does not
//! reveal that it exists.
//!
//! A request without an [`Identity`] (stdio) comes from the operator's own
//! machine and sees everything; the HTTP transport refuses to start with
//! rules but without `[auth]`, where they would restrict nobody.

use std::collections::BTreeSet;

use super::{Identity, IdentitySource};

/// The plugins a rule grants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PluginSet {
    /// `"*"`: every plugin.
    All,
    /// These plugin names (`[plugins.NAME]` block names; for a file no
    /// block covers, its file name without `.wasm`).
    Named(BTreeSet<String>),
}

/// One `[[access]]` rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessRule {
    /// Whose subjects `subjects` are: callers established by this source
    /// only (static-token names and JWT subjects are separate namespaces);
    /// `None` without `[auth]`, where nobody is established.
    pub source: Option<IdentitySource>,
    /// Callers with one of these subjects match.
    pub subjects: BTreeSet<String>,
    /// Callers holding any one of these scopes match.
    pub scopes: BTreeSet<String>,
    /// What a matching caller sees.
    pub plugins: PluginSet,
}

impl AccessRule {
    fn matches(&self, identity: &Identity) -> bool {
        (self.source.is_none_or(|s| s == identity.source)
            && self.subjects.contains(&identity.subject))
            || identity.scopes.iter().any(|s| self.scopes.contains(s))
    }

    fn grants(&self, plugin: &str) -> bool {
        match &self.plugins {
            PluginSet::All => true,
            PluginSet::Named(names) => names.contains(plugin),
        }
    }
}

/// The `[[access]]` rules.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Access {
    rules: Vec<AccessRule>,
}

impl Access {
    /// Access by `rules`; none means everybody sees everything.
    pub fn new(rules: Vec<AccessRule>) -> Access {
        Access { rules }
    }

    /// Whether any rule is configured.
    pub fn is_restricted(&self) -> bool {
        !self.rules.is_empty()
    }

    /// Every scope a rule names, for the protected-resource metadata.
    pub fn scopes(&self) -> impl Iterator<Item = &str> {
        self.rules
            .iter()
            .flat_map(|r| r.scopes.iter().map(String::as_str))
    }

    /// Whether `identity` may see and call the tools of `plugin`. Without
    /// an identity (stdio) or without rules: yes.
    pub fn allows(&self, identity: Option<&Identity>, plugin: &str) -> bool {
        let Some(identity) = identity else {
            return true;
        };
        self.rules.is_empty()
            || self
                .rules
                .iter()
                .any(|r| r.matches(identity) && r.grants(plugin))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who(subject: &str, scopes: &[&str]) -> Identity {
        Identity {
            source: IdentitySource::StaticToken,
            subject: subject.to_string(),
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
            claims: Default::default(),
        }
    }

    fn rule(subjects: &[&str], scopes: &[&str], plugins: &[&str]) -> AccessRule {
        AccessRule {
            source: Some(IdentitySource::StaticToken),
            subjects: subjects.iter().map(|s| s.to_string()).collect(),
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
            plugins: if plugins == ["*"] {
                PluginSet::All
            } else {
                PluginSet::Named(plugins.iter().map(|s| s.to_string()).collect())
            },
        }
    }

    #[test]
    fn without_rules_everybody_sees_everything() {
        let access = Access::default();
        assert!(access.allows(Some(&who("anyone", &[])), "katana"));
        assert!(access.allows(None, "katana"));
    }

    #[test]
    fn a_caller_sees_the_union_of_its_matching_rules() {
        let access = Access::new(vec![
            rule(&["alice"], &[], &["statuspro"]),
            rule(&[], &["katana:use"], &["katana"]),
            rule(&["root"], &[], &["*"]),
        ]);
        let alice = who("alice", &[]);
        assert!(access.allows(Some(&alice), "statuspro"));
        assert!(!access.allows(Some(&alice), "katana"));
        let alice_with_scope = who("alice", &["katana:use"]);
        assert!(access.allows(Some(&alice_with_scope), "statuspro"));
        assert!(access.allows(Some(&alice_with_scope), "katana"));
        let bob = who("bob", &["other"]);
        assert!(!access.allows(Some(&bob), "statuspro"));
        assert!(!access.allows(Some(&bob), "katana"));
        assert!(access.allows(Some(&who("root", &[])), "anything"));
        // stdio: the operator's own machine.
        assert!(access.allows(None, "katana"));
    }
}
