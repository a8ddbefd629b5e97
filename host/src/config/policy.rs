//! `[[policy.rules]]`: the raw table and its resolution into
//! [`crate::rules::Policy`] (ADR 0034).
//!
//! Every condition is compiled here, at load: a rule that does not compile,
//! or is past a cost bound, refuses the whole file (a reload keeps the
//! rules that were running), naming the rule, the key, and the line and
//! column in the config file.

use std::time::Duration;

use anyhow::{Result, anyhow};
use serde::{Deserialize, Serialize};

use crate::auth::Access;
use crate::rules::condition::APPROVER_VARIABLES;
use crate::rules::{ApprovalRule, CompileError, Condition, Limit, Outcome, Policy, Rule, When};

/// `[policy]`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawPolicy {
    /// `[[policy.rules]]`, in order.
    #[serde(default)]
    pub rules: Vec<RawRule>,
}

/// One `[[policy.rules]]` entry.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawRule {
    /// `name`.
    pub name: String,
    /// `when`: a CEL condition; absent, the rule always applies.
    pub when: Option<toml::Spanned<String>>,
    /// `outcome`.
    pub outcome: RawOutcome,
    /// `reason`: what a denied caller is told.
    pub reason: Option<String>,
    /// `limit`: with `outcome = "limit"`.
    pub limit: Option<RawRuleLimit>,
    /// `approve`: with `outcome = "approve"`.
    pub approve: Option<RawRuleApprove>,
}

/// A rule's `approve` table.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawRuleApprove {
    /// `approver`: a CEL condition over `approver` (and `identity`, `now`).
    pub approver: toml::Spanned<String>,
    /// `self_approval`: whether the caller may approve its own call.
    #[serde(default)]
    pub self_approval: bool,
    /// `expires_secs`: how long the request for approval, and the
    /// approval, last.
    #[serde(default = "default_approval_expires_secs")]
    pub expires_secs: u64,
}

/// An approval's default lifetime: an hour.
fn default_approval_expires_secs() -> u64 {
    3600
}

/// The longest `approve.expires_secs`: a week.
const MAX_APPROVAL_SECS: u64 = 7 * 86_400;

/// A rule's `outcome`.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum RawOutcome {
    /// `allow`.
    Allow,
    /// `hide`.
    Hide,
    /// `deny`.
    Deny,
    /// `confirm`.
    Confirm,
    /// `limit`.
    Limit,
    /// `approve`.
    Approve,
}

/// A rule's `limit` table.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawRuleLimit {
    /// `count`: requests per window.
    pub count: u64,
    /// `window_secs`.
    pub window_secs: u64,
    /// `key`: a CEL expression giving what requests are counted by.
    pub key: Option<toml::Spanned<String>>,
}

/// The longest `limit.window_secs`: a day.
const MAX_WINDOW_SECS: u64 = 86_400;

/// Resolves `[policy]` with `[[access]]` (already resolved) in front.
/// `text` is the config file's text, for the line and column of a
/// condition that does not compile (none: the position within the
/// expression alone).
pub fn resolve_policy(raw: &RawPolicy, access: Access, text: Option<&str>) -> Result<Policy> {
    let mut rules = Vec::with_capacity(raw.rules.len());
    for (i, rule) in raw.rules.iter().enumerate() {
        let index = i + 1;
        let at = |key: &str| format!("`policy.rules` entry {index} ({:?}), `{key}`", rule.name);
        if rule.name.trim().is_empty() {
            return Err(anyhow!(
                "`policy.rules` entry {index}: `name` is empty; name every rule (the audit trail \
                 and the metrics say which rule decided)"
            ));
        }
        let compile = |key: &str, written: &toml::Spanned<String>| {
            Condition::compile(written.get_ref())
                .map_err(|e| anyhow!("{}: {}", at(key), located(&e, written, text)))
        };
        let when = match &rule.when {
            Some(written) => When::Cel(compile("when", written)?),
            None => When::Always,
        };
        if rule.reason.is_some() && rule.outcome != RawOutcome::Deny {
            return Err(anyhow!(
                "{}: only a deny rule has a reason the caller sees; remove it",
                at("reason")
            ));
        }
        if rule.limit.is_some() != (rule.outcome == RawOutcome::Limit) {
            return Err(anyhow!(
                "{}: a rule has `limit = {{ count = N, window_secs = S }}` exactly when its \
                 outcome is \"limit\"",
                at("limit")
            ));
        }
        if rule.approve.is_some() != (rule.outcome == RawOutcome::Approve) {
            return Err(anyhow!(
                "{}: a rule has `approve = {{ approver = \"CEL\" }}` exactly when its outcome \
                 is \"approve\"",
                at("approve")
            ));
        }
        let outcome = match rule.outcome {
            RawOutcome::Allow => Outcome::Allow,
            RawOutcome::Approve => {
                let approve = rule.approve.as_ref().expect("checked above");
                if !(1..=MAX_APPROVAL_SECS).contains(&approve.expires_secs) {
                    return Err(anyhow!(
                        "{}: must be between 1 and {MAX_APPROVAL_SECS} (a week)",
                        at("approve.expires_secs")
                    ));
                }
                let written = &approve.approver;
                let approver = Condition::compile_over(written.get_ref(), APPROVER_VARIABLES)
                    .map_err(|e| {
                        anyhow!("{}: {}", at("approve.approver"), located(&e, written, text))
                    })?;
                Outcome::Approve(ApprovalRule {
                    approver,
                    self_approval: approve.self_approval,
                    expires: Duration::from_secs(approve.expires_secs),
                })
            }
            RawOutcome::Hide => Outcome::Hide,
            RawOutcome::Confirm => Outcome::Confirm,
            RawOutcome::Deny => Outcome::Deny(rule.reason.clone().unwrap_or_else(|| {
                format!("refused by the operator's policy (rule {:?})", rule.name)
            })),
            RawOutcome::Limit => {
                let limit = rule.limit.as_ref().expect("checked above");
                if limit.count == 0 {
                    return Err(anyhow!(
                        "{}: must be at least 1 (to refuse every request, use outcome = \"deny\")",
                        at("limit.count")
                    ));
                }
                if !(1..=MAX_WINDOW_SECS).contains(&limit.window_secs) {
                    return Err(anyhow!(
                        "{}: must be between 1 and {MAX_WINDOW_SECS} (a day)",
                        at("limit.window_secs")
                    ));
                }
                Outcome::Limit(Limit {
                    count: limit.count,
                    window: Duration::from_secs(limit.window_secs),
                    key: limit
                        .key
                        .as_ref()
                        .map(|k| compile("limit.key", k))
                        .transpose()?,
                })
            }
        };
        rules.push(Rule {
            name: rule.name.clone(),
            when,
            outcome,
        });
    }
    // The version hashes the rules as written, without their positions.
    let text_of_rules = serde_json::to_string(&raw.rules).expect("rules serialize");
    Policy::new(access, rules, &text_of_rules).map_err(|e| anyhow!("{e}"))
}

/// `error`, with the line and column in the config file where the
/// expression `written` has its fault, when the file's text is known.
pub(super) fn located(
    error: &CompileError,
    written: &toml::Spanned<String>,
    text: Option<&str>,
) -> String {
    let (CompileError::Syntax { line, column, .. }, Some(text)) = (error, text) else {
        return error.to_string();
    };
    // Where the expression's first character is: after the opening quote
    // (one for "…" and '…', three for """…""" and '''…''', whose first
    // newline TOML drops).
    let start = written.span().start.min(text.len());
    let after = &text[start..];
    let mut content = start
        + if after.starts_with("\"\"\"") || after.starts_with("'''") {
            3
        } else {
            1
        };
    if text[content..].starts_with('\n') {
        content += 1;
    } else if text[content..].starts_with("\r\n") {
        content += 2;
    }
    let before = &text[..content];
    let first_line = before.matches('\n').count() + 1;
    let first_column = before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count()
        + 1;
    let (file_line, file_column) = if *line == 1 {
        (first_line, first_column + column - 1)
    } else {
        (first_line + line - 1, *column)
    };
    format!("line {file_line}, column {file_column} of the config file: {error}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(text: &str) -> Result<Policy> {
        #[derive(Deserialize)]
        struct File {
            policy: RawPolicy,
        }
        let file: File = toml::from_str(text).expect("valid TOML");
        resolve_policy(&file.policy, Access::default(), Some(text))
    }

    #[test]
    fn a_rule_that_does_not_compile_is_refused_with_its_key_line_and_column() {
        let text = "[[policy.rules]]\nname = \"support\"\noutcome = \"deny\"\nwhen = \"identity.subject == == 'x'\"\n";
        let error = policy(text).unwrap_err().to_string();
        assert!(
            error.contains("`policy.rules` entry 1 (\"support\"), `when`"),
            "{error}"
        );
        assert!(error.contains("line 4, column"), "{error}");
        assert!(error.contains("of the config file"), "{error}");
    }

    #[test]
    fn a_multi_line_condition_is_located_on_its_own_line() {
        let text = "[[policy.rules]]\nname = \"r\"\noutcome = \"allow\"\nwhen = '''\nidentity.subject == \"a\" &&\n  )\n'''\n";
        let error = policy(text).unwrap_err().to_string();
        assert!(error.contains("line 6, column"), "{error}");
    }

    #[test]
    fn a_hide_rule_may_not_read_arguments() {
        let text = "[[policy.rules]]\nname = \"h\"\noutcome = \"hide\"\nwhen = \"args.id == 1\"\n";
        let error = policy(text).unwrap_err().to_string();
        assert!(
            error.contains("use outcome = \\\"deny\\\"")
                || error.contains("use outcome = \"deny\""),
            "{error}"
        );
    }

    #[test]
    fn the_version_changes_with_the_rules_and_only_with_them() {
        let a = "[[policy.rules]]\nname = \"r\"\noutcome = \"deny\"\nwhen = \"tool.name == 'x'\"\n";
        let b = "[[policy.rules]]\nname = \"r\"\noutcome = \"deny\"\nwhen = \"tool.name == 'y'\"\n";
        let spaced = format!("\n\n{a}");
        assert_eq!(
            policy(a).unwrap().version(),
            policy(&spaced).unwrap().version()
        );
        assert_ne!(policy(a).unwrap().version(), policy(b).unwrap().version());
    }

    #[test]
    fn every_example_in_the_policy_doc_resolves() {
        let doc = include_str!("../../../docs/policy.md");
        let blocks: Vec<&str> = doc
            .split("```toml\n")
            .skip(1)
            .map(|b| &b[..b.find("```").expect("a closed block")])
            .filter(|b| b.contains("[[policy.rules]]"))
            .collect();
        assert!(blocks.len() >= 5, "{}", blocks.len());
        for block in blocks {
            policy(block).unwrap_or_else(|e| panic!("{e:#}\n{block}"));
        }
    }

    #[test]
    fn a_limit_needs_its_table_and_a_sane_window() {
        let text = "[[policy.rules]]\nname = \"l\"\noutcome = \"limit\"\n";
        assert!(policy(text).unwrap_err().to_string().contains("`limit`"));
        let text = "[[policy.rules]]\nname = \"l\"\noutcome = \"limit\"\nlimit = { count = 1, window_secs = 0 }\n";
        assert!(
            policy(text)
                .unwrap_err()
                .to_string()
                .contains("window_secs")
        );
        let text = "[[policy.rules]]\nname = \"l\"\noutcome = \"limit\"\nlimit = { count = 5, window_secs = 60, key = \"identity.key\" }\n";
        policy(text).expect("a valid limit");
    }

    #[test]
    fn an_approve_rule_needs_its_table_and_an_approver_condition_over_its_own_names() {
        let text = "[[policy.rules]]\nname = \"a\"\noutcome = \"approve\"\n";
        assert!(policy(text).unwrap_err().to_string().contains("`approve`"));
        let text = "[[policy.rules]]\nname = \"a\"\noutcome = \"approve\"\napprove = { approver = 'args.x == 1' }\n";
        let error = policy(text).unwrap_err().to_string();
        assert!(
            error.contains("approve.approver") && error.contains("`approver`, `identity`, `now`"),
            "{error}"
        );
        let text = "[[policy.rules]]\nname = \"a\"\noutcome = \"approve\"\napprove = { approver = 'approver.subject ==' }\n";
        let error = policy(text).unwrap_err().to_string();
        assert!(error.contains("line 4, column"), "{error}");
        let text = "[[policy.rules]]\nname = \"a\"\noutcome = \"approve\"\napprove = { approver = 'true', expires_secs = 0 }\n";
        assert!(
            policy(text)
                .unwrap_err()
                .to_string()
                .contains("expires_secs")
        );
        let text = "[[policy.rules]]\nname = \"a\"\noutcome = \"approve\"\napprove = { approver = '\"finance\" in approver.claims.groups && approver.key != identity.key' }\n";
        let resolved = policy(text).expect("a valid approve rule");
        assert!(resolved.has_approvals());
        assert!(resolved.approval_rule("a").is_some());
    }
}
