pub mod bytes;
pub mod deferred;
pub mod fields;
pub mod provider_fanout;
pub mod search;
pub mod search_eval;
