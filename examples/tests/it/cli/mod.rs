pub mod commands;
pub mod help;
pub mod readme;
pub mod input_hygiene;
pub mod isolation;
pub mod logging;
pub mod serve_limits;
