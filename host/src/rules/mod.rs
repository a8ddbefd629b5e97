//! The rule layer (`[[policy.rules]]`, ADR 0034): who may see and do what,
//! how often, decided once per request from what toolhost knows of it.
//!
//! | module | job |
//! |---|---|
//! | [`condition`] | a rule's CEL condition: compiled and bounded at load, evaluated per request |
//! | [`limits`] | `limit` rules' counters: in this process, or in the shared Redis of `state.replay` |
//! | this module | [`Policy`]: the rules in order, [`Facts`] (what a condition reads), the decisions |
//!
//! Two passes, so that what a caller is shown and what it may call always
//! agree:
//!
//! 1. **What exists for the caller** ([`Policy::hides`]): `hide` rules, in
//!    order, the first that holds hiding the thing. They see the caller, the
//!    plugin, the tool (or resource, or prompt) and the time, never a
//!    request's arguments or method (refused at load): a list has no
//!    arguments, so a hide rule that read them could hide a tool from the
//!    list and not from the call. `[[access]]` is the first hide rule
//!    (named `access`). Every method asks it: lists, calls, reads, gets,
//!    completion, subscriptions, listen acknowledgements.
//! 2. **What a request of something that exists does** ([`Policy::decide`]):
//!    the other rules, in order. A `limit` rule that holds counts the
//!    request and lets evaluation go on; the first `allow`, `deny` or
//!    `confirm` rule that holds decides. No rule deciding is `allow`.
//!
//! A condition that cannot be evaluated (a claim the token lacks) fails
//! closed: a hide rule hides, any other rule denies, and the operator's log
//! says which rule and why.

pub mod condition;
pub mod limits;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use cel::Value as Cel;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::auth::{Access, Identity};
// The runtime's own type: `crate::plugin` carries the configuration,
// which names this module.
use crate::spec::ToolSpec;
pub use condition::{CompileError, Condition};
use toolhost_runtime::plugin::Plugin;

/// The name of the hide rule `[[access]]` becomes.
pub const ACCESS_RULE: &str = "access";
/// The name given to the decision when no rule decides.
pub const DEFAULT_RULE: &str = "default";

/// When a rule applies.
#[derive(Debug)]
pub enum When {
    /// Always (a rule without `when`).
    Always,
    /// When its CEL condition holds.
    Cel(Condition),
    /// `[[access]]`: when the caller has an identity and no access rule
    /// grants it the plugin.
    NotGranted(Access),
}

/// What a rule does when it applies.
#[derive(Debug)]
pub enum Outcome {
    /// The request goes ahead.
    Allow,
    /// The thing is unknown to the caller.
    Hide,
    /// The request is refused with this reason, which the caller sees.
    Deny(String),
    /// The host asks the user before the tool runs.
    Confirm,
    /// At most `count` requests per `window` per key.
    Limit(Limit),
    /// The tool runs only once an approver (someone the rule's condition
    /// admits) says yes to this very call (ADR 0038).
    Approve(ApprovalRule),
}

/// An `approve` rule's terms: who may approve, whether the caller may
/// approve its own call, how long a request for approval (and the
/// approval) lasts.
#[derive(Debug)]
pub struct ApprovalRule {
    /// Who may decide: a condition over `approver` (and the caller,
    /// `identity`, and `now`).
    pub approver: Condition,
    /// Whether the caller may decide its own call (`self_approval`; off
    /// by default: the point is a second person's yes).
    pub self_approval: bool,
    /// How long a request for approval waits, and an approval given
    /// lasts, from the call that asked.
    pub expires: Duration,
}

impl ApprovalRule {
    /// Whether `approver` may decide a call of `caller` (`None`: a caller
    /// without identity, named by its transport): `Err` with the reason
    /// when the condition cannot be evaluated (which refuses, fail
    /// closed).
    pub fn admits(
        &self,
        approver: &Identity,
        caller: (Option<&Identity>, &str),
    ) -> Result<bool, String> {
        let context = condition::context(vec![
            ("approver", identity_value(Some(approver), "")),
            ("identity", identity_value(caller.0, caller.1)),
            ("now", Cel::Timestamp(chrono::Utc::now().fixed_offset())),
        ]);
        self.approver.holds(&context)
    }
}

/// A `limit` rule's budget.
#[derive(Debug)]
pub struct Limit {
    /// Requests allowed per window.
    pub count: u64,
    /// The window.
    pub window: Duration,
    /// What the requests are counted by; none: the caller and the target
    /// (`identity.key + " " + target`).
    pub key: Option<Condition>,
}

/// One rule.
#[derive(Debug)]
pub struct Rule {
    /// Its name: in the audit trail, the metrics, and `toolhost policy test`.
    pub name: String,
    /// When it applies.
    pub when: When,
    /// What it does then.
    pub outcome: Outcome,
}

/// The rules, in order, and their version.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    rules: Arc<Vec<Rule>>,
    version: String,
    /// Whether any rule is a hide rule (else pass one has nothing to do).
    any_hide: bool,
    /// Whether any rule is not (else pass two has nothing to do).
    any_other: bool,
    /// What the rules settle per thing served and way of asking for it.
    settled: Arc<SettledCache>,
}

/// What depends only on what a request is about and how it came (the
/// component, its served name, the method, the transport, the era, the
/// profile), worked out the first time such a request comes and shared by
/// every request like it: the CEL values of `plugin` and `tool`, and each
/// rule's answer where those settle it ([`Condition::settled`]), so that a
/// rule like `tool.name == "x" && identity.subject != "root"` costs a
/// table read for every tool but `x`. Kept by the [`Policy`]: a new
/// configuration brings a new policy and so starts empty; a reloaded
/// component has a new digest and so a new entry.
#[derive(Debug, Default)]
struct SettledCache {
    hasher: std::hash::RandomState,
    /// By the hash of the entry's [`ServedKey`]; entries whose keys share
    /// a hash side by side.
    by_hash: std::sync::RwLock<HashMap<u64, Vec<Arc<Settled>>>>,
}

/// The most entries [`SettledCache`] keeps: past it (components replaced
/// many times over) it starts again empty.
const MAX_SETTLED: usize = 8192;

/// One entry of [`SettledCache`].
#[derive(Debug)]
struct Settled {
    /// What it is about, everything the served variables read.
    key: OwnedServedKey,
    /// Each rule's answer, in the policy's order.
    rules: Box<[Known]>,
    /// `plugin` and `tool` as conditions read them, built when first read.
    values: ServedValues,
}

/// What a rule's condition gives for requests of one [`Settled`] entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Known {
    /// It holds, whoever calls.
    Holds,
    /// It does not hold, whoever calls.
    Never,
    /// It depends on the request (the caller, the arguments, the time),
    /// or could not be evaluated: evaluated per request.
    PerRequest,
}

/// The CEL values of `plugin` and `tool`, built once per entry.
#[derive(Debug, Default)]
struct ServedValues {
    plugin: std::sync::OnceLock<Box<dyn cel::common::value::Val>>,
    tool: std::sync::OnceLock<Box<dyn cel::common::value::Val>>,
}

/// Everything the served variables ([`condition::SERVED_VARIABLES`]) are
/// built from, borrowed from a request's [`Facts`]: hashed and compared
/// without allocating.
#[derive(Debug, Hash, PartialEq, Eq)]
struct ServedKey<'a> {
    plugin: &'a str,
    file: &'a str,
    digest: &'a str,
    signer: &'a str,
    target: TargetKey<'a>,
    method: &'a str,
    transport: &'a str,
    era: &'a str,
    profile: &'a str,
}

/// The target part of a [`ServedKey`].
#[derive(Debug, Hash, PartialEq, Eq)]
enum TargetKey<'a> {
    Tool {
        name: &'a str,
        title: &'a str,
        hints: [bool; 4],
    },
    Resource(&'a str),
    Prompt(&'a str),
}

/// A [`ServedKey`] kept in a [`Settled`] entry.
#[derive(Debug)]
struct OwnedServedKey {
    strings: [String; 10],
    kind: u8,
    hints: [bool; 4],
}

impl<'a> ServedKey<'a> {
    /// The key of `facts`.
    fn of(facts: &'a Facts<'a>) -> ServedKey<'a> {
        let plugin = facts.plugin;
        ServedKey {
            plugin: &plugin.settings.name,
            file: &plugin.file,
            digest: &plugin.digest,
            signer: facts.signer.unwrap_or_default(),
            target: match facts.target {
                Target::Tool { name, spec } => TargetKey::Tool {
                    name,
                    title: &spec.title,
                    hints: hints(spec),
                },
                Target::Resource(uri) => TargetKey::Resource(uri),
                Target::Prompt(name) => TargetKey::Prompt(name),
            },
            method: facts.method,
            transport: facts.transport,
            era: facts.era,
            profile: facts.profile,
        }
    }

    /// The key, owned.
    fn to_owned(&self) -> OwnedServedKey {
        let (kind, target, title, hints) = match self.target {
            TargetKey::Tool { name, title, hints } => (0, name, title, hints),
            TargetKey::Resource(uri) => (1, uri, "", [false; 4]),
            TargetKey::Prompt(name) => (2, name, "", [false; 4]),
        };
        OwnedServedKey {
            strings: [
                self.plugin,
                self.file,
                self.digest,
                self.signer,
                target,
                title,
                self.method,
                self.transport,
                self.era,
                self.profile,
            ]
            .map(str::to_string),
            kind,
            hints,
        }
    }
}

impl OwnedServedKey {
    /// The key, borrowed, to compare with a request's.
    fn borrowed(&self) -> ServedKey<'_> {
        let [
            plugin,
            file,
            digest,
            signer,
            target,
            title,
            method,
            transport,
            era,
            profile,
        ] = self.strings.each_ref().map(String::as_str);
        ServedKey {
            plugin,
            file,
            digest,
            signer,
            target: match self.kind {
                0 => TargetKey::Tool {
                    name: target,
                    title,
                    hints: self.hints,
                },
                1 => TargetKey::Resource(target),
                _ => TargetKey::Prompt(target),
            },
            method,
            transport,
            era,
            profile,
        }
    }
}

/// A tool's four hints, in `tool.annotations`' order.
fn hints(spec: &ToolSpec) -> [bool; 4] {
    [
        spec.annotations.read_only,
        spec.annotations.destructive,
        spec.annotations.idempotent,
        spec.annotations.open_world,
    ]
}

impl SettledCache {
    /// The entry for `facts`, worked out over `rules` the first time.
    fn get(&self, rules: &[Rule], facts: &Facts) -> Arc<Settled> {
        let key = ServedKey::of(facts);
        let hash = std::hash::BuildHasher::hash_one(&self.hasher, &key);
        if let Some(found) = self.find(hash, &key) {
            return found;
        }
        let settled = Arc::new(Settled::work_out(rules, facts, key.to_owned()));
        let mut by_hash = self.by_hash.write().expect("not poisoned");
        if by_hash.values().map(Vec::len).sum::<usize>() >= MAX_SETTLED {
            by_hash.clear();
        }
        let same = by_hash.entry(hash).or_default();
        // Another request may have worked it out meanwhile: either serves.
        if !same.iter().any(|s| s.key.borrowed() == key) {
            same.push(settled.clone());
        }
        settled
    }

    /// The entry under `key`, if worked out already.
    fn find(&self, hash: u64, key: &ServedKey) -> Option<Arc<Settled>> {
        let by_hash = self.by_hash.read().expect("not poisoned");
        by_hash
            .get(&hash)?
            .iter()
            .find(|s| s.key.borrowed() == *key)
            .cloned()
    }
}

impl Settled {
    /// The entry for requests like `facts`: each rule's condition settled
    /// from the served variables where they settle it.
    fn work_out(rules: &[Rule], facts: &Facts, key: OwnedServedKey) -> Settled {
        let values = ServedValues::default();
        // Neither the caller nor the arguments: what is settled here is
        // settled for every request like this one.
        let served_only = Facts {
            identity: None,
            arguments: None,
            ..*facts
        };
        let variables = Variables::sharing(&served_only, &values);
        let context = condition::resolving(&variables);
        let rules = rules
            .iter()
            .map(|rule| match &rule.when {
                When::Always => Known::Holds,
                When::NotGranted(_) => Known::PerRequest,
                When::Cel(condition) if condition.may_settle() => {
                    match condition.settled(&context) {
                        Some(true) => Known::Holds,
                        Some(false) => Known::Never,
                        None => Known::PerRequest,
                    }
                }
                When::Cel(_) => Known::PerRequest,
            })
            .collect();
        drop(context);
        drop(variables);
        Settled { key, rules, values }
    }
}

impl PartialEq for Policy {
    fn eq(&self, other: &Self) -> bool {
        self.version == other.version
    }
}

/// What the thing a request is about is.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// A tool, by its served name.
    Tool {
        /// The served name.
        name: &'a str,
        /// Its definition (title, annotations).
        spec: &'a ToolSpec,
    },
    /// A resource, or a resource template, by URI (or URI template).
    Resource(&'a str),
    /// A prompt, by its served name.
    Prompt(&'a str),
}

impl Target<'_> {
    /// The name or URI it is known by.
    pub fn name(&self) -> &str {
        match self {
            Target::Tool { name, .. } => name,
            Target::Resource(uri) => uri,
            Target::Prompt(name) => name,
        }
    }
}

/// Everything a condition may read about one request (or, for a hide
/// rule, about one thing a caller may be shown).
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    /// The caller, if the transport established one.
    pub identity: Option<&'a Identity>,
    /// `"stdio"`, `"http"` or `"cli"`.
    pub transport: &'static str,
    /// `"legacy"` or `"modern"`.
    pub era: &'static str,
    /// The MCP method: `tools/call`, `resources/read`, `prompts/get`,
    /// `completion/complete`.
    pub method: &'a str,
    /// The profile the request came through (`/mcp/NAME`, `serve
    /// --profile NAME`); empty for the whole catalog.
    pub profile: &'a str,
    /// The plugin serving the target.
    pub plugin: &'a Plugin,
    /// What the request is about.
    pub target: Target<'a>,
    /// The request's arguments (a call's, a prompt's, a completion's);
    /// `None` while deciding what the caller is shown.
    pub arguments: Option<&'a Value>,
    /// The component's signer: the trusted key that verified its
    /// signature, for a component installed from OCI with one.
    pub signer: Option<&'a str>,
}

impl Facts<'_> {
    /// The caller as the limits and the audit trail name it.
    fn caller(&self) -> String {
        match self.identity {
            Some(identity) => identity.key(),
            None => self.transport.to_string(),
        }
    }

    /// The variable `name` (see `docs/policy.md` for each field), built
    /// directly as a CEL value; only when a rule reads it (see
    /// [`Variables`]).
    fn value_of(&self, name: &str) -> Cel {
        match name {
            "identity" => self.identity_value(),
            "request" => map([
                ("method", text(self.method)),
                ("transport", text(self.transport)),
                ("era", text(self.era)),
                ("profile", text(self.profile)),
            ]),
            "plugin" => {
                let plugin = self.plugin;
                let hosts = plugin
                    .settings
                    .network
                    .rules()
                    .iter()
                    .map(|r| text(&r.host().to_string()))
                    .collect();
                map([
                    ("name", text(&plugin.settings.name)),
                    ("file", text(&plugin.file)),
                    ("digest", text(&format!("sha256:{}", plugin.digest))),
                    ("signer", text(self.signer.unwrap_or_default())),
                    ("hosts", Cel::List(Arc::new(hosts))),
                ])
            }
            "tool" => match self.target {
                Target::Tool { name, spec } => tool_value(
                    name,
                    &spec.title,
                    [
                        spec.annotations.read_only,
                        spec.annotations.destructive,
                        spec.annotations.idempotent,
                        spec.annotations.open_world,
                    ],
                ),
                // A request about no tool: MCP's default hints (a
                // tool that says nothing may change things,
                // destructively).
                _ => tool_value("", "", [false, true, false, true]),
            },
            "resource" => map([(
                "uri",
                text(match self.target {
                    Target::Resource(uri) => uri,
                    _ => "",
                }),
            )]),
            "prompt" => map([(
                "name",
                text(match self.target {
                    Target::Prompt(name) => name,
                    _ => "",
                }),
            )]),
            "args" => self.arguments.map_or_else(|| map([]), json_value),
            "now" => Cel::Timestamp(chrono::Utc::now().fixed_offset()),
            _ => Cel::Null,
        }
    }

    /// `identity`: the caller, or the transport standing in for it.
    fn identity_value(&self) -> Cel {
        identity_value(self.identity, self.transport)
    }
}

/// An identity as conditions read it (`identity`, `approver`); none: the
/// transport (`transport`) standing in for it.
fn identity_value(identity: Option<&Identity>, transport: &str) -> Cel {
    match identity {
        Some(i) => map([
            ("source", text(i.source.name())),
            ("subject", text(&i.subject)),
            ("key", text(&i.key())),
            (
                "scopes",
                Cel::List(Arc::new(i.scopes.iter().map(|s| text(s)).collect())),
            ),
            ("claims", json_object(&i.claims)),
        ]),
        None => map([
            ("source", text(transport)),
            ("subject", text("")),
            ("key", text(transport)),
            ("scopes", Cel::List(Arc::new(Vec::new()))),
            ("claims", map([])),
        ]),
    }
}

/// The variables of one pass over the rules for one request, built when a
/// condition first reads each, once (converting a map into CEL's values is
/// most of a simple rule's cost, and a rule that short-circuits never pays
/// for what it does not reach).
pub struct Variables<'f> {
    facts: &'f Facts<'f>,
    built: [std::sync::OnceLock<Box<dyn cel::common::value::Val>>; condition::VARIABLES.len()],
    served: Option<&'f ServedValues>,
}

impl<'f> Variables<'f> {
    /// The variables of `facts`, none built yet.
    pub fn of(facts: &'f Facts<'f>) -> Variables<'f> {
        Variables {
            facts,
            built: Default::default(),
            served: None,
        }
    }

    /// [`Variables::of`], taking `plugin` and `tool` from `served` (built
    /// once per thing served instead of once per request).
    fn sharing(facts: &'f Facts<'f>, served: &'f ServedValues) -> Variables<'f> {
        Variables {
            served: Some(served),
            ..Variables::of(facts)
        }
    }

    /// `variable` as a CEL value, built now.
    fn build(&self, variable: &str) -> Box<dyn cel::common::value::Val> {
        self.facts
            .value_of(variable)
            .try_into()
            .expect("a value built from facts converts")
    }
}

impl cel::context::VariableResolver for Variables<'_> {
    fn resolve<'b>(&'b self, variable: &str) -> Option<cel::common::value::CowVal<'b, 'b>> {
        let index = condition::VARIABLES.iter().position(|v| *v == variable)?;
        let slot = match (self.served, variable) {
            (Some(served), "plugin") => &served.plugin,
            (Some(served), "tool") => &served.tool,
            _ => &self.built[index],
        };
        let built = slot.get_or_init(|| self.build(variable));
        Some(cel::common::value::CowVal::Borrowed(&**built))
    }
}

/// A CEL string.
fn text(value: &str) -> Cel {
    Cel::String(Arc::new(value.to_string()))
}

/// A CEL map of string keys.
fn map<const N: usize>(entries: [(&str, Cel); N]) -> Cel {
    Cel::Map(cel::objects::Map {
        map: Arc::new(
            entries
                .into_iter()
                .map(|(k, v)| (cel::objects::Key::String(Arc::new(k.to_string())), v))
                .collect(),
        ),
    })
}

/// `tool`: its served name, title and the four hints.
fn tool_value(
    name: &str,
    title: &str,
    [read_only, destructive, idempotent, open_world]: [bool; 4],
) -> Cel {
    map([
        ("name", text(name)),
        ("title", text(title)),
        (
            "annotations",
            map([
                ("readOnlyHint", Cel::Bool(read_only)),
                ("destructiveHint", Cel::Bool(destructive)),
                ("idempotentHint", Cel::Bool(idempotent)),
                ("openWorldHint", Cel::Bool(open_world)),
            ]),
        ),
    ])
}

/// A JSON value as CEL reads it: whole numbers as `int` (or `uint` past
/// `i64`), others as `double`.
fn json_value(value: &Value) -> Cel {
    match value {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Cel::Int(i),
            (None, Some(u)) => Cel::UInt(u),
            _ => Cel::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => text(s),
        Value::Array(items) => Cel::List(Arc::new(items.iter().map(json_value).collect())),
        Value::Object(entries) => json_object(entries),
    }
}

/// A JSON object as a CEL map.
fn json_object(entries: &serde_json::Map<String, Value>) -> Cel {
    Cel::Map(cel::objects::Map {
        map: Arc::new(
            entries
                .iter()
                .map(|(k, v)| {
                    (
                        cel::objects::Key::String(Arc::new(k.clone())),
                        json_value(v),
                    )
                })
                .collect(),
        ),
    })
}

/// Whether `condition` holds for `facts`, its variables built as it reads
/// them (as for a rule): a profile's `select` and `hide` conditions
/// ([`crate::catalog`]) are evaluated this way.
pub fn condition_holds(condition: &Condition, facts: &Facts) -> Result<bool, String> {
    let variables = Variables::of(facts);
    condition.holds(&condition::resolving(&variables))
}

/// What the rules decided for a request, and which rule decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The rule that decided ([`DEFAULT_RULE`] when none did).
    pub rule: String,
    /// What it decided.
    pub verdict: Verdict,
}

/// What a request may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Go ahead.
    Allow,
    /// Refused; the reason is the caller's to see.
    Deny(String),
    /// Go ahead once the user says yes to the host's own question.
    Confirm,
    /// Go ahead once an approver says yes to this call (the rule, by the
    /// decision's name, says who may).
    Approve,
}

impl Verdict {
    /// The outcome's name in the audit trail and the metrics.
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Deny(_) => "deny",
            Verdict::Confirm => "confirm",
            Verdict::Approve => "approve",
        }
    }
}

/// A request counted by a `limit` rule: the rule, the key, the budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counted {
    /// The rule's name.
    pub rule: String,
    /// The key it counts by, as the rule computed it.
    pub key: String,
    /// Requests allowed per window.
    pub count: u64,
    /// The window.
    pub window: Duration,
}

/// [`Policy::decide`]'s answer: the limits the request counts against
/// (to be counted before it runs) and the decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evaluation {
    /// The limits that apply, in rule order.
    pub limits: Vec<Counted>,
    /// The decision.
    pub decision: Decision,
}

/// Why a policy could not be built: the rule (by index and name) and what
/// is wrong with it.
#[derive(Debug, thiserror::Error)]
#[error("`policy.rules` entry {index} ({name:?}), `{key}`: {message}")]
pub struct RuleError {
    /// 1-based position in `[[policy.rules]]`.
    pub index: usize,
    /// The rule's name.
    pub name: String,
    /// The key at fault (`when`, `limit.key`, `outcome`, …).
    pub key: &'static str,
    /// What is wrong and what to do.
    pub message: String,
}

impl Policy {
    /// The policy of `rules` in order, after the hide rule `[[access]]`
    /// makes (when it has rules). `text` is what the version is a hash
    /// of: the rules as configured.
    pub fn new(access: Access, rules: Vec<Rule>, text: &str) -> Result<Policy, RuleError> {
        for (i, rule) in rules.iter().enumerate() {
            let reads = |v: &str| match &rule.when {
                When::Cel(c) => c.reads(v),
                _ => false,
            };
            if matches!(rule.outcome, Outcome::Hide) && (reads("args") || reads("request")) {
                return Err(RuleError {
                    index: i + 1,
                    name: rule.name.clone(),
                    key: "when",
                    message: "a hide rule decides what a caller is shown at all, before any \
                              request names arguments or a method, so it may not read `args` or \
                              `request`; use outcome = \"deny\" to refuse by arguments or method"
                        .into(),
                });
            }
            if rules[..i].iter().any(|r| r.name == rule.name)
                || rule.name == ACCESS_RULE
                || rule.name == DEFAULT_RULE
            {
                return Err(RuleError {
                    index: i + 1,
                    name: rule.name.clone(),
                    key: "name",
                    message: format!(
                        "another rule has this name (or it is one of the reserved names \
                         {ACCESS_RULE:?} and {DEFAULT_RULE:?}); give every rule its own name, \
                         which the audit trail and the metrics use"
                    ),
                });
            }
        }
        let access_text = format!("{access:?}");
        let mut all = Vec::with_capacity(rules.len() + 1);
        if access.is_restricted() {
            all.push(Rule {
                name: ACCESS_RULE.to_string(),
                when: When::NotGranted(access),
                outcome: Outcome::Hide,
            });
        }
        all.extend(rules);
        let mut hash = Sha256::new();
        hash.update(access_text.as_bytes());
        hash.update([0]);
        hash.update(text.as_bytes());
        let version = hex::encode(&hash.finalize()[..6]);
        let any_hide = all.iter().any(|r| matches!(r.outcome, Outcome::Hide));
        let any_other = all.iter().any(|r| !matches!(r.outcome, Outcome::Hide));
        Ok(Policy {
            rules: Arc::new(all),
            version,
            any_hide,
            any_other,
            settled: Arc::default(),
        })
    }

    /// Whether what the hide rules show depends on who calls (`[[access]]`,
    /// or a hide rule reading `identity`): then a list is `cacheScope:
    /// "private"`.
    pub fn hides_per_caller(&self) -> bool {
        self.rules.iter().any(|r| match &r.when {
            When::NotGranted(_) => true,
            When::Cel(c) => matches!(r.outcome, Outcome::Hide) && c.reads("identity"),
            When::Always => false,
        })
    }

    /// The policy's version: a hash of its rules and `[[access]]`, in the
    /// audit trail beside every decision.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The rules, `[[access]]`'s first.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Whether any rule is an `approve` rule.
    pub fn has_approvals(&self) -> bool {
        self.rules
            .iter()
            .any(|r| matches!(r.outcome, Outcome::Approve(_)))
    }

    /// The terms of the `approve` rule named `name`, if this policy has
    /// one: what an approval asked under that rule is decided by.
    pub fn approval_rule(&self, name: &str) -> Option<&ApprovalRule> {
        self.rules.iter().find_map(|r| match &r.outcome {
            Outcome::Approve(terms) if r.name == name => Some(terms),
            _ => None,
        })
    }

    /// The hide rule that hides what `facts` describe from its caller,
    /// if any (pass one of the module doc). A rule that cannot be
    /// evaluated hides (fail closed) and is logged.
    pub fn hides(&self, facts: &Facts) -> Option<&str> {
        if !self.any_hide {
            return None;
        }
        let settled = self.settled.get(&self.rules, facts);
        // Nothing is built until a condition reads it.
        let variables = Variables::sharing(facts, &settled.values);
        let context = condition::resolving(&variables);
        for (rule, known) in self.rules.iter().zip(&settled.rules) {
            if !matches!(rule.outcome, Outcome::Hide) {
                continue;
            }
            let applies = match (&rule.when, known) {
                (_, Known::Holds) => Ok(true),
                (_, Known::Never) => Ok(false),
                (When::Always, Known::PerRequest) => Ok(true),
                (When::NotGranted(access), Known::PerRequest) => Ok(facts.identity.is_some()
                    && !access.allows(facts.identity, &facts.plugin.settings.name)),
                (When::Cel(condition), Known::PerRequest) => condition.holds(&context),
            };
            match applies {
                Ok(true) => return Some(&rule.name),
                Ok(false) => {}
                Err(error) => {
                    tracing::warn!(
                        rule = %rule.name,
                        target = %facts.target.name(),
                        "policy rule {:?} could not be evaluated ({error}); hiding, as a rule that \
                         cannot say fails closed",
                        rule.name
                    );
                    return Some(&rule.name);
                }
            }
        }
        None
    }

    /// What a request of something the caller is shown does (pass two of
    /// the module doc): the limits it counts against and the decision.
    pub fn decide(&self, facts: &Facts) -> Evaluation {
        let mut limits = Vec::new();
        if !self.any_other {
            return Evaluation {
                limits,
                decision: Decision {
                    rule: DEFAULT_RULE.to_string(),
                    verdict: Verdict::Allow,
                },
            };
        }
        let settled = self.settled.get(&self.rules, facts);
        let variables = Variables::sharing(facts, &settled.values);
        let context = condition::resolving(&variables);
        for (rule, known) in self.rules.iter().zip(&settled.rules) {
            if matches!(rule.outcome, Outcome::Hide) {
                continue;
            }
            let applies = match (&rule.when, known) {
                (_, Known::Holds) => Ok(true),
                (_, Known::Never) => Ok(false),
                (When::Always, Known::PerRequest) => Ok(true),
                (When::NotGranted(_), Known::PerRequest) => Ok(false),
                (When::Cel(condition), Known::PerRequest) => condition.holds(&context),
            };
            let verdict = match applies {
                Ok(false) => continue,
                Ok(true) => match &rule.outcome {
                    Outcome::Allow => Verdict::Allow,
                    Outcome::Deny(reason) => Verdict::Deny(reason.clone()),
                    Outcome::Confirm => Verdict::Confirm,
                    Outcome::Approve(_) => Verdict::Approve,
                    Outcome::Hide => unreachable!("hide rules are skipped above"),
                    Outcome::Limit(limit) => {
                        let key = match &limit.key {
                            None => Ok(format!("{} {}", facts.caller(), facts.target.name())),
                            Some(key) => key.string(&context),
                        };
                        match key {
                            Ok(key) => {
                                limits.push(Counted {
                                    rule: rule.name.clone(),
                                    key,
                                    count: limit.count,
                                    window: limit.window,
                                });
                                continue;
                            }
                            Err(error) => failed(rule, facts, &format!("its key: {error}")),
                        }
                    }
                },
                Err(error) => failed(rule, facts, &error),
            };
            return Evaluation {
                limits,
                decision: Decision {
                    rule: rule.name.clone(),
                    verdict,
                },
            };
        }
        Evaluation {
            limits,
            decision: Decision {
                rule: DEFAULT_RULE.to_string(),
                verdict: Verdict::Allow,
            },
        }
    }
}

/// The verdict of `rule` when its condition (or key) cannot be evaluated:
/// deny, logged with the reason; the caller is told only that the policy
/// could not decide.
fn failed(rule: &Rule, facts: &Facts, error: &str) -> Verdict {
    tracing::warn!(
        rule = %rule.name,
        target = %facts.target.name(),
        method = %facts.method,
        "policy rule {:?} could not be evaluated ({error}); denying, as a rule that cannot say \
         fails closed",
        rule.name
    );
    Verdict::Deny(format!(
        "the operator's policy rule {:?} could not be evaluated for this request, so it is \
         refused; the operator's log says why",
        rule.name
    ))
}

impl Policy {
    /// What the rules decide for the request `facts` describe, in words,
    /// naming the rule that decides and the limits it counts against:
    /// `toolhost policy test`'s answer. The same two passes a served
    /// request goes through; no limit is counted.
    pub fn explain(&self, facts: &Facts) -> String {
        let mut lines = vec![format!("policy version {}", self.version)];
        let shown = Facts {
            arguments: None,
            ..*facts
        };
        if let Some(rule) = self.hides(&shown) {
            lines.push(format!(
                "hidden by rule {rule:?}: {} is unknown to this caller (lists, calls, reads, \
                 completion and subscriptions alike)",
                facts.target.name()
            ));
            return lines.join("\n");
        }
        let Evaluation { limits, decision } = self.decide(facts);
        for limit in &limits {
            lines.push(format!(
                "counts against rule {:?}: {} per {}s, key {:?}",
                limit.rule,
                limit.count,
                limit.window.as_secs(),
                limit.key
            ));
        }
        let rule = &decision.rule;
        lines.push(match decision.verdict {
            Verdict::Allow => format!("allow, by rule {rule:?}"),
            Verdict::Confirm => {
                format!("confirm, by rule {rule:?}: the host asks the user before the tool runs")
            }
            Verdict::Approve => format!(
                "approve, by rule {rule:?}: the tool runs once an approver says yes to this call"
            ),
            Verdict::Deny(reason) => format!("deny, by rule {rule:?}: {reason}"),
        });
        lines.join("\n")
    }
}
