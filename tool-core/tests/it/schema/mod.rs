pub mod implied_soundness;
pub mod one_field;
pub mod output_implied;
pub mod output_tree;
pub mod strict_table;
