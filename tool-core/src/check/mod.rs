//! `toolsmith check`: every tool tests itself against its own schemas.
//!
//! Owns [`Registry::check`] and its report. For each tool it makes inputs from the input schema
//! (`gen`): valid ones, and deliberate mistakes; each is first judged by the schema's own
//! validator, so only a value the schema accepts counts as valid and only one it refuses as a
//! mistake. Then it calls the tool through the registry (limits, validation, context, run,
//! output validation: the path every model's call takes) and fails the tool when
//!
//! - a value the schema accepts is refused as invalid input: the schema and the Rust type
//!   disagree;
//! - a value the schema refuses gets past validation and reaches the function;
//! - the function panics, or runs past the time limit;
//! - its output does not validate against the output schema;
//! - an error is not model-readable: no message, or one that repeats a secret from the request
//!   context (the check puts canary secrets there);
//! - one of its `input_examples` fails.
//!
//! A client-side tool (no body: the application answers its calls) is checked on its input
//! only: the valid inputs must pass validation and the mistakes must be refused, and nothing
//! runs (its output schema is the application's contract, checked when a result is
//! submitted). It has no side effects here, so it is never skipped for them.
//!
//! Failing inputs are shrunk (`shrink`) and printed as a ready `toolsmith call` command
//! (`report`). Tools that need approval, declare `destructive_hint`, or do not declare
//! `read_only_hint` are skipped unless side effects are allowed
//! ([`CheckOptions::include_side_effects`]; give them a sandbox through
//! [`CheckOptions::context`]).

mod generate;
mod report;
mod shrink;

use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::call::{CallArgs, CallOptions, Finished, accepted_input, is_secret_key};
use crate::error::{ErrorKind, ToolError};
use crate::registry::Registry;
use crate::spec::{ApprovalRule, ToolSpec};
use generate::Gen;

/// How a check runs.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// Only these tools (all when empty).
    pub ids: Vec<String>,
    /// Valid inputs generated per tool (mistakes come on top).
    pub cases: usize,
    /// The seed: the same seed makes the same inputs.
    pub seed: u64,
    /// Run tools that need approval, are destructive or not read-only too.
    pub include_side_effects: bool,
    /// How long one call may take before it counts as hanging.
    pub timeout: Duration,
    /// Merged over each generated request context (e.g. a sandbox root for tools with side
    /// effects).
    pub context: Map<String, Value>,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            ids: Vec::new(),
            cases: 64,
            seed: 0x70015,
            include_side_effects: false,
            timeout: Duration::from_secs(10),
            context: Map::new(),
        }
    }
}

/// What the check found, tool by tool.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// One entry per tool, in id order.
    pub tools: Vec<ToolReport>,
}

impl CheckReport {
    /// Whether every checked tool passed.
    pub fn passed(&self) -> bool {
        self.tools.iter().all(|t| t.failures.is_empty())
    }
}

/// One tool's result.
#[derive(Debug, Clone, Serialize)]
pub struct ToolReport {
    /// The tool id.
    pub id: String,
    /// Why it was not run, when it was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// Calls made.
    pub cases: usize,
    /// Valid inputs the schema's generator could not make (e.g. a `pattern`): not run.
    pub unmade: usize,
    /// What failed (at most one per kind, shrunk).
    pub failures: Vec<Failure>,
}

/// One failure, with the smallest input found that shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    /// What went wrong.
    pub kind: FailureKind,
    /// The case that showed it (`valid input`, `wrong type at /days`, `input_examples[0]`).
    pub case: String,
    /// The arguments.
    pub input: Value,
    /// The request context.
    pub context: Value,
    /// What the call answered.
    pub detail: String,
}

/// The kinds of failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The schema accepts the input, the call refused it as invalid: schema and type disagree.
    ValidInputRefused,
    /// The schema refuses the input, the call let it through.
    InvalidInputAccepted,
    /// The function panicked.
    Panicked,
    /// The call ran past the time limit.
    Hung,
    /// The output does not validate against the output schema.
    InvalidOutput,
    /// An error without a message.
    UnreadableError,
    /// An error that repeats a secret of the request context.
    SecretInError,
    /// An `input_examples` entry failed.
    ExampleFailed,
    /// A schema of the tool does not compile (the registry refuses every call of it).
    SchemaDoesNotCompile,
}

impl FailureKind {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::ValidInputRefused => "valid_input_refused",
            FailureKind::InvalidInputAccepted => "invalid_input_accepted",
            FailureKind::Panicked => "panicked",
            FailureKind::Hung => "hung",
            FailureKind::InvalidOutput => "invalid_output",
            FailureKind::UnreadableError => "unreadable_error",
            FailureKind::SecretInError => "secret_in_error",
            FailureKind::ExampleFailed => "example_failed",
            FailureKind::SchemaDoesNotCompile => "schema_does_not_compile",
        }
    }
}

/// What a case expects of its call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// The schema accepts the input: the call must not refuse it as invalid.
    Accepted,
    /// The schema refuses the input: the call must refuse it.
    Refused,
    /// An `input_examples` entry: the call must succeed.
    Succeeds,
}

impl Registry {
    /// Checks the tools against their own schemas (see [the module](crate::check)).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use tool_core::check::CheckOptions;
    /// use tool_core::{tool::DynamicTool, Registry};
    /// let half = DynamicTool::builder("half", "Halves a number")
    ///     .input_schema(serde_json::json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}))
    ///     .with_spec(|s| s.presentation.mcp.read_only_hint = Some(true))
    ///     .handler(|input, _cx| async move { Ok(serde_json::json!(input["n"].as_i64().unwrap_or(0) / 2)) })
    ///     .unwrap();
    /// let registry = Registry::try_from_tools([half]).unwrap();
    /// let report = registry.check(&CheckOptions { cases: 8, ..CheckOptions::default() }).await;
    /// assert!(report.passed(), "{report:?}");
    /// # });
    /// ```
    pub async fn check(&self, options: &CheckOptions) -> CheckReport {
        let mut tools = Vec::new();
        for tool in self.tools() {
            let spec = tool.spec();
            if !options.ids.is_empty() && !options.ids.contains(&spec.id) {
                continue;
            }
            tools.push(self.check_tool(spec, options).await);
        }
        tools.sort_by(|a, b| a.id.cmp(&b.id));
        CheckReport { tools }
    }

    async fn check_tool(&self, spec: &ToolSpec, options: &CheckOptions) -> ToolReport {
        let mut report = ToolReport {
            id: spec.id.clone(),
            skipped: None,
            cases: 0,
            unmade: 0,
            failures: Vec::new(),
        };
        // Every schema compiled as the registry compiles them at a first call: one that does
        // not compile is a failure whatever else is skipped.
        if let Some(Err(e)) = self.compile_tool(&spec.id) {
            report.failures.push(Failure {
                kind: FailureKind::SchemaDoesNotCompile,
                case: "compiling its schemas".into(),
                input: Value::Object(Default::default()),
                context: Value::Null,
                detail: e.0,
            });
            return report;
        }
        if let Some(why) = skip_reason(spec, options) {
            report.skipped = Some(why);
            return report;
        }
        // Judged as the registry judges a call: a strict tool's schema closed.
        let validator = match jsonschema::validator_for(&accepted_input(spec)) {
            Ok(v) => v,
            Err(e) => {
                report.skipped = Some(format!("its input schema does not compile: {e}"));
                return report;
            }
        };
        let context = canary_context(spec, options);
        let mut checker = Checker {
            registry: self,
            spec,
            validator: &validator,
            context: &context,
            options,
            report: &mut report,
        };
        checker.examples().await;
        checker.generated().await;
        report
    }
}

/// Runs one tool's cases and collects its failures.
struct Checker<'a> {
    registry: &'a Registry,
    spec: &'a ToolSpec,
    validator: &'a jsonschema::Validator,
    context: &'a Value,
    options: &'a CheckOptions,
    report: &'a mut ToolReport,
}

impl Checker<'_> {
    async fn examples(&mut self) {
        for (n, example) in self.spec.presentation.input_examples.iter().enumerate() {
            self.case(format!("input_examples[{n}]"), example.clone(), Expect::Succeeds).await;
        }
    }

    async fn generated(&mut self) {
        let mut generator = Gen::new(&self.spec.schemas.input, self.options.seed ^ fnv(&self.spec.id));
        let mut bases = Vec::new();
        for _ in 0..self.options.cases {
            let input = generator.valid();
            if !self.validator.is_valid(&input) {
                self.report.unmade += 1;
                continue;
            }
            if bases.len() < 2 {
                bases.push(input.clone());
            }
            self.case("valid input".into(), input, Expect::Accepted).await;
        }
        let base = bases.first().cloned().unwrap_or_else(|| json!({}));
        for mistake in generator.mistakes(&base) {
            let expect = if self.validator.is_valid(&mistake.value) {
                Expect::Accepted
            } else {
                Expect::Refused
            };
            self.case(mistake.what, mistake.value, expect).await;
        }
    }

    /// Runs one case; on a new kind of failure, shrinks it and records it. A tool that hung is
    /// not called again (each further call would wait out the time limit too), and a hang is
    /// not shrunk, for the same reason.
    async fn case(&mut self, case: String, input: Value, expect: Expect) {
        if self.report.failures.iter().any(|f| f.kind == FailureKind::Hung) {
            return;
        }
        self.report.cases += 1;
        let Some((kind, detail)) = self.judge(&input, expect).await else {
            return;
        };
        if self.report.failures.iter().any(|f| f.kind == kind) {
            return;
        }
        let input = if expect == Expect::Succeeds || kind == FailureKind::Hung {
            input
        } else {
            let this = &*self;
            shrink::shrink(input, this.validator, expect == Expect::Accepted, |candidate| {
                let candidate = candidate.clone();
                async move { this.judge(&candidate, expect).await.is_some_and(|(k, _)| k == kind) }
            })
            .await
        };
        self.report.failures.push(Failure {
            kind,
            case,
            input,
            context: self.context.clone(),
            detail,
        });
    }

    /// Calls the tool and says what is wrong with the answer, if anything.
    async fn judge(&self, input: &Value, expect: Expect) -> Option<(FailureKind, String)> {
        // A margin over the call's own timeout, for a body that never yields.
        let limit = self.options.timeout + Duration::from_secs(1);
        let answer = match tokio::time::timeout(limit, self.call(input)).await {
            Ok(answer) => answer,
            Err(_) => return Some((FailureKind::Hung, format!("no answer within {:?}", self.options.timeout))),
        };
        match answer {
            Ok(()) if expect == Expect::Refused => Some((FailureKind::InvalidInputAccepted, "the call succeeded".into())),
            Ok(()) => None,
            Err(error) => self.judge_error(&error, expect),
        }
    }

    /// One call as a model's: the arguments as text, through limits, validation, context and
    /// the run. The approval gate is passed only when side effects are allowed (the user asked
    /// for them; a suspension counts as an answer).
    async fn call(&self, input: &Value) -> Result<(), ToolError> {
        let text = input.to_string();
        let args = CallArgs::from(text.as_str());
        let prepared = self.registry.prepare(&self.spec.id, &args, Some(self.context.clone()))?;
        if self.spec.behaviour.client_side {
            // Validated, and nothing here runs it (nor needs approving): the application
            // answers its calls.
            return Ok(());
        }
        if !self.options.include_side_effects {
            prepared.gate(None)?;
        }
        let CallOptions { data, env } = CallOptions::default().timeout(self.options.timeout);
        match prepared.run(&std::sync::Arc::new(data), env, None).await? {
            Finished::Output(_) | Finished::Suspended(_) => Ok(()),
        }
    }

    fn judge_error(&self, error: &ToolError, expect: Expect) -> Option<(FailureKind, String)> {
        let detail = format!("{}: {}", error.kind().as_str(), error.message());
        let refused = matches!(error.kind(), ErrorKind::InvalidInput | ErrorKind::InputRejected);
        if error.message().trim().is_empty() {
            return Some((FailureKind::UnreadableError, detail));
        }
        let shown = error.to_json().to_string();
        // The canary exists only where the check planted it: an error holding it repeats a secret.
        if shown.contains(CANARY) {
            return Some((FailureKind::SecretInError, detail));
        }
        match (error.kind(), expect) {
            (ErrorKind::Panic, _) => Some((FailureKind::Panicked, detail)),
            (ErrorKind::Aborted, _) => Some((FailureKind::Hung, detail)),
            (ErrorKind::InvalidOutput, _) => Some((FailureKind::InvalidOutput, detail)),
            (_, Expect::Succeeds) => Some((FailureKind::ExampleFailed, detail)),
            (_, Expect::Accepted) if error.kind() == ErrorKind::InvalidInput => Some((FailureKind::ValidInputRefused, detail)),
            (_, Expect::Refused) if !refused => Some((FailureKind::InvalidInputAccepted, detail)),
            _ => None,
        }
    }
}

/// Why a tool is not run, if it is not. A tool with side effects runs only with the request
/// context its schema requires given by the user (its sandbox), never with a made-up one.
fn skip_reason(spec: &ToolSpec, options: &CheckOptions) -> Option<String> {
    if spec.behaviour.client_side {
        return None;
    }
    let side_effects = spec.policy.require_approval != ApprovalRule::Never
        || spec.presentation.mcp.destructive_hint == Some(true)
        || spec.presentation.mcp.read_only_hint != Some(true);
    if options.include_side_effects {
        let required = spec
            .schemas
            .request_context
            .as_ref()
            .and_then(|s| s.get("required"))
            .and_then(Value::as_array);
        let missing: Vec<&str> = required
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|k| !options.context.contains_key(*k))
            .collect();
        return (side_effects && !missing.is_empty()).then(|| {
            format!(
                "it has side effects and its request context needs `{}`: give a sandbox with --context",
                missing.join("`, `")
            )
        });
    }
    if spec.policy.require_approval != ApprovalRule::Never {
        return Some("it needs approval (run with --include-side-effects)".into());
    }
    if spec.presentation.mcp.destructive_hint == Some(true) {
        return Some("it is destructive (run with --include-side-effects)".into());
    }
    if spec.presentation.mcp.read_only_hint != Some(true) {
        return Some("it does not declare read_only_hint (run with --include-side-effects)".into());
    }
    None
}

/// The request context of every case: made from the context schema when there is one (secret
/// keys get canary values), else canaries under secret-looking keys; the caller's own keys
/// over it.
fn canary_context(spec: &ToolSpec, options: &CheckOptions) -> Value {
    let mut context = match &spec.schemas.request_context {
        Some(schema) => {
            let mut generator = Gen::new(schema, options.seed);
            let validator = jsonschema::validator_for(schema).ok();
            let made = (0..16)
                .map(|_| plant_canaries(generator.valid()))
                .find(|v| validator.as_ref().is_some_and(|val| val.is_valid(v)));
            made.and_then(|v| v.as_object().cloned()).unwrap_or_default()
        }
        None => {
            let mut m = Map::new();
            m.insert("apiKey".into(), json!(CANARY));
            m
        }
    };
    for (k, v) in &options.context {
        context.insert(k.clone(), v.clone());
    }
    Value::Object(context)
}

/// The canary secret: no error may repeat it.
const CANARY: &str = "toolsmith-check-canary-7f3a9c";

/// Replaces the value of every secret-named string field with the canary.
fn plant_canaries(mut value: Value) -> Value {
    if let Value::Object(obj) = &mut value {
        for (k, v) in obj.iter_mut() {
            if is_secret_key(k) && v.is_string() {
                *v = json!(CANARY);
            } else if v.is_object() {
                *v = plant_canaries(v.take());
            }
        }
    }
    value
}

/// A stable 64-bit hash of a tool id (each tool gets its own stream from one seed).
fn fnv(text: &str) -> u64 {
    text.bytes()
        .fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

pub use report::render_table;
