//! rmcp's Streamable HTTP service behind an `Arc`, for the router.
//!
//! axum and every `from_fn` layer clone the service they wrap for each request, and rmcp's
//! clones its whole configuration (the allowed hosts and origins, a cancellation token whose
//! clone and drop lock its tree): several times a request, from every worker thread. Behind an
//! `Arc` each of those clones is one atomic increment; a request is handled by rmcp's own
//! `handle`, exactly as its `Service::call` does after cloning itself.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use rmcp::ServerHandler;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::SessionManager;

/// [`StreamableHttpService`], cloned by reference.
pub(super) struct Shared<S, M>(Arc<StreamableHttpService<S, M>>);

impl<S, M> Shared<S, M> {
    pub(super) fn new(service: StreamableHttpService<S, M>) -> Self {
        Shared(Arc::new(service))
    }
}

impl<S, M> Shared<S, M>
where
    S: ServerHandler + Send + 'static,
    M: SessionManager,
{
    /// rmcp's answer to `request`.
    pub(super) async fn handle(&self, request: Request) -> Response {
        self.0.handle(request).await.into_response()
    }
}

impl<S, M> Clone for Shared<S, M> {
    fn clone(&self) -> Self {
        Shared(self.0.clone())
    }
}

impl<S, M> tower::Service<Request> for Shared<S, M>
where
    S: ServerHandler + Send + 'static,
    M: SessionManager,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let service = self.clone();
        Box::pin(async move { Ok(service.handle(request).await) })
    }
}
