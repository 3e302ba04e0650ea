pub mod exactly_once;
pub mod exactly_once_chaos;
pub mod faults;
pub mod pending_kill;
pub mod robust;
pub mod suite;
