//! The tool's spec: every option `#[tool(...)]` accepts, as plain data.
//!
//! Owns [`ToolSpec`]: an id, a description and a title, then four parts a user reads or sets
//! as a whole: [`Schemas`] (what the tool takes and gives), [`Policy`] (approval, scopes,
//! strictness, placement, background, exactly-once), [`Presentation`] (MCP annotations, tags,
//! provider options, examples) and [`Behaviour`] (hooks, transforms, model output, whether it
//! has a body); and the small types those are made of. It is produced once per tool (by the
//! macro's generated code or by a [`DynamicTool`](crate::DynamicTool) builder) and only read
//! afterwards. It must not run anything: behaviour lives in `tool`, `call` and the runtime.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Everything known about a tool without running it, in four parts beside its identity: what
/// it takes and gives ([`Schemas`]), how its calls are governed ([`Policy`]), how it is shown
/// to models and clients ([`Presentation`]) and which of its functions are set
/// ([`Behaviour`]). `#[tool]` fills the parts from the attribute ([`TypedTool::meta`]
/// returns the same parts: nothing is copied field by field); a
/// [`DynamicTool`](crate::DynamicTool) builder sets them at run time.
///
/// [`TypedTool::meta`]: crate::TypedTool::meta
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ToolSpec {
    /// The unique id; the model calls the tool by it.
    pub id: String,
    /// What the tool does; the model reads it to decide when to call.
    pub description: String,
    /// A human-readable title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its input, output, suspend, resume and request-context schemas.
    #[serde(flatten)]
    pub schemas: Schemas,
    /// Approval, scopes, strictness, placement, background and exactly-once settings.
    #[serde(flatten)]
    pub policy: Policy,
    /// MCP annotations and `_meta`, tags, provider options and examples.
    #[serde(flatten)]
    pub presentation: Presentation,
    /// Which hooks, transforms and model output it has, and whether it has a body.
    #[serde(flatten)]
    pub behaviour: Behaviour,
    /// Where the tool was defined.
    pub source: SourceLocation,
}

/// A tool's JSON Schemas (2020-12), each derived from a Rust type by `#[tool]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Schemas {
    /// The input, deserialize contract. Its root is always an object.
    #[serde(rename = "input_schema")]
    pub input: Value,
    /// The output, serialize contract; `None` for `()`.
    #[serde(rename = "output_schema", skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// The payload passed to `suspend()`.
    #[serde(rename = "suspend_schema", skip_serializing_if = "Option::is_none")]
    pub suspend: Option<Value>,
    /// The data a resume brings.
    #[serde(rename = "resume_schema", skip_serializing_if = "Option::is_none")]
    pub resume: Option<Value>,
    /// What the request context is validated against before `execute`.
    #[serde(rename = "request_context_schema", skip_serializing_if = "Option::is_none")]
    pub request_context: Option<Value>,
}

/// How a tool's calls are governed: who may call, what needs a person, where and how often
/// the body runs, how much of a result the model sees.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Policy {
    /// Ask providers that support it for exact-schema arguments.
    pub strict: bool,
    /// Whether the call needs approval before it runs.
    pub require_approval: ApprovalRule,
    /// The OAuth scopes a caller's access token must grant to call the tool (`#[tool(scopes =
    /// [...])]`), on top of the server's own; served without authorization, nothing checks
    /// them. See the MCP server's authorization (`mcp::http`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// The body does CPU work or blocking I/O (`#[tool(blocking)]`): it runs on the bounded
    /// blocking pool, never on the async workers (see [`crate::isolate`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub blocking: bool,
    /// Where each call runs: in this process, or in a child process (`#[tool(isolate =
    /// "process")]`, see [`crate::isolate`]).
    #[serde(skip_serializing_if = "Isolation::is_in_process")]
    pub isolate: Isolation,
    /// Background execution settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background: Option<BackgroundSpec>,
    /// Exactly-once execution per idempotency key (`#[tool(idempotent)]`): the runtime records
    /// each run's result under the call's key and answers a second run of the same call with it;
    /// `None`: every run runs the body. Distinct from MCP's `idempotentHint`
    /// ([`Presentation::mcp`]), which only tells clients that repeating a call has no further
    /// effect and changes nothing here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<Idempotent>,
    /// The most the model sees of one result (`max_model_output = "16KiB"`), in the unit of the
    /// registry's budget (bytes unless a tokenizer is configured); `None`: the registry's default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_model_output: Option<usize>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            strict: false,
            require_approval: ApprovalRule::Never,
            scopes: Vec::new(),
            blocking: false,
            isolate: Isolation::InProcess,
            background: None,
            idempotent: None,
            max_model_output: None,
        }
    }
}

/// How a tool is shown to models and MCP clients beyond its description and schemas.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Presentation {
    /// MCP annotations and `_meta`.
    pub mcp: McpSpec,
    /// Per-provider options, emitted only to that provider.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub provider_options: BTreeMap<String, Value>,
    /// Tags for selecting tools into catalogs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Example inputs (values of the input type, serialised).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub input_examples: Vec<Value>,
    /// Left out of a request's tool list until the model finds it with tool search
    /// (`#[tool(defer_loading)]`): the tool's default, which a
    /// [`Catalog`](crate::catalog::Catalog) may override.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub defer_loading: bool,
    /// The group the tool is listed and searched under (`#[tool(namespace = "crm")]`, see
    /// [`is_namespace`]): the tool's default, which a [`Catalog`](crate::catalog::Catalog) may
    /// override.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Anthropic's `eager_input_streaming` (`#[tool(eager_input_streaming)]`): the input is
    /// streamed as the model writes it, without buffering; `None`: the API's default. Other
    /// formats cannot carry it: their exports warn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eager_input_streaming: Option<bool>,
    /// Who may call the tool (`#[tool(allowed_callers = ["direct", "programmatic"])]`, see
    /// [`is_caller`]): the model itself (`direct`) and/or code the model runs (`programmatic`, or
    /// Anthropic's code execution tool by version, `code_execution_20250825`); empty: the API's
    /// default. Sent as Anthropic's and OpenAI Responses' `allowed_callers`; other formats warn.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowed_callers: Vec<String>,
    /// Whether the conversation waits for the tool's result (`#[tool(behavior = "non_blocking")]`):
    /// Gemini's `behavior` (Live API); `None`: the API's default. Other formats warn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub behavior: Option<CallBehavior>,
}

/// Whether the conversation waits for a tool's result (Gemini's function `behavior`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallBehavior {
    /// The model waits for the result before it goes on (`BLOCKING`, Gemini's default).
    Blocking,
    /// The model goes on and takes the result when it comes (`NON_BLOCKING`).
    NonBlocking,
}

impl CallBehavior {
    /// Reads `"blocking"` or `"non_blocking"`.
    ///
    /// ```
    /// use tool_core::spec::CallBehavior;
    /// assert_eq!(CallBehavior::parse("non_blocking"), Some(CallBehavior::NonBlocking));
    /// assert_eq!(CallBehavior::NonBlocking.gemini(), "NON_BLOCKING");
    /// assert_eq!(CallBehavior::parse("later"), None);
    /// ```
    pub fn parse(s: &str) -> Option<CallBehavior> {
        match s {
            "blocking" => Some(CallBehavior::Blocking),
            "non_blocking" => Some(CallBehavior::NonBlocking),
            _ => None,
        }
    }

    /// The value of Gemini's `behavior`.
    pub fn gemini(self) -> &'static str {
        match self {
            CallBehavior::Blocking => "BLOCKING",
            CallBehavior::NonBlocking => "NON_BLOCKING",
        }
    }
}

/// Whether `s` names a caller for [`Presentation::allowed_callers`]: `direct` (the model),
/// `programmatic` (code the model runs) or an Anthropic code execution tool version,
/// `code_execution_` and a date of eight digits.
///
/// ```
/// use tool_core::spec::is_caller;
/// assert!(is_caller("direct") && is_caller("programmatic") && is_caller("code_execution_20250825"));
/// assert!(!is_caller("code_execution") && !is_caller("model") && !is_caller("code_execution_2025"));
/// ```
pub fn is_caller(s: &str) -> bool {
    match s.strip_prefix("code_execution_") {
        Some(date) => date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()),
        None => matches!(s, "direct" | "programmatic"),
    }
}

/// Whether `s` can name a namespace: 1 to 64 of `a-z`, `A-Z`, `0-9`, `_`, `-` (the providers'
/// tool-name rule, as OpenAI calls a namespaced tool by its namespace's name).
///
/// ```
/// use tool_core::spec::is_namespace;
/// assert!(is_namespace("crm") && is_namespace("google-calendar_v2"));
/// assert!(!is_namespace("") && !is_namespace("crm.read") && !is_namespace(&"x".repeat(65)));
/// ```
pub fn is_namespace(s: &str) -> bool {
    (1..=64).contains(&s.len()) && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
}

/// Which of a tool's own functions are set: what the runtime asks of it besides its body.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Behaviour {
    /// Which lifecycle hooks are set.
    pub hooks: HookSet,
    /// Which transforms are configured.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub transforms: Vec<(TransformTarget, TransformPhase)>,
    /// Whether a `to_model_output` function is set.
    pub has_model_output: bool,
    /// The tool has no body to run (no `execute`): its calls are answered by the application
    /// (a browser, a mobile app, a person). The runtime validates and announces each call,
    /// which then waits for its result (`Runtime::submit_result`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub client_side: bool,
}

/// What a tool declared `idempotent` does when an earlier run of the same call was interrupted
/// (its process died, or it was cut short) after it started and before its result was stored:
/// its effect may or may not have happened.
///
/// ```
/// use tool_core::spec::Idempotent;
/// assert_eq!(Idempotent::parse("recover"), Some(Idempotent::Recover));
/// assert_eq!(Idempotent::default(), Idempotent::Fail);
/// assert_eq!(Idempotent::parse("maybe"), None);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Idempotent {
    /// The call ends with a clear error saying so; the body is not run again until someone
    /// who checked clears the receipt (`#[tool(idempotent)]`).
    #[default]
    Fail,
    /// The body runs once more, told by its key
    /// ([`IdempotencyKey::after_interruption`](crate::idempotency::IdempotencyKey::after_interruption))
    /// so it can look its effect up before having it again (`#[tool(idempotent = "recover")]`).
    Recover,
}

impl Idempotent {
    /// Reads `fail` or `recover`.
    pub fn parse(text: &str) -> Option<Idempotent> {
        match text {
            "fail" => Some(Idempotent::Fail),
            "recover" => Some(Idempotent::Recover),
            _ => None,
        }
    }
}

/// Whether `s` is one OAuth scope token (RFC 6749 §3.3): printable ASCII other than space,
/// `"` and `\`.
///
/// ```
/// use tool_core::spec::is_scope_token;
/// assert!(is_scope_token("crm.write") && is_scope_token("https://api.example.com/read"));
/// assert!(!is_scope_token("crm write") && !is_scope_token("") && !is_scope_token("ünï"));
/// ```
pub fn is_scope_token(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_graphic() && !matches!(c, '"' | '\\'))
}

/// The `_meta` key under which an MCP listing carries a tool's suspend schema (what its call
/// shows when it waits).
pub const SUSPEND_SCHEMA_META: &str = "dev.toolsmith/suspendSchema";
/// The `_meta` key under which an MCP listing carries a tool's resume schema (the data that
/// continues its suspended call: what an agent extracts from its user's answer).
pub const RESUME_SCHEMA_META: &str = "dev.toolsmith/resumeSchema";

impl ToolSpec {
    /// The `_meta` of the tool's MCP listing: its own (`mcp(meta = ...)`), plus its suspend and
    /// resume schemas under [`SUSPEND_SCHEMA_META`] and [`RESUME_SCHEMA_META`] (its own keys
    /// win). A `meta` that is not an object is returned as it is (listing refuses it).
    pub fn mcp_meta(&self) -> Option<Value> {
        let extra = [
            (SUSPEND_SCHEMA_META, &self.schemas.suspend),
            (RESUME_SCHEMA_META, &self.schemas.resume),
        ];
        let extra = extra.into_iter().filter_map(|(k, v)| Some((k, v.as_ref()?)));
        match &self.presentation.mcp.meta {
            Some(Value::Object(own)) => {
                let mut meta = own.clone();
                for (k, v) in extra {
                    meta.entry(k).or_insert_with(|| v.clone());
                }
                Some(Value::Object(meta))
            }
            Some(other) => Some(other.clone()),
            None => {
                let meta: serde_json::Map<String, Value> = extra.map(|(k, v)| (k.to_owned(), v.clone())).collect();
                (!meta.is_empty()).then_some(Value::Object(meta))
            }
        }
    }

    /// A spec with the given id, description and input schema; everything else unset.
    pub fn new(id: impl Into<String>, description: impl Into<String>, input_schema: Value) -> Self {
        ToolSpec {
            id: id.into(),
            description: description.into(),
            title: None,
            schemas: Schemas {
                input: input_schema,
                ..Schemas::default()
            },
            policy: Policy::default(),
            presentation: Presentation::default(),
            behaviour: Behaviour::default(),
            source: SourceLocation::default(),
        }
    }

    /// Whether a transform is configured for a target and phase.
    pub fn has_transform(&self, target: TransformTarget, phase: TransformPhase) -> bool {
        self.behaviour.transforms.contains(&(target, phase))
    }
}

/// Where a tool's calls run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Isolation {
    /// In the calling process (on the async workers, or the blocking pool for a blocking tool).
    #[default]
    InProcess,
    /// In a child process of the same binary, with memory, CPU-time and stack limits: a
    /// crash fails only the call, and cancellation kills the process.
    Process,
}

impl Isolation {
    /// Whether this is [`Isolation::InProcess`].
    pub fn is_in_process(&self) -> bool {
        *self == Isolation::InProcess
    }
}

/// Whether a tool needs approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalRule {
    /// Runs without approval.
    Never,
    /// Always needs approval.
    Always,
    /// A predicate over the typed input and request context decides (an error means "required").
    Predicate,
}

/// MCP-specific properties: annotations (only the hints the author set) and `_meta`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct McpSpec {
    /// Human-readable title for MCP clients.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment.
    #[serde(rename = "readOnlyHint", skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(rename = "destructiveHint", skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling twice with the same arguments has no extra effect.
    #[serde(rename = "idempotentHint", skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities.
    #[serde(rename = "openWorldHint", skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
    /// Arbitrary metadata passed to MCP clients as is.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
    /// Where the tool's icons are (`#[tool(icon = "…")]`): `https:` URLs or `data:` URIs, listed
    /// as MCP `icons` (SEP-973).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<String>,
    /// The client capabilities a call needs (`mcp(requires = ["sampling"])`: `elicitation`,
    /// `roots`, `sampling`); a client that did not declare one is refused before the tool runs
    /// (`-32021`, missing required client capability).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<String>,
}

/// The media type of an icon's address: a `data:` URI's own, else its path's extension's
/// (`png`, `jpg`/`jpeg`, `svg`, `webp`, `gif`, `ico`); `None` when it names none.
///
/// ```
/// use tool_core::spec::icon_media_type;
/// assert_eq!(icon_media_type("https://example.com/i.svg?v=2"), Some("image/svg+xml"));
/// assert_eq!(icon_media_type("data:image/png;base64,AAAA"), Some("image/png"));
/// assert_eq!(icon_media_type("https://example.com/icon"), None);
/// ```
pub fn icon_media_type(src: &str) -> Option<&str> {
    if let Some(data) = src.strip_prefix("data:") {
        return data.split([';', ',']).next().filter(|t| t.contains('/'));
    }
    let path = src.split(['?', '#']).next().unwrap_or(src);
    let (_, extension) = path.rsplit_once('.')?;
    Some(match extension.to_ascii_lowercase().as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "svg" => "image/svg+xml",
        "webp" => "image/webp",
        "gif" => "image/gif",
        "ico" => "image/x-icon",
        _ => return None,
    })
}

impl McpSpec {
    /// The MCP `icons` of the tool (`[{src, mimeType}]`, SEP-973), or `None` when it has none.
    pub fn icons_json(&self) -> Option<Value> {
        (!self.icons.is_empty()).then(|| {
            let icons = self.icons.iter().map(|src| match icon_media_type(src) {
                Some(media_type) => serde_json::json!({"src": src, "mimeType": media_type}),
                None => serde_json::json!({"src": src}),
            });
            Value::Array(icons.collect())
        })
    }

    /// The MCP `annotations` object with only the fields the author set, or `None` if none.
    pub fn annotations(&self) -> Option<Value> {
        let mut v = serde_json::to_value(self).ok()?;
        let obj = v.as_object_mut()?;
        obj.remove("_meta");
        obj.remove("icons");
        obj.remove("requires");
        (!obj.is_empty()).then_some(v)
    }
}

/// Background execution settings (`background(enabled, timeout_ms, max_retries, wait_timeout_ms)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BackgroundSpec {
    /// May run in the background.
    pub enabled: bool,
    /// Runs only in the background (task-required; implies `enabled`): never in the
    /// foreground of a call. An MCP client that cannot take a task is refused (`-32021` on
    /// 2026-07-28, `-32601` before, as each revision says) instead of waiting for the result.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
    /// Gathers its input in the foreground first (`asks_first`): a call without resume data
    /// runs in the foreground, where the tool may suspend itself to ask for what it needs (an
    /// MCP client is asked within the call, SEP-2322's input-required rounds); the call resumed
    /// with the answer goes to the background (an MCP task, with the gathered answer).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub asks_first: bool,
    /// Per-attempt timeout.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Retries after a failed attempt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
    /// How long a caller waits for the result before the placeholder is returned (`0`: the
    /// placeholder at once, however fast the task ends).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_timeout_ms: Option<u64>,
}

impl BackgroundSpec {
    /// How the tool takes part in tasks (MCP `execution.taskSupport`): `required` when it runs
    /// only in the background, `optional` when it may, else `forbidden`.
    pub fn task_support(background: Option<&BackgroundSpec>) -> TaskSupport {
        match background {
            Some(b) if b.required => TaskSupport::Required,
            Some(b) if b.enabled => TaskSupport::Optional,
            _ => TaskSupport::Forbidden,
        }
    }
}

/// Whether a tool's calls may, must or must not run as tasks (MCP 2025-11-25's
/// `execution.taskSupport`, which the tasks extension of 2026-07-28 keeps on the server's side).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Never a task (a tool that did not opt into the background).
    Forbidden,
    /// A task when the caller can take one, else in the foreground (`background(...)`).
    Optional,
    /// Only a task (`background(required)`).
    Required,
}

impl TaskSupport {
    /// The wire value: `forbidden`, `optional` or `required`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }
}

/// Per-call tuning of a background tool. Only a tool whose `background(enabled = true)` opted
/// in is affected; for others the override is ignored (it can never move a tool to the
/// background).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackgroundOverride {
    /// `false` runs this call in the foreground.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Per-attempt timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Retries after a failed attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
    /// How long to wait for the result before answering with the placeholder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_timeout_ms: Option<u64>,
    /// The id the durable task gets (generated when absent): set by an edge that handed its
    /// caller a task handle before the call ran (MCP tasks). Needs a runtime with a task store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Who may read or cancel the task through the edge that started it (an MCP session, bearer
    /// or subject); stored with the task, never shown to the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_owner: Option<String>,
}

/// Which lifecycle hooks a tool has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct HookSet {
    /// `on_input_start`
    pub on_input_start: bool,
    /// `on_input_delta`
    pub on_input_delta: bool,
    /// `on_input_available`
    pub on_input_available: bool,
    /// `on_output`
    pub on_output: bool,
}

/// Where a transformed payload goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TransformTarget {
    /// The streamed UI payload.
    Display,
    /// The user-visible transcript messages.
    Transcript,
}

/// The phase of a call a transform rewrites.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TransformPhase {
    /// The complete input.
    Input,
    /// A streamed input text delta.
    InputDelta,
    /// The output.
    Output,
    /// An error.
    Error,
    /// The arguments shown in an approval request.
    Approval,
    /// A suspend payload.
    Suspend,
    /// Resume data.
    Resume,
}

/// Where a tool was defined.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SourceLocation {
    /// The defining crate's name.
    pub crate_name: String,
    /// `module_path!()` of the definition.
    pub module_path: String,
    /// `file!()` of the definition.
    pub file: String,
    /// `line!()` of the definition.
    pub line: u32,
}

impl std::fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.file.is_empty() {
            f.write_str("<defined at run time>")
        } else {
            write!(f, "{}:{} ({})", self.file, self.line, self.module_path)
        }
    }
}
