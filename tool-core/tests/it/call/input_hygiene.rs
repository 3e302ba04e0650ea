//! Input hygiene and secrets, at every entry point: a repeated key is refused wherever
//! arguments arrive as text (registry, streamed calls, the MCP server over HTTP and stdio); a
//! strict tool (or a `deny_unknown_fields` input) refuses unknown fields; every value quoted
//! in an error is bounded; waiting calls' arguments and request contexts are redacted the way
//! errors are, and only under secret-named keys.
//!
//! This file holds the tools and helpers the tests share; the tests are in `repeated_keys`,
//! `unknown_fields`, `bounded_quotes` and `secrets`.

use crate::support::http_server::{self, Served};

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tool_core::Dialect;
use tool_core::ErrorKind;
use tool_core::mcp::http::HttpOptions;
use tool_core::mcp::{McpConfig, McpServer};
use tool_core::prelude::*;
use tool_core::runtime::{Outcome, ResumeOptions, RunEventKind, Runtime};
use tool_core::spec::TransformTarget;
use tool_core::testing::ScriptedStream;

mod bounded_quotes;
mod repeated_keys;
mod secrets;
mod unknown_fields;

/// How long a test waits for something that should come (a hang, not a slow machine).
const PATIENCE: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------------------------------------
// Tools

/// Adds two numbers
#[tool(id = "hy-add")]
async fn add(
    /// The first addend
    a: f64,
    /// The second addend
    b: f64,
) -> f64 {
    a + b
}

/// A place.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Place {
    /// The city.
    pub city: String,
    /// The country, when it matters.
    pub country: Option<String>,
}

/// A trip.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Trip {
    /// Its name.
    pub name: String,
    /// Where it goes.
    pub to: Place,
    /// Where it stops on the way.
    pub stops: Vec<Place>,
}

fn describe(trip: Trip) -> String {
    let stops: Vec<String> = trip.stops.into_iter().map(|p| p.city).collect();
    format!("{} to {} via [{}]", trip.name, trip.to.city, stops.join(", "))
}

/// Plans a trip (lenient: unknown fields are ignored)
#[tool(id = "hy-trip")]
async fn trip(input: Trip) -> String {
    describe(input)
}

/// Plans a trip (strict: only the listed fields)
#[tool(id = "hy-trip-strict", strict)]
async fn trip_strict(input: Trip) -> String {
    describe(input)
}

/// Exactly one number, nothing else.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Exact {
    /// The number.
    pub n: u32,
}

/// Echoes a number (its input denies unknown fields; the tool is not strict)
#[tool(id = "hy-exact")]
async fn exact(input: Exact) -> u32 {
    input.n
}

/// A shape.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Shape {
    /// A circle.
    Circle {
        /// Radius.
        r: f64,
    },
    /// A square.
    Square {
        /// Side.
        side: f64,
    },
}

/// A labelled shape, its fields spread over the enum's variants.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Drawing {
    /// The label.
    pub label: String,
    /// The shape.
    #[serde(flatten)]
    pub shape: Shape,
}

/// Draws a shape (strict, with a flattened enum)
#[tool(id = "hy-draw", strict)]
async fn draw(input: Drawing) -> String {
    match input.shape {
        Shape::Circle { r } => format!("{}: circle {r}", input.label),
        Shape::Square { side } => format!("{}: square {side}", input.label),
    }
}

/// A number the schema calls a string: serde refuses what validation let through.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Mismatch {
    /// Said to be a string.
    #[schemars(with = "String")]
    pub n: u32,
}

/// Reads a number its schema calls a string
#[tool(id = "hy-mismatch")]
async fn mismatch(input: Mismatch) -> u32 {
    input.n
}

fn always(_: &InputOf<login>, _: &RequestContext) -> bool {
    true
}

/// Logs a user in (always asks for approval)
#[tool(id = "hy-login", require_approval = always)]
async fn login(
    /// The user
    user: String,
    /// The password
    password: String,
) -> String {
    format!("{user} in ({} characters)", password.len())
}

/// What the user is asked.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Question {
    /// The question.
    pub question: String,
}

/// What the user answers.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Decision {
    /// Replace it.
    pub overwrite: bool,
}

/// Where the tool works, and with what.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct Workspace {
    /// The directory.
    pub root: String,
    /// The key of the storage service.
    pub api_key: String,
}

/// Asks before replacing a file (suspends, resumes with a decision)
#[tool(id = "hy-replace", context = Workspace, suspend = Question, resume = Decision)]
async fn replace(
    /// The file
    path: String,
    /// The access token of the file service
    access_token: String,
    #[ctx] cx: ToolContext<Workspace, Question, Decision>,
) -> Result<String, ToolError> {
    let _ = access_token;
    match cx.resume_data()? {
        Some(d) => Ok(format!("{}/{path}: overwrite {}", cx.request_context().root, d.overwrite)),
        None => Err(cx.suspend(Question {
            question: format!("Replace {path}?"),
        })),
    }
}

/// Resume data whose schema calls its number a string.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct OddResume {
    /// Said to be a string.
    #[schemars(with = "String")]
    pub n: u32,
}

/// Suspends, then reads resume data its schema misdescribes
#[tool(id = "hy-odd-resume", suspend = Question, resume = OddResume)]
async fn odd_resume(#[ctx] cx: ToolContext<RequestContext, Question, OddResume>) -> Result<u32, ToolError> {
    match cx.resume_data()? {
        Some(r) => Ok(r.n),
        None => Err(cx.suspend(Question { question: "n?".into() })),
    }
}

/// An output whose flattened map may repeat a field.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Tally {
    /// The total.
    pub total: u32,
    /// Counts by name.
    #[serde(flatten)]
    pub counts: std::collections::BTreeMap<String, u32>,
}

/// Counts, with a count named like the total
#[tool(id = "hy-tally")]
async fn tally() -> Tally {
    Tally {
        total: 1,
        counts: [("total".to_owned(), 2)].into(),
    }
}

fn registry() -> Registry {
    Registry::from_iter([
        add::tool(),
        trip::tool(),
        trip_strict::tool(),
        exact::tool(),
        draw::tool(),
        mismatch::tool(),
        login::tool(),
        replace::tool(),
        odd_resume::tool(),
        tally::tool(),
    ])
}

/// Calls a tool with argument text and expects a refusal.
async fn refused(registry: &Registry, tool: &str, args: &str) -> ToolError {
    match registry.call(tool, args, CallOptions::default()).await {
        Ok(out) => panic!("{tool} accepted {args}: {}", out.json),
        Err(e) => e,
    }
}

fn replace_context() -> CallOptions {
    CallOptions::with_context(json!({"root": "/srv/files", "api_key": "k-live-123"}))
}
