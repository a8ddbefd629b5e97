//! A rule's condition: a CEL expression, compiled and bounded at load,
//! evaluated against one request's [`Facts`](super::Facts).
//!
//! CEL has no loops and no recursion, so an expression's cost is bounded by
//! its size and by the size of what it reads. Both are bounded here: the
//! source ([`MAX_SOURCE_BYTES`]), its nodes ([`MAX_NODES`]), its nesting
//! ([`MAX_DEPTH`]) and the nesting of its comprehensions (`all`, `exists`,
//! `map`, `filter`: [`MAX_COMPREHENSION_NESTING`], a linear function within
//! one counting as one more, so no loop over a list a client sends runs
//! inside two others; comparisons of whole values are not seen); what it
//! reads is a request the transport already
//! bounded (`host.max_message_bytes`). A name the rule reads that no request
//! has (`identty.subject`) is refused at load, not found at run time.

use std::sync::{Arc, LazyLock};

use cel::common::ast::{Expr, IdedExpr, operators};
use cel::{Context, Env, Program, Value};

/// The longest condition, in bytes.
pub const MAX_SOURCE_BYTES: usize = 4096;
/// The most nodes a condition's syntax tree may have (after macros).
pub const MAX_NODES: usize = 2000;
/// The deepest nesting the parser accepts.
pub const MAX_DEPTH: u16 = 32;
/// The deepest syntax tree a condition may have: evaluation recurses
/// along it on the thread serving the request, so a long chain
/// (`a || b || c …`) is as deep as a nested one.
pub const MAX_TREE_DEPTH: usize = 64;
/// The stack compiling runs on: the parser recurses deeply per level of
/// nesting (several frames per operator), far past a worker thread's.
const COMPILE_STACK_BYTES: usize = 64 << 20;
/// How deeply `all`/`exists`/`map`/`filter` may nest: two lets a rule look
/// at each item of a list of lists, and no deeper.
pub const MAX_COMPREHENSION_NESTING: usize = 2;

/// The names a condition may read (see [`super::Facts`]).
pub const VARIABLES: &[&str] = &[
    "identity", "request", "plugin", "tool", "resource", "prompt", "args", "now",
];

/// The names whose values depend only on what a request is about and how
/// it came (the component, the served name, the method, the transport,
/// the era, the profile), never on the caller, the arguments or the time:
/// what a condition reads of these alone gives the same answer for every
/// request about the same thing (see [`Condition::settled`]).
pub const SERVED_VARIABLES: &[&str] = &["request", "plugin", "tool", "resource", "prompt"];

/// The names an `approve` rule's `approver` condition may read: the
/// person deciding (`approver`, shaped like `identity`), the caller
/// (`identity`) and the time.
pub const APPROVER_VARIABLES: &[&str] = &["approver", "identity", "now"];

/// The standard environment every condition is compiled and run in: built
/// once, shared by every evaluation.
static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| Arc::new(Env::stdlib()));

/// A condition that compiled and fits the bounds.
pub struct Condition {
    /// The expression as written.
    pub source: String,
    program: Program,
    /// The variables it reads.
    reads: Vec<String>,
    /// Which parts of it read only [`SERVED_VARIABLES`].
    settle: Settle,
}

/// The shape of a condition's `&&`/`||` spine, as far as it decides the
/// answer from [`SERVED_VARIABLES`] alone: computed once at load, so that
/// [`Condition::settled`] evaluates only what may settle the answer.
#[derive(Debug, PartialEq, Eq)]
enum Settle {
    /// The expression reads only served variables: its value is the same
    /// for every request about the same thing.
    Served,
    /// `left && right`, one of them (at least) [`Settle::Served`] or
    /// further split.
    And(Box<Settle>, Box<Settle>),
    /// `left || right`, likewise.
    Or(Box<Settle>, Box<Settle>),
    /// Depends on the caller, the arguments or the time.
    Dynamic,
}

impl Settle {
    /// The shape of `expr`.
    fn of(expr: &IdedExpr) -> Settle {
        let references = expr.references();
        if references
            .variables()
            .iter()
            .all(|v| SERVED_VARIABLES.contains(v))
        {
            return Settle::Served;
        }
        let Expr::Call(call) = &expr.expr else {
            return Settle::Dynamic;
        };
        if call.target.is_some() || call.args.len() != 2 {
            return Settle::Dynamic;
        }
        let and = match call.func_name.as_str() {
            operators::LOGICAL_AND => true,
            operators::LOGICAL_OR => false,
            _ => return Settle::Dynamic,
        };
        let (left, right) = (Settle::of(&call.args[0]), Settle::of(&call.args[1]));
        match (left, right, and) {
            (Settle::Dynamic, Settle::Dynamic, _) => Settle::Dynamic,
            (left, right, true) => Settle::And(Box::new(left), Box::new(right)),
            (left, right, false) => Settle::Or(Box::new(left), Box::new(right)),
        }
    }

    /// What `expr` (whose shape this is) gives whatever the dynamic
    /// variables hold, if that is settled by the served ones `context`
    /// resolves. The cases follow the `cel` crate's evaluation exactly:
    /// `a && b` is `false` when `a` is `false` (`b` is not evaluated) and
    /// when `b` is `false` (whatever `a` gives, an error included); `a ||
    /// b` likewise with `true`. Anything else (an error, a value that is
    /// not a boolean) is left to the request's own evaluation.
    fn settled(&self, expr: &IdedExpr, context: &Context) -> Option<bool> {
        match self {
            Settle::Dynamic => None,
            Settle::Served => match Value::resolve(expr, context) {
                Ok(Value::Bool(b)) => Some(b),
                _ => None,
            },
            Settle::And(left, right) | Settle::Or(left, right) => {
                let Expr::Call(call) = &expr.expr else {
                    return None;
                };
                let absorbing = matches!(self, Settle::Or(..));
                let l = left.settled(&call.args[0], context);
                if l == Some(absorbing) {
                    return Some(absorbing);
                }
                let r = right.settled(&call.args[1], context);
                match (l, r) {
                    (_, Some(r)) if r == absorbing => Some(absorbing),
                    // Both settled, neither absorbing: `true && true`,
                    // `false || false`.
                    (Some(_), Some(_)) => Some(!absorbing),
                    _ => None,
                }
            }
        }
    }
}

impl std::fmt::Debug for Condition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Condition").field(&self.source).finish()
    }
}

/// Why a condition was refused at load.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CompileError {
    /// It does not parse: the first error, at its line and column within
    /// the expression (1-based).
    #[error("line {line}, column {column} of the expression: {message}")]
    Syntax {
        /// 1-based line within the expression.
        line: usize,
        /// 1-based column within that line.
        column: usize,
        /// The parser's words.
        message: String,
    },
    /// It is past one of the bounds.
    #[error("{0}")]
    TooCostly(String),
    /// It reads a name its kind of condition does not have (`known` are
    /// the names it may read).
    #[error(
        "it reads `{name}`, which this condition does not have; it may read {known}",
        known = known.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ")
    )]
    UnknownVariable {
        /// The name read.
        name: String,
        /// The names this kind of condition may read.
        known: &'static [&'static str],
    },
}

impl Condition {
    /// Compiles `source`, checking every bound, on a thread of its own
    /// with a stack the parser cannot exhaust within the bounds.
    pub fn compile(source: &str) -> Result<Condition, CompileError> {
        Condition::compile_over(source, VARIABLES)
    }

    /// Compiles `source` as [`Condition::compile`] does, for a condition
    /// that may read only `known` (an `approve` rule's `approver`
    /// condition reads [`APPROVER_VARIABLES`]).
    pub fn compile_over(
        source: &str,
        known: &'static [&'static str],
    ) -> Result<Condition, CompileError> {
        let source = source.to_string();
        std::thread::Builder::new()
            .name("policy-compile".into())
            .stack_size(COMPILE_STACK_BYTES)
            .spawn(move || Condition::compile_here(&source, known))
            .map_err(|e| CompileError::TooCostly(format!("cannot start the compiler: {e}")))?
            .join()
            .unwrap_or_else(|_| {
                Err(CompileError::TooCostly(
                    "the expression could not be compiled; simplify it".into(),
                ))
            })
    }

    fn compile_here(
        source: &str,
        known: &'static [&'static str],
    ) -> Result<Condition, CompileError> {
        if source.len() > MAX_SOURCE_BYTES {
            return Err(CompileError::TooCostly(format!(
                "the expression is {} bytes, more than the {MAX_SOURCE_BYTES} a condition may \
                 have; split it across rules",
                source.len()
            )));
        }
        // The depth bound first: the parser stops at it instead of
        // building a tree past it.
        ENV.parser()
            .max_recursion_depth(MAX_DEPTH)
            .parse(source)
            .map_err(|e| syntax_error(&e))?;
        let program = ENV.compile(source).map_err(|e| syntax_error(&e))?;
        let mut shape = Shape::default();
        shape.walk(program.expression(), 0);
        if shape.nodes > MAX_NODES {
            return Err(CompileError::TooCostly(format!(
                "the expression has {} nodes once its macros are expanded, more than the \
                 {MAX_NODES} a condition may have; split it across rules",
                shape.nodes
            )));
        }
        if shape.deepest > MAX_TREE_DEPTH {
            return Err(CompileError::TooCostly(format!(
                "the expression's syntax tree is {} levels deep, more than the {MAX_TREE_DEPTH} a \
                 condition may have (a chain of + counts one level per operand); split it \
                 across rules or use `in` with a list",
                shape.deepest
            )));
        }
        if shape.deepest_comprehension > MAX_COMPREHENSION_NESTING {
            return Err(CompileError::TooCostly(format!(
                "the expression nests {} comprehensions (all, exists, exists_one, map, filter; \
                 `in`, contains, startsWith, endsWith and matches within one count as one more); \
                 at most {MAX_COMPREHENSION_NESTING} may nest, so that no loop over what a client \
                 sends runs inside two others",
                shape.deepest_comprehension
            )));
        }
        let references = program.references();
        let mut reads: Vec<String> = references
            .variables()
            .into_iter()
            // A name a comprehension binds is no variable where it is
            // bound; read anywhere else, it is one.
            .filter(|v| shape.free.contains(*v))
            .map(str::to_string)
            .collect();
        reads.sort();
        if let Some(unknown) = reads.iter().find(|v| !known.contains(&v.as_str())) {
            return Err(CompileError::UnknownVariable {
                name: unknown.clone(),
                known,
            });
        }
        let settle = Settle::of(program.expression());
        Ok(Condition {
            source: source.to_string(),
            program,
            reads,
            settle,
        })
    }

    /// Whether the condition reads `variable`.
    pub fn reads(&self, variable: &str) -> bool {
        self.reads.iter().any(|r| r == variable)
    }

    /// What the condition gives for every request about what `context`'s
    /// [`SERVED_VARIABLES`] describe, whoever calls, whatever the
    /// arguments and the time: `Some` when the served variables settle it
    /// (`tool.name == "x" && identity.subject == "y"` for any tool but
    /// `x`), `None` when the request's own variables decide (it is then
    /// evaluated per request with [`Condition::holds`], which gives the
    /// same answer wherever this gives one). Only the served variables are
    /// read from `context`.
    pub fn settled(&self, context: &Context) -> Option<bool> {
        self.settle.settled(self.program.expression(), context)
    }

    /// Whether the condition reads anything but [`SERVED_VARIABLES`]
    /// where it could settle: `false` when [`Condition::settled`] never
    /// answers.
    pub fn may_settle(&self) -> bool {
        self.settle != Settle::Dynamic
    }

    /// Evaluates the condition against `context`: `Ok(true)` or
    /// `Ok(false)`, or why it could not say (a missing key, a value of
    /// another type than the expression expects).
    pub fn holds(&self, context: &Context) -> Result<bool, String> {
        match self.program.execute(context) {
            Ok(Value::Bool(b)) => Ok(b),
            Ok(other) => Err(format!(
                "the condition gave {other:?}, not a boolean; write an expression that is true or \
                 false"
            )),
            Err(e) => Err(e.to_string()),
        }
    }

    /// Evaluates the expression to a string (a limit's `key`): numbers and
    /// booleans are written out; anything else is an error.
    pub fn string(&self, context: &Context) -> Result<String, String> {
        match self.program.execute(context) {
            Ok(Value::String(s)) => Ok(s.to_string()),
            Ok(Value::Int(i)) => Ok(i.to_string()),
            Ok(Value::UInt(u)) => Ok(u.to_string()),
            Ok(Value::Bool(b)) => Ok(b.to_string()),
            Ok(other) => Err(format!(
                "the key gave {other:?}; a key must be a string (join parts with +)"
            )),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// A context in the shared environment whose variables `resolver` builds
/// as conditions read them.
pub fn resolving<'v>(resolver: &'v dyn cel::context::VariableResolver) -> Context<'v, 'v> {
    let mut context = Context::with_env(ENV.clone());
    context.set_variable_resolver(resolver);
    context
}

/// A context in the shared environment with `variables` bound.
pub fn context(variables: Vec<(&'static str, Value)>) -> Context<'static, 'static> {
    let mut context = Context::with_env(ENV.clone());
    for (name, value) in variables {
        context.add_variable_from_value(name, value);
    }
    context
}

/// The first of `errors`, at its line and column within `source`.
fn syntax_error(errors: &cel::ParseErrors) -> CompileError {
    let Some(first) = errors.errors.first() else {
        return CompileError::Syntax {
            line: 1,
            column: 1,
            message: "the expression does not parse".into(),
        };
    };
    let (line, column) = first.pos;
    // The parser counts lines from 1 and columns from 0; an error with no
    // position (a macro's) is placed at the start.
    let line = usize::try_from(line).unwrap_or(1).max(1);
    let column = usize::try_from(column).map(|c| c + 1).unwrap_or(1);
    CompileError::Syntax {
        line,
        column,
        message: first.msg.clone(),
    }
}

/// Functions whose cost grows with what they read (a list's length, a
/// string's): inside a comprehension, each counts as one more nesting.
const LINEAR_FUNCTIONS: &[&str] = &["@in", "contains", "startsWith", "endsWith", "matches"];

/// What walking a syntax tree finds: its size, its deepest nesting of
/// comprehensions (a linear function inside one counting as one more),
/// and the names it reads outside the comprehensions that bind them (the
/// variables a request supplies).
#[derive(Default)]
struct Shape {
    nodes: usize,
    deepest: usize,
    depth: usize,
    deepest_comprehension: usize,
    /// The names bound where the walk is now (a comprehension's).
    scope: Vec<String>,
    /// Names read where no comprehension binds them.
    free: std::collections::BTreeSet<String>,
}

impl Shape {
    fn walk(&mut self, expr: &IdedExpr, comprehensions: usize) {
        self.nodes += 1;
        if self.nodes > MAX_NODES || self.depth > MAX_TREE_DEPTH {
            return;
        }
        self.depth += 1;
        self.deepest = self.deepest.max(self.depth);
        self.visit(expr, comprehensions);
        self.depth -= 1;
    }

    fn visit(&mut self, expr: &IdedExpr, comprehensions: usize) {
        match &expr.expr {
            Expr::Call(call) => {
                if comprehensions > 0 && LINEAR_FUNCTIONS.contains(&call.func_name.as_str()) {
                    self.deepest_comprehension = self.deepest_comprehension.max(comprehensions + 1);
                }
                if let Some(target) = &call.target {
                    self.walk(target, comprehensions);
                }
                for arg in &call.args {
                    self.walk(arg, comprehensions);
                }
            }
            Expr::Comprehension(c) => {
                let depth = comprehensions + 1;
                self.deepest_comprehension = self.deepest_comprehension.max(depth);
                self.walk(&c.iter_range, comprehensions);
                self.walk(&c.accu_init, depth);
                let outer = self.scope.len();
                self.scope.push(c.iter_var.clone());
                if let Some(second) = &c.iter_var2 {
                    self.scope.push(second.clone());
                }
                self.scope.push(c.accu_var.clone());
                self.walk(&c.loop_cond, depth);
                self.walk(&c.loop_step, depth);
                self.walk(&c.result, depth);
                self.scope.truncate(outer);
            }
            Expr::List(list) => {
                for e in &list.elements {
                    self.walk(e, comprehensions);
                }
            }
            Expr::Map(map) => {
                for entry in &map.entries {
                    if let cel::common::ast::EntryExpr::MapEntry(e) = &entry.expr {
                        self.walk(&e.key, comprehensions);
                        self.walk(&e.value, comprehensions);
                    }
                }
            }
            Expr::Select(select) => self.walk(&select.operand, comprehensions),
            Expr::Struct(s) => {
                for entry in &s.entries {
                    if let cel::common::ast::EntryExpr::StructField(f) = &entry.expr {
                        self.walk(&f.value, comprehensions);
                    }
                }
            }
            Expr::Ident(name) => {
                if !self.scope.contains(name) {
                    self.free.insert(name.clone());
                }
            }
            Expr::Literal(_) | Expr::Unspecified => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(source: &str, variables: Vec<(&'static str, Value)>) -> Result<bool, String> {
        Condition::compile(source)
            .expect("compiles")
            .holds(&context(variables))
    }

    #[test]
    fn a_condition_reads_the_request_it_is_given() {
        let identity = cel::to_value(serde_json::json!({
            "subject": "alice",
            "scopes": ["orders:write"],
            "claims": {"groups": ["support"]},
        }))
        .unwrap();
        let holds = eval(
            r#"identity.subject == "alice" && "support" in identity.claims.groups"#,
            vec![("identity", identity.clone())],
        );
        assert_eq!(holds, Ok(true));
        let holds = eval(
            r#"identity.scopes.exists(s, s.startsWith("orders:"))"#,
            vec![("identity", identity)],
        );
        assert_eq!(holds, Ok(true));
    }

    #[test]
    fn a_missing_key_is_an_error_not_a_false() {
        let identity = cel::to_value(serde_json::json!({"claims": {}})).unwrap();
        let result = eval(
            r#""support" in identity.claims.groups"#,
            vec![("identity", identity)],
        );
        let error = result.expect_err("a missing claim is no answer");
        assert!(error.contains("groups"), "{error}");
    }

    #[test]
    fn a_syntax_error_names_its_line_and_column() {
        let error = Condition::compile("identity.subject ==\n  == \"x\"").unwrap_err();
        match error {
            CompileError::Syntax { line, column, .. } => {
                assert_eq!(line, 2, "{error:?}");
                assert!(column >= 1, "{error:?}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_misspelt_variable_is_refused_at_load() {
        let error = Condition::compile(r#"identty.subject == "alice""#).unwrap_err();
        assert_eq!(
            error,
            CompileError::UnknownVariable {
                name: "identty".into(),
                known: VARIABLES
            }
        );
        // A comprehension's own name is no request variable.
        Condition::compile(r#"identity.scopes.all(s, s != "x")"#).expect("compiles");
    }

    #[test]
    fn a_name_a_comprehension_binds_is_still_a_variable_where_it_reads_the_request() {
        // `identity` bound inside the comprehension, and read outside it.
        let condition =
            Condition::compile(r#"[0].exists(identity, true) && identity.subject == "alice""#)
                .expect("compiles");
        assert!(condition.reads("identity"), "read outside its binding");
        let bound_only = Condition::compile("[1, 2].all(identity, identity > 0)").unwrap();
        assert!(!bound_only.reads("identity"), "only where it is bound");
        // A misspelt name beside a comprehension that binds it is caught.
        let error = Condition::compile("[0].exists(identty, true) && identty == 1").unwrap_err();
        assert!(
            matches!(&error, CompileError::UnknownVariable { name, .. } if name == "identty"),
            "{error:?}"
        );
    }

    #[test]
    fn conditions_past_the_cost_bounds_are_refused() {
        let long = format!("args.x == \"{}\"", "a".repeat(MAX_SOURCE_BYTES));
        assert!(matches!(
            Condition::compile(&long),
            Err(CompileError::TooCostly(_))
        ));
        let nested = "args.a.all(x, args.b.all(y, args.c.all(z, x == y && y == z)))";
        let error = Condition::compile(nested).unwrap_err();
        assert!(
            matches!(&error, CompileError::TooCostly(m) if m.contains("nests 3")),
            "{error:?}"
        );
        Condition::compile("args.a.all(x, args.b.exists(y, x == y))").expect("two may nest");
        // A membership test or a string scan is a loop of its own.
        for cubic in [
            "args.a.all(x, args.b.all(y, x in args.c))",
            "args.a.all(x, args.b.exists(y, y.contains(x)))",
            "args.a.exists(x, args.b.all(y, y.matches(x)))",
        ] {
            let error = Condition::compile(cubic).unwrap_err();
            assert!(
                matches!(&error, CompileError::TooCostly(m) if m.contains("nests 3")),
                "{cubic}: {error:?}"
            );
        }
        Condition::compile("args.a.all(x, x in args.b)").expect("quadratic at most");
        let deep = format!("{}true{}", "(".repeat(200), ")".repeat(200));
        assert!(Condition::compile(&deep).is_err());
        // `||` and `&&` chains are balanced by the parser; `+` is not.
        let chain = format!("{} == 0", vec!["args.x"; 100].join(" + "));
        let error = Condition::compile(&chain).unwrap_err();
        assert!(
            matches!(&error, CompileError::TooCostly(m) if m.contains("levels deep")),
            "{error:?}"
        );
    }

    /// The variables of one request: what is served (`tool` echo of
    /// plugin `p`) and a caller's own (`identity`, `args`).
    fn request(identity: serde_json::Value, args: serde_json::Value) -> Vec<(&'static str, Value)> {
        vec![
            (
                "tool",
                cel::to_value(serde_json::json!({"name": "echo"})).unwrap(),
            ),
            (
                "plugin",
                cel::to_value(serde_json::json!({"name": "p"})).unwrap(),
            ),
            ("identity", cel::to_value(identity).unwrap()),
            ("args", cel::to_value(args).unwrap()),
            ("now", Value::Timestamp(chrono::Utc::now().fixed_offset())),
        ]
    }

    #[test]
    fn a_condition_is_settled_by_what_is_served_only_where_every_caller_gets_that_answer() {
        use serde_json::json;
        // Callers in turn, the first the one the answer is worked out
        // for: what is settled for it must be every other's answer.
        let callers = [
            (
                json!({"subject": "alice", "claims": {"groups": ["x"]}}),
                json!({"x": 1}),
            ),
            (json!({"subject": "bob", "claims": {}}), json!({"x": 2})),
            (json!({"subject": "root"}), json!({})),
        ];
        let cases = [
            (
                r#"tool.name == "other" && identity.subject != "root""#,
                Some(false),
            ),
            (
                r#"tool.name == "echo" && identity.subject == "alice""#,
                None,
            ),
            (
                r#"identity.subject == "alice" && tool.name == "other""#,
                Some(false),
            ),
            // The left side errors for a caller without the claim; `false`
            // on the right still decides.
            (
                r#"identity.claims.groups == ["x"] && tool.name == "other""#,
                Some(false),
            ),
            (r#"tool.name == "echo" || args.x == 1"#, Some(true)),
            (r#"args.x == 1 || tool.name == "echo""#, Some(true)),
            (r#"args.x == 1 || tool.name == "other""#, None),
            (r#"tool.name == "echo""#, Some(true)),
            (r#"plugin.name == "q""#, Some(false)),
            // What cannot be evaluated is left to each request.
            (
                r#"tool.missing == "x" && identity.subject == "alice""#,
                None,
            ),
            (r#"size(tool.name) && identity.subject == "alice""#, None),
            (
                r#"(tool.name == "echo" && args.x == 1) || (plugin.name == "q" && identity.subject == "a")"#,
                None,
            ),
            (
                r#"(tool.name == "other" && args.x == 1) || plugin.name == "q""#,
                Some(false),
            ),
            (
                r#"now > timestamp("2000-01-01T00:00:00Z") && tool.name == "other""#,
                Some(false),
            ),
            (
                r#"now > timestamp("2000-01-01T00:00:00Z") && tool.name == "echo""#,
                None,
            ),
            // A comprehension's own name is not the served `tool`.
            (r#"args.x.exists(tool, tool == "echo")"#, None),
            (
                r#"plugin.name == "p" && identity.subject == "alice" && tool.name == "echo""#,
                None,
            ),
        ];
        for (source, expected) in cases {
            let condition = Condition::compile(source).expect(source);
            let (identity, args) = callers[0].clone();
            let settled = condition.settled(&context(request(identity, args)));
            assert_eq!(settled, expected, "{source}");
            for (identity, args) in callers.clone() {
                let holds = condition.holds(&context(request(identity.clone(), args)));
                if let Some(settled) = settled {
                    assert_eq!(holds, Ok(settled), "{source} for {identity}");
                }
            }
        }
        // A condition reading only the caller is never settled.
        assert!(
            !Condition::compile(r#"identity.subject == "alice""#)
                .unwrap()
                .may_settle()
        );
    }

    #[test]
    fn a_condition_that_is_not_a_boolean_is_an_error() {
        assert!(eval("1 + 1", vec![]).is_err());
    }
}
