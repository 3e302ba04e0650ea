pub mod health;
pub mod http_defense;
pub mod modern;
pub mod server;
pub mod task_input;
pub mod task_support;
pub mod tool_search;
pub mod waiting;
