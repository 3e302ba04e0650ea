//! What every tool's expansion calls instead of writing it out: each is compiled once here
//! rather than expanded, type-checked, borrow-checked and compiled in every tool on every
//! build of the crate that defines it.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use crate::error::ToolError;
use crate::schema::SchemaError;
use crate::spec::SourceLocation;
use crate::tool::Tool;

/// What `name::tool()` returns.
pub type Built = Result<Arc<dyn Tool>, SchemaError>;

/// `name::tool()`: the tool in `cell`, built by `build` the first time (once per process).
/// Not generic: the cell's initialisation is compiled once for every tool.
pub fn registered(cell: &'static OnceLock<Built>, build: fn() -> Built) -> Built {
    cell.get_or_init(build).clone()
}

/// Where a tool is defined (`ToolMeta::source`), from `env!("CARGO_PKG_NAME")`,
/// `module_path!()`, `file!()` and `line!()`.
pub fn source(crate_name: &str, module_path: &str, file: &str, line: u32) -> SourceLocation {
    SourceLocation {
        crate_name: crate_name.to_owned(),
        module_path: module_path.to_owned(),
        file: file.to_owned(),
        line,
    }
}

/// A tool function's run as the tool's `execute`: its future, what it returned turned into
/// the tool's result by `finish` ([`tool_result`](super::tool_result)) when it is ready.
pub fn returning<F: Future, O>(run: F, finish: fn(F::Output) -> Result<O, ToolError>) -> Returning<F, O> {
    Returning { run, finish }
}

pin_project_lite::pin_project! {
    /// The future [`returning`] gives: a plain future, smaller than the coroutine of an `async`
    /// block around the function's.
    pub struct Returning<F: Future, O> {
        #[pin]
        run: F,
        finish: fn(F::Output) -> Result<O, ToolError>,
    }
}

impl<F: Future, O> Future for Returning<F, O> {
    type Output = Result<O, ToolError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let finish = *this.finish;
        match this.run.poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(returned) => Poll::Ready(finish(returned)),
        }
    }
}
