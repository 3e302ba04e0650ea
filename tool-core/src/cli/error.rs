//! [`CliError`]: why a `toolsmith` command failed.
//!
//! Owns the error type of every command and its words (printed after `error: ` by
//! [`run_parsed`](super::run_parsed)). Nothing here decides what a command does.

use std::path::PathBuf;

use crate::catalog::CatalogError;
use crate::error::ToolError;
use crate::json::TextError;
use crate::pins::PinError;
use crate::registry::RegistryError;
use crate::runtime::{RuntimeError, StoreError};
use crate::stream::StreamError;

/// Why a command failed.
///
/// Its `Display` is the whole message a person reads (the words of its cause included, as
/// `toolsmith` prints it after `error: `); [`source`](std::error::Error::source) is the cause
/// itself (the store's, the runtime's, the file system's error), for code that matches on it.
///
/// ```
/// use std::error::Error;
/// use tool_core::cli::{Cli, CliError};
/// use tool_core::Registry;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let cli = Cli::try_parse_args(["toolsmith", "schema", "nope"]).unwrap();
/// let err = tool_core::cli::execute(cli, Registry::new(), &mut Vec::new()).await.unwrap_err();
/// assert!(matches!(err, CliError::NotFound(_)));
/// assert!(err.to_string().starts_with("There is no tool `nope`"), "{err}");
/// assert!(err.source().is_none());
/// # });
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// The command line is incomplete or contradicts itself: a flag that needs another, a
    /// value of the wrong form, an environment variable it names that is not set.
    #[error("{0}")]
    Usage(String),
    /// What the command names does not exist: a tool, a background task, a pin, a receipt.
    #[error("{0}")]
    NotFound(String),
    /// JSON text given on the command line (`--context`, `--result`, `--edit`, the resume
    /// data) is not valid JSON.
    #[error("{what} is not valid JSON: {source}")]
    Json {
        /// What the text was (`--context`, `the resume data`).
        what: &'static str,
        /// Why it was refused.
        #[source]
        source: TextError,
    },
    /// The store named by a flag (`--store`, `--pins`) could not be opened or used.
    #[error("{flag}: {source}")]
    StoreAt {
        /// The flag and its value as shown (`--store pending.sqlite3`; secrets hidden).
        flag: String,
        /// The store's error.
        #[source]
        source: StoreError,
    },
    /// The default store (no `--store`) could not be opened.
    #[error("{0} (or pass --store FILE_OR_URL)")]
    DefaultStore(#[source] StoreError),
    /// The store failed while the command used it.
    #[error("{0}")]
    Store(#[from] StoreError),
    /// The pin file named by `--pins` (or next to `--store`) could not be opened.
    #[error("{flag}: {source}")]
    PinsAt {
        /// The flag and its value as shown.
        flag: String,
        /// The pin store's error.
        #[source]
        source: PinError,
    },
    /// The pin store failed while the command used it.
    #[error("{0}")]
    Pins(#[from] PinError),
    /// The runtime refused or failed a call, an approval, a resume or a decision token.
    #[error("{0}")]
    Runtime(#[from] RuntimeError),
    /// The call ran and failed (or was refused): the tool's error, as a person reads it.
    #[error("{}", .0.message())]
    Call(ToolError),
    /// The call's events ended without saying how it ended.
    #[error("the call ended without a result")]
    NoResult,
    /// The tools do not form a valid registry.
    #[error("{0}")]
    Registry(#[from] RegistryError),
    /// The catalog cannot be exported in the format asked for.
    #[error("{0}")]
    Catalog(#[from] CatalogError),
    /// A captured model stream (`call --stream FILE`) cannot be replayed.
    #[error("the stream in {} is not usable: {source}", path.display())]
    Stream {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        source: StreamError,
    },
    /// The `serve` flags describe no valid OAuth resource server.
    #[error("{0}")]
    OAuth(#[from] crate::mcp::oauth::ConfigError),
    /// The MCP server could not start, or stopped with an error.
    #[error("{what}: {source}")]
    Serve {
        /// What failed (`cannot serve on 127.0.0.1:8931`, `the stdio server stopped`).
        what: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A file the command reads could not be read.
    #[error("cannot read {}: {source}", path.display())]
    ReadFile {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A file the command writes (`catalog --out`) could not be written.
    #[error("cannot write {}: {source}", path.display())]
    WriteFile {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Writing to the output (standard output, or the writer given to [`execute`](super::execute))
    /// failed.
    #[error("cannot write the output: {0}")]
    Output(#[source] std::io::Error),
    /// A value could not be written as JSON.
    #[error("{0}")]
    Encode(#[from] serde_json::Error),
    /// A blocking task of the command (opening the default store) panicked or was cancelled.
    #[error("{0}")]
    Task(#[from] tokio::task::JoinError),
}
