//! Fuzzes the MCP request path: a POST body through `tool_core::mcp::http::router` (the guard,
//! then rmcp's Streamable HTTP service and the server's handlers), in-process, no network.
//!
//! Input: one control byte choosing where the body goes (a stateless JSON-answering server; a
//! live session of a session server; a session server without a session), then the body.
//! Checks: no panic; an answer within 5 s; never a 500 (client input is never the server's
//! failure); a JSON answer is a JSON-RPC message, and a guard refusal carries the code its
//! status promises (400: -32700/-32600/-32602, 413: -32600, 503: -32000); an answer to a
//! request that had an integer or string id carries that id.

#![no_main]

use std::sync::OnceLock;
use std::time::Duration;

use axum::body::{to_bytes, Body};
use axum::http::{header, Request, Response, StatusCode};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use tool_core::mcp::http::{router, HttpOptions};
use tool_core::mcp::{McpConfig, McpServer};
use tool_core::prelude::*;
use tool_core::runtime::Runtime;
use tower::ServiceExt;

const VERSION: &str = "2025-06-18";
const PATIENCE: Duration = Duration::from_secs(5);

/// Repeats a text
#[tool]
async fn echo(
    /// The text
    text: String,
) -> String {
    text
}

/// Always fails
#[tool]
async fn broken(
    /// Anything
    value: Option<i64>,
) -> Result<i64, ToolError> {
    Err(ToolError::new(format!("broken for {value:?}")))
}

struct Rig {
    rt: tokio::runtime::Runtime,
    stateless: axum::Router,
    sessions: axum::Router,
    session_id: String,
}

fn server() -> McpServer {
    McpServer::new(Runtime::new(Registry::from_iter([echo::tool(), broken::tool()])), McpConfig::default())
}

fn post(body: Vec<u8>, session: Option<&str>) -> Request<Body> {
    let mut request = Request::post("/mcp")
        .header(header::HOST, "localhost")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header(header::CONTENT_TYPE, "application/json")
        .header("mcp-protocol-version", VERSION);
    if let Some(id) = session {
        request = request.header("mcp-session-id", id);
    }
    request.body(Body::from(body)).expect("a valid request")
}

fn rig() -> &'static Rig {
    static RIG: OnceLock<Rig> = OnceLock::new();
    RIG.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let stateless = router(
            server(),
            &HttpOptions {
                stateless: true,
                json_response: true,
                ..HttpOptions::default()
            },
        );
        let sessions = router(server(), &HttpOptions::default());
        let session_id = rt.block_on(async {
            let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}});
            let response = sessions.clone().oneshot(post(init.to_string().into_bytes(), None)).await.unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            let id = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
            let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            let done = sessions.clone().oneshot(post(initialized.to_string().into_bytes(), Some(&id))).await.unwrap();
            assert_eq!(done.status(), StatusCode::ACCEPTED);
            id
        });
        Rig {
            rt,
            stateless,
            sessions,
            session_id,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, body)) = data.split_first() else { return };
    let rig = rig();
    let (router, session) = match mode % 3 {
        0 => (&rig.stateless, None),
        1 => (&rig.sessions, Some(rig.session_id.as_str())),
        _ => (&rig.sessions, None),
    };
    let request_id = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("id").filter(|id| id.is_i64() || id.is_u64() || id.is_string()).cloned());
    rig.rt.block_on(async {
        let answered = tokio::time::timeout(PATIENCE, router.clone().oneshot(post(body.to_vec(), session))).await;
        let response = answered.expect("no answer within 5 s").unwrap();
        check(response, request_id.as_ref()).await;
    });
});

async fn check(response: Response<Body>, request_id: Option<&Value>) {
    let status = response.status();
    assert_ne!(status, StatusCode::INTERNAL_SERVER_ERROR, "a client's body made the server fail");
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    // An SSE answer may stay open (a stream); only a JSON answer is read whole.
    if !json {
        return;
    }
    let Ok(Ok(bytes)) = tokio::time::timeout(PATIENCE, to_bytes(response.into_body(), 16 << 20)).await else {
        panic!("a JSON answer did not arrive whole");
    };
    let message: Value = serde_json::from_slice(&bytes).expect("a JSON answer is JSON");
    assert_eq!(message["jsonrpc"], "2.0", "not a JSON-RPC message: {message}");
    let code = message["error"]["code"].as_i64();
    let expected: &[i64] = match status {
        StatusCode::BAD_REQUEST => &[-32700, -32600, -32602],
        StatusCode::PAYLOAD_TOO_LARGE => &[-32600],
        StatusCode::SERVICE_UNAVAILABLE => &[-32000],
        _ => &[],
    };
    if !expected.is_empty() {
        if let Some(code) = code {
            assert!(expected.contains(&code), "{status} with JSON-RPC code {code}: {message}");
        }
    }
    if let (Some(id), Some(answered)) = (request_id, message.get("id")) {
        if !answered.is_null() {
            assert_eq!(answered, id, "answered another id: {message}");
        }
    }
}
