pub mod commands;
pub mod help;
pub mod input_hygiene;
pub mod isolation;
pub mod logging;
pub mod oauth_login;
pub mod readme;
pub mod serve_limits;
