//! The fixture's tools that gather their input in rounds (SEP-2322) around tasks (SEP-2663):
//! `multi_input`, a task whose tool asks two questions at once (two `inputRequests`, which
//! `tasks/update` may answer one at a time), and `test_tool_with_task`, a task-required tool
//! that asks for its input within the call and becomes a task on the final round.

use tool_core::prelude::*;

/// What the fixture's questions say.
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Question {
    /// What is asked
    pub question: String,
}

/// One answer of `multi_input`.
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Answer {
    /// A name
    pub name: String,
    /// Whether to go on
    pub confirm: bool,
}

/// The two answers `multi_input` waits for, each a question of its own.
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct TwoAnswers {
    /// The first answer
    pub first: Answer,
    /// The second answer
    pub second: Answer,
}

/// Asks two questions at once and answers with both answers: as a task, it waits
/// (`input_required`) with one `inputRequests` entry per question, and goes on once both are
/// answered (in one `tasks/update` or one at a time)
#[tool(id = "multi_input", background(enabled = true), suspend = Question, resume = TwoAnswers)]
pub async fn multi_input(#[ctx] cx: ToolContext<RequestContext, Question, TwoAnswers>) -> Result<String, ToolError> {
    match cx.resume_data()? {
        None => Err(cx.suspend(Question {
            question: "Two answers, please.".into(),
        })),
        Some(TwoAnswers { first, second }) => Ok(format!(
            "got {} ({}) and {} ({})",
            super::bounded(&first.name),
            first.confirm,
            super::bounded(&second.name),
            second.confirm
        )),
    }
}

/// The name `test_tool_with_task` asks for.
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct UserName {
    /// The user's name
    pub name: String,
}

/// Asks for the user's name within the call (an input-required result), then greets them as a
/// task (task-required: the final round's answer is the task's handle)
#[tool(id = "test_tool_with_task", background(required, asks_first), suspend = Question, resume = UserName)]
pub async fn test_tool_with_task(#[ctx] cx: ToolContext<RequestContext, Question, UserName>) -> Result<String, ToolError> {
    match cx.resume_data()? {
        None => Err(cx.suspend(Question {
            question: "What is your name?".into(),
        })),
        Some(UserName { name }) => Ok(format!("Hello, {}, from a task.", super::bounded(&name))),
    }
}
