//! The bounded blocking pool: a body driven by `Handle::block_on` on a `spawn_blocking`
//! thread, at most [`ExecutionPolicy::threads`] at once, raced against its cancellation there.

use std::any::Any;
use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use tokio_util::sync::CancellationToken;

use super::ExecutionPolicy;
use crate::context::BoxFuture;
use crate::error::ToolError;
use crate::tool::ToolOutput;

type BodyResult = Result<ToolOutput, ToolError>;

/// Runs a tool's future on the blocking pool; `token` is the body's own cancellation (a child
/// of the call's), cancelled here too if this future is dropped (the caller went away). A
/// panic comes back as its payload, like `catch_unwind`.
pub(crate) async fn run_on_pool(
    policy: &ExecutionPolicy,
    fut: BoxFuture<'static, BodyResult>,
    token: CancellationToken,
) -> Result<BodyResult, Box<dyn Any + Send>> {
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        // Not inside a Tokio runtime: there is no pool to go to.
        return AssertUnwindSafe(fut).catch_unwind().await;
    };
    // Waiting for a permit holds no thread; the semaphore is never closed.
    let permit = policy.pool().clone().acquire_owned().await.ok();
    let guard = token.clone().drop_guard();
    let body = token.clone();
    let joined = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        handle.block_on(async move {
            tokio::select! {
                biased;
                r = AssertUnwindSafe(fut).catch_unwind() => Some(r),
                // The body's future is dropped here, on its own thread, at its next await.
                _ = body.cancelled() => None,
            }
        })
    })
    .await;
    guard.disarm();
    match joined {
        Ok(Some(r)) => r,
        Ok(None) => Ok(Err(ToolError::aborted("the call was cancelled"))),
        Err(e) => match e.try_into_panic() {
            Ok(payload) => Err(payload),
            Err(_) => Ok(Err(ToolError::aborted("the blocking pool was shut down"))),
        },
    }
}
