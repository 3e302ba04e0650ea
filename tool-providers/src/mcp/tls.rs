//! The Streamable HTTP client's transport: rustls with the *ring* provider (or the process
//! default), the platform verifier plus any added roots (never without verification),
//! connection reuse, same-origin redirects only, and errors that keep their causes.
//!
//! Owns how the HTTP client is built and how its failures read. Must not speak MCP (that is
//! `rmcp`'s) nor hold session state.

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::streamable_http_client::StreamableHttpError;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use tool_core::provider::ProviderError;

/// Redirects followed for one request (same-origin 307/308 only, as `rmcp`'s own client).
const MAX_REDIRECTS: usize = 10;

/// `error`'s message followed by those of its sources that it does not already contain (so a
/// TLS failure such as `invalid peer certificate: UnknownIssuer` is not hidden behind "error
/// sending request").
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    append_sources(&mut message, error);
    message
}

/// Appends to `message` the messages of `error` and its sources that it does not contain yet.
fn append_sources(message: &mut String, error: &dyn std::error::Error) {
    let mut next = Some(error);
    while let Some(e) = next {
        let part = e.to_string();
        if !part.is_empty() && !message.contains(&part) {
            message.push_str(": ");
            message.push_str(&part);
        }
        next = e.source();
    }
}

/// A failed HTTP `initialize`, with the HTTP client's own error chain (rmcp keeps it out of
/// `source()`, and it holds the reason: refused connection, certificate not trusted, ...).
/// `login` is the command that logs in, when the server may use an OAuth login.
pub(super) fn initialize_error(error: &rmcp::service::ClientInitializeError, login: Option<&str>) -> String {
    let mut message = error_chain(error);
    if let rmcp::service::ClientInitializeError::TransportError { error, .. } = error {
        let http = error.error.downcast_ref::<StreamableHttpError<reqwest13::Error>>();
        match http {
            Some(StreamableHttpError::Client(client)) => append_sources(&mut message, client),
            Some(StreamableHttpError::AuthRequired(_)) => {
                return match login {
                    Some(login) => format!("the server refused the request as unauthorized (HTTP 401): log in with `{login}`"),
                    None => "the server refused the request as unauthorized (HTTP 401): set or correct its bearer token (`bearer_token`)"
                        .to_owned(),
                };
            }
            Some(StreamableHttpError::InsufficientScope(e)) => {
                let scope = e.get_required_scope().unwrap_or("a scope the login lacks");
                let again = login
                    .map(|l| format!(": log in again with `{l} --scope '{scope}'`"))
                    .unwrap_or_default();
                return format!("the server needs the scope `{scope}` (HTTP 403 insufficient_scope){again}");
            }
            _ => {}
        }
    }
    message
}

/// The certificates in the `root_certificate_pem` texts, each checked as a trust anchor.
fn extra_roots(id: &str, pems: &[Vec<u8>]) -> Result<Vec<CertificateDer<'static>>, ProviderError> {
    let mut roots = Vec::new();
    for (n, pem) in pems.iter().enumerate() {
        let bad = |why: String| {
            ProviderError::Config(format!(
                "the MCP provider `{id}`: root certificate #{} (`root_certificate_pem`) {why}",
                n + 1
            ))
        };
        let before = roots.len();
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| bad(format!("is not valid PEM: {e}")))?;
            rustls::RootCertStore::empty()
                .add(cert.clone())
                .map_err(|e| bad(format!("is not a usable X.509 certificate: {e}")))?;
            roots.push(cert);
        }
        if roots.len() == before {
            return Err(bad("has no `-----BEGIN CERTIFICATE-----` block".to_owned()));
        }
    }
    Ok(roots)
}

/// The rustls client configuration: the process-default crypto provider if the application
/// installed one, else ring; the platform verifier with the system's roots plus `extra` (never
/// without verification).
fn tls_config(id: &str, url: &str, extra: Vec<CertificateDer<'static>>) -> Result<rustls::ClientConfig, ProviderError> {
    let config_error = |what: &str, e: &dyn std::fmt::Display| ProviderError::Config(format!("the MCP provider `{id}`: {what}: {e}"));
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()));
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| config_error("the TLS crypto provider is unusable", &e))?;
    let has_extra = !extra.is_empty();
    #[cfg(not(target_os = "android"))]
    let verifier = rustls_platform_verifier::Verifier::new_with_extra_roots(extra, provider);
    #[cfg(target_os = "android")]
    let verifier = if extra.is_empty() {
        rustls_platform_verifier::Verifier::new(provider)
    } else {
        Err(rustls::Error::General(
            "extra root certificates are not supported on Android".to_owned(),
        ))
    };
    let mut config = match verifier {
        // `dangerous()` is only rustls' door to a custom verifier: this one verifies fully.
        Ok(verifier) => builder.dangerous().with_custom_certificate_verifier(Arc::new(verifier)),
        // A machine without CA certificates can still use plain `http://`; any TLS attempt
        // then fails (no trusted root at all).
        Err(_) if !has_extra && !url.trim_start().get(..8).is_some_and(|s| s.eq_ignore_ascii_case("https://")) => {
            builder.with_root_certificates(rustls::RootCertStore::empty())
        }
        Err(e) => return Err(config_error("no trusted root certificates for TLS", &e)),
    }
    .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// The reqwest 0.13 client `rmcp` runs on, with our TLS settings and connection reuse;
/// otherwise as `rmcp`'s own default client (same-origin 307/308 redirects only).
pub(super) fn http_client(
    id: &str,
    url: &str,
    root_pems: &[Vec<u8>],
    connect_timeout: Duration,
    idle_connections: usize,
) -> Result<reqwest13::Client, ProviderError> {
    let tls = tls_config(id, url, extra_roots(id, root_pems)?)?;
    reqwest13::Client::builder()
        .tls_backend_preconfigured(tls)
        .connect_timeout(connect_timeout)
        .pool_max_idle_per_host(idle_connections)
        .redirect(same_origin_redirects())
        .build()
        .map_err(|e| {
            ProviderError::Config(format!(
                "the MCP provider `{id}`: could not build the HTTP client: {}",
                error_chain(&e)
            ))
        })
}

/// The clients of the OAuth exchanges with the server at `url` and its authorization server:
/// the same TLS settings as the session, one following redirects (at most [`MAX_REDIRECTS`]),
/// one stopping at them; each request bounded by `timeout`.
pub(super) fn oauth_clients(id: &str, url: &str, root_pems: &[Vec<u8>], timeout: Duration) -> Result<super::oauth::Http, ProviderError> {
    let roots = extra_roots(id, root_pems)?;
    let build = |redirect: reqwest13::redirect::Policy| {
        reqwest13::Client::builder()
            .tls_backend_preconfigured(tls_config(id, url, roots.clone())?)
            .connect_timeout(timeout)
            .timeout(timeout)
            .redirect(redirect)
            .build()
            .map_err(|e| {
                ProviderError::Config(format!(
                    "the MCP provider `{id}`: could not build the OAuth client: {}",
                    error_chain(&e)
                ))
            })
    };
    Ok(super::oauth::Http {
        follow: build(reqwest13::redirect::Policy::limited(MAX_REDIRECTS))?,
        stop: build(reqwest13::redirect::Policy::none())?,
        dpop: Default::default(),
    })
}

/// Follows only 307/308 redirects (which keep the method and body) to the same origin (so the
/// session id and the bearer token never go elsewhere), at most [`MAX_REDIRECTS`] times.
fn same_origin_redirects() -> reqwest13::redirect::Policy {
    reqwest13::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(
            attempt.status(),
            reqwest13::StatusCode::TEMPORARY_REDIRECT | reqwest13::StatusCode::PERMANENT_REDIRECT
        );
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !keeps_body || !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::{DEFAULT_CONNECT_TIMEOUT, DEFAULT_IDLE_CONNECTIONS};

    #[test]
    fn a_plain_http_client_needs_no_roots_and_no_global_provider() {
        http_client(
            "plain",
            "http://127.0.0.1:1/mcp",
            &[],
            DEFAULT_CONNECT_TIMEOUT,
            DEFAULT_IDLE_CONNECTIONS,
        )
        .unwrap();
        let empty_pem: [Vec<u8>; 1] = [Vec::new()];
        match http_client(
            "plain",
            "http://127.0.0.1:1/mcp",
            &empty_pem,
            DEFAULT_CONNECT_TIMEOUT,
            DEFAULT_IDLE_CONNECTIONS,
        ) {
            Err(ProviderError::Config(m)) => assert!(m.contains("`plain`") && m.contains("#1"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
}
