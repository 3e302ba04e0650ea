pub mod authorization;
pub mod oauth;
pub mod production;
pub mod trust;
