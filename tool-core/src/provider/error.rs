//! What a provider can fail with: [`ProviderError`], its cause kept for a transport failure.

/// Why a provider could not do what was asked.
///
/// Two errors are equal when they say the same: a [`Transport`](ProviderError::Transport)
/// error's `source` is not compared.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// The provider does not offer this method.
    #[error("the {provider} provider does not support `{method}`")]
    NotSupported {
        /// The provider id.
        provider: String,
        /// The method.
        method: &'static str,
    },
    /// A setting is wrong or missing (no enabled auth config, a missing resource id, …).
    #[error("{0}")]
    Config(String),
    /// The platform answered with an error.
    #[error("{provider} answered {status}: {message}")]
    Api {
        /// The provider id.
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The platform's message (secrets removed).
        message: String,
    },
    /// The platform could not be reached or answered something unreadable.
    ///
    /// Build it with [`ProviderError::transport`], and keep the error that caused it with
    /// [`caused_by`](ProviderError::caused_by).
    #[error("{provider} could not be reached: {message}")]
    Transport {
        /// The provider id.
        provider: String,
        /// What went wrong, the cause's own words included (secrets removed).
        message: String,
        /// The error that caused it (the HTTP client's, the I/O error, the MCP client's),
        /// when there is one, for [`std::error::Error::source`]; it carries no secret the
        /// message had removed (an HTTP error is kept without its URL).
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
}

impl ProviderError {
    /// A [`Transport`](ProviderError::Transport) error of `provider` saying `message` (secrets
    /// already removed), with no cause of its own.
    ///
    /// ```
    /// use std::error::Error;
    /// use tool_core::provider::ProviderError;
    /// let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused");
    /// let e = ProviderError::transport("mini", "GET /tools: connection refused").caused_by(io);
    /// assert_eq!(e.to_string(), "mini could not be reached: GET /tools: connection refused");
    /// assert_eq!(e.source().unwrap().to_string(), "connection refused");
    /// ```
    pub fn transport(provider: impl Into<String>, message: impl Into<String>) -> Self {
        ProviderError::Transport {
            provider: provider.into(),
            message: message.into(),
            source: None,
        }
    }

    /// This error with `cause` as its [`source`](std::error::Error::source) (a
    /// [`Transport`](ProviderError::Transport) error only; any other is returned as it is).
    /// The cause must not carry a secret the message leaves out.
    pub fn caused_by(self, cause: impl std::error::Error + Send + Sync + 'static) -> Self {
        match self {
            ProviderError::Transport { provider, message, .. } => ProviderError::Transport {
                provider,
                message,
                source: Some(Box::new(cause)),
            },
            other => other,
        }
    }
}

impl PartialEq for ProviderError {
    fn eq(&self, other: &Self) -> bool {
        use ProviderError::*;
        match (self, other) {
            (NotSupported { provider: p, method: m }, NotSupported { provider: q, method: n }) => p == q && m == n,
            (Config(a), Config(b)) => a == b,
            (
                Api {
                    provider: p,
                    status: s,
                    message: m,
                },
                Api {
                    provider: q,
                    status: t,
                    message: n,
                },
            ) => p == q && s == t && m == n,
            (
                Transport {
                    provider: p, message: m, ..
                },
                Transport {
                    provider: q, message: n, ..
                },
            ) => p == q && m == n,
            _ => false,
        }
    }
}
