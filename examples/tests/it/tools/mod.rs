pub mod crash_inputs;
pub mod implied_props;
pub mod recall;
pub mod seed_hooks;
