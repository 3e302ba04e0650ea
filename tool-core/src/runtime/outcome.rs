//! How a run ends, and the stream that carries it.
//!
//! Owns [`Outcome`] (the one typed end of a run: done, failed, waiting for approval,
//! suspended, waiting for a client-side result, declined, backgrounded), [`Waiting`] (a call that waits, with the event that
//! announced it), [`EventStream`] (a run's events, then its outcome) and [`Run`] (both,
//! collected). Consumers (the MCP server, the CLI, an application) map an [`Outcome`] to their
//! answer with one `match`; nothing needs to search the event log for meaning.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

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
        ToolOutput::new(serde_json::json!({"approved": false, "reason": reason, "message": text}))
            .with_model_output(ModelOutput::Text(text))
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

// Both boxed: a message is two words, so the channel's blocks (32 messages each, one
// allocated per run) stay small.
enum Message {
    Event(Box<Event>),
    Outcome(Box<Outcome>),
}

/// The run's end as its reader sees it when it reads the outcome alone (an MCP request): the
/// latest outcome, kept in place, and how many senders are left (the stream ends when none
/// is). No channel: a run read this way sends no events, so nothing queues.
#[derive(Default)]
struct Ending {
    outcome: Option<Outcome>,
    /// The sinks still able to send (the run's, and the clones a background task took).
    senders: usize,
    /// The reader waiting for the last sender to go.
    reader: Option<std::task::Waker>,
    /// The stream was dropped: nobody listens any more.
    closed: bool,
}

type Shared = Arc<Mutex<Ending>>;

fn lock(ending: &Shared) -> std::sync::MutexGuard<'_, Ending> {
    ending.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Where a sink sends: a channel, or the outcome-only ending (see [`Ending`]).
enum To {
    Channel(mpsc::UnboundedSender<Message>),
    Ending(Shared),
}

impl Clone for To {
    fn clone(&self) -> Self {
        match self {
            To::Channel(tx) => To::Channel(tx.clone()),
            To::Ending(ending) => {
                lock(ending).senders += 1;
                To::Ending(ending.clone())
            }
        }
    }
}

impl Drop for To {
    fn drop(&mut self) {
        if let To::Ending(ending) = self {
            let reader = {
                let mut state = lock(ending);
                state.senders -= 1;
                if state.senders == 0 { state.reader.take() } else { None }
            };
            if let Some(reader) = reader {
                reader.wake();
            }
        }
    }
}

/// Where a stream reads from (see [`To`]).
enum From {
    Channel(mpsc::UnboundedReceiver<Message>),
    Ending(Shared),
}

/// The events of one run, in order, and its outcome. Ends when the call (and any background
/// task it started) is done.
///
/// A run goes on whether or not its stream is read: most runs are tasks of their own; a run
/// made to be read at once (an MCP request's call) is driven by its reader instead, in the
/// reader's task, and becomes a task of its own when the stream is dropped (or its reader
/// stops reading for a while) before the run is over.
pub struct EventStream {
    from: From,
    outcome: Option<Outcome>,
    driver: Option<Driver>,
    /// The conversation's loaded tools the call runs with (see [`EventStream::loaded_tools`]).
    loaded: Option<crate::catalog::LoadedTools>,
}

/// A run driven by its stream's reader ([`EventStream`]), and the runtime it becomes a task of
/// when it must go on alone.
struct Driver {
    run: Pin<Box<dyn Future<Output = ()> + Send>>,
    runtime: tokio::runtime::Handle,
}

impl EventStream {
    /// The next event; `None` when the run is over. Outcomes are kept for
    /// [`outcome`](Self::outcome).
    pub async fn next(&mut self) -> Option<Event> {
        std::future::poll_fn(|cx| self.poll_event(cx)).await
    }

    /// The next event, outcomes kept as they come: the run is driven first when this stream
    /// drives it, so what it sends in this poll is read in this poll (no wake-up of the reader
    /// by itself).
    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        if let Some(driver) = &mut self.driver {
            // A panic of the runtime's own code (a tool's is caught where it runs) ends this
            // run as it ends a run that is a task: its stream ends without an outcome.
            match std::panic::catch_unwind(AssertUnwindSafe(|| driver.run.as_mut().poll(cx))) {
                Ok(Poll::Pending) => {}
                Ok(Poll::Ready(())) => self.driver = None,
                Err(_) => {
                    tracing::error!("a tool call's run panicked; it ends without a result");
                    self.driver = None;
                }
            }
        }
        match &mut self.from {
            From::Channel(rx) => loop {
                match std::task::ready!(rx.poll_recv(cx)) {
                    Some(Message::Event(e)) => return Poll::Ready(Some(*e)),
                    Some(Message::Outcome(o)) => self.outcome = Some(*o),
                    None => return Poll::Ready(None),
                }
            },
            From::Ending(ending) => {
                let mut state = lock(ending);
                if let Some(outcome) = state.outcome.take() {
                    self.outcome = Some(outcome);
                }
                if state.senders == 0 {
                    return Poll::Ready(None);
                }
                if !state.reader.as_ref().is_some_and(|r| r.will_wake(cx.waker())) {
                    state.reader = Some(cx.waker().clone());
                }
                Poll::Pending
            }
        }
    }

    /// Lets a run this stream drives go on without it, as a task of its own (a run whose
    /// reader stops reading for a while: an MCP call parked until its client answers).
    pub(crate) fn detach(&mut self) {
        if let Some(driver) = self.driver.take() {
            drop(driver.runtime.spawn(driver.run));
        }
    }

    /// The latest outcome received so far (the run's last, once [`next`](Self::next) returned
    /// `None`).
    pub fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }

    /// The tools the conversation had loaded through tool search when the call was made
    /// ([`CallData::loaded_tools`](crate::context::CallData::loaded_tools)), when it was given:
    /// for a waiting call continued here (approved, resumed, its result submitted), the set
    /// stored with it, whichever instance made the call, for the application to carry on the
    /// conversation with.
    pub fn loaded_tools(&self) -> Option<&crate::catalog::LoadedTools> {
        self.loaded.as_ref()
    }

    /// The stream, handing back `loaded` (see [`EventStream::loaded_tools`]).
    pub(crate) fn with_loaded(mut self, loaded: Option<crate::catalog::LoadedTools>) -> Self {
        self.loaded = loaded;
        self
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
            .take()
            .unwrap_or_else(|| Outcome::Failed(ToolError::new("The run ended without a result.")));
        Run { events, outcome }
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        // Nobody reads the run any more; it still completes.
        if let From::Ending(ending) = &self.from {
            lock(ending).closed = true;
        }
        self.detach();
    }
}

/// Where one run's events and outcomes go.
#[derive(Clone)]
pub(crate) struct Sink {
    to: To,
    /// Whether the reader reads the events, not only the outcome (see [`Sink::reads_events`]).
    events: bool,
}

impl Sink {
    pub(crate) fn channel() -> (Sink, EventStream) {
        let (tx, rx) = mpsc::unbounded_channel();
        let sink = Sink {
            to: To::Channel(tx),
            events: true,
        };
        (sink, EventStream::from(From::Channel(rx)))
    }

    /// A stream whose run (`run`, given the sink) is driven by the stream's reader (see
    /// [`EventStream`]); a reader that only wants the outcome (`events`: false) gets no events,
    /// the run need not build them, and its outcome is handed over without a channel. Must be
    /// called inside a Tokio runtime.
    pub(crate) fn driven<F>(events: bool, run: impl FnOnce(Sink) -> F) -> EventStream
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let (sink, mut stream) = if events {
            Sink::channel()
        } else {
            let ending: Shared = Arc::new(Mutex::new(Ending {
                senders: 1,
                ..Ending::default()
            }));
            let sink = Sink {
                to: To::Ending(ending.clone()),
                events: false,
            };
            (sink, EventStream::from(From::Ending(ending)))
        };
        // Made in its box (kilobytes), not on the stack and then copied there.
        let run: Box<F> = Box::write(Box::new_uninit(), run(sink));
        stream.driver = Some(Driver {
            run: Box::into_pin(run),
            runtime: tokio::runtime::Handle::current(),
        });
        stream
    }

    /// Whether the run's reader reads its events: when it reads only the outcome (an MCP
    /// call's request answers with the outcome alone), events sent are dropped, and a run
    /// skips building those only it would read.
    pub(crate) fn reads_events(&self) -> bool {
        self.events
    }

    pub(crate) fn send(&self, event: Event) {
        if let (true, To::Channel(tx)) = (self.events, &self.to) {
            // A dropped stream means nobody listens any more; the call still completes.
            let _ = tx.send(Message::Event(Box::new(event)));
        }
    }

    /// Whether nobody listens to the run any more.
    pub(crate) fn is_closed(&self) -> bool {
        match &self.to {
            To::Channel(tx) => tx.is_closed(),
            To::Ending(ending) => lock(ending).closed,
        }
    }

    /// Ends the run (or, for a backgrounded call, its first part) with `outcome`.
    pub(crate) fn end(&self, outcome: Outcome) {
        match &self.to {
            To::Channel(tx) => {
                let _ = tx.send(Message::Outcome(Box::new(outcome)));
            }
            // Its reader looks at it when the stream ends (woken by the last sender's drop).
            To::Ending(ending) => lock(ending).outcome = Some(outcome),
        }
    }
}

impl EventStream {
    fn from(from: From) -> EventStream {
        EventStream {
            from,
            outcome: None,
            driver: None,
            loaded: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::oneshot;

    fn declined(reason: String) -> Outcome {
        Outcome::Declined { reason }
    }

    fn reason(outcome: &Outcome) -> &str {
        match outcome {
            Outcome::Declined { reason } => reason,
            other => panic!("unexpected outcome {}", other.name()),
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_driven_run_runs_in_its_readers_task_and_a_spawned_one_does_not() {
        let reader = tokio::spawn(async {
            let stream = Sink::driven(true, |sink| async move { sink.end(declined(tokio::task::id().to_string())) });
            (tokio::task::id().to_string(), stream.finish().await.outcome)
        });
        let (reader_id, outcome) = reader.await.unwrap();
        assert_eq!(reason(&outcome), reader_id);

        let reader = tokio::spawn(async {
            let (sink, stream) = Sink::channel();
            tokio::spawn(async move { sink.end(declined(tokio::task::id().to_string())) });
            (tokio::task::id().to_string(), stream.finish().await.outcome)
        });
        let (reader_id, outcome) = reader.await.unwrap();
        assert_ne!(reason(&outcome), reader_id);
    }

    #[tokio::test]
    async fn a_dropped_or_detached_driven_stream_lets_its_run_finish() {
        for detach in [false, true] {
            let (go, wait) = oneshot::channel::<()>();
            let (done, finished) = oneshot::channel::<&str>();
            let mut stream = Sink::driven(true, |sink| async move {
                let _ = wait.await;
                sink.end(declined("late".into()));
                let _ = done.send("finished");
            });
            // Driven until it waits: nothing yet.
            let polled = tokio::time::timeout(std::time::Duration::from_millis(10), stream.next()).await;
            assert!(polled.is_err(), "the run waits, so the stream has nothing yet");
            if detach {
                stream.detach();
                go.send(()).unwrap();
                // Nobody reads the stream: the run goes on by itself, then the stream ends.
                assert_eq!(finished.await, Ok("finished"));
                let run = stream.finish().await;
                assert_eq!(reason(&run.outcome), "late");
            } else {
                drop(stream);
                go.send(()).unwrap();
                assert_eq!(finished.await, Ok("finished"));
            }
        }
    }

    #[tokio::test]
    async fn an_outcome_only_stream_drops_events_and_keeps_the_outcome() {
        use crate::runtime::events::{CallRef, RunEventKind};
        let event = || Event::unchanged(CallRef::new("c1", "t").event(RunEventKind::Custom { data: "chunk".into() }));
        for events in [false, true] {
            let stream = Sink::driven(events, |sink| async move {
                assert_eq!(sink.reads_events(), events);
                sink.send(event());
                sink.end(declined("done".into()));
            });
            let run = stream.finish().await;
            assert_eq!(run.events.len(), usize::from(events));
            assert_eq!(reason(&run.outcome), "done");
        }
    }

    #[tokio::test]
    async fn an_outcome_only_stream_ends_with_its_last_sender_and_keeps_the_last_outcome() {
        let (go, wait) = oneshot::channel::<()>();
        let (seen, closed) = oneshot::channel::<bool>();
        let stream = Sink::driven(false, |sink| async move {
            // A background part: the first outcome now, the last from a task of its own.
            sink.end(declined("first".into()));
            let later = sink.clone();
            tokio::spawn(async move {
                let _ = wait.await;
                later.end(declined("last".into()));
                let _ = seen.send(later.is_closed());
            });
        });
        let reader = tokio::spawn(stream.finish());
        tokio::task::yield_now().await;
        assert!(!reader.is_finished(), "a sender is left, so the stream goes on");
        go.send(()).unwrap();
        assert_eq!(reason(&reader.await.unwrap().outcome), "last");
        assert_eq!(closed.await, Ok(false), "the reader was still there");

        // Once the stream is dropped, the run's senders know nobody listens.
        let (done, closed) = oneshot::channel::<bool>();
        let (go, wait) = oneshot::channel::<()>();
        let stream = Sink::driven(false, |sink| async move {
            let _ = wait.await;
            let _ = done.send(sink.is_closed());
        });
        drop(stream);
        go.send(()).unwrap();
        assert_eq!(closed.await, Ok(true));
    }

    #[tokio::test]
    async fn a_driven_run_that_panics_ends_its_stream_without_an_outcome() {
        let stream = Sink::driven(true, |sink| async move {
            let _sink = sink;
            tokio::task::yield_now().await;
            panic!("the runtime's own bug");
        });
        let run = stream.finish().await;
        match run.outcome {
            Outcome::Failed(e) => assert_eq!(e.message(), "The run ended without a result."),
            other => panic!("unexpected outcome {}", other.name()),
        }
    }
}
