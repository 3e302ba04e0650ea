//! Exactly once: running a tool declared `idempotent` over a receipt of its call's key.
//!
//! Owns [`run`], what every run of a prepared call goes through in the runtime (a new call,
//! an approved or resumed one, each background attempt): a tool not declared `idempotent`
//! runs as it is; a declared one claims its idempotency key in the [`ReceiptStore`] first.
//!
//! - The key is free: the body runs; its output is recorded as the receipt before the call
//!   reports it. A body that fails by itself (its own error) or suspends releases the key
//!   (nothing happened: a later run runs it). A run cut short (panic, timeout, cancellation,
//!   an output that failed its schema, the future dropped) marks the receipt interrupted.
//! - The key holds a result: the call answers with it (the first run's output, model view and
//!   views, as recorded), and the body does not run.
//! - A live run holds the key: this run waits for it (polling, bounded by the call's timeout,
//!   its cancellation and [`MAX_WAIT`]), then answers with its result.
//! - The run holding the key was interrupted (its process died between "the tool ran" and
//!   "the result was stored", or it was cut short): with `idempotent` the call ends with a
//!   clear error and the body does not run; with `idempotent = "recover"` this run takes the
//!   key over (one taker wins) and the body runs told so by
//!   [`IdempotencyKey::after_interruption`], to look its effect up by the key first.
//! - The key was used by another tool or other arguments: a clear error; nothing runs.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::store::{Began, ReceiptClaim, ReceiptStore};
use crate::call::Finished;
use crate::context::{CallData, CallEnv};
use crate::error::{ErrorKind, ToolError};
use crate::idempotency::IdempotencyKey;
use crate::registry::OwnedPrepared;
use crate::spec::Idempotent;
use crate::tool::ToolOutput;

/// The longest a run waits for another live run of the same key (unless its timeout is
/// shorter).
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(120);

/// Runs a prepared call, exactly once per key when its tool is declared `idempotent`.
pub(crate) async fn run(
    receipts: &Arc<dyn ReceiptStore>,
    prepared: &OwnedPrepared,
    data: &Arc<CallData>,
    env: CallEnv,
    resume: Option<Value>,
) -> Result<Finished, ToolError> {
    match attempt(receipts, prepared, data, env, resume).await {
        Attempt::Ended(ended) => ended,
        Attempt::NotRun(error) => Err(error),
    }
}

/// How an [`attempt`] went.
pub(crate) enum Attempt {
    /// The body ran (or a recorded result answers), or the call was refused for good.
    Ended(Result<Finished, ToolError>),
    /// The body did not run and may run later: the receipt could not be read or claimed (the
    /// store failed), or another live run of the key held it past the wait. A call taken from
    /// the store goes back to waiting.
    NotRun(ToolError),
}

/// [`run`], telling apart a call whose body did not run but may later ([`Attempt::NotRun`]).
pub(crate) async fn attempt(
    receipts: &Arc<dyn ReceiptStore>,
    prepared: &OwnedPrepared,
    data: &Arc<CallData>,
    env: CallEnv,
    resume: Option<Value>,
) -> Attempt {
    let tool = prepared.tool().clone();
    let Some(policy) = tool.spec().policy.idempotent else {
        return Attempt::Ended(prepared.run(data, env, resume).await);
    };
    let name = tool.spec().id.as_str();
    let call_id = data.tool_call_id.clone().unwrap_or_default();
    let key = IdempotencyKey::for_call(name, &call_id, data);
    let claim = ReceiptClaim {
        key: key.as_str().to_owned(),
        tool_name: name.to_owned(),
        args_digest: args_digest(&prepared.args()),
    };
    let taken_over = match turn(receipts, &claim, policy, &env).await {
        Ok(Turn::Recorded(recorded)) => {
            let output = read_output(recorded).map_err(|why| {
                ToolError::new(format!(
                    "Tool `{name}` runs once per call, and the recorded result of this call cannot be read ({why}); it was not run again."
                ))
                .for_tool(name)
            });
            return Attempt::Ended(output.map(|output| prepared.recorded(data, output)));
        }
        Ok(Turn::Run(taken_over)) => taken_over,
        Err(Refused::Later(error)) => return Attempt::NotRun(error),
        Err(Refused::ForGood(error)) => return Attempt::Ended(Err(error)),
    };
    let key = if taken_over { key.interrupted_before() } else { key };
    let env = CallEnv {
        idempotency: Some(key),
        ..env
    };
    let mut guard = Held {
        receipts: receipts.clone(),
        key: Some(claim.key.clone()),
    };
    let ended = prepared.run(data, env, resume).await;
    let key = guard.key.take().unwrap_or_default();
    let end = match &ended {
        Ok(Finished::Output(output)) => match recorded_output(output) {
            Some(result) => End::Finish(result),
            None => End::Interrupt,
        },
        Ok(Finished::Suspended(_)) => End::Release,
        Err(e) if matches!(e.kind(), ErrorKind::Panic | ErrorKind::Aborted | ErrorKind::InvalidOutput) => End::Interrupt,
        Err(_) => End::Release,
    };
    // The body ran: its result is reported now. When the store fails, the receipt is recorded
    // when it returns (kept and tried again): meanwhile it reads as running under this live
    // process, so a run of the same key waits for it rather than running the body again.
    record(receipts, key, end, &call_id).await;
    Attempt::Ended(ended)
}

/// Why a run does not take the key.
enum Refused {
    /// Not now (the store failed; another live run held it past the wait).
    Later(ToolError),
    /// Not at all (used for another tool or arguments; interrupted, for a tool that does not
    /// recover).
    ForGood(ToolError),
}

/// How a run that held a key ended, for its receipt.
enum End {
    /// With this recorded result.
    Finish(Value),
    /// Nothing happened (the body failed by itself, or suspended): the key is free again.
    Release,
    /// Cut short: its effect is unknown.
    Interrupt,
}

/// Records how the run holding `key` ended, until the store takes it (`settle`).
async fn record(receipts: &Arc<dyn ReceiptStore>, key: String, end: End, call_id: &str) {
    let receipts = receipts.clone();
    let kind = match end {
        End::Finish(_) => "finish a receipt",
        End::Release => "release a receipt",
        End::Interrupt => "mark a receipt interrupted",
    };
    let end = Arc::new(end);
    super::settle::settle(kind, call_id, move || {
        let (receipts, key, end) = (receipts.clone(), key.clone(), end.clone());
        async move {
            match &*end {
                End::Finish(result) => receipts.finish(&key, result).await,
                End::Release => receipts.release(&key).await,
                End::Interrupt => receipts.interrupt(&key).await,
            }
        }
    })
    .await;
}

/// What this run does.
enum Turn {
    /// Run the body (`true`: taking over an interrupted run's key).
    Run(bool),
    /// Answer with the recorded result.
    Recorded(Value),
}

/// Claims the key, waiting while a live run holds it.
async fn turn(receipts: &Arc<dyn ReceiptStore>, claim: &ReceiptClaim, policy: Idempotent, env: &CallEnv) -> Result<Turn, Refused> {
    let name = claim.tool_name.as_str();
    let deadline = Instant::now() + env.timeout.map_or(MAX_WAIT, |t| t.min(MAX_WAIT));
    let mut pause = Duration::from_millis(10);
    loop {
        let began = receipts.begin(claim, policy == Idempotent::Recover).await.map_err(|e| {
            Refused::Later(
                ToolError::new(format!(
                    "Tool `{name}` runs once per call, and its receipt could not be read or claimed ({e}); it was not run."
                ))
                .for_tool(name),
            )
        })?;
        match began {
            Began::Run(None) => return Ok(Turn::Run(false)),
            Began::Run(Some(claim)) => {
                tracing::warn!(tool = name, %claim, "running an idempotent call whose earlier run was interrupted; the tool is told by its key");
                return Ok(Turn::Run(true));
            }
            Began::Done(result) => return Ok(Turn::Recorded(result)),
            Began::Mismatch => return Err(Refused::ForGood(ToolError::with_kind(
                ErrorKind::InputRejected,
                format!("Tool `{name}` runs once per call, and this call's idempotency key was already used by a call of another tool or with other arguments; it was not run. Use a new call id (or key) for a new call."),
            )
            .for_tool(name))),
            Began::Interrupted(claim) => return Err(Refused::ForGood(interrupted(name, &claim))),
            Began::Busy(_) => {}
        }
        let cancelled = env.cancellation.as_ref().is_some_and(|c| c.is_cancelled());
        if cancelled || Instant::now() >= deadline {
            return Err(Refused::Later(
                ToolError::aborted(format!(
                    "Tool `{name}` runs once per call, and another run of this same call is still running; it was not run again. Ask again later for its result."
                ))
                .for_tool(name),
            ));
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(500));
    }
}

/// The error of a call whose earlier run was interrupted, for a tool that does not recover.
fn interrupted(name: &str, claim: &crate::runtime::Claim) -> ToolError {
    ToolError::new(format!(
        "Tool `{name}` runs once per call, and an earlier run of this same call was interrupted ({claim}) before its \
         result was recorded: its effect may or may not have happened, so it was not run again. Check whether it \
         happened; to run the call once more, clear its receipt (`{cmd} receipts list` shows it as interrupted; \
         `{cmd} receipts clear KEY` or `--digest DIGEST`; in Rust `ReceiptStore::remove` with the call's idempotency key).",
        cmd = crate::error::operator(),
    ))
    .for_tool(name)
}

/// What a receipt records of an output: everything a later run answers with (the raw output,
/// what the model sees, the views' transformed payloads), so the answer is the first run's.
fn recorded_output(output: &ToolOutput) -> Option<Value> {
    let view = |v: Option<&Result<Value, crate::ToolError>>| match v {
        None => Value::Null,
        Some(Ok(value)) => json!({"ok": value}),
        Some(Err(error)) => json!({"err": error}),
    };
    Some(json!({
        "result": serde_json::from_str::<Value>(output.json.get()).ok()?,
        "model_output": serde_json::to_value(output.model_output()).ok()?,
        "display": view(output.display()),
        "transcript": view(output.transcript()),
    }))
}

/// The output a receipt recorded (see [`recorded_output`]).
fn read_output(mut recorded: Value) -> Result<ToolOutput, String> {
    let view = |v: Value| -> Result<Option<Result<Value, crate::ToolError>>, String> {
        match v {
            Value::Null => Ok(None),
            Value::Object(mut o) => match (o.remove("ok"), o.remove("err")) {
                (Some(value), None) => Ok(Some(Ok(value))),
                // Receipts written before views failed with a `ToolError` hold its text.
                (None, Some(Value::String(error))) => Ok(Some(Err(crate::ToolError::new(error)))),
                (None, Some(error @ Value::Object(_))) => serde_json::from_value(error)
                    .map(|e| Some(Err(e)))
                    .map_err(|_| "a view's error is not one toolsmith writes".to_owned()),
                _ => Err("a view of it is not one toolsmith writes".into()),
            },
            _ => Err("a view of it is not one toolsmith writes".into()),
        }
    };
    let result = recorded.get_mut("result").map(Value::take).ok_or("it has no result")?;
    let model_output = serde_json::from_value(recorded.get_mut("model_output").map(Value::take).unwrap_or(Value::Null))
        .map_err(|e| format!("its model output is unreadable ({:?} error)", e.classify()))?;
    let mut output = ToolOutput::new(result);
    output.set_model_output(model_output);
    output.set_display(view(recorded.get_mut("display").map(Value::take).unwrap_or(Value::Null))?);
    output.set_transcript(view(recorded.get_mut("transcript").map(Value::take).unwrap_or(Value::Null))?);
    Ok(output)
}

/// A digest of the validated arguments (canonical JSON), to refuse a key reused for others.
fn args_digest(args: &Value) -> String {
    let text = serde_json_canonicalizer::to_string(args).unwrap_or_else(|_| args.to_string());
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The key this run holds; dropped while held (the run's future was dropped mid-body), the
/// receipt is marked interrupted.
struct Held {
    receipts: Arc<dyn ReceiptStore>,
    key: Option<String>,
}

impl Drop for Held {
    fn drop(&mut self) {
        let Some(key) = self.key.take() else { return };
        let receipts = self.receipts.clone();
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move { record(&receipts, key, End::Interrupt, "").await });
        }
    }
}
