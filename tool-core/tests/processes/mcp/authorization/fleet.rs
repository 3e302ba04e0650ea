//! The fleet under test: three `toolsmith serve` instances on one PostgreSQL schema with OAuth
//! on, started here, and the requests an attempt sends to them (as Alice, Bob or nobody).

use super::*;

/// Three instances on one PostgreSQL schema, with OAuth on.
pub(super) struct Fleet {
    servers: Vec<child_cli::ServedChild>,
    pub(super) store: String,
    /// Kept alive for the instances, which fetch its keys.
    _auth: AuthServer,
    alice: String,
    bob: String,
}

/// An HTTP answer: its status and its JSON-RPC message (`Null` when it has none).
#[derive(Debug)]
pub(super) struct Reply {
    pub(super) status: u16,
    content_type: String,
    pub(super) challenge: String,
    pub(super) session: Option<String>,
    pub(super) body: Value,
}

impl Reply {
    /// The message without its id, with every `(id, placeholder)` replaced: what two answers
    /// about different objects share when they say the same.
    pub(super) fn normalized(&self, ids: &[(String, String)]) -> String {
        let mut body = self.body.clone();
        if let Some(o) = body.as_object_mut() {
            o.remove("id");
        }
        let mut text = format!("{} {} {body}", self.status, self.content_type);
        for (id, placeholder) in ids {
            text = text.replace(id, placeholder);
        }
        text
    }

    pub(super) fn result(&self) -> &Value {
        &self.body["result"]
    }

    pub(super) fn text(&self) -> String {
        self.result()["content"][0]["text"].as_str().unwrap_or_default().to_owned()
    }
}

/// The JSON-RPC message of an answer (a JSON body, or the last SSE event that has one), else
/// the body's text.
fn message_of(text: &str) -> Value {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return v;
    }
    let events = text.lines().filter_map(|l| l.strip_prefix("data:"));
    let mut messages = events
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .filter(|v| v.get("id").is_some());
    messages.next_back().unwrap_or_else(|| Value::String(text.to_owned()))
}

impl Fleet {
    fn url(&self, instance: usize) -> &str {
        &self.servers[instance % self.servers.len()].url
    }

    fn token(&self, who: Who) -> Option<&str> {
        match who {
            Who::Owner => Some(&self.alice),
            Who::OtherSubject => Some(&self.bob),
            Who::Anonymous => None,
        }
    }

    /// One 2026-07-28 request (capabilities: elicitation and the tasks extension).
    pub(super) async fn modern(&self, instance: usize, who: Who, method: &str, name: &str, mut params: Value) -> Reply {
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {TASKS: {}}},
            "io.modelcontextprotocol/clientInfo": {"name": "matrix", "version": "1"},
        });
        let extra = params.get("_meta").cloned();
        params["_meta"] = meta;
        if let Some(Value::Object(extra)) = extra {
            params["_meta"].as_object_mut().unwrap().extend(extra);
        }
        let headers = [("MCP-Protocol-Version", MODERN), ("Mcp-Method", method), ("Mcp-Name", name)];
        self.post(
            instance,
            who,
            &headers,
            json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
        )
        .await
    }

    pub(super) async fn post(&self, instance: usize, who: Who, headers: &[(&str, &str)], body: Value) -> Reply {
        let mut request = reqwest::Client::new()
            .post(self.url(instance))
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .timeout(Duration::from_secs(60))
            .body(body.to_string());
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        if let Some(token) = self.token(who) {
            request = request.bearer_auth(token);
        }
        let r = request.send().await.expect("the server answers");
        let status = r.status().as_u16();
        let header = |name: &str| r.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let (challenge, session) = (header("www-authenticate").unwrap_or_default(), header("mcp-session-id"));
        let content_type = header("content-type").unwrap_or_default();
        let text = r.text().await.unwrap_or_default();
        Reply {
            status,
            challenge,
            session,
            content_type,
            body: message_of(&text),
        }
    }

    pub(super) async fn call(&self, instance: usize, who: Who, tool: &str, params: Value) -> Reply {
        let mut params = params;
        params["name"] = json!(tool);
        if params.get("arguments").is_none() {
            params["arguments"] = json!({});
        }
        self.modern(instance, who, "tools/call", tool, params).await
    }

    /// `toolsmith pending --json --token` on the shared store: the operator's approve token for
    /// the waiting call `id`.
    pub(super) fn approve_token(&self, id: &str) -> String {
        let ran = child_cli::Ran::from(
            child_cli::toolsmith(&["--store", &self.store, "pending", "--json", "--token", "600"])
                .env("TOOLSMITH_STORE_KEY", STORE_KEY)
                .output()
                .unwrap(),
        );
        assert!(ran.ok, "pending --token failed: {}", ran.stderr);
        let listed: Value = serde_json::from_str(&ran.stdout).unwrap_or_else(|e| panic!("{e}: {}", ran.stdout));
        let entry = listed
            .as_array()
            .into_iter()
            .flatten()
            .find(|e| e["tool_call_id"] == id)
            .unwrap_or_else(|| panic!("`{id}` is not listed: {listed}"));
        entry["approve_token"].as_str().expect("an approve token").to_owned()
    }
}

/// Starts the fleet: a fresh schema, migrated; three stateful instances (2025 sessions, and
/// 2026-07-28 requests on their own) with OAuth and a small model output (so results are kept).
pub(super) async fn fleet(url: &str) -> (Fleet, String) {
    let schema = pg::fresh_schema(url).await.expect("a fresh schema");
    let store = pg::url_in_schema(url, &schema);
    let migrated = child_cli::Ran::from(
        child_cli::toolsmith(&["--store", &store, "store", "migrate"])
            .env("TOOLSMITH_STORE_KEY", STORE_KEY)
            .output()
            .unwrap(),
    );
    assert!(migrated.ok, "store migrate: {}", migrated.stderr);
    let auth = AuthServer::start().await;
    let servers = (0..3)
        .map(|_| {
            let args = [
                "--store",
                &store,
                "serve",
                "--http",
                "127.0.0.1:0",
                "--auth-issuer",
                &auth.issuer,
                "--auth-resource",
                RESOURCE,
                "--required-scope",
                "mcp",
                "--max-model-output",
                "48",
            ];
            child_cli::ServedChild::start(child_cli::toolsmith(&args).env("TOOLSMITH_STORE_KEY", STORE_KEY))
        })
        .collect();
    let alice = auth.mint("k1", &auth.claims(RESOURCE, "alice", "mcp"));
    let bob = auth.mint("k1", &auth.claims(RESOURCE, "bob", "mcp"));
    let fleet = Fleet {
        servers,
        store,
        _auth: auth,
        alice,
        bob,
    };
    (fleet, schema)
}
