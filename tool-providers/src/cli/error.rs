//! [`ImportingCliError`]: why a command of the importing command line failed.
//!
//! Owns the error type of the `--import-mcp` and `--provider` flags, the `providers`
//! subcommand and the commands they wrap, and its words (printed after `error: `).

use tool_core::pins::PinError;
use tool_core::provider::ProviderError;
use tool_core::{Registry, RegistryError};

/// Why a command of [`ImportingCli`](super::ImportingCli) failed.
///
/// Like [`tool_core::cli::CliError`] (which it wraps for the commands it shares): its
/// `Display` is the whole message printed after `error: `, the words of its cause included;
/// [`source`](std::error::Error::source) is the cause itself.
///
/// ```
/// use tool_providers::cli::{Import, ImportingCliError};
/// let err = Import::parse("no-equals").unwrap_err();
/// assert!(matches!(err, ImportingCliError::Usage(_)));
/// assert!(err.to_string().contains("expected NAME=TARGET"), "{err}");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportingCliError {
    /// A command shared with `toolsmith` failed.
    #[error("{0}")]
    Core(#[from] tool_core::cli::CliError),
    /// The flags are incomplete or contradict each other: a malformed `NAME=VALUE`, a name
    /// given twice, a provider without its API key, a token variable that is not set.
    #[error("{0}")]
    Usage(String),
    /// What the command names does not exist: a provider that is not configured, a tool the
    /// provider does not have.
    #[error("{0}")]
    NotFound(String),
    /// A provider failed (`--provider-tools`, `--import-mcp`, a `providers` subcommand): `at`
    /// says which flag or provider.
    #[error("{at}: {source}")]
    ProviderAt {
        /// The flag or the provider (`` `--provider-tools composio=…` ``, `arcade`).
        at: String,
        /// The provider's error.
        #[source]
        source: ProviderError,
    },
    /// A provider failed (`providers connect`).
    #[error("{0}")]
    Provider(#[from] ProviderError),
    /// The remote tools could not be pinned.
    #[error("{at}: {source}")]
    PinsAt {
        /// The flag (`` `--provider-tools composio=…` ``).
        at: String,
        /// The pin store's error.
        #[source]
        source: PinError,
    },
    /// The linked tools, or the remote tools joining them, do not form a valid registry.
    #[error("{at}{source}")]
    Registry {
        /// What was being added (empty for the linked tools).
        at: String,
        /// The registry's error.
        #[source]
        source: RegistryError,
    },
    /// An authorization started by `providers connect --wait` failed or did not complete in
    /// time.
    #[error("{0}")]
    Authorization(String),
    /// An OAuth login, or the use of a stored one, failed (`mcp login`, `--import-mcp`).
    #[error(transparent)]
    OAuth(Box<crate::mcp::oauth::OAuthError>),
    /// Writing to the output failed.
    #[error("cannot write the output: {0}")]
    Output(#[source] std::io::Error),
}

impl From<crate::mcp::oauth::OAuthError> for ImportingCliError {
    fn from(e: crate::mcp::oauth::OAuthError) -> Self {
        ImportingCliError::OAuth(Box::new(e))
    }
}

impl ImportingCliError {
    /// The linked tools could not form a registry.
    pub(crate) fn linked(source: RegistryError) -> Self {
        ImportingCliError::Registry { at: String::new(), source }
    }
}

/// The linked tools' registry, its error typed.
pub(crate) fn linked_registry() -> Result<Registry, ImportingCliError> {
    let linked = Registry::try_global().map_err(|e| ImportingCliError::linked(e.clone()))?;
    Registry::try_from_tools(linked.tools()).map_err(ImportingCliError::linked)
}
