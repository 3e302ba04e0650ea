//! Example Toolsmith tools.
//!
//! Two groups, all registered at link time by `#[tool]` (the `toolsmith` binary of this crate
//! lists, exports and calls them):
//!
//! - [`weather`] and [`customer`]: every `createTool()` example of the seed document (Mastra's
//!   reference), translated one to one. The weather data is a small built-in table so the
//!   examples run offline and deterministically. [`seed_hooks`]: the seed's single-hook
//!   snippets, one tool each (three of them client-side, as in the seed: no `execute`).
//! - [`browser`] (`ask-confirmation`): a client-side tool, whose calls the application
//!   answers.
//! - Realistic offline tools: [`units`] (`convert-units`), [`calculate`] (`calculate`),
//!   [`text_stats`] (`text-stats`), [`search_files`] (`search-files`), [`write_file`]
//!   (`write-file`), [`timezone`] (`convert-timezone`) and [`json_query`] (`json-query`).
//!
//! Between them they use every option of the attribute: `strict`, `to_model_output`,
//! `transform(display(..), transcript(..))`, `mcp(..)`, the four lifecycle hooks,
//! `require_approval = pred`, `input_examples`, `provider_options`, `background`,
//! `suspend`/`resume`, `context = T` with a `#[ctx]` parameter, struct inputs and plain
//! parameters (with `Option<T>` parameters optional).
//!
//! ```
//! use tool_core::prelude::*;
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! // `Registry::global()` sees these tools once this crate is linked.
//! let _ = examples::units::convert_units::tool();
//! let out = Registry::global()
//!     .call("convert-units", json!({"value": 100, "from": "C", "to": "F"}), CallOptions::default())
//!     .await
//!     .unwrap();
//! assert_eq!(out.value()["result"], json!(212.0));
//! # });
//! ```

#![warn(missing_docs)]

pub mod browser;
pub mod calculate;
pub mod customer;
pub mod json_query;
pub mod provider_demo;
mod sandbox;
pub mod search_files;
pub mod seed_hooks;
pub mod text_stats;
pub mod timezone;
pub mod units;
pub mod weather;
pub mod write_file;
