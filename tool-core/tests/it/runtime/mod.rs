pub mod approval_binding;
pub mod audit;
pub mod background;
pub mod client_side;
pub mod loaded_tools;
pub mod pending;
pub mod shared_call;
pub mod views;
