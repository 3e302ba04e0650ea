pub mod allocations;
pub mod content_parts;
pub mod input_hygiene;
pub mod layers;
pub mod observe;
pub mod rejection_results;
pub mod spans;
pub mod workflow;
