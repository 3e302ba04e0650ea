pub mod bytes;
pub mod provider_fanout;
