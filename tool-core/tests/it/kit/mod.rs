pub mod basics;
pub mod check;
pub mod readme;
pub mod streams;
