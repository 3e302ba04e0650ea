//! What every tool's expansion calls instead of writing it out: each is compiled once here
//! rather than expanded, type-checked, borrow-checked and compiled in every tool on every
//! build of the crate that defines it.

use std::sync::{Arc, OnceLock};

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
