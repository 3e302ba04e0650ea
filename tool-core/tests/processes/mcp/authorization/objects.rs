//! The objects of the matrix: how Alice makes each one, what names none, how each path is taken
//! on one, and whether the owner's attempt did what the path promises.

use super::fleet::{Fleet, Reply};
use super::*;

/// An object of Alice's (or one that does not exist), and how each path names it.
pub(super) struct Made {
    /// What the path's request names it by: a request state, a token, a task id, a URI, a key,
    /// a session id.
    handle: String,
    /// The strings that differ between two objects of the kind (replaced before answers are
    /// compared).
    pub(super) ids: Vec<String>,
    /// Where it was made (an attempt goes to the next instance, a session's to its own).
    home: usize,
}

/// A request state's call id (`<id>.<seal>`).
fn call_id_of_state(state: &str) -> &str {
    state.split('.').next().unwrap_or(state)
}

const APPROVE: &str = r#"{"approval": {"action": "accept", "content": {"approved": true}}}"#;

impl Fleet {
    /// Makes Alice's object for `path` on instance `home`.
    pub(super) async fn make(&self, path: Path, home: usize) -> Made {
        let asked = |r: &Reply, what: &str| -> String {
            let state = r.result()["requestState"].as_str();
            state
                .unwrap_or_else(|| panic!("{path:?}: no request state for {what}: {:?}", r.body))
                .to_owned()
        };
        let made = |handle: String, ids: Vec<String>| Made { handle, ids, home };
        match path {
            Path::AnswerApproval => {
                let r = self.call(home, Who::Owner, "authz-pay", json!({"arguments": {"amount": 7}})).await;
                let state = asked(&r, "an approval");
                made(state.clone(), vec![state])
            }
            Path::DecideWithToken => {
                let r = self.call(home, Who::Owner, "authz-pay", json!({"arguments": {"amount": 9}})).await;
                let id = call_id_of_state(&asked(&r, "an approval")).to_owned();
                made(self.approve_token(&id), vec![id])
            }
            Path::AnswerResume => {
                let r = self
                    .call(home, Who::Owner, "authz-wait", json!({"arguments": {"note": "n1"}}))
                    .await;
                let state = asked(&r, "resume data");
                made(state.clone(), vec![state])
            }
            Path::AnswerParkedRun => {
                let r = self.call(home, Who::Owner, "authz-ask", json!({})).await;
                let state = asked(&r, "a word");
                assert!(state.starts_with("mcp_input_"), "a parked run's state: {state}");
                made(state.clone(), vec![state])
            }
            Path::GetTask | Path::CancelTask | Path::UpdateTask => {
                let tool = match path {
                    Path::GetTask => "authz-task",
                    Path::CancelTask => "authz-task-slow",
                    _ => "authz-task-approve",
                };
                let r = self.call(home, Who::Owner, tool, json!({})).await;
                let id = r.result()["taskId"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{path:?}: no task handle: {:?}", r.body))
                    .to_owned();
                made(id.clone(), vec![id])
            }
            Path::ReadKeptResult => {
                let r = self.call(home, Who::Owner, "authz-big", json!({})).await;
                let content = r.result()["content"].as_array().cloned().unwrap_or_default();
                let uri = content
                    .iter()
                    .filter_map(|c| c["uri"].as_str())
                    .find(|u| u.starts_with("toolsmith://results/"))
                    .unwrap_or_else(|| panic!("no kept-result link: {:?}", r.body))
                    .to_owned();
                made(uri.clone(), vec![uri.trim_start_matches("toolsmith://results/").to_owned()])
            }
            Path::ReuseIdempotencyKey => {
                let key = format!("matrix-key-{home}");
                let r = self.reuse_key(home, Who::Owner, &key).await;
                assert!(r.text().starts_with("run-"), "{:?}", r.body);
                // The handle is the key; the first run's answer is what its owner gets again.
                Made {
                    handle: key,
                    ids: vec![r.text()],
                    home,
                }
            }
            Path::UseSession => {
                let init = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "matrix", "version": "1"}});
                let r = self
                    .post(
                        home,
                        Who::Owner,
                        &[],
                        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}),
                    )
                    .await;
                let session = r.session.clone().unwrap_or_else(|| panic!("no session: {r:?}"));
                let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
                let headers = [("MCP-Protocol-Version", "2025-11-25"), ("Mcp-Session-Id", session.as_str())];
                assert_eq!(self.post(home, Who::Owner, &headers, initialized).await.status, 202);
                made(session.clone(), vec![session])
            }
        }
    }

    /// What no object of the path's kind is named by: a made-up state, id, URI or session; for
    /// a decision token, one for a call that was since resolved (a token cannot be made up); for
    /// an idempotency key, one never used.
    pub(super) async fn missing(&self, path: Path, home: usize) -> Made {
        let zeros = |n: usize| "0".repeat(n);
        let made = |handle: String| Made {
            ids: vec![handle.clone()],
            handle,
            home,
        };
        match path {
            Path::AnswerApproval | Path::AnswerResume => made(format!("mcp_{}.{}", zeros(32), zeros(64))),
            Path::AnswerParkedRun => made(format!(
                "mcp_input_{}.00000000-0000-0000-0000-000000000000.{}",
                zeros(32),
                zeros(64)
            )),
            Path::DecideWithToken => {
                let r = self.call(home, Who::Owner, "authz-pay", json!({"arguments": {"amount": 9}})).await;
                let state = r.result()["requestState"].as_str().expect("a waiting call").to_owned();
                let id = call_id_of_state(&state).to_owned();
                let token = self.approve_token(&id);
                let declined = child_cli::Ran::from(
                    child_cli::toolsmith(&["--store", &self.store, "call", &id, "--decline", "resolved"])
                        .env("TOOLSMITH_STORE_KEY", STORE_KEY)
                        .output()
                        .unwrap(),
                );
                assert!(declined.ok, "the operator declines it: {}", declined.stderr);
                Made {
                    handle: token,
                    ids: vec![id],
                    home,
                }
            }
            Path::GetTask | Path::UpdateTask | Path::CancelTask => made(format!("task_mcp_{}", zeros(32))),
            Path::ReadKeptResult => Made {
                handle: format!("toolsmith://results/mcp_{}", zeros(32)),
                ids: vec![format!("mcp_{}", zeros(32))],
                home,
            },
            Path::ReuseIdempotencyKey => Made {
                handle: format!("matrix-never-used-{home}"),
                ids: Vec::new(),
                home,
            },
            Path::UseSession => made(uuid_like()),
        }
    }

    async fn reuse_key(&self, instance: usize, who: Who, key: &str) -> Reply {
        let params = json!({"_meta": {"io.toolsmith/idempotencyKey": key}});
        self.call(instance, who, "authz-once", params).await
    }

    /// Takes `path` on `object` as `who`, on `instance`.
    pub(super) async fn attempt(&self, path: Path, object: &Made, who: Who, instance: usize) -> Reply {
        let handle = object.handle.as_str();
        let approve: Value = serde_json::from_str(APPROVE).unwrap();
        match path {
            Path::AnswerApproval => {
                let params = json!({"arguments": {"amount": 7}, "requestState": handle, "inputResponses": approve});
                self.call(instance, who, "authz-pay", params).await
            }
            Path::DecideWithToken => {
                let params = json!({"arguments": {"amount": 9}, "_meta": {"io.toolsmith/decision": handle}});
                self.call(instance, who, "authz-pay", params).await
            }
            Path::AnswerResume => {
                let answer = json!({"resume": {"action": "accept", "content": {"ok": true}}});
                let params = json!({"arguments": {"note": "n1"}, "requestState": handle, "inputResponses": answer});
                self.call(instance, who, "authz-wait", params).await
            }
            Path::AnswerParkedRun => {
                let answer = json!({"input": {"action": "accept", "content": {"word": "yes"}}});
                let params = json!({"requestState": handle, "inputResponses": answer});
                self.call(instance, who, "authz-ask", params).await
            }
            Path::GetTask => self.modern(instance, who, "tasks/get", handle, json!({"taskId": handle})).await,
            Path::UpdateTask => {
                let params = json!({"taskId": handle, "inputResponses": approve});
                self.modern(instance, who, "tasks/update", handle, params).await
            }
            Path::CancelTask => self.modern(instance, who, "tasks/cancel", handle, json!({"taskId": handle})).await,
            Path::ReadKeptResult => self.modern(instance, who, "resources/read", handle, json!({"uri": handle})).await,
            Path::ReuseIdempotencyKey => self.reuse_key(instance, who, handle).await,
            Path::UseSession => {
                let headers = [("MCP-Protocol-Version", "2025-11-25"), ("Mcp-Session-Id", handle)];
                let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
                self.post(instance, who, &headers, list).await
            }
        }
    }

    /// Whether the owner's attempt did what the path promises (`Err`: what it did instead).
    pub(super) async fn works(&self, path: Path, object: &Made, reply: &Reply) -> Result<(), String> {
        let ok = |cond: bool| {
            if cond {
                Ok(())
            } else {
                Err(format!("the owner's attempt did not work: {reply:?}"))
            }
        };
        let text = reply.text();
        match path {
            Path::AnswerApproval => ok(text == "paid 7"),
            Path::DecideWithToken => ok(text == "paid 9"),
            Path::AnswerResume => ok(text == "resumed n1 with true"),
            Path::AnswerParkedRun => ok(text == "heard yes"),
            Path::GetTask => ok(reply.result().to_string().contains(&format!("\"{}\"", object.handle))),
            Path::UpdateTask | Path::CancelTask => {
                ok(reply.status == 200 && reply.body.get("result").is_some() && reply.body.get("error").is_none())?;
                let got = self
                    .modern(
                        object.home,
                        Who::Owner,
                        "tasks/get",
                        &object.handle,
                        json!({"taskId": object.handle}),
                    )
                    .await;
                let status = got.result()["status"].as_str().unwrap_or_default().to_owned();
                let moved = match path {
                    Path::CancelTask => status == "cancelled",
                    _ => status == "working" || status == "completed",
                };
                if moved {
                    Ok(())
                } else {
                    Err(format!("the task did not move: {got:?}"))
                }
            }
            Path::ReadKeptResult => {
                let whole = reply.result()["contents"][0]["text"].as_str().unwrap_or_default();
                ok(whole == "secret ledger line; ".repeat(100).as_str())
            }
            Path::ReuseIdempotencyKey => ok(text == object.ids[0]),
            Path::UseSession => ok(reply.status == 200 && reply.result()["tools"].is_array()),
        }
    }
}

/// A version-4-looking id no server issued.
fn uuid_like() -> String {
    "00000000-0000-4000-8000-000000000000".to_owned()
}
