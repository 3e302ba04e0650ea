//! A tool's validators, compiled when first needed.
//!
//! Owns [`Compiled`]: what a registry keeps beside each tool to check its calls. Entering a
//! registry decides only what is cheap (whether the tool's own types already enforce its
//! schemas); the schemas themselves are compiled the first time a call of *that* tool needs
//! them, or for every tool at once when [`crate::Registry::compile_schemas`] is asked (what
//! `toolsmith serve` does on a background thread once it listens, and `toolsmith check` does
//! before anything). A schema that does not compile is refused before the first call of its
//! tool answers: the call fails with the compiler's words and the tool does not run. A tool
//! whose happy path needs no validator (a `#[tool]` whose types imply its schemas, read keyword
//! by keyword: `call::implied`) compiles nothing until a call strays from that path.
//!
//! Compiling at registration cost ≈ 79 k instructions per tool (≈ 21 k of them the check against
//! the meta-schema) — for a server with a thousand tools, tens of milliseconds of start-up spent
//! on tools a cold process may never call (the start-up goal of the performance issue).

use std::sync::{Arc, OnceLock};

use jsonschema::Validator;
use serde_json::Value;

use super::implied::{implied_by_type, output_implied_by_type};
use super::validate::accepted_input;
use crate::error::{ErrorKind, ToolError};
use crate::json::Borrowed;
use crate::schema::SchemaError;
use crate::tool::Tool;

/// The validators of one tool, compiled once, when first needed (see the module doc).
pub(crate) struct Compiled {
    tool: Arc<dyn Tool>,
    /// Whether the tool's own input type enforces everything its input schema says, decided
    /// when the tool enters a registry: the tool answers `decodes` (only a `#[tool]` whose
    /// generated input struct has fields of sealed `PlainDecode` types does, see
    /// `ToolMeta::plain_input`) and the schema's keywords say nothing more. Text that decodes
    /// and repeats no key is then valid without running the validator.
    input_implied: bool,
    /// Whether what the body returns is valid against the output schema by construction: the
    /// tool answers `encodes_plain` (a `#[tool]` whose output type is a sealed `PlainEncode`
    /// type, its schema the derived one) and the schema's keywords say nothing more. Its body's
    /// outputs are then not checked again (a result the application submits always is).
    output_implied: bool,
    /// Whether a call on the happy path needs no validator at all: its input and output are
    /// implied by its types (schemas of plain keywords only, each well-formed and every `$ref`
    /// resolving: they compile) and it has no context, suspend or resume schema. Such a tool's
    /// first call (text, or a value as MCP sends it, that decodes) does not compile anything (nor build the meta-schema's validators, ≈ 4 M
    /// instructions once per process); a call that strays from the happy path compiles then.
    needs_none: bool,
    validators: OnceLock<Result<Validators, SchemaError>>,
}

/// Every schema of one tool, compiled.
pub(crate) struct Validators {
    pub(super) input: Pair,
    pub(super) output: Option<Pair>,
    pub(super) context: Option<Validator>,
    pub(super) suspend: Option<Validator>,
    // Compiled for every tool (a resume schema that does not compile refuses the tool's calls):
    // the runtime resumes calls, `Registry::validate_resume_data` checks data an agent extracted.
    pub(super) resume: Option<Validator>,
}

/// One schema's two validators: over the borrowed tree of text as sent (`fast`, compiled with
/// the others) and over `serde_json::Value` (`value`: compiled when first needed — arguments
/// given as a value, a repair, an error's issues).
pub(super) struct Pair {
    what: &'static str,
    schema: Value,
    pub(super) fast: Validator<Borrowed>,
    value: OnceLock<Validator>,
}

/// The compiler's refusal of one of `tool`'s schemas, as the registry reports it.
fn refused(tool: &str, what: &str, e: impl std::fmt::Display) -> SchemaError {
    SchemaError(format!("tool `{tool}`: the {what} schema does not compile: {e}"))
}

impl Pair {
    fn new(tool: &str, what: &'static str, schema: Value) -> Result<Self, SchemaError> {
        let fast = jsonschema::options_for::<Borrowed>()
            .build(&schema)
            .map_err(|e| refused(tool, what, e))?;
        Ok(Pair {
            what,
            schema,
            fast,
            value: OnceLock::new(),
        })
    }

    /// The validator over values, compiled now if no call needed it before. The schema
    /// compiled already (the tree's validator), so this cannot fail but in a bug of the
    /// compiler; that is reported as the call's error, never a panic.
    pub(super) fn value(&self, tool: &str) -> Result<&Validator, ToolError> {
        if let Some(validator) = self.value.get() {
            return Ok(validator);
        }
        let compiled = jsonschema::validator_for(&self.schema).map_err(|e| not_callable(tool, &refused(tool, self.what, e)))?;
        Ok(self.value.get_or_init(|| compiled))
    }
}

/// A call of a tool whose schema does not compile: refused, naming the schema's fault (the
/// tool's definition, not the call, is wrong: it did not run).
fn not_callable(tool: &str, e: &SchemaError) -> ToolError {
    ToolError::with_kind(
        ErrorKind::Execution,
        format!("Tool `{tool}` cannot be called: {e}. The tool's definition must be fixed; it did not run."),
    )
    .for_tool(tool)
}

impl Validators {
    fn compile(tool: &dyn Tool) -> Result<Self, SchemaError> {
        let spec = tool.spec();
        let id = spec.id.as_str();
        let compile = |what: &str, schema: &Value| jsonschema::validator_for(schema).map_err(|e| refused(id, what, e));
        let schemas = &spec.schemas;
        Ok(Validators {
            input: Pair::new(id, "input", accepted_input(spec).into_owned())?,
            output: schemas.output.as_ref().map(|s| Pair::new(id, "output", s.clone())).transpose()?,
            context: schemas
                .request_context
                .as_ref()
                .map(|s| compile("request-context", s))
                .transpose()?,
            suspend: schemas.suspend.as_ref().map(|s| compile("suspend", s)).transpose()?,
            resume: schemas.resume.as_ref().map(|s| compile("resume", s)).transpose()?,
        })
    }
}

impl Compiled {
    /// What entering a registry decides about `tool`: nothing is compiled yet.
    pub(crate) fn new(tool: Arc<dyn Tool>) -> Self {
        let spec = tool.spec();
        // A strict tool refuses unknown fields, which a decoded type ignores: it validates.
        let hints = crate::tool::hints(&*tool);
        let input_implied = !spec.policy.strict && implied_by_type(&spec.schemas.input) && hints.is_some_and(|h| h.vouches_for_input());
        let output_implied = hints.is_some_and(|h| h.encodes_plain()) && spec.schemas.output.as_ref().is_some_and(output_implied_by_type);
        let schemas = &spec.schemas;
        let needs_none = input_implied
            && (schemas.output.is_none() || output_implied)
            && schemas.request_context.is_none()
            && schemas.suspend.is_none()
            && schemas.resume.is_none();
        Compiled {
            tool,
            input_implied,
            output_implied,
            needs_none,
            validators: OnceLock::new(),
        }
    }

    /// The tool's validators, compiled now if nothing needed them before (once: concurrent
    /// first calls wait for one compilation).
    fn compiled(&self) -> &Result<Validators, SchemaError> {
        self.validators.get_or_init(|| Validators::compile(&*self.tool))
    }

    /// Compiles the tool's schemas now if they are not yet; the compiler's refusal otherwise.
    pub(crate) fn compile(&self) -> Result<(), SchemaError> {
        self.compiled().as_ref().map(|_| ()).map_err(Clone::clone)
    }

    /// What every call of the tool meets first: its schemas compiled, or a refusal when they do
    /// not compile — unless its happy path needs no validator (see `needs_none`), whose
    /// schemas are known to compile.
    pub(crate) fn ready(&self) -> Result<(), ToolError> {
        if self.needs_none {
            return Ok(());
        }
        self.validators().map(|_| ())
    }

    /// Whether the tool declares a request-context schema.
    pub(crate) fn has_context(&self) -> bool {
        self.tool.spec().schemas.request_context.is_some()
    }

    /// The validators a call of this tool is checked by; a call of a tool whose schema does
    /// not compile is refused with the compiler's words.
    pub(crate) fn validators(&self) -> Result<&Validators, ToolError> {
        self.compiled().as_ref().map_err(|e| not_callable(&self.tool.spec().id, e))
    }

    /// Whether the tool's schemas have been compiled (whatever the outcome).
    pub(crate) fn is_compiled(&self) -> bool {
        self.validators.get().is_some()
    }

    /// Whether a call on the happy path needs no validator (see `needs_none`).
    pub(crate) fn needs_none(&self) -> bool {
        self.needs_none
    }

    /// Whether the input validator is skipped for text that decodes (see `input_implied`).
    pub(crate) fn input_implied(&self) -> bool {
        self.input_implied
    }

    /// Whether the body's outputs are valid by construction (see `output_implied`).
    pub(crate) fn output_implied(&self) -> bool {
        self.output_implied
    }
}

/// Builds, on a thread of its own, what the first compilation of any schema in this process
/// waits for: the validator of the JSON Schema meta-schema each schema is checked against as it
/// compiles (draft 2020-12, the draft every schema here declares; ≈ 4.3 M instructions, built
/// once a process). A server starts this as it starts listening, when one of its tools
/// compiles at its first call: that call, often the first request a cold process answers, then
/// finds it built, or waits only for the rest of it. Once a process; nothing waits for it (a
/// process that cannot start a thread compiles at the first call, as without it).
#[cfg(feature = "mcp")]
pub(crate) fn warm_up_compiler() {
    static STARTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if STARTED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let _ = std::thread::Builder::new().name("toolsmith-schemas".into()).spawn(|| {
        // Any schema but `{}` and `true` (which the check skips) builds the validator.
        let _ = jsonschema::meta::is_valid(&serde_json::json!({"type": "object"}));
    });
}
