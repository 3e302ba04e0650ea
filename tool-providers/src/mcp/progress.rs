//! Where the server's progress for each running `tools/call` goes.
//!
//! Owns [`ProgressRoutes`]: the MCP client each running call reports progress to (by the
//! progress token of its request), and the progress that arrived before its call's route did.
//! rmcp chooses a request's progress token as it sends the request, so the route can only be
//! set once the request is on its way, and a server that reports at once (a fast tool, a busy
//! client) can be heard first: such progress is kept, the latest per token, for the route to
//! pass on when it opens (bounded: a token no route ever takes is forgotten after
//! [`EARLY_TOKENS`] others, and when its call ends).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use tool_core::context::McpHandle;

/// How many tokens' early progress is kept at most.
pub(super) const EARLY_TOKENS: usize = 64;

/// The routes of running calls' progress (see the module doc).
#[derive(Default)]
pub(super) struct ProgressRoutes {
    /// The MCP client of each running call that has one, and the last progress passed on.
    routes: HashMap<ProgressToken, (Arc<dyn McpHandle>, f64)>,
    /// The latest progress of tokens with no route yet, oldest token first.
    early: VecDeque<ProgressNotificationParam>,
}

impl ProgressRoutes {
    /// Progress from the server: passed on when its call has a route and it is past the last
    /// passed on (rmcp runs notification handlers concurrently, so they can come out of order,
    /// and progress must increase: one overtaken by a later one is dropped); kept when its
    /// call has no route yet.
    pub(super) fn report(&mut self, params: ProgressNotificationParam) {
        if let Some((sink, last)) = self.routes.get_mut(&params.progress_token) {
            if params.progress > *last {
                *last = params.progress;
                sink.progress(params.progress, params.total, params.message);
            }
            return;
        }
        if let Some(kept) = self.early.iter_mut().find(|k| k.progress_token == params.progress_token) {
            if params.progress > kept.progress {
                *kept = params;
            }
            return;
        }
        if self.early.len() == EARLY_TOKENS {
            self.early.pop_front();
        }
        self.early.push_back(params);
    }

    /// Routes `token`'s progress to `sink` from now on, passing on first what came before.
    pub(super) fn open(&mut self, token: ProgressToken, sink: Arc<dyn McpHandle>) {
        let mut last = f64::NEG_INFINITY;
        if let Some(at) = self.early.iter().position(|k| k.progress_token == token)
            && let Some(early) = self.early.remove(at)
        {
            last = early.progress;
            sink.progress(early.progress, early.total, early.message);
        }
        self.routes.insert(token, (sink, last));
    }

    /// Forgets `token`: its call ended.
    pub(super) fn close(&mut self, token: &ProgressToken) {
        self.routes.remove(token);
        self.early.retain(|k| &k.progress_token != token);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;
    use serde_json::Value;
    use std::sync::Mutex;
    use tool_core::context::Elicitation;
    use tool_core::tool::BoxFuture;
    use tool_core::{LogLevel, ToolError};

    #[derive(Default)]
    struct Seen(Mutex<Vec<f64>>);

    impl McpHandle for Seen {
        fn elicit(&self, _message: String, _schema: Value) -> BoxFuture<'_, Result<Elicitation, ToolError>> {
            Box::pin(std::future::ready(Err(ToolError::new("not asked"))))
        }
        fn log(&self, _level: LogLevel, _data: Value) {}
        fn progress(&self, progress: f64, _total: Option<f64>, _message: Option<String>) {
            self.0.lock().unwrap().push(progress);
        }
    }

    fn token(n: i64) -> ProgressToken {
        ProgressToken(NumberOrString::Number(n))
    }

    fn step(n: i64, progress: f64) -> ProgressNotificationParam {
        ProgressNotificationParam::new(token(n), progress)
    }

    #[test]
    fn progress_heard_before_the_route_opens_is_passed_on_when_it_does() {
        let mut routes = ProgressRoutes::default();
        routes.report(step(1, 1.0));
        routes.report(step(1, 2.0));
        routes.report(step(1, 1.5));
        let seen = Arc::new(Seen::default());
        routes.open(token(1), seen.clone());
        routes.report(step(1, 2.0));
        routes.report(step(1, 3.0));
        assert_eq!(
            *seen.0.lock().unwrap(),
            [2.0, 3.0],
            "the latest early step, then only increasing ones"
        );
        routes.close(&token(1));
        routes.report(step(1, 4.0));
        assert_eq!(seen.0.lock().unwrap().len(), 2, "nothing after the call ended");
    }

    #[test]
    fn early_progress_is_bounded_and_forgotten_when_its_call_ends() {
        let mut routes = ProgressRoutes::default();
        for n in 0..(EARLY_TOKENS as i64 + 10) {
            routes.report(step(n, 1.0));
        }
        assert_eq!(routes.early.len(), EARLY_TOKENS);
        assert!(
            !routes.early.iter().any(|k| k.progress_token == token(0)),
            "the oldest token went first"
        );
        routes.close(&token(20));
        assert!(!routes.early.iter().any(|k| k.progress_token == token(20)));
        let seen = Arc::new(Seen::default());
        routes.open(token(0), seen.clone());
        assert!(seen.0.lock().unwrap().is_empty(), "a forgotten token has nothing to pass on");
    }
}
