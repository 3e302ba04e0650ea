pub mod authorization;
pub mod fairness;
pub mod oauth;
pub mod production;
pub mod trust;
