//! The commands that run tools: `call` (and approving, declining, completing a client-side
//! call with its result, replaying a stream) and `resume`. Each maps the run's one [`Outcome`] to what it prints.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::json;

use super::{CallCommand, CliError, DialectArg, GeminiSchema, pretty};
use crate::call::CallOptions;
use crate::context::CallData;
use crate::dialect::Dialect;
use crate::error::ToolError;
use crate::model_output::ModelOutput;
use crate::runtime::{Actor, Answer, CallState, Decision, EventStream, Outcome, ResumeOptions, Runtime, StoredCall, Waiting};
use crate::spec::TransformTarget;

/// `call`: a tool call, an approval or decline of a waiting call, or a replayed model stream.
pub(super) async fn call(runtime: &Runtime, call: CallCommand, out: &mut dyn Write) -> Result<ExitCode, CliError> {
    let CallCommand {
        id,
        args,
        approve,
        rerun,
        decline,
        result,
        edit,
        sign,
        token,
        stream,
        format,
        events,
        context,
        model_output,
        result_as,
        max_model_output,
    } = call;
    if max_model_output.is_some() {
        runtime.registry().set_model_output_budget(max_model_output);
    }
    let context = context
        .map(|c| crate::json::parse_unique(c.as_bytes()).map_err(|source| CliError::Json { what: "--context", source }))
        .transpose()?;
    let options = CallOptions {
        data: CallData {
            context,
            ..CallData::default()
        },
        ..CallOptions::default()
    };
    if let Some(file) = stream {
        let bytes = std::fs::read(&file).map_err(|source| CliError::ReadFile {
            path: file.clone(),
            source,
        })?;
        let dialect = format
            .and_then(|arg| arg.dialect(GeminiSchema::JsonSchema))
            .ok_or_else(|| CliError::Usage("--stream needs --format".into()))?;
        let (mut run, events) = runtime.stream(dialect, options);
        let fed = run.push(&bytes).and_then(|()| run.finish());
        let outcome = drain(events, true, out).await?;
        fed.map_err(|source| CliError::Stream { path: file, source })?;
        return Ok(if matches!(outcome, Some(Outcome::Failed(_))) {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        });
    }
    let id = id.unwrap_or_default();
    let answer = answer_of(approve, decline.as_deref(), edit.as_deref())?;
    if let Some(seconds) = sign {
        return sign_decision(runtime, &id, answer, seconds, out).await;
    }
    // Every decision made here is the operator's (the audit trail records it so).
    let operator = || ResumeOptions::default().by(Actor::Operator);
    let stream = if let Some(token) = token {
        runtime.decide_token(&token, operator()).await?
    } else if let Some(answer @ Answer::Edit { .. }) = answer {
        let binding = runtime.binding(&id).await?;
        runtime.decide(Decision::new(binding, answer), operator()).await?
    } else if approve && rerun {
        announce_rerun(runtime, &id).await;
        runtime.approve(&id, operator().rerun()).await?
    } else if approve {
        runtime.approve(&id, operator()).await?
    } else if let Some(reason) = decline {
        runtime.decline_with(&id, &reason, operator()).await?
    } else if let Some(result) = result {
        let value = crate::json::parse_unique(result.as_bytes()).map_err(|source| CliError::Json { what: "--result", source })?;
        runtime.submit_result_with(&id, value, operator()).await?
    } else {
        runtime.call(&id, args, options)
    };
    let last = drain(stream, events, out).await?;
    if events {
        return Ok(ExitCode::SUCCESS);
    }
    conclude(last, model_output, result_as, out)
}

/// The decision `--approve`, `--decline REASON` or `--edit JSON` asks for, if any.
fn answer_of(approve: bool, decline: Option<&str>, edit: Option<&str>) -> Result<Option<Answer>, CliError> {
    Ok(match (approve, decline, edit) {
        (true, _, _) => Some(Answer::Approve),
        (_, Some(reason), _) => Some(Answer::Reject { reason: reason.to_owned() }),
        (_, _, Some(args)) => {
            let args = crate::json::parse_unique(args.as_bytes()).map_err(|source| CliError::Json { what: "--edit", source })?;
            Some(Answer::Edit { args })
        }
        _ => None,
    })
}

/// `--sign`: prints a decision token bound to the waiting call, valid `seconds`; decides nothing.
async fn sign_decision(
    runtime: &Runtime,
    id: &str,
    answer: Option<Answer>,
    seconds: u64,
    out: &mut dyn Write,
) -> Result<ExitCode, CliError> {
    let answer = answer.ok_or_else(|| CliError::Usage("--sign needs --approve, --decline REASON or --edit JSON".into()))?;
    let decision = Decision::new(runtime.binding(id).await?, answer);
    let token = runtime.sign_decision(&decision, Duration::from_secs(seconds))?;
    writeln!(out, "{token}").map_err(CliError::Output)?;
    Ok(ExitCode::SUCCESS)
}

/// `resume`: a waiting call continued with data (`rerun`: also one whose earlier run was
/// interrupted).
pub(super) async fn resume(
    runtime: &Runtime,
    (id, data): (&str, &str),
    rerun: bool,
    events: bool,
    out: &mut dyn Write,
) -> Result<ExitCode, CliError> {
    let data = crate::json::parse_unique(data.as_bytes()).map_err(|source| CliError::Json {
        what: "the resume data",
        source,
    })?;
    let operator = ResumeOptions::default().by(Actor::Operator);
    let stream = if rerun {
        announce_rerun(runtime, id).await;
        runtime.resume(id, data, operator.rerun()).await
    } else {
        runtime.resume(id, data, operator).await
    };
    let stream = stream?;
    let last = drain(stream, events, out).await?;
    if events {
        return Ok(ExitCode::SUCCESS);
    }
    conclude(last, false, None, out)
}

/// Tells standard error that an interrupted call is run again, as decided (`--rerun`): the
/// record of the decision.
async fn announce_rerun(runtime: &Runtime, id: &str) {
    let entries = runtime.pending_entries().await.unwrap_or_default();
    let interrupted = entries.iter().find_map(|e| match e {
        StoredCall::Call {
            call,
            state: CallState::Interrupted(claim),
        } if call.tool_call_id == id => Some(claim),
        _ => None,
    });
    if let Some(claim) = interrupted {
        eprintln!("call `{id}` was interrupted ({claim}): running it again, as asked (--rerun)");
    }
}

/// Prints events as they come (with `--events`) and returns how the run ended: the result
/// (a background task's real one), the error, or the call it waits on.
async fn drain(mut events: EventStream, print: bool, out: &mut dyn Write) -> Result<Option<Outcome>, CliError> {
    while let Some(e) = events.next().await {
        if print && let Some(view) = e.view(TransformTarget::Display) {
            writeln!(out, "{}", serde_json::to_string(view).unwrap_or_default()).map_err(CliError::Output)?;
        }
    }
    Ok(events.take_outcome())
}

/// Prints what a call ended with, like a plain call would.
fn conclude(
    outcome: Option<Outcome>,
    model_output: bool,
    result_as: Option<DialectArg>,
    out: &mut dyn Write,
) -> Result<ExitCode, CliError> {
    let io = CliError::Output;
    // Hints name the binary as the user runs it (`my-agent call …` for a user's own binary).
    let bin = super::bin_name();
    let waiting = |w: &Waiting, out: &mut dyn Write, hint: String| {
        let view = w.display().cloned().unwrap_or_else(|| w.event.raw.shown());
        writeln!(out, "{}", pretty(&serde_json::to_value(view).unwrap_or_default())).map_err(io)?;
        eprintln!("{hint}");
        Ok(ExitCode::SUCCESS)
    };
    let ended = match outcome.ok_or(CliError::NoResult)? {
        Outcome::Done(output) => Ok(output),
        Outcome::Declined { reason } => Ok(Outcome::declined_output(&reason)),
        Outcome::Failed(error) => Err(error),
        Outcome::Backgrounded(task) => Err(ToolError::new(format!("background task {} ended without a result", task.task_id))),
        Outcome::AwaitingApproval(w) => {
            let id = w.id();
            let hint = format!(
                "waiting for approval: `{bin} call {id} --approve` runs it, `--edit JSON` runs it with other arguments, `--decline REASON` refuses it"
            );
            return waiting(&w, out, hint);
        }
        Outcome::Suspended(w) => {
            let hint = format!(
                "suspended: `{bin} resume {} 'JSON'` continues it with data matching its resume schema",
                w.id()
            );
            return waiting(&w, out, hint);
        }
        Outcome::AwaitingResult(w) => {
            let id = w.id();
            let hint = format!(
                "waiting for a result: this tool is answered by the application (listed by `{bin} pending`); `{bin} call {id} --result 'JSON'` completes it with a value matching its output schema"
            );
            return waiting(&w, out, hint);
        }
    };
    if let Some(dialect) = result_as.and_then(|arg| arg.dialect(GeminiSchema::JsonSchema)) {
        let model = match &ended {
            Ok(output) => output.for_model(),
            Err(e) => ModelOutput::ErrorText(e.message().to_owned()),
        };
        let mut message = model
            .to_tool_result(dialect, "call_cli")
            .ok_or_else(|| CliError::Usage(format!("{dialect} tool results cannot be written")))?;
        if let (Dialect::Mcp, Ok(output)) = (dialect, &ended) {
            // MCP carries the raw output as structuredContent when it is an object.
            let result = output.value();
            if result.is_object() {
                message["structuredContent"] = result;
            }
        }
        writeln!(out, "{}", pretty(&message)).map_err(io)?;
        return Ok(ExitCode::SUCCESS);
    }
    match ended {
        Ok(output) if model_output => {
            let shown = json!({"value": output.value(), "modelOutput": output.for_model()});
            writeln!(out, "{}", pretty(&shown)).map_err(io)?
        }
        Ok(output) => writeln!(out, "{}", pretty(&output.value())).map_err(io)?,
        Err(e) => return Err(CliError::Call(e)),
    }
    Ok(ExitCode::SUCCESS)
}
