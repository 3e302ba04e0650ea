//! How a run ends, and the stream that carries it.
//!
//! Owns [`Outcome`] (the one typed end of a run: done, failed, waiting for approval,
//! suspended, waiting for a client-side result, declined, backgrounded), [`Waiting`] (a call that waits, with the event that
//! announced it), [`EventStream`] (a run's events, then its outcome) and [`Run`] (both,
//! collected). Consumers (the MCP server, the CLI, an application) map an [`Outcome`] to their
//! answer with one `match`; nothing needs to search the event log for meaning.

use tokio::sync::mpsc;

use super::events::{Event, ShownEvent};
use super::pending::PendingCall;
use crate::error::ToolError;
use crate::model_output::ModelOutput;
use crate::spec::TransformTarget;
use crate::tool::ToolOutput;

/// A call that waits for a person or the application: its record (what continuing it needs)
/// and the event that announced it, in its three views (what may be shown to the person).
#[derive(Debug, Clone)]
pub struct Waiting {
    /// The waiting call, as the store keeps it.
    pub call: PendingCall,
    /// The `tool-call-approval`, `tool-call-suspended` or `tool-call-awaiting-result` event.
    pub event: Event,
}

impl Waiting {
    /// The call id: approve, decline, resume or submit the result of exactly this call.
    pub fn id(&self) -> &str {
        &self.call.tool_call_id
    }

    /// The announcing event as the display view shows it (`None` when it hides it).
    pub fn display(&self) -> Option<&ShownEvent> {
        self.event.view(TransformTarget::Display)
    }
}

/// A background task a call was handed to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackgroundTask {
    /// The task id (also in the placeholder result the model receives).
    pub task_id: String,
}

/// How a run ended. A run that hands its call to a background task ends twice: first
/// [`Outcome::Backgrounded`] (the model's answer is the placeholder), then, when the task is
/// done, with the task's own outcome; [`EventStream::finish`] gives the last.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// The tool ran and produced its output.
    Done(ToolOutput),
    /// The call failed, was refused or was aborted.
    Failed(ToolError),
    /// The call waits for a person's approval; the tool has not run.
    AwaitingApproval(Box<Waiting>),
    /// The tool suspended itself and waits for resume data.
    Suspended(Box<Waiting>),
    /// A client-side tool was called (validated, approved when it needs it): nothing here runs
    /// it, and the call waits for its result from the application
    /// ([`Runtime::submit_result`](super::Runtime::submit_result)).
    AwaitingResult(Box<Waiting>),
    /// A person declined the call; the tool never ran. The model receives
    /// [`Outcome::declined_text`].
    Declined {
        /// Why (as the person said, or "no reason given").
        reason: String,
    },
    /// The call runs as a background task.
    Backgrounded(BackgroundTask),
}

impl Outcome {
    /// What the model is told of a declined call.
    pub fn declined_text(reason: &str) -> String {
        format!("Tool call was not approved by the user. Reason: {reason}")
    }

    /// The result a declined call gives the model in place of the tool's output:
    /// `{approved: false, reason, message}`, seen by the model as the message.
    pub fn declined_output(reason: &str) -> ToolOutput {
        let text = Outcome::declined_text(reason);
        ToolOutput {
            model_output: Some(ModelOutput::Text(text.clone())),
            ..ToolOutput::new(serde_json::json!({"approved": false, "reason": reason, "message": text}))
        }
    }

    /// The outcome's name (`done`, `failed`, `awaiting-approval`, `suspended`,
    /// `awaiting-result`, `declined`, `backgrounded`).
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Done(_) => "done",
            Outcome::Failed(_) => "failed",
            Outcome::AwaitingApproval(_) => "awaiting-approval",
            Outcome::Suspended(_) => "suspended",
            Outcome::AwaitingResult(_) => "awaiting-result",
            Outcome::Declined { .. } => "declined",
            Outcome::Backgrounded(_) => "backgrounded",
        }
    }
}

/// A run collected: every event in order, and how it ended.
#[derive(Debug, Clone)]
pub struct Run {
    /// The events.
    pub events: Vec<Event>,
    /// The last outcome.
    pub outcome: Outcome,
}

enum Message {
    Event(Box<Event>),
    Outcome(Outcome),
}

/// The events of one run, in order, and its outcome. Ends when the call (and any background
/// task it started) is done.
pub struct EventStream {
    rx: mpsc::UnboundedReceiver<Message>,
    outcome: Option<Outcome>,
}

impl EventStream {
    /// The next event; `None` when the run is over. Outcomes are kept for
    /// [`outcome`](Self::outcome).
    pub async fn next(&mut self) -> Option<Event> {
        loop {
            match self.rx.recv().await? {
                Message::Event(e) => return Some(*e),
                Message::Outcome(o) => self.outcome = Some(o),
            }
        }
    }

    /// The latest outcome received so far (the run's last, once [`next`](Self::next) returned
    /// `None`).
    pub fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }

    /// Takes the latest outcome received so far.
    pub fn take_outcome(&mut self) -> Option<Outcome> {
        self.outcome.take()
    }

    /// Every event until the run is over.
    pub async fn collect(self) -> Vec<Event> {
        self.finish().await.events
    }

    /// Every event until the run is over, and the outcome it ended with.
    pub async fn finish(mut self) -> Run {
        let mut events = Vec::new();
        while let Some(e) = self.next().await {
            events.push(e);
        }
        let outcome = self
            .outcome
            .unwrap_or_else(|| Outcome::Failed(ToolError::new("The run ended without a result.")));
        Run { events, outcome }
    }
}

/// Where one run's events and outcomes go.
#[derive(Clone)]
pub(crate) struct Sink {
    tx: mpsc::UnboundedSender<Message>,
}

impl Sink {
    pub(crate) fn channel() -> (Sink, EventStream) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Sink { tx }, EventStream { rx, outcome: None })
    }

    pub(crate) fn send(&self, event: Event) {
        // A dropped stream means nobody listens any more; the call still completes.
        let _ = self.tx.send(Message::Event(Box::new(event)));
    }

    /// Whether nobody listens to the run any more.
    pub(crate) fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    /// Ends the run (or, for a backgrounded call, its first part) with `outcome`.
    pub(crate) fn end(&self, outcome: Outcome) {
        let _ = self.tx.send(Message::Outcome(outcome));
    }
}
