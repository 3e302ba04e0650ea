pub mod health;
pub mod http_defense;
pub mod modern;
pub mod server;
pub mod tool_search;
pub mod waiting;
