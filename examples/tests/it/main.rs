//! The examples' integration tests, in one binary: the `toolsmith` binary as a user runs it
//! (commands, input hygiene, logs, serving limits, isolation), and the example tools against
//! their worst inputs, their schemas and the seed's hooks.

mod support;

pub mod cli;
pub mod tools;
